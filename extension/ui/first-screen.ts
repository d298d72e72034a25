// The first screen of a folder that asks for one: `npm start`'s demo workspace holds .vscode/ringside-first-screen.json
// ({ "open": "demo.c" }), and on the first open of that folder Ringside shows the file, its own Sessions view in the
// side bar and its walkthrough beside the file, where VS Code would show its "Get Started" page (the demo's workspace
// settings turn that off with workbench.startupEditor: none). The extension activates on that file
// (workspaceContains), so other folders see nothing of this.

import * as vscode from 'vscode';

export const FIRST_SCREEN_FILE = '.vscode/ringside-first-screen.json';
/** The walkthrough's id in package.json's contributes.walkthroughs. */
export const WALKTHROUGH_ID = 'ringside.firstRecording';
const SHOWN_KEY = 'ringside.firstScreenShown';

interface FirstScreenRequest {
  /** A file of the folder to open, relative to it. */
  readonly open?: unknown;
}

/** Reads the folder's request, or undefined when it has none (or it is not an object). */
async function readRequest(folder: vscode.WorkspaceFolder): Promise<FirstScreenRequest | undefined> {
  let text: string;
  try {
    text = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder.uri, FIRST_SCREEN_FILE)));
  } catch {
    return undefined; // no such file: an ordinary folder
  }
  const parsed: unknown = JSON.parse(text);
  return typeof parsed === 'object' && parsed !== null ? parsed as FirstScreenRequest : undefined;
}

/** Shows the first screen once per workspace (later opens restore whatever the user left open). */
export async function showFirstScreen(context: vscode.ExtensionContext, log: (line: string) => void): Promise<void> {
  if (context.workspaceState.get<boolean>(SHOWN_KEY)) return;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    let request: FirstScreenRequest | undefined;
    try {
      request = await readRequest(folder);
    } catch (error) {
      log(`${FIRST_SCREEN_FILE} in ${folder.uri.fsPath} is not JSON (${String(error)}); no first screen`);
      continue;
    }
    if (!request) continue;
    await context.workspaceState.update(SHOWN_KEY, true);
    // The walkthrough first, beside: VS Code may open it by itself too (a newly installed extension's walkthrough), and
    // it reuses a Welcome editor only while that is the active one of its group; opened the other way round, demo.c
    // would hide the first and a second would open (npm start's profile turns VS Code's opening off as well).
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', { category: `${context.extension.id}#${WALKTHROUGH_ID}` }, true);
    if (typeof request.open === 'string') {
      const file = vscode.Uri.joinPath(folder.uri, request.open);
      try {
        await vscode.window.showTextDocument(file, { preview: false, viewColumn: vscode.ViewColumn.One });
      } catch (error) {
        log(`first screen: cannot open ${file.fsPath}: ${String(error)}`);
      }
    }
    await vscode.commands.executeCommand('workbench.view.extension.ringside');
    log(`first screen of ${folder.uri.fsPath}: ${typeof request.open === 'string' ? `${request.open}, ` : ''}the Sessions view and the walkthrough`);
    return;
  }
}
