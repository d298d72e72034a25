// Bulk decode of every ring of a snapshot into typed-array columns, oldest first, merged across
// rings by time. Hot path: u32 reads at precomputed offsets, no object and no BigInt per record.
//
// Speed (bench: decode_vs_c): each ring's bytes are read ONCE. A backward ring is newest first in
// memory, so its rows are written from the top of the columns down (no counting pass, no offsets
// list, no reversal); the columns are sized from the newest record and grown when records turn out
// smaller. Times are written straight as doubles relative to a base time (u32 halves subtracted
// first: exact for spans < 2^53 ns); the base is the snapshot's smallest time when a side-band ring
// already gave it, else the ring's probable oldest record, so the usual case needs no fix-up pass.
// The origin is the smallest time seen; a ring whose base differs is shifted onto it afterwards.
//
// Order: each ring is already in the kernel's write order; rings are merged with a k-way heap on
// the record time. A record without a time (no PERF_SAMPLE_TIME, or a side-band record without
// sample_id_all) takes the merge key of the record before it in its ring (or sorts before
// everything when it is the first), so it stays next to its ring neighbours. The merge key never
// decreases inside one ring (running maximum), so each ring's own order is always preserved: the
// kernel's write order wins over tiny cross-CPU clock skews.
//
// Byte order: rings are in the kernel's (= this host's) byte order and the u32 views read host
// order; every platform Ringside runs on (x86_64, aarch64) is little endian, as record.ts assumes.

import { RecordType } from '../abi/uapi';
import { computeParseInfo, idLocator, type ParseInfo } from './parse-info';
import type { DecodeAnomaly, DecodedSnapshot, RecordColumns, RingCoverage } from './types';
import type { EventDescription, RawSnapshot, RingCopy } from '../abi/snapshot';
import { isWholeRecord, placeLostBeforePartner, scanRing, u32View, walkEndAnomaly } from './walk';
import type { ColumnArena } from './arena';

/** Where the decoder gets column sets and gives back the ones it no longer needs. */
interface SetSource {
  take(rows: number): ColumnSet;
  give(set: ColumnSet): void;
}

/** No arena: fresh sets, left to the GC. */
const FRESH_SETS: SetSource = { take: (rows) => new ColumnSet(rows), give: () => undefined };

const TWO_32 = 4294967296;
/** Anomaly objects kept per ring (all are counted in the ring's coverage). */
export const MAX_ANOMALIES_KEPT_PER_RING = 64;

/** Per-event offsets flattened for the hot loop (all byte offsets; -1 = absent). */
interface HotLayout {
  readonly ip: number;
  readonly pidTid: number;
  readonly time: number;
  readonly cpu: number;
  /** Smallest SAMPLE size holding every fixed-prefix field. */
  readonly sampleMin: number;
  readonly trailerSize: number;
  readonly trPidTid: number;
  readonly trTime: number;
  readonly trCpu: number;
}

function hotLayout(info: ParseInfo): HotLayout {
  return {
    ip: info.sample.ip,
    pidTid: info.sample.pidTid,
    time: info.sample.time,
    cpu: info.sample.cpu,
    sampleMin: info.sample.fixedEnd,
    trailerSize: info.trailer.size,
    trPidTid: info.trailer.pidTidFromEnd,
    trTime: info.trailer.timeFromEnd,
    trCpu: info.trailer.cpuFromEnd,
  };
}

/** Maps kernel sample ids (as u32 halves) to positions in the events array, without BigInt. */
class IdTable {
  private readonly small = new Map<number, number>();
  private readonly large = new Map<string, number>();
  readonly size: number;

  constructor(events: readonly EventDescription[]) {
    let size = 0;
    for (let position = 0; position < events.length; position++) {
      const event = events[position];
      for (const id of event.ids) {
        const u = BigInt.asUintN(64, id);
        const hi = Number(u >> 32n);
        const lo = Number(u & 0xffffffffn);
        if (hi < 0x200000) this.small.set(hi * TWO_32 + lo, position);
        else this.large.set(`${hi}:${lo}`, position);
        size++;
      }
    }
    this.size = size;
  }

  lookup(hi: number, lo: number): number {
    const found = hi < 0x200000 ? this.small.get(hi * TWO_32 + lo) : this.large.get(`${hi}:${lo}`);
    return found === undefined ? -1 : found;
  }
}

/** Everything decodeSnapshot needs; a RawSnapshot is accepted as is. */
export interface SnapshotInput {
  readonly events: readonly EventDescription[];
  readonly rings: readonly RingCopy[];
}

const parseInfoCache = new WeakMap<object, ParseInfo>();

/** Parse info of an event's attr, computed once per attr object. */
export function parseInfoFor(event: EventDescription): ParseInfo {
  let info = parseInfoCache.get(event.attr);
  if (!info) {
    info = computeParseInfo(event.attr);
    parseInfoCache.set(event.attr, info);
  }
  return info;
}


/** Rows [first, first + count) of `columns` as subarray views (no copy). */
export function columnRows(columns: Omit<RecordColumns, 'length' | 'timeOriginNs'>, timeOriginNs: bigint, first: number, count: number): RecordColumns {
  const stop = first + count;
  return {
    length: count,
    timeOriginNs,
    time: columns.time.subarray(first, stop),
    kind: columns.kind.subarray(first, stop),
    misc: columns.misc.subarray(first, stop),
    event: columns.event.subarray(first, stop),
    pid: columns.pid.subarray(first, stop),
    tid: columns.tid.subarray(first, stop),
    cpu: columns.cpu.subarray(first, stop),
    ipHi: columns.ipHi.subarray(first, stop),
    ipLo: columns.ipLo.subarray(first, stop),
    ring: columns.ring.subarray(first, stop),
    offset: columns.offset.subarray(first, stop),
  };
}

/** Bytes one row takes across all columns: time 8, pid/tid/cpu/ipHi/ipLo/offset 4 each, misc/event/ring 2 each, kind 1. */
export const COLUMN_BYTES_PER_ROW = 8 + 6 * 4 + 3 * 2 + 1;

/**
 * One typed array per column, all views of ONE buffer (one allocation, one ownership handle);
 * `time` is relative to the owning ring's time base until merged. Widest columns first, so every
 * view is aligned. `length` is the capacity in rows.
 */
export class ColumnSet {
  readonly time: Float64Array;
  readonly kind: Uint8Array;
  readonly misc: Uint16Array;
  readonly event: Uint16Array;
  readonly pid: Int32Array;
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly ipHi: Uint32Array;
  readonly ipLo: Uint32Array;
  readonly ring: Uint16Array;
  readonly offset: Uint32Array;
  readonly buffer: ArrayBuffer | SharedArrayBuffer;

  /** `buffer` (at least length * COLUMN_BYTES_PER_ROW bytes) lets the caller choose shared memory. */
  constructor(readonly length: number, buffer?: ArrayBuffer | SharedArrayBuffer) {
    const bytes = length * COLUMN_BYTES_PER_ROW;
    if (buffer && buffer.byteLength < bytes) throw new RangeError(`a column set of ${length} rows needs ${bytes} bytes, the buffer has ${buffer.byteLength}`);
    this.buffer = buffer ?? new ArrayBuffer(bytes);
    const b = this.buffer;
    let at = 0;
    this.time = new Float64Array(b, at, length); at += 8 * length;
    this.pid = new Int32Array(b, at, length); at += 4 * length;
    this.tid = new Int32Array(b, at, length); at += 4 * length;
    this.cpu = new Int32Array(b, at, length); at += 4 * length;
    this.ipHi = new Uint32Array(b, at, length); at += 4 * length;
    this.ipLo = new Uint32Array(b, at, length); at += 4 * length;
    this.offset = new Uint32Array(b, at, length); at += 4 * length;
    this.misc = new Uint16Array(b, at, length); at += 2 * length;
    this.event = new Uint16Array(b, at, length); at += 2 * length;
    this.ring = new Uint16Array(b, at, length); at += 2 * length;
    this.kind = new Uint8Array(b, at, length);
  }

  /** Rows [first, first + count) as columns: the arrays themselves when that is all of them, views otherwise. */
  toColumns(timeOriginNs: bigint, first = 0, count = this.length): RecordColumns {
    if (first === 0 && count === this.length) {
      const { length, time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset } = this;
      return { length, timeOriginNs, time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset };
    }
    return columnRows(this, timeOriginNs, first, count);
  }

  /** Moves rows [from, from + count) of this set to rows [to, to + count) (native, overlap-safe). */
  moveRows(from: number, count: number, to: number): void {
    const stop = from + count;
    this.time.copyWithin(to, from, stop);
    this.kind.copyWithin(to, from, stop);
    this.misc.copyWithin(to, from, stop);
    this.event.copyWithin(to, from, stop);
    this.pid.copyWithin(to, from, stop);
    this.tid.copyWithin(to, from, stop);
    this.cpu.copyWithin(to, from, stop);
    this.ipHi.copyWithin(to, from, stop);
    this.ipLo.copyWithin(to, from, stop);
    this.ring.copyWithin(to, from, stop);
    this.offset.copyWithin(to, from, stop);
  }

  /** Exchanges rows a and b. */
  swapRows(a: number, b: number): void {
    for (const column of [this.time, this.kind, this.misc, this.event, this.pid, this.tid, this.cpu, this.ipHi, this.ipLo, this.ring, this.offset]) {
      const kept = column[a];
      column[a] = column[b];
      column[b] = kept;
    }
  }

  /** Copies rows [from, from + count) of `source` to rows [to, to + count) of this set (native copies). */
  copyRows(source: ColumnSet, from: number, count: number, to: number): void {
    const stop = from + count;
    this.time.set(source.time.subarray(from, stop), to);
    this.kind.set(source.kind.subarray(from, stop), to);
    this.misc.set(source.misc.subarray(from, stop), to);
    this.event.set(source.event.subarray(from, stop), to);
    this.pid.set(source.pid.subarray(from, stop), to);
    this.tid.set(source.tid.subarray(from, stop), to);
    this.cpu.set(source.cpu.subarray(from, stop), to);
    this.ipHi.set(source.ipHi.subarray(from, stop), to);
    this.ipLo.set(source.ipLo.subarray(from, stop), to);
    this.ring.set(source.ring.subarray(from, stop), to);
    this.offset.set(source.offset.subarray(from, stop), to);
  }
}

/** One ring's decoded rows: rows [first, first + count) of `set`, oldest first. */
interface RingRows {
  readonly set: ColumnSet;
  readonly first: number;
  readonly count: number;
}

/** What decoding the events of one snapshot needs, computed once. */
interface EventTables {
  readonly layouts: readonly HotLayout[];
  readonly infos: readonly ParseInfo[];
  /** events[position].index, by position. */
  readonly indexOf: Uint16Array;
  readonly ids: IdTable;
  readonly positionOf: ReadonlyMap<number, number>;
}

/** What decoding one ring accumulates; decodeRing picks it up and hands it back, so a pass can resume. */
interface RingState {
  /** Byte offset of the next record to decode. */
  offset: number;
  lost: number;
  anomalies: number;
  /** The time every `time` of this ring is relative to, as u32 halves; baseHi = -1 until the first timed record. */
  baseHi: number;
  baseLo: number;
  /** Smallest / largest relative time (Infinity / -Infinity when none) and the u32 index of that time in the ring. */
  minRel: number;
  maxRel: number;
  minAt: number;
  maxAt: number;
}

function freshState(baseHi: number, baseLo: number): RingState {
  return { offset: 0, lost: 0, anomalies: 0, baseHi, baseLo, minRel: Infinity, maxRel: -Infinity, minAt: 0, maxAt: 0 };
}

/** Largest integer a double holds exactly: relative times up to this (104 days) are exact. */
const MAX_EXACT = 2 ** 53;

/** False when some time lies 2^53 ns or more from the base (a damaged time): relative times may be rounded. */
function isExact(state: RingState): boolean {
  return state.minRel >= -MAX_EXACT && state.maxRel <= MAX_EXACT;
}

/**
 * The hot loop: decodes at most `maxCount` consecutive whole records of one ring from byte
 * state.offset up to `end` (memory order), writing the i-th into row firstRow + i * step, so a
 * backward ring (newest first in memory) lands oldest first with step -1 in a single pass. Stops
 * early at a header that is not a whole record (walkEndAnomaly names why). Times are written
 * relative to (state.baseHi, state.baseLo); with baseHi = -1 the first timed record becomes the base.
 * Returns the number of records decoded. Kept in its own function so V8 optimises it in isolation.
 */
function decodeRing(
  u32: Uint32Array, ring: RingCopy, end: number, maxCount: number, out: ColumnSet, firstRow: number, step: number,
  state: RingState, tables: EventTables, anomalies: DecodeAnomaly[],
): number {
  const { layouts, indexOf, ids, positionOf } = tables;
  const defaultPosition = positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const locator = defaultInfo ? idLocator(defaultInfo) : { sampleIdOffset: -1, otherIdFromEnd: -1 };
  const sampleIdOffset = ids.size > 0 ? locator.sampleIdOffset : -1;
  const otherIdFromEnd = ids.size > 0 ? locator.otherIdFromEnd : -1;
  const ringCpu = ring.cpu;
  const haveEvents = layouts.length > 0;
  const { time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, offset } = out;
  // Constants as locals: module-level ones are context loads (and RecordType.SAMPLE two property loads) per use.
  const SAMPLE = RecordType.SAMPLE;
  const twoTo32 = TWO_32;
  let baseHi = state.baseHi;
  let baseLo = state.baseLo;
  let lastIdHi = -1;
  let lastIdLo = -1;
  let lastPosition = defaultPosition;
  // The sample layout of `layoutPosition`, in locals: samples of one event reuse them record after record.
  let layoutPosition = -1;
  let sTime = -1;
  let sPidTid = -1;
  let sCpu = -1;
  let sIp = -1;
  let sMin = 0;
  let lost = state.lost;
  let anomalyCount = state.anomalies;
  // Every anomaly is counted, but only the first few per ring are kept as objects: a ring full of
  // unknown ids must not turn into one object per record.
  const note = (anomaly: DecodeAnomaly) => {
    if (anomalyCount < MAX_ANOMALIES_KEPT_PER_RING) anomalies.push(anomaly);
    anomalyCount++;
  };
  let minRel = state.minRel;
  let maxRel = state.maxRel;
  let minAt = state.minAt;
  let maxAt = state.maxAt;
  let o = state.offset;
  let row = firstRow;
  let decoded = 0;

  for (; decoded < maxCount && o + 8 <= end; decoded++, row += step) {
    // Fast path: a run of samples of the event the previous sample belonged to (a flight recorder
    // is mostly that). No calls in this loop, so V8 keeps the columns' pointers in registers.
    // Any other record falls through to the general code below, which handles it completely.
    if (layoutPosition >= 0 && (sampleIdOffset >= 0 ? lastPosition === layoutPosition : layoutPosition === defaultPosition)) {
      const fastEvent = indexOf[layoutPosition];
      for (; decoded < maxCount && o + 8 <= end; decoded++, row += step) {
        const w = o >>> 2;
        const sizeMisc = u32[w + 1];
        const size = sizeMisc >>> 16;
        if (u32[w] !== SAMPLE || size < sMin || (size & 7) !== 0 || o + size > end) break;
        if (sampleIdOffset >= 0) {
          if (sampleIdOffset + 8 > size) break;
          const idw = (o + sampleIdOffset) >>> 2;
          if (u32[idw] !== lastIdLo || u32[idw + 1] !== lastIdHi) break;
        }
        kind[row] = SAMPLE;
        misc[row] = sizeMisc & 0xffff;
        event[row] = fastEvent;
        offset[row] = o;
        if (sTime >= 0) {
          const tw = (o + sTime) >>> 2;
          const lo = u32[tw];
          const hi = u32[tw + 1];
          if (baseHi < 0) {
            baseHi = hi;
            baseLo = lo;
          }
          const rel = (hi - baseHi) * twoTo32 + (lo - baseLo);
          time[row] = rel;
          if (rel < minRel) {
            minRel = rel;
            minAt = tw;
          }
          if (rel > maxRel) {
            maxRel = rel;
            maxAt = tw;
          }
        } else {
          time[row] = NaN;
        }
        if (sPidTid >= 0) {
          const pw = (o + sPidTid) >>> 2;
          pid[row] = u32[pw] | 0;
          tid[row] = u32[pw + 1] | 0;
        } else {
          pid[row] = -1;
          tid[row] = -1;
        }
        cpu[row] = sCpu >= 0 ? u32[(o + sCpu) >>> 2] | 0 : ringCpu;
        if (sIp >= 0) {
          const iw = (o + sIp) >>> 2;
          ipLo[row] = u32[iw];
          ipHi[row] = u32[iw + 1];
        } else {
          // Every column of every row is written: rows may land in reused (arena) memory.
          ipLo[row] = 0;
          ipHi[row] = 0;
        }
        o += size;
      }
      if (decoded >= maxCount || o + 8 > end) break;
    }

    const w = o >>> 2;
    const type = u32[w];
    const sizeMisc = u32[w + 1];
    const size = sizeMisc >>> 16;
    if (size < 8 || (size & 7) !== 0 || o + size > end) break; // not a whole record: the walk ends here
    const recordEnd = o + size;
    let position = defaultPosition;
    let t = -1;
    let ptOffset = -1;
    let cpuOffset = -1;
    let ipOffset = -1;

    if (type === RecordType.SAMPLE) {
      if (sampleIdOffset >= 0 && sampleIdOffset + 8 <= size) {
        const idw = (o + sampleIdOffset) >>> 2;
        const lo = u32[idw];
        const hi = u32[idw + 1];
        if (lo === lastIdLo && hi === lastIdHi) {
          position = lastPosition;
        } else {
          const found = ids.lookup(hi, lo);
          if (found >= 0) {
            position = found;
            lastIdHi = hi;
            lastIdLo = lo;
            lastPosition = position;
          } else {
            note({ ringId: ring.ringId, offset: o, kind: 'unknown-event-id', detail: `sample id ${hi * TWO_32 + lo} matches no event` });
          }
        }
      }
      if (position !== layoutPosition && haveEvents) {
        const layout = layouts[position];
        layoutPosition = position;
        sTime = layout.time;
        sPidTid = layout.pidTid;
        sCpu = layout.cpu;
        sIp = layout.ip;
        sMin = layout.sampleMin;
      }
      if (!haveEvents || size < sMin) {
        note({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail: `sample of ${size} bytes is shorter than its fixed fields` });
      } else {
        if (sTime >= 0) t = o + sTime;
        if (sPidTid >= 0) ptOffset = o + sPidTid;
        if (sCpu >= 0) cpuOffset = o + sCpu;
        if (sIp >= 0) ipOffset = o + sIp;
      }
    } else {
      if (otherIdFromEnd >= 0 && size >= 8 + otherIdFromEnd) {
        const idw = (recordEnd - otherIdFromEnd) >>> 2;
        const found = ids.lookup(u32[idw + 1], u32[idw]);
        if (found >= 0) position = found;
      }
      if (haveEvents) {
        const layout = layouts[position];
        if (layout.trailerSize > 0) {
          if (size >= 8 + layout.trailerSize) {
            if (layout.trTime >= 0) t = recordEnd - layout.trTime;
            if (layout.trPidTid >= 0) ptOffset = recordEnd - layout.trPidTid;
            if (layout.trCpu >= 0) cpuOffset = recordEnd - layout.trCpu;
          } else if (type <= RecordType.CALLCHAIN_DEFERRED) {
            note({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail: `record type ${type} of ${size} bytes is too short for its sample_id trailer` });
          }
        }
      }
      // Records about a task carry its pid/tid in the body: more meaningful than the trailer's.
      switch (type) {
        case RecordType.MMAP:
        case RecordType.COMM:
        case RecordType.MMAP2:
        case RecordType.ITRACE_START:
        case RecordType.READ:
        case RecordType.NAMESPACES:
          if (size >= 16) ptOffset = o + 8;
          break;
        case RecordType.FORK:
        case RecordType.EXIT:
          if (size >= 32) {
            ptOffset = -2;
            pid[row] = u32[w + 2] | 0;
            tid[row] = u32[w + 4] | 0;
            if (t < 0) t = o + 24;
          }
          break;
        case RecordType.THROTTLE:
        case RecordType.UNTHROTTLE:
          if (t < 0 && size >= 16) t = o + 8;
          break;
        case RecordType.LOST:
          if (size >= 24) lost += u32[w + 5] * TWO_32 + u32[w + 4];
          break;
        case RecordType.LOST_SAMPLES:
          if (size >= 16) lost += u32[w + 3] * TWO_32 + u32[w + 2];
          break;
        default:
          break;
      }
    }

    kind[row] = type > 254 ? 255 : type;
    misc[row] = sizeMisc & 0xffff;
    event[row] = haveEvents ? indexOf[position] : 0;
    offset[row] = o;
    if (t >= 0) {
      const tw = t >>> 2;
      const lo = u32[tw];
      const hi = u32[tw + 1];
      if (baseHi < 0) {
        baseHi = hi;
        baseLo = lo;
      }
      // Exact: both halves' differences are small integers, and the result is below 2^53 for any span under 104 days.
      const rel = (hi - baseHi) * twoTo32 + (lo - baseLo);
      time[row] = rel;
      if (rel < minRel) {
        minRel = rel;
        minAt = tw;
      }
      if (rel > maxRel) {
        maxRel = rel;
        maxAt = tw;
      }
    } else {
      time[row] = NaN;
    }
    if (ptOffset >= 0) {
      const pw = ptOffset >>> 2;
      pid[row] = u32[pw] | 0;
      tid[row] = u32[pw + 1] | 0;
    } else if (ptOffset === -1) {
      pid[row] = -1;
      tid[row] = -1;
    }
    cpu[row] = cpuOffset >= 0 ? u32[cpuOffset >>> 2] | 0 : ringCpu;
    if (ipOffset >= 0) {
      const iw = ipOffset >>> 2;
      ipLo[row] = u32[iw];
      ipHi[row] = u32[iw + 1];
    } else {
      ipLo[row] = 0;
      ipHi[row] = 0;
    }
    o = recordEnd;
  }
  state.offset = o;
  state.lost = lost;
  state.anomalies = anomalyCount;
  state.baseHi = baseHi;
  state.baseLo = baseLo;
  state.minRel = minRel;
  state.maxRel = maxRel;
  state.minAt = minAt;
  state.maxAt = maxAt;
  return decoded;
}

/** A u64 time from its u32 halves. */
function timeNs(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** Some room over an estimated row count, so that slightly smaller records than estimated need no regrowth. */
function withSlack(rows: number): number {
  return Math.ceil(rows * 1.0625) + 16;
}

/**
 * A backward ring in ONE pass over its bytes: records come newest first in memory and are written
 * from the top of the arrays down, so they end oldest first without a counting pass or a reversal.
 * The arrays are sized from the newest record's size (flight-recorder records are mostly alike) and
 * grown from the average size so far when records turn out smaller. Rows below `first` are never
 * touched, so their pages are never faulted in.
 */
function decodeBackward(
  u32: Uint32Array, ring: RingCopy, ringNumber: number, end: number, state: RingState, tables: EventTables, anomalies: DecodeAnomaly[], known: TimeMark, sets: SetSource,
): RingRows {
  const newestSize = end >= 8 ? u32[1] >>> 16 : 0;
  if (state.baseHi < 0 && newestSize >= 8) chooseBase(u32, ring, end, newestSize, state, tables, known);
  let capacity = newestSize >= 8 ? withSlack(Math.floor(end / newestSize)) : 0;
  let set = sets.take(capacity);
  // A set from an arena may be larger than asked: its top rows are used, as if it were the size asked.
  capacity = set.length;
  let rows = 0;
  for (;;) {
    rows += decodeRing(u32, ring, end, capacity - rows, set, capacity - 1 - rows, -1, state, tables, anomalies);
    if (rows < capacity || !isWholeRecord(u32, state.offset, end)) break;
    // Out of room with records left: grow, keeping the rows decoded so far at the top.
    const grown = rows + withSlack(Math.ceil((end - state.offset) / (state.offset / rows)));
    const bigger = sets.take(grown);
    bigger.copyRows(set, 0, capacity, bigger.length - capacity);
    sets.give(set);
    set = bigger;
    capacity = bigger.length;
  }
  const first = capacity - rows;
  set.ring.fill(ringNumber, first, capacity);
  if (sets === FRESH_SETS && first > (rows >> 2) + 1024) {
    // Records were much larger than the newest: exact arrays rather than views pinning unused room.
    const exact = new ColumnSet(rows);
    exact.copyRows(set, first, rows, 0);
    return { set: exact, first: 0, count: rows };
  }
  return { set, first, count: rows };
}

/** Time (u32 halves) of the one record at `offset`, decoded on the side; baseHi = -1 when it has none. */
function probeTime(u32: Uint32Array, ring: RingCopy, end: number, offset: number, tables: EventTables): RingState {
  const probe = freshState(-1, 0);
  probe.offset = offset;
  if (isWholeRecord(u32, offset, end)) decodeRing(u32, ring, end, 1, new ColumnSet(1), 0, 1, probe, tables, []);
  return probe;
}

/**
 * Bases a backward ring's relative times where they need no fix-up pass afterwards: on the
 * snapshot's smallest time known so far (`known`, from rings decoded before: then the ring's shift
 * is 0), else on its probable OLDEST record: where that record would start if every record had the
 * newest one's size. Any base gives the same exact result (the final shift corrects it); a wrong
 * guess only costs that pass. A base not within 2^52 ns before the newest record is not used.
 */
function chooseBase(u32: Uint32Array, ring: RingCopy, end: number, newestSize: number, state: RingState, tables: EventTables, known: TimeMark): void {
  const newest = probeTime(u32, ring, end, 0, tables);
  if (newest.baseHi < 0) return;
  const before = (hi: number, lo: number): number => (newest.baseHi - hi) * TWO_32 + (newest.baseLo - lo);
  const plausible = (span: number): boolean => span >= 0 && span < 2 ** 52;
  const guessed = (Math.floor(end / newestSize) - 1) * newestSize;
  const oldest = guessed > 0 ? probeTime(u32, ring, end, guessed, tables) : null;
  const oldestSpan = oldest && oldest.baseHi >= 0 ? before(oldest.baseHi, oldest.baseLo) : -1;
  if (known.hi >= 0) {
    const knownSpan = before(known.hi, known.lo);
    if (plausible(knownSpan) && (!plausible(oldestSpan) || knownSpan >= oldestSpan)) {
      state.baseHi = known.hi;
      state.baseLo = known.lo;
      return;
    }
  }
  if (oldest && plausible(oldestSpan)) {
    state.baseHi = oldest.baseHi;
    state.baseLo = oldest.baseLo;
  }
}

/** A time as u32 halves; hi = -1: none. */
interface TimeMark {
  hi: number;
  lo: number;
}

/** A forward ring (oldest first in memory): a header pass for the exact count, then one decode pass. */
function decodeForward(u32: Uint32Array, ring: RingCopy, ringNumber: number, end: number, state: RingState, tables: EventTables, anomalies: DecodeAnomaly[], sets: SetSource): RingRows {
  const count = scanRing(ring, u32).count;
  const set = sets.take(count);
  const decoded = decodeRing(u32, ring, end, count, set, 0, 1, state, tables, anomalies);
  set.ring.fill(ringNumber, 0, decoded);
  return { set, first: 0, count: decoded };
}

export interface DecodeOptions {
  /**
   * Take column memory from this arena (see arena.ts) instead of allocating it: the result's
   * columns then belong to the caller until it hands them back with arena.recycle().
   */
  readonly arena?: ColumnArena;
}

/** Decodes every ring of a snapshot into columns (oldest first), coverage facts and anomalies. */
export function decodeSnapshot(raw: RawSnapshot | SnapshotInput, options: DecodeOptions = {}): DecodedSnapshot {
  const arena = options.arena;
  arena?.beginSnapshot();
  const sets: SetSource = arena ?? FRESH_SETS;
  const events = raw.events;
  const rings = raw.rings;
  const infos = events.map(parseInfoFor);
  const positionOf = new Map<number, number>();
  events.forEach((event, position) => positionOf.set(event.index, position));
  const tables: EventTables = {
    layouts: infos.map(hotLayout),
    infos,
    indexOf: Uint16Array.from(events, (event) => event.index),
    ids: new IdTable(events),
    positionOf,
  };
  const anomalies: DecodeAnomaly[] = [];

  const ringCount = rings.length;
  const sources: RingRows[] = new Array<RingRows>(ringCount);
  const states: RingState[] = new Array<RingState>(ringCount);
  const words: Uint32Array[] = new Array<Uint32Array>(ringCount);
  const ringAnomalies: DecodeAnomaly[][] = new Array<DecodeAnomaly[]>(ringCount);
  // The smallest time decoded so far: flight-recorder rings base their times on it when they can.
  const known: TimeMark = { hi: -1, lo: 0 };
  // Side-band (forward) rings first: they are small and usually hold the snapshot's oldest time.
  const decodeOrder = rings.map((_, r) => r).sort((a, b) => Number(rings[a].direction === 'backward') - Number(rings[b].direction === 'backward') || a - b);
  let total = 0;
  let nonEmpty = 0;
  for (const r of decodeOrder) {
    const ring = rings[r];
    const u32 = u32View(ring.bytes);
    const end = Math.max(0, Math.min(ring.validBytes, ring.bytes.length));
    const backward = ring.direction === 'backward';
    const listed: DecodeAnomaly[] = [];
    let state = freshState(-1, 0);
    let rows = backward ? decodeBackward(u32, ring, r, end, state, tables, listed, known, sets) : decodeForward(u32, ring, r, end, state, tables, listed, sets);
    if (!isExact(state)) {
      // Some time lies 2^53 ns or more from the ring's base (a damaged record): decode again
      // against the ring's smallest time, so every record within 104 days of it stays exact.
      const minAt = state.minAt;
      state = freshState(u32[minAt + 1], u32[minAt]);
      listed.length = 0;
      sets.give(rows.set);
      rows = backward ? decodeBackward(u32, ring, r, end, state, tables, listed, known, sets) : decodeForward(u32, ring, r, end, state, tables, listed, sets);
    }
    if (backward) {
      // A LOST record shares one reservation with the record after it (see placeLostBeforePartner).
      const { set, first, count } = rows;
      const nextLost = (from: number): number => {
        const at = set.kind.indexOf(RecordType.LOST, first + from);
        return at >= 0 && at < first + count ? at - first : -1;
      };
      placeLostBeforePartner(nextLost, (a, b) => set.swapRows(first + a, first + b));
    }
    // The record where the walk stopped, if it stopped early, is listed first (as a walk would).
    const stop = walkEndAnomaly(ring, u32, state.offset, end);
    if (stop) {
      listed.unshift(stop);
      // A cut oldest record is what a full flight recorder always has: listed, not counted as a problem.
      if (stop.kind !== 'truncated-oldest') state.anomalies++;
    }
    if (state.baseHi >= 0) {
      const hi = u32[state.minAt + 1];
      const lo = u32[state.minAt];
      if (known.hi < 0 || hi < known.hi || (hi === known.hi && lo < known.lo)) {
        known.hi = hi;
        known.lo = lo;
      }
    }
    ringAnomalies[r] = listed;
    sources[r] = rows;
    states[r] = state;
    words[r] = u32;
    total += rows.count;
    if (rows.count > 0) nonEmpty++;
  }
  for (const listed of ringAnomalies) for (const anomaly of listed) anomalies.push(anomaly);

  // Time origin: the smallest time seen; each ring's shift moves its relative times onto it.
  const smallest = (r: number): bigint => timeNs(words[r][states[r].minAt + 1], words[r][states[r].minAt]);
  const largest = (r: number): bigint => timeNs(words[r][states[r].maxAt + 1], words[r][states[r].maxAt]);
  let origin: bigint | null = null;
  for (let r = 0; r < ringCount; r++) {
    if (states[r].baseHi < 0) continue;
    const oldest = smallest(r);
    if (origin === null || oldest < origin) origin = oldest;
  }
  const timeOriginNs = origin ?? 0n;
  const shift = new Float64Array(ringCount);
  for (let r = 0; r < ringCount; r++) {
    const state = states[r];
    if (state.baseHi >= 0) shift[r] = Number(timeNs(state.baseHi, state.baseLo) - timeOriginNs);
  }

  let result: RingRows;
  if (nonEmpty <= 1) {
    const r = sources.findIndex((rows) => rows.count > 0);
    if (r < 0) {
      result = { set: new ColumnSet(0), first: 0, count: 0 };
    } else {
      result = sources[r];
      if (shift[r] !== 0) addToRange(result.set.time, result.first, result.first + result.count, shift[r]);
    }
  } else {
    result = mergedInPlace(sources, shift, total) ?? { set: merged(sources, shift, total, sets), first: 0, count: total };
  }
  // Every set the decoder took and did not hand out goes back to the arena.
  for (const rows of sources) if (rows.set !== result.set) sets.give(rows.set);
  arena?.endSnapshot(result.count > 0 ? result.set : null);
  const columns = result.set.toColumns(timeOriginNs, result.first, result.count);

  const coverage: RingCoverage[] = rings.map((ring, r) => {
    const state = states[r];
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
      oldestTimeNs: timed ? smallest(r) : null,
      newestTimeNs: timed ? largest(r) : null,
      lostRecords: BigInt(state.lost),
      ...(ring.lostSinceOpen !== undefined ? { lostSinceOpen: ring.lostSinceOpen } : {}),
      anomalies: state.anomalies,
    };
  });

  return { events, rings, columns, coverage, anomalies };
}

/** time[start, stop) += amount (NaN, i.e. no time, stays NaN). */
function addToRange(time: Float64Array, start: number, stop: number, amount: number): void {
  for (let i = start; i < stop; i++) time[i] += amount;
}

/** Runs of consecutive rows of one ring that the merge emits together, in output order. */
export interface MergeRuns {
  readonly ring: Uint32Array;
  /** Index of the run's first row among its ring's rows (0 = the ring's oldest). */
  readonly from: Uint32Array;
  readonly length: Uint32Array;
  readonly count: number;
}

/**
 * K-way merge of the rings' rows by merge key: the running maximum of time + shift[r] inside each
 * ring (no time keeps the previous key, -Infinity at first), ties to the lower ring number, so
 * each ring's own order is always kept. A binary heap picks the ring; it then keeps emitting from
 * that ring while it still beats the best other ring, so a large ring interleaved with a small
 * side-band ring costs a few heap operations, not one per row.
 */
export function mergeRuns(times: readonly Float64Array[], counts: readonly number[], shift: Float64Array): MergeRuns {
  const ringCount = times.length;
  let total = 0;
  for (const count of counts) total += count;
  const key = new Float64Array(ringCount);
  const next = new Int32Array(ringCount);
  const heap = new Int32Array(ringCount);
  let heapSize = 0;
  const less = (a: number, b: number): boolean => key[a] < key[b] || (key[a] === key[b] && a < b);
  const siftDown = (start: number) => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heapSize) return;
      let smallest = left;
      if (left + 1 < heapSize && less(heap[left + 1], heap[left])) smallest = left + 1;
      if (!less(heap[smallest], heap[i])) return;
      const tmp = heap[i];
      heap[i] = heap[smallest];
      heap[smallest] = tmp;
      i = smallest;
    }
  };
  for (let r = 0; r < ringCount; r++) {
    if (counts[r] <= 0) continue;
    const value = times[r][0] + shift[r];
    key[r] = value === value ? value : -Infinity;
    heap[heapSize++] = r;
  }
  for (let i = (heapSize >> 1) - 1; i >= 0; i--) siftDown(i);

  // At most one run per row; pages of these arrays that are never written cost nothing.
  const ring = new Uint32Array(total);
  const from = new Uint32Array(total);
  const length = new Uint32Array(total);
  let runs = 0;
  while (heapSize > 0) {
    const r = heap[0];
    let rival = -1;
    if (heapSize > 1) rival = heapSize > 2 && less(heap[2], heap[1]) ? heap[2] : heap[1];
    const rivalKey = rival >= 0 ? key[rival] : Infinity;
    const time = times[r];
    const stop = counts[r];
    const amount = shift[r];
    const start = next[r];
    let i = start;
    let k = key[r];
    for (;;) {
      i++; // row i - 1, of key k, is emitted
      if (i >= stop) break;
      const value = time[i] + amount;
      if (value === value && value > k) k = value; // NaN (no time) keeps the carried key
      if (rival >= 0 && !(k < rivalKey || (k === rivalKey && r < rival))) break;
    }
    ring[runs] = r;
    from[runs] = start;
    length[runs] = i - start;
    runs++;
    next[r] = i;
    if (i >= stop) heap[0] = heap[--heapSize];
    else key[r] = k;
    siftDown(0);
  }
  return { ring, from, length, count: runs };
}

/** Copies `length` rows of `source` from row `from` to row `to` of `out`, adding `amount` to their times. */
function copyShifted(out: ColumnSet, to: number, source: ColumnSet, from: number, length: number, amount: number): void {
  if (length >= 32) {
    // Long runs: one native copy per column, then the time moved onto the origin.
    out.copyRows(source, from, length, to);
    if (amount !== 0) addToRange(out.time, to, to + length, amount);
    return;
  }
  for (let j = 0; j < length; j++) {
    const a = from + j;
    const b = to + j;
    out.time[b] = source.time[a] + amount;
    out.kind[b] = source.kind[a];
    out.misc[b] = source.misc[a];
    out.event[b] = source.event[a];
    out.pid[b] = source.pid[a];
    out.tid[b] = source.tid[a];
    out.cpu[b] = source.cpu[a];
    out.ipHi[b] = source.ipHi[a];
    out.ipLo[b] = source.ipLo[a];
    out.ring[b] = source.ring[a];
    out.offset[b] = source.offset[a];
  }
}

function runsOf(sources: readonly RingRows[], shift: Float64Array): MergeRuns {
  return mergeRuns(
    sources.map((rows) => rows.set.time.subarray(rows.first, rows.first + rows.count)),
    sources.map((rows) => rows.count),
    shift,
  );
}

/** The rings' rows in merge order, in fresh columns, times moved onto the global origin. */
function merged(sources: readonly RingRows[], shift: Float64Array, total: number, sets: SetSource): ColumnSet {
  const runs = runsOf(sources, shift);
  const out = sets.take(total);
  let to = 0;
  for (let run = 0; run < runs.count; run++) {
    const r = runs.ring[run];
    copyShifted(out, to, sources[r].set, sources[r].first + runs.from[run], runs.length[run], shift[r]);
    to += runs.length[run];
  }
  return out;
}

/**
 * The merge written into the largest ring's own arrays, when the room left below its rows (a
 * backward ring's estimate slack) holds every other ring's rows: no fresh columns. The output
 * rows start that many rows below the host's; writing never overtakes reading, since the output
 * position is at most the host's read position. When the side-band comes first (the usual case)
 * the host's rows stay where they are. Null when there is not enough room.
 */
function mergedInPlace(sources: readonly RingRows[], shift: Float64Array, total: number): RingRows | null {
  let host = 0;
  for (let r = 1; r < sources.length; r++) if (sources[r].count > sources[host].count) host = r;
  const { set, first } = sources[host];
  const others = total - sources[host].count;
  if (first < others) return null;
  const runs = runsOf(sources, shift);
  const start = first - others;
  let to = start;
  for (let run = 0; run < runs.count; run++) {
    const r = runs.ring[run];
    const length = runs.length[run];
    if (r === host) {
      const from = first + runs.from[run];
      if (from !== to) set.moveRows(from, length, to);
      if (shift[r] !== 0) addToRange(set.time, to, to + length, shift[r]);
    } else {
      copyShifted(set, to, sources[r].set, sources[r].first + runs.from[run], length, shift[r]);
    }
    to += length;
  }
  return { set, first: start, count: total };
}
