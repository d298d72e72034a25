// Thread states from a snapshot's sched:sched_switch records (shared/thread-states.ts says what they are). The page
// cannot build them: it receives the record columns, not the tracepoint fields (prev_state, next_pid, ...), which only
// the host decodes. Pure: the interval builder works on plain switch records, so it is tested on synthetic sequences.

import { grown } from '../native/abi/grown';
import type { DecodedSnapshot } from '../native/decode/types';
import { rawFieldsReader, rawPayloadLocator, tracepointFieldNamed, type PayloadPlace, type RawFieldsReader } from '../native/decode/raw-fields';
import { stringAt } from '../native/decode/tracepoint';
import type { EventDescription, TracepointField } from '../native/abi/snapshot';
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
 * A snapshot's sched_switch records as columns, in row order (no object per record: a capture of a busy machine has
 * hundreds of thousands). The names are indexes into `comms`, each distinct name once.
 */
export interface SwitchColumns {
  readonly count: number;
  readonly time: Float64Array;
  readonly cpu: Int32Array;
  readonly prevTid: Int32Array;
  readonly prevState: Uint8Array;
  readonly nextTid: Int32Array;
  readonly nextComm: Int32Array;
  /** prev_comm's index ('' where the record had none). */
  readonly prevComm: Int32Array;
  readonly comms: readonly string[];
}

/** Appends switches to columns that grow (SwitchColumns' builder). */
class SwitchColumnsBuilder {
  count = 0;
  time: Float64Array;
  cpu: Int32Array;
  prevTid: Int32Array;
  prevState: Uint8Array;
  nextTid: Int32Array;
  nextComm: Int32Array;
  prevComm: Int32Array;
  private readonly comms = new StringTable();

  constructor(capacity: number) {
    const n = Math.max(16, capacity);
    this.time = new Float64Array(n);
    this.cpu = new Int32Array(n);
    this.prevTid = new Int32Array(n);
    this.prevState = new Uint8Array(n);
    this.nextTid = new Int32Array(n);
    this.nextComm = new Int32Array(n);
    this.prevComm = new Int32Array(n);
  }

  add(time: number, cpu: number, prevTid: number, prevState: ThreadStateCode, nextTid: number, nextComm: string, prevComm: string): void {
    this.addIndexed(time, cpu, prevTid, prevState, nextTid, this.comms.indexOf(nextComm), this.comms.indexOf(prevComm));
  }

  /** A switch whose names are indexes of commIndex. */
  addIndexed(time: number, cpu: number, prevTid: number, prevState: ThreadStateCode, nextTid: number, nextComm: number, prevComm: number): void {
    if (this.count === this.time.length) this.grow();
    const i = this.count++;
    this.time[i] = time;
    this.cpu[i] = cpu;
    this.prevTid[i] = prevTid;
    this.prevState[i] = prevState;
    this.nextTid[i] = nextTid;
    this.nextComm[i] = nextComm;
    this.prevComm[i] = prevComm;
  }

  /** The index of a name in the columns' `comms`. */
  commIndex(comm: string): number {
    return this.comms.indexOf(comm);
  }

  private grow(): void {
    const n = 2 * this.time.length;
    this.time = grown(this.time, n);
    this.cpu = grown(this.cpu, n);
    this.prevTid = grown(this.prevTid, n);
    this.prevState = grown(this.prevState, n);
    this.nextTid = grown(this.nextTid, n);
    this.nextComm = grown(this.nextComm, n);
    this.prevComm = grown(this.prevComm, n);
  }

  build(): SwitchColumns {
    const n = this.count;
    return {
      count: n,
      time: this.time.slice(0, n),
      cpu: this.cpu.slice(0, n),
      prevTid: this.prevTid.slice(0, n),
      prevState: this.prevState.slice(0, n),
      nextTid: this.nextTid.slice(0, n),
      nextComm: this.nextComm.slice(0, n),
      prevComm: this.prevComm.slice(0, n),
      comms: this.comms.strings,
    };
  }
}

/** Switch records as columns (buildThreadStates' input from tests and hand-made switches). */
export function switchColumnsOf(switches: readonly SwitchRecord[]): SwitchColumns {
  const builder = new SwitchColumnsBuilder(switches.length);
  for (const s of switches) builder.add(s.time, s.cpu, s.prevTid, s.prevState, s.nextTid, s.nextComm, s.prevComm ?? '');
  return builder.build();
}

/** The columns as records, one object each (for tests and referees that compare with a per-record decode). */
export function switchRecordsOf(columns: SwitchColumns): SwitchRecord[] {
  return Array.from({ length: columns.count }, (_, i) => ({
    time: columns.time[i],
    cpu: columns.cpu[i],
    prevTid: columns.prevTid[i],
    prevState: columns.prevState[i] as ThreadStateCode,
    nextTid: columns.nextTid[i],
    nextComm: columns.comms[columns.nextComm[i]],
    prevComm: columns.comms[columns.prevComm[i]],
  }));
}

/**
 * The switches' indexes by time, ties in their order; null when they are in that order already (one CPU's ring is,
 * and rows are merged by time). The check alone in a function: small, so V8 compiles it soon.
 */
function timeOrder(time: Float64Array, count: number): Int32Array | null {
  let last = -Infinity;
  let i = 0;
  for (; i < count; i++) {
    const t = time[i];
    if (!(t >= last)) break;
    last = t;
  }
  if (i === count) return null;
  return Int32Array.from(Array.from({ length: count }, (_, k) => k).sort((a, b) => time[a] - time[b] || a - b));
}

/** The table's columns as they are filled: at most two intervals per switch, then one per thread still running. */
class IntervalColumns {
  count = 0;
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly state: Uint8Array;
  readonly flags: Uint8Array;
  readonly nextTid: Int32Array;
  readonly nextComm: Int32Array;

  constructor(capacity: number) {
    this.start = new Float64Array(capacity);
    this.end = new Float64Array(capacity);
    this.tid = new Int32Array(capacity);
    this.cpu = new Int32Array(capacity);
    this.state = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.nextTid = new Int32Array(capacity);
    this.nextComm = new Int32Array(capacity);
  }

  push(t0: number, t1: number, thread: number, onCpu: number, code: number, flag: number, next: number, nextName: number): number {
    const i = this.count++;
    this.start[i] = t0;
    this.end[i] = t1;
    this.tid[i] = thread;
    this.cpu[i] = onCpu;
    this.state[i] = code;
    this.flags[i] = flag;
    this.nextTid[i] = next;
    this.nextComm[i] = nextName;
    return i;
  }
}

/**
 * The intervals of `switches`, ordered by time (ties keep their order: one CPU's switches are in ring order). A thread
 * runs on a CPU from its switch-in to its switch-out there, and is off CPU in the state it left with until its next
 * switch-in on any CPU. At the edges: a switch-out with no switch-in before it ran since the latest of the CPU's first
 * record, the CPU's previous switch and its own previous switch-out (START_UNKNOWN); a thread not switched back in
 * stays in its state to the snapshot's end (END_UNKNOWN); a thread first seen switched in has no interval before it.
 * The idle task (tid 0, one per CPU) gets none.
 */
export function buildThreadStates(input: readonly SwitchRecord[] | SwitchColumns, edges: SwitchEdges): ThreadStateTable {
  const s = Array.isArray(input) ? switchColumnsOf(input) : (input as SwitchColumns);
  const n = s.count;
  const order = timeOrder(s.time, n);
  const out = new IntervalColumns(2 * n);
  // The table's names in the order the switches (by time) first name them, by index of the switches' names.
  const commTable = new StringTable();
  const tableComm = new Int32Array(s.comms.length).fill(-1);
  // Per thread (a slot from threadSlot): where and since when it runs, and its open off-CPU interval (-1: none).
  const slotOf = new Map<number, number>();
  const runCpu = new Int32Array(2 * n);
  const runSince = new Float64Array(2 * n);
  /** When it was last set running while not running (0: not running): the order a Map of running threads keeps. */
  const runSetAt = new Float64Array(2 * n);
  const offOpen = new Int32Array(2 * n).fill(-1);
  const threadOfSlot = new Int32Array(2 * n);
  const threadSlot = (thread: number): number => {
    let slot = slotOf.get(thread);
    if (slot === undefined) {
      slot = slotOf.size;
      slotOf.set(thread, slot);
      threadOfSlot[slot] = thread;
    }
    return slot;
  };
  let runSets = 0;
  /** Per CPU: the time of its last switch. */
  const lastSwitchOnCpu = new Map<number, number>();
  for (let k = 0; k < n; k++) {
    const i = order ? order[k] : k;
    const time = s.time[i];
    const onCpu = s.cpu[i];
    const prevTid = s.prevTid[i];
    const nextTid = s.nextTid[i];
    const next = nextTid === 0 ? -1 : nextTid;
    const comm = s.nextComm[i];
    let nextName = tableComm[comm];
    if (nextName < 0) nextName = tableComm[comm] = commTable.indexOf(s.comms[comm]);
    if (prevTid !== 0) {
      const slot = threadSlot(prevTid);
      const wasRunning = runSetAt[slot] !== 0;
      runSetAt[slot] = 0;
      // Running on another CPU means a switch-out went missing (lost records): when it began here is unknown.
      const known = wasRunning && runCpu[slot] === onCpu;
      const open = offOpen[slot];
      let from = wasRunning ? runSince[slot] : 0;
      if (!known) {
        // Its switch-in was not recorded (the capture's edge, lost records, or a per-thread capture, where the kernel
        // emits sched_switch only in the switched-out task's context): it came on this CPU after the CPU's previous
        // switch and after its own previous switch-out. From there it is counted as running, as perf sched timehist does.
        from = Math.max(edges.cpuStart(onCpu), lastSwitchOnCpu.get(onCpu) ?? -Infinity, open < 0 ? -Infinity : out.start[open]);
        from = Math.min(from, time);
        if (open >= 0) out.end[open] = from;
      }
      out.push(from, time, prevTid, onCpu, ThreadState.RUNNING, known ? 0 : StateFlag.START_UNKNOWN, nextTid, nextName);
      offOpen[slot] = out.push(time, edges.end, prevTid, onCpu, s.prevState[i], StateFlag.END_UNKNOWN, nextTid, nextName);
    }
    if (next > 0) {
      const slot = threadSlot(next);
      const open = offOpen[slot];
      if (open >= 0) {
        out.end[open] = time;
        out.flags[open] &= ~StateFlag.END_UNKNOWN;
        offOpen[slot] = -1;
      }
      if (runSetAt[slot] === 0) runSetAt[slot] = ++runSets;
      runCpu[slot] = onCpu;
      runSince[slot] = time;
    }
    lastSwitchOnCpu.set(onCpu, time);
  }
  // Still running at the end: running up to the snapshot's last record, in the order they were set running.
  const stillRunning: number[] = [];
  for (let slot = 0; slot < slotOf.size; slot++) if (runSetAt[slot] !== 0) stillRunning.push(slot);
  stillRunning.sort((a, b) => runSetAt[a] - runSetAt[b]);
  const count = out.count + stillRunning.length;
  const table = {
    count,
    start: new Float64Array(count),
    end: new Float64Array(count),
    tid: new Int32Array(count),
    cpu: new Int32Array(count),
    state: new Uint8Array(count),
    flags: new Uint8Array(count),
    nextTid: new Int32Array(count),
    nextComm: new Int32Array(count),
    comms: commTable.strings,
  };
  for (const name of ['start', 'end', 'tid', 'cpu', 'state', 'flags', 'nextTid', 'nextComm'] as const) table[name].set(out[name].subarray(0, out.count));
  let at = out.count;
  for (const slot of stillRunning) {
    const since = runSince[slot];
    table.start[at] = since;
    table.end[at] = Math.max(since, edges.end);
    table.tid[at] = threadOfSlot[slot];
    table.cpu[at] = runCpu[slot];
    table.state[at] = ThreadState.RUNNING;
    table.flags[at] = StateFlag.END_UNKNOWN;
    table.nextTid[at] = -1;
    table.nextComm[at] = -1;
    at++;
  }
  return table;
}

/** True for the sched_switch tracepoint's name as perf and tracefs spell it. */
export function isSchedSwitch(name: string): boolean {
  return name === 'sched:sched_switch' || name === 'sched_switch';
}

/** The sched_switch fields thread states read, in the order snapshotSwitches takes them. */
const SWITCH_FIELDS = ['prev_pid', 'next_pid', 'prev_state', 'next_comm', 'prev_comm'] as const;

/** CPUs below this are kept in a typed array by the row pass; others (none on today's machines) in a Map. */
const DENSE_CPUS = 4096;

/**
 * The one pass over every row thread states need, alone in a function with typed arrays only (small, so V8 compiles it
 * soon; no Map or closure per row): per CPU the first time of its timed samples (`firstOfCpu`, NaN: none; CPUs outside
 * it in `otherCpus`), and the rows of the timed samples of a switch event (`isSwitch` by event index) into `rows`.
 * Returns how many rows, the last sample time in `last[0]`. Only samples place a CPU's first record: side-band a host
 * synthesized (COMM, MMAP at time 0) happened nowhere.
 */
function scanSamples(
  columns: DecodedSnapshot['columns'],
  isSwitch: Uint8Array,
  firstOfCpu: Float64Array,
  otherCpus: Map<number, number>,
  rows: Int32Array,
  last: Float64Array,
): number {
  const { kind, event, time, cpu, length } = columns;
  let latest = -Infinity;
  let count = 0;
  for (let row = 0; row < length; row++) {
    const t = time[row];
    if (t !== t || kind[row] !== RecordType.SAMPLE) continue;
    if (t > latest) latest = t;
    const c = cpu[row];
    if (c >= 0 && c < DENSE_CPUS) {
      if (!(firstOfCpu[c] <= t)) firstOfCpu[c] = t;
    } else firstOfOtherCpu(otherCpus, c, t);
    if (isSwitch[event[row]] !== 0) rows[count++] = row;
  }
  last[0] = latest;
  return count;
}

function firstOfOtherCpu(otherCpus: Map<number, number>, c: number, t: number): void {
  const first = otherCpus.get(c);
  if (first === undefined || t < first) otherCpus.set(c, t);
}

/** prev_state's code by its low 9 bits, all threadStateOfPrevState reads (255: not yet worked out). */
const stateOfLowBits = new Uint8Array(0x200).fill(255);

function stateOf(lowBits: number): ThreadStateCode {
  let code = stateOfLowBits[lowBits];
  if (code === 255) code = stateOfLowBits[lowBits] = threadStateOfPrevState(lowBits);
  return code as ThreadStateCode;
}

/** A plain integer field read in place as readScalar reads it: inline, not an array, not a pointer, not a string. */
function isPlainInteger(field: TracepointField | undefined, sizes: readonly number[]): field is TracepointField {
  return (
    field !== undefined &&
    field.location === 'inline' &&
    field.arrayLength === 0 &&
    !field.isString &&
    !field.declaration.includes('*') &&
    sizes.includes(field.size)
  );
}

/**
 * Where a sched_switch event's five fields are in its payload, when they are what 6.x kernels and most before them
 * write (pids as 4-byte integers, prev_state as an integer, the comms as inline char arrays or absent), so a switch is
 * read with a few DataView loads and its names interned from their bytes. Null otherwise: its rows are read through
 * rawFieldsReader, field by field, as decodeRecordAt would decode them.
 */
interface SwitchLayout {
  readonly prevPid: TracepointField;
  readonly nextPid: TracepointField;
  readonly prevState: TracepointField;
  readonly nextComm: TracepointField | undefined;
  readonly prevComm: TracepointField | undefined;
}

function switchLayoutOf(event: EventDescription): SwitchLayout | null {
  const [prevPid, nextPid, prevState, nextComm, prevComm] = SWITCH_FIELDS.map((name) => tracepointFieldNamed(event, name));
  const isComm = (field: TracepointField | undefined) => field === undefined || (field.location === 'inline' && field.isString);
  if (!isPlainInteger(prevPid, [4]) || !isPlainInteger(nextPid, [4]) || !isPlainInteger(prevState, [1, 2, 4, 8])) return null;
  if (!isComm(nextComm) || !isComm(prevComm)) return null;
  return { prevPid, nextPid, prevState, nextComm, prevComm };
}

function readInt32(view: DataView, at: number, signed: boolean): number {
  return signed ? view.getInt32(at, true) : view.getUint32(at, true);
}

/**
 * prev_state's low 9 bits (as BigInt's & reads a negative value: two's complement). A 1-byte field's bit 8 would be its
 * sign, set only with a low byte that is not zero, where threadStateOfPrevState does not read bit 8: read unsigned.
 */
function lowBitsOfState(view: DataView, at: number, size: number): number {
  switch (size) {
    case 1:
      return view.getUint8(at);
    case 2:
      return view.getUint16(at, true) & 0x1ff;
    default:
      // 4 or 8 bytes: the low 32 bits, little-endian first.
      return view.getUint32(at, true) & 0x1ff;
  }
}

/**
 * Names interned from their bytes: a switch's two comms are mostly a few names seen again and again, and decoding
 * each (TextDecoder) cost more than the rest of the switch. Keyed by a hash of the bytes up to the NUL, checked byte for
 * byte; a miss decodes them as stringAt does.
 */
class CommInterner {
  /** hash → entries: start in `seen`, length, index. */
  private readonly byHash = new Map<number, number[]>();
  private seen = new Uint8Array(256);
  private used = 0;

  constructor(private readonly indexOf: (comm: string) => number) {}

  /** The index of the comm in bytes [start, start + size) of `bytes` (up to its first NUL). */
  index(bytes: Uint8Array, start: number, size: number): number {
    let end = start;
    const stop = start + size;
    let hash = 0x811c9dc5;
    for (; end < stop; end++) {
      const b = bytes[end];
      if (b === 0) break;
      hash = Math.imul(hash ^ b, 0x01000193);
    }
    const length = end - start;
    const entries = this.byHash.get(hash);
    if (entries) {
      for (let k = 0; k < entries.length; k += 3) if (entries[k + 1] === length && this.same(bytes, start, entries[k], length)) return entries[k + 2];
    }
    const index = this.indexOf(stringAt(bytes, start, size));
    if (this.used + length > this.seen.length) {
      const grown = new Uint8Array(2 * (this.used + length));
      grown.set(this.seen.subarray(0, this.used));
      this.seen = grown;
    }
    this.seen.set(bytes.subarray(start, end), this.used);
    const entry = [this.used, length, index];
    this.used += length;
    if (entries) entries.push(...entry);
    else this.byHash.set(hash, entry);
    return index;
  }

  private same(bytes: Uint8Array, start: number, at: number, length: number): boolean {
    for (let i = 0; i < length; i++) if (bytes[start + i] !== this.seen[at + i]) return false;
    return true;
  }
}

/** The rows of a snapshot's timed sched_switch samples (rows[0, count)), and the edges of its samples. */
interface SwitchRows {
  readonly rows: Int32Array;
  readonly count: number;
  readonly edges: SwitchEdges;
}

/** The switch rows and edges by scanSamples: a pass over every row. */
function switchRowsByScan(columns: DecodedSnapshot['columns'], isSwitch: Uint8Array): SwitchRows {
  const firstOfCpu = new Float64Array(DENSE_CPUS).fill(NaN);
  const otherCpus = new Map<number, number>();
  const rows = new Int32Array(columns.length);
  const lastTime = new Float64Array(1);
  const count = scanSamples(columns, isSwitch, firstOfCpu, otherCpus, rows, lastTime);
  const cpuStart = (c: number): number => {
    const first = c >= 0 && c < DENSE_CPUS ? firstOfCpu[c] : otherCpus.get(c);
    return first === undefined || first !== first ? -Infinity : first;
  };
  return { rows, count, edges: { cpuStart, end: lastTime[0] } };
}

/**
 * Whether the timed rows' times never decrease (untimed rows, NaN, aside), as rows merged by time from rings in time
 * order are. The loop alone in a function, and a short one: it runs cold on a snapshot's first call.
 */
function timesInOrder(time: Float64Array, length: number): boolean {
  let last = -Infinity;
  for (let row = 0; row < length; row++) {
    const t = time[row];
    if (t >= last) last = t;
    else if (t === t) return false;
  }
  return true;
}

/**
 * The switch rows and edges where the rows are in time order: then the last timed sample holds the latest time and a
 * CPU's first timed sample its first, so both are found by the typed arrays' own searches (builtins, fast on a first
 * call), as are the rows of each switch event (event column), instead of scanSamples' pass over every row. Null where
 * the rows are not in time order (or a zero's sign could tell the two ways apart): scanSamples then.
 */
function switchRowsInOrder(columns: DecodedSnapshot['columns'], isSwitch: Uint8Array): SwitchRows | null {
  const { kind, event, time, cpu, length } = columns;
  if (!timesInOrder(time, length)) return null;
  const isTimedSample = (row: number) => kind[row] === RecordType.SAMPLE && time[row] === time[row];
  let lastSample = length - 1;
  while (lastSample >= 0 && !isTimedSample(lastSample)) lastSample--;
  const end = lastSample < 0 ? -Infinity : time[lastSample];
  // scanSamples keeps the first of equal times, this the last: only +0 and -0 are equal and not the same.
  if (end === 0) return null;
  let rows = new Int32Array(64);
  let count = 0;
  let events = 0;
  for (let e = 0; e < isSwitch.length; e++) {
    if (isSwitch[e] === 0) continue;
    events++;
    for (let row = event.indexOf(e); row >= 0; row = row + 1 < length ? event.indexOf(e, row + 1) : -1) {
      if (!isTimedSample(row)) continue;
      if (count === rows.length) {
        const grown = new Int32Array(2 * count);
        grown.set(rows);
        rows = grown;
      }
      rows[count++] = row;
    }
  }
  // Two switch events: their rows in row order, as the pass gives them.
  if (events > 1) rows = rows.subarray(0, count).sort();
  const firstOfCpu = new Map<number, number>();
  const cpuStart = (c: number): number => {
    let first = firstOfCpu.get(c);
    if (first === undefined) {
      first = -Infinity;
      for (let row = cpu.indexOf(c); row >= 0; row = row + 1 < length ? cpu.indexOf(c, row + 1) : -1) {
        if (isTimedSample(row)) {
          first = time[row];
          break;
        }
      }
      firstOfCpu.set(c, first);
    }
    return first;
  };
  return { rows, count, edges: { cpuStart, end } };
}

/**
 * The sched_switch records of a snapshot, with the edges their intervals need; null when it has none. Only the fields
 * it needs are read, in place (rawFieldsReader); a record that does not decode is left out, as the field filter leaves it out.
 */
export function snapshotSwitches(snapshot: DecodedSnapshot): { switches: SwitchColumns; edges: SwitchEdges } | null {
  // By event index as the event column holds it (a u16): 1 where it is a sched_switch with the fields.
  const isSwitch = new Uint8Array(1 << 16);
  let any = false;
  snapshot.events.forEach((e, i) => {
    if (isSchedSwitch(e.name) && e.tracepoint?.fields.some((f) => f.name === 'prev_state')) {
      isSwitch[i] = 1;
      any = true;
    }
  });
  if (!any) return null;
  const { time, cpu } = snapshot.columns;
  const found = switchRowsInOrder(snapshot.columns, isSwitch) ?? switchRowsByScan(snapshot.columns, isSwitch);
  const { rows, count } = found;
  if (count === 0) return null;
  const switches = new SwitchColumnsBuilder(count);
  const locate = rawPayloadLocator(snapshot);
  const place: PayloadPlace = { bytes: new Uint8Array(0), view: new DataView(new ArrayBuffer(0)), raw: 0, rawLength: 0 };
  const layouts = new Map<number, SwitchLayout | null>();
  const comms = new CommInterner((comm) => switches.commIndex(comm));
  const noComm = switches.commIndex('');
  let read: RawFieldsReader | undefined;
  const values: (TracepointValue | undefined)[] = [];
  const { event } = snapshot.columns;
  for (let k = 0; k < count; k++) {
    const row = rows[k];
    const path = locate(row, place);
    if (path === 'none') continue;
    let layout = layouts.get(event[row]);
    if (layout === undefined) {
      const description = snapshot.events.find((e) => e.index === event[row]);
      layout = description ? switchLayoutOf(description) : null;
      layouts.set(event[row], layout);
    }
    if (path === 'fast' && layout) {
      const { view, bytes, raw } = place;
      const prevPid = readInt32(view, raw + layout.prevPid.offset, layout.prevPid.signed);
      const nextPid = readInt32(view, raw + layout.nextPid.offset, layout.nextPid.signed);
      const state = stateOf(lowBitsOfState(view, raw + layout.prevState.offset, layout.prevState.size));
      const nextComm = layout.nextComm ? comms.index(bytes, raw + layout.nextComm.offset, layout.nextComm.size) : noComm;
      const prevComm = layout.prevComm ? comms.index(bytes, raw + layout.prevComm.offset, layout.prevComm.size) : noComm;
      switches.addIndexed(time[row], cpu[row], prevPid, state, nextPid, nextComm, prevComm);
      continue;
    }
    // Any other layout, or samples only decodeRecordAt reads: field by field, as the full decode gives them.
    read ??= rawFieldsReader(snapshot, SWITCH_FIELDS);
    if (!read(row, values)) continue;
    const [prevPid, nextPid, prevState, nextCommValue, prevCommValue] = values;
    if (typeof prevPid !== 'number' || typeof nextPid !== 'number' || (typeof prevState !== 'bigint' && typeof prevState !== 'number')) continue;
    const nextComm = typeof nextCommValue === 'string' ? nextCommValue : '';
    const prevComm = typeof prevCommValue === 'string' ? prevCommValue : '';
    switches.add(time[row], cpu[row], prevPid, threadStateOfPrevState(prevState), nextPid, nextComm, prevComm);
  }
  if (switches.count === 0) return null;
  return { switches: switches.build(), edges: found.edges };
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
  const { count, nextTid, nextComm, prevTid, prevComm, comms: names } = found.switches;
  for (let i = 0; i < count; i++) {
    const next = nextTid[i];
    if (next > 0 && names[nextComm[i]] && !comms.has(next)) comms.set(next, names[nextComm[i]]);
    const prev = prevTid[i];
    if (prev > 0 && names[prevComm[i]]) comms.set(prev, names[prevComm[i]]);
  }
  return { threadStates: threadStatesMessage(snapshotId, buildThreadStates(found.switches, found.edges)), comms };
}
