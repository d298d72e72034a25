// A keeper's side-band, drained. A forward (side-band) ring that nobody empties stops taking
// records once full, so the keeper drains its side-band rings every SPOOL_DRAIN_MS; what it drains
// must stay readable for the clients that attach later, so it goes to a spool per ring in the
// keeper's state directory. Positions are the ring's own (data_tail / data_head values), so a
// client joins the spool and what is still in the ring without a gap or a repeat.
//
// A spool is a run of segment files `<spool>.<n>`, each a u64 (little endian) stream position
// `base` and the records from there on; the keeper appends to the newest. The spool is bounded:
// once the newest segment holds half the bound a new one starts, and the segments before the
// previous one are deleted, so the oldest records go without a byte being copied. (Rewriting the
// newest half of a 32 MiB file took up to a second on a busy disk, and a keeper that stalls that
// long while its target forks loses the side-band it exists to keep.)

import { closeSync, constants, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isWholeRecord, u32View } from '../decode/walk';

/** How often a keeper empties its side-band rings into their spools. */
export const SPOOL_DRAIN_MS = 20;
/** Upper bound of one ring's spool (the oldest records are dropped past it, half the bound at a time). */
export const SPOOL_MAX_BYTES = 32 << 20;
const HEADER_BYTES = 8;
/** Spool files are written in the keeper's private directory, and never through a link planted at their names. */
const CREATE_NO_LINK = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
const APPEND_NO_LINK = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW;

export function sidebandSpoolPath(keeperPid: number, ringId: number, dir: string): string {
  return path.join(dir, `keeper-${keeperPid}.sideband-${ringId}`);
}

/** Length of the whole records at the start of `bytes` (a read may catch an append half done). */
function wholeRecordsLength(bytes: Uint8Array): number {
  const words = u32View(bytes);
  let offset = 0;
  while (isWholeRecord(words, offset, bytes.length)) offset += words[(offset >>> 2) + 1] >>> 16;
  return offset;
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

  constructor(readonly file: string, private readonly maxBytes: number = SPOOL_MAX_BYTES) {}

  /** Appends the records the ring held at stream positions [start, start + bytes.length): whole records. */
  append(start: bigint, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.end === null || start !== this.end) {
      // First chunk (or a stream that does not continue the spool): the spool starts over here.
      for (const segment of spoolSegments(this.file)) unlinkIfThere(segment.file);
      this.startSegment(start);
    }
    writeNoLink(this.segmentFile(this.seq), bytes, APPEND_NO_LINK);
    this.size += bytes.length;
    this.end = start + BigInt(bytes.length);
    if (this.size >= this.maxBytes / 2) {
      this.startSegment(this.end);
      // The previous segment and this one stay: at least half the bound, at most the bound (plus a chunk).
      for (const segment of spoolSegments(this.file)) if (segment.seq < this.seq - 1) unlinkIfThere(segment.file);
    }
  }

  private segmentFile(seq: number): string {
    return `${this.file}.${seq}`;
  }

  /** A new, empty segment at stream position `base`, written beside and renamed: a reader never sees it without its header. */
  private startSegment(base: bigint): void {
    this.seq++;
    const header = new Uint8Array(HEADER_BYTES);
    new DataView(header.buffer).setBigUint64(0, base, true);
    const next = `${this.segmentFile(this.seq)}.next`;
    writeNoLink(next, header, CREATE_NO_LINK);
    renameSync(next, this.segmentFile(this.seq));
    this.size = 0;
  }

  /** Removes the spool's files, a segment being created when the keeper stopped included. Idempotent. */
  dispose(): void {
    for (const name of spoolNames(this.file)) unlinkIfThere(path.join(path.dirname(this.file), name));
  }
}

/** One segment's base and whole records; null when it is gone (dropped or replaced since it was listed). */
function readSegment(file: string): { base: bigint; bytes: Uint8Array } | null {
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
  const base = new DataView(raw.buffer, raw.byteOffset, HEADER_BYTES).getBigUint64(0, true);
  // A copy keeps the records 4-byte aligned for the walk (the header is 8 bytes, the buffer pooled).
  const records = raw.slice(HEADER_BYTES);
  return { base, bytes: records.subarray(0, wholeRecordsLength(records)) };
}

/**
 * The records of a spool: their stream position `base` and the whole records from there; null when
 * there is none yet. The segments are read oldest first while the keeper may append, rotate or start
 * over: what is returned is the newest run of segments that continue one another.
 */
export function readSidebandSpool(file: string): { base: bigint; bytes: Uint8Array } | null {
  let run: { base: bigint; bytes: Uint8Array }[] = [];
  // A segment read while it was the newest and then rotated away ends short of the next one's base:
  // read again (the keeper rotates once per half bound, so a second read almost always holds).
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = spoolSegments(file).map((segment) => readSegment(segment.file)).filter((segment) => segment !== null);
    if (read.length === 0) return null;
    let first = read.length - 1;
    while (first > 0 && read[first - 1].base + BigInt(read[first - 1].bytes.length) === read[first].base) first--;
    run = read.slice(first);
    if (first === 0) break;
  }
  if (run.length === 1) return run[0];
  const bytes = new Uint8Array(run.reduce((sum, segment) => sum + segment.bytes.length, 0));
  let offset = 0;
  for (const segment of run) {
    bytes.set(segment.bytes, offset);
    offset += segment.bytes.length;
  }
  return { base: run[0].base, bytes };
}

/** Removes every spool a keeper left (a keeper killed with SIGKILL cannot). */
export function removeSidebandSpools(keeperPid: number, ringIds: readonly number[], dir: string): void {
  for (const ringId of ringIds) new SidebandSpool(sidebandSpoolPath(keeperPid, ringId, dir)).dispose();
}
