import * as assert from 'node:assert/strict';
import type { RawSnapshot } from '../abi/snapshot';
import { RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { decodeRecordAt } from './record';
import { pruneSideband } from './sideband-prune';
import { attrOf, ByteWriter, eventOf, otherRecord, prng, ringFromRecords, sampleRecord } from './test-records';
import type { DecodedSnapshot } from './types';

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const SIDEBAND = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
const SAMPLE_ID = 100n;
const SIDEBAND_ID = 900n;
const BASE = 1_000_000n;
const events = [eventOf(0, attrOf(HOT), [SAMPLE_ID], 'task-clock'), eventOf(1, attrOf(SIDEBAND, { flags: { sampleIdAll: true } }), [SIDEBAND_ID], 'sideband')];

const ids = (pid: number, tid: number, time: number) => ({ pid, tid, time: BASE + BigInt(time), id: SIDEBAND_ID, cpu: 0 });
const comm = (time: number, pid: number, tid: number, name: string) =>
  otherRecord(RecordType.COMM, 0, new ByteWriter().u32(pid).u32(tid).cstring(name).toBytes(), SIDEBAND, true, ids(pid, tid, time));
const mmap2 = (time: number, pid: number, start: number, length: number, file: string) =>
  otherRecord(
    RecordType.MMAP2,
    2,
    new ByteWriter().u32(pid).u32(pid).u64(start).u64(length).u64(0).u32(0).u32(0).u64(0).u64(0).u32(5).u32(2).cstring(file).toBytes(),
    SIDEBAND,
    true,
    ids(pid, pid, time),
  );
const task = (type: number, time: number, pid: number, ppid: number, tid: number, ptid: number) =>
  otherRecord(
    type,
    0,
    new ByteWriter()
      .u32(pid)
      .u32(ppid)
      .u32(tid)
      .u32(ptid)
      .u64(BASE + BigInt(time))
      .toBytes(),
    SIDEBAND,
    true,
    ids(pid, tid, time),
  );
const fork = (time: number, pid: number, ppid: number, tid: number, ptid: number) => task(RecordType.FORK, time, pid, ppid, tid, ptid);
const exit = (time: number, pid: number, tid: number) => task(RecordType.EXIT, time, pid, pid, tid, tid);
const lost = (time: number) => otherRecord(RecordType.LOST, 0, new ByteWriter().u64(SIDEBAND_ID).u64(3).toBytes(), SIDEBAND, true, ids(-1, -1, time));
const sample = (time: number, pid: number, tid: number, ip = 0x400100) =>
  sampleRecord(HOT, { id: SAMPLE_ID, ip: BigInt(ip), pid, tid, time: BASE + BigInt(time), cpu: 0, period: 1n });

function snapshotOf(samples: Uint8Array[], sideband: Uint8Array[]): RawSnapshot {
  return {
    events,
    rings: [ringFromRecords(samples, 1 << 16, 'backward', { ringId: 0 }), ringFromRecords(sideband, 1 << 20, 'forward', { ringId: 1, defaultEvent: 1 })],
    takenAtMs: 0,
    pauseWindowNs: [0, 0],
  };
}

/** Times (relative to BASE) of the side-band records in a decoded snapshot, oldest first. */
function sidebandTimes(raw: RawSnapshot): number[] {
  const { columns } = decodeSnapshot(raw);
  const times: number[] = [];
  for (let row = 0; row < columns.length; row++) if (columns.ring[row] === 1) times.push(Number(columns.timeOriginNs - BASE) + columns.time[row]);
  return times;
}

/**
 * What perf makes of a snapshot (its machine model, reduced): each sample's thread comm and the
 * file its ip lies in, replaying COMM, FORK and MMAP2 in time order.
 */
function perfView(snapshot: DecodedSnapshot): string[] {
  const comms = new Map<number, string>();
  const maps = new Map<number, { start: bigint; end: bigint; file: string }[]>();
  const seen: string[] = [];
  for (let row = 0; row < snapshot.columns.length; row++) {
    const record = decodeRecordAt(snapshot, row);
    const f = record.fields as Record<string, unknown>;
    switch (snapshot.columns.kind[row]) {
      case RecordType.COMM:
        comms.set(Number(f.tid), String(f.comm));
        break;
      case RecordType.FORK:
        comms.set(Number(f.tid), comms.get(Number(f.ptid)) ?? '?');
        if (f.pid !== f.ppid) maps.set(Number(f.pid), [...(maps.get(Number(f.ppid)) ?? [])]);
        break;
      case RecordType.MMAP2: {
        const start = f.addr as bigint;
        const end = start + (f.len as bigint);
        const list: { start: bigint; end: bigint; file: string }[] = [];
        for (const m of maps.get(Number(f.pid)) ?? []) {
          if (m.end <= start || m.start >= end) list.push(m);
          else {
            if (m.start < start) list.push({ ...m, end: start });
            if (m.end > end) list.push({ ...m, start: end });
          }
        }
        list.push({ start, end, file: String(f.filename) });
        maps.set(Number(f.pid), list);
        break;
      }
      case RecordType.SAMPLE: {
        const ip = f.ip as bigint;
        const file = maps.get(record.pid!)?.find((m) => m.start <= ip && ip < m.end)?.file ?? '[unknown]';
        seen.push(`${record.timeNs} ${record.pid}/${record.tid} ${comms.get(record.tid!) ?? '?'} ${file}`);
        break;
      }
      default:
        break;
    }
  }
  return seen;
}

describe('decode/sideband-prune', () => {
  it('keeps the older side-band the samples need (comms, live mappings, the forks they came through), LOST records, and all after the oldest sample', () => {
    const sideband = [
      comm(10, 50, 50, 'gone'),
      mmap2(11, 50, 0x400000, 0x1000, '/bin/gone'),
      exit(12, 50, 50),
      comm(20, 60, 60, 'sh'),
      mmap2(21, 60, 0x10000, 0x10000, '/lib/libc'),
      mmap2(22, 60, 0x400000, 0x1000, '/bin/old'),
      mmap2(23, 60, 0x400000, 0x1000, '/bin/sh'),
      mmap2(24, 60, 0x10800, 0x800, '/lib/patch'),
      fork(30, 70, 60, 70, 60),
      fork(31, 60, 60, 61, 60),
      mmap2(32, 70, 0x500000, 0x1000, '/bin/child'),
      comm(33, 80, 80, 'parent'),
      mmap2(34, 80, 0x400000, 0x1000, '/bin/parent'),
      comm(35, 85, 85, 'idle'),
      mmap2(36, 85, 0x400000, 0x1000, '/bin/idle'),
      lost(37),
      exit(38, 85, 85),
      comm(105, 70, 70, 'renamed'),
      fork(110, 90, 80, 90, 80),
      mmap2(111, 85, 0x600000, 0x1000, '/bin/late'),
    ];
    const samples = [sample(100, 70, 70, 0x500010), sample(101, 60, 61, 0x10900), sample(106, 70, 70, 0x10100), sample(112, 90, 90)];
    const raw = snapshotOf(samples, sideband);
    const { snapshot, pruning } = pruneSideband(raw);
    assert.deepEqual(sidebandTimes(snapshot), [20, 21, 23, 24, 30, 31, 32, 33, 34, 37, 105, 110, 111]);
    assert.equal(pruning.oldestSampleNs, BASE + 100n);
    assert.deepEqual([pruning.olderRecords, pruning.keptRecords], [17, 10]);
    assert.equal(pruning.droppedBytes, raw.rings[1].validBytes - snapshot.rings[1].validBytes);
    assert.equal(snapshot.rings[0], raw.rings[0], 'the flight recorder is untouched');
    assert.deepEqual(perfView(decodeSnapshot(snapshot)), perfView(decodeSnapshot(raw)));
    assert.deepEqual(perfView(decodeSnapshot(snapshot)), [
      `${BASE + 100n} 70/70 sh /bin/child`,
      `${BASE + 101n} 60/61 sh /lib/patch`,
      `${BASE + 106n} 70/70 renamed /lib/libc`,
      `${BASE + 112n} 90/90 parent /bin/parent`,
    ]);
  });

  it('leaves a snapshot without samples whole', () => {
    const raw = snapshotOf([], [comm(10, 50, 50, 'a'), exit(12, 50, 50)]);
    const { snapshot, pruning } = pruneSideband(raw);
    assert.equal(snapshot, raw);
    assert.equal(pruning.oldestSampleNs, null);
  });

  it('random forks, threads, execs, mmaps and exits: every sample has the comm and file it had with the whole side-band', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
      const sideband: Uint8Array[] = [];
      const samples: Uint8Array[] = [];
      const live: { pid: number; tids: number[] }[] = [{ pid: 10, tids: [10] }];
      sideband.push(comm(1, 10, 10, 'init'), mmap2(2, 10, 0x400000, 0x4000, '/bin/init'));
      let nextPid = 11;
      const firstSample = 200 + Math.floor(random() * 200);
      for (let time = 3; time < 600; time++) {
        const proc = pick(live);
        const action = random();
        if (time >= firstSample && action < 0.3) {
          samples.push(sample(time, proc.pid, pick(proc.tids), 0x400000 + Math.floor(random() * 0x8000)));
        } else if (action < 0.4 && live.length < 12) {
          const pid = nextPid++;
          sideband.push(fork(time, pid, proc.pid, pid, pick(proc.tids)));
          live.push({ pid, tids: [pid] });
        } else if (action < 0.45) {
          const tid = nextPid++;
          sideband.push(fork(time, proc.pid, proc.pid, tid, pick(proc.tids)));
          proc.tids.push(tid);
        } else if (action < 0.55) {
          sideband.push(comm(time, proc.pid, pick(proc.tids), `c${time}`));
        } else if (action < 0.85) {
          const start = 0x400000 + Math.floor(random() * 16) * 0x800;
          sideband.push(mmap2(time, proc.pid, start, (1 + Math.floor(random() * 8)) * 0x400, `/f${time}`));
        } else if (action < 0.9 && live.length > 1 && proc.pid !== 10) {
          for (const tid of proc.tids) sideband.push(exit(time, proc.pid, tid));
          live.splice(live.indexOf(proc), 1);
        } else if (action < 0.93) {
          sideband.push(lost(time));
        }
      }
      const raw = snapshotOf(samples, sideband);
      const { snapshot, pruning } = pruneSideband(raw);
      const expected = perfView(decodeSnapshot(raw));
      assert.ok(expected.length > 0, `seed ${seed}: samples`);
      assert.deepEqual(perfView(decodeSnapshot(snapshot)), expected, `seed ${seed}`);
      assert.ok(pruning.keptRecords < pruning.olderRecords, `seed ${seed}: something older was left out`);
      const lostRecords = (s: RawSnapshot) => decodeSnapshot(s).coverage[1].lostRecords;
      assert.equal(lostRecords(snapshot), lostRecords(raw), `seed ${seed}: every LOST record stays`);
    }
  });
});
