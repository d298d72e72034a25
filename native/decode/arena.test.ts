import * as assert from 'node:assert/strict';
import { Sample } from '../abi/uapi';
import { ColumnArena } from './arena';
import { decodeSnapshot } from './columns';
import { COLUMN_BYTES_PER_ROW, RECORD_COLUMN_NAMES } from './column-schema';
import { ColumnSet } from './column-set';
import { columnDifferences, randomPerCpuSnapshot as randomSnapshot, recordByRecordMismatches, ringFromRecords, sampleRecord } from './test-records';
import type { RecordColumns } from './types';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;

/** A deep copy of columns, to check later that nobody wrote into them. */
function copyOf(columns: RecordColumns): RecordColumns {
  const copy = new ColumnSet(columns.length);
  for (const name of RECORD_COLUMN_NAMES) (copy[name] as { set(values: ArrayLike<number>): void }).set(columns[name]);
  return copy.toColumns(columns.timeOriginNs);
}

describe('decode/column-set', () => {
  it('swaps two rows in every column, whatever its width and sign, and nothing else', () => {
    for (const rows of [3, 5000]) {
      // packed and staggered layouts
      const set = new ColumnSet(rows);
      const value = (name: string, row: number) => -(row * 100 + RECORD_COLUMN_NAMES.indexOf(name as never) + 1);
      for (const name of RECORD_COLUMN_NAMES) {
        const column = set[name] as { [row: number]: number };
        for (let row = 0; row < rows; row++) column[row] = value(name, row);
      }
      const before = RECORD_COLUMN_NAMES.map((name) => Array.from(set[name] as ArrayLike<number>));
      set.swapRows(1, 2);
      RECORD_COLUMN_NAMES.forEach((name, k) => {
        const want = [...before[k]];
        [want[1], want[2]] = [want[2], want[1]];
        assert.deepEqual(Array.from(set[name] as ArrayLike<number>), want, `${name} (${rows} rows)`);
      });
    }
  });
});

describe('decode/arena', () => {
  it('decodes exactly what fresh columns hold, snapshot after snapshot in reused (dirty) memory, and agrees with the record-by-record path', () => {
    const arena = new ColumnArena();
    let previous: RecordColumns | null = null;
    let reused = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const input = randomSnapshot(seed);
      const fresh = decodeSnapshot(input);
      const pooledBefore = arena.pooledSets;
      const fromArena = decodeSnapshot(input, { arena });
      if (pooledBefore > 0 && arena.pooledSets < pooledBefore) reused++;
      assert.deepEqual(columnDifferences(fromArena.columns, fresh.columns), [], `seed ${seed}`);
      assert.deepEqual(fromArena.coverage, fresh.coverage, `seed ${seed}`);
      assert.deepEqual(fromArena.anomalies, fresh.anomalies, `seed ${seed}`);
      assert.deepEqual(recordByRecordMismatches(fromArena), [], `seed ${seed}`);
      // Hand the previous snapshot back (its memory then holds stale rows), warm some seeds only.
      if (previous) assert.equal(arena.recycle(previous), previous.length > 0);
      if (seed % 3 === 0) arena.warm();
      previous = fromArena.columns;
    }
    assert.ok(reused > 100, `the arena's sets were reused in ${reused} of 150 snapshots`);
  });

  it('never writes into columns a consumer still holds; reuses them only once handed back', () => {
    const arena = new ColumnArena();
    const first = decodeSnapshot(randomSnapshot(7), { arena }).columns;
    const kept = copyOf(first);
    arena.warm(); // prepares memory for the next snapshot: new memory, since `first` is still held
    for (let seed = 8; seed < 20; seed++) {
      const later = decodeSnapshot(randomSnapshot(seed), { arena }).columns;
      assert.ok(later.time.buffer !== first.time.buffer);
      assert.equal(arena.recycle(later), true);
    }
    assert.deepEqual(columnDifferences(first, kept), [], 'a held snapshot was overwritten');
    assert.equal(arena.recycle(first), true);
    assert.equal(arena.recycle(first), false, 'handing back twice is refused');
    assert.equal(arena.recycle(decodeSnapshot(randomSnapshot(7)).columns), false, 'columns from elsewhere are refused');
  });

  it('warms, while idle, as much memory as the last snapshot took, grows only for a bigger snapshot, and hands it to the next one', () => {
    const arena = new ColumnArena();
    assert.equal(arena.warm(), true, 'nothing asked yet: nothing to prepare');
    const small = {
      events: randomSnapshot(3).events,
      rings: [
        ringFromRecords(
          Array.from({ length: 100 }, (_, i) => sampleRecord(HOT, { id: 11n, ip: 1n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n })),
          8192,
          'backward',
        ),
      ],
    };
    decodeSnapshot(small, { arena });
    assert.equal(arena.ready, false);
    assert.equal(arena.warm(1), false, 'a budget of one byte leaves most pages cold');
    assert.equal(arena.warm(), true);
    assert.equal(arena.pooledSets, 1);
    const pooled = arena.pooledBytes;
    assert.ok(pooled >= 100 * COLUMN_BYTES_PER_ROW);
    const next = decodeSnapshot(small, { arena });
    assert.equal(arena.pooledSets, 0, 'the warm set was taken');
    assert.equal(next.columns.time.buffer.byteLength, pooled);
    // Handed back: the next snapshot lands in that very memory.
    const nextBuffer = next.columns.time.buffer;
    assert.equal(arena.recycle(next.columns), true);
    const third = decodeSnapshot(small, { arena });
    assert.ok(third.columns.time.buffer === nextBuffer);
    assert.deepEqual(columnDifferences(third.columns, decodeSnapshot(small).columns), []);
    // A bigger snapshot: the pool grows to fit it and to nothing more.
    const big = {
      events: small.events,
      rings: [
        ringFromRecords(
          Array.from({ length: 2000 }, (_, i) => sampleRecord(HOT, { id: 11n, ip: 1n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n })),
          1 << 17,
          'backward',
        ),
      ],
    };
    arena.recycle(third.columns);
    decodeSnapshot(big, { arena });
    arena.warm();
    assert.equal(arena.pooledSets, 1, 'the small set nothing needs was dropped');
    assert.ok(arena.pooledBytes >= 2000 * COLUMN_BYTES_PER_ROW);
  });

  it('backs the columns with shared memory when asked (for decoding on worker threads)', () => {
    const arena = new ColumnArena({ shared: true });
    const columns = decodeSnapshot(randomSnapshot(5), { arena }).columns;
    assert.ok(columns.length > 0);
    assert.ok(columns.time.buffer instanceof SharedArrayBuffer);
  });
});
