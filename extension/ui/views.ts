// What the extension shows without a command: the Sessions view, the status bar, the timeline panel restored
// after a reload, and notices when a recorded target or a ring's owner exits.

import * as vscode from 'vscode';
import { TimelinePanel } from '../panel/timeline-panel';
import { SessionsTreeProvider, RecordingStatusBar } from './sessions-view';
import { registerCommand, settings, type Services } from '../services';

export function registerViews(context: vscode.ExtensionContext, services: Services): void {
  const { output, sessions, breakpoints, log, timelineHost } = services;
  const tree = new SessionsTreeProvider(sessions);
  const statusBar = new RecordingStatusBar(sessions);
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
      if (change.what === 'triggered') {
        const session = sessions.get(change.sessionId);
        const entry = session.snapshots[session.snapshots.length - 1];
        const message = `${session.label}: ${entry?.trigger ?? 'a trigger'} fired; snapshot ${entry?.name ?? ''} taken (${entry?.recordCount.toLocaleString() ?? 0} records), and the recording goes on`;
        log(message);
        void vscode.window.showInformationMessage(`Ringside: ${message}`);
      }
      if (change.what === 'trigger-failed') {
        const message = `${sessions.get(change.sessionId).label}: ${change.detail ?? 'a triggered snapshot failed'}`;
        log(message);
        void vscode.window.showWarningMessage(`Ringside: ${message}`);
      }
      if (change.what === 'owner-exited') {
        const session = sessions.get(change.sessionId);
        const message = `${session.label}: the process that held these rings exited. They stay readable (and recording) through this session until you stop it; nothing else can attach to them any more.`;
        log(message);
        void vscode.window.showWarningMessage(`Ringside: ${message}`);
      }
    }),
    registerCommand(services, 'ringside.showOutput', () => output.show(true)),
    { dispose: () => { TimelinePanel.instance?.dispose(); } },
  );
}
