// Decoding per-CPU rings straight into their merged rows: every row is written once, at its final
// place, instead of once per ring and again by the merge (merge.ts). Three steps, each one a pass
// a thread can do on its own share:
//  1. keyRing, per ring: walks a flight-recorder ring and keeps only each record's time (the merge
//     key), byte offset and event, oldest first; 14 bytes a record instead of a 39-byte row.
//  2. the merge order of those keys (MergeCursor on the time axis, cut into slices by mergeSlices).
//  3. scatterSlice, per slice: decodes each record of the slice from the ring bytes into its row of
//     the shared output set; a ring that keyRing could not key (decodeRingRows decoded it into its
//     own rows instead) has its rows copied there.
// keyRing keys timed samples of known events itself (scatterSlice then writes exactly the fields
// decodeRing writes for them, from the same offsets); any other record (throttle, LOST, a sample
// without a time, ...) is decoded by decodeRing on its own, for its time when keyed and again into
// its row when written; LOST records are moved before their partner as decodeRingRows does. The
// walk stops where decodeRing stops. A ring with a record the decoder would note as an anomaly
// (unknown id, a field past the record's end) or a time 2^53 ns or more from the others is left to
// decodeRingRows, so the columns stay the single-thread decoder's byte for byte.

import { RecordType } from '../abi/uapi';
import { idLocator } from './parse-info';
import { copyShifted, isSorted, MergeCursor, type KeyTimes, type MergeSlice } from './merge';
import { placeLostBeforePartner, walkEndAnomaly, u32View, validEnd } from './walk';
import { TWO_32, decodeOneRecord, type EventTables, type RingDecode, type RingRows, type RingState } from './decode-ring';
import { ColumnSet, type FlatColumns } from './column-set';
import type { DecodeAnomaly } from './types';
import type { RingCopy } from '../abi/snapshot';
import type { KeyRunEngine, KeyRunState } from './wasm/key-run';
import type { KeyScratch } from './key-scratch';
import type { UniformRing } from './uniform';

/** Largest integer a double holds exactly. */
const MAX_EXACT = 2 ** 53;

/**
 * The position stored for a record that is not a plain timed sample (throttle records, samples
 * without a time, ...): keyRing keys it and scatterSlice writes it through decodeRing itself, one
 * record at a time, since such records are rare.
 */
export const OTHER_RECORD = 0xffff;

/** Entries a scratch holds. */
function scratchRows(scratch: KeyScratch): number {
  return Math.min(scratch.time.length, scratch.offset.length, scratch.position.length);
}

/**
 * One ring keyed by keyRing: its records' times (relative to `state.baseHi/baseLo`), byte offsets
 * and event positions (in the snapshot's events) are entries [first, first + count) of `scratch`,
 * oldest first; every record is a sample.
 */
export interface KeyedRing {
  readonly scratch: KeyScratch;
  readonly first: number;
  readonly count: number;
  /** The event position every record has, when they all have one (the usual flight recorder); -1 when they differ. */
  readonly onlyPosition: number;
  /** The event position every plain sample has (records of OTHER_RECORD aside); -1 when samples of two events are keyed. */
  readonly samplePosition: number;
  /** Keys of OTHER_RECORD (throttle, LOST, ... records, decoded one by one). */
  readonly otherRecords: number;
  /** True when the times never decrease oldest to newest and all are present: they are then the merge keys themselves (no pass to find them). */
  readonly sorted: boolean;
  /** What decodeRingRows would have accumulated (offset where the walk stopped, base, smallest and largest time). */
  readonly state: RingState;
  readonly anomalies: DecodeAnomaly[];
}

/**
 * The times and offsets of a backward ring's records, oldest first, or null when the ring is not
 * one keyRing takes (see the top of this file). `scratch` is used when it is big enough, else
 * bigger arrays are made with `fresh`.
 */
export function keyRing(
  ring: RingCopy,
  tables: EventTables,
  scratch: KeyScratch | null,
  fresh: (rows: number) => KeyScratch,
  engine: KeyRunEngine | null = null,
): KeyedRing | null {
  if (ring.direction !== 'backward' || tables.layouts.length === 0) return null;
  const u32 = u32View(ring.bytes);
  const end = validEnd(ring);
  const defaultPosition = tables.positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const sampleIdOffset = defaultInfo && tables.ids.size > 0 ? idLocator(defaultInfo).sampleIdOffset : -1;
  const SAMPLE = RecordType.SAMPLE;
  const twoTo32 = TWO_32;
  const newestSize = end >= 8 ? u32[1] >>> 16 : 0;
  let capacity = newestSize >= 8 ? Math.ceil((end / newestSize) * 1.0625) + 16 : 16;
  let keys = scratch && scratchRows(scratch) >= capacity ? scratch : fresh(capacity);
  capacity = scratchRows(keys);
  let time = keys.time;
  let offset = keys.offset;
  let positions = keys.position;
  let position = sampleIdOffset >= 0 ? -1 : defaultPosition;
  let layoutPosition = -1;
  // Samples of more than one event (a layout change), and records that are not plain timed samples.
  let layouts = false;
  let otherRecords = 0;
  let lost = 0;
  // Keys written before each LOST record's own (its place counted from the newest), in walk order.
  const lostAt: number[] = [];
  let probe: ColumnSet | null = null;
  let sTime = -1;
  let sMin = 0;
  let idLo = -1;
  let idHi = -1;
  let baseHi = -1;
  let baseLo = 0;
  let minRel = Infinity;
  let maxRel = -Infinity;
  let minAt = 0;
  let maxAt = 0;
  let rows = 0;
  // Walked newest first: sorted oldest first means no time above any walked before it.
  let sorted = true;
  let o = 0;
  // `engine` keys runs into `scratch` as WebAssembly (the ring and the arrays in one memory).
  const run: KeyRunState | null = engine && scratch ? { o, rows, minRel, maxRel, minAt, maxAt, sorted } : null;
  while (o + 8 <= end) {
    if (baseHi >= 0 && sTime >= 0 && layoutPosition >= 0 && (sampleIdOffset < 0 || position === layoutPosition)) {
      // Fast path: a run of timed samples of the event of the sample before (a flight recorder is
      // mostly that), with nothing but the key work in the loop, as in decodeRing's own fast path.
      // Any other record (or a full scratch) falls through to the general code below.
      const fastPosition = layoutPosition;
      if (run && engine && keys === scratch) {
        run.o = o;
        run.rows = rows;
        run.minRel = minRel;
        run.maxRel = maxRel;
        run.minAt = minAt;
        run.maxAt = maxAt;
        run.sorted = sorted;
        engine.key(end, capacity - rows, { sTime, sMin, sId: sampleIdOffset }, idLo, idHi, fastPosition, baseHi, baseLo, run);
        o = run.o;
        rows = run.rows;
        minRel = run.minRel;
        maxRel = run.maxRel;
        minAt = run.minAt;
        maxAt = run.maxAt;
        sorted = run.sorted;
      }
      while (o + 8 <= end && rows < capacity) {
        const w = o >>> 2;
        const size = u32[w + 1] >>> 16;
        if (u32[w] !== SAMPLE || size < sMin || (size & 7) !== 0 || o + size > end) break;
        if (sampleIdOffset >= 0) {
          if (sampleIdOffset + 8 > size) break;
          const idw = (o + sampleIdOffset) >>> 2;
          if (u32[idw] !== idLo || u32[idw + 1] !== idHi) break;
        }
        const tw = (o + sTime) >>> 2;
        const rel = (u32[tw + 1] - baseHi) * twoTo32 + (u32[tw] - baseLo);
        // Usually each record walked is older than all before it; only when it is not can it be
        // the largest time (the general code below took the first record's time as the largest).
        if (rel < minRel) {
          minRel = rel;
          minAt = tw;
        } else if (rel !== minRel) {
          sorted = false;
          if (rel > maxRel) {
            maxRel = rel;
            maxAt = tw;
          }
        }
        rows++;
        const at = capacity - rows;
        time[at] = rel;
        offset[at] = o;
        positions[at] = fastPosition;
        o += size;
      }
      if (o + 8 > end) break;
    }
    const w = o >>> 2;
    const size = u32[w + 1] >>> 16;
    if (size < 8 || (size & 7) !== 0 || o + size > end) break; // not a whole record: decodeRing stops here too
    // A timed sample of a known event: keyed here. Anything else goes through decodeRing on its own.
    let plain = u32[w] === SAMPLE;
    if (plain && sampleIdOffset >= 0) {
      if (sampleIdOffset + 8 > size) {
        plain = false;
      } else {
        const idw = (o + sampleIdOffset) >>> 2;
        if (u32[idw] !== idLo || u32[idw + 1] !== idHi) {
          const found = tables.ids.lookup(u32[idw + 1], u32[idw]);
          if (found < 0) {
            plain = false;
          } else {
            idLo = u32[idw];
            idHi = u32[idw + 1];
            position = found;
          }
        }
      }
    }
    if (plain && position !== layoutPosition) {
      const layout = tables.layouts[position];
      if (layoutPosition >= 0) layouts = true;
      layoutPosition = position;
      sTime = layout.time;
      sMin = layout.sampleMin;
    }
    if (plain && (sTime < 0 || size < sMin)) plain = false;
    if (rows === capacity) {
      // Out of room: grow from the average record size so far, keeping the entries at the top.
      const grown = rows + Math.ceil(((end - o) / (o / rows)) * 1.0625) + 16;
      const bigger = fresh(grown);
      const top = scratchRows(bigger);
      bigger.time.set(time.subarray(capacity - rows, capacity), top - rows);
      bigger.offset.set(offset.subarray(capacity - rows, capacity), top - rows);
      bigger.position.set(positions.subarray(capacity - rows, capacity), top - rows);
      keys = bigger;
      time = bigger.time;
      offset = bigger.offset;
      positions = bigger.position;
      capacity = top;
    }
    const smallestBefore = minRel;
    let rel: number;
    if (plain) {
      const tw = (o + sTime) >>> 2;
      const lo = u32[tw];
      const hi = u32[tw + 1];
      if (baseHi < 0) {
        baseHi = hi;
        baseLo = lo;
      }
      rel = (hi - baseHi) * twoTo32 + (lo - baseLo);
      if (rel < minRel) {
        minRel = rel;
        minAt = tw;
      }
      if (rel > maxRel) {
        maxRel = rel;
        maxAt = tw;
      }
    } else {
      // A record the decoder notes as an anomaly would have to be listed in walk order: left to decodeRingRows.
      probe ??= new ColumnSet(1);
      const one = decodeOneRecord(u32, ring, end, o, probe, 0, baseHi, baseLo, tables);
      if (one.anomalies.length > 0 || one.state.anomalies > 0) return null;
      baseHi = one.state.baseHi;
      baseLo = one.state.baseLo;
      lost += one.state.lost;
      rel = probe.time[0];
      if (one.state.minRel < minRel) {
        minRel = one.state.minRel;
        minAt = one.state.minAt;
      }
      if (one.state.maxRel > maxRel) {
        maxRel = one.state.maxRel;
        maxAt = one.state.maxAt;
      }
      otherRecords++;
      if (u32[w] === RecordType.LOST) lostAt.push(rows);
    }
    if (!(rel <= smallestBefore)) sorted = false; // NaN (no time) included
    rows++;
    time[capacity - rows] = rel;
    offset[capacity - rows] = o;
    positions[capacity - rows] = plain ? position : OTHER_RECORD;
    o += size;
  }
  if (!(minRel >= -MAX_EXACT && maxRel <= MAX_EXACT) && rows > 0) return null;
  if (lostAt.length > 0) {
    // As decodeRingRows does to its rows: each LOST record back before the record it was written
    // with (placeLostBeforePartner). The walk listed where they are, so no search over every key:
    // oldest first, the one keyed after `k` others is at row rows - 1 - k, and a swap only moves
    // rows below the next one looked for.
    const first = capacity - rows;
    const lostRows = lostAt.map((k) => rows - 1 - k).reverse();
    let next = 0;
    placeLostBeforePartner(
      (from) => {
        while (next < lostRows.length && lostRows[next] < from) next++;
        return next < lostRows.length ? lostRows[next] : -1;
      },
      (a, b) => {
        swapEntries(time, first + a, first + b);
        swapEntries(offset, first + a, first + b);
        swapEntries(positions, first + a, first + b);
      },
    );
    // The walk judged the order before the moves; the keys as placed are what the merge reads.
    sorted = isSorted(time.subarray(first, capacity));
  }
  const state: RingState = { offset: o, lost, lostRecords: lostAt.length, anomalies: 0, baseHi, baseLo, minRel, maxRel, minAt, maxAt };
  const anomalies: DecodeAnomaly[] = [];
  // The record where the walk stopped, as decodeRingRows lists and counts it.
  const stop = walkEndAnomaly(ring, u32, o, end);
  if (stop) {
    anomalies.push(stop);
    if (stop.kind !== 'truncated-oldest') state.anomalies++;
  }
  return {
    scratch: keys,
    first: capacity - rows,
    count: rows,
    onlyPosition: layouts || otherRecords > 0 ? -1 : Math.max(layoutPosition, 0),
    samplePosition: layouts ? -1 : Math.max(layoutPosition, 0),
    otherRecords,
    sorted,
    state,
    anomalies,
  };
}

/** Exchanges entries a and b of `array`. */
function swapEntries(array: Float64Array | Uint32Array | Uint16Array, a: number, b: number): void {
  const kept = array[a];
  array[a] = array[b];
  array[b] = kept;
}

/**
 * One ring as the scatter merge reads it: keyed (records decoded from `bytes` here), rows decoded
 * already, or uniform (uniform.ts: records read in place, by the WebAssembly merge of a snapshot
 * memory only; scatterSlice does not take them).
 */
export type ScatterSource =
  | { readonly kind: 'keyed'; readonly ring: RingCopy; readonly keys: KeyedRing }
  | { readonly kind: 'rows'; readonly rows: RingRows }
  | { readonly kind: 'uniform'; readonly ring: RingCopy; readonly uniform: UniformRing };

/** Each ring's merge keys before the shift, as mergeSlicesOfTimes reads them: keyed times, the decoded rows' times, or a uniform ring's record times. */
export function sliceTimes(sources: readonly ScatterSource[]): KeyTimes[] {
  return sources.map((source) => (source.kind === 'uniform' ? source.uniform.times : timesOf(source)));
}

/** Each ring's merge keys before the shift as arrays: keyed times, or the decoded rows' times. */
export function scatterTimes(sources: readonly ScatterSource[]): Float64Array[] {
  return sources.map(timesOf);
}

function timesOf(source: ScatterSource): Float64Array {
  if (source.kind === 'rows') return source.rows.set.time.subarray(source.rows.first, source.rows.first + source.rows.count);
  if (source.kind === 'uniform') throw new Error(`ring ${source.ring.ringId} is uniform: its times are read in place by the snapshot memory's merge only`);
  const keys = source.keys;
  return keys.scratch.time.subarray(keys.first, keys.first + keys.count);
}

/**
 * Writes one slice of the merge of `sources` (mergeSlices over scatterTimes) into its rows of
 * `out`: keyed rings' records decoded from their bytes, other rings' rows copied, every time moved
 * onto the origin by `shift`. Slices of one merge write disjoint rows, so threads run them at once.
 *
 * One loop for the whole slice: the merge cursor finds a run of one ring, and its records are
 * decoded right there, with the columns and the ring's arrays in locals. Per-CPU rings interleave
 * in runs of about eight rows, so anything done per run (a call that sets up its columns, a list
 * of runs written and read back) costs about as much as decoding the run's rows.
 */
export function scatterSlice(out: ColumnSet, sources: readonly ScatterSource[], tables: EventTables, shift: ArrayLike<number>, slice: MergeSlice): void {
  const times = scatterTimes(sources);
  const cursor = new MergeCursor(
    times,
    times.map((t) => t.length),
    shift,
    slice,
  );
  const ringCount = sources.length;
  // Each keyed ring's arrays, by ring number (empty stand-ins for rings copied as rows).
  const words: Uint32Array[] = [];
  const offsetsOf: Uint32Array[] = [];
  const positionsOf: Uint16Array[] = [];
  const onlyOf = new Int32Array(ringCount);
  const firstOf = new Int32Array(ringCount);
  const cpuOf = new Int32Array(ringCount);
  const keyed = new Uint8Array(ringCount);
  for (let r = 0; r < ringCount; r++) {
    const source = sources[r];
    if (source.kind === 'keyed') {
      keyed[r] = 1;
      words.push(u32View(source.ring.bytes));
      offsetsOf.push(source.keys.scratch.offset);
      positionsOf.push(source.keys.scratch.position);
      onlyOf[r] = source.keys.onlyPosition;
      firstOf[r] = source.keys.first;
      cpuOf[r] = source.ring.cpu;
    } else {
      words.push(NO_WORDS);
      offsetsOf.push(NO_WORDS);
      positionsOf.push(NO_POSITIONS);
      onlyOf[r] = -1;
    }
  }
  const { layouts, indexOf } = tables;
  // row-writer ts-typed-columns from=out
  // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
  const timeColumn = out.time;
  const kindColumn = out.kind;
  const miscColumn = out.misc;
  const eventColumn = out.event;
  const pidColumn = out.pid;
  const tidColumn = out.tid;
  const cpuColumn = out.cpu;
  const ipHiColumn = out.ipHi;
  const ipLoColumn = out.ipLo;
  const ringColumn = out.ring;
  const offsetColumn = out.offset;
  // end row-writer
  const SAMPLE = RecordType.SAMPLE;
  // The layout of `layoutPosition` in locals: a snapshot's samples are mostly of one event.
  let layoutPosition = -1;
  let event = 0;
  let pidTid = -1;
  let cpuAt = -1;
  let ip = -1;
  // The event position of the rows the fast loop writes: samples whose layout has every field a
  // row reads (pid/tid, cpu and ip, as Ringside's own events always have); -1 until one is met.
  let fastPosition = -1;
  const flat = out.flat();
  const fast: FastRuns = {
    times,
    shift,
    words,
    offsetsOf,
    positionsOf,
    onlyOf,
    firstOf,
    keyed,
    flat,
    position: -1,
    event: 0,
    pidTid: 0,
    cpu: 0,
    ip: 0,
    pending: false,
  };
  let to = slice.at;
  // True when the cursor holds the rest of a run that scatterFastRuns is to take up again.
  let resume = false;
  for (;;) {
    // Runs of the fast layout's samples go through scatterFastRuns; it hands back the run it does
    // not take (the rest of it, when it stopped inside) for the row code below, which writes rows
    // one at a time until it meets one of the fast layout again and hands the rest back.
    if (fastPosition >= 0) {
      to = scatterFastRuns(cursor, fast, to, resume);
      resume = false;
      if (!fast.pending) break;
    } else if (!cursor.nextRun()) {
      break;
    }
    const r = cursor.ring;
    const from = cursor.from;
    const length = cursor.length;
    const source = sources[r];
    const time = times[r];
    const amount = shift[r];
    if (source.kind === 'rows') {
      copyShifted(out, to, source.rows.set, source.rows.first + from, length, amount);
      to += length;
      continue;
    }
    if (source.kind === 'uniform') throw new Error(`ring ${r} is read in place, which only a snapshot memory's merge does`);
    const u32 = words[r];
    const offsets = offsetsOf[r];
    const positions = positionsOf[r];
    // One event for the whole ring: no read of the positions (a memory stream less per ring).
    const only = onlyOf[r];
    const start = firstOf[r] + from;
    const ringCpu = cpuOf[r];
    for (let j = 0; j < length; j++, to++) {
      if (j > 0 && fastPosition >= 0 && (only >= 0 ? only === fastPosition : positions[start + j] === fastPosition)) {
        cursor.from = from + j;
        cursor.length = length - j;
        resume = true;
        break;
      }
      const o = offsets[start + j];
      const p = only >= 0 ? only : positions[start + j];
      if (p === OTHER_RECORD) {
        // decodeRing writes this row itself; its time is then the key moved onto the origin, as for the others.
        const state = source.keys.state;
        decodeOneRecord(u32, source.ring, validEnd(source.ring), o, out, to, state.baseHi, state.baseLo, tables);
        timeColumn[to] = time[from + j] + amount;
        ringColumn[to] = r;
        continue;
      }
      if (p !== layoutPosition) {
        const layout = layouts[p];
        layoutPosition = p;
        event = indexOf[p];
        pidTid = layout.pidTid;
        cpuAt = layout.cpu;
        ip = layout.ip;
        if (fastPosition < 0 && pidTid >= 0 && cpuAt >= 0 && ip >= 0) {
          fastPosition = p;
          fast.position = p;
          fast.event = event;
          fast.pidTid = pidTid;
          fast.cpu = cpuAt;
          fast.ip = ip;
        }
      }
      timeColumn[to] = time[from + j] + amount;
      // row-writer ts-typed-store omit=time row=to words=u32 type=SAMPLE event=event ring=r o=o fieldsFrom=o pidTid=pidTid cpu=cpuAt ip=ip ringCpu=ringCpu
      // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
      kindColumn[to] = SAMPLE;
      miscColumn[to] = u32[(o >>> 2) + 1];
      eventColumn[to] = event;
      ringColumn[to] = r;
      offsetColumn[to] = o;
      if (pidTid >= 0) {
        const pidTidWord = (o + pidTid) >>> 2;
        pidColumn[to] = u32[pidTidWord] | 0;
        tidColumn[to] = u32[pidTidWord + 1] | 0;
      } else {
        pidColumn[to] = -1;
        tidColumn[to] = -1;
      }
      if (cpuAt >= 0) {
        const cpuWord = (o + cpuAt) >>> 2;
        cpuColumn[to] = u32[cpuWord] | 0;
      } else {
        cpuColumn[to] = ringCpu;
      }
      if (ip >= 0) {
        const ipWord = (o + ip) >>> 2;
        ipLoColumn[to] = u32[ipWord];
        ipHiColumn[to] = u32[ipWord + 1];
      } else {
        ipLoColumn[to] = 0;
        ipHiColumn[to] = 0;
      }
      // end row-writer
    }
  }
}

/** What scatterFastRuns reads: scatterSlice's per-ring arrays (by ring number) and the fast layout; `pending` is its answer. */
interface FastRuns {
  readonly times: readonly Float64Array[];
  readonly shift: ArrayLike<number>;
  readonly words: readonly Uint32Array[];
  readonly offsetsOf: readonly Uint32Array[];
  readonly positionsOf: readonly Uint16Array[];
  readonly onlyOf: Int32Array;
  readonly firstOf: Int32Array;
  /** 1 for a keyed ring, 0 for one copied as rows. */
  readonly keyed: Uint8Array;
  readonly flat: FlatColumns;
  /** The fast layout: event position, event index, and the sample offsets of pid/tid, cpu and ip (all present). */
  position: number;
  event: number;
  pidTid: number;
  cpu: number;
  ip: number;
  /** Set on return: true when the cursor holds a run (or the rest of one) this did not write, false when the merge is done. */
  pending: boolean;
}

/**
 * scatterSlice's innermost loop: takes the merge's runs from `cursor` (starting with the one it
 * holds when `resume`) while they are samples of the fast layout in keyed rings and writes each
 * row from row `to` on, through the flat views (FlatColumns says why) with no test per field: the
 * same row as scatterSlice's row code writes for such a sample. Returns the row after the last it wrote. A function of its own, cursor
 * included, so that the loop's values stay few enough for V8 to keep them untagged in registers
 * (decodeSampleRun in decode-ring.ts says why); in scatterSlice, beside its general row code, the
 * same loop took 10.7 ns a row. The only place such rows are written.
 */
function scatterFastRuns(cursor: MergeCursor, fast: FastRuns, to: number, resume: boolean): number {
  const { times, shift, words, offsetsOf, positionsOf, onlyOf, firstOf, keyed } = fast;
  const { f64, u32: w32, u16: w16, u8: w8, at } = fast.flat;
  // row-writer ts-flat-at
  // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
  const timeAt = at.time;
  const kindAt = at.kind;
  const miscAt = at.misc;
  const eventAt = at.event;
  const pidAt = at.pid;
  const tidAt = at.tid;
  const cpuAt = at.cpu;
  const ipHiAt = at.ipHi;
  const ipLoAt = at.ipLo;
  const ringAt = at.ring;
  const offsetAt = at.offset;
  // end row-writer
  const position = fast.position,
    event = fast.event,
    pidTid = fast.pidTid,
    cpu = fast.cpu,
    ip = fast.ip;
  const SAMPLE = RecordType.SAMPLE;
  // `resume`: the cursor already holds the run to start with (the rest of one scatterSlice handed back).
  let held = resume;
  while (held || cursor.nextRun()) {
    held = false;
    const r = cursor.ring;
    const from = cursor.from;
    const length = cursor.length;
    const only = onlyOf[r];
    if (keyed[r] === 0 || (only >= 0 && only !== position)) {
      fast.pending = true;
      return to;
    }
    const positions = only >= 0 ? null : positionsOf[r];
    const u32 = words[r];
    const offsets = offsetsOf[r];
    const time = times[r];
    const amount = shift[r];
    const start = firstOf[r] + from;
    const stop = start + length;
    // Key k of this ring is row k + rowFromKey of the output and time k + keyToTime of `time`.
    const rowFromKey = to - start;
    const keyToTime = from - start;
    let k = start;
    for (; k < stop; k++) {
      if (positions !== null && positions[k] !== position) break;
      const o = offsets[k];
      const row = k + rowFromKey;
      const rowTime = time[k + keyToTime] + amount;
      // row-writer ts-flat-store row=row o=o words=u32 time=rowTime type=SAMPLE event=event ring=r pidTid=pidTid cpu=cpu ip=ip
      // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
      f64[timeAt + row] = rowTime;
      w8[kindAt + row] = SAMPLE;
      w16[miscAt + row] = u32[(o >>> 2) + 1];
      w16[eventAt + row] = event;
      w16[ringAt + row] = r;
      w32[offsetAt + row] = o;
      const pidTidWord = (o + pidTid) >>> 2;
      w32[pidAt + row] = u32[pidTidWord];
      w32[tidAt + row] = u32[pidTidWord + 1];
      w32[cpuAt + row] = u32[(o + cpu) >>> 2];
      const ipWord = (o + ip) >>> 2;
      w32[ipLoAt + row] = u32[ipWord];
      w32[ipHiAt + row] = u32[ipWord + 1];
      // end row-writer
    }
    const done = k - start;
    to += done;
    if (k < stop) {
      // The rest of this run, from its first row of another kind, is scatterSlice's.
      cursor.from = from + done;
      cursor.length = length - done;
      fast.pending = true;
      return to;
    }
  }
  fast.pending = false;
  return to;
}

/** Stands for a keyed ring's rows before scatterSlice writes them into the output (a set of no rows). */
export const UNPLACED = new ColumnSet(0);

/** `decodes` with each keyed ring's rows (UNPLACED) in `out`, the set scatterSlice wrote the merge into. */
export function placedIn(out: ColumnSet, decodes: readonly RingDecode[]): RingDecode[] {
  return decodes.map((decode) => (decode.rows.set === UNPLACED ? { ...decode, rows: { set: out, first: 0, count: decode.rows.count } } : decode));
}

const NO_WORDS = new Uint32Array(0);
const NO_POSITIONS = new Uint16Array(0);
