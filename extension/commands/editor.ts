// Hardware breakpoints from the editor: Record Hits on This Line (gutter; a breakpoint or uprobes, as picked), Watch Writes / Reads and Writes to
// the symbol under the cursor, and Convert Breakpoints to Hardware Breakpoints.

import * as vscode from 'vscode';
import { registerCommand, type Services } from '../services';
import { LINE_PROBE_MODES } from '../../native/specs/line-probe';
import { pickLineProbeMode } from '../ui/line-probe-pick';

export function registerEditorCommands(context: vscode.ExtensionContext, services: Services): void {
  const { breakpoints, log } = services;
  context.subscriptions.push(
    // `probe` (auto, breakpoint, uprobe) skips the question: a keybinding or a test may name the mechanism.
    registerCommand(services, 'ringside.recordHitsOnLine', async (arg?: { lineNumber?: number; uri?: vscode.Uri; probe?: unknown }) => {
      const editor = vscode.window.activeTextEditor;
      const uri = arg?.uri ?? editor?.document.uri;
      const line = arg?.lineNumber ?? (editor ? editor.selection.active.line + 1 : undefined);
      if (!uri || !line) throw new Error('right-click a line number in a C/C++ file');
      const named = LINE_PROBE_MODES.find((mode) => mode === arg?.probe);
      const mode = named ?? (await pickLineProbeMode());
      if (!mode) return;
      await breakpoints.recordHitsOnLine(uri, line, mode);
    }),
    registerCommand(services, 'ringside.watchWrites', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error('open a source file and put the cursor on a variable');
      await breakpoints.watch(editor, 'w');
    }),
    registerCommand(services, 'ringside.watchReadsWrites', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error('open a source file and put the cursor on a variable');
      await breakpoints.watch(editor, 'rw');
    }),
    registerCommand(services, 'ringside.convertBreakpoints', async () => {
      const scope = await vscode.window.showQuickPick(
        [
          { label: 'Active file', id: 'file' as const },
          { label: 'Whole workspace', id: 'workspace' as const },
        ],
        { title: 'Convert which breakpoints?' },
      );
      if (!scope) return;
      const disable = await vscode.window.showQuickPick(
        [
          { label: 'Keep the originals enabled', off: false },
          { label: 'Disable the originals', off: true },
        ],
        { title: "And VS Code's own breakpoints?" },
      );
      if (!disable) return;
      const result = await breakpoints.convertDebuggerBreakpoints(scope.id, disable.off);
      for (const skipped of result.skipped) log(`convert: ${skipped.request.file}:${skipped.request.line}: ${skipped.reason}`);
      void vscode.window
        .showInformationMessage(
          `Ringside: armed ${result.armed} hardware breakpoint(s)${result.skipped.length ? `; ${result.skipped.length} listed in the output with the reason` : ''}`,
          ...(result.skipped.length ? ['Show Output'] : []),
        )
        .then((choice) => {
          if (choice) services.output.show(true);
        });
    }),
  );
}
