// A small record ENCODER for the decoder's tests: writes perf records byte by byte the way the
// kernel lays them out (perf_event.h), and simulates the kernel writing them into backward and
// forward rings, wrap included. Test support only; nothing in the product imports it.

import type { PerfEventAttr } from '../abi/attr';
import { PerfType, ReadFormat, RecordType, Sample } from '../abi/uapi';
import { linearizeRing } from './walk';
import type { SampleIdTrailer } from './record';
import { decodeRecordAt } from './record';
import type { DecodedRecord, DecodedSnapshot, RecordColumns } from './types';
import type { EventDescription, RingCopy, TracepointField } from '../abi/snapshot';
import { RECORD_COLUMN_NAMES } from './column-schema';

export class ByteWriter {
  private readonly bytes: number[] = [];

  get length(): number {
    return this.bytes.length;
  }
  u8(value: number): this {
    this.bytes.push(value & 0xff);
    return this;
  }
  u16(value: number): this {
    return this.u8(value).u8(value >>> 8);
  }
  u32(value: number): this {
    return this.u16(value & 0xffff).u16(value >>> 16);
  }
  u64(value: bigint | number): this {
    const v = BigInt.asUintN(64, BigInt(value));
    return this.u32(Number(v & 0xffffffffn)).u32(Number(v >> 32n));
  }
  raw(bytes: ArrayLike<number>): this {
    for (let i = 0; i < bytes.length; i++) this.bytes.push(bytes[i] & 0xff);
    return this;
  }
  /** NUL-terminated, padded with NULs to a multiple of 8 (as the kernel does for comm/filename). */
  cstring(text: string): this {
    const encoded = new TextEncoder().encode(text);
    this.raw(encoded).u8(0);
    while (this.bytes.length % 8 !== 0) this.u8(0);
    return this;
  }
  pad8(): this {
    while (this.bytes.length % 8 !== 0) this.u8(0);
    return this;
  }
  toBytes(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/**
 * Values of the sample_id trailer / sample fixed fields, as the decoder reads them back; only those
 * selected by sample_type are written, and IDENTIFIER repeats `id`.
 */
export type IdValues = Omit<SampleIdTrailer, 'identifier'>;

export interface SampleValues extends IdValues {
  ip?: bigint;
  addr?: bigint;
  period?: bigint;
  /** Pre-encoded variable part (READ, CALLCHAIN, RAW...), appended after PERIOD. */
  tail?: Uint8Array;
}

export function header(type: number, misc: number, size: number): ByteWriter {
  return new ByteWriter().u32(type).u16(misc).u16(size);
}

/** A PERF_RECORD_SAMPLE for `sampleType` (fixed prefix written from `values`, then `tail`). */
export function sampleRecord(sampleType: number, values: SampleValues, misc = 2): Uint8Array {
  const body = new ByteWriter();
  if (sampleType & Sample.IDENTIFIER) body.u64(values.id ?? 0n);
  if (sampleType & Sample.IP) body.u64(values.ip ?? 0n);
  if (sampleType & Sample.TID) body.u32(values.pid ?? 0).u32(values.tid ?? 0);
  if (sampleType & Sample.TIME) body.u64(values.time ?? 0n);
  if (sampleType & Sample.ADDR) body.u64(values.addr ?? 0n);
  if (sampleType & Sample.ID) body.u64(values.id ?? 0n);
  if (sampleType & Sample.STREAM_ID) body.u64(values.streamId ?? 0n);
  if (sampleType & Sample.CPU) body.u32(values.cpu ?? 0).u32(0);
  if (sampleType & Sample.PERIOD) body.u64(values.period ?? 0n);
  if (values.tail) body.raw(values.tail);
  const bodyBytes = body.toBytes();
  return header(RecordType.SAMPLE, misc, 8 + bodyBytes.length)
    .raw(bodyBytes)
    .toBytes();
}

/** struct sample_id trailer bytes for `sampleType`. */
export function trailer(sampleType: number, values: IdValues): Uint8Array {
  const w = new ByteWriter();
  if (sampleType & Sample.TID) w.u32(values.pid ?? 0).u32(values.tid ?? 0);
  if (sampleType & Sample.TIME) w.u64(values.time ?? 0n);
  if (sampleType & Sample.ID) w.u64(values.id ?? 0n);
  if (sampleType & Sample.STREAM_ID) w.u64(values.streamId ?? 0n);
  if (sampleType & Sample.CPU) w.u32(values.cpu ?? 0).u32(0);
  if (sampleType & Sample.IDENTIFIER) w.u64(values.id ?? 0n);
  return w.toBytes();
}

/** PERF_RECORD_THROTTLE at `time` for sample id `id`, with the sample_id trailer of `sampleType` (pid and tid 1). */
export function throttleRecord(sampleType: number, time: bigint, id: bigint): Uint8Array {
  return otherRecord(RecordType.THROTTLE, 0, new ByteWriter().u64(time).u64(id).u64(0n).toBytes(), sampleType, true, { pid: 1, tid: 1, time, id });
}

/** PERF_RECORD_COMM naming task 5 `comm` at `time`, with the sample_id trailer of `sampleType`. */
export function commRecord(sampleType: number, comm: string, time: bigint, id: bigint): Uint8Array {
  return otherRecord(RecordType.COMM, 0, new ByteWriter().u32(5).u32(5).cstring(comm).toBytes(), sampleType, true, { pid: 5, tid: 5, time, id });
}

/** A non-sample record: body (already 8-aligned) then the sample_id trailer when `sampleIdAll`. */
export function otherRecord(type: number, misc: number, body: Uint8Array, sampleType = 0, sampleIdAll = false, ids: IdValues = {}): Uint8Array {
  const tail = sampleIdAll ? trailer(sampleType, ids) : new Uint8Array(0);
  return header(type, misc, 8 + body.length + tail.length)
    .raw(body)
    .raw(tail)
    .toBytes();
}

export function readBlock(readFormat: number, values: { value: bigint; id?: bigint; lost?: bigint }[], timeEnabled = 0n, timeRunning = 0n): Uint8Array {
  const w = new ByteWriter();
  if (readFormat & ReadFormat.GROUP) {
    w.u64(values.length);
    if (readFormat & ReadFormat.TOTAL_TIME_ENABLED) w.u64(timeEnabled);
    if (readFormat & ReadFormat.TOTAL_TIME_RUNNING) w.u64(timeRunning);
    for (const v of values) {
      w.u64(v.value);
      if (readFormat & ReadFormat.ID) w.u64(v.id ?? 0n);
      if (readFormat & ReadFormat.LOST) w.u64(v.lost ?? 0n);
    }
  } else {
    w.u64(values[0].value);
    if (readFormat & ReadFormat.TOTAL_TIME_ENABLED) w.u64(timeEnabled);
    if (readFormat & ReadFormat.TOTAL_TIME_RUNNING) w.u64(timeRunning);
    if (readFormat & ReadFormat.ID) w.u64(values[0].id ?? 0n);
    if (readFormat & ReadFormat.LOST) w.u64(values[0].lost ?? 0n);
  }
  return w.toBytes();
}

export function attrOf(sampleType: number, extra: Partial<PerfEventAttr> = {}): PerfEventAttr {
  return { type: 1, config: 0n, samplePeriod: 1n, sampleType, readFormat: 0, flags: {}, ...extra };
}

export function eventOf(index: number, attr: PerfEventAttr, ids: bigint[] = [], name = `event${index}`): EventDescription {
  return { index, name, attr, ids };
}

/**
 * Simulates the kernel writing `records` (oldest first) into a ring of `dataSize` bytes and returns
 * the linearised copy. Backward: data_head counts down from 0; forward: up from 0 (tail = head - what fits).
 */
export function ringFromRecords(
  records: readonly Uint8Array[],
  dataSize: number,
  direction: 'backward' | 'forward',
  options: { ringId?: number; cpu?: number; defaultEvent?: number; tail?: bigint } = {},
): RingCopy {
  const area = new Uint8Array(dataSize);
  let head = 0n;
  const size = BigInt(dataSize);
  for (const record of records) {
    if (direction === 'backward') head -= BigInt(record.length);
    const start = Number(((head % size) + size) % size);
    for (let i = 0; i < record.length; i++) area[(start + i) % dataSize] = record[i];
    if (direction === 'forward') head += BigInt(record.length);
  }
  const linear = linearizeRing(area, head, direction, options.tail);
  return {
    ringId: options.ringId ?? 0,
    label: `ring${options.ringId ?? 0}`,
    cpu: options.cpu ?? -1,
    tid: -1,
    direction,
    defaultEvent: options.defaultEvent ?? 0,
    bytes: linear.bytes,
    validBytes: linear.validBytes,
    dataSize,
    bytesWritten: linear.bytesWritten,
    path: 'paused',
  };
}

/** A RingCopy straight from linearised bytes (for walk edge cases). */
export function ringFromLinear(bytes: Uint8Array, direction: 'backward' | 'forward', validBytes = bytes.length, dataSize = bytes.length): RingCopy {
  return {
    ringId: 0,
    label: 'ring0',
    cpu: -1,
    tid: -1,
    direction,
    defaultEvent: 0,
    bytes,
    validBytes,
    dataSize,
    bytesWritten: BigInt(validBytes),
    path: 'paused',
  };
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** xorshift32: a tiny deterministic PRNG for seeded fuzz tests, so every failure reproduces from its seed. Returns [0, 1). */
export function prng(seed: number): () => number {
  // xorshift32's first outputs from a small seed are tiny (seed 1 gives 0.00000x): the seed goes through
  // murmur3's finalizer first, so seeds 1, 2, 3 start anywhere in [0, 1).
  let state = (seed + 0x9e3779b9) >>> 0;
  state = Math.imul(state ^ (state >>> 16), 0x85ebca6b);
  state = Math.imul(state ^ (state >>> 13), 0xc2b2ae35);
  state = (state ^ (state >>> 16)) >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x100000000;
  };
}

/**
 * Differential check of the bulk decoder against the plain record-by-record path
 * (decodeRecordAt over the row's ring bytes): for every row, the same record type, misc, exact
 * 64-bit time, pid/tid, CPU and sample IP. Returns the first mismatches (empty: they agree).
 */
export function recordByRecordMismatches(snapshot: DecodedSnapshot, limit = 10): string[] {
  const c = snapshot.columns;
  const problems: string[] = [];
  const note = (row: number, what: string, bulk: unknown, single: unknown) => {
    if (problems.length < limit) problems.push(`row ${row}: ${what} ${String(bulk)} (columns) vs ${String(single)} (record by record)`);
  };
  for (let row = 0; row < c.length && problems.length < limit; row++) {
    let record: DecodedRecord;
    try {
      record = decodeRecordAt(snapshot, row);
    } catch {
      continue; // a damaged record: the columns still hold its header fields; nothing to compare
    }
    const kind = c.kind[row];
    if (kind === RecordType.SAMPLE && record.type !== 'SAMPLE') note(row, 'type', kind, record.type);
    if (c.misc[row] !== record.misc) note(row, 'misc', c.misc[row], record.misc);
    const time = c.time[row];
    const bulkTime = time === time ? c.timeOriginNs + BigInt(time) : undefined;
    if (record.timeNs !== undefined && bulkTime !== record.timeNs) note(row, 'time', bulkTime, record.timeNs);
    if (record.pid !== undefined && (c.pid[row] !== record.pid || c.tid[row] !== record.tid))
      note(row, 'pid/tid', `${c.pid[row]}/${c.tid[row]}`, `${record.pid}/${record.tid}`);
    if (record.cpu !== undefined && c.cpu[row] !== record.cpu) note(row, 'cpu', c.cpu[row], record.cpu);
    const ip = record.type === 'SAMPLE' && typeof record.fields.ip === 'bigint' ? record.fields.ip : 0n;
    const bulkIp = (BigInt(c.ipHi[row]) << 32n) | BigInt(c.ipLo[row]);
    if (record.type === 'SAMPLE' && bulkIp !== ip) note(row, 'ip', bulkIp, ip);
  }
  return problems;
}

/** Every column of `a` equals the same column of `b` (NaN equals NaN): first differences, empty when equal. */
export function columnDifferences(a: RecordColumns, b: RecordColumns, limit = 10): string[] {
  const problems: string[] = [];
  if (a.length !== b.length) return [`length ${a.length} vs ${b.length}`];
  if (a.timeOriginNs !== b.timeOriginNs) problems.push(`timeOriginNs ${a.timeOriginNs} vs ${b.timeOriginNs}`);
  for (const name of RECORD_COLUMN_NAMES) {
    const x = a[name];
    const y = b[name];
    for (let row = 0; row < a.length && problems.length < limit; row++) {
      if (x[row] !== y[row] && !(x[row] !== x[row] && y[row] !== y[row])) problems.push(`${name}[${row}] ${x[row]} vs ${y[row]}`);
    }
  }
  return problems;
}

/**
 * Columns compared byte for byte (NaN bit patterns included): the first columns whose bytes differ,
 * with the first differing row. Empty when every column of `a` is the same bytes as in `b`.
 */
export function columnByteDifferences(a: RecordColumns, b: RecordColumns): string[] {
  if (a.length !== b.length) return [`length ${a.length} vs ${b.length}`];
  const problems: string[] = a.timeOriginNs === b.timeOriginNs ? [] : [`timeOriginNs ${a.timeOriginNs} vs ${b.timeOriginNs}`];
  const bytesOf = (column: RecordColumns[keyof RecordColumns] & ArrayBufferView) => new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
  for (const name of RECORD_COLUMN_NAMES) {
    const x = bytesOf(a[name]);
    const y = bytesOf(b[name]);
    // A plain loop: findIndex's callback made comparing the columns of a million rows take a second.
    let at = -1;
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) {
        at = i;
        break;
      }
    }
    if (x.length === y.length && at < 0) continue;
    problems.push(`${name}: ${x.length} vs ${y.length} bytes, first difference in row ${Math.floor(at / a[name].BYTES_PER_ELEMENT)}`);
  }
  return problems;
}

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
/** A second event without IP (its rows must read ip 0 even in reused memory) and with a RAW tail. */
const NO_IP = Sample.IDENTIFIER | Sample.TID | Sample.TIME | Sample.RAW;
const SIDE = Sample.IDENTIFIER | Sample.TID | Sample.TIME;

/**
 * A seeded snapshot like a per-CPU recording: 1-6 flight-recorder rings (some wrapped, record
 * sizes mixed so the size estimate is crossed) with samples of two events, and a forward side-band
 * ring of COMM and LOST records with sample_id_all trailers, all interleaved in time.
 * `secondEvent` false: the flight-recorder rings hold samples of the first event only.
 */
export function randomPerCpuSnapshot(seed: number, maxRecords = 400, secondEvent = true): { events: EventDescription[]; rings: RingCopy[] } {
  const random = prng(seed);
  const events = [
    eventOf(0, attrOf(HOT, { flags: { sampleIdAll: true } }), [11n, 12n], 'hot'),
    eventOf(1, attrOf(NO_IP, { flags: { sampleIdAll: true } }), [21n], 'raw'),
    eventOf(2, attrOf(SIDE, { flags: { sampleIdAll: true } }), [31n], 'side'),
  ];
  const base = 0xfffff000n + BigInt(Math.floor(random() * 1e6));
  const ringCount = 1 + Math.floor(random() * 6);
  const rings = [];
  for (let r = 0; r < ringCount; r++) {
    const count = Math.floor(random() * maxRecords);
    let time = base + BigInt(Math.floor(random() * 50));
    const records: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      time += BigInt(1 + Math.floor(random() * 40));
      if (random() < 0.3 && secondEvent) {
        const tail = new ByteWriter()
          .u32(4 + 8 * Math.floor(random() * 4))
          .raw(new Uint8Array(32))
          .toBytes();
        const raw = tail.subarray(0, 4 + new DataView(tail.buffer).getUint32(0, true));
        records.push(sampleRecord(NO_IP, { id: 21n, pid: 100 + r, tid: 200 + i, time, tail: new ByteWriter().raw(raw).pad8().toBytes() }));
      } else {
        const id = random() < 0.5 ? 11n : 12n;
        records.push(sampleRecord(HOT, { id, ip: 0xffffffff81000000n + BigInt(i), pid: 100 + r, tid: 200 + i, time, cpu: r, period: 1n }));
      }
    }
    const dataSize = maxRecords > 400 ? 1 << 22 : random() < 0.5 ? 4096 : 1 << 15;
    rings.push(ringFromRecords(records, dataSize, 'backward', { ringId: r, cpu: r }));
  }
  const side: Uint8Array[] = [];
  let time = base;
  for (let i = 0; i < Math.floor(random() * 30); i++) {
    time += BigInt(1 + Math.floor(random() * 400));
    if (random() < 0.2) {
      const body = new ByteWriter().u64(31n).u64(3n).toBytes();
      side.push(otherRecord(RecordType.LOST, 0, body, SIDE, true, { pid: 1, tid: 1, time, id: 31n }));
    } else {
      const body = new ByteWriter().u32(5).u32(5).cstring(`task${i}`).toBytes();
      side.push(otherRecord(RecordType.COMM, 0, body, SIDE, true, { pid: 5, tid: 5, time, id: 31n }));
    }
  }
  rings.push(ringFromRecords(side, 1 << 14, 'forward', { ringId: ringCount, defaultEvent: 2 }));
  return { events, rings };
}

const schedComm = (name: string, offset: number) => tracepointField(name, `char ${name}[16]`, offset, 16, false, { arrayLength: 16, isString: true });

/** sched:sched_switch as the tracefs of 6.x kernels describes it, recorded with TID, TIME, CPU and RAW. */
export const SCHED_SWITCH: EventDescription = {
  index: 0,
  name: 'sched:sched_switch',
  ids: [],
  attr: { type: PerfType.TRACEPOINT, config: 372n, samplePeriod: 1n, sampleType: Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW, readFormat: 0, flags: {} },
  tracepoint: {
    system: 'sched',
    name: 'sched_switch',
    id: 372,
    printFormat: '',
    fields: [
      tracepointField('common_type', 'unsigned short common_type', 0, 2, false),
      tracepointField('common_flags', 'unsigned char common_flags', 2, 1, false),
      tracepointField('common_preempt_count', 'unsigned char common_preempt_count', 3, 1, false),
      tracepointField('common_pid', 'int common_pid', 4, 4, true),
      schedComm('prev_comm', 8),
      tracepointField('prev_pid', 'pid_t prev_pid', 24, 4, true),
      tracepointField('prev_prio', 'int prev_prio', 28, 4, true),
      tracepointField('prev_state', 'long prev_state', 32, 8, true),
      schedComm('next_comm', 40),
      tracepointField('next_pid', 'pid_t next_pid', 56, 4, true),
      tracepointField('next_prio', 'int next_prio', 60, 4, true),
    ],
  },
};

/** One sched_switch: on `cpu` at `time`, prev [comm, pid, prev_state] switched out for next [comm, pid]. */
export interface SwitchSample {
  time: number;
  cpu: number;
  prev: [string, number, number];
  next: [string, number];
}

/** One ring of SCHED_SWITCH samples: header, pid/tid, time, cpu, then the RAW payload (u32 size, 64 bytes, 4 of padding). */
export function schedSwitchRing(switches: readonly SwitchSample[]): RingCopy {
  const size = 8 + 8 + 8 + 8 + 4 + 68;
  const bytes = new Uint8Array(size * switches.length);
  const view = new DataView(bytes.buffer);
  const text = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) bytes[at + i] = s.charCodeAt(i);
  };
  switches.forEach((s, i) => {
    const at = i * size;
    view.setUint32(at, RecordType.SAMPLE, true);
    view.setUint16(at + 4, 1, true);
    view.setUint16(at + 6, size, true);
    view.setInt32(at + 8, s.prev[1], true);
    view.setInt32(at + 12, s.prev[1], true);
    view.setBigUint64(at + 16, BigInt(s.time), true);
    view.setUint32(at + 24, s.cpu, true);
    view.setUint32(at + 32, 68, true);
    const raw = at + 36;
    view.setUint16(raw, 372, true);
    view.setInt32(raw + 4, s.prev[1], true);
    text(raw + 8, s.prev[0]);
    view.setInt32(raw + 24, s.prev[1], true);
    view.setInt32(raw + 28, 120, true);
    view.setBigInt64(raw + 32, BigInt(s.prev[2]), true);
    text(raw + 40, s.next[0]);
    view.setInt32(raw + 56, s.next[1], true);
    view.setInt32(raw + 60, 120, true);
  });
  return {
    ringId: 0,
    label: 'cpu0',
    cpu: 0,
    tid: -1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'paused',
  };
}

/** An inline tracepoint field as tracefs's format file describes it (`extra`: an array, a string, another location). */
export function tracepointField(
  name: string,
  declaration: string,
  offset: number,
  size: number,
  signed: boolean,
  extra: Partial<TracepointField> = {},
): TracepointField {
  return { name, declaration, offset, size, signed, arrayLength: 0, location: 'inline', isString: false, ...extra };
}
