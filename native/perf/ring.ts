// perf ring buffers as seen from user space: a header page (struct perf_event_mmap_page) followed
// by 2^n data pages. Two kinds here:
//  - BackwardRing: the flight recorder. Mapped read-only, so the kernel overwrites unconditionally;
//    with write_backward it writes from the end, so data_head is always the start of the NEWEST
//    record and walking forward in memory goes newest -> oldest. A snapshot pauses output, copies
//    the data area linearised (head..end, then 0..head) and resumes: bytes[0] is the newest record
//    and no record straddles the end of the copy.
//  - ForwardRing: the side-band stream. Mapped writable, so the kernel never overwrites unread
//    data; we copy [data_tail, data_head) and then publish data_tail = data_head.
// A GapFreeRingPair keeps two backward rings for one event and swaps them instead of pausing.

import { Mapping, pageSize, PROT_READ, PROT_WRITE, zeroCopySupported } from '../sys/libc';
import { MmapPage } from '../abi/uapi';
import { isPowerOfTwo } from '../abi/units';
import { adoptEventFd, type PerfEventFd } from './events';
import type { PerfEventAttr } from '../abi/attr';
import { plainCopyBuffer, type CopyAllocator, type CopyBuffer, type RingCopy, type SnapshotPath } from '../abi/snapshot';

export type CopyMode = 'zero-copy' | 'memcpy';

const U64_RANGE = 1n << 64n;

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

/**
 * The buffer the next snapshot of one ring copies into, with its pages already faulted in.
 *
 * Why: records the kernel produces while output is paused are lost, so the pause window should be
 * a bare memcpy. Copying into a fresh buffer also takes one page fault per 4 KiB inside that
 * window: at 64 MiB that is about 30 ms instead of 10 ms on the bench machine. Writing one byte
 * per page ahead of time, in slices while the caller is idle, moves that cost out of the window.
 * The price is one data area of memory per ring. A buffer handed to a snapshot is never reused.
 */
export class SpareCopyBuffer {
  /** The smallest page size Linux uses: touching every 4 KiB faults in every page whatever the real size. */
  private static readonly TOUCH_STRIDE = 4096;
  private buffer: CopyBuffer | null = null;
  private warmedBytes = 0;
  /** The copy taken last, while anything else holds it: the allocator sizes the next one's room from it. */
  private previous: WeakRef<Uint8Array> | null = null;

  /**
   * `shared`: copies land in SharedArrayBuffer memory, which worker threads read without a copy.
   * `allocate`: where copies go (the decoder's: with room for the ring's columns after the copy,
   * warmed here with it); default a plain buffer of `size` bytes.
   */
  constructor(
    readonly size: number,
    readonly shared = false,
    private readonly allocate: CopyAllocator = plainCopyBuffer,
  ) {}

  /** True when the whole spare is faulted in. */
  get ready(): boolean {
    return this.buffer !== null && this.warmedBytes >= this.buffer.whole.length;
  }

  private allocated(): CopyBuffer {
    const buffer = this.allocate(this.size, this.shared, this.previous?.deref() ?? null);
    this.previous = null;
    return buffer;
  }

  /** Faults in up to `budgetBytes` more of the spare (allocating it first); returns `ready`. */
  warm(budgetBytes = Infinity): boolean {
    if (!this.buffer) {
      this.buffer = this.allocated();
      this.warmedBytes = 0;
    }
    const bytes = this.buffer.whole;
    const stop = Math.min(bytes.length, this.warmedBytes + budgetBytes);
    const stride = SpareCopyBuffer.TOUCH_STRIDE;
    for (let at = this.warmedBytes; at < stop; at += stride) bytes[at] = 0;
    this.warmedBytes = stop;
    return this.ready;
  }

  /** The spare (even when only partly warmed: what is faulted in still helps), else a fresh buffer. */
  take(): Uint8Array {
    const bytes = (this.buffer ?? this.allocated()).bytes;
    this.buffer = null;
    this.warmedBytes = 0;
    this.previous = new WeakRef(bytes);
    return bytes;
  }

  /** Drops the spare (its memory goes back with the next GC). */
  release(): void {
    this.buffer = null;
    this.warmedBytes = 0;
    this.previous = null;
  }
}

/** Bytes of spare copy buffer faulted in per event-loop turn: a few ms, so the loop stays responsive. */
const WARM_SLICE_BYTES = 8 << 20;

/**
 * Warms the spare copy buffers of a set of backward rings in the background, one slice per
 * event-loop turn. Whoever owns the rings calls `schedule()` after opening them and after each
 * snapshot (which takes the spares), and `dispose()` when it closes them.
 */
export class SpareBufferWarmer {
  private tick: NodeJS.Immediate | null = null;
  private waiters: (() => void)[] = [];
  private disposed = false;

  /** `rings` is asked anew at every turn, so rings added or swapped later are warmed too. */
  constructor(
    private readonly rings: () => readonly BackwardRing[],
    private readonly enabled = true,
  ) {}

  schedule(): void {
    if (!this.enabled || this.disposed || this.tick) return;
    const step = () => {
      this.tick = null;
      if (this.disposed) return;
      const cold = this.rings().find((ring) => !ring.spare.ready);
      if (!cold) {
        this.settle();
        return;
      }
      cold.spare.warm(WARM_SLICE_BYTES);
      // Not unref'd: an unref'd immediate lets the loop block in poll between slices. Warming ends
      // on its own within a few turns per ring, and dispose cancels it.
      this.tick = setImmediate(step);
    };
    this.tick = setImmediate(step);
  }

  /** Resolves once every spare is warm (at once when warming is off or disposed). */
  whenWarm(): Promise<void> {
    if (!this.enabled || this.disposed || this.rings().every((ring) => ring.spare.ready)) return Promise.resolve();
    this.schedule();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  dispose(): void {
    this.disposed = true;
    if (this.tick) clearImmediate(this.tick);
    this.tick = null;
    this.settle();
  }

  private settle(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
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
export class BackwardRing {
  private readonly ring: RingMapping;
  /** What the next snapshot copies into; warmed by whoever owns the ring when it is idle. */
  readonly spare: SpareCopyBuffer;
  /** Every fd whose records go into this ring: its own event, then those redirected with SET_OUTPUT. */
  private readonly writers: PerfEventFd[];

  /**
   * `sharedCopies`, `allocateCopy`: where snapshots copy into (see SpareCopyBuffer). `group`: the
   * rings one snapshot copies together (the recorder's), which the allocator is told of.
   */
  constructor(
    readonly event: PerfEventFd,
    dataPages: number,
    readonly meta: RingMeta,
    public mode: CopyMode = defaultCopyMode(),
    sharedCopies = false,
    allocateCopy?: CopyAllocator,
    group?: RingCopyGroup,
  ) {
    if (!event.attr.flags.writeBackward) throw new Error(`BackwardRing needs an event opened with writeBackward (${event.name})`);
    this.ring = new RingMapping(event.fd, dataPages, false, event.name);
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

  private copyInto(bytes: Uint8Array, mode: CopyMode, writtenSince: bigint): { bytes: Uint8Array; head: bigint; validBytes: number; written: bigint } {
    const head = this.head(mode);
    const written = BigInt.asUintN(64, writtenSince - head);
    const size = this.ring.dataSize;
    const validBytes = written >= BigInt(size) ? size : Number(written);
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

/**
 * The side-band ring: writable mapping, consumed through data_tail, never paused. Owns its event.
 *
 * A forward ring that nobody empties stops taking records once it is full, and the kernel reports
 * the loss only after space is freed: COMM/MMAP2/FORK/EXIT of busy targets would vanish between
 * snapshots. So whoever owns the ring calls drain() often (the Recorder does, on a short timer);
 * drained records are held here, oldest first, until the next read() hands them to a snapshot.
 * The held bytes are bounded: past MAX_HELD_BYTES the oldest chunks are dropped and counted.
 */
export class ForwardRing {
  /** Upper bound of drained-but-unread bytes kept per ring. */
  static readonly MAX_HELD_BYTES = 64 << 20;
  private readonly ring: RingMapping;
  private consumed = 0n;
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** Bytes dropped from `held` (oldest first) because the bound was reached, since the last read(). */
  private dropped = 0n;
  private readonly taps = new Set<ForwardTap>();

  /** Every fd whose records go into this ring: its own event, then those redirected with SET_OUTPUT. */
  private readonly writers: PerfEventFd[];

  constructor(
    readonly event: PerfEventFd,
    dataPages: number,
    readonly meta: RingMeta,
    public mode: CopyMode = defaultCopyMode(),
  ) {
    if (event.attr.flags.writeBackward) throw new Error(`ForwardRing needs an event without writeBackward (${event.name})`);
    this.ring = new RingMapping(event.fd, dataPages, true, event.name);
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

  head(): bigint {
    return this.ring.readU64(MmapPage.DATA_HEAD, this.mode);
  }

  /**
   * Moves what the kernel wrote since the last drain into the held store and frees that ring space. Returns the bytes moved.
   * `upToHead`: only up to a data_head read earlier (a follower's cut across every ring), not the present one.
   */
  drain(mode: CopyMode = this.mode, upToHead?: bigint): number {
    const pending = this.pending(mode, true, upToHead);
    if (pending.byteLength === 0) return 0;
    for (const tap of this.taps) tap.push(pending);
    this.held.push(pending);
    this.heldBytes += pending.byteLength;
    while (this.heldBytes > ForwardRing.MAX_HELD_BYTES && this.held.length > 1) {
      const oldest = this.held.shift()!;
      this.heldBytes -= oldest.byteLength;
      this.dropped += BigInt(oldest.byteLength);
    }
    return pending.byteLength;
  }

  /**
   * Consumes what the kernel wrote since the last drain and hands it over instead of holding it
   * (a keeper spools it): `start` is its position in the ring's record stream (the data_tail it was read from).
   */
  takePending(mode: CopyMode = this.mode): { start: bigint; bytes: Uint8Array } {
    const start = this.consumed;
    const bytes = this.pending(mode, true);
    if (bytes.byteLength > 0) for (const tap of this.taps) tap.push(bytes);
    return { start, bytes };
  }

  /**
   * A follower's view of the side-band: every chunk consumed from now on (by drain, read or
   * takePending), whoever consumes it, until the tap is closed; `includeHeld`: also what is drained
   * and not yet read. Chunks are shared, never copied.
   */
  tap(includeHeld = false): ForwardTap {
    const tap = new ForwardTap(this, () => this.taps.delete(tap));
    // What was drained before and not read by a snapshot yet: a follower from the recording's start needs it.
    if (includeHeld) for (const chunk of this.held) tap.push(chunk);
    this.taps.add(tap);
    return tap;
  }

  /** Everything held and not yet consumed, without consuming it (the next read() returns it again). */
  peek(mode: CopyMode = this.mode): RingCopy {
    return this.copyOf([...this.held, this.pending(mode, false)], this.dropped);
  }

  /** Everything drained since the last read plus what is pending now (oldest first), handing the space back to the kernel. */
  read(mode: CopyMode = this.mode): RingSnapshot {
    this.drain(mode);
    const copy = this.copyOf(this.held, this.dropped);
    this.held = [];
    this.heldBytes = 0;
    this.dropped = 0n;
    return { copy, pauseWindowNs: 0 };
  }

  /** The records between data_tail and data_head, linearised; with `consume`, data_tail moves to data_head. */
  private pending(mode: CopyMode, consume: boolean, upToHead?: bigint): Uint8Array {
    // Reading data_head before the copy is the acquire: the kernel publishes head after the data
    // (and the call boundary into koffi keeps the loads ordered on x86/arm64 for our purposes).
    const head = upToHead ?? this.ring.readU64(MmapPage.DATA_HEAD, mode);
    const tail = this.ring.readU64(MmapPage.DATA_TAIL, mode);
    const size = this.ring.dataSize;
    const length = Math.max(0, Math.min(Number(head - tail), size));
    const bytes = new Uint8Array(length);
    if (length > 0) this.ring.copyLinear(Number(tail & BigInt(size - 1)), length, bytes, mode);
    if (consume) {
      this.ring.writeU64(MmapPage.DATA_TAIL, head, mode);
      this.consumed = head;
    }
    return bytes;
  }

  /** `chunks` (oldest first) as one forward copy of this ring. */
  copyOf(chunks: readonly Uint8Array[], droppedBytes: bigint): RingCopy {
    const lostSinceOpen = this.lostSinceOpen();
    const length = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return {
      ...this.meta,
      direction: 'forward',
      bytes,
      validBytes: length,
      dataSize: this.ring.dataSize,
      bytesWritten: this.ring.readU64(MmapPage.DATA_HEAD, this.mode),
      ...(droppedBytes > 0n ? { droppedBytes } : {}),
      ...(lostSinceOpen !== null ? { lostSinceOpen } : {}),
      path: 'paused',
      copiedAtNs: performance.now() * 1e6,
    };
  }

  stats(): RingStats {
    const head = this.head();
    const pending = Number(head - this.consumed);
    return {
      ringId: this.meta.ringId,
      label: this.meta.label,
      direction: 'forward',
      head,
      dataSize: this.dataSize,
      bytesWritten: head,
      fillPercent: (Math.min(pending, this.dataSize) / this.dataSize) * 100,
      path: 'paused',
    };
  }

  /** Unmaps and closes the event. Idempotent. */
  dispose(): void {
    this.ring.release(this.event);
  }
}

/**
 * Side-band chunks a follower has not taken yet (ForwardRing.tap), oldest first. Bounded like the
 * ring's own held store: past MAX_HELD_BYTES the oldest are dropped and counted, never the newest.
 */
export class ForwardTap {
  private chunks: Uint8Array[] = [];
  private bytes = 0;
  private dropped = 0n;

  constructor(
    readonly ring: ForwardRing,
    readonly close: () => void,
  ) {}

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.bytes += chunk.byteLength;
    while (this.bytes > ForwardRing.MAX_HELD_BYTES && this.chunks.length > 1) {
      const oldest = this.chunks.shift()!;
      this.bytes -= oldest.byteLength;
      this.dropped += BigInt(oldest.byteLength);
    }
  }

  /** Everything pushed since the last take, as one forward copy of the ring (droppedBytes: what the bound dropped). */
  take(): RingCopy {
    const copy = this.ring.copyOf(this.chunks, this.dropped);
    this.chunks = [];
    this.bytes = 0;
    this.dropped = 0n;
    return copy;
  }
}

/**
 * Two backward rings for the same event and target. One is live, the other's event is disabled.
 * A snapshot enables the standby BEFORE disabling the live one (so there is an overlap of a few
 * microseconds instead of a gap), then copies the now idle ring at leisure and makes it the
 * standby. DISABLE is synchronous in the kernel (it runs on the event's CPU), so once it returns
 * nothing writes the retired ring. The copy covers only what was written since that ring became
 * live, so consecutive snapshots tile time without repeating the retired ring's older contents.
 * Records in the overlap window can appear in both copies.
 */
export class GapFreeRingPair {
  private live: BackwardRing;
  private standby: BackwardRing;
  private liveSinceHead: bigint;
  /** Per ring, the other fds that write into it (an attached process's other threads): enabled and disabled with it. */
  private readonly followersOf: Map<BackwardRing, readonly PerfEventFd[]>;

  /** `first` must be freshly mapped and enabled (or enable-on-exec), `second` opened disabled, and each ring's followers likewise. */
  constructor(first: BackwardRing, second: BackwardRing, followers: { first?: readonly PerfEventFd[]; second?: readonly PerfEventFd[] } = {}) {
    this.live = first;
    this.standby = second;
    // Everything `first` holds counts: it is fresh, and an enabled event writes from the moment it
    // is opened, before the standby is opened and the pair built (35 ms on a busy machine).
    this.liveSinceHead = 0n;
    this.followersOf = new Map([
      [first, followers.first ?? []],
      [second, followers.second ?? []],
    ]);
  }

  get rings(): readonly BackwardRing[] {
    return [this.live, this.standby];
  }

  get active(): BackwardRing {
    return this.live;
  }

  snapshot(mode?: CopyMode): RingSnapshot {
    const standbyHead = this.standby.head();
    const started = process.hrtime.bigint();
    this.standby.event.enable();
    for (const fd of this.followersOf.get(this.standby) ?? []) fd.enable();
    this.live.event.disable();
    for (const fd of this.followersOf.get(this.live) ?? []) fd.disable();
    const switchNs = Number(process.hrtime.bigint() - started);
    const retired = this.live;
    const result = retired.copyQuiescent(mode ?? retired.mode, this.liveSinceHead);
    this.live = this.standby;
    this.liveSinceHead = standbyHead;
    this.standby = retired;
    // The retired ring keeps its meta (ringId/label) so the decoder sees one logical ring per target,
    // and the pair's losses are those of both rings.
    return { copy: retired.toCopy(result.bytes, result.validBytes, result.written, 'gap-free', this.lostSinceOpen()), pauseWindowNs: switchNs };
  }

  /** The pair's losses: those of both rings (null where the kernel does not count them). */
  private lostSinceOpen(): bigint | null {
    const first = this.live.lostSinceOpen();
    const second = this.standby.lostSinceOpen();
    return first === null || second === null ? null : first + second;
  }

  /**
   * What the live ring holds since it went live, paused and copied without a swap: the next
   * snapshot() still hands it out (a triggered snapshot must not take records from the series
   * the regular snapshots tile).
   */
  peek(mode?: CopyMode): RingSnapshot {
    return this.live.snapshot(mode ?? this.live.mode, this.liveSinceHead, () => this.lostSinceOpen());
  }

  pauseOutput(paused: boolean): void {
    this.live.event.pauseOutput(paused);
  }

  /** What the live ring holds since it went live; for an owner that has disabled every fd of the pair and retires it. */
  finalCopy(mode?: CopyMode): RingCopy {
    const result = this.live.copyQuiescent(mode ?? this.live.mode, this.liveSinceHead);
    return this.live.toCopy(result.bytes, result.validBytes, result.written, 'gap-free');
  }

  stats(): RingStats {
    return this.live.stats('gap-free');
  }

  dispose(): void {
    try {
      this.live.dispose();
    } finally {
      this.standby.dispose();
    }
  }
}

/**
 * Maps an existing perf fd's ring (e.g. one borrowed with pidfd_getfd): backward rings read-only,
 * forward rings writable. The kernel reuses the fd's ring when one exists, which is only allowed
 * with the same number of data pages. The returned ring owns `fd` (dispose closes it).
 */
export function mapExistingRing(
  fd: number,
  dataPages: number,
  direction: 'backward' | 'forward',
  options: { meta?: Partial<RingMeta>; attr?: PerfEventAttr; mode?: CopyMode } = {},
): BackwardRing | ForwardRing {
  const attr: PerfEventAttr = options.attr ?? {
    type: 1,
    config: 0n,
    samplePeriod: 0n,
    sampleType: 0,
    readFormat: 0,
    flags: { writeBackward: direction === 'backward' },
  };
  const event = adoptEventFd(fd, attr, `fd ${fd}`);
  const meta: RingMeta = { ringId: 0, label: `fd ${fd}`, cpu: -1, tid: -1, defaultEvent: 0, ...options.meta };
  try {
    return direction === 'backward' ? new BackwardRing(event, dataPages, meta, options.mode) : new ForwardRing(event, dataPages, meta, options.mode);
  } catch (error) {
    event.dispose();
    throw error;
  }
}
