// Which kernel mechanism counts a source line on this machine. `mem:FILE:LINE:x` asks for execute
// breakpoints; on a host whose debug exceptions never arrive (breakpoint-delivery.ts says 'silent')
// they would count nothing, while uprobes (`line:FILE:LINE`) count every execution wherever the
// kernel allows them (CAP_PERFMON). There the line is moved to uprobes, and the user is told.

import type { BreakpointDelivery } from '../perf/breakpoint-delivery';
import { BreakpointType } from '../abi/uapi';
import { uprobeRefusal, type PerfAccess } from '../sys/access';
import { parseEventSpec } from './parse';
import { resolveEventAst, type ResolveContext, type ResolvedSpec } from './resolve';

export interface LineProbeFacts {
  /** Whether hardware breakpoints fire here (asked only when a source-line breakpoint is given). */
  readonly delivery: () => BreakpointDelivery;
  readonly access: () => PerfAccess;
}

/** An execute breakpoint on a source line (mem:FILE:LINE:x), not on a symbol or an address. */
function isLineBreakpoint(event: ResolvedSpec): boolean {
  return event.isBreakpoint && event.attr.bpType === BreakpointType.X && event.location !== undefined
    && event.location.symbol === undefined && event.location.file !== undefined && event.location.line !== undefined;
}

/**
 * The events with each source-line breakpoint counted by uprobes instead where breakpoints are silent
 * and this process may open uprobes; the event keeps the name it was asked by. Where uprobes are
 * refused too, the breakpoint stays (the recorder says breakpoints are silent) with a note naming
 * what would count the line. Everything else is returned as it was.
 */
export function chooseLineProbes(events: readonly ResolvedSpec[], ctx: ResolveContext, facts: LineProbeFacts): ResolvedSpec[] {
  if (!events.some(isLineBreakpoint)) return [...events];
  const delivery = facts.delivery();
  if (delivery.state !== 'silent') return [...events];
  const refusal = uprobeRefusal(facts.access());
  return events.map((event) => {
    if (!isLineBreakpoint(event)) return event;
    const file = event.location!.file!;
    const line = event.location!.line!;
    // Said with the file as the user wrote it; resolved by the full path the line table gave, which is unambiguous.
    const asked = parseEventSpec(event.name);
    const text = `${asked.kind === 'breakpoint' && asked.address.kind === 'line' ? asked.address.file : file}:${line}`;
    if (refusal) {
      return {
        ...event,
        notes: [...event.notes, `breakpoints do not fire on this machine, and uprobes, which would count this line (line:${text}), are refused: ${refusal.reason}; ${refusal.hint}`],
      };
    }
    const moved = resolveEventAst({ kind: 'line', spec: event.name, file, line, position: 0, text: `${file}:${line}` }, ctx);
    const why = `hardware breakpoints do not fire on this machine (the probe counted ${delivery.counted} of ${delivery.calls} calls), ` +
      `so this line is counted with uprobes instead, as line:${text} counts it (every address where a statement of the line begins)`;
    return { ...moved, notes: [why, ...moved.notes] };
  });
}
