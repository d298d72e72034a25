// The engine of the key run (kernels/key-run.ts: keyRing's fast loop of scatter.ts as WebAssembly)
// for rings whose copy and key arrays live in one WebAssembly memory (snapshot-memory.ts): it fills
// the run's job record and reads back where the run stopped.

import type { KeyScratch } from '../key-scratch';
import * as J from './job-layout';
import { kernelsFor, type Kernels, type MemoryKind } from './kernels';

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

/** The key run of one ring into its key arrays, with its job record at `jobAddress`. */
export class KeyRunEngine {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly kernels: Kernels;

  constructor(
    memory: WebAssembly.Memory,
    kind: MemoryKind,
    private readonly jobAddress: number,
    readonly arrays: KeyArrays,
  ) {
    this.i32 = new Int32Array(memory.buffer, jobAddress, J.KEY_RUN_JOB_BYTES / 4);
    this.f64 = new Float64Array(memory.buffer, jobAddress, J.KEY_RUN_JOB_BYTES / 8);
    this.kernels = kernelsFor(memory, kind);
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
    const j = this.i32;
    // A thread's key job serves every ring it keys in the memory: the ring's arrays are written each call.
    const a = this.arrays;
    j[J.KEY_SRC / 4] = a.ringAddress;
    j[J.KEY_TIMES / 4] = a.time;
    j[J.KEY_OFFSETS / 4] = a.offset;
    j[J.KEY_POSITIONS / 4] = a.position;
    j[J.KEY_CAPACITY / 4] = a.capacity;
    j[J.KEY_S_TIME / 4] = layout.sTime;
    j[J.KEY_S_MIN / 4] = layout.sMin;
    j[J.KEY_S_ID / 4] = layout.sId;
    j[J.KEY_O / 4] = state.o;
    j[J.KEY_END / 4] = end;
    j[J.KEY_MAX / 4] = max;
    j[J.KEY_ROWS / 4] = state.rows;
    j[J.KEY_ID_LO / 4] = idLo;
    j[J.KEY_ID_HI / 4] = idHi;
    j[J.KEY_POSITION / 4] = position;
    j[J.KEY_BASE_HI / 4] = baseHi;
    j[J.KEY_BASE_LO / 4] = baseLo;
    j[J.KEY_MIN_AT / 4] = state.minAt;
    j[J.KEY_MAX_AT / 4] = state.maxAt;
    j[J.KEY_SORTED / 4] = state.sorted ? 1 : 0;
    this.f64[J.KEY_MIN_REL / 8] = state.minRel;
    this.f64[J.KEY_MAX_REL / 8] = state.maxRel;
    const keyed = this.kernels.keyRun(this.jobAddress);
    state.o = j[J.KEY_O / 4];
    state.rows = j[J.KEY_ROWS / 4];
    state.minAt = j[J.KEY_MIN_AT / 4];
    state.maxAt = j[J.KEY_MAX_AT / 4];
    state.sorted = j[J.KEY_SORTED / 4] !== 0;
    state.minRel = this.f64[J.KEY_MIN_REL / 8];
    state.maxRel = this.f64[J.KEY_MAX_REL / 8];
    return keyed;
  }
}

/** A ring's key arrays in a memory as a worker is told of them: the memory, its kind, this thread's job record and the arrays. */
export interface KeyArraysInMemory {
  readonly memory: WebAssembly.Memory;
  readonly kind: MemoryKind;
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
