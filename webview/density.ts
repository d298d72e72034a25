// Per-pixel density binning: at wide zoom a lane is drawn as one fill per pixel column, so a
// million records cost at most `width` fills instead of a million.

import { visibleRange } from './hitTest';

/**
 * Count the lane's records per pixel column over the window [t0, t1] mapped onto `width`
 * columns. Returns the counts and the largest count (for normalising intensity).
 */
export function binDensity(times: Float64Array, rows: Uint32Array, t0: number, t1: number, width: number,
  into?: Uint32Array): { counts: Uint32Array; max: number; total: number } {
  const columns = Math.max(1, Math.floor(width));
  const counts = into && into.length >= columns ? into.subarray(0, columns) : new Uint32Array(columns);
  counts.fill(0);
  const span = t1 - t0;
  if (!(span > 0)) return { counts, max: 0, total: 0 };
  const [start, end] = visibleRange(times, rows, t0, t1);
  const scale = columns / span;
  let max = 0;
  for (let i = start; i < end; i++) {
    let x = Math.floor((times[rows[i]] - t0) * scale);
    if (x >= columns) x = columns - 1; // t == t1 lands on the last column
    const c = ++counts[x];
    if (c > max) max = c;
  }
  return { counts, max, total: end - start };
}

/** Fill intensity for a count: logarithmic so a lone record stays visible next to a dense burst. */
export function densityAlpha(count: number, max: number): number {
  if (count <= 0 || max <= 0) return 0;
  return 0.25 + 0.75 * (Math.log1p(count) / Math.log1p(max));
}
