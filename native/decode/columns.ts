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

import { RecordType } from '../perf/uapi';
import { computeParseInfo, idLocator, type ParseInfo } from './parse-info';
import type { DecodeAnomaly, DecodedSnapshot, EventDescription, RawSnapshot, RecordColumns, RingCopy, RingCoverage } from './types';
import { walkRing } from './walk';

const TWO_32 = 4294967296;

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

/** Maps kernel sample ids (as u32 halves) to event indexes without BigInt. */
class IdTable {
  private readonly small = new Map<number, number>();
  private readonly large = new Map<string, number>();
  readonly size: number;

  constructor(events: readonly EventDescription[]) {
    let size = 0;
    for (const event of events) {
      for (const id of event.ids) {
        const u = BigInt.asUintN(64, id);
        const hi = Number(u >> 32n);
        const lo = Number(u & 0xffffffffn);
        if (hi < 0x200000) this.small.set(hi * TWO_32 + lo, event.index);
        else this.large.set(`${hi}:${lo}`, event.index);
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

/** Decodes every ring of a snapshot into columns (oldest first), coverage facts and anomalies. */
export function decodeSnapshot(raw: RawSnapshot | SnapshotInput): DecodedSnapshot {
  const events = raw.events;
  const rings = raw.rings;
  const infos = events.map(parseInfoFor);
  const layouts = infos.map(hotLayout);
  const ids = new IdTable(events);
  const anomalies: DecodeAnomaly[] = [];
  // Events are referred to by their index field; keep a position lookup in case the table is not in index order.
  const eventByIndex = new Map<number, number>();
  events.forEach((event, position) => eventByIndex.set(event.index, position));

  const walks = rings.map(walkRing);
  let capacity = 0;
  for (const walk of walks) capacity += walk.offsets.length;

  const timeHi = new Uint32Array(capacity);
  const timeLo = new Uint32Array(capacity);
  const hasTime = new Uint8Array(capacity);
  const kind = new Uint8Array(capacity);
  const misc = new Uint16Array(capacity);
  const eventCol = new Uint16Array(capacity);
  const pid = new Int32Array(capacity);
  const tid = new Int32Array(capacity);
  const cpu = new Int32Array(capacity);
  const ipHi = new Uint32Array(capacity);
  const ipLo = new Uint32Array(capacity);
  const ringCol = new Uint16Array(capacity);
  const offsetCol = new Uint32Array(capacity);

  const ringStart = new Int32Array(rings.length + 1);
  const lostPerRing: number[] = [];
  const anomaliesPerRing: number[] = [];

  let row = 0;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r];
    const walk = walks[r];
    for (const anomaly of walk.anomalies) anomalies.push(anomaly);
    ringStart[r] = row;
    let lost = 0;
    let ringAnomalies = 0;
    for (const anomaly of walk.anomalies) if (anomaly.kind !== 'truncated-oldest') ringAnomalies++;
    const offsets = walk.offsets;
    const n = offsets.length;
    if (n === 0) {
      lostPerRing.push(0);
      anomaliesPerRing.push(ringAnomalies);
      continue;
    }
    const u32 = u32View(ring.bytes);
    const defaultPosition = eventByIndex.get(ring.defaultEvent) ?? 0;
    const defaultInfo = infos[defaultPosition];
    const locator = defaultInfo ? idLocator(defaultInfo) : { sampleIdOffset: -1, otherIdFromEnd: -1 };
    const sampleIdOffset = ids.size > 0 ? locator.sampleIdOffset : -1;
    const otherIdFromEnd = ids.size > 0 ? locator.otherIdFromEnd : -1;
    const ringCpu = ring.cpu;
    let lastIdHi = -1;
    let lastIdLo = -1;
    let lastPosition = defaultPosition;

    for (let i = 0; i < n; i++) {
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
              position = eventByIndex.get(found) ?? defaultPosition;
              lastIdHi = hi;
              lastIdLo = lo;
              lastPosition = position;
            } else {
              anomalies.push({ ringId: ring.ringId, offset: o, kind: 'unknown-event-id', detail: `sample id ${hi * TWO_32 + lo} matches no event` });
              ringAnomalies++;
            }
          }
        }
        const layout = layouts[position];
        if (layout === undefined || size < layout.sampleMin) {
          anomalies.push({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail: `sample of ${size} bytes is shorter than its fixed fields` });
          ringAnomalies++;
        } else {
          t = layout.time >= 0 ? o + layout.time : -1;
          ptOffset = layout.pidTid >= 0 ? o + layout.pidTid : -1;
          cpuOffset = layout.cpu >= 0 ? o + layout.cpu : -1;
          ipOffset = layout.ip >= 0 ? o + layout.ip : -1;
        }
      } else {
        if (otherIdFromEnd >= 0 && size >= 8 + otherIdFromEnd) {
          const idw = (end - otherIdFromEnd) >>> 2;
          const found = ids.lookup(u32[idw + 1], u32[idw]);
          if (found >= 0) position = eventByIndex.get(found) ?? defaultPosition;
        }
        const layout = layouts[position];
        if (layout !== undefined && layout.trailerSize > 0) {
          if (size >= 8 + layout.trailerSize) {
            if (layout.trTime >= 0) t = end - layout.trTime;
            if (layout.trPidTid >= 0) ptOffset = end - layout.trPidTid;
            if (layout.trCpu >= 0) cpuOffset = end - layout.trCpu;
          } else if (type <= RecordType.CALLCHAIN_DEFERRED) {
            anomalies.push({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail: `record type ${type} of ${size} bytes is too short for its sample_id trailer` });
            ringAnomalies++;
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
              pid[row] = u32[w + 2] | 0;
              tid[row] = u32[w + 4] | 0;
              ptOffset = -2;
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
      eventCol[row] = events.length > 0 ? events[position].index : 0;
      ringCol[row] = r;
      offsetCol[row] = o;
      if (t >= 0) {
        const tw = t >>> 2;
        timeLo[row] = u32[tw];
        timeHi[row] = u32[tw + 1];
        hasTime[row] = 1;
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
      row++;
    }
    lostPerRing.push(lost);
    anomaliesPerRing.push(ringAnomalies);
  }
  ringStart[rings.length] = row;
  const total = row;

  // Time origin: the smallest time seen.
  let originHi = 0xffffffff;
  let originLo = 0xffffffff;
  let anyTime = false;
  for (let i = 0; i < total; i++) {
    if (hasTime[i] === 0) continue;
    const hi = timeHi[i];
    if (!anyTime || hi < originHi || (hi === originHi && timeLo[i] < originLo)) {
      originHi = hi;
      originLo = timeLo[i];
      anyTime = true;
    }
  }
  if (!anyTime) {
    originHi = 0;
    originLo = 0;
  }
  const relative = new Float64Array(total);
  for (let i = 0; i < total; i++) {
    relative[i] = hasTime[i] === 0 ? NaN : (timeHi[i] - originHi) * TWO_32 + (timeLo[i] - originLo);
  }

  const order = mergeOrder(relative, ringStart, rings.length, total);

  const columns: RecordColumns = {
    length: total,
    timeOriginNs: (BigInt(originHi) << 32n) | BigInt(originLo),
    time: gather(Float64Array, relative, order),
    kind: gather(Uint8Array, kind, order),
    misc: gather(Uint16Array, misc, order),
    event: gather(Uint16Array, eventCol, order),
    pid: gather(Int32Array, pid, order),
    tid: gather(Int32Array, tid, order),
    cpu: gather(Int32Array, cpu, order),
    ipHi: gather(Uint32Array, ipHi, order),
    ipLo: gather(Uint32Array, ipLo, order),
    ring: gather(Uint16Array, ringCol, order),
    offset: gather(Uint32Array, offsetCol, order),
  };

  const coverage: RingCoverage[] = rings.map((ring, r) => {
    let oldest = Infinity;
    let newest = -Infinity;
    for (let i = ringStart[r]; i < ringStart[r + 1]; i++) {
      const value = relative[i];
      if (value < oldest) oldest = value;
      if (value > newest) newest = value;
    }
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
      oldestTimeNs: oldest === Infinity ? null : columns.timeOriginNs + BigInt(oldest),
      newestTimeNs: newest === -Infinity ? null : columns.timeOriginNs + BigInt(newest),
      lostRecords: BigInt(lostPerRing[r]),
      anomalies: anomaliesPerRing[r],
    };
  });

  return { events, rings, columns, coverage, anomalies };
}

type TypedArrayCtor<T> = new (length: number) => T;

function gather<T extends { [index: number]: number; readonly length: number }>(ctor: TypedArrayCtor<T>, source: T, order: Uint32Array | null): T {
  const out = new ctor(order ? order.length : source.length);
  if (order === null) {
    for (let i = 0; i < out.length; i++) out[i] = source[i];
    return out;
  }
  for (let i = 0; i < order.length; i++) out[i] = source[order[i]];
  return out;
}

/**
 * K-way merge of the per-ring row ranges [ringStart[r], ringStart[r+1]) by merge key; returns the
 * row permutation, or null when rows are already in order (a single non-empty ring).
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
