// Writes a decoded snapshot as a perf.data file that `perf script` / `perf report` read:
// header, each attr with its ids, a data section (synthesized COMM/MMAP2 for every process, then
// the snapshot's records in time order, then FINISHED_ROUND) and the feature sections perf needs
// to name events and resolve symbols.
//
// perf tells events apart only through sample ids, and insists that every attr has the same
// sample_id_all and id position. So every written attr gets PERF_SAMPLE_IDENTIFIER and
// sample_id_all: IDENTIFIER is the first u64 of a sample body and the last u64 of a sample_id_all
// trailer, so it can be inserted into the kernel's record bytes without re-encoding them, and
// records from attrs without sample_id_all get a trailer built from the decoded columns.

import { encodeAttr, type PerfEventAttr } from '../abi/attr';
import { Misc, PerfType, RecordType, Sample } from '../abi/uapi';
import type { DecodedSnapshot } from '../decode/types';
import type { TracepointFormat } from '../abi/snapshot';
import { alignUp, BUILD_ID_MISC_SIZE, encodeText, Feature, FILE_HEADER_SIZE, fromHex, NAME_ALIGN, PERF_MAGIC2, UserRecord, USER_TYPE_START } from './format';
import { buildTracingData, DEFAULT_HEADER_EVENT, DEFAULT_HEADER_PAGE } from './tracing';

export interface SynthesizedMap {
  readonly start: bigint;
  readonly end: bigint;
  readonly pgoff: bigint;
  readonly path: string;
  /** Lowercase hex GNU build id of the mapped file, when known. */
  readonly buildId?: string;
  /**
   * false: a non-executable segment of the file (recorded with mmap_data for DWARF unwinding), written
   * as perf record writes it: PERF_RECORD_MISC_MMAP_DATA, PROT_READ. Executable when absent.
   */
  readonly executable?: boolean;
}

export interface SynthesizedProcess {
  readonly pid: number;
  readonly tid: number;
  readonly comm: string;
  /** File mappings (from MMAP2 side-band or /proc/PID/maps): the executable ones, and the data ones when recorded. */
  readonly maps: readonly SynthesizedMap[];
}

export interface WriteOptions {
  readonly synthesized: readonly SynthesizedProcess[];
  readonly cmdline: readonly string[];
  readonly hostname: string;
  readonly osrelease: string;
  readonly arch: string;
  /** CPUs online. */
  readonly nrcpus: number;
  readonly nrcpusAvailable?: number;
  readonly cpudesc: string;
  /** Shown by perf as "perf version". */
  readonly version?: string;
  /** Synthesizes the [kernel.kallsyms] map perf needs to name kernel IPs (address of `_text`). */
  readonly kernel?: { readonly textStart: bigint; readonly buildId?: string };
  /** More BUILD_ID entries (files mapped by the snapshot's own MMAP/MMAP2 records). */
  readonly buildIds?: readonly { readonly path: string; readonly buildId: string }[];
  /** tracefs header_page/header_event and page size for TRACING_DATA; defaults are x86_64's. */
  readonly tracing?: { readonly pageSize: number; readonly headerPage: string; readonly headerEvent: string };
}

/** perf 6.1 refuses attrs larger than it knows; 128 (PERF_ATTR_SIZE_VER7) holds every field but config3. */
const WRITTEN_ATTR_SIZE = 128;
const ATTR_ENTRY_SIZE = WRITTEN_ATTR_SIZE + 16;
/** Ids handed to events the kernel gave none (or clashing ones); far from kernel-assigned ids. */
const SYNTHETIC_ID_BASE = 0x7fff0000n;
const MAX_RECORD_SIZE = 0xffff;

/** Growable little-endian byte sink. */
class ByteSink {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private ensure(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  bytes(data: Uint8Array): void {
    this.ensure(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
  }

  zeros(count: number): void {
    this.ensure(count);
    this.buffer.fill(0, this.length, this.length + count);
    this.length += count;
  }

  u16(value: number): void {
    this.ensure(2);
    this.view.setUint16(this.length, value, true);
    this.length += 2;
  }

  u32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.length, value >>> 0, true);
    this.length += 4;
  }

  i32(value: number): void {
    this.ensure(4);
    this.view.setInt32(this.length, value, true);
    this.length += 4;
  }

  u64(value: bigint | number): void {
    this.ensure(8);
    this.view.setBigUint64(this.length, BigInt.asUintN(64, BigInt(value)), true);
    this.length += 8;
  }

  setU16(at: number, value: number): void {
    this.view.setUint16(at, value, true);
  }

  setU64(at: number, value: bigint): void {
    this.view.setBigUint64(at, BigInt.asUintN(64, value), true);
  }

  /** perf_header_string: u32 padded length, then the NUL-terminated text padded to NAME_ALIGN. */
  headerString(text: string): void {
    const encoded = encodeText(text);
    const padded = alignUp(encoded.length + 1, NAME_ALIGN);
    this.u32(padded);
    this.bytes(encoded);
    this.zeros(padded - encoded.length);
  }

  /** NUL-terminated text padded to a multiple of 8 (record file names and comms). */
  paddedString(text: string): void {
    const encoded = encodeText(text);
    this.bytes(encoded);
    this.zeros(alignUp(encoded.length + 1, 8) - encoded.length);
  }

  result(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }
}

interface WrittenEvent {
  readonly attr: PerfEventAttr;
  readonly original: PerfEventAttr;
  readonly ids: readonly bigint[];
  /** Id written into records that need one inserted. */
  readonly id: bigint;
  /** True when the kernel's ids were kept, so IDENTIFIER values already in records stay valid. */
  readonly keptKernelIds: boolean;
  readonly name: string;
  readonly tracepoint?: TracepointFormat;
}

export function writePerfData(snapshot: DecodedSnapshot, options: WriteOptions): Uint8Array {
  if (snapshot.events.length === 0) throw new RangeError('cannot write a perf.data file for a snapshot without events');
  const events = planEvents(snapshot);
  const out = new ByteSink();
  out.zeros(FILE_HEADER_SIZE);

  const idSections: { offset: number; size: number }[] = [];
  for (const event of events) {
    idSections.push({ offset: out.length, size: event.ids.length * 8 });
    for (const id of event.ids) out.u64(id);
  }
  const attrsOffset = out.length;
  events.forEach((event, i) => {
    out.bytes(encodeAttr(event.attr, WRITTEN_ATTR_SIZE));
    out.u64(idSections[i].offset);
    out.u64(idSections[i].size);
  });
  const attrsSize = out.length - attrsOffset;

  const dataOffset = out.length;
  // Synthesized COMM/MMAP2 belong to the side-band event when the file has one (the dummy event that
  // asked for comm/mmap records), so a reader files them under it, not under the first sampled event.
  writeSynthesized(out, events.find((event) => event.original.flags.comm || event.original.flags.mmap2) ?? events[0], options);
  writeRecords(out, snapshot, events);
  out.u32(UserRecord.FINISHED_ROUND);
  out.u16(0);
  out.u16(8);
  const dataSize = out.length - dataOffset;

  const features = featureBodies(events, options);
  const tableOffset = out.length;
  out.zeros(features.length * 16);
  const table: { offset: number; size: number }[] = [];
  for (const feature of features) {
    table.push({ offset: out.length, size: feature.body.length });
    out.bytes(feature.body);
  }
  const file = out.result();
  const view = new DataView(file.buffer);
  table.forEach((entry, i) => {
    view.setBigUint64(tableOffset + i * 16, BigInt(entry.offset), true);
    view.setBigUint64(tableOffset + i * 16 + 8, BigInt(entry.size), true);
  });
  view.setBigUint64(0, PERF_MAGIC2, true);
  view.setBigUint64(8, BigInt(FILE_HEADER_SIZE), true);
  view.setBigUint64(16, BigInt(ATTR_ENTRY_SIZE), true);
  view.setBigUint64(24, BigInt(attrsOffset), true);
  view.setBigUint64(32, BigInt(attrsSize), true);
  view.setBigUint64(40, BigInt(dataOffset), true);
  view.setBigUint64(48, BigInt(dataSize), true);
  // event_types section (offset 56) stays empty: perf has not used it for a decade.
  for (const feature of features) file[72 + (feature.bit >> 3)] |= 1 << (feature.bit & 7);
  return file;
}

function planEvents(snapshot: DecodedSnapshot): WrittenEvent[] {
  const seen = new Set<bigint>();
  return snapshot.events.map((event, index) => {
    const unique = event.ids.length > 0 && event.ids.every((id) => !seen.has(id) && id !== 0n);
    for (const id of event.ids) seen.add(id);
    const ids = unique ? [...event.ids] : [SYNTHETIC_ID_BASE + BigInt(index)];
    const attr: PerfEventAttr = {
      ...event.attr,
      sampleType: event.attr.sampleType | Sample.IDENTIFIER,
      flags: { ...event.attr.flags, sampleIdAll: true, writeBackward: false, disabled: false, enableOnExec: false },
      size: WRITTEN_ATTR_SIZE,
    };
    return {
      attr,
      original: event.attr,
      ids,
      id: ids[0],
      keptKernelIds: unique,
      name: event.name,
      ...(event.tracepoint ? { tracepoint: event.tracepoint } : {}),
    };
  });
}

/** The sample_id_all trailer of `attr`, filled with the given identity. */
function writeTrailer(out: ByteSink, sampleType: number, fill: { pid: number; tid: number; time: bigint; id: bigint; cpu: number }): void {
  if (sampleType & Sample.TID) {
    out.i32(fill.pid);
    out.i32(fill.tid);
  }
  if (sampleType & Sample.TIME) out.u64(fill.time);
  if (sampleType & Sample.ID) out.u64(fill.id);
  if (sampleType & Sample.STREAM_ID) out.u64(fill.id);
  if (sampleType & Sample.CPU) {
    out.u32(Math.max(fill.cpu, 0));
    out.u32(0);
  }
  if (sampleType & Sample.IDENTIFIER) out.u64(fill.id);
}

function trailerSize(sampleType: number): number {
  let size = 0;
  for (const bit of [Sample.TID, Sample.TIME, Sample.ID, Sample.STREAM_ID, Sample.CPU, Sample.IDENTIFIER]) if (sampleType & bit) size += 8;
  return size;
}

/** COMM and MMAP2 for every process (and the kernel map), time 0, so perf knows them before any sample. */
function writeSynthesized(out: ByteSink, owner: WrittenEvent, options: WriteOptions): void {
  const sampleType = owner.attr.sampleType;
  const trailer = trailerSize(sampleType);
  const begin = () => out.length;
  const finish = (start: number, pid: number, tid: number) => {
    writeTrailer(out, sampleType, { pid, tid, time: 0n, id: owner.id, cpu: 0 });
    out.setU16(start + 6, out.length - start);
  };
  if (options.kernel) {
    // PERF_RECORD_MMAP of [kernel.kallsyms]_text, as perf synthesizes it: pid -1, pgoff = start.
    const start = begin();
    out.u32(RecordType.MMAP);
    out.u16(Misc.KERNEL);
    out.u16(0);
    out.i32(-1);
    out.i32(0);
    out.u64(options.kernel.textStart);
    out.u64(BigInt.asUintN(64, -1n) - options.kernel.textStart);
    out.u64(options.kernel.textStart);
    out.paddedString('[kernel.kallsyms]_text');
    finish(start, -1, 0);
  }
  for (const process of options.synthesized) {
    const commStart = begin();
    out.u32(RecordType.COMM);
    out.u16(0);
    out.u16(0);
    out.i32(process.pid);
    out.i32(process.tid);
    out.paddedString(process.comm.slice(0, 15));
    finish(commStart, process.pid, process.tid);
    for (const map of process.maps) {
      if (40 + 24 + 8 + alignUp(encodeText(map.path).length + 1, 8) + trailer > MAX_RECORD_SIZE) continue;
      const start = begin();
      const data = map.executable === false;
      out.u32(RecordType.MMAP2);
      out.u16(Misc.USER | (data ? Misc.MMAP_DATA : 0));
      out.u16(0);
      out.i32(process.pid);
      out.i32(process.tid);
      out.u64(map.start);
      out.u64(map.end - map.start);
      out.u64(map.pgoff);
      out.u32(0); // maj
      out.u32(0); // min
      out.u64(0); // ino
      out.u64(0); // ino_generation
      out.u32(data ? 1 : 5); // PROT_READ, or PROT_READ | PROT_EXEC
      out.u32(2); // MAP_PRIVATE
      out.paddedString(map.path);
      finish(start, process.pid, process.tid);
    }
  }
}

/** Copies the snapshot's records in time order, inserting IDENTIFIER (and trailers where missing). */
function writeRecords(out: ByteSink, snapshot: DecodedSnapshot, events: readonly WrittenEvent[]): void {
  const { columns, rings } = snapshot;
  const order = timeOrder(snapshot);
  let lastTime = 0n;
  for (const row of order) {
    const ring = rings[columns.ring[row]];
    if (!ring) continue;
    const offset = columns.offset[row];
    if (offset + 8 > ring.bytes.length) continue;
    const view = new DataView(ring.bytes.buffer, ring.bytes.byteOffset, ring.bytes.byteLength);
    const type = view.getUint32(offset, true);
    const size = view.getUint16(offset + 6, true);
    if (type >= USER_TYPE_START || size < 8 || offset + size > ring.bytes.length) continue;
    const event = events[columns.event[row]] ?? events[0];
    const record = ring.bytes.subarray(offset, offset + size);
    const relative = columns.time[row];
    const time = Number.isNaN(relative) ? lastTime : columns.timeOriginNs + BigInt(relative);
    lastTime = time;
    const hadIdentifier = (event.original.sampleType & Sample.IDENTIFIER) !== 0;
    const start = out.length;
    if (type === RecordType.SAMPLE) {
      if (hadIdentifier) {
        out.bytes(record);
        if (!event.keptKernelIds) out.setU64(start + 8, event.id);
      } else {
        if (size + 8 > MAX_RECORD_SIZE) continue;
        out.bytes(record.subarray(0, 8));
        out.u64(event.id);
        out.bytes(record.subarray(8));
      }
    } else if (event.original.flags.sampleIdAll) {
      out.bytes(record);
      if (hadIdentifier) {
        if (!event.keptKernelIds) out.setU64(out.length - 8, event.id);
      } else {
        if (size + 8 > MAX_RECORD_SIZE) {
          out.length = start;
          continue;
        }
        out.u64(event.id);
      }
    } else {
      if (size + trailerSize(event.attr.sampleType) > MAX_RECORD_SIZE) continue;
      out.bytes(record);
      writeTrailer(out, event.attr.sampleType, { pid: columns.pid[row], tid: columns.tid[row], time, id: event.id, cpu: columns.cpu[row] });
    }
    out.setU16(start + 6, out.length - start);
  }
}

/** Row indices by time; rows without time keep their place after their predecessor. */
function timeOrder(snapshot: DecodedSnapshot): number[] {
  const { time, length } = snapshot.columns;
  const keys = new Float64Array(length);
  let previous = -Infinity;
  for (let row = 0; row < length; row++) {
    if (!Number.isNaN(time[row])) previous = time[row];
    keys[row] = previous;
  }
  const order = Array.from({ length }, (_, row) => row);
  order.sort((a, b) => keys[a] - keys[b] || a - b);
  return order;
}

function featureBodies(events: readonly WrittenEvent[], options: WriteOptions): { bit: number; body: Uint8Array }[] {
  const bodies: { bit: number; body: Uint8Array }[] = [];
  const add = (bit: number, build: (sink: ByteSink) => void) => {
    const sink = new ByteSink();
    build(sink);
    bodies.push({ bit, body: sink.result() });
  };
  const formats = events.map((event) => event.tracepoint).filter((format): format is TracepointFormat => format !== undefined);
  if (events.some((event) => event.attr.type === PerfType.TRACEPOINT) && formats.length > 0) {
    const tracing = options.tracing ?? { pageSize: 4096, headerPage: DEFAULT_HEADER_PAGE, headerEvent: DEFAULT_HEADER_EVENT };
    add(Feature.TRACING_DATA, (sink) => sink.bytes(buildTracingData({ ...tracing, formats })));
  }
  const buildIds = collectBuildIds(options);
  if (buildIds.length > 0) {
    add(Feature.BUILD_ID, (sink) => {
      for (const entry of buildIds) {
        const name = encodeText(entry.path);
        const nameLength = alignUp(name.length + 1, NAME_ALIGN);
        const id = fromHex(entry.buildId).subarray(0, 20);
        sink.u32(RecordType.MMAP); // perf ignores the type of build-id entries
        sink.u16(entry.cpumode | BUILD_ID_MISC_SIZE);
        sink.u16(36 + nameLength);
        sink.i32(-1); // host machine
        const area = new Uint8Array(24);
        area.set(id);
        area[20] = id.length;
        sink.bytes(area);
        sink.bytes(name);
        sink.zeros(nameLength - name.length);
      }
    });
  }
  add(Feature.HOSTNAME, (sink) => sink.headerString(options.hostname));
  add(Feature.OSRELEASE, (sink) => sink.headerString(options.osrelease));
  if (options.version) add(Feature.VERSION, (sink) => sink.headerString(options.version ?? ''));
  add(Feature.ARCH, (sink) => sink.headerString(options.arch));
  add(Feature.NRCPUS, (sink) => {
    sink.u32(options.nrcpusAvailable ?? options.nrcpus);
    sink.u32(options.nrcpus);
  });
  add(Feature.CPUDESC, (sink) => sink.headerString(options.cpudesc));
  add(Feature.CMDLINE, (sink) => {
    sink.u32(options.cmdline.length);
    for (const arg of options.cmdline) sink.headerString(arg);
  });
  add(Feature.EVENT_DESC, (sink) => {
    sink.u32(events.length);
    sink.u32(WRITTEN_ATTR_SIZE);
    for (const event of events) {
      sink.bytes(encodeAttr(event.attr, WRITTEN_ATTR_SIZE));
      sink.u32(event.ids.length);
      sink.headerString(event.name);
      for (const id of event.ids) sink.u64(id);
    }
  });
  return bodies.sort((a, b) => a.bit - b.bit);
}

function collectBuildIds(options: WriteOptions): { path: string; buildId: string; cpumode: number }[] {
  const byPath = new Map<string, { path: string; buildId: string; cpumode: number }>();
  if (options.kernel?.buildId) byPath.set('[kernel.kallsyms]', { path: '[kernel.kallsyms]', buildId: options.kernel.buildId, cpumode: Misc.KERNEL });
  for (const process of options.synthesized) {
    for (const map of process.maps) {
      if (map.buildId && /^([0-9a-f]{2}){1,20}$/.test(map.buildId) && !byPath.has(map.path)) {
        byPath.set(map.path, { path: map.path, buildId: map.buildId, cpumode: Misc.USER });
      }
    }
  }
  for (const entry of options.buildIds ?? []) {
    if (/^([0-9a-f]{2}){1,20}$/.test(entry.buildId) && !byPath.has(entry.path))
      byPath.set(entry.path, { path: entry.path, buildId: entry.buildId, cpumode: Misc.USER });
  }
  return [...byPath.values()];
}
