// The WebAssembly path (a copy decoded into the room of its own memory) against the JavaScript
// path on the same bytes: the columns byte for byte, the coverage and the anomalies, on seeded
// per-CPU snapshots, mutated rings, damaged times, records smaller than the room was sized for,
// shared memory and the decode pool; and the fallback to plain buffers where no WebAssembly memory
// can be had.

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Sample } from '../../abi/uapi';
import { ColumnArena } from '../arena';
import { columnSetBytes } from '../column-set';
import { decodeSnapshot } from '../columns';
import type { SnapshotInput } from '../assemble';
import { DecodePool } from '../../decode-pool/pool';
import { attrOf, ByteWriter, columnByteDifferences, eventOf, prng, randomPerCpuSnapshot, ringFromRecords, sampleRecord } from '../test-records';
import type { DecodedSnapshot } from '../types';
import type { RingCopy } from '../../abi/snapshot';
import { allocateDecodableCopy, decodableCopyOf, hasRoom, roomOf } from './copy-room';

const BASIC = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;

/** The same snapshot with every flight-recorder ring's copy moved into a decodable copy's memory. */
function inRooms(input: SnapshotInput, shared = false): SnapshotInput {
  const rings = input.rings.map((ring): RingCopy => (ring.direction === 'backward' ? { ...ring, bytes: decodableCopyOf(ring.bytes, shared) } : ring));
  for (const ring of rings) if (ring.direction === 'backward') assert.ok(hasRoom(ring.bytes), 'the copy got a WebAssembly memory');
  return { ...input, rings };
}

/** True when the snapshot's columns live in the room of one of its copies (the WebAssembly engine wrote them). */
function decodedInRoom(snapshot: DecodedSnapshot): boolean {
  return snapshot.rings.some((ring) => ring.bytes.buffer === snapshot.columns.time.buffer);
}

function assertSame(room: DecodedSnapshot, plain: DecodedSnapshot, what: string): void {
  assert.deepEqual(columnByteDifferences(room.columns, plain.columns), [], what);
  assert.equal(room.columns.timeOriginNs, plain.columns.timeOriginNs, what);
  assert.deepEqual(room.coverage, plain.coverage, what);
  assert.deepEqual(room.anomalies, plain.anomalies, what);
}

/** One flight-recorder ring of 56-byte samples at `times`, oldest first. */
function basicRing(times: readonly bigint[], dataSize: number): SnapshotInput {
  const records = times.map((time, i) => sampleRecord(BASIC, { id: 7n, ip: 0x401000n + BigInt(i), pid: 10, tid: 11 + (i & 3), time, cpu: 1, period: 1n }));
  return { events: [eventOf(0, attrOf(BASIC), [7n], 'basic')], rings: [ringFromRecords(records, dataSize, 'backward', { cpu: 1 })] };
}

describe('decode/wasm: a copy decoded in its room', () => {
  it("gives the JavaScript loop's bytes, coverage and anomalies on seeded snapshots, one flight recorder at a time", () => {
    let inRoom = 0;
    let rows = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const { events, rings } = randomPerCpuSnapshot(seed);
      const side = rings.filter((ring) => ring.direction === 'forward');
      for (const ring of rings.filter((r) => r.direction === 'backward')) {
        const input = { events, rings: [ring, ...side] };
        const plain = decodeSnapshot(input);
        const room = decodeSnapshot(inRooms(input));
        assertSame(room, plain, `seed ${seed}, ring ${ring.ringId}`);
        if (decodedInRoom(room)) inRoom++;
        rows += room.columns.length;
      }
    }
    assert.ok(rows > 10_000, `${rows} rows compared`);
    // Rings whose older records are smaller than the newest outgrow the room and finish in the arena.
    assert.ok(inRoom > 100, `${inRoom} of the rings were decoded in their room`);
  });

  it('gives the same bytes when several rings decode in their rooms and are then merged (scatter off)', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const input = randomPerCpuSnapshot(seed);
      assertSame(decodeSnapshot(inRooms(input), { scatter: false }), decodeSnapshot(input, { scatter: false }), `seed ${seed}`);
      assertSame(decodeSnapshot(inRooms(input)), decodeSnapshot(input), `seed ${seed}, scatter`);
    }
  });

  it('gives the same bytes on mutated rings (bit flips, damaged sizes, ids and times)', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed * 31);
      const { events, rings } = randomPerCpuSnapshot(seed);
      const ring = rings[0];
      const bytes = ring.bytes.slice();
      for (let m = 1 + Math.floor(random() * 6); m > 0; m--) {
        const at = Math.floor(random() * Math.max(1, ring.validBytes));
        if (random() < 0.5) bytes[at] ^= 1 << Math.floor(random() * 8);
        else bytes[at] = random() < 0.5 ? 0xff : 0;
      }
      const input = { events, rings: [{ ...ring, bytes }] };
      assertSame(decodeSnapshot(inRooms(input)), decodeSnapshot(input), `seed ${seed}`);
    }
  });

  it('gives the same bytes for samples without an id, and for two sample layouts alternating in one ring', () => {
    const NO_ID = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU;
    const WITH_ADDR = BASIC | Sample.ADDR;
    const plainRecords = Array.from({ length: 3000 }, (_, i) =>
      sampleRecord(NO_ID, { ip: 0x400000n + BigInt(i), pid: 5, tid: 6, time: 900n + BigInt(i), cpu: 0 }),
    );
    const noId = { events: [eventOf(0, attrOf(NO_ID), [], 'no id')], rings: [ringFromRecords(plainRecords, 1 << 16, 'backward')] };
    // Runs of 50 samples of one event, then 50 of the other (different offsets of time, cpu and period).
    const mixedRecords = Array.from({ length: 3000 }, (_, i) => {
      const values = { ip: 0x500000n + BigInt(i), pid: 7, tid: 8 + (i & 1), time: 2000n + BigInt(i), cpu: 1, period: 3n, addr: 0xdeadn };
      return Math.floor(i / 50) % 2 === 0 ? sampleRecord(BASIC, { ...values, id: 7n }) : sampleRecord(WITH_ADDR, { ...values, id: 9n });
    });
    const mixed = {
      events: [eventOf(0, attrOf(BASIC), [7n], 'basic'), eventOf(1, attrOf(WITH_ADDR), [9n], 'with addr')],
      rings: [ringFromRecords(mixedRecords, 1 << 17, 'backward', { cpu: 1 })],
    };
    for (const [what, input] of [
      ['no id', noId],
      ['two layouts', mixed],
    ] as const) {
      const room = decodeSnapshot(inRooms(input));
      assert.ok(decodedInRoom(room), `${what}: decoded in the room`);
      assertSame(room, decodeSnapshot(input), what);
      assert.ok(room.columns.length > 1000, `${what}: ${room.columns.length} rows`);
    }
  });

  it('gives the same bits for times far from the base: past 2^53 ns (a second pass) and past 2^63 ns (the JavaScript loop takes the record)', () => {
    const near = Array.from({ length: 200 }, (_, i) => 5_000_000n + BigInt(i * 10));
    const cases: [string, bigint[]][] = [
      ['2^54 ns later', [...near.slice(0, 100), 5_000_000n + (1n << 54n), ...near.slice(100)]],
      ['2^63 + 5 ns later', [...near.slice(0, 100), (1n << 63n) + 5n, ...near.slice(100)]],
      ['the largest u64', [...near.slice(0, 50), (1n << 64n) - 1n, ...near.slice(50)]],
      ['the newest record the damaged one', [...near, (1n << 64n) - 8n]],
      ['the oldest record (the time base) past 2^63 ns', [(1n << 63n) + 5n, ...near]],
      [
        'times on both sides of 2^63 ns',
        [...near.slice(0, 100).map((t) => (1n << 63n) - 3000n + t - 5_000_000n), ...near.slice(0, 100).map((t) => (1n << 63n) + t - 5_000_000n)],
      ],
    ];
    for (const [what, times] of cases) {
      const input = basicRing(times, 1 << 14);
      const plain = decodeSnapshot(input);
      const room = decodeSnapshot(inRooms(input));
      assertSame(room, plain, what);
      assert.equal(room.columns.length, times.length, what);
    }
  });

  it('gives the same bytes when times do not fall record after record (ties, steps forward) and sizes vary, in a room that holds them all and in one too small', () => {
    // Newest first in the copy: the sample run takes falling times in a loop of its own and every
    // other record through the loop that tracks each time, then goes on falling; with a room too
    // small it stops where the room is full, wherever that is.
    const st = BASIC | Sample.CALLCHAIN;
    const chain = (depth: number) => {
      const w = new ByteWriter().u64(BigInt(depth));
      for (let k = 0; k < depth; k++) w.u64(0x400000n + BigInt(k));
      return w.toBytes();
    };
    // Oldest first: `step` gives each record's time after the one before. Random: mostly later and
    // later, some ties, some steps back (a clock or an interrupted write). Then steadily later but
    // the newest a step back: the run after it starts with the ring's largest time.
    const random = prng(77);
    const patterns: [string, (i: number) => bigint][] = [
      [
        'random',
        () => {
          const roll = random();
          return roll < 0.1 ? 0n : roll < 0.2 ? -BigInt(1 + Math.floor(random() * 40)) : BigInt(1 + Math.floor(random() * 30));
        },
      ],
      ['the newest a step back', (i) => (i === 899 ? -7n : 10n)],
    ];
    for (const [what, step] of patterns) {
      let time = 50_000n;
      const records = Array.from({ length: 900 }, (_, i) => {
        time += step(i);
        // Callchains of 2 frames mostly, some of 3 or 4: the loop's next record is where the size before says, when it is that.
        const depth = i === 899 ? 40 : random() < 0.2 ? 3 + Math.floor(random() * 2) : 2;
        return sampleRecord(st, { id: 7n, ip: 0x1000n + BigInt(i), pid: 1, tid: 2, time, cpu: 0, period: 1n, tail: chain(depth) });
      });
      const ring = ringFromRecords(records, 1 << 17, 'backward');
      const events = [eventOf(0, attrOf(st), [7n])];
      const plain = decodeSnapshot({ events, rings: [ring] });
      assert.equal(plain.columns.length, 900, what);
      const whole = decodeSnapshot({ events, rings: [{ ...ring, bytes: decodableCopyOf(ring.bytes) }] });
      assert.ok(decodedInRoom(whole), `${what}: decoded in its room`);
      assertSame(whole, plain, `${what}: a room for every row`);
      const small = allocateDecodableCopy(ring.bytes.length, false, ring.bytes);
      assert.ok(roomOf(small.bytes)!.set.length < plain.columns.length, `${what}: the room holds fewer rows than the ring`);
      small.bytes.set(ring.bytes);
      assertSame(decodeSnapshot({ events, rings: [{ ...ring, bytes: small.bytes }] }), plain, `${what}: a room too small`);
    }
  });

  it('decodes into the room again once its columns are handed back, and in the arena while they are held', () => {
    const input = inRooms(
      basicRing(
        Array.from({ length: 500 }, (_, i) => 1000n + BigInt(i)),
        1 << 15,
      ),
    );
    const arena = new ColumnArena();
    const first = decodeSnapshot(input, { arena });
    assert.ok(decodedInRoom(first), 'the first decode writes the room');
    const second = decodeSnapshot(input, { arena });
    assert.ok(!decodedInRoom(second), 'the room is held by the first snapshot: the second goes to the arena');
    assertSame(second, first, 'held');
    assert.equal(arena.recycle(first.columns), true, 'handing back room columns frees the room');
    const third = decodeSnapshot(input, { arena });
    assert.ok(decodedInRoom(third), 'the freed room is written again');
    assertSame(third, second, 'again');
    assert.equal(arena.recycle(second.columns), true);
    assert.equal(arena.pooledSets, 1, 'the arena pools its own set, never the room');
  });

  it("sizes the next room from the previous copy's newest record, and the first from 48-byte records", () => {
    const previous = new Uint8Array(8);
    previous[6] = 96;
    const sized = allocateDecodableCopy(1 << 20, false, previous);
    const first = allocateDecodableCopy(1 << 20, false, null);
    assert.equal(sized.bytes.length, 1 << 20);
    // A column set after the copy of (1 MiB / 96) * 1.0625 + 16 rows, and (1 MiB / 48) * 1.0625 + 16, in the allocation.
    const roomRows = (copy: { bytes: Uint8Array; whole: Uint8Array }) => {
      const set = roomOf(copy.bytes)!.set;
      assert.ok(set.time.byteOffset >= copy.bytes.byteOffset + copy.bytes.length);
      assert.ok(copy.whole.length >= set.byteOffset + columnSetBytes(set.length));
      return set.length;
    };
    assert.equal(roomRows(sized), Math.ceil(Math.floor((1 << 20) / 96) * 1.0625) + 16);
    assert.equal(roomRows(first), Math.ceil(Math.floor((1 << 20) / 48) * 1.0625) + 16);
    // The next copy of that ring keeps the room's rows (one geometry, one compiled module) while
    // they hold what its newest record asks for and not twice that.
    const after = (newest: number) => {
      sized.bytes[6] = newest;
      roomOf(sized.bytes)!.used = true; // as a decode into the room marks it (else the ring's next copy is a plain one)
      return roomRows(allocateDecodableCopy(1 << 20, false, sized.bytes));
    };
    assert.equal(after(128), roomRows(sized), 'larger records: the rows are kept');
    assert.equal(after(96), roomRows(sized));
    assert.equal(after(48), Math.ceil(Math.floor((1 << 20) / 48) * 1.0625) + 16, 'smaller records: more rows');
    assert.equal(after(248), Math.ceil(Math.floor((1 << 20) / 248) * 1.0625) + 16, 'records over twice as large: fewer rows');
  });

  it("sizes a ring's next room by the rows its copy held when its newest record was larger than the others (callchains of other depths)", () => {
    const st = BASIC | Sample.CALLCHAIN;
    const chain = (depth: number) => {
      const w = new ByteWriter().u64(BigInt(depth));
      for (let k = 0; k < depth; k++) w.u64(0x400000n + BigInt(k));
      return w.toBytes();
    };
    // Oldest first: 2-frame callchains (96 bytes), the newest with 40 frames (400 bytes).
    const records = Array.from({ length: 800 }, (_, i) =>
      sampleRecord(st, { id: 7n, ip: 0x1000n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n, tail: chain(i === 799 ? 40 : 2) }),
    );
    const ring = ringFromRecords(records, 32768, 'backward');
    const events = [eventOf(0, attrOf(st), [7n])];
    const plain = decodeSnapshot({ events, rings: [ring] });
    // A copy with the room a ring's copy gets when sized by its newest record alone: too small for its rows.
    const bySize = allocateDecodableCopy(ring.bytes.length, false, ring.bytes);
    assert.ok(roomOf(bySize.bytes)!.set.length < plain.columns.length, 'the newest record alone sizes the room too small');
    bySize.bytes.set(ring.bytes);
    const first = decodeSnapshot({ events, rings: [{ ...ring, bytes: bySize.bytes }] });
    assertSame(first, plain, 'the first copy');
    assert.ok(!decodedInRoom(first), 'its rows did not fit its room: the JavaScript loop decoded them');
    // The ring's next copy: a room for the rows the first held, decoded there.
    const next = allocateDecodableCopy(ring.bytes.length, false, bySize.bytes);
    assert.ok(roomOf(next.bytes)!.set.length >= plain.columns.length);
    next.bytes.set(ring.bytes);
    const second = decodeSnapshot({ events, rings: [{ ...ring, bytes: next.bytes }] });
    assertSame(second, plain, 'the next copy');
    assert.ok(decodedInRoom(second), 'the next copy is decoded in its room');
    // decodableCopyOf (tests, the bench) gives a copy the room of that steady state at once.
    assert.ok(decodedInRoom(decodeSnapshot({ events, rings: [{ ...ring, bytes: decodableCopyOf(ring.bytes) }] })));
  });

  it('decodes shared-memory copies in their rooms, and the pool gives the same bytes from them', async () => {
    const input = randomPerCpuSnapshot(7, 3000);
    const one = { events: input.events, rings: [input.rings[0], input.rings[input.rings.length - 1]] };
    const shared = inRooms(one, true);
    assert.ok(shared.rings[0].bytes.buffer instanceof SharedArrayBuffer);
    const room = decodeSnapshot(shared);
    assert.ok(decodedInRoom(room));
    assertSame(room, decodeSnapshot(one), 'shared room');
    const pool = new DecodePool({ minWorkerBytes: 0, parallelWhen: 'always' });
    try {
      const parallel = await pool.decode(inRooms(input, true));
      assertSame(parallel, decodeSnapshot(input), 'pool over shared rooms');
    } finally {
      await pool.close();
    }
  });

  it('falls back to plain buffers, and the JavaScript loop, where the address space is too small for a WebAssembly memory', function () {
    this.timeout(30_000);
    // V8 reserves several GiB of address space per 32-bit memory (guard pages); under a 3 GiB
    // RLIMIT_AS it cannot, while node itself still runs.
    const script = `
      const { allocateDecodableCopy } = require(${JSON.stringify(join(__dirname, 'copy-room'))});
      const { decodeSnapshot } = require(${JSON.stringify(join(__dirname, '..', 'columns'))});
      const t = require(${JSON.stringify(join(__dirname, '..', 'test-records'))});
      const sampleType = ${BASIC};
      const values = (i) => ({ id: 7n, ip: 1n, pid: 1, tid: 1, time: 100n + BigInt(i), cpu: 0, period: 1n });
      const records = Array.from({ length: 100 }, (_, i) => t.sampleRecord(sampleType, values(i)));
      const ring = t.ringFromRecords(records, 8192, 'backward');
      const copy = allocateDecodableCopy(ring.bytes.length, false, null);
      copy.bytes.set(ring.bytes);
      const snapshot = decodeSnapshot({ events: [t.eventOf(0, t.attrOf(sampleType), [7n])], rings: [{ ...ring, bytes: copy.bytes }] });
      let wasm = 'yes';
      try { new WebAssembly.Memory({ initial: 1 }); } catch { wasm = 'no'; }
      console.log(JSON.stringify({ wasm, plain: copy.whole === copy.bytes, rows: snapshot.columns.length, last: snapshot.columns.time[99] }));`;
    const run = spawnSync('bash', ['-c', 'ulimit -v 3000000 && exec "$0" -e "$1"', process.execPath, script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { wasm: 'no', plain: true, rows: 100, last: 99 });
  });
});
