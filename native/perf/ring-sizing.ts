// How large a recording's rings are: the default size, how many rings a recording maps, and the
// sizes that fit the locked memory perf lets this user pin (refused or shrunk up front).

import type { ResolvedEvent } from '../abi/snapshot';
import { MLOCK_SYSCTL, AccessError, type PerfAccess } from '../sys/access';
import { onlineCpus, threadsOf } from './procfs';
import { followsNewThreads } from './recorder-attrs';
import type { RecorderOptions } from './recorder-options';
import { isGrowable, ringGroupsFor, type RingGroup } from './ring-groups';

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
export const DEFAULT_SIDEBAND_PAGES = 16;

export interface RingSizes {
  readonly pages: number;
  readonly sidebandPages: number;
  /** Set when the rings were shrunk to fit the locked-memory budget. */
  readonly note: string | null;
}

export function kib(pages: number, access: PerfAccess): string {
  return `${(pages * access.pageSize) / 1024} KiB`;
}

/**
 * How many rings a recording maps: slots (CPUs, or threads for per-thread breakpoints), flight-recorder
 * rings per slot (one per ring group, two for a gap-free pair), of which `growableRings` are reopened
 * when the rings grow (all but the trigger events' own rings), and side-band rings per slot.
 */
export interface RingCounts {
  readonly slots: number;
  readonly flightRings: number;
  readonly growableRings: number;
  readonly sidebandRings: number;
}

export function ringCounts(options: RecorderOptions, events: readonly ResolvedEvent[]): RingCounts {
  const ownRing = new Set(options.ownRing);
  const groups = ringGroupsFor(events, options.gapFree ?? false, ownRing);
  const target = options.target;
  // One ring per ring group per CPU (events and an attached process's threads share them), plus a side-band ring.
  const slots =
    target.kind === 'cpus'
      ? (target.cpus ?? onlineCpus()).length
      : target.kind === 'pid' && !followsNewThreads(target, events)
        ? threadsOf(target.pid).length
        : onlineCpus().length;
  const ringsOf = (group: RingGroup) => (group.gapFree ? 2 : 1);
  const flightRings = groups.reduce((count, group) => count + ringsOf(group), 0);
  const growableRings = groups.filter((group) => isGrowable(group, ownRing)).reduce((count, group) => count + ringsOf(group), 0);
  return { slots, flightRings, growableRings, sidebandRings: options.sideband === false ? 0 : 1 };
}

/**
 * Ring sizes that fit the locked memory perf_mmap() lets this user pin: every ring costs its data
 * pages plus one header page. The count of rings is known before any is mapped (one per ring group per
 * thread or CPU, two for a gap-free pair, plus one side-band ring), so a ring set that cannot fit
 * is refused or shrunk up front instead of failing halfway through with a bare EPERM.
 */
export function ringSizesFor(options: RecorderOptions, events: readonly ResolvedEvent[], access: PerfAccess): RingSizes {
  const groups = ringGroupsFor(events, options.gapFree ?? false, new Set(options.ownRing));
  const asked = options.pages ?? defaultRingPages(Math.max(...groups.map((group) => group.eventIndices.length)));
  const budget = access.lockedPagesBudget;
  if (budget === null) return { pages: asked, sidebandPages: options.sidebandPages ?? DEFAULT_SIDEBAND_PAGES, note: null };
  const { slots, flightRings, sidebandRings } = ringCounts(options, events);
  const cost = (pages: number, sidebandPages: number) => slots * (flightRings * (pages + 1) + sidebandRings * (sidebandPages + 1));
  // A side-band ring larger than the default is slack, not a requirement, and under a budget it is
  // not taken: perf charges rings to the user's locked_vm, which every process of that user shares
  // and none can read, so pages this computation thinks are free may not be (mmap then fails with EPERM).
  const askedSideband = Math.min(options.sidebandPages ?? DEFAULT_SIDEBAND_PAGES, DEFAULT_SIDEBAND_PAGES);
  if (cost(asked, askedSideband) <= budget) return { pages: asked, sidebandPages: askedSideband, note: null };
  const limits =
    `${MLOCK_SYSCTL} = ${access.perfMlockKb ?? 'unknown'} KiB per CPU x ${access.onlineCpus} CPUs for your user, ` +
    `plus RLIMIT_MEMLOCK (ulimit -l) = ${(access.memlockLimitBytes ?? 0) / 1024} KiB for this process`;
  const neededKb = Math.ceil((cost(asked, askedSideband) * access.pageSize) / 1024 / access.onlineCpus);
  const fix = `raise it with \`sudo sysctl ${MLOCK_SYSCTL}=${neededKb}\` or \`ulimit -l\`, or grant CAP_IPC_LOCK`;
  let pages = asked;
  let sidebandPages = askedSideband;
  while (cost(pages, sidebandPages) > budget && (pages > 1 || sidebandPages > 1)) {
    if (pages >= sidebandPages && pages > 1) pages /= 2;
    else sidebandPages /= 2;
  }
  const rings =
    `${slots * flightRings} flight-recorder ring(s) of ${asked} pages and ` + `${slots * sidebandRings} side-band ring(s) of ${askedSideband} pages`;
  if (options.pages !== undefined || cost(pages, sidebandPages) > budget) {
    const fits = cost(pages, sidebandPages) <= budget ? `; --pages ${pages} fits` : '';
    throw new AccessError(
      `${rings} need ${kib(cost(asked, askedSideband), access)} of locked memory, ` +
        `more than the ${kib(budget, access)} perf lets this user lock (${limits})`,
      `${fix}${fits}`,
    );
  }
  return {
    pages,
    sidebandPages,
    note: `rings are ${pages} pages (asked ${asked}) to fit the ${kib(budget, access)} of locked memory perf lets this user lock ` + `(${limits}); ${fix}`,
  };
}
