// The merge of a snapshot's rings by time: each ring's rows are already in the kernel's write order
// (a sorted run), so the rings are merged with a k-way heap on the record time, emitting whole runs
// of one ring at a time. A record without a time (no PERF_SAMPLE_TIME, or a side-band record
// without sample_id_all) takes the merge key of the record before it in its ring (or sorts before
// everything when it is the first), so it stays next to its ring neighbours. The merge key never
// decreases inside one ring (running maximum), so each ring's own order is always preserved: the
// kernel's write order wins over tiny cross-CPU clock skews.

import { ColumnSet } from './column-set';
import type { RingRows, SetSource } from './decode-ring';

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
 * K-way merge of the rings' rows by merge key: the running maximum of time + shift[r] inside each
 * ring (no time keeps the previous key, -Infinity at first), ties to the lower ring number, so
 * each ring's own order is always kept. A binary heap picks the ring; it then keeps emitting from
 * that ring while it still beats the best other ring, so a large ring interleaved with a small
 * side-band ring costs a few heap operations, not one per row.
 */
export function mergeRuns(times: readonly Float64Array[], counts: readonly number[], shift: Float64Array): MergeRuns {
  const ringCount = times.length;
  let total = 0;
  for (const count of counts) total += count;
  const key = new Float64Array(ringCount);
  const next = new Int32Array(ringCount);
  const heap = new Int32Array(ringCount);
  let heapSize = 0;
  const less = (a: number, b: number): boolean => key[a] < key[b] || (key[a] === key[b] && a < b);
  const siftDown = (start: number) => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heapSize) return;
      let smallest = left;
      if (left + 1 < heapSize && less(heap[left + 1], heap[left])) smallest = left + 1;
      if (!less(heap[smallest], heap[i])) return;
      const tmp = heap[i];
      heap[i] = heap[smallest];
      heap[smallest] = tmp;
      i = smallest;
    }
  };
  for (let r = 0; r < ringCount; r++) {
    if (counts[r] <= 0) continue;
    const value = times[r][0] + shift[r];
    key[r] = value === value ? value : -Infinity;
    heap[heapSize++] = r;
  }
  for (let i = (heapSize >> 1) - 1; i >= 0; i--) siftDown(i);

  // At most one run per row; pages of these arrays that are never written cost nothing.
  const ring = new Uint32Array(total);
  const from = new Uint32Array(total);
  const length = new Uint32Array(total);
  let runs = 0;
  while (heapSize > 0) {
    const r = heap[0];
    let rival = -1;
    if (heapSize > 1) rival = heapSize > 2 && less(heap[2], heap[1]) ? heap[2] : heap[1];
    const rivalKey = rival >= 0 ? key[rival] : Infinity;
    const time = times[r];
    const stop = counts[r];
    const amount = shift[r];
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
    ring[runs] = r;
    from[runs] = start;
    length[runs] = i - start;
    runs++;
    next[r] = i;
    if (i >= stop) heap[0] = heap[--heapSize];
    else key[r] = k;
    siftDown(0);
  }
  return { ring, from, length, count: runs };
}

/** Copies `length` rows of `source` from row `from` to row `to` of `out`, adding `amount` to their times. */
function copyShifted(out: ColumnSet, to: number, source: ColumnSet, from: number, length: number, amount: number): void {
  if (length >= 32) {
    // Long runs: one native copy per column, then the time moved onto the origin.
    out.copyRows(source, from, length, to);
    if (amount !== 0) addToRange(out.time, to, to + length, amount);
    return;
  }
  for (let j = 0; j < length; j++) {
    const a = from + j;
    const b = to + j;
    out.time[b] = source.time[a] + amount;
    out.kind[b] = source.kind[a];
    out.misc[b] = source.misc[a];
    out.event[b] = source.event[a];
    out.pid[b] = source.pid[a];
    out.tid[b] = source.tid[a];
    out.cpu[b] = source.cpu[a];
    out.ipHi[b] = source.ipHi[a];
    out.ipLo[b] = source.ipLo[a];
    out.ring[b] = source.ring[a];
    out.offset[b] = source.offset[a];
  }
}

function runsOf(sources: readonly RingRows[], shift: Float64Array): MergeRuns {
  return mergeRuns(
    sources.map((rows) => rows.set.time.subarray(rows.first, rows.first + rows.count)),
    sources.map((rows) => rows.count),
    shift,
  );
}

/** The rings' rows in merge order, in fresh columns, times moved onto the global origin. */
export function merged(sources: readonly RingRows[], shift: Float64Array, total: number, sets: SetSource): ColumnSet {
  const runs = runsOf(sources, shift);
  const out = sets.take(total);
  let to = 0;
  for (let run = 0; run < runs.count; run++) {
    const r = runs.ring[run];
    copyShifted(out, to, sources[r].set, sources[r].first + runs.from[run], runs.length[run], shift[r]);
    to += runs.length[run];
  }
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
