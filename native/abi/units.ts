// The units a ring is measured in, one home each: a perf ring's data area is a power of two pages (perf_mmap refuses
// anything else), and byte counts are shown to people in binary units (the CLI, the editor, the page alike).

/** True for 1, 2, 4, 8, ...: a size perf_mmap accepts for a ring's data area (in pages or bytes). */
export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}

/** The smallest power of two that is at least `n` (1 for anything up to 1). */
export function powerOfTwoAtLeast(n: number): number {
  return n <= 1 ? 1 : 2 ** Math.ceil(Math.log2(n));
}

/** A byte count as people read it: 512 B, 1.5 KiB, 64 KiB, 1.0 MiB (one decimal below 10 of a unit). */
export function formatBytes(bytes: bigint | number): string {
  let v = Number(bytes);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}
