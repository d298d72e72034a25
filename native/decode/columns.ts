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
import { scanRing, u32View } from './walk';

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


/** One typed array per column; `time` is relative to the owning ring's time base until merged. */
class ColumnSet {
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

  constructor(readonly length: number) {
    this.time = new Float64Array(length);
    this.kind = new Uint8Array(length);
    this.misc = new Uint16Array(length);
    this.event = new Uint16Array(length);
    this.pid = new Int32Array(length);
    this.tid = new Int32Array(length);
    this.cpu = new Int32Array(length);
    this.ipHi = new Uint32Array(length);
    this.ipLo = new Uint32Array(length);
    this.ring = new Uint16Array(length);
    this.offset = new Uint32Array(length);
  }

  toColumns(timeOriginNs: bigint): RecordColumns {
    const { length, time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset } = this;
    return { length, timeOriginNs, time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset };
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
  /** The time every `time` of this ring is relative to, as u32 halves; baseHi = -1 when the ring has no timed record. */
  baseHi: number;
  baseLo: number;
  /** Smallest and largest time as u32 halves (read back from the records, so exact whatever the span). */
  minHi: number;
  minLo: number;
  maxHi: number;
  maxLo: number;
  /** False when some time lies 2^53 ns or more from the base (a damaged time): relative times may be rounded. */
  exact: boolean;
}

/** Largest integer a double holds exactly: relative times up to this (104 days) are exact. */
const MAX_EXACT = 2 ** 53;

/**
 * The hot loop: decodes `count` consecutive records starting at byte `startOffset` of one ring
 * (memory order), writing the i-th into row firstRow + i * step, so a backward ring (newest first
 * in memory) lands oldest first with step -1 in the same single pass. Times are written relative
 * to (baseHi, baseLo); with baseHi = -1 the first timed record becomes the base. The records were
 * bounds-checked by scanRing. Kept in its own function so V8 optimises it in isolation.
 */
function decodeRing(
  u32: Uint32Array, ring: RingCopy, startOffset: number, count: number, out: ColumnSet, firstRow: number, step: number,
  baseHiIn: number, baseLoIn: number, tables: EventTables, anomalies: DecodeAnomaly[],
): RingResult {
  const { layouts, indexOf, ids, positionOf } = tables;
  const defaultPosition = positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const locator = defaultInfo ? idLocator(defaultInfo) : { sampleIdOffset: -1, otherIdFromEnd: -1 };
  const sampleIdOffset = ids.size > 0 ? locator.sampleIdOffset : -1;
  const otherIdFromEnd = ids.size > 0 ? locator.otherIdFromEnd : -1;
  const ringCpu = ring.cpu;
  const haveEvents = layouts.length > 0;
  const { time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, offset } = out;
  let baseHi = baseHiIn;
  let baseLo = baseLoIn;
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
  let lost = 0;
  let anomalyCount = 0;
  // Every anomaly is counted, but only the first few per ring are kept as objects: a ring full of
  // unknown ids must not turn into one object per record.
  const note = (anomaly: DecodeAnomaly) => {
    if (anomalyCount < MAX_ANOMALIES_KEPT_PER_RING) anomalies.push(anomaly);
    anomalyCount++;
  };
  let minRel = Infinity;
  let maxRel = -Infinity;
  let minAt = 0;
  let maxAt = 0;
  let o = startOffset;
  let row = firstRow;

  for (let i = 0; i < count; i++, row += step) {
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
      const rel = (hi - baseHi) * TWO_32 + (lo - baseLo);
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
    }
    o = end;
  }
  return {
    lost, anomalies: anomalyCount, baseHi, baseLo, minHi: u32[minAt + 1], minLo: u32[minAt], maxHi: u32[maxAt + 1], maxLo: u32[maxAt],
    exact: minRel >= -MAX_EXACT && maxRel <= MAX_EXACT,
  };
}

/** A u64 time from its u32 halves. */
function timeNs(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
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

  // First pass: record counts only (headers), so every column is allocated once at its exact size.
  const ringCount = rings.length;
  const words = rings.map((ring) => u32View(ring.bytes));
  const scans = rings.map((ring, r) => scanRing(ring, words[r]));
  const ringStart = new Int32Array(ringCount + 1);
  let total = 0;
  let nonEmpty = 0;
  for (let r = 0; r < ringCount; r++) {
    ringStart[r] = total;
    total += scans[r].count;
    if (scans[r].count > 0) nonEmpty++;
  }
  ringStart[ringCount] = total;
  // With one non-empty ring these are the result; with more they are merged into fresh columns.
  const decoded = new ColumnSet(total);

  // Second pass: decode each ring in memory order straight into its rows, oldest first.
  const results: RingResult[] = [];
  for (let r = 0; r < ringCount; r++) {
    const ring = rings[r];
    const scan = scans[r];
    let walkAnomalies = 0;
    for (const anomaly of scan.anomalies) {
      anomalies.push(anomaly);
      // A cut oldest record is what a full flight recorder always has: listed, not counted as a problem.
      if (anomaly.kind !== 'truncated-oldest') walkAnomalies++;
    }
    const count = scan.count;
    const backward = ring.direction === 'backward';
    let baseHi = -1;
    let baseLo = 0;
    if (count > 0) {
      decoded.ring.fill(r, ringStart[r], ringStart[r + 1]);
      // Base the ring's relative times on its oldest record (usually its smallest time, so no
      // fix-up pass): decode that one record first; the full pass below rewrites its row.
      const probe = decodeRing(words[r], ring, backward ? scan.lastOffset : 0, 1, decoded, ringStart[r], 1, -1, 0, tables, []);
      baseHi = probe.baseHi;
      baseLo = probe.baseLo;
    }
    const firstRow = backward ? ringStart[r] + count - 1 : ringStart[r];
    let result = decodeRing(words[r], ring, 0, count, decoded, firstRow, backward ? -1 : 1, baseHi, baseLo, tables, anomalies);
    if (!result.exact) {
      // The oldest record's time is far from the others (damaged): decode again against the ring's
      // smallest time, so every record within 104 days of it stays exact.
      const kept = anomalies.length;
      result = decodeRing(words[r], ring, 0, count, decoded, firstRow, backward ? -1 : 1, result.minHi, result.minLo, tables, anomalies);
      anomalies.length = kept;
    }
    result.anomalies += walkAnomalies;
    results.push(result);
  }

  // Time origin: the smallest time seen; each ring's shift moves its relative times onto it.
  let origin: bigint | null = null;
  for (const result of results) {
    if (result.baseHi < 0) continue;
    const oldest = timeNs(result.minHi, result.minLo);
    if (origin === null || oldest < origin) origin = oldest;
  }
  const timeOriginNs = origin ?? 0n;
  const shift = new Float64Array(ringCount);
  for (let r = 0; r < ringCount; r++) {
    const result = results[r];
    if (result.baseHi >= 0) shift[r] = Number(timeNs(result.baseHi, result.baseLo) - timeOriginNs);
  }

  let columns: RecordColumns;
  if (nonEmpty <= 1) {
    for (let r = 0; r < ringCount; r++) if (shift[r] !== 0) addToRange(decoded.time, ringStart[r], ringStart[r + 1], shift[r]);
    columns = decoded.toColumns(timeOriginNs);
  } else {
    columns = merged(decoded, ringStart, ringCount, shift).toColumns(timeOriginNs);
  }

  const coverage: RingCoverage[] = rings.map((ring, r) => {
    const result = results[r];
    const retained = BigInt(scans[r].retainedBytes);
    const overwritten = ring.bytesWritten - retained;
    const timed = result.baseHi >= 0;
    return {
      ringId: ring.ringId,
      label: ring.label,
      path: ring.path,
      dataSize: ring.dataSize,
      bytesWritten: ring.bytesWritten,
      bytesOverwritten: overwritten > 0n ? overwritten : 0n,
      recordsRetained: scans[r].count,
      oldestTimeNs: timed ? timeNs(result.minHi, result.minLo) : null,
      newestTimeNs: timed ? timeNs(result.maxHi, result.maxLo) : null,
      lostRecords: BigInt(result.lost),
      anomalies: result.anomalies,
    };
  });

  return { events, rings, columns, coverage, anomalies };
}

/** time[start, stop) += amount (NaN, i.e. no time, stays NaN). */
function addToRange(time: Float64Array, start: number, stop: number, amount: number): void {
  for (let i = start; i < stop; i++) time[i] += amount;
}

/** Runs of consecutive rows of one ring that the merge emits together. */
interface MergeRuns {
  readonly from: Uint32Array;
  readonly length: Uint32Array;
  readonly count: number;
}

/**
 * K-way merge of the per-ring row ranges [ringStart[r], ringStart[r+1]) by merge key (the running
 * maximum of time + shift[r] inside each ring; no time keeps the previous key, -Infinity at first),
 * ties to the lower ring number. A binary heap picks the ring; it then keeps emitting from that ring
 * while it still beats the best other ring, so a large ring interleaved with a small side-band ring
 * costs a few heap operations, not one per row.
 */
export function mergeRuns(time: Float64Array, ringStart: Int32Array, ringCount: number, shift: Float64Array): MergeRuns {
  const total = ringStart[ringCount];
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
    const start = ringStart[r];
    if (ringStart[r + 1] <= start) continue;
    next[r] = start;
    const value = time[start] + shift[r];
    key[r] = value === value ? value : -Infinity;
    heap[heapSize++] = r;
  }
  for (let i = (heapSize >> 1) - 1; i >= 0; i--) siftDown(i);

  // At most one run per row; untouched pages of these cost nothing.
  const from = new Uint32Array(total);
  const length = new Uint32Array(total);
  let runs = 0;
  while (heapSize > 0) {
    const r = heap[0];
    let rival = -1;
    if (heapSize > 1) rival = heapSize > 2 && less(heap[2], heap[1]) ? heap[2] : heap[1];
    const rivalKey = rival >= 0 ? key[rival] : Infinity;
    const stop = ringStart[r + 1];
    const amount = shift[r];
    const start = next[r];
    let i = start;
    let k = key[r];
    for (;;) {
      i++; // row i - 1 (key k) is emitted
      if (i >= stop) break;
      const value = time[i] + amount;
      if (value === value && value > k) k = value; // NaN (no time) keeps the carried key
      if (rival >= 0 && !(k < rivalKey || (k === rivalKey && r < rival))) break;
    }
    from[runs] = start;
    length[runs] = i - start;
    runs++;
    next[r] = i;
    if (i >= stop) {
      heap[0] = heap[--heapSize];
    } else {
      key[r] = k;
    }
    siftDown(0);
  }
  return { from, length, count: runs };
}

/** The rows of `source` in merge order, in fresh columns, times moved onto the global origin. */
function merged(source: ColumnSet, ringStart: Int32Array, ringCount: number, shift: Float64Array): ColumnSet {
  const runs = mergeRuns(source.time, ringStart, ringCount, shift);
  const out = new ColumnSet(source.length);
  let to = 0;
  for (let run = 0; run < runs.count; run++) {
    const from = runs.from[run];
    const length = runs.length[run];
    const amount = shift[source.ring[from]];
    for (let j = 0; j < length; j++) out.time[to + j] = source.time[from + j] + amount;
    if (length >= 32) {
      // Long runs: one native copy per column.
      const stop = from + length;
      out.kind.set(source.kind.subarray(from, stop), to);
      out.misc.set(source.misc.subarray(from, stop), to);
      out.event.set(source.event.subarray(from, stop), to);
      out.pid.set(source.pid.subarray(from, stop), to);
      out.tid.set(source.tid.subarray(from, stop), to);
      out.cpu.set(source.cpu.subarray(from, stop), to);
      out.ipHi.set(source.ipHi.subarray(from, stop), to);
      out.ipLo.set(source.ipLo.subarray(from, stop), to);
      out.ring.set(source.ring.subarray(from, stop), to);
      out.offset.set(source.offset.subarray(from, stop), to);
    } else {
      for (let j = 0; j < length; j++) {
        const a = from + j;
        const b = to + j;
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
    to += length;
  }
  return out;
}
