// What /proc and /sys say about processes and CPUs: threads of a pid, online CPUs, memory maps,
// comm. Also the side-band synthesiser: a flight recorder overwrites the COMM/MMAP2 records of
// processes that started long ago, so at snapshot time we read the same facts from /proc (the
// lesson of `perf top --overwrite`, which synthesises them instead of trusting the ring).

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { ProcessSideband, ProcessMapping } from './sideband-types';

export type { ProcessSideband, ProcessMapping };

/** Parses a CPU list like `0-3,5,7-8` (sysfs `online`, `possible`, cpumask lists). */
export function parseCpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.trim().split(',')) {
    if (!part) continue;
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!match) throw new Error(`bad CPU list element '${part}' in '${text.trim()}'`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    for (let cpu = first; cpu <= last; cpu++) cpus.push(cpu);
  }
  return cpus;
}

export function onlineCpus(): number[] {
  return parseCpuList(readFileSync('/sys/devices/system/cpu/online', 'utf8'));
}

/** Thread ids of a process (from /proc/PID/task), sorted; throws a clear error if it does not exist. */
export function threadsOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number).filter(Number.isInteger).sort((a, b) => a - b);
  } catch {
    throw new Error(`process ${pid} does not exist (no /proc/${pid}/task)`);
  }
}

export function commOf(pid: number, tid: number = pid): string | null {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').replace(/\n$/, '');
  } catch {
    return null;
  }
}

export function exeOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

/**
 * Parses /proc/PID/maps. Lines: `start-end perms offset dev inode [path]`. Paths may contain
 * spaces, so the path is everything after the inode column.
 */
export function parseMaps(text: string): ProcessMapping[] {
  const maps: ProcessMapping[] = [];
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S{4})\s+([0-9a-f]+)\s+(\S+)\s+(\d+)\s*(.*)$/.exec(line);
    if (!match) continue;
    maps.push({
      start: BigInt(`0x${match[1]}`),
      end: BigInt(`0x${match[2]}`),
      perms: match[3],
      pgoff: BigInt(`0x${match[4]}`),
      inode: Number(match[6]),
      path: match[7],
    });
  }
  return maps;
}

export function readMaps(pid: number): ProcessMapping[] {
  return parseMaps(readFileSync(`/proc/${pid}/maps`, 'utf8'));
}

/** Synthesised COMM/MMAP2 equivalents for each pid still alive (dead ones are skipped). */
export function synthesizeSideband(pids: Iterable<number>, options: { executableOnly?: boolean } = {}): ProcessSideband[] {
  const result: ProcessSideband[] = [];
  for (const pid of new Set(pids)) {
    if (pid <= 0) continue;
    let maps: ProcessMapping[];
    let tids: number[];
    try {
      maps = readMaps(pid);
      tids = threadsOf(pid);
    } catch {
      continue;
    }
    const kept = options.executableOnly === false ? maps : maps.filter((m) => m.perms[2] === 'x');
    for (const tid of tids) {
      const comm = commOf(pid, tid);
      if (comm === null) continue;
      result.push({ pid, tid, comm, maps: kept });
    }
  }
  return result;
}

/** Pids of every process on the machine (for -a synthesis). */
export function allPids(): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
}
