import * as assert from 'node:assert/strict';
import { matchIndex, stepMatch, type SearchLane } from './search';

describe('stepping through shown records', () => {
  // Rows 0..6; times with a tie at 20 (rows 1 and 4 in different lanes, rows 2 and 3 in one lane).
  const time = Float64Array.from([10, 20, 30, 30, 20, 50, 40]);
  const lanes: SearchLane[] = [{ rows: Uint32Array.from([0, 1, 2, 3]) }, { rows: Uint32Array.from([4, 6, 5]) }, { rows: new Uint32Array(0) }];
  const order = [0, 1, 4, 2, 3, 6, 5]; // by time, ties by row
  const rowAt = (found: { lane: number; pos: number } | null) => (found === null ? -1 : lanes[found.lane].rows[found.pos]);

  it('walks every row once in time order (ties by row) with Enter, and back with Shift+Enter, wrapping around', () => {
    const forward: number[] = [];
    let at: number | null = null;
    for (let i = 0; i < order.length + 1; i++) {
      const row = rowAt(stepMatch(lanes, time, at === null ? null : { time: time[at], row: at }, 1));
      forward.push(row);
      at = row;
    }
    assert.deepEqual(forward, [...order, order[0]]);
    const backward: number[] = [];
    at = null;
    for (let i = 0; i < order.length + 1; i++) {
      const row = rowAt(stepMatch(lanes, time, at === null ? null : { time: time[at], row: at }, -1));
      backward.push(row);
      at = row;
    }
    assert.deepEqual(backward, [...[...order].reverse(), order[order.length - 1]]);
  });

  it('starts from a time when nothing is selected, and says where a record stands', () => {
    assert.equal(rowAt(stepMatch(lanes, time, { time: 25, row: -1 }, 1)), 2);
    assert.equal(rowAt(stepMatch(lanes, time, { time: 25, row: Number.MAX_SAFE_INTEGER }, -1)), 4);
    order.forEach((row, i) => assert.equal(matchIndex(lanes, time, { time: time[row], row }), i + 1, `row ${row}`));
    assert.equal(stepMatch([{ rows: new Uint32Array(0) }], time, null, 1), null);
  });
});
