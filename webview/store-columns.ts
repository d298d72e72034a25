// The record columns of the page's store (one growable typed array per wire column, shared/columns.ts) and the
// per-row id columns (symbol, stack) that exist only once some batch carried them. Pure (no DOM).
//
// Receiving a big snapshot is bound by writing fresh memory (page faults), so the columns a first frame does not read
// are copied out of their batches when first read, not as they arrive: time and event (rebased, mapped by the store)
// are written at once; kind, misc, pid, tid, cpu, ipHi and ipLo wait (the lanes read the column they group by from the
// batches, in parts). A 1M-row snapshot's first paint then writes 10 of its 33 bytes per row.

import { COLUMN_NAMES, COLUMN_TYPES, type ColumnName, type WireColumnArray } from '../shared/columns';

/** The wire columns, each a typed array replaced when it grows. */
export type StoreColumns = { [K in ColumnName]: WireColumnArray<K> };

/** The columns written (time rebased, event mapped) as each batch arrives. */
export type EagerColumnName = 'time' | 'event';
/** The columns copied out of their batches when first read. */
export type DeferredColumnName = Exclude<ColumnName, EagerColumnName>;
export const DEFERRED_COLUMN_NAMES = COLUMN_NAMES.filter((name): name is DeferredColumnName => name !== 'time' && name !== 'event');

/** Rows [base, base + values.length) of a 32-bit column (tid, cpu). */
export interface ColumnPart {
  readonly base: number;
  readonly values: Int32Array;
}

/** A batch's deferred columns, as received: copied into the store when each column is first read. */
export type DeferredBuffers = { [K in DeferredColumnName]?: ArrayBuffer };

/** A batch whose deferred columns are not all in the store yet: its first store row and the buffers still to copy. */
interface UncopiedBatch {
  readonly base: number;
  readonly buffers: DeferredBuffers;
}

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

/** An Int32 id column (-1: none) with room for `rows` rows: `column` when it has them, else a copy grown with -1. */
export function grownIdColumn(column: Int32Array<ArrayBuffer>, rows: number): Int32Array<ArrayBuffer> {
  if (column.length >= rows) return column;
  const grown = new Int32Array(rows).fill(-1);
  grown.set(column);
  return grown;
}

export class RecordColumns {
  /** The record columns; a deferred one holds the rows of the batches before uncopied[copiedBatches[name]]. */
  private readonly columns = {} as StoreColumns;
  /** Rows every column is (or, for a deferred column, will be when next read) allocated for. */
  private capacity = 0;
  /** Batches, in arrival order, with deferred columns not yet copied into the store. */
  private uncopied: UncopiedBatch[] = [];
  /** Per deferred column: how many of `uncopied` it holds. */
  private readonly copiedBatches = Object.fromEntries(DEFERRED_COLUMN_NAMES.map((name) => [name, 0])) as Record<DeferredColumnName, number>;
  /** Symbol id per row (-1: none); empty until a batch carries symbols. */
  symbol: Int32Array<ArrayBuffer> = new Int32Array(0);
  /** Stack id per row (-1: none); empty until a batch carries stacks. */
  stack: Int32Array<ArrayBuffer> = new Int32Array(0);

  constructor() {
    for (const name of COLUMN_NAMES) setColumn(this.columns, name, new COLUMN_TYPES[name](0));
  }

  /** The eager columns, written directly by the store as batches arrive. */
  get time(): Float64Array {
    return this.columns.time;
  }

  get event(): Uint16Array {
    return this.columns.event;
  }

  /** Column `name` holding every row appended so far. */
  column(name: ColumnName): WireColumnArray<ColumnName> {
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

  /** A batch's deferred columns, to be copied in when each is first read; its rows start at `base`. */
  appendDeferred(base: number, buffers: DeferredBuffers): void {
    this.uncopied.push({ base, buffers });
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
  columnParts(name: 'tid' | 'cpu', length: number): ColumnPart[] {
    const batches = this.uncopied;
    const first = this.copiedBatches[name];
    const copiedRows = first < batches.length ? batches[first].base : length;
    const parts: ColumnPart[] = [{ base: 0, values: this.columns[name].subarray(0, copiedRows) }];
    for (let k = first; k < batches.length; k++) parts.push({ base: batches[k].base, values: new COLUMN_TYPES[name](batches[k].buffers[name]!) });
    return parts;
  }

  /** The symbol column with room for `rows` rows, created (every earlier row: no symbol) on first use. */
  symbolColumn(rows: number): Int32Array<ArrayBuffer> {
    if (this.symbol.length < rows) this.symbol = grownIdColumn(this.symbol, Math.max(rows, this.time.length));
    return this.symbol;
  }

  /** The stack column with room for `rows` rows, created (every earlier row: no stack) on first use. */
  stackColumn(rows: number): Int32Array<ArrayBuffer> {
    if (this.stack.length < rows) this.stack = grownIdColumn(this.stack, Math.max(rows, this.time.length));
    return this.stack;
  }

  /**
   * Removes the store rows in `removed` (ascending, disjoint [start, end) ranges) from every column, moving the rows
   * after them down; `length`: the rows before. Every deferred column is copied in first (a removal is rare: once per
   * part of a live capture's window).
   */
  removeRows(removed: readonly (readonly [number, number])[], length: number): void {
    for (const name of DEFERRED_COLUMN_NAMES) this.column(name);
    const compact = (column: { copyWithin(target: number, start: number, end: number): unknown }) => {
      let to = removed[0][0];
      for (let k = 0; k < removed.length; k++) {
        const from = removed[k][1];
        const end = k + 1 < removed.length ? removed[k + 1][0] : length;
        if (end > from) column.copyWithin(to, from, end);
        to += end - from;
      }
    };
    for (const name of COLUMN_NAMES) compact(this.columns[name]);
    if (this.symbol.length > 0) compact(this.symbol);
    if (this.stack.length > 0) compact(this.stack);
  }

  /** Room for `capacity` rows in every column (the deferred ones when they next copy). */
  reserve(capacity: number): void {
    if (capacity <= this.capacity) return;
    // Announced rows are reserved exactly; growth beyond them (never expected) stays geometric.
    const next = Math.max(capacity, this.capacity === 0 ? 0 : Math.ceil(this.capacity * 1.5), 1024);
    this.capacity = next;
    // Deferred columns grow when they next copy (a column read in between holds every row so far).
    setColumn(this.columns, 'time', grownColumn('time', this.columns.time, next));
    setColumn(this.columns, 'event', grownColumn('event', this.columns.event, next));
    if (this.symbol.length > 0) this.symbol = grownIdColumn(this.symbol, next);
    if (this.stack.length > 0) this.stack = grownIdColumn(this.stack, next);
  }
}
