// Bulk decode of every ring of a snapshot into typed-array columns, oldest first, merged across
// rings by time. Hot path: u32 reads at precomputed offsets, no object and no BigInt per record.
//
// Time is kept as two u32 halves while walking; the origin is the smallest time seen, and each
// relative time is (hi - originHi) * 2^32 + (lo - originLo), exact in a double for spans < 2^53 ns.
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

import { RecordType } from '../perf/uapi';
import { computeParseInfo, idLocator, type ParseInfo } from './parse-info';
import type { DecodeAnomaly, DecodedSnapshot, EventDescription, RawSnapshot, RecordColumns, RingCopy, RingCoverage } from './types';
import { walkRing } from './walk';

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

/** A 4-byte aligned u32 view of a ring copy (copies only when the copy is oddly aligned). */
function u32View(bytes: Uint8Array): Uint32Array {
  if ((bytes.byteOffset & 3) === 0) return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  const aligned = new Uint8Array(bytes.length);
  aligned.set(bytes);
  return new Uint32Array(aligned.buffer, 0, bytes.length >>> 2);
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

/** Scratch columns, one slot per walked record, in ring order (ring after ring, oldest first in each). */
class Scratch {
  readonly timeHi: Uint32Array;
  readonly timeLo: Uint32Array;
  readonly hasTime: Uint8Array;
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

  constructor(capacity: number) {
    this.timeHi = new Uint32Array(capacity);
    this.timeLo = new Uint32Array(capacity);
    this.hasTime = new Uint8Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.misc = new Uint16Array(capacity);
    this.event = new Uint16Array(capacity);
    this.pid = new Int32Array(capacity);
    this.tid = new Int32Array(capacity);
    this.cpu = new Int32Array(capacity);
    this.ipHi = new Uint32Array(capacity);
    this.ipLo = new Uint32Array(capacity);
    this.ring = new Uint16Array(capacity);
    this.offset = new Uint32Array(capacity);
  }
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

interface RingResult {
  lost: number;
  anomalies: number;
  /** Smallest and largest time of the ring's timed records as u32 halves; timed = false when none. */
  timed: boolean;
  minHi: number;
  minLo: number;
  maxHi: number;
  maxLo: number;
}

/**
 * The hot loop: fills scratch rows [rowStart, rowStart + offsets.length) from one ring.
 * Kept in its own function so V8 optimises it in isolation.
 */
function decodeRing(ring: RingCopy, ringNumber: number, offsets: Uint32Array, out: Scratch, rowStart: number, tables: EventTables, anomalies: DecodeAnomaly[]): RingResult {
  const u32 = u32View(ring.bytes);
  const { layouts, indexOf, ids, positionOf } = tables;
  const defaultPosition = positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const locator = defaultInfo ? idLocator(defaultInfo) : { sampleIdOffset: -1, otherIdFromEnd: -1 };
  const sampleIdOffset = ids.size > 0 ? locator.sampleIdOffset : -1;
  const otherIdFromEnd = ids.size > 0 ? locator.otherIdFromEnd : -1;
  const ringCpu = ring.cpu;
  const haveEvents = layouts.length > 0;
  const { timeHi, timeLo, hasTime, kind, misc, event, pid, tid, cpu, ipHi, ipLo } = out;
  out.ring.fill(ringNumber, rowStart, rowStart + offsets.length);
  out.offset.set(offsets, rowStart);
  let lastIdHi = -1;
  let lastIdLo = -1;
  let lastPosition = defaultPosition;
  let lost = 0;
  let anomalyCount = 0;
  // Every anomaly is counted, but only the first few per ring are kept as objects: a ring full of
  // unknown ids must not turn into one object per record.
  const note = (anomaly: DecodeAnomaly) => {
    if (anomalyCount < MAX_ANOMALIES_KEPT_PER_RING) anomalies.push(anomaly);
    anomalyCount++;
  };
  let timed = false;
  let minHi = 0;
  let minLo = 0;
  let maxHi = 0;
  let maxLo = 0;
  const n = offsets.length;

  for (let i = 0; i < n; i++) {
    const row = rowStart + i;
    const o = offsets[i];
    const w = o >>> 2;
    const type = u32[w];
    const sizeMisc = u32[w + 1];
    const size = sizeMisc >>> 16;
    const end = o + size;
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
      if (!haveEvents || size < layouts[position].sampleMin) {
        note({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail: `sample of ${size} bytes is shorter than its fixed fields` });
      } else {
        const layout = layouts[position];
        if (layout.time >= 0) t = o + layout.time;
        if (layout.pidTid >= 0) ptOffset = o + layout.pidTid;
        if (layout.cpu >= 0) cpuOffset = o + layout.cpu;
        if (layout.ip >= 0) ipOffset = o + layout.ip;
      }
    } else {
      if (otherIdFromEnd >= 0 && size >= 8 + otherIdFromEnd) {
        const idw = (end - otherIdFromEnd) >>> 2;
        const found = ids.lookup(u32[idw + 1], u32[idw]);
        if (found >= 0) position = found;
      }
      if (haveEvents) {
        const layout = layouts[position];
        if (layout.trailerSize > 0) {
          if (size >= 8 + layout.trailerSize) {
            if (layout.trTime >= 0) t = end - layout.trTime;
            if (layout.trPidTid >= 0) ptOffset = end - layout.trPidTid;
            if (layout.trCpu >= 0) cpuOffset = end - layout.trCpu;
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
    if (t >= 0) {
      const tw = t >>> 2;
      const lo = u32[tw];
      const hi = u32[tw + 1];
      timeLo[row] = lo;
      timeHi[row] = hi;
      hasTime[row] = 1;
      if (!timed) {
        timed = true;
        minHi = maxHi = hi;
        minLo = maxLo = lo;
      } else {
        if (hi < minHi || (hi === minHi && lo < minLo)) {
          minHi = hi;
          minLo = lo;
        }
        if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
          maxHi = hi;
          maxLo = lo;
        }
      }
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
    }
  }
  return { lost, anomalies: anomalyCount, timed, minHi, minLo, maxHi, maxLo };
}

/** Decodes every ring of a snapshot into columns (oldest first), coverage facts and anomalies. */
export function decodeSnapshot(raw: RawSnapshot | SnapshotInput): DecodedSnapshot {
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

  const walks = rings.map(walkRing);
  const ringStart = new Int32Array(rings.length + 1);
  let total = 0;
  for (let r = 0; r < rings.length; r++) {
    ringStart[r] = total;
    total += walks[r].offsets.length;
  }
  ringStart[rings.length] = total;
  const scratch = new Scratch(total);

  const results: RingResult[] = [];
  let originHi = 0;
  let originLo = 0;
  let anyTime = false;
  for (let r = 0; r < rings.length; r++) {
    const walk = walks[r];
    let walkAnomalies = 0;
    for (const anomaly of walk.anomalies) {
      anomalies.push(anomaly);
      // A cut oldest record is what a full flight recorder always has: listed, not counted as a problem.
      if (anomaly.kind !== 'truncated-oldest') walkAnomalies++;
    }
    const result = decodeRing(rings[r], r, walk.offsets, scratch, ringStart[r], tables, anomalies);
    result.anomalies += walkAnomalies;
    results.push(result);
    // Time origin: the smallest time seen.
    if (result.timed && (!anyTime || result.minHi < originHi || (result.minHi === originHi && result.minLo < originLo))) {
      originHi = result.minHi;
      originLo = result.minLo;
      anyTime = true;
    }
  }

  const { timeHi, timeLo, hasTime } = scratch;
  const relative = new Float64Array(total);
  for (let i = 0; i < total; i++) {
    relative[i] = hasTime[i] === 0 ? NaN : (timeHi[i] - originHi) * TWO_32 + (timeLo[i] - originLo);
  }

  const order = mergeOrder(relative, ringStart, rings.length, total);
  const timeOriginNs = (BigInt(originHi) << 32n) | BigInt(originLo);
  const columns = order === null ? asColumns(scratch, relative, timeOriginNs) : permuted(scratch, relative, order, timeOriginNs);

  const coverage: RingCoverage[] = rings.map((ring, r) => {
    const result = results[r];
    const retained = BigInt(walks[r].retainedBytes);
    const overwritten = ring.bytesWritten - retained;
    return {
      ringId: ring.ringId,
      label: ring.label,
      path: ring.path,
      dataSize: ring.dataSize,
      bytesWritten: ring.bytesWritten,
      bytesOverwritten: overwritten > 0n ? overwritten : 0n,
      recordsRetained: ringStart[r + 1] - ringStart[r],
      oldestTimeNs: result.timed ? (BigInt(result.minHi) << 32n) | BigInt(result.minLo) : null,
      newestTimeNs: result.timed ? (BigInt(result.maxHi) << 32n) | BigInt(result.maxLo) : null,
      lostRecords: BigInt(result.lost),
      anomalies: result.anomalies,
    };
  });

  return { events, rings, columns, coverage, anomalies };
}

/** Scratch rows already in order (one ring): the scratch arrays are exactly `total` long, use them as they are. */
function asColumns(s: Scratch, time: Float64Array, timeOriginNs: bigint): RecordColumns {
  return {
    length: time.length,
    timeOriginNs,
    time,
    kind: s.kind,
    misc: s.misc,
    event: s.event,
    pid: s.pid,
    tid: s.tid,
    cpu: s.cpu,
    ipHi: s.ipHi,
    ipLo: s.ipLo,
    ring: s.ring,
    offset: s.offset,
  };
}

/** Applies the merge permutation to every column in one pass (each access site sees one array type). */
function permuted(s: Scratch, relative: Float64Array, order: Uint32Array, timeOriginNs: bigint): RecordColumns {
  const n = order.length;
  const time = new Float64Array(n);
  const kind = new Uint8Array(n);
  const misc = new Uint16Array(n);
  const event = new Uint16Array(n);
  const pid = new Int32Array(n);
  const tid = new Int32Array(n);
  const cpu = new Int32Array(n);
  const ipHi = new Uint32Array(n);
  const ipLo = new Uint32Array(n);
  const ring = new Uint16Array(n);
  const offset = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const from = order[i];
    time[i] = relative[from];
    kind[i] = s.kind[from];
    misc[i] = s.misc[from];
    event[i] = s.event[from];
    pid[i] = s.pid[from];
    tid[i] = s.tid[from];
    cpu[i] = s.cpu[from];
    ipHi[i] = s.ipHi[from];
    ipLo[i] = s.ipLo[from];
    ring[i] = s.ring[from];
    offset[i] = s.offset[from];
  }
  return { length: n, timeOriginNs, time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset };
}

/**
 * K-way merge of the per-ring row ranges [ringStart[r], ringStart[r+1]) by merge key; returns the
 * row permutation, or null when rows are already in order (at most one non-empty ring).
 */
function mergeOrder(relative: Float64Array, ringStart: Int32Array, ringCount: number, total: number): Uint32Array | null {
  const key = new Float64Array(total);
  let nonEmpty = 0;
  for (let r = 0; r < ringCount; r++) {
    let carried = -Infinity;
    const start = ringStart[r];
    const stop = ringStart[r + 1];
    if (stop > start) nonEmpty++;
    for (let i = start; i < stop; i++) {
      const value = relative[i];
      if (value === value && value > carried) carried = value; // NaN (no time) keeps the carried key
      key[i] = carried;
    }
  }
  if (nonEmpty <= 1) return null;

  // Binary min-heap of ring numbers ordered by (key of the ring's next row, ring number).
  const heap = new Int32Array(nonEmpty);
  const next = new Int32Array(ringCount);
  let heapSize = 0;
  const less = (a: number, b: number): boolean => {
    const ka = key[next[a]];
    const kb = key[next[b]];
    return ka < kb || (ka === kb && a < b);
  };
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
    next[r] = ringStart[r];
    if (ringStart[r + 1] > ringStart[r]) heap[heapSize++] = r;
  }
  for (let i = (heapSize >> 1) - 1; i >= 0; i--) siftDown(i);

  const order = new Uint32Array(total);
  let out = 0;
  while (heapSize > 0) {
    const r = heap[0];
    order[out++] = next[r]++;
    if (next[r] >= ringStart[r + 1]) {
      heap[0] = heap[--heapSize];
    }
    siftDown(0);
  }
  return order;
}
