// The scatter path's merge and row writes (scatter.ts: scatterSlice) as WebAssembly, for a snapshot
// whose flight-recorder copies live in one snapshot memory (snapshot-memory.ts) and were keyed
// there: planScatter decides whether a snapshot can take it and copies the side-band rings' times
// into the memory (this thread, once), scatterPlanned writes one slice (any thread, each into its
// own rows), and placeSideBandRows copies the side-band rows to where the merge put them.
//
// It takes a snapshot whose keyed and uniform rings (uniform.ts: read in place, not keyed) all hold
// samples of one event whose layout has every field a row reads (pid/tid, cpu, ip: Ringside's own
// events) with up to OTHER_RECORDS records that are not plain samples (throttle, LOST, ...: the
// merge lists where each goes, placeOtherRecords decodes them), and side-band rings of up to
// SIDE_BAND_ROWS rows in all; anything else is left to scatterSlice. The rows are scatterSlice's,
// byte for byte. A slice that finds a uniform ring's record not to be one says so (failed), and the
// caller keys the snapshot's rings instead.

import { RecordType } from '../../abi/uapi';
import type { RingCopy } from '../../abi/snapshot';
import { decodeOneRecord, type EventTables, type RingRows } from '../decode-ring';
import { uniformRecordTime, type UniformRing } from '../uniform';
import { u32View, validEnd } from '../walk';
import { copyShifted, type MergeSlice } from '../merge';
import type { ScatterSource } from '../scatter';
import type { ColumnSet } from '../column-set';
import {
  ENTRY_HOLE,
  ENTRY_KEYED,
  ENTRY_KEYED_WITH_OTHERS,
  ENTRY_NONE,
  ENTRY_UNIFORM,
  MergeScatterEngine,
  type MergeScatterConstants,
  type MergeScatterEntry,
} from './merge-scatter';
import { columnAddresses } from './kernels';
import { OTHER_RECORDS, SIDE_BAND_ROWS, type SnapshotMemory } from './snapshot-memory';

/** How every ring of a snapshot enters the WebAssembly merge (from and to are each slice's). */
export interface ScatterPlan {
  readonly memory: WebAssembly.Memory;
  readonly kind: 'plain' | 'shared';
  readonly entries: readonly Omit<MergeScatterEntry, 'from' | 'to'>[];
  readonly constants: MergeScatterConstants;
  /** Thread `lane`'s merge job is at jobBase + lane * laneBytes, its list of other records at listBase + lane * laneBytes. */
  readonly jobBase: number;
  readonly listBase: number;
  readonly laneBytes: number;
}

/**
 * The plan for writing `sources` (keyed rings, side-band rows) into `memory`'s output set, or null
 * when the snapshot is not one the WebAssembly merge takes (see the top of this file). Copies the
 * side-band rows' times into the memory.
 */
export function planScatter(
  memory: SnapshotMemory,
  sources: readonly ScatterSource[],
  tables: EventTables,
  shift: ArrayLike<number>,
  total: number,
): ScatterPlan | null {
  if (sources.length > memory.entries || total > memory.set.length) return null;
  let position = -1;
  let sideBandRows = 0;
  let otherRecords = 0;
  let sampleIdOffset: number | null = null;
  let otherTimeFromEnd = -1;
  for (const source of sources) {
    if (source.kind === 'rows') {
      sideBandRows += source.rows.count;
      continue;
    }
    if (source.kind === 'uniform') {
      const uniform = source.uniform;
      if (!memory.slotOf(source.ring.bytes) || (position >= 0 && uniform.position !== position)) return null;
      if (sampleIdOffset !== null && uniform.sampleIdOffset !== sampleIdOffset) return null;
      sampleIdOffset = uniform.sampleIdOffset;
      position = uniform.position;
      otherTimeFromEnd = uniform.otherTimeFromEnd;
      continue;
    }
    const keys = source.keys;
    const slot = memory.slotOf(source.ring.bytes);
    if (!slot || keys.scratch.time.byteOffset !== slot.keys.time || keys.scratch.time.buffer !== memory.buffer) return null;
    if (keys.count === 0) continue;
    otherRecords += keys.otherRecords;
    if (keys.otherRecords === keys.count) continue;
    if (keys.samplePosition < 0 || (position >= 0 && keys.samplePosition !== position)) return null;
    position = keys.samplePosition;
  }
  if (sideBandRows > SIDE_BAND_ROWS || otherRecords > OTHER_RECORDS) return null;
  const layout = position >= 0 ? tables.layouts[position] : null;
  if (position >= 0 && (!layout || layout.pidTid < 0 || layout.cpu < 0 || layout.ip < 0)) return null;
  const times = new Float64Array(memory.buffer, memory.sideBandTime, SIDE_BAND_ROWS);
  let placed = 0;
  const entries = sources.map((source, r): Omit<MergeScatterEntry, 'from' | 'to'> => {
    if (source.kind === 'rows') {
      const { set, first, count } = source.rows;
      times.set(set.time.subarray(first, first + count), placed);
      const entry = {
        ...NO_IDS,
        kind: ENTRY_HOLE,
        time: memory.sideBandTime + placed * 8,
        aux: memory.sideBandDestination + placed * 4,
        src: 0,
        position: 0,
        shift: shift[r],
      } as const;
      placed += count;
      return entry;
    }
    if (source.kind === 'uniform') {
      const { stride, count, state, idHi, idLo } = source.uniform;
      const src = source.ring.bytes.byteOffset;
      const time = src + (count - 1) * stride;
      return { kind: ENTRY_UNIFORM, time, aux: stride, src, position: 0, shift: shift[r], baseHi: state.baseHi, baseLo: state.baseLo, idHi, idLo };
    }
    const keys = source.keys;
    if (keys.count === 0) return { ...NO_IDS, kind: ENTRY_NONE, time: 0, aux: 0, src: 0, position: 0, shift: shift[r] };
    return {
      ...NO_IDS,
      kind: keys.otherRecords > 0 ? ENTRY_KEYED_WITH_OTHERS : ENTRY_KEYED,
      time: keys.scratch.time.byteOffset + keys.first * 8,
      aux: keys.scratch.offset.byteOffset + keys.first * 4,
      src: source.ring.bytes.byteOffset,
      position: keys.scratch.position.byteOffset + keys.first * 2,
      shift: shift[r],
    };
  });
  const constants: MergeScatterConstants = {
    columns: columnAddresses(memory.set),
    pidTid: layout?.pidTid ?? 0,
    cpu: layout?.cpu ?? 0,
    ip: layout?.ip ?? 0,
    time: layout?.time ?? 0,
    id: sampleIdOffset ?? -1,
    otherTimeFromEnd,
    event: position >= 0 ? tables.indexOf[position] : 0,
  };
  return {
    memory: memory.memory,
    kind: memory.kind,
    entries,
    constants,
    jobBase: memory.mergeJobAddress(0),
    listBase: memory.othersAddress(0),
    laneBytes: memory.laneBytes,
  };
}

/** An engine per plan: a worker receives the plan (its memory included) anew with each request; the kernels' instance per memory is cached (kernels.ts). */
const engines = new WeakMap<ScatterPlan, MergeScatterEngine>();

function engineFor(plan: ScatterPlan): MergeScatterEngine {
  let engine = engines.get(plan);
  if (!engine) {
    engine = new MergeScatterEngine(plan.memory, plan.kind, plan.constants);
    engines.set(plan, engine);
  }
  return engine;
}

/** Slices this thread has written with scatterPlanned, and of them those that found a uniform ring not uniform (for tests and the bench). */
let slicesWritten = 0;
let slicesFailed = 0;

export function plannedSlicesWritten(): number {
  return slicesWritten;
}

export function plannedSlicesFailed(): number {
  return slicesFailed;
}

/** A time base and id for entries that are not uniform rings (they read neither). */
const NO_IDS = { baseHi: 0, baseLo: 0, idHi: 0, idLo: 0 } as const;

/**
 * Writes `slice` of the planned merge with thread `lane`'s job record; returns the rows it placed,
 * how many other records it listed for placeOtherRecords, and whether a uniform ring's record was
 * not one (the slice is then not all written: the caller keys the rings and merges again).
 */
export function scatterPlanned(plan: ScatterPlan, slice: MergeSlice, lane: number): { rows: number; others: number; failed: boolean } {
  slicesWritten++;
  const entries = plan.entries.map((entry, r): MergeScatterEntry => ({ ...entry, from: slice.from[r], to: slice.to[r] }));
  const written = engineFor(plan).scatter(plan.jobBase + lane * plan.laneBytes, slice.at, entries, plan.listBase + lane * plan.laneBytes);
  if (written.failed) slicesFailed++;
  return written;
}

/**
 * After every slice and placeSideBandRows: decodes the records each thread listed (`listed[lane]`
 * of them; not plain samples: throttle, LOST, ...) into their rows, one at a time, as scatterSlice
 * does for them, and moves each LOST record of a ring read in place before its partner, as keyRing
 * moves its key (placeLostBeforePartner). False when a ring read in place listed a record the keyed
 * path would not have merged there (one the decoder notes as an anomaly, a time other than the one
 * the merge read, a LOST record whose partner's time differs): the caller then keys the rings and
 * merges again.
 */
export function placeOtherRecords(
  plan: ScatterPlan,
  listed: readonly number[],
  out: ColumnSet,
  sources: readonly ScatterSource[],
  tables: EventTables,
  shift: ArrayLike<number>,
): boolean {
  // Rows of LOST records read in place that go before the row above them, in row order (the lanes' slices are in row order).
  const beforePartner: number[] = [];
  for (let lane = 0; lane < listed.length; lane++) {
    const list = new Uint32Array(plan.memory.buffer, plan.listBase + lane * plan.laneBytes, listed[lane] * 3);
    for (let k = 0; k < listed[lane]; k++) {
      const to = list[k * 3];
      const r = list[k * 3 + 1];
      const source = sources[r];
      if (source.kind === 'uniform') {
        if (!placeUniformOther(source.ring, source.uniform, list[k * 3 + 2], out, to, plan.constants.otherTimeFromEnd, tables)) return false;
        if (out.kind[to] === RecordType.LOST && list[k * 3 + 2] > 0) beforePartner.push(to);
      } else if (source.kind === 'keyed') {
        const keys = source.keys;
        const key = keys.first + list[k * 3 + 2];
        const ring = source.ring;
        decodeOneRecord(u32View(ring.bytes), ring, validEnd(ring), keys.scratch.offset[key], out, to, keys.state.baseHi, keys.state.baseLo, tables);
        out.time[to] = keys.scratch.time[key];
      } else {
        throw new Error(`the merge listed a record of ring ${r}, whose rows were decoded already`);
      }
      out.time[to] += shift[r];
      out.ring[to] = r;
    }
  }
  // The merge wrote a ring read in place in memory order, where the LOST record comes after its
  // partner (the record written in the same reservation: the one before it, oldest first). Both
  // carry the same time, so they took neighbouring rows; the keyed path's order is theirs swapped.
  for (const to of beforePartner) {
    if (to === 0 || out.ring[to - 1] !== out.ring[to] || !(out.time[to - 1] === out.time[to])) return false;
    out.swapRows(to - 1, to);
  }
  return true;
}

/**
 * Decodes record `index` (oldest first) of a ring read in place into row `to` of `out` (its time
 * relative to the ring's base) and adds what it holds to the ring's state as keyRing adds it; false
 * when the keyed path would not have keyed it at the time the merge read (see placeOtherRecords).
 */
function placeUniformOther(
  ring: RingCopy,
  uniform: UniformRing,
  index: number,
  out: ColumnSet,
  to: number,
  otherTimeFromEnd: number,
  tables: EventTables,
): boolean {
  const words = u32View(ring.bytes);
  const offset = (uniform.count - 1 - index) * uniform.stride;
  const state = uniform.state;
  const one = decodeOneRecord(words, ring, validEnd(ring), offset, out, to, state.baseHi, state.baseLo, tables);
  if (one.anomalies.length > 0 || one.state.anomalies > 0) return false;
  const read = uniformRecordTime(words, offset, uniform.stride, uniform.sampleTime, otherTimeFromEnd, state.baseHi, state.baseLo);
  if (!(out.time[to] === read)) return false;
  state.lost += one.state.lost;
  if (out.kind[to] === RecordType.LOST) state.lostRecords++;
  if (one.state.minRel < state.minRel) {
    state.minRel = one.state.minRel;
    state.minAt = one.state.minAt;
  }
  if (one.state.maxRel > state.maxRel) {
    state.maxRel = one.state.maxRel;
    state.maxAt = one.state.maxAt;
  }
  return true;
}

/** After every slice: copies each side-band row to the output row the merge gave it. */
export function placeSideBandRows(memory: SnapshotMemory, out: ColumnSet, sources: readonly ScatterSource[], shift: ArrayLike<number>): void {
  const destinations = new Uint32Array(memory.buffer, memory.sideBandDestination, SIDE_BAND_ROWS);
  let placed = 0;
  sources.forEach((source, r) => {
    if (source.kind !== 'rows') return;
    const rows: RingRows = source.rows;
    // Consecutive rows that went to consecutive places: one copy.
    let j = 0;
    while (j < rows.count) {
      const to = destinations[placed + j];
      let length = 1;
      while (j + length < rows.count && destinations[placed + j + length] === to + length) length++;
      copyShifted(out, to, rows.set, rows.first + j, length, shift[r]);
      j += length;
    }
    placed += rows.count;
  });
}
