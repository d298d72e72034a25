// Whether hardware breakpoints actually fire on this machine. The kernel can accept a breakpoint
// event (perf_event_open succeeds, a debug register is reserved) on a machine whose debug
// exceptions never reach it: a hypervisor that does not virtualize the debug registers (seen on
// Firecracker guests on AMD EPYC hosts) leaves every breakpoint silent. perf says nothing there —
// `perf stat -e mem:ADDR:x` simply counts 0 — so a user would read "never executed" where the truth
// is "cannot be seen on this machine". The probe asks the hardware directly: an execute breakpoint
// on libc's getppid() in this very thread, counted while this thread calls getppid() a few times.

import * as libc from '../sys/libc';
import { PerfError } from '../sys/errors';
import { openEvent } from './events';
import { BreakpointType, PerfType } from '../abi/uapi';

export type BreakpointDelivery =
  /** The probe's breakpoint counted every call. */
  | { readonly state: 'fires' }
  /** Accepted by the kernel and armed, yet it counted fewer calls than were made (usually none). */
  | { readonly state: 'silent'; readonly counted: number; readonly calls: number; readonly message: string }
  /** The probe could not arm a breakpoint here (no breakpoint PMU, no free debug register, refused...). */
  | { readonly state: 'unknown'; readonly reason: string };

const PROBE_FUNCTION = 'getppid';
const PROBE_CALLS = 4;

let cached: BreakpointDelivery | undefined;

/**
 * Machines of one kind differ on exactly this, so the path the other kind takes must be testable on either:
 * `RINGSIDE_BREAKPOINT_DELIVERY=silent` (or `fires`) makes every surface act on that verdict instead of the
 * probe's. The hardware is not changed by it: on a host that delivers, hits still arrive.
 */
export const DELIVERY_OVERRIDE_VARIABLE = 'RINGSIDE_BREAKPOINT_DELIVERY';

function assumedDelivery(value: string | undefined): BreakpointDelivery | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'fires') return { state: 'fires' };
  if (value === 'silent') {
    const message = `${silentBreakpointsMessage(0, PROBE_CALLS)} (Assumed, not probed: ${DELIVERY_OVERRIDE_VARIABLE}=silent.)`;
    return { state: 'silent', counted: 0, calls: PROBE_CALLS, message };
  }
  throw new Error(`${DELIVERY_OVERRIDE_VARIABLE}=${value}: expected "fires" or "silent" (or unset, to probe the hardware)`);
}

/**
 * For tests in this process: act on `verdict` until the returned function is called (it restores the
 * probe's verdict). The same as the environment variable, without spawning a process.
 */
export function assumeBreakpointDelivery(verdict: 'fires' | 'silent'): () => void {
  const before = cached;
  cached = assumedDelivery(verdict);
  return () => {
    cached = before;
  };
}

/** The text every surface shows when breakpoints are silent: what was measured, what it means, the fix. */
export function silentBreakpointsMessage(counted: number, calls: number): string {
  return (
    `hardware breakpoints do not fire on this machine: the kernel accepted an execute breakpoint on ` +
    `${PROBE_FUNCTION}() in Ringside's own process and it counted ${counted} of ${calls} calls. ` +
    `The debug exceptions never reach this kernel, which is what a hypervisor that does not virtualize the debug registers does; ` +
    `watchpoints and line breakpoints will record nothing here. Run on bare metal or in a VM that passes debug registers through.`
  );
}

/** Whether a limitation line (a recorder's, a keeper's) is the silent-breakpoints message. */
export function isSilentBreakpointsMessage(text: string): boolean {
  return text.startsWith('hardware breakpoints do not fire on this machine:');
}

/** Runs the probe once per process (it costs one perf_event_open and a few syscalls). */
export function breakpointDelivery(): BreakpointDelivery {
  cached ??= assumedDelivery(process.env[DELIVERY_OVERRIDE_VARIABLE]) ?? probe();
  return cached;
}

function probe(): BreakpointDelivery {
  const address = libc.functionAddress(PROBE_FUNCTION);
  if (address === null) return { state: 'unknown', reason: `libc has no ${PROBE_FUNCTION}` };
  let fd;
  try {
    fd = openEvent(
      {
        type: PerfType.BREAKPOINT,
        config: 0n,
        samplePeriod: 0n,
        sampleType: 0,
        readFormat: 0,
        flags: { disabled: true, excludeKernel: true, excludeHv: true },
        bpType: BreakpointType.X,
        config1: address,
        config2: 8n,
      },
      0,
      -1,
      -1,
      undefined,
      { name: `probe mem:${PROBE_FUNCTION}:x` },
    );
  } catch (error) {
    if (error instanceof PerfError) return { state: 'unknown', reason: `the probe breakpoint was refused: ${error.message}` };
    throw error;
  }
  try {
    fd.enable();
    for (let call = 0; call < PROBE_CALLS; call++) libc.getppid();
    fd.disable();
    const counted = Number(fd.readCounts().value);
    if (counted >= PROBE_CALLS) return { state: 'fires' };
    return { state: 'silent', counted, calls: PROBE_CALLS, message: silentBreakpointsMessage(counted, PROBE_CALLS) };
  } finally {
    fd.dispose();
  }
}
