import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { decodeScattered } from './scatter-plan';
import { ColumnArena } from './arena';
import { eventTables } from './decode-ring';
import { OTHER_RECORD, keyRing } from './scatter';
import { sharedKeyScratch, type KeyScratch } from './key-scratch';
import {
  attrOf,
  ByteWriter,
  columnByteDifferences,
  commRecord,
  eventOf,
  header,
  otherRecord,
  randomPerCpuSnapshot,
  recordByRecordMismatches,
  ringFromRecords,
  sampleRecord,
  throttleRecord,
} from './test-records';
import type { RingCopy } from '../abi/snapshot';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const NO_TIME = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.CPU;
const events = [eventOf(0, attrOf(HOT, { flags: { sampleIdAll: true } }), [11n]), eventOf(1, attrOf(NO_TIME), [21n])];
const tables = eventTables(events);
const hot = (i: number, time: bigint) => sampleRecord(HOT, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 2, time, cpu: 0, period: 1n });
const backward = (records: readonly Uint8Array[]): RingCopy => ringFromRecords(records, 1 << 16, 'backward', { ringId: 0, cpu: 0 });
const key = (ring: RingCopy, scratch: KeyScratch | null = null) => keyRing(ring, tables, scratch, sharedKeyScratch);

describe('decode/scatter: keying flight-recorder rings for the scatter decode', () => {
  it('keys a ring of timed samples oldest first: the single-thread times, offsets and walk end', () => {
    const ring = backward(Array.from({ length: 300 }, (_, i) => hot(i, 5000n + BigInt(3 * i))));
    const keyed = key(ring);
    assert.ok(keyed);
    const single = decodeSnapshot({ events, rings: [ring] });
    assert.equal(keyed.count, single.columns.length);
    const base = Number((BigInt(keyed.state.baseHi) << 32n) | BigInt(keyed.state.baseLo)) - Number(single.columns.timeOriginNs);
    for (let i = 0; i < keyed.count; i++) {
      assert.equal(keyed.scratch.time[keyed.first + i] + base, single.columns.time[i], `row ${i}`);
      assert.equal(keyed.scratch.offset[keyed.first + i], single.columns.offset[i], `row ${i}`);
      assert.equal(keyed.scratch.position[keyed.first + i], 0, `row ${i}`);
    }
    assert.deepEqual(keyed.anomalies, single.anomalies);
    assert.equal(keyed.state.anomalies, single.coverage[0].anomalies);
    assert.equal(keyed.onlyPosition, 0);
    assert.equal(keyed.sorted, true);
  });

  it('says whether its times are already the merge keys: all present and never decreasing, ties included', () => {
    const sortedOf = (times: readonly bigint[]) => key(backward(times.map((time, i) => hot(i, time))))?.sorted;
    assert.equal(sortedOf([10n, 20n, 20n, 30n]), true, 'equal neighbours');
    assert.equal(sortedOf([10n, 30n, 20n, 40n]), false, 'one time below the one before it');
    assert.equal(sortedOf([10n, 20n, 30n, 5n]), false, 'the newest below all');
    assert.equal(sortedOf([50n, 20n, 30n, 40n]), false, 'the oldest above all');
    assert.equal(sortedOf([7n]), true);
    // A sample without a time among timed ones: no key of its own, so the times are not the keys.
    const untimed = sampleRecord(NO_TIME, { id: 21n, ip: 1n, pid: 1, tid: 2, cpu: 0 });
    assert.equal(key(backward([hot(0, 10n), untimed, hot(1, 20n)]))?.sorted, false);
  });

  it('grows past the room the newest record suggests, keeping every key, and reuses scratch that is big enough', () => {
    // 900 small samples under one newest sample of over 1 KiB: the first estimate of the row count is far too small.
    const wide = [eventOf(0, attrOf(HOT, { flags: { sampleIdAll: true } }), [11n]), eventOf(1, attrOf(HOT | Sample.RAW), [12n])];
    const bigOf = sampleRecord(HOT | Sample.RAW, {
      id: 12n,
      ip: 1n,
      pid: 1,
      tid: 2,
      time: 9_000_000n,
      cpu: 0,
      period: 1n,
      tail: new ByteWriter().u32(1020).raw(new Uint8Array(1020)).toBytes(),
    });
    assert.ok(bigOf.length > 1000);
    const ring = backward([...Array.from({ length: 900 }, (_, i) => hot(i, 1000n + BigInt(i))), bigOf]);
    const keyed = keyRing(ring, eventTables(wide), null, sharedKeyScratch);
    assert.ok(keyed);
    assert.equal(keyed.count, 901);
    assert.deepEqual(
      Array.from(keyed.scratch.time.subarray(keyed.first, keyed.first + 3)),
      [0, 1, 2].map((i) => i + 1000 - 9_000_000),
    );
    assert.equal(keyed.scratch.position[keyed.first + 900], 1);
    assert.equal(keyed.onlyPosition, -1, 'two events');
    const single = decodeSnapshot({ events: wide, rings: [ring] });
    assert.deepEqual(Array.from(keyed.scratch.offset.subarray(keyed.first, keyed.first + keyed.count)), Array.from(single.columns.offset));
    const again = keyRing(ring, eventTables(wide), keyed.scratch, sharedKeyScratch);
    assert.equal(again?.scratch, keyed.scratch);
  });

  it('leaves to the full decoder: unknown ids, damaged times, forward rings', () => {
    const timed = Array.from({ length: 50 }, (_, i) => hot(i, 1000n + BigInt(i)));
    const stranger = sampleRecord(HOT, { id: 99n, ip: 1n, pid: 1, tid: 2, time: 1020n, cpu: 0, period: 1n });
    assert.ok(key(backward(timed)));
    assert.equal(key(backward([...timed, stranger])), null, 'an unknown id');
    assert.equal(key(backward([...timed, hot(60, 1n << 60n)])), null, 'a time 2^60 ns away');
    assert.equal(key(ringFromRecords(timed, 1 << 16, 'forward')), null, 'a forward ring');
  });

  it('keys records that are not plain timed samples through decodeRing: their times, lost counts and an event position of their own', () => {
    const comm = commRecord(HOT, 'x', 1010n, 11n);
    const throttle = throttleRecord(HOT, 1015n, 11n);
    const lostSamples = otherRecord(RecordType.LOST_SAMPLES, 0, new ByteWriter().u64(4n).toBytes(), HOT, true, { pid: 1, tid: 1, time: 1016n, id: 11n });
    const untimed = sampleRecord(NO_TIME, { id: 21n, ip: 1n, pid: 1, tid: 2, cpu: 0 });
    // A LOST record: the kernel writes it and the record after the gap in one reservation; the decoder puts it back before that record.
    const lost = otherRecord(RecordType.LOST, 0, new ByteWriter().u64(11n).u64(3n).toBytes(), HOT, true, { pid: 1, tid: 1, time: 1017n, id: 11n });
    const ring = backward([untimed, hot(0, 1000n), comm, hot(1, 1012n), throttle, lostSamples, untimed, hot(2, 1020n), hot(3, 1021n), lost, hot(4, 1022n)]);
    const keyed = key(ring);
    assert.ok(keyed);
    const single = decodeSnapshot({ events, rings: [ring] });
    assert.equal(keyed.count, 11);
    assert.equal(keyed.onlyPosition, -1);
    assert.equal(keyed.state.lost, 7);
    assert.equal(single.coverage[0].lostRecords, 7n);
    const position = Array.from(keyed.scratch.position.subarray(keyed.first, keyed.first + keyed.count));
    // The LOST record one row earlier than this test wrote it, as the decoder places it.
    assert.deepEqual(position, [OTHER_RECORD, 0, OTHER_RECORD, 0, OTHER_RECORD, OTHER_RECORD, OTHER_RECORD, 0, OTHER_RECORD, 0, 0]);
    assert.deepEqual(Array.from(keyed.scratch.offset.subarray(keyed.first, keyed.first + keyed.count)), Array.from(single.columns.offset));
    assert.equal(single.columns.kind[8], RecordType.LOST);
    const base = Number((BigInt(keyed.state.baseHi) << 32n) | BigInt(keyed.state.baseLo)) - Number(single.columns.timeOriginNs);
    for (let i = 0; i < keyed.count; i++) assert.ok(Object.is(keyed.scratch.time[keyed.first + i] + base, single.columns.time[i]), `row ${i}`);
  });

  it('puts LOST records before their partners as the decoder does: two in a row, the oldest record, the newest, and one per gap in a long ring', () => {
    const lostAt = (time: bigint) => otherRecord(RecordType.LOST, 0, new ByteWriter().u64(11n).u64(2n).toBytes(), HOT, true, { pid: 1, tid: 1, time, id: 11n });
    const layouts: Uint8Array[][] = [
      [lostAt(999n), hot(0, 1000n), hot(1, 1001n), lostAt(1002n), lostAt(1002n), hot(2, 1003n), hot(3, 1004n), lostAt(1005n)],
      Array.from({ length: 4000 }, (_, i) => (i % 997 === 500 ? lostAt(10_000n + BigInt(i)) : hot(i, 10_000n + BigInt(i)))),
    ];
    for (const records of layouts) {
      const ring = backward(records);
      const keyed = key(ring);
      assert.ok(keyed);
      const single = decodeSnapshot({ events, rings: [ring] });
      assert.deepEqual(Array.from(keyed.scratch.offset.subarray(keyed.first, keyed.first + keyed.count)), Array.from(single.columns.offset));
      const times = Array.from(keyed.scratch.time.subarray(keyed.first, keyed.first + keyed.count));
      assert.equal(
        keyed.sorted,
        times.every((time, i) => i === 0 || time >= times[i - 1]),
      );
    }
    // Out of order as walked, in order once placed (the merge reads them placed); and a LOST record
    // below the record before it even where it is placed.
    assert.equal(key(backward([hot(0, 1000n), hot(1, 1010n), lostAt(1005n), hot(2, 1011n)]))?.sorted, true);
    assert.equal(key(backward([hot(0, 1000n), hot(1, 1010n), lostAt(995n), hot(2, 1011n)]))?.sorted, false);
  });

  it('keys a ring whose oldest record is cut, listing the walk end as the decoder does', () => {
    const bad = header(RecordType.SAMPLE, 2, 12).u64(0n).toBytes();
    const ring = backward([bad, ...Array.from({ length: 40 }, (_, i) => hot(i, 1000n + BigInt(i)))]);
    const keyed = key(ring);
    assert.ok(keyed);
    const single = decodeSnapshot({ events, rings: [ring] });
    assert.equal(keyed.count, single.columns.length);
    assert.ok(single.anomalies.length > 0);
    assert.deepEqual(keyed.anomalies, single.anomalies);
    assert.equal(keyed.state.offset, Number(ring.bytesWritten - single.coverage[0].bytesOverwritten));
  });

  it('keys every flight-recorder ring of seeded random per-CPU snapshots (samples of two events, two ids for one)', () => {
    let keyed = 0;
    let rings = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const input = randomPerCpuSnapshot(seed, 400);
      const seeded = eventTables(input.events);
      for (const ring of input.rings) {
        if (ring.direction !== 'backward') continue;
        rings++;
        const keys = keyRing(ring, seeded, null, sharedKeyScratch);
        if (!keys) continue;
        keyed++;
        const times = Array.from(keys.scratch.time.subarray(keys.first, keys.first + keys.count));
        assert.equal(
          keys.sorted,
          times.every((time, i) => time === time && (i === 0 || time >= times[i - 1])),
          `seed ${seed} ring ${ring.ringId}`,
        );
      }
    }
    assert.equal(keyed, rings);
  });

  it('decodes snapshots of several rings on one thread by keys, byte for byte as the merge path, into fresh columns and a reused arena', () => {
    const arena = new ColumnArena();
    let scattered = 0;
    let previous: ReturnType<typeof decodeSnapshot> | null = null;
    for (let seed = 1; seed <= 60; seed++) {
      const input = randomPerCpuSnapshot(seed, seed % 5 === 0 ? 20_000 : 400);
      const merged = decodeSnapshot(input, { scatter: false });
      const multiRing = input.rings.filter((ring) => ring.direction === 'backward' && ring.validBytes >= 8).length >= 2;
      const direct = decodeScattered(input, eventTables(input.events));
      assert.equal(direct !== null, multiRing, `seed ${seed}: the scatter path takes every snapshot of two rings or more`);
      if (direct) scattered++;
      const fromArena = decodeSnapshot(input, { arena });
      for (const [label, decoded] of [
        ['decodeSnapshot', decodeSnapshot(input)],
        ['decodeScattered', direct ?? merged],
        ['arena', fromArena],
      ] as const) {
        assert.deepEqual(columnByteDifferences(decoded.columns, merged.columns), [], `seed ${seed} ${label}`);
        assert.deepEqual(decoded.coverage, merged.coverage, `seed ${seed} ${label}`);
        assert.deepEqual(decoded.anomalies, merged.anomalies, `seed ${seed} ${label}`);
      }
      assert.deepEqual(recordByRecordMismatches(fromArena, 10), [], `seed ${seed}`);
      if (previous) arena.recycle(previous.columns);
      if (seed % 2 === 0) arena.warm();
      previous = fromArena;
    }
    assert.ok(scattered >= 30, `${scattered} of 60 snapshots had two rings or more`);
  });
});
