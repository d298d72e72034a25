// Thread states from sched:sched_switch: the intervals a thread spent running on a CPU or off it in the state it
// left with (the switch's prev_state), as typed columns. The host builds them (host/thread-states.ts: only it
// decodes tracepoint fields), one `threadStates` message per snapshot carries them, the page draws them as each
// thread's state lane. Pure: the state codes, their names, and the table both sides use.

/** A thread's state over an interval. RUNNING is on a CPU; every other code is the prev_state it was switched out with. */
export const ThreadState = {
  RUNNING: 0,
  /** R: switched out while runnable (it yielded, or its slice ended). */
  RUNNABLE: 1,
  /** R+: preempted (the kernel's TASK_REPORT_MAX bit). */
  PREEMPTED: 2,
  SLEEPING: 3,
  UNINTERRUPTIBLE: 4,
  STOPPED: 5,
  TRACED: 6,
  DEAD: 7,
  ZOMBIE: 8,
  PARKED: 9,
  IDLE: 10,
} as const;
export type ThreadStateCode = (typeof ThreadState)[keyof typeof ThreadState];
export const THREAD_STATE_COUNT = 11;

/** Per code: what the page says, and the letter perf and the kernel's print format use (empty for running). */
export const THREAD_STATE_NAMES: readonly { readonly name: string; readonly letter: string }[] = [
  { name: 'Running', letter: '' },
  { name: 'Runnable', letter: 'R' },
  { name: 'Preempted', letter: 'R+' },
  { name: 'Sleeping', letter: 'S' },
  { name: 'Uninterruptible sleep', letter: 'D' },
  { name: 'Stopped', letter: 'T' },
  { name: 'Traced', letter: 't' },
  { name: 'Dead', letter: 'X' },
  { name: 'Zombie', letter: 'Z' },
  { name: 'Parked', letter: 'P' },
  { name: 'Idle', letter: 'I' },
];

/** `Sleeping (S)`, `Running`. */
export function threadStateLabel(code: number): string {
  const entry = THREAD_STATE_NAMES[code];
  if (!entry) return `state ${code}`;
  return entry.letter ? `${entry.name} (${entry.letter})` : entry.name;
}

/**
 * sched_switch's prev_state as a code, decoded as the kernel's print format does (include/trace/events/sched.h since
 * 4.14): the low byte holds TASK_REPORT bits S D T t X Z P I (0x01 … 0x80; the lowest set bit names it, as the first
 * letter perf prints), none of them means runnable, and the TASK_REPORT_MAX bit (0x100) on top marks a preemption.
 */
export function threadStateOfPrevState(prevState: bigint | number): ThreadStateCode {
  const value = BigInt(prevState);
  const low = Number(value & 0xffn);
  if (low === 0) return (value & 0x100n) !== 0n ? ThreadState.PREEMPTED : ThreadState.RUNNABLE;
  const bit = low & -low;
  switch (bit) {
    case 0x01:
      return ThreadState.SLEEPING;
    case 0x02:
      return ThreadState.UNINTERRUPTIBLE;
    case 0x04:
      return ThreadState.STOPPED;
    case 0x08:
      return ThreadState.TRACED;
    case 0x10:
      return ThreadState.DEAD;
    case 0x20:
      return ThreadState.ZOMBIE;
    case 0x40:
      return ThreadState.PARKED;
    default:
      return ThreadState.IDLE;
  }
}

/** Interval flags. */
export const StateFlag = {
  /** The thread was already so before the first record of its CPU: the real start is earlier, unknown. */
  START_UNKNOWN: 1,
  /** The thread was still so at the snapshot's last record: the real end is later, unknown. */
  END_UNKNOWN: 2,
} as const;

/**
 * The intervals of one snapshot, one per index i < count; times in ns relative to the snapshot's timeOriginNs. `cpu` is
 * where it ran (running) or the CPU it left (off CPU); `nextTid` and `nextComm` (an index into `comms`) name the
 * task that CPU switched to when the interval's thread was switched out (-1: not switched out in the snapshot).
 */
export interface ThreadStateTable {
  readonly count: number;
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly state: Uint8Array;
  readonly flags: Uint8Array;
  readonly nextTid: Int32Array;
  readonly nextComm: Int32Array;
  readonly comms: readonly string[];
}

/** The typed columns of a ThreadStateTable, in message field order (each travels as an exact-length ArrayBuffer). */
export const THREAD_STATE_COLUMNS = {
  start: Float64Array,
  end: Float64Array,
  tid: Int32Array,
  cpu: Int32Array,
  state: Uint8Array,
  flags: Uint8Array,
  nextTid: Int32Array,
  nextComm: Int32Array,
} as const;
export type ThreadStateColumn = keyof typeof THREAD_STATE_COLUMNS;
export const THREAD_STATE_COLUMN_NAMES = Object.keys(THREAD_STATE_COLUMNS) as ThreadStateColumn[];
