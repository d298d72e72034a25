// The job records the WebAssembly kernels read and write at their one parameter, and the other
// byte layouts they share with the memory that holds them: a leaf that imports nothing, so the
// snapshot memory (which reserves the jobs' bytes) and the kernels (which read them) both build on
// it without importing each other.

/**
 * The job record a call reads at its one parameter (a byte address): i32 fields first (byte
 * offsets, row numbers, the id and event of the run, the time base's u32 halves), then f64 ones.
 * The call writes back where it stopped: o, row, minAt, maxAt, minRel, maxRel. What never changes
 * for an engine and a sample layout (the ring's and the columns' addresses, the fields' offsets in a
 * sample) is not in the job: the module is compiled with those as constants (SampleRunConstants).
 */
export const SAMPLE_RUN_JOB_I32 = ['o', 'end', 'max', 'row', 'step', 'idLo', 'idHi', 'event', 'baseHi', 'baseLo', 'minAt', 'maxAt'] as const;
export const SAMPLE_RUN_JOB_F64 = ['minRel', 'maxRel'] as const;
export type SampleRunJobI32 = (typeof SAMPLE_RUN_JOB_I32)[number];
export type SampleRunJobF64 = (typeof SAMPLE_RUN_JOB_F64)[number];
export const SAMPLE_RUN_F64_START = Math.ceil((SAMPLE_RUN_JOB_I32.length * 4) / 8) * 8;
/** Bytes a job record takes (copy-room.ts reserves them before the copy). */
export const SAMPLE_RUN_JOB_BYTES = SAMPLE_RUN_F64_START + SAMPLE_RUN_JOB_F64.length * 8;

/**
 * The job a call reads at its one parameter: where the walk is (o, end), how many keys fit still
 * (max), keys written so far (rows), the run's id and event position, the time base's u32 halves,
 * and what the walk keeps (u32 indexes of the bounding times, whether the times are sorted so far,
 * the smallest and largest relative time). The call writes back o, rows, minAt, maxAt, sorted,
 * minRel, maxRel.
 */
export const KEY_RUN_JOB_I32 = ['o', 'end', 'max', 'rows', 'idLo', 'idHi', 'position', 'baseHi', 'baseLo', 'minAt', 'maxAt', 'sorted'] as const;
export const KEY_RUN_JOB_F64 = ['minRel', 'maxRel'] as const;
export type KeyRunJobI32 = (typeof KEY_RUN_JOB_I32)[number];
export type KeyRunJobF64 = (typeof KEY_RUN_JOB_F64)[number];
export const KEY_RUN_F64_START = Math.ceil((KEY_RUN_JOB_I32.length * 4) / 8) * 8;
/** Bytes a key job takes (snapshot-memory.ts reserves them per thread). */
export const KEY_RUN_JOB_BYTES = KEY_RUN_F64_START + KEY_RUN_JOB_F64.length * 8;

/**
 * Job header: i32 ring count, i32 the slice's first output row, i32 records listed as others
 * (written by the call), i32 the byte address of the others list: (output row, ring, key) as
 * three u32 each; i32 failed (written by the call: 1 when a uniform ring's record was not one).
 */
export const MERGE_SCATTER_HEADER = { rings: 0, at: 4, others: 8, list: 12, failed: 16 } as const;
export const MERGE_SCATTER_HEADER_BYTES = 24;
/**
 * One ring's entry (by ring number): i32 kind, next (its first row of the slice), stop, the byte
 * address of its time 0 (f64, before the shift; uniform: of its oldest record), of its offset 0
 * (u32; a hole's: where its row 0 goes, written by the call; uniform: the stride), of its copy;
 * f64 shift, f64 the merge key of row `next`, the byte address of its position 0 (u16); uniform:
 * the time base and the id (u64 each).
 */
export const MERGE_SCATTER_ENTRY = { kind: 0, next: 4, stop: 8, time: 12, aux: 16, src: 20, shift: 24, key: 32, position: 40, base: 48, id: 56 } as const;
export const MERGE_SCATTER_ENTRY_BYTES = 64;
/** Bytes of one listed other record. */
export const OTHER_BYTES = 12;

/** Bytes a job of `rings` entries takes. */
export function mergeScatterJobBytes(rings: number): number {
  return MERGE_SCATTER_HEADER_BYTES + rings * MERGE_SCATTER_ENTRY_BYTES;
}
