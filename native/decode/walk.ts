// Walking a linearised ring copy record by record, and linearising a raw ring data area.
//
// Backward (flight-recorder) ring: bytes[0] is the record at data_head, the NEWEST; walking forward
// in memory goes toward older records. The kernel guarantees whole records from head until the
// total reaches the data size, so when the ring has wrapped the last record may run past the valid
// region: its tail was overwritten by newer records, and it is dropped ('truncated-oldest').
// Forward (side-band) ring: bytes[0] is the oldest record.

import type { DecodeAnomaly, RingCopy } from './types';

export interface RingWalk {
  /** Byte offsets of whole records, OLDEST first whatever the ring direction. */
  readonly offsets: Uint32Array;
  /** Sum of the sizes of those records. */
  readonly retainedBytes: number;
  readonly anomalies: DecodeAnomaly[];
}


/**
 * Finds every whole record of a ring copy. Never throws: a zero size ends the walk quietly (a ring
 * that has not filled up yet is zero beyond its data), a size below the header, not a multiple of
 * 8, or running past the valid bytes ends it with a counted anomaly.
 */
export function walkRing(ring: RingCopy): RingWalk {
  const bytes = ring.bytes;
  const end = Math.max(0, Math.min(ring.validBytes, bytes.length));
  const anomalies: DecodeAnomaly[] = [];
  const found = new Uint32Array((end >>> 3) + 1);
  let count = 0;
  let offset = 0;
  let retainedBytes = 0;
  // A backward ring whose valid region is the whole data area has wrapped: its last record may be cut.
  const wrapped = ring.direction === 'backward' && end >= ring.dataSize;
  // perf_event_header.size is the u16 at +6: read it as the high half of the second u32 when the
  // copy is 4-byte aligned (the usual case), byte by byte otherwise.
  const words = (bytes.byteOffset & 3) === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2) : null;
  while (offset + 8 <= end) {
    const size = words !== null ? words[(offset >>> 2) + 1] >>> 16 : bytes[offset + 6] | (bytes[offset + 7] << 8);
    if (size === 0) break;
    if (size < 8) {
      anomalies.push({ ringId: ring.ringId, offset, kind: 'size-too-small', detail: `record size ${size} is smaller than its 8-byte header` });
      break;
    }
    if ((size & 7) !== 0) {
      anomalies.push({ ringId: ring.ringId, offset, kind: 'size-misaligned', detail: `record size ${size} is not a multiple of 8` });
      break;
    }
    if (offset + size > end) {
      if (wrapped) {
        anomalies.push({ ringId: ring.ringId, offset, kind: 'truncated-oldest', detail: `oldest record (${size} bytes) partly overwritten; dropped` });
      } else {
        anomalies.push({ ringId: ring.ringId, offset, kind: 'size-past-end', detail: `record size ${size} runs ${offset + size - end} bytes past the valid data` });
      }
      break;
    }
    found[count++] = offset;
    retainedBytes += size;
    offset += size;
  }
  const offsets = new Uint32Array(count);
  if (ring.direction === 'backward') {
    for (let i = 0; i < count; i++) offsets[i] = found[count - 1 - i];
  } else {
    offsets.set(found.subarray(0, count));
  }
  return { offsets, retainedBytes, anomalies };
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
  if (size === 0 || (size & (size - 1)) !== 0) throw new RangeError(`ring data area must be a power of two bytes, got ${size}`);
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
