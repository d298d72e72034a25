// JSON Lines from the tables: the README's Output contract, byte for byte what formatRecordJson writes, with the
// expensive parts of a sample line — its address, symbol, callchain and callchain symbols — formatted once per
// frame and once per stack instead of once per record. Samples of an event whose fields the tables read in place
// are written from the ring bytes; every other record (side-band, tracepoints, read groups, user stacks) goes
// through the record decoder as before.
//
// Lines are written as UTF-8 bytes (LineBytes), a frame's address and name encoded once and copied from there into
// every callchain that holds it: a -a -g capture's JSON Lines are tens of MB of callchains, and built as strings
// they were that much garbage twice over (the strings, then their flattened copies for the write).

import { RecordType, Sample } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT } from '../abi/u64';
import { formatRecordJson, type Symbolizer } from '../decode/jsonl';
import type { DecodedSnapshot } from '../decode/types';
import { sampleReaders, type SampleReader } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';

/** Bytes of JSON Lines being written: grows as needed; take() hands over what was written. */
export class LineBytes {
  bytes: Uint8Array = new Uint8Array(1 << 16);
  /** A view of `bytes`, for copies a word at a time (stackJson). */
  view = new DataView(this.bytes.buffer);
  length = 0;
  private static readonly encoder = new TextEncoder();

  /** Room for `count` more bytes. */
  reserve(count: number): void {
    if (this.length + count <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + count));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  /** A string known to be ASCII (JSON punctuation, field names, hex and decimal digits). */
  ascii(text: string): void {
    this.reserve(text.length);
    const { bytes } = this;
    let at = this.length;
    for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
    this.length = at;
  }

  utf8(text: string): void {
    this.reserve(text.length * 3);
    this.length += LineBytes.encoder.encodeInto(text, this.bytes.subarray(this.length)).written;
  }

  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  /** `source[start, end)` appended (a copy loop: the runs are a frame's few dozen bytes, where subarray+set costs more). */
  copy(source: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    const { bytes } = this;
    let at = this.length;
    for (let i = start; i < end; i++) bytes[at++] = source[i];
    this.length = at;
  }

  /** A u64 given as u32 halves, as `0x` and lowercase hex without leading zeros (BigInt's toString(16)). */
  hexAddress(high: number, low: number): void {
    this.reserve(18);
    const { bytes } = this;
    let at = this.length;
    bytes[at++] = 0x30;
    bytes[at++] = 0x78;
    if (high !== 0) {
      at = writeHex(bytes, at, high >>> 0, false);
      at = writeHex(bytes, at, low >>> 0, true);
    } else at = writeHex(bytes, at, low >>> 0, false);
    this.length = at;
  }

  /** A u64 given as u32 halves, in decimal. */
  u64(high: number, low: number): void {
    if (high < EXACT_HIGH_HALF_LIMIT) this.decimal(high * 0x100000000 + low);
    else this.ascii(((BigInt(high) << 32n) | BigInt(low)).toString());
  }

  /** A signed 32-bit value in decimal. */
  i32(value: number): void {
    if (value < 0) {
      this.byte(0x2d);
      this.decimal(-value);
    } else this.decimal(value);
  }

  /** A non-negative integer below 2^53 in decimal. */
  private decimal(value: number): void {
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.reserve(digits);
    const { bytes } = this;
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      const next = Math.floor(rest / 10);
      bytes[--at] = 0x30 + (rest - next * 10);
      rest = next;
    } while (rest > 0);
  }

  /** What was written, handed over (the next writes go to new bytes). */
  take(): Uint8Array {
    const written = this.bytes.subarray(0, this.length);
    this.bytes = new Uint8Array(this.bytes.length);
    this.view = new DataView(this.bytes.buffer);
    this.length = 0;
    return written;
  }
}

const HEX_DIGITS = '0123456789abcdef';

/** `value` (u32) in hex at `bytes[at]`, all 8 digits when `padded`, else from its first non-zero one; the end. */
function writeHex(bytes: Uint8Array, at: number, value: number, padded: boolean): number {
  let shift = 28;
  if (!padded) while (shift > 0 && value >>> shift === 0) shift -= 4;
  for (; shift >= 0; shift -= 4) bytes[at++] = HEX_DIGITS.charCodeAt((value >>> shift) & 15);
  return at;
}

/** Bytes a copy a word at a time may touch past what it copies. */
const WORD_SLACK = 4;

const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;

/**
 * Every frame's address as a JSON string and its symbol as JSON (`null` when unnamed), UTF-8, one after the other in
 * frame order: frame f's address is `pool[bounds[2f], bounds[2f + 1])`, its symbol `pool[bounds[2f + 1], bounds[2f +
 * 2])`. Shared by the lines of every batch of one recording (frames are only ever added), encoded as the tables grow.
 */
class FrameJson {
  readonly pool = new LineBytes();
  bounds = new Int32Array(1 << 12);
  /** Frames encoded so far: 0 until the first. */
  count = 0;

  /** Encodes frames `count` up to `tables.frameCount` (the tables must be symbolized that far). */
  encodeUpTo(tables: ProfileTables): void {
    const total = tables.frameCount;
    if (this.count >= total) return;
    if (this.bounds.length < 2 * total + 1) {
      const grown = new Int32Array(Math.max(2 * total + 1, this.bounds.length * 2));
      grown.set(this.bounds);
      this.bounds = grown;
    }
    const { pool, bounds } = this;
    const { frameIpHigh, frameIpLow, frameSymbol } = tables;
    bounds[2 * this.count] = pool.length;
    for (let frame = this.count; frame < total; frame++) {
      pool.byte(QUOTE);
      pool.hexAddress(frameIpHigh[frame], frameIpLow[frame]);
      pool.byte(QUOTE);
      bounds[2 * frame + 1] = pool.length;
      const symbol = frameSymbol[frame];
      if (symbol === undefined) pool.ascii('null');
      else pool.utf8(JSON.stringify(symbol));
      bounds[2 * frame + 2] = pool.length;
    }
    this.count = total;
    // stackJson reads a word at a time, up to three bytes past a frame's end: there are always bytes there to read.
    pool.reserve(WORD_SLACK);
  }
}

const QUOTE = 0x22;
const LOWER_N = 0x6e;

export class TableJsonl {
  private readonly frameJson: FrameJson;
  private readonly readers: Map<number, SampleReader>;
  /** Per event: its name as a JSON string, in UTF-8 (encoded once, not per sample). */
  private readonly eventJson = new Map<number, Uint8Array>();
  private readonly views: DataView[];
  /** One line's bytes, for line(). */
  private readonly scratch = new LineBytes();
  private static readonly decoder = new TextDecoder();
  private static readonly encoder = new TextEncoder();

  /**
   * `symbolize` names what the tables do not hold (records formatted by the record decoder); the tables must be
   * symbolized. `previous`: the lines of the batch before (its tables the ones `tables` continues), whose formatted
   * frames this one reuses.
   */
  constructor(
    private readonly snapshot: DecodedSnapshot,
    readonly tables: ProfileTables,
    private readonly symbolize: Symbolizer,
    previous?: TableJsonl,
  ) {
    this.frameJson = previous?.frameJson ?? new FrameJson();
    this.frameJson.encodeUpTo(tables);
    this.readers = sampleReaders(snapshot);
    for (const [index, reader] of this.readers) this.eventJson.set(index, TableJsonl.encoder.encode(JSON.stringify(reader.event.name)));
    this.views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
  }

  /** One JSON line (without the newline) for `row`. */
  line(row: number): string {
    const out = this.scratch;
    out.length = 0;
    if (!this.sampleBytes(row, out)) return formatRecordJson(this.snapshot, row, this.symbolize);
    return TableJsonl.decoder.decode(out.bytes.subarray(0, out.length));
  }

  /** One JSON line for `row`, with its newline, appended to `out`. */
  write(row: number, out: LineBytes): void {
    if (!this.sampleBytes(row, out)) out.utf8(formatRecordJson(this.snapshot, row, this.symbolize));
    out.byte(NEWLINE);
  }

  /** Writes `row` read in place when it is a sample the tables read so; false (nothing written) for the record decoder. */
  private sampleBytes(row: number, out: LineBytes): boolean {
    const { kind, event, ring, offset } = this.snapshot.columns;
    if (kind[row] !== RecordType.SAMPLE) return false;
    const reader = this.readers.get(event[row]);
    return reader?.inPlace === true && this.sampleLine(row, reader, this.views[ring[row]], offset[row], out);
  }

  /** A sample read in place; false when its bytes are not what the layout says (the record decoder then says why). */
  private sampleLine(row: number, reader: SampleReader, view: DataView, at: number, out: LineBytes): boolean {
    const { info } = reader;
    const layout = info.sample;
    const st = info.sampleType;
    const size = view.getUint16(at + 6, true);
    let end = layout.fixedEnd;
    let stack = -1;
    if (reader.hasCallchain) {
      if (end + 8 > size || view.getUint32(at + end + 4, true) !== 0) return false;
      const count = view.getUint32(at + end, true);
      end += 8 + count * 8;
      stack = this.tables.sampleStack[row];
      if (count > 0 && stack < 0 && !this.onlyMarkers(view, at + layout.fixedEnd + 8, count)) return false;
    }
    // Bytes after the last field are shown by the record decoder (trailingBytes): leave such a record to it.
    if (end !== size) return false;
    out.ascii('{"type":"SAMPLE","event":');
    const eventName = this.eventJson.get(reader.event.index)!;
    out.copy(eventName, 0, eventName.length);
    if (st & Sample.TIME) {
      out.ascii(',"time":');
      this.u64At(view, at + layout.time, out);
    }
    if (st & Sample.TID) {
      out.ascii(',"pid":');
      out.i32(view.getInt32(at + layout.pidTid, true));
      out.ascii(',"tid":');
      out.i32(view.getInt32(at + layout.pidTid + 4, true));
    }
    if (st & Sample.CPU) {
      out.ascii(',"cpu":');
      out.i32(view.getInt32(at + layout.cpu, true));
    } else {
      const cpu = this.snapshot.rings[this.snapshot.columns.ring[row]].cpu;
      if (cpu >= 0) {
        out.ascii(',"cpu":');
        out.i32(cpu);
      }
    }
    if (st & Sample.IP) {
      const frame = this.tables.sampleIpFrame[row];
      const { pool, bounds } = this.frameJson;
      const symStart = bounds[2 * frame + 1];
      out.ascii(',"ip":');
      out.copy(pool.bytes, bounds[2 * frame], symStart);
      // "null": no sym field at all.
      if (pool.bytes[symStart] !== LOWER_N) {
        out.ascii(',"sym":');
        out.copy(pool.bytes, symStart, bounds[2 * frame + 2]);
      }
    }
    if (st & Sample.PERIOD) {
      out.ascii(',"period":');
      this.u64At(view, at + layout.period, out);
    }
    if (st & Sample.ADDR) out.ascii(`,"addr":"0x${view.getBigUint64(at + layout.addr, true).toString(16)}"`);
    if (reader.hasCallchain) {
      if (stack < 0) out.ascii(',"callchain":[],"callchainSyms":[]');
      else {
        out.ascii(',"callchain":[');
        this.stackJson(stack, out, false);
        out.ascii('],"callchainSyms":[');
        this.stackJson(stack, out, true);
        out.byte(0x5d);
      }
    }
    if (st & Sample.IDENTIFIER) {
      out.ascii(',"identifier":');
      this.u64At(view, at + layout.identifier, out);
    }
    if (st & Sample.ID) {
      out.ascii(',"id":');
      this.u64At(view, at + layout.id, out);
    }
    if (st & Sample.STREAM_ID) {
      out.ascii(',"streamId":');
      this.u64At(view, at + layout.streamId, out);
    }
    out.byte(CLOSE_BRACE);
    return true;
  }

  private u64At(view: DataView, at: number, out: LineBytes): void {
    out.u64(view.getUint32(at + 4, true), view.getUint32(at, true));
  }

  /** True when every entry of a callchain is a context marker (an empty stack, not a damaged one). */
  private onlyMarkers(view: DataView, entries: number, count: number): boolean {
    for (let i = 0; i < count; i++)
      if (view.getUint32(entries + i * 8 + 4, true) !== 0xffffffff || view.getUint32(entries + i * 8, true) < 0xfffff001) return false;
    return true;
  }

  /** A stack's addresses (or symbols), leaf first, comma-separated. */
  private stackJson(stack: number, out: LineBytes, symbols: boolean): void {
    const { stackPrefix, stackFrame } = this.tables;
    const pool = this.frameJson.pool.view;
    const { bounds } = this.frameJson;
    const side = symbols ? 1 : 0;
    // The hottest loop of a -g decode (a few dozen frames a sample, tens of MB in all): each frame's bytes are copied
    // four at a time (half the time of a byte loop), the last word running up to three bytes past the frame's end,
    // which the next frame (or the next line) writes over; `out` keeps room for that, grown only when short.
    let bytes = out.bytes;
    let view = out.view;
    let at = out.length;
    for (let s = stack; s >= 0; s = stackPrefix[s]) {
      const which = 2 * stackFrame[s] + side;
      const start = bounds[which];
      const size = bounds[which + 1] - start;
      if (at + size + 1 + WORD_SLACK > bytes.length) {
        out.length = at;
        out.reserve(size + 1 + WORD_SLACK);
        bytes = out.bytes;
        view = out.view;
      }
      if (s !== stack) bytes[at++] = COMMA;
      for (let i = 0; i < size; i += 4) view.setUint32(at + i, pool.getUint32(start + i, true), true);
      at += size;
    }
    out.length = at;
  }
}
