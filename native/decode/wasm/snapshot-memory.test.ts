// One snapshot's flight-recorder copies in one WebAssembly memory (snapshot-memory.ts), keyed and
// merged there as WebAssembly (key-run.ts, merge-scatter.ts, memory-scatter.ts), on one thread and
// in a decode pool, against the JavaScript decoder on the same bytes: the columns byte for byte, the
// coverage and the anomalies, on seeded per-CPU snapshots with side-band rings, unsorted and damaged
// times, mutated rings, and rings that outgrow their keys; and how a group's copies are allocated.

import * as assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { RecordType, Sample } from '../../abi/uapi';
import type { RingCopy } from '../../abi/snapshot';
import { decodeSnapshot } from '../columns';
import type { SnapshotInput } from '../assemble';
import { eventTables } from '../decode-ring';
import { keyRing } from '../scatter';
import { uniformRing } from '../uniform';
import { DecodePool } from '../../decode-pool/pool';
import { ByteWriter, attrOf, columnByteDifferences, eventOf, otherRecord, prng, randomPerCpuSnapshot, ringFromRecords, sampleRecord } from '../test-records';
import type { DecodedSnapshot } from '../types';
import { allocateDecodableCopy, hasRoom, returnRoom } from './copy-room';
import { plannedSlicesFailed, plannedSlicesWritten } from './memory-scatter';
import { SIDE_BAND_ROWS, snapshotMemoryOf } from './snapshot-memory';
import { groupOf, inSnapshotMemory, mergedInMemory } from './test-memory';

/** Lanes of the groups these tests copy (the decode pool's default). */
const THREADS = availableParallelism();
const BASIC = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;

function assertSame(got: DecodedSnapshot, want: DecodedSnapshot, what: string): void {
  assert.deepEqual(columnByteDifferences(got.columns, want.columns), [], what);
  assert.equal(got.columns.timeOriginNs, want.columns.timeOriginNs, what);
  assert.deepEqual(got.coverage, want.coverage, what);
  assert.deepEqual(got.anomalies, want.anomalies, what);
}

/**
 * Rings of BASIC samples of one event, times that mostly rise (every 20th falls back: unsorted),
 * a LOST record now and then (every 97th: a record the merge lists for the caller), and a side-band ring.
 */
function oneEventRings(seed: number, ringCount: number, records: number): SnapshotInput {
  const random = prng(seed);
  const rings: RingCopy[] = [];
  for (let r = 0; r < ringCount; r++) {
    let time = 0xfffff000n + BigInt(Math.floor(random() * 100));
    const list = Array.from({ length: Math.floor(records * (0.5 + random())) }, (_, i) => {
      time += BigInt(Math.floor(random() * 20)) - (i % 20 === 19 ? 9n : 0n);
      const lost = new ByteWriter().u64(7n).u64(2n).toBytes();
      if (i % 97 === 50) return otherRecord(RecordType.LOST, 0, lost, BASIC, true, { pid: 10, tid: 11 + r, time, cpu: r, id: 7n });
      return sampleRecord(BASIC, { id: 7n, ip: 0x401000n + BigInt(i), pid: 10, tid: 11 + r, time, cpu: r, period: 1n });
    });
    rings.push(ringFromRecords(list, 1 << 18, 'backward', { ringId: r, cpu: r }));
  }
  return withSideBand(seed, rings, [7n]);
}

/** `rings` (BASIC samples of event 0, whose ids are `ids`) with a seeded snapshot's side-band rings after them, their event as event 1. */
function withSideBand(seed: number, rings: readonly RingCopy[], ids: bigint[]): SnapshotInput {
  const side = randomPerCpuSnapshot(seed, 50, false);
  const sideBand = side.rings.filter((ring) => ring.direction === 'forward').map((ring) => ({ ...ring, ringId: rings.length, defaultEvent: 1 }));
  return {
    events: [eventOf(0, attrOf(BASIC, { flags: { sampleIdAll: true } }), ids, 'basic'), { ...side.events[2], index: 1 }],
    rings: [...rings, ...sideBand],
  };
}

describe('decode/wasm: a snapshot memory', () => {
  it("gives a group's rings one memory until one of them asks again, with a whole that covers its keys", () => {
    const sizes = [1 << 16, 1 << 16, 1 << 17];
    const group = groupOf(sizes, THREADS);
    const first = sizes.map((size, member) => allocateDecodableCopy(size, true, null, group.askFor(member)));
    const memory = snapshotMemoryOf(first[0].bytes);
    assert.ok(memory);
    assert.ok(first.every((copy) => snapshotMemoryOf(copy.bytes) === memory && hasRoom(copy.bytes)));
    // The wholes tile the memory: each from its slot to the next, the last to the end.
    assert.equal(first[0].whole.byteOffset, 0);
    assert.equal(first[0].whole.byteOffset + first[0].whole.length, first[1].whole.byteOffset);
    assert.equal(first[2].whole.byteOffset + first[2].whole.length, memory.buffer.byteLength);
    assert.ok(memory.set.length >= SIDE_BAND_ROWS + 3 * Math.floor((1 << 16) / 48));
    const again = allocateDecodableCopy(1 << 16, true, first[0].bytes, group.askFor(0));
    const next = snapshotMemoryOf(again.bytes);
    assert.ok(next && next !== memory, 'a ring asking again starts a new memory');
    assert.equal(snapshotMemoryOf(allocateDecodableCopy(1 << 16, true, first[1].bytes, group.askFor(1)).bytes), next);
    // A group of one ring gets a room of its own, as before.
    const alone = groupOf([1 << 16], THREADS);
    const own = allocateDecodableCopy(1 << 16, true, null, alone.askFor(0));
    assert.equal(snapshotMemoryOf(own.bytes), undefined);
    assert.ok(hasRoom(own.bytes));
  });

  it("sizes a ring's keys by the newest record of its last copy", () => {
    const group = groupOf([1 << 16, 1 << 16], THREADS);
    const copies = [0, 1].map((member) => allocateDecodableCopy(1 << 16, true, null, group.askFor(member)).bytes);
    // The newest record of ring 1's copy is 128 bytes: its next keys are sized for 128-byte records.
    copies[1].set(sampleRecord(BASIC, { id: 7n, ip: 1n, pid: 1, tid: 1, time: 1n, cpu: 0, period: 1n, tail: new Uint8Array(72) }));
    assert.equal(copies[1][6] | (copies[1][7] << 8), 128);
    const next = allocateDecodableCopy(1 << 16, true, copies[0], group.askFor(0));
    const memory = snapshotMemoryOf(next.bytes)!;
    const [zero, one] = memory.slots;
    assert.ok(one.keys.capacity < zero.keys.capacity, `${one.keys.capacity} keys for 128-byte records, ${zero.keys.capacity} for 48`);
    assert.equal(one.keys.capacity, Math.ceil(Math.floor((1 << 16) / 128) * 1.0625) + 16);
  });

  it("gives the JavaScript decoder's bytes, coverage and anomalies on seeded per-CPU snapshots (two events, side-band rings)", () => {
    let merged = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const input = randomPerCpuSnapshot(seed);
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, decodeSnapshot(input), `seed ${seed}`);
      if (mergedInMemory(got)) merged++;
      returnRoom(got.columns);
    }
    assert.ok(merged > 100, `${merged} of 150 snapshots were merged into the memory's output set`);
  });

  it('merges as WebAssembly when the rings hold one event: unsorted times, LOST records and side-band rows placed between them', () => {
    const before = plannedSlicesWritten() - plannedSlicesFailed();
    let rows = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const input = oneEventRings(seed, 2 + (seed % 5), 400 + seed * 50);
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, decodeSnapshot(input), `seed ${seed}`);
      assert.ok(mergedInMemory(got), `seed ${seed}: merged in the memory`);
      rows += got.columns.length;
      returnRoom(got.columns);
    }
    assert.equal(plannedSlicesWritten() - plannedSlicesFailed() - before, 40, 'every snapshot went through the WebAssembly merge');
    assert.ok(rows > 50_000, `${rows} rows compared`);
  });

  it('gives the same bytes on mutated rings (bit flips, damaged sizes, ids and times)', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = prng(seed * 17);
      const input = seed % 2 === 0 ? randomPerCpuSnapshot(seed) : oneEventRings(seed, 3, 300);
      const rings = input.rings.map((ring) => {
        if (ring.direction !== 'backward' || random() < 0.5) return ring;
        const bytes = ring.bytes.slice();
        for (let m = 1 + Math.floor(random() * 6); m > 0; m--) {
          const at = Math.floor(random() * Math.max(1, ring.validBytes));
          if (random() < 0.5) bytes[at] ^= 1 << Math.floor(random() * 8);
          else bytes[at] = random() < 0.5 ? 0xff : 0;
        }
        return { ...ring, bytes };
      });
      const mutated = { ...input, rings };
      const got = decodeSnapshot(inSnapshotMemory(mutated, THREADS));
      assertSame(got, decodeSnapshot(mutated), `seed ${seed}`);
      returnRoom(got.columns);
    }
  });

  it("decodes a ring alone in its snapshot into the memory's output set, and the next snapshot elsewhere while that is held", () => {
    const input = oneEventRings(5, 2, 2000);
    // The idle CPU's ring decoded before the busy one's (ring 0 empty) or after it.
    for (const idle of [0, 1]) {
      const alone = { ...input, rings: input.rings.map((ring) => (ring.ringId === idle ? { ...ring, validBytes: 0, bytesWritten: 0n } : ring)) };
      const inMemory = inSnapshotMemory(alone, THREADS);
      const first = decodeSnapshot(inMemory);
      assertSame(first, decodeSnapshot(alone), `ring ${idle} empty: one ring with records`);
      assert.ok(mergedInMemory(first), `ring ${idle} empty: decoded into the output set`);
      const held = decodeSnapshot(inMemory);
      assertSame(held, first, `ring ${idle} empty: decoded again while the first is held`);
      assert.ok(!mergedInMemory(held), `ring ${idle} empty: not into the set the first snapshot holds`);
      assert.ok(returnRoom(first.columns));
    }
  });

  it('frees the output set when a ring decoded into it is merged elsewhere (scatter off), for the next decode', () => {
    const input = inSnapshotMemory(oneEventRings(9, 3, 1500), THREADS);
    const sliced = decodeSnapshot(input, { scatter: false });
    assertSame(sliced, decodeSnapshot(oneEventRings(9, 3, 1500)), 'scatter off');
    assert.ok(!mergedInMemory(sliced), 'merged into a set of its own');
    const next = decodeSnapshot(input);
    assert.ok(mergedInMemory(next), 'the next decode merged into the output set');
    assert.ok(returnRoom(next.columns));
  });

  it('gives the same bytes from a decode pool, keyed and merged as WebAssembly on every thread', async () => {
    const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    try {
      for (let seed = 1; seed <= 30; seed++) {
        const input = seed % 3 === 0 ? randomPerCpuSnapshot(seed, 3000) : oneEventRings(seed, 2 + (seed % 4), 3000);
        const got = await pool.decode(inSnapshotMemory(input, THREADS));
        assertSame(got, decodeSnapshot(input), `seed ${seed}`);
        returnRoom(got.columns);
      }
      assert.ok(pool.mergesInSnapshotMemory >= 20, `${pool.mergesInSnapshotMemory} merges in the memory`);
      assert.ok(pool.parallelMerges >= 20, `${pool.parallelMerges} merges cut into slices for the workers`);
    } finally {
      await pool.close();
    }
  });
});

/**
 * Per-CPU rings of same-size BASIC samples with times that never fall (uniform.ts), each ring with
 * an id of its own, and a side-band ring; `damage` may change ring r's records (oldest first).
 */
function uniformRings(seed: number, ringCount: number, records: number, damage?: (r: number, list: Uint8Array[]) => void): SnapshotInput {
  const random = prng(seed);
  const rings: RingCopy[] = [];
  for (let r = 0; r < ringCount; r++) {
    let time = 0xfffff000n + BigInt(Math.floor(random() * 100));
    const list = Array.from({ length: Math.floor(records * (0.5 + random())) }, (_, i) => {
      time += BigInt(Math.floor(random() * 20));
      return sampleRecord(BASIC, { id: 7n + BigInt(r), ip: 0x401000n + BigInt(i), pid: 10, tid: 11 + r, time, cpu: r, period: 1n });
    });
    damage?.(r, list);
    rings.push(ringFromRecords(list, 1 << 18, 'backward', { ringId: r, cpu: r }));
  }
  return withSideBand(
    seed,
    rings,
    Array.from({ length: ringCount }, (_, r) => 7n + BigInt(r)),
  );
}

/** Byte offset of a BASIC sample's time (after its header, id, ip and pid/tid). */
const BASIC_TIME = 32;

/** A BASIC sample's (or a LOST record's, from its trailer) time, at `at` of a ring's list (oldest first). */
function timeOfRecord(list: readonly Uint8Array[], at: number): bigint {
  return new DataView(list[at].buffer, list[at].byteOffset).getBigUint64(BASIC_TIME, true);
}

/** Gives the BASIC sample at `at` of a ring's list the time `time` (in a copy: the list may share records). */
function setTimeOfRecord(list: Uint8Array[], at: number, time: bigint): void {
  const record = list[at].slice();
  new DataView(record.buffer).setBigUint64(BASIC_TIME, time, true);
  list[at] = record;
}

/** Ring 0's record at `at` (oldest first) given a time 1 ns before the one before it: its time falls. */
function timeFallsAt(at: number): (r: number, list: Uint8Array[]) => void {
  return (r, list) => {
    if (r !== 0 || at <= 0 || at >= list.length) return;
    setTimeOfRecord(list, at, timeOfRecord(list, at - 1) - 1n);
  };
}

/**
 * Ring r's list with a LOST record (56 bytes, the size of a BASIC sample) after each record at
 * `partners` (oldest first), as the kernel writes one after a pause: in the same reservation as the
 * record it is then written with (its partner, the older of the two in memory), with that record's
 * time in its trailer, plus `skew` ns. A partner given twice gets two LOST records.
 */
function withLostAfter(r: number, partners: readonly number[], skew = 0n): (ring: number, list: Uint8Array[]) => void {
  return (ring, list) => {
    if (ring !== r) return;
    for (const at of [...partners].sort((a, b) => b - a)) {
      if (at < 0 || at >= list.length) continue;
      const body = new ByteWriter()
        .u64(7n + BigInt(r))
        .u64(BigInt(3 + at))
        .toBytes();
      const ids = { pid: 10, tid: 11 + r, time: timeOfRecord(list, at) + skew, cpu: r, id: 7n + BigInt(r) };
      list.splice(at + 1, 0, otherRecord(RecordType.LOST, 0, body, BASIC, true, ids));
    }
  };
}

describe('decode/wasm: uniform rings read in place', () => {
  it('takes a ring of same-size samples as uniform with what keyRing finds, and leaves other rings', () => {
    const input = uniformRings(3, 2, 3000);
    const tables = eventTables(input.events);
    for (const ring of input.rings.filter((r) => r.direction === 'backward')) {
      const uniform = uniformRing(ring, tables);
      const keys = keyRing(ring, tables, null, (rows) => ({ time: new Float64Array(rows), offset: new Uint32Array(rows), position: new Uint16Array(rows) }));
      assert.ok(uniform && keys);
      assert.equal(uniform.count, keys.count);
      assert.equal(uniform.stride, 56);
      const { minAt: _minAt, ...state } = uniform.state;
      const { minAt: _keyMinAt, ...keyState } = keys.state;
      assert.deepEqual(state, keyState);
      assert.deepEqual(uniform.anomalies, keys.anomalies);
      for (let i = 0; i < keys.count; i++) assert.equal(uniform.times.at(i), keys.scratch.time[keys.first + i]);
      assert.equal(uniform.times.at(keys.count), undefined);
    }
    const refused = (what: string, damage: (r: number, list: Uint8Array[]) => void): void => {
      const ring = uniformRings(3, 1, 3000, damage).rings[0];
      assert.equal(uniformRing(ring, eventTables(uniformRings(3, 1, 3000).events)), null, what);
    };
    const withTail = (list: Uint8Array[]): void => {
      list[list.length - 1] = sampleRecord(BASIC, { id: 7n, ip: 1n, pid: 10, tid: 11, time: 0x1_0000_0000n, cpu: 0, period: 1n, tail: new Uint8Array(8) });
    };
    refused('a newest record of another size', (_r, list) => withTail(list));
    refused('every other record of another size', (_r, list) => {
      for (let i = 0; i < list.length; i += 2) {
        list[i] = sampleRecord(BASIC, { id: 7n, ip: 1n, pid: 10, tid: 11, time: 0xfffff000n + BigInt(i), cpu: 0, period: 1n, tail: new Uint8Array(8) });
      }
    });
    refused('an id of no event', (_r, list) => {
      list[list.length - 1] = sampleRecord(BASIC, { id: 99n, ip: 1n, pid: 10, tid: 11, time: 0x1_0000_0000n, cpu: 0, period: 1n });
    });
    refused('the oldest record newer than the newest', (_r, list) => {
      [list[0], list[list.length - 1]] = [list[list.length - 1], list[0]];
    });
    // A shorter whole record after the oldest that fits: keyRing's walk would decode it.
    refused('a short record after the oldest', (_r, list) => {
      list.length = Math.min(list.length, 4000);
      list.unshift(otherRecord(RecordType.THROTTLE, 0, new ByteWriter().u64(1n).u64(7n).u64(7n).toBytes()));
    });
  });

  it("gives the keyed path's bytes, coverage and anomalies on one thread, every merge read in place", () => {
    const failedBefore = plannedSlicesFailed();
    for (let seed = 1; seed <= 40; seed++) {
      const input = uniformRings(seed, 2 + (seed % 4), 3000);
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, decodeSnapshot(input), `seed ${seed}`);
      assert.ok(mergedInMemory(got), `seed ${seed}: merged into the memory's output set`);
      returnRoom(got.columns);
    }
    assert.equal(plannedSlicesFailed() - failedBefore, 0, 'no ring was found not uniform');
  });

  it('finds a record the look at a few did not (a time that falls, a LOST record, another id, flipped bits) and keys the rings instead', () => {
    let found = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const at = 100 + ((seed * 37) % 800); // every ring holds at least 1,000 records
      const damages: ((r: number, list: Uint8Array[]) => void)[] = [
        timeFallsAt(at),
        (r, list) => {
          const lost = new ByteWriter().u64(8n).u64(2n).toBytes();
          if (r === 1) list[at] = otherRecord(RecordType.LOST, 0, lost, BASIC, true, { pid: 10, tid: 12, time: 0xfffff000n, cpu: 1, id: 8n });
        },
        (r, list) => {
          if (r === 0) list[at] = sampleRecord(BASIC, { id: 8n, ip: 1n, pid: 10, tid: 11, time: 0xfffff000n, cpu: 0, period: 1n });
        },
      ];
      const input = uniformRings(seed, 2, 2000, damages[seed % damages.length]);
      const before = plannedSlicesFailed();
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, decodeSnapshot(input), `seed ${seed}`);
      found += plannedSlicesFailed() - before;
      returnRoom(got.columns);
    }
    assert.ok(found >= 30, `${found} of 60 damaged snapshots were found out by the merge (the rest by the look at a few records)`);
    for (let seed = 1; seed <= 100; seed++) {
      const random = prng(seed * 31);
      const input = uniformRings(seed, 3, 1500);
      const rings = input.rings.map((ring) => {
        if (ring.direction !== 'backward') return ring;
        const bytes = ring.bytes.slice();
        for (let m = 1 + Math.floor(random() * 4); m > 0; m--) bytes[Math.floor(random() * ring.validBytes)] ^= 1 << Math.floor(random() * 8);
        return { ...ring, bytes };
      });
      const mutated = { ...input, rings };
      const got = decodeSnapshot(inSnapshotMemory(mutated, THREADS));
      assertSame(got, decodeSnapshot(mutated), `mutated seed ${seed}`);
      returnRoom(got.columns);
    }
  });

  it("reads rings with LOST records of the samples' size in place: each decoded, moved before its partner, counted, the keyed path's bytes", async () => {
    const failedBefore = plannedSlicesFailed();
    let lostRecords = 0n;
    for (let seed = 1; seed <= 40; seed++) {
      const random = prng(seed * 7);
      const records = 2000;
      // One to four LOST records in ring 0, two of them after one partner in some snapshots; one in ring 1.
      const partners = Array.from({ length: 1 + (seed % 4) }, () => 1 + Math.floor(random() * (records * 0.5 - 2)));
      if (seed % 3 === 0) partners.push(partners[0]);
      const damage = (r: number, list: Uint8Array[]): void => {
        withLostAfter(0, partners)(r, list);
        withLostAfter(1, [Math.floor(random() * list.length * 0.5)])(r, list);
      };
      const input = uniformRings(seed, 2 + (seed % 3), records, damage);
      const tables = eventTables(input.events);
      assert.ok(
        input.rings.filter((ring) => ring.direction === 'backward').every((ring) => uniformRing(ring, tables)),
        `seed ${seed}: taken as uniform`,
      );
      const want = decodeSnapshot(input);
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, want, `seed ${seed}`);
      assert.ok(mergedInMemory(got), `seed ${seed}: merged into the memory's output set`);
      lostRecords += got.coverage.reduce((sum, ring) => sum + ring.lostRecords, 0n);
      returnRoom(got.columns);
    }
    assert.equal(plannedSlicesFailed() - failedBefore, 0, 'no ring with LOST records was found not uniform');
    assert.ok(lostRecords > 40n, `${lostRecords} records counted lost`);
    // In a pool, with LOST records on both sides of the cut between the two slices (near each ring's middle).
    const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    try {
      for (let at = 985; at <= 1015; at++) {
        const input = uniformRings(7, 2, 2000, (r, list) => withLostAfter(r, [at, at + 1, 300])(r, list));
        const got = await pool.decode(inSnapshotMemory(input, THREADS));
        assertSame(got, decodeSnapshot(input), `LOST records after ${at} and ${at + 1}`);
        returnRoom(got.columns);
      }
      assert.deepEqual(pool.mergesInPlace, { read: 31, redone: 0 });
    } finally {
      await pool.close();
    }
  });

  it('keys the rings instead when a record read in place is not what the keyed path would merge there', () => {
    const OTHER_LAYOUT = Sample.TIME | Sample.STREAM_ID | Sample.CPU | Sample.IDENTIFIER;
    const OTHER_ID = 50n;
    const cases: [string, (r: number, list: Uint8Array[]) => void][] = [
      // Its time a little after its partner's (no newer than the record after it): the keyed path's
      // move then changes which rows the merge interleaves, so the ring cannot be read in place.
      ['a LOST record newer than its partner', withLostAfter(0, [700], 1n)],
      [
        'a LOST record of an id no event has',
        (r, list) => {
          withLostAfter(0, [700])(r, list);
          if (r !== 0) return;
          const lost = list[701].slice();
          new DataView(lost.buffer).setBigUint64(lost.length - 8, 99n, true);
          list[701] = lost;
        },
      ],
      // A COMM record of the samples' size, of an event whose trailer holds its time 8 bytes earlier
      // (no TID): where the ring's event has its time, a STREAM_ID the merge would take for it.
      [
        'a record of another event, whose trailer holds its time elsewhere',
        (r, list) => {
          if (r !== 0) return;
          const time = timeOfRecord(list, 700);
          const body = new ByteWriter().u32(5).u32(5).raw(new TextEncoder().encode('ab\0\0\0\0\0\0')).toBytes();
          list.splice(701, 0, otherRecord(RecordType.COMM, 0, body, OTHER_LAYOUT, true, { time: time + 1n, streamId: time, cpu: 0, id: OTHER_ID }));
        },
      ],
    ];
    for (const [what, damage] of cases) {
      const basic = uniformRings(5, 2, 1500, (r, list) => {
        // Times that rise by 2 ns, the same in both rings (so ring 1 has a record at the partner's
        // time), and a skew of 1 ns stays below the next record's.
        if (r <= 1) for (let i = 0; i < list.length; i++) setTimeOfRecord(list, i, 0xfffff000n + BigInt(2 * i));
        damage(r, list);
      });
      const input = { ...basic, events: [...basic.events, eventOf(2, attrOf(OTHER_LAYOUT, { flags: { sampleIdAll: true } }), [OTHER_ID], 'other')] };
      const tables = eventTables(input.events);
      assert.ok(
        input.rings.filter((ring) => ring.direction === 'backward').every((ring) => uniformRing(ring, tables)),
        `${what}: taken as uniform`,
      );
      const failedBefore = plannedSlicesFailed();
      const writtenBefore = plannedSlicesWritten();
      const got = decodeSnapshot(inSnapshotMemory(input, THREADS));
      assertSame(got, decodeSnapshot(input), what);
      assert.ok(plannedSlicesWritten() - writtenBefore >= 1, `${what}: the merge read the rings in place first`);
      assert.equal(plannedSlicesFailed() - failedBefore, 0, `${what}: the merge itself found nothing wrong`);
      returnRoom(got.columns);
    }
  });

  it('gives the same bytes from a decode pool, with the ring found not uniform at the cut between the slices', async () => {
    const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    try {
      for (let seed = 1; seed <= 30; seed++) {
        const input = uniformRings(seed, 2 + (seed % 3), 3000);
        const got = await pool.decode(inSnapshotMemory(input, THREADS));
        assertSame(got, decodeSnapshot(input), `seed ${seed}`);
        returnRoom(got.columns);
      }
      assert.deepEqual(pool.mergesInPlace, { read: 30, redone: 0 });
      assert.ok(pool.parallelMerges >= 30, `${pool.parallelMerges} merges cut into slices`);
      // Two rings of equal records cut in two: the cut is near each ring's middle. A time that
      // falls there is checked across the cut (the second slice's first record against the first's last).
      let redone = 0;
      for (let at = 990; at <= 1010; at++) {
        const input = uniformRings(7, 2, 2000, timeFallsAt(at));
        const before = pool.mergesInPlace.redone;
        const got = await pool.decode(inSnapshotMemory(input, THREADS));
        assertSame(got, decodeSnapshot(input), `time falls at ${at}`);
        redone += pool.mergesInPlace.redone - before;
        returnRoom(got.columns);
      }
      assert.equal(redone, 21, 'every time that falls near the cut was found by a slice');
    } finally {
      await pool.close();
    }
  });
});
