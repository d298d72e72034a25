// The kernel's 64-bit values (addresses, times, periods) as JavaScript numbers where a number holds them exactly, one
// home for that bound: a Map or an encoder finds and writes numbers far faster than bigints, and every user-space
// address and most periods are below 2^53.

/** A u64 whose high u32 half is below this is below 2^53, exact as a number (high * 2^32 + low). */
export const EXACT_HIGH_HALF_LIMIT = 0x200000;

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** `value` as a number where that is exact (at most 2^53 - 1), else the bigint itself. */
export function numberIfExact(value: bigint): number | bigint {
  return value <= MAX_EXACT ? Number(value) : value;
}
