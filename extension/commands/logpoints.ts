// Log Values at This Line (gutter and palette): a logpoint that does not stop the program.

import * as vscode from 'vscode';
import { registerCommand, type Services } from '../services';

export function registerLogpointCommands(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    registerCommand(services, 'ringside.logValuesAtLine', async (arg?: { lineNumber?: number; uri?: vscode.Uri }) => {
      const editor = vscode.window.activeTextEditor;
      const uri = arg?.uri ?? editor?.document.uri;
      const line = arg?.lineNumber ?? (editor ? editor.selection.active.line + 1 : undefined);
      if (!uri || !line) throw new Error('right-click a line number in a C/C++ file, or put the cursor on the line');
      await services.logpoints.logValuesAtLine(uri, line);
    }),
    services.logpoints,
  );
}
