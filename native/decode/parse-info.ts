// Layout facts about the records one event produces, computed once per attr so the hot walk only
// does indexed reads. Field order follows include/uapi/linux/perf_event.h (PERF_RECORD_SAMPLE and
// struct sample_id); the same order perf's evsel__parse_sample relies on.

import type { PerfEventAttr } from '../abi/attr';
import { ReadFormat, Sample } from '../abi/uapi';

/** branch_sample_type bits that change the BRANCH_STACK layout. */
export const BranchSampleFlag = {
  /** PERF_SAMPLE_BRANCH_HW_INDEX: a u64 hw_idx follows nr. */
  HW_INDEX: 1n << 17n,
  /** PERF_SAMPLE_BRANCH_COUNTERS: u64 counters[nr] follow the entries. */
  COUNTERS: 1n << 19n,
} as const;

/** Byte offsets inside a record; -1 means "not present". */
export interface SampleLayout {
  /** Offsets from the start of the record (header included) of the fixed-prefix fields of PERF_RECORD_SAMPLE. */
  readonly identifier: number;
  readonly ip: number;
  readonly pidTid: number;
  readonly time: number;
  readonly addr: number;
  readonly id: number;
  readonly streamId: number;
  readonly cpu: number;
  readonly period: number;
  /** Where the first variable-size field (READ, CALLCHAIN, ...) would begin. */
  readonly fixedEnd: number;
}

/** struct sample_id trailer of non-sample records, as offsets back from the record's END (positive numbers). */
export interface TrailerLayout {
  /** Trailer size in bytes (0 when sample_id_all is off). */
  readonly size: number;
  readonly pidTidFromEnd: number;
  readonly timeFromEnd: number;
  readonly idFromEnd: number;
  readonly streamIdFromEnd: number;
  readonly cpuFromEnd: number;
  readonly identifierFromEnd: number;
}

export interface ParseInfo {
  readonly sampleType: number;
  readonly readFormat: number;
  readonly sampleIdAll: boolean;
  readonly sample: SampleLayout;
  readonly trailer: TrailerLayout;
  /** Bytes of one read_format block (SAMPLE READ field or PERF_RECORD_READ body) when not a group. */
  readonly readSizeSingle: number;
  /** Bytes per group member in a PERF_FORMAT_GROUP read block. */
  readonly readGroupEntrySize: number;
  /** Number of registers in REGS_USER / REGS_INTR blocks (popcount of the masks). */
  readonly regsUserCount: number;
  readonly regsIntrCount: number;
  readonly regsUserMask: bigint;
  readonly regsIntrMask: bigint;
  readonly branchHwIndex: boolean;
  readonly branchCounters: boolean;
  /** True when every SAMPLE of this event has the same size (no variable-size field). */
  readonly fixedSampleSize: boolean;
}

const FIXED_PREFIX_ORDER = [
  ['identifier', Sample.IDENTIFIER],
  ['ip', Sample.IP],
  ['pidTid', Sample.TID],
  ['time', Sample.TIME],
  ['addr', Sample.ADDR],
  ['id', Sample.ID],
  ['streamId', Sample.STREAM_ID],
  ['cpu', Sample.CPU],
  ['period', Sample.PERIOD],
] as const;

const VARIABLE_SAMPLE_BITS =
  Sample.READ | Sample.CALLCHAIN | Sample.RAW | Sample.BRANCH_STACK | Sample.REGS_USER | Sample.STACK_USER | Sample.REGS_INTR | Sample.AUX;

export function popcount64(mask: bigint): number {
  let count = 0;
  let rest = BigInt.asUintN(64, mask);
  while (rest !== 0n) {
    rest &= rest - 1n;
    count++;
  }
  return count;
}

function sampleLayout(sampleType: number): SampleLayout {
  const offsets: Record<string, number> = {};
  let offset = 8;
  for (const [name, bit] of FIXED_PREFIX_ORDER) {
    if (sampleType & bit) {
      offsets[name] = offset;
      offset += 8;
    } else {
      offsets[name] = -1;
    }
  }
  return {
    identifier: offsets.identifier,
    ip: offsets.ip,
    pidTid: offsets.pidTid,
    time: offsets.time,
    addr: offsets.addr,
    id: offsets.id,
    streamId: offsets.streamId,
    cpu: offsets.cpu,
    period: offsets.period,
    fixedEnd: offset,
  };
}

function trailerLayout(sampleType: number, sampleIdAll: boolean): TrailerLayout {
  if (!sampleIdAll) {
    return { size: 0, pidTidFromEnd: -1, timeFromEnd: -1, idFromEnd: -1, streamIdFromEnd: -1, cpuFromEnd: -1, identifierFromEnd: -1 };
  }
  // struct sample_id: { pid,tid } { time } { id } { stream_id } { cpu,res } { identifier }, each present when its bit is set.
  const order = [Sample.TID, Sample.TIME, Sample.ID, Sample.STREAM_ID, Sample.CPU, Sample.IDENTIFIER];
  const starts: number[] = [];
  let size = 0;
  for (const bit of order) {
    if (sampleType & bit) {
      starts.push(size);
      size += 8;
    } else {
      starts.push(-1);
    }
  }
  const fromEnd = (start: number) => (start < 0 ? -1 : size - start);
  return {
    size,
    pidTidFromEnd: fromEnd(starts[0]),
    timeFromEnd: fromEnd(starts[1]),
    idFromEnd: fromEnd(starts[2]),
    streamIdFromEnd: fromEnd(starts[3]),
    cpuFromEnd: fromEnd(starts[4]),
    identifierFromEnd: fromEnd(starts[5]),
  };
}

/** Size of a non-group read_format block, or of one group entry. */
function readSizes(readFormat: number): { single: number; groupEntry: number } {
  let single = 8; // value
  if (readFormat & ReadFormat.TOTAL_TIME_ENABLED) single += 8;
  if (readFormat & ReadFormat.TOTAL_TIME_RUNNING) single += 8;
  if (readFormat & ReadFormat.ID) single += 8;
  if (readFormat & ReadFormat.LOST) single += 8;
  let groupEntry = 8;
  if (readFormat & ReadFormat.ID) groupEntry += 8;
  if (readFormat & ReadFormat.LOST) groupEntry += 8;
  return { single, groupEntry };
}

/** Computes the layout facts of one event's records. Cheap, but meant to be done once per attr. */
export function computeParseInfo(attr: PerfEventAttr): ParseInfo {
  const sampleType = attr.sampleType >>> 0;
  const readFormat = attr.readFormat >>> 0;
  const sampleIdAll = attr.flags.sampleIdAll === true;
  const regsUserMask = BigInt.asUintN(64, attr.sampleRegsUser ?? 0n);
  const regsIntrMask = BigInt.asUintN(64, attr.sampleRegsIntr ?? 0n);
  const branchSampleType = BigInt.asUintN(64, attr.branchSampleType ?? 0n);
  const sizes = readSizes(readFormat);
  return {
    sampleType,
    readFormat,
    sampleIdAll,
    sample: sampleLayout(sampleType),
    trailer: trailerLayout(sampleType, sampleIdAll),
    readSizeSingle: sizes.single,
    readGroupEntrySize: sizes.groupEntry,
    regsUserCount: popcount64(regsUserMask),
    regsIntrCount: popcount64(regsIntrMask),
    regsUserMask,
    regsIntrMask,
    branchHwIndex: (branchSampleType & BranchSampleFlag.HW_INDEX) !== 0n,
    branchCounters: (branchSampleType & BranchSampleFlag.COUNTERS) !== 0n,
    fixedSampleSize: (sampleType & VARIABLE_SAMPLE_BITS) === 0,
  };
}

/**
 * Where a record's event id sits, from the layout of the ring's default event: IDENTIFIER is at a
 * fixed place in every record kind (first u64 of a sample, last u64 of a trailer); otherwise ID is
 * used at the default event's position (perf requires events sharing a ring without IDENTIFIER to
 * share sample_type, so that position holds for all of them).
 */
export interface IdLocator {
  /** Byte offset from the record start of the sample's id, or -1. */
  readonly sampleIdOffset: number;
  /** Byte distance back from the record end of a non-sample's id, or -1. */
  readonly otherIdFromEnd: number;
}

export function idLocator(info: ParseInfo): IdLocator {
  const sampleIdOffset = info.sample.identifier >= 0 ? info.sample.identifier : info.sample.id;
  const otherIdFromEnd = info.trailer.identifierFromEnd >= 0 ? info.trailer.identifierFromEnd : info.trailer.idFromEnd;
  return { sampleIdOffset, otherIdFromEnd };
}

const parseInfoCache = new WeakMap<object, ParseInfo>();

/** Parse info of an event's attr, computed once per attr object. */
export function parseInfoFor(event: { readonly attr: PerfEventAttr }): ParseInfo {
  let info = parseInfoCache.get(event.attr);
  if (!info) {
    info = computeParseInfo(event.attr);
    parseInfoCache.set(event.attr, info);
  }
  return info;
}
