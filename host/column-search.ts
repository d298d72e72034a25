// Searches over a snapshot's columns that the host makes before the page gets a row (the threads its start names, its
// losses, its COMM and FORK rows), done by libc's memchr and memcmp through node's Buffer instead of a loop of our
// own: a per-row loop over a million rows runs in V8's interpreter until its on-stack compilation is ready, and that
// took 20 ms and more of a 1M-row snapshot's way to the page (host/wire.ts's thread pass, in the transport bench).

import { Buffer } from 'node:buffer';

/** The bytes of a typed array (its own range of its buffer, shared or not), without a copy. */
function bytesOf(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** Whether a byte column can hold `value` (Buffer's searches would take it modulo 256). */
function isByte(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 0xff;
}

/** Byte-valued searches over a column of bytes (the kind column). */
export class ByteColumn {
  private readonly bytes: Buffer;

  constructor(column: Uint8Array) {
    this.bytes = bytesOf(column);
  }

  /** The first row at or after `from` holding `value`, or -1. */
  indexOf(value: number, from = 0): number {
    return isByte(value) ? this.bytes.indexOf(value, from) : -1;
  }

  /** The last row holding `value`, or -1. */
  lastIndexOf(value: number): number {
    return isByte(value) ? this.bytes.lastIndexOf(value) : -1;
  }
}

/** Rows checked one by one after a run's first row before the rest of the run is compared by blocks. */
const BLOCK_ROWS = 256;
/** The largest block compared at once (blocks double from BLOCK_ROWS while the run goes on). */
const MAX_BLOCK_ROWS = 65536;

/**
 * The first row of every run of rows of one thread (equal pid and tid), in row order: `visit(row)` for each. Rows of a
 * thread come in long runs (a CPU's ring holds what ran there), so after a run's first BLOCK_ROWS rows the rest of it is
 * compared with memcmp against a block of the thread's pid and tid: blocks that double while the rows are equal, then
 * halve around the change (a few dozen calls for a run of a million rows); rows whose thread changes often are compared
 * one by one.
 */
export function forEachThreadRun(pid: Int32Array, tid: Int32Array, length: number, visit: (row: number) => void): void {
  if (pid.length < length || tid.length < length) throw new RangeError(`pid and tid hold ${pid.length} and ${tid.length} rows, not ${length}`);
  const pidBytes = bytesOf(pid);
  const tidBytes = bytesOf(tid);
  const blockRows = Math.min(MAX_BLOCK_ROWS, length);
  const pidBlock = new Int32Array(blockRows);
  const tidBlock = new Int32Array(blockRows);
  const pidBlockBytes = bytesOf(pidBlock);
  const tidBlockBytes = bytesOf(tidBlock);
  // The thread the blocks hold in their first `filled` rows.
  let blockPid = 0;
  let blockTid = 0;
  let filled = 0;
  /** Whether rows [from, from + rows) are all of the thread the blocks hold (rows <= blockRows). */
  const sameThread = (from: number, rows: number): boolean => {
    if (filled < rows) {
      pidBlock.fill(blockPid, filled, rows);
      tidBlock.fill(blockTid, filled, rows);
      filled = rows;
    }
    const at = from * 4;
    const bytes = rows * 4;
    return tidBytes.compare(tidBlockBytes, 0, bytes, at, at + bytes) === 0 && pidBytes.compare(pidBlockBytes, 0, bytes, at, at + bytes) === 0;
  };
  let row = 0;
  while (row < length) {
    visit(row);
    const p = pid[row];
    const t = tid[row];
    const checked = Math.min(length, row + 1 + BLOCK_ROWS);
    row = endOfThread(pid, tid, row + 1, checked, p, t);
    if (row < checked || row === length) continue;
    if (blockPid !== p || blockTid !== t) {
      blockPid = p;
      blockTid = t;
      filled = 0;
    }
    // Blocks that double while every row is the thread's; then [row, row + span) holds the change (or is the rest).
    let block = BLOCK_ROWS;
    while (row + block <= length && sameThread(row, block)) {
      row += block;
      block = Math.min(2 * block, blockRows);
    }
    let span = Math.min(block, length - row);
    // Halves: the change is in the second half when the first is the thread's, else in the first.
    while (span > BLOCK_ROWS) {
      const half = span >>> 1;
      if (sameThread(row, half)) {
        row += half;
        span -= half;
      } else span = half;
    }
    row = endOfThread(pid, tid, row, row + span, p, t);
  }
}

/**
 * The first row in [from, end) not of thread (p, t), or `end`. The loop alone in a function (see untimedIfOrdered in
 * webview/store.ts): small, so V8 compiles it soon.
 */
function endOfThread(pid: Int32Array, tid: Int32Array, from: number, end: number, p: number, t: number): number {
  for (let row = from; row < end; row++) if (tid[row] !== t || pid[row] !== p) return row;
  return end;
}
