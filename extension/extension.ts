// Composition root: creates the services and hands the context to each part that registers commands, views
// and providers, so deactivate releases all fds, mappings, timers and panels. Logic lives in session/
// (vscode-free, tested on the real kernel), editor/, panel/, ui/ and the command modules in commands/.

import type * as vscode from 'vscode';
import type { SessionManager } from './session/session-manager';
import { createServices } from './services';
import { registerViews } from './ui/views';
import { registerRecordingCommands } from './commands/recording';
import { registerSnapshotCommands } from './commands/snapshots';
import { reattachKeepers, registerAttachCommands } from './commands/attach';
import { registerEditorCommands } from './commands/editor';
import { showFirstScreen } from './ui/first-screen';

let manager: SessionManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const services = createServices(context);
  manager = services.sessions;
  registerViews(context, services);
  registerRecordingCommands(context, services);
  registerSnapshotCommands(context, services);
  registerAttachCommands(context, services);
  registerEditorCommands(context, services);
  services.log(`Ringside activated (pid ${process.pid}, ${process.versions.electron ? `electron ${process.versions.electron}` : `node ${process.version}`})`);
  void showFirstScreen(context, services.log).catch((error: unknown) => services.log(`first screen failed: ${String(error)}`));
  // The kept recordings this editor started outlive a reload: the Sessions view shows them again.
  void reattachKeepers(services).catch((error: unknown) => services.log(`re-attaching keepers failed: ${String(error)}`));
}

export async function deactivate(): Promise<void> {
  // Closes every fd and mapping (our own rings and borrowed ones); keepers keep theirs.
  await manager?.dispose();
  manager = undefined;
}
