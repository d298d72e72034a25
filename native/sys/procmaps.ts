// /proc/PID/maps: the one parser of it (pure) and a small reader. Paths may contain spaces and the
// " (deleted)" suffix the kernel appends for unlinked files.

import { readFileSync } from 'node:fs';

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

export function parseProcMaps(text: string): MapEntry[] {
  const out: MapEntry[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const m = LINE.exec(raw);
    if (!m) throw new Error(`unparseable /proc/PID/maps line: ${JSON.stringify(raw)}`);
    let path = m[7];
    const deleted = path.endsWith(' (deleted)');
    if (deleted) path = path.slice(0, -' (deleted)'.length);
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

export function readProcMaps(pid: number): MapEntry[] {
  return parseProcMaps(readFileSync(`/proc/${pid}/maps`, 'utf8'));
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
