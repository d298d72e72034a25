// The side-band ring: mapped writable, so the kernel never overwrites unread data; we copy
// [data_tail, data_head) and then publish data_tail = data_head.

import { MmapPage } from '../abi/uapi';
import type { PerfEventFd } from './events';
import type { RingCopy } from '../abi/snapshot';
import { EventRing, defaultCopyMode, type CopyMode, type RingMeta, type RingSnapshot, type RingStats } from './ring-mapping';

/**
 * The side-band ring: writable mapping, consumed through data_tail, never paused. Owns its event.
 *
 * A forward ring that nobody empties stops taking records once it is full, and the kernel reports
 * the loss only after space is freed: COMM/MMAP2/FORK/EXIT of busy targets would vanish between
 * snapshots. So whoever owns the ring calls drain() often (the Recorder does, on a short timer);
 * drained records are held here, oldest first, until the next read() hands them to a snapshot.
 * The held bytes are bounded: past MAX_HELD_BYTES the oldest chunks are dropped and counted.
 */
export class ForwardRing extends EventRing {
  /** Upper bound of drained-but-unread bytes kept per ring. */
  static readonly MAX_HELD_BYTES = 64 << 20;
  private consumed = 0n;
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  /** Bytes dropped from `held` (oldest first) because the bound was reached, since the last read(). */
  private dropped = 0n;
  /** Followers' taps and watchers (see tap, watch): each is given every chunk consumed. */
  private readonly taps = new Set<{ push(chunk: Uint8Array): void }>();

  constructor(event: PerfEventFd, dataPages: number, meta: RingMeta, mode: CopyMode = defaultCopyMode()) {
    super(event, dataPages, meta, mode, false);
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

  /**
   * Calls `seen` with every chunk consumed from now on (by drain, read or takePending), whoever consumes it, as it is
   * consumed: whole records, oldest first, to be read at once and not kept (the ring's held store or a tap keeps
   * them). Returns what stops it.
   */
  watch(seen: (chunk: Uint8Array) => void): () => void {
    const watcher = { push: seen };
    this.taps.add(watcher);
    return () => this.taps.delete(watcher);
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
