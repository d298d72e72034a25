// The decoder's fast loop as WebAssembly, run alone, over a copy in its own memory with warm
// columns: the decoder's own sample run (native/decode/kernels/sample-run.ts, AssemblyScript, through
// its engine), the same row (kind, misc, event, offset, time relative to a base, pid, tid, cpu, ip
// halves; ring 0 from the first touch), the same tests per record (type, size, id), over the same
// bytes, in the same V8. The decoder runs that loop over copies with a room; this walker shows what
// the loop costs without the decoder around it (choosing the time base, growing the columns, the
// rows' ring column, coverage), as walker.c shows what C costs.
//
// A baseline, like walker.c: it takes walker.c's shortcuts (one pass unless the base guess was
// wrong) and is not the product. Runs of samples of one event with every field present go through
// the kernel; any other record (LOST, throttle, a sample of another event) gets walker.c's general
// code, in TypeScript here, one record at a time, as such records are rare.

import { idLocator, parseInfoFor, type ParseInfo } from '../native/decode/parse-info';
import { RecordType } from '../native/abi/uapi';
import type { EventDescription, RingCopy } from '../native/abi/snapshot';
import {
  COLUMNS_WIDEST_FIRST,
  RECORD_COLUMN_NAMES,
  columnConstructor,
  columnView,
  type ColumnArray,
  type ColumnArrays,
  type RecordColumnName,
} from '../native/decode/column-schema';
import type { RecordColumns } from '../native/decode/types';
import { columnOffsets } from '../native/decode/column-set';
import { oldestRecordStart, sampleSizesAtStart } from '../native/decode/decode-ring';
import { SAMPLE_RUN_JOB_BYTES } from '../native/decode/wasm/job-layout';
import { SampleRunEngine, type SampleRunState } from '../native/decode/wasm/sample-run';
import { columnChecksum, type SideMeasurement } from './checksum';
import { median, nowNs } from './stats';

/** Records whose pid and tid are their first fields (walker.c's list). */
const PID_TID_FIRST: ReadonlySet<number> = new Set([
  RecordType.MMAP,
  RecordType.COMM,
  RecordType.MMAP2,
  RecordType.ITRACE_START,
  RecordType.READ,
  RecordType.NAMESPACES,
]);

// ---- The walker: one ring's bytes and warm columns in one memory, timed like walker.c. ----

/** Bytes of one element of column `name` (column-schema.ts has the widths). */
function width(name: RecordColumnName): number {
  return columnConstructor(name).BYTES_PER_ELEMENT;
}

function align64(n: number): number {
  return Math.ceil(n / 64) * 64;
}

/** Byte offsets in a sample of the fields the row takes (id: -1 when samples are not told apart by id). */
interface SampleOffsets {
  readonly time: number;
  readonly pidTid: number;
  readonly cpu: number;
  readonly ip: number;
  readonly sampleMin: number;
  readonly id: number;
}

export class WasmWalker {
  private readonly memory: WebAssembly.Memory;
  private readonly engine: SampleRunEngine;
  /** The walk's bounds of the relative times, as the sample run and the general code keep them. */
  private readonly state: SampleRunState = { offset: 0, row: 0, minRel: Infinity, maxRel: -Infinity, minAt: 0, maxAt: 0 };
  private readonly end: number;
  private readonly capacity: number;
  /** Where row 0 of each column is in memory. */
  private readonly at = {} as Record<RecordColumnName, number>;
  private readonly info: ParseInfo;
  private readonly ringCpu: number;
  /** The ring's default event: the event of its samples when samples carry no id. */
  private readonly defaultEvent: number;
  private readonly layout: SampleOffsets;

  /** `ring`: its bytes (from 0, validBytes of them) are copied into the walker's memory here, untimed, as walker.c reads them from its file. */
  constructor(
    private readonly events: readonly EventDescription[],
    ring: RingCopy,
  ) {
    const event = events.find((e) => e.index === ring.defaultEvent) ?? events[0];
    const info = parseInfoFor(event);
    this.info = info;
    this.ringCpu = ring.cpu;
    this.defaultEvent = event.index;
    const s = info.sample;
    if (s.time < 0 || s.pidTid < 0 || s.cpu < 0 || s.ip < 0) throw new Error('the wasm walker needs samples with time, tid, cpu and ip');
    // The id is looked at only when some event has one, as the decoder does.
    const idOffset = events.some((e) => e.ids.length > 0) ? idLocator(info).sampleIdOffset : -1;
    this.layout = { time: s.time, pidTid: s.pidTid, cpu: s.cpu, ip: s.ip, sampleMin: s.fixedEnd, id: idOffset };
    this.end = ring.validBytes;
    // Room for the most records the bytes can hold (8 bytes each), as walker.c has.
    this.capacity = (this.end >> 3) + 1;
    let next = align64(this.end);
    const job = next;
    next += SAMPLE_RUN_JOB_BYTES;
    // The columns laid out as the decoder lays out a column set (and walker.c its block).
    next = align64(next);
    const { offsets, bytes: columnBytes } = columnOffsets(this.capacity);
    for (const name of COLUMNS_WIDEST_FIRST) this.at[name] = next + offsets[name];
    next += columnBytes;
    if (next > 4 * 1024 ** 3 - 65536) throw new RangeError(`the wasm walker's ${next} bytes do not fit a 32-bit memory`);
    this.memory = new WebAssembly.Memory({ initial: Math.ceil(next / 65536) });
    const bytes = new Uint8Array(this.memory.buffer);
    bytes.set(ring.bytes.subarray(0, this.end), 0);
    // First-touch every column page before any timing, as walker.c does.
    bytes.fill(0, this.end);
    this.engine = new SampleRunEngine(this.memory, false, job, 0, this.at);
  }

  /** One pass over the ring: the rows it wrote (oldest first, at the top of the columns). */
  private pass(): number {
    const buffer = this.memory.buffer;
    const u32 = new Uint32Array(buffer);
    const view = new DataView(buffer);
    const end = this.end;
    const layout = this.layout;
    // The time base: the probable oldest record's time, as walker.c and the decoder take it.
    const newestSize = end >= 8 ? u32[1] >>> 16 : 0;
    const guess = newestSize >= 8 ? oldestRecordStart(u32, end, newestSize, sampleSizesAtStart(u32, end, newestSize), layout.id) : -1;
    const base =
      guess > 0 && guess + layout.sampleMin <= end && u32[guess >>> 2] === RecordType.SAMPLE
        ? view.getBigUint64(guess + layout.time, true)
        : view.getBigUint64(layout.time, true);
    const baseHi = Number(base >> 32n);
    const baseLo = Number(base & 0xffffffffn);
    const runLayout = { time: layout.time, pidTid: layout.pidTid, cpu: layout.cpu, ip: layout.ip, sampleMin: layout.sampleMin };
    const state = this.state;
    state.minRel = Infinity;
    state.maxRel = -Infinity;
    let idLo = -1;
    let idHi = -1;
    let event = this.defaultEvent;
    let o = 0;
    let row = this.capacity - 1;
    let rows = 0;
    // A record only the general code takes starts the walk (the run's id is not known yet), so
    // the loop alternates: the fast loop in WebAssembly, then one record here, as walker.c's does.
    for (;;) {
      state.offset = o;
      state.row = row;
      const decoded = layout.id < 0 || idHi >= 0 ? this.engine.decode(end, 0x7fffffff, -1, runLayout, layout.id, idLo, idHi, event, baseHi, baseLo, state) : 0;
      rows += decoded;
      row -= decoded;
      o = state.offset;
      if (o + 8 > end) break;
      const size = u32[(o >>> 2) + 1] >>> 16;
      if (size < 8 || (size & 7) !== 0 || o + size > end) break;
      const found = this.generalRecord(buffer, o, size, row, base);
      if (u32[o >>> 2] === RecordType.SAMPLE && layout.id >= 0 && found >= 0) {
        idLo = u32[(o + layout.id) >>> 2];
        idHi = u32[(o + layout.id + 4) >>> 2];
        event = found;
      }
      rows++;
      row--;
      o += size;
    }
    // Times relative to the oldest: a second pass only when the guessed base was not the smallest
    // time, as in walker.c.
    const smallest = state.minRel;
    if (smallest !== 0 && smallest !== Infinity) {
      const time = new Float64Array(buffer, this.at.time, this.capacity);
      for (let k = this.capacity - rows; k < this.capacity; k++) time[k] -= smallest;
    }
    return rows;
  }

  /**
   * Writes the row of a record the fast loop does not take, as walker.c's general code does (a
   * LOST record, a sample of another event, ...), and folds its time into the running bounds.
   * Returns the event a sample's id names, or -1.
   */
  private generalRecord(buffer: ArrayBuffer, o: number, size: number, row: number, base: bigint): number {
    const view = new DataView(buffer);
    const info = this.info;
    const type = view.getUint32(o, true);
    let event = this.defaultEvent;
    let found = -1;
    let t = -1;
    let pt = -1;
    let cp = -1;
    let ipAt = -1;
    let pid = -1;
    let tid = -1;
    if (type === RecordType.SAMPLE) {
      if (this.layout.id >= 0 && this.layout.id + 8 <= size) {
        found = this.eventOf(view.getUint32(o + this.layout.id + 4, true), view.getUint32(o + this.layout.id, true));
        if (found >= 0) event = found;
      }
      if (size >= this.layout.sampleMin) {
        t = this.layout.time;
        pt = this.layout.pidTid;
        cp = this.layout.cpu;
        ipAt = this.layout.ip;
      }
    } else {
      const trailer = info.trailer;
      const idFromEnd = trailer.identifierFromEnd >= 0 ? trailer.identifierFromEnd : trailer.idFromEnd;
      if (idFromEnd >= 0 && size >= 8 + idFromEnd) {
        const e = this.eventOf(view.getUint32(o + size - idFromEnd + 4, true), view.getUint32(o + size - idFromEnd, true));
        if (e >= 0) event = e;
      }
      if (trailer.size > 0 && size >= 8 + trailer.size) {
        if (trailer.timeFromEnd >= 0) t = size - trailer.timeFromEnd;
        if (trailer.pidTidFromEnd >= 0) pt = size - trailer.pidTidFromEnd;
        if (trailer.cpuFromEnd >= 0) cp = size - trailer.cpuFromEnd;
      }
      if (PID_TID_FIRST.has(type)) {
        if (size >= 16) pt = 8;
      } else if (type === RecordType.FORK || type === RecordType.EXIT) {
        if (size >= 32) {
          pid = view.getInt32(o + 8, true);
          tid = view.getInt32(o + 16, true);
          pt = -2;
          if (t < 0) t = 24;
        }
      } else if (type === RecordType.THROTTLE || type === RecordType.UNTHROTTLE) {
        if (t < 0 && size >= 16) t = 8;
      }
    }
    const at = (name: RecordColumnName) => this.at[name] + row * width(name);
    view.setUint8(at('kind'), type > 254 ? 255 : type);
    view.setUint16(at('misc'), view.getUint16(o + 4, true), true);
    view.setUint16(at('event'), event, true);
    view.setUint16(at('ring'), 0, true);
    view.setUint32(at('offset'), o, true);
    if (t >= 0) {
      const rel = Number(BigInt.asIntN(64, view.getBigUint64(o + t, true) - base));
      view.setFloat64(at('time'), rel, true);
      if (rel < this.state.minRel) this.state.minRel = rel;
      if (rel > this.state.maxRel) this.state.maxRel = rel;
    } else {
      view.setFloat64(at('time'), NaN, true);
    }
    if (pt >= 0) {
      pid = view.getInt32(o + pt, true);
      tid = view.getInt32(o + pt + 4, true);
    }
    view.setInt32(at('pid'), pid, true);
    view.setInt32(at('tid'), tid, true);
    view.setInt32(at('cpu'), cp >= 0 ? view.getInt32(o + cp, true) : this.ringCpu, true);
    view.setUint32(at('ipLo'), ipAt >= 0 ? view.getUint32(o + ipAt, true) : 0, true);
    view.setUint32(at('ipHi'), ipAt >= 0 ? view.getUint32(o + ipAt + 4, true) : 0, true);
    return found;
  }

  private eventOf(idHi: number, idLo: number): number {
    const id = (BigInt(idHi) << 32n) | BigInt(idLo);
    const event = this.events.find((e) => e.ids.some((known) => BigInt.asUintN(64, known) === id));
    return event ? event.index : -1;
  }

  /** The last pass's rows as columns (for the checksum the bench compares with the decoder's and walker.c's). */
  private columns(rows: number): RecordColumns {
    const buffer = this.memory.buffer;
    const first = this.capacity - rows;
    const views: Partial<Record<RecordColumnName, ColumnArray<RecordColumnName>>> = {};
    for (const name of RECORD_COLUMN_NAMES) views[name] = columnView(name, buffer, this.at[name] + first * width(name), rows);
    return { length: rows, timeOriginNs: 0n, ...(views as ColumnArrays) };
  }

  /** `warmup` untimed passes, then `runs` timed ones over the same warm columns. */
  measure(runs: number, warmup: number): SideMeasurement {
    const times: number[] = [];
    let rows = 0;
    for (let i = -warmup; i < runs; i++) {
      const started = nowNs();
      rows = this.pass();
      const ns = nowNs() - started;
      if (i >= 0) times.push(ns);
    }
    return { records: rows, median_ns: median(times), runs_ns: times, checksum: columnChecksum(this.columns(rows)) };
  }
}
