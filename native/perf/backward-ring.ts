// The flight-recorder ring: mapped read-only, so the kernel overwrites unconditionally; with
// write_backward it writes from the end, so data_head is always the start of the NEWEST record and
// walking forward in memory goes newest -> oldest. A snapshot pauses output, copies the data area
// linearised (head..end, then 0..head) and resumes: bytes[0] is the newest record and no record
// straddles the end of the copy.

import type { Mapping } from '../sys/libc';
import { MmapPage } from '../abi/uapi';
import type { PerfEventFd } from './events';
import type { CopyAllocator, RingCopy, SnapshotPath } from '../abi/snapshot';
import { EventRing, defaultCopyMode, type CopyMode, type RingMeta, type RingSnapshot, type RingStats } from './ring-mapping';
import { SpareCopyBuffer } from './spare-buffer';

const U64_RANGE = 1n << 64n;
/** Rings up to this size have their copy's pages touched right before the pause (snapshot says why). */
const TOUCH_BEFORE_PAUSE_MAX_BYTES = 2 << 20;

/** For a backward ring the head counts down from 0 as a u64: bytes written = 2^64 - head. */
export function backwardBytesWritten(head: bigint): bigint {
  return head === 0n ? 0n : U64_RANGE - head;
}

/** What BackwardRing.readSince copied. */
export interface FollowedBytes {
  readonly bytes: Uint8Array;
  readonly head: bigint;
  readonly written: bigint;
  readonly skippedBytes: bigint;
}

/** Bytes of the whole records at the start of `bytes` (perf_event_header: u16 size at offset 6), at most `limit`. */
function wholeRecordBytes(bytes: Uint8Array, limit: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset + 8 <= limit) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > limit) break;
    offset += size;
  }
  return offset;
}

/** The flight-recorder rings one snapshot copies together: an identity, and the rings as they are now. */
export interface RingCopyGroup {
  readonly key: object;
  rings(): readonly BackwardRing[];
  /** Threads that may decode one snapshot at once (CopyGroup.threads). */
  readonly threads: number;
}

/**
 * A flight-recorder ring: write_backward event, read-only mapping. Owns its event fd and mapping.
 */
export class BackwardRing extends EventRing {
  /** What the next snapshot copies into; warmed by whoever owns the ring when it is idle. */
  readonly spare: SpareCopyBuffer;

  /**
   * `sharedCopies`, `allocateCopy`: where snapshots copy into (see SpareCopyBuffer). `group`: the
   * rings one snapshot copies together (the recorder's), which the allocator is told of.
   */
  constructor(
    event: PerfEventFd,
    dataPages: number,
    meta: RingMeta,
    mode: CopyMode = defaultCopyMode(),
    sharedCopies = false,
    allocateCopy?: CopyAllocator,
    group?: RingCopyGroup,
  ) {
    super(event, dataPages, meta, mode, true);
    const allocate: CopyAllocator | undefined =
      allocateCopy && group
        ? (copyBytes, shared, previous) =>
            allocateCopy(copyBytes, shared, previous, {
              key: group.key,
              member: this,
              members: () => group.rings().map((ring) => ({ member: ring, copyBytes: ring.dataSize })),
              threads: group.threads,
            })
        : allocateCopy;
    this.spare = new SpareCopyBuffer(this.ring.dataSize, sharedCopies, allocate);
  }

  get mapping(): Mapping {
    return this.ring.mapping;
  }

  head(mode: CopyMode = this.mode): bigint {
    return this.ring.readU64(MmapPage.DATA_HEAD, mode);
  }

  bytesWritten(): bigint {
    return backwardBytesWritten(this.head());
  }

  /**
   * Copies the data area linearised from data_head. Call only while nothing writes the ring
   * (output paused, or the event disabled). `writtenSince` limits validBytes to what was written
   * after a given head (the gap-free pair uses the head at activation).
   */
  copyQuiescent(mode: CopyMode = this.mode, writtenSince: bigint = 0n): { bytes: Uint8Array; head: bigint; validBytes: number; written: bigint } {
    return this.copyInto(this.spare.take(), mode, writtenSince);
  }

  /** Bytes a copy from `head` holds: what was written after `writtenSince`, at most the data area. */
  private validBytesSince(writtenSince: bigint, head: bigint): number {
    const written = BigInt.asUintN(64, writtenSince - head);
    return written >= BigInt(this.ring.dataSize) ? this.ring.dataSize : Number(written);
  }

  private copyInto(bytes: Uint8Array, mode: CopyMode, writtenSince: bigint): { bytes: Uint8Array; head: bigint; validBytes: number; written: bigint } {
    const head = this.head(mode);
    const written = BigInt.asUintN(64, writtenSince - head);
    const size = this.ring.dataSize;
    const validBytes = this.validBytesSince(writtenSince, head);
    const start = Number(head & BigInt(size - 1));
    // Only what was written: a ring that has not wrapped (an idle CPU's, or a new one) costs its
    // records, not its size, in the pause window, where the CPU's records are lost. Linearised
    // from data_head, the valid bytes are the first validBytes; the rest of `bytes` is never read.
    this.ring.copyLinear(start, validBytes, bytes, mode);
    return { bytes, head, validBytes, written };
  }

  /**
   * Pause output -> read head -> copy -> resume. The buffer (the warmed spare when there is one) is taken before the pause.
   * `writtenSince`: only what was written after that head (a gap-free pair's live ring, since it went live).
   */
  snapshot(mode: CopyMode = this.mode, writtenSince = 0n, lostSinceOpen?: () => bigint | null): RingSnapshot {
    const bytes = this.spare.take();
    // A small ring's window is a fraction of a millisecond, and after the process slept a good part
    // of it went to misses on the two buffers' pages (1 MiB, load 18: 1.5x C's window, 1.27x with
    // their pages touched first). A large ring's copy dwarfs them, and touching it would cost ms here.
    // Only the part of the copy the pause will write (what is written now: no more than after the pause).
    if (this.ring.dataSize <= TOUCH_BEFORE_PAUSE_MAX_BYTES) this.ring.touchPages(bytes.subarray(0, this.validBytesSince(writtenSince, this.head(mode))), mode);
    const started = process.hrtime.bigint();
    this.event.pauseOutput(true);
    let result;
    try {
      result = this.copyInto(bytes, mode, writtenSince);
    } finally {
      this.event.pauseOutput(false);
    }
    const pauseWindowNs = Number(process.hrtime.bigint() - started);
    const lost = lostSinceOpen ? lostSinceOpen() : this.lostSinceOpen();
    return { copy: this.toCopy(result.bytes, result.validBytes, result.written, 'paused', lost), pauseWindowNs };
  }

  /**
   * What the kernel wrote after data_head was `sinceHead`, newest first, copied WITHOUT pausing output
   * (a follower's read: it must never make the flight recorder lose a record). The kernel goes on
   * writing below data_head meanwhile; a byte at head-space offset x is overwritten once data_head
   * has reached x - dataSize, so after the copy data_head is read again and only what the kernel
   * cannot have reached is kept, cut back to whole records. `skippedBytes`: written since `sinceHead`
   * and not in the copy (overwritten before or during the read). `head`: data_head as the caller read
   * it (a follower reads every ring's head before copying any); returned as the next read's `sinceHead`.
   */
  readSince(sinceHead: bigint, head: bigint = this.head(), mode: CopyMode = this.mode): FollowedBytes {
    const written = BigInt.asUintN(64, sinceHead - head);
    if (written === 0n) return { bytes: new Uint8Array(0), head, written, skippedBytes: 0n };
    const size = this.ring.dataSize;
    const take = written >= BigInt(size) ? size : Number(written);
    const bytes = new Uint8Array(take);
    this.ring.copyLinear(Number(head & BigInt(size - 1)), take, bytes, mode);
    const writtenDuring = BigInt.asUintN(64, head - this.head(mode));
    const intact = writtenDuring >= BigInt(size) ? 0 : Math.min(take, size - Number(writtenDuring));
    const whole = wholeRecordBytes(bytes, intact);
    return { bytes: bytes.subarray(0, whole), head, written, skippedBytes: written - BigInt(whole) };
  }

  /** A copy's RingCopy; the loss count is read now, so a pause window just ended is in it. */
  toCopy(bytes: Uint8Array, validBytes: number, bytesWritten: bigint, path: SnapshotPath, lostSinceOpen = this.lostSinceOpen()): RingCopy {
    return {
      ...this.meta,
      direction: 'backward',
      bytes,
      validBytes,
      dataSize: this.ring.dataSize,
      bytesWritten,
      ...(lostSinceOpen !== null ? { lostSinceOpen } : {}),
      path,
      copiedAtNs: performance.now() * 1e6,
    };
  }

  stats(path: SnapshotPath = 'paused'): RingStats {
    const head = this.head();
    const written = backwardBytesWritten(head);
    const valid = written >= BigInt(this.dataSize) ? this.dataSize : Number(written);
    return {
      ringId: this.meta.ringId,
      label: this.meta.label,
      direction: 'backward',
      head,
      dataSize: this.dataSize,
      bytesWritten: written,
      fillPercent: (valid / this.dataSize) * 100,
      path,
    };
  }

  /** Unmaps and closes the event, and drops the spare. Idempotent. */
  dispose(): void {
    this.spare.release();
    this.ring.release(this.event);
  }
}
