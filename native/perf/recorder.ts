// A Recorder is one flight-recording session: the events of a capture opened on every thread or
// CPU of the target, each with a backward (overwrite) ring, plus a forward side-band ring per
// thread/CPU for COMM/EXIT/FORK/MMAP2. Snapshots pause, copy and resume each ring (or swap a
// gap-free pair) and return raw copies for the decoder. The CLI and the extension both use it.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import type { PerfEventAttr } from '../abi/attr';
import { PerfType, RecordType, Sample, SoftwareConfig } from '../abi/uapi';
import { lostReadFormat, openEvent, type PerfEventFd } from './events';
import { BackwardRing, ForwardRing, GapFreeRingPair, SpareBufferWarmer, defaultCopyMode, type CopyMode, type RingMeta, type RingSnapshot, type RingStats } from './ring';
import { onlineCpus, threadsOf, readMaps, synthesizeSideband, allPids } from './procfs';
import type { ProcessMapping, ProcessSideband } from './sideband-types';
import type { EventDescription, RawSnapshot, ResolvedEvent, RingCopy } from '../abi/snapshot';
import * as libc from '../sys/libc';
import { PerfError } from '../sys/errors';
import { AccessError, MLOCK_SYSCTL, readPerfAccess, type PerfAccess } from '../sys/access';
import { planForAccess, type AccessPlan } from './access-plan';
import { breakpointDelivery } from './breakpoint-delivery';

export type RecorderTarget =
  | { kind: 'pid'; pid: number }
  | { kind: 'cpus'; cpus?: number[] }
  | { kind: 'launch'; argv: string[]; cwd?: string; env?: Record<string, string>; stdio?: LaunchStdio };

/** How the launched command's stdin/stdout/stderr are wired: one choice for all three, or one each (an fd number reuses ours). */
export type LaunchStdio = 'inherit' | 'ignore' | 'pipe' | readonly ['inherit' | 'ignore' | 'pipe' | number, 'inherit' | 'ignore' | 'pipe' | number, 'inherit' | 'ignore' | 'pipe' | number];

export interface RecorderOptions {
  readonly events: readonly ResolvedEvent[];
  readonly target: RecorderTarget;
  /**
   * Data pages per flight-recorder ring, a power of two. Given: exactly that, or an AccessError with
   * the locked-memory numbers when the rings do not fit. Omitted: DEFAULT_RING_PAGES per event of
   * the largest ring group (rounded up to a power of two, see defaultRingPages), halved until
   * the rings fit this user's locked-memory budget (noted in `limitations`).
   */
  readonly pages?: number;
  /** Two rings per target for software events and tracepoints, swapped instead of paused (default false). */
  readonly gapFree?: boolean;
  /** Side-band ring per thread/CPU (default true). */
  readonly sideband?: boolean;
  /** Also record context switches in the side-band (default false). */
  readonly contextSwitch?: boolean;
  /** Data pages of each side-band ring (default 16). */
  readonly sidebandPages?: number;
  /** Zero-copy reads (koffi.view) when the runtime allows; false forces memcpy (default: allowed where supported). */
  readonly useZeroCopy?: boolean;
  /** Synthesize COMM/MMAP2 equivalents from /proc at snapshot time (default true). */
  readonly synthesize?: boolean;
  /**
   * Keep one pre-faulted copy buffer per flight-recorder ring, warmed while idle, so a snapshot's
   * pause window is a warm memcpy (default true; costs one data area of memory per ring).
   */
  readonly warmCopyBuffers?: boolean;
  /**
   * Copy flight-recorder rings into SharedArrayBuffer memory (default false), so a DecodePool's
   * worker threads read a snapshot's bytes where they are instead of receiving a copy.
   */
  readonly sharedCopyBuffers?: boolean;
  /** What this process may record (default: read from /proc and /sys when the recorder opens). */
  readonly access?: PerfAccess;
  /**
   * Empty the side-band rings into this process's memory every SIDEBAND_DRAIN_MS (default true).
   * A keeper turns it off: its clients read the side-band from the ring itself, which draining
   * here would empty behind their backs.
   */
  readonly drainSideband?: boolean;
  /**
   * Indices of events that get a ring of their own instead of sharing their slot's ring with the
   * other events (trigger events: a moving data_head there means the trigger fired).
   */
  readonly ownRing?: readonly number[];
  /**
   * Seconds of history wanted. While a ring's coverage (its size over the rate it is written at)
   * falls below this, the recorder opens the same events with rings sized for it, makes sure they
   * record, then retires the old rings (their last contents stay in the snapshots), within the
   * locked-memory budget. Omitted: the rings keep their size.
   */
  readonly windowSec?: number;
}

export const DEFAULT_RING_PAGES = 64;

/**
 * Pages of a ring that `events` share when no size is given: DEFAULT_RING_PAGES for each of them,
 * so sharing one ring costs the memory one ring per event did and a quiet event's records are not
 * evicted sooner than they were (a busy event can still take the whole ring).
 */
export function defaultRingPages(eventCount: number): number {
  let pages = DEFAULT_RING_PAGES;
  while (pages < DEFAULT_RING_PAGES * eventCount) pages *= 2;
  return pages;
}

/** How a launched command ended: its exit code, or the signal that killed it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What a shell reports for a command that ended this way: its exit code, or 128 + the signal number. */
export function shellStatus(exit: ChildExit): number {
  if (exit.signal) return 128 + (osConstants.signals[exit.signal] ?? 0);
  return exit.code ?? 0;
}

export function describeExit(exit: ChildExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exited with status ${exit.code}`;
}
const DEFAULT_SIDEBAND_PAGES = 16;
/**
 * How often the side-band rings are emptied into their held store. A 16-page ring holds about 600
 * COMM/MMAP2/FORK/EXIT records: at 20 ms, a target would need 30,000 such records a second to fill
 * it between two drains.
 */
const SIDEBAND_DRAIN_MS = 20;
/** How often --window compares each ring's coverage with the window. */
const GROWTH_CHECK_MS = 250;

export interface RecorderSnapshot extends RawSnapshot {
  /** /proc state of the watched processes at snapshot time (see procfs.synthesizeSideband). */
  readonly processes: readonly ProcessSideband[];
}

export class LoadBaseMismatchError extends Error {
  constructor(message: string, readonly pid: number, readonly exePath: string, readonly expected: bigint, readonly actual: bigint | null) {
    super(message);
    this.name = 'LoadBaseMismatchError';
  }
}

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

function checkBase(pid: number, exePath: string, expectedBase: bigint, actual: bigint, source: string): void {
  if (actual !== expectedBase) {
    throw new LoadBaseMismatchError(
      `${exePath} is loaded at 0x${actual.toString(16)} in process ${pid} (${source}), not at the expected 0x${expectedBase.toString(16)}: ` +
      'address-space randomisation was not disabled (or the binary changed), so breakpoints on its symbols point elsewhere',
      pid, exePath, expectedBase, actual);
  }
}

/**
 * Checks that `exePath` is mapped at `expectedBase` (its file-offset-0 mapping) in process `pid`.
 * Throws LoadBaseMismatchError with both addresses when it is not (e.g. ASLR was not disabled),
 * or when the process is gone and nothing can be checked.
 */
export function verifyLoadBase(pid: number, exePath: string, expectedBase: bigint): void {
  const wanted = realPath(exePath);
  let maps: ProcessMapping[];
  try {
    maps = readMaps(pid);
  } catch {
    maps = [];
  }
  // A process that exited (or a zombie) has no maps left to check.
  if (maps.length === 0) throw new LoadBaseMismatchError(`cannot verify the load address of ${exePath}: process ${pid} has exited`, pid, exePath, expectedBase, null);
  const mapping = maps.find((m) => (m.path === wanted || m.path === exePath) && m.pgoff === 0n);
  if (!mapping) {
    throw new LoadBaseMismatchError(`${exePath} is not mapped in process ${pid}; symbol addresses cannot be trusted`, pid, exePath, expectedBase, null);
  }
  checkBase(pid, exePath, expectedBase, mapping.start, '/proc/PID/maps');
}

/**
 * Load base of `exePath` in `pid` from PERF_RECORD_MMAP2 records of side-band ring copies: the
 * executable segment's start minus its file offset (what the linker lays out for gcc/ld output).
 * Null when no such record is present.
 */
export function loadBaseFromSideband(copies: readonly RingCopy[], pid: number, exePath: string): bigint | null {
  const wanted = realPath(exePath);
  let best: { pgoff: bigint; base: bigint } | null = null;
  for (const copy of copies) {
    const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
    for (let offset = 0; offset + 8 <= copy.validBytes;) {
      const size = view.getUint16(offset + 6, true);
      if (size < 8 || offset + size > copy.validBytes) break;
      // MMAP2: header, pid, tid, addr, len, pgoff, 24 bytes of dev/inode or build id, prot, flags, filename.
      if (view.getUint32(offset, true) === RecordType.MMAP2 && size > 72 && view.getUint32(offset + 8, true) === pid) {
        const nameBytes = copy.bytes.subarray(offset + 72, offset + size);
        const end = nameBytes.indexOf(0);
        const name = Buffer.from(end < 0 ? nameBytes : nameBytes.subarray(0, end)).toString('utf8');
        if (name === wanted || name === exePath) {
          const addr = view.getBigUint64(offset + 16, true);
          const pgoff = view.getBigUint64(offset + 32, true);
          if (!best || pgoff < best.pgoff) best = { pgoff, base: addr - pgoff };
        }
      }
      offset += size;
    }
  }
  return best?.base ?? null;
}

/** Borrows fd `fd` of process `pid` (pidfd_open + pidfd_getfd): a new fd in this process for the same perf event. */
export function borrowPerfFd(pid: number, fd: number): number {
  const pidfd = libc.pidfdOpen(pid);
  try {
    return libc.pidfdGetfd(pidfd, fd);
  } finally {
    libc.close(pidfd);
  }
}

/** Sample fields every flight-recorder record carries, so the decoder can place and attribute it. */
const REQUIRED_SAMPLE = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD | Sample.IDENTIFIER;
const SIDEBAND_SAMPLE = Sample.TID | Sample.TIME | Sample.CPU | Sample.IDENTIFIER;
/** perf's default sampling frequency when an event comes without -c/-F. */
const DEFAULT_FREQ = 4000n;
/** The launch wrapper: wait for the go byte on fd 3, drop fd 3, become the command (same pid). */
const LAUNCH_WRAPPER = 'read _ <&3 || exit 125; exec 3<&-; exec "$@"';
const WRAPPER_MARKER = 'read _ <&3';

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

/** Per event of a group, its fd on the slot's first thread (not its other threads or extra sites). */
type PrimaryFds = ReadonlyMap<number, PerfEventFd>;

/**
 * `fds`: every fd that writes into the unit's ring(s), owners included (a resize disables and closes
 * them); `firstLive`: those of the ring that records first (a resize enables them).
 */
type RingUnit =
  | { readonly kind: 'single'; readonly group: RingGroup; readonly ring: BackwardRing; readonly primaries: PrimaryFds; readonly fds: readonly PerfEventFd[]; readonly firstLive: readonly PerfEventFd[] }
  | { readonly kind: 'pair'; readonly group: RingGroup; readonly pair: GapFreeRingPair; readonly primaries: ReadonlyMap<BackwardRing, PrimaryFds>; readonly fds: readonly PerfEventFd[]; readonly firstLive: readonly PerfEventFd[] }
  | { readonly kind: 'forward'; readonly ring: ForwardRing };

/** What openOnSlot opened: the ring, the fds redirected into it, and each event's first fd. */
interface OpenedGroup<R> {
  readonly ring: R;
  readonly followers: PerfEventFd[];
  readonly primaries: Map<number, PerfEventFd>;
}

interface Slot {
  readonly pid: number;
  readonly cpu: number;
  readonly label: string;
  /**
   * Attached processes: every thread there was at attach time, first the one whose fd owns the
   * slot's ring. The others' fds write into that ring (PERF_EVENT_IOC_SET_OUTPUT, same CPU).
   */
  readonly tids?: readonly number[];
}

/**
 * Whether an attached process is recorded per thread per CPU with inherit (following threads it
 * creates later), or per existing thread on any CPU. Hardware breakpoints stay per thread: with
 * per-CPU task breakpoints this kernel (6.18) sometimes leaves a debug trap unclaimed when one is
 * disabled and enabled under a fast writer, and sends the target SIGTRAP, killing it (seen in the
 * watch-controls scenario). A recording that watches an attached process must never kill it.
 */
function followsNewThreads(target: RecorderTarget, events: readonly ResolvedEvent[]): boolean {
  return target.kind === 'launch' || (target.kind === 'pid' && !events.some((event) => event.isBreakpoint));
}

function flightRecorderAttr(event: ResolvedEvent, target: RecorderTarget, follow: boolean): PerfEventAttr {
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
function sidebandAttr(target: RecorderTarget, contextSwitch: boolean, excludeKernel: boolean, follow: boolean, userStacks: boolean): PerfEventAttr {
  const launch = target.kind === 'launch';
  return {
    type: PerfType.SOFTWARE,
    config: BigInt(SoftwareConfig.DUMMY),
    samplePeriod: 1n,
    sampleType: SIDEBAND_SAMPLE,
    readFormat: lostReadFormat(),
    flags: {
      comm: true, commExec: true, mmap: true, mmap2: true, task: true, contextSwitch,
      ...(userStacks ? { mmapData: true } : {}),
      sampleIdAll: true, inherit: follow, disabled: launch, enableOnExec: launch,
      // Side-band records are not samples, so excluding the kernel loses none of them; without it a
      // user who may not profile the kernel is refused this event alone (perf does the same).
      ...(excludeKernel ? { excludeKernel: true, excludeHv: true } : {}),
    },
  };
}

/** The standby ring of a gap-free pair: same event, idle until the first swap. */
function standbyAttr(attr: PerfEventAttr): PerfEventAttr {
  return { ...attr, flags: { ...attr.flags, disabled: true, enableOnExec: false } };
}

interface RingSizes {
  readonly pages: number;
  readonly sidebandPages: number;
  /** Set when the rings were shrunk to fit the locked-memory budget. */
  readonly note: string | null;
}

function kib(pages: number, access: PerfAccess): string {
  return `${(pages * access.pageSize) / 1024} KiB`;
}

/**
 * How many rings a recording maps: slots (CPUs, or threads for per-thread breakpoints), flight-recorder
 * rings per slot (one per ring group, two for a gap-free pair), of which `growableRings` are reopened
 * when the rings grow (all but the trigger events' own rings), and side-band rings per slot.
 */
function ringCounts(options: RecorderOptions, events: readonly ResolvedEvent[]): { slots: number; flightRings: number; growableRings: number; sidebandRings: number } {
  const ownRing = new Set(options.ownRing);
  const groups = ringGroupsFor(events, options.gapFree ?? false, ownRing);
  const target = options.target;
  // One ring per ring group per CPU (events and an attached process's threads share them), plus a side-band ring.
  const slots = target.kind === 'cpus' ? (target.cpus ?? onlineCpus()).length
    : target.kind === 'pid' && !followsNewThreads(target, events) ? threadsOf(target.pid).length : onlineCpus().length;
  const ringsOf = (group: RingGroup) => (group.gapFree ? 2 : 1);
  const flightRings = groups.reduce((count, group) => count + ringsOf(group), 0);
  const growableRings = groups.filter((group) => isGrowable(group, ownRing)).reduce((count, group) => count + ringsOf(group), 0);
  return { slots, flightRings, growableRings, sidebandRings: options.sideband === false ? 0 : 1 };
}

/** Trigger events' own rings keep their size: their data_head is what the trigger watcher follows. */
function isGrowable(group: RingGroup, ownRing: ReadonlySet<number>): boolean {
  return !group.eventIndices.some((index) => ownRing.has(index));
}

/**
 * Data pages (a power of two) a ring needs to keep `windowSec` of history at `bytesPerSec`, with a
 * quarter more for bursts. At least `minimum` (growth never shrinks).
 */
export function pagesForWindow(bytesPerSec: number, windowSec: number, pageBytes: number, minimum = 1): number {
  const wanted = Math.ceil((bytesPerSec * windowSec * 1.25) / pageBytes);
  let pages = Math.max(1, minimum);
  while (pages < wanted) pages *= 2;
  return pages;
}

/**
 * Ring sizes that fit the locked memory perf_mmap() lets this user pin: every ring costs its data
 * pages plus one header page. The count of rings is known before any is mapped (one per ring group per
 * thread or CPU, two for a gap-free pair, plus one side-band ring), so a ring set that cannot fit
 * is refused or shrunk up front instead of failing halfway through with a bare EPERM.
 */
function ringSizesFor(options: RecorderOptions, events: readonly ResolvedEvent[], access: PerfAccess): RingSizes {
  const groups = ringGroupsFor(events, options.gapFree ?? false, new Set(options.ownRing));
  const asked = options.pages ?? defaultRingPages(Math.max(...groups.map((group) => group.eventIndices.length)));
  const askedSideband = options.sidebandPages ?? DEFAULT_SIDEBAND_PAGES;
  const budget = access.lockedPagesBudget;
  if (budget === null) return { pages: asked, sidebandPages: askedSideband, note: null };
  const { slots, flightRings, sidebandRings } = ringCounts(options, events);
  const cost = (pages: number, sidebandPages: number) => slots * (flightRings * (pages + 1) + sidebandRings * (sidebandPages + 1));
  if (cost(asked, askedSideband) <= budget) return { pages: asked, sidebandPages: askedSideband, note: null };
  const limits = `${MLOCK_SYSCTL} = ${access.perfMlockKb ?? 'unknown'} KiB per CPU x ${access.onlineCpus} CPUs for your user, ` +
    `plus RLIMIT_MEMLOCK (ulimit -l) = ${(access.memlockLimitBytes ?? 0) / 1024} KiB for this process`;
  const fix = `raise it with \`sudo sysctl ${MLOCK_SYSCTL}=${Math.ceil((cost(asked, askedSideband) * access.pageSize) / 1024 / access.onlineCpus)}\` or \`ulimit -l\`, or grant CAP_IPC_LOCK`;
  let pages = asked;
  let sidebandPages = askedSideband;
  while (cost(pages, sidebandPages) > budget && (pages > 1 || sidebandPages > 1)) {
    if (pages >= sidebandPages && pages > 1) pages /= 2;
    else sidebandPages /= 2;
  }
  const rings = `${slots * flightRings} flight-recorder ring(s) of ${asked} pages and ${slots * sidebandRings} side-band ring(s) of ${askedSideband} pages`;
  if (options.pages !== undefined || cost(pages, sidebandPages) > budget) {
    const fits = cost(pages, sidebandPages) <= budget ? `; --pages ${pages} fits` : '';
    throw new AccessError(
      `${rings} need ${kib(cost(asked, askedSideband), access)} of locked memory, more than the ${kib(budget, access)} perf lets this user lock (${limits})`,
      `${fix}${fits}`);
  }
  return {
    pages, sidebandPages,
    note: `rings are ${pages} pages (asked ${asked}) to fit the ${kib(budget, access)} of locked memory perf lets this user lock (${limits}); ${fix}`,
  };
}

function liveRing(unit: Exclude<RingUnit, { kind: 'forward' }>): BackwardRing {
  return unit.kind === 'single' ? unit.ring : unit.pair.active;
}

/**
 * A copy of a ring that is being written but has not wrapped: the kernel writes new records in
 * front of data_head, so everything from the head read here to the end of what was written stays
 * as it is while it is copied. Null when the ring wrapped (then nothing is stable without a pause).
 */
function peekUnwrapped(ring: BackwardRing): RingCopy | null {
  const result = ring.copyQuiescent();
  if (result.written >= BigInt(ring.dataSize)) return null;
  return ring.toCopy(result.bytes, result.validBytes, result.written, 'peek');
}

/**
 * Where a flight-recorder sample keeps its time: every flight-recorder attr carries IDENTIFIER, IP
 * and TID (REQUIRED_SAMPLE), which come first in a sample, so TIME is the fourth u64 of the body.
 */
const SAMPLE_TIME_OFFSET = 8 + 3 * 8;

/** Time of the oldest sample of a backward ring copy (the last one in memory order), or null. */
function oldestSampleTime(copy: RingCopy | null): bigint | null {
  if (!copy) return null;
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
  let oldest: bigint | null = null;
  for (let offset = 0; offset + 8 <= copy.validBytes;) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > copy.validBytes) break;
    if (view.getUint32(offset, true) === RecordType.SAMPLE && size >= SAMPLE_TIME_OFFSET + 8) oldest = view.getBigUint64(offset + SAMPLE_TIME_OFFSET, true);
    offset += size;
  }
  return oldest;
}

/**
 * A backward ring copy without its newest records from time `since` on (what the successor ring
 * also holds). The copy's data size shrinks with it, so a cut oldest record still reads as the
 * ordinary cut end of a full flight recorder.
 */
function dropFrom(copy: RingCopy, since: bigint): RingCopy {
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
  let offset = 0;
  while (offset + 8 <= copy.validBytes) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > copy.validBytes) break;
    const isSample = view.getUint32(offset, true) === RecordType.SAMPLE && size >= SAMPLE_TIME_OFFSET + 8;
    if (isSample && view.getBigUint64(offset + SAMPLE_TIME_OFFSET, true) < since) break;
    offset += size;
  }
  if (offset === 0) return copy;
  return {
    ...copy,
    bytes: copy.bytes.subarray(offset),
    validBytes: copy.validBytes - offset,
    dataSize: copy.dataSize - offset,
    bytesWritten: copy.bytesWritten - BigInt(offset),
  };
}

export class Recorder {
  private readonly units: RingUnit[] = [];
  private readonly fdsByEvent: PerfEventFd[][] = [];
  private readonly attrs: PerfEventAttr[] = [];
  private child: ChildProcess | null = null;
  private released = false;
  private disposed = false;
  private childPidValue: number | undefined;
  private exitedPromise: Promise<number | null> | undefined;
  private exitStatusPromise: Promise<ChildExit> | undefined;
  private exitCode: number | null | undefined;
  /** Faults in every flight-recorder ring's spare copy buffer while idle (see SpareCopyBuffer). */
  private readonly warmer: SpareBufferWarmer;
  /** Empties the side-band rings between snapshots, so a full ring never drops COMM/MMAP2/EXIT. */
  private drainTimer: NodeJS.Timeout | undefined;
  /** Per event, the sites of a multi-site source line no debug register was left for (address -> function). */
  private readonly unarmedSites = new Map<number, Map<bigint, string>>();

  /** Ring ids are never reused, so a retired ring's copies keep an id of their own. */
  private nextRingId = 0;
  /** Final contents of rings retired by a resize, handed to snapshots with the live rings. */
  private retired: RingCopy[] = [];
  /** Sample ids of closed fds whose records are still in `retired`, per event. */
  private readonly retiredIds: bigint[][] = [];
  /** When and why the rings were resized, or why they stopped growing. */
  private readonly resizeNotes: string[] = [];
  /** When the recorder opened (performance.now ms): resize notes say how long after it they happened. */
  private readonly openedAtMs = performance.now();
  private growthTimer: NodeJS.Timeout | undefined;
  private growthStopped = false;
  /** bytesWritten of each growable ring at the previous growth check. */
  private readonly lastWritten = new Map<BackwardRing, { written: bigint; atMs: number }>();
  /** Pages of the rings a resize leaves alone (trigger events' own rings). */
  private readonly fixedPages: number;

  private constructor(
    private readonly options: RecorderOptions,
    private readonly mode: CopyMode,
    private readonly plan: AccessPlan,
    private sizes: RingSizes,
    private readonly limitationList: readonly string[],
    private readonly access: PerfAccess,
  ) {
    this.fixedPages = sizes.pages;
    this.warmer = new SpareBufferWarmer(() => this.backwardRings, options.warmCopyBuffers !== false);
  }

  /** Pid of the launched command (launch targets). */
  get childPid(): number | undefined {
    return this.childPidValue;
  }

  /** Resolves with the launched command's exit code (null when killed by a signal). */
  get exited(): Promise<number | null> | undefined {
    return this.exitedPromise;
  }

  /** Resolves with how the launched command ended. */
  get exitStatus(): Promise<ChildExit> | undefined {
    return this.exitStatusPromise;
  }

  /**
   * Ends the launched command if it still runs: SIGTERM, then SIGKILL once `graceMs` has passed,
   * and resolves when it has exited. Its events stay open (the rings keep what it did).
   */
  async endLaunched(graceMs = 2000): Promise<ChildExit | undefined> {
    const child = this.child;
    const status = this.exitStatusPromise;
    if (!child || !status) return undefined;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); }, graceMs);
      // The child's own handle keeps a waiting caller's process alive; this timer need not.
      timer.unref();
      try {
        return await status;
      } finally {
        clearTimeout(timer);
      }
    }
    return status;
  }

  /** The events as opened: narrowed to user space where this process may not see the kernel. */
  get events(): readonly ResolvedEvent[] {
    return this.plan.events;
  }

  /** What this recording cannot see and why (user space only, rings shrunk to the budget, unarmed sites); empty when nothing. */
  get limitations(): readonly string[] {
    const unarmed = [...this.unarmedSites].map(([index, sites]) => {
      const event = this.plan.events[index];
      const total = (event.extraSites?.length ?? 0) + 1;
      return `${event.name}: ${total - sites.size} of ${total} places armed; no debug register left for ${[...sites.values()].join(', ')} (x86 has 4 per task and CPU)`;
    });
    return [...this.limitationList, ...unarmed, ...this.resizeNotes];
  }

  static async open(options: RecorderOptions): Promise<Recorder> {
    const pages = options.pages ?? DEFAULT_RING_PAGES;
    if (!Number.isInteger(pages) || pages < 1 || (pages & (pages - 1)) !== 0) throw new RangeError(`--pages must be a power of two, got ${pages}`);
    if (options.events.length === 0) throw new Error('a recording needs at least one event');
    const mode: CopyMode = options.useZeroCopy === false ? 'memcpy' : defaultCopyMode();
    const access = options.access ?? readPerfAccess();
    const plan = planForAccess(options.events, options.target.kind, access);
    const sizes = ringSizesFor(options, plan.events, access);
    const perThread = options.target.kind === 'pid' && !followsNewThreads(options.target, plan.events)
      ? `hardware breakpoints watch the ${threadsOf(options.target.pid).length} thread(s) process ${options.target.pid} has now; threads it creates later are not watched`
      : null;
    const delivery = plan.events.some((event) => event.isBreakpoint) ? breakpointDelivery() : null;
    const silentBreakpoints = delivery?.state === 'silent' ? delivery.message : null;
    if (options.windowSec !== undefined && !(options.windowSec > 0)) throw new RangeError(`--window must be a positive number of seconds, got ${options.windowSec}`);
    const recorder = new Recorder(options, mode, plan, sizes,
      [plan.limitation, sizes.note, perThread, silentBreakpoints].filter((line): line is string => line !== null), access);
    try {
      if (options.target.kind === 'launch') {
        await recorder.launch(options.target);
      } else {
        recorder.openAll(recorder.slotsFor(options.target));
      }
    } catch (error) {
      recorder.dispose();
      throw error;
    }
    recorder.warmer.schedule();
    if (options.windowSec !== undefined) {
      recorder.growthTimer = setInterval(() => recorder.checkGrowth(), GROWTH_CHECK_MS);
      // Growth serves a recording someone keeps open; it must not keep the process alive itself.
      recorder.growthTimer.unref();
    }
    if (recorder.forwardRings.length > 0 && options.drainSideband !== false) {
      recorder.drainTimer = setInterval(() => recorder.drainSideband(), SIDEBAND_DRAIN_MS);
      // Draining serves whoever keeps the process alive for its own reasons; it must not be one.
      recorder.drainTimer.unref();
    }
    return recorder;
  }

  /** Moves what the kernel wrote into each side-band ring to its held store (see ForwardRing.drain). */
  drainSideband(): void {
    if (this.disposed) return;
    for (const ring of this.forwardRings) ring.drain();
  }

  /** Resolves once every spare copy buffer is warm (at once when warming is off or the recorder is disposed). */
  copyBuffersWarm(): Promise<void> {
    return this.warmer.whenWarm();
  }

  private slotsFor(target: RecorderTarget): Slot[] {
    switch (target.kind) {
      case 'cpus': {
        const online = onlineCpus();
        const cpus = target.cpus ?? online;
        for (const cpu of cpus) if (!online.includes(cpu)) throw new Error(`CPU ${cpu} is not online (online: ${online.join(',')})`);
        return cpus.map((cpu) => ({ pid: -1, cpu, label: `cpu${cpu}` }));
      }
      case 'pid': {
        const tids = threadsOf(target.pid);
        if (tids.length === 0) throw new Error(`process ${target.pid} has no threads left to trace (it exited)`);
        // Breakpoints: one fd per existing thread on any CPU (see followsNewThreads).
        if (!followsNewThreads(target, this.plan.events)) return tids.map((tid) => ({ pid: tid, cpu: -1, label: `tid ${tid}`, tids: [tid] }));
        // Like `perf record -p`: one inherited fd per thread per CPU, so threads created after the
        // attach are followed too (the kernel refuses to mmap an inherited cpu -1 event). Per CPU
        // one ring per event; the other threads' fds write into it.
        return onlineCpus().map((cpu) => ({ pid: tids[0], cpu, label: `cpu${cpu} pid ${target.pid}`, tids }));
      }
      case 'launch':
        // The kernel refuses to mmap an inherited per-task (cpu -1) event, so a launched command
        // (which needs inherit to follow its children) gets one fd per CPU, like `perf record -- cmd`.
        return onlineCpus().map((cpu) => ({ pid: this.childPidValue ?? -1, cpu, label: `cpu${cpu} pid ${this.childPidValue}` }));
    }
  }

  /**
   * Opens every ring group (or `only` these, without side-band: a resize) on every slot. A resize
   * opens its events disabled and enables them all at once when every ring is mapped.
   */
  private openAll(slots: Slot[], only?: { groups: readonly RingGroup[]; pages: number }): void {
    const { target } = this.options;
    const { events } = this.plan;
    const { sidebandPages } = this.sizes;
    const pages = only?.pages ?? this.sizes.pages;
    const disabledUntilSwap = (attr: PerfEventAttr): PerfEventAttr => ({ ...attr, flags: { ...attr.flags, disabled: true, enableOnExec: false } });
    if (!only) {
      events.forEach((event, index) => {
        this.attrs[index] = flightRecorderAttr(event, target, followsNewThreads(target, events));
        this.fdsByEvent[index] = [];
      });
    }
    const groups = only?.groups ?? ringGroupsFor(events, this.options.gapFree ?? false, new Set(this.options.ownRing));
    const allGroups = ringGroupsFor(events, this.options.gapFree ?? false, new Set(this.options.ownRing));
    const sidebandIndex = events.length;
    let opened = 0;
    for (const slot of slots) {
      let slotOpened = false;
      for (const group of groups) {
        const members = group.eventIndices.map((eventIndex) => ({ eventIndex, attr: only ? disabledUntilSwap(this.attrs[eventIndex]) : this.attrs[eventIndex] }));
        const names = group.eventIndices.map((index) => events[index].name);
        const ringId = this.nextRingId++;
        const label = allGroups.length > 1 ? `${slot.label} ${names.join('+')}` : slot.label;
        const metaFor = (fd: PerfEventFd): RingMeta => ({ ringId, label, cpu: slot.cpu, tid: fd.pid, defaultEvent: group.eventIndices[0] });
        const first = this.openOnSlot(members, slot, (fd) => this.ring(fd, pages, metaFor(fd)));
        if (!first) continue;
        slotOpened = true;
        if (group.gapFree) {
          // The standby ring gets the same events on the same threads, opened disabled.
          const tids = [...new Set([first.ring.event.pid, ...first.followers.map((fd) => fd.pid)])];
          const standbySlot: Slot = { ...slot, pid: first.ring.event.pid, tids: slot.tids ? tids : undefined };
          const standbyMembers = members.map((member) => ({ ...member, attr: standbyAttr(member.attr) }));
          let standby: OpenedGroup<BackwardRing> | null;
          try {
            standby = this.openOnSlot(standbyMembers, standbySlot, (fd) => this.ring(fd, pages, first.ring.meta));
            if (!standby) throw new Error(`the threads of ${slot.label} exited while Ringside opened their standby ring`);
          } catch (error) {
            first.ring.dispose();
            throw error;
          }
          const pair = new GapFreeRingPair(first.ring, standby.ring, { first: first.followers, second: standby.followers });
          const firstLive = [first.ring.event, ...first.followers];
          const fds = [...firstLive, standby.ring.event, ...standby.followers];
          this.units.push({ kind: 'pair', group, pair, primaries: new Map([[first.ring, first.primaries], [standby.ring, standby.primaries]]), fds, firstLive });
        } else {
          const fds = [first.ring.event, ...first.followers];
          this.units.push({ kind: 'single', group, ring: first.ring, primaries: first.primaries, fds, firstLive: fds });
        }
      }
      if (slotOpened) opened++;
      if (slotOpened && !only && this.options.sideband !== false) {
        this.attrs[sidebandIndex] = sidebandAttr(target, this.options.contextSwitch ?? false, this.plan.excludeKernel, followsNewThreads(target, events),
          events.some((event) => (event.attr.sampleType & Sample.STACK_USER) !== 0));
        this.fdsByEvent[sidebandIndex] ??= [];
        const ringId = this.nextRingId++;
        const sideband = this.openOnSlot([{ eventIndex: sidebandIndex, attr: this.attrs[sidebandIndex] }], slot, (fd) => {
          const meta: RingMeta = { ringId, label: `${slot.label} sideband`, cpu: slot.cpu, tid: fd.pid, defaultEvent: sidebandIndex };
          try {
            return new ForwardRing(fd, sidebandPages, meta, this.mode);
          } catch (error) {
            fd.dispose();
            throw error;
          }
        });
        if (sideband) this.units.push({ kind: 'forward', ring: sideband.ring });
      }
    }
    if (opened === 0) throw new Error('no thread of the target could be traced (all exited?)');
  }

  /**
   * Opens a ring group's events on a slot and maps the ring with `map` on the owner fd (the first
   * event on the first of the slot's threads still alive); every other fd (the other events, the
   * other threads of an attached process, extra breakpoint sites) is redirected into that ring with
   * SET_OUTPUT. The kernel takes that only towards a mapped ring on the same CPU (or, for cpu -1,
   * the same task) with the same write direction and clock, which every member here shares.
   * Every fd goes into fdsByEvent (their ids identify records; dispose closes them). Null when
   * every thread has exited.
   */
  private openOnSlot<R extends { dispose(): void; addWriter(fd: PerfEventFd): void }>(members: readonly { eventIndex: number; attr: PerfEventAttr }[], slot: Slot,
    map: (owner: PerfEventFd) => R): OpenedGroup<R> | null {
    const tids = slot.tids ?? [slot.pid];
    const attached = slot.tids !== undefined;
    let ring: R | undefined;
    let owner: PerfEventFd | undefined;
    const followers: PerfEventFd[] = [];
    const primaries = new Map<number, PerfEventFd>();
    const keep = (fd: PerfEventFd, eventIndex: number) => {
      this.fdsByEvent[eventIndex] ??= [];
      this.fdsByEvent[eventIndex].push(fd);
    };
    const follow = (fd: PerfEventFd, eventIndex: number) => {
      keep(fd, eventIndex);
      fd.setOutput(owner!);
      ring!.addWriter(fd);
      followers.push(fd);
    };
    try {
      for (const tid of tids) {
        for (const { eventIndex, attr } of members) {
          const name = this.eventName(eventIndex);
          const fd = this.tryOpen(attr, { ...slot, pid: tid }, name, attached);
          if (!fd) continue;
          if (!primaries.has(eventIndex)) primaries.set(eventIndex, fd);
          if (!owner) {
            owner = fd;
            keep(fd, eventIndex);
            ring = map(fd);
          } else {
            follow(fd, eventIndex);
          }
          // A source line in several functions: one execute breakpoint per site, all writing into this ring.
          for (const site of this.plan.events[eventIndex]?.extraSites ?? []) {
            if (this.unarmedSites.get(eventIndex)?.has(site.address)) continue;
            let siteFd: PerfEventFd | null;
            try {
              siteFd = this.tryOpen({ ...attr, config1: site.address }, { ...slot, pid: tid }, name, attached);
            } catch (error) {
              // More sites than free debug registers: the first sites stay armed, the rest are named.
              if (!(error instanceof PerfError) || error.code !== 'ENOSPC') throw error;
              const unarmed = this.unarmedSites.get(eventIndex) ?? new Map<bigint, string>();
              unarmed.set(site.address, site.function ?? `0x${site.address.toString(16)}`);
              this.unarmedSites.set(eventIndex, unarmed);
              continue;
            }
            if (siteFd) follow(siteFd, eventIndex);
          }
        }
      }
    } catch (error) {
      ring?.dispose();
      throw error;
    }
    return ring ? { ring, followers, primaries } : null;
  }

  private eventName(eventIndex: number): string {
    return this.plan.events[eventIndex]?.name ?? 'sideband';
  }

  /** Opens one fd; a thread that exited between listing and opening (ESRCH) is skipped for -p. */
  private tryOpen(attr: PerfEventAttr, slot: Slot, name: string, skipGoneThreads: boolean): PerfEventFd | null {
    try {
      return openEvent(attr, slot.pid, slot.cpu, -1, undefined, { name });
    } catch (error) {
      if (skipGoneThreads && error instanceof PerfError && error.code === 'ESRCH') return null;
      throw error;
    }
  }

  /** Maps a backward ring on `event` (already in fdsByEvent); closes the fd when mapping fails. */
  private ring(event: PerfEventFd, pages: number, meta: RingMeta): BackwardRing {
    try {
      return new BackwardRing(event, pages, meta, this.mode, this.options.sharedCopyBuffers === true);
    } catch (error) {
      event.dispose();
      throw error;
    }
  }

  private async launch(target: Extract<RecorderTarget, { kind: 'launch' }>): Promise<void> {
    if (target.argv.length === 0) throw new Error('nothing to launch: empty command');
    // Like GDB: no address-space randomisation for the inferior, so symbol addresses are known in
    // advance. personality() is per task and inherited across fork and exec: set it around spawn only.
    const previous = libc.personality(0xffffffff);
    libc.personality(previous | libc.ADDR_NO_RANDOMIZE);
    let child: ChildProcess;
    try {
      const stdio = target.stdio ?? 'inherit';
      const [stdin, stdout, stderr] = typeof stdio === 'string' ? [stdio, stdio, stdio] : stdio;
      child = spawn('/bin/sh', ['-c', LAUNCH_WRAPPER, 'ringside-launch', ...target.argv], {
        cwd: target.cwd,
        env: target.env ? { ...target.env } : process.env,
        stdio: [stdin, stdout, stderr, 'pipe'],
      });
    } finally {
      libc.personality(previous);
    }
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error) => reject(new Error(`cannot launch ${target.argv[0]}: ${error.message}`)));
    });
    const pid = child.pid!;
    this.childPidValue = pid;
    this.exitStatusPromise = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        resolve({ code, signal });
      });
    });
    this.exitedPromise = this.exitStatusPromise.then((exit) => exit.code);
    // The shell sits in `read` until released; events armed now fire from the command's first instruction (enable_on_exec).
    this.openAll(this.slotsFor(target));
    this.release();
    await this.waitForExec(pid);
  }

  private release(): void {
    if (this.released || !this.child) return;
    this.released = true;
    const go = this.child.stdio[3];
    if (go && 'end' in go) {
      (go as NodeJS.WritableStream).end('\n');
    }
  }

  /** Waits until the wrapper has exec'd COMMAND (its cmdline changes) or exited, so maps are those of COMMAND. */
  private async waitForExec(pid: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && this.exitCode === undefined) {
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        return;
      }
      if (cmdline.length > 0 && !cmdline.includes(WRAPPER_MARKER)) {
        // exec has replaced the image; the ELF loader maps the executable in the same syscall, and
        // the cmdline is only readable from the new stack once that is done.
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /**
   * Method form for the launched command. A command that already exited is checked against the
   * MMAP2 records of the side-band rings instead (peeked, not consumed).
   */
  verifyLoadBase(exePath: string, expectedBase: bigint): void {
    const pid = this.childPidValue;
    if (pid === undefined) throw new Error('verifyLoadBase needs a launched command');
    try {
      verifyLoadBase(pid, exePath, expectedBase);
    } catch (error) {
      if (!(error instanceof LoadBaseMismatchError) || error.actual !== null) throw error;
      const fromSideband = loadBaseFromSideband(this.forwardRings.map((ring) => ring.peek()), pid, exePath);
      if (fromSideband === null) throw error;
      checkBase(pid, exePath, expectedBase, fromSideband, 'side-band MMAP2');
    }
  }

  /**
   * The growth check (every GROWTH_CHECK_MS with --window): a ring's coverage is its size over the
   * rate it was written at since the previous check. The slowest-covering ring decides: below the
   * window, the growable rings are reopened at pagesForWindow of its rate, capped by what the
   * locked-memory budget leaves while old and new rings are both mapped.
   */
  private checkGrowth(): void {
    const windowSec = this.options.windowSec;
    if (this.disposed || this.growthStopped || windowSec === undefined) return;
    const ownRing = new Set(this.options.ownRing);
    const now = performance.now();
    let worst: { coverageSec: number; bytesPerSec: number; label: string } | null = null;
    let allWrapped = true;
    const seen = new Set<BackwardRing>();
    for (const unit of this.units) {
      if (unit.kind === 'forward' || !isGrowable(unit.group, ownRing)) continue;
      const ring = unit.kind === 'single' ? unit.ring : unit.pair.active;
      seen.add(ring);
      const written = ring.bytesWritten();
      if (written < BigInt(ring.dataSize)) allWrapped = false;
      const last = this.lastWritten.get(ring);
      this.lastWritten.set(ring, { written, atMs: now });
      if (!last || written <= last.written || now <= last.atMs) continue;
      const bytesPerSec = Number(written - last.written) / ((now - last.atMs) / 1000);
      const coverageSec = ring.dataSize / bytesPerSec;
      if (coverageSec < windowSec && (!worst || coverageSec < worst.coverageSec)) worst = { coverageSec, bytesPerSec, label: ring.meta.label };
    }
    for (const ring of this.lastWritten.keys()) if (!seen.has(ring)) this.lastWritten.delete(ring);
    if (!this.options.gapFree && allWrapped && this.retired.length > 0) this.retired = [];
    if (!worst) return;
    const current = this.sizes.pages;
    const wanted = pagesForWindow(worst.bytesPerSec, windowSec, this.access.pageSize, current * 2);
    const ceiling = this.growthCeiling();
    const why = `${worst.label} kept ${worst.coverageSec.toFixed(3)} s of history (written at ${Math.round(worst.bytesPerSec / 1024)} KiB/s), less than the ${windowSec} s window`;
    // Seconds since the recording opened, not a clock time: the timeline labels a note by its text before the first ':'.
    const at = `${((performance.now() - this.openedAtMs) / 1000).toFixed(1)} s after the recording started`;
    if (ceiling <= current) {
      this.growthStopped = true;
      this.resizeNotes.push(`rings stay at ${current} pages (${at}): ${why}, and the locked-memory budget (${kib(this.access.lockedPagesBudget ?? 0, this.access)}) leaves no room for larger ones while both sets are mapped`);
      return;
    }
    const pages = Math.min(wanted, ceiling);
    const capped = pages < wanted ? `; the locked-memory budget stopped growth at ${pages} pages (the window needs ${wanted})` : '';
    const started = performance.now();
    try {
      this.grow(pages);
    } catch (error) {
      this.growthStopped = true;
      this.resizeNotes.push(`rings stay at ${current} pages (${at}): ${why}, but opening ${pages}-page rings failed: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.resizeNotes.push(`rings resized from ${current} to ${pages} pages in ${(performance.now() - started).toFixed(1)} ms (${at}): ${why}${capped}`);
    if (pages < wanted) this.growthStopped = true;
  }

  /** The largest power-of-two page count the growable rings may have while the current set is still mapped. */
  private growthCeiling(): number {
    const budget = this.access.lockedPagesBudget;
    if (budget === null) return Number.MAX_SAFE_INTEGER;
    const { slots, flightRings, growableRings, sidebandRings } = ringCounts(this.options, this.plan.events);
    const mapped = slots * ((flightRings - growableRings) * (this.fixedPages + 1) + growableRings * (this.sizes.pages + 1) + sidebandRings * (this.sizes.sidebandPages + 1));
    const free = budget - mapped;
    let pages = 0;
    while (growableRings > 0 && slots * growableRings * (pages * 2 + 1) <= free) pages = pages === 0 ? 1 : pages * 2;
    return pages;
  }

  /**
   * Reopens the growable ring groups with `pages`-page rings. Order, so that no moment is missing:
   * the new set is opened disabled and mapped (opening and mapping take tens of ms), then every fd
   * of it is enabled, then every fd of the old set is disabled (ENABLE and DISABLE are synchronous:
   * the new rings record once the first returns, nothing writes the old ones once the second does),
   * then the old rings are copied. Records of the microseconds both sets ran are dropped from the
   * old copy: on each CPU (or thread), those at or after the new ring's oldest record are in the new
   * ring too.
   */
  private grow(pages: number): void {
    const ownRing = new Set(this.options.ownRing);
    const groups = ringGroupsFor(this.plan.events, this.options.gapFree ?? false, ownRing).filter((group) => isGrowable(group, ownRing));
    const old = this.units.filter((unit): unit is Exclude<RingUnit, { kind: 'forward' }> => unit.kind !== 'forward' && isGrowable(unit.group, ownRing));
    const firstNew = this.units.length;
    // New fds are appended to each event's list: a failed resize closes exactly those.
    const fdCounts = this.fdsByEvent.map((fds) => fds?.length ?? 0);
    const abandon = () => {
      for (const unit of this.units.splice(firstNew)) this.closeUnit(unit);
      this.fdsByEvent.forEach((fds, index) => {
        for (const fd of fds?.splice(fdCounts[index] ?? 0) ?? []) fd.dispose();
      });
    };
    try {
      this.openAll(this.resizeSlots(), { groups, pages });
    } catch (error) {
      abandon();
      throw error;
    }
    const fresh = this.units.slice(firstNew) as Exclude<RingUnit, { kind: 'forward' }>[];
    try {
      for (const unit of fresh) for (const fd of unit.firstLive) fd.enable();
    } catch (error) {
      abandon();
      throw error;
    }
    for (const unit of old) for (const fd of unit.fds) fd.disable();
    for (const unit of old) {
      const copy = unit.kind === 'single'
        ? (() => { const r = unit.ring.copyQuiescent(); return unit.ring.toCopy(r.bytes, r.validBytes, r.written, 'paused'); })()
        : unit.pair.finalCopy();
      const successor = fresh.find((candidate) => candidate.group.eventIndices[0] === unit.group.eventIndices[0] &&
        (copy.cpu >= 0 ? liveRing(candidate).meta.cpu === copy.cpu : liveRing(candidate).meta.tid === copy.tid));
      const since = successor ? oldestSampleTime(peekUnwrapped(liveRing(successor))) : null;
      const kept = since === null ? copy : dropFrom(copy, since);
      this.retired.push({ ...kept, label: `${copy.label} (${this.sizes.pages} pages, retired)` });
    }
    for (const unit of old) {
      for (const fd of unit.fds) {
        const eventIndex = this.eventOfFd(fd);
        if (eventIndex >= 0) {
          (this.retiredIds[eventIndex] ??= []).push(fd.id());
          this.fdsByEvent[eventIndex] = this.fdsByEvent[eventIndex].filter((kept) => kept !== fd);
        }
      }
      this.units.splice(this.units.indexOf(unit), 1);
      this.closeUnit(unit);
    }
    this.sizes = { ...this.sizes, pages };
    this.warmer.schedule();
  }

  /** The slots a resize opens on: as at the start, but a launched command's threads are listed now (it exec'd). */
  private resizeSlots(): Slot[] {
    const target = this.options.target;
    const slots = this.slotsFor(target);
    if (target.kind !== 'launch' || this.childPidValue === undefined) return slots;
    // Threads and children the command made before the resize are followed from their own fds;
    // inherit only reaches what is created after an event is opened.
    const tids = threadsOf(this.childPidValue);
    return tids.length > 0 ? slots.map((slot) => ({ ...slot, tids })) : slots;
  }

  private eventOfFd(fd: PerfEventFd): number {
    return this.fdsByEvent.findIndex((fds) => fds?.includes(fd));
  }

  private closeUnit(unit: RingUnit): void {
    if (unit.kind === 'pair') unit.pair.dispose();
    else unit.ring.dispose();
    if (unit.kind !== 'forward') for (const fd of unit.fds) fd.dispose();
  }

  /** Event table for the decoder: user events first, the side-band dummy last. */
  eventDescriptions(): EventDescription[] {
    const descriptions: EventDescription[] = this.plan.events.map((event, index) => ({
      index,
      name: event.name,
      attr: this.attrs[index],
      ids: [...(this.fdsByEvent[index] ?? []).map((fd) => fd.id()), ...(this.retiredIds[index] ?? [])],
      tracepoint: event.tracepoint,
    }));
    const sidebandIndex = this.plan.events.length;
    if (this.attrs[sidebandIndex]) {
      descriptions.push({ index: sidebandIndex, name: 'sideband', attr: this.attrs[sidebandIndex], ids: (this.fdsByEvent[sidebandIndex] ?? []).map((fd) => fd.id()) });
    }
    return descriptions;
  }

  private checkOpen(): void {
    if (this.disposed) throw new Error('recorder used after dispose');
  }

  /** Pauses, copies and resumes every flight-recorder ring (or swaps gap-free pairs), and drains the side-band rings. */
  snapshot(): RecorderSnapshot {
    this.checkOpen();
    const takenAtMs = Date.now();
    const rings: RingCopy[] = [];
    const pauseWindowNs: number[] = [];
    for (const unit of this.units) {
      let result: RingSnapshot;
      if (unit.kind === 'single') result = unit.ring.snapshot();
      else if (unit.kind === 'pair') result = unit.pair.snapshot();
      else result = unit.ring.read();
      rings.push(result.copy);
      pauseWindowNs.push(result.pauseWindowNs);
    }
    for (const copy of this.retired) {
      rings.push(copy);
      pauseWindowNs.push(0);
    }
    // Gap-free copies tile time: each snapshot holds what happened since the previous one, so the
    // retired rings' last records are handed out once. Paused copies repeat the whole ring each
    // time, and keep the retired records until the grown rings hold the window by themselves.
    if (this.options.gapFree) this.retired = [];
    this.warmer.schedule();
    return { events: this.eventDescriptions(), rings, takenAtMs, pauseWindowNs, processes: this.synthesize(), limitations: this.limitations };
  }

  private synthesize(): ProcessSideband[] {
    if (this.options.synthesize === false) return [];
    const target = this.options.target;
    if (target.kind === 'launch') return this.childPidValue ? synthesizeSideband([this.childPidValue]) : [];
    if (target.kind === 'pid') return synthesizeSideband([target.pid]);
    return synthesizeSideband(allPids());
  }

  /** Stops writes into every flight-recorder ring (records arriving meanwhile are counted as lost). */
  pause(): void {
    this.checkOpen();
    for (const unit of this.units) {
      if (unit.kind === 'single') unit.ring.event.pauseOutput(true);
      else if (unit.kind === 'pair') unit.pair.pauseOutput(true);
    }
  }

  resume(): void {
    this.checkOpen();
    for (const unit of this.units) {
      if (unit.kind === 'single') unit.ring.event.pauseOutput(false);
      else if (unit.kind === 'pair') unit.pair.pauseOutput(false);
    }
  }

  ringStats(): RingStats[] {
    this.checkOpen();
    return this.units.map((unit) => unit.kind === 'pair' ? unit.pair.stats() : unit.ring.stats());
  }

  /** The rings themselves, for tests and the keeper (borrowing fds). */
  get backwardRings(): readonly BackwardRing[] {
    return this.units.flatMap((unit) => unit.kind === 'single' ? [unit.ring] : unit.kind === 'pair' ? unit.pair.rings : []);
  }

  /**
   * Per slot, the fd of event `eventIndex` on the slot's first thread in the ring that records now
   * (the live ring of a gap-free pair): what per-event controls (enable, disable, move a breakpoint)
   * act on. With events sharing a ring this is no longer the ring's owner fd.
   */
  primaryFds(eventIndex: number): PerfEventFd[] {
    this.checkOpen();
    return this.units.flatMap((unit) => {
      const primaries = unit.kind === 'single' ? unit.primaries : unit.kind === 'pair' ? unit.primaries.get(unit.pair.active) : undefined;
      const fd = primaries?.get(eventIndex);
      return fd ? [fd] : [];
    });
  }

  get forwardRings(): readonly ForwardRing[] {
    return this.units.flatMap((unit) => unit.kind === 'forward' ? [unit.ring] : []);
  }

  /** Closes every fd and mapping. Idempotent. A launched command that was never released is killed. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.warmer.dispose();
    if (this.drainTimer) clearInterval(this.drainTimer);
    if (this.growthTimer) clearInterval(this.growthTimer);
    this.retired = [];
    const errors: unknown[] = [];
    for (const unit of this.units) {
      try {
        if (unit.kind === 'pair') unit.pair.dispose();
        else unit.ring.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    // fds opened but never wrapped in a ring (failure mid-open) are closed here too; dispose is idempotent.
    for (const fds of this.fdsByEvent) for (const fd of fds ?? []) fd.dispose();
    this.units.length = 0;
    if (this.child) {
      if (!this.released && this.child.exitCode === null) this.child.kill('SIGKILL');
      const go = this.child.stdio[3];
      if (go && 'destroy' in go) (go as { destroy(): void }).destroy();
    }
    if (errors.length) throw errors[0];
  }
}
