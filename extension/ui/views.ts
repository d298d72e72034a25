// What the extension shows without a command: the Sessions view, the status bar, the timeline panel restored
// after a reload, and notices when a recorded target or a ring's owner exits.

import * as vscode from 'vscode';
import { TimelinePanel } from '../panel/timeline-panel';
import { SessionsTreeProvider, RecordingStatusBar } from './sessions-view';
import { registerCommand, settings, type Services } from '../services';
import { TriggerNotices, type Notice } from './trigger-notices';

/**
 * A notice that stays open and is updated in place: a cancellable progress notification (a plain information message
 * cannot change its text), closed when the user cancels it or `close()` is called.
 */
function openNotice(title: string): Notice {
  let closed = false;
  let report: ((message: string) => void) | undefined;
  let pending: string | undefined;
  let finish: (() => void) | undefined;
  void vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) =>
      new Promise<void>((resolve) => {
        finish = resolve;
        report = (message) => progress.report({ message });
        if (pending !== undefined) report(pending);
        token.onCancellationRequested(() => {
          closed = true;
          resolve();
        });
      }),
  );
  return {
    update: (message) => {
      if (report) report(message);
      else pending = message;
    },
    close: () => {
      closed = true;
      finish?.();
    },
    get closed() {
      return closed;
    },
  };
}

export function registerViews(context: vscode.ExtensionContext, services: Services): void {
  const { output, sessions, breakpoints, log, timelineHost } = services;
  const tree = new SessionsTreeProvider(sessions);
  const statusBar = new RecordingStatusBar(sessions);
  const triggerNotices = new TriggerNotices(openNotice);
  context.subscriptions.push(
    output,
    tree,
    statusBar,
    breakpoints,
    triggerNotices,
    vscode.window.registerTreeDataProvider('ringside.sessions', tree),
    TimelinePanel.registerSerializer(timelineHost),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('ringside.snapshotRetention')) sessions.setRetention(settings().retention);
    }),
    sessions.onDidChange((change) => {
      if (change.what === 'target-exited') {
        const how = sessions.get(change.sessionId).targetExit;
        log(`session ${change.sessionId}: target ${how ?? 'exited'}; its rings stay readable until you stop the session`);
      }
      if (change.what === 'triggered') {
        const session = sessions.get(change.sessionId);
        const entry = session.snapshots[session.snapshots.length - 1];
        const what = `${entry?.trigger ?? 'a trigger'} fired; snapshot ${entry?.name ?? ''} taken (${entry?.recordCount.toLocaleString() ?? 0} records)`;
        log(`${session.label}: ${what}, and the recording goes on`);
        // One notice per session, updated with a count: a frequent trigger must not raise a toast per snapshot.
        triggerNotices.triggered(change.sessionId, session.label, what);
      }
      if (change.what === 'stopped' || change.what === 'removed') triggerNotices.ended(change.sessionId);
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
    {
      dispose: () => {
        TimelinePanel.instance?.dispose();
      },
    },
  );
}
