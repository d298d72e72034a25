// The Sessions tree (sessions → events → rings, plus snapshots) and the status-bar item. Both only
// read the SessionManager; a timer refreshes live ring facts while something records.

import * as vscode from 'vscode';
import type { SessionInfo, SessionManager, SnapshotEntry } from '../session/session-manager';
import { formatBytes } from '../../native/abi/units';
import type { RingStatus } from '../session/ports';

export type SessionNode =
  | { readonly kind: 'session'; readonly session: SessionInfo }
  | { readonly kind: 'event'; readonly sessionId: string; readonly index: number; readonly name: string }
  | { readonly kind: 'ring'; readonly sessionId: string; readonly ring: RingStatus }
  | { readonly kind: 'snapshots'; readonly sessionId: string }
  | { readonly kind: 'snapshot'; readonly snapshot: SnapshotEntry };

/** Ring facts as one line: size, fill, overwritten, oldest retained time, lost. */
export function describeRing(ring: RingStatus, last?: SnapshotEntry): string {
  const fill = ring.dataSize ? Math.min(100, Number((ring.bytesWritten * 100n) / BigInt(ring.dataSize))) : 0;
  const overwritten = ring.bytesWritten > BigInt(ring.dataSize) ? ring.bytesWritten - BigInt(ring.dataSize) : 0n;
  const coverage = last?.decoded.coverage.find((c) => c.ringId === ring.ringId);
  const parts = [ring.paused ? 'paused' : 'running', formatBytes(ring.dataSize), `${fill}% full`, `${formatBytes(Number(overwritten))} overwritten`];
  if (coverage?.oldestTimeNs !== null && coverage?.oldestTimeNs !== undefined) {
    parts.push(`oldest ${((Number(coverage.newestTimeNs ?? coverage.oldestTimeNs) - Number(coverage.oldestTimeNs)) / 1e6).toFixed(1)} ms before newest`);
  }
  // The kernel's exact count where it has one (PERF_FORMAT_LOST), else the LOST records of the copy.
  const lost = coverage ? (coverage.lostSinceOpen ?? coverage.lostRecords) : 0n;
  if (lost > 0n) parts.push(`${lost} lost`);
  return parts.join(' · ');
}

export class SessionsTreeProvider implements vscode.TreeDataProvider<SessionNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SessionNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: { dispose(): void };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly manager: SessionManager) {
    this.subscription = manager.onDidChange(() => this.refresh());
  }

  refresh(): void {
    this.changed.fire(undefined);
    const live = this.manager.list().some((s) => s.state !== 'stopped');
    if (live && !this.timer) this.timer = setInterval(() => this.changed.fire(undefined), 2000);
    if (!live && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  getChildren(node?: SessionNode): SessionNode[] {
    if (!node) return this.manager.list().map((session) => ({ kind: 'session', session }));
    switch (node.kind) {
      case 'session': {
        const id = node.session.id;
        const events = this.manager.events(id).map((event): SessionNode => ({ kind: 'event', sessionId: id, index: event.index, name: event.name }));
        const children: SessionNode[] = [...events];
        if (node.session.snapshots.length) children.push({ kind: 'snapshots', sessionId: id });
        return children;
      }
      case 'event':
        return this.manager
          .ringStats(node.sessionId)
          .filter((ring) => ring.direction === 'backward')
          .map((ring): SessionNode => ({ kind: 'ring', sessionId: node.sessionId, ring }))
          .filter((ringNode) => ringNode.kind === 'ring' && this.ringBelongsTo(ringNode.ring, node));
      case 'snapshots':
        return [...this.manager.get(node.sessionId).snapshots].reverse().map((snapshot): SessionNode => ({ kind: 'snapshot', snapshot }));
      default:
        return [];
    }
  }

  private ringBelongsTo(ring: RingStatus, event: Extract<SessionNode, { kind: 'event' }>): boolean {
    const last = this.lastSnapshot(event.sessionId);
    const copy = last?.decoded.rings.find((r) => r.ringId === ring.ringId);
    // Until the first snapshot the ring → event link is unknown: list rings under the first event.
    return copy ? copy.defaultEvent === event.index : event.index === 0;
  }

  private lastSnapshot(sessionId: string): SnapshotEntry | undefined {
    const snapshots = this.manager.get(sessionId).snapshots;
    return snapshots[snapshots.length - 1];
  }

  getTreeItem(node: SessionNode): vscode.TreeItem {
    switch (node.kind) {
      case 'session': {
        const s = node.session;
        const item = new vscode.TreeItem(s.label, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `session:${s.id}`;
        item.description = `${s.state}${s.targetExited ? ' · target exited' : ''} · ${s.kind}`;
        item.contextValue = `session-${s.state}`;
        item.iconPath = new vscode.ThemeIcon(s.state === 'running' ? 'record' : s.state === 'paused' ? 'debug-pause' : 'circle-outline');
        item.tooltip = `${s.label}\n${s.kind} session, ${s.state}${s.childPid ? `, pid ${s.childPid}` : ''}\n${s.snapshots.length} snapshot(s)`;
        return item;
      }
      case 'event': {
        const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `event:${node.sessionId}:${node.index}`;
        item.contextValue = 'event';
        item.iconPath = new vscode.ThemeIcon('pulse');
        return item;
      }
      case 'ring': {
        const item = new vscode.TreeItem(node.ring.label, vscode.TreeItemCollapsibleState.None);
        item.id = `ring:${node.sessionId}:${node.ring.ringId}`;
        item.description = describeRing(node.ring, this.lastSnapshot(node.sessionId));
        item.contextValue = 'ring';
        item.iconPath = new vscode.ThemeIcon('history');
        return item;
      }
      case 'snapshots': {
        const item = new vscode.TreeItem('Snapshots', vscode.TreeItemCollapsibleState.Expanded);
        item.id = `snapshots:${node.sessionId}`;
        item.iconPath = new vscode.ThemeIcon('device-camera');
        return item;
      }
      case 'snapshot': {
        const s = node.snapshot;
        const item = new vscode.TreeItem(s.name, vscode.TreeItemCollapsibleState.None);
        item.id = `snapshot:${s.id}`;
        item.description = `${s.trigger ? `⚡ ${s.trigger} · ` : ''}${s.recordCount.toLocaleString()} records · ${formatBytes(s.sizeBytes)} · pause ${(s.maxPauseNs / 1e3).toFixed(0)} µs`;
        if (s.trigger) item.iconPath = new vscode.ThemeIcon('zap');
        item.contextValue = 'snapshot';
        item.command = { command: 'ringside.openSnapshot', title: 'Open Snapshot', arguments: [node] };
        return item;
      }
    }
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** "Ringside: recording (2) · last 1.2 MiB", with the snapshot button while recording. */
export class RecordingStatusBar implements vscode.Disposable {
  private readonly state = vscode.window.createStatusBarItem('ringside.state', vscode.StatusBarAlignment.Left, 50);
  private readonly snapshotButton = vscode.window.createStatusBarItem('ringside.snapshot', vscode.StatusBarAlignment.Left, 49);
  private readonly subscription: { dispose(): void };

  constructor(private readonly manager: SessionManager) {
    this.state.name = 'Ringside recording state';
    this.state.command = 'workbench.view.extension.ringside';
    this.snapshotButton.name = 'Ringside snapshot';
    this.snapshotButton.text = '$(device-camera) Snapshot';
    this.snapshotButton.tooltip = 'Capture Snapshot (Ctrl+Alt+S)';
    this.snapshotButton.command = 'ringside.captureSnapshot';
    this.subscription = manager.onDidChange(() => this.update());
    this.update();
  }

  update(): void {
    const sessions = this.manager.list();
    const live = sessions.filter((s) => s.state !== 'stopped');
    const last = sessions
      .flatMap((s) => s.snapshots)
      .sort((a, b) => a.takenAtMs - b.takenAtMs)
      .pop();
    void vscode.commands.executeCommand('setContext', 'ringside.recording', live.length > 0);
    if (sessions.length === 0) {
      this.state.hide();
      this.snapshotButton.hide();
      return;
    }
    const recording = live.length ? `$(record) recording${live.length > 1 ? ` (${live.length})` : ''}` : '$(circle-outline) stopped';
    // An ordinary user records user space only: say so where the recording is shown, not only in a log.
    const limitations = [...new Set(live.flatMap((s) => s.limitations))];
    const userSpaceOnly = limitations.some((line) => line.startsWith('user space only'));
    this.state.text = `${recording}${userSpaceOnly ? ' · user space only' : ''}${last ? ` · last ${formatBytes(last.sizeBytes)}` : ''}`;
    this.state.tooltip = [
      last ? `Last snapshot ${last.name}: ${last.recordCount} records, ${formatBytes(last.sizeBytes)}` : 'No snapshot yet',
      ...limitations,
    ].join('\n');
    this.state.show();
    if (live.length) this.snapshotButton.show();
    else this.snapshotButton.hide();
  }

  dispose(): void {
    this.subscription.dispose();
    this.state.dispose();
    this.snapshotButton.dispose();
  }
}
