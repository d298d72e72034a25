// A snapshot's decoded rings → the snapshot: the pieces every way of decoding shares (the
// in-thread decode, its scatter plan and the worker pool): the order rings are decoded in (side-band
// rings first: they give the flight-recorder rings their time base), the span check, the time axis,
// and the assembly of merged rows, coverage and anomalies into a DecodedSnapshot.

import { ColumnSet, type SetSource } from './column-set';
import { decodeRingRows, largestTime, smallestTime, timeNs, type EventTables, type RingDecode, type RingRows, type TimeMark } from './decode-ring';
import { addToRange, mergedCopy, mergedInPlace } from './merge';
import { validEnd } from './walk';
import type { DecodedSnapshot, RingCoverage } from './types';
import type { EventDescription, RawSnapshot, RingCopy } from '../abi/snapshot';
import type { ColumnArena } from './arena';

/** Everything decodeSnapshot needs; a RawSnapshot is accepted as is. */
export interface SnapshotInput {
  readonly events: readonly EventDescription[];
  readonly rings: readonly RingCopy[];
}

/**
 * The order the rings are decoded in: side-band (forward) rings first, since they are small and
 * usually hold the snapshot's oldest time, which the flight-recorder rings then base their times on.
 */
function decodeOrder(rings: readonly RingCopy[]): number[] {
  const backward = (r: number): number => Number(rings[r].direction === 'backward');
  return rings.map((_, r) => r).sort((a, b) => backward(a) - backward(b) || a - b);
}

/** Lowers `known` to `time` when `time` is earlier (hi = -1: none). */
export function lowerTimeMark(known: TimeMark, time: TimeMark): void {
  if (time.hi < 0) return;
  if (known.hi < 0 || time.hi < known.hi || (time.hi === known.hi && time.lo < known.lo)) {
    known.hi = time.hi;
    known.lo = time.lo;
  }
}

/**
 * Decodes every ring into rows of its own (side-band rings first, each later ring basing its times
 * on the smallest decoded so far), then merges them: the path for one flight-recorder ring, for
 * `scatter: false`, and for snapshots the scatter plan leaves (times spanning 2^53 ns or more).
 */
export function decodeRingByRing(raw: RawSnapshot | SnapshotInput, tables: EventTables, sets: SetSource, arena?: ColumnArena): DecodedSnapshot {
  const rings = raw.rings;
  const decodes = new Array<RingDecode>(rings.length);
  // The smallest time decoded so far: flight-recorder rings base their times on it when they can.
  const known: TimeMark = { hi: -1, lo: 0 };
  for (const r of decodeOrder(rings)) {
    decodes[r] = decodeRingRows(rings[r], r, tables, known, sets);
    lowerTimeMark(known, smallestTime(rings[r], decodes[r].state));
  }
  return assembleSnapshot(raw, decodes, sets, arena);
}

/**
 * Decodes the side-band (forward) rings here, before the rest (small; they give the flight-recorder
 * rings their time base), as decodeSnapshot does, for the scatter paths (decodeScattered,
 * DecodePool): their decodes (a sparse array by ring number), the smallest time they hold, and the
 * flight-recorder rings' numbers in decode order.
 */
export function sideBandFirst(
  rings: readonly RingCopy[],
  tables: EventTables,
  sets: SetSource,
): { decodes: RingDecode[]; known: TimeMark; backward: number[] } {
  const decodes = new Array<RingDecode>(rings.length);
  const known: TimeMark = { hi: -1, lo: 0 };
  const order = decodeOrder(rings);
  for (const r of order) {
    if (rings[r].direction === 'backward') continue;
    decodes[r] = decodeRingRows(rings[r], r, tables, known, sets);
    lowerTimeMark(known, smallestTime(rings[r], decodes[r].state));
  }
  return { decodes, known, backward: order.filter((r) => rings[r].direction === 'backward') };
}

/**
 * Indexes of the flight-recorder (backward) rings whose copies hold at least a record header, by
 * the bytes the copy really has (validEnd), not the count it claims: whether there is anything to
 * merge, for this thread's scatter path and for the pool alike.
 */
export function flightRecordersWithRecords(rings: readonly RingCopy[]): number[] {
  const found: number[] = [];
  for (let r = 0; r < rings.length; r++) if (rings[r].direction === 'backward' && validEnd(rings[r]) >= 8) found.push(r);
  return found;
}

/** Largest integer a double holds exactly. */
const MAX_EXACT = 2 ** 53;

/** True when every decoded time lies within 2^53 ns of the snapshot's smallest (then every value is exact whatever base each ring chose). */
export function exactSpan(rings: readonly RingCopy[], decodes: readonly RingDecode[]): boolean {
  let smallest: bigint | null = null;
  let largest: bigint | null = null;
  decodes.forEach((decode, r) => {
    if (decode.state.baseHi < 0) return;
    const low = timeOf(smallestTime(rings[r], decode.state));
    const high = timeOf(largestTime(rings[r], decode.state));
    if (smallest === null || low < smallest) smallest = low;
    if (largest === null || high > largest) largest = high;
  });
  return smallest === null || largest === null || Number(largest - smallest) < MAX_EXACT;
}

const timeOf = (mark: TimeMark): bigint => timeNs(mark.hi, mark.lo);

/** The snapshot's time origin (its smallest time) and each ring's shift: what moves its relative times onto the origin. */
export function timeAxis(rings: readonly RingCopy[], decodes: readonly RingDecode[]): { timeOriginNs: bigint; shift: Float64Array } {
  let origin: bigint | null = null;
  for (let r = 0; r < rings.length; r++) {
    if (decodes[r].state.baseHi < 0) continue;
    const oldest = timeOf(smallestTime(rings[r], decodes[r].state));
    if (origin === null || oldest < origin) origin = oldest;
  }
  const timeOriginNs = origin ?? 0n;
  const shift = new Float64Array(rings.length);
  for (let r = 0; r < rings.length; r++) {
    const state = decodes[r].state;
    if (state.baseHi >= 0) shift[r] = Number(timeNs(state.baseHi, state.baseLo) - timeOriginNs);
  }
  return { timeOriginNs, shift };
}

/**
 * The decoded rings (`decodes[r]` for ring r, from decodeRingRows on any thread) as one snapshot:
 * times onto the origin, rows merged by time, coverage and anomalies. Sets the rings' rows lived
 * in and the result does not go back to `sets`; the result's set is lent through `arena`.
 * `merged`: the rows already merged elsewhere (in a set taken from `sets`, with timeAxis's shifts),
 * when two or more rings hold rows (a parallel merge).
 */
export function assembleSnapshot(
  raw: RawSnapshot | SnapshotInput,
  decodes: readonly RingDecode[],
  sets: SetSource,
  arena?: ColumnArena,
  merged?: RingRows,
): DecodedSnapshot {
  const { events, rings } = raw;
  const sources: RingRows[] = decodes.map((decode) => decode.rows);
  let total = 0;
  let nonEmpty = 0;
  for (const rows of sources) {
    total += rows.count;
    if (rows.count > 0) nonEmpty++;
  }
  const anomalies: DecodedSnapshot['anomalies'][number][] = [];
  for (const decode of decodes) for (const anomaly of decode.anomalies) anomalies.push(anomaly);
  const { timeOriginNs, shift } = timeAxis(rings, decodes);

  let result: RingRows;
  if (merged) {
    result = merged;
  } else if (nonEmpty <= 1) {
    const r = sources.findIndex((rows) => rows.count > 0);
    if (r < 0) {
      result = { set: new ColumnSet(0), first: 0, count: 0 };
    } else {
      result = sources[r];
      if (shift[r] !== 0) addToRange(result.set.time, result.first, result.first + result.count, shift[r]);
    }
  } else {
    result = mergedInPlace(sources, shift, total) ?? { set: mergedCopy(sources, shift, total, sets), first: 0, count: total };
  }
  // Every set the decoder took and did not hand out goes back to the arena.
  for (const rows of sources) if (rows.set !== result.set) sets.give(rows.set);
  arena?.endSnapshot(result.count > 0 ? result.set : null);
  const columns = result.set.toColumns(timeOriginNs, result.first, result.count);

  const coverage: RingCoverage[] = rings.map((ring, r) => {
    const state = decodes[r].state;
    // A backward ring overwrites its oldest records; a forward (side-band) ring never does: the
    // kernel stops and reports LOST instead, and what earlier snapshots consumed is not overwritten.
    const overwritten = ring.direction === 'forward' ? (ring.droppedBytes ?? 0n) : ring.bytesWritten - BigInt(state.offset);
    const timed = state.baseHi >= 0;
    return {
      ringId: ring.ringId,
      label: ring.label,
      path: ring.path,
      dataSize: ring.dataSize,
      bytesWritten: ring.bytesWritten,
      bytesOverwritten: overwritten > 0n ? overwritten : 0n,
      recordsRetained: sources[r].count,
      oldestTimeNs: timed ? timeOf(smallestTime(ring, state)) : null,
      newestTimeNs: timed ? timeOf(largestTime(ring, state)) : null,
      lostRecords: BigInt(state.lost),
      ...(ring.lostSinceOpen !== undefined ? { lostSinceOpen: ring.lostSinceOpen } : {}),
      ...(ring.unspooled ? { unspooled: ring.unspooled } : {}),
      anomalies: state.anomalies,
    };
  });

  return { events, rings, columns, coverage, anomalies };
}
