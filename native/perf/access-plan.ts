// Fits a recording to what this process may record (native/sys/access.ts reads the facts): events
// narrowed to user space the way perf falls back, and what cannot be narrowed refused up front.

import type { ResolvedEvent } from '../abi/snapshot';
import { AccessError, describeUid, grantAdvice, PARANOID_SYSCTL, paranoidText, accessLimitation, uprobeRefusal, type PerfAccess } from '../sys/access';

/** How a line: spec begins (specs/parse.ts): its FILE:LINE is what mem:FILE:LINE:x takes too. */
const LINE_SPEC_PREFIX = 'line:';

export type AccessTargetKind = 'launch' | 'pid' | 'cpus';

export interface AccessPlan {
  /** The events as they will be opened: narrowed to user space where the kernel would refuse them. */
  readonly events: ResolvedEvent[];
  /** The side-band (COMM/MMAP/FORK) event must carry exclude_kernel too, or it alone is refused. */
  readonly excludeKernel: boolean;
  /** What this recording cannot see and why (null: nothing held back). */
  readonly limitation: string | null;
}

/**
 * Fits a recording to what this process may record, the way perf falls back: events that did not
 * ask for kernel samples explicitly are narrowed to user space when perf_allow_kernel() would refuse
 * them; what cannot be narrowed (CPU-wide targets, tracepoints, an explicit :k) is refused here,
 * before any fd is opened, with the level or capability that would allow it.
 */
export function planForAccess(
  events: readonly ResolvedEvent[],
  target: AccessTargetKind,
  access: PerfAccess,
  breakpointsFire: () => boolean = () => false,
): AccessPlan {
  const uprobe = events.find((event) => event.uprobe !== undefined);
  const refusal = uprobe ? uprobeRefusal(access) : null;
  if (uprobe && refusal) {
    // A source line can still be counted as this user with an execute breakpoint, where they fire.
    const line = uprobe.name.startsWith(LINE_SPEC_PREFIX) ? uprobe.name.slice(LINE_SPEC_PREFIX.length) : undefined;
    const instead = line !== undefined && breakpointsFire() ? `; or count the line with a hardware breakpoint, which works as you are: -e mem:${line}:x` : '';
    throw new AccessError(`${uprobe.name} is a uprobe, and ${refusal.reason}`, `${refusal.hint}${instead}`);
  }
  const who = `${describeUid(access.euid)} has no CAP_PERFMON and ${paranoidText(access)}`;
  const tracepoints = events.filter((event) => event.tracepoint !== undefined);
  if (target === 'cpus' && !access.mayRecordCpuWide) {
    const level = tracepoints.length > 0 ? -1 : 0;
    throw new AccessError(
      `-a records every process on every CPU, which needs ${PARANOID_SYSCTL} <= ${level} or CAP_PERFMON, but ${who}`,
      `${grantAdvice(level)}; or record only your own program (\`-- COMMAND\` or \`-p PID\`), which works at level 2 for user space`,
    );
  }
  for (const event of tracepoints) {
    const syscall = event.tracepoint?.system === 'syscalls';
    // perf_trace_event_perm(): raw data of a per-task syscall tracepoint (TRACE_EVENT_FL_CAP_ANY)
    // needs only perf_allow_kernel(); every other tracepoint, or any CPU-wide one, needs -1.
    const level = syscall && target !== 'cpus' ? 1 : -1;
    const allowed = level === 1 ? access.mayRecordKernel : access.mayRecordRawTracepoints;
    if (!allowed) {
      throw new AccessError(
        `tracepoint ${event.name} fires in the kernel, and recording it needs ${PARANOID_SYSCTL} <= ${level} or CAP_PERFMON, but ${who}`,
        `${grantAdvice(level)}; user-space events (task-clock, page-faults, mem:SYMBOL:w) work as you are`,
      );
    }
  }
  if (access.mayRecordKernel) return { events: [...events], excludeKernel: false, limitation: null };
  const narrowed = events.map((event) => {
    if (event.attr.flags.excludeKernel) return event;
    if (event.explicitModifiers) {
      throw new AccessError(
        `${event.name} asks for kernel samples, which need ${PARANOID_SYSCTL} <= 1 or CAP_PERFMON, but ${who}`,
        `${grantAdvice(1)}; or drop the kernel modifier (${event.name.replace(/:[a-zA-Z]+$/, '')}:u records user space)`,
      );
    }
    return { ...event, attr: { ...event.attr, flags: { ...event.attr.flags, excludeKernel: true, excludeHv: true } } };
  });
  return { events: narrowed, excludeKernel: true, limitation: accessLimitation(access) };
}
