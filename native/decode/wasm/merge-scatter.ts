// The engine of one slice of the scatter merge (kernels/merge-scatter.ts: MergeCursor's runs and
// scatterFastRuns' rows of scatter.ts as WebAssembly, with rings read in place) for a snapshot whose
// copies, keys and output columns live in one snapshot memory: it fills the slice's job record (the
// header: the output columns and the sample layout; an entry per ring) and calls the kernel.

import { uniformRecordTime } from '../uniform';
import * as J from './job-layout';
import { ENTRY_NONE, ENTRY_UNIFORM, MERGE_ENTRY_BYTES, MERGE_HEADER_BYTES } from './job-layout';
import { kernelsFor, writeColumnAddresses, type ColumnAddresses, type Kernels, type MemoryKind } from './kernels';
import { mergeScatterJobBytes } from './snapshot-memory';

export { ENTRY_HOLE, ENTRY_KEYED, ENTRY_KEYED_WITH_OTHERS, ENTRY_NONE, ENTRY_UNIFORM } from './job-layout';

/** One ring of a slice as the caller describes it. */
export interface MergeScatterEntry {
  readonly kind: typeof J.ENTRY_NONE | typeof J.ENTRY_KEYED | typeof J.ENTRY_HOLE | typeof J.ENTRY_KEYED_WITH_OTHERS | typeof J.ENTRY_UNIFORM;
  readonly from: number;
  readonly to: number;
  /** Byte address of the time of row 0 (the ring's first key, or a hole's first copied time); uniform: of the oldest record. */
  readonly time: number;
  /** Keyed: byte address of the offset of row 0; hole: of where row 0 goes; uniform: the stride. */
  readonly aux: number;
  /** Keyed: byte address of the ring's copy. */
  readonly src: number;
  /** Keyed with others: byte address of the position of row 0. */
  readonly position: number;
  readonly shift: number;
  /** Uniform: the time base and the records' id, as u32 halves (0 when the records carry none). */
  readonly baseHi: number;
  readonly baseLo: number;
  readonly idHi: number;
  readonly idLo: number;
}

/**
 * What every slice of one merge writes with: the output columns (row 0's byte address), the
 * sample's field offsets (the time and id: as uniform rings read them; id -1: none) and the event index.
 */
export interface MergeScatterConstants {
  readonly columns: ColumnAddresses;
  readonly pidTid: number;
  readonly cpu: number;
  readonly ip: number;
  readonly time: number;
  readonly id: number;
  readonly otherTimeFromEnd: number;
  readonly event: number;
}

/** The merge scatter of one memory and output layout, as seen from one thread: the kernels' instance, and a job record per call. */
export class MergeScatterEngine {
  private readonly kernels: Kernels;

  constructor(
    private readonly memory: WebAssembly.Memory,
    kind: MemoryKind,
    private readonly constants: MergeScatterConstants,
  ) {
    this.kernels = kernelsFor(memory, kind);
  }

  /**
   * Writes the slice whose rings are `entries` (by ring number) from output row `at` on, with the
   * job record at `jobAddress` (mergeScatterJobBytes(entries.length) bytes) and the others list at
   * `listAddress`; returns the rows it placed (written, or for holes and others, located), how
   * many other records it listed, and whether a uniform ring's record was not one (then the rows
   * are not all written).
   */
  scatter(jobAddress: number, at: number, entries: readonly MergeScatterEntry[], listAddress: number): { rows: number; others: number; failed: boolean } {
    const buffer = this.memory.buffer;
    const i32 = new Int32Array(buffer, jobAddress, mergeScatterJobBytes(entries.length) / 4);
    const f64 = new Float64Array(buffer, jobAddress, mergeScatterJobBytes(entries.length) / 8);
    const k = this.constants;
    i32[J.MERGE_RINGS / 4] = entries.length;
    i32[J.MERGE_AT / 4] = at;
    i32[J.MERGE_LIST / 4] = listAddress;
    i32[J.MERGE_S_PID_TID / 4] = k.pidTid;
    i32[J.MERGE_S_CPU / 4] = k.cpu;
    i32[J.MERGE_S_IP / 4] = k.ip;
    i32[J.MERGE_S_TIME / 4] = k.time;
    i32[J.MERGE_S_ID / 4] = k.id;
    i32[J.MERGE_OTHER_TIME_FROM_END / 4] = k.otherTimeFromEnd;
    i32[J.MERGE_EVENT / 4] = k.event;
    writeColumnAddresses(i32, J.MERGE_COLUMNS, k.columns);
    const f64View = new Float64Array(buffer);
    const u32View = new Uint32Array(buffer);
    // A uniform record's time relative to its ring's base, as the call reads it.
    const { time: sampleTime, otherTimeFromEnd } = k;
    const uniformTime = (entry: MergeScatterEntry, row: number): number =>
      uniformRecordTime(u32View, entry.time - row * entry.aux, entry.aux, sampleTime, otherTimeFromEnd, entry.baseHi, entry.baseLo);
    let failed = false;
    entries.forEach((entry, r) => {
      const base = (MERGE_HEADER_BYTES + r * MERGE_ENTRY_BYTES) / 4;
      const holds = entry.kind !== ENTRY_NONE && entry.from < entry.to;
      i32[base + J.ENTRY_KIND / 4] = holds ? entry.kind : ENTRY_NONE;
      i32[base + J.ENTRY_NEXT / 4] = holds ? entry.from : 0;
      i32[base + J.ENTRY_STOP / 4] = holds ? entry.to : 0;
      i32[base + J.ENTRY_TIME / 4] = entry.time;
      i32[base + J.ENTRY_AUX / 4] = entry.aux;
      i32[base + J.ENTRY_SRC / 4] = entry.src;
      i32[base + J.ENTRY_POSITION / 4] = entry.position;
      i32[base + J.ENTRY_BASE / 4] = entry.baseLo;
      i32[base + J.ENTRY_BASE / 4 + 1] = entry.baseHi;
      i32[base + J.ENTRY_ID / 4] = entry.idLo;
      i32[base + J.ENTRY_ID / 4 + 1] = entry.idHi;
      f64[(MERGE_HEADER_BYTES + r * MERGE_ENTRY_BYTES + J.ENTRY_SHIFT) / 8] = entry.shift;
      // MergeCursor's first key of a ring in a slice: its time there, or -Infinity when it has none.
      let first = -Infinity;
      if (holds && entry.kind === ENTRY_UNIFORM) {
        // The slice's first record of a uniform ring: no newer than the newest, no older than the
        // record before it (the slice before checked the rest of that ring up to there).
        const time = uniformTime(entry, entry.from);
        if (!(time <= 0) || (entry.from > 0 && uniformTime(entry, entry.from - 1) > time)) failed = true;
        first = time + entry.shift;
      } else if (holds) {
        first = f64View[(entry.time + entry.from * 8) / 8] + entry.shift;
      }
      f64[(MERGE_HEADER_BYTES + r * MERGE_ENTRY_BYTES + J.ENTRY_KEY) / 8] = first === first ? first : -Infinity;
    });
    if (failed) return { rows: 0, others: 0, failed };
    const rows = this.kernels.mergeScatter(jobAddress);
    return { rows, others: i32[J.MERGE_OTHERS / 4], failed: i32[J.MERGE_FAILED / 4] !== 0 };
  }
}
