// What a snapshot lost, in words, from its coverage: records the flight recorders overwrote (with
// how much of how long was kept, and the ring size that keeps it all), side-band dropped or never
// spooled, and records the kernel could not write. One home for these sentences: the CLI's summary
// (its first line names the overwrite), the timeline page's and the panel's snapshot notes.

import type { RawSnapshot } from '../abi/snapshot';
import { formatBytes, powerOfTwoAtLeast } from '../abi/units';
import type { DecodedSnapshot, RingCoverage } from './types';

export interface LossReport {
  /** The flight recorders overwrote the oldest records: how much was kept of how long; undefined when they overwrote nothing. */
  readonly overwritten?: string;
  /** Every loss, one line each, `overwritten` first: what a snapshot's limitations add. */
  readonly notes: readonly string[];
}

export interface LossContext {
  /** Bytes per page, to name the ring size that would have kept everything. */
  readonly pageBytes: number;
  /** How the user sets the ring size where they read this (`--pages`, or a setting's name). */
  readonly pagesOption: string;
}

type Timing = Pick<RawSnapshot, 'takenAtMs' | 'recordingStartedAtMs' | 'gapFreeSinceMs' | 'retiredBytesLeftOut'>;

const count = (n: number | bigint) => n.toLocaleString('en-US');

/** Seconds with two significant decimals below 10 s (0.25 s, 1.3 s, 41 s). */
function seconds(value: number): string {
  if (value < 0.095) return `${(value * 1000).toFixed(0)} ms`;
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)} s`;
}

/**
 * What `decoded` lost. `timing` is the raw snapshot's: the start of what its copies count as written
 * (the recording's start, or the last swap of gap-free copies), so the overwrite can say of how long.
 */
export function describeLosses(decoded: DecodedSnapshot, timing: Timing, context: LossContext): LossReport {
  const notes: string[] = [];
  const overwritten = overwriteNote(decoded, timing, context);
  if (overwritten) notes.push(overwritten);
  const lost: string[] = [];
  let lostTotal = 0n;
  for (const [r, ring] of decoded.coverage.entries()) {
    const direction = decoded.rings[r]?.direction;
    if (direction === 'forward' && ring.bytesOverwritten > 0n) {
      notes.push(
        `side-band ${ring.label}: the oldest ${formatBytes(ring.bytesOverwritten)} of COMM/MMAP/FORK/EXIT records were dropped ` +
          'to keep the side-band store bounded',
      );
    }
    if (ring.unspooled && ring.unspooled.bytes > 0n) {
      const { records, bytes, error, file } = ring.unspooled;
      notes.push(
        `side-band ${ring.label}: lost ${count(records)} records (${formatBytes(bytes)}): the keeper could not write them ` +
          `to its spool ${file} (${error}); free space there, or point XDG_RUNTIME_DIR at a larger file system`,
      );
    }
    const kernelLost = ring.lostSinceOpen ?? ring.lostRecords;
    if (kernelLost > 0n) {
      lost.push(`${ring.label} ${count(kernelLost)}`);
      lostTotal += kernelLost;
    }
  }
  if (lostTotal > 0n) {
    notes.push(`lost ${count(lostTotal)} records the kernel could not write (a ring paused for a copy, or full): ${lost.join(', ')}`);
  }
  return { ...(overwritten ? { overwritten } : {}), notes };
}

/**
 * Records the flight recorders would hold had they kept everything written: what they kept, plus the bytes they
 * overwrote at the size their kept records have on average, pooled over every backward ring. Pooled, not per ring: a
 * ring retired when the rings grew is cut where its successor took over, and when the swap outlasted it the cut leaves
 * none of its records, although everything it wrote before the successor started was overwritten (its bytesWritten,
 * from data_head, less the cut: those records are in the successor). Per ring, that ring counted for nothing and a run
 * that lost its start read "kept 10,000 of about 10,000". Null when no ring kept a byte (no size to convert with).
 */
function estimatedRecords(backward: readonly RingCopyCoverage[], leftOut: bigint): number | null {
  let keptRecords = 0;
  let keptBytes = 0n;
  // What retired rings the snapshot no longer holds wrote is overwritten as far as it goes.
  let overwritten = leftOut;
  for (const ring of backward) {
    keptRecords += ring.recordsRetained;
    keptBytes += ring.bytesWritten - ring.bytesOverwritten > 0n ? ring.bytesWritten - ring.bytesOverwritten : 0n;
    overwritten += ring.bytesOverwritten;
  }
  if (keptBytes <= 0n || keptRecords === 0) return null;
  return keptRecords + Math.round((Number(overwritten) * keptRecords) / Number(keptBytes));
}

type RingCopyCoverage = Pick<RingCoverage, 'recordsRetained' | 'bytesWritten' | 'bytesOverwritten'>;

function overwriteNote(decoded: DecodedSnapshot, timing: Timing, context: LossContext): string | undefined {
  const backward = decoded.coverage.filter((_, r) => decoded.rings[r]?.direction === 'backward');
  const overwrote = backward.filter((ring) => ring.bytesOverwritten > 0n);
  const leftOut = timing.retiredBytesLeftOut ?? 0n;
  if (overwrote.length === 0 && leftOut === 0n) return undefined;
  const kept = decoded.coverage.reduce((sum, ring) => sum + ring.recordsRetained, 0);
  const sideband = kept - backward.reduce((sum, ring) => sum + ring.recordsRetained, 0);
  const flightRecords = estimatedRecords(backward, leftOut);
  // Complete from the newest "oldest record" of the rings that overwrote: before it, some ring's records are gone. A ring
  // that overwrote everything it held (a retired ring cut where its successor took over) leaves the others' oldest.
  const newestOldest = (rings: readonly RingCoverage[]) =>
    rings.reduce<bigint | null>((max, ring) => (ring.oldestTimeNs !== null && (max === null || ring.oldestTimeNs > max) ? ring.oldestTimeNs : max), null);
  const completeFrom = newestOldest(overwrote) ?? newestOldest(backward);
  const newest = backward.reduce<bigint | null>(
    (max, ring) => (ring.newestTimeNs !== null && (max === null || ring.newestTimeNs > max) ? ring.newestTimeNs : max),
    null,
  );
  const keptSec = completeFrom !== null && newest !== null ? Number(newest - completeFrom) / 1e9 : null;
  // What the overwritten copies count as written began at the recording's start, or for gap-free copies at the last swap.
  // Retired rings left out held paused copies since the start (a keeper's, or a recording's once its grown rings wrapped).
  const starts = [
    ...overwrote.map((ring) => (ring.path === 'gap-free' ? timing.gapFreeSinceMs : timing.recordingStartedAtMs)),
    ...(leftOut > 0n ? [timing.recordingStartedAtMs] : []),
  ];
  const recordedSec = starts.every((start) => start !== undefined) ? (timing.takenAtMs - Math.min(...(starts as number[]))) / 1000 : null;
  const span =
    keptSec === null
      ? ''
      : recordedSec === null
        ? `the last ${seconds(keptSec)}`
        : `the last ${seconds(keptSec)} of ${seconds(Math.max(recordedSec, keptSec))}`;
  // Per ring: its own bytes, and its share of what retired rings left out wrote before it.
  const leftOutShare = backward.length > 0 ? leftOut / BigInt(backward.length) : leftOut;
  const written = backward.reduce((max, ring) => (ring.bytesWritten > max ? ring.bytesWritten : max), 0n) + leftOutShare;
  // Twice what this run wrote: the same work writes more or less from run to run (callchain depths, kernel samples
  // under load), and a size just above this run's bytes overwrote again on the next (seen with both cores busy).
  const pages = powerOfTwoAtLeast(Math.ceil((2 * Number(written)) / context.pageBytes));
  // No kept record to tell the size of those overwritten: how many there were is not estimated.
  const of = flightRecords === null ? `${count(kept)} records` : `${count(kept)} of about ${count(Math.max(flightRecords + sideband, kept))} records`;
  return (
    `kept ${span ? `${span}: ` : ''}${of}; ` + `the rings overwrote the rest (${context.pagesOption} ${pages} keeps it all, if the locked-memory budget allows)`
  );
}
