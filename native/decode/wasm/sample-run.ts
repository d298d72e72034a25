// decodeSampleRun (decode-ring.ts) as WebAssembly, for rings whose copy and columns live in one
// WebAssembly memory (copy-room.ts). Same row, same tests per record, same time: the exact 64-bit
// difference from the base rounded once to a double, which is what the JavaScript loop's
// (hi - baseHi) * 2^32 + (lo - baseLo) gives; a difference past 64 bits (damaged) is left to it.
//
// Why: in optimised JavaScript each typed-array access carries a map check, a bounds check and
// reloads of the array's length and data pointer (`node --print-opt-code`: 284 instructions a row
// in decodeSampleRun); a WebAssembly access is one instruction, its bounds kept by guard pages.
// On the bench machine this loop runs at the C walker's speed where the JavaScript one ran at half.

import { RecordType } from '../../abi/uapi';
import type { RecordColumnName } from '../column-schema';
import { Body, F64, I32, I64, OP, compiledModule, oneFunctionModule, type ImportedMemory } from './encoder';
import { RECORD_COLUMN_NAMES } from '../column-schema';
import type { ColumnSet } from '../column-set';
import {
  SAMPLE_RUN_F64_START as F64_START,
  SAMPLE_RUN_JOB_F64 as JOB_F64,
  SAMPLE_RUN_JOB_I32 as JOB_I32,
  type SampleRunJobF64 as JobF64,
  type SampleRunJobI32 as JobI32,
} from './job-layout';

/** The columns a sample run writes: every record column but ring, which the decoder fills after the run. */
export type SampleRunColumnName = Exclude<RecordColumnName, 'ring'>;

/** Byte address in the memory of row 0 of each column a run writes. */
export type SampleRunColumns = { readonly [K in SampleRunColumnName]: number };

/**
 * What a sample run's module is compiled with: byte addresses in memory of the ring (src) and of row
 * 0 of each column (by the column's name), byte offsets in a sample of its fields (sTime ...), the
 * smallest sample holding them (sMin) and the id's offset (sId, -1: records carry no id). As
 * constants, a field read or a row store is one instruction with its address in it; as locals, the
 * loop's thirty values did not fit x86-64's registers and every store reloaded its column's address
 * from the stack (TurboFan's code for the loop, node --print-wasm-code).
 */
export interface SampleRunConstants extends SampleRunColumns {
  readonly src: number;
  readonly sTime: number;
  readonly sPidTid: number;
  readonly sCpu: number;
  readonly sIp: number;
  readonly sMin: number;
  readonly sId: number;
}

/** Each field's element index in the job's i32 and f64 views. */
const I = Object.fromEntries(JOB_I32.map((field, i) => [field, i])) as { readonly [K in JobI32]: number };
const F = Object.fromEntries(JOB_F64.map((field, i) => [field, i])) as { readonly [K in JobF64]: number };
const i32At = (field: JobI32): number => I[field] * 4;
const f64At = (field: JobF64): number => F64_START + F[field] * 8;

/**
 * Writers of a sample run's body: column[row << shift] = value, a field of the current record, and
 * the constants the module is compiled with (by name: a column's row 0 address, a field's offset in
 * a sample, the ring's address, ...).
 */
export interface RowWriters {
  /** column[row << shift] = value (pushed by `value`); the constant named `column` is row 0's byte address. */
  store(column: RecordColumnName, shift: number, opcode: number, align: number, value: () => void): void;
  /** Pushes the u32 at the current record (local p) + the byte offset named `at` + `extra`. */
  field(at: string, extra: number): void;
  /** Pushes a load (`opcode`, `align`) at the current record + the byte offset named `at`. */
  load(at: string, opcode: number, align: number): void;
  /** The constant named `name`. */
  constant(name: string): number;
}

export function rowWriters(b: Body, constants: Readonly<Record<string, number>>): RowWriters {
  const constant = (name: string): number => {
    const k = constants[name];
    if (k === undefined) throw new Error(`a sample run compiled without its constant ${name}`);
    return k;
  };
  return {
    store(column, shift, opcode, align, pushValue) {
      b.get('row');
      if (shift > 0) b.i32(shift).op(OP.i32Shl);
      pushValue();
      b.mem(opcode, align, constant(column));
    },
    field: (at, extra) => b.get('p').mem(OP.i32Load, 2, constant(at) + extra),
    load: (at, opcode, align) => b.get('p').mem(opcode, align, constant(at)),
    constant,
  };
}

/**
 * The top of a sample run's loop (inside `block, loop`): leaves the block (br 1) unless n < max,
 * the record at src + o is a whole SAMPLE of at least sMin bytes and a multiple of 8, and (when sId
 * >= 0) its id is idLo/idHi. Sets p (its address), sm (its size and misc word) and size. The
 * decoder's module and the bench's walker share it, so both take the same records.
 */
export function emitSampleTests(b: Body, w: RowWriters): void {
  b.get('n').get('max').op(OP.i32GeS, OP.brIf, 1);
  b.get('o').i32(8).op(OP.i32Add).get('end').op(OP.i32GtS, OP.brIf, 1);
  b.get('o').i32(w.constant('src')).op(OP.i32Add).set('p');
  b.get('p').mem(OP.i32Load, 2, 4).set('sm');
  b.get('sm').i32(16).op(OP.i32ShrU).set('size');
  b.get('p').mem(OP.i32Load, 2).i32(RecordType.SAMPLE).op(OP.i32Ne, OP.brIf, 1);
  b.get('size').i32(w.constant('sMin')).op(OP.i32LtS, OP.brIf, 1);
  b.get('size').i32(7).op(OP.i32And, OP.brIf, 1);
  b.get('o').get('size').op(OP.i32Add).get('end').op(OP.i32GtS, OP.brIf, 1);
  const sId = w.constant('sId');
  if (sId < 0) return;
  b.i32(sId + 8)
    .get('size')
    .op(OP.i32GtS, OP.brIf, 1);
  w.field('sId', 0);
  b.get('idLo').op(OP.i32Ne, OP.brIf, 1);
  w.field('sId', 4);
  b.get('idHi').op(OP.i32Ne, OP.brIf, 1);
}

/** A sample row's columns but time (and ring, which the decoder fills after the run): kind, misc, event, offset, pid, tid, cpu, ip. */
export function emitSampleRowStores(b: Body, w: RowWriters): void {
  w.store('kind', 0, OP.i32Store8, 0, () => b.i32(RecordType.SAMPLE));
  w.store('misc', 1, OP.i32Store16, 1, () => b.get('sm'));
  w.store('event', 1, OP.i32Store16, 1, () => b.get('event'));
  w.store('offset', 2, OP.i32Store, 2, () => b.get('o'));
  w.store('pid', 2, OP.i32Store, 2, () => w.field('sPidTid', 0));
  w.store('tid', 2, OP.i32Store, 2, () => w.field('sPidTid', 4));
  w.store('cpu', 2, OP.i32Store, 2, () => w.field('sCpu', 0));
  w.store('ipLo', 2, OP.i32Store, 2, () => w.field('sIp', 0));
  w.store('ipHi', 2, OP.i32Store, 2, () => w.field('sIp', 4));
}

/** The bottom of a sample run's loop: o += size, row += step, n++, and back to its top. */
export function emitSampleAdvance(b: Body): void {
  b.get('o').get('size').op(OP.i32Add).set('o');
  b.get('row').get('step').op(OP.i32Add).set('row');
  b.get('n').i32(1).op(OP.i32Add).set('n');
  b.op(OP.br, 0, OP.end, OP.end);
}

function sampleRunBody(constants: SampleRunConstants): Body {
  const b = new Body(['job']);
  for (const field of JOB_I32) b.local(field, I32);
  for (const field of JOB_F64) b.local(field, F64);
  for (const scratch of ['n', 'p', 'sm', 'size', 'minO', 'maxO']) b.local(scratch, I32);
  for (const scratch of ['base', 't64', 'd64']) b.local(scratch, I64);
  b.local('rel', F64);

  for (const field of JOB_I32) b.get('job').mem(OP.i32Load, 2, i32At(field)).set(field);
  for (const field of JOB_F64) b.get('job').mem(OP.f64Load, 3, f64At(field)).set(field);
  b.get('baseHi').op(OP.i64ExtendI32U).op(OP.i64Const, 32, OP.i64Shl).get('baseLo').op(OP.i64ExtendI32U, OP.i64Or).set('base');
  // The record whose time became the smallest (largest) in this call, -1: none did.
  b.i32(-1).set('minO').i32(-1).set('maxO');
  const w = rowWriters(b, { ...constants });

  b.op(OP.block, OP.void, OP.loop, OP.void);
  emitSampleTests(b, w);
  // rel = time - base as an i64, then a double. The JavaScript loop's (hi - baseHi) * 2^32 + (lo -
  // baseLo) rounds the same exact difference once, so both give the same bits, unless the
  // difference does not fit an i64 (times 2^63 ns apart: damaged), which shows as its sign
  // disagreeing with the unsigned comparison. Such a record ends the run before anything of it is
  // written, and the JavaScript loop takes it.
  w.load('sTime', OP.i64Load, 3);
  b.set('t64');
  b.get('t64').get('base').op(OP.i64Sub).set('d64');
  b.get('t64').get('base').op(OP.i64GeU).get('d64').op(OP.i64Const, 0, OP.i64GeS, OP.i32Ne, OP.brIf, 1);
  b.get('d64').op(OP.f64ConvertI64S).set('rel');
  emitSampleRowStores(b, w);
  w.store('time', 3, OP.f64Store, 3, () => b.get('rel'));
  b.get('rel').get('minRel').op(OP.f64Lt, OP.if, OP.void).get('rel').set('minRel').get('o').set('minO').op(OP.end);
  b.get('rel').get('maxRel').op(OP.f64Gt, OP.if, OP.void).get('rel').set('maxRel').get('o').set('maxO').op(OP.end);
  emitSampleAdvance(b);
  // minAt / maxAt: the u32 index of the bounding time in the ring, as the JavaScript loop keeps it.
  for (const [o, at] of [
    ['minO', 'minAt'],
    ['maxO', 'maxAt'],
  ] as const) {
    b.get(o).i32(0).op(OP.i32GeS, OP.if, OP.void).get(o).i32(constants.sTime).op(OP.i32Add).i32(2).op(OP.i32ShrU).set(at).op(OP.end);
  }
  for (const out of ['o', 'row', 'minAt', 'maxAt'] as const) b.get('job').get(out).mem(OP.i32Store, 2, i32At(out));
  for (const out of JOB_F64) b.get('job').get(out).mem(OP.f64Store, 3, f64At(out));
  b.get('n');
  return b;
}

function sampleRunModule(memory: ImportedMemory, constants: SampleRunConstants): WebAssembly.Module {
  return compiledModule(`sample-run ${memory} ${Object.values(constants).join(' ')}`, () => oneFunctionModule('run', 1, sampleRunBody(constants), memory));
}

/** Byte offsets in a sample of the fields a run's rows take, and the smallest sample holding them all. */
export interface SampleRunLayout {
  readonly time: number;
  readonly pidTid: number;
  readonly cpu: number;
  readonly ip: number;
  readonly sampleMin: number;
}

/** Where a run starts, and what it leaves: byte offset, row, smallest and largest relative time with their u32 indexes. */
export interface SampleRunState {
  offset: number;
  row: number;
  minRel: number;
  maxRel: number;
  minAt: number;
  maxAt: number;
}

/**
 * The sample run over one memory, decoding one ring (at byte `ringAddress`) into one set of
 * columns, with its job record at `jobAddress`: a module instance per sample layout it is asked
 * to decode (the ring and the columns never change for an engine).
 */
export class SampleRunEngine {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  /** Each layout's compiled run, by its field offsets and id offset. */
  private readonly runs = new Map<string, (job: number) => number>();
  private lastLayout: SampleRunLayout | null = null;
  private lastIdOffset = -1;
  private lastRun: ((job: number) => number) | null = null;

  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly shared: boolean,
    private readonly jobAddress: number,
    private readonly ringAddress: number,
    private readonly columns: SampleRunColumns,
  ) {
    this.i32 = new Int32Array(memory.buffer, jobAddress, JOB_I32.length);
    this.f64 = new Float64Array(memory.buffer, jobAddress + F64_START, JOB_F64.length);
  }

  /**
   * decodeSampleRun's contract: decodes at most `maxCount` samples from byte state.offset of the
   * engine's ring into rows state.row, state.row + step, ... of its columns, and returns how many.
   * idLo/idHi must be a real id (u32 halves) when sampleIdOffset >= 0.
   */
  decode(
    end: number,
    maxCount: number,
    step: number,
    layout: SampleRunLayout,
    sampleIdOffset: number,
    idLo: number,
    idHi: number,
    event: number,
    baseHi: number,
    baseLo: number,
    state: SampleRunState,
  ): number {
    const run = this.runFor(layout, sampleIdOffset);
    const j = this.i32;
    j[I.o] = state.offset;
    j[I.end] = end;
    j[I.max] = maxCount;
    j[I.row] = state.row;
    j[I.step] = step;
    j[I.idLo] = idLo;
    j[I.idHi] = idHi;
    j[I.event] = event;
    j[I.minAt] = state.minAt;
    j[I.maxAt] = state.maxAt;
    j[I.baseHi] = baseHi;
    j[I.baseLo] = baseLo;
    const f = this.f64;
    f[F.minRel] = state.minRel;
    f[F.maxRel] = state.maxRel;
    const decoded = run(this.jobAddress);
    state.offset = j[I.o];
    state.row = j[I.row];
    state.minAt = j[I.minAt];
    state.maxAt = j[I.maxAt];
    state.minRel = f[F.minRel];
    state.maxRel = f[F.maxRel];
    return decoded;
  }

  private runFor(layout: SampleRunLayout, sampleIdOffset: number): (job: number) => number {
    // The layout of the last call first: a ring's runs are nearly always of one event, and the key's
    // string took 1-3 µs of a 1 MiB ring's 60 µs decode.
    const last = this.lastLayout;
    if (
      last &&
      this.lastRun &&
      last.time === layout.time &&
      last.pidTid === layout.pidTid &&
      last.cpu === layout.cpu &&
      last.ip === layout.ip &&
      last.sampleMin === layout.sampleMin &&
      this.lastIdOffset === sampleIdOffset
    )
      return this.lastRun;
    const run = this.compiledRun(layout, sampleIdOffset);
    this.lastLayout = layout;
    this.lastIdOffset = sampleIdOffset;
    this.lastRun = run;
    return run;
  }

  private compiledRun(layout: SampleRunLayout, sampleIdOffset: number): (job: number) => number {
    const key = `${layout.time} ${layout.pidTid} ${layout.cpu} ${layout.ip} ${layout.sampleMin} ${sampleIdOffset}`;
    let run = this.runs.get(key);
    if (!run) {
      const constants: SampleRunConstants = {
        ...this.columns,
        src: this.ringAddress,
        sTime: layout.time,
        sPidTid: layout.pidTid,
        sCpu: layout.cpu,
        sIp: layout.ip,
        sMin: layout.sampleMin,
        sId: sampleIdOffset,
      };
      const instance = new WebAssembly.Instance(sampleRunModule(this.shared ? 'shared' : 'plain', constants), { env: { memory: this.memory } });
      run = instance.exports.run as (job: number) => number;
      this.runs.set(key, run);
    }
    return run;
  }
}

/** Where row 0 of each column a sample run writes is in `set`'s buffer, as byte addresses. */
export function sampleRunColumns(set: ColumnSet): SampleRunColumns {
  const names = RECORD_COLUMN_NAMES.filter((name): name is SampleRunColumnName => name !== 'ring');
  return Object.fromEntries(names.map((name) => [name, set[name].byteOffset])) as SampleRunColumns;
}
