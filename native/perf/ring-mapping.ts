// perf ring buffers as seen from user space: a header page (struct perf_event_mmap_page) followed
// by 2^n data pages. The mapping and the raw reads on it, shared by both ring kinds
// (backward-ring.ts, forward-ring.ts) and by rings mapped from borrowed fds (borrowed.ts).

import { Mapping, pageSize, PROT_READ, PROT_WRITE, zeroCopySupported } from '../sys/libc';
import { MmapPage } from '../abi/uapi';
import { isPowerOfTwo } from '../abi/units';
import type { PerfEventFd } from './events';
import type { RingCopy, SnapshotPath } from '../abi/snapshot';

export type CopyMode = 'zero-copy' | 'memcpy';

/** Every 4 KiB: one touch per page whatever the page size. */
const TOUCH_STRIDE = 4096;

/** Where a ring's records come from, carried into every RingCopy. */
export interface RingMeta {
  readonly ringId: number;
  readonly label: string;
  readonly cpu: number;
  readonly tid: number;
  readonly defaultEvent: number;
}

export interface RingSnapshot {
  readonly copy: RingCopy;
  /** Nanoseconds between issuing the pause ioctl and the resume ioctl returning (0 for forward rings). */
  readonly pauseWindowNs: number;
}

export interface RingStats {
  readonly ringId: number;
  readonly label: string;
  readonly direction: 'backward' | 'forward';
  readonly head: bigint;
  readonly dataSize: number;
  readonly bytesWritten: bigint;
  /** Share of the data area holding valid records, 0..100. */
  readonly fillPercent: number;
  readonly path: SnapshotPath;
}

export function defaultCopyMode(): CopyMode {
  return zeroCopySupported() ? 'zero-copy' : 'memcpy';
}

function checkDataPages(dataPages: number): void {
  if (!isPowerOfTwo(dataPages)) {
    throw new RangeError(`ring data pages must be a power of two >= 1, got ${dataPages}`);
  }
}

/**
 * Records the kernel could not write into one ring since it opened, summed over every fd writing
 * into it (PERF_FORMAT_LOST); null when any of them was opened without that read format.
 */
export function lostByWriters(writers: readonly PerfEventFd[]): bigint | null {
  let total = 0n;
  for (const writer of writers) {
    const lost = writer.lostSamples();
    if (lost === null) return null;
    total += lost;
  }
  return total;
}

/**
 * What both ring kinds own (BackwardRing, ForwardRing): one event's ring mapping and every fd whose
 * records go into it (the event, then those redirected with SET_OUTPUT), whose losses are the ring's.
 * `backward`: the kind the subclass is, checked against the event before anything is mapped.
 */
export abstract class EventRing {
  protected readonly ring: RingMapping;
  private readonly writers: PerfEventFd[];

  constructor(
    readonly event: PerfEventFd,
    dataPages: number,
    readonly meta: RingMeta,
    public mode: CopyMode,
    backward: boolean,
  ) {
    if ((event.attr.flags.writeBackward === true) !== backward)
      throw new Error(`${new.target.name} needs an event ${backward ? 'opened with' : 'without'} writeBackward (${event.name})`);
    // A backward ring is mapped read-only, so the kernel overwrites unconditionally; a forward one is consumed through data_tail.
    this.ring = new RingMapping(event.fd, dataPages, !backward, event.name);
    this.writers = [event];
  }

  /** Counts `fd` among the writers of this ring (it was redirected here with SET_OUTPUT). */
  addWriter(fd: PerfEventFd): void {
    this.writers.push(fd);
  }

  /** Records the kernel could not write into this ring since it opened (see lostByWriters). */
  lostSinceOpen(): bigint | null {
    return lostByWriters(this.writers);
  }

  get dataSize(): number {
    return this.ring.dataSize;
  }
}

/** The mmap of one perf fd and the raw reads on it, shared by both ring kinds and by rings mapped from borrowed fds. */
export class RingMapping {
  readonly mapping: Mapping;
  readonly dataOffset: number;
  readonly dataSize: number;
  private zeroCopyBytes: Uint8Array | null = null;
  /** The header page as 64-bit words: data_head and data_tail are read and written whole through it. */
  private headerWords: BigUint64Array | null = null;
  private zeroCopyRefused = false;

  constructor(
    fd: number,
    readonly dataPages: number,
    writable: boolean,
    eventName: string,
  ) {
    checkDataPages(dataPages);
    const page = pageSize();
    this.mapping = Mapping.map(fd, (dataPages + 1) * page, writable ? PROT_READ | PROT_WRITE : PROT_READ, { eventName });
    // data_offset/data_size are filled by every kernel since 4.1; fall back to the classic layout.
    const offset = Number(this.mapping.readU64(MmapPage.DATA_OFFSET));
    const size = Number(this.mapping.readU64(MmapPage.DATA_SIZE));
    this.dataOffset = offset || page;
    this.dataSize = size || dataPages * page;
  }

  private zeroCopy(): { bytes: Uint8Array; header: BigUint64Array } {
    if (!this.zeroCopyBytes || !this.headerWords) {
      const buffer = this.mapping.view();
      this.zeroCopyBytes = new Uint8Array(buffer, this.dataOffset, this.dataSize);
      this.headerWords = new BigUint64Array(buffer, 0, this.dataOffset / 8);
    }
    return { bytes: this.zeroCopyBytes, header: this.headerWords };
  }

  /**
   * The mode that will actually be used: a runtime that refuses external ArrayBuffers (Electron's
   * V8 sandbox) makes koffi.view throw, and then this mapping silently falls back to memcpy.
   */
  effectiveMode(mode: CopyMode): CopyMode {
    if (mode === 'memcpy' || this.zeroCopyRefused) return 'memcpy';
    try {
      this.zeroCopy();
      return 'zero-copy';
    } catch {
      // koffi.view refused (a V8 sandbox that forbids external ArrayBuffers): remembered, and memcpy serves
      this.zeroCopyRefused = true;
      return 'memcpy';
    }
  }

  /**
   * One header word, read whole. The kernel updates data_head with a single 64-bit store while it
   * writes; a byte-wise read (DataView) can mix two values. Atomics.load is one 64-bit load with
   * sequentially consistent ordering, which gives the acquire the uapi asks for after loading
   * data_head (a read barrier on arm64). Without a view over the mapping (runtimes that refuse
   * external buffers), an 8-byte memcpy is re-read until two reads agree.
   */
  readU64(offset: number, mode: CopyMode): bigint {
    if (this.effectiveMode(mode) === 'zero-copy') return Atomics.load(this.zeroCopy().header, offset / 8);
    let value = this.mapping.readU64(offset);
    for (let again = this.mapping.readU64(offset); again !== value; again = this.mapping.readU64(offset)) value = again;
    return value;
  }

  /** Publishes data_tail whole, after every read of the data it frees (a release store; a full barrier on arm64). */
  writeU64(offset: number, value: bigint, mode: CopyMode): void {
    if (this.effectiveMode(mode) === 'zero-copy') Atomics.store(this.zeroCopy().header, offset / 8, value);
    else this.mapping.writeU64(offset, value);
  }

  /**
   * Touches one byte per page of the data area (read) and of `into` (written) without copying: run
   * just before a pause, it brings their translations and page-table lines back after the process
   * slept, so the pause itself does not take those misses. Zero-copy mode only (the memcpy path has
   * no view to read through).
   */
  touchPages(into: Uint8Array, mode: CopyMode): void {
    if (this.effectiveMode(mode) !== 'zero-copy') return;
    const bytes = this.zeroCopy().bytes;
    let sum = 0;
    for (let at = 0; at < bytes.length; at += TOUCH_STRIDE) sum += bytes[at];
    for (let at = 0; at < into.length; at += TOUCH_STRIDE) into[at] = 0;
    // Read so the loads are not dropped as dead code; the sum itself means nothing.
    if (sum < 0) throw new Error('unreachable');
  }

  /** Copies `length` bytes of the data area starting at ring offset `start` (wrapping) into `into`. */
  copyLinear(start: number, length: number, into: Uint8Array, mode: CopyMode): void {
    const first = Math.min(length, this.dataSize - start);
    const second = length - first;
    if (this.effectiveMode(mode) === 'zero-copy') {
      const bytes = this.zeroCopy().bytes;
      into.set(bytes.subarray(start, start + first), 0);
      if (second > 0) into.set(bytes.subarray(0, second), first);
    } else {
      this.mapping.copyOut(this.dataOffset + start, into, 0, first);
      if (second > 0) this.mapping.copyOut(this.dataOffset, into, first, second);
    }
  }

  unmap(): void {
    this.zeroCopyBytes = null;
    this.headerWords = null;
    this.mapping.unmap();
  }

  /** Unmaps, then closes the event that owns the ring, even if unmapping failed. Both steps are idempotent. */
  release(event: PerfEventFd): void {
    try {
      this.unmap();
    } finally {
      event.dispose();
    }
  }
}
