// Composition root: creates the services, registers commands/views/providers, and hands every
// disposable to the context so deactivate releases all fds, mappings, timers and panels. Logic lives
// in session/ (vscode-free, tested on the real kernel), editor/, panel/ and ui/.

import path from 'node:path';
import * as vscode from 'vscode';
import { createBackend } from './session/backend';
import { SessionManager, type SnapshotEntry, formatBytes } from './session/sessionManager';
import { KeeperClient } from './session/keeperClient';
import { AttachCancelledError, borrowForeignRingAsking, scanPerfFds, type ForeignPerfFd } from './session/attachedSource';
import type { KeeperState } from '../native/keeper/state';
import { attachPersistentEvent, listPersistentEvents } from './session/persistentEvents';
import { TimelinePanel, type TimelineHost } from './panel/timelinePanel';
import { SessionsTreeProvider, RecordingStatusBar, type SessionNode } from './ui/sessionsView';
import { describeError } from './ui/errors';
import { askWhichEvent, pickEvents, pickTarget } from './ui/pickers';
import { HardwareBreakpoints } from './editor/editorIntegration';
import type { RecordTarget } from './session/ports';
import { DEFAULT_RING_PAGES } from '../native/perf/recorder';

let manager: SessionManager | undefined;

function settings() {
  const config = vscode.workspace.getConfiguration('ringside');
  // Only a size the user chose is passed on: otherwise the recorder fits its default to this user's
  // locked-memory budget instead of refusing it.
  const inspected = config.inspect<number>('bufferPages');
  const chosen = inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
  return {
    defaultEvents: config.get<string[]>('defaultEvents') ?? ['task-clock'],
    pages: chosen === undefined ? undefined : 2 ** Math.ceil(Math.log2(Math.max(1, chosen))),
    period: config.get<number | null>('samplePeriod') ?? undefined,
    freq: config.get<number | null>('sampleFrequency') ?? undefined,
    callchains: config.get<boolean>('callchains') ?? false,
    retention: config.get<number>('snapshotRetention') ?? 10,
    keeper: config.get<boolean>('keeper.enabled') ?? false,
    bigSnapshotBytes: config.get<number>('bigSnapshotBytes') ?? 4 << 20,
    warmCopyBuffers: config.get<boolean>('warmCopyBuffers') ?? true,
    windowSec: config.get<number | null>('window') ?? undefined,
  };
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Ringside');
  const log = (line: string) => output.appendLine(`[${new Date().toISOString()}] ${line}`);
  const backend = createBackend(() => {
    const s = settings();
    return { ...(s.period ? { period: BigInt(s.period) } : {}), ...(s.freq ? { freq: s.freq } : {}), callchain: s.callchains, warmCopyBuffers: s.warmCopyBuffers, ...(s.windowSec ? { windowSec: s.windowSec } : {}) };
  });
  const sessions = new SessionManager({ backend, retention: settings().retention });
  manager = sessions;
  const keepers = new KeeperClient();
  const cliPath = path.join(context.extensionPath, 'dist', 'cli.js');

  const tree = new SessionsTreeProvider(sessions);
  const statusBar = new RecordingStatusBar(sessions);
  const breakpoints = new HardwareBreakpoints(sessions, pickTarget, log, () => TimelinePanel.instance?.postWatches(), () => settings().pages);
  const timelineHost: TimelineHost = { extensionUri: context.extensionUri, manager: sessions, log, watches: breakpoints.watchHandler };

  /** Runs a command body; failures become a notification (with Copy Command when there is a fix) and full detail in the output channel. */
  const run = (name: string, body: (...args: never[]) => Promise<unknown> | unknown) => vscode.commands.registerCommand(name, async (...args: never[]) => {
    try {
      await body(...args);
    } catch (error) {
      const described = describeError(error, name.replace(/^ringside\./, ''));
      log(described.detail);
      const buttons = [...(described.command ? ['Copy Command'] : []), 'Show Output'];
      const choice = await vscode.window.showErrorMessage(`Ringside: ${described.message}`, ...buttons);
      if (choice === 'Copy Command' && described.command) await vscode.env.clipboard.writeText(described.command);
      if (choice === 'Show Output') output.show(true);
    }
  });

  const sessionIdOf = (node?: SessionNode): string => {
    if (node?.kind === 'session') return node.session.id;
    const active = sessions.active();
    if (!active) throw new Error('no recording is running: use Ringside: Start Recording…');
    return active.id;
  };

  const capture = async (sessionId: string): Promise<SnapshotEntry> => {
    const stats = sessions.ringStats(sessionId);
    const bytes = stats.reduce((sum, ring) => sum + Math.min(ring.dataSize, Number(ring.bytesWritten)), 0);
    const take = (progress?: vscode.Progress<{ message?: string; increment?: number }>) => {
      let reported = 0;
      return sessions.snapshot(sessionId, (message, fraction) => {
        progress?.report({ message, increment: (fraction - reported) * 100 });
        reported = fraction;
      });
    };
    const entry = bytes >= settings().bigSnapshotBytes
      ? await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Ringside: snapshot of ${formatBytes(bytes)}` }, take)
      : await take();
    TimelinePanel.show(timelineHost, [entry]);
    log(`snapshot ${entry.name}: ${entry.recordCount} records, ${formatBytes(entry.sizeBytes)}, longest pause ${(entry.maxPauseNs / 1e3).toFixed(1)} µs, decoded in ${entry.decodeMs.toFixed(1)} ms`);
    return entry;
  };

  /**
   * Capture Snapshot is always offered: with one recording it snapshots it; with several it asks
   * which (or all); with none it offers the kept recorders it can see, attaching to another ring, or
   * starting a recording, so the command never answers "no matching commands".
   */
  const captureFromPalette = async (): Promise<void> => {
    const live = sessions.list().filter((s) => s.state !== 'stopped');
    if (live.length === 1) {
      await capture(live[0].id);
      return;
    }
    if (live.length > 1) {
      const picked = await vscode.window.showQuickPick([
        ...live.map((s) => ({ label: s.label, description: `${s.kind} · ${s.snapshots.length} snapshot(s)`, ids: [s.id] })),
        { label: '$(files) All of them', description: `${live.length} recordings`, ids: live.map((s) => s.id) },
      ], { title: 'Ringside: capture a snapshot of which recording?' });
      for (const id of picked?.ids ?? []) await capture(id);
      return;
    }
    type Choice = vscode.QuickPickItem & { keeper?: KeeperState; then?: string };
    const kept = keepers.list().filter((k) => k.state && k.alive);
    const choices: Choice[] = [
      ...kept.map((k) => ({ label: `$(lock) keeper ${k.state!.pid}`, description: k.state!.events.map((e) => e.name).join(', '), detail: 'attach to this kept recorder and capture', keeper: k.state! })),
      { label: '$(plug) Attach to Event…', detail: 'a ring another process owns (perf record --overwrite), or a persistent event', then: 'ringside.attachToEvent' },
      { label: '$(record) Start Recording…', detail: 'open events now; capture once something happened', then: 'ringside.startRecording' },
    ];
    const picked = await vscode.window.showQuickPick(choices, { title: 'Ringside: nothing is recording yet. Capture from…' });
    if (!picked) return;
    if (picked.keeper) {
      const session = await sessions.attachKeeper(picked.keeper);
      await capture(session.id);
      return;
    }
    if (picked.then) await vscode.commands.executeCommand(picked.then);
  };

  const startRecording = async (kept: boolean) => {
    const s = settings();
    const specs = await pickEvents(context.workspaceState, s.defaultEvents);
    if (!specs) return;
    const chosen = await pickTarget();
    if (!chosen) return;
    if (kept || s.keeper) {
      const target = chosen.target.kind === 'launch' ? { kind: 'launch' as const, argv: chosen.target.argv } : chosen.target.kind === 'pid' ? chosen.target : { kind: 'cpus' as const };
      const state = await keepers.start({ cliPath, events: specs, target, pages: s.pages, ...(chosen.target.kind === 'launch' && chosen.target.cwd ? { cwd: chosen.target.cwd } : {}) });
      log(`keeper ${state.pid} holds ${state.rings.length} ring(s); attaching`);
      await sessions.attachKeeper(state);
      return;
    }
    const target: RecordTarget = chosen.target;
    const context_ = { ...(target.kind === 'pid' ? { pid: target.pid } : {}), ...(chosen.executable ? { executable: chosen.executable } : {}) };
    const events = await backend.resolveEvents(specs, context_);
    const session = await sessions.startRecording({ events, target, pages: s.pages });
    log(`recording ${session.label} (${session.id})`);
  };

  context.subscriptions.push(
    output, tree, statusBar, breakpoints,
    vscode.window.registerTreeDataProvider('ringside.sessions', tree),
    TimelinePanel.registerSerializer(timelineHost),
    vscode.workspace.onDidChangeConfiguration((event) => { if (event.affectsConfiguration('ringside.snapshotRetention')) sessions.setRetention(settings().retention); }),
    sessions.onDidChange((change) => {
      if (change.what === 'target-exited') {
        const how = sessions.get(change.sessionId).targetExit;
        log(`session ${change.sessionId}: target ${how ?? 'exited'}; its rings stay readable until you stop the session`);
      }
      if (change.what === 'owner-exited') {
        const session = sessions.get(change.sessionId);
        const message = `${session.label}: the process that held these rings exited. They stay readable (and recording) through this session until you stop it; nothing else can attach to them any more.`;
        log(message);
        void vscode.window.showWarningMessage(`Ringside: ${message}`);
      }
    }),

    run('ringside.startRecording', () => startRecording(false)),
    run('ringside.startKeptRecording', () => startRecording(true)),
    run('ringside.captureSnapshot', () => captureFromPalette()),
    run('ringside.snapshotSession', (node: SessionNode) => capture(sessionIdOf(node))),
    run('ringside.stopRecording', async () => {
      const live = sessions.list().filter((s) => s.state !== 'stopped');
      if (live.length === 0) throw new Error('no recording is running');
      const pick = live.length === 1 ? live[0] : await vscode.window.showQuickPick(live.map((s) => ({ label: s.label, description: s.state, id: s.id })), { title: 'Stop which recording?' }).then((p) => p && sessions.get(p.id));
      if (pick) await sessions.stop(pick.id);
    }),
    run('ringside.pauseSession', (node: SessionNode) => sessions.pause(sessionIdOf(node))),
    run('ringside.resumeSession', (node: SessionNode) => sessions.resume(sessionIdOf(node))),
    run('ringside.stopSession', (node: SessionNode) => sessions.stop(sessionIdOf(node))),
    run('ringside.removeSession', (node: SessionNode) => sessions.remove(sessionIdOf(node))),
    run('ringside.showTimeline', () => TimelinePanel.show(timelineHost, sessions.allSnapshots())),
    run('ringside.openSnapshot', (node: SessionNode) => {
      if (node?.kind !== 'snapshot') throw new Error('pick a snapshot in the Sessions view');
      TimelinePanel.show(timelineHost, [node.snapshot]);
    }),
    run('ringside.deleteSnapshot', (node: SessionNode) => {
      if (node?.kind !== 'snapshot') throw new Error('pick a snapshot in the Sessions view');
      sessions.deleteSnapshot(node.snapshot.id);
    }),
    run('ringside.exportSnapshot', async (arg: SessionNode | string) => {
      const snapshot = typeof arg === 'string' ? sessions.snapshotById(arg) : arg?.kind === 'snapshot' ? arg.snapshot : sessions.allSnapshots().slice(-1)[0];
      if (!snapshot) throw new Error('no snapshot to export yet');
      const format = await vscode.window.showQuickPick([
        { label: 'perf.data', description: 'perf report / perf script read it', format: 'perf.data' as const, ext: 'data' },
        { label: 'JSON Lines', description: 'one record per line', format: 'jsonl' as const, ext: 'jsonl' },
        { label: 'HTML', description: 'self-contained timeline page for a bug report', format: 'html' as const, ext: 'html' },
      ], { title: `Export snapshot ${snapshot.name}` });
      if (!format) return;
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(process.cwd());
      const uri = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.joinPath(folder, `ringside-${snapshot.name.replace(/[^\d]/g, '')}.${format.ext}`) });
      if (!uri) return;
      await sessions.exportSnapshot(snapshot.id, format.format, uri.fsPath);
      void vscode.window.showInformationMessage(`Ringside: exported ${snapshot.recordCount} records to ${uri.fsPath}`);
    }),
    run('ringside.openPerfData', async () => {
      const uris = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'perf.data': ['data', '*'] }, title: 'Open perf.data' });
      if (!uris?.[0]) return;
      const session = await sessions.openPerfData(uris[0].fsPath);
      TimelinePanel.show(timelineHost, session.snapshots);
    }),
    run('ringside.attachToEvent', async () => {
      const kept = keepers.list().filter((k) => k.state && k.alive);
      const foreign = scanPerfFds().filter((fd) => !kept.some((k) => k.state?.pid === fd.pid));
      const persistent = listPersistentEvents();
      type AttachItem = vscode.QuickPickItem & { keeper?: KeeperState; foreign?: ForeignPerfFd; persistentSpec?: string; unavailable?: boolean };
      const items: AttachItem[] = [
        ...kept.map((k) => ({ label: `$(lock) keeper ${k.state!.pid}`, description: k.state!.events.map((e) => e.name).join(', '), detail: `started ${k.state!.startedAt} · ${k.state!.rings.length} ring(s)`, keeper: k.state! })),
        ...foreign.map((fd) => ({ label: `$(plug) ${fd.comm} (pid ${fd.pid}) fd ${fd.fd}`, description: fd.mappedPages.length ? `rings of ${fd.mappedPages.join('/')} pages` : 'no ring mapped', detail: fd.cmdline, foreign: fd })),
        ...persistent.events.map((event) => ({ label: `$(database) ${event.spec}`, description: `persistent PMU event · ${event.terms}`, detail: 'the kernel keeps its buffer; Ringside maps it read-only on every CPU', persistentSpec: event.spec })),
      ];
      if (items.length === 0) throw new Error(`no keeper, no process with perf event fds and no persistent PMU event is visible (start a kept recording, or run e.g. perf record --overwrite). Persistent events: ${persistent.none ?? 'none'}`);
      // Say plainly when this kernel has no persistent events, instead of just leaving them out.
      if (persistent.none) items.push({ label: '$(info) No persistent PMU events here', description: '', detail: persistent.none, unavailable: true });
      const picked = await vscode.window.showQuickPick(items, { title: 'Ringside: attach to', matchOnDetail: true, matchOnDescription: true });
      if (!picked || picked.unavailable) return;
      if (picked.persistentSpec) {
        const source = attachPersistentEvent(picked.persistentSpec, { pages: settings().pages ?? DEFAULT_RING_PAGES, warmCopyBuffers: settings().warmCopyBuffers });
        sessions.adopt('borrowed', picked.persistentSpec, source);
        log(`attached to persistent event ${picked.persistentSpec} on ${source.ringStats().length} CPU(s), read-only`);
        return;
      }
      if (picked.keeper) {
        await sessions.attachKeeper(picked.keeper);
        return;
      }
      const owner = picked.foreign;
      if (owner) {
        // Without the owner's perf.data header Ringside cannot know the event: it asks (raw records is one answer).
        let info: Awaited<ReturnType<typeof borrowForeignRingAsking>>;
        try {
          info = await borrowForeignRingAsking(owner.pid, owner.fd, {
            ask: askWhichEvent,
            resolveSpec: async (spec) => (await backend.resolveEvents([spec], { pid: owner.pid }))[0],
            warmCopyBuffers: settings().warmCopyBuffers,
          });
        } catch (error) {
          if (error instanceof AttachCancelledError) return log(error.message);
          throw error;
        }
        sessions.adopt('borrowed', `${owner.comm} ${owner.pid} fd ${owner.fd}`, info.source);
        log(info.explanation);
        void vscode.window.showInformationMessage(`Ringside: ${info.explanation}`);
      }
    }),
    run('ringside.stopKeeper', async () => {
      const kept = keepers.list().filter((k) => k.state && k.alive);
      if (kept.length === 0) throw new Error('no keeper is running');
      const picked = await vscode.window.showQuickPick(kept.map((k) => ({ label: `keeper ${k.state!.pid}`, description: k.state!.events.map((e) => e.name).join(', '), state: k.state! })), { title: 'Stop which keeper?' });
      if (!picked) return;
      for (const session of sessions.list().filter((s) => s.kind === 'keeper' && s.label.startsWith(`keeper ${picked.state.pid}:`))) await sessions.stop(session.id);
      await keepers.stop(picked.state);
      log(`keeper ${picked.state.pid} stopped`);
    }),
    run('ringside.recordHitsOnLine', async (arg?: { lineNumber?: number; uri?: vscode.Uri }) => {
      const editor = vscode.window.activeTextEditor;
      const uri = arg?.uri ?? editor?.document.uri;
      const line = arg?.lineNumber ?? (editor ? editor.selection.active.line + 1 : undefined);
      if (!uri || !line) throw new Error('right-click a line number in a C/C++ file');
      await breakpoints.recordHitsOnLine(uri, line);
    }),
    run('ringside.watchWrites', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error('open a source file and put the cursor on a variable');
      await breakpoints.watch(editor, 'w');
    }),
    run('ringside.watchReadsWrites', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error('open a source file and put the cursor on a variable');
      await breakpoints.watch(editor, 'rw');
    }),
    run('ringside.convertBreakpoints', async () => {
      const scope = await vscode.window.showQuickPick([{ label: 'Active file', id: 'file' as const }, { label: 'Whole workspace', id: 'workspace' as const }], { title: 'Convert which breakpoints?' });
      if (!scope) return;
      const disable = await vscode.window.showQuickPick([{ label: 'Keep the originals enabled', off: false }, { label: 'Disable the originals', off: true }], { title: 'And VS Code\'s own breakpoints?' });
      if (!disable) return;
      const result = await breakpoints.convertDebuggerBreakpoints(scope.id, disable.off);
      for (const skipped of result.skipped) log(`convert: ${skipped.request.file}:${skipped.request.line}: ${skipped.reason}`);
      void vscode.window.showInformationMessage(`Ringside: armed ${result.armed} hardware breakpoint(s)${result.skipped.length ? `; ${result.skipped.length} listed in the output with the reason` : ''}`, ...(result.skipped.length ? ['Show Output'] : []))
        .then((choice) => { if (choice) output.show(true); });
    }),
    run('ringside.showOutput', () => output.show(true)),
    { dispose: () => { TimelinePanel.instance?.dispose(); } },
  );
  log(`Ringside activated (pid ${process.pid}, ${process.versions.electron ? `electron ${process.versions.electron}` : `node ${process.version}`})`);
}

export async function deactivate(): Promise<void> {
  // Closes every fd and mapping (our own rings and borrowed ones); keepers keep theirs.
  await manager?.dispose();
  manager = undefined;
}
