// The webview's record store: every snapshot's batches appended into one set of growable typed
// columns, times rebased onto the first snapshot's origin (one internal clock; the page shows one
// capture at a time, relative to its own start). A record without a time (none decoded, or perf's
// time 0 of records it synthesized) gets NaN: it is counted and listed, never placed on an axis.
// Pure (no DOM): the renderer reads the columns directly.
//
// Receiving a big snapshot is bound by writing fresh memory (page faults), so the store keeps per
// row only what is read per row: which snapshot a row came from and its row number there are
// answered from the list of appended batches (a batch is a run of consecutive rows of one
// snapshot), and the symbol column exists only once some batch carried symbols. For the same
// reason the columns a first frame does not read are copied out of their batches when first read,
// not as they arrive: time and event (rebased, mapped) are copied at once; kind, misc, pid, tid, cpu,
// ipHi and ipLo wait (the lanes read the column they group by from the batches, in parts). A 1M-row
// snapshot's first paint then writes 10 of its 33 bytes per row.

import type { CoverageFact, EventInfo, EventKind, LossInfo, RecordBatch, SnapshotStart, ThreadStates } from '../shared/protocol';
import { THREAD_STATE_COLUMNS, type ThreadStateTable } from '../shared/thread-states';
import { COLUMN_NAMES, COLUMN_TYPES, RecordType, type ColumnName, type WireColumnArray } from '../shared/columns';
import type { SourceLocation, StackTable } from '../shared/stacks';

export interface SnapshotEntry {
  readonly id: string;
  readonly name: string;
  readonly index: number;
  readonly originNs: bigint;
  /** originNs - store origin, in ns (added to every time of this snapshot). */
  readonly offsetNs: number;
  readonly totalRows: number;
  readonly batchCount: number;
  readonly takenAtMs: number;
  readonly coverage: readonly CoverageFact[];
  /** Its LOST / LOST_SAMPLES records (snapshot-local rows). */
  readonly losses: readonly LossInfo[];
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
  /** Snapshot-local stack id → store stack id, when the snapshot sent stacks. */
  readonly stackMap?: Int32Array;
  /** Rows received per store event index (missing: none): the events the capture recorded, not just announced. */
  readonly eventRows: number[];
}

export interface StoreEvent {
  readonly name: string;
  readonly kind: EventKind;
}

export class BatchRejected extends Error {}

/** The wire columns (shared/columns.ts), each a typed array the store replaces when it grows. */
type StoreColumns = { [K in ColumnName]: WireColumnArray<K> };

/** `rows` rows of column `name`: `column`'s values, then zeros. */
function grownColumn<K extends ColumnName>(name: K, column: WireColumnArray<K>, rows: number): WireColumnArray<K> {
  const grown = new COLUMN_TYPES[name](rows);
  (grown as { set(values: ArrayLike<number>): void }).set(column);
  return grown;
}

/** Appends a batch's buffer of column `name` at row `base` of the store's column. */
function appendColumn<K extends ColumnName>(columns: StoreColumns, name: K, buffer: ArrayBuffer, base: number): void {
  (columns[name] as { set(values: ArrayLike<number>, offset: number): void }).set(new COLUMN_TYPES[name](buffer), base);
}

function setColumn<K extends ColumnName>(columns: { [N in K]: WireColumnArray<N> }, name: K, column: WireColumnArray<K>): void {
  columns[name] = column;
}

/** The columns copied (time rebased, event mapped) as each batch arrives. */
type EagerColumnName = 'time' | 'event';
/** The columns copied out of their batches when first read. */
type DeferredColumnName = Exclude<ColumnName, EagerColumnName>;
const DEFERRED_COLUMN_NAMES = COLUMN_NAMES.filter((name): name is DeferredColumnName => name !== 'time' && name !== 'event');

/** Rows [base, base + values.length) of a 32-bit column (tid, cpu). */
export interface ColumnPart {
  readonly base: number;
  readonly values: Int32Array;
}

/** A batch whose deferred columns are not all in the store yet: its first store row and the buffers still to copy. */
interface UncopiedBatch {
  readonly base: number;
  readonly buffers: { [K in DeferredColumnName]?: ArrayBuffer };
}

// The store's record columns read as its properties (store.time, store.kind, ...), one per wire column:
// getters that first copy what arrived since the column was last read (defined below the class).
/* eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging --
   getters defined below the class */
export interface RecordStore extends Readonly<StoreColumns> {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class RecordStore {
  originNs: bigint | null = null;
  length = 0;
  /** Symbol id per row (-1: none); empty until a batch carries symbols (symbolOf answers null before). */
  symbol = new Int32Array(0);
  /** Stack id per row into stackTable() (-1: none); empty until a batch carries stacks. */
  stack = new Int32Array(0);
  /** Every snapshot's sampled stacks, each distinct stack once, function names interned once. */
  private readonly stackNames: string[] = [];
  private readonly stackNameIds = new Map<string, number>();
  private readonly stackStarts: number[] = [0];
  private readonly stackFrames: number[] = [];
  private readonly stackIds = new Map<string, number>();
  /** Source lines of the stacks (leaf line per stack, entry line per name), interned across snapshots; -1 unknown. */
  private readonly stackLocations: SourceLocation[] = [];
  private readonly stackLocationIds = new Map<string, number>();
  private readonly stackLeafLocation: number[] = [];
  private readonly stackNameLocation: number[] = [];
  /** The object files of the functions (perf's dso), interned across snapshots; per name its library, -1 unknown. */
  private readonly stackLibraries: string[] = [];
  private readonly stackLibraryIds = new Map<string, number>();
  private readonly stackNameLibrary: number[] = [];
  private stackCache: StackTable | null = null;
  /** Per stack id, its function names (filled as the filter asks; stacks never change once interned). */
  private readonly stackFunctionLists: (readonly string[] | undefined)[] = [];
  /** The appended batches, in store order: rows [runStart[k], runStart[k+1]) came from snapshot runSnapshot[k], starting at its row runLocal[k]. */
  private runStart = new Uint32Array(16);
  private runLocal = new Uint32Array(16);
  private runSnapshot = new Uint16Array(16);
  private runCount = 0;
  /** The run the last lookup landed in: filters walk rows in order, so the next lookup usually lands there too. */
  private lastRun = 0;
  readonly symbols: string[] = [];
  private readonly symbolIds = new Map<string, number>();
  readonly events: StoreEvent[] = [];
  private readonly eventIds = new Map<string, number>();
  readonly snapshots: SnapshotEntry[] = [];
  private readonly snapshotById = new Map<string, SnapshotEntry>();
  readonly commByTid = new Map<number, string>();
  readonly commByPid = new Map<number, string>();
  /** Bumped on every change, so views know when to rebuild derived data. */
  version = 0;
  /** True while every row's time is >= the previous row's (NaN rows excepted): the whole time column can be bisected. */
  timeSorted = true;
  private lastTime = -Infinity;
  /** The record columns; a deferred one holds the rows of the batches before uncopied[copiedBatches[name]]. */
  private readonly columns = {} as StoreColumns;
  /** Rows every column is (or, for a deferred column, will be when next read) allocated for. */
  private capacity = 0;
  /** Batches, in arrival order, with deferred columns not yet copied into the store. */
  private uncopied: UncopiedBatch[] = [];
  /** Per deferred column: how many of `uncopied` it holds. */
  private readonly copiedBatches = Object.fromEntries(DEFERRED_COLUMN_NAMES.map((name) => [name, 0])) as Record<DeferredColumnName, number>;

  constructor() {
    for (const name of COLUMN_NAMES) setColumn(this.columns, name, new COLUMN_TYPES[name](0));
  }

  static {
    for (const name of COLUMN_NAMES) {
      Object.defineProperty(this.prototype, name, {
        get(this: RecordStore) {
          return this.column(name);
        },
        enumerable: true,
      });
    }
  }

  /** Column `name` holding every row appended so far. */
  private column(name: ColumnName): WireColumnArray<ColumnName> {
    if (name !== 'time' && name !== 'event' && this.copiedBatches[name as DeferredColumnName] !== this.uncopied.length) {
      this.copyDeferred(name as DeferredColumnName);
    }
    return this.columns[name];
  }

  /** Copies the batches column `name` has not taken yet, growing it to the store's capacity first. */
  private copyDeferred(name: DeferredColumnName): void {
    if (this.columns[name].length < this.capacity) setColumn(this.columns, name, grownColumn(name, this.columns[name], this.capacity));
    const batches = this.uncopied;
    for (let k = this.copiedBatches[name]; k < batches.length; k++) {
      const buffers = batches[k].buffers;
      appendColumn(this.columns, name, buffers[name]!, batches[k].base);
      buffers[name] = undefined; // each batch's buffer is held by one side at a time: the batch or the column
    }
    this.copiedBatches[name] = batches.length;
    if (DEFERRED_COLUMN_NAMES.every((other) => this.copiedBatches[other] === batches.length)) {
      this.uncopied = [];
      for (const other of DEFERRED_COLUMN_NAMES) this.copiedBatches[other] = 0;
    }
  }

  /**
   * Column `name` at `row` (0 <= row < length), read from its batch when the column has not copied it yet: for
   * per-row lookups (a lane's process, a thread's name) that should not copy a whole column in.
   */
  valueAt(name: ColumnName, row: number): number {
    if (name === 'time' || name === 'event' || this.copiedBatches[name] === this.uncopied.length) return this.columns[name][row];
    const batches = this.uncopied;
    const firstUncopied = this.copiedBatches[name];
    if (row < batches[firstUncopied].base) return this.columns[name][row];
    let lo = firstUncopied;
    let hi = batches.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (batches[mid].base <= row) lo = mid;
      else hi = mid - 1;
    }
    return new COLUMN_TYPES[name](batches[lo].buffers[name]!)[row - batches[lo].base];
  }

  /**
   * Column `name` as consecutive parts covering rows [0, length) in order, without copying: the rows the column
   * holds, then each batch it has not taken yet. For one pass over a column (the lanes' grouping) that should not
   * copy it in first.
   */
  columnParts(name: 'tid' | 'cpu'): ColumnPart[] {
    const batches = this.uncopied;
    const first = this.copiedBatches[name];
    const copiedRows = first < batches.length ? batches[first].base : this.length;
    const parts: ColumnPart[] = [{ base: 0, values: this.columns[name].subarray(0, copiedRows) }];
    for (let k = first; k < batches.length; k++) parts.push({ base: batches[k].base, values: new COLUMN_TYPES[name](batches[k].buffers[name]!) });
    return parts;
  }

  getSnapshot(id: string): SnapshotEntry | undefined {
    return this.snapshotById.get(id);
  }

  /** Each snapshot's thread states (from its sched_switch records), times rebased like its rows'. */
  readonly threadStates: ThreadStateTable[] = [];
  /** Which snapshot (by index) each table of threadStates came from. */
  readonly threadStatesSnapshot: number[] = [];
  private readonly threadStatesOf = new Set<string>();

  /** The thread state tables of the given snapshots (by index). */
  threadStatesOfSnapshots(snapshotIndexes: readonly number[]): ThreadStateTable[] {
    return this.threadStates.filter((_, k) => snapshotIndexes.includes(this.threadStatesSnapshot[k]));
  }

  /** Keep a snapshot's thread states; false when the snapshot is unknown or already has them (a resend). */
  addThreadStates(msg: ThreadStates): boolean {
    const snap = this.snapshotById.get(msg.snapshotId);
    if (!snap || this.threadStatesOf.has(msg.snapshotId)) return false;
    const c = msg.columns;
    const start = new THREAD_STATE_COLUMNS.start(c.start.slice(0));
    const end = new THREAD_STATE_COLUMNS.end(c.end.slice(0));
    for (let i = 0; i < msg.count; i++) {
      start[i] += snap.offsetNs;
      end[i] += snap.offsetNs;
    }
    this.threadStates.push({
      count: msg.count,
      start,
      end,
      tid: new Int32Array(c.tid),
      cpu: new Int32Array(c.cpu),
      state: new Uint8Array(c.state),
      flags: new Uint8Array(c.flags),
      nextTid: new Int32Array(c.nextTid),
      nextComm: new Int32Array(c.nextComm),
      comms: msg.comms,
    });
    this.threadStatesSnapshot.push(snap.index);
    this.threadStatesOf.add(msg.snapshotId);
    this.version++;
    return true;
  }

  beginSnapshot(msg: SnapshotStart): SnapshotEntry {
    const existing = this.snapshotById.get(msg.snapshotId);
    if (existing) return existing; // a resend after resync: keep what we have
    const originNs = BigInt(msg.timeOriginNs);
    if (this.originNs === null) this.originNs = originNs;
    const eventMap = new Map<number, number>();
    for (const e of msg.events) eventMap.set(e.index, this.internEvent(e));
    let eventTableSize = 0;
    for (const local of eventMap.keys()) eventTableSize = Math.max(eventTableSize, local + 1);
    const eventTable = new Int32Array(eventTableSize).fill(-1);
    for (const [local, id] of eventMap) eventTable[local] = id;
    for (const t of msg.threads) {
      if (t.comm !== '') {
        this.commByTid.set(t.tid, t.comm);
        if (t.pid === t.tid || !this.commByPid.has(t.pid)) this.commByPid.set(t.pid, t.comm);
      }
    }
    const entry: SnapshotEntry = {
      ...(msg.stacks ? { stackMap: this.internStacks(msg.stacks) } : {}),
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
    };
    this.snapshots.push(entry);
    this.snapshotById.set(entry.id, entry);
    // Room for every announced row now, so the batches are appended without regrowing the columns.
    this.reserve(this.length + this.pendingRows());
    this.version++;
    return entry;
  }

  /** Append one batch. Batches of a snapshot must arrive in row order (flow control guarantees it). */
  addBatch(msg: RecordBatch): SnapshotEntry {
    const snap = this.snapshotById.get(msg.snapshotId);
    if (!snap) throw new BatchRejected(`batch for unknown snapshot ${JSON.stringify(msg.snapshotId)}`);
    if (msg.firstRow !== snap.receivedRows) {
      throw new BatchRejected(`batch ${msg.batchIndex} of ${snap.id} starts at row ${msg.firstRow}, expected ${snap.receivedRows}`);
    }
    if (snap.receivedRows + msg.rowCount > snap.totalRows) throw new BatchRejected(`batch overflows snapshot ${snap.id}`);
    const n = msg.rowCount;
    this.reserve(this.length + n);
    const base = this.length;
    const c = msg.columns;
    this.appendTimes(snap, new COLUMN_TYPES.time(c.time), base, new COLUMN_TYPES.kind(c.kind));
    this.mapEvents(snap, new COLUMN_TYPES.event(c.event), base);
    this.addRun(base, msg.firstRow, snap.index);
    const buffers: UncopiedBatch['buffers'] = {};
    for (const name of DEFERRED_COLUMN_NAMES) buffers[name] = c[name];
    this.uncopied.push({ base, buffers });
    if (msg.symbolIndex && msg.symbolTable) {
      const local = new Int32Array(msg.symbolIndex);
      const map = Int32Array.from(msg.symbolTable, (s) => this.internSymbol(s));
      const symbol = this.symbolColumn(base + n);
      for (let i = 0; i < n; i++) {
        const s = local[i];
        symbol[base + i] = s >= 0 ? map[s] : -1;
      }
    } else if (this.symbol.length > 0) {
      this.symbol.fill(-1, base, base + n);
    }
    if (msg.stackIndex && snap.stackMap) {
      const local = new Int32Array(msg.stackIndex);
      const map = snap.stackMap;
      const stack = this.stackColumn(base + n);
      for (let i = 0; i < n; i++) {
        const s = local[i];
        stack[base + i] = s >= 0 && s < map.length ? map[s] : -1;
      }
    } else if (this.stack.length > 0) {
      this.stack.fill(-1, base, base + n);
    }
    this.length += n;
    snap.receivedRows += n;
    snap.batchesReceived++;
    this.version++;
    return snap;
  }

  /**
   * Rows [base, base + localTime.length) of the time column: the batch's times rebased onto the store's origin,
   * and the snapshot's extent, untimed count and the store's order updated in the same pass.
   */
  private appendTimes(snap: SnapshotEntry, localTime: Float64Array, base: number, kind: WireColumnArray<'kind'>): void {
    const n = localTime.length;
    // Simple loops and block copies (the page's code is cold when a big snapshot arrives: tight
    // typed loops get optimized early, calls per row do not).
    const time = this.columns.time;
    const offsetNs = snap.offsetNs;
    if (offsetNs === 0) time.set(localTime, base);
    else for (let i = 0; i < n; i++) time[base + i] = localTime[i] + offsetNs;
    // perf stamps the records it synthesizes for what already ran (MMAP, COMM of existing processes) with time 0:
    // the decoder's origin is then 0, and those rows are untimed, not the start of the capture.
    if (snap.originNs === 0n) for (let i = 0; i < n; i++) if (localTime[i] === 0) time[base + i] = NaN;
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
   * Snapshot-local event indexes → store event indexes (a block copy when they are the same numbers), and the
   * snapshot's rows per event: counted per local index in one pass, then added per event, not per row.
   */
  private mapEvents(snap: SnapshotEntry, localEvent: Uint16Array, base: number): void {
    const n = localEvent.length;
    let localCounts = new Uint32Array(Math.max(snap.eventTable.length, 1));
    for (let i = 0; i < n; i++) {
      const e = localEvent[i];
      if (e >= localCounts.length) {
        const grown = new Uint32Array(Math.max(e + 1, localCounts.length * 2));
        grown.set(localCounts);
        localCounts = grown;
      }
      localCounts[e]++;
    }
    let maxLocal = localCounts.length - 1;
    while (maxLocal > 0 && localCounts[maxLocal] === 0) maxLocal--;
    let table = snap.eventTable;
    let identity = maxLocal < table.length;
    for (let e = 0; identity && e <= maxLocal; e++) if (localCounts[e] > 0 && table[e] !== e) identity = false;
    if (identity) {
      this.columns.event.set(localEvent, base);
    } else {
      if (maxLocal >= table.length) {
        const grown = new Int32Array(maxLocal + 1).fill(-1);
        grown.set(table);
        table = snap.eventTable = grown;
      }
      for (let local = 0; local <= maxLocal; local++) {
        if (localCounts[local] === 0 || table[local] >= 0) continue;
        // An event the snapshot did not announce: intern a placeholder name once and remember it.
        table[local] = this.internEvent({ index: local, name: `event ${local}`, kind: 'other' });
        snap.eventMap.set(local, table[local]);
      }
      const event = this.columns.event;
      for (let i = 0; i < n; i++) event[base + i] = table[localEvent[i]];
    }
    const counts = snap.eventRows;
    for (let local = 0; local <= maxLocal; local++) {
      if (localCounts[local] > 0) counts[table[local]] = (counts[table[local]] ?? 0) + localCounts[local];
    }
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
    return this.runSnapshot[this.runOf(row)];
  }

  /** The row's number within its own snapshot (what the host calls it). */
  localRowOf(row: number): number {
    const run = this.runOf(row);
    return this.runLocal[run] + (row - this.runStart[run]);
  }

  /** The store rows of a snapshot, as [start, end) ranges in store order (one per batch received). */
  rangesOf(snapshotIndex: number): [number, number][] {
    const out: [number, number][] = [];
    for (let k = 0; k < this.runCount; k++) {
      if (this.runSnapshot[k] !== snapshotIndex) continue;
      const end = k + 1 < this.runCount ? this.runStart[k + 1] : this.length;
      const last = out.at(-1);
      if (last && last[1] === this.runStart[k]) last[1] = end;
      else out.push([this.runStart[k], end]);
    }
    return out;
  }

  /** The store row of a snapshot's row `localRow`, or -1 when it has not arrived. */
  globalRowOf(snapshotIndex: number, localRow: number): number {
    for (let k = 0; k < this.runCount; k++) {
      if (this.runSnapshot[k] !== snapshotIndex || localRow < this.runLocal[k]) continue;
      const end = k + 1 < this.runCount ? this.runStart[k + 1] : this.length;
      const row = this.runStart[k] + (localRow - this.runLocal[k]);
      if (row < end) return row;
    }
    return -1;
  }

  /** The run holding `row` (0 <= row < length): the cached one, its successor, or bisection. */
  private runOf(row: number): number {
    const starts = this.runStart;
    const count = this.runCount;
    let run = this.lastRun;
    if (run < count && starts[run] <= row && (run + 1 >= count || row < starts[run + 1])) return run;
    if (run + 1 < count && starts[run + 1] <= row && (run + 2 >= count || row < starts[run + 2])) return (this.lastRun = run + 1);
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    run = lo;
    this.lastRun = run;
    return run;
  }

  private addRun(globalStart: number, localStart: number, snapshotIndex: number): void {
    if (this.runCount === this.runStart.length) {
      const size = this.runCount * 2;
      const start = new Uint32Array(size);
      start.set(this.runStart);
      this.runStart = start;
      const local = new Uint32Array(size);
      local.set(this.runLocal);
      this.runLocal = local;
      const snapshot = new Uint16Array(size);
      snapshot.set(this.runSnapshot);
      this.runSnapshot = snapshot;
    }
    this.runStart[this.runCount] = globalStart;
    this.runLocal[this.runCount] = localStart;
    this.runSnapshot[this.runCount] = snapshotIndex;
    this.runCount++;
  }

  /** The symbol column with room for `rows` rows, created (every earlier row: no symbol) on first use. */
  /** The function names of row's sampled callchain, leaf first (empty: no callchain); one list per distinct stack. */
  stackFunctionsOf(row: number): readonly string[] {
    const id = row < this.stack.length ? this.stack[row] : -1;
    if (id < 0 || id + 1 >= this.stackStarts.length) return [];
    const known = this.stackFunctionLists[id];
    if (known) return known;
    const names: string[] = [];
    for (let f = this.stackStarts[id]; f < this.stackStarts[id + 1]; f++) names.push(this.stackNames[this.stackFrames[f]]);
    this.stackFunctionLists[id] = names;
    return names;
  }

  /** All stacks received so far, as the call tree reads them. */
  stackTable(): StackTable {
    if (
      !this.stackCache ||
      this.stackCache.start.length !== this.stackStarts.length ||
      (this.stackCache.libraries?.length ?? 0) !== this.stackLibraries.length ||
      (this.stackCache.nameLibrary?.length ?? 0) !== (this.stackLibraries.length ? this.stackNames.length : 0)
    ) {
      this.stackCache = {
        names: this.stackNames,
        start: Uint32Array.from(this.stackStarts),
        frames: Int32Array.from(this.stackFrames),
        ...(this.stackLibraries.length
          ? {
              libraries: this.stackLibraries,
              nameLibrary: Int32Array.from(this.stackNames, (_, n) => this.stackNameLibrary[n] ?? -1),
            }
          : {}),
        ...(this.stackLocations.length
          ? {
              locations: this.stackLocations,
              leafLocation: Int32Array.from(this.stackLeafLocation),
              nameLocation: Int32Array.from(this.stackNames, (_, n) => this.stackNameLocation[n] ?? -1),
            }
          : {}),
      };
    }
    return this.stackCache;
  }

  private internStacks(stacks: NonNullable<SnapshotStart['stacks']>): Int32Array {
    const nameMap = stacks.names.map((name) => {
      let id = this.stackNameIds.get(name);
      if (id === undefined) {
        id = this.stackNames.length;
        this.stackNames.push(name);
        this.stackNameIds.set(name, id);
      }
      return id;
    });
    const locationMap = (stacks.locations ?? []).map((l) => {
      const key = `${l.line}:${l.file}`;
      let id = this.stackLocationIds.get(key);
      if (id === undefined) {
        id = this.stackLocations.length;
        this.stackLocations.push({ file: l.file, line: l.line });
        this.stackLocationIds.set(key, id);
      }
      return id;
    });
    stacks.nameLibrary?.forEach((l, n) => {
      const library = stacks.libraries?.[l];
      if (library === undefined || (this.stackNameLibrary[nameMap[n]] ?? -1) >= 0) return;
      let id = this.stackLibraryIds.get(library);
      if (id === undefined) {
        id = this.stackLibraries.length;
        this.stackLibraries.push(library);
        this.stackLibraryIds.set(library, id);
      }
      this.stackNameLibrary[nameMap[n]] = id;
    });
    stacks.nameLocation?.forEach((l, n) => {
      if (l >= 0 && (this.stackNameLocation[nameMap[n]] ?? -1) < 0) this.stackNameLocation[nameMap[n]] = locationMap[l];
    });
    const map = new Int32Array(stacks.start.length - 1);
    for (let s = 0; s + 1 < stacks.start.length; s++) {
      const frames = stacks.frames.slice(stacks.start[s], stacks.start[s + 1]).map((f) => nameMap[f]);
      const leaf = stacks.leafLocation && stacks.leafLocation[s] >= 0 ? locationMap[stacks.leafLocation[s]] : -1;
      const key = `${leaf}|${frames.join(',')}`;
      let id = this.stackIds.get(key);
      if (id === undefined) {
        id = this.stackStarts.length - 1;
        this.stackIds.set(key, id);
        this.stackFrames.push(...frames);
        this.stackStarts.push(this.stackFrames.length);
        this.stackLeafLocation.push(leaf);
      }
      map[s] = id;
    }
    return map;
  }

  private stackColumn(rows: number): Int32Array {
    if (this.stack.length < rows) {
      const grown = new Int32Array(Math.max(rows, this.time.length)).fill(-1);
      grown.set(this.stack);
      this.stack = grown;
    }
    return this.stack;
  }

  private symbolColumn(rows: number): Int32Array {
    if (this.symbol.length < rows) {
      const grown = new Int32Array(Math.max(rows, this.time.length)).fill(-1);
      grown.set(this.symbol);
      this.symbol = grown;
    }
    return this.symbol;
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

  private internEvent(e: EventInfo): number {
    const key = `${e.kind}\u0000${e.name}`;
    let id = this.eventIds.get(key);
    if (id === undefined) {
      id = this.events.length;
      this.events.push({ name: e.name, kind: e.kind });
      this.eventIds.set(key, id);
    }
    return id;
  }

  private internSymbol(s: string): number {
    let id = this.symbolIds.get(s);
    if (id === undefined) {
      id = this.symbols.length;
      this.symbols.push(s);
      this.symbolIds.set(s, id);
    }
    return id;
  }

  /** Rows announced by snapshotStart messages and not received yet. */
  private pendingRows(): number {
    let rows = 0;
    for (const s of this.snapshots) rows += Math.max(0, s.totalRows - s.receivedRows);
    return rows;
  }

  private reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    // Announced rows are reserved exactly; growth beyond them (never expected) stays geometric.
    const next = Math.max(capacity, this.capacity === 0 ? 0 : Math.ceil(this.capacity * 1.5), 1024);
    this.capacity = next;
    // Deferred columns grow when they next copy (a column read in between holds every row so far).
    setColumn(this.columns, 'time', grownColumn('time', this.columns.time, next));
    setColumn(this.columns, 'event', grownColumn('event', this.columns.event, next));
    if (this.symbol.length > 0) {
      const symbol = new Int32Array(next).fill(-1);
      symbol.set(this.symbol);
      this.symbol = symbol;
    }
    if (this.stack.length > 0) {
      const stack = new Int32Array(next).fill(-1);
      stack.set(this.stack);
      this.stack = stack;
    }
  }
}
