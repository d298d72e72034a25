// Record Hits on This Line, as the gutter runs it, on a launched program: the editor's logic (HardwareBreakpoints)
// under the stand-in `vscode`, on the real kernel, until the program exits and one snapshot is taken. Used in this
// process by line-probes.test.ts and, as `node record-line-hits.js JSON`, by the same test as uid 65534.

import type { WatchBudget, WatchInfo } from '../../shared/protocol';
import type { LineProbeMode } from '../../native/specs/line-probe';
import { editorVscode, type ShownMessages } from './editor-vscode';
import { standInVscode } from './helpers';

export interface LineHitsRun {
  readonly program: string;
  readonly args: readonly string[];
  /** The source file as the editor has it open (its base name is what the spec names). */
  readonly sourceFile: string;
  readonly line: number;
  readonly mode: LineProbeMode;
}

export interface LineHitsResult {
  readonly shown: ShownMessages;
  readonly logged: readonly string[];
  /** The panel's row for the line, after the snapshot. */
  readonly watch: WatchInfo;
  readonly budget: WatchBudget;
  /** The debug-register meter while the recording was open. */
  readonly budgetWhileOpen: WatchBudget;
  /** The hover on the line after the snapshot (its markdown text). */
  readonly hover: string | undefined;
}

/** Needs the stand-in `vscode` installed (standInVscode(editorVscode(shown))) with the same `shown`. */
export async function recordLineHits(run: LineHitsRun, shown: ShownMessages): Promise<LineHitsResult> {
  const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
  const { SessionManager } = await import('../../extension/session/session-manager');
  const { createBackend } = await import('../../extension/session/backend');
  const manager = new SessionManager({ backend: createBackend() });
  const logged: string[] = [];
  const breakpoints = new HardwareBreakpoints(
    manager,
    async () => ({ target: { kind: 'launch', argv: [run.program, ...run.args] }, executable: run.program }),
    (line) => logged.push(line),
    () => undefined,
    () => 64,
  );
  const list = () => {
    const message = breakpoints.watchHandler.listMessage();
    if (message.type !== 'watchList') throw new Error(`the panel was sent ${message.type}`);
    return message;
  };
  try {
    await breakpoints.recordHitsOnLine({ fsPath: run.sourceFile } as never, run.line, run.mode);
    const session = manager.list().at(-1);
    if (!session) throw new Error(`nothing was armed: ${JSON.stringify({ shown, logged })}`);
    const budgetWhileOpen = list().budget;
    await manager.whenTargetExited(session.id);
    await manager.snapshot(session.id);
    const { watches, budget } = list();
    if (watches.length !== 1) throw new Error(`the panel lists ${watches.length} rows: ${JSON.stringify(watches)}`);
    const hover = breakpoints.provideHover({ uri: { fsPath: run.sourceFile } } as never, { line: run.line - 1 } as never) as
      { contents: { value: string } } | undefined;
    return { shown, logged, watch: watches[0], budget, budgetWhileOpen, hover: hover?.contents.value };
  } finally {
    breakpoints.dispose();
    await manager.dispose();
  }
}

// As a script (uid 65534): one run from the JSON argument, its result as JSON on stdout.
if (require.main === module) {
  const shown: ShownMessages = { information: [], warning: [] };
  standInVscode(editorVscode(shown));
  recordLineHits(JSON.parse(process.argv[2]) as LineHitsRun, shown).then(
    (result) => {
      process.stdout.write(JSON.stringify(result));
    },
    (error: Error) => {
      process.stderr.write(`${error.stack ?? error.message}\n`);
      process.exitCode = 1;
    },
  );
}
