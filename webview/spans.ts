// Span pairing: records that open and close an interval are drawn as bars when zoomed in.
//  - sched:sched_switch on one CPU: between two consecutive switches the CPU ran the task that the
//    second switch switches out (its common_pid, i.e. the record's tid).
//  - PERF_RECORD_SWITCH / SWITCH_CPU_WIDE per thread: a switch-in followed by a switch-out.
//  - sys_enter_X → sys_exit_X (and raw sys_enter → sys_exit) per thread, innermost first.

import type { LaneSource } from './lanes';
import { sortRowsByTime } from './lanes';

const PERF_RECORD_SWITCH = 14;
const PERF_RECORD_SWITCH_CPU_WIDE = 15;
const MISC_SWITCH_OUT = 1 << 13;

export interface SpanSource extends LaneSource {
  readonly kind: Uint8Array;
  readonly misc: Uint16Array;
}

export interface Spans {
  readonly count: number;
  readonly start: Float64Array;
  readonly end: Float64Array;
  /** Row that opens / closes the span. */
  readonly openRow: Uint32Array;
  readonly closeRow: Uint32Array;
  /** Who the span belongs to: the running thread and the CPU. */
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly type: Uint8Array;
}

export const SpanType = { RUN: 0, SYSCALL: 1 } as const;

function syscallKey(name: string): { open: boolean; key: string } | null {
  const colon = name.lastIndexOf(':');
  const base = colon >= 0 ? name.slice(colon + 1) : name;
  const m = /^sys_(enter|exit)(_\w+)?$/.exec(base);
  if (!m) return null;
  return { open: m[1] === 'enter', key: m[2] ?? '' };
}

/**
 * The rows among the first `length` that can open or close a span: switch records and records of `candidateEvent`'s
 * events. One typed pass, alone in a function with its columns in locals: in pairSpans' body it read both columns
 * through the source object per row and, compiled during its one long run (on-stack replacement) before the code after
 * it had run, fell back to the interpreter there; a million samples without spans took ~20 ms of idle time after a
 * first paint, long enough to hold up the next frame.
 */
function spanCandidates(kind: Uint8Array, event: Uint16Array, length: number, candidateEvent: Uint8Array): Uint32Array {
  const eventCount = candidateEvent.length;
  const picked = new Uint32Array(length);
  let candidates = 0;
  for (let row = 0; row < length; row++) {
    const k = kind[row];
    const ev = event[row];
    if (k === PERF_RECORD_SWITCH || k === PERF_RECORD_SWITCH_CPU_WIDE || (ev < eventCount && candidateEvent[ev] === 1)) picked[candidates++] = row;
  }
  return picked.subarray(0, candidates);
}

/** Pair opening and closing records over rows ordered by time. */
export function pairSpans(src: SpanSource): Spans {
  const eventSyscall = src.events.map((e) => syscallKey(e.name));
  const eventIsSchedSwitch = src.events.map((e) => /(^|:)sched_switch$/.test(e.name));
  // Only rows that can open or close a span are ordered and walked: one typed pass picks them.
  const candidateEvent = Uint8Array.from(src.events, (_, i) => (eventSyscall[i] || eventIsSchedSwitch[i] ? 1 : 0));
  const order = sortRowsByTime(src.time, spanCandidates(src.kind, src.event, src.length, candidateEvent));

  const open: number[] = [];
  const close: number[] = [];
  const owner: number[] = [];
  const ownerCpu: number[] = [];
  const types: number[] = [];
  const lastSwitchOnCpu = new Map<number, number>();
  const switchedInAt = new Map<number, number>();
  const openSyscalls = new Map<string, number[]>();

  for (let i = 0; i < order.length; i++) {
    const row = order[i];
    if (Number.isNaN(src.time[row])) continue;
    const kind = src.kind[row];
    if (kind === PERF_RECORD_SWITCH || kind === PERF_RECORD_SWITCH_CPU_WIDE) {
      const tid = src.tid[row];
      if ((src.misc[row] & MISC_SWITCH_OUT) === 0) {
        switchedInAt.set(tid, row);
      } else {
        const inRow = switchedInAt.get(tid);
        if (inRow !== undefined) {
          open.push(inRow);
          close.push(row);
          owner.push(tid);
          ownerCpu.push(src.cpu[row]);
          types.push(SpanType.RUN);
          switchedInAt.delete(tid);
        }
      }
      continue;
    }
    const ev = src.event[row];
    if (eventIsSchedSwitch[ev]) {
      const cpu = src.cpu[row];
      const previous = lastSwitchOnCpu.get(cpu);
      if (previous !== undefined) {
        open.push(previous);
        close.push(row);
        owner.push(src.tid[row]);
        ownerCpu.push(cpu);
        types.push(SpanType.RUN);
      }
      lastSwitchOnCpu.set(cpu, row);
      continue;
    }
    const sc = eventSyscall[ev];
    if (sc) {
      const key = `${src.tid[row]}\u0000${sc.key}`;
      let stack = openSyscalls.get(key);
      if (sc.open) {
        if (!stack) {
          stack = [];
          openSyscalls.set(key, stack);
        }
        stack.push(row);
      } else if (stack && stack.length > 0) {
        const enter = stack.pop()!;
        open.push(enter);
        close.push(row);
        owner.push(src.tid[row]);
        ownerCpu.push(src.cpu[enter]);
        types.push(SpanType.SYSCALL);
      }
    }
  }
  const count = open.length;
  const spans: Spans = {
    count,
    start: new Float64Array(count),
    end: new Float64Array(count),
    openRow: Uint32Array.from(open),
    closeRow: Uint32Array.from(close),
    tid: Int32Array.from(owner),
    cpu: Int32Array.from(ownerCpu),
    type: Uint8Array.from(types),
  };
  for (let i = 0; i < count; i++) {
    spans.start[i] = src.time[open[i]];
    spans.end[i] = src.time[close[i]];
  }
  return spans;
}
