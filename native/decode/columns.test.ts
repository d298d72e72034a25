import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../perf/uapi';
import { decodeSnapshot, MAX_ANOMALIES_KEPT_PER_RING } from './columns';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord } from './test-records';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const BASE = 0x1fffffff0n; // crosses a u32 boundary 16 ns later

describe('decode/columns', () => {
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
    assert.deepEqual(Array.from(snapshot.columns.time, (t) => Number(snapshot.columns.timeOriginNs) + t), Array.from({ length: kept }, (_, i) => 1000 + 100 - kept + i));
    const cov = snapshot.coverage[0];
    assert.equal(cov.bytesWritten, 4800n);
    assert.equal(cov.bytesOverwritten, BigInt(4800 - kept * 48));
    assert.equal(cov.anomalies, 0, 'a truncated oldest record is expected, not counted');
    assert.equal(snapshot.anomalies[0].kind, 'truncated-oldest');
    assert.equal(cov.newestTimeNs, 1099n);
  });

  it('merges a forward side-band ring (sample_id_all trailers) with flight-recorder samples', () => {
    const st = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
    const side = eventOf(1, attrOf(st, { flags: { sampleIdAll: true } }), [900n], 'dummy');
    const sampler = eventOf(0, attrOf(st | Sample.IP), [100n], 'cpu-clock');
    const comm = otherRecord(RecordType.COMM, 0x2000, new ByteWriter().u32(42).u32(42).cstring('fixture').toBytes(), st, true, { pid: 41, tid: 41, time: 15n, cpu: 3, id: 900n });
    const fork = otherRecord(
      RecordType.FORK,
      0,
      new ByteWriter().u32(42).u32(41).u32(42).u32(41).u64(5n).toBytes(),
      st,
      true,
      { pid: 41, tid: 41, time: 5n, cpu: 2, id: 900n },
    );
    const exit = otherRecord(RecordType.EXIT, 0, new ByteWriter().u32(42).u32(41).u32(43).u32(41).u64(99n).toBytes(), st, true, { pid: 42, tid: 43, time: 40n, cpu: 1, id: 900n });
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
    assert.deepEqual(Array.from(c.time, (t) => (Number.isNaN(t) ? -1 : t)), [-1, 0, 100, -1, -1, 200]);
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
    const snapshot = decodeSnapshot({ events: [event], rings: [ringFromRecords([sampleRecord(st, { id: 5n, time: 2n }), lostSamples, stranger, short], 1024, 'backward')] });
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
});
