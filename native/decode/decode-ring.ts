// One ring's bytes → rows of a column set, oldest first: the hot loop (decodeRing), a backward ring
// in one pass from the top of the columns down (decodeBackward), a forward ring after a header
// pass (decodeForward), and decodeRingRows, which does all that one ring needs (a second pass when
// a damaged time would lose exactness, LOST records before their partner, the walk's end). Rings
// are independent here: what one needs from the others is only a time base hint (`known`), so a
// ring can be decoded on another thread. Hot path: u32 reads at precomputed offsets, no object
// and no BigInt per record.
//
// Speed (bench: decode_vs_c): each ring's bytes are read ONCE. A backward ring is newest first in
// memory, so its rows are written from the top of the columns down (no counting pass, no offsets
// list, no reversal); the columns are sized from the newest record and grown when records turn out
// smaller. Times are written straight as doubles relative to a base time (u32 halves subtracted
// first: exact for spans < 2^53 ns); the base is the snapshot's smallest time when a ring decoded
// before already gave it, else the ring's probable oldest record, so the usual case needs no
// fix-up pass.
//
// Byte order: rings are in the kernel's (= this host's) byte order and the u32 views read host
// order; every platform Ringside runs on (x86_64, aarch64) is little endian, as record.ts assumes.

import { RecordType } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT } from '../abi/u64';
import { idLocator, parseInfoFor, type ParseInfo } from './parse-info';
import type { DecodeAnomaly } from './types';
import type { EventDescription, RingCopy } from '../abi/snapshot';
import { isWholeRecord, placeLostBeforePartner, scanRing, u32View, validEnd, walkEndAnomaly } from './walk';
import { ColumnSet, type FlatColumns, type SetSource } from './column-set';
import { backwardCapacity, withSlack } from './row-capacity';
import { engineFor, noteRowsDecoded, releaseRoomSet, roomFirst, roomOf } from './wasm/copy-room';
import type { SampleRunState } from './wasm/sample-run';

/** No arena: fresh sets, left to the GC. */
export const FRESH_SETS: SetSource = { take: (rows) => new ColumnSet(rows), give: (set) => void releaseRoomSet(set) };

export const TWO_32 = 4294967296;
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
        if (hi < EXACT_HIGH_HALF_LIMIT) this.small.set(hi * TWO_32 + lo, position);
        else this.large.set(`${hi}:${lo}`, position);
        size++;
      }
    }
    this.size = size;
  }

  lookup(hi: number, lo: number): number {
    const found = hi < EXACT_HIGH_HALF_LIMIT ? this.small.get(hi * TWO_32 + lo) : this.large.get(`${hi}:${lo}`);
    return found === undefined ? -1 : found;
  }
}

/** One ring's decoded rows: rows [first, first + count) of `set`, oldest first. */
export interface RingRows {
  readonly set: ColumnSet;
  readonly first: number;
  readonly count: number;
}

/** What decoding the events of one snapshot needs, computed once. */
export interface EventTables {
  readonly layouts: readonly HotLayout[];
  readonly infos: readonly ParseInfo[];
  /** events[position].index, by position. */
  readonly indexOf: Uint16Array;
  readonly ids: IdTable;
  readonly positionOf: ReadonlyMap<number, number>;
}

/** What decoding one ring accumulates; decodeRing picks it up and hands it back, so a pass can resume. */
export interface RingState {
  /** Byte offset of the next record to decode. */
  offset: number;
  lost: number;
  /** LOST records decoded (their rows are then moved before their partners' rows). */
  lostRecords: number;
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
  return { offset: 0, lost: 0, lostRecords: 0, anomalies: 0, baseHi, baseLo, minRel: Infinity, maxRel: -Infinity, minAt: 0, maxAt: 0 };
}

/** Largest integer a double holds exactly: relative times up to this (104 days) are exact. */
const MAX_EXACT = 2 ** 53;

/** False when some time lies 2^53 ns or more from the base (a damaged time): relative times may be rounded. */
function isExact(state: RingState): boolean {
  return state.minRel >= -MAX_EXACT && state.maxRel <= MAX_EXACT;
}

/**
 * decodeRing's innermost loop: consecutive samples of one event whose layout has every field a
 * row reads (pid/tid, time, cpu, ip), with the time base known, from byte run.offset, at most
 * `maxCount`, into rows run.row, run.row + step, ... Stops before the first record that is not
 * such a sample (decodeRing looks at it again) and returns how many it decoded. The same row as
 * decodeRing writes for such a sample, through the flat views (FlatColumns says why) and with no
 * test per field. A function of its own, with every value it uses in a parameter or a local: inside
 * decodeRing (dozens of live values) V8 kept the loop's numbers tagged on the stack, checked them
 * on every use and boxed each time it stored, which cost more than the row's stores.
 */
function decodeSampleRun(
  u32: Uint32Array,
  end: number,
  maxCount: number,
  flat: FlatColumns,
  step: number,
  layout: HotLayout,
  sampleIdOffset: number,
  idLo: number,
  idHi: number,
  event: number,
  baseHi: number,
  baseLo: number,
  run: SampleRunState,
): number {
  const { f64, u32: w32, u16: w16, u8: w8, at } = flat;
  // row-writer ts-flat-at omit=ring
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
  const offsetAt = at.offset;
  // end row-writer
  const sTime = layout.time,
    sPidTid = layout.pidTid,
    sCpu = layout.cpu,
    sIp = layout.ip,
    sMin = layout.sampleMin;
  const SAMPLE = RecordType.SAMPLE;
  const twoTo32 = TWO_32;
  let o = run.offset;
  let row = run.row;
  let minRel = run.minRel;
  let maxRel = run.maxRel;
  let minAt = run.minAt;
  let maxAt = run.maxAt;
  let decoded = 0;
  for (; decoded < maxCount && o + 8 <= end; decoded++, row += step) {
    const w = o >>> 2;
    const sizeMisc = u32[w + 1];
    const size = sizeMisc >>> 16;
    if (u32[w] !== SAMPLE || size < sMin || (size & 7) !== 0 || o + size > end) break;
    if (sampleIdOffset >= 0) {
      if (sampleIdOffset + 8 > size) break;
      const idw = (o + sampleIdOffset) >>> 2;
      if (u32[idw] !== idLo || u32[idw + 1] !== idHi) break;
    }
    const tw = (o + sTime) >>> 2;
    const rel = (u32[tw + 1] - baseHi) * twoTo32 + (u32[tw] - baseLo);
    if (rel < minRel) {
      minRel = rel;
      minAt = tw;
    }
    if (rel > maxRel) {
      maxRel = rel;
      maxAt = tw;
    }
    // row-writer ts-flat-store omit=ring row=row o=o words=u32 time=rel type=SAMPLE misc=sizeMisc event=event pidTid=sPidTid cpu=sCpu ip=sIp
    // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
    f64[timeAt + row] = rel;
    w8[kindAt + row] = SAMPLE;
    w16[miscAt + row] = sizeMisc;
    w16[eventAt + row] = event;
    w32[offsetAt + row] = o;
    const pidTidWord = (o + sPidTid) >>> 2;
    w32[pidAt + row] = u32[pidTidWord];
    w32[tidAt + row] = u32[pidTidWord + 1];
    w32[cpuAt + row] = u32[(o + sCpu) >>> 2];
    const ipWord = (o + sIp) >>> 2;
    w32[ipLoAt + row] = u32[ipWord];
    w32[ipHiAt + row] = u32[ipWord + 1];
    // end row-writer
    o += size;
  }
  run.offset = o;
  run.row = row;
  run.minRel = minRel;
  run.maxRel = maxRel;
  run.minAt = minAt;
  run.maxAt = maxAt;
  return decoded;
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
  u32: Uint32Array,
  ring: RingCopy,
  end: number,
  maxCount: number,
  out: ColumnSet,
  firstRow: number,
  step: number,
  state: RingState,
  tables: EventTables,
  anomalies: DecodeAnomaly[],
): number {
  const { layouts, indexOf, ids, positionOf } = tables;
  const defaultPosition = positionOf.get(ring.defaultEvent) ?? 0;
  const defaultInfo = tables.infos[defaultPosition];
  const locator = defaultInfo ? idLocator(defaultInfo) : { sampleIdOffset: -1, otherIdFromEnd: -1 };
  const sampleIdOffset = ids.size > 0 ? locator.sampleIdOffset : -1;
  const otherIdFromEnd = ids.size > 0 ? locator.otherIdFromEnd : -1;
  const ringCpu = ring.cpu;
  const haveEvents = layouts.length > 0;
  // row-writer ts-typed-columns omit=ring from=out
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
  const offsetColumn = out.offset;
  // end row-writer
  const flat = out.flat();
  // Rows going into the room of the ring's own copy: the sample runs go through WebAssembly.
  const engine = engineFor(ring.bytes, out);
  const run: SampleRunState = { offset: 0, row: 0, minRel: 0, maxRel: 0, minAt: 0, maxAt: 0 };
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
  let lostRecords = state.lostRecords;
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
    // is mostly that): decodeSampleRun when every field is present, else the loop below, which
    // has no calls, so V8 keeps the columns' pointers in registers.
    // Any other record falls through to the general code below, which handles it completely.
    if (layoutPosition >= 0 && (sampleIdOffset >= 0 ? lastPosition === layoutPosition : layoutPosition === defaultPosition)) {
      const fastEvent = indexOf[layoutPosition];
      if (sTime >= 0 && sPidTid >= 0 && sCpu >= 0 && sIp >= 0 && baseHi >= 0) {
        // Every field present (Ringside's own events always have them) and the base known.
        run.offset = o;
        run.row = row;
        run.minRel = minRel;
        run.maxRel = maxRel;
        run.minAt = minAt;
        run.maxAt = maxAt;
        // An id not yet known (lastIdHi -1) matches no sample: decodeSampleRun would decode none.
        const n =
          engine && (sampleIdOffset < 0 || lastIdHi >= 0)
            ? engine.decode(end, maxCount - decoded, step, layouts[layoutPosition], sampleIdOffset, lastIdLo, lastIdHi, fastEvent, baseHi, baseLo, run)
            : decodeSampleRun(
                u32,
                end,
                maxCount - decoded,
                flat,
                step,
                layouts[layoutPosition],
                sampleIdOffset,
                lastIdLo,
                lastIdHi,
                fastEvent,
                baseHi,
                baseLo,
                run,
              );
        decoded += n;
        o = run.offset;
        row = run.row;
        minRel = run.minRel;
        maxRel = run.maxRel;
        minAt = run.minAt;
        maxAt = run.maxAt;
      }
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
        if (sTime >= 0) {
          const tw = (o + sTime) >>> 2;
          const lo = u32[tw];
          const hi = u32[tw + 1];
          if (baseHi < 0) {
            baseHi = hi;
            baseLo = lo;
          }
          const rel = (hi - baseHi) * twoTo32 + (lo - baseLo);
          timeColumn[row] = rel;
          if (rel < minRel) {
            minRel = rel;
            minAt = tw;
          }
          if (rel > maxRel) {
            maxRel = rel;
            maxAt = tw;
          }
        } else {
          timeColumn[row] = NaN;
        }
        // Every column of every row is written, absent fields' too: rows may land in reused (arena) memory.
        // row-writer ts-typed-store omit=time,ring row=row words=u32 type=SAMPLE misc=sizeMisc event=fastEvent o=o fieldsFrom=o pidTid=sPidTid cpu=sCpu ip=sIp ringCpu=ringCpu
        // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
        kindColumn[row] = SAMPLE;
        miscColumn[row] = sizeMisc;
        eventColumn[row] = fastEvent;
        offsetColumn[row] = o;
        if (sPidTid >= 0) {
          const pidTidWord = (o + sPidTid) >>> 2;
          pidColumn[row] = u32[pidTidWord] | 0;
          tidColumn[row] = u32[pidTidWord + 1] | 0;
        } else {
          pidColumn[row] = -1;
          tidColumn[row] = -1;
        }
        if (sCpu >= 0) {
          const cpuWord = (o + sCpu) >>> 2;
          cpuColumn[row] = u32[cpuWord] | 0;
        } else {
          cpuColumn[row] = ringCpu;
        }
        if (sIp >= 0) {
          const ipWord = (o + sIp) >>> 2;
          ipLoColumn[row] = u32[ipWord];
          ipHiColumn[row] = u32[ipWord + 1];
        } else {
          ipLoColumn[row] = 0;
          ipHiColumn[row] = 0;
        }
        // end row-writer
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
        const detail = `sample of ${size} bytes is shorter than its fixed fields`;
        note({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail });
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
            const detail = `record type ${type} of ${size} bytes is too short for its sample_id trailer`;
            note({ ringId: ring.ringId, offset: o, kind: 'field-past-end', detail });
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
            pidColumn[row] = u32[w + 2] | 0;
            tidColumn[row] = u32[w + 4] | 0;
            if (t < 0) t = o + 24;
          }
          break;
        case RecordType.THROTTLE:
        case RecordType.UNTHROTTLE:
          if (t < 0 && size >= 16) t = o + 8;
          break;
        case RecordType.LOST:
          lostRecords++;
          if (size >= 24) lost += u32[w + 5] * TWO_32 + u32[w + 4];
          break;
        case RecordType.LOST_SAMPLES:
          if (size >= 16) lost += u32[w + 3] * TWO_32 + u32[w + 2];
          break;
        default:
          break;
      }
    }

    const recordKind = type > 254 ? 255 : type;
    const eventIndex = haveEvents ? indexOf[position] : 0;
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
      timeColumn[row] = rel;
      if (rel < minRel) {
        minRel = rel;
        minAt = tw;
      }
      if (rel > maxRel) {
        maxRel = rel;
        maxAt = tw;
      }
    } else {
      timeColumn[row] = NaN;
    }
    // row-writer ts-typed-store omit=time,ring row=row words=u32 type=recordKind misc=sizeMisc event=eventIndex o=o pidTid=ptOffset cpu=cpuOffset ip=ipOffset ringCpu=ringCpu pidTidWritten=-2
    // (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
    kindColumn[row] = recordKind;
    miscColumn[row] = sizeMisc;
    eventColumn[row] = eventIndex;
    offsetColumn[row] = o;
    if (ptOffset >= 0) {
      const pidTidWord = ptOffset >>> 2;
      pidColumn[row] = u32[pidTidWord] | 0;
      tidColumn[row] = u32[pidTidWord + 1] | 0;
    } else if (ptOffset !== -2) {
      pidColumn[row] = -1;
      tidColumn[row] = -1;
    }
    if (cpuOffset >= 0) {
      const cpuWord = cpuOffset >>> 2;
      cpuColumn[row] = u32[cpuWord] | 0;
    } else {
      cpuColumn[row] = ringCpu;
    }
    if (ipOffset >= 0) {
      const ipWord = ipOffset >>> 2;
      ipLoColumn[row] = u32[ipWord];
      ipHiColumn[row] = u32[ipWord + 1];
    } else {
      ipLoColumn[row] = 0;
      ipHiColumn[row] = 0;
    }
    // end row-writer
    o = recordEnd;
  }
  state.offset = o;
  state.lost = lost;
  state.lostRecords = lostRecords;
  state.anomalies = anomalyCount;
  state.baseHi = baseHi;
  state.baseLo = baseLo;
  state.minRel = minRel;
  state.maxRel = maxRel;
  state.minAt = minAt;
  state.maxAt = maxAt;
  return decoded;
}

/**
 * Decodes the one whole record at byte `offset` into row `row` of `out`, its time relative to
 * (baseHi, baseLo) (baseHi = -1: the record's own time becomes the base), as a ring's decode
 * does; returns what the decode accumulated (base, lost records, anomalies counted, smallest and
 * largest time) and the anomalies it noted.
 */
export function decodeOneRecord(
  u32: Uint32Array,
  ring: RingCopy,
  end: number,
  offset: number,
  out: ColumnSet,
  row: number,
  baseHi: number,
  baseLo: number,
  tables: EventTables,
): { state: RingState; anomalies: DecodeAnomaly[] } {
  const state = freshState(baseHi, baseLo);
  state.offset = offset;
  const anomalies: DecodeAnomaly[] = [];
  decodeRing(u32, ring, end, 1, out, row, 1, state, tables, anomalies);
  return { state, anomalies };
}

/** A u64 time from its u32 halves. */
export function timeNs(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The rows decodeRingRows will first ask its set source for when it decodes this backward ring. */
export function firstSetRows(ring: RingCopy): number {
  const end = validEnd(ring);
  return backwardCapacity(end, end >= 8 ? u32View(ring.bytes)[1] >>> 16 : 0);
}

/**
 * A backward ring in ONE pass over its bytes: records come newest first in memory and are written
 * from the top of the arrays down, so they end oldest first without a counting pass or a reversal.
 * The arrays are sized from the newest record's size (flight-recorder records are mostly alike) and
 * grown from the average size so far when records turn out smaller. Rows below `first` are never
 * touched, so their pages are never faulted in.
 */
function decodeBackward(
  u32: Uint32Array,
  ring: RingCopy,
  ringNumber: number,
  end: number,
  state: RingState,
  tables: EventTables,
  anomalies: DecodeAnomaly[],
  known: TimeMark,
  sets: SetSource,
  fresh: boolean,
): RingRows {
  const newestSize = end >= 8 ? u32[1] >>> 16 : 0;
  if (state.baseHi < 0 && newestSize >= 8) chooseBase(u32, ring, end, newestSize, state, tables, known);
  let capacity = backwardCapacity(end, newestSize);
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
  if (fresh && set.buffer !== ring.bytes.buffer && first > (rows >> 2) + 1024) {
    // Records were much larger than the newest: exact arrays rather than views pinning unused room.
    const exact = new ColumnSet(rows);
    exact.copyRows(set, first, rows, 0);
    return { set: exact, first: 0, count: rows };
  }
  return { set, first, count: rows };
}

/** The row probeTime decodes a record into and forgets: one set for every probe (a set's views cost more than the probe). */
const PROBE_ROW = new ColumnSet(1);

/**
 * Time (u32 halves) of the one record at `offset`, as decodeRing finds it; hi = -1 when it has none.
 * A sample's is read where decodeRing reads it (the event its id names, else the ring's default
 * event; none when the sample is shorter than its fixed fields), without decodeRing's setup, which
 * cost more than the probe; any other record is decoded on the side. `idOffset`: where samples
 * carry their id (-1: they are not told apart by id), as decodeRing takes it.
 */
function probeTime(u32: Uint32Array, ring: RingCopy, end: number, offset: number, tables: EventTables, idOffset: number): TimeMark {
  if (!isWholeRecord(u32, offset, end)) return { hi: -1, lo: 0 };
  const w = offset >>> 2;
  if (u32[w] === RecordType.SAMPLE && tables.layouts.length > 0) {
    const size = u32[w + 1] >>> 16;
    let position = tables.positionOf.get(ring.defaultEvent) ?? 0;
    if (idOffset >= 0 && idOffset + 8 <= size) {
      const idw = (offset + idOffset) >>> 2;
      const found = tables.ids.lookup(u32[idw + 1], u32[idw]);
      if (found >= 0) position = found;
    }
    const layout = tables.layouts[position];
    if (size < layout.sampleMin || layout.time < 0) return { hi: -1, lo: 0 };
    const tw = (offset + layout.time) >>> 2;
    return { hi: u32[tw + 1], lo: u32[tw] };
  }
  const probe = freshState(-1, 0);
  probe.offset = offset;
  decodeRing(u32, ring, end, 1, PROBE_ROW, 0, 1, probe, tables, []);
  return { hi: probe.baseHi, lo: probe.baseHi >= 0 ? probe.baseLo : 0 };
}

/**
 * Bases a backward ring's relative times where they need no fix-up pass afterwards: on the
 * snapshot's smallest time known so far (`known`, from rings decoded before: then the ring's shift
 * is 0), else on its probable OLDEST record: where that record would start if every record had the
 * newest one's size. Any base gives the same exact result (the final shift corrects it); a wrong
 * guess only costs that pass. A base not within 2^52 ns before the newest record is not used.
 */
function chooseBase(u32: Uint32Array, ring: RingCopy, end: number, newestSize: number, state: RingState, tables: EventTables, known: TimeMark): void {
  const position = tables.positionOf.get(ring.defaultEvent) ?? 0;
  const idOffset = tables.ids.size > 0 && tables.infos[position] ? idLocator(tables.infos[position]).sampleIdOffset : -1;
  const newest = probeTime(u32, ring, end, 0, tables, idOffset);
  if (newest.hi < 0) return;
  const before = (hi: number, lo: number): number => (newest.hi - hi) * TWO_32 + (newest.lo - lo);
  const plausible = (span: number): boolean => span >= 0 && span < 2 ** 52;
  const start = oldestRecordStart(u32, end, newestSize, sampleSizesAtStart(u32, end, newestSize), idOffset);
  const oldest = start > 0 ? probeTime(u32, ring, end, start, tables, idOffset) : null;
  const oldestSpan = oldest && oldest.hi >= 0 ? before(oldest.hi, oldest.lo) : -1;
  if (known.hi >= 0) {
    const knownSpan = before(known.hi, known.lo);
    if (plausible(knownSpan) && (!plausible(oldestSpan) || knownSpan >= oldestSpan)) {
      state.baseHi = known.hi;
      state.baseLo = known.lo;
      return;
    }
  }
  if (oldest && plausible(oldestSpan)) {
    state.baseHi = oldest.hi;
    state.baseLo = oldest.lo;
  }
}

/** How many records at a backward ring's start give the sizes its oldest record is looked for with. */
const SIZES_SAMPLED = 4;

/**
 * The distinct sizes of the SAMPLE records among the first SIZES_SAMPLED of a backward ring (the
 * newest one's first). Samples with callchains differ in size by their depth: in a ring of the
 * bench's callchain+raw layout the newest record had 112 bytes and nearly all others 136, and a
 * search by the newest size alone missed the oldest record, which cost every decode a pass over
 * its times (a sixth of the decode at 1 MiB).
 */
export function sampleSizesAtStart(u32: Uint32Array, end: number, newestSize: number): number[] {
  const sizes = [newestSize];
  for (let at = 0, k = 0; k < SIZES_SAMPLED && isWholeRecord(u32, at, end); k++) {
    const size = u32[(at >>> 2) + 1] >>> 16;
    if (u32[at >>> 2] === RecordType.SAMPLE && !sizes.includes(size)) sizes.push(size);
    at += size;
  }
  return sizes;
}

/** Bytes before a backward ring's end searched for its oldest record by the sample id (see oldestRecordStart). */
const ID_SEARCH_BYTES = 4096;

/**
 * Where a backward ring's oldest whole record starts, found without walking to it: a SAMPLE whose
 * end leaves no whole record before `end` (the copy ends inside the record the kernel was
 * overwriting, or at a record's end), and that carries the newest sample's id at `idOffset` (samples
 * told apart by id) or else is of one of `sizes` (the newest record's first, see sampleSizesAtStart).
 * Tried first where it would be if every record had one size; then at each 8-byte boundary of the
 * two largest record lengths before `end` (by id: of ID_SEARCH_BYTES at least, since the oldest
 * record's size need not be among those seen), from the top: records of another size (the LOST
 * record each pause leaves, callchains of other depths) move it off that stride, and the stride's
 * guess then hit the middle of a record, whose bytes gave no time or a wrong one. -1 when nothing
 * fits: the caller bases the times elsewhere, which costs a pass over them, never a wrong time (any
 * base gives the same exact times).
 */
export function oldestRecordStart(u32: Uint32Array, end: number, newestSize: number, sizes: readonly number[] = [newestSize], idOffset = -1): number {
  // The id of the newest record when it is a sample that has one: the ring's samples are mostly of its event.
  const byId = idOffset >= 0 && u32[0] === RecordType.SAMPLE && newestSize >= idOffset + 8 && (idOffset & 3) === 0;
  const idLo = byId ? u32[idOffset >>> 2] : 0;
  const idHi = byId ? u32[(idOffset >>> 2) + 1] : 0;
  const fits = (at: number): boolean => {
    const w = at >>> 2;
    const size = u32[w + 1] >>> 16;
    if (u32[w] !== RecordType.SAMPLE || size < 8 || (size & 7) !== 0 || at + size > end) return false;
    if (byId ? size < idOffset + 8 || u32[(at + idOffset) >>> 2] !== idLo || u32[((at + idOffset) >>> 2) + 1] !== idHi : !sizes.includes(size)) return false;
    // What follows is no whole record (the walk stops there too): a remnant, or nothing.
    return !isWholeRecord(u32, at + size, end);
  };
  let smallest = newestSize;
  let largest = newestSize;
  for (const size of sizes) {
    if (size < 8) continue;
    smallest = Math.min(smallest, size);
    largest = Math.max(largest, size);
    const guessed = (Math.floor(end / size) - 1) * size;
    if (guessed > 0 && fits(guessed)) return guessed;
  }
  const searched = byId ? Math.max(2 * largest, ID_SEARCH_BYTES) : 2 * largest;
  // By id the oldest record may be smaller than every size seen: looked for from the last header's place on.
  for (let at = (end - (byId ? 8 : smallest)) & ~7; at > 0 && at >= end - searched; at -= 8) if (fits(at)) return at;
  return -1;
}

/** A time as u32 halves; hi = -1: none. */
export interface TimeMark {
  hi: number;
  lo: number;
}

/** A forward ring (oldest first in memory): a header pass for the exact count, then one decode pass. */
function decodeForward(
  u32: Uint32Array,
  ring: RingCopy,
  ringNumber: number,
  end: number,
  state: RingState,
  tables: EventTables,
  anomalies: DecodeAnomaly[],
  sets: SetSource,
): RingRows {
  const count = scanRing(ring, u32).count;
  const set = sets.take(count);
  const decoded = decodeRing(u32, ring, end, count, set, 0, 1, state, tables, anomalies);
  set.ring.fill(ringNumber, 0, decoded);
  return { set, first: 0, count: decoded };
}

/** The events the last tables were made for, and those tables (see eventTables). */
let lastTables: { readonly events: readonly EventDescription[]; readonly tables: EventTables } | null = null;

/** True when `b` describes what `a` does for the tables: the same attr objects (parseInfoFor's key), indexes and ids. */
function sameTables(a: readonly EventDescription[], b: readonly EventDescription[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let position = 0; position < a.length; position++) {
    const x = a[position];
    const y = b[position];
    if (x.attr !== y.attr || x.index !== y.index || x.ids.length !== y.ids.length) return false;
    for (let k = 0; k < x.ids.length; k++) if (x.ids[k] !== y.ids[k]) return false;
  }
  return true;
}

/**
 * The decoding tables of a snapshot's events. A recorder describes the same events snapshot after
 * snapshot (new descriptions of the same attrs and ids), so the last tables are kept and given again
 * for such events: building them (an id map from BigInts, a layout per event) was an eighth of what
 * decoding a ring of a few records costs, and 1-2% of a 1 MiB ring's decode.
 */
export function eventTables(events: readonly EventDescription[]): EventTables {
  if (lastTables && sameTables(lastTables.events, events)) return lastTables.tables;
  const tables = buildEventTables(events);
  lastTables = { events, tables };
  return tables;
}

function buildEventTables(events: readonly EventDescription[]): EventTables {
  // Plain loops: every decode builds these, and at 1 MiB a decode takes some 50 µs (Uint16Array.from with a mapping
  // function alone cost a microsecond or two).
  const infos: ParseInfo[] = [];
  const layouts: HotLayout[] = [];
  const indexOf = new Uint16Array(events.length);
  const positionOf = new Map<number, number>();
  for (let position = 0; position < events.length; position++) {
    const info = parseInfoFor(events[position]);
    infos.push(info);
    layouts.push(hotLayout(info));
    indexOf[position] = events[position].index;
    positionOf.set(events[position].index, position);
  }
  return { layouts, infos, indexOf, ids: new IdTable(events), positionOf };
}

/** One ring decoded: its rows, what the decode accumulated, and its anomalies in walk order. */
export interface RingDecode {
  readonly rows: RingRows;
  readonly state: RingState;
  readonly anomalies: DecodeAnomaly[];
}

/**
 * Decodes ring number `ringNumber` of a snapshot into rows of a set taken from `sets`. `known` is
 * the smallest time of the rings decoded before (hi = -1: none), a base hint only: the rows are
 * the same whatever it is, as long as every time lies within 2^53 ns of the snapshot's origin.
 */
export function decodeRingRows(ring: RingCopy, ringNumber: number, tables: EventTables, known: TimeMark, sets: SetSource): RingDecode {
  const r = ringNumber;
  const u32 = u32View(ring.bytes);
  const end = validEnd(ring);
  const backward = ring.direction === 'backward';
  const listed: DecodeAnomaly[] = [];
  let state = freshState(-1, 0);
  // A copy with a room for its columns (wasm/copy-room.ts) is decoded into it when it fits. A ring
  // with no record takes none: in a snapshot memory every ring's room is the one output set, and
  // an idle CPU's ring decoded first would leave the busy one the JavaScript loop.
  const room = backward && end >= 8 ? roomOf(ring.bytes) : undefined;
  const source = room ? roomFirst(room, sets) : sets;
  const decodeRows = (into: RingState): RingRows =>
    backward
      ? decodeBackward(u32, ring, r, end, into, tables, listed, known, source, sets === FRESH_SETS)
      : decodeForward(u32, ring, r, end, into, tables, listed, sets);
  let rows = decodeRows(state);
  if (!isExact(state)) {
    // Some time lies 2^53 ns or more from the ring's base (a damaged record): decode again
    // against the ring's smallest time, so every record within 104 days of it stays exact.
    const minAt = state.minAt;
    state = freshState(u32[minAt + 1], u32[minAt]);
    listed.length = 0;
    source.give(rows.set);
    rows = decodeRows(state);
  }
  // The ring's next copy gets a room for as many rows (copy-room.ts).
  if (room) noteRowsDecoded(ring.bytes, rows.count);
  if (backward && state.lostRecords > 0) {
    // A LOST record shares one reservation with the record after it (see placeLostBeforePartner).
    const { set, first, count } = rows;
    // Every LOST record decoded is one LOST row: once all are found, no scan to the end of the rows
    // (V8's indexOf on a Uint8Array looks at one byte at a time). The oldest row's has no partner.
    let left = state.lostRecords - (set.kind[first] === RecordType.LOST ? 1 : 0);
    const nextLost = (from: number): number => {
      if (left <= 0) return -1;
      const at = set.kind.indexOf(RecordType.LOST, first + from);
      if (at < 0 || at >= first + count) return -1;
      left--;
      return at - first;
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
  return { rows, state, anomalies: listed };
}

/** The smallest time of a decoded ring (u32 halves; hi = -1 when it has none). */
export function smallestTime(ring: RingCopy, state: RingState): TimeMark {
  if (state.baseHi < 0) return { hi: -1, lo: 0 };
  const u32 = u32View(ring.bytes);
  return { hi: u32[state.minAt + 1], lo: u32[state.minAt] };
}

/** The largest time of a decoded ring (u32 halves; hi = -1 when it has none). */
export function largestTime(ring: RingCopy, state: RingState): TimeMark {
  if (state.baseHi < 0) return { hi: -1, lo: 0 };
  const u32 = u32View(ring.bytes);
  return { hi: u32[state.maxAt + 1], lo: u32[state.maxAt] };
}
