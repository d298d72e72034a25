// The webview's record store: every snapshot's batches appended into one set of growable typed
// columns, times rebased onto the first snapshot's origin (one internal clock; the page shows one
// capture at a time, relative to its own start). A record without a time (none decoded, or perf's
// time 0 of records it synthesized) gets NaN: it is counted and listed, never placed on an axis.
// Pure (no DOM): the renderer reads the columns directly.
//
// Split by concern: the columns and their deferred copy (store-columns.ts), which snapshot a row came from
// (store-runs.ts), events and their mapping (store-events.ts), sample symbols (store-symbols.ts), stacks
// (store-stacks.ts) and thread states (store-thread-states.ts). This module keeps the snapshots and puts a batch
// into all of them.

import type { CoverageFact, LiveAppend, LossInfo, RecordBatch, SnapshotStart, SnapshotSymbols, ThreadInfo, ThreadStates } from '../shared/protocol';
import type { ThreadStateTable } from '../shared/thread-states';
import { COLUMN_NAMES, COLUMN_TYPES, RecordType, type ColumnName, type WireColumnArray } from '../shared/columns';
import type { StackTable } from '../shared/stacks';
import { stacksFromBuffers } from '../shared/stacks-buffers';
import { DEFERRED_COLUMN_NAMES, RecordColumns, type ColumnPart, type DeferredBuffers, type StoreColumns } from './store-columns';
import { BatchRuns } from './store-runs';
import { StoreEvents, type StoreEvent } from './store-events';
import { SymbolNames } from './store-symbols';
import { StackInterner } from './store-stacks';
import { ThreadStateTables } from './store-thread-states';

export type { ColumnPart } from './store-columns';
export type { StoreEvent } from './store-events';

export interface SnapshotEntry {
  readonly id: string;
  readonly name: string;
  readonly index: number;
  readonly originNs: bigint;
  /** originNs - store origin, in ns (added to every time of this snapshot). */
  readonly offsetNs: number;
  /** Rows announced (of a live capture: the rows it holds now). */
  totalRows: number;
  batchCount: number;
  readonly takenAtMs: number;
  /** Its rings' coverage (of a live capture: of what the host holds of it, replaced with every append). */
  coverage: readonly CoverageFact[];
  /** Its LOST / LOST_SAMPLES records (snapshot-local rows). */
  losses: readonly LossInfo[];
  /** Snapshot-local event index → store event index. */
  readonly eventMap: Map<number, number>;
  /** The same mapping as a typed table indexed by the local event index (-1: not announced), read per row. */
  eventTable: Int32Array;
  firstGlobalRow: number;
  receivedRows: number;
  batchesReceived: number;
  /** Min/max rebased time of the snapshot's timed rows (Infinity/-Infinity while it has none). */
  minTime: number;
  maxTime: number;
  /**
   * Min/max rebased time of its timed samples (Infinity/-Infinity while it has none): what Fit shows. A capture's
   * side-band names what its samples ran (a comm, the mappings of a library) from when that happened, which may be
   * long before the rings' oldest sample: a keeper attached after 170 s kept its target's COMM and MMAP2 of second 0.
   */
  minSampleTime: number;
  maxSampleTime: number;
  /** Rows without a time (NaN in the time column): counted, never placed on the axis. */
  untimedRows: number;
  /** Snapshot-local stack id → store stack id, when the snapshot sent stacks (with its start, or with its names). */
  stackMap?: Int32Array;
  /** Its names (symbols, stacks) follow its records (snapshotStart.namesFollow) and have not arrived yet. */
  namesPending: boolean;
  /** Rows received per store event index (missing: none): the events the capture recorded, not just announced. */
  readonly eventRows: number[];
  /** Set on a live capture (live follow): it grows by appends and drops what falls out of its window. */
  live?: LiveRows;
}

/** What the store knows of a live capture beyond a snapshot's facts. */
export interface LiveRows {
  /** The live row number of the next append's first row (rows are numbered from the first append on, never reused). */
  nextRow: number;
  /** Live rows dropped so far (out of the window): the first row held is this one. */
  droppedRows: number;
  /** Rebased time before which rows are out of the window (-Infinity: none yet). */
  keepFrom: number;
  /** Appends received. */
  appends: number;
  /** A perf.data file being opened (LiveAppend.opening): it keeps every row and ends as a snapshot. */
  opening?: boolean;
}

/**
 * A live capture's rows are dropped once this fraction of the rows it holds fell out of its window (and its extent is
 * cut to the window at once): moving the rows after them down costs the size of the window, so it is paid once per
 * eighth of a window rather than with every append.
 */
export const LIVE_EVICTION_SLACK = 1 / 8;

export class BatchRejected extends Error {}

// The store's record columns read as its properties (store.time, store.kind, ...), one per wire column:
// getters that first copy what arrived since the column was last read (defined below the class).
/* eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging --
   getters defined below the class */
export interface RecordStore extends Readonly<StoreColumns> {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class RecordStore {
  originNs: bigint | null = null;
  length = 0;
  private readonly columns = new RecordColumns();
  private readonly runs = new BatchRuns();
  private readonly eventTable = new StoreEvents();
  private readonly symbolNames = new SymbolNames();
  private readonly stacks = new StackInterner();
  private readonly threadStateTables = new ThreadStateTables();
  readonly snapshots: SnapshotEntry[] = [];
  private readonly snapshotById = new Map<string, SnapshotEntry>();
  readonly commByTid = new Map<number, string>();
  readonly commByPid = new Map<number, string>();
  /** Bumped on every change, so views know when to rebuild derived data. */
  version = 0;
  /** True while every row's time is >= the previous row's (NaN rows excepted): the whole time column can be bisected. */
  timeSorted = true;
  private lastTime = -Infinity;

  static {
    for (const name of COLUMN_NAMES) {
      Object.defineProperty(this.prototype, name, {
        get(this: RecordStore) {
          return this.columns.column(name);
        },
        enumerable: true,
      });
    }
  }

  /** Symbol id per row into `symbols` (-1: none); empty until a batch carries symbols (symbolOf answers null before). */
  get symbol(): Int32Array<ArrayBuffer> {
    return this.columns.symbol;
  }

  /** Stack id per row into stackTable() (-1: none); empty until a batch carries stacks. */
  get stack(): Int32Array<ArrayBuffer> {
    return this.columns.stack;
  }

  /** Every sample symbol, each once. */
  get symbols(): readonly string[] {
    return this.symbolNames.names;
  }

  get events(): readonly StoreEvent[] {
    return this.eventTable.events;
  }

  /** Each snapshot's thread states (from its sched_switch records), times rebased like its rows'. */
  get threadStates(): readonly ThreadStateTable[] {
    return this.threadStateTables.tables;
  }

  /** Which snapshot (by index) each table of threadStates came from. */
  get threadStatesSnapshot(): readonly number[] {
    return this.threadStateTables.snapshotOf;
  }

  /**
   * Column `name` at `row` (0 <= row < length), read from its batch when the column has not copied it yet: for
   * per-row lookups (a lane's process, a thread's name) that should not copy a whole column in.
   */
  valueAt(name: ColumnName, row: number): number {
    return this.columns.valueAt(name, row);
  }

  /**
   * Column `name` as consecutive parts covering rows [0, length) in order, without copying: the rows the column
   * holds, then each batch it has not taken yet. For one pass over a column (the lanes' grouping) that should not
   * copy it in first.
   */
  columnParts(name: 'tid' | 'cpu'): ColumnPart[] {
    return this.columns.columnParts(name, this.length);
  }

  getSnapshot(id: string): SnapshotEntry | undefined {
    return this.snapshotById.get(id);
  }

  /** The thread state tables of the given snapshots (by index). */
  threadStatesOfSnapshots(snapshotIndexes: readonly number[]): ThreadStateTable[] {
    return this.threadStateTables.ofSnapshots(snapshotIndexes);
  }

  /** Keep a snapshot's thread states; false when the snapshot is unknown or already has them (a resend). */
  addThreadStates(msg: ThreadStates): boolean {
    const snap = this.snapshotById.get(msg.snapshotId);
    if (!snap || this.threadStateTables.has(msg.snapshotId)) return false;
    this.threadStateTables.add(msg, snap.index, snap.offsetNs);
    this.version++;
    return true;
  }

  beginSnapshot(msg: SnapshotStart): SnapshotEntry {
    const existing = this.snapshotById.get(msg.snapshotId);
    if (existing) return existing; // a resend after resync: keep what we have
    const originNs = BigInt(msg.timeOriginNs);
    if (this.originNs === null) this.originNs = originNs;
    const { eventMap, eventTable } = this.eventTable.announce(msg.events);
    this.learnThreads(msg.threads);
    const entry: SnapshotEntry = {
      ...(msg.stacks ? { stackMap: this.stacks.intern(msg.stacks) } : {}),
      id: msg.snapshotId,
      name: msg.name,
      index: this.snapshots.length,
      originNs,
      offsetNs: Number(originNs - this.originNs),
      totalRows: msg.totalRows,
      batchCount: msg.batchCount,
      takenAtMs: msg.takenAtMs,
      coverage: msg.coverage,
      losses: msg.losses ?? [],
      eventMap,
      eventTable,
      firstGlobalRow: this.length,
      receivedRows: 0,
      batchesReceived: 0,
      minTime: Infinity,
      maxTime: -Infinity,
      minSampleTime: Infinity,
      maxSampleTime: -Infinity,
      untimedRows: 0,
      eventRows: [],
      namesPending: msg.namesFollow === true,
    };
    this.snapshots.push(entry);
    this.snapshotById.set(entry.id, entry);
    // Room for every announced row now, so the batches are appended without regrowing the columns.
    this.columns.reserve(this.length + this.pendingRows());
    this.version++;
    return entry;
  }

  private learnThreads(threads: readonly ThreadInfo[]): void {
    for (const t of threads) {
      if (t.comm !== '') {
        this.commByTid.set(t.tid, t.comm);
        if (t.pid === t.tid || !this.commByPid.has(t.pid)) this.commByPid.set(t.pid, t.comm);
      }
    }
  }

  /** Append one batch. Batches of a snapshot must arrive in row order (flow control guarantees it). */
  addBatch(msg: RecordBatch): SnapshotEntry {
    const snap = this.snapshotById.get(msg.snapshotId);
    if (!snap) throw new BatchRejected(`batch for unknown snapshot ${JSON.stringify(msg.snapshotId)}`);
    if (snap.live) throw new BatchRejected(`${snap.id} is a live capture: it grows by liveAppend only`);
    if (msg.firstRow !== snap.receivedRows) {
      throw new BatchRejected(`batch ${msg.batchIndex} of ${snap.id} starts at row ${msg.firstRow}, expected ${snap.receivedRows}`);
    }
    if (snap.receivedRows + msg.rowCount > snap.totalRows) throw new BatchRejected(`batch overflows snapshot ${snap.id}`);
    this.appendRows(snap, msg, snap.offsetNs, snap.originNs, snap.stackMap);
    snap.receivedRows += msg.rowCount;
    snap.batchesReceived++;
    this.version++;
    return snap;
  }

  /**
   * The names of a snapshot whose records came without them (snapshotStart.namesFollow), after all its rows: each row's
   * symbol and stack, as its batches would have carried them. A second copy (a resend after a resync) changes nothing.
   */
  addNames(msg: SnapshotSymbols): SnapshotEntry {
    const snap = this.snapshotById.get(msg.snapshotId);
    if (!snap) throw new BatchRejected(`names for unknown snapshot ${JSON.stringify(msg.snapshotId)}`);
    if (!snap.namesPending) return snap;
    const rows = msg.symbolIndex.byteLength / 4;
    if (rows !== snap.totalRows) throw new BatchRejected(`the names of ${snap.id} cover ${rows} rows, it has ${snap.totalRows}`);
    if (snap.receivedRows !== snap.totalRows)
      throw new BatchRejected(`the names of ${snap.id} came before its rows (${snap.receivedRows} of ${snap.totalRows})`);
    const symbolMap = this.symbolNames.map(msg.symbolTable);
    const localSymbol = new Int32Array(msg.symbolIndex);
    const stackMap = msg.stacks ? this.stacks.intern(stacksFromBuffers(msg.stacks)) : undefined;
    const localStack = msg.stackIndex ? new Int32Array(msg.stackIndex) : undefined;
    const symbol = localSymbol.length > 0 ? this.columns.symbolColumn(this.length) : undefined;
    const stack = stackMap && localStack ? this.columns.stackColumn(this.length) : undefined;
    // Its rows in store order are its local rows in order (batches are appended in row order).
    let local = 0;
    for (const [a, b] of this.rangesOf(snap.index)) {
      for (let row = a; row < b; row++, local++) {
        if (symbol) {
          const s = localSymbol[local];
          symbol[row] = s >= 0 ? symbolMap[s] : -1;
        }
        if (stack) {
          const s = localStack![local];
          stack[row] = s >= 0 && s < stackMap!.length ? stackMap![s] : -1;
        }
      }
    }
    if (stackMap) snap.stackMap = stackMap;
    snap.namesPending = false;
    this.version++;
    return snap;
  }

  /** A snapshot whose names were to follow is gone from the host: they will not come. */
  namesWontCome(snapshotId: string): void {
    const snap = this.snapshotById.get(snapshotId);
    if (snap) snap.namesPending = false;
  }

  /**
   * Live follow: adds what the rings gained to the live capture `msg.snapshotId` (made by its first append, shown
   * like any capture) and drops the rows that fell out of its window (see LIVE_EVICTION_SLACK; `slack` 0 drops them at
   * once). Interned events, stacks and symbols stay; rows, their counts, losses, thread states and the time range go.
   */
  appendLive(msg: LiveAppend, slack = LIVE_EVICTION_SLACK): SnapshotEntry {
    const part = msg.part;
    let snap = this.snapshotById.get(msg.snapshotId);
    if (!snap) {
      snap = this.beginSnapshot({ ...part, totalRows: 0, batchCount: 0 });
      snap.live = { nextRow: 0, droppedRows: 0, keepFrom: -Infinity, appends: 0, ...(msg.opening ? { opening: true } : {}) };
    }
    const live = snap.live;
    if (!live) throw new BatchRejected(`${snap.id} is a snapshot, not a live capture`);
    if (msg.batch.firstRow !== live.nextRow)
      throw new BatchRejected(`live append ${msg.seq} of ${snap.id} starts at row ${msg.batch.firstRow}, expected ${live.nextRow}`);
    const originNs = BigInt(part.timeOriginNs);
    const offsetNs = Number(originNs - this.originNs!);
    // The part's events by its own indexes (a recording's events keep theirs: the same numbers every time).
    const { eventMap } = this.eventTable.announce(part.events);
    for (const [local, id] of eventMap) {
      snap.eventMap.set(local, id);
      if (local >= snap.eventTable.length) {
        const grown = new Int32Array(local + 1).fill(-1);
        grown.set(snap.eventTable);
        snap.eventTable = grown;
      }
      snap.eventTable[local] = id;
    }
    this.learnThreads(part.threads);
    const stackMap = part.stacks ? this.stacks.intern(part.stacks) : undefined;
    this.appendRows(snap, msg.batch, offsetNs, originNs, stackMap);
    const n = msg.batch.rowCount;
    if (part.losses?.length) snap.losses = [...snap.losses, ...part.losses.map((loss) => ({ ...loss, row: loss.row + live.nextRow }))];
    snap.coverage = part.coverage;
    if (msg.threadStates) this.threadStateTables.add(msg.threadStates, snap.index, offsetNs);
    live.nextRow += n;
    live.appends++;
    snap.receivedRows += n;
    snap.totalRows = snap.receivedRows;
    snap.batchesReceived++;
    snap.batchCount = snap.batchesReceived;
    this.version++;
    // A file being opened has no window: its extent grows with each part.
    if (live.opening) this.liveExtent(snap);
    else this.keepLiveWindow(snap, Number(BigInt(msg.keepFromNs) - this.originNs!), slack);
    return snap;
  }

  /** The last rows dropped (store row ranges before the drop, ascending) and the store version they were dropped at. */
  lastDrop: { readonly version: number; readonly ranges: readonly (readonly [number, number])[] } | null = null;

  /** Where row `row` (a row number before the last drop) is now: -1 when it was dropped. */
  rowAfterDrop(row: number): number {
    if (!this.lastDrop) return row;
    let before = 0;
    for (const [a, b] of this.lastDrop.ranges) {
      if (row < a) break;
      if (row < b) return -1;
      before += b - a;
    }
    return row - before;
  }

  /**
   * The live capture's window starts at `keepFrom` (rebased): its extent is cut there at once, and its rows before it
   * are dropped once they are more than `slack` of what it holds.
   */
  private keepLiveWindow(snap: SnapshotEntry, keepFrom: number, slack: number): void {
    const live = snap.live!;
    if (keepFrom > live.keepFrom) live.keepFrom = keepFrom;
    // The rows of the capture in store order are its live rows in order: the oldest that fell out come first.
    const time = this.columns.time;
    const ranges = this.rangesOf(snap.index);
    let expired = 0;
    let untimed = 0;
    scan: for (const [a, b] of ranges) {
      for (let row = a; row < b; row++) {
        const t = time[row];
        if (t >= live.keepFrom) break scan;
        expired++;
        if (t !== t) untimed++;
      }
    }
    if (expired > 0 && expired >= Math.max(1, snap.receivedRows * slack)) this.dropLiveRows(snap, ranges, expired, untimed);
    this.liveExtent(snap);
  }

  /** Drops the first `count` rows of the live capture (`ranges`: its store rows), keeping every other part consistent. */
  private dropLiveRows(snap: SnapshotEntry, ranges: readonly [number, number][], count: number, untimed: number): void {
    const live = snap.live!;
    const removed: [number, number][] = [];
    let left = count;
    for (const [a, b] of ranges) {
      if (left === 0) break;
      const end = Math.min(b, a + left);
      removed.push([a, end]);
      left -= end - a;
    }
    // Their rows per event, before the event column moves.
    const event = this.columns.event;
    for (const [a, b] of removed) for (let row = a; row < b; row++) snap.eventRows[event[row]]--;
    this.columns.removeRows(removed, this.length);
    this.runs.removeRows(removed, this.length);
    const moved = (row: number) => {
      let before = 0;
      for (const [a, b] of removed) if (a < row) before += Math.min(b, row) - a;
      return row - before;
    };
    for (const other of this.snapshots) other.firstGlobalRow = moved(other.firstGlobalRow);
    this.length -= count;
    live.droppedRows += count;
    snap.receivedRows -= count;
    snap.totalRows = snap.receivedRows;
    snap.untimedRows -= untimed;
    if (snap.losses.length) snap.losses = snap.losses.filter((loss) => loss.row >= live.droppedRows);
    this.threadStateTables.dropEndingBefore(snap.index, live.keepFrom);
    // Its extent again from the rows it holds (once per drop, not per append).
    snap.minTime = snap.minSampleTime = Infinity;
    const time = this.columns.time;
    const kind = this.kind;
    for (const [a, b] of this.rangesOf(snap.index)) {
      for (let row = a; row < b; row++) {
        const t = time[row];
        if (t !== t) continue;
        if (t < snap.minTime) snap.minTime = t;
        if (kind[row] === RecordType.SAMPLE && t < snap.minSampleTime) snap.minSampleTime = t;
      }
    }
    this.lastDrop = { version: this.version + 1, ranges: removed };
    this.version++;
  }

  /** A live capture's extent starts no earlier than its window (rows waiting to be dropped are not shown). */
  private liveExtent(snap: SnapshotEntry): void {
    const keepFrom = snap.live!.keepFrom;
    if (snap.minTime < keepFrom && snap.maxTime >= keepFrom) snap.minTime = keepFrom;
    if (snap.minSampleTime < keepFrom && snap.maxSampleTime >= keepFrom) snap.minSampleTime = keepFrom;
  }

  /** Rows of a batch appended at the store's end, rebased by `offsetNs`, stack ids mapped through `stackMap`. */
  private appendRows(snap: SnapshotEntry, msg: RecordBatch, offsetNs: number, originNs: bigint, stackMap: Int32Array | undefined): void {
    const n = msg.rowCount;
    this.columns.reserve(this.length + n);
    const base = this.length;
    const c = msg.columns;
    this.appendTimes(snap, new COLUMN_TYPES.time(c.time), base, new COLUMN_TYPES.kind(c.kind), offsetNs, originNs);
    this.eventTable.map(snap, new COLUMN_TYPES.event(c.event), this.columns.event, base);
    this.runs.add(base, msg.firstRow, snap.index);
    const buffers: DeferredBuffers = {};
    for (const name of DEFERRED_COLUMN_NAMES) buffers[name] = c[name];
    this.columns.appendDeferred(base, buffers);
    if (msg.symbolIndex && msg.symbolTable) {
      mapIds(new Int32Array(msg.symbolIndex), this.symbolNames.map(msg.symbolTable), this.columns.symbolColumn(base + n), base);
    } else if (this.symbol.length > 0) {
      this.symbol.fill(-1, base, base + n);
    }
    if (msg.stackIndex && stackMap) {
      const local = new Int32Array(msg.stackIndex);
      const stack = this.columns.stackColumn(base + n);
      if (isIdentity(stackMap)) {
        // The first capture's stacks are the store's own numbers: a block copy, then only ids past its table (never
        // sent by the host, still possible on the wire) made -1, as the mapping makes them.
        stack.set(local, base);
        clearIdsFrom(local, stackMap.length, stack, base);
      } else {
        mapIds(local, stackMap, stack, base);
      }
    } else if (this.stack.length > 0) {
      this.stack.fill(-1, base, base + n);
    }
    this.length += n;
  }

  /**
   * Rows [base, base + localTime.length) of the time column: the batch's times rebased onto the store's origin,
   * and the snapshot's extent, untimed count and the store's order updated in the same pass.
   */
  private appendTimes(snap: SnapshotEntry, localTime: Float64Array, base: number, kind: WireColumnArray<'kind'>, offsetNs: number, originNs: bigint): void {
    const n = localTime.length;
    // Simple loops and block copies (the page's code is cold when a big snapshot arrives: tight
    // typed loops get optimized early, calls per row do not).
    const time = this.columns.time;
    if (offsetNs === 0) time.set(localTime, base);
    else for (let i = 0; i < n; i++) time[base + i] = localTime[i] + offsetNs;
    // perf stamps the records it synthesizes for what already ran (MMAP, COMM of existing processes) with time 0:
    // the decoder's origin is then 0, and those rows are untimed, not the start of the capture.
    if (originNs === 0n) for (let i = 0; i < n; i++) if (localTime[i] === 0) time[base + i] = NaN;
    if (this.appendOrderedExtent(snap, time, base, n, kind)) return;
    let minTime = snap.minTime;
    let maxTime = snap.maxTime;
    let minSampleTime = snap.minSampleTime;
    let maxSampleTime = snap.maxSampleTime;
    let lastTime = this.lastTime;
    let sorted = this.timeSorted;
    let untimed = 0;
    for (let i = base; i < base + n; i++) {
      const t = time[i];
      if (t !== t) {
        untimed++;
        continue;
      } // NaN (no time) neither breaks nor advances the order
      if (t < minTime) minTime = t;
      if (t > maxTime) maxTime = t;
      if (kind[i - base] === RecordType.SAMPLE) {
        if (t < minSampleTime) minSampleTime = t;
        if (t > maxSampleTime) maxSampleTime = t;
      }
      if (t < lastTime) sorted = false;
      else lastTime = t;
    }
    snap.minTime = minTime;
    snap.maxTime = maxTime;
    snap.minSampleTime = minSampleTime;
    snap.maxSampleTime = maxSampleTime;
    snap.untimedRows += untimed;
    this.lastTime = lastTime;
    this.timeSorted = sorted;
  }

  /**
   * The usual batch, its times in order: one pass that only compares (order and untimed rows), its extent read at its
   * first and last timed rows and samples. False, with nothing changed, when the batch is out of order (the caller's
   * general pass then computes the extent row by row).
   */
  private appendOrderedExtent(snap: SnapshotEntry, time: Float64Array, base: number, n: number, kind: WireColumnArray<'kind'>): boolean {
    const end = base + n;
    const untimed = untimedIfOrdered(time, base, end);
    if (untimed < 0) return false;
    snap.untimedRows += untimed;
    if (untimed === n) return true;
    let first = base;
    while (time[first] !== time[first]) first++;
    let lastTimed = end - 1;
    while (time[lastTimed] !== time[lastTimed]) lastTimed--;
    const last = time[lastTimed];
    if (time[first] < this.lastTime) this.timeSorted = false;
    this.lastTime = Math.max(this.lastTime, last);
    if (time[first] < snap.minTime) snap.minTime = time[first];
    if (last > snap.maxTime) snap.maxTime = last;
    const isTimedSample = (i: number) => kind[i - base] === RecordType.SAMPLE && time[i] === time[i];
    let firstSample = base;
    while (firstSample < end && !isTimedSample(firstSample)) firstSample++;
    if (firstSample === end) return true;
    let lastSample = end - 1;
    while (!isTimedSample(lastSample)) lastSample--;
    if (time[firstSample] < snap.minSampleTime) snap.minSampleTime = time[firstSample];
    if (time[lastSample] > snap.maxSampleTime) snap.maxSampleTime = time[lastSample];
    return true;
  }

  /** The store event indexes that have records in any of the given snapshots (by index), ascending. */
  eventsWithRecords(snapshotIndexes: readonly number[]): number[] {
    const out: number[] = [];
    for (let e = 0; e < this.events.length; e++) {
      if (snapshotIndexes.some((s) => (this.snapshots[s]?.eventRows[e] ?? 0) > 0)) out.push(e);
    }
    return out;
  }

  isComplete(snap: SnapshotEntry): boolean {
    return snap.receivedRows >= snap.totalRows;
  }

  processCommOf(pid: number): string | undefined {
    return this.commByPid.get(pid);
  }

  commOf(row: number): string {
    return this.commByTid.get(this.valueAt('tid', row)) ?? this.commByPid.get(this.valueAt('pid', row)) ?? '';
  }

  symbolOf(row: number): string | null {
    if (row >= this.symbol.length) return null;
    const s = this.symbol[row];
    return s >= 0 ? this.symbols[s] : null;
  }

  /** Index in `snapshots` of the snapshot row `row` came from. */
  snapshotIndexOf(row: number): number {
    return this.runs.snapshotIndexOf(row);
  }

  /** The row's number within its own snapshot (what the host calls it). */
  localRowOf(row: number): number {
    return this.runs.localRowOf(row);
  }

  /** The store rows of a snapshot, as [start, end) ranges in store order (one per batch received). */
  rangesOf(snapshotIndex: number): [number, number][] {
    return this.runs.rangesOf(snapshotIndex, this.length);
  }

  /** The store row of a snapshot's row `localRow`, or -1 when it has not arrived. */
  globalRowOf(snapshotIndex: number, localRow: number): number {
    return this.runs.globalRowOf(snapshotIndex, localRow, this.length);
  }

  /** The function names of row's sampled callchain, leaf first (empty: no callchain); one list per distinct stack. */
  stackFunctionsOf(row: number): readonly string[] {
    return this.stacks.functionsOf(row < this.stack.length ? this.stack[row] : -1);
  }

  /** All stacks received so far, as the call tree reads them. */
  stackTable(): StackTable {
    return this.stacks.table();
  }

  /**
   * Rebased time range of one snapshot (by index) or of all: of their samples, or where there is none, of every row with
   * a time (a capture of side-band or tracepoints alone); null when no row has a time.
   */
  timeExtent(snapshotIndex?: number): [number, number] | null {
    let lo = Infinity;
    let hi = -Infinity;
    const snaps = snapshotIndex === undefined ? this.snapshots : this.snapshots.slice(snapshotIndex, snapshotIndex + 1);
    for (const s of snaps) {
      if (s.minSampleTime < lo) lo = s.minSampleTime;
      if (s.maxSampleTime > hi) hi = s.maxSampleTime;
    }
    if (lo <= hi) return [lo, hi];
    for (const s of snaps) {
      if (s.minTime < lo) lo = s.minTime;
      if (s.maxTime > hi) hi = s.maxTime;
    }
    return lo <= hi ? [lo, hi] : null;
  }

  /** The store rows of a snapshot (by index), in store order. */
  rowsOf(snapshotIndex: number): Uint32Array {
    const ranges = this.rangesOf(snapshotIndex);
    const out = new Uint32Array(ranges.reduce((n, [a, b]) => n + b - a, 0));
    let o = 0;
    for (const [a, b] of ranges) for (let r = a; r < b; r++) out[o++] = r;
    return out;
  }

  /** Rows announced by snapshotStart messages and not received yet. */
  private pendingRows(): number {
    let rows = 0;
    for (const s of this.snapshots) rows += Math.max(0, s.totalRows - s.receivedRows);
    return rows;
  }
}

/** Whether `map` maps every id onto itself (a capture's stacks numbered as the store numbers them). */
function isIdentity(map: Int32Array): boolean {
  for (let i = 0; i < map.length; i++) if (map[i] !== i) return false;
  return true;
}

/**
 * How many of rows [base, end) of `time` are untimed (NaN) when the timed ones are in order, else -1. The loop alone in a
 * function: V8 compiles a long loop on its first run (on-stack replacement) before the code after it has run, and each
 * later batch re-entering that compiled loop fell back to the interpreter at the first property write after it (15 of a
 * million-row capture's 16 batches did, in its first paint).
 */
function untimedIfOrdered(time: Float64Array, base: number, end: number): number {
  // The usual batch is every row timed and in order: a first loop that only compares (2.4 against 4 ns a row on the
  // bench's VM), left at the first row out of order or untimed (NaN fails the comparison), where the full loop goes on.
  let last = -Infinity;
  let at = base;
  for (; at < end; at++) {
    const t = time[at];
    if (!(t >= last)) break;
    last = t;
  }
  let untimed = 0;
  for (let i = at; i < end; i++) {
    const t = time[i];
    if (t >= last) last = t;
    else if (t === t) return -1;
    else untimed++; // NaN (no time) neither breaks nor advances the order
  }
  return untimed;
}

// The per-row loops of appendRows, each alone in a function, for the reason untimedIfOrdered gives.

/** into[base + i] = map[local[i]] for each row, -1 where local[i] is -1 or past `map`. */
function mapIds(local: Int32Array, map: Int32Array, into: Int32Array, base: number): void {
  for (let i = 0; i < local.length; i++) {
    const s = local[i];
    into[base + i] = s >= 0 && s < map.length ? map[s] : -1;
  }
}

/** into[base + i] = -1 where local[i] is `count` or more (an id past the table). */
function clearIdsFrom(local: Int32Array, count: number, into: Int32Array, base: number): void {
  for (let i = 0; i < local.length; i++) if (local[i] >= count) into[base + i] = -1;
}
