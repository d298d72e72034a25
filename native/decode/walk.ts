// Walking a linearised ring copy record by record, and linearising a raw ring data area.
//
// Backward (flight-recorder) ring: bytes[0] is the record at data_head, the NEWEST; walking forward
// in memory goes toward older records. The kernel guarantees whole records from head until the
// total reaches the data size, so when the ring has wrapped the last record may run past the valid
// region: its tail was overwritten by newer records, and it is dropped ('truncated-oldest').
// Forward (side-band) ring: bytes[0] is the oldest record.

import { RecordType } from '../abi/uapi';
import { isPowerOfTwo } from '../abi/units';
import type { DecodeAnomaly } from './types';
import type { RingCopy } from '../abi/snapshot';

export interface RingWalk {
  /** Byte offsets of whole records, OLDEST first whatever the ring direction. */
  readonly offsets: Uint32Array;
  /** Sum of the sizes of those records. */
  readonly retainedBytes: number;
  readonly anomalies: DecodeAnomaly[];
}

/** What one pass over a ring's record headers finds, without storing any per-record offset. */
export interface RingScan {
  /** Number of whole records (the walk's length). */
  readonly count: number;
  /** Sum of their sizes: they are contiguous from byte 0, so also where the walk stopped. */
  readonly retainedBytes: number;
  readonly anomalies: DecodeAnomaly[];
}

/**
 * Each aligned copy's u32 view, made once: a decode asks for it several times, and a recorder's copy
 * buffers (and the bench's one copy) are decoded snapshot after snapshot; a view over a WebAssembly
 * memory took about a microsecond to make. A view sees whatever the copy holds now, so it stays right.
 */
const u32Views = new WeakMap<Uint8Array, Uint32Array>();

/** A 4-byte aligned u32 view of a ring copy (copies only when the copy is oddly aligned). */
export function u32View(bytes: Uint8Array): Uint32Array {
  if ((bytes.byteOffset & 3) === 0) {
    let view = u32Views.get(bytes);
    if (!view) {
      view = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
      u32Views.set(bytes, view);
    }
    return view;
  }
  const aligned = new Uint8Array(bytes.length);
  aligned.set(bytes);
  return new Uint32Array(aligned.buffer, 0, bytes.length >>> 2);
}

/** True when a whole record starts at `offset`: a header fits, its size is a multiple of 8 (at least 8) and it ends by `end`. */
export function isWholeRecord(words: Uint32Array, offset: number, end: number): boolean {
  if (offset + 8 > end) return false;
  // perf_event_header.size is the u16 at +6: the high half of the record's second u32.
  const size = words[(offset >>> 2) + 1] >>> 16;
  return size >= 8 && (size & 7) === 0 && offset + size <= end;
}

/**
 * Why a walk that stopped at `offset` stopped there: null when it ended quietly (the valid bytes
 * ran out), otherwise the anomaly: a size of zero or below the header, not a multiple of 8, or
 * running past the valid bytes ('truncated-oldest' when a wrapped backward ring's oldest record
 * was partly overwritten). The valid region holds only what the kernel wrote, and it never writes
 * a zero-size record, so a zero there is damage, and the rest of the ring is reported as dropped.
 */
export function walkEndAnomaly(ring: RingCopy, words: Uint32Array, offset: number, end: number): DecodeAnomaly | null {
  if (offset + 8 > end) return null;
  const size = words[(offset >>> 2) + 1] >>> 16;
  if (size === 0)
    return {
      ringId: ring.ringId,
      offset,
      kind: 'size-too-small',
      detail: `record size 0 inside the valid data; the ${end - offset} bytes from here on are dropped`,
    };
  if (size < 8) return { ringId: ring.ringId, offset, kind: 'size-too-small', detail: `record size ${size} is smaller than its 8-byte header` };
  if ((size & 7) !== 0) return { ringId: ring.ringId, offset, kind: 'size-misaligned', detail: `record size ${size} is not a multiple of 8` };
  if (offset + size <= end) return null; // a whole record: the walk did not stop because of it
  // A backward ring whose valid region is the whole data area has wrapped: its last record may be cut.
  if (ring.direction === 'backward' && end >= ring.dataSize) {
    return { ringId: ring.ringId, offset, kind: 'truncated-oldest', detail: `oldest record (${size} bytes) partly overwritten; dropped` };
  }
  return { ringId: ring.ringId, offset, kind: 'size-past-end', detail: `record size ${size} runs ${offset + size - end} bytes past the valid data` };
}

/** Where a ring copy's valid bytes end: its validBytes, never past the bytes it holds. */
export function validEnd(ring: RingCopy): number {
  return Math.max(0, Math.min(ring.validBytes, ring.bytes.length));
}

/**
 * Counts the whole records of a ring copy from byte 0 on (memory order: newest first for a backward
 * ring). Never throws: the walk ends at the first header that is not a whole record, with the
 * anomaly walkEndAnomaly names. `words` is u32View(ring.bytes) when the caller already has it.
 */
export function scanRing(ring: RingCopy, words: Uint32Array = u32View(ring.bytes)): RingScan {
  const end = validEnd(ring);
  let count = 0;
  let offset = 0;
  while (isWholeRecord(words, offset, end)) {
    count++;
    offset += words[(offset >>> 2) + 1] >>> 16;
  }
  const stop = walkEndAnomaly(ring, words, offset, end);
  return { count, retainedBytes: offset, anomalies: stop ? [stop] : [] };
}

/** Finds every whole record of a ring copy (see scanRing), offsets OLDEST first whatever the direction. */
export function walkRing(ring: RingCopy): RingWalk {
  const words = u32View(ring.bytes);
  const scan = scanRing(ring, words);
  const count = scan.count;
  // Second header pass straight into place (a backward ring fills from the end): no scratch list to reverse.
  const offsets = new Uint32Array(count);
  const backward = ring.direction === 'backward';
  let offset = 0;
  for (let i = 0; i < count; i++) {
    offsets[backward ? count - 1 - i : i] = offset;
    offset += words[(offset >>> 2) + 1] >>> 16;
  }
  if (backward) {
    const nextLost = (from: number): number => {
      for (let row = from; row < count; row++) if (words[offsets[row] >>> 2] === RecordType.LOST) return row;
      return -1;
    };
    placeLostBeforePartner(nextLost, (a, b) => {
      const kept = offsets[a];
      offsets[a] = offsets[b];
      offsets[b] = kept;
    });
  }
  return { offsets, retainedBytes: scan.retainedBytes, anomalies: scan.anomalies };
}

/**
 * Puts every PERF_RECORD_LOST of a backward ring, given as rows OLDEST first, back in the place it
 * was written. The kernel reports a loss inside the output of the next record: one reservation
 * holds the LOST record and then that record, LOST at the lower address. A backward ring's
 * reservations run toward lower addresses, so reversing its memory order puts that LOST one row
 * late, after the record that followed the gap; swapping the two restores the order the kernel
 * wrote them in (LOST, then its partner). A LOST record is never another's partner, and a LOST in
 * the oldest row has no partner left in the copy. `nextLost(from)` is the first LOST row >= from, or -1.
 */
export function placeLostBeforePartner(nextLost: (fromRow: number) => number, swap: (a: number, b: number) => void): void {
  for (let row = nextLost(1); row > 0; row = nextLost(row + 1)) swap(row - 1, row);
}

export interface LinearizedRing {
  /** Same length as the data area: valid records first (see RingCopy.bytes), the rest as found. */
  readonly bytes: Uint8Array;
  readonly validBytes: number;
  /** Total bytes the kernel wrote (backward: -data_head; forward: data_head). */
  readonly bytesWritten: bigint;
}

const U64 = 1n << 64n;

/**
 * Turns a raw ring data area (power-of-two size) plus data_head into the linearised layout of
 * RingCopy.bytes, copying the two halves around the wrap point in order so that no record
 * straddles the end. Backward: data_head counts down from 0 (as a u64) and points at the newest
 * record. Forward: records run from data_tail (default: as far back as the ring holds) to data_head.
 */
export function linearizeRing(ring: Uint8Array, head: bigint, direction: 'backward' | 'forward', tail?: bigint): LinearizedRing {
  const size = ring.length;
  if (!isPowerOfTwo(size)) throw new RangeError(`ring data area must be a power of two bytes, got ${size}`);
  const headU = BigInt.asUintN(64, head);
  const mask = BigInt(size - 1);
  let start: number;
  let validBytes: number;
  let bytesWritten: bigint;
  if (direction === 'backward') {
    bytesWritten = headU === 0n ? 0n : U64 - headU;
    validBytes = bytesWritten >= BigInt(size) ? size : Number(bytesWritten);
    start = Number(headU & mask);
  } else {
    bytesWritten = headU;
    const tailU = tail === undefined ? (headU > BigInt(size) ? headU - BigInt(size) : 0n) : BigInt.asUintN(64, tail);
    const pending = headU >= tailU ? headU - tailU : 0n;
    validBytes = pending >= BigInt(size) ? size : Number(pending);
    start = Number(tailU & mask);
  }
  const bytes = new Uint8Array(size);
  bytes.set(ring.subarray(start), 0);
  bytes.set(ring.subarray(0, start), size - start);
  return { bytes, validBytes, bytesWritten };
}
