// keyRing's fast loop (scatter.ts) as WebAssembly, for rings whose copy and key arrays live in one
// WebAssembly memory (snapshot-memory.ts): a run of timed samples of one event, each keyed by its
// time relative to the ring's base, its byte offset and its event position, written from the top of
// the key arrays down (the ring is walked newest first, the keys are read oldest first). The same
// tests per record as the decoder's sample run (emitSampleTests), the same time (the exact 64-bit
// difference rounded once, which is what the JavaScript loop's (hi - baseHi) * 2^32 + (lo - baseLo)
// gives), the same bookkeeping of the smallest and largest time and of whether the times are sorted.

import { Body, F64, I32, I64, OP, compiledModule, oneFunctionModule, type ImportedMemory } from './encoder';
import { emitSampleTests, rowWriters } from './sample-run';
import type { KeyScratch } from '../key-scratch';
import {
  KEY_RUN_F64_START as F64_START,
  KEY_RUN_JOB_F64 as JOB_F64,
  KEY_RUN_JOB_I32 as JOB_I32,
  type KeyRunJobF64 as JobF64,
  type KeyRunJobI32 as JobI32,
} from './job-layout';

const I = Object.fromEntries(JOB_I32.map((field, i) => [field, i])) as { readonly [K in JobI32]: number };
const F = Object.fromEntries(JOB_F64.map((field, i) => [field, i])) as { readonly [K in JobF64]: number };

/** Where a ring and its key arrays are in the memory, and how many keys the arrays hold. */
export interface KeyArrays {
  /** Byte address of the ring's copy. */
  readonly ringAddress: number;
  /** Byte addresses of entry 0 of the time (f64), offset (u32) and position (u16) arrays. */
  readonly time: number;
  readonly offset: number;
  readonly position: number;
  /** Entries each array holds. */
  readonly capacity: number;
}

/** Byte offsets in a sample of its time and id (-1: none), and the smallest sample holding them. */
export interface KeyRunLayout {
  readonly sTime: number;
  readonly sMin: number;
  readonly sId: number;
}

function keyRunBody(arrays: KeyArrays, layout: KeyRunLayout): Body {
  const b = new Body(['job']);
  for (const field of JOB_I32) b.local(field, I32);
  for (const field of JOB_F64) b.local(field, F64);
  for (const scratch of ['n', 'p', 'sm', 'size', 'minO', 'maxO', 'at']) b.local(scratch, I32);
  for (const scratch of ['base', 't64', 'd64']) b.local(scratch, I64);
  b.local('rel', F64);
  JOB_I32.forEach((field, i) =>
    b
      .get('job')
      .mem(OP.i32Load, 2, i * 4)
      .set(field),
  );
  JOB_F64.forEach((field, i) =>
    b
      .get('job')
      .mem(OP.f64Load, 3, F64_START + i * 8)
      .set(field),
  );
  b.get('baseHi').op(OP.i64ExtendI32U).op(OP.i64Const, 32, OP.i64Shl).get('baseLo').op(OP.i64ExtendI32U, OP.i64Or).set('base');
  b.i32(-1).set('minO').i32(-1).set('maxO');
  const w = rowWriters(b, { src: arrays.ringAddress, sTime: layout.sTime, sMin: layout.sMin, sId: layout.sId });

  b.op(OP.block, OP.void, OP.loop, OP.void);
  emitSampleTests(b, w);
  // The time as the sample run takes it: a difference past 64 bits (damaged) ends the run before
  // anything of the record is written, and the JavaScript loop takes it.
  w.load('sTime', OP.i64Load, 3);
  b.set('t64');
  b.get('t64').get('base').op(OP.i64Sub).set('d64');
  b.get('t64').get('base').op(OP.i64GeU).get('d64').op(OP.i64Const, 0, OP.i64GeS, OP.i32Ne, OP.brIf, 1);
  b.get('d64').op(OP.f64ConvertI64S).set('rel');
  // Walked newest first: usually each record is older than all before it; only when it is not can
  // it be the largest, and then the times are not sorted oldest first.
  b.get('rel').get('minRel').op(OP.f64Lt, OP.if, OP.void);
  b.get('rel').set('minRel').get('o').set('minO');
  b.op(OP.else);
  b.get('rel').get('minRel').op(OP.f64Ne, OP.if, OP.void);
  b.i32(0).set('sorted');
  b.get('rel').get('maxRel').op(OP.f64Gt, OP.if, OP.void).get('rel').set('maxRel').get('o').set('maxO').op(OP.end);
  b.op(OP.end, OP.end);
  b.get('rows').i32(1).op(OP.i32Add).set('rows');
  b.i32(arrays.capacity).get('rows').op(OP.i32Sub).set('at');
  b.get('at').i32(3).op(OP.i32Shl).get('rel').mem(OP.f64Store, 3, arrays.time);
  b.get('at').i32(2).op(OP.i32Shl).get('o').mem(OP.i32Store, 2, arrays.offset);
  b.get('at').i32(1).op(OP.i32Shl).get('position').mem(OP.i32Store16, 1, arrays.position);
  b.get('o').get('size').op(OP.i32Add).set('o');
  b.get('n').i32(1).op(OP.i32Add).set('n');
  b.op(OP.br, 0, OP.end, OP.end);
  for (const [o, at] of [
    ['minO', 'minAt'],
    ['maxO', 'maxAt'],
  ] as const) {
    b.get(o).i32(0).op(OP.i32GeS, OP.if, OP.void).get(o).i32(layout.sTime).op(OP.i32Add).i32(2).op(OP.i32ShrU).set(at).op(OP.end);
  }
  for (const out of ['o', 'rows', 'minAt', 'maxAt', 'sorted'] as const)
    b.get('job')
      .get(out)
      .mem(OP.i32Store, 2, I[out] * 4);
  for (const out of JOB_F64)
    b.get('job')
      .get(out)
      .mem(OP.f64Store, 3, F64_START + F[out] * 8);
  b.get('n');
  return b;
}

/** Where a key run starts and what it leaves (the names keyRing's fast loop keeps them under). */
export interface KeyRunState {
  o: number;
  rows: number;
  minRel: number;
  maxRel: number;
  minAt: number;
  maxAt: number;
  sorted: boolean;
}

/** The key run of one ring into its key arrays, with its job record at `jobAddress`: an instance per sample layout. */
export class KeyRunEngine {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly runs = new Map<string, (job: number) => number>();

  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly kind: ImportedMemory,
    private readonly jobAddress: number,
    readonly arrays: KeyArrays,
  ) {
    this.i32 = new Int32Array(memory.buffer, jobAddress, JOB_I32.length);
    this.f64 = new Float64Array(memory.buffer, jobAddress + F64_START, JOB_F64.length);
  }

  /**
   * Keys at most `max` timed samples of one event (id idLo/idHi at layout.sId when >= 0, event
   * position `position`) from byte state.o up to `end`, the time base known; returns how many.
   */
  key(
    end: number,
    max: number,
    layout: KeyRunLayout,
    idLo: number,
    idHi: number,
    position: number,
    baseHi: number,
    baseLo: number,
    state: KeyRunState,
  ): number {
    const run = this.runFor(layout);
    const j = this.i32;
    j[I.o] = state.o;
    j[I.end] = end;
    j[I.max] = max;
    j[I.rows] = state.rows;
    j[I.idLo] = idLo;
    j[I.idHi] = idHi;
    j[I.position] = position;
    j[I.baseHi] = baseHi;
    j[I.baseLo] = baseLo;
    j[I.minAt] = state.minAt;
    j[I.maxAt] = state.maxAt;
    j[I.sorted] = state.sorted ? 1 : 0;
    this.f64[F.minRel] = state.minRel;
    this.f64[F.maxRel] = state.maxRel;
    const keyed = run(this.jobAddress);
    state.o = j[I.o];
    state.rows = j[I.rows];
    state.minAt = j[I.minAt];
    state.maxAt = j[I.maxAt];
    state.sorted = j[I.sorted] !== 0;
    state.minRel = this.f64[F.minRel];
    state.maxRel = this.f64[F.maxRel];
    return keyed;
  }

  private runFor(layout: KeyRunLayout): (job: number) => number {
    const key = `${layout.sTime} ${layout.sMin} ${layout.sId}`;
    let run = this.runs.get(key);
    if (!run) {
      const a = this.arrays;
      const module = compiledModule(`key-run ${this.kind} ${a.ringAddress} ${a.time} ${a.offset} ${a.position} ${a.capacity} ${key}`, () =>
        oneFunctionModule('run', 1, keyRunBody(a, layout), this.kind),
      );
      run = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports.run as (job: number) => number;
      this.runs.set(key, run);
    }
    return run;
  }
}

/** A ring's key arrays in a memory as a worker is told of them: the memory, its kind, this thread's job record and the arrays. */
export interface KeyArraysInMemory {
  readonly memory: WebAssembly.Memory;
  readonly kind: ImportedMemory;
  readonly jobAddress: number;
  readonly arrays: KeyArrays;
}

/** The views keyRing fills for key arrays at `arrays` in `buffer`. */
export function keyArrayViews(buffer: ArrayBufferLike, arrays: KeyArrays): KeyScratch {
  return {
    time: new Float64Array(buffer, arrays.time, arrays.capacity),
    offset: new Uint32Array(buffer, arrays.offset, arrays.capacity),
    position: new Uint16Array(buffer, arrays.position, arrays.capacity),
  };
}

/** The engine and the views keyRing fills for `place`, on this thread. */
export function keyRunIn(place: KeyArraysInMemory): { engine: KeyRunEngine; scratch: KeyScratch } {
  return { engine: new KeyRunEngine(place.memory, place.kind, place.jobAddress, place.arrays), scratch: keyArrayViews(place.memory.buffer, place.arrays) };
}
