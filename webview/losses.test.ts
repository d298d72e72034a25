import * as assert from 'node:assert/strict';
import { markAt, snapshotLossMarks, type LossSource } from './losses';
import type { CoverageFact } from '../shared/protocol';

const ORIGIN = 1_000_000n;

function coverage(label: string, oldest: number | null, overwritten: string): CoverageFact {
  return {
    ringId: 0,
    label,
    path: 'paused',
    dataSize: 4096,
    bytesWritten: String(4096 + Number(overwritten)),
    bytesOverwritten: overwritten,
    recordsRetained: 64,
    oldestTimeNs: oldest === null ? null : String(ORIGIN + BigInt(oldest)),
    newestTimeNs: null,
    lost: '0',
  };
}

describe('loss marks', () => {
  // Two snapshots: rows 0..4 (snapshot 0, times 10..50), rows 5..7 (snapshot 1, times 100..120).
  const time = Float64Array.from([10, 20, 30, 40, 50, 100, 110, 120]);
  const src: LossSource = {
    originNs: ORIGIN,
    time,
    snapshots: [
      {
        index: 0,
        name: 'first',
        minTime: 10,
        maxTime: 50,
        coverage: [coverage('cpu0', 10, '1024'), coverage('cpu1', 20, '0')],
        losses: [
          { row: 3, kind: 'LOST', lost: '12', ring: 'cpu0', sinceNs: String(ORIGIN + 20n) },
          { row: 0, kind: 'LOST_SAMPLES', lost: '1', ring: 'cpu1', sinceNs: null },
        ],
      },
      { index: 1, name: 'second', minTime: 100, maxTime: 120, coverage: [coverage('cpu0', 110, '64')], losses: [] },
    ],
    rangesOf: (i) => (i === 0 ? [[0, 5]] : [[5, 8]]),
    globalRowOf: (i, local) => (i === 0 ? local : 5 + local),
  };

  it("places a LOST record from its ring's previous record to itself, and says how many and why", () => {
    const [lost, samples, overwritten] = snapshotLossMarks(src, 0);
    assert.deepEqual([lost.start, lost.end, lost.row, lost.overwritten], [20, 40, 3, false]);
    assert.equal(lost.lines[0], '12 records lost in ring cpu0 (LOST)');
    assert.match(lost.lines[2], /paused while a snapshot was copied/);
    assert.deepEqual([samples.start, samples.end, samples.lines[0]], [10, 10, '1 sample lost in ring cpu1 (LOST_SAMPLES)']);
    // 1 KiB overwritten at 64 bytes per record kept (4096 / 64): about 16 records, before the oldest kept (row 0 at 10 ns).
    assert.deepEqual([overwritten.start, overwritten.end, overwritten.row, overwritten.overwritten], [-Infinity, 10, 0, true]);
    assert.equal(overwritten.lines[0], 'about 16 records, 1.0 KiB overwritten in ring cpu0');
  });

  it("starts a later snapshot's overwritten part at the end of the snapshot before it", () => {
    const [mark] = snapshotLossMarks(src, 1);
    assert.deepEqual([mark.start, mark.end, mark.row], [50, 110, 6]);
    assert.equal(mark.lines[0], 'about 1 record, 64 B overwritten in ring cpu0');
  });

  it('finds the narrowest mark under a time, with slack for marks drawn wider than they are', () => {
    const marks = snapshotLossMarks(src, 0);
    assert.equal(markAt(marks, 30, 0)?.lines[0], '12 records lost in ring cpu0 (LOST)');
    assert.equal(markAt(marks, 10, 0)?.row, 0);
    assert.equal(markAt(marks, 9, 2)?.lines[0], '1 sample lost in ring cpu1 (LOST_SAMPLES)', 'the zero-width mark is the narrowest');
    assert.equal(markAt(marks, 45, 1), null);
  });
});
