// The engine of the sample run (kernels/sample-run.ts: decodeSampleRun of decode-ring.ts as
// WebAssembly) over one copy's room (copy-room.ts): it fills the run's job record and reads back
// where the run stopped.

import * as J from './job-layout';
import { kernelsFor, writeColumnAddresses, type ColumnAddresses, type Kernels } from './kernels';

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
 * columns, with its job record at `jobAddress`.
 */
export class SampleRunEngine {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly kernels: Kernels;
  /** The layout whose field offsets the job holds (a ring's runs are nearly always of one event). */
  private lastLayout: SampleRunLayout | null = null;
  private lastIdOffset = -2;

  constructor(
    memory: WebAssembly.Memory,
    shared: boolean,
    private readonly jobAddress: number,
    ringAddress: number,
    columns: ColumnAddresses,
  ) {
    this.i32 = new Int32Array(memory.buffer, jobAddress, J.SAMPLE_RUN_JOB_BYTES / 4);
    this.f64 = new Float64Array(memory.buffer, jobAddress, J.SAMPLE_RUN_JOB_BYTES / 8);
    this.kernels = kernelsFor(memory, shared ? 'shared' : 'plain');
    this.i32[J.SAMPLE_SRC / 4] = ringAddress;
    // Every column's address, ring's too: the run writes all but ring (kernels/sample-run.ts), which the decoder fills.
    writeColumnAddresses(this.i32, J.SAMPLE_COLUMNS, columns);
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
    const j = this.i32;
    if (layout !== this.lastLayout || sampleIdOffset !== this.lastIdOffset) {
      j[J.SAMPLE_S_TIME / 4] = layout.time;
      j[J.SAMPLE_S_PID_TID / 4] = layout.pidTid;
      j[J.SAMPLE_S_CPU / 4] = layout.cpu;
      j[J.SAMPLE_S_IP / 4] = layout.ip;
      j[J.SAMPLE_S_MIN / 4] = layout.sampleMin;
      j[J.SAMPLE_S_ID / 4] = sampleIdOffset;
      this.lastLayout = layout;
      this.lastIdOffset = sampleIdOffset;
    }
    j[J.SAMPLE_O / 4] = state.offset;
    j[J.SAMPLE_END / 4] = end;
    j[J.SAMPLE_MAX / 4] = maxCount;
    j[J.SAMPLE_ROW / 4] = state.row;
    j[J.SAMPLE_STEP / 4] = step;
    j[J.SAMPLE_ID_LO / 4] = idLo;
    j[J.SAMPLE_ID_HI / 4] = idHi;
    j[J.SAMPLE_EVENT / 4] = event;
    j[J.SAMPLE_MIN_AT / 4] = state.minAt;
    j[J.SAMPLE_MAX_AT / 4] = state.maxAt;
    j[J.SAMPLE_BASE_HI / 4] = baseHi;
    j[J.SAMPLE_BASE_LO / 4] = baseLo;
    const f = this.f64;
    f[J.SAMPLE_MIN_REL / 8] = state.minRel;
    f[J.SAMPLE_MAX_REL / 8] = state.maxRel;
    const decoded = this.kernels.sampleRun(this.jobAddress);
    state.offset = j[J.SAMPLE_O / 4];
    state.row = j[J.SAMPLE_ROW / 4];
    state.minAt = j[J.SAMPLE_MIN_AT / 4];
    state.maxAt = j[J.SAMPLE_MAX_AT / 4];
    state.minRel = f[J.SAMPLE_MIN_REL / 8];
    state.maxRel = f[J.SAMPLE_MAX_REL / 8];
    return decoded;
  }
}
