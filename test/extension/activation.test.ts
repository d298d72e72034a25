// The composition root under a small stand-in for the `vscode` module (the only place one is
// unavoidable): every command the manifest contributes is registered and vice versa, activation
// events cover exactly the extension's commands/views/panel, failures become notifications, and
// deactivate leaves no perf fd or mapping in the process.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fixture, ownPerfFds, ownPerfMappings, repoRoot, standInVscode, waitFor } from './helpers';
import { decodeRecordAt } from '../../native/decode/record';
import { RecordType } from '../../native/abi/uapi';

interface Registered {
  commands: Map<string, (...args: unknown[]) => unknown>;
  trees: string[];
  serializers: string[];
  errors: string[];
  /** The tree data providers registered, by view id (the Sessions view's is read as VS Code would). */
  providers?: Map<string, { getChildren(node?: unknown): unknown[] }>;
  /** Titles and item labels of every quick pick shown; `pickLabel` chooses the item whose label contains it (none: dismissed). */
  quickPicks: { title: string; labels: string[] }[];
  pickLabel?: string;
  executed: string[];
  /** Every executeCommand with its arguments; the value each input box started with (all are dismissed). */
  calls: unknown[][];
  inputBoxes: { title: string; value: string }[];
  /** The timeline panel's page as the stand-in shows it: what the host posted to it, and its message listener. */
  toPage: { type: string; [key: string]: unknown }[];
  fromPage?: (message: unknown) => void;
}

/** Just enough of the vscode API for activate(): unknown members are no-op functions returning disposables. */
function fakeVscode(registered: Registered, config: Record<string, unknown>) {
  const disposable = {
    dispose() {
      /* nothing held */
    },
  };
  const anything: unknown = new Proxy(
    function () {
      return disposable;
    },
    {
      get: (_target, key) => (key === 'then' ? undefined : anything),
      apply: () => disposable,
      construct: () => anything as object,
    },
  );
  class EventEmitter<T> {
    private listeners: ((value: T) => void)[] = [];
    event = (listener: (value: T) => void) => {
      this.listeners.push(listener);
      return disposable;
    };
    fire(value: T) {
      for (const l of this.listeners) l(value);
    }
    dispose() {
      this.listeners = [];
    }
  }
  const statusItem = () => ({ show() {}, hide() {}, dispose() {}, text: '', tooltip: '', command: '', name: '' });
  return {
    EventEmitter,
    ThemeColor: class {
      constructor(readonly id: string) {}
    },
    ThemeIcon: class {
      constructor(readonly id: string) {}
    },
    TreeItem: class {
      constructor(
        readonly label: string,
        readonly collapsibleState: number,
      ) {}
    },
    TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
    StatusBarAlignment: { Left: 1, Right: 2 },
    OverviewRulerLane: { Left: 1 },
    ViewColumn: { Active: -1, Beside: -2 },
    ProgressLocation: { Notification: 15 },
    QuickPickItemKind: { Separator: -1 },
    Uri: { joinPath: (base: { fsPath: string }, ...parts: string[]) => ({ fsPath: path.join(base.fsPath, ...parts) }), file: (fsPath: string) => ({ fsPath }) },
    window: {
      createOutputChannel: () => ({ appendLine() {}, show() {}, dispose() {} }),
      createStatusBarItem: statusItem,
      createTextEditorDecorationType: () => disposable,
      registerTreeDataProvider: (id: string, provider: { getChildren(node?: unknown): unknown[] }) => {
        registered.trees.push(id);
        (registered.providers ??= new Map()).set(id, provider);
        return disposable;
      },
      registerWebviewPanelSerializer: (id: string) => {
        registered.serializers.push(id);
        return disposable;
      },
      onDidChangeVisibleTextEditors: () => disposable,
      visibleTextEditors: [],
      showErrorMessage: async (message: string) => {
        registered.errors.push(message);
        return undefined;
      },
      showInformationMessage: async () => undefined,
      // A capture's progress notification (after a second): the work runs to its end, nobody cancels it.
      withProgress: async <T>(
        _options: unknown,
        task: (progress: { report(value: unknown): void }, token: { onCancellationRequested(): unknown }) => Promise<T>,
      ) => task({ report() {} }, { onCancellationRequested: () => disposable }),
      showInputBox: async (options: { title?: string; value?: string } = {}) => {
        registered.inputBoxes.push({ title: options.title ?? '', value: options.value ?? '' });
        return undefined;
      },
      createWebviewPanel: () => ({
        webview: {
          html: '',
          cspSource: 'vscode-resource:',
          asWebviewUri: (uri: { fsPath: string }) => ({ toString: () => uri.fsPath }),
          onDidReceiveMessage: (listener: (message: unknown) => void) => {
            registered.fromPage = listener;
            return disposable;
          },
          postMessage: async (message: { type: string }) => {
            registered.toPage.push(message);
            return true;
          },
        },
        visible: true,
        onDidChangeViewState: () => disposable,
        onDidDispose: () => disposable,
        reveal() {},
        dispose() {},
      }),
      showQuickPick: async (items: { label: string }[], options: { title?: string } = {}) => {
        registered.quickPicks.push({ title: options.title ?? '', labels: items.map((item) => item.label) });
        return registered.pickLabel === undefined ? undefined : items.find((item) => item.label.includes(registered.pickLabel!));
      },
    },
    commands: {
      registerCommand: (id: string, handler: (...args: unknown[]) => unknown) => {
        registered.commands.set(id, handler);
        return disposable;
      },
      executeCommand: async (id: string, ...args: unknown[]) => {
        registered.executed.push(id);
        registered.calls.push([id, ...args]);
        return undefined;
      },
    },
    workspace: {
      getConfiguration: () => ({ get: (key: string) => config[key], inspect: (key: string) => ({ globalValue: config[key] }) }),
      onDidChangeConfiguration: () => disposable,
      workspaceFolders: undefined,
    },
    languages: { registerCodeLensProvider: () => disposable, registerHoverProvider: () => disposable },
    debug: { breakpoints: [], activeDebugSession: undefined },
    env: { clipboard: { writeText: async () => undefined } },
    other: anything,
  };
}

/** What activate() reads of its ExtensionContext: this checkout as the extension, no saved workspace state. */
function extensionContext() {
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extensionPath: repoRoot,
    extensionUri: { fsPath: repoRoot },
    workspaceState: { get: () => undefined, update: async () => undefined },
  };
}

describe('extension: activation with a stand-in vscode module', function () {
  this.timeout(60000);
  let restoreVscode = () => {
    /* installed in before() */
  };
  const registered: Registered = {
    commands: new Map(),
    trees: [],
    serializers: [],
    errors: [],
    quickPicks: [],
    executed: [],
    calls: [],
    inputBoxes: [],
    toPage: [],
  };

  const config: Record<string, unknown> = { bufferPages: 4, snapshotRetention: 5, defaultEvents: ['task-clock'] };
  // Keepers are looked for (and started) in a directory of this test's own, never among other users' of the machine.
  const runtimeDir = mkdtempSync(path.join(tmpdir(), 'ringside-activation-'));
  const previousRuntimeDir = process.env.XDG_RUNTIME_DIR;

  before(() => {
    process.env.XDG_RUNTIME_DIR = runtimeDir;
    restoreVscode = standInVscode(fakeVscode(registered, config));
  });
  after(() => {
    restoreVscode();
    if (previousRuntimeDir === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = previousRuntimeDir;
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  it('registers exactly the manifest commands, views and panel, and activates only on them', async () => {
    const extension = await import('../../extension/extension');
    const context = extensionContext();
    extension.activate(context as never);
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    const contributed = (manifest.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual([...registered.commands.keys()].sort(), contributed);
    assert.deepEqual(registered.trees, ['ringside.sessions']);
    assert.deepEqual(registered.serializers, ['ringside.timeline']);
    const activation = new Set(manifest.activationEvents as string[]);
    for (const command of contributed) assert.ok(activation.has(`onCommand:${command}`), command);
    assert.ok(activation.has('onView:ringside.sessions') && activation.has('onWebviewPanel:ringside.timeline'));
    // ...and on a folder that asks for Ringside's first screen (npm start's demo workspace), nothing else.
    assert.ok(
      [...activation].every(
        (event) =>
          /^(onCommand:ringside\.|onView:ringside\.|onWebviewPanel:ringside\.)/.test(event) || event === 'workspaceContains:.vscode/ringside-first-screen.json',
      ),
      `no activation on anything else: ${[...activation].join(', ')}`,
    );

    // Capture Snapshot with nothing recording offers the ways to get a recording, and starts one when asked.
    await registered.commands.get('ringside.captureSnapshot')!();
    assert.deepEqual(registered.errors, []);
    const offered = registered.quickPicks.pop();
    assert.match(offered?.title ?? '', /nothing is recording yet/);
    assert.deepEqual(
      offered?.labels.filter((label) => !label.includes('keeper')),
      ['$(plug) Attach to Event…', '$(record) Start Recording…'],
    );
    registered.pickLabel = 'Start Recording';
    await registered.commands.get('ringside.captureSnapshot')!();
    assert.ok(registered.executed.includes('ringside.startRecording'), registered.executed.join(', '));
    // A command failing (no session yet) becomes a notification, not an exception.
    await registered.commands.get('ringside.stopRecording')!();
    assert.match(registered.errors.pop() ?? '', /no recording is running/);

    for (const disposable of context.subscriptions) disposable.dispose();
    await extension.deactivate();
    assert.equal(ownPerfFds().length, 0);
    assert.equal(ownPerfMappings(), 0);
  });

  it('the timeline\'s "Snapshot When This Fires" runs Snapshot When… with the event filled in, for the user to confirm', async () => {
    const extension = await import('../../extension/extension');
    const context = extensionContext();
    extension.activate(context as never);
    await registered.commands.get('ringside.showTimeline')!();
    const fromPage = registered.fromPage;
    assert.ok(fromPage, 'the panel listens to its page');
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    fromPage({ type: 'ready', protocolVersion: 1 });
    await settle();
    assert.deepEqual(
      registered.toPage.find((m) => m.type === 'init'),
      { type: 'init', protocolVersion: 1, title: 'Ringside', editor: true, recorder: true },
      'the panel tells its page it can record (the offline export does not)',
    );
    fromPage({ type: 'snapshotWhenRequest', event: 'syscalls:sys_enter_getpid' });
    await settle();
    assert.deepEqual(
      registered.calls.filter(([id]) => id === 'ringside.snapshotWhen'),
      [['ringside.snapshotWhen', 'syscalls:sys_enter_getpid']],
    );
    // The host validates again: a spec that is not one printable line, or not a string, runs nothing.
    fromPage({ type: 'snapshotWhenRequest', event: 'cpu-clock\nsyscalls:sys_enter_kill' });
    fromPage({ type: 'snapshotWhenRequest', event: 7 });
    await settle();
    assert.equal(registered.calls.filter(([id]) => id === 'ringside.snapshotWhen').length, 1);

    // The command: a string argument starts the input box (the user still confirms it; here they dismiss it), anything else is ignored.
    const snapshotWhen = registered.commands.get('ringside.snapshotWhen')!;
    const picks = registered.quickPicks.length;
    await snapshotWhen('syscalls:sys_enter_getpid');
    await snapshotWhen();
    await snapshotWhen({ lineNumber: 3 });
    assert.deepEqual(
      registered.inputBoxes.map((box) => box.value),
      ['syscalls:sys_enter_getpid', 'syscalls:sys_enter_kill', 'syscalls:sys_enter_kill'],
    );
    assert.ok(registered.inputBoxes.every((box) => /snapshot when which event fires/.test(box.title)));
    assert.deepEqual(registered.errors, []);
    assert.equal(registered.quickPicks.length, picks, 'dismissing the input box asks nothing more');

    for (const disposable of context.subscriptions) disposable.dispose();
    await extension.deactivate();
    assert.equal(ownPerfFds().length, 0);
    assert.equal(ownPerfMappings(), 0);
  });
  // Kept recordings behave like plain ones: `ringside keep` gets the sampling settings Start Recording resolves events
  // with (here ringside.callchains), and after a window reload (a fresh activation) the Sessions view shows the keeper
  // the editor started, attached again: its snapshots hold callchains.
  it('a kept recording records with the callchains setting and is in the Sessions view again after a reload', async () => {
    config.callchains = true;
    const { KeeperClient } = await import('../../extension/session/keeper-client');
    const { samplingSettings, settings } = await import('../../extension/services');
    const keepers = new KeeperClient();
    const state = await keepers.start({
      cliPath: path.join(repoRoot, 'dist/cli.js'),
      events: ['task-clock'],
      target: { kind: 'launch', argv: [fixture('ext_loops'), '0', '300000'] },
      pages: 16,
      ...samplingSettings(settings()),
    });
    const extension = await import('../../extension/extension');
    const context = extensionContext();
    try {
      extension.activate(context as never);
      type Node = { kind: string; session?: { id: string; label: string; kind: string }; snapshot?: { decoded: Parameters<typeof decodeRecordAt>[0] } };
      const tree = registered.providers!.get('ringside.sessions')! as { getChildren(node?: Node): Node[] };
      // The view says "No recording yet." only once the kept recordings were looked for (its welcome's `when`): by
      // then the keeper is in it.
      await waitFor(
        'the Sessions view told the kept recordings are known',
        () => registered.calls.some(([id, key, value]) => id === 'setContext' && key === 'ringside.sessionsKnown' && value === true),
        30_000,
      );
      const welcome = (
        JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { contributes: { viewsWelcome: { contents: string; when?: string }[] } }
      ).contributes.viewsWelcome;
      assert.equal(welcome.find((w) => w.contents.startsWith('No recording yet.'))?.when, 'ringside.sessionsKnown');
      const shown = tree.getChildren().find((node) => node.session?.label.startsWith(`keeper ${state.pid}:`));
      assert.ok(shown, 'the keeper is in the Sessions view before it may say "No recording yet."');
      assert.equal(shown.session!.kind, 'keeper');
      await registered.commands.get('ringside.snapshotSession')!(shown);
      assert.deepEqual(registered.errors, []);
      const session = tree.getChildren().find((node) => node.session?.id === shown.session!.id)!;
      const list = tree.getChildren(session).find((node) => node.kind === 'snapshots')!;
      const { decoded } = tree.getChildren(list)[0].snapshot!;
      let samples = 0;
      let withCallchains = 0;
      for (let row = 0; row < decoded.columns.length; row++) {
        if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
        samples++;
        const chain = decodeRecordAt(decoded, row).fields.callchain;
        if (Array.isArray(chain) && chain.length > 0) withCallchains++;
      }
      assert.ok(samples > 0, 'the kept recording sampled its program');
      assert.equal(withCallchains, samples, 'every sample has its callchain, as ringside.callchains asks');
    } finally {
      for (const disposable of context.subscriptions) disposable.dispose();
      await extension.deactivate();
      await keepers.stop(state);
      delete config.callchains;
    }
    assert.equal(ownPerfFds().length, 0);
    assert.equal(ownPerfMappings(), 0);
  });
});
