import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../abi/uapi';
import { ColumnArena } from './arena';
import { decodeSnapshot, type SnapshotInput } from './columns';
import { COLUMN_BYTES_PER_ROW } from './column-schema';
import { attrOf, ByteWriter, columnDifferences, eventOf, otherRecord, prng, recordByRecordMismatches, ringFromRecords, sampleRecord } from './test-records';
import type { RecordColumns } from './types';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
/** A second event without IP (its rows must read ip 0 even in reused memory) and with a RAW tail. */
const NO_IP = Sample.IDENTIFIER | Sample.TID | Sample.TIME | Sample.RAW;
const SIDE = Sample.IDENTIFIER | Sample.TID | Sample.TIME;

/**
 * A seeded snapshot like a per-CPU recording: 1-6 flight-recorder rings (some wrapped, record
 * sizes mixed so the size estimate is crossed) with samples of two events, and a forward side-band
 * ring of COMM and LOST records with sample_id_all trailers, all interleaved in time.
 */
function randomSnapshot(seed: number): SnapshotInput {
  const random = prng(seed);
  const events = [
    eventOf(0, attrOf(HOT, { flags: { sampleIdAll: true } }), [11n, 12n], 'hot'),
    eventOf(1, attrOf(NO_IP, { flags: { sampleIdAll: true } }), [21n], 'raw'),
    eventOf(2, attrOf(SIDE, { flags: { sampleIdAll: true } }), [31n], 'side'),
  ];
  const base = 0xfffff000n + BigInt(Math.floor(random() * 1e6));
  const ringCount = 1 + Math.floor(random() * 6);
  const rings = [];
  for (let r = 0; r < ringCount; r++) {
    const count = Math.floor(random() * 400);
    let time = base + BigInt(Math.floor(random() * 50));
    const records: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      time += BigInt(1 + Math.floor(random() * 40));
      if (random() < 0.3) {
        const tail = new ByteWriter().u32(4 + 8 * Math.floor(random() * 4)).raw(new Uint8Array(32)).toBytes();
        const raw = tail.subarray(0, 4 + new DataView(tail.buffer).getUint32(0, true));
        records.push(sampleRecord(NO_IP, { id: 21n, pid: 100 + r, tid: 200 + i, time, tail: new ByteWriter().raw(raw).pad8().toBytes() }));
      } else {
        records.push(sampleRecord(HOT, { id: random() < 0.5 ? 11n : 12n, ip: 0xffffffff81000000n + BigInt(i), pid: 100 + r, tid: 200 + i, time, cpu: r, period: 1n }));
      }
    }
    const dataSize = random() < 0.5 ? 4096 : 1 << 15;
    rings.push(ringFromRecords(records, dataSize, 'backward', { ringId: r, cpu: r }));
  }
  const side: Uint8Array[] = [];
  let time = base;
  for (let i = 0; i < Math.floor(random() * 30); i++) {
    time += BigInt(1 + Math.floor(random() * 400));
    if (random() < 0.2) {
      side.push(otherRecord(RecordType.LOST, 0, new ByteWriter().u64(31n).u64(3n).toBytes(), SIDE, true, { pid: 1, tid: 1, time, id: 31n }));
    } else {
      side.push(otherRecord(RecordType.COMM, 0, new ByteWriter().u32(5).u32(5).cstring(`task${i}`).toBytes(), SIDE, true, { pid: 5, tid: 5, time, id: 31n }));
    }
  }
  rings.push(ringFromRecords(side, 1 << 14, 'forward', { ringId: ringCount, defaultEvent: 2 }));
  return { events, rings };
}

/** A deep copy of columns, to check later that nobody wrote into them. */
function copyOf(columns: RecordColumns): RecordColumns {
  return {
    length: columns.length, timeOriginNs: columns.timeOriginNs,
    time: columns.time.slice(), kind: columns.kind.slice(), misc: columns.misc.slice(), event: columns.event.slice(),
    pid: columns.pid.slice(), tid: columns.tid.slice(), cpu: columns.cpu.slice(), ipHi: columns.ipHi.slice(), ipLo: columns.ipLo.slice(),
    ring: columns.ring.slice(), offset: columns.offset.slice(),
  };
}

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
    const small = { events: randomSnapshot(3).events, rings: [ringFromRecords(Array.from({ length: 100 }, (_, i) => sampleRecord(HOT, { id: 11n, ip: 1n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n })), 8192, 'backward')] };
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
    const big = { events: small.events, rings: [ringFromRecords(Array.from({ length: 2000 }, (_, i) => sampleRecord(HOT, { id: 11n, ip: 1n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n })), 1 << 17, 'backward')] };
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
