// Per-pixel density binning: at wide zoom a lane is drawn as one fill per pixel column, so a
// million records cost at most `width` fills instead of a million.

import { visibleRange } from './hit-test';

/**
 * Above this many visible records per pixel column, each column's records are counted as one
 * index range found by bisection (about log2(n) steps per column) instead of visiting every record:
 * at a million records and 1,280 columns that is ~25k steps instead of 1M.
 */
const BISECT_ABOVE_RECORDS_PER_COLUMN = 64;

/**
 * Count the lane's records per pixel column over the window [t0, t1] mapped onto `width`
 * columns. Returns the counts and the largest count (for normalising intensity).
 */
export function binDensity(
  times: Float64Array,
  rows: Uint32Array,
  t0: number,
  t1: number,
  width: number,
  into?: Uint32Array,
): { counts: Uint32Array; max: number; total: number } {
  const columns = Math.max(1, Math.floor(width));
  const counts = into && into.length >= columns ? into.subarray(0, columns) : new Uint32Array(columns);
  counts.fill(0);
  const span = t1 - t0;
  if (!(span > 0)) return { counts, max: 0, total: 0 };
  const [start, end] = visibleRange(times, rows, t0, t1);
  const scale = columns / span;
  // Each way of counting is a function of its own: a frame that first takes one of them (a zoom that crosses
  // BISECT_ABOVE_RECORDS_PER_COLUMN) runs it cold, and a small function with its loop alone is compiled within that frame.
  const max =
    end - start > columns * BISECT_ABOVE_RECORDS_PER_COLUMN
      ? countByBisection(times, rows, start, end, t0, scale, counts)
      : countEachRecord(times, rows, start, end, t0, scale, counts);
  return { counts, max, total: end - start };
}

// The mapping from time to column both ways use, so they give identical counts, is written out in each probe (the
// same expression everywhere: Math.floor((time - t0) * scale), the last column holding t == t1): a call per probe or
// per record is what a cold frame pays most for.

/**
 * Counts by bisection: rows are sorted by time and the column never decreases along them, so each column's records are
 * one contiguous range. Its end is first looked for where the previous column's count puts it (at wide zoom
 * neighbouring columns hold about as many records): two neighbouring probes when that is right, else a gallop up or
 * down from there and a bisection of what it bracketed. Every probe of a million-row lane is a cache miss (rows and
 * times), so probes are what this costs. Returns the largest count.
 */
function countByBisection(times: Float64Array, rows: Uint32Array, start: number, end: number, t0: number, scale: number, counts: Uint32Array): number {
  const columns = counts.length;
  let max = 0;
  let guess = 1;
  for (let i = start; i < end;) {
    let x = Math.floor((times[rows[i]] - t0) * scale);
    if (x >= columns) x = columns - 1;
    // Find the first position in (i, end] whose column is past x (end: none), bracketed in [lo, hi].
    let lo = i + 1;
    let hi = Math.min(i + guess, end);
    let at = hi < end ? Math.floor((times[rows[hi]] - t0) * scale) : columns;
    if (at >= columns) at = columns - 1;
    if (hi < end && at <= x) {
      // The column holds more records than the previous one: gallop up.
      lo = hi + 1;
      for (let step = 1; ; step *= 2) {
        hi = lo + step - 1;
        if (hi >= end) {
          hi = end;
          break;
        }
        at = Math.floor((times[rows[hi]] - t0) * scale);
        if (at >= columns) at = columns - 1;
        if (at > x) break;
        lo = hi + 1;
      }
    } else if (hi < end) {
      // As many or fewer: gallop down while the probe is still past x.
      for (let step = 1; hi - step >= lo; step *= 2) {
        at = Math.floor((times[rows[hi - step]] - t0) * scale);
        if (at >= columns) at = columns - 1;
        if (at <= x) {
          lo = hi - step + 1;
          break;
        }
        hi -= step;
      }
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      at = Math.floor((times[rows[mid]] - t0) * scale);
      if (at >= columns) at = columns - 1;
      if (at > x) hi = mid;
      else lo = mid + 1;
    }
    const c = (counts[x] += lo - i);
    if (c > max) max = c;
    guess = lo - i;
    i = lo;
  }
  return max;
}

/** Counts record by record (few records per column). Returns the largest count. */
function countEachRecord(times: Float64Array, rows: Uint32Array, start: number, end: number, t0: number, scale: number, counts: Uint32Array): number {
  const last = counts.length - 1;
  let max = 0;
  for (let i = start; i < end; i++) {
    const x = Math.floor((times[rows[i]] - t0) * scale);
    const c = ++counts[x > last ? last : x];
    if (c > max) max = c;
  }
  return max;
}
