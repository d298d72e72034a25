// The perf_event_attr a recording opens: each user event made a flight-recorder event (backward
// ring, the sample fields the decoder needs, following the target's threads), the side-band dummy
// event, and a gap-free pair's standby copy.

import type { PerfEventAttr } from '../abi/attr';
import type { ResolvedEvent } from '../abi/snapshot';
import { PerfType, Sample, SoftwareConfig } from '../abi/uapi';
import { lostReadFormat } from './events';
import type { RecorderTarget } from './recorder-options';

/** Sample fields every flight-recorder record carries, so the decoder can place and attribute it. */
const REQUIRED_SAMPLE = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD | Sample.IDENTIFIER;
const SIDEBAND_SAMPLE = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
/** perf's default sampling frequency when an event comes without -c/-F. */
const DEFAULT_FREQ = 4000n;

/**
 * Whether an attached process is recorded per thread per CPU with inherit (following threads it
 * creates later), or per existing thread on any CPU. Hardware breakpoints stay per thread: with
 * per-CPU task breakpoints this kernel (6.18) sometimes leaves a debug trap unclaimed when one is
 * disabled and enabled under a fast writer, and sends the target SIGTRAP, killing it (seen in the
 * watch-controls scenario). A recording that watches an attached process must never kill it.
 */
export function followsNewThreads(target: RecorderTarget, events: readonly ResolvedEvent[]): boolean {
  return target.kind === 'launch' || (target.kind === 'pid' && !events.some((event) => event.isBreakpoint));
}

export function flightRecorderAttr(event: ResolvedEvent, target: RecorderTarget, follow: boolean): PerfEventAttr {
  const attr = event.attr;
  let samplePeriod = attr.samplePeriod;
  let freq = attr.flags.freq ?? false;
  if (samplePeriod === 0n) {
    // Counting-only attrs never write records; give them perf's defaults.
    if (attr.type === PerfType.BREAKPOINT || attr.type === PerfType.TRACEPOINT) {
      samplePeriod = 1n;
      freq = false;
    } else {
      samplePeriod = DEFAULT_FREQ;
      freq = true;
    }
  }
  const launch = target.kind === 'launch';
  // Launched commands and attached processes follow the threads and children created later, as
  // perf record does (see followsNewThreads); CPU-wide events see everything anyway.
  return {
    ...attr,
    samplePeriod,
    sampleType: attr.sampleType | REQUIRED_SAMPLE,
    readFormat: attr.readFormat | lostReadFormat(),
    flags: {
      ...attr.flags,
      freq,
      writeBackward: true,
      sampleIdAll: true,
      inherit: follow,
      disabled: launch,
      enableOnExec: launch,
    },
  };
}

/**
 * `userStacks`: some event copies user stacks for DWARF unwinding. The side-band then also records
 * the non-executable file mappings (mmap_data, as perf record --call-graph dwarf does): perf's
 * unwinder reads .eh_frame_hdr through the read-only segment that maps it, so an exported perf.data
 * needs those mappings for perf to unwind it.
 */
export function sidebandAttr(target: RecorderTarget, contextSwitch: boolean, excludeKernel: boolean, follow: boolean, userStacks: boolean): PerfEventAttr {
  const launch = target.kind === 'launch';
  return {
    type: PerfType.SOFTWARE,
    config: BigInt(SoftwareConfig.DUMMY),
    samplePeriod: 1n,
    sampleType: SIDEBAND_SAMPLE,
    readFormat: lostReadFormat(),
    flags: {
      comm: true,
      commExec: true,
      mmap: true,
      mmap2: true,
      task: true,
      contextSwitch,
      ...(userStacks ? { mmapData: true } : {}),
      sampleIdAll: true,
      inherit: follow,
      disabled: launch,
      enableOnExec: launch,
      // Side-band records are not samples, so excluding the kernel loses none of them; without it a
      // user who may not profile the kernel is refused this event alone (perf does the same).
      ...(excludeKernel ? { excludeKernel: true, excludeHv: true } : {}),
    },
  };
}

/** The standby ring of a gap-free pair: same event, idle until the first swap. */
export function standbyAttr(attr: PerfEventAttr): PerfEventAttr {
  return { ...attr, flags: { ...attr.flags, disabled: true, enableOnExec: false } };
}
