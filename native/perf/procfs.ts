// What /proc and /sys say about processes and CPUs: threads of a pid, online CPUs, memory maps,
// comm. Also the side-band synthesiser: a flight recorder overwrites the COMM/MMAP2 records of
// processes that started long ago, so at snapshot time we read the same facts from /proc (the
// lesson of `perf top --overwrite`, which synthesises them instead of trusting the ring).

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { ProcessSideband, ProcessMapping } from './sideband-types';
import { readProcMaps, type MapEntry } from '../sys/procmaps';

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
    return readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .filter(Number.isInteger)
      .sort((a, b) => a - b);
  } catch {
    // the error for the caller names the missing process, which is the cause here
    throw new Error(`process ${pid} does not exist (no /proc/${pid}/task)`);
  }
}

export function commOf(pid: number, tid: number = pid): string | null {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').replace(/\n$/, '');
  } catch {
    // the thread exited or is not ours to read: no name
    return null;
  }
}

export function exeOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    // the process exited or its exe is not ours to read: no path
    return null;
  }
}

/** A /proc/PID/maps entry as the side-band carries it (the file offset named as MMAP2 names it). */
export function toProcessMapping(entry: MapEntry): ProcessMapping {
  const mapping = { start: entry.start, end: entry.end, perms: entry.perms, pgoff: entry.offset, inode: entry.inode, path: entry.path };
  return entry.deleted ? { ...mapping, deleted: true } : mapping;
}

export function readMaps(pid: number, options: { executableOnly?: boolean } = {}): ProcessMapping[] {
  return readProcMaps(pid, options).map(toProcessMapping);
}

/** Synthesised COMM/MMAP2 equivalents for each pid still alive (dead ones are skipped). */
export function synthesizeSideband(pids: Iterable<number>, options: { executableOnly?: boolean } = {}): ProcessSideband[] {
  const result: ProcessSideband[] = [];
  for (const pid of new Set(pids)) {
    if (pid <= 0) continue;
    let maps: ProcessMapping[];
    let tids: number[];
    const executableOnly = options.executableOnly !== false;
    try {
      maps = readMaps(pid, { executableOnly });
      tids = threadsOf(pid);
    } catch {
      // the process exited between listing and reading: it has no side band left to synthesise
      continue;
    }
    for (const tid of tids) {
      const comm = commOf(pid, tid);
      if (comm === null) continue;
      result.push({ pid, tid, comm, maps });
    }
  }
  return result;
}

/**
 * The tasks a recording knows by /proc: those read now, plus those read when it started that are gone
 * since (perf synthesises every task at record start; a thread that exited before the snapshot has no
 * COMM anywhere else, so perf script would name its samples ':TID'). A started task whose pid is
 * alive now (the same process, or one that reused its pid) keeps its comm but not its mappings: the
 * process's mappings are the ones read now.
 */
export function mergeTasks(atStart: readonly ProcessSideband[], now: readonly ProcessSideband[]): ProcessSideband[] {
  if (atStart.length === 0) return [...now];
  const livePids = new Set(now.map((task) => task.pid));
  // Numbers, not `pid/tid` strings: a CPU-wide snapshot merges every task of the machine each time.
  const liveTasks = new Set(now.map(taskKey));
  const gone = atStart.filter((task) => !liveTasks.has(taskKey(task))).map((task) => (livePids.has(task.pid) ? { ...task, maps: [] } : task));
  return [...gone, ...now];
}

/** Pids and tids are below 2^22 (the kernel's PID_MAX_LIMIT): one exact number per task. */
function taskKey(task: ProcessSideband): number {
  return task.pid * 4194304 + task.tid;
}

/** Pids of every process on the machine (for -a synthesis). */
export function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Fields of /proc/PID/stat this project reads. */
export interface ProcessStat {
  /** One letter: R, S, D, Z (zombie), X (dead), ... */
  readonly state: string;
  readonly ppid: number;
  /** The process group id. */
  readonly pgrp: number;
  /** Start time in clock ticks since boot (field 22), as text: it identifies the process across pid reuse. */
  readonly startTicks: string;
}

/** /proc/PID/stat of `pid`, or null when it does not exist. */
export function readProcessStat(pid: number): ProcessStat | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // the process exited: no stat
    return null;
  }
  // comm (field 2) may contain spaces and parentheses: fields after it start past the LAST ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field N is rest[N - 3].
  return { state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]), startTicks: rest[19] };
}

/** Pids of the live (not zombie) processes in process group `pgid`. */
export function processGroupMembers(pgid: number): number[] {
  return allPids().filter((pid) => {
    const stat = readProcessStat(pid);
    return stat !== null && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X';
  });
}
