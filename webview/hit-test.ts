// Bisection over a lane's rows (row ids sorted by time): culling the visible window and finding
// the record under the pointer in O(log n), whatever the record count.

/** First position in `rows` whose time is >= t (times[rows[i]] must be non-decreasing). */
export function bisectLeft(times: Float64Array, rows: Uint32Array, t: number, lo = 0, hi = rows.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[rows[mid]] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First position in `rows` whose time is > t. */
export function bisectRight(times: Float64Array, rows: Uint32Array, t: number, lo = 0, hi = rows.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[rows[mid]] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** [start, end) positions of the rows whose time lies in [t0, t1]. */
export function visibleRange(times: Float64Array, rows: Uint32Array, t0: number, t1: number): [number, number] {
  const start = bisectLeft(times, rows, t0);
  return [start, bisectRight(times, rows, t1, start)];
}

/**
 * Position in `rows` of the record nearest to time t, if it is within `maxDistance` (ns); -1
 * otherwise. Ties go to the earlier record.
 */
export function nearestPosition(times: Float64Array, rows: Uint32Array, t: number, maxDistance: number): number {
  if (rows.length === 0) return -1;
  const i = bisectLeft(times, rows, t);
  let best = -1;
  let bestDistance = Infinity;
  for (const candidate of [i - 1, i]) {
    if (candidate < 0 || candidate >= rows.length) continue;
    const d = Math.abs(times[rows[candidate]] - t);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= maxDistance ? best : -1;
}
