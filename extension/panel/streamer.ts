// Flow control for the timeline panel, independent of vscode: snapshots go out as a snapshotStart
// (and its thread states, when it has any) followed by columnar batches; at most `window` batches are unacknowledged at a time; nothing is
// sent while the panel is hidden; on `resync` (the panel became visible again, or was restored)
// each snapshot restarts from the batch holding the first row the page does not have.
//
// A snapshot's records go before its names: its start is built without symbols (a few ms) and sent at once, each batch
// as it is sent (a copy of its rows: the first goes out without waiting for a copy of every row, and no copy is held
// here), so the page paints them while this side names the snapshot's addresses in steps (snapshotNamesInSteps, the
// event loop free between steps, so acknowledgements and the page's requests are answered meanwhile); the names
// follow the last batch as one snapshotSymbols message.
//
// A perf.data file being opened grows on the page while it is read (grow): its parts go as liveAppends marked
// `opening`, one unacknowledged at a time, and once the file is read its snapshot is added with the same id: the page
// holds its rows already, so only its names follow (a page that lost them, reloaded, gets the snapshot whole).

import type { DecodedSnapshot } from '../../native/decode/types';
import type { HostToWebview, LiveAppend, SnapshotStart, SnapshotSymbols, ThreadStates } from '../../shared/protocol';
import type { BatchBuilder } from '../../shared/batches';
import { snapshotNamesInSteps, snapshotNamesMessage, snapshotToWire } from '../../host/wire';
import type { FrameSymbols } from '../../host/frame-symbols';
import { liveAppendOf } from './live-follow';

export type Post = (message: HostToWebview) => void;

/**
 * A batch's buffer, left uninitialized: the batch writes every byte of it (BatchOptions.allocate), and zeroing a fresh
 * buffer first made copying a batch's rows about 1.4 times as long.
 */
function uninitializedBuffer(byteLength: number): ArrayBuffer {
  return Buffer.allocUnsafeSlow(byteLength).buffer as ArrayBuffer;
}

/** Host time one step of naming may take before the event loop runs again, ms. */
const NAMING_SLICE_MS = 10;
/**
 * How long naming waits for the page to paint the records before it starts all the same (a page that is hidden, or
 * never says so). Naming while the records are on their way starved their transfer in code-server: a 16 MB perf.data's
 * records took 11 s from this side to the page's first paint while its names were worked out, 3 s without.
 */
const NAMING_WAITS_FOR_PAINT_MS = 3000;

/** The parts of a file being opened, as the page is sent them (liveAppends marked `opening`). */
interface Growth {
  readonly name: string;
  readonly appends: LiveAppend[];
  /** Rows in the parts so far. */
  rows: number;
  /** Index of the next part to send, and the seq of the one the page has not acknowledged (-1: none). */
  next: number;
  awaiting: number;
}

interface Stream {
  /** Absent while only its parts are known (grow). */
  start?: SnapshotStart;
  /** Sent with the start (the page keeps it with the snapshot). */
  threadStates?: ThreadStates;
  /**
   * Its batches, each built as it is sent (again after a resync): the first goes out without waiting for the copy of
   * every row, the page adopts one while the next is copied, and nothing here holds a second copy of the snapshot's rows.
   * Absent, as `start` is, while only a file's parts are known (grow).
   */
  batches?: BatchBuilder;
  /** A file being opened: its parts, until the page holds them all and the snapshot is added. */
  growth?: Growth;
  /** Index of the next batch to send. */
  next: number;
  startSent: boolean;
  readonly inFlight: Set<number>;
  /** Its names once known (sent after its last batch), when its records went without them. */
  names?: SnapshotSymbols;
  namesSent: boolean;
  /** Resolves when the page says it painted the records (onPainted). */
  readonly painted: Promise<void>;
  readonly markPainted: () => void;
}

/** How a snapshot was sent: building its records' messages, and, once known, naming it. */
export interface StreamTiming {
  /** ms building the start (no names; each batch is built as it is sent). */
  readonly wireMs: number;
  /**
   * Settles once its names are sent, or would be had the page been there, with the host time naming took and when it
   * ended (performance.now()); with null when the snapshot was removed first or has no names to send.
   */
  readonly named: Promise<{ readonly symbolizeMs: number; readonly at: number } | null>;
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

  /**
   * A part of a file being opened (its records in time order, after the previous part's): the first makes the
   * snapshot `snapshotId` on the page, shown at once; add() with the same id ends it.
   */
  grow(snapshotId: string, name: string, part: DecodedSnapshot): void {
    let stream = this.streams.get(snapshotId);
    if (!stream) {
      let markPainted = () => undefined as void;
      const painted = new Promise<void>((resolve) => (markPainted = resolve));
      stream = { next: 0, startSent: false, inFlight: new Set(), namesSent: false, painted, markPainted };
      stream.growth = { name, appends: [], rows: 0, next: 0, awaiting: -1 };
      this.streams.set(snapshotId, stream);
    }
    const growth = stream.growth;
    if (!growth || stream.start || part.columns.length === 0) return;
    growth.appends.push(
      liveAppendOf(part, { snapshotId, name: growth.name, seq: growth.appends.length, firstRow: growth.rows, keepFromNs: 0n, opening: true }),
    );
    growth.rows += part.columns.length;
    this.pump();
  }

  /** True while `snapshotId` is a file being opened whose snapshot is not added yet. */
  growing(snapshotId: string): boolean {
    const stream = this.streams.get(snapshotId);
    return stream?.growth !== undefined && stream.start === undefined;
  }

  /** The page holds part `seq` of a file being opened: the next may go. */
  onLiveAck(snapshotId: string, seq: number): void {
    const growth = this.streams.get(snapshotId)?.growth;
    if (!growth || growth.awaiting !== seq) return;
    growth.awaiting = -1;
    this.pump();
  }

  /**
   * Queues a snapshot (replacing one with the same id): its records at once, its names (given `symbols`) once known.
   * A file being opened with this id (grow) becomes this snapshot: its rows are the parts' (the page keeps them).
   */
  add(
    snapshotId: string,
    name: string,
    takenAtMs: number,
    decoded: DecodedSnapshot,
    symbols?: FrameSymbols,
    limitations: readonly string[] = [],
  ): StreamTiming {
    const { start, threadStates, batchBuilder, timing } = snapshotToWire(decoded, {
      snapshotId,
      name,
      takenAtMs,
      symbols,
      limitations,
      namesFollow: true,
      allocate: uninitializedBuffer,
      ...(this.batchRows ? { batchRows: this.batchRows } : {}),
    });
    const grown = this.streams.get(snapshotId);
    let stream: Stream;
    if (grown?.growth && !grown.start && grown.growth.rows === decoded.columns.length) {
      // Its parts are its rows: they go on to the page (if they have not all gone yet), then its names.
      stream = grown;
      stream.start = start;
      if (threadStates) stream.threadStates = threadStates;
      stream.batches = batchBuilder;
    } else {
      let markPainted = () => undefined as void;
      const painted = new Promise<void>((resolve) => (markPainted = resolve));
      stream = {
        start,
        ...(threadStates ? { threadStates } : {}),
        batches: batchBuilder,
        next: 0,
        startSent: false,
        inFlight: new Set(),
        namesSent: false,
        painted,
        markPainted,
      };
    }
    this.streams.set(snapshotId, stream);
    this.pump();
    return { wireMs: timing.wireMs, named: symbols ? this.name(snapshotId, stream, decoded, symbols) : Promise.resolve(null) };
  }

  /** The page drew the first batch of a snapshot (its `painted`): its naming may start. */
  onPainted(snapshotId: string): void {
    this.streams.get(snapshotId)?.markPainted();
  }

  /**
   * Names the snapshot's addresses in steps while it is still queued, once the page painted its records (or a while
   * went by without that); the names go out after its last batch.
   */
  private async name(snapshotId: string, stream: Stream, decoded: DecodedSnapshot, symbols: FrameSymbols): Promise<{ symbolizeMs: number; at: number } | null> {
    let waiting: NodeJS.Timeout | undefined;
    await Promise.race([stream.painted, new Promise<void>((resolve) => (waiting = setTimeout(resolve, NAMING_WAITS_FOR_PAINT_MS)))]);
    clearTimeout(waiting);
    const steps = snapshotNamesInSteps(decoded, symbols);
    let symbolizeMs = 0;
    for (;;) {
      // The event loop runs between steps (timers too: the messages to and from the page need them).
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      if (this.streams.get(snapshotId) !== stream) return null;
      const sliceStart = performance.now();
      let step = steps.next();
      while (!step.done && performance.now() - sliceStart < NAMING_SLICE_MS) step = steps.next();
      symbolizeMs += performance.now() - sliceStart;
      if (step.done) {
        stream.names = snapshotNamesMessage(snapshotId, step.value);
        this.pump();
        return { symbolizeMs, at: performance.now() };
      }
    }
  }

  remove(snapshotId: string): void {
    this.streams.get(snapshotId)?.markPainted(); // its naming, if it waits, ends at once
    if (this.streams.delete(snapshotId) && this.ready) this.post({ type: 'removeSnapshot', snapshotId });
  }

  /** The snapshots queued (sent or not). */
  snapshotIds(): string[] {
    return [...this.streams.keys()];
  }

  has(snapshotId: string): boolean {
    return this.streams.has(snapshotId);
  }

  /** The page said `ready`: everything is (re)sent from the start. */
  onReady(): void {
    this.ready = true;
    // A new page holds no part of a file being opened: they go again (a snapshot already added goes whole).
    for (const stream of this.streams.values()) if (stream.growth && stream.start) stream.growth = undefined;
    for (const stream of this.streams.values()) this.rewind(stream, 0);
    this.pump();
  }

  setVisible(visible: boolean): void {
    this.visible = visible;
    if (!visible) {
      // Messages to a hidden webview may be dropped: forget what is in flight, resync decides later.
      for (const stream of this.streams.values()) {
        stream.inFlight.clear();
        if (stream.growth) stream.growth.awaiting = -1;
      }
      // A hidden panel's page is destroyed (retainContextWhenHidden is off) and a new one loads when it is shown:
      // nothing goes out until that page says `ready` (or a page that lived on says `resync`). Sent on showing, the
      // batches reached the new page before its `ready`, which then had them all sent again from row 0.
      this.ready = false;
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
    this.ready = true;
    const rows = new Map(have.map((h) => [h.snapshotId, h.rows]));
    for (const [id, stream] of this.streams) this.rewind(stream, rows.get(id) ?? 0, rows.has(id));
    for (const id of rows.keys()) if (!this.streams.has(id)) this.post({ type: 'removeSnapshot', snapshotId: id });
    this.pump();
  }

  /** True when every batch of every snapshot has been acknowledged. */
  get idle(): boolean {
    for (const stream of this.streams.values())
      if (
        stream.growth ||
        !stream.start ||
        !stream.batches ||
        stream.next < stream.batches.count ||
        stream.inFlight.size > 0 ||
        !stream.startSent ||
        (stream.start.namesFollow === true && !stream.namesSent)
      )
        return false;
    return true;
  }

  private rewind(stream: Stream, rowsHeld: number, pageKnowsIt = false): void {
    stream.inFlight.clear();
    const growth = stream.growth;
    if (growth && (pageKnowsIt || !stream.start)) {
      // The parts from the first the page does not hold (all of them, to a page that does not know it); pump ends the
      // growth once the page holds them all and the snapshot is added.
      const index = pageKnowsIt ? growth.appends.findIndex((append) => append.batch.firstRow >= rowsHeld) : 0;
      growth.next = index === -1 ? growth.appends.length : index;
      growth.awaiting = -1;
      return;
    }
    // A page that lost a file read meanwhile gets its snapshot whole.
    stream.growth = undefined;
    stream.startSent = pageKnowsIt;
    // A page that has them ignores them again; a new one needs them after its rows.
    stream.namesSent = false;
    // The first batch holding a row the page does not have (past the last when it has them all).
    const { batches } = stream;
    if (!batches) return;
    let index = 0;
    while (index < batches.count && batches.firstRowOf(index) + batches.rowCountOf(index) <= rowsHeld) index++;
    stream.next = index;
  }

  private pump(): void {
    if (!this.ready || !this.visible) return;
    for (const stream of this.streams.values()) {
      const growth = stream.growth;
      if (growth) {
        if (growth.awaiting === -1 && growth.next < growth.appends.length) {
          const append = growth.appends[growth.next++];
          growth.awaiting = append.seq;
          this.post(append);
        }
        // Until the snapshot is added and the page holds every part, nothing else of it goes.
        if (!stream.start || growth.awaiting !== -1 || growth.next < growth.appends.length) continue;
        stream.growth = undefined;
        stream.startSent = true;
        stream.next = stream.batches?.count ?? 0;
      }
      if (!stream.start || !stream.batches) continue;
      if (!stream.startSent) {
        this.post(stream.start);
        if (stream.threadStates) this.post(stream.threadStates);
        stream.startSent = true;
      }
      while (stream.inFlight.size < this.window && stream.next < stream.batches.count) {
        const batch = stream.batches.batch(stream.next);
        stream.inFlight.add(batch.batchIndex);
        stream.next++;
        this.post(batch);
      }
      // The names after the last batch: the page has every row by the time it reads them.
      if (stream.names && !stream.namesSent && stream.next === stream.batches.count) {
        stream.namesSent = true;
        this.post(stream.names);
      }
    }
  }
}
