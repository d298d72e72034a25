// A column set: every record column (column-schema.ts) as a view of ONE buffer, so a set is one
// allocation and one ownership handle (the arena lends and takes back whole sets), and the buffer
// may be shared memory that worker threads decode into.

import {
  COLUMNS_WIDEST_FIRST,
  RECORD_COLUMN_NAMES,
  columnConstructor,
  columnView,
  type ColumnArray,
  type ColumnArrays,
  type RecordColumnName,
} from './column-schema';
import type { RecordColumns } from './types';

/**
 * Rows [first, first + count) of `columns` as subarray views (no copy). Every column named in one
 * literal (RecordColumns holds it to the schema: a column added there does not compile here until
 * it is added): adding the views to an object in a loop over the names took a megamorphic store per
 * column, and the literal took 0.42 µs where the loop took 0.74 (every decode makes one).
 */
export function columnRows(columns: ColumnArrays, timeOriginNs: bigint, first: number, count: number): RecordColumns {
  const stop = first + count;
  return {
    length: count,
    timeOriginNs,
    time: columns.time.subarray(first, stop),
    kind: columns.kind.subarray(first, stop),
    misc: columns.misc.subarray(first, stop),
    event: columns.event.subarray(first, stop),
    pid: columns.pid.subarray(first, stop),
    tid: columns.tid.subarray(first, stop),
    cpu: columns.cpu.subarray(first, stop),
    ipHi: columns.ipHi.subarray(first, stop),
    ipLo: columns.ipLo.subarray(first, stop),
    ring: columns.ring.subarray(first, stop),
    offset: columns.offset.subarray(first, stop),
  };
}

/**
 * Sets of at least this many rows lay their columns out staggered (columnOffsets says why); smaller
 * ones pack them, since a page of padding per column would outweigh the columns themselves.
 */
const STAGGERED_ROWS = 4096;
/** Bytes from one column's start to the next one's, modulo a page, in a staggered set: 11 columns end below 4 KiB. */
const COLUMN_STAGGER = 320;
const PAGE = 4096;

/**
 * Where each column of a set of `rows` rows starts, in bytes from the set's start (widest first, so
 * every column is aligned), and the bytes the set takes. The decoder writes row i of every column
 * in one step. Packed end to end, equal-width columns start rows * width bytes apart; when that is
 * a multiple of 4 KiB, row i of each of them falls into the same cache set, and eleven streams then
 * evict one another from an 8-way L1 (AMD Zen 3). At 64 MiB the C walker ran 2.9x slower with its
 * columns in eleven mallocs (each at the same offset within a page) than staggered, and 1.6x
 * slower with them page-aligned in one block. So in a set of STAGGERED_ROWS rows or more, every
 * column starts on a page boundary plus COLUMN_STAGGER bytes times its place: no two in one cache set.
 */
export function columnOffsets(rows: number): { readonly offsets: { readonly [K in RecordColumnName]: number }; readonly bytes: number } {
  const offsets: Partial<Record<RecordColumnName, number>> = {};
  const staggered = rows >= STAGGERED_ROWS;
  let at = 0;
  COLUMNS_WIDEST_FIRST.forEach((name, place) => {
    if (staggered) at = Math.ceil(at / PAGE) * PAGE + place * COLUMN_STAGGER;
    offsets[name] = at;
    at += columnConstructor(name).BYTES_PER_ELEMENT * rows;
  });
  return { offsets: offsets as { readonly [K in RecordColumnName]: number }, bytes: Math.ceil(at / 8) * 8 };
}

/** Bytes a column set of `rows` rows takes (columnOffsets). */
export function columnSetBytes(rows: number): number {
  return columnOffsets(rows).bytes;
}

/** The columns of a set laid out in `buffer` from `byteOffset` (a multiple of 8) by columnOffsets. */
function viewsOf(buffer: ArrayBufferLike, length: number, byteOffset: number): ColumnArrays {
  const views: Partial<Record<RecordColumnName, ColumnArray<RecordColumnName>>> = {};
  const { offsets } = columnOffsets(length);
  for (const name of COLUMNS_WIDEST_FIRST) views[name] = columnView(name, buffer, byteOffset + offsets[name], length);
  return views as ColumnArrays;
}

/**
 * A set's buffer as one view per element width, and where each column starts in the view of its
 * width (an element index). Hot loops that write a whole row write through these four views with
 * the eleven starts in locals, instead of through eleven arrays: V8 keeps a typed array's data
 * pointer and length per array, and eleven of them (with the ring's words and the keys) do not fit
 * in registers, so each store reloaded them (scatterSlice's runs: 11.5 → 8.6 ns a row on the bench
 * machine). Signed columns (pid, tid, cpu) are written through the u32 view: the same bits.
 */
export interface FlatColumns {
  readonly f64: Float64Array;
  readonly u32: Uint32Array;
  readonly u16: Uint16Array;
  readonly u8: Uint8Array;
  /** Row 0 of each column, as an element index into the view of its width. */
  readonly at: { readonly [K in RecordColumnName]: number };
}

// The set's columns are its own properties (set.time, set.kind, ...), declared from the schema.
/* eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging --
   the class defines these from the schema */
export interface ColumnSet extends ColumnArrays {}

/**
 * One typed array per column, all views of one buffer; `time` is relative to the owning ring's
 * time base until merged. `length` is the capacity in rows.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class ColumnSet {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  private flatViews: FlatColumns | undefined;

  /**
   * `buffer` (at least columnSetBytes(length) bytes from `byteOffset`, a multiple of 8) lets
   * the caller choose shared memory, or a copy's WebAssembly memory (wasm/copy-room.ts).
   */
  constructor(
    readonly length: number,
    buffer?: ArrayBuffer | SharedArrayBuffer,
    readonly byteOffset = 0,
  ) {
    const bytes = columnSetBytes(length);
    if (byteOffset % 8 !== 0) throw new RangeError(`a column set starts at a multiple of 8 bytes, not ${byteOffset}`);
    if (buffer && buffer.byteLength < byteOffset + bytes) {
      throw new RangeError(`a column set of ${length} rows at byte ${byteOffset} needs ${byteOffset + bytes} bytes, the buffer has ${buffer.byteLength}`);
    }
    this.buffer = buffer ?? new ArrayBuffer(bytes);
    Object.assign(this, viewsOf(this.buffer, length, byteOffset));
  }

  /** The set's buffer as four views of one width each, with where each column starts (made once per set). */
  flat(): FlatColumns {
    if (this.flatViews) return this.flatViews;
    const at: Partial<Record<RecordColumnName, number>> = {};
    for (const name of RECORD_COLUMN_NAMES) at[name] = this[name].byteOffset / columnConstructor(name).BYTES_PER_ELEMENT;
    const bytes = this.buffer.byteLength;
    this.flatViews = {
      f64: new Float64Array(this.buffer, 0, Math.floor(bytes / 8)),
      u32: new Uint32Array(this.buffer, 0, Math.floor(bytes / 4)),
      u16: new Uint16Array(this.buffer, 0, Math.floor(bytes / 2)),
      u8: new Uint8Array(this.buffer, 0, bytes),
      at: at as FlatColumns['at'],
    };
    return this.flatViews;
  }

  /** Rows [first, first + count) as columns: the arrays themselves when that is all of them, views otherwise. */
  toColumns(timeOriginNs: bigint, first = 0, count = this.length): RecordColumns {
    if (first === 0 && count === this.length) {
      // As columnRows, one literal (and so one object shape for both).
      return {
        length: count,
        timeOriginNs,
        time: this.time,
        kind: this.kind,
        misc: this.misc,
        event: this.event,
        pid: this.pid,
        tid: this.tid,
        cpu: this.cpu,
        ipHi: this.ipHi,
        ipLo: this.ipLo,
        ring: this.ring,
        offset: this.offset,
      };
    }
    return columnRows(this, timeOriginNs, first, count);
  }

  /** Moves rows [from, from + count) of this set to rows [to, to + count) (native, overlap-safe). */
  moveRows(from: number, count: number, to: number): void {
    const stop = from + count;
    for (const name of RECORD_COLUMN_NAMES) this[name].copyWithin(to, from, stop);
  }

  /**
   * Exchanges rows a and b, through the four views of one width each: through the eleven arrays (five
   * kinds) one swap site saw every kind, and V8's megamorphic access took 2.5 µs a row.
   */
  swapRows(a: number, b: number): void {
    const { f64, u32, u16, u8, at } = this.flat();
    for (const name of RECORD_COLUMN_NAMES) {
      const i = at[name] + a;
      const j = at[name] + b;
      switch (columnConstructor(name).BYTES_PER_ELEMENT) {
        case 8: {
          const kept = f64[i];
          f64[i] = f64[j];
          f64[j] = kept;
          break;
        }
        case 4: {
          const kept = u32[i];
          u32[i] = u32[j];
          u32[j] = kept;
          break;
        }
        case 2: {
          const kept = u16[i];
          u16[i] = u16[j];
          u16[j] = kept;
          break;
        }
        default: {
          const kept = u8[i];
          u8[i] = u8[j];
          u8[j] = kept;
        }
      }
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

/** Where the decoder gets column sets and gives back the ones it no longer needs. */
export interface SetSource {
  take(rows: number): ColumnSet;
  give(set: ColumnSet): void;
}
