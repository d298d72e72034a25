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

/** Rows checked one by one after a run's first row before the rest of the run is compared a block at a time. */
const BLOCK_ROWS = 1024;

/**
 * The first row of every run of rows of one thread (equal pid and tid), in row order: `visit(row)` for each. Rows of a
 * thread come in long runs (a CPU's ring holds what ran there), so after a run's first BLOCK_ROWS rows the rest of it is
 * compared with memcmp, a block at a time; rows whose thread changes often are compared one by one as before.
 */
export function forEachThreadRun(pid: Int32Array, tid: Int32Array, length: number, visit: (row: number) => void): void {
  if (pid.length < length || tid.length < length) throw new RangeError(`pid and tid hold ${pid.length} and ${tid.length} rows, not ${length}`);
  const pidBytes = bytesOf(pid);
  const tidBytes = bytesOf(tid);
  const pidBlock = new Int32Array(BLOCK_ROWS);
  const tidBlock = new Int32Array(BLOCK_ROWS);
  const pidBlockBytes = bytesOf(pidBlock);
  const tidBlockBytes = bytesOf(tidBlock);
  const blockBytes = BLOCK_ROWS * Int32Array.BYTES_PER_ELEMENT;
  // The thread the blocks hold (filled only for a run longer than BLOCK_ROWS; NaN: none yet).
  let blockPid = NaN;
  let blockTid = NaN;
  let row = 0;
  while (row < length) {
    visit(row);
    const p = pid[row];
    const t = tid[row];
    const checked = Math.min(length, row + 1 + BLOCK_ROWS);
    row = endOfThread(pid, tid, row + 1, checked, p, t);
    if (row < checked || row === length) continue;
    if (blockPid !== p || blockTid !== t) {
      pidBlock.fill(p);
      tidBlock.fill(t);
      blockPid = p;
      blockTid = t;
    }
    while (
      row + BLOCK_ROWS <= length &&
      tidBytes.compare(tidBlockBytes, 0, blockBytes, row * 4, row * 4 + blockBytes) === 0 &&
      pidBytes.compare(pidBlockBytes, 0, blockBytes, row * 4, row * 4 + blockBytes) === 0
    )
      row += BLOCK_ROWS;
    // The block that differs (or the rows past the last whole block): the change is in it.
    row = endOfThread(pid, tid, row, Math.min(length, row + BLOCK_ROWS), p, t);
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
