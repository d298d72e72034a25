// Thread states built from columns (snapshotSwitches' one typed pass, switches read in place, buildThreadStates' typed
// slots) against the plain way they were built before: every row visited, every switch through the full decode
// (fullDecodeSwitches), one object per switch and Maps of objects per thread. Synthetic snapshots that mix what a
// capture mixes: cpu-clock samples, side-band, samples without a time, sched_switch events of several layouts (one read
// through decodeRecordAt only), a sched_switch without prev_state, damaged payloads, a CPU past the dense range, and
// times out of order within a ring.

import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../native/decode/columns';
import { ByteWriter, commRecord, prng, SCHED_SWITCH, sampleRecord, throttleRecord, tracepointField } from '../native/decode/test-records';
import type { EventDescription, RingCopy, TracepointField } from '../native/abi/snapshot';
import { PerfType, RecordType, Sample } from '../native/abi/uapi';
import type { DecodedSnapshot } from '../native/decode/types';
import { StringTable } from '../native/abi/string-table';
import { StateFlag, ThreadState, type ThreadStateTable } from '../shared/thread-states';
import { buildThreadStates, threadStatesAndComms, threadStatesMessage, type SwitchEdges, type SwitchRecord } from './thread-states';
import { fullDecodeSwitches } from '../test/cli/full-decode-switches';

/**
 * The intervals as buildThreadStates made them before it read columns (a Map of objects per thread, arrays pushed):
 * the reference the typed builder must equal exactly, interval for interval and in the same order.
 */
function referenceThreadStates(switches: readonly SwitchRecord[], edges: SwitchEdges): ThreadStateTable {
  const order = switches.map((_, i) => i).sort((a, b) => switches[a].time - switches[b].time || a - b);
  const start: number[] = [],
    end: number[] = [],
    tid: number[] = [],
    cpu: number[] = [],
    state: number[] = [],
    flags: number[] = [],
    nextTid: number[] = [],
    nextComm: number[] = [];
  const commTable = new StringTable();
  const push = (t0: number, t1: number, thread: number, onCpu: number, code: number, flag: number, next: number, nextName: number): number => {
    start.push(t0);
    end.push(t1);
    tid.push(thread);
    cpu.push(onCpu);
    state.push(code);
    flags.push(flag);
    nextTid.push(next);
    nextComm.push(nextName);
    return start.length - 1;
  };
  const running = new Map<number, { readonly cpu: number; readonly since: number }>();
  const offCpu = new Map<number, number>();
  const lastSwitchOnCpu = new Map<number, number>();
  for (const i of order) {
    const s = switches[i];
    const next = s.nextTid === 0 ? -1 : s.nextTid;
    const nextName = commTable.indexOf(s.nextComm);
    if (s.prevTid !== 0) {
      const run = running.get(s.prevTid);
      running.delete(s.prevTid);
      const known = run !== undefined && run.cpu === s.cpu;
      const open = offCpu.get(s.prevTid);
      let from = run?.since ?? 0;
      if (!known) {
        from = Math.max(edges.cpuStart(s.cpu), lastSwitchOnCpu.get(s.cpu) ?? -Infinity, open === undefined ? -Infinity : start[open]);
        from = Math.min(from, s.time);
        if (open !== undefined) end[open] = from;
      }
      push(from, s.time, s.prevTid, s.cpu, ThreadState.RUNNING, known ? 0 : StateFlag.START_UNKNOWN, s.nextTid, nextName);
      offCpu.set(s.prevTid, push(s.time, edges.end, s.prevTid, s.cpu, s.prevState, StateFlag.END_UNKNOWN, s.nextTid, nextName));
    }
    if (next > 0) {
      const open = offCpu.get(next);
      if (open !== undefined) {
        end[open] = s.time;
        flags[open] &= ~StateFlag.END_UNKNOWN;
        offCpu.delete(next);
      }
      running.set(next, { cpu: s.cpu, since: s.time });
    }
    lastSwitchOnCpu.set(s.cpu, s.time);
  }
  for (const [thread, run] of running) push(run.since, Math.max(run.since, edges.end), thread, run.cpu, ThreadState.RUNNING, StateFlag.END_UNKNOWN, -1, -1);
  return {
    count: start.length,
    start: Float64Array.from(start),
    end: Float64Array.from(end),
    tid: Int32Array.from(tid),
    cpu: Int32Array.from(cpu),
    state: Uint8Array.from(state),
    flags: Uint8Array.from(flags),
    nextTid: Int32Array.from(nextTid),
    nextComm: Int32Array.from(nextComm),
    comms: commTable.strings,
  };
}

/** threadStatesAndComms the plain way: the full decode's switches, the reference builder, names as it gave them. */
function referenceStatesAndComms(snapshot: DecodedSnapshot): { table?: ThreadStateTable; comms: Map<number, string> } {
  const comms = new Map<number, string>();
  const full = fullDecodeSwitches(snapshot);
  if (!full) return { comms };
  for (const s of full.switches) {
    if (s.nextTid > 0 && s.nextComm && !comms.has(s.nextTid)) comms.set(s.nextTid, s.nextComm);
    if (s.prevTid > 0 && s.prevComm) comms.set(s.prevTid, s.prevComm);
  }
  const table = referenceThreadStates(full.switches, { cpuStart: (c) => full.cpuStart.get(c) ?? -Infinity, end: full.end });
  return { table, comms };
}

const field = tracepointField;
/** SCHED_SWITCH's fields with `name` replaced (undefined: left out). */
function fieldsWith(replaced: Record<string, TracepointField | undefined>): TracepointField[] {
  return SCHED_SWITCH.tracepoint!.fields.flatMap((f) => (f.name in replaced ? (replaced[f.name] ? [replaced[f.name]!] : []) : [f]));
}
function switchEvent(
  index: number,
  name: string,
  id: bigint,
  sampleType: number,
  fields: TracepointField[],
  extra: Partial<EventDescription['attr']> = {},
): EventDescription {
  return {
    index,
    name,
    ids: [id],
    attr: { ...SCHED_SWITCH.attr, sampleType: Sample.IDENTIFIER | sampleType, flags: { sampleIdAll: true }, ...extra },
    tracepoint: { ...SCHED_SWITCH.tracepoint!, fields },
  };
}

const BASE = Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW;
const EVENTS: EventDescription[] = [
  // The usual layout, read in place.
  switchEvent(0, 'sched:sched_switch', 1n, BASE, fieldsWith({})),
  // perf's spelling, a callchain before RAW, a 4-byte unsigned prev_state and no prev_comm.
  switchEvent(
    1,
    'sched_switch',
    2n,
    BASE | Sample.CALLCHAIN,
    fieldsWith({ prev_state: field('prev_state', 'unsigned int prev_state', 32, 4, false), prev_comm: undefined }),
  ),
  {
    index: 2,
    name: 'cpu-clock',
    ids: [3n],
    attr: {
      type: PerfType.SOFTWARE,
      config: 0n,
      samplePeriod: 1n,
      sampleType: Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD,
      readFormat: 0,
      flags: {},
    },
  },
  // User registers after RAW (only decodeRecordAt finds RAW's end), a signed 1-byte prev_state.
  switchEvent(3, 'sched:sched_switch', 4n, BASE | Sample.REGS_USER, fieldsWith({ prev_state: field('prev_state', 'char prev_state', 32, 1, true) })),
  // Named sched_switch but without prev_state: not a switch.
  switchEvent(4, 'sched:sched_switch', 5n, BASE, fieldsWith({ prev_state: undefined })),
  // Samples without a time (NaN rows: they place nothing). Every event with sample_id_all: the COMM records carry a time.
  {
    index: 5,
    name: 'untimed',
    ids: [6n],
    attr: {
      type: PerfType.SOFTWARE,
      config: 0n,
      samplePeriod: 1n,
      sampleType: Sample.IDENTIFIER | Sample.TID | Sample.CPU,
      readFormat: 0,
      flags: { sampleIdAll: true },
    },
  },
];

/** A sched_switch payload of `bytes` bytes (64 the format's size; fewer: damaged) for event `e`. */
function payload(e: EventDescription, bytes: number, prev: [string, number, number], next: [string, number]): Uint8Array {
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => out.set(new TextEncoder().encode(s).subarray(0, 16), at);
  const f = (name: string) => e.tracepoint!.fields.find((x) => x.name === name);
  if (f('prev_comm')) text(8, prev[0]);
  view.setInt32(24, prev[1], true);
  const state = f('prev_state');
  if (state?.size === 1) view.setInt8(32, prev[2]);
  else if (state?.size === 4) view.setUint32(32, prev[2] >>> 0, true);
  else view.setBigInt64(32, BigInt(prev[2]), true);
  text(40, next[0]);
  view.setInt32(56, next[1], true);
  const size = bytes + ((4 + bytes) % 8 === 0 ? 0 : 8 - ((4 + bytes) % 8));
  const raw = new Uint8Array(size);
  raw.set(out.subarray(0, bytes));
  return new ByteWriter().u32(size).raw(raw).toBytes();
}

/**
 * A seeded snapshot: three rings (CPUs 0, 1 and 5000), each a mix of every event above and COMM side-band, in time
 * order (`inOrder`: the rows merged by time are too) or now and then back in time.
 */
function mixedSnapshot(seed: number, recordsPerRing: number, inOrder = false): DecodedSnapshot {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  // The last two: of the same length and the same 32-bit FNV-1a hash (the interner must tell them apart by their bytes).
  const names = ['bash', 'worker', 'kworker/0:1', 'naïve-ütf8', 'a-name-longer-than-16', '', '7yzlaa', 'e6apaa'];
  const states = [0, 1, 2, 0x100, 0x102, 4, 128, -1, 0x40];
  const rings: RingCopy[] = [5000, 0, 1].map((cpu, r) => {
    const records: Uint8Array[] = [];
    let time = 1_000_000n + BigInt(r * 7);
    let current = 0;
    for (let i = 0; i < recordsPerRing; i++) {
      // Mostly forward, now and then back in time (a ring's order is its write order).
      time = !inOrder && random() < 0.03 ? time - BigInt(1 + Math.floor(random() * 500)) : time + BigInt(1 + Math.floor(random() * 300));
      const tid = current === 0 ? 0 : current;
      const roll = random();
      if (roll < 0.35) {
        const e = pick([EVENTS[0], EVENTS[0], EVENTS[1], EVENTS[3], EVENTS[4]]);
        const next = random() < 0.15 ? 0 : 10 + Math.floor(random() * 12);
        const damaged = random() < 0.05;
        const raw = payload(e, damaged ? 20 : 64, [pick(names), random() < 0.1 ? 10 + Math.floor(random() * 12) : tid, pick(states)], [pick(names), next]);
        const chain = e.attr.sampleType & Sample.CALLCHAIN ? new ByteWriter().u64(2n).u64(0xffffffff81000000n).u64(0x401000n).toBytes() : new Uint8Array(0);
        const regs = e.attr.sampleType & Sample.REGS_USER ? new ByteWriter().u64(0n).toBytes() : new Uint8Array(0);
        const tail = new Uint8Array([...chain, ...raw, ...regs]);
        records.push(sampleRecord(e.attr.sampleType, { id: e.ids[0], pid: tid, tid, time, cpu, tail }));
        if (!damaged) current = next;
      } else if (roll < 0.9) {
        records.push(sampleRecord(EVENTS[2].attr.sampleType, { id: 3n, ip: 0x401000n + BigInt(i), pid: tid, tid, time, cpu, period: 1n }));
      } else if (roll < 0.95) {
        records.push(sampleRecord(EVENTS[5].attr.sampleType, { id: 6n, pid: tid, tid, cpu }));
      } else {
        records.push(commRecord(EVENTS[2].attr.sampleType, pick(names), time, 3n));
      }
    }
    // Last, a timed record that is not a sample (THROTTLE: its time in its body): the latest time is the last sample's, not the last record's.
    records.push(throttleRecord(EVENTS[2].attr.sampleType, time + 1000n, 3n));
    const bytes = new Uint8Array(records.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of records) {
      bytes.set(b, at);
      at += b.length;
    }
    return {
      ringId: r,
      label: `cpu${cpu}`,
      cpu,
      tid: -1,
      direction: 'forward',
      defaultEvent: 2,
      bytes,
      validBytes: bytes.length,
      dataSize: bytes.length,
      bytesWritten: BigInt(bytes.length),
      path: 'paused',
    };
  });
  return decodeSnapshot({ events: EVENTS, rings, takenAtMs: 0, pauseWindowNs: rings.map(() => 0) });
}

describe('thread states from columns, against the plain per-row way', () => {
  it('gives the same intervals, names and edges on mixed snapshots (rows in time order or not, several layouts, damaged payloads, untimed rows)', () => {
    let switches = 0;
    const inOrder = (snapshot: DecodedSnapshot) => {
      const timed = Array.from(snapshot.columns.time).filter((t) => t === t);
      return timed.every((t, i) => i === 0 || t >= timed[i - 1]);
    };
    for (let seed = 1; seed <= 16; seed++) {
      // Odd seeds: rows in time order (switches and edges found by the typed arrays' searches), even: not (a pass over every row).
      const snapshot = mixedSnapshot(seed, 60 + seed * 30, seed % 2 === 1);
      assert.equal(inOrder(snapshot), seed % 2 === 1, `seed ${seed}: rows in time order`);
      const { kind } = snapshot.columns;
      assert.ok(kind.includes(RecordType.COMM) && kind.includes(RecordType.SAMPLE), `seed ${seed}: side-band and samples`);
      const reference = referenceStatesAndComms(snapshot);
      const { threadStates, comms } = threadStatesAndComms(snapshot, 'snap');
      assert.deepEqual(comms, reference.comms, `seed ${seed}: names`);
      if (!reference.table) {
        assert.equal(threadStates, undefined, `seed ${seed}: no switches`);
        continue;
      }
      assert.ok(threadStates, `seed ${seed}: thread states`);
      assert.deepEqual(threadStates, threadStatesMessage('snap', reference.table), `seed ${seed}: the same message`);
      switches += fullDecodeSwitches(snapshot)!.switches.length;
    }
    assert.ok(switches > 100, `${switches} switches compared`);
  });

  it('every case the snapshots are meant to hold is there: each layout read, the damaged ones left out, switches out of time order', () => {
    const snapshot = mixedSnapshot(7, 400);
    const { event, kind, time, length } = snapshot.columns;
    const switchRows = (index: number) => Array.from({ length }, (_, row) => row).filter((row) => kind[row] === RecordType.SAMPLE && event[row] === index);
    const full = fullDecodeSwitches(snapshot)!;
    // Rows of every sched_switch event with prev_state, and fewer switches than those rows (damaged payloads).
    const rows = [0, 1, 3].map((index) => switchRows(index).length);
    assert.ok(
      rows.every((n) => n > 0),
      `rows per layout ${rows.join(', ')}`,
    );
    assert.ok(full.switches.length < rows.reduce((a, b) => a + b, 0), 'some payloads are damaged');
    assert.ok(switchRows(4).length > 0, 'a sched_switch without prev_state');
    assert.ok(
      full.switches.some((s, i) => i > 0 && s.time < full.switches[i - 1].time),
      'switches out of time order',
    );
    assert.ok(
      full.switches.some((s) => s.cpu === 5000),
      'a CPU past the dense range',
    );
    assert.ok(
      Array.from(time).some((t) => t !== t),
      'untimed rows',
    );
  });

  it('hand-made switches give the same table as the reference (buildThreadStates from records)', () => {
    const random = prng(99);
    const switches: SwitchRecord[] = Array.from({ length: 500 }, () => ({
      time: Math.floor(random() * 10_000),
      cpu: Math.floor(random() * 3),
      prevTid: Math.floor(random() * 8) - 1,
      prevState: ([ThreadState.SLEEPING, ThreadState.PREEMPTED, ThreadState.UNINTERRUPTIBLE] as const)[Math.floor(random() * 3)],
      nextTid: Math.floor(random() * 8) - 1,
      nextComm: `t${Math.floor(random() * 5)}`,
    }));
    const edges: SwitchEdges = { cpuStart: (c) => c * 10 - 5, end: 10_000 };
    assert.deepEqual(buildThreadStates(switches, edges), referenceThreadStates(switches, edges));
  });
});
