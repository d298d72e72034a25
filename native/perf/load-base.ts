// Where a launched or attached program's executable is loaded, checked against where its symbols
// were placed in advance: from /proc/PID/maps while it runs, from the side-band's MMAP2 records
// once it has exited.

import { realpathSync } from 'node:fs';
import type { RingCopy } from '../abi/snapshot';
import { RecordType } from '../abi/uapi';
import { readMaps } from './procfs';
import type { ProcessMapping } from './sideband-types';

export class LoadBaseMismatchError extends Error {
  constructor(
    message: string,
    readonly pid: number,
    readonly exePath: string,
    readonly expected: bigint,
    readonly actual: bigint | null,
  ) {
    super(message);
    this.name = 'LoadBaseMismatchError';
  }
}

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    // a path that no longer resolves (deleted or unreachable): compare it as written
    return file;
  }
}

export function checkBase(pid: number, exePath: string, expectedBase: bigint, actual: bigint, source: string): void {
  if (actual !== expectedBase) {
    throw new LoadBaseMismatchError(
      `${exePath} is loaded at 0x${actual.toString(16)} in process ${pid} (${source}), ` +
        `not at the expected 0x${expectedBase.toString(16)}: ` +
        'address-space randomisation was not disabled (or the binary changed), so breakpoints on its symbols point elsewhere',
      pid,
      exePath,
      expectedBase,
      actual,
    );
  }
}

/**
 * Checks that `exePath` is mapped at `expectedBase` (its file-offset-0 mapping) in process `pid`.
 * Throws LoadBaseMismatchError with both addresses when it is not (e.g. ASLR was not disabled),
 * or when the process is gone and nothing can be checked.
 */
export function verifyLoadBase(pid: number, exePath: string, expectedBase: bigint): void {
  const wanted = realPath(exePath);
  let maps: ProcessMapping[];
  try {
    maps = readMaps(pid);
  } catch {
    // the process exited (or is a zombie): it has no maps left, handled below
    maps = [];
  }
  // A process that exited (or a zombie) has no maps left to check.
  if (maps.length === 0) {
    const message = `cannot verify the load address of ${exePath}: process ${pid} has exited`;
    throw new LoadBaseMismatchError(message, pid, exePath, expectedBase, null);
  }
  const mapping = maps.find((m) => (m.path === wanted || m.path === exePath) && m.pgoff === 0n);
  if (!mapping) {
    const message = `${exePath} is not mapped in process ${pid}; symbol addresses cannot be trusted`;
    throw new LoadBaseMismatchError(message, pid, exePath, expectedBase, null);
  }
  checkBase(pid, exePath, expectedBase, mapping.start, '/proc/PID/maps');
}

/**
 * Load base of `exePath` in `pid` from PERF_RECORD_MMAP2 records of side-band ring copies: the
 * executable segment's start minus its file offset (what the linker lays out for gcc/ld output).
 * Null when no such record is present.
 */
export function loadBaseFromSideband(copies: readonly RingCopy[], pid: number, exePath: string): bigint | null {
  const wanted = realPath(exePath);
  let best: { pgoff: bigint; base: bigint } | null = null;
  for (const copy of copies) {
    const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
    for (let offset = 0; offset + 8 <= copy.validBytes;) {
      const size = view.getUint16(offset + 6, true);
      if (size < 8 || offset + size > copy.validBytes) break;
      // MMAP2: header, pid, tid, addr, len, pgoff, 24 bytes of dev/inode or build id, prot, flags, filename.
      if (view.getUint32(offset, true) === RecordType.MMAP2 && size > 72 && view.getUint32(offset + 8, true) === pid) {
        const nameBytes = copy.bytes.subarray(offset + 72, offset + size);
        const end = nameBytes.indexOf(0);
        const name = Buffer.from(end < 0 ? nameBytes : nameBytes.subarray(0, end)).toString('utf8');
        if (name === wanted || name === exePath) {
          const addr = view.getBigUint64(offset + 16, true);
          const pgoff = view.getBigUint64(offset + 32, true);
          if (!best || pgoff < best.pgoff) best = { pgoff, base: addr - pgoff };
        }
      }
      offset += size;
    }
  }
  return best?.base ?? null;
}
