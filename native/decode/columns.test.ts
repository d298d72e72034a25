import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { COLUMN_BYTES_PER_ROW, COLUMNS_WIDEST_FIRST, columnConstructor } from './column-schema';
import { ColumnSet, columnOffsets, columnSetBytes } from './column-set';
import { MAX_ANOMALIES_KEPT_PER_RING, oldestRecordStart, sampleSizesAtStart } from './decode-ring';
import { mergeRuns } from './merge';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord } from './test-records';
import type { RecordColumns } from './types';
import { u32View, validEnd, walkRing } from './walk';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const BASE = 0x1fffffff0n; // crosses a u32 boundary 16 ns later

describe('decode/columns', () => {
  it('lays a column set out so that no two columns share a cache set at the same row, and packs small sets', () => {
    for (const rows of [0, 1, 4095, 4096, 4097, 65536, 1_198_388, 5_000_000]) {
      const { offsets, bytes } = columnOffsets(rows);
      const set = new ColumnSet(rows);
      assert.equal(set.buffer.byteLength, bytes);
      let end = 0;
      for (const name of COLUMNS_WIDEST_FIRST) {
        const width = columnConstructor(name).BYTES_PER_ELEMENT;
        assert.equal(offsets[name] % width, 0, `${name} aligned (${rows} rows)`);
        assert.ok(offsets[name] >= end, `${name} after the column before it (${rows} rows)`);
        assert.equal(set[name].byteOffset, offsets[name]);
        end = offsets[name] + width * rows;
      }
      assert.ok(end <= bytes);
      if (rows < 4096) {
        assert.equal(bytes, Math.ceil((rows * COLUMN_BYTES_PER_ROW) / 8) * 8, `${rows} rows: packed`);
        continue;
      }
      // Row 0 of every column in a different 64-byte line of a 4 KiB page, whatever the row count.
      const lines = new Set(COLUMNS_WIDEST_FIRST.map((name) => Math.floor((offsets[name] % 4096) / 64)));
      assert.equal(lines.size, COLUMNS_WIDEST_FIRST.length, `${rows} rows: ${[...lines].join(',')}`);
      assert.ok(bytes <= rows * COLUMN_BYTES_PER_ROW + 12 * 4096, `${rows} rows: ${bytes} bytes`);
    }
  });

  it('merges per-CPU rings into one time order with exact relative times, ids mapped to events', () => {
    const eventA = eventOf(0, attrOf(HOT), [101n, 102n], 'task-clock');
    const eventB = eventOf(1, attrOf(HOT), [201n, 202n], 'page-faults');
    const cpu0 = [10n, 30n, 50n, 70n].map((dt, i) =>
      sampleRecord(HOT, { id: i % 2 ? 201n : 101n, ip: 0xffffffff81000000n + dt, pid: 7, tid: 8, time: BASE + dt, cpu: 0, period: 1n }, 1),
    );
    const cpu1 = [0n, 20n, 40n, 60n, 80n].map((dt, i) =>
      sampleRecord(HOT, { id: i % 2 ? 202n : 102n, ip: 0x401000n + dt, pid: 9, tid: 10, time: BASE + dt, cpu: 1, period: 1n }),
    );
    const snapshot = decodeSnapshot({
      events: [eventA, eventB],
      rings: [ringFromRecords(cpu0, 4096, 'backward', { ringId: 0, cpu: 0 }), ringFromRecords(cpu1, 4096, 'backward', { ringId: 1, cpu: 1 })],
    });
    const c = snapshot.columns;
    assert.equal(c.length, 9);
    assert.equal(c.timeOriginNs, BASE);
    assert.deepEqual(Array.from(c.time), [0, 10, 20, 30, 40, 50, 60, 70, 80]);
    assert.deepEqual(Array.from(c.cpu), [1, 0, 1, 0, 1, 0, 1, 0, 1]);
    assert.deepEqual(Array.from(c.ring), [1, 0, 1, 0, 1, 0, 1, 0, 1]);
    assert.deepEqual(Array.from(c.event), [0, 0, 1, 1, 0, 0, 1, 1, 0]);
    assert.deepEqual(Array.from(c.pid), [9, 7, 9, 7, 9, 7, 9, 7, 9]);
    assert.deepEqual(Array.from(c.tid), [10, 8, 10, 8, 10, 8, 10, 8, 10]);
    assert.deepEqual(Array.from(c.kind), Array(9).fill(RecordType.SAMPLE));
    assert.deepEqual(Array.from(c.misc), [2, 1, 2, 1, 2, 1, 2, 1, 2]);
    assert.equal(c.ipHi[1], 0xffffffff);
    assert.equal(c.ipLo[1], 0x81000000 + 10);
    assert.equal(c.ipHi[0], 0);
    assert.equal(c.ipLo[0], 0x401000);
    for (const column of [c.time, c.kind, c.misc, c.event, c.pid, c.tid, c.cpu, c.ipHi, c.ipLo, c.ring, c.offset]) assert.equal(column.length, 9);
    assert.equal(snapshot.coverage[0].oldestTimeNs, BASE + 10n);
    assert.equal(snapshot.coverage[0].newestTimeNs, BASE + 70n);
    assert.equal(snapshot.coverage[1].recordsRetained, 5);
    assert.equal(snapshot.coverage[1].bytesOverwritten, 0n);
    assert.deepEqual(snapshot.anomalies, []);
  });

  it('keeps times exact far beyond 2^53 ns absolute', () => {
    const base = 0x7fff_ffff_ffff_fff0n;
    const records = [0n, 1n, 0x1_0000_0001n].map((dt) => sampleRecord(Sample.TIME, { time: base + dt }));
    const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(Sample.TIME))], rings: [ringFromRecords(records, 1024, 'backward')] });
    assert.equal(snapshot.columns.timeOriginNs, base);
    assert.deepEqual(Array.from(snapshot.columns.time), [0, 1, 0x1_0000_0001]);
  });

  it('keeps only the newest records of a wrapped ring, the last write last, and reports what was overwritten', () => {
    const st = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD; // 48-byte records
    const records = Array.from({ length: 100 }, (_, i) => sampleRecord(st, { ip: 0x1000n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n }));
    const ring = ringFromRecords(records, 512, 'backward');
    const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ring] });
    const kept = Math.floor(512 / 48);
    assert.equal(snapshot.columns.length, kept);
    assert.deepEqual(
      Array.from(snapshot.columns.time, (t) => Number(snapshot.columns.timeOriginNs) + t),
      Array.from({ length: kept }, (_, i) => 1000 + 100 - kept + i),
    );
    const cov = snapshot.coverage[0];
    assert.equal(cov.bytesWritten, 4800n);
    assert.equal(cov.bytesOverwritten, BigInt(4800 - kept * 48));
    assert.equal(cov.anomalies, 0, 'a truncated oldest record is expected, not counted');
    assert.equal(snapshot.anomalies[0].kind, 'truncated-oldest');
    assert.equal(cov.newestTimeNs, 1099n);
  });

  it("finds a wrapped backward ring's oldest whole record without walking, when records of another size moved it off the stride", () => {
    const st = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD; // 48-byte samples
    const lost = otherRecord(RecordType.LOST, 0, new ByteWriter().u64(1n).u64(3n).toBytes()); // 24 bytes
    let found = 0;
    for (const losts of [0, 1, 2, 5]) {
      for (const dataSize of [512, 2048, 4096]) {
        const records = Array.from({ length: 400 }, (_, i) => sampleRecord(st, { ip: 0x1000n, pid: 1, tid: 1, time: 1000n + BigInt(i), cpu: 0, period: 1n }));
        // LOST records among the newest ones (a pause leaves one): the older records sit off the 48-byte stride.
        for (let k = 0; k < losts; k++) records.splice(records.length - 3 - 2 * k, 0, lost);
        const ring = ringFromRecords(records, dataSize, 'backward');
        // The highest address a whole record starts at (rows put a LOST before its partner, memory the other way).
        const oldest = Math.max(...walkRing(ring).offsets);
        const start = oldestRecordStart(u32View(ring.bytes), validEnd(ring), 48);
        assert.equal(start, oldest, `${losts} LOST, ${dataSize} bytes`);
        found++;
        // The decode bases its times there: the smallest time is 0 (the LOST records have none).
        const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ring] });
        assert.equal(Math.min(...Array.from(snapshot.columns.time).filter((t) => !Number.isNaN(t))), 0);
      }
    }
    assert.equal(found, 12);
  });

  it("finds a wrapped backward ring's oldest whole record when the newest samples' callchains are shorter than the others'", () => {
    const st = HOT | Sample.CALLCHAIN;
    const chain = (depth: number) => {
      const w = new ByteWriter().u64(BigInt(depth));
      for (let k = 0; k < depth; k++) w.u64(0x400000n + BigInt(k));
      return w.toBytes();
    };
    for (const dataSize of [1024, 4096, 65536]) {
      // Oldest first: depth 3, a few of depth 5, and the two newest of depth 1 (the bench's callchain ring had 112-byte newest records among 136-byte ones).
      const records = Array.from({ length: 3000 }, (_, i) =>
        sampleRecord(st, {
          id: 7n,
          ip: 0x1000n,
          pid: 1,
          tid: 1,
          time: BASE + BigInt(i),
          cpu: 0,
          period: 1n,
          tail: chain(i >= 2998 ? 1 : i % 97 === 0 ? 5 : 3),
        }),
      );
      const ring = ringFromRecords(records, dataSize, 'backward');
      const u32 = u32View(ring.bytes);
      const end = validEnd(ring);
      const newestSize = u32[1] >>> 16;
      const oldest = Math.max(...walkRing(ring).offsets);
      assert.equal(oldestRecordStart(u32, end, newestSize), -1, `${dataSize} bytes: the newest size alone does not find it`);
      assert.equal(oldestRecordStart(u32, end, newestSize, sampleSizesAtStart(u32, end, newestSize)), oldest, `${dataSize} bytes`);
      // Based there, the times need no pass after the decode: the oldest record's time is the base, 0.
      const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st), [7n])], rings: [ring] });
      assert.equal(snapshot.columns.time[0], 0);
      assert.equal(snapshot.columns.timeOriginNs, BASE + BigInt(3000 - snapshot.columns.length));
    }
    // An oldest record of a depth none of the newest records has: found by the newest sample's id (IDENTIFIER at 8).
    const deep = Array.from({ length: 3000 }, (_, i) =>
      sampleRecord(st, { id: 7n, ip: 0x1000n, pid: 1, tid: 1, time: BASE + BigInt(i), cpu: 0, period: 1n, tail: chain(i >= 2990 ? 1 : 7) }),
    );
    const ring = ringFromRecords(deep, 4096, 'backward');
    const u32 = u32View(ring.bytes);
    const end = validEnd(ring);
    const sizes = sampleSizesAtStart(u32, end, u32[1] >>> 16);
    assert.equal(oldestRecordStart(u32, end, u32[1] >>> 16, sizes), -1);
    assert.equal(oldestRecordStart(u32, end, u32[1] >>> 16, sizes, 8), Math.max(...walkRing(ring).offsets));
  });

  it('merges a forward side-band ring (sample_id_all trailers) with flight-recorder samples', () => {
    const st = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
    const side = eventOf(1, attrOf(st, { flags: { sampleIdAll: true } }), [900n], 'dummy');
    const sampler = eventOf(0, attrOf(st | Sample.IP), [100n], 'cpu-clock');
    const comm = otherRecord(RecordType.COMM, 0x2000, new ByteWriter().u32(42).u32(42).cstring('fixture').toBytes(), st, true, {
      pid: 41,
      tid: 41,
      time: 15n,
      cpu: 3,
      id: 900n,
    });
    const fork = otherRecord(RecordType.FORK, 0, new ByteWriter().u32(42).u32(41).u32(42).u32(41).u64(5n).toBytes(), st, true, {
      pid: 41,
      tid: 41,
      time: 5n,
      cpu: 2,
      id: 900n,
    });
    const exit = otherRecord(RecordType.EXIT, 0, new ByteWriter().u32(42).u32(41).u32(43).u32(41).u64(99n).toBytes(), st, true, {
      pid: 42,
      tid: 43,
      time: 40n,
      cpu: 1,
      id: 900n,
    });
    const samples = [10n, 20n, 30n].map((t) => sampleRecord(st | Sample.IP, { id: 100n, pid: 42, tid: 42, time: t, cpu: 0, ip: 0x401000n }));
    const snapshot = decodeSnapshot({
      events: [sampler, side],
      rings: [ringFromRecords(samples, 1024, 'backward', { ringId: 0 }), ringFromRecords([fork, comm, exit], 1024, 'forward', { ringId: 1, defaultEvent: 1 })],
    });
    const c = snapshot.columns;
    assert.deepEqual(Array.from(c.kind), [RecordType.FORK, RecordType.SAMPLE, RecordType.COMM, RecordType.SAMPLE, RecordType.SAMPLE, RecordType.EXIT]);
    assert.equal(c.timeOriginNs, 5n);
    assert.deepEqual(Array.from(c.time), [0, 5, 10, 15, 25, 35]);
    assert.deepEqual(Array.from(c.event), [1, 0, 1, 0, 0, 1]);
    // Task records carry their subject's pid/tid in the body: fork child 42/42, comm 42/42, exit 42/43.
    assert.deepEqual(Array.from(c.pid), [42, 42, 42, 42, 42, 42]);
    assert.deepEqual(Array.from(c.tid), [42, 42, 42, 42, 42, 43]);
    assert.deepEqual(Array.from(c.cpu), [2, 0, 3, 0, 0, 1]);
    assert.equal(c.misc[2], 0x2000);
  });

  it('records without a time keep their ring order and follow the timed record before them', () => {
    const st = Sample.TIME | Sample.IP;
    const side = eventOf(1, attrOf(Sample.TIME), [], 'side'); // no sample_id_all: side-band records carry no time
    const sampler = eventOf(0, attrOf(st));
    const lost = (n: number) => otherRecord(RecordType.LOST, 0, new ByteWriter().u64(7n).u64(n).toBytes());
    const snapshot = decodeSnapshot({
      events: [sampler, side],
      rings: [
        ringFromRecords([sampleRecord(st, { time: 100n }), sampleRecord(st, { time: 300n })], 1024, 'backward', { ringId: 0 }),
        ringFromRecords([lost(1), sampleRecord(Sample.TIME, { time: 200n }), lost(2), lost(3)], 1024, 'forward', { ringId: 1, defaultEvent: 1 }),
      ],
    });
    const c = snapshot.columns;
    assert.deepEqual(Array.from(c.kind), [RecordType.LOST, RecordType.SAMPLE, RecordType.SAMPLE, RecordType.LOST, RecordType.LOST, RecordType.SAMPLE]);
    assert.deepEqual(
      Array.from(c.time, (t) => (Number.isNaN(t) ? -1 : t)),
      [-1, 0, 100, -1, -1, 200],
    );
    assert.equal(snapshot.coverage[1].lostRecords, 6n);
    assert.equal(snapshot.coverage[1].oldestTimeNs, 200n);
    assert.equal(snapshot.coverage[0].lostRecords, 0n);
  });

  it('counts LOST_SAMPLES, unknown ids and samples too short for their fixed fields as anomalies or losses', () => {
    const st = Sample.IDENTIFIER | Sample.TIME;
    const event = eventOf(0, attrOf(st, { flags: { sampleIdAll: true } }), [5n]);
    const lostSamples = otherRecord(RecordType.LOST_SAMPLES, 0, new ByteWriter().u64(0x1_0000_0003n).toBytes(), st, true, { time: 3n, id: 5n });
    const stranger = sampleRecord(st, { id: 77n, time: 4n });
    const short = new ByteWriter().u32(RecordType.SAMPLE).u16(0).u16(16).u64(5n).toBytes();
    const snapshot = decodeSnapshot({
      events: [event],
      rings: [ringFromRecords([sampleRecord(st, { id: 5n, time: 2n }), lostSamples, stranger, short], 1024, 'backward')],
    });
    assert.equal(snapshot.columns.length, 4);
    assert.equal(snapshot.coverage[0].lostRecords, 0x1_0000_0003n);
    assert.deepEqual(snapshot.anomalies.map((a) => a.kind).sort(), ['field-past-end', 'unknown-event-id']);
    assert.equal(snapshot.coverage[0].anomalies, 2);
    assert.equal(snapshot.columns.event[2], 0, 'an unknown id falls back to the ring default event');
  });

  it('counts every anomaly but keeps only a bounded number of anomaly objects per ring', () => {
    const st = Sample.IDENTIFIER | Sample.TIME;
    const records = Array.from({ length: 100 }, (_, i) => sampleRecord(st, { id: 999n, time: BigInt(i) }));
    const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st), [1n])], rings: [ringFromRecords(records, 4096, 'backward')] });
    assert.equal(snapshot.columns.length, 100);
    assert.equal(snapshot.coverage[0].anomalies, 100);
    assert.equal(snapshot.anomalies.length, MAX_ANOMALIES_KEPT_PER_RING);
  });

  it('decodes an empty snapshot', () => {
    const snapshot = decodeSnapshot({ events: [], rings: [] });
    assert.equal(snapshot.columns.length, 0);
    assert.equal(snapshot.columns.timeOriginNs, 0n);
  });

  describe('single pass over backward rings', () => {
    const st = Sample.IP | Sample.TIME; // 24-byte records without a tail
    const sized = (size: number, time: bigint) => sampleRecord(st, { ip: 0x1000n + time, time, tail: new Uint8Array(size - 24) });
    const columnsOf = (c: RecordColumns) => [c.time, c.kind, c.misc, c.event, c.pid, c.tid, c.cpu, c.ipHi, c.ipLo, c.ring, c.offset];
    /** Every row matches the walk (offsets oldest first) and times run 1 ns apart: nothing lost, nothing reordered. */
    const assertConsecutive = (c: RecordColumns, ring: ReturnType<typeof ringFromRecords>, firstTime: bigint) => {
      const walk = walkRing(ring);
      assert.equal(c.length, walk.offsets.length);
      for (const column of columnsOf(c)) assert.equal(column.length, c.length);
      assert.deepEqual(Array.from(c.offset), Array.from(walk.offsets));
      assert.equal(c.timeOriginNs, firstTime);
      assert.deepEqual(
        Array.from(c.time),
        Array.from({ length: c.length }, (_, i) => i),
      );
      assert.deepEqual(
        Array.from(c.ipLo),
        Array.from({ length: c.length }, (_, i) => 0x1000 + Number(firstTime) + i),
      );
    };

    it('grows its columns when older records are smaller than the newest (the size estimate is crossed several times)', () => {
      // The newest record is 264 bytes, every older one 24: the first estimate holds 16 KiB / 264 records, about 80 rows of 672.
      const records = Array.from({ length: 2000 }, (_, i) => sized(i === 1999 ? 264 : 24, 5000n + BigInt(i)));
      const ring = ringFromRecords(records, 16384, 'backward');
      const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ring] });
      const c = snapshot.columns;
      const kept = 1 + Math.floor((16384 - 264) / 24);
      assert.equal(c.length, kept);
      assertConsecutive(c, ring, 5000n + BigInt(2000 - kept));
      assert.equal(snapshot.coverage[0].recordsRetained, kept);
      assert.equal(snapshot.coverage[0].newestTimeNs, 5000n + 1999n);
      assert.deepEqual(
        snapshot.anomalies.map((a) => a.kind),
        ['truncated-oldest'],
      );
    });

    it('hands exact-size arrays over when older records are much larger than the newest (no pinned room)', () => {
      const records = Array.from({ length: 2200 }, (_, i) => sized(i === 2199 ? 24 : 512, 10n + BigInt(i)));
      const ring = ringFromRecords(records, 1 << 20, 'backward');
      const c = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ring] }).columns;
      const kept = 1 + Math.floor(((1 << 20) - 24) / 512);
      assert.equal(c.length, kept);
      assertConsecutive(c, ring, 10n + BigInt(2200 - kept));
      // All columns are views of one buffer, exactly as large as the rows need.
      for (const column of columnsOf(c)) assert.equal(column.buffer, c.time.buffer);
      assert.equal(c.time.buffer.byteLength, columnSetBytes(c.length), 'the estimate (1 MiB / 24 B rows) was not kept alive');
    });

    it('keeps room over the rows bounded for alike records (columns are views of at most 1/16 more)', () => {
      const records = Array.from({ length: 3000 }, (_, i) => sized(24, 7n + BigInt(i)));
      const ring = ringFromRecords(records, 32768, 'backward');
      const c = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ring] }).columns;
      assertConsecutive(c, ring, 7n + BigInt(3000 - Math.floor(32768 / 24)));
      assert.ok(c.time.buffer.byteLength <= columnSetBytes(Math.ceil(c.length * 1.0625) + 16));
    });

    it('is exact whatever record the time base falls on: mixed sizes, a clock step back, an empty ring', () => {
      // Sizes cycle 24/40/56 so the oldest-record guess lands inside a record; time 3 comes after time 4 (skew).
      const times = [1n, 2n, 4n, 3n, 5n, 6n, 7n, 8n, 9n, 10n, 11n];
      const records = times.map((t, i) => sized([24, 40, 56][i % 3], 0x2_0000_0000n + t));
      const ring = ringFromRecords(records, 4096, 'backward');
      const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ringFromRecords([], 4096, 'backward', { ringId: 1 }), ring] });
      const c = snapshot.columns;
      assert.equal(c.timeOriginNs, 0x2_0000_0001n);
      assert.deepEqual(
        Array.from(c.time),
        times.map((t) => Number(t - 1n)),
      );
      assert.deepEqual(Array.from(c.ring), Array(times.length).fill(1), 'rows name their ring even when an empty ring comes first');
      assert.equal(snapshot.coverage[1].oldestTimeNs, 0x2_0000_0001n);
      assert.equal(snapshot.coverage[1].newestTimeNs, 0x2_0000_000bn);
      assert.equal(snapshot.coverage[0].recordsRetained, 0);
      assert.equal(snapshot.coverage[0].oldestTimeNs, null);
    });

    it('keeps every other time exact when one record carries a damaged time 2^60 ns away', () => {
      const times = [100n, 101n, 1n << 60n, 102n, 103n];
      const records = times.map((t) => sized(24, t));
      const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st))], rings: [ringFromRecords(records, 4096, 'backward')] });
      const c = snapshot.columns;
      assert.equal(c.timeOriginNs, 100n);
      assert.deepEqual([c.time[0], c.time[1], c.time[3], c.time[4]], [0, 1, 2, 3]);
      assert.equal(snapshot.coverage[0].newestTimeNs, 1n << 60n, 'coverage reads the extreme time back from the record: exact');
    });
  });

  it('merges rings with different time bases onto the smallest time, exactly, in time order', () => {
    const st = Sample.TIME | Sample.CPU;
    const far = 1n << 40n; // ring 1 starts 2^40 ns (about 18 minutes) after ring 0
    const at = (cpu: number, time: bigint) => sampleRecord(st, { time, cpu });
    const ring0 = [0n, 10n, 20n, far + 5n].map((t) => at(0, 0x3_0000_0000n + t));
    const ring1 = [far, far + 1n, far + 2n, far + 10n].map((t) => at(1, 0x3_0000_0000n + t));
    const lost = otherRecord(RecordType.LOST, 0, new ByteWriter().u64(1n).u64(4n).toBytes());
    const side = [lost, at(2, 0x3_0000_0000n + 15n)];
    const snapshot = decodeSnapshot({
      events: [eventOf(0, attrOf(st))],
      rings: [
        ringFromRecords(ring0, 1024, 'backward', { ringId: 0, cpu: 0 }),
        ringFromRecords(ring1, 1024, 'backward', { ringId: 1, cpu: 1 }),
        ringFromRecords(side, 1024, 'forward', { ringId: 2, cpu: 2 }),
      ],
    });
    const c = snapshot.columns;
    const f = Number(far);
    assert.equal(c.timeOriginNs, 0x3_0000_0000n);
    assert.deepEqual(
      Array.from(c.time, (t) => (Number.isNaN(t) ? -1 : t)),
      [-1, 0, 10, 15, 20, f, f + 1, f + 2, f + 5, f + 10],
    );
    assert.deepEqual(Array.from(c.ring), [2, 0, 0, 2, 0, 1, 1, 1, 0, 1]);
    assert.deepEqual(Array.from(c.kind), [RecordType.LOST, ...Array(9).fill(RecordType.SAMPLE)]);
    assert.equal(snapshot.coverage[2].lostRecords, 4n);
    assert.equal(snapshot.coverage[1].oldestTimeNs, 0x3_0000_0000n + far);
  });

  it('merges a side-band ring into a flight-recorder ring whose rows must move (before, between and after its samples)', () => {
    const st = Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
    const sampler = eventOf(0, attrOf(st | Sample.IP), [100n], 'sampler');
    const side = eventOf(1, attrOf(st, { flags: { sampleIdAll: true } }), [900n], 'side');
    const samples = Array.from({ length: 300 }, (_, i) => sampleRecord(st | Sample.IP, { id: 100n, time: 1000n + 2n * BigInt(i), cpu: 0, ip: BigInt(i) }));
    const comm = (time: bigint) => otherRecord(RecordType.COMM, 0, new ByteWriter().u32(5).u32(5).cstring('x').toBytes(), st, true, { time, cpu: 1, id: 900n });
    const sideTimes = [10n, 1001n, 1301n, 5000n];
    const snapshot = decodeSnapshot({
      events: [sampler, side],
      rings: [
        ringFromRecords(sideTimes.map(comm), 1024, 'forward', { ringId: 0, defaultEvent: 1 }),
        ringFromRecords(samples, 32768, 'backward', { ringId: 1, cpu: 0 }),
      ],
    });
    const c = snapshot.columns;
    const expected = [...sideTimes.map((t) => ({ t, ring: 0 })), ...samples.map((_, i) => ({ t: 1000n + 2n * BigInt(i), ring: 1 }))].sort((a, b) =>
      Number(a.t - b.t),
    );
    assert.equal(c.length, 304);
    assert.equal(c.timeOriginNs, 10n);
    assert.deepEqual(
      Array.from(c.time),
      expected.map((e) => Number(e.t - 10n)),
    );
    assert.deepEqual(
      Array.from(c.ring),
      expected.map((e) => e.ring),
    );
    const sampleRows = Array.from(c.kind).flatMap((kind, row) => (kind === RecordType.SAMPLE ? [row] : []));
    assert.deepEqual(
      sampleRows.map((row) => c.ipLo[row]),
      samples.map((_, i) => i),
      'every sample once, oldest first',
    );
    assert.deepEqual(
      sampleRows.map((row) => c.event[row]),
      Array(300).fill(0),
    );
    assert.deepEqual(
      Array.from(c.cpu).filter((_, row) => c.ring[row] === 0),
      [1, 1, 1, 1],
    );
  });

  it('merges in runs: a large ring around a small one costs a few runs, ties go to the lower ring', () => {
    const big = Float64Array.from({ length: 1000 }, (_, i) => 2 * i);
    const small = Float64Array.from([501, 1001]);
    const runs = mergeRuns([big, small], [1000, 2], new Float64Array(2));
    assert.equal(runs.count, 5);
    assert.deepEqual(Array.from(runs.ring.subarray(0, 5)), [0, 1, 0, 1, 0]);
    assert.deepEqual(Array.from(runs.from.subarray(0, 5)), [0, 0, 251, 1, 501]);
    assert.deepEqual(Array.from(runs.length.subarray(0, 5)), [251, 1, 250, 1, 499]);
    // Shifts move a ring's times before comparing; NaN (no time) follows the row before it.
    const shifted = mergeRuns([Float64Array.from([5, 13]), Float64Array.from([0, NaN, 7])], [2, 3], Float64Array.from([0, 5]));
    assert.equal(shifted.count, 3);
    assert.deepEqual(Array.from(shifted.ring.subarray(0, 3)), [0, 1, 0]);
    assert.deepEqual(Array.from(shifted.length.subarray(0, 3)), [1, 3, 1]);
  });
});
