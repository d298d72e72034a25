// The merge of a snapshot's rings by time: each ring's rows are already in the kernel's write order
// (a sorted run), so the rings are merged with a k-way heap on the record time, emitting whole runs
// of one ring at a time. A record without a time (no PERF_SAMPLE_TIME, or a side-band record
// without sample_id_all) takes the merge key of the record before it in its ring (or sorts before
// everything when it is the first), so it stays next to its ring neighbours. The merge key never
// decreases inside one ring (running maximum), so each ring's own order is always preserved: the
// kernel's write order wins over tiny cross-CPU clock skews.

import type { ColumnSet, SetSource } from './column-set';
import { COLUMN_WIDTH, RECORD_COLUMN_NAMES } from './column-schema';
import type { RingRows } from './decode-ring';

/** time[start, stop) += amount (NaN, i.e. no time, stays NaN). */
export function addToRange(time: Float64Array, start: number, stop: number, amount: number): void {
  for (let i = start; i < stop; i++) time[i] += amount;
}

/** Runs of consecutive rows of one ring that the merge emits together, in output order. */
export interface MergeRuns {
  readonly ring: Uint32Array;
  /** Index of the run's first row among its ring's rows (0 = the ring's oldest). */
  readonly from: Uint32Array;
  readonly length: Uint32Array;
  readonly count: number;
}

/**
 * Where one slice of a merge (mergeSlices) starts and stops in every ring (indexes among each
 * ring's rows), and its first output row (the number of rows of every ring before the slice).
 */
export interface MergeSlice {
  readonly from: ArrayLike<number>;
  readonly to: ArrayLike<number>;
  readonly at: number;
}

/**
 * K-way merge of the rings' rows by merge key, one run at a time: the running maximum of
 * time + shift[r] inside each ring (no time keeps the previous key, -Infinity at first), ties to
 * the lower ring number, so each ring's own order is always kept. The output is therefore the rows
 * sorted by (key, ring, row), a strict total order, which is what lets a merge be cut into slices
 * (mergeSlices). A binary heap picks the ring; it then keeps emitting from that ring while it still
 * beats the best other ring, so a large ring interleaved with a small side-band ring costs a few
 * heap operations, not one per row. `slice`: merge only that slice (default: every row).
 *
 * A cursor rather than a list of runs, so a caller can write each run as it comes (scatter.ts
 * decodes a run's records right after the key scan that found it, while they are in cache).
 */
export class MergeCursor {
  /** The current run (after nextRun() returned true): ring, index of its first row among the ring's rows, rows. */
  ring = -1;
  from = 0;
  length = 0;
  /** Rows the whole merge (or slice) emits. */
  readonly total: number;
  private readonly key: Float64Array;
  private readonly next: Int32Array;
  private readonly stops: Int32Array;
  private readonly heap: Int32Array;
  private heapSize = 0;

  constructor(
    private readonly times: readonly Float64Array[],
    counts: readonly number[],
    private readonly shift: ArrayLike<number>,
    slice?: MergeSlice,
  ) {
    const ringCount = times.length;
    let total = 0;
    for (let r = 0; r < ringCount; r++) total += slice ? slice.to[r] - slice.from[r] : counts[r];
    this.total = total;
    this.key = new Float64Array(ringCount);
    this.next = new Int32Array(ringCount);
    this.stops = new Int32Array(ringCount);
    this.heap = new Int32Array(ringCount);
    for (let r = 0; r < ringCount; r++) {
      const start = slice ? slice.from[r] : 0;
      this.next[r] = start;
      this.stops[r] = slice ? slice.to[r] : counts[r];
      if (this.stops[r] <= start) continue;
      const value = times[r][start] + shift[r];
      this.key[r] = value === value ? value : -Infinity;
      this.heap[this.heapSize++] = r;
    }
    for (let i = (this.heapSize >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Moves to the next run (ring, from, length); false when every row was emitted. */
  nextRun(): boolean {
    if (this.heapSize === 0) return false;
    const { heap, key, next, stops } = this;
    const r = heap[0];
    let rival = -1;
    if (this.heapSize > 1) rival = this.heapSize > 2 && this.less(heap[2], heap[1]) ? heap[2] : heap[1];
    const rivalKey = rival >= 0 ? key[rival] : Infinity;
    const time = this.times[r];
    const stop = stops[r];
    const amount = this.shift[r];
    const start = next[r];
    let i = start;
    let k = key[r];
    for (;;) {
      i++; // row i - 1, of key k, is emitted
      if (i >= stop) break;
      const value = time[i] + amount;
      if (value === value && value > k) k = value; // NaN (no time) keeps the carried key
      if (rival >= 0 && !(k < rivalKey || (k === rivalKey && r < rival))) break;
    }
    this.ring = r;
    this.from = start;
    this.length = i - start;
    next[r] = i;
    if (i >= stop) heap[0] = heap[--this.heapSize];
    else key[r] = k;
    this.siftDown(0);
    return true;
  }

  private less(a: number, b: number): boolean {
    const key = this.key;
    return key[a] < key[b] || (key[a] === key[b] && a < b);
  }

  private siftDown(start: number): void {
    const heap = this.heap;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.heapSize) return;
      let smallest = left;
      if (left + 1 < this.heapSize && this.less(heap[left + 1], heap[left])) smallest = left + 1;
      if (!this.less(heap[smallest], heap[i])) return;
      const tmp = heap[i];
      heap[i] = heap[smallest];
      heap[smallest] = tmp;
      i = smallest;
    }
  }
}

/** Every run of a merge (MergeCursor) in output order. */
export function mergeRuns(times: readonly Float64Array[], counts: readonly number[], shift: ArrayLike<number>, slice?: MergeSlice): MergeRuns {
  const cursor = new MergeCursor(times, counts, shift, slice);
  // At most one run per row; pages of these arrays that are never written cost nothing.
  const ring = new Uint32Array(cursor.total);
  const from = new Uint32Array(cursor.total);
  const length = new Uint32Array(cursor.total);
  let runs = 0;
  while (cursor.nextRun()) {
    ring[runs] = cursor.ring;
    from[runs] = cursor.from;
    length[runs] = cursor.length;
    runs++;
  }
  return { ring, from, length, count: runs };
}

/** True when every time is present and none is below the one before it. */
export function isSorted(time: Float64Array): boolean {
  let previous = -Infinity;
  for (let i = 0; i < time.length; i++) {
    const value = time[i];
    if (!(value >= previous)) return false; // NaN, or a time before the one above it
    previous = value;
  }
  return true;
}

/**
 * A ring's times oldest first as mergeSlicesOfTimes reads them: an array of them, or records read in
 * place (uniform.ts); index past the end: undefined.
 */
export interface KeyTimes {
  readonly length: number;
  at(index: number): number | undefined;
}

/** One ring's merge keys, found without a pass when its times are the keys (all present, never decreasing: the usual ring). */
class RingKeys {
  private readonly keys: Float64Array | null;

  /** `sorted`: the times are all present and never decrease (known to the caller, or found by isSorted). */
  constructor(
    private readonly time: KeyTimes,
    private readonly amount: number,
    sorted: boolean,
  ) {
    if (sorted) {
      this.keys = null;
      return;
    }
    const keys = new Float64Array(time.length);
    const array = time instanceof Float64Array ? time : null;
    let k = -Infinity;
    for (let i = 0; i < time.length; i++) {
      const value = (array ? array[i] : (time.at(i) ?? NaN)) + amount;
      if (value === value && value > k) k = value;
      keys[i] = k;
    }
    this.keys = keys;
  }

  get count(): number {
    return this.time.length;
  }

  at(i: number): number {
    return this.keys ? this.keys[i] : (this.time.at(i) ?? NaN) + this.amount;
  }

  /** The number of rows whose key is below `key` (`orEqual`: at most `key`): keys never decrease, so a binary search. */
  rowsBelow(key: number, orEqual: boolean): number {
    let low = 0;
    let high = this.time.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const k = this.at(middle);
      if (k < key || (orEqual && k === key)) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** Rows sampled per ring and per slice to place the cuts: enough that slices differ by a few percent of a share at most. */
const SAMPLES_PER_SLICE = 64;

/**
 * Cuts the merge of `sources` into `parts` slices of about equal rows, in output order: merging
 * each slice (mergeRuns with it) and writing it at its `at` gives exactly the whole merge. The cuts
 * are rows picked from evenly spaced samples of every ring, weighted by how many rows each stands
 * for; each ring is cut where the rows before the cut row in the merge order end, found by binary
 * search on its keys (a ring whose times are not already its keys gets them in one pass).
 *
 * A slice's merge starts each ring's key afresh, as at the ring's first row, without the key of the
 * row before the cut, and still orders its rows as the whole merge does: every row before a cut has
 * a key at most the cut row's key K, and every row after it at least K, so only rows of key exactly
 * K can start lower (a row without a time, or a time below the one before it), and those are rows
 * of the cut row's own ring (a lower ring's rows of key K are before the cut, a higher ring's rows
 * before it are below K), which come first in the slice either way.
 */
export function mergeSlices(sources: readonly RingRows[], shift: ArrayLike<number>, parts: number): MergeSlice[] {
  return mergeSlicesOfTimes(
    sources.map((rows) => rows.set.time.subarray(rows.first, rows.first + rows.count)),
    shift,
    parts,
  );
}

/**
 * mergeSlices over each ring's times alone (ring r's rows are times[r], oldest first). `sorted[r]`
 * true: ring r's times are known to be all present and never decreasing (not checked again; times
 * not in an array must be).
 */
export function mergeSlicesOfTimes(times: readonly KeyTimes[], shift: ArrayLike<number>, parts: number, sorted?: readonly boolean[]): MergeSlice[] {
  const ringCount = times.length;
  const rings = times.map((time, r) => new RingKeys(time, shift[r], sorted?.[r] === true || (time instanceof Float64Array && isSorted(time))));
  let total = 0;
  for (const time of times) total += time.length;
  interface Sampled {
    key: number;
    ring: number;
    row: number;
    weight: number;
  }
  const samples: Sampled[] = [];
  const perRing = SAMPLES_PER_SLICE * parts;
  rings.forEach((keys, r) => {
    const count = keys.count;
    const taken = Math.min(count, perRing);
    for (let j = 0; j < taken; j++) {
      const row = Math.floor((j * count) / taken);
      const next = Math.floor(((j + 1) * count) / taken);
      samples.push({ key: keys.at(row), ring: r, row, weight: next - row });
    }
  });
  samples.sort((a, b) => a.key - b.key || a.ring - b.ring || a.row - b.row);
  // Cut j: the rows of the merge order before the sample where the running weight reaches j shares.
  const cuts: number[][] = [new Array<number>(ringCount).fill(0)];
  let s = 0;
  let weight = 0;
  for (let j = 1; j < parts; j++) {
    const target = (total * j) / parts;
    while (s < samples.length && weight + samples[s].weight <= target) weight += samples[s++].weight;
    if (s >= samples.length) {
      cuts.push(times.map((time) => time.length));
      continue;
    }
    const cut = samples[s];
    cuts.push(rings.map((keys, r) => (r === cut.ring ? cut.row : keys.rowsBelow(cut.key, r < cut.ring))));
  }
  cuts.push(times.map((time) => time.length));
  const slices: MergeSlice[] = [];
  for (let j = 0; j < parts; j++) {
    let at = 0;
    for (const row of cuts[j]) at += row;
    slices.push({ from: cuts[j], to: cuts[j + 1], at });
  }
  return slices;
}

/** Copies `length` rows of `source` from row `from` to row `to` of `out`, adding `amount` to their times. */
export function copyShifted(out: ColumnSet, to: number, source: ColumnSet, from: number, length: number, amount: number): void {
  if (length >= 32) {
    // Long runs: one native copy per column, then the time moved onto the origin.
    out.copyRows(source, from, length, to);
    if (amount !== 0) addToRange(out.time, to, to + length, amount);
    return;
  }
  // Short runs: every column of the schema, each through the set's view of its width (FlatColumns),
  // so each loop below sees one array type whatever the column.
  const src = source.flat();
  const dst = out.flat();
  for (const name of RECORD_COLUMN_NAMES) {
    const a = src.at[name] + from;
    const b = dst.at[name] + to;
    switch (COLUMN_WIDTH[name]) {
      case 8: {
        const shifted = name === 'time' ? amount : 0;
        for (let j = 0; j < length; j++) dst.f64[b + j] = src.f64[a + j] + shifted;
        break;
      }
      case 4:
        for (let j = 0; j < length; j++) dst.u32[b + j] = src.u32[a + j];
        break;
      case 2:
        for (let j = 0; j < length; j++) dst.u16[b + j] = src.u16[a + j];
        break;
      default:
        for (let j = 0; j < length; j++) dst.u8[b + j] = src.u8[a + j];
    }
  }
}

function runsOf(sources: readonly RingRows[], shift: ArrayLike<number>, slice?: MergeSlice): MergeRuns {
  return mergeRuns(
    sources.map((rows) => rows.set.time.subarray(rows.first, rows.first + rows.count)),
    sources.map((rows) => rows.count),
    shift,
    slice,
  );
}

/**
 * Writes one slice of the merge of `sources` (mergeSlices) to its rows of `out`, times moved onto
 * the global origin. Column by column over the runs rather than row by row: per-CPU rings
 * interleave in runs of a few rows, and one tight loop per column took 1-36% less CPU time than
 * writing the 11 columns of each row in turn (five paired runs, two and sixteen rings of 64 MiB in
 * all, runs of 8 rows, on the loaded 2-vCPU bench VM).
 */
export function mergeSliceInto(out: ColumnSet, sources: readonly RingRows[], shift: ArrayLike<number>, slice: MergeSlice): void {
  const runs = runsOf(sources, shift, slice);
  const target = out.flat();
  const flats = sources.map((rows) => rows.set.flat());
  const starts = new Array<number>(sources.length);
  // Every column of the schema, each through the views of its width (FlatColumns): one gather per
  // width, so each sees one array type whatever the column. Only `time` is moved onto the origin.
  for (const name of RECORD_COLUMN_NAMES) {
    for (let r = 0; r < sources.length; r++) starts[r] = flats[r].at[name] + sources[r].first;
    const to = target.at[name] + slice.at;
    switch (COLUMN_WIDTH[name]) {
      case 8:
        gather64(
          target.f64,
          flats.map((flat) => flat.f64),
          name === 'time' ? shift : null,
          runs,
          starts,
          to,
        );
        break;
      case 4:
        gather32(
          target.u32,
          flats.map((flat) => flat.u32),
          runs,
          starts,
          to,
        );
        break;
      case 2:
        gather16(
          target.u16,
          flats.map((flat) => flat.u16),
          runs,
          starts,
          to,
        );
        break;
      default:
        gather8(
          target.u8,
          flats.map((flat) => flat.u8),
          runs,
          starts,
          to,
        );
    }
  }
}

// One gather per element width, the same body each time: V8 keeps element-access feedback per
// function, so one shared generic body would see four array types and run far slower. Runs of
// LONG_RUN rows and more are one native copy each.
const LONG_RUN = 64;

function gather64(
  out: Float64Array,
  sources: readonly Float64Array[],
  shift: ArrayLike<number> | null,
  runs: MergeRuns,
  starts: readonly number[],
  at: number,
): void {
  let to = at;
  for (let k = 0; k < runs.count; k++) {
    const r = runs.ring[k];
    const source = sources[r];
    const amount = shift ? shift[r] : 0;
    const from = starts[r] + runs.from[k];
    const length = runs.length[k];
    if (length >= LONG_RUN) {
      out.set(source.subarray(from, from + length), to);
      if (amount !== 0) addToRange(out, to, to + length, amount);
    } else {
      for (let j = 0; j < length; j++) out[to + j] = source[from + j] + amount;
    }
    to += length;
  }
}

function gather8(out: Uint8Array, sources: readonly Uint8Array[], runs: MergeRuns, starts: readonly number[], at: number): void {
  let to = at;
  for (let k = 0; k < runs.count; k++) {
    const source = sources[runs.ring[k]];
    const from = starts[runs.ring[k]] + runs.from[k];
    const length = runs.length[k];
    if (length >= LONG_RUN) out.set(source.subarray(from, from + length), to);
    else for (let j = 0; j < length; j++) out[to + j] = source[from + j];
    to += length;
  }
}

function gather16(out: Uint16Array, sources: readonly Uint16Array[], runs: MergeRuns, starts: readonly number[], at: number): void {
  let to = at;
  for (let k = 0; k < runs.count; k++) {
    const source = sources[runs.ring[k]];
    const from = starts[runs.ring[k]] + runs.from[k];
    const length = runs.length[k];
    if (length >= LONG_RUN) out.set(source.subarray(from, from + length), to);
    else for (let j = 0; j < length; j++) out[to + j] = source[from + j];
    to += length;
  }
}

function gather32(out: Uint32Array, sources: readonly Uint32Array[], runs: MergeRuns, starts: readonly number[], at: number): void {
  let to = at;
  for (let k = 0; k < runs.count; k++) {
    const source = sources[runs.ring[k]];
    const from = starts[runs.ring[k]] + runs.from[k];
    const length = runs.length[k];
    if (length >= LONG_RUN) out.set(source.subarray(from, from + length), to);
    else for (let j = 0; j < length; j++) out[to + j] = source[from + j];
    to += length;
  }
}

/** The rings' rows in merge order, in fresh columns, times moved onto the global origin. */
export function mergedCopy(sources: readonly RingRows[], shift: Float64Array, total: number, sets: SetSource): ColumnSet {
  const out = sets.take(total);
  mergeSliceInto(out, sources, shift, { from: new Array<number>(sources.length).fill(0), to: sources.map((rows) => rows.count), at: 0 });
  return out;
}

/**
 * The merge written into the largest ring's own arrays, when the room left below its rows (a
 * backward ring's estimate slack) holds every other ring's rows: no fresh columns. The output
 * rows start that many rows below the host's; writing never overtakes reading, since the output
 * position is at most the host's read position. When the side-band comes first (the usual case)
 * the host's rows stay where they are. Null when there is not enough room.
 */
export function mergedInPlace(sources: readonly RingRows[], shift: Float64Array, total: number): RingRows | null {
  let host = 0;
  for (let r = 1; r < sources.length; r++) if (sources[r].count > sources[host].count) host = r;
  const { set, first } = sources[host];
  const others = total - sources[host].count;
  if (first < others) return null;
  const runs = runsOf(sources, shift);
  const start = first - others;
  let to = start;
  for (let run = 0; run < runs.count; run++) {
    const r = runs.ring[run];
    const length = runs.length[run];
    if (r === host) {
      const from = first + runs.from[run];
      if (from !== to) set.moveRows(from, length, to);
      if (shift[r] !== 0) addToRange(set.time, to, to + length, shift[r]);
    } else {
      copyShifted(set, to, sources[r].set, sources[r].first + runs.from[run], length, shift[r]);
    }
    to += length;
  }
  return { set, first: start, count: total };
}
