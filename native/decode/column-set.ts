// A column set: every record column (column-schema.ts) as a view of ONE buffer, so a set is one
// allocation and one ownership handle (the arena lends and takes back whole sets), and the buffer
// may be shared memory that worker threads decode into.

import {
  COLUMN_BYTES_PER_ROW, COLUMNS_WIDEST_FIRST, RECORD_COLUMN_NAMES, columnConstructor, columnView,
  type ColumnArray, type ColumnArrays, type RecordColumnName,
} from './column-schema';
import type { RecordColumns } from './types';

/** Rows [first, first + count) of `columns` as subarray views (no copy). */
export function columnRows(columns: ColumnArrays, timeOriginNs: bigint, first: number, count: number): RecordColumns {
  const stop = first + count;
  const views: Partial<Record<RecordColumnName, ColumnArray<RecordColumnName>>> = {};
  for (const name of RECORD_COLUMN_NAMES) views[name] = columns[name].subarray(first, stop);
  return { length: count, timeOriginNs, ...(views as ColumnArrays) };
}

/** The columns of a set laid out in `buffer`, widest first so every view is aligned. */
function viewsOf(buffer: ArrayBufferLike, length: number): ColumnArrays {
  const views: Partial<Record<RecordColumnName, ColumnArray<RecordColumnName>>> = {};
  let at = 0;
  for (const name of COLUMNS_WIDEST_FIRST) {
    views[name] = columnView(name, buffer, at, length);
    at += columnConstructor(name).BYTES_PER_ELEMENT * length;
  }
  return views as ColumnArrays;
}

// The set's columns are its own properties (set.time, set.kind, ...), declared from the schema.
export interface ColumnSet extends ColumnArrays {}

/**
 * One typed array per column, all views of one buffer; `time` is relative to the owning ring's
 * time base until merged. `length` is the capacity in rows.
 */
export class ColumnSet {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;

  /** `buffer` (at least length * COLUMN_BYTES_PER_ROW bytes) lets the caller choose shared memory. */
  constructor(readonly length: number, buffer?: ArrayBuffer | SharedArrayBuffer) {
    const bytes = length * COLUMN_BYTES_PER_ROW;
    if (buffer && buffer.byteLength < bytes) {
      throw new RangeError(`a column set of ${length} rows needs ${bytes} bytes, the buffer has ${buffer.byteLength}`);
    }
    this.buffer = buffer ?? new ArrayBuffer(bytes);
    Object.assign(this, viewsOf(this.buffer, length));
  }

  /** Rows [first, first + count) as columns: the arrays themselves when that is all of them, views otherwise. */
  toColumns(timeOriginNs: bigint, first = 0, count = this.length): RecordColumns {
    if (first === 0 && count === this.length) {
      const whole: Partial<Record<RecordColumnName, ColumnArray<RecordColumnName>>> = {};
      for (const name of RECORD_COLUMN_NAMES) whole[name] = this[name];
      return { length: count, timeOriginNs, ...(whole as ColumnArrays) };
    }
    return columnRows(this, timeOriginNs, first, count);
  }

  /** Moves rows [from, from + count) of this set to rows [to, to + count) (native, overlap-safe). */
  moveRows(from: number, count: number, to: number): void {
    const stop = from + count;
    for (const name of RECORD_COLUMN_NAMES) this[name].copyWithin(to, from, stop);
  }

  /** Exchanges rows a and b. */
  swapRows(a: number, b: number): void {
    for (const name of RECORD_COLUMN_NAMES) {
      const column = this[name];
      const kept = column[a];
      column[a] = column[b];
      column[b] = kept;
    }
  }

  /** Copies rows [from, from + count) of `source` to rows [to, to + count) of this set (native copies). */
  copyRows(source: ColumnSet, from: number, count: number, to: number): void {
    const stop = from + count;
    for (const name of RECORD_COLUMN_NAMES) copyColumn(this[name], source[name].subarray(from, stop), to);
  }
}

/** target.set(values, to) for two columns of the same element kind. */
function copyColumn<T extends ColumnArray<RecordColumnName>>(target: T, values: T, to: number): void {
  (target as { set(array: ArrayLike<number>, offset: number): void }).set(values, to);
}
