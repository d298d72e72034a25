// A flight-recorder ring whose records are all of one size, plain samples of one event but for a
// few other records of that size (the LOST record a ring gets after each pause is one), with times
// that never decrease oldest to newest (the usual per-CPU ring of a fixed-size layout: no callchain,
// no raw data): record i from the newest is at byte i * stride, so its offset needs no index and its
// time can be read from the record itself (a sample's from its time field, any other record's from
// its sample_id trailer). The merge then reads each record once and writes its row
// (wasm/merge-scatter.ts, ENTRY_UNIFORM), with no pass that keys the ring first: on the memory bus
// that is the C walker's traffic (one read of the ring, one write of the rows) instead of the keyed
// path's two reads of the ring and the keys written and read back. The other records it meets are
// listed and decoded one by one by the caller (wasm/memory-scatter.ts), as the keyed path decodes
// them.
//
// Whether a ring is uniform is judged here from a few records (the newest, the oldest, evenly
// spaced ones between, and the bytes after the oldest), and the merge checks every record as it
// writes it (size, type, id, time in order). A ring that fails the merge's checks is keyed as before
// and the snapshot merged again, so the columns are always the keyed path's, byte for byte.

import { RecordType } from '../abi/uapi';
import type { RingCopy } from '../abi/snapshot';
import { idLocator } from './parse-info';
import { TWO_32, type EventTables, type RingState } from './decode-ring';
import { u32View, validEnd, walkEndAnomaly } from './walk';
import type { KeyTimes } from './merge';
import type { DecodeAnomaly } from './types';

/** Largest integer a double holds exactly: the span a ring's relative times may have. */
const MAX_EXACT = 2 ** 53;

/** Records looked at before a ring is taken as uniform: enough that a ring of mixed sizes is rarely taken and then found out by the merge. */
const PROBES = 64;

/** A ring taken as uniform: where its records are, their event and id, and what keyRing would have found (if the merge confirms it). */
export interface UniformRing {
  /** Bytes of every record. */
  readonly stride: number;
  /** Records: newest at byte 0, oldest at byte (count - 1) * stride. */
  readonly count: number;
  /** The records' event position in the snapshot's events. */
  readonly position: number;
  /** Byte offset of the sample's id (-1: the ring's records carry none), and the id as u32 halves. */
  readonly sampleIdOffset: number;
  readonly idLo: number;
  readonly idHi: number;
  /** Byte offset of the sample's time. */
  readonly sampleTime: number;
  /** Bytes back from a record's end to the time in its sample_id trailer (-1: the records carry none, so only samples are read in place). */
  readonly otherTimeFromEnd: number;
  /** The records' times oldest first, relative to state.baseHi/baseLo, read from the records. */
  readonly times: KeyTimes;
  readonly state: RingState;
  readonly anomalies: DecodeAnomaly[];
}

/**
 * The time of the record at byte `at` of a uniform ring of `stride`-byte records, relative to
 * (baseHi, baseLo), as the merge reads it: a sample's from its time field (`sampleTime`), any other
 * record's from its sample_id trailer (`otherTimeFromEnd` bytes back from its end); NaN for a record
 * that is neither (no trailer time), which the merge does not read in place.
 */
export function uniformRecordTime(
  words: Uint32Array,
  at: number,
  stride: number,
  sampleTime: number,
  otherTimeFromEnd: number,
  baseHi: number,
  baseLo: number,
): number {
  let w: number;
  if (words[at >>> 2] === RecordType.SAMPLE) w = (at + sampleTime) >>> 2;
  else if (otherTimeFromEnd >= 0) w = (at + stride - otherTimeFromEnd) >>> 2;
  else return NaN;
  return (words[w + 1] - baseHi) * TWO_32 + (words[w] - baseLo);
}

/** Record times oldest first, read from a uniform ring's records in place (key i is record count - 1 - i from the newest). */
class RecordTimes implements KeyTimes {
  constructor(
    private readonly words: Uint32Array,
    private readonly stride: number,
    private readonly sampleTime: number,
    private readonly otherTimeFromEnd: number,
    private readonly baseHi: number,
    private readonly baseLo: number,
    readonly length: number,
  ) {}

  at(index: number): number | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    const at = (this.length - 1 - index) * this.stride;
    return uniformRecordTime(this.words, at, this.stride, this.sampleTime, this.otherTimeFromEnd, this.baseHi, this.baseLo);
  }
}

/**
 * The ring as a uniform ring, or null when it is not one (a different record among those looked
 * at, times out of order among them, a record keyRing would not key, a layout without the fields a
 * merged row reads). Being taken here is a guess the merge confirms record by record.
 */
export function uniformRing(ring: RingCopy, tables: EventTables): UniformRing | null {
  if (ring.direction !== 'backward' || tables.layouts.length === 0) return null;
  const end = validEnd(ring);
  if (end < 8 || (ring.bytes.byteOffset & 7) !== 0) return null;
  const u32 = u32View(ring.bytes);
  const stride = u32[1] >>> 16;
  if (u32[0] !== RecordType.SAMPLE || stride < 8 || (stride & 7) !== 0 || stride > end) return null;
  const defaultPosition = tables.positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const sampleIdOffset = defaultInfo && tables.ids.size > 0 ? idLocator(defaultInfo).sampleIdOffset : -1;
  let position = defaultPosition;
  let idLo = 0;
  let idHi = 0;
  if (sampleIdOffset >= 0) {
    if (sampleIdOffset + 8 > stride) return null;
    idLo = u32[sampleIdOffset >>> 2];
    idHi = u32[(sampleIdOffset >>> 2) + 1];
    position = tables.ids.lookup(idHi, idLo);
    if (position < 0) return null;
  }
  const layout = tables.layouts[position];
  if (!layout || layout.time < 0 || stride < layout.sampleMin || layout.pidTid < 0 || layout.cpu < 0 || layout.ip < 0) return null;
  const count = Math.floor(end / stride);
  // The bytes after the oldest record: keyRing's walk would go on if they held a whole record.
  const tail = count * stride;
  if (tail + 8 <= end) {
    const size = u32[(tail >>> 2) + 1] >>> 16;
    if (size >= 8 && (size & 7) === 0 && tail + size <= end) return null;
  }
  const sampleTime = layout.time;
  // A record of the ring's size that is not a sample is read in place when its trailer holds its time.
  const timeFromEnd = tables.infos[position].trailer.timeFromEnd;
  const otherTimeFromEnd = timeFromEnd >= 8 && timeFromEnd <= stride - 8 ? timeFromEnd : -1;
  const baseLo = u32[sampleTime >>> 2];
  const baseHi = u32[(sampleTime >>> 2) + 1];
  // Records looked at newest first: each of the ring's size, each no newer than the one before; the
  // newest and the oldest samples of the ring's id (they give its time bounds), the others samples
  // of that id or, where a trailer holds their time, other records.
  let newer = 0;
  const probes = Math.min(PROBES, count);
  for (let j = 0; j < probes; j++) {
    const i = probes === 1 ? 0 : Math.round((j * (count - 1)) / (probes - 1));
    const w = (i * stride) >>> 2;
    if (u32[w + 1] >>> 16 !== stride) return null;
    if (u32[w] !== RecordType.SAMPLE) {
      if (j === 0 || j === probes - 1 || otherTimeFromEnd < 0) return null;
    } else if (sampleIdOffset >= 0 && (u32[w + (sampleIdOffset >>> 2)] !== idLo || u32[w + (sampleIdOffset >>> 2) + 1] !== idHi)) {
      return null;
    }
    const rel = uniformRecordTime(u32, i * stride, stride, sampleTime, otherTimeFromEnd, baseHi, baseLo);
    if (!(rel <= newer) || rel < -MAX_EXACT) return null;
    newer = rel;
  }
  const oldestTime = (count - 1) * stride + sampleTime;
  const state: RingState = {
    offset: tail,
    lost: 0,
    lostRecords: 0,
    anomalies: 0,
    baseHi,
    baseLo,
    minRel: newer,
    maxRel: 0,
    minAt: oldestTime >>> 2,
    maxAt: sampleTime >>> 2,
  };
  const anomalies: DecodeAnomaly[] = [];
  const stop = walkEndAnomaly(ring, u32, tail, end);
  if (stop) {
    anomalies.push(stop);
    if (stop.kind !== 'truncated-oldest') state.anomalies++;
  }
  return {
    stride,
    count,
    position,
    sampleIdOffset,
    idLo,
    idHi,
    sampleTime,
    otherTimeFromEnd,
    times: new RecordTimes(u32, stride, sampleTime, otherTimeFromEnd, baseHi, baseLo, count),
    state,
    anomalies,
  };
}
