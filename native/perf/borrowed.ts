// Rings this process did not open: a keeper's, a persistent event's, or any process's perf fd (a
// running `perf record --overwrite`). The fd is borrowed with pidfd_open + pidfd_getfd and the SAME
// ring is mapped (the kernel only allows the owner's page count), read-only. Backward rings are
// snapshotted like our own (pause -> copy -> resume on the shared ring). A forward ring belongs to
// its owner's reader: it is only peeked at, [data_tail, data_head), and data_tail never moves.

import type { EventDescription, RawSnapshot, RingCopy } from '../abi/snapshot';
import { BackwardRing } from './backward-ring';
import { ForwardRing } from './forward-ring';
import { RingMapping, defaultCopyMode, lostByWriters, type CopyMode, type RingMeta } from './ring-mapping';
import { SpareBufferWarmer } from './spare-buffer';
import { adoptEventFd, type PerfEventFd } from './events';
import type { PerfEventAttr } from '../abi/attr';
import { MmapPage } from '../abi/uapi';
import * as libc from '../sys/libc';
import { PerfError } from '../sys/errors';
import { pauseRings, quiescentCopy, snapshotRings, type SnapshotRing } from './snapshot-loop';
import { dropFrom } from './ring-growth';
import { readProcessStat } from './procfs';

/**
 * What the owner of borrowed rings needs to know about us: that we are about to pause its rings
 * and that we resumed them (a keeper resumes rings a dead client left paused), and whether it is
 * still alive.
 */
export interface RingOwner {
  readonly pid: number;
  alive(): boolean;
  pausing?(): void;
  resumed?(): void;
  /** Cleans up what an owner that died could not (a keeper's state file). */
  gone?(): void;
}

/** Whether a process is alive (not exited, not a zombie). */
export function processAlive(pid: number): boolean {
  const stat = readProcessStat(pid);
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/** Live facts about one ring, read from its header page without pausing it. */
export interface RingStatus {
  readonly ringId: number;
  readonly label: string;
  readonly cpu: number;
  readonly tid: number;
  readonly direction: 'backward' | 'forward';
  readonly dataSize: number;
  readonly bytesWritten: bigint;
  readonly paused: boolean;
  /** A ring its owner retired when its rings grew: nothing writes it any more. */
  readonly retired?: boolean;
}

export class AttachError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'AttachError';
  }
}

/** The user dismissed a question attaching needed (the UI stays quiet; callers may still log it). */
export class AttachCancelledError extends AttachError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = 'AttachCancelledError';
  }
}

/** pidfd_open + pidfd_getfd: our own fd for the same open file (same event, same ring). */
export function borrowPerfFd(pid: number, targetFd: number): number {
  const pidfd = libc.pidfdOpen(pid);
  try {
    return libc.pidfdGetfd(pidfd, targetFd);
  } catch (error) {
    if (error instanceof PerfError) throw new PerfError('pidfd_getfd', error.errno, { pid, note: `(fd ${targetFd} of pid ${pid})` });
    throw error;
  } finally {
    libc.close(pidfd);
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

/** Side-band records an owner drained out of its ring: their position in the ring's stream and the whole records from there. */
export interface DrainedSideband {
  readonly base: bigint;
  /** Stream position past the newest record (base + bytes.length, unless writes that failed left holes). */
  readonly end: bigint;
  readonly bytes: Uint8Array;
  /** Bytes before `base` the owner dropped to stay within its bound. */
  readonly droppedBytes: bigint;
  /** What the owner drained but could not keep (its spool could not be written). */
  readonly unspooled?: { readonly records: bigint; readonly bytes: bigint; readonly error: string };
  /** Where the owner keeps them, for messages. */
  readonly file?: string;
}

/** A forward ring seen read-only: copies what the owner has not consumed yet, oldest first. */
export class PeekRing {
  private readonly ring: RingMapping;
  private disposed = false;
  /** The borrowed event, for its loss count (PERF_FORMAT_LOST) when its attr is known. */
  private readonly event: PerfEventFd | null;

  /**
   * Owns `fd`. With `attr` (the owner's), copies also carry the kernel's loss count. With
   * `drained`, the owner empties the ring itself and `drained()` returns what it took out so far
   * (its stream position and whole records; see native/keeper/sideband): copies join that and the
   * ring, without a gap or a repeat.
   */
  constructor(
    private readonly fd: number,
    dataPages: number,
    readonly meta: RingMeta,
    attr?: PerfEventAttr,
    private readonly drained?: () => DrainedSideband | null,
  ) {
    try {
      this.ring = new RingMapping(fd, dataPages, false, meta.label);
    } catch (error) {
      libc.close(fd);
      throw error;
    }
    this.event = attr ? adoptEventFd(fd, attr, meta.label) : null;
  }

  get dataSize(): number {
    return this.ring.dataSize;
  }

  head(): bigint {
    return this.ring.readU64(MmapPage.DATA_HEAD, defaultCopyMode());
  }

  peek(): RingCopy {
    const mode = defaultCopyMode();
    // data_tail first: an owner that drains may move it up to data_head at any time, never past it.
    const tail = this.ring.readU64(MmapPage.DATA_TAIL, mode);
    const head = this.ring.readU64(MmapPage.DATA_HEAD, mode);
    const size = this.ring.dataSize;
    const length = Number(head - tail > BigInt(size) ? BigInt(size) : head - tail);
    const inRing = new Uint8Array(size);
    this.ring.copyLinear(Number((head - BigInt(length)) & BigInt(size - 1)), length, inRing, mode);
    const lostSinceOpen = this.event ? lostByWriters([this.event]) : null;
    const copy = {
      ...this.meta,
      direction: 'forward' as const,
      bytes: inRing,
      validBytes: length,
      dataSize: size,
      bytesWritten: head,
      ...(lostSinceOpen !== null ? { lostSinceOpen } : {}),
      path: 'peek' as const,
      copiedAtNs: performance.now() * 1e6,
    };
    const earlier = this.drained ? this.drainedUpTo(head - BigInt(length)) : null;
    if (!earlier) return copy;
    // The drained records, then what the ring still held past them (drainedUpTo waited until the
    // drained stream reached the data_tail we read, so nothing falls between the two).
    const fromRing = earlier.end >= head ? 0 : Number(head - earlier.end);
    const bytes = new Uint8Array(earlier.bytes.length + fromRing);
    bytes.set(earlier.bytes, 0);
    bytes.set(inRing.subarray(length - fromRing, length), earlier.bytes.length);
    const { droppedBytes, unspooled } = earlier;
    return {
      ...copy,
      bytes,
      validBytes: bytes.length,
      ...(droppedBytes > 0n ? { droppedBytes } : {}),
      ...(unspooled ? { unspooled: { ...unspooled, file: earlier.file ?? this.meta.label } } : {}),
    };
  }

  /**
   * What the owner drained, once it reaches stream position `tail` (the owner writes its spool
   * right after moving data_tail: a few tries bridge that moment). Null when there is no spool.
   */
  private drainedUpTo(tail: bigint): DrainedSideband | null {
    for (let attempt = 0; ; attempt++) {
      const drained = this.drained!();
      // No spool: none yet (the owner's first drain creates it right after moving data_tail), or
      // none any more (an owner that stopped removes it): then the ring is all there is.
      if (!drained && (tail === 0n || attempt === 10)) return null;
      const drainedEnd = drained ? drained.end : 0n;
      if (drained && drainedEnd >= tail) return drained;
      if (attempt === 100) {
        throw new AttachError(
          `the side-band spool of ${this.meta.label} ends at ${drainedEnd}, before the ring's data_tail ${tail}`,
          'its keeper stopped writing it (out of disk space in its state directory?)',
        );
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }

  status(): RingStatus {
    const head = this.head();
    return {
      ringId: this.meta.ringId,
      label: this.meta.label,
      cpu: this.meta.cpu,
      tid: this.meta.tid,
      direction: 'forward',
      dataSize: this.dataSize,
      bytesWritten: head,
      paused: false,
    };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.ring.unmap();
    } finally {
      if (this.event) this.event.dispose();
      else libc.close(this.fd);
    }
  }
}

/**
 * A borrowed ring: a backward ring, a forward ring only peeked at, or a backward ring its owner
 * retired when its rings grew (nothing writes it: copied without a pause, without its records from
 * `cutAtNs` on, which its successor holds).
 */
export type AttachedRing =
  { kind: 'backward'; ring: BackwardRing } | { kind: 'peek'; ring: PeekRing } | { kind: 'retired'; ring: BackwardRing; cutAtNs: bigint | null };

/** The ringside.warmCopyBuffers setting, for sources over borrowed rings (default true). */
export interface CopyBufferOptions {
  readonly warmCopyBuffers?: boolean;
}

/** A RingSource over borrowed rings. Disposing closes our fds and mappings, never the owner's. */
/** A recording source over borrowed rings (what the extension calls a RingSource). */
export class AttachedRingSource {
  private paused = false;
  private disposed = false;
  /** Spare copy buffers of the borrowed backward rings, faulted in while idle, as a Recorder keeps them. */
  private readonly warmer: SpareBufferWarmer;

  /** `owner` is told before rings are paused and after they are resumed (see RingOwner). */
  constructor(
    readonly events: readonly EventDescription[],
    private readonly rings: readonly AttachedRing[],
    private readonly owner: RingOwner,
    warmCopyBuffers = true,
  ) {
    this.warmer = new SpareBufferWarmer(() => this.rings.flatMap((attached) => (attached.kind === 'backward' ? [attached.ring] : [])), warmCopyBuffers);
    this.warmer.schedule();
  }

  /** Resolves once every borrowed backward ring's spare copy buffer is warm. */
  copyBuffersWarm(): Promise<void> {
    return this.warmer.whenWarm();
  }

  /** True when every borrowed backward ring has a warm spare for its next snapshot. */
  get copyBuffersReady(): boolean {
    return this.rings.every((attached) => attached.kind !== 'backward' || attached.ring.spare.ready);
  }

  snapshot(): RawSnapshot {
    this.assertLive();
    const takenAtMs = Date.now();
    if (!this.paused) this.takeLease();
    // Rings the user paused are copied as they are, and stay paused.
    const { rings: copies, pauseWindowNs } = snapshotRings(this.snapshotUnits(), this.paused);
    if (!this.paused) this.releaseLease();
    this.warmer.schedule();
    return { events: this.events, rings: copies, takenAtMs, pauseWindowNs };
  }

  /** The rings as the snapshot loop reads them: a retired ring is a held copy, cut where its successor starts. */
  private snapshotUnits(): SnapshotRing[] {
    return this.rings.map((attached): SnapshotRing => {
      if (attached.kind !== 'retired') return attached;
      const copy = quiescentCopy(attached.ring);
      return { kind: 'held', copy: attached.cutAtNs === null ? copy : dropFrom(copy, attached.cutAtNs) };
    });
  }

  pause(): void {
    this.assertLive();
    this.takeLease();
    pauseRings(this.liveRings(), true);
    this.paused = true;
  }

  resume(): void {
    this.assertLive();
    pauseRings(this.liveRings(), false);
    this.paused = false;
    this.releaseLease();
  }

  /** The rings a pause acts on (retired ones are not written any more). */
  private liveRings(): SnapshotRing[] {
    return this.rings.flatMap((attached) => (attached.kind === 'retired' ? [] : [attached]));
  }

  private takeLease(): void {
    this.owner.pausing?.();
  }

  private releaseLease(): void {
    this.owner.resumed?.();
  }

  ringStats(): RingStatus[] {
    if (this.disposed) return [];
    return this.rings.map((attached) => {
      if (attached.kind === 'peek') return attached.ring.status();
      const stats = attached.ring.stats();
      return {
        ringId: stats.ringId,
        label: stats.label,
        cpu: attached.ring.meta.cpu,
        tid: attached.ring.meta.tid,
        direction: 'backward',
        dataSize: stats.dataSize,
        bytesWritten: stats.bytesWritten,
        paused: this.paused,
        ...(attached.kind === 'retired' ? { retired: true } : {}),
      };
    });
  }

  /** True while the process that owns the rings is alive (the rings survive it only while we hold them). */
  get ownerAlive(): boolean {
    return this.owner.alive();
  }

  /** Called once the owner is found dead: cleans up after it (see RingOwner.gone). */
  ownerGone(): void {
    this.owner.gone?.();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.warmer.dispose();
    // A ring we paused must not stay paused for its owner after we leave.
    if (this.paused) {
      for (const attached of this.rings) {
        if (attached.kind === 'backward') {
          try {
            attached.ring.event.pauseOutput(false);
          } catch {
            /* the owner may have closed it */
          }
        }
      }
      this.releaseLease();
    }
    const errors: unknown[] = [];
    for (const attached of this.rings) {
      try {
        attached.ring.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length) throw errors[0];
  }

  private assertLive(): void {
    if (this.disposed) throw new AttachError('rings were detached');
  }
}
