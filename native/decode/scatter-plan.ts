// The scatter path's one plan (scatter.ts says what the path is), executed on this thread alone
// (decodeSnapshot) or by a DecodePool's threads (decode-pool/pool.ts): side-band rings decoded
// first, each flight-recorder ring read in place when it is uniform and its copy is in a snapshot
// memory (uniform.ts) or else keyed, the span check, the merge order cut into one slice per thread,
// each slice written straight into its rows, then the side-band rows and the records the slices
// listed put in place. Two fallbacks: a ring read in place that turns out not to be uniform sends
// the plan round again with every ring keyed; times spanning 2^53 ns or more leave the snapshot to
// the ring-by-ring decode (assemble.ts decodeRingByRing), whose answer the caller gives.
//
// The plan is a generator: it yields the two steps that run on several threads (key these rings,
// write these slices) and resumes with what they gave, so the same code drives a synchronous
// executor and an asynchronous one. Everything else it does on the calling thread.

import { ColumnSet, type SetSource } from './column-set';
import { FRESH_SETS, decodeRingRows, type EventTables, type RingDecode, type TimeMark } from './decode-ring';
import { assembleSnapshot, exactSpan, flightRecordersWithRecords, sideBandFirst, timeAxis, type SnapshotInput } from './assemble';
import { mergeSlicesOfTimes, type MergeSlice } from './merge';
import { UNPLACED, keyRing, placedIn, scatterSlice, sliceTimes, type KeyedRing, type ScatterSource } from './scatter';
import type { KeyScratch } from './key-scratch';
import { uniformRing } from './uniform';
import type { DecodedSnapshot } from './types';
import type { RingCopy } from '../abi/snapshot';
import type { ColumnArena } from './arena';
import { commonSnapshotMemory, takeMergedSet, type SnapshotMemory } from './wasm/snapshot-memory';
import { keyRunIn, type KeyArraysInMemory } from './wasm/key-run';
import { placeOtherRecords, placeSideBandRows, planScatter, scatterPlanned, type ScatterPlan } from './wasm/memory-scatter';

/** One flight-recorder ring after the key step: keyed, or decoded into rows of its own (a ring keyRing does not take). */
export type KeyOutcome = { readonly keyed: KeyedRing } | { readonly decoded: RingDecode };

/** Key `rings` (ring numbers, as the executor's threads read them: `shared`), decoding those keyRing does not take with `known` as their time base. */
export interface KeyStep {
  readonly kind: 'key';
  readonly rings: readonly number[];
  readonly shared: readonly RingCopy[];
  readonly known: TimeMark;
  /** The memory the copies share, where keys are written by WebAssembly; null: key scratch in ordinary memory. */
  readonly memory: SnapshotMemory | null;
}

/**
 * Write `slices` (slice i by thread i, this thread's first) into `out`: by the snapshot memory's
 * merge when `plan` is given (each slice lists the records that are not plain samples, and fails
 * when a ring read in place is not uniform), else by scatterSlice over `sources`.
 */
export interface WriteStep {
  readonly kind: 'write';
  readonly slices: readonly MergeSlice[];
  readonly out: ColumnSet;
  readonly sources: readonly ScatterSource[];
  readonly shift: Float64Array;
  readonly plan: ScatterPlan | null;
}

export type ScatterStep = KeyStep | WriteStep;

export type StepOutcome =
  | { readonly kind: 'key'; readonly rings: readonly KeyOutcome[] }
  /** `others`: records each slice listed, by slice; `failed`: a slice found a ring read in place not uniform. */
  | { readonly kind: 'write'; readonly others: readonly number[]; readonly failed: boolean };

/** What the plan needs to know of the threads that execute it. */
export interface ScatterThreads {
  /** Threads that key and write, this one included. */
  readonly count: number;
  /** Fewest rows of a merge worth cutting into one slice per thread. */
  readonly minSliceRows: number;
  /** `ring` as every thread reads it (the pool copies bytes that are not in shared memory into slot `slot`). */
  shared(ring: RingCopy, slot: number): RingCopy;
}

/** What the plan did, counted across snapshots (for tests and the bench). */
export interface ScatterCounts {
  /** Merges written by the snapshot memory's WebAssembly merge. */
  inMemory: number;
  /** Merges that read uniform rings in place, and of them those written again with every ring keyed. */
  readInPlace: number;
  readInPlaceRedone: number;
  /** Merges cut into more than one slice. */
  inSlices: number;
}

export type ScatterPlanRun = Generator<ScatterStep, DecodedSnapshot | null, StepOutcome>;

/**
 * The plan for `raw` (see the top of this file), or null, before anything is decoded, when fewer
 * than two flight-recorder rings hold records (nothing to merge: the ring-by-ring decode is the
 * whole work). The run's answer is the snapshot, or null, with every set it took from `sets` handed
 * back, when the times span 2^53 ns or more. The caller began the arena's snapshot.
 */
export function scatterPlan(
  raw: SnapshotInput,
  tables: EventTables,
  sets: SetSource,
  arena: ColumnArena | undefined,
  threads: ScatterThreads,
  counts?: ScatterCounts,
): ScatterPlanRun | null {
  const withRecords = flightRecordersWithRecords(raw.rings);
  if (withRecords.length < 2) return null;
  // Copies in one snapshot memory are keyed there, by WebAssembly, and merged there (wasm/memory-scatter.ts).
  // Every thread that keys or writes a slice needs job records of its own there: one lane each.
  const inOne = commonSnapshotMemory(raw.rings, withRecords);
  const memory = inOne && threads.count <= inOne.lanes ? inOne : null;
  return scatterRun(raw, tables, sets, arena, threads, memory, counts);
}

function* scatterRun(
  raw: SnapshotInput,
  tables: EventTables,
  sets: SetSource,
  arena: ColumnArena | undefined,
  threads: ScatterThreads,
  memory: SnapshotMemory | null,
  counts: ScatterCounts | undefined,
): ScatterPlanRun {
  const first = yield* scatterOnce(raw, tables, sets, arena, threads, memory, true, counts);
  if (first !== REDO) return first;
  // A ring read in place was not uniform after all: key every ring and merge again.
  if (counts) counts.readInPlaceRedone++;
  const second = yield* scatterOnce(raw, tables, sets, arena, threads, memory, false, counts);
  if (second === REDO) throw new Error('the scatter plan read a ring in place with reading in place turned off');
  return second;
}

/** scatterOnce's answer when a ring read in place was not uniform (every set it took given back). */
const REDO = Symbol('redo with every ring keyed');

function* scatterOnce(
  raw: SnapshotInput,
  tables: EventTables,
  sets: SetSource,
  arena: ColumnArena | undefined,
  threads: ScatterThreads,
  memory: SnapshotMemory | null,
  inPlace: boolean,
  counts: ScatterCounts | undefined,
): Generator<ScatterStep, DecodedSnapshot | null | typeof REDO, StepOutcome> {
  const rings = raw.rings;
  const { decodes, known, backward } = sideBandFirst(rings, tables, sets);
  const sources = new Array<ScatterSource>(rings.length);
  decodes.forEach((decode, r) => {
    sources[r] = { kind: 'rows', rows: decode.rows };
  });
  const giveDecoded = (): void => {
    for (const source of sources) if (source?.kind === 'rows' && source.rows.set !== UNPLACED) sets.give(source.rows.set);
  };
  // Every thread reads every flight-recorder ring's bytes when it writes its slice.
  const shared = new Array<RingCopy>(rings.length);
  backward.forEach((r, slot) => {
    shared[r] = threads.shared(rings[r], slot);
  });
  const toKey: number[] = [];
  for (const r of backward) {
    const uniform = memory && inPlace ? uniformRing(shared[r], tables) : null;
    if (!uniform) {
      toKey.push(r);
      continue;
    }
    decodes[r] = { rows: { set: UNPLACED, first: 0, count: uniform.count }, state: uniform.state, anomalies: uniform.anomalies };
    sources[r] = { kind: 'uniform', ring: shared[r], uniform };
  }
  if (toKey.length > 0) {
    let keyed: StepOutcome;
    try {
      keyed = yield { kind: 'key', rings: toKey, shared, known: { ...known }, memory };
    } catch (error) {
      giveDecoded();
      throw error;
    }
    if (keyed.kind !== 'key' || keyed.rings.length !== toKey.length) throw new Error("the scatter plan's key step answered something else");
    toKey.forEach((r, i) => {
      const outcome = keyed.rings[i];
      if ('keyed' in outcome) {
        const keys = outcome.keyed;
        decodes[r] = { rows: { set: UNPLACED, first: 0, count: keys.count }, state: keys.state, anomalies: keys.anomalies };
        sources[r] = { kind: 'keyed', ring: shared[r], keys };
      } else {
        decodes[r] = outcome.decoded;
        sources[r] = { kind: 'rows', rows: outcome.decoded.rows };
      }
    });
  }
  if (!exactSpan(rings, decodes)) {
    // Damaged times far apart: values may round differently per base, so the rings are decoded one by one.
    giveDecoded();
    return null;
  }
  const { shift } = timeAxis(rings, decodes);
  let total = 0;
  let nonEmpty = 0;
  for (const decode of decodes) {
    total += decode.rows.count;
    if (decode.rows.count > 0) nonEmpty++;
  }
  let slices: MergeSlice[];
  if (threads.count > 1 && nonEmpty >= 2 && total >= threads.minSliceRows) {
    // A uniform ring's times are taken as sorted here; the slices check every one as they write it.
    const sorted = sources.map((source) => source.kind === 'uniform' || (source.kind === 'keyed' && source.keys.sorted));
    slices = mergeSlicesOfTimes(sliceTimes(sources), shift, threads.count, sorted);
  } else {
    slices = [{ from: new Array<number>(rings.length).fill(0), to: decodes.map((decode) => decode.rows.count), at: 0 }];
  }
  const merged = total > 0 ? takeMergedSet(memory, total) : null;
  const out = merged ?? (total > 0 ? sets.take(total) : new ColumnSet(0));
  const giveAll = (): void => {
    giveDecoded();
    // give() frees the snapshot memory's set as well (releaseRoomSet).
    if (total > 0) sets.give(out);
  };
  const readsInPlace = sources.some((source) => source.kind === 'uniform');
  let plan: ScatterPlan | null;
  try {
    plan = memory && merged ? planScatter(memory, sources, tables, shift, total) : null;
  } catch (error) {
    giveAll();
    throw error;
  }
  if (!plan && readsInPlace) {
    // Rings read in place are merged only by the snapshot memory's merge: key them all instead.
    giveAll();
    return REDO;
  }
  let notUniform: boolean;
  try {
    const written = yield { kind: 'write', slices, out, sources, shift, plan };
    if (written.kind !== 'write') throw new Error("the scatter plan's write step answered something else");
    notUniform = written.failed;
    if (memory && plan && !notUniform) {
      // The side-band rows, then the records each slice listed (not plain samples), into their rows.
      placeSideBandRows(memory, out, sources, shift);
      notUniform = !placeOtherRecords(plan, written.others, out, sources, tables, shift);
    }
  } catch (error) {
    giveAll();
    throw error;
  }
  if (notUniform) {
    giveAll();
    return REDO;
  }
  if (counts) {
    if (plan) counts.inMemory++;
    if (readsInPlace) counts.readInPlace++;
    if (slices.length > 1) counts.inSlices++;
  }
  return assembleSnapshot(raw, placedIn(out, decodes), sets, arena, { set: out, first: 0, count: total });
}

/**
 * Keys one flight-recorder ring on the calling thread (any thread): in its snapshot memory by
 * WebAssembly when `place` is given, else into `scratch` (or arrays from `fresh` when it is too
 * small); a ring keyRing does not take is decoded into rows of its own from `sets`.
 */
export function keyOrDecode(
  ring: RingCopy,
  ringNumber: number,
  tables: EventTables,
  known: TimeMark,
  sets: SetSource,
  place: KeyArraysInMemory | null,
  scratch: KeyScratch | null,
  fresh: (rows: number) => KeyScratch,
): KeyOutcome {
  const inMemory = place ? keyRunIn(place) : null;
  const keyed = inMemory ? keyRing(ring, tables, inMemory.scratch, fresh, inMemory.engine) : keyRing(ring, tables, scratch, fresh);
  return keyed ? { keyed } : { decoded: decodeRingRows(ring, ringNumber, tables, known, sets) };
}

/** Key scratch of `rows` entries in ordinary memory, left to the GC. */
function freshKeyScratch(rows: number): KeyScratch {
  return { time: new Float64Array(rows), offset: new Uint32Array(rows), position: new Uint16Array(rows) };
}

const THIS_THREAD: ScatterThreads = { count: 1, minSliceRows: Infinity, shared: (ring) => ring };

/**
 * The plan executed on this thread alone: each step run here, one slice. What decodeSnapshot does
 * with two or more flight-recorder rings; null as scatterPlan says.
 */
export function decodeScattered(raw: SnapshotInput, tables: EventTables, sets: SetSource = FRESH_SETS, arena?: ColumnArena): DecodedSnapshot | null {
  const run = scatterPlan(raw, tables, sets, arena, THIS_THREAD);
  if (!run) return null;
  let next = run.next();
  while (!next.done) {
    let outcome: StepOutcome;
    try {
      outcome = runHere(next.value, tables, sets);
    } catch (error) {
      next = run.throw(error);
      continue;
    }
    next = run.next(outcome);
  }
  return next.value;
}

function runHere(step: ScatterStep, tables: EventTables, sets: SetSource): StepOutcome {
  if (step.kind === 'key') {
    const rings = step.rings.map((r) =>
      keyOrDecode(step.shared[r], r, tables, step.known, sets, step.memory?.keyPlaceOf(step.shared[r].bytes, 0) ?? null, null, freshKeyScratch),
    );
    return { kind: 'key', rings };
  }
  const [slice] = step.slices;
  if (step.plan) {
    const { others, failed } = scatterPlanned(step.plan, slice, 0);
    return { kind: 'write', others: [others], failed };
  }
  scatterSlice(step.out, step.sources, tables, step.shift, slice);
  return { kind: 'write', others: [0], failed: false };
}
