// Reading another process's memory through /proc/PID/mem, which the kernel allows where ptrace
// would be (the same user without a stricter yama scope, or CAP_SYS_PTRACE). What it returns is the
// memory as it is now, not at an earlier moment: callers say so where that matters.

import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Up to `length` bytes at `address` of process `pid`: fewer where readable memory ends, undefined
 * when nothing there can be read (the process is gone, the address unmapped, or access refused).
 */
export function readProcessMemory(pid: number, address: bigint, length: number): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/mem`, 'r');
  } catch {
    // Gone, or not this user's to read (ptrace access): the caller says <not captured> for what it wanted.
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(length);
    let got = 0;
    // Read page by page: a read that crosses into an unmapped page fails whole, the bytes before it are still good.
    while (got < length) {
      const here = address + BigInt(got);
      const toPageEnd = 4096 - Number(here & 4095n);
      let n: number;
      try {
        n = readSync(fd, buffer, got, Math.min(length - got, toPageEnd), here);
      } catch {
        // An unmapped page (EIO): what was read before it is returned, the rest is not there.
        break;
      }
      if (n <= 0) break;
      got += n;
    }
    return got === 0 ? undefined : new Uint8Array(buffer.buffer, buffer.byteOffset, got);
  } finally {
    closeSync(fd);
  }
}
