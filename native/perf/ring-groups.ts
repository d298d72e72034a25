// Where each event of a recording writes: which events share one flight-recorder ring (one ring
// group), and which groups a resize may reopen larger.

import type { ResolvedEvent } from '../abi/snapshot';

/**
 * Events that write into one ring per slot. The first event's fd on the slot's first thread owns the
 * ring; every other fd of the group (other events, other threads, extra breakpoint sites) is
 * redirected into it with PERF_EVENT_IOC_SET_OUTPUT, and records are told apart by their sample id
 * (PERF_SAMPLE_IDENTIFIER, which every flight-recorder attr carries). One ring per CPU for all
 * events is what an always-on recorder wants: one pause, one copy, one mapping per CPU.
 */
export interface RingGroup {
  readonly eventIndices: readonly number[];
  /** Two rings swapped instead of paused (GapFreeRingPair). */
  readonly gapFree: boolean;
}

/**
 * The ring groups of a recording: every event that may share a ring shares one. Breakpoints never
 * take part in a gap-free pair (a standby set would need debug registers of its own), so with
 * gap-free on they share a plain ring of their own. The kernel refuses SET_OUTPUT between events of
 * different clocks, so an event with its own clockid (a PMU spec's attr11 term) shares only with
 * events of that clock. Events in `ownRing` (trigger events, whose moving data_head must mean "this
 * event fired") get one ring each.
 */
export function ringGroupsFor(events: readonly ResolvedEvent[], gapFree: boolean, ownRing: ReadonlySet<number>): RingGroup[] {
  const shared = new Map<string, { eventIndices: number[]; gapFree: boolean }>();
  const own: RingGroup[] = [];
  events.forEach((event, index) => {
    const pair = gapFree && !event.isBreakpoint;
    if (ownRing.has(index)) {
      own.push({ eventIndices: [index], gapFree: pair });
      return;
    }
    const clock = event.attr.flags.useClockid ? `clock ${event.attr.clockid ?? 0}` : 'perf clock';
    const key = `${pair ? 'pair' : 'single'} ${clock}`;
    const group = shared.get(key) ?? { eventIndices: [], gapFree: pair };
    group.eventIndices.push(index);
    shared.set(key, group);
  });
  // Gap-free groups first, as the events come: the first event of the first group names the ring.
  const groups = [...shared.values()].sort((a, b) => Number(b.gapFree) - Number(a.gapFree) || a.eventIndices[0] - b.eventIndices[0]);
  return [...groups, ...own];
}

/** Trigger events' own rings keep their size: their data_head is what the trigger watcher follows. */
export function isGrowable(group: RingGroup, ownRing: ReadonlySet<number>): boolean {
  return !group.eventIndices.some((index) => ownRing.has(index));
}
