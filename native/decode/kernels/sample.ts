// What the sample run and the key run share: the recorder's layout, and the time's test. Both take
// the same records: a whole SAMPLE of at least sMin bytes and a multiple of 8, and (sId >= 0) of the
// run's id. The tests are written out in each loop, one branch each, in the same order: as a helper
// returning a value (inlined as a block with a result, then tested again) or as a chain of ||
// (folded by Binaryen into one select that loads every field first), the sample run ran 5-20% slower.

/** Sample field offsets of every Ringside recorder's layout (IDENTIFIER|IP|TID|TIME|CPU|...): the kernels' constant-offset copies. */
export const RECORDER_S_ID: i32 = 8;
export const RECORDER_S_IP: u32 = 16;
export const RECORDER_S_PID_TID: u32 = 24;
export const RECORDER_S_TIME: u32 = 32;
export const RECORDER_S_CPU: u32 = 40;
export const RECORDER_S_MIN: u32 = 56;

/**
 * True when the u64 time t less `base` fits an i64, so that <i64>(t - base) is the exact difference;
 * false for times 2^63 ns apart (damaged), which the difference's sign disagreeing with the unsigned
 * comparison shows. The run then ends before the record, and the JavaScript loop (which rounds such
 * a difference its own way) takes it.
 */
@inline
export function differenceFits(t: u64, base: u64): bool {
  return t >= base == <i64>(t - base) >= 0;
}
