// A keeper's side-band, drained. A forward (side-band) ring that nobody empties stops taking
// records once full, so the keeper drains its side-band rings every SPOOL_DRAIN_MS; what it drains
// must stay readable for the clients that attach later, so it goes to a spool per ring in the
// keeper's state directory. Positions are the ring's own (data_tail / data_head values), so a
// client joins the spool and what is still in the ring without a gap or a repeat.
//
// A spool is a run of segment files `<spool>.<n>`, each a header and the records from stream
// position `base` on; the keeper appends to the newest. The header (little endian): u64 base; u64
// records and u64 bytes the spool lost since it began because a write failed (a full file system),
// and the error's code (8 ASCII bytes, NUL padded). A failed write is never retried in place: the
// next records start a new segment, whose header counts the loss, so a reader joins the segments on
// both sides of the hole and names it. Out of space, the keeper first deletes its oldest segments
// (counted as lost too) to make room for the newest records, as the bound would. The spool is bounded:
// once the newest segment holds half the bound a new one starts, and the segments before the
// previous one are deleted, so the oldest records go without a byte being copied. (Rewriting the
// newest half of a 32 MiB file took up to a second on a busy disk, and a keeper that stalls that
// long while its target forks loses the side-band it exists to keep.)

import { closeSync, constants, fstatSync, openSync, readFileSync, readdirSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isWholeRecord, u32View } from '../decode/walk';
import type { ProcessMapping, ProcessSideband } from '../perf/sideband-types';
import { writeFileAtomic } from '../sys/safe-file';

/** How often a keeper empties its side-band rings into their spools. */
export const SPOOL_DRAIN_MS = 20;
/** Upper bound of one ring's spool (the oldest records are dropped past it, half the bound at a time). */
export const SPOOL_MAX_BYTES = 32 << 20;
const HEADER_BYTES = 32;
const ERROR_CODE_BYTES = 8;

/** What a spool lost since it began because a write failed: cumulative, as each new segment's header carries it. */
interface Unspooled {
  readonly records: bigint;
  readonly bytes: bigint;
  readonly error: string;
}
/** Spool files are written in the keeper's private directory, and never through a link planted at their names. */
const CREATE_NO_LINK = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
const APPEND_NO_LINK = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW;

export function sidebandSpoolPath(keeperPid: number, ringId: number, dir: string): string {
  return path.join(dir, `keeper-${keeperPid}.sideband-${ringId}`);
}

/** Length and number of the whole records at the start of `bytes` (a read may catch an append half done). */
function wholeRecords(bytes: Uint8Array): { length: number; count: number } {
  // u32View needs 4-byte alignment: a chunk cut from a pooled buffer may not have it.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const words = u32View(aligned);
  let offset = 0;
  let count = 0;
  while (isWholeRecord(words, offset, aligned.length)) {
    offset += words[(offset >>> 2) + 1] >>> 16;
    count++;
  }
  return { length: offset, count };
}

/** Names in the spool's directory that are its segments (`<spool>.<n>`) or, with `.next`, one being created. */
function spoolNames(spool: string): string[] {
  const prefix = `${path.basename(spool)}.`;
  try {
    return readdirSync(path.dirname(spool)).filter((name) => name.startsWith(prefix) && /^\d+(\.next)?$/.test(name.slice(prefix.length)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The segment files of a spool, oldest first: their sequence numbers and paths. */
function spoolSegments(spool: string): { seq: number; file: string }[] {
  const prefix = `${path.basename(spool)}.`;
  return spoolNames(spool)
    .filter((name) => !name.endsWith('.next'))
    .map((name) => ({ seq: Number(name.slice(prefix.length)), file: path.join(path.dirname(spool), name) }))
    .sort((a, b) => a.seq - b.seq);
}

function writeNoLink(file: string, bytes: Uint8Array, flags: number): void {
  const fd = openSync(file, flags, 0o600);
  try {
    writeFileSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

function unlinkIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** The keeper's side of one ring's spool: appends drained chunks, drops the oldest segment past the bound. */
export class SidebandSpool {
  private end: bigint | null = null;
  /** Sequence number and size (records only) of the segment appended to. */
  private seq = 0;
  private size = 0;
  /** No segment to append to: none yet, or the last write failed (its segment is never appended to again). */
  private needSegment = true;
  private lost: Unspooled = { records: 0n, bytes: 0n, error: '' };

  constructor(
    readonly file: string,
    private readonly maxBytes: number = SPOOL_MAX_BYTES,
  ) {}

  /** What the spool lost since it began because a write failed (zero when nothing). */
  get unspooled(): Unspooled {
    return this.lost;
  }

  /**
   * Appends the records the ring held at stream positions [start, start + bytes.length): whole records.
   * A write that fails (after making room, when out of space) loses the chunk, counted in `unspooled`, and throws.
   */
  append(start: bigint, bytes: Uint8Array): void {
    if (bytes.length === 0) {
      // A loss no segment's header counts yet (nothing came after it): an empty segment says it, so
      // readers see the spool reach the ring's data_tail across the hole instead of waiting for it.
      if (this.needSegment && this.end !== null && this.lost.bytes > 0n) {
        try {
          this.startSegment(this.end);
        } catch {
          // Still no room: the next drain tries again.
        }
      }
      return;
    }
    if (this.end === null || start !== this.end) {
      // First chunk (or a stream that does not continue the spool): the spool starts over here.
      for (const segment of spoolSegments(this.file)) unlinkIfThere(segment.file);
      this.needSegment = true;
    }
    const end = start + BigInt(bytes.length);
    // What may go to make room: the segments there were before this chunk, oldest first (never one
    // started for it, or a chunk larger than the file system would delete and start segments forever).
    const older = spoolSegments(this.file);
    for (;;) {
      try {
        if (this.needSegment) this.startSegment(start);
        this.appendToSegment(bytes);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Out of space: the oldest records go so the newest fit, as past the bound.
        if ((code === 'ENOSPC' || code === 'EDQUOT') && this.dropOldestForSpace(older, code)) continue;
        this.count(wholeRecords(bytes).count, bytes.length, code ?? (error instanceof Error ? error.message : String(error)));
        this.end = end;
        this.needSegment = true;
        throw error;
      }
    }
    this.end = end;
    if (this.size >= this.maxBytes / 2) {
      this.needSegment = true;
      try {
        this.startSegment(this.end);
      } catch {
        // The next append starts it (and counts what it cannot write).
        return;
      }
      // The previous segment and this one stay: at least half the bound, at most the bound (plus a chunk).
      for (const segment of spoolSegments(this.file)) if (segment.seq < this.seq - 1) unlinkIfThere(segment.file);
    }
  }

  private count(records: number, bytes: number, error: string): void {
    this.lost = { records: this.lost.records + BigInt(records), bytes: this.lost.bytes + BigInt(bytes), error };
  }

  /** Appends to the current segment; a write that fails is cut back off, so the segment ends on a whole record. */
  private appendToSegment(bytes: Uint8Array): void {
    const file = this.segmentFile(this.seq);
    try {
      writeNoLink(file, bytes, APPEND_NO_LINK);
    } catch (error) {
      this.needSegment = true;
      try {
        truncateSync(file, HEADER_BYTES + this.size);
      } catch {
        // A reader stops at the cut record anyway; nothing is appended after it.
      }
      throw error;
    }
    this.size += bytes.length;
  }

  /** Deletes the oldest of `older` (taking it from the list), counting its records as lost; false when none is left. */
  private dropOldestForSpace(older: { seq: number; file: string }[], code: string): boolean {
    const oldest = older.shift();
    if (!oldest) return false;
    const segment = readSegment(oldest.file);
    unlinkIfThere(oldest.file);
    if (segment) this.count(wholeRecords(segment.bytes).count, segment.bytes.length, code);
    return true;
  }

  private segmentFile(seq: number): string {
    return `${this.file}.${seq}`;
  }

  /**
   * A new, empty segment at stream position `base`, its header counting what was lost so far, written beside and renamed:
   * a reader never sees it without its header.
   */
  private startSegment(base: bigint): void {
    const header = new Uint8Array(HEADER_BYTES);
    const view = new DataView(header.buffer);
    view.setBigUint64(0, base, true);
    view.setBigUint64(8, this.lost.records, true);
    view.setBigUint64(16, this.lost.bytes, true);
    header.set(new TextEncoder().encode(this.lost.error).subarray(0, ERROR_CODE_BYTES), 24);
    const next = `${this.segmentFile(this.seq + 1)}.next`;
    try {
      writeNoLink(next, header, CREATE_NO_LINK);
      renameSync(next, this.segmentFile(this.seq + 1));
    } catch (error) {
      unlinkIfThere(next);
      throw error;
    }
    this.seq++;
    this.size = 0;
    this.needSegment = false;
  }

  /** Removes the spool's files, a segment being created when the keeper stopped included. Idempotent. */
  dispose(): void {
    for (const name of spoolNames(this.file)) unlinkIfThere(path.join(path.dirname(this.file), name));
  }
}

interface Segment {
  readonly base: bigint;
  readonly bytes: Uint8Array;
  /** What the spool had lost when this segment began. */
  readonly lost: Unspooled;
}

/** One segment's header and whole records; null when it is gone (dropped or replaced since it was listed). */
function readSegment(file: string): Segment | null {
  let raw: Uint8Array;
  try {
    const fd = openSync(file, 'r');
    try {
      raw = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  if (raw.length < HEADER_BYTES) return null;
  const view = new DataView(raw.buffer, raw.byteOffset, HEADER_BYTES);
  const code = raw.subarray(ERROR_CODE_BYTES * 3, HEADER_BYTES);
  const codeEnd = code.indexOf(0);
  const lost = {
    records: view.getBigUint64(8, true),
    bytes: view.getBigUint64(16, true),
    error: new TextDecoder().decode(code.subarray(0, codeEnd < 0 ? code.length : codeEnd)),
  };
  // A copy keeps the records 4-byte aligned for the walk (the buffer is pooled).
  const records = raw.slice(HEADER_BYTES);
  return { base: view.getBigUint64(0, true), bytes: records.subarray(0, wholeRecords(records).length), lost };
}

/** What a spool holds: side-band records of the ring's stream from `base` to `end`, and what it lost. */
export interface SpooledSideband {
  readonly base: bigint;
  /** The stream position just past the newest record: base + bytes.length, plus the holes failed writes left between. */
  readonly end: bigint;
  /** The whole records, oldest first, across any holes. */
  readonly bytes: Uint8Array;
  /** Bytes before `base` dropped to keep the spool within its bound (not for want of space). */
  readonly droppedBytes: bigint;
  /** What failed writes lost since the spool began (also before `base`); absent when nothing. */
  readonly unspooled?: Unspooled;
  /** The spool read (for messages). */
  readonly file: string;
}

/**
 * The records of a spool; null when there is none yet. The segments are read oldest first while the
 * keeper may append, rotate or start over: what is returned is the newest run of segments that
 * continue one another, or leave a hole between them that the later one's header counts as lost.
 */
export function readSidebandSpool(file: string): SpooledSideband | null {
  let run: Segment[] = [];
  let holes = 0n;
  // A segment read while it was the newest and then rotated away ends short of the next one's base:
  // read again (the keeper rotates once per half bound, so a second read almost always holds).
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = spoolSegments(file)
      .map((segment) => readSegment(segment.file))
      .filter((segment) => segment !== null);
    if (read.length === 0) return null;
    let first = read.length - 1;
    holes = 0n;
    for (; first > 0; first--) {
      const before = read[first - 1];
      const after = read[first];
      const gap = after.base - (before.base + BigInt(before.bytes.length));
      if (gap < 0n || gap > after.lost.bytes - before.lost.bytes) break;
      holes += gap;
    }
    run = read.slice(first);
    if (first === 0) break;
  }
  const newest = run[run.length - 1];
  const bytes = run.length === 1 ? newest.bytes : new Uint8Array(run.reduce((sum, segment) => sum + segment.bytes.length, 0));
  if (run.length > 1) {
    let offset = 0;
    for (const segment of run) {
      bytes.set(segment.bytes, offset);
      offset += segment.bytes.length;
    }
  }
  // Of what precedes `base`, the lost bytes not in holes of this run were lost for want of space; the rest, to the bound.
  const lostBeforeBase = newest.lost.bytes - holes;
  const droppedBytes = run[0].base - lostBeforeBase;
  return {
    base: run[0].base,
    end: newest.base + BigInt(newest.bytes.length),
    bytes,
    droppedBytes: droppedBytes > 0n ? droppedBytes : 0n,
    ...(newest.lost.bytes > 0n ? { unspooled: newest.lost } : {}),
    file,
  };
}

/** Removes every spool a keeper left (a keeper killed with SIGKILL cannot). */
export function removeSidebandSpools(keeperPid: number, ringIds: readonly number[], dir: string): void {
  for (const ringId of ringIds) new SidebandSpool(sidebandSpoolPath(keeperPid, ringId, dir)).dispose();
}

// The tasks there were when the keeper started (Recorder.startTasks: every thread's comm, every process's
// executable mappings), the side-band perf synthesises at record start. No ring holds it, so nothing
// overwrites it: the keeper writes it once, beside its spools, and every client's snapshot names what it
// names (threads that exited before the snapshot included). Its name falls under the spools' cleanup.

const START_TASKS_VERSION = 1;

export function startTasksPath(keeperPid: number, dir: string): string {
  return path.join(dir, `keeper-${keeperPid}.sideband-tasks.json`);
}

interface StoredMapping {
  readonly start: string;
  readonly end: string;
  readonly perms: string;
  readonly pgoff: string;
  readonly inode: number;
  readonly path: string;
  readonly deleted?: boolean;
}

/** One process: its mappings once, then each thread's comm (the threads of a process share their mappings). */
interface StoredProcess {
  readonly pid: number;
  readonly maps: readonly StoredMapping[];
  readonly threads: readonly { readonly tid: number; readonly comm: string }[];
}

/** Writes the keeper's start-time tasks (mode 0600, whole or not at all, never through a link). */
export function writeStartTasks(keeperPid: number, dir: string, tasks: readonly ProcessSideband[]): string {
  const processes = new Map<number, { pid: number; maps: StoredMapping[]; threads: { tid: number; comm: string }[] }>();
  for (const task of tasks) {
    let stored = processes.get(task.pid);
    if (!stored) {
      stored = {
        pid: task.pid,
        threads: [],
        maps: task.maps.map((map) => ({
          start: map.start.toString(16),
          end: map.end.toString(16),
          perms: map.perms,
          pgoff: map.pgoff.toString(16),
          inode: map.inode,
          path: map.path,
          ...(map.deleted ? { deleted: true } : {}),
        })),
      };
      processes.set(task.pid, stored);
    }
    stored.threads.push({ tid: task.tid, comm: task.comm });
  }
  const file = startTasksPath(keeperPid, dir);
  writeFileAtomic(file, JSON.stringify({ version: START_TASKS_VERSION, processes: [...processes.values()] }), { privateDirectory: true });
  return file;
}

export class StartTasksError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'StartTasksError';
  }
}

/**
 * The tasks a keeper wrote when it started; [] when it wrote none (a launched command has none; a keeper
 * from before this file). A file that is not the keeper's own (not a regular file, another owner, readable
 * by others) or not what it writes is a StartTasksError naming it and why.
 */
export function readStartTasks(keeperPid: number, dir: string): ProcessSideband[] {
  const file = startTasksPath(keeperPid, dir);
  let text: string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    throw new StartTasksError(file, code === 'ELOOP' ? "a symbolic link, not the keeper's file" : `cannot be read (${code ?? String(error)})`);
  }
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.() ?? stat.uid;
    if (!stat.isFile()) throw new StartTasksError(file, 'not a regular file');
    if (stat.uid !== uid) throw new StartTasksError(file, `owned by uid ${stat.uid}, not by us (uid ${uid})`);
    if ((stat.mode & 0o077) !== 0) throw new StartTasksError(file, `mode ${(stat.mode & 0o777).toString(8)} lets other users read it; expected 0600`);
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  let parsed: { version?: unknown; processes?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (error) {
    throw new StartTasksError(file, `not JSON: ${(error as Error).message}`);
  }
  if (parsed.version !== START_TASKS_VERSION || !Array.isArray(parsed.processes)) {
    throw new StartTasksError(file, `not a version ${START_TASKS_VERSION} task list`);
  }
  const tasks: ProcessSideband[] = [];
  for (const value of parsed.processes as StoredProcess[]) {
    if (!Number.isInteger(value?.pid) || !Array.isArray(value.maps) || !Array.isArray(value.threads)) {
      throw new StartTasksError(file, 'a process entry without pid, maps and threads');
    }
    let maps: ProcessMapping[];
    try {
      maps = value.maps.map((map) => ({
        start: BigInt(`0x${map.start}`),
        end: BigInt(`0x${map.end}`),
        perms: String(map.perms),
        pgoff: BigInt(`0x${map.pgoff}`),
        inode: Number(map.inode),
        path: String(map.path),
        ...(map.deleted === true ? { deleted: true } : {}),
      }));
    } catch {
      // BigInt's SyntaxError says only "cannot convert": the file and the field are what the user needs.
      throw new StartTasksError(file, `a mapping of pid ${value.pid} with an address that is not hex`);
    }
    for (const thread of value.threads) {
      if (!Number.isInteger(thread?.tid) || typeof thread.comm !== 'string')
        throw new StartTasksError(file, `a thread of pid ${value.pid} without tid and comm`);
      tasks.push({ pid: value.pid, tid: thread.tid, comm: thread.comm, maps });
    }
  }
  return tasks;
}
