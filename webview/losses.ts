// What the rings did not keep, placed on the lanes where it happened: each LOST / LOST_SAMPLES record as a span from
// its ring's previous record to itself (the records went missing in between), and each ring's overwritten part as a
// span ending at its oldest surviving record (the flight recorder wrote over what came before). Pure: the store's
// columns and snapshot facts in, marks on the store's time axis out; layout.ts finds each mark's lane by its row.

import type { CoverageFact, LossInfo } from '../shared/protocol';
import { formatDuration } from './time-format';
import { formatBytes } from '../native/abi/units';

export interface LossMark {
  /** Rebased ns; start may be -Infinity (the overwritten part of a recording's first snapshot has no known start). */
  readonly start: number;
  readonly end: number;
  /** The store row that places the mark on a lane: the LOST record, or the ring's oldest surviving record. */
  readonly row: number;
  /** Words for the tooltip: what was lost, where, and why. */
  readonly lines: readonly string[];
  readonly overwritten: boolean;
}

export interface LossSource {
  readonly originNs: bigint | null;
  readonly time: Float64Array;
  readonly snapshots: readonly {
    readonly index: number;
    readonly name: string;
    readonly coverage: readonly CoverageFact[];
    readonly losses: readonly LossInfo[];
    readonly minTime: number;
    readonly maxTime: number;
  }[];
  rangesOf(snapshotIndex: number): [number, number][];
  globalRowOf(snapshotIndex: number, localRow: number): number;
}

const WHY_LOST = 'The kernel could not write them: the ring was paused while a snapshot was copied, or it was full.';
const WHY_LOST_SAMPLES = 'The kernel dropped these samples before they reached the ring (PERF_RECORD_LOST_SAMPLES).';
const WHY_OVERWRITTEN = 'The flight recorder overwrote its oldest records to keep the newest.';

const plural = (n: string | number, word: string) => `${n} ${word}${String(n) === '1' ? '' : 's'}`;

/** The LOST records and overwritten parts of one snapshot as marks (call once its rows have all arrived). */
export function snapshotLossMarks(src: LossSource, snapshotIndex: number): LossMark[] {
  const origin = src.originNs;
  const snap = src.snapshots[snapshotIndex];
  if (origin === null || !snap) return [];
  const rebase = (ns: string) => Number(BigInt(ns) - origin);
  const marks: LossMark[] = [];
  for (const loss of snap.losses) {
    const row = src.globalRowOf(snapshotIndex, loss.row);
    if (row < 0) continue;
    const end = src.time[row];
    if (end !== end) continue; // a record without a time cannot be placed
    const start = loss.sinceNs === null ? end : Math.min(end, rebase(loss.sinceNs));
    const what = loss.kind === 'LOST' ? plural(loss.lost, 'record') : plural(loss.lost, 'sample');
    marks.push({
      start,
      end,
      row,
      overwritten: false,
      lines: [
        `${what} lost in ring ${loss.ring} (${loss.kind})`,
        loss.sinceNs === null ? 'before its first record kept' : `in the ${formatDuration(end - start)} before this record`,
        loss.kind === 'LOST' ? WHY_LOST : WHY_LOST_SAMPLES,
      ],
    });
  }
  // The overwritten part ends at the ring's oldest surviving record; the previous snapshot's end (or nothing) starts it.
  const previous = snapshotIndex > 0 ? src.snapshots[snapshotIndex - 1].maxTime : -Infinity;
  const wanted = new Map<number, CoverageFact[]>();
  for (const c of snap.coverage) {
    if (BigInt(c.bytesOverwritten) <= 0n || c.oldestTimeNs === null) continue;
    const t = rebase(c.oldestTimeNs);
    const list = wanted.get(t);
    if (list) list.push(c);
    else wanted.set(t, [c]);
  }
  if (wanted.size === 0) return marks;
  let lo = Infinity;
  let hi = -Infinity;
  for (const t of wanted.keys()) {
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  const time = src.time;
  for (const [first, end] of src.rangesOf(snapshotIndex)) {
    for (let row = first; row < end && wanted.size > 0; row++) {
      const t = time[row];
      if (!(t >= lo && t <= hi)) continue;
      const facts = wanted.get(t);
      if (!facts) continue;
      wanted.delete(t);
      for (const c of facts) {
        // Bytes, and about how many records at the ring's average record size.
        const retainedBytes = BigInt(c.bytesWritten) - BigInt(c.bytesOverwritten);
        const perRecord = c.recordsRetained > 0 ? Number(retainedBytes) / c.recordsRetained : 0;
        const records = perRecord > 0 ? Math.round(Number(c.bytesOverwritten) / perRecord).toLocaleString('en-US') : '';
        const about = records ? `about ${plural(records, 'record')}, ` : '';
        marks.push({
          start: Math.min(previous, t),
          end: t,
          row,
          overwritten: true,
          lines: [
            `${about}${formatBytes(BigInt(c.bytesOverwritten))} overwritten in ring ${c.label}`,
            `before its oldest record kept (${snap.name})`,
            WHY_OVERWRITTEN,
          ],
        });
      }
    }
  }
  return marks;
}

/** The mark under time `t` (with `slack` ns either side) among one lane's marks, the narrowest first; or null. */
export function markAt(marks: readonly LossMark[], t: number, slack: number): LossMark | null {
  let best: LossMark | null = null;
  for (const m of marks) {
    if (t < m.start - slack || t > m.end + slack) continue;
    if (!best || m.end - m.start < best.end - best.start) best = m;
  }
  return best;
}
