// The timeline WebviewPanel: renders the page (CSP with a fresh crypto nonce, resources only from
// dist/webview), streams snapshots through SnapshotStreamer, answers details/reveal/watch/export/Snapshot When
// requests, validates every incoming message, and restores itself after a reload (serializer).

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { renderWebviewHtml } from '../../host/html';
import { PROTOCOL_VERSION, type HostToWebview, type WatchRequest, type WebviewToHost } from '../../shared/protocol';
import { validateWebviewToHost } from '../../shared/validate';
import { rowDetails } from '../../host/wire';
import { rowsMatchingField } from '../../host/field-filter';
import { captureName, liveUnavailableReason, type SessionManager, type SnapshotEntry } from '../session/session-manager';
import type { DecodedSnapshot } from '../../native/decode/types';
import { SnapshotStreamer } from './streamer';
import { LiveFollow } from './live-follow';

/** ringside.follow.windowSeconds when unset: how much of a live recording the panel keeps. */
const DEFAULT_LIVE_WINDOW_SECONDS = 30;

export const TIMELINE_VIEW_TYPE = 'ringside.timeline';

export interface WatchHandler {
  handle(request: WatchRequest): Promise<void>;
  /** Current list + budget, posted after every change. */
  listMessage(): HostToWebview;
}

export interface TimelineHost {
  readonly extensionUri: vscode.Uri;
  readonly manager: SessionManager;
  readonly log: (line: string) => void;
  readonly watches?: WatchHandler;
}

export class TimelinePanel implements vscode.Disposable {
  private static current: TimelinePanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly streamer: SnapshotStreamer;
  private disposed = false;
  /** The page's "Follow live" box. */
  private liveWanted = false;
  /** The page said `ready` (a hidden panel's page is gone: it says so again when shown). */
  private pageReady = false;
  private live: LiveFollow | undefined;
  private liveNumber = 0;
  /** What the page was last told of live follow, so a change of sessions that changes nothing says nothing. */
  private liveSaid = '';

  static show(host: TimelineHost, snapshots: readonly SnapshotEntry[] = []): TimelinePanel {
    if (!TimelinePanel.current) {
      const panel = vscode.window.createWebviewPanel(
        TIMELINE_VIEW_TYPE,
        'Ringside Timeline',
        vscode.ViewColumn.Active,
        TimelinePanel.options(host.extensionUri),
      );
      TimelinePanel.current = new TimelinePanel(panel, host, undefined);
    } else {
      TimelinePanel.current.panel.reveal(undefined, true);
    }
    for (const snapshot of snapshots) void TimelinePanel.current.addSnapshot(snapshot);
    return TimelinePanel.current;
  }

  static get instance(): TimelinePanel | undefined {
    return TimelinePanel.current;
  }

  static registerSerializer(host: TimelineHost): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(TIMELINE_VIEW_TYPE, {
      async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown) {
        panel.webview.options = TimelinePanel.options(host.extensionUri);
        TimelinePanel.current?.dispose();
        TimelinePanel.current = new TimelinePanel(panel, host, state);
        // Snapshots live in memory: after a reload the page comes back with its view state and whatever the sessions still hold.
        for (const snapshot of host.manager.allSnapshots()) void TimelinePanel.current.addSnapshot(snapshot);
      },
    });
  }

  private static options(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')],
    };
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly host: TimelineHost,
    restoredState: unknown,
  ) {
    this.streamer = new SnapshotStreamer((message) => this.post(message));
    const webview = panel.webview;
    const root = vscode.Uri.joinPath(host.extensionUri, 'dist', 'webview');
    webview.html = renderWebviewHtml({
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'timeline.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'timeline.css')).toString(),
      cspSource: webview.cspSource,
      nonce: randomBytes(32).toString('base64url'),
      initialState: restoredState ?? null,
    });
    this.disposables.push(
      webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidChangeViewState(() => {
        this.streamer.setVisible(panel.visible);
        // Off while hidden: nothing is read for a page nobody sees (its page is recreated, and asks again, when shown).
        if (!panel.visible) this.pageReady = false;
        this.updateLive();
      }),
      panel.onDidDispose(() => this.dispose()),
      host.manager.onDidChange((change) => {
        if (change.what === 'snapshot-deleted' || change.what === 'removed') this.dropMissingSnapshots();
        if (change.what === 'started' || change.what === 'stopped' || change.what === 'removed' || change.what === 'state') this.updateLive();
      }),
    );
  }

  /** Re-sends the watch list (after a breakpoint was armed or removed from the editor). */
  postWatches(): void {
    if (this.host.watches) this.post(this.host.watches.listMessage());
  }

  /**
   * Sends a snapshot to the page (once): its records at once, its names once known. Resolves when its names are sent
   * (true), or false when it was removed first, or sent before.
   */
  addSnapshot(entry: SnapshotEntry): Promise<boolean> {
    if (this.disposed || (this.streamer.has(entry.id) && !this.streamer.growing(entry.id))) return Promise.resolve(false);
    const session = this.host.manager.list().find((s) => s.id === entry.sessionId);
    // Its stages so far; the page's first paint and its names complete them (a snapshot sent again after a reload is not timed).
    const opening = this.openings.get(entry.id);
    this.openings.delete(entry.id);
    const timing = entry.stages
      ? { name: entry.name, maxPauseNs: entry.maxPauseNs, stages: entry.stages, wireMs: 0, firstBatchAt: opening?.firstPartAt }
      : undefined;
    if (timing) this.timings.set(entry.id, timing);
    const { wireMs, named } = this.streamer.add(entry.id, captureName(session, entry), entry.takenAtMs, entry.decoded, entry.symbols, entry.limitations);
    if (timing) timing.wireMs = wireMs + (opening?.wireMs ?? 0);
    // A file painted while it was read: its stages are all known now.
    if (opening?.paintedAt !== undefined) this.logStages(entry.id, opening.paintedAt);
    return named.then((names) => {
      if (names && timing)
        this.host.log(
          `snapshot ${timing.name} names: symbolize ${(timing.stages.learnMs + names.symbolizeMs).toFixed(1)} ms (mappings ${timing.stages.learnMs.toFixed(1)} ms, ` +
            `addresses ${names.symbolizeMs.toFixed(1)} ms in steps), sent ${(names.at - timing.stages.startedAt).toFixed(0)} ms after it was asked for`,
        );
      return names !== null;
    });
  }

  /**
   * Shows a part of a perf.data file being opened (SessionManager.openPerfData's onRecords): the first shows the file's
   * capture, painted while the rest is read; addSnapshot of its snapshot (the same id) ends it. `startedAt`:
   * performance.now() when the open was asked for.
   */
  addPart(snapshotId: string, name: string, part: DecodedSnapshot, startedAt: number, first: boolean): void {
    if (this.disposed) return;
    let opening = this.openings.get(snapshotId);
    // A panel opened after the file's first part went to another (closed meanwhile) gets the snapshot whole at the end.
    if (!opening && !first) return;
    if (!opening) {
      opening = { name, startedAt, records: 0, wireMs: 0 };
      this.openings.set(snapshotId, opening);
    }
    const started = performance.now();
    this.streamer.grow(snapshotId, name, part);
    opening.wireMs += performance.now() - started;
    opening.records += part.columns.length;
  }

  /** The details of a file's records are the snapshot's, which exists once the whole file is read. */
  private assertRead(snapshotId: string): void {
    if (this.streamer.growing(snapshotId))
      throw new Error(`${this.openings.get(snapshotId)?.name ?? 'the file'} is still being read: its records' details come once all of it is read`);
  }

  /** A file being opened that will not become a snapshot (cancelled, failed, or its parts were not its rows): the page drops it. */
  dropOpening(snapshotId: string): void {
    this.openings.delete(snapshotId);
    if (this.streamer.growing(snapshotId)) this.streamer.remove(snapshotId);
  }

  /** Per perf.data file being opened (addPart), until its snapshot is added: what its first paint is timed by. */
  private readonly openings = new Map<
    string,
    { name: string; startedAt: number; records: number; wireMs: number; firstPartAt?: number; paintedAt?: number; firstPartRecords?: number }
  >();

  /** Per snapshot on its way to the page: its stages, until its first paint is logged. */
  private readonly timings = new Map<
    string,
    { name: string; maxPauseNs: number; stages: NonNullable<SnapshotEntry['stages']>; wireMs: number; firstBatchAt: number | undefined }
  >();

  /** The page drew a snapshot's first batch: every stage of it until then, timed, in the Output log (its names follow). */
  private logStages(snapshotId: string, paintedAt = performance.now()): void {
    const opening = this.openings.get(snapshotId);
    if (opening && opening.paintedAt === undefined) {
      // A file still being read: its first parts are on the page; the stages of the whole follow once it is read.
      opening.paintedAt = paintedAt;
      this.host.log(
        `snapshot ${opening.name} first paint: ${(opening.firstPartRecords ?? 0).toLocaleString('en-US')} records of perf's first rounds painted ` +
          `${(paintedAt - (opening.firstPartAt ?? NaN)).toFixed(1)} ms after they were sent; asked for → painted ${(paintedAt - opening.startedAt).toFixed(0)} ms ` +
          `(the rest of the file is read meanwhile)`,
      );
      return;
    }
    const timing = this.timings.get(snapshotId);
    if (!timing) return;
    this.timings.delete(snapshotId);
    const now = paintedAt;
    const { stages } = timing;
    const paintMs = timing.firstBatchAt === undefined ? NaN : now - timing.firstBatchAt;
    // A perf.data file is not paused nor copied: it is read, its records indexed, then put in time order.
    const before = stages.file
      ? `read ${stages.file.readMs.toFixed(1)} ms, index ${stages.file.indexMs.toFixed(1)} ms, order ${stages.file.orderMs.toFixed(1)} ms`
      : `pause ${(timing.maxPauseNs / 1e3).toFixed(1)} µs, copy ${stages.copyMs.toFixed(1)} ms`;
    this.host.log(
      `snapshot ${timing.name} stages: ${before}, ` +
        `decode ${stages.decodeMs.toFixed(1)} ms, wire ${timing.wireMs.toFixed(1)} ms, ` +
        `first paint ${paintMs.toFixed(1)} ms after its first batch was sent; asked for → painted ${(now - stages.startedAt).toFixed(0)} ms (names follow)`,
    );
  }

  /** Work shown in the page with its Cancel (beginTask), by task id. */
  private readonly tasks = new Map<string, { title: string; step?: string; cancel: () => void }>();
  private taskNumber = 0;

  /**
   * Shows work in progress in the page (the page shows it once it has taken a second) with a Cancel that calls
   * `cancel`, until `end`. The same work's progress notification shares the cancellation (extension/ui/progress.ts).
   */
  beginTask(title: string, cancel: () => void): { step(text: string): void; end(): void } {
    const taskId = `task-${++this.taskNumber}`;
    const task: { title: string; step?: string; cancel: () => void } = { title, cancel };
    this.tasks.set(taskId, task);
    this.post({ type: 'progress', taskId, title, cancellable: true });
    return {
      step: (text) => {
        if (!this.tasks.has(taskId)) return;
        task.step = text;
        this.post({ type: 'progress', taskId, title, step: text, cancellable: true });
      },
      end: () => {
        if (this.tasks.delete(taskId)) this.post({ type: 'progress', taskId, title, cancellable: true, done: true });
      },
    };
  }

  private dropMissingSnapshots(): void {
    const alive = new Set(this.host.manager.allSnapshots().map((s) => s.id));
    // Every snapshot queued, sent or not yet (its naming stops with it).
    for (const snapshot of this.streamer.snapshotIds()) if (!alive.has(snapshot) && !this.streamer.growing(snapshot)) this.streamer.remove(snapshot);
  }

  private post(message: HostToWebview): void {
    if (this.disposed) return;
    if (message.type === 'batch' && message.firstRow === 0) {
      const timing = this.timings.get(message.snapshotId);
      if (timing && timing.firstBatchAt === undefined) timing.firstBatchAt = performance.now();
    }
    if (message.type === 'liveAppend' && message.opening && message.batch.firstRow === 0) {
      const opening = this.openings.get(message.snapshotId);
      if (opening && opening.firstPartAt === undefined) {
        opening.firstPartAt = performance.now();
        opening.firstPartRecords = message.batch.rowCount;
      }
    }
    // postMessage serialises ArrayBuffers natively (no JSON), so the columnar batches stay binary.
    void this.panel.webview.postMessage(message);
  }

  private receive(raw: unknown): void {
    const validated = validateWebviewToHost(raw);
    if (!validated.ok) {
      this.host.log(`timeline: ignored an invalid message from the page: ${validated.reason}`);
      return;
    }
    void this.handle(validated.message).catch((error: unknown) => this.host.log(`timeline: ${(error as Error).stack ?? String(error)}`));
  }

  private async handle(message: WebviewToHost): Promise<void> {
    switch (message.type) {
      case 'ready':
        if (message.protocolVersion !== PROTOCOL_VERSION) this.host.log(`timeline: page speaks protocol ${message.protocolVersion}, host ${PROTOCOL_VERSION}`);
        // A new page holds no live capture: a follow for the old one ends, and starts again if the page asks.
        this.pageReady = true;
        this.liveWanted = false;
        this.liveSaid = '';
        this.updateLive();
        this.post({ type: 'init', protocolVersion: PROTOCOL_VERSION, title: 'Ringside', editor: true, recorder: true });
        // Work still under way is shown again in the new page.
        for (const [taskId, task] of this.tasks)
          this.post({ type: 'progress', taskId, title: task.title, ...(task.step ? { step: task.step } : {}), cancellable: true });
        this.streamer.onReady();
        if (this.host.watches) this.post(this.host.watches.listMessage());
        return;
      case 'batchAck':
        this.streamer.onAck(message.snapshotId, message.batchIndex);
        return;
      case 'liveFollow':
        this.liveWanted = message.on;
        this.updateLive();
        return;
      case 'liveAck':
        this.live?.onAck(message.snapshotId, message.seq);
        this.streamer.onLiveAck(message.snapshotId, message.seq);
        return;
      case 'painted':
        this.logStages(message.snapshotId);
        this.streamer.onPainted(message.snapshotId);
        return;
      case 'cancel':
        this.tasks.get(message.taskId)?.cancel();
        return;
      case 'resync':
        this.streamer.setVisible(true);
        this.streamer.onResync(message.have);
        return;
      case 'detailsRequest': {
        try {
          if (message.snapshotId === this.live?.snapshotId) {
            const details = this.live.details(message.row);
            this.post({ type: 'detailsReply', replyTo: message.requestId, snapshotId: message.snapshotId, row: message.row, details });
            return;
          }
          this.assertRead(message.snapshotId);
          const entry = this.host.manager.snapshotById(message.snapshotId);
          if (message.row >= entry.decoded.columns.length) throw new RangeError(`row ${message.row} is past the ${entry.decoded.columns.length} records`);
          const details = rowDetails(entry.decoded, message.row, entry.symbols);
          this.post({ type: 'detailsReply', replyTo: message.requestId, snapshotId: message.snapshotId, row: message.row, details });
        } catch (error) {
          this.post({
            type: 'detailsReply',
            replyTo: message.requestId,
            snapshotId: message.snapshotId,
            row: message.row,
            error: { code: 'DETAILS', message: (error as Error).message },
          });
        }
        return;
      }
      case 'fieldFilterRequest': {
        try {
          if (message.snapshotId !== this.live?.snapshotId) this.assertRead(message.snapshotId);
          const rows =
            message.snapshotId === this.live?.snapshotId
              ? this.live.rowsMatchingField(message.name, message.op, message.value)
              : rowsMatchingField(this.host.manager.snapshotById(message.snapshotId).decoded, message.name, message.op, message.value);
          this.post({ type: 'fieldFilterReply', replyTo: message.requestId, snapshotId: message.snapshotId, rows: rows.buffer as ArrayBuffer });
        } catch (error) {
          this.post({
            type: 'fieldFilterReply',
            replyTo: message.requestId,
            snapshotId: message.snapshotId,
            error: { code: 'FIELD_FILTER', message: (error as Error).message },
          });
        }
        return;
      }
      case 'revealRequest': {
        try {
          const document = await vscode.workspace.openTextDocument(vscode.Uri.file(message.file));
          const line = Math.max(0, Math.min(document.lineCount - 1, message.line - 1));
          await vscode.window.showTextDocument(document, {
            selection: new vscode.Range(line, 0, line, 0),
            viewColumn: vscode.ViewColumn.Beside,
            preserveFocus: false,
          });
          this.post({ type: 'revealReply', replyTo: message.requestId, ok: true });
        } catch (error) {
          this.post({
            type: 'revealReply',
            replyTo: message.requestId,
            ok: false,
            error: { code: 'REVEAL', message: `cannot open ${message.file}:${message.line}: ${(error as Error).message}` },
          });
        }
        return;
      }
      case 'watchRequest': {
        if (!this.host.watches) {
          this.post({
            type: 'watchReply',
            replyTo: message.requestId,
            ok: false,
            error: { code: 'NO_SESSION', message: 'start a recording with a launched or attached process to arm breakpoints' },
          });
          return;
        }
        try {
          await this.host.watches.handle(message);
          this.post({ type: 'watchReply', replyTo: message.requestId, ok: true });
        } catch (error) {
          const hint = (error as { hint?: unknown }).hint;
          this.post({
            type: 'watchReply',
            replyTo: message.requestId,
            ok: false,
            error: { code: (error as { code?: string }).code ?? 'WATCH', message: (error as Error).message, ...(typeof hint === 'string' ? { hint } : {}) },
          });
        }
        this.post(this.host.watches.listMessage());
        return;
      }
      case 'exportRequest':
        await vscode.commands.executeCommand('ringside.exportSnapshot', message.snapshotId);
        return;
      case 'snapshotWhenRequest':
        // Validated above; the command still only offers it in its input box for the user to confirm.
        await vscode.commands.executeCommand('ringside.snapshotWhen', message.event);
        return;
      case 'webviewError':
        this.host.log(`timeline page error: ${message.message}`);
        return;
    }
  }

  /**
   * Follows the newest running recording live while the page asks for it and is visible; says why not otherwise. A
   * recording that starts or stops changes which one is followed.
   */
  private updateLive(): void {
    if (this.disposed) return;
    const wanted = this.liveWanted && this.pageReady && this.panel.visible;
    const running = this.host.manager.active();
    if (this.live && (!wanted || this.live.sessionId !== running?.id)) this.stopLive();
    if (!wanted) {
      if (this.pageReady) this.sayLive('off');
      return;
    }
    if (this.live) return;
    if (!running) {
      this.sayLive('unavailable', 'no recording runs (Start Recording…)');
      return;
    }
    const why = liveUnavailableReason(running, running.kind === 'recording');
    if (why !== null) {
      this.sayLive('unavailable', why);
      return;
    }
    try {
      const reads = this.host.manager.follow(running.id);
      const windowSeconds = () => {
        const value = vscode.workspace.getConfiguration('ringside').get<number>('follow.windowSeconds', DEFAULT_LIVE_WINDOW_SECONDS);
        return Number.isFinite(value) && value > 0 ? value : DEFAULT_LIVE_WINDOW_SECONDS;
      };
      const live: LiveFollow = new LiveFollow(reads, (message) => this.post(message), {
        snapshotId: `live-${running.id}-${++this.liveNumber}`,
        name: `${running.label} · live`,
        windowNs: () => windowSeconds() * 1e9,
        // Each stage of the first append (which reads the recording's symbol tables), and of any slow one after it.
        onAppend: (timing) => {
          const ms = timing.readMs + timing.decodeMs + timing.wireMs;
          if (timing.seq === 0 || ms > 1000)
            this.host.log(
              `timeline: live append ${timing.seq} (${timing.records.toLocaleString('en-US')} records): read ${timing.readMs.toFixed(1)} ms (no pause), ` +
                `decode ${timing.decodeMs.toFixed(1)} ms, symbolize and wire ${timing.wireMs.toFixed(1)} ms`,
            );
        },
        onFailure: (error) => {
          if (this.live === live) this.live = undefined;
          this.host.log(`timeline: live follow of "${running.label}" ended: ${(error as Error).message ?? String(error)}`);
          this.sayLive('unavailable', `following "${running.label}" ended: ${(error as Error).message ?? String(error)}`);
        },
      });
      this.live = live;
      this.host.log(`timeline: following "${running.label}" live (last ${windowSeconds()} s)`);
      this.sayLive('following', `${running.label} (last ${windowSeconds()} s)`);
    } catch (error) {
      this.sayLive('unavailable', (error as Error).message);
    }
  }

  private stopLive(): void {
    const live = this.live;
    if (!live) return;
    this.live = undefined;
    live.stop();
    this.host.log(
      `timeline: live follow ended: ${live.records.toLocaleString('en-US')} records in ${live.appends} appends, ${live.workMs.toFixed(0)} ms of work` +
        (live.skippedBytes > 0n ? `, ${live.skippedBytes} bytes overwritten before they could be read` : ''),
    );
  }

  private sayLive(state: 'following' | 'off' | 'unavailable', detail?: string): void {
    const key = `${state}|${detail ?? ''}`;
    if (key === this.liveSaid) return;
    this.liveSaid = key;
    this.post({ type: 'liveState', state, ...(detail !== undefined ? { detail } : {}) });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.stopLive();
    // Snapshots still being named stop being named.
    for (const snapshot of this.streamer.snapshotIds()) this.streamer.remove(snapshot);
    if (TimelinePanel.current === this) TimelinePanel.current = undefined;
    for (const disposable of this.disposables.splice(0)) disposable.dispose();
    this.panel.dispose();
  }
}
