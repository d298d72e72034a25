// Uprobes defined in tracefs (uprobe_events) for the life of one recording, the way `perf probe`
// defines them, opened as tracepoints. A recording that follows new threads and children needs
// these: a uprobe PMU event carries its file's path as a user pointer (config1), and the kernel reads
// that pointer again when it inherits the event into a new thread — in the target's address space,
// where it points at nothing, so the target's clone() fails with EFAULT. A tracepoint is inherited by
// its id alone. Definitions are removed when the recording ends; those a killed Ringside left behind
// (their group names its pid) are removed by the next one.

import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { RED_ZONE_BYTES, RED_ZONE_RAW_OFFSET } from '../abi/uapi';
import { describeMode, describeUid } from '../sys/access';

export class TracefsUprobeError extends Error {
  override readonly name = 'TracefsUprobeError';
}

/** Every group this module defines is `ringside_<pid>_<n>`: the pid tells a live owner from a leftover. */
const GROUP_PATTERN = /^[pr]:(ringside_(\d+)_\d+)\/(\S+)\s/;

let nextGroup = 0;

export interface UprobeSite {
  readonly path: string;
  readonly offset: bigint;
  /** Fetch the x86-64 red zone at each hit (see RED_ZONE_FETCH): the site's samples then carry it in PERF_SAMPLE_RAW. */
  readonly redZone?: boolean;
}

/**
 * The fetch arguments that copy the 128 bytes below the stack pointer (the x86-64 red zone, where a function that
 * calls none keeps its locals and which the kernel's stack sample, starting at the stack pointer, leaves out) into
 * the event's record, as `perf probe` does for a variable there: 16 words, each fetched on its own (a word in a
 * page the process never touched fails alone).
 */
const RED_ZONE_WORDS = RED_ZONE_BYTES / 8;
const RED_ZONE_FETCH = Array.from({ length: RED_ZONE_WORDS }, (_, i) => `rz${i}=-${(RED_ZONE_WORDS - i) * 8}(%sp):x64`).join(' ');

export class TracefsUprobes {
  private readonly defined: string[] = [];
  private disposed = false;
  private readonly ids = new Map<string, number>();

  private constructor(
    private readonly tracefs: string,
    private readonly group: string,
  ) {}

  /** Defines one uprobe per site (each file and offset once). TracefsUprobeError names the file and the reason. */
  static define(tracefs: string, sites: readonly UprobeSite[]): TracefsUprobes {
    const control = `${tracefs}/uprobe_events`;
    try {
      statSync(control);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A tracefs mounted mode 0700 hides its files from other users: they are there, not missing.
      if (code === 'EACCES' || code === 'EPERM') {
        const euid = typeof process.geteuid === 'function' ? process.geteuid() : -1;
        throw new TracefsUprobeError(
          `${control} cannot be reached: ${tracefs} is ${describeMode(tracefs) ?? 'closed to this user'}, and ${describeUid(euid)} may not enter it ` +
            `(defining uprobes there needs root, as perf probe does: run as root)`,
        );
      }
      throw new TracefsUprobeError(
        `${control} does not exist (tracefs not mounted there, or a kernel without CONFIG_UPROBE_EVENTS) (${code ?? (error as Error).message})`,
      );
    }
    removeLeftovers(control);
    const probes = new TracefsUprobes(tracefs, `ringside_${process.pid}_${nextGroup++}`);
    try {
      for (const site of [...sites].sort((a, b) => Number(b.redZone ?? false) - Number(a.redZone ?? false))) probes.add(site);
    } catch (error) {
      probes.dispose();
      throw error;
    }
    return probes;
  }

  private add(site: UprobeSite): void {
    const key = siteKey(site);
    if (this.ids.has(key)) return;
    if (/\s/.test(site.path)) throw new TracefsUprobeError(`${site.path}: uprobe_events cannot name a path with white space`);
    const event = `s${this.ids.size}`;
    // O_APPEND without O_TRUNC: opening uprobe_events with O_TRUNC would remove every uprobe of the system (perf's too).
    write(`${this.tracefs}/uprobe_events`, `p:${this.group}/${event} ${site.path}:0x${site.offset.toString(16)}${site.redZone ? ` ${RED_ZONE_FETCH}` : ''}`);
    this.defined.push(event);
    if (site.redZone) this.checkRedZoneLayout(event);
    const idFile = `${this.tracefs}/events/${this.group}/${event}/id`;
    let id: number;
    try {
      id = Number(readFileSync(idFile, 'utf8').trim());
    } catch (error) {
      throw new TracefsUprobeError(
        `${idFile}: cannot read the id of the uprobe just defined (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    this.ids.set(key, id);
  }

  /** The host reads the red zone at RED_ZONE_RAW_OFFSET of the raw data: the event's format must say the kernel put it there. */
  private checkRedZoneLayout(event: string): void {
    const formatFile = `${this.tracefs}/events/${this.group}/${event}/format`;
    let format: string;
    try {
      format = readFileSync(formatFile, 'utf8');
    } catch (error) {
      throw new TracefsUprobeError(
        `${formatFile}: cannot read the layout of the uprobe just defined (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    for (let i = 0; i < RED_ZONE_WORDS; i++) {
      const field = new RegExp(`field:u64 rz${i};\\s*offset:(\\d+);\\s*size:8;`).exec(format);
      if (!field || Number(field[1]) !== RED_ZONE_RAW_OFFSET + 8 * i)
        throw new TracefsUprobeError(
          `${formatFile}: the red zone's word ${i} is not at offset ${RED_ZONE_RAW_OFFSET + 8 * i} of the record (a kernel that lays out uprobe events differently)`,
        );
    }
  }

  /** The tracepoint id of a defined site. */
  id(site: UprobeSite): number {
    const id = this.ids.get(siteKey(site));
    if (id === undefined) throw new Error(`no uprobe defined for ${site.path}:0x${site.offset.toString(16)}`);
    return id;
  }

  /** Removes the definitions; the fds opened on them must be closed first (the kernel answers EBUSY while one is open). Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const errors: string[] = [];
    for (const event of this.defined.splice(0)) {
      try {
        write(`${this.tracefs}/uprobe_events`, `-:${this.group}/${event}`);
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
    if (errors.length > 0) throw new TracefsUprobeError(`could not remove uprobes of ${this.group}: ${errors.join('; ')}`);
  }
}

/** A place is defined once: with the red zone where any event there wants it (an event that does not sample RAW never sees it). */
function siteKey(site: UprobeSite): string {
  return `${site.path}\0${site.offset}`;
}

function write(control: string, line: string): void {
  try {
    appendFileSync(control, `${line}\n`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? `${control} is writable only by root (defining a uprobe there needs it, as perf probe does: run as root)`
        : code === 'EBUSY'
          ? 'the uprobe is still in use'
          : `the kernel refused '${line}'`;
    throw new TracefsUprobeError(`${why} (${code})`);
  }
}

/** Removes groups a Ringside process that no longer exists defined (killed before it could clean up). */
function removeLeftovers(control: string): void {
  let text: string;
  try {
    text = readFileSync(control, 'utf8');
  } catch {
    // no uprobe_events to read (tracefs closed to us): nothing of ours can be left in it to remove
    return;
  }
  for (const line of text.split('\n')) {
    const match = GROUP_PATTERN.exec(`${line} `);
    if (!match || existsSync(`/proc/${match[2]}`)) continue;
    try {
      appendFileSync(control, `-:${match[1]}/${match[3]}\n`);
    } catch {
      // Still in use by someone, or already gone: leave it.
    }
  }
}
