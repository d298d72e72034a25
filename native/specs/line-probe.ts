// Which kernel mechanism counts a source line on this machine. `mem:FILE:LINE:x` asks for execute
// breakpoints; on a host whose debug exceptions never arrive (breakpoint-delivery.ts says 'silent')
// they would count nothing, while uprobes (`line:FILE:LINE`) count every execution wherever the
// kernel allows them (CAP_PERFMON). There the line is moved to uprobes, and the user is told. The
// editor asks the same rule, with two more facts the CLI leaves to the kernel: how many of the four
// debug registers its target still has free (a line that does not fit is moved to uprobes too, which
// take none), and the mechanism the user picked in the gutter (auto, hardware breakpoint, uprobe).

import type { BreakpointDelivery } from '../perf/breakpoint-delivery';
import { BreakpointType } from '../abi/uapi';
import { uprobeRefusal, type PerfAccess } from '../sys/access';
import { parseEventSpec } from './parse';
import { resolveEventAst, type ResolveContext, type ResolvedSpec } from './resolve';

/**
 * How a source line is to be counted: `auto` chooses (uprobes where breakpoints are silent or the debug registers are
 * taken, else the hardware breakpoint), `breakpoint` keeps the execute breakpoint whatever the host does, `uprobe`
 * moves the line to uprobes where this process may open them (else the breakpoint, said why).
 */
export type LineProbeMode = 'auto' | 'breakpoint' | 'uprobe';

export const LINE_PROBE_MODES: readonly LineProbeMode[] = ['auto', 'breakpoint', 'uprobe'];

export interface LineProbeFacts {
  /** Whether hardware breakpoints fire here (asked only when a source-line breakpoint is given). */
  readonly delivery: () => BreakpointDelivery;
  readonly access: () => PerfAccess;
  /**
   * Debug registers the target has free for these events (the editor knows what its sessions hold); unset, the kernel
   * is left to refuse what does not fit (ENOSPC), as perf does.
   */
  readonly freeRegisters?: () => number;
  readonly mode?: LineProbeMode;
}

/** An execute breakpoint on a source line (mem:FILE:LINE:x), not on a symbol or an address. */
function isLineBreakpoint(event: ResolvedSpec): boolean {
  return (
    event.isBreakpoint &&
    event.attr.bpType === BreakpointType.X &&
    event.location !== undefined &&
    event.location.symbol === undefined &&
    event.location.file !== undefined &&
    event.location.line !== undefined
  );
}

/** Debug registers one breakpoint event takes: one per place of its line. */
function registersOf(event: ResolvedSpec): number {
  return 1 + (event.extraSites?.length ?? 0);
}

/**
 * The events with each source-line breakpoint counted by uprobes instead where the mode, the host and the free debug
 * registers call for it and this process may open uprobes; the event keeps the name it was asked by. Where uprobes
 * are refused, the breakpoint stays with a note naming the refusal, its fix, and what the breakpoint can see here.
 * Everything else is returned as it was.
 */
export function chooseLineProbes(events: readonly ResolvedSpec[], ctx: ResolveContext, facts: LineProbeFacts): ResolvedSpec[] {
  const mode = facts.mode ?? 'auto';
  if (mode === 'breakpoint' || !events.some(isLineBreakpoint)) return [...events];
  const delivery = facts.delivery();
  // Registers left for the lines once the other breakpoints (watchpoints, symbols) have theirs; lines take them in order.
  let registersLeft =
    facts.freeRegisters === undefined
      ? Number.POSITIVE_INFINITY
      : facts.freeRegisters() - events.filter((event) => event.isBreakpoint && !isLineBreakpoint(event)).reduce((sum, event) => sum + registersOf(event), 0);
  // Why each line moves (null: it stays), and for one that does not fit, the registers it found left.
  const wanted = events.map((event): { why: 'asked' | 'silent' | 'registers'; left: number } | null => {
    if (!isLineBreakpoint(event)) return null;
    if (mode === 'uprobe') return { why: 'asked', left: registersLeft };
    if (delivery.state === 'silent') return { why: 'silent', left: registersLeft };
    if (registersOf(event) > registersLeft) return { why: 'registers', left: Math.max(0, registersLeft) };
    registersLeft -= registersOf(event);
    return null;
  });
  if (wanted.every((move) => move === null)) return [...events];
  const refusal = uprobeRefusal(facts.access());
  const silent = delivery.state === 'silent' ? delivery : undefined;
  return events.map((event, index) => {
    const move = wanted[index];
    if (move === null) return event;
    const why = move.why;
    const file = event.location!.file!;
    const line = event.location!.line!;
    // Said with the file as the user wrote it; resolved by the full path the line table gave, which is unambiguous.
    const asked = parseEventSpec(event.name);
    const text = `${asked.kind === 'breakpoint' && asked.address.kind === 'line' ? asked.address.file : file}:${line}`;
    if (refusal) {
      const refused = `uprobes, which would count this line (line:${text}), are refused: ${refusal.reason}; ${refusal.hint}`;
      const kept =
        why === 'registers'
          ? `the debug registers are taken and ${refused}`
          : silent
            ? `breakpoints do not fire on this machine, and ${refused}`
            : `${refused}; counted with a hardware breakpoint instead${delivery.state === 'fires' ? ' (they fire on this machine)' : ''}`;
      return { ...event, notes: [...event.notes, kept] };
    }
    const moved = resolveEventAst({ kind: 'line', spec: event.name, file, line, position: 0, text: `${file}:${line}` }, ctx);
    const because =
      why === 'asked'
        ? 'counted with uprobes as asked'
        : silent
          ? `hardware breakpoints do not fire on this machine (the probe counted ${silent.counted} of ${silent.calls} calls), so this line is counted with uprobes instead`
          : `the ${registersOf(event) > 1 ? `${registersOf(event)} debug registers this line needs are` : 'debug register this line needs is'} not free (x86 has 4; ${move.left} left), so this line is counted with uprobes instead, which take none`;
    return { ...moved, notes: [`${because}, as line:${text} counts it (every address where a statement of the line begins)`, ...moved.notes] };
  });
}
