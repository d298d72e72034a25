// A keeper's side-band, drained. A forward (side-band) ring that nobody empties stops taking
// records once full, so the keeper drains its side-band rings every SPOOL_DRAIN_MS; what it drains
// must stay readable for the clients that attach later, so it goes to one spool file per ring in
// the keeper's state directory: a u64 (little endian) stream position `base`, then the ring's
// record stream from that position on. Positions are the ring's own (data_tail / data_head
// values), so a client joins the spool and what is still in the ring without a gap or a repeat.
// The spool is bounded: past maxBytes the oldest records are dropped (base moves past them).

import { appendFileSync, closeSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isWholeRecord, u32View } from '../decode/walk';

/** How often a keeper empties its side-band rings into their spools. */
export const SPOOL_DRAIN_MS = 20;
/** Upper bound of one ring's spool file (the oldest records are dropped past it). */
export const SPOOL_MAX_BYTES = 32 << 20;
const HEADER_BYTES = 8;

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

/** The keeper's side of one ring's spool: appends drained chunks, drops the oldest past the bound. */
export class SidebandSpool {
  private end: bigint | null = null;
  private size = 0;

  constructor(readonly file: string, private readonly maxBytes: number = SPOOL_MAX_BYTES) {}

  /** Appends the records the ring held at stream positions [start, start + bytes.length). */
  append(start: bigint, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.end === null || start !== this.end) {
      // First chunk (or a stream that does not continue the spool): the spool starts over here.
      const header = new Uint8Array(HEADER_BYTES);
      new DataView(header.buffer).setBigUint64(0, start, true);
      this.replace(header, bytes);
    } else {
      appendFileSync(this.file, bytes);
      this.size += bytes.length;
    }
    this.end = start + BigInt(bytes.length);
    if (this.size > this.maxBytes) this.dropOldest();
  }

  /** Keeps the newest half (from a record boundary), with base moved past what was dropped. */
  private dropOldest(): void {
    const spooled = readSidebandSpool(this.file);
    if (!spooled) return;
    const words = u32View(spooled.bytes);
    let offset = 0;
    const keepFrom = spooled.bytes.length - (this.maxBytes >> 1);
    while (offset < keepFrom && isWholeRecord(words, offset, spooled.bytes.length)) offset += words[(offset >>> 2) + 1] >>> 16;
    const header = new Uint8Array(HEADER_BYTES);
    new DataView(header.buffer).setBigUint64(0, spooled.base + BigInt(offset), true);
    this.replace(header, spooled.bytes.subarray(offset));
  }

  /** Writes a new spool beside the file and renames it over: a reader sees the old or the new, whole. */
  private replace(header: Uint8Array, bytes: Uint8Array): void {
    const next = `${this.file}.next`;
    writeFileSync(next, header, { mode: 0o600 });
    appendFileSync(next, bytes);
    renameSync(next, this.file);
    this.size = bytes.length;
  }

  /** Removes the spool file. Idempotent. */
  dispose(): void {
    for (const file of [this.file, `${this.file}.next`]) {
      try {
        unlinkSync(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }
}

/** The records of a spool: their stream position `base` and the whole records from there; null when there is none yet. */
export function readSidebandSpool(file: string): { base: bigint; bytes: Uint8Array } | null {
  let raw: Uint8Array;
  try {
    // One open: a rename by the keeper between two opens would mix two spools.
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

/** Removes every spool a keeper left (a keeper killed with SIGKILL cannot). */
export function removeSidebandSpools(keeperPid: number, ringIds: readonly number[], dir: string): void {
  for (const ringId of ringIds) new SidebandSpool(sidebandSpoolPath(keeperPid, ringId, dir)).dispose();
}
