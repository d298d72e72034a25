// A flight-recorder ring whose records are all plain samples of one event and of one size, with
// times that never decrease oldest to newest (the usual per-CPU ring of a fixed-size layout: no
// callchain, no raw data, no throttling): record i from the newest is at byte i * stride, so its
// offset needs no index and its time can be read from the record itself. The merge then reads each
// record once and writes its row (wasm/merge-scatter.ts, ENTRY_UNIFORM), with no pass that keys the
// ring first: on the memory bus that is the C walker's traffic (one read of the ring, one write of
// the rows) instead of the keyed path's two reads of the ring and the keys written and read back.
//
// Whether a ring is uniform is judged here from a few records (the newest, the oldest, evenly
// spaced ones between, and the bytes after the oldest), and the merge checks every record as it
// writes it (type, size, id, time in order). A ring that fails the merge's checks is keyed as
// before and the snapshot merged again, so the columns are always the keyed path's, byte for byte.

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
  /** The records' times oldest first, relative to state.baseHi/baseLo, read from the records. */
  readonly times: KeyTimes;
  readonly state: RingState;
  readonly anomalies: DecodeAnomaly[];
}

/** Record times oldest first, read from a uniform ring's records in place (key i is record count - 1 - i from the newest). */
class RecordTimes implements KeyTimes {
  constructor(
    private readonly words: Uint32Array, private readonly oldestTime: number, private readonly stride: number, readonly length: number,
    private readonly baseHi: number, private readonly baseLo: number,
  ) {}

  at(index: number): number | undefined {
    if (!(index >= 0 && index < this.length)) return undefined;
    const w = (this.oldestTime - index * this.stride) >>> 2;
    return (this.words[w + 1] - this.baseHi) * TWO_32 + (this.words[w] - this.baseLo);
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
  const baseLo = u32[sampleTime >>> 2];
  const baseHi = u32[(sampleTime >>> 2) + 1];
  // Records looked at newest first: each the same kind of record, each no newer than the one before.
  let newer = 0;
  const probes = Math.min(PROBES, count);
  for (let j = 0; j < probes; j++) {
    const i = probes === 1 ? 0 : Math.round((j * (count - 1)) / (probes - 1));
    const w = (i * stride) >>> 2;
    if (u32[w] !== RecordType.SAMPLE || u32[w + 1] >>> 16 !== stride) return null;
    if (sampleIdOffset >= 0 && (u32[w + (sampleIdOffset >>> 2)] !== idLo || u32[w + (sampleIdOffset >>> 2) + 1] !== idHi)) return null;
    const tw = w + (sampleTime >>> 2);
    const rel = (u32[tw + 1] - baseHi) * TWO_32 + (u32[tw] - baseLo);
    if (!(rel <= newer) || rel < -MAX_EXACT) return null;
    newer = rel;
  }
  const oldestTime = (count - 1) * stride + sampleTime;
  const state: RingState = {
    offset: tail, lost: 0, lostRecords: 0, anomalies: 0, baseHi, baseLo, minRel: newer, maxRel: 0, minAt: oldestTime >>> 2, maxAt: sampleTime >>> 2,
  };
  const anomalies: DecodeAnomaly[] = [];
  const stop = walkEndAnomaly(ring, u32, tail, end);
  if (stop) {
    anomalies.push(stop);
    if (stop.kind !== 'truncated-oldest') state.anomalies++;
  }
  return {
    stride, count, position, sampleIdOffset, idLo, idHi, sampleTime, times: new RecordTimes(u32, oldestTime, stride, count, baseHi, baseLo), state,
    anomalies,
  };
}
