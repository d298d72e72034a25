// Rings that grow (--window): measuring how much history each ring keeps, deciding the size that
// keeps the window within the locked-memory budget, and cutting a retired ring's copy where its
// successor takes over, so nothing is missing or repeated across a resize.

import type { ResolvedEvent, RingCopy } from '../abi/snapshot';
import { RecordType } from '../abi/uapi';
import type { PerfAccess } from '../sys/access';
import type { RecorderOptions } from './recorder-options';
import type { BackwardRing } from './backward-ring';
import { kib, ringCounts, type RingSizes } from './ring-sizing';

/** How often --window compares each ring's coverage with the window. */
export const GROWTH_CHECK_MS = 250;

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
 * The largest power-of-two page count the growable rings may have while the current set is still
 * mapped: `current` is the growable rings' size, `fixedPages` that of the rings a resize leaves alone, `heldPages`
 * what retired rings still mapped take (header pages included).
 */
export function growthCeiling(
  options: RecorderOptions,
  events: readonly ResolvedEvent[],
  access: PerfAccess,
  current: RingSizes,
  fixedPages: number,
  heldPages = 0,
): number {
  const budget = access.lockedPagesBudget;
  if (budget === null) return Number.MAX_SAFE_INTEGER;
  const { slots, flightRings, growableRings, sidebandRings } = ringCounts(options, events);
  const perSlot = (flightRings - growableRings) * (fixedPages + 1) + growableRings * (current.pages + 1) + sidebandRings * (current.sidebandPages + 1);
  const mapped = slots * perSlot + heldPages;
  const free = budget - mapped;
  let pages = 0;
  while (growableRings > 0 && slots * growableRings * (pages * 2 + 1) <= free) pages = pages === 0 ? 1 : pages * 2;
  return pages;
}

/** What a growth check measured: whether every growable ring has wrapped (its whole size is history). */
export interface GrowthCheck {
  readonly allWrapped: boolean;
}

/**
 * The growth check (every GROWTH_CHECK_MS with --window): a ring's coverage is its size over the
 * rate it was written at since the previous check. The slowest-covering ring decides: below the
 * window, the growable rings are reopened at pagesForWindow of its rate, capped by what the
 * locked-memory budget leaves while old and new rings are both mapped. Every resize, and the reason
 * growth stops, is written in `notes`.
 */
export class RingGrowth {
  /** When and why the rings were resized, or why they stopped growing. */
  readonly notes: string[] = [];
  private stopped = false;
  /** bytesWritten of each growable ring at the previous check. */
  private readonly lastWritten = new Map<BackwardRing, { written: bigint; atMs: number }>();
  /** When the recording opened (performance.now ms): notes say how long after it they happened. */
  private readonly openedAtMs = performance.now();

  constructor(
    private readonly windowSec: number,
    private readonly access: PerfAccess,
  ) {}

  /**
   * Measures the growable rings that record now; when one keeps less than the window, calls
   * `grow` with the new page count (it throws when the new rings cannot be opened).
   */
  check(rings: readonly BackwardRing[], currentPages: number, ceiling: () => number, grow: (pages: number) => void): GrowthCheck {
    // Once growth stopped nothing is measured any more, and retired copies stay in the snapshots.
    if (this.stopped) return { allWrapped: false };
    const windowSec = this.windowSec;
    const now = performance.now();
    let worst: { coverageSec: number; bytesPerSec: number; label: string } | null = null;
    let allWrapped = true;
    const seen = new Set<BackwardRing>();
    for (const ring of rings) {
      seen.add(ring);
      const written = ring.bytesWritten();
      if (written < BigInt(ring.dataSize)) allWrapped = false;
      const last = this.lastWritten.get(ring);
      this.lastWritten.set(ring, { written, atMs: now });
      if (!last || written <= last.written || now <= last.atMs) continue;
      const bytesPerSec = Number(written - last.written) / ((now - last.atMs) / 1000);
      const coverageSec = ring.dataSize / bytesPerSec;
      if (coverageSec < windowSec && (!worst || coverageSec < worst.coverageSec)) {
        worst = { coverageSec, bytesPerSec, label: ring.meta.label };
      }
    }
    for (const ring of this.lastWritten.keys()) if (!seen.has(ring)) this.lastWritten.delete(ring);
    if (!worst) return { allWrapped };
    const current = currentPages;
    const wanted = pagesForWindow(worst.bytesPerSec, windowSec, this.access.pageSize, current * 2);
    const limit = ceiling();
    const rate = `${Math.round(worst.bytesPerSec / 1024)} KiB/s`;
    const kept = `${worst.coverageSec.toFixed(3)} s of history (written at ${rate})`;
    const why = `${worst.label} kept ${kept}, less than the ${windowSec} s window`;
    // Seconds since the recording opened, not a clock time: the timeline labels a note by its text before the first ':'.
    const at = `${((performance.now() - this.openedAtMs) / 1000).toFixed(1)} s after the recording started`;
    if (limit <= current) {
      this.stopped = true;
      const budget = kib(this.access.lockedPagesBudget ?? 0, this.access);
      this.notes.push(
        `rings stay at ${current} pages (${at}): ${why}, and the locked-memory budget (${budget}) ` +
          'leaves no room for larger ones while both sets are mapped',
      );
      return { allWrapped };
    }
    const pages = Math.min(wanted, limit);
    const capped = pages < wanted ? `; the locked-memory budget stopped growth at ${pages} pages (the window needs ${wanted})` : '';
    const started = performance.now();
    try {
      grow(pages);
    } catch (error) {
      this.stopped = true;
      const cause = error instanceof Error ? error.message : String(error);
      this.notes.push(`rings stay at ${current} pages (${at}): ${why}, but opening ${pages}-page rings failed: ${cause}`);
      return { allWrapped };
    }
    const took = `${(performance.now() - started).toFixed(1)} ms`;
    this.notes.push(`rings resized from ${current} to ${pages} pages in ${took} (${at}): ${why}${capped}`);
    if (pages < wanted) this.stopped = true;
    return { allWrapped };
  }
}

/**
 * A copy of a ring that is being written but has not wrapped: the kernel writes new records in
 * front of data_head, so everything from the head read here to the end of what was written stays
 * as it is while it is copied. Null when the ring wrapped (then nothing is stable without a pause).
 */
export function peekUnwrapped(ring: BackwardRing): RingCopy | null {
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
export function oldestSampleTime(copy: RingCopy | null): bigint | null {
  if (!copy) return null;
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
  let oldest: bigint | null = null;
  for (let offset = 0; offset + 8 <= copy.validBytes;) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > copy.validBytes) break;
    if (view.getUint32(offset, true) === RecordType.SAMPLE && size >= SAMPLE_TIME_OFFSET + 8) {
      oldest = view.getBigUint64(offset + SAMPLE_TIME_OFFSET, true);
    }
    offset += size;
  }
  return oldest;
}

/** Time of the newest sample of a backward ring copy (the first one in memory order), or null. */
export function newestSampleTime(copy: RingCopy | null): bigint | null {
  if (!copy) return null;
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
  for (let offset = 0; offset + 8 <= copy.validBytes;) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > copy.validBytes) break;
    if (view.getUint32(offset, true) === RecordType.SAMPLE && size >= SAMPLE_TIME_OFFSET + 8) return view.getBigUint64(offset + SAMPLE_TIME_OFFSET, true);
    offset += size;
  }
  return null;
}

/**
 * A backward ring copy without its newest records from time `since` on (what the successor ring
 * also holds). The copy's data size shrinks with it, so a cut oldest record still reads as the
 * ordinary cut end of a full flight recorder.
 */
export function dropFrom(copy: RingCopy, since: bigint): RingCopy {
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
