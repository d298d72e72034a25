// Stepping through the records the filter shows, in time order (ties by row), as Enter / Shift+Enter in the filter
// box do, and where the selected record stands among them ("3 of 24"). Pure: lanes of row ids sorted by time in,
// positions out. The lanes given must hold each shown row once (see Timeline.countedLanes).

import { bisectLeft, bisectRight } from './hit-test';

export interface SearchLane {
  readonly rows: Uint32Array;
}

/** A record's place in the order: its time, then its row. */
export interface SearchPoint {
  readonly time: number;
  readonly row: number;
}

const before = (t: number, r: number, p: SearchPoint) => t < p.time || (t === p.time && r < p.row);

/**
 * The first row after `from` (direction 1) or the last before it (-1), over all lanes, as a lane index and position;
 * from the start (or the end) when `from` is null, and wrapping around past the last (or first). Null when no lane
 * has rows.
 */
export function stepMatch(lanes: readonly SearchLane[], time: Float64Array, from: SearchPoint | null, direction: 1 | -1): { lane: number; pos: number } | null {
  const found = scan(lanes, time, from, direction);
  return found ?? (from === null ? null : scan(lanes, time, null, direction));
}

function scan(lanes: readonly SearchLane[], time: Float64Array, from: SearchPoint | null, direction: 1 | -1): { lane: number; pos: number } | null {
  let best: { lane: number; pos: number; time: number; row: number } | null = null;
  lanes.forEach((lane, li) => {
    const rows = lane.rows;
    if (rows.length === 0) return;
    let pos: number;
    if (direction === 1) {
      if (from === null) pos = 0;
      else {
        // The first row after `from`: past the rows of earlier times, and past rows of the same time up to its row.
        pos = bisectLeft(time, rows, from.time);
        const sameEnd = bisectRight(time, rows, from.time, pos);
        while (pos < sameEnd && rows[pos] <= from.row) pos++;
      }
      if (pos >= rows.length) return;
      const t = time[rows[pos]];
      if (!best || before(t, rows[pos], best)) best = { lane: li, pos, time: t, row: rows[pos] };
    } else {
      if (from === null) pos = rows.length - 1;
      else {
        pos = bisectRight(time, rows, from.time) - 1;
        const sameStart = bisectLeft(time, rows, from.time);
        while (pos >= sameStart && rows[pos] >= from.row) pos--;
      }
      if (pos < 0) return;
      const t = time[rows[pos]];
      if (!best || before(best.time, best.row, { time: t, row: rows[pos] })) best = { lane: li, pos, time: t, row: rows[pos] };
    }
  });
  return best === null ? null : { lane: (best as { lane: number }).lane, pos: (best as { pos: number }).pos };
}

/** How many rows of all lanes come at or before `at` in the order: the 1-based place of `at` when it is one of them. */
export function matchIndex(lanes: readonly SearchLane[], time: Float64Array, at: SearchPoint): number {
  let n = 0;
  for (const lane of lanes) {
    const rows = lane.rows;
    let pos = bisectLeft(time, rows, at.time);
    const sameEnd = bisectRight(time, rows, at.time, pos);
    while (pos < sameEnd && rows[pos] <= at.row) pos++;
    n += pos;
  }
  return n;
}
