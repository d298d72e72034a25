// perf.data (PERFILE2) layout constants, the typed error every damaged file produces, and a
// bounds-checked cursor that turns any out-of-range read into that error. Pure: no node imports,
// so the reader and writer also run in the webview.
// Layout learned from tools/perf/Documentation/perf.data-file-format.txt and tools/perf/util/header.c.

/** "PERFILE2" read as a little-endian u64. A big-endian file has the bytes reversed. */
export const PERF_MAGIC2 = 0x32454c4946524550n;
export const PERF_MAGIC2_SWAPPED = 0x50455246494c4532n;
/** The old format's magic, "PERFFILE" as text. */
export const PERF_MAGIC1_TEXT = 'PERFFILE';

/** struct perf_file_header: magic, size, attr_size, 3 sections (16 bytes each), 256-bit feature bitmap. */
export const FILE_HEADER_SIZE = 104;
/** struct perf_pipe_file_header: magic, size. */
export const PIPE_HEADER_SIZE = 16;
export const FEATURE_BITMAP_OFFSET = 72;
export const FEATURE_BITS = 256;
/** Strings in feature sections are padded to this alignment (perf's NAME_ALIGN). */
export const NAME_ALIGN = 64;

/** HEADER_* feature bits, in the order their sections follow the data section. */
export const Feature = {
  TRACING_DATA: 1,
  BUILD_ID: 2,
  HOSTNAME: 3,
  OSRELEASE: 4,
  VERSION: 5,
  ARCH: 6,
  NRCPUS: 7,
  CPUDESC: 8,
  CPUID: 9,
  TOTAL_MEM: 10,
  CMDLINE: 11,
  EVENT_DESC: 12,
  CPU_TOPOLOGY: 13,
  NUMA_TOPOLOGY: 14,
  BRANCH_STACK: 15,
  PMU_MAPPINGS: 16,
  GROUP_DESC: 17,
  AUXTRACE: 18,
  STAT: 19,
  CACHE: 20,
  SAMPLE_TIME: 21,
  MEM_TOPOLOGY: 22,
  CLOCKID: 23,
  DIR_FORMAT: 24,
  BPF_PROG_INFO: 25,
  BPF_BTF: 26,
  COMPRESSED: 27,
  CPU_PMU_CAPS: 28,
  CLOCK_DATA: 29,
  HYBRID_TOPOLOGY: 30,
  PMU_CAPS: 31,
} as const;

/** Record types perf itself writes into files and pipes (never produced by the kernel). */
export const UserRecord = {
  HEADER_ATTR: 64,
  HEADER_EVENT_TYPE: 65,
  HEADER_TRACING_DATA: 66,
  HEADER_BUILD_ID: 67,
  FINISHED_ROUND: 68,
  ID_INDEX: 69,
  AUXTRACE_INFO: 70,
  AUXTRACE: 71,
  AUXTRACE_ERROR: 72,
  THREAD_MAP: 73,
  CPU_MAP: 74,
  STAT_CONFIG: 75,
  STAT: 76,
  STAT_ROUND: 77,
  EVENT_UPDATE: 78,
  TIME_CONV: 79,
  HEADER_FEATURE: 80,
  COMPRESSED: 81,
  FINISHED_INIT: 82,
  COMPRESSED2: 83,
} as const;

export const USER_RECORD_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(UserRecord).map(([name, value]) => [value, name]));

/** First record type that only exists in perf.data files/pipes. */
export const USER_TYPE_START = 64;

/** EVENT_UPDATE sub-types. */
export const EventUpdateType = { UNIT: 0, SCALE: 1, NAME: 2, CPUS: 3 } as const;

/** misc bit on a BUILD_ID entry: the build id's length is in data[20] (else it is 20). */
export const BUILD_ID_MISC_SIZE = 1 << 15;

/**
 * A perf.data file that is damaged, truncated, foreign or of an unsupported kind.
 * `offset` is the absolute byte offset in the file where the problem was found.
 */
export class PerfDataError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly what: string,
  ) {
    super(`${file}: ${what}, at offset ${offset}`);
    this.name = 'PerfDataError';
  }
}

/**
 * Reads integers and strings from a window of the file; every read is bounds-checked against
 * the window's end and throws PerfDataError naming the absolute file offset.
 */
export class Cursor {
  private readonly view: DataView;
  /** Position relative to `bytes`; absolute file offset is `base + pos`. */
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly littleEndian: boolean,
    readonly file: string,
    /** Absolute file offset of bytes[0]. */
    readonly base: number,
    /** What is being read, for error messages ("EVENT_DESC section"). */
    readonly context: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  get absolute(): number {
    return this.base + this.pos;
  }

  fail(what: string, at: number = this.absolute): never {
    throw new PerfDataError(this.file, at, `${this.context}: ${what}`);
  }

  need(count: number, what: string): void {
    if (count < 0 || this.pos + count > this.bytes.length) {
      this.fail(`${what} needs ${count} bytes but only ${this.remaining} remain`);
    }
  }

  u8(what = 'u8'): number {
    this.need(1, what);
    return this.bytes[this.pos++];
  }

  u16(what = 'u16'): number {
    this.need(2, what);
    const value = this.view.getUint16(this.pos, this.littleEndian);
    this.pos += 2;
    return value;
  }

  u32(what = 'u32'): number {
    this.need(4, what);
    const value = this.view.getUint32(this.pos, this.littleEndian);
    this.pos += 4;
    return value;
  }

  i32(what = 'i32'): number {
    this.need(4, what);
    const value = this.view.getInt32(this.pos, this.littleEndian);
    this.pos += 4;
    return value;
  }

  u64(what = 'u64'): bigint {
    this.need(8, what);
    const value = this.view.getBigUint64(this.pos, this.littleEndian);
    this.pos += 8;
    return value;
  }

  /** A u64 that must fit a JS number (sizes, offsets, counts). */
  u64Number(what: string, max: number = Number.MAX_SAFE_INTEGER): number {
    const at = this.absolute;
    const value = this.u64(what);
    if (value > BigInt(max)) this.fail(`${what} is ${value}, larger than ${max}`, at);
    return Number(value);
  }

  take(count: number, what: string): Uint8Array {
    this.need(count, what);
    const slice = this.bytes.subarray(this.pos, this.pos + count);
    this.pos += count;
    return slice;
  }

  skip(count: number, what: string): void {
    this.need(count, what);
    this.pos += count;
  }

  /** A NUL-terminated string (the NUL is consumed). */
  cString(what: string): string {
    const end = this.bytes.indexOf(0, this.pos);
    if (end < 0) this.fail(`${what} has no terminating NUL`);
    const text = decodeText(this.bytes.subarray(this.pos, end));
    this.pos = end + 1;
    return text;
  }

  /** struct perf_header_string: u32 len (padded length), then len bytes holding a NUL-terminated string. */
  headerString(what: string): string {
    const len = this.u32(`${what} length`);
    const raw = this.take(len, what);
    const nul = raw.indexOf(0);
    return decodeText(nul < 0 ? raw : raw.subarray(0, nul));
  }
}

const textDecoder = new TextDecoder('utf-8', { fatal: false });
const textEncoder = new TextEncoder();

export function decodeText(bytes: Uint8Array): string {
  return textDecoder.decode(bytes);
}

export function encodeText(text: string): Uint8Array {
  return textEncoder.encode(text);
}

export function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}

/** Lowercase hex of bytes, as perf prints build ids. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

export function fromHex(hex: string): Uint8Array {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new RangeError(`not a hex byte string: ${hex}`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
