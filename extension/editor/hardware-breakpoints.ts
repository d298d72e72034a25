// The editor's hardware breakpoints as plain logic (no vscode values): which event spec a gutter line or
// an identifier becomes, how many debug registers that leaves, and what the recorded hits say about
// each source line (counts, last hits, the function and line that wrote a watched variable).

import type { DecodedSnapshot } from '../../native/decode/types';
import { BreakpointType, PerfType, RecordType } from '../../native/abi/uapi';
import { openObjectFile } from '../../native/symbols/object-file';
import type { BreakpointHolder } from '../session/session-manager';

/** Debug registers on x86 (DR0-DR3): every armed breakpoint or watchpoint takes one. */
export const DEBUG_REGISTERS = 4;

export type WatchAccess = 'w' | 'rw';

/** `mem:FILE:LINE:x`: execute breakpoint at the line's first is_stmt address. */
export function lineBreakpointSpec(file: string, line: number): string {
  if (!Number.isInteger(line) || line < 1) throw new RangeError(`line must be a positive integer, got ${line}`);
  if (/[:\s]/.test(file))
    throw new RangeError(`file name ${JSON.stringify(file)} cannot be written in an event spec (contains ':' or spaces); rename or use the address`);
  return `mem:${file}:${line}:x`;
}

/**
 * `mem:NAME[/LEN]:w|rw[:u]` (length from DWARF when omitted; larger objects watch their first word).
 * User-only by default: the program's own accesses are what the editor shows; the kernel also
 * writes user memory (clearing .bss at exec, read() filling a buffer), which `userOnly: false` keeps.
 */
export function watchSpec(name: string, access: WatchAccess, options: { length?: 1 | 2 | 4 | 8; userOnly?: boolean } = {}): string {
  if (!/^[A-Za-z_][\w]*$/.test(name))
    throw new RangeError(`${JSON.stringify(name)} is not a variable name Ringside can resolve from symbols; pause in the debugger to watch an expression`);
  return `mem:${name}${options.length ? `/${options.length}` : ''}:${access}${options.userOnly === false ? '' : ':u'}`;
}

/** A watchpoint from an address the debug adapter evaluated (`&(expr)`, `sizeof(expr)`). */
export function watchAddressSpec(address: bigint, size: number, access: WatchAccess): { spec: string; length: 1 | 2 | 4 | 8; note?: string } {
  const length = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
  // x86 needs bp_addr aligned to bp_len: shrink until it is.
  let aligned: 1 | 2 | 4 | 8 = length;
  while (aligned > 1 && address % BigInt(aligned) !== 0n) aligned = (aligned / 2) as 1 | 2 | 4;
  const notes: string[] = [];
  if (size > 8) notes.push(`the object is ${size} bytes: only its first ${aligned} are watched`);
  if (aligned < length) notes.push(`watching ${aligned} bytes (the address is not ${length}-byte aligned)`);
  return { spec: `mem:0x${address.toString(16)}/${aligned}:${access}:u`, length: aligned, ...(notes.length ? { note: notes.join('; ') } : {}) };
}

/**
 * Debug registers the open breakpoints take, by the kernel's rule (kernel/events/hw_breakpoint.c): a CPU-wide one takes
 * a register on every CPU; one bound to a process takes it on each of the process's threads (inherited by new ones), so
 * what a CPU has left for a task is HBP_NUM minus the CPU-wide ones minus that task's own.
 */
export interface RegisterUse {
  readonly cpuPinned: number;
  /** Breakpoints per process they are bound to. */
  readonly perProcess: ReadonlyMap<number, number>;
  /** The busiest process's count (0 when none). */
  readonly maxTaskPinned: number;
  /** What the busiest CPU has taken: cpuPinned + maxTaskPinned. */
  readonly used: number;
}

export function registerUse(holders: readonly (Pick<BreakpointHolder, 'scope'> & { readonly registers?: number })[]): RegisterUse {
  const perProcess = new Map<number, number>();
  let cpuPinned = 0;
  for (const { scope, registers = 1 } of holders) {
    if (scope.kind === 'cpus') cpuPinned += registers;
    else perProcess.set(scope.pid, (perProcess.get(scope.pid) ?? 0) + registers);
  }
  const maxTaskPinned = Math.max(0, ...perProcess.values());
  return { cpuPinned, perProcess, maxTaskPinned, used: cpuPinned + maxTaskPinned };
}

/**
 * Registers a new breakpoint on `target` finds free: on a process, what its threads and the CPU-wide ones left; on
 * every CPU, what the busiest task left; on a command not yet launched, what the CPU-wide ones left.
 */
export function freeRegisters(
  use: RegisterUse,
  target: { readonly kind: 'process'; readonly pid: number } | { readonly kind: 'cpus' | 'new-process' },
  slots: number = DEBUG_REGISTERS,
): number {
  const taken = target.kind === 'process' ? use.cpuPinned + (use.perProcess.get(target.pid) ?? 0) : target.kind === 'cpus' ? use.used : use.cpuPinned;
  return Math.max(0, slots - taken);
}

/** The holders a new breakpoint on `target` competes with (the CPU-wide ones and, on a process, that process's). */
export function competingHolders<H extends Pick<BreakpointHolder, 'scope'>>(
  holders: readonly H[],
  target: { readonly kind: 'process'; readonly pid: number } | { readonly kind: 'cpus' | 'new-process' },
): H[] {
  return holders.filter(({ scope }) => scope.kind === 'cpus' || target.kind === 'cpus' || (target.kind === 'process' && scope.pid === target.pid));
}

export interface BreakpointRequest {
  readonly file: string;
  readonly line: number;
  readonly enabled: boolean;
  readonly condition?: string;
  readonly logMessage?: string;
}

export interface ConversionPlan {
  readonly armed: readonly { readonly request: BreakpointRequest; readonly spec: string }[];
  readonly skipped: readonly { readonly request: BreakpointRequest; readonly reason: string }[];
}

/**
 * Which of VS Code's source breakpoints become hardware breakpoints: enabled ones, in order, up to
 * the free debug registers; the rest are listed with the reason.
 */
export function planConversion(requests: readonly BreakpointRequest[], slotsInUse: number, slots: number = DEBUG_REGISTERS): ConversionPlan {
  const armed: { request: BreakpointRequest; spec: string }[] = [];
  const skipped: { request: BreakpointRequest; reason: string }[] = [];
  let free = Math.max(0, slots - slotsInUse);
  const seen = new Set<string>();
  for (const request of requests) {
    const key = `${request.file}:${request.line}`;
    if (!request.enabled) {
      skipped.push({ request, reason: 'disabled in VS Code' });
      continue;
    }
    if (seen.has(key)) {
      skipped.push({ request, reason: 'same line as another breakpoint' });
      continue;
    }
    if (free === 0) {
      skipped.push({
        request,
        reason: `no free debug register (x86 has ${slots}; ${slotsInUse + armed.length} in use by Ringside, more may be held by debuggers or other perf sessions)`,
      });
      continue;
    }
    let spec: string;
    try {
      spec = lineBreakpointSpec(request.file, request.line);
    } catch (error) {
      skipped.push({ request, reason: (error as Error).message });
      continue;
    }
    seen.add(key);
    armed.push({ request, spec });
    free--;
    if (request.condition || request.logMessage) {
      // Still armed: perf records every hit; the condition cannot be evaluated in the kernel.
      skipped.push({ request, reason: 'armed, but its condition/log message is ignored: a perf breakpoint records every hit' });
    }
  }
  return { armed, skipped };
}

export interface SourcePlace {
  readonly file: string;
  readonly line: number;
  readonly function?: string;
}

/** IP → source position in one executable loaded at `loadBase` (0 for non-PIE). */
export function executableLocator(executable: string, loadBase: bigint): (ip: bigint) => SourcePlace | undefined {
  const object = openObjectFile(executable);
  const isExec = object.elf.header.type === 2; // ET_EXEC: link-time addresses are runtime addresses
  const bias = isExec ? 0n : loadBase;
  return (ip: bigint) => {
    const vaddr = ip - bias;
    const hit = object.lineTable()?.lineForAddress(vaddr);
    if (!hit) return undefined;
    const fn = object.functionAt(vaddr);
    return { file: hit.file, line: hit.line, ...(fn ? { function: fn.name } : {}) };
  };
}

export interface Hit {
  readonly row: number;
  readonly ip: bigint;
  readonly pid: number;
  readonly tid: number;
  readonly timeNs: bigint | null;
  readonly place?: SourcePlace;
}

export interface HitSummary {
  readonly eventIndex: number;
  readonly count: number;
  /** `file:line` → hits at that line (for a watchpoint: the line after the writing instruction's IP). */
  readonly byLine: ReadonlyMap<string, number>;
  /** Newest last; at most `keepLast`. */
  readonly last: readonly Hit[];
}

/**
 * Counts the SAMPLE records of one breakpoint event and places their IPs in the source. A data
 * watchpoint traps AFTER the accessing instruction, so its sample IP is the next instruction: the
 * accessing line is the one holding ip - 1 (inside the accessing instruction).
 */
export function summarizeHits(
  snapshot: DecodedSnapshot,
  eventIndex: number,
  locate?: (pid: number, ip: bigint) => SourcePlace | undefined,
  keepLast = 10,
): HitSummary {
  const { columns } = snapshot;
  const attr = snapshot.events[eventIndex]?.attr;
  const trapsAfter = attr?.type === PerfType.BREAKPOINT && attr.bpType !== BreakpointType.X;
  let count = 0;
  const byLine = new Map<string, number>();
  const last: Hit[] = [];
  for (let row = 0; row < columns.length; row++) {
    if (columns.kind[row] !== RecordType.SAMPLE || columns.event[row] !== eventIndex) continue;
    count++;
    const ip = (BigInt(columns.ipHi[row]) << 32n) | BigInt(columns.ipLo[row]);
    const place = locate?.(columns.pid[row], trapsAfter && ip > 0n ? ip - 1n : ip);
    if (place) {
      const key = `${place.file}:${place.line}`;
      byLine.set(key, (byLine.get(key) ?? 0) + 1);
    }
    const time = columns.time[row];
    last.push({
      row,
      ip,
      pid: columns.pid[row],
      tid: columns.tid[row],
      timeNs: Number.isNaN(time) ? null : columns.timeOriginNs + BigInt(Math.round(time)),
      ...(place ? { place } : {}),
    });
    if (last.length > keepLast) last.shift();
  }
  return { eventIndex, count, byLine, last };
}

/**
 * Why no hit can be seen on this machine (the breakpoint-delivery probe's message), for a breakpoint that counted none:
 * the editor then says that, never "0 hits" as if the code never ran.
 */
export type UnseenHits = string | undefined;

/** The hit count the gutter line and its hover show. */
export function lineHitsText(count: number, unseen: UnseenHits): string {
  if (unseen !== undefined && count === 0) return 'no hits can be seen on this machine: hardware breakpoints do not fire here';
  return `${count.toLocaleString('en-US')} hits in the last snapshot`;
}

/** The CodeLens text on a watched variable. */
export function watchLensText(summary: HitSummary, access: WatchAccess, unseen?: UnseenHits): string {
  if (unseen !== undefined && summary.count === 0) return 'no accesses can be seen on this machine: hardware breakpoints do not fire here';
  const verb = access === 'w' ? 'written' : 'accessed';
  const newest = summary.last[summary.last.length - 1];
  const by = newest?.place ? `; last by ${newest.place.function ? `${newest.place.function}() ` : ''}line ${newest.place.line}` : '';
  return `${verb} ${summary.count.toLocaleString('en-US')}× in this snapshot${by}`;
}
