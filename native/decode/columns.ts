// A snapshot's rings → one set of typed-array columns, oldest first, merged across rings by time,
// with each ring's coverage facts and the anomalies found. With two or more flight-recorder rings,
// they are keyed and each row is decoded once, straight into its merged place (scatter.ts, on this
// thread; DecodePool does the same on several). Otherwise, or with `scatter: false`, each ring is
// decoded on its own (decode-ring.ts), then the rings' rows are put on one time axis and merged
// (merge.ts). Both give the same columns byte for byte.
//
// Times: each ring's rows hold times relative to that ring's own base. The origin is the smallest
// time seen; a ring whose base differs is shifted onto it while merging (or in one pass when it is
// the only ring with rows). Every value stays an exact integer while the snapshot spans less than
// 2^53 ns (104 days), so the columns do not depend on which base each ring chose.

import { ColumnSet, type SetSource } from './column-set';
import {
  FRESH_SETS, decodeRingRows, eventTables, largestTime, smallestTime, timeNs,
  type EventTables, type RingDecode, type RingRows, type TimeMark,
} from './decode-ring';
import { addToRange, mergedCopy, mergedInPlace } from './merge';
import { UNPLACED, keyRing, placedIn, scatterSlice, type ScatterSource } from './scatter';
import type { KeyScratch } from './key-scratch';
import { validEnd } from './walk';
import { uniformRing } from './uniform';
import type { DecodedSnapshot, RingCoverage } from './types';
import type { EventDescription, RawSnapshot, RingCopy } from '../abi/snapshot';
import type { ColumnArena } from './arena';
import { commonSnapshotMemory, takeMergedSet } from './wasm/snapshot-memory';
import { keyRunIn } from './wasm/key-run';
import { placeOtherRecords, placeSideBandRows, planScatter, scatterPlanned } from './wasm/memory-scatter';

/** Everything decodeSnapshot needs; a RawSnapshot is accepted as is. */
export interface SnapshotInput {
  readonly events: readonly EventDescription[];
  readonly rings: readonly RingCopy[];
}

export interface DecodeOptions {
  /**
   * Take column memory from this arena (see arena.ts) instead of allocating it: the result's
   * columns then belong to the caller until it hands them back with arena.recycle().
   */
  readonly arena?: ColumnArena;
  /**
   * With two or more flight-recorder rings, key them and write each row once at its merged place
   * (scatter.ts; default true), or false: decode each ring into rows of its own, then merge them
   * (every row written twice; the path before, kept as a referee for tests and the bench).
   */
  readonly scatter?: boolean;
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
function lowerTimeMark(known: TimeMark, time: TimeMark): void {
  if (time.hi < 0) return;
  if (known.hi < 0 || time.hi < known.hi || (time.hi === known.hi && time.lo < known.lo)) {
    known.hi = time.hi;
    known.lo = time.lo;
  }
}

/** Decodes every ring of a snapshot into columns (oldest first), coverage facts and anomalies. */
export function decodeSnapshot(raw: RawSnapshot | SnapshotInput, options: DecodeOptions = {}): DecodedSnapshot {
  const arena = options.arena;
  arena?.beginSnapshot();
  const sets: SetSource = arena ?? FRESH_SETS;
  const rings = raw.rings;
  const tables = eventTables(raw.events);
  if (options.scatter !== false) {
    const scattered = decodeScattered(raw, tables, sets, arena);
    if (scattered) return scattered;
  }
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
  rings: readonly RingCopy[], tables: EventTables, sets: SetSource,
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

/**
 * The scatter path on this thread (scatter.ts; DecodePool runs it on several): side-band rings
 * decoded first, then every flight-recorder ring keyed, and every row written once at its merged
 * place. A ring keyRing does not take is decoded into its own rows and copied into place. Rings
 * in one snapshot memory that look uniform (uniform.ts) are not keyed but read in place by the
 * merge (`inPlace`); when the merge finds one that is not, the snapshot is decoded again with
 * every ring keyed. Null, with every set it took from `sets` handed back, when fewer than two
 * flight-recorder rings hold records (nothing to merge) or the times span 2^53 ns or more
 * (decodeSnapshot's own path then decides).
 */
export function decodeScattered(
  raw: SnapshotInput, tables: EventTables, sets: SetSource = FRESH_SETS, arena?: ColumnArena, inPlace = true,
): DecodedSnapshot | null {
  const rings = raw.rings;
  if (flightRecordersWithRecords(rings).length < 2) return null;
  const { decodes, known, backward: flightRecorders } = sideBandFirst(rings, tables, sets);
  const sources = decodes.map((decode): ScatterSource => ({ kind: 'rows', rows: decode.rows }));
  // Copies in one snapshot memory are keyed there, by WebAssembly, and merged there (wasm/memory-scatter.ts).
  const memory = commonSnapshotMemory(rings, flightRecordersWithRecords(rings));
  for (const r of flightRecorders) {
    const uniform = memory && inPlace ? uniformRing(rings[r], tables) : null;
    if (uniform) {
      decodes[r] = { rows: { set: UNPLACED, first: 0, count: uniform.count }, state: uniform.state, anomalies: uniform.anomalies };
      sources[r] = { kind: 'uniform', ring: rings[r], uniform };
      lowerTimeMark(known, smallestTime(rings[r], decodes[r].state));
      continue;
    }
    const place = memory?.keyPlaceOf(rings[r].bytes, 0);
    const inMemory = place ? keyRunIn(place) : null;
    const keys = keyRing(rings[r], tables, inMemory?.scratch ?? null, freshKeyScratch, inMemory?.engine ?? null);
    if (keys) {
      decodes[r] = { rows: { set: UNPLACED, first: 0, count: keys.count }, state: keys.state, anomalies: keys.anomalies };
      sources[r] = { kind: 'keyed', ring: rings[r], keys };
    } else {
      decodes[r] = decodeRingRows(rings[r], r, tables, known, sets);
      sources[r] = { kind: 'rows', rows: decodes[r].rows };
    }
    lowerTimeMark(known, smallestTime(rings[r], decodes[r].state));
  }
  if (!exactSpan(rings, decodes)) {
    for (const decode of decodes) if (decode.rows.set !== UNPLACED) sets.give(decode.rows.set);
    return null;
  }
  const { shift } = timeAxis(rings, decodes);
  let total = 0;
  for (const decode of decodes) total += decode.rows.count;
  const merged = total > 0 ? takeMergedSet(memory, total) : null;
  const out = merged ?? (total > 0 ? sets.take(total) : new ColumnSet(0));
  const whole = { from: new Array<number>(rings.length).fill(0), to: decodes.map((d) => d.rows.count), at: 0 };
  const readsInPlace = sources.some((source) => source.kind === 'uniform');
  const giveAll = (): void => {
    // give() frees the snapshot memory's set as well (releaseRoomSet).
    if (total > 0) sets.give(out);
    for (const decode of decodes) if (decode.rows.set !== UNPLACED) sets.give(decode.rows.set);
  };
  try {
    const plan = memory && merged ? planScatter(memory, sources, tables, shift, total) : null;
    if (memory && plan) {
      const { others, failed } = scatterPlanned(plan, whole, 0);
      if (!failed) placeSideBandRows(memory, out, sources, shift);
      if (failed || !placeOtherRecords(plan, [others], out, sources, tables, shift)) {
        giveAll();
        return decodeScattered(raw, tables, sets, arena, false);
      }
    } else if (readsInPlace) {
      // Rings read in place are merged only by the snapshot memory's merge: key them all instead.
      giveAll();
      return decodeScattered(raw, tables, sets, arena, false);
    } else {
      scatterSlice(out, sources, tables, shift, whole);
    }
  } catch (error) {
    if (total > 0) sets.give(out);
    throw error;
  }
  return assembleSnapshot(raw, placedIn(out, decodes), sets, arena, { set: out, first: 0, count: total });
}

/** Key scratch of `rows` entries in ordinary memory, left to the GC. */
function freshKeyScratch(rows: number): KeyScratch {
  return { time: new Float64Array(rows), offset: new Uint32Array(rows), position: new Uint16Array(rows) };
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
  raw: RawSnapshot | SnapshotInput, decodes: readonly RingDecode[], sets: SetSource, arena?: ColumnArena, merged?: RingRows,
): DecodedSnapshot {
  const { events, rings } = raw;
  const sources: RingRows[] = decodes.map((decode) => decode.rows);
  let total = 0;
  let nonEmpty = 0;
  for (const rows of sources) {
    total += rows.count;
    if (rows.count > 0) nonEmpty++;
  }
  const anomalies = decodes.flatMap((decode) => decode.anomalies);
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
    const overwritten = ring.direction === 'forward' ? ring.droppedBytes ?? 0n : ring.bytesWritten - BigInt(state.offset);
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
