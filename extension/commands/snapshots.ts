// Snapshots on the timeline and in files: Show Timeline, Open Snapshot in Timeline, Delete Snapshot,
// Export Snapshot… (perf.data, JSON Lines, HTML) and Open perf.data….

import * as path from 'node:path';
import * as vscode from 'vscode';
import { TimelinePanel } from '../panel/timeline-panel';
import { OpenCancelled } from '../session/session-manager';
import { withProgressAfterASecond, type ProgressSink } from '../ui/progress';
import type { SessionNode } from '../ui/sessions-view';
import { registerCommand, type Services } from '../services';
import type { PerfDataStage } from '../session/ports';

/** What the progress of Open perf.data says in each stage of reading the file. */
const OPEN_STAGE_STEPS: Readonly<Record<PerfDataStage, string>> = {
  read: 'reading the file',
  index: 'indexing records',
  order: 'putting records in time order',
  decode: 'decoding',
};

export function registerSnapshotCommands(context: vscode.ExtensionContext, services: Services): void {
  const { sessions, timelineHost, log } = services;
  context.subscriptions.push(
    registerCommand(services, 'ringside.showTimeline', () => TimelinePanel.show(timelineHost, sessions.allSnapshots())),
    registerCommand(services, 'ringside.openSnapshot', (node: SessionNode) => {
      if (node?.kind !== 'snapshot') throw new Error('pick a snapshot in the Sessions view');
      TimelinePanel.show(timelineHost, [node.snapshot]);
    }),
    registerCommand(services, 'ringside.deleteSnapshot', (node: SessionNode) => {
      if (node?.kind !== 'snapshot') throw new Error('pick a snapshot in the Sessions view');
      sessions.deleteSnapshot(node.snapshot.id);
    }),
    registerCommand(services, 'ringside.exportSnapshot', async (arg: SessionNode | string) => {
      const snapshot = typeof arg === 'string' ? sessions.snapshotById(arg) : arg?.kind === 'snapshot' ? arg.snapshot : sessions.allSnapshots().slice(-1)[0];
      if (!snapshot) throw new Error('no snapshot to export yet');
      const format = await vscode.window.showQuickPick(
        [
          { label: 'perf.data', description: 'perf report / perf script read it', format: 'perf.data' as const, ext: 'data' },
          { label: 'JSON Lines', description: 'one record per line', format: 'jsonl' as const, ext: 'jsonl' },
          { label: 'HTML', description: 'self-contained timeline page for a bug report', format: 'html' as const, ext: 'html' },
        ],
        { title: `Export snapshot ${snapshot.name}` },
      );
      if (!format) return;
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(process.cwd());
      const uri = await vscode.window.showSaveDialog({
        defaultUri: vscode.Uri.joinPath(folder, `ringside-${snapshot.name.replace(/[^\d]/g, '')}.${format.ext}`),
      });
      if (!uri) return;
      await sessions.exportSnapshot(snapshot.id, format.format, uri.fsPath);
      void vscode.window.showInformationMessage(`Ringside: exported ${snapshot.recordCount} records to ${uri.fsPath}`);
    }),
    registerCommand(services, 'ringside.openPerfData', async () => {
      const uris = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'perf.data': ['data', '*'] }, title: 'Open perf.data' });
      if (!uris?.[0]) return;
      const file = uris[0].fsPath;
      // The panel opens at once (its page loads while the file is read); the records are painted as perf's rounds let
      // them go, while the rest of the file is read, the names follow once it is all read. Reading, decoding and naming
      // a big file takes seconds on a loaded machine: progress says so, in a notification and in the panel, and either
      // Cancel gives up (nothing is kept, and what the page was shown of it goes).
      const panel = TimelinePanel.show(timelineHost);
      const startedAt = performance.now();
      let partsOf: string | undefined;
      const open = async (progress: ProgressSink) => {
        const session = await sessions.openPerfData(
          file,
          progress.cancelled,
          (stage) => progress.step(OPEN_STAGE_STEPS[stage]),
          (part, snapshotId) => {
            const first = partsOf === undefined;
            partsOf = snapshotId;
            TimelinePanel.instance?.addPart(snapshotId, path.basename(file), part, startedAt, first);
          },
        );
        const dropping = progress.onCancelled(() => {
          if (sessions.list().some((s) => s.id === session.id)) void sessions.remove(session.id);
        });
        try {
          progress.step(`${session.snapshots.reduce((n, s) => n + s.recordCount, 0).toLocaleString('en-US')} records; naming functions`);
          const shown = TimelinePanel.show(timelineHost);
          // Parts that were not the snapshot's rows (a record of a later round came earlier than one painted) go.
          if (partsOf !== undefined && !session.snapshots.some((s) => s.id === partsOf)) shown.dropOpening(partsOf);
          await Promise.all(session.snapshots.map((snapshot) => shown.addSnapshot(snapshot)));
        } finally {
          dropping.dispose();
        }
      };
      try {
        await withProgressAfterASecond(`Ringside: opening ${path.basename(file)}`, open, { panel });
      } catch (error) {
        // What the page was shown of a file that did not open goes with it.
        if (partsOf !== undefined && !sessions.allSnapshots().some((s) => s.id === partsOf)) TimelinePanel.instance?.dropOpening(partsOf);
        if (!(error instanceof OpenCancelled)) throw error;
        log(error.message);
      }
    }),
  );
}
