// /proc/PID/maps: the one parser of it (pure) and a small reader. Paths may contain spaces and the
// " (deleted)" suffix the kernel appends for unlinked files.

import { readFileSync } from 'node:fs';
import { DELETED_SUFFIX } from '../abi/object-names';

export interface MapEntry {
  readonly start: bigint;
  readonly end: bigint;
  readonly perms: string;
  readonly offset: bigint;
  readonly dev: string;
  readonly inode: number;
  /** File path, `[heap]`/`[stack]`/`[vdso]`..., or '' for anonymous memory. */
  readonly path: string;
  readonly deleted: boolean;
}

const LINE = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S{4})\s+([0-9a-f]+)\s+(\S+)\s+(\d+)\s*(.*)$/;

/**
 * `executableOnly`: only the mappings whose permissions have x, the others skipped before they are
 * parsed. A CPU-wide recording reads every process's maps at each snapshot and keeps only those; a
 * browser's process has hundreds of data mappings per code one, and parsing them (three BigInts a
 * line) cost five times the rest (13,118 lines of 127 processes: 17-29 ms of CPU, 3-5 ms skipped).
 */
export function parseProcMaps(text: string, options: { executableOnly?: boolean } = {}): MapEntry[] {
  const out: MapEntry[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    // The permissions start after the first space ("start-end rwxp ..."): x is the third.
    if (options.executableOnly && raw[raw.indexOf(' ') + 3] !== 'x') continue;
    const m = LINE.exec(raw);
    if (!m) throw new Error(`unparseable /proc/PID/maps line: ${JSON.stringify(raw)}`);
    let path = m[7];
    const deleted = path.endsWith(DELETED_SUFFIX);
    if (deleted) path = path.slice(0, -DELETED_SUFFIX.length);
    out.push({
      start: BigInt('0x' + m[1]),
      end: BigInt('0x' + m[2]),
      perms: m[3],
      offset: BigInt('0x' + m[4]),
      dev: m[5],
      inode: Number(m[6]),
      path,
      deleted,
    });
  }
  return out;
}

export function readProcMaps(pid: number, options: { executableOnly?: boolean } = {}): MapEntry[] {
  return parseProcMaps(readFileSync(`/proc/${pid}/maps`, 'utf8'), options);
}

/** The mappings of `pid`, or [] when the process is gone (or its maps cannot be read). */
export function readProcMapsIfAlive(pid: number): MapEntry[] {
  try {
    return readProcMaps(pid);
  } catch {
    // the process exited: it has no maps
    return [];
  }
}

/** Runtime address of the mapping of `path` at file offset 0 (the load base of a PIE), if mapped. */
export function mappedBase(maps: readonly MapEntry[], path: string): bigint | undefined {
  return maps.find((m) => m.path === path && m.offset === 0n)?.start;
}
