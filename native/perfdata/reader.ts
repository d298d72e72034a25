// Reads perf.data files (file mode and pipe mode) into what the decoder already understands:
// EventDescription[] built from the attrs (with their sample ids, EVENT_DESC names and tracepoint
// formats from TRACING_DATA) and forward RingCopy batches holding the data section's kernel records.
//
// The data section is not in time order (perf writes each CPU's buffer per round, and
// --overwrite rounds come newest first), and it interleaves records that only exist in files
// (HEADER_ATTR, FINISHED_ROUND, ID_INDEX, ...). So the reader interprets and strips the file-only
// records, then stably sorts the kernel records by their timestamp (perf's ordered-events rule:
// a record without time keeps its place after its predecessor) and copies them into linear buffers.
// The decoder then walks each buffer like any forward ring.
//
// A file is read a range at a time (ByteSource), never whole: a first walk of the data section keeps
// only each kernel record's offset and size, a second reads their times, and the records are then
// copied out in time order a batch of a few MiB at a time (PerfDataStream), so what is held at once
// is a batch and an index of the records, not the file.

import { decodeAttr, PERF_ATTR_SIZE_VER0, type PerfEventAttr } from '../abi/attr';
import { PerfType, RecordType, recordTypeName, Sample } from '../abi/uapi';
import type { EventDescription, RingCopy, TracepointFormat } from '../abi/snapshot';
import {
  alignUp,
  BUILD_ID_MISC_SIZE,
  Cursor,
  EventUpdateType,
  Feature,
  FEATURE_BITMAP_OFFSET,
  FEATURE_BITS,
  FILE_HEADER_SIZE,
  PerfDataError,
  PERF_MAGIC1_TEXT,
  PERF_MAGIC2,
  PERF_MAGIC2_SWAPPED,
  PIPE_HEADER_SIZE,
  toHex,
  UserRecord,
  USER_RECORD_NAMES,
  USER_TYPE_START,
} from './format';
import { parseTracingData, type TracingData } from './tracing';
import { parseTracepointFormat } from '../specs/tracepoint-format';

export interface BuildIdEntry {
  readonly pid: number;
  /** perf_event_header.misc cpumode of the entry (1 kernel, 2 user). */
  readonly cpumode: number;
  /** Lowercase hex. */
  readonly buildId: string;
  readonly path: string;
}

export interface PerfDataFeatures {
  hostname?: string;
  osrelease?: string;
  /** perf's own version string. */
  version?: string;
  arch?: string;
  /** CPUs online when recorded. */
  nrcpus?: number;
  nrcpusAvailable?: number;
  cpudesc?: string;
  cpuid?: string;
  totalMemKb?: number;
  cmdline?: string[];
  buildIds: BuildIdEntry[];
  sampleTime?: { readonly firstNs: bigint; readonly lastNs: bigint };
  /** Feature bits set in the header (or HEADER_FEATURE records in a pipe), by number. */
  present: number[];
}

export interface PerfDataImport {
  readonly mode: 'file' | 'pipe';
  readonly events: EventDescription[];
  /** One forward ring holding every kernel record of the data section, in time order. */
  readonly rings: RingCopy[];
  readonly features: PerfDataFeatures;
  readonly tracing?: TracingData;
  /** Every record type met in the data section, by PERF_RECORD_ name (kernel and file-only), with counts. */
  readonly recordCounts: Readonly<Record<string, number>>;
  /** Non-fatal findings, and with keepGoing the damage that ended the read. */
  readonly warnings: string[];
  /** Where in the file the record at `ringOffset` of rings[0] was read from (the ring is in time order, the file need not be). */
  readonly fileOffsetOf: (ringOffset: number) => number | undefined;
}

export interface ReadOptions {
  /** On damage, return what was read before it (plus a warning) instead of throwing. */
  readonly keepGoing?: boolean;
  /**
   * Told, while the data section is walked, of each batch of kernel records perf's ordered-events rule lets go at a
   * FINISHED_ROUND (tools/perf/util/ordered-events.c, process_finished_round): the records queued so far whose time is
   * at most the newest time seen at the previous FINISHED_ROUND, in time order. While every later record is at least
   * as late as the last one let go, these batches are, in order, the first records of the stream's time order
   * (PerfDataStream.released says how many); file mode only (a pipe's events may still be announced in its data).
   */
  readonly onRound?: (batch: PerfDataBatch, events: readonly EventDescription[]) => void;
}

interface MutableEvent {
  attr: PerfEventAttr;
  ids: bigint[];
  name?: string;
}

/** Largest attr entry (attr plus ids section) a file may declare: the reader's bound on a damaged header. */
export const MAX_ATTR_SIZE = 4096;

/** Where a perf.data file's bytes come from: the whole file in memory, or the file read a range at a time. */
export interface ByteSource {
  readonly size: number;
  /** The `size` bytes at `offset` (within the source); they stay valid (a copy, or a view of bytes never changed). */
  read(offset: number, size: number): Uint8Array;
  /**
   * For a file still being read in steps: the bytes before offset available() may be read now, and so may those after
   * the data section; the walk of the data section yields (indexPerfData's step) until the bytes it needs are there.
   * Absent: all of it.
   */
  available?(): number;
}

/** A file in memory as a ByteSource: ranges are views, nothing is copied. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (offset, size) => bytes.subarray(offset, offset + size) };
}

/** How much of the data section one read of the walks takes: big enough that reads are few, small beside any file worth streaming. */
const WALK_CHUNK_BYTES = 4 << 20;

/** One batch of a PerfDataStream: kernel records in time order as a forward ring, and where each came from. */
export interface PerfDataBatch {
  readonly ring: RingCopy;
  /** How many records `ring` holds. */
  readonly recordCount: number;
  /** Where in the file the record at `ringOffset` of `ring` was read from. */
  readonly fileOffsetOf: (ringOffset: number) => number | undefined;
}

/** What a perf.data file says besides its records, and its kernel records in time order, a batch at a time. */
export interface PerfDataStream extends Omit<PerfDataImport, 'rings' | 'fileOffsetOf'> {
  /** How many kernel records the batches hold in all. */
  readonly recordCount: number;
  /**
   * How many of the first records in time order ReadOptions.onRound was told of, in that order (0 when a record
   * came earlier than one already let go: the rounds' batches are then not the start of the time order).
   */
  readonly released: number;
  /**
   * The kernel records in time order (the order readPerfData's one ring has) from the `from`-th on, in batches of at
   * least `batchBytes` (the last may be smaller; a batch holds whole records), each read from the source when it is
   * asked for.
   */
  batches(batchBytes: number, from?: number): Generator<PerfDataBatch, void>;
}

export function readPerfData(bytes: Uint8Array, name: string, options: ReadOptions = {}): PerfDataImport {
  return wholeImport(streamPerfData(bytesSource(bytes), name, options), name);
}

/** All of a stream's records in one batch: one ring (empty for a file without kernel records). */
export function wholeImport(stream: PerfDataStream, name: string): PerfDataImport {
  const { value: only } = stream.batches(Infinity).next();
  const batch = only ?? emptyBatch(name);
  const { mode, events, features, tracing, recordCounts, warnings } = stream;
  return { mode, events, features, tracing, recordCounts, warnings, rings: [batch.ring], fileOffsetOf: batch.fileOffsetOf };
}

/**
 * Reads what a perf.data file says about its records (header, attrs, features, and the file-only records of the data
 * section) and indexes its kernel records; their bytes are read again, in time order, when the batches are asked for.
 */
export function streamPerfData(source: ByteSource, name: string, options: ReadOptions = {}): PerfDataStream {
  const steps = indexPerfData(source, name, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * streamPerfData in steps, for a caller that must not hold its thread for a whole file (the extension host): each
 * `next()` reads and indexes at most a few MiB (INDEX_STEP_RECORDS records, or one WALK_CHUNK_BYTES read), and the
 * last returns the stream. A caller that stops asking has nothing to undo (the source is the caller's to close).
 */
export function indexPerfData(source: ByteSource, name: string, options: ReadOptions = {}): Generator<void, PerfDataStream> {
  return new PerfDataReader(source, name, options).read();
}

/** The kernel records of batches (in their order) as one ring: what readPerfData's one ring holds, when they are all of a stream's. */
export function joinBatches(batches: readonly PerfDataBatch[], file: string): RingCopy {
  const bytes = new Uint8Array(batches.reduce((total, batch) => total + batch.ring.bytes.length, 0));
  let at = 0;
  for (const batch of batches) {
    bytes.set(batch.ring.bytes, at);
    at += batch.ring.bytes.length;
  }
  return linearRing(file, bytes);
}

/**
 * Where a file-mode perf.data's data section is, from the file's first FILE_HEADER_SIZE bytes (what the reader checks
 * of them, it checks again when it reads the file); null for a pipe-mode file or bytes that are not such a header.
 */
export function dataSectionOf(head: Uint8Array): { readonly offset: number; readonly size: number } | null {
  if (head.length < FILE_HEADER_SIZE) return null;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (view.getBigUint64(0, true) !== PERF_MAGIC2 || view.getBigUint64(8, true) !== BigInt(FILE_HEADER_SIZE)) return null;
  // magic, size, attr_size, then the attrs section and the data section: { u64 offset, u64 size } each.
  return { offset: Number(view.getBigUint64(40, true)), size: Number(view.getBigUint64(48, true)) };
}

/** How many records the walks index between two steps of indexPerfData: a few ms of work even on a loaded machine. */
const INDEX_STEP_RECORDS = 4096;

function linearRing(file: string, bytes: Uint8Array): RingCopy {
  return {
    ringId: 0,
    label: file,
    cpu: -1,
    tid: -1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'file',
  };
}

function emptyBatch(file: string): PerfDataBatch {
  return { ring: linearRing(file, new Uint8Array(0)), recordCount: 0, fileOffsetOf: () => undefined };
}

/** The kernel records of the data section in file order: where each is and (after timeRecords) its time. */
class RecordIndex {
  length = 0;
  offset = new Float64Array(1024);
  size = new Uint16Array(1024);
  /** The record's time as u32 halves (once timed); an untimed record has its predecessor's (perf's ordered-events rule). */
  timeHigh = new Uint32Array(1024);
  timeLow = new Uint32Array(1024);

  push(offset: number, size: number): void {
    if (this.length === this.offset.length) {
      const grow = <T extends Float64Array | Uint16Array | Uint32Array>(from: T, to: T): T => {
        to.set(from as never);
        return to;
      };
      this.offset = grow(this.offset, new Float64Array(this.length * 2));
      this.size = grow(this.size, new Uint16Array(this.length * 2));
      this.timeHigh = grow(this.timeHigh, new Uint32Array(this.length * 2));
      this.timeLow = grow(this.timeLow, new Uint32Array(this.length * 2));
    }
    this.offset[this.length] = offset;
    this.size[this.length] = size;
    this.length++;
  }
}

class PerfDataReader {
  private readonly warnings: string[] = [];
  private readonly events: MutableEvent[] = [];
  private readonly namesById = new Map<bigint, string>();
  private readonly features: PerfDataFeatures = { buildIds: [], present: [] };
  private tracing?: TracingData;
  private readonly counts: Record<string, number> = {};
  private readonly kernelRecords = new RecordIndex();
  private littleEndian = true;
  /** Kernel records whose time is read (timeRange), and the last time read (an untimed record takes it). */
  private timed = 0;
  private lastTime: [number, number] = [0, 0];
  /** The events (describeEvents), once described. */
  private described?: EventDescription[];
  private locator?: RecordLocator;
  /** Round release (ReadOptions.onRound): records timed and not let go yet, by index, in file order. */
  private queued: number[] = [];
  /** perf's next_flush: what the next FINISHED_ROUND lets go is at most this time (u32 halves); and the newest time seen. */
  private flushLimit: [number, number] = [0, 0];
  private newest: [number, number] = [0, 0];
  /** The records let go so far, in the order they were, and the time of the last one. */
  private releasedOrder = new Uint32Array(1024);
  private releasedCount = 0;
  private lastReleased: [number, number] | null = null;
  /** A record came earlier than one already let go: rounds let nothing more go, and `released` is 0. */
  private roundsBroken = false;

  constructor(
    private readonly source: ByteSource,
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {}

  *read(): Generator<void, PerfDataStream> {
    const mode = this.readMagic();
    if (mode === 'pipe') {
      yield* this.guardedSteps(() => this.walkData(PIPE_HEADER_SIZE, this.source.size, true));
    } else {
      const header = this.cursor(0, FILE_HEADER_SIZE, 'file header');
      header.skip(8, 'magic');
      const headerSize = header.u64Number('header size');
      if (headerSize !== FILE_HEADER_SIZE) header.fail(`header size is ${headerSize}, expected ${FILE_HEADER_SIZE}`, 8);
      const attrSize = header.u64Number('attr size');
      if (attrSize < PERF_ATTR_SIZE_VER0 + 16 || attrSize > MAX_ATTR_SIZE) header.fail(`attr entry size ${attrSize} is not plausible`, 16);
      const attrs = this.section(header, 'attrs');
      const data = this.section(header, 'data', true);
      this.section(header, 'event_types', true);
      this.readAttrs(attrs, attrSize);
      this.guarded(() => this.readFeatures(data.offset + data.size));
      yield* this.guardedSteps(() => this.walkData(data.offset, data.offset + data.size, false));
    }
    return yield* this.finish(mode);
  }

  /** Runs a step that may hit damage; with keepGoing, damage becomes a warning and reading stops there. */
  private guarded(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (!(error instanceof PerfDataError) || !this.options.keepGoing) throw error;
      // Callers prefix warnings with the file name, as they do for errors.
      this.warnings.push(`${error.what}, at offset ${error.offset}`);
    }
  }

  /** guarded, for a step taken in steps (the walks). */
  private *guardedSteps(steps: () => Generator<void, void>): Generator<void, void> {
    try {
      yield* steps();
    } catch (error) {
      if (!(error instanceof PerfDataError) || !this.options.keepGoing) throw error;
      this.warnings.push(`${error.what}, at offset ${error.offset}`);
    }
  }

  private fail(offset: number, what: string): never {
    throw new PerfDataError(this.file, offset, what);
  }

  private cursor(offset: number, size: number, context: string): Cursor {
    if (offset < 0 || size < 0 || offset + size > this.source.size) {
      this.fail(
        Math.min(offset, this.source.size),
        `${context} (${size} bytes at offset ${offset}) extends past the end of the file (${this.source.size} bytes)`,
      );
    }
    return new Cursor(this.source.read(offset, size), this.littleEndian, this.file, offset, context);
  }

  private readMagic(): 'file' | 'pipe' {
    const size = this.source.size;
    if (size < 16) this.fail(0, `too short for a perf.data header (${size} bytes)`);
    const start = this.source.read(0, 16);
    const view = new DataView(start.buffer, start.byteOffset, start.byteLength);
    const magic = view.getBigUint64(0, true);
    if (magic === PERF_MAGIC2_SWAPPED) this.fail(0, 'big-endian perf.data files are not supported');
    if (magic !== PERF_MAGIC2) {
      const text = String.fromCharCode(...start.subarray(0, 8));
      if (text === PERF_MAGIC1_TEXT) this.fail(0, 'this is an old version-1 perf.data file ("PERFFILE"), which is not supported');
      const printable = /^[\x20-\x7e]*$/.test(text) ? `"${text}"` : toHex(start.subarray(0, 8));
      this.fail(0, `not a perf.data file: magic is ${printable}, expected "PERFILE2"`);
    }
    const headerSize = view.getBigUint64(8, true);
    if (headerSize === BigInt(PIPE_HEADER_SIZE)) return 'pipe';
    if (size < FILE_HEADER_SIZE) this.fail(size, `file ends inside the ${FILE_HEADER_SIZE}-byte header`);
    return 'file';
  }

  private section(header: Cursor, what: string, mayBeTruncated = false): { offset: number; size: number } {
    const at = header.absolute;
    const offset = header.u64Number(`${what} section offset`);
    const size = header.u64Number(`${what} section size`);
    if (offset + size > this.source.size) {
      const message = `${what} section (${size} bytes at offset ${offset}) extends past the end of the file (${this.source.size} bytes)`;
      if (!mayBeTruncated || !this.options.keepGoing || offset > this.source.size) this.fail(at, message);
      this.warnings.push(`${message}, at offset ${at}; reading what is there`);
      return { offset, size: this.source.size - offset };
    }
    return { offset, size };
  }

  private readAttrs(attrs: { offset: number; size: number }, entrySize: number): void {
    if (attrs.size % entrySize !== 0) this.fail(40, `attrs section size ${attrs.size} is not a multiple of the attr entry size ${entrySize}`);
    const count = attrs.size / entrySize;
    if (count === 0) this.fail(40, 'the file has no events (empty attrs section)');
    for (let i = 0; i < count; i++) {
      const entryOffset = attrs.offset + i * entrySize;
      const attr = this.decodeAttrAt(entryOffset, entrySize - 16, `attr ${i}`);
      const ids = this.cursor(entryOffset + entrySize - 16, 16, `attr ${i} ids section`);
      const idsOffset = ids.u64Number('ids offset');
      const idsSize = ids.u64Number('ids size');
      if (idsSize % 8 !== 0) ids.fail(`ids size ${idsSize} is not a multiple of 8`, ids.base + 8);
      const idCursor = this.cursor(idsOffset, idsSize, `attr ${i} ids`);
      const list: bigint[] = [];
      while (idCursor.remaining > 0) list.push(idCursor.u64('id'));
      this.events.push({ attr, ids: list });
    }
  }

  private decodeAttrAt(offset: number, size: number, what: string): PerfEventAttr {
    const cursor = this.cursor(offset, size, what);
    const bytes = cursor.take(size, what);
    const declared = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, this.littleEndian);
    // attr.size 0 means the oldest ABI; otherwise it must fit the space perf reserved for it.
    if (declared !== 0 && (declared < PERF_ATTR_SIZE_VER0 || declared > size))
      this.fail(offset + 4, `${what}: attr.size ${declared} does not fit its ${size}-byte slot`);
    const attr = decodeAttr(bytes.subarray(0, declared || PERF_ATTR_SIZE_VER0), this.littleEndian);
    if (attr.type > 0xffff && attr.type !== 0xffffffff) this.fail(offset, `${what}: event type ${attr.type} is not plausible`);
    return attr;
  }

  private readFeatures(tableOffset: number): void {
    const bitmap = this.cursor(FEATURE_BITMAP_OFFSET, FEATURE_BITS / 8, 'feature bitmap');
    const bits: number[] = [];
    for (let i = 0; i < FEATURE_BITS; i++) {
      if (bitmap.bytes[i >> 3] & (1 << (i & 7))) bits.push(i);
    }
    if (bits.length === 0) return;
    const table = this.cursor(tableOffset, bits.length * 16, 'feature section table');
    // Sections past the end (a truncated file) are reported once, naming all of them.
    const cutOff: { name: string; at: number; offset: number; size: number }[] = [];
    for (const bit of bits) {
      const at = table.absolute;
      const offset = table.u64Number(`feature ${bit} offset`);
      const size = table.u64Number(`feature ${bit} size`);
      if (offset + size > this.source.size) {
        if (!this.options.keepGoing)
          this.fail(at, `feature ${featureName(bit)} (${size} bytes at offset ${offset}) extends past the end of the file (${this.source.size} bytes)`);
        cutOff.push({ name: featureName(bit), at, offset, size });
        continue;
      }
      this.guarded(() => this.readFeature(bit, this.cursor(offset, size, `feature ${featureName(bit)}`)));
    }
    if (cutOff.length > 0) {
      const first = cutOff[0];
      const names = cutOff.map((c) => c.name).join(', ');
      this.warnings.push(`feature sections ${names} extend past the end of the file (${this.source.size} bytes) and are not read, at offset ${first.at}`);
    }
  }

  private readFeature(bit: number, c: Cursor): void {
    this.features.present.push(bit);
    const f = this.features;
    switch (bit) {
      case Feature.TRACING_DATA:
        this.tracing = parseTracingData(c);
        break;
      case Feature.BUILD_ID:
        while (c.remaining >= 8) f.buildIds.push(this.readBuildId(c, c.pos + c.remaining));
        break;
      case Feature.HOSTNAME:
        f.hostname = c.headerString('hostname');
        break;
      case Feature.OSRELEASE:
        f.osrelease = c.headerString('os release');
        break;
      case Feature.VERSION:
        f.version = c.headerString('perf version');
        break;
      case Feature.ARCH:
        f.arch = c.headerString('arch');
        break;
      case Feature.CPUDESC:
        f.cpudesc = c.headerString('cpu description');
        break;
      case Feature.CPUID:
        f.cpuid = c.headerString('cpuid');
        break;
      case Feature.NRCPUS:
        f.nrcpusAvailable = c.u32('nr cpus available');
        f.nrcpus = c.u32('nr cpus online');
        break;
      case Feature.TOTAL_MEM:
        f.totalMemKb = c.u64Number('total memory');
        break;
      case Feature.CMDLINE: {
        const count = c.u32('cmdline argument count');
        if (count * 4 > c.remaining) c.fail(`cmdline claims ${count} arguments`);
        f.cmdline = [];
        for (let i = 0; i < count; i++) f.cmdline.push(c.headerString(`cmdline argument ${i}`));
        break;
      }
      case Feature.EVENT_DESC:
        this.readEventDesc(c);
        break;
      case Feature.SAMPLE_TIME:
        f.sampleTime = { firstNs: c.u64('first sample time'), lastNs: c.u64('last sample time') };
        break;
      default:
        // Topology, PMU mappings, caches...: nothing the decoder needs.
        break;
    }
  }

  /** One struct perf_record_header_build_id: header, pid, build_id[24] (20 + size byte + padding), filename. */
  private readBuildId(c: Cursor, end: number): BuildIdEntry {
    const at = c.absolute;
    c.u32('build id entry type');
    const misc = c.u16('build id entry misc');
    const size = c.u16('build id entry size');
    if (size < 36 || at - c.base + size > end) c.fail(`build id entry size ${size} is not plausible`, at);
    const pid = c.i32('build id pid');
    const area = c.take(24, 'build id');
    const length = misc & BUILD_ID_MISC_SIZE ? Math.min(area[20], 20) : 20;
    const nameBytes = c.take(size - 36, 'build id file name');
    const nul = nameBytes.indexOf(0);
    const path = new TextDecoder().decode(nul < 0 ? nameBytes : nameBytes.subarray(0, nul));
    return { pid, cpumode: misc & 7, buildId: toHex(area.subarray(0, length)), path };
  }

  private readEventDesc(c: Cursor): void {
    const count = c.u32('event count');
    const attrSize = c.u32('attr size');
    if (attrSize < PERF_ATTR_SIZE_VER0 || attrSize > MAX_ATTR_SIZE) c.fail(`attr size ${attrSize} is not plausible`, c.absolute - 4);
    for (let i = 0; i < count; i++) {
      c.skip(attrSize, `event ${i} attr`);
      const idCount = c.u32(`event ${i} id count`);
      const eventName = c.headerString(`event ${i} name`);
      if (idCount * 8 > c.remaining) c.fail(`event ${i} claims ${idCount} ids`);
      const ids: bigint[] = [];
      for (let k = 0; k < idCount; k++) ids.push(c.u64(`event ${i} id`));
      for (const id of ids) this.namesById.set(id, eventName);
      // Events without ids (a single event recorded without IDs) are matched by position.
      if (ids.length === 0 && this.events[i] && this.events[i].name === undefined) this.events[i].name = eventName;
    }
  }

  /** Walks records from `start` to `end` a chunk at a time, indexing kernel records and interpreting file-only ones. */
  private *walkData(start: number, end: number, pipe: boolean): Generator<void, void> {
    let chunk: Uint8Array = new Uint8Array(0);
    let chunkStart = start;
    let view = new DataView(chunk.buffer);
    let chunksRead = 0;
    const available = () => (this.source.available ? this.source.available() : end);
    /** Makes [pos, pos + size) readable in `chunk` (size ≤ what is left of the section, and available). */
    const have = (pos: number, size: number) => {
      if (pos >= chunkStart && pos + size <= chunkStart + chunk.length) return;
      chunkStart = pos;
      chunk = this.source.read(pos, Math.min(Math.max(WALK_CHUNK_BYTES, size), end - pos, Math.max(size, available() - pos)));
      view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      chunksRead++;
    };
    let pos = start;
    let sinceStep = 0;
    while (pos < end) {
      // A step ends after every chunk read and every INDEX_STEP_RECORDS records, whichever comes first.
      if (++sinceStep >= INDEX_STEP_RECORDS || chunksRead > 0) {
        sinceStep = 0;
        chunksRead = 0;
        yield;
      }
      if (end - pos < 8) this.fail(pos, `data section ends inside a record header (${end - pos} bytes left)`);
      // A file still being read: its next bytes come with the next steps.
      while (pos + 8 > available()) yield;
      have(pos, 8);
      const type = view.getUint32(pos - chunkStart, true);
      const size = view.getUint16(pos - chunkStart + 6, true);
      if (size < 8) this.fail(pos, `record of type ${type} has size ${size}, smaller than its header`);
      if (pos + size > end) this.fail(pos, `record of type ${type} (${size} bytes) runs past the end of the data section`);
      const typeName = type < USER_TYPE_START ? recordTypeName(type) : (USER_RECORD_NAMES[type] ?? `USER_TYPE_${type}`);
      this.counts[typeName] = (this.counts[typeName] ?? 0) + 1;
      let next = pos + size;
      if (type < USER_TYPE_START) {
        if (size % 8 !== 0) this.fail(pos, `record of type ${type} has size ${size}, not a multiple of 8`);
        this.kernelRecords.push(pos, size);
      } else if (type === UserRecord.FINISHED_ROUND) {
        if (!pipe && this.options.onRound && !this.roundsBroken) this.finishRound();
      } else {
        while (pos + size > available()) yield;
        have(pos, size);
        const body = new Cursor(
          chunk.subarray(pos - chunkStart, pos - chunkStart + size),
          this.littleEndian,
          this.file,
          pos,
          `${USER_RECORD_NAMES[type] ?? `record type ${type}`} record`,
        );
        next += this.userRecord(type, body, pos, size, end, pipe);
      }
      pos = next;
    }
  }

  /** Interprets one file-only record; returns how many payload bytes follow it beyond header.size. */
  private userRecord(type: number, body: Cursor, pos: number, size: number, end: number, pipe: boolean): number {
    body.skip(8, 'header');
    switch (type) {
      case UserRecord.HEADER_ATTR: {
        const attrSizeAt = pos + 8 + 4;
        const declared = body.remaining >= 8 ? new DataView(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength).getUint32(12, true) : 0;
        const attrSize = declared || PERF_ATTR_SIZE_VER0;
        if (attrSize > size - 8) this.fail(attrSizeAt, `HEADER_ATTR: attr.size ${attrSize} does not fit the ${size}-byte record`);
        const attr = this.decodeAttrAt(pos + 8, attrSize, 'HEADER_ATTR attr');
        body.skip(attrSize, 'attr');
        if (body.remaining % 8 !== 0) body.fail('ids are not a whole number of u64');
        const ids: bigint[] = [];
        while (body.remaining > 0) ids.push(body.u64('id'));
        // In file mode the attrs section already has these; add only events not known yet.
        const known = ids.length > 0 && this.events.some((event) => event.ids.some((id) => ids.includes(id)));
        if (!known && (pipe || ids.length > 0)) this.events.push({ attr, ids });
        return 0;
      }
      case UserRecord.HEADER_TRACING_DATA: {
        const blobSize = body.u32('tracing data size');
        const blob = this.cursor(pos + size, Math.min(blobSize, end - pos - size), 'tracing data');
        if (blobSize > end - pos - size) blob.fail(`tracing data claims ${blobSize} bytes`);
        this.tracing = parseTracingData(blob);
        return alignUp(blobSize, 8);
      }
      case UserRecord.HEADER_BUILD_ID:
        body.pos = 0;
        this.features.buildIds.push(this.readBuildId(body, size));
        return 0;
      case UserRecord.HEADER_FEATURE: {
        const bit = body.u64Number('feature id', FEATURE_BITS - 1);
        this.readFeature(bit, this.cursor(pos + 16, size - 16, `feature ${featureName(bit)}`));
        return 0;
      }
      case UserRecord.EVENT_UPDATE: {
        const updateType = body.u64Number('event update type');
        const id = body.u64('event update id');
        if (updateType === EventUpdateType.NAME) this.namesById.set(id, body.cString('event name'));
        return 0;
      }
      case UserRecord.AUXTRACE: {
        // The AUX area data follows the record, outside header.size.
        const auxSize = body.u64Number('auxtrace size', end - pos - size);
        return auxSize;
      }
      case UserRecord.COMPRESSED:
      case UserRecord.COMPRESSED2:
        if (!this.warnings.some((w) => w.includes('compressed'))) {
          this.warnings.push(`the data section has zstd-compressed records (perf record -z), which are not supported; they are skipped, at offset ${pos}`);
        }
        return 0;
      default:
        // FINISHED_ROUND, ID_INDEX, THREAD_MAP, CPU_MAP, TIME_CONV, FINISHED_INIT, STAT*, ...:
        // ordering hints and metadata the decoder does not need.
        return 0;
    }
  }

  /** The events, with their names and tracepoint formats (described once: its warnings are said once). */
  private describeEvents(): EventDescription[] {
    if (this.described) return this.described;
    if (this.events.length === 0) this.fail(0, 'the file describes no events');
    const formats = new Map<number, TracepointFormat>();
    for (const { system, formats: texts } of this.tracing?.systems ?? []) {
      for (const text of texts) {
        try {
          const format = parseTracepointFormat(text, system);
          formats.set(format.id, format);
        } catch (error) {
          this.warnings.push(`a tracepoint format of system ${system} could not be parsed (${(error as Error).message})`);
        }
      }
    }
    const events: EventDescription[] = this.events.map((event, index) => {
      const named = event.ids.map((id) => this.namesById.get(id)).find((n) => n !== undefined) ?? event.name;
      const tracepoint = event.attr.type === PerfType.TRACEPOINT ? formats.get(Number(event.attr.config)) : undefined;
      const fallback = tracepoint ? `${tracepoint.system}:${tracepoint.name}` : `type${event.attr.type}/config${event.attr.config}`;
      return { index, name: named ?? fallback, attr: event.attr, ids: event.ids, ...(tracepoint ? { tracepoint } : {}) };
    });
    for (const event of events) {
      if (event.attr.type === PerfType.TRACEPOINT && !event.tracepoint) {
        this.warnings.push(`no tracepoint format for event ${event.name} (config ${event.attr.config}); its fields stay raw`);
      }
    }
    this.described = events;
    this.locator = new RecordLocator(events);
    return events;
  }

  private *finish(mode: 'file' | 'pipe'): Generator<void, PerfDataStream> {
    const events = this.describeEvents();
    yield* this.timeRecords();
    yield;
    const order = this.timeOrder();
    // What the rounds let go is the start of the time order (perf's rule held): checked, not assumed.
    let released = this.roundsBroken ? 0 : this.releasedCount;
    for (let i = 0; i < released; i++) if (order[i] !== this.releasedOrder[i]) released = 0;
    return {
      mode,
      events,
      features: this.features,
      tracing: this.tracing,
      recordCounts: this.counts,
      warnings: this.warnings,
      recordCount: order.length,
      released,
      batches: (batchBytes: number, from = 0) => this.batches(order, batchBytes, from),
    };
  }

  /**
   * A FINISHED_ROUND: times the records indexed since the last one and lets go, in time order, those queued at or
   * before perf's flush limit (the newest time seen at the previous round), as perf's ordered-events queue does.
   */
  private finishRound(): void {
    const events = this.describeEvents();
    const first = this.timed;
    this.timeRange(first, this.kernelRecords.length);
    const { timeHigh: high, timeLow: low } = this.kernelRecords;
    const before = (a: number, time: [number, number]) => high[a] < time[0] || (high[a] === time[0] && low[a] < time[1]);
    for (let i = first; i < this.kernelRecords.length; i++) {
      // Earlier than a record let go: the batches let go are no longer the start of the time order.
      if (this.lastReleased && before(i, this.lastReleased)) {
        this.roundsBroken = true;
        this.queued = [];
        return;
      }
      if (!before(i, this.newest)) this.newest = [high[i], low[i]];
      this.queued.push(i);
    }
    const limit = this.flushLimit;
    const due = (i: number) => high[i] < limit[0] || (high[i] === limit[0] && low[i] <= limit[1]);
    const go = this.queued.filter(due);
    this.flushLimit = this.newest;
    if (go.length === 0) return;
    this.queued = this.queued.filter((i) => !due(i));
    const indexes = Uint32Array.from(go).sort((a, b) => high[a] - high[b] || low[a] - low[b] || a - b);
    const last = indexes[indexes.length - 1];
    this.lastReleased = [high[last], low[last]];
    if (this.releasedCount + indexes.length > this.releasedOrder.length) {
      const grown = new Uint32Array(Math.max(this.releasedOrder.length * 2, this.releasedCount + indexes.length));
      grown.set(this.releasedOrder.subarray(0, this.releasedCount));
      this.releasedOrder = grown;
    }
    this.releasedOrder.set(indexes, this.releasedCount);
    this.releasedCount += indexes.length;
    let bytes = 0;
    for (const i of indexes) bytes += this.kernelRecords.size[i];
    this.options.onRound!(this.batch(indexes, bytes), events);
  }

  private *batches(order: Uint32Array, batchBytes: number, from: number): Generator<PerfDataBatch, void> {
    const sizes = this.kernelRecords.size;
    for (let first = from; first < order.length;) {
      let last = first;
      let bytes = 0;
      while (last < order.length && bytes < batchBytes) bytes += sizes[order[last++]];
      yield this.batch(order.subarray(first, last), bytes);
      first = last;
    }
  }

  /** Reads the time of every kernel record not timed yet, a chunk of the file at a time (untimed records take their predecessor's). */
  private *timeRecords(): Generator<void, void> {
    const records = this.kernelRecords;
    while (this.timed < records.length) {
      const first = this.timed;
      const start = records.offset[first];
      let last = first;
      while (last < records.length && last - first < INDEX_STEP_RECORDS && records.offset[last] + records.size[last] - start <= WALK_CHUNK_BYTES) last++;
      if (last === first) last++; // cannot happen: a record is at most 64 KiB
      this.timeRange(first, last);
      if (this.timed < records.length) yield;
    }
  }

  /** Reads the times of kernel records [first, last) (first is the next one not timed) with one read. */
  private timeRange(first: number, last: number): void {
    if (first >= last) return;
    const records = this.kernelRecords;
    const locate = this.locator!;
    const start = records.offset[first];
    const bytes = this.source.read(start, records.offset[last - 1] + records.size[last - 1] - start);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let [prevHigh, prevLow] = this.lastTime;
    for (let i = first; i < last; i++) {
      // Time 0 is perf's for records it synthesized, which it delivers where it meets them (session.c: queueing such an
      // event returns -ETIME): the LOST_SAMPLES perf record writes at its end stay there, after their predecessor.
      if (locate.readTime(view, records.offset[i] - start, records.size[i]) && (locate.timeHigh !== 0 || locate.timeLow !== 0)) {
        prevHigh = locate.timeHigh;
        prevLow = locate.timeLow;
      }
      records.timeHigh[i] = prevHigh;
      records.timeLow[i] = prevLow;
    }
    this.lastTime = [prevHigh, prevLow];
    this.timed = last;
  }

  /** The kernel records' indexes in time order (stable: equal times keep file order). */
  private timeOrder(): Uint32Array {
    const { timeHigh: high, timeLow: low, length } = this.kernelRecords;
    const order = new Uint32Array(length);
    for (let i = 0; i < length; i++) order[i] = i;
    // Already in order (one CPU's file, or perf's ordered rounds written so): nothing to sort.
    let sorted = true;
    for (let i = 1; i < length && sorted; i++) sorted = high[i - 1] < high[i] || (high[i - 1] === high[i] && low[i - 1] <= low[i]);
    if (!sorted) order.sort((a, b) => high[a] - high[b] || low[a] - low[b] || a - b);
    return order;
  }

  /**
   * Copies the records `indexes` (in that order) into one buffer, reading them from the file in runs of nearby
   * records, and remembers where each came from.
   */
  private batch(indexes: Uint32Array, total: number): PerfDataBatch {
    const records = this.kernelRecords;
    // File order, to read each run of nearby records with one read.
    const byOffset = Uint32Array.from(indexes).sort();
    const runOf = new Map<number, { start: number; bytes: Uint8Array }>();
    for (let i = 0; i < byOffset.length;) {
      const start = records.offset[byOffset[i]];
      let j = i + 1;
      let end = start + records.size[byOffset[i]];
      // Records closer than this are read with what lies between them: one read instead of two.
      while (j < byOffset.length && records.offset[byOffset[j]] - end <= NEARBY_BYTES) end = records.offset[byOffset[j]] + records.size[byOffset[j++]];
      const run = { start, bytes: this.source.read(start, end - start) };
      for (let k = i; k < j; k++) runOf.set(byOffset[k], run);
      i = j;
    }
    const out = new Uint8Array(total);
    // Ring offset and file offset of the i-th record in ring order (ascending ring offsets: binary search).
    const ringOffsets = new Float64Array(indexes.length);
    const fileOffsets = new Float64Array(indexes.length);
    let at = 0;
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i];
      const offset = records.offset[index];
      const size = records.size[index];
      const run = runOf.get(index)!;
      const from = offset - run.start;
      // The first walk read this size here: a file written to since then is not read as if it were the same.
      if ((run.bytes[from + 6] | (run.bytes[from + 7] << 8)) !== size) this.fail(offset, 'the file changed while it was being read');
      out.set(run.bytes.subarray(from, from + size), at);
      ringOffsets[i] = at;
      fileOffsets[i] = offset;
      at += size;
    }
    const fileOffsetOf = (ringOffset: number): number | undefined => {
      let low = 0;
      let high = ringOffsets.length - 1;
      while (low <= high) {
        const middle = (low + high) >>> 1;
        if (ringOffsets[middle] === ringOffset) return fileOffsets[middle];
        if (ringOffsets[middle] < ringOffset) low = middle + 1;
        else high = middle - 1;
      }
      return undefined;
    };
    return { ring: linearRing(this.file, out), recordCount: indexes.length, fileOffsetOf };
  }
}

/** Records at most this far apart in the file are read together with the bytes between them. */
const NEARBY_BYTES = 64 << 10;

/**
 * Finds the event and timestamp of a raw record the way perf does: the sample id sits at a
 * position fixed for the whole file (first after the header with IDENTIFIER, else after
 * IP/TID/TIME/ADDR), and in a sample_id_all trailer it is counted from the end.
 */
export class RecordLocator {
  private readonly byId = new Map<bigint, number>();
  /** u64 index (after the header) of the id in a SAMPLE; -1 when there is none. */
  private readonly idPos: number;
  /** u64 index counted back from the end of a non-sample record's trailer; -1 when none. */
  private readonly isPos: number;

  constructor(private readonly events: readonly EventDescription[]) {
    for (const event of events) for (const id of event.ids) this.byId.set(id, event.index);
    const first = events[0].attr.sampleType;
    const has = (bit: number) => (first & bit ? 1 : 0);
    this.idPos = first & Sample.IDENTIFIER ? 0 : first & Sample.ID ? has(Sample.IP) + has(Sample.TID) + has(Sample.TIME) + has(Sample.ADDR) : -1;
    this.isPos = first & Sample.IDENTIFIER ? 1 : first & Sample.ID ? 1 + has(Sample.CPU) + has(Sample.STREAM_ID) : -1;
  }

  /** The event of the record at `offset` of `view`. */
  eventOf(view: DataView, offset: number, size: number): number {
    if (this.events.length === 1) return 0;
    const type = view.getUint32(offset, true);
    let at = -1;
    if (type === RecordType.SAMPLE) {
      if (this.idPos >= 0) at = offset + 8 + this.idPos * 8;
    } else if (this.events[0].attr.flags.sampleIdAll && this.isPos > 0) {
      at = offset + size - this.isPos * 8;
    }
    if (at < offset + 8 || at + 8 > offset + size) return 0;
    return this.byId.get(view.getBigUint64(at, true)) ?? 0;
  }

  /** The u32 halves of the time readTime() read last. */
  timeHigh = 0;
  timeLow = 0;

  /**
   * Reads the record's time into timeHigh and timeLow; false when it carries none. (Fields, not a pair returned: it is
   * asked once per record of the file.)
   */
  readTime(view: DataView, offset: number, size: number): boolean {
    const event = this.events[this.eventOf(view, offset, size)];
    const sampleType = event.attr.sampleType;
    if (!(sampleType & Sample.TIME)) return false;
    const bit = (mask: number) => (sampleType & mask ? 8 : 0);
    const type = view.getUint32(offset, true);
    let at: number;
    if (type === RecordType.SAMPLE) {
      at = offset + 8 + bit(Sample.IDENTIFIER) + bit(Sample.IP) + bit(Sample.TID);
    } else {
      if (!event.attr.flags.sampleIdAll) return false;
      const trailer = bit(Sample.TID) + bit(Sample.TIME) + bit(Sample.ID) + bit(Sample.STREAM_ID) + bit(Sample.CPU) + bit(Sample.IDENTIFIER);
      at = offset + size - trailer + bit(Sample.TID);
    }
    if (at < offset + 8 || at + 8 > offset + size) return false;
    this.timeHigh = view.getUint32(at + 4, true);
    this.timeLow = view.getUint32(at, true);
    return true;
  }
}

function featureName(bit: number): string {
  return Object.entries(Feature).find(([, value]) => value === bit)?.[0] ?? `#${bit}`;
}
