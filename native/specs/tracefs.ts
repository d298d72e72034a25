// tracefs: where it is, mounting it when we may, and reading tracepoint ids and formats.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TracepointFormat } from '../abi/snapshot';
import { parseTracepointFormat } from './tracepoint-format';
import {
  describeUid,
  PARANOID_SYSCTL,
  paranoidText,
  probeTracefs,
  readPerfAccess,
  TRACEFS_DEBUGFS,
  TRACEFS_MOUNT_COMMAND,
  TRACEFS_PRIMARY,
  type TracefsAccess,
} from '../sys/access';

export class TracefsError extends Error {
  override readonly name = 'TracefsError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(hint ? `${message} (${hint})` : message);
  }
}

/**
 * Picks the tracefs directory from /proc/mounts text: a tracefs mount at the primary place first,
 * then any tracefs mount, then the debugfs path (old kernels auto-mount tracefs there).
 * Pure, so the choice is testable without unmounting the machine's real tracefs.
 */
export function chooseTracefsRoot(mountsText: string, debugfsTracingExists: boolean): string | undefined {
  const tracefsMounts: string[] = [];
  for (const line of mountsText.split('\n')) {
    const [, mountPoint, fsType] = line.split(' ');
    if (fsType === 'tracefs' && mountPoint) tracefsMounts.push(mountPoint.replace(/\\040/g, ' '));
  }
  if (tracefsMounts.includes(TRACEFS_PRIMARY)) return TRACEFS_PRIMARY;
  if (tracefsMounts.includes(TRACEFS_DEBUGFS)) return TRACEFS_DEBUGFS;
  if (tracefsMounts.length > 0) return tracefsMounts[0];
  return debugfsTracingExists ? TRACEFS_DEBUGFS : undefined;
}

export interface FindTracefsOptions {
  /** Use this directory as tracefs (tests, or a caller that already knows). */
  readonly root?: string;
  /** Mount tracefs when it is missing and we are root (default true). */
  readonly mount?: boolean;
}

/** tracefs is mounted, but this user may not read it (it is often mounted with mode 0700). */
export function tracefsDeniedError(tracefs: TracefsAccess): TracefsError {
  const access = readPerfAccess();
  const gid = typeof process.getegid === 'function' ? process.getegid() : 0;
  // Readable tracefs alone is not enough where the kernel refuses kernel events to this user.
  const paranoid = access.mayRecordKernel
    ? ''
    : `; recording tracepoints then also needs ${PARANOID_SYSCTL} <= 1 (syscall tracepoints of your own programs) or -1 (any, or -a), ` +
      `or CAP_PERFMON (${paranoidText(access)})`;
  return new TracefsError(
    `tracefs is mounted at ${tracefs.path} but ${describeUid(access.euid)} may not read it${tracefs.modeText ? ` (${tracefs.modeText})` : ''}, ` +
      'so tracepoint ids and formats cannot be read',
    `let this user's group in with \`sudo mount -o remount,gid=${gid},mode=750 ${tracefs.path}\` (its files are readable by their group only, ` +
      `so a wider mode alone is not enough), or run as root${paranoid}`,
  );
}

/** Returns the tracefs directory, mounting it at /sys/kernel/tracing if needed and allowed. */
export function findTracefs(options: FindTracefsOptions = {}): string {
  if (options.root !== undefined) {
    if (!isDirectory(join(options.root, 'events'))) throw new TracefsError(`${options.root} is not a tracefs directory (no events/ in it)`);
    return options.root;
  }
  let mounts = '';
  try {
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    /* no /proc: fall through to the path checks */
  }
  const chosen = chooseTracefsRoot(mounts, isDirectory(join(TRACEFS_DEBUGFS, 'events')));
  if (chosen !== undefined && isDirectory(join(chosen, 'events'))) return chosen;
  const probed = probeTracefs(mounts);
  if (probed.state === 'denied') throw tracefsDeniedError(probed);

  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || options.mount === false) {
    throw new TracefsError('tracefs is not mounted, so tracepoints cannot be used', `as root run: ${TRACEFS_MOUNT_COMMAND}`);
  }
  try {
    execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS_PRIMARY], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new TracefsError(
      `tracefs is not mounted and '${TRACEFS_MOUNT_COMMAND}' failed${stderr ? `: ${stderr}` : ''}`,
      'is CONFIG_TRACING enabled in this kernel?',
    );
  }
  if (!isDirectory(join(TRACEFS_PRIMARY, 'events'))) throw new TracefsError(`mounted tracefs at ${TRACEFS_PRIMARY} but it has no events/ directory`);
  return TRACEFS_PRIMARY;
}

/** Tracepoint systems (subdirectories of events/ that hold events), sorted. */
export function listSystems(tracefsRoot: string): string[] {
  const events = join(tracefsRoot, 'events');
  return readdirSync(events, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Event names of one system (directories with an `id` file), sorted. */
export function listSystemEvents(tracefsRoot: string, system: string): string[] {
  const dir = join(tracefsRoot, 'events', system);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    /* no such system (or not readable): it has no events */ return [];
  }
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'id')))
    .map((entry) => entry.name)
    .sort();
}

export interface TracepointEntry {
  readonly system: string;
  readonly name: string;
  readonly id: number;
}

/** Every tracepoint with its id. Unreadable ids (races with module unload) are skipped. */
export function listTracepoints(tracefsRoot: string): TracepointEntry[] {
  const result: TracepointEntry[] = [];
  for (const system of listSystems(tracefsRoot)) {
    for (const name of listSystemEvents(tracefsRoot, system)) {
      const id = tryReadId(tracefsRoot, system, name);
      if (id !== undefined) result.push({ system, name, id });
    }
  }
  return result;
}

/** True when events/SYSTEM/NAME exists. */
export function tracepointExists(tracefsRoot: string, system: string, name: string): boolean {
  return existsSync(join(tracefsRoot, 'events', system, name, 'id'));
}

export function readTracepointId(tracefsRoot: string, system: string, name: string): number {
  const id = tryReadId(tracefsRoot, system, name);
  if (id === undefined) throw new TracefsError(`no tracepoint ${system}:${name} in ${tracefsRoot}/events`);
  return id;
}

/** Reads and parses events/SYSTEM/NAME/format. */
export function readTracepointFormat(tracefsRoot: string, system: string, name: string): TracepointFormat {
  const path = join(tracefsRoot, 'events', system, name, 'format');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new TracefsError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return parseTracepointFormat(text, system);
}

function tryReadId(tracefsRoot: string, system: string, name: string): number | undefined {
  try {
    const text = readFileSync(join(tracefsRoot, 'events', system, name, 'id'), 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    // no such event, or its id is not readable: unknown
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    /* missing or unreadable: not a directory we can use */ return false;
  }
}
