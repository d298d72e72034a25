// Flow control for the timeline panel, independent of vscode: snapshots go out as a snapshotStart
// (and its thread states, when it has any) followed by columnar batches; at most `window` batches are unacknowledged at a time; nothing is
// sent while the panel is hidden; on `resync` (the panel became visible again, or was restored)
// each snapshot restarts from the batch holding the first row the page does not have.

import type { DecodedSnapshot } from '../../native/decode/types';
import type { HostToWebview, RecordBatch, SnapshotStart, ThreadStates } from '../../shared/protocol';
import { snapshotToWire, type WireSnapshot } from '../../host/wire';
import type { FrameSymbols } from '../../host/frame-symbols';

export type Post = (message: HostToWebview) => void;

interface Stream {
  readonly start: SnapshotStart;
  /** Sent with the start (the page keeps it with the snapshot). */
  readonly threadStates?: ThreadStates;
  readonly batches: readonly RecordBatch[];
  /** Index of the next batch to send. */
  next: number;
  startSent: boolean;
  readonly inFlight: Set<number>;
}

export class SnapshotStreamer {
  private readonly streams = new Map<string, Stream>();
  private visible = true;
  private ready = false;

  constructor(
    private readonly post: Post,
    private readonly window = 2,
    private readonly batchRows?: number,
  ) {}

  /** Queues a snapshot (replacing one with the same id); returns how long naming it and building its messages took. */
  add(
    snapshotId: string,
    name: string,
    takenAtMs: number,
    decoded: DecodedSnapshot,
    symbols?: FrameSymbols,
    limitations: readonly string[] = [],
  ): WireSnapshot['timing'] {
    const { start, threadStates, batches, timing } = snapshotToWire(decoded, {
      snapshotId,
      name,
      takenAtMs,
      symbols,
      limitations,
      ...(this.batchRows ? { batchRows: this.batchRows } : {}),
    });
    this.streams.set(snapshotId, { start, ...(threadStates ? { threadStates } : {}), batches, next: 0, startSent: false, inFlight: new Set() });
    this.pump();
    return timing;
  }

  remove(snapshotId: string): void {
    if (this.streams.delete(snapshotId) && this.ready) this.post({ type: 'removeSnapshot', snapshotId });
  }

  has(snapshotId: string): boolean {
    return this.streams.has(snapshotId);
  }

  /** The page said `ready`: everything is (re)sent from the start. */
  onReady(): void {
    this.ready = true;
    for (const stream of this.streams.values()) this.rewind(stream, 0);
    this.pump();
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    if (!visible) {
      // Messages to a hidden webview may be dropped: forget what is in flight, resync decides later.
      for (const stream of this.streams.values()) stream.inFlight.clear();
    }
  }

  onAck(snapshotId: string, batchIndex: number): void {
    const stream = this.streams.get(snapshotId);
    if (!stream) return;
    stream.inFlight.delete(batchIndex);
    this.pump();
  }

  /** The page reports how many rows of each snapshot it holds. */
  onResync(have: readonly { snapshotId: string; rows: number }[]): void {
    const rows = new Map(have.map((h) => [h.snapshotId, h.rows]));
    for (const [id, stream] of this.streams) this.rewind(stream, rows.get(id) ?? 0, rows.has(id));
    for (const id of rows.keys()) if (!this.streams.has(id)) this.post({ type: 'removeSnapshot', snapshotId: id });
    this.pump();
  }

  /** True when every batch of every snapshot has been acknowledged. */
  get idle(): boolean {
    for (const stream of this.streams.values()) if (stream.next < stream.batches.length || stream.inFlight.size > 0 || !stream.startSent) return false;
    return true;
  }

  private rewind(stream: Stream, rowsHeld: number, pageKnowsIt = false): void {
    stream.inFlight.clear();
    stream.startSent = pageKnowsIt;
    const index = stream.batches.findIndex((batch) => batch.firstRow + batch.rowCount > rowsHeld);
    stream.next = index === -1 ? stream.batches.length : index;
  }

  private pump(): void {
    if (!this.ready || !this.visible) return;
    for (const stream of this.streams.values()) {
      if (!stream.startSent) {
        this.post(stream.start);
        if (stream.threadStates) this.post(stream.threadStates);
        stream.startSent = true;
      }
      while (stream.inFlight.size < this.window && stream.next < stream.batches.length) {
        const batch = stream.batches[stream.next];
        stream.inFlight.add(batch.batchIndex);
        stream.next++;
        this.post(batch);
      }
    }
  }
}
