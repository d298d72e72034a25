// Full, on-demand decode of ONE record: every PERF_RECORD_* type of the current uapi and every
// sample_type field. Not the hot path, so u64 values are BigInt here. Every read is bounded by the
// record's own end; bad bytes throw DecodeError (the only exception this module raises).

import { CallchainContext, Misc, ReadFormat, RECORD_TYPE_NAMES, RecordType, Sample } from '../abi/uapi';
import { parseInfoFor } from './parse-info';
import { DecodeError } from './errors';
import type { ParseInfo } from './parse-info';
import { decodeTracepoint, type TracepointValues } from './tracepoint';
import type { DecodedRecord, DecodedSnapshot, SampleValuesReader, UserStackUnwinder } from './types';
import type { EventDescription, RingCopy } from '../abi/snapshot';

const utf8 = new TextDecoder('utf-8');

/** A bounded little-endian reader over [position, end) of a buffer. */
export class RecordCursor {
  private readonly view: DataView;
  position: number;

  constructor(
    readonly bytes: Uint8Array,
    start: number,
    public end: number,
    private readonly context: string,
  ) {
    if (start < 0 || end > bytes.length || start > end) throw new DecodeError(start, context, `range ${start}..${end} outside a ${bytes.length}-byte buffer`);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.position = start;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  private need(count: number, what: string): number {
    const at = this.position;
    if (count < 0 || at + count > this.end) {
      throw new DecodeError(at, `${this.context}.${what}`, `needs ${count} bytes, ${this.end - at} left in the record`);
    }
    this.position = at + count;
    return at;
  }

  u8(what: string): number {
    return this.view.getUint8(this.need(1, what));
  }
  u16(what: string): number {
    return this.view.getUint16(this.need(2, what), true);
  }
  u32(what: string): number {
    return this.view.getUint32(this.need(4, what), true);
  }
  i32(what: string): number {
    return this.view.getInt32(this.need(4, what), true);
  }
  u64(what: string): bigint {
    return this.view.getBigUint64(this.need(8, what), true);
  }
  /** A u64 count that must fit what is left (each item `itemSize` bytes). */
  count(what: string, itemSize: number): number {
    const at = this.position;
    const value = this.u64(what);
    if (value > BigInt(Math.floor(this.remaining / itemSize))) {
      throw new DecodeError(at, `${this.context}.${what}`, `count ${value} does not fit the ${this.remaining} bytes left`);
    }
    return Number(value);
  }
  /** A copy of the next `count` bytes. */
  take(count: number, what: string): Uint8Array {
    const at = this.need(count, what);
    return this.bytes.slice(at, at + count);
  }
  /** A NUL-terminated string filling (at most) the rest of the range; the padding after the NUL is skipped. */
  cstring(what: string, limit: number = this.remaining): string {
    const at = this.need(Math.min(limit, this.remaining), what);
    const stop = at + Math.min(limit, this.end - at);
    let nul = at;
    while (nul < stop && this.bytes[nul] !== 0) nul++;
    return utf8.decode(this.bytes.subarray(at, nul));
  }
}

export type CallchainContextName = 'hv' | 'kernel' | 'user' | 'guest' | 'guest-kernel' | 'guest-user' | 'user-deferred' | 'unknown';

/** One callchain entry; PERF_CONTEXT_* markers are kept (isMarker) and set the context of the entries after them. */
export interface CallchainFrame {
  readonly ip: bigint;
  readonly context: CallchainContextName;
  readonly isMarker: boolean;
}

/** PERF_CONTEXT_USER_DEFERRED = (u64)-640 (Linux 6.18). */
const CONTEXT_USER_DEFERRED_LOW = 0xfffffd80;

const CONTEXT_BY_LOW: ReadonlyMap<number, CallchainContextName> = new Map([
  [CallchainContext.HV, 'hv'],
  [CallchainContext.KERNEL, 'kernel'],
  [CallchainContext.USER, 'user'],
  [CallchainContext.GUEST, 'guest'],
  [CallchainContext.GUEST_KERNEL, 'guest-kernel'],
  [CallchainContext.GUEST_USER, 'guest-user'],
  [CONTEXT_USER_DEFERRED_LOW, 'user-deferred'],
]);

const PERF_CONTEXT_MAX = BigInt.asUintN(64, -4095n);

function decodeCallchain(cursor: RecordCursor, what: string): CallchainFrame[] {
  const nr = cursor.count(`${what}.nr`, 8);
  const frames: CallchainFrame[] = [];
  let context: CallchainContextName = 'unknown';
  for (let i = 0; i < nr; i++) {
    const ip = cursor.u64(`${what}[${i}]`);
    if (ip >= PERF_CONTEXT_MAX) {
      context = CONTEXT_BY_LOW.get(Number(ip & 0xffffffffn)) ?? 'unknown';
      frames.push({ ip, context, isMarker: true });
    } else {
      frames.push({ ip, context, isMarker: false });
    }
  }
  return frames;
}

export interface ReadValue {
  readonly value: bigint;
  readonly id?: bigint;
  readonly lost?: bigint;
}
export interface ReadBlock {
  readonly timeEnabled?: bigint;
  readonly timeRunning?: bigint;
  /** One entry, or one per group member with PERF_FORMAT_GROUP. */
  readonly values: readonly ReadValue[];
}

function decodeRead(cursor: RecordCursor, readFormat: number): ReadBlock {
  const withId = (readFormat & ReadFormat.ID) !== 0;
  const withLost = (readFormat & ReadFormat.LOST) !== 0;
  const entry = (i: number): ReadValue => {
    const value = cursor.u64(`read.values[${i}].value`);
    const id = withId ? cursor.u64(`read.values[${i}].id`) : undefined;
    const lost = withLost ? cursor.u64(`read.values[${i}].lost`) : undefined;
    return { value, ...(id !== undefined ? { id } : {}), ...(lost !== undefined ? { lost } : {}) };
  };
  if (readFormat & ReadFormat.GROUP) {
    const nrAt = cursor.position;
    const nrValue = cursor.u64('read.nr');
    const timeEnabled = readFormat & ReadFormat.TOTAL_TIME_ENABLED ? cursor.u64('read.timeEnabled') : undefined;
    const timeRunning = readFormat & ReadFormat.TOTAL_TIME_RUNNING ? cursor.u64('read.timeRunning') : undefined;
    const entrySize = 8 + (withId ? 8 : 0) + (withLost ? 8 : 0);
    if (nrValue > BigInt(Math.floor(cursor.remaining / entrySize))) {
      throw new DecodeError(nrAt, 'read.nr', `group of ${nrValue} does not fit the ${cursor.remaining} bytes left`);
    }
    const values: ReadValue[] = [];
    for (let i = 0; i < Number(nrValue); i++) values.push(entry(i));
    return { ...(timeEnabled !== undefined ? { timeEnabled } : {}), ...(timeRunning !== undefined ? { timeRunning } : {}), values };
  }
  const value = cursor.u64('read.value');
  const timeEnabled = readFormat & ReadFormat.TOTAL_TIME_ENABLED ? cursor.u64('read.timeEnabled') : undefined;
  const timeRunning = readFormat & ReadFormat.TOTAL_TIME_RUNNING ? cursor.u64('read.timeRunning') : undefined;
  const id = withId ? cursor.u64('read.id') : undefined;
  const lost = withLost ? cursor.u64('read.lost') : undefined;
  return {
    ...(timeEnabled !== undefined ? { timeEnabled } : {}),
    ...(timeRunning !== undefined ? { timeRunning } : {}),
    values: [{ value, ...(id !== undefined ? { id } : {}), ...(lost !== undefined ? { lost } : {}) }],
  };
}

export interface BranchEntry {
  readonly from: bigint;
  readonly to: bigint;
  /** The raw flags word; the named fields below are decoded from it (struct perf_branch_entry bitfields). */
  readonly flags: bigint;
  readonly mispred: boolean;
  readonly predicted: boolean;
  readonly inTx: boolean;
  readonly abort: boolean;
  readonly cycles: number;
  readonly branchType: number;
}

function decodeBranchStack(cursor: RecordCursor, info: ParseInfo): { hwIndex?: bigint; entries: BranchEntry[]; counters?: bigint[] } {
  const nrAt = cursor.position;
  const nrValue = cursor.u64('branchStack.nr');
  const hwIndex = info.branchHwIndex ? cursor.u64('branchStack.hwIndex') : undefined;
  const perEntry = 24 + (info.branchCounters ? 8 : 0);
  if (nrValue > BigInt(Math.floor(cursor.remaining / perEntry))) {
    throw new DecodeError(nrAt, 'SAMPLE.branchStack.nr', `${nrValue} entries do not fit the ${cursor.remaining} bytes left`);
  }
  const nr = Number(nrValue);
  const entries: BranchEntry[] = [];
  for (let i = 0; i < nr; i++) {
    const from = cursor.u64(`branchStack[${i}].from`);
    const to = cursor.u64(`branchStack[${i}].to`);
    const flags = cursor.u64(`branchStack[${i}].flags`);
    const low = Number(flags & 0xffffffffn);
    entries.push({
      from,
      to,
      flags,
      mispred: (low & 1) !== 0,
      predicted: (low & 2) !== 0,
      inTx: (low & 4) !== 0,
      abort: (low & 8) !== 0,
      cycles: (low >>> 4) & 0xffff,
      branchType: (low >>> 20) & 0xf,
    });
  }
  const counters = info.branchCounters ? Array.from({ length: nr }, (_, i) => cursor.u64(`branchStack.counters[${i}]`)) : undefined;
  return { ...(hwIndex !== undefined ? { hwIndex } : {}), entries, ...(counters ? { counters } : {}) };
}

export interface RegsBlock {
  /** PERF_SAMPLE_REGS_ABI_*: 0 none (no registers follow), 1 = 32-bit, 2 = 64-bit. */
  readonly abi: bigint;
  /** Register values keyed by their bit number in the sample_regs mask (perf_regs.h order). */
  readonly regs: Readonly<Record<number, bigint>>;
}

function decodeRegs(cursor: RecordCursor, mask: bigint, what: string): RegsBlock {
  const abi = cursor.u64(`${what}.abi`);
  const regs: Record<number, bigint> = {};
  if (abi !== 0n) for (const bit of maskBits(mask)) regs[bit] = cursor.u64(`${what}.r${bit}`);
  return { abi, regs };
}

/** The set bits of a sample_regs mask, lowest first: the registers' order in a sample (worked out once per mask). */
function maskBits(mask: bigint): readonly number[] {
  let bits = MASK_BITS.get(mask);
  if (!bits) {
    bits = [];
    for (let bit = 0; bit < 64; bit++) if ((mask >> BigInt(bit)) & 1n) bits.push(bit);
    MASK_BITS.set(mask, bits);
  }
  return bits;
}
const MASK_BITS = new Map<bigint, number[]>();

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** Decodes the body of a PERF_RECORD_SAMPLE ([start, end) excludes the header). */
function decodeSample(cursor: RecordCursor, info: ParseInfo, event: EventDescription | undefined): Record<string, unknown> {
  const st = info.sampleType;
  const fields: Record<string, unknown> = {};
  if (st & Sample.IDENTIFIER) fields.identifier = cursor.u64('identifier');
  if (st & Sample.IP) fields.ip = cursor.u64('ip');
  if (st & Sample.TID) {
    fields.pid = cursor.i32('pid');
    fields.tid = cursor.i32('tid');
  }
  if (st & Sample.TIME) fields.time = cursor.u64('time');
  if (st & Sample.ADDR) fields.addr = cursor.u64('addr');
  if (st & Sample.ID) fields.id = cursor.u64('id');
  if (st & Sample.STREAM_ID) fields.streamId = cursor.u64('streamId');
  if (st & Sample.CPU) {
    fields.cpu = cursor.i32('cpu');
    cursor.u32('cpu.reserved');
  }
  if (st & Sample.PERIOD) fields.period = cursor.u64('period');
  if (st & Sample.READ) fields.read = decodeRead(cursor, info.readFormat);
  if (st & Sample.CALLCHAIN) fields.callchain = decodeCallchain(cursor, 'callchain');
  if (st & Sample.RAW) {
    const size = cursor.u32('raw.size');
    const raw = cursor.take(size, 'raw.data');
    fields.raw = raw;
    if (event?.tracepoint) {
      try {
        fields.tracepoint = decodeTracepoint(event.tracepoint, raw) satisfies TracepointValues;
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        fields.tracepointError = error.message;
      }
    }
  }
  if (st & Sample.BRANCH_STACK) fields.branchStack = decodeBranchStack(cursor, info);
  if (st & Sample.REGS_USER) fields.regsUser = decodeRegs(cursor, info.regsUserMask, 'regsUser');
  if (st & Sample.STACK_USER) {
    const sizeAt = cursor.position;
    const size = cursor.u64('stackUser.size');
    if (size > BigInt(cursor.remaining)) throw new DecodeError(sizeAt, 'SAMPLE.stackUser.size', `${size} bytes do not fit the ${cursor.remaining} left`);
    if (size === 0n) {
      fields.stackUser = { size: 0n, data: new Uint8Array(0), dynSize: 0n };
    } else {
      const data = cursor.take(Number(size), 'stackUser.data');
      const dynSize = cursor.u64('stackUser.dynSize');
      fields.stackUser = { size, data, dynSize };
    }
  }
  if (st & Sample.WEIGHT_STRUCT) {
    const var1Dw = cursor.u32('weight.var1');
    const var2W = cursor.u16('weight.var2');
    const var3W = cursor.u16('weight.var3');
    fields.weight = { var1Dw, var2W, var3W };
  } else if (st & Sample.WEIGHT) {
    fields.weight = cursor.u64('weight');
  }
  if (st & Sample.DATA_SRC) fields.dataSrc = cursor.u64('dataSrc');
  if (st & Sample.TRANSACTION) fields.transaction = cursor.u64('transaction');
  if (st & Sample.REGS_INTR) fields.regsIntr = decodeRegs(cursor, info.regsIntrMask, 'regsIntr');
  if (st & Sample.PHYS_ADDR) fields.physAddr = cursor.u64('physAddr');
  if (st & Sample.CGROUP) fields.cgroup = cursor.u64('cgroup');
  if (st & Sample.DATA_PAGE_SIZE) fields.dataPageSize = cursor.u64('dataPageSize');
  if (st & Sample.CODE_PAGE_SIZE) fields.codePageSize = cursor.u64('codePageSize');
  if (st & Sample.AUX) {
    const sizeAt = cursor.position;
    const size = cursor.u64('aux.size');
    if (size > BigInt(cursor.remaining)) throw new DecodeError(sizeAt, 'SAMPLE.aux.size', `${size} bytes do not fit the ${cursor.remaining} left`);
    fields.aux = cursor.take(Number(size), 'aux.data');
  }
  if (cursor.remaining > 0) fields.trailingBytes = cursor.remaining;
  return fields;
}

export interface SampleIdTrailer {
  pid?: number;
  tid?: number;
  time?: bigint;
  id?: bigint;
  streamId?: bigint;
  cpu?: number;
  identifier?: bigint;
}

function decodeTrailer(cursor: RecordCursor, info: ParseInfo): SampleIdTrailer {
  const st = info.sampleType;
  const trailer: SampleIdTrailer = {};
  if (st & Sample.TID) {
    trailer.pid = cursor.i32('sampleId.pid');
    trailer.tid = cursor.i32('sampleId.tid');
  }
  if (st & Sample.TIME) trailer.time = cursor.u64('sampleId.time');
  if (st & Sample.ID) trailer.id = cursor.u64('sampleId.id');
  if (st & Sample.STREAM_ID) trailer.streamId = cursor.u64('sampleId.streamId');
  if (st & Sample.CPU) {
    trailer.cpu = cursor.i32('sampleId.cpu');
    cursor.u32('sampleId.reserved');
  }
  if (st & Sample.IDENTIFIER) trailer.identifier = cursor.u64('sampleId.identifier');
  return trailer;
}

/** Decodes the body of a non-sample record of a known type. */
function decodeOther(type: number, misc: number, c: RecordCursor, info: ParseInfo): Record<string, unknown> {
  switch (type) {
    case RecordType.MMAP:
      return {
        pid: c.i32('pid'),
        tid: c.i32('tid'),
        addr: c.u64('addr'),
        len: c.u64('len'),
        pgoff: c.u64('pgoff'),
        filename: c.cstring('filename'),
        data: (misc & Misc.MMAP_DATA) !== 0,
      };
    case RecordType.LOST:
      return { id: c.u64('id'), lost: c.u64('lost') };
    case RecordType.COMM:
      return { pid: c.i32('pid'), tid: c.i32('tid'), comm: c.cstring('comm'), exec: (misc & Misc.COMM_EXEC) !== 0 };
    case RecordType.EXIT:
    case RecordType.FORK:
      return { pid: c.i32('pid'), ppid: c.i32('ppid'), tid: c.i32('tid'), ptid: c.i32('ptid'), time: c.u64('time') };
    case RecordType.THROTTLE:
    case RecordType.UNTHROTTLE:
      return { time: c.u64('time'), id: c.u64('id'), streamId: c.u64('streamId') };
    case RecordType.READ:
      return { pid: c.i32('pid'), tid: c.i32('tid'), read: decodeRead(c, info.readFormat) };
    case RecordType.MMAP2: {
      // One literal per form, no spreads: a busy side-band is hundreds of thousands of these, and
      // spreading three objects into a fourth made each decode several times slower.
      const pid = c.i32('pid');
      const tid = c.i32('tid');
      const addr = c.u64('addr');
      const len = c.u64('len');
      const pgoff = c.u64('pgoff');
      const data = (misc & Misc.MMAP_DATA) !== 0;
      if (misc & Misc.MMAP_BUILD_ID) {
        const buildIdSize = c.u8('buildIdSize');
        c.u8('reserved1');
        c.u16('reserved2');
        const buildId = c.take(20, 'buildId');
        if (buildIdSize > 20) throw new DecodeError(c.position - 24, 'MMAP2.buildIdSize', `${buildIdSize} exceeds 20`);
        const id = hex(buildId.subarray(0, buildIdSize));
        return { pid, tid, addr, len, pgoff, buildId: id, prot: c.u32('prot'), flags: c.u32('flags'), filename: c.cstring('filename'), data };
      }
      const maj = c.u32('maj');
      const min = c.u32('min');
      const ino = c.u64('ino');
      const inoGeneration = c.u64('inoGeneration');
      return { pid, tid, addr, len, pgoff, maj, min, ino, inoGeneration, prot: c.u32('prot'), flags: c.u32('flags'), filename: c.cstring('filename'), data };
    }
    case RecordType.AUX:
      return { auxOffset: c.u64('auxOffset'), auxSize: c.u64('auxSize'), flags: c.u64('flags') };
    case RecordType.ITRACE_START:
      return { pid: c.i32('pid'), tid: c.i32('tid') };
    case RecordType.LOST_SAMPLES:
      return { lost: c.u64('lost') };
    case RecordType.SWITCH:
      return { out: (misc & Misc.SWITCH_OUT) !== 0, preempt: (misc & Misc.SWITCH_OUT_PREEMPT) !== 0 };
    case RecordType.SWITCH_CPU_WIDE:
      return {
        nextPrevPid: c.i32('nextPrevPid'),
        nextPrevTid: c.i32('nextPrevTid'),
        out: (misc & Misc.SWITCH_OUT) !== 0,
        preempt: (misc & Misc.SWITCH_OUT_PREEMPT) !== 0,
      };
    case RecordType.NAMESPACES: {
      const pid = c.i32('pid');
      const tid = c.i32('tid');
      const nr = c.count('nrNamespaces', 16);
      const namespaces: { dev: bigint; inode: bigint }[] = [];
      for (let i = 0; i < nr; i++) namespaces.push({ dev: c.u64(`namespaces[${i}].dev`), inode: c.u64(`namespaces[${i}].inode`) });
      return { pid, tid, namespaces };
    }
    case RecordType.KSYMBOL:
      return { addr: c.u64('addr'), len: c.u32('len'), ksymType: c.u16('ksymType'), flags: c.u16('flags'), name: c.cstring('name') };
    case RecordType.BPF_EVENT:
      return { bpfType: c.u16('type'), flags: c.u16('flags'), id: c.u32('id'), tag: hex(c.take(8, 'tag')) };
    case RecordType.CGROUP:
      return { id: c.u64('id'), path: c.cstring('path') };
    case RecordType.TEXT_POKE: {
      const addr = c.u64('addr');
      const oldLen = c.u16('oldLen');
      const newLen = c.u16('newLen');
      return { addr, oldBytes: c.take(oldLen, 'oldBytes'), newBytes: c.take(newLen, 'newBytes') };
    }
    case RecordType.AUX_OUTPUT_HW_ID:
      return { hwId: c.u64('hwId') };
    case RecordType.CALLCHAIN_DEFERRED: {
      const cookie = c.u64('cookie');
      return { cookie, callchain: decodeCallchain(c, 'callchain') };
    }
    default:
      throw new DecodeError(c.position, `record type ${type}`, 'unknown type');
  }
}

/**
 * Decodes the record at `offset` of `bytes`. `event` describes it (its attr gives the layout);
 * without one, only the header and an unknown-type body can be decoded.
 */
export function decodeRecordBytes(bytes: Uint8Array, offset: number, event: EventDescription | undefined): DecodedRecord {
  if (offset < 0 || offset + 8 > bytes.length) throw new DecodeError(offset, 'header', `no 8-byte header inside a ${bytes.length}-byte buffer`);
  const header = new RecordCursor(bytes, offset, offset + 8, 'header');
  const type = header.u32('type');
  const misc = header.u16('misc');
  const size = header.u16('size');
  if (size < 8) throw new DecodeError(offset, 'header.size', `size ${size} is smaller than the header`);
  if (offset + size > bytes.length) throw new DecodeError(offset, 'header.size', `size ${size} runs past the ${bytes.length}-byte buffer`);
  const typeName = RECORD_TYPE_NAMES[type];
  const eventName = event?.name;
  if (typeName === undefined) {
    return {
      type: `RAW_${type}`,
      ...(eventName !== undefined ? { event: eventName } : {}),
      misc,
      fields: { bytes: hex(bytes.subarray(offset + 8, offset + size)) },
    };
  }
  const info = event ? parseInfoFor(event) : undefined;
  const name = typeName;
  if (type === RecordType.SAMPLE) {
    if (!info) throw new DecodeError(offset, 'SAMPLE', 'no event describes this sample');
    const fields = decodeSample(new RecordCursor(bytes, offset + 8, offset + size, 'SAMPLE'), info, event);
    const pid = typeof fields.pid === 'number' ? fields.pid : undefined;
    return recordOf(
      name,
      eventName,
      misc,
      typeof fields.time === 'bigint' ? fields.time : undefined,
      pid,
      pid !== undefined ? (fields.tid as number) : undefined,
      typeof fields.cpu === 'number' ? fields.cpu : undefined,
      fields,
    );
  }
  const trailerSize = info?.trailer.size ?? 0;
  if (size < 8 + trailerSize) throw new DecodeError(offset, `${name}.sampleId`, `record of ${size} bytes cannot hold a ${trailerSize}-byte sample_id trailer`);
  const bodyEnd = offset + size - trailerSize;
  const body = decodeOther(type, misc, new RecordCursor(bytes, offset + 8, bodyEnd, name), info ?? NO_INFO);
  const trailer = info && trailerSize > 0 ? decodeTrailer(new RecordCursor(bytes, bodyEnd, offset + size, name), info) : undefined;
  // The body is this call's own object: the trailer joins it rather than a copy of it.
  const fields: Record<string, unknown> = body;
  if (trailer) fields.sampleId = trailer;
  const bodyPid = typeof body.pid === 'number' ? body.pid : undefined;
  const bodyTid = typeof body.tid === 'number' ? body.tid : undefined;
  const timeNs = trailer?.time ?? (typeof body.time === 'bigint' ? body.time : undefined);
  const pid = bodyPid ?? trailer?.pid;
  const tid = bodyTid ?? trailer?.tid;
  return recordOf(name, eventName, misc, timeNs, pid, tid, trailer?.cpu, fields);
}

/**
 * A DecodedRecord with only the properties that have a value, set one by one in the order the
 * JSON shows them: conditional spreads cost more than the decode itself, and a busy side-band
 * is hundreds of thousands of records.
 */
function recordOf(
  type: string,
  event: string | undefined,
  misc: number,
  timeNs: bigint | undefined,
  pid: number | undefined,
  tid: number | undefined,
  cpu: number | undefined,
  fields: Record<string, unknown>,
): DecodedRecord {
  const record: { -readonly [K in keyof DecodedRecord]?: DecodedRecord[K] } = event !== undefined ? { type, event, misc } : { type, misc };
  if (timeNs !== undefined) record.timeNs = timeNs;
  if (pid !== undefined) record.pid = pid;
  if (tid !== undefined) record.tid = tid;
  if (cpu !== undefined) record.cpu = cpu;
  record.fields = fields;
  return record as DecodedRecord;
}

/** Layout used for side-band records that no event describes: no trailer, plain read format. */
const NO_INFO: ParseInfo = {
  sampleType: 0,
  readFormat: 0,
  sampleIdAll: false,
  sample: { identifier: -1, ip: -1, pidTid: -1, time: -1, addr: -1, id: -1, streamId: -1, cpu: -1, period: -1, fixedEnd: 8 },
  trailer: { size: 0, pidTidFromEnd: -1, timeFromEnd: -1, idFromEnd: -1, streamIdFromEnd: -1, cpuFromEnd: -1, identifierFromEnd: -1 },
  readSizeSingle: 8,
  readGroupEntrySize: 8,
  regsUserCount: 0,
  regsIntrCount: 0,
  regsUserMask: 0n,
  regsIntrMask: 0n,
  branchHwIndex: false,
  branchCounters: false,
  fixedSampleSize: true,
};

/** The ring copy and event of a row of a decoded snapshot. */
export function rowSource(snapshot: DecodedSnapshot, row: number): { ring: RingCopy; offset: number; event: EventDescription | undefined } {
  const columns = snapshot.columns;
  if (!Number.isInteger(row) || row < 0 || row >= columns.length) throw new DecodeError(0, 'row', `row ${row} is outside 0..${columns.length - 1}`);
  const ring = snapshot.rings[columns.ring[row]];
  const eventIndex = columns.event[row];
  const event = snapshot.events.find((candidate) => candidate.index === eventIndex);
  return { ring, offset: columns.offset[row], event };
}

/** Full decode of one row of a decoded snapshot (details pane, JSON output). */
export function decodeRecordAt(snapshot: DecodedSnapshot, row: number): DecodedRecord {
  const { ring, offset, event } = rowSource(snapshot, row);
  let decoded = decodeRecordBytes(ring.bytes, offset, event);
  if (snapshot.unwindUserStack) decoded = withUnwoundUserStack(decoded, snapshot.unwindUserStack);
  if (snapshot.sampleValues && event) decoded = withSampleValues(decoded, event, snapshot.sampleValues);
  if (decoded.cpu === undefined && ring.cpu >= 0) return { ...decoded, cpu: ring.cpu };
  return decoded;
}

/** A sample whose registers and stack a host reads values from: the values in their place (see SampleValuesReader). */
function withSampleValues(record: DecodedRecord, event: EventDescription, read: SampleValuesReader): DecodedRecord {
  const state = userStateOf(record);
  if (!state) return record;
  const values = read(event, state.pid, state.registers, state.stack, state.raw);
  if (!values) return record;
  // The raw data of a logpoint is the memory its uprobe fetched (the red zone), now in its values.
  const { regsUser: _regs, stackUser: _stack, raw: _raw, ...rest } = record.fields;
  return { ...record, fields: { ...rest, ...values } };
}

/** The user registers and valid stack (and raw data) of a decoded sample, undefined where it has none. */
function userStateOf(record: DecodedRecord): SampleUserState | undefined {
  const { regsUser, stackUser, raw } = record.fields as { regsUser?: RegsBlock; stackUser?: { data: Uint8Array; dynSize: bigint }; raw?: Uint8Array };
  if (record.type !== 'SAMPLE' || record.pid === undefined || !regsUser || !stackUser) return undefined;
  const valid = stackUser.data.subarray(0, Number(stackUser.dynSize < BigInt(stackUser.data.length) ? stackUser.dynSize : BigInt(stackUser.data.length)));
  return { pid: record.pid, registers: regsUser.regs, stack: valid, raw };
}

const PERF_CONTEXT_USER = 0xffffffff00000000n | BigInt(CallchainContext.USER);

/**
 * A sample with user registers and stack (`perf record --call-graph dwarf`, `-g dwarf`) gets the
 * unwound user frames appended to its callchain after a PERF_CONTEXT_USER marker, as perf shows them:
 * the kernel recorded only the kernel part (exclude_callchain_user). A callchain that already has
 * user frames (frame pointers) is left as the kernel gave it.
 */
function withUnwoundUserStack(record: DecodedRecord, unwind: UserStackUnwinder): DecodedRecord {
  const fields = record.fields as { regsUser?: RegsBlock; stackUser?: { data: Uint8Array; dynSize: bigint }; callchain?: CallchainFrame[] };
  const { regsUser, stackUser, callchain } = fields;
  if (record.type !== 'SAMPLE' || record.pid === undefined || !regsUser || regsUser.abi === 0n || !stackUser) return record;
  if (callchain?.some((frame) => !frame.isMarker && (frame.context === 'user' || frame.context === 'guest-user'))) return record;
  const valid = stackUser.data.subarray(0, Number(stackUser.dynSize < BigInt(stackUser.data.length) ? stackUser.dynSize : BigInt(stackUser.data.length)));
  const frames = unwind(record.pid, regsUser.regs, valid);
  if (frames.length === 0) return record;
  const user: CallchainFrame[] = [
    { ip: PERF_CONTEXT_USER, context: 'user', isMarker: true },
    ...frames.map((ip) => ({ ip, context: 'user' as const, isMarker: false })),
  ];
  return { ...record, fields: { ...record.fields, callchain: [...(callchain ?? []), ...user] } };
}

/**
 * Sample fields sampleUserState does not walk: READ and BRANCH_STACK before the user registers, and every field after
 * the user stack (whose bytes the record decoder checks; a logpoint's samples have none of them).
 */
const LEFT_TO_THE_RECORD_DECODER =
  Sample.READ |
  Sample.BRANCH_STACK |
  Sample.WEIGHT |
  Sample.WEIGHT_STRUCT |
  Sample.DATA_SRC |
  Sample.TRANSACTION |
  Sample.REGS_INTR |
  Sample.PHYS_ADDR |
  Sample.CGROUP |
  Sample.DATA_PAGE_SIZE |
  Sample.CODE_PAGE_SIZE |
  Sample.AUX;

/** What a host reads a logpoint hit's values from (see SampleValuesReader), read in place by sampleUserState. */
export interface SampleUserState {
  readonly pid: number;
  /** Register values keyed by their bit in sample_regs_user (empty where the sample holds none: ABI 0). */
  readonly registers: Readonly<Record<number, bigint>>;
  /** The valid bytes of the user stack copy (dyn_size of them). */
  readonly stack: Uint8Array;
  readonly raw: Uint8Array | undefined;
}

/**
 * The pid, user registers, user stack and raw data of record `row` as withSampleValues gives them to a host's
 * SampleValuesReader (undefined where the record has none of them), read where they lie without decoding the rest
 * of the record: a tally reads them for every hit of a logpoint, and decoding a record costs several times reading
 * its values. A record the in-place reader does not walk (see LEFT_TO_THE_RECORD_DECODER), or whose bytes do not
 * fit its event's layout, is decoded, and throws the DecodeError that decodeRecordAt would.
 */
export function sampleUserState(snapshot: DecodedSnapshot, row: number, room?: SampleUserStateRoom): SampleUserState | undefined {
  const { ring, offset, event } = rowSource(snapshot, row);
  const inPlace = event && snapshot.columns.kind[row] === RecordType.SAMPLE ? userStateInPlace(ring.bytes, offset, event, room) : undefined;
  return inPlace ?? userStateOf(decodeRecordBytes(ring.bytes, offset, event));
}

/**
 * What sampleUserState may reuse from row to row, for a caller that is done with a row's state before it asks the next
 * (a tally's reader): the registers object, whose keys are the same at every sample of one event, and the state itself.
 */
export interface SampleUserStateRoom {
  /** The register mask `registers` has the keys of. */
  mask?: bigint;
  /** The registers of the row read last, each read from its bytes when asked (at registersAt of view). */
  registers?: Record<number, bigint>;
  view?: DataView;
  registersAt?: number;
  /** Counts the rows read (never 0): a register read in this row is kept for it. */
  row?: number;
  state?: { pid: number; registers: Readonly<Record<number, bigint>>; stack: Uint8Array; raw: Uint8Array | undefined };
}

/** A view of each ring copy userStateInPlace reads, made once per copy (and gone with it). */
const RING_VIEWS = new WeakMap<Uint8Array, DataView>();

/** sampleUserState read in place; undefined where the record decoder must read it. */
function userStateInPlace(bytes: Uint8Array, offset: number, event: EventDescription, room?: SampleUserStateRoom): SampleUserState | undefined {
  const info = parseInfoFor(event);
  const st = info.sampleType;
  const needed = Sample.TID | Sample.REGS_USER | Sample.STACK_USER;
  if ((st & needed) !== needed || (st & LEFT_TO_THE_RECORD_DECODER) !== 0) return undefined;
  if (offset + 8 > bytes.length) return undefined;
  let view = RING_VIEWS.get(bytes);
  if (!view) RING_VIEWS.set(bytes, (view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  const end = offset + view.getUint16(offset + 6, true);
  if (end > bytes.length) return undefined;
  let at = offset + info.sample.fixedEnd;
  if (at > end) return undefined;
  const pid = view.getInt32(offset + info.sample.pidTid, true);
  if (st & Sample.CALLCHAIN) {
    if (at + 8 > end) return undefined;
    const count = view.getUint32(at, true);
    if (view.getUint32(at + 4, true) !== 0 || count > (end - at - 8) / 8) return undefined;
    at += 8 + count * 8;
  }
  let raw: Uint8Array | undefined;
  if (st & Sample.RAW) {
    if (at + 4 > end) return undefined;
    const size = view.getUint32(at, true);
    if (size > end - at - 4) return undefined;
    raw = bytes.subarray(at + 4, at + 4 + size);
    at += 4 + size;
  }
  if (at + 8 > end) return undefined;
  const abi = view.getBigUint64(at, true);
  at += 8;
  let registers: Record<number, bigint> = {};
  if (abi !== 0n) {
    if (at + 8 * info.regsUserCount > end) return undefined;
    if (room) {
      // Read when asked, from this row's bytes: a hit's values read a few of the registers (the pc, the stack pointer,
      // the CFA's, the variables'), and making a bigint of each of the others cost more than the rest of the row.
      if (room.mask !== info.regsUserMask || !room.registers) {
        const lazy: Record<number, bigint> = {};
        const bits = maskBits(info.regsUserMask);
        const values = new Array<bigint>(bits.length).fill(0n);
        const readAt = new Int32Array(bits.length);
        // Each made once per row (the stack pointer is asked by the red zone, the plan and the frame).
        bits.forEach((bit, index) =>
          Object.defineProperty(lazy, bit, {
            enumerable: true,
            get: () => {
              if (readAt[index] !== room.row) {
                values[index] = room.view!.getBigUint64(room.registersAt! + index * 8, true);
                readAt[index] = room.row!;
              }
              return values[index];
            },
          }),
        );
        room.registers = lazy;
        room.mask = info.regsUserMask;
      }
      room.view = view;
      room.registersAt = at;
      room.row = ((room.row ?? 0) + 1) | 0 || 1; // never 0, what readAt starts with
      registers = room.registers;
      at += 8 * info.regsUserCount;
    } else
      for (const bit of maskBits(info.regsUserMask)) {
        registers[bit] = view.getBigUint64(at, true);
        at += 8;
      }
  }
  if (at + 8 > end) return undefined;
  const size = view.getBigUint64(at, true);
  at += 8;
  if (size === 0n) return stateOf(room, pid, registers, new Uint8Array(0), raw);
  if (size > BigInt(end - at - 8)) return undefined;
  const dynSize = view.getBigUint64(at + Number(size), true);
  return stateOf(room, pid, registers, bytes.subarray(at, at + (dynSize < size ? Number(dynSize) : Number(size))), raw);
}

/** A row's state, in `room`'s object where there is a room. */
function stateOf(
  room: SampleUserStateRoom | undefined,
  pid: number,
  registers: Readonly<Record<number, bigint>>,
  stack: Uint8Array,
  raw: Uint8Array | undefined,
): SampleUserState {
  if (!room) return { pid, registers, stack, raw };
  const state = (room.state ??= { pid, registers, stack, raw });
  state.pid = pid;
  state.registers = registers;
  state.stack = stack;
  state.raw = raw;
  return state;
}
