import * as assert from 'node:assert/strict';
import { ByteColumn, forEachThreadRun } from './column-search';

/** The first row of every run of equal (pid, tid), one row at a time: what forEachThreadRun must find. */
function runStartsOneByOne(pid: Int32Array, tid: Int32Array, length: number): number[] {
  const starts: number[] = [];
  for (let row = 0; row < length; row++) if (row === 0 || pid[row] !== pid[row - 1] || tid[row] !== tid[row - 1]) starts.push(row);
  return starts;
}

function runStarts(pid: Int32Array, tid: Int32Array, length = pid.length): number[] {
  const starts: number[] = [];
  forEachThreadRun(pid, tid, length, (row) => starts.push(row));
  return starts;
}

/** Columns of `length` rows with a thread change before each row of `changes` (the pid, the tid or both, by turns). */
function columnsChangingAt(length: number, changes: readonly number[], buffer?: ArrayBufferLike): { pid: Int32Array; tid: Int32Array } {
  const backing = buffer ?? new ArrayBuffer((2 * length + 6) * 4);
  // Views that start past their buffer's first byte, as a snapshot's first rows or a column set's columns do.
  const pid = new Int32Array(backing, 4, length);
  const tid = new Int32Array(backing, (length + 3) * 4, length);
  let p = 100;
  let t = 100;
  let turn = 0;
  let next = 0;
  for (let row = 0; row < length; row++) {
    if (next < changes.length && changes[next] === row) {
      next++;
      turn++;
      if (turn % 3 !== 1) p++;
      if (turn % 3 !== 2) t++;
    }
    pid[row] = p;
    tid[row] = t;
  }
  return { pid, tid };
}

describe('column search', () => {
  it('finds every run of one thread, at and around the block edges and at the end', () => {
    const length = 10_000;
    // Changes one row apart, at a run's first block edge and next to it, inside and at the edges of later blocks, and
    // on the last row (the last block is partial).
    const changes = [1, 2, 3, 1027, 1028, 2053, 2054, 3077, 5000, 5001, 6025, 6026, 8000, 9216, 9999];
    const { pid, tid } = columnsChangingAt(length, changes);
    const expected = runStartsOneByOne(pid, tid, length);
    assert.deepEqual(expected, [0, ...changes]);
    assert.deepEqual(runStarts(pid, tid), expected);
  });

  it('finds the changes of runs longer than its largest block, wherever they fall in it', () => {
    const length = 400_000;
    // After runs of 70k, 263k and 67k rows (blocks double to 64k rows and halve around each change), one row apart,
    // and on the last row.
    const changes = [70_001, 70_002, 333_333, 333_334 + 65_536, 399_999];
    const { pid, tid } = columnsChangingAt(length, changes);
    assert.deepEqual(runStarts(pid, tid), [0, ...changes]);
    for (const prefix of [70_001, 70_002, 200_000, 333_334 + 65_536 + 1]) {
      assert.deepEqual(runStarts(pid, tid, prefix), runStartsOneByOne(pid, tid, prefix), `first ${prefix} rows`);
    }
  });

  it('sees a change of the pid alone and of the tid alone inside a long run', () => {
    for (const change of [1500, 2047, 4096, 100_000, 199_999]) {
      for (const column of ['pid', 'tid'] as const) {
        const { pid, tid } = columnsChangingAt(200_001, []);
        (column === 'pid' ? pid : tid)[change] = 7;
        assert.deepEqual(runStarts(pid, tid), [0, change, change + 1], `${column} changed at row ${change}`);
      }
    }
  });

  it('agrees with a row-by-row pass on runs of every length, in shared memory too', () => {
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (let trial = 0; trial < 40; trial++) {
      const length = 1 + random(20_000);
      const changes: number[] = [];
      for (let row = 1 + random(3000); row < length; row += 1 + random(trial % 2 === 0 ? 3000 : 5)) changes.push(row);
      const shared = trial % 4 === 3 ? new SharedArrayBuffer((2 * length + 6) * 4) : undefined;
      const { pid, tid } = columnsChangingAt(length, changes, shared);
      assert.deepEqual(runStarts(pid, tid), runStartsOneByOne(pid, tid, length), `trial ${trial}: ${length} rows`);
      // The first rows only (a snapshot's prefix: the columns are longer than its rows).
      const prefix = random(length + 1);
      assert.deepEqual(runStarts(pid, tid, prefix), runStartsOneByOne(pid, tid, prefix), `trial ${trial}: first ${prefix} rows`);
    }
  });

  it('visits nothing for no rows and refuses more rows than the columns hold', () => {
    assert.deepEqual(runStarts(new Int32Array(0), new Int32Array(0)), []);
    assert.throws(() => runStarts(new Int32Array(3), new Int32Array(2), 3), RangeError);
  });

  it('finds byte values forwards and backwards in its own rows only', () => {
    const backing = new Uint8Array([9, 3, 1, 2, 9, 3, 9, 7]);
    const kinds = new ByteColumn(backing.subarray(1, 6)); // 3 1 2 9 3
    assert.equal(kinds.indexOf(3), 0);
    assert.equal(kinds.indexOf(3, 1), 4);
    assert.equal(kinds.indexOf(7), -1); // past its rows
    assert.equal(kinds.lastIndexOf(9), 3);
    assert.equal(kinds.lastIndexOf(3), 4);
    assert.equal(kinds.lastIndexOf(7), -1);
    // A value no byte holds is nowhere (not taken modulo 256).
    assert.equal(kinds.indexOf(3 + 256), -1);
    assert.equal(kinds.lastIndexOf(9 + 256), -1);
    assert.equal(kinds.indexOf(-253), -1);
  });
});
