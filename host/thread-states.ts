// Thread states from a snapshot's sched:sched_switch records (shared/thread-states.ts says what they are). The page
// cannot build them: it receives the record columns, not the tracepoint fields (prev_state, next_pid, ...), which only
// the host decodes. Pure: the interval builder works on plain switch records, so it is tested on synthetic sequences.

import type { DecodedSnapshot } from '../native/decode/types';
import { rawFieldsReader } from '../native/decode/raw-fields';
import type { TracepointValue } from '../native/decode/tracepoint';
import { RecordType } from '../native/abi/uapi';
import type { ThreadStates } from '../shared/protocol';
import { StringTable } from '../native/abi/string-table';
import {
  StateFlag,
  ThreadState,
  THREAD_STATE_COLUMN_NAMES,
  threadStateOfPrevState,
  type ThreadStateCode,
  type ThreadStateTable,
} from '../shared/thread-states';

/** One sched_switch: on `cpu` at `time`, `prevTid` left with `prevState` and `nextTid` came on. */
export interface SwitchRecord {
  readonly time: number;
  readonly cpu: number;
  readonly prevTid: number;
  readonly prevState: ThreadStateCode;
  readonly nextTid: number;
  readonly nextComm: string;
  /** prev_comm: the switched-out task's name (names threads no COMM record named, e.g. in an -a capture). */
  readonly prevComm?: string;
}

export interface SwitchEdges {
  /** The time of the first record of `cpu` in the snapshot (what ran there before is unknown). */
  cpuStart(cpu: number): number;
  /** The time of the snapshot's last record. */
  readonly end: number;
}

/**
 * The intervals of `switches`, ordered by time (ties keep their order: one CPU's switches are in ring order). A thread
 * runs on a CPU from its switch-in to its switch-out there, and is off CPU in the state it left with until its next
 * switch-in on any CPU. At the edges: a switch-out with no switch-in before it ran since the latest of the CPU's first
 * record, the CPU's previous switch and its own previous switch-out (START_UNKNOWN); a thread not switched back in
 * stays in its state to the snapshot's end (END_UNKNOWN); a thread first seen switched in has no interval before it.
 * The idle task (tid 0, one per CPU) gets none.
 */
export function buildThreadStates(switches: readonly SwitchRecord[], edges: SwitchEdges): ThreadStateTable {
  const order = switches.map((_, i) => i).sort((a, b) => switches[a].time - switches[b].time || a - b);
  const start: number[] = [],
    end: number[] = [],
    tid: number[] = [],
    cpu: number[] = [],
    state: number[] = [],
    flags: number[] = [];
  const nextTid: number[] = [],
    nextComm: number[] = [];
  const commTable = new StringTable();
  const comms = commTable.strings;
  const commId = (comm: string): number => commTable.indexOf(comm);
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
  /** Per thread: where and since when it runs. */
  const running = new Map<number, { readonly cpu: number; readonly since: number }>();
  /** Per thread: its open off-CPU interval (index), closed by its next switch-in. */
  const offCpu = new Map<number, number>();
  /** Per CPU: the time of its last switch. */
  const lastSwitchOnCpu = new Map<number, number>();
  for (const i of order) {
    const s = switches[i];
    const next = s.nextTid === 0 ? -1 : s.nextTid;
    const nextName = commId(s.nextComm);
    if (s.prevTid !== 0) {
      const run = running.get(s.prevTid);
      running.delete(s.prevTid);
      // Running on another CPU means a switch-out went missing (lost records): when it began here is unknown.
      const known = run !== undefined && run.cpu === s.cpu;
      const open = offCpu.get(s.prevTid);
      let from = run?.since ?? 0;
      if (!known) {
        // Its switch-in was not recorded (the capture's edge, lost records, or a per-thread capture, where the kernel
        // emits sched_switch only in the switched-out task's context): it came on this CPU after the CPU's previous
        // switch and after its own previous switch-out. From there it is counted as running, as perf sched timehist does.
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
  // Still running at the end: running up to the snapshot's last record.
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
    comms,
  };
}

/** True for the sched_switch tracepoint's name as perf and tracefs spell it. */
export function isSchedSwitch(name: string): boolean {
  return name === 'sched:sched_switch' || name === 'sched_switch';
}

/** The sched_switch fields thread states read, in the order snapshotSwitches takes them. */
const SWITCH_FIELDS = ['prev_pid', 'next_pid', 'prev_state', 'next_comm', 'prev_comm'] as const;

/**
 * The sched_switch records of a snapshot, with the edges their intervals need; null when it has none. Only the fields
 * it needs are read, in place (rawFieldsReader); a record that does not decode is left out, as the field filter leaves it out.
 */
export function snapshotSwitches(snapshot: DecodedSnapshot): { switches: SwitchRecord[]; edges: SwitchEdges } | null {
  const switchEvent = new Uint8Array(snapshot.events.length);
  let any = false;
  snapshot.events.forEach((e, i) => {
    if (isSchedSwitch(e.name) && e.tracepoint?.fields.some((f) => f.name === 'prev_state')) {
      switchEvent[i] = 1;
      any = true;
    }
  });
  if (!any) return null;
  const { kind, event, time, cpu, length } = snapshot.columns;
  const read = rawFieldsReader(snapshot, SWITCH_FIELDS);
  const values: (TracepointValue | undefined)[] = [];
  const switches: SwitchRecord[] = [];
  const cpuStart = new Map<number, number>();
  let last = -Infinity;
  for (let row = 0; row < length; row++) {
    const t = time[row];
    // Only samples place a CPU's first record: side-band a host synthesized (COMM, MMAP at time 0) happened nowhere.
    if (t !== t || kind[row] !== RecordType.SAMPLE) continue;
    if (t > last) last = t;
    const c = cpu[row];
    const first = cpuStart.get(c);
    if (first === undefined || t < first) cpuStart.set(c, t);
    if (event[row] >= switchEvent.length || switchEvent[event[row]] === 0) continue;
    if (!read(row, values)) continue;
    const [prevPid, nextPid, prevState, nextCommValue, prevCommValue] = values;
    if (typeof prevPid !== 'number' || typeof nextPid !== 'number' || (typeof prevState !== 'bigint' && typeof prevState !== 'number')) continue;
    const nextComm = typeof nextCommValue === 'string' ? nextCommValue : '';
    const prevComm = typeof prevCommValue === 'string' ? prevCommValue : '';
    switches.push({ time: t, cpu: c, prevTid: prevPid, prevState: threadStateOfPrevState(prevState), nextTid: nextPid, nextComm, prevComm });
  }
  if (switches.length === 0) return null;
  return { switches, edges: { cpuStart: (c) => cpuStart.get(c) ?? -Infinity, end: last } };
}

/** A table as its message: each column an exact-length ArrayBuffer (transferable). */
export function threadStatesMessage(snapshotId: string, table: ThreadStateTable): ThreadStates {
  const columns = {} as Record<(typeof THREAD_STATE_COLUMN_NAMES)[number], ArrayBuffer>;
  for (const name of THREAD_STATE_COLUMN_NAMES) {
    const column = table[name];
    columns[name] = (column.buffer as ArrayBuffer).slice(column.byteOffset, column.byteOffset + column.byteLength);
  }
  return { type: 'threadStates', snapshotId, count: table.count, columns, comms: [...table.comms] };
}

/** The thread states, and each switched thread's name as sched_switch gives it (prev_comm, else next_comm; tid 0 left out). */
export function threadStatesAndComms(snapshot: DecodedSnapshot, snapshotId: string): { threadStates?: ThreadStates; comms: Map<number, string> } {
  const comms = new Map<number, string>();
  const found = snapshotSwitches(snapshot);
  if (!found) return { comms };
  for (const s of found.switches) {
    if (s.nextTid > 0 && s.nextComm && !comms.has(s.nextTid)) comms.set(s.nextTid, s.nextComm);
    if (s.prevTid > 0 && s.prevComm) comms.set(s.prevTid, s.prevComm);
  }
  return { threadStates: threadStatesMessage(snapshotId, buildThreadStates(found.switches, found.edges)), comms };
}
