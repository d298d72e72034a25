// The job records the WebAssembly kernels (native/decode/kernels, AssemblyScript) read and write at
// their one parameter, as byte offsets: the one home of these layouts for both compilers. This file
// is compiled by tsc (the engines that fill the jobs) AND by AssemblyScript (the kernels that read
// them), so it holds nothing but numeric constants, which both languages read alike. A leaf that
// imports nothing: the snapshot memory (which reserves the jobs' bytes) and the engines build on it.

// The sample run (kernels/sample-run.ts). i32 fields, then f64 ones. The call writes back where it
// stopped (o, row, minAt, maxAt, minRel, maxRel). The fields from SAMPLE_SRC on change only with the
// sample layout and the room: the engine writes them when those change.
export const SAMPLE_O = 0;
export const SAMPLE_END = 4;
export const SAMPLE_MAX = 8;
export const SAMPLE_ROW = 12;
export const SAMPLE_STEP = 16;
export const SAMPLE_ID_LO = 20;
export const SAMPLE_ID_HI = 24;
export const SAMPLE_EVENT = 28;
/** The time base as one u64 (little endian: lo, then hi). */
export const SAMPLE_BASE_LO = 32;
export const SAMPLE_BASE_HI = 36;
export const SAMPLE_MIN_AT = 40;
export const SAMPLE_MAX_AT = 44;
export const SAMPLE_MIN_REL = 48;
export const SAMPLE_MAX_REL = 56;
/** Byte address of the ring's copy. */
export const SAMPLE_SRC = 64;
/** Byte offsets in a sample of its time, pid/tid, cpu, ip and id (-1: none), and the smallest sample holding them. */
export const SAMPLE_S_TIME = 68;
export const SAMPLE_S_PID_TID = 72;
export const SAMPLE_S_CPU = 76;
export const SAMPLE_S_IP = 80;
export const SAMPLE_S_MIN = 84;
export const SAMPLE_S_ID = 88;
// The run's columns, and the bytes its job takes (copy-room.ts and snapshot-memory.ts reserve them before each copy).
// row-writer job-columns columns=SAMPLE_COLUMNS at=92 bytes=SAMPLE_RUN_JOB_BYTES
// (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
/** Byte address of row 0 of each record column, in the schema's order (time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset): u32 each. */
export const SAMPLE_COLUMNS = 92;
/** Bytes the job takes: to the end of its column addresses, rounded up to a multiple of 8. */
export const SAMPLE_RUN_JOB_BYTES = 136;
// end row-writer

// The key run (kernels/key-run.ts): where the walk is (o, end), how many keys fit still (max), keys
// written so far (rows), the run's id and event position, the time base, what the walk keeps (u32
// indexes of the bounding times, whether the times are sorted so far, the smallest and largest
// relative time); the call writes back o, rows, minAt, maxAt, sorted, minRel, maxRel. From KEY_SRC
// on: the ring's and the key arrays' addresses and the sample layout.
export const KEY_O = 0;
export const KEY_END = 4;
export const KEY_MAX = 8;
export const KEY_ROWS = 12;
export const KEY_ID_LO = 16;
export const KEY_ID_HI = 20;
export const KEY_POSITION = 24;
export const KEY_SORTED = 28;
export const KEY_BASE_LO = 32;
export const KEY_BASE_HI = 36;
export const KEY_MIN_AT = 40;
export const KEY_MAX_AT = 44;
export const KEY_MIN_REL = 48;
export const KEY_MAX_REL = 56;
/** Byte address of the ring's copy. */
export const KEY_SRC = 64;
/** Byte addresses of entry 0 of the time (f64), offset (u32) and position (u16) arrays, and the entries each holds. */
export const KEY_TIMES = 68;
export const KEY_OFFSETS = 72;
export const KEY_POSITIONS = 76;
export const KEY_CAPACITY = 80;
/** Byte offsets in a sample of its time and id (-1: none), and the smallest sample holding them. */
export const KEY_S_TIME = 84;
export const KEY_S_MIN = 88;
export const KEY_S_ID = 92;
/** Bytes a key job takes (snapshot-memory.ts reserves them per thread). */
export const KEY_RUN_JOB_BYTES = 96;

// The merge scatter (kernels/merge-scatter.ts). Header: i32 ring count, the slice's first output
// row, records listed as others (written by the call), the byte address of the others list ((output
// row, ring, key) as three u32 each), failed (written by the call: 1 when a uniform ring's record was
// not one); then what the rows are written with: the sample's field offsets (pid/tid, cpu, ip, time;
// id -1: none), bytes back from a record's end to its trailer time (-1: none), the event index, and
// row 0's byte address of every output column
// (the sample run's job has them too; the run writes every column but ring, which the decoder fills).
export const MERGE_RINGS = 0;
export const MERGE_AT = 4;
export const MERGE_OTHERS = 8;
export const MERGE_LIST = 12;
export const MERGE_FAILED = 16;
export const MERGE_S_PID_TID = 20;
export const MERGE_S_CPU = 24;
export const MERGE_S_IP = 28;
export const MERGE_S_TIME = 32;
export const MERGE_S_ID = 36;
export const MERGE_OTHER_TIME_FROM_END = 40;
export const MERGE_EVENT = 44;
// row-writer job-columns columns=MERGE_COLUMNS at=48 bytes=MERGE_HEADER_BYTES
// (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)
/** Byte address of row 0 of each record column, in the schema's order (time, kind, misc, event, pid, tid, cpu, ipHi, ipLo, ring, offset): u32 each. */
export const MERGE_COLUMNS = 48;
/** Bytes the job takes: to the end of its column addresses, rounded up to a multiple of 8. */
export const MERGE_HEADER_BYTES = 96;
// end row-writer
/**
 * One ring's entry (by ring number), after the header: i32 kind, next (its first row of the
 * slice), stop, the byte address of its time 0 (f64, before the shift; uniform: of its oldest
 * record), of its offset 0 (u32; a hole's: where its row 0 goes, written by the call; uniform: the
 * stride), of its copy; f64 shift, f64 the merge key of row `next`, the byte address of its position
 * 0 (u16); uniform: the time base and the id (u64 each).
 */
export const ENTRY_KIND = 0;
export const ENTRY_NEXT = 4;
export const ENTRY_STOP = 8;
export const ENTRY_TIME = 12;
export const ENTRY_AUX = 16;
export const ENTRY_SRC = 20;
export const ENTRY_SHIFT = 24;
export const ENTRY_KEY = 32;
export const ENTRY_POSITION = 40;
export const ENTRY_BASE = 48;
export const ENTRY_ID = 56;
export const MERGE_ENTRY_BYTES = 64;
/** Bytes of one listed other record. */
export const OTHER_BYTES = 12;

/**
 * What an entry's ring is: nothing left to merge, records to decode (keyed), keyed records among
 * which some are not plain samples (their position is OTHER_POSITION: the call lists where each goes
 * and the caller decodes it), rows the caller places (hole), or records read in place (uniform).
 */
export const ENTRY_NONE = 0;
export const ENTRY_KEYED = 1;
export const ENTRY_HOLE = 2;
export const ENTRY_KEYED_WITH_OTHERS = 3;
export const ENTRY_UNIFORM = 4;
/** A key's position when its record is not a plain sample (scatter.ts OTHER_RECORD). */
export const OTHER_POSITION = 0xffff;
/** PERF_RECORD_SAMPLE (abi/uapi.ts RecordType.SAMPLE), which the kernels test every record for. */
export const RECORD_SAMPLE = 9;
