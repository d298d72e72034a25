// The buffer a backward ring's next snapshot copies into, faulted in ahead of time, and the
// background warmer that does it for a set of rings between snapshots.

import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { plainCopyBuffer, type CopyAllocator, type CopyBuffer } from '../abi/snapshot';
import { populateForWrite } from '../sys/libc';

/**
 * The buffer the next snapshot of one ring copies into, with its pages already faulted in.
 *
 * Why: records the kernel produces while output is paused are lost, so the pause window should be
 * a bare memcpy. Copying into a fresh buffer also takes one page fault per 4 KiB inside that
 * window: at 64 MiB that is about 30 ms instead of 10 ms on the bench machine. Faulting the pages
 * in ahead of time, while the caller is idle, moves that cost out of the window: on a thread of
 * libuv's pool where the kernel can (warmOffThread), else by writing one byte per page in slices
 * (warm). The price is one data area of memory per ring. A buffer handed to a snapshot is never reused.
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

  /**
   * Faults the whole spare in (allocating it first) on another thread (populateForWrite), so the
   * caller's thread takes none of the faults. 'cannot': the kernel cannot (then warm() does it
   * here); 'taken': a snapshot took the spare, or it was dropped, before the kernel was done.
   */
  async warmOffThread(): Promise<'warm' | 'cannot' | 'taken'> {
    if (this.ready) return 'warm';
    this.warm(0);
    const buffer = this.buffer!;
    const populated = await populateForWrite(buffer.whole);
    if (this.buffer !== buffer) return 'taken';
    if (!populated) return 'cannot';
    // populateForWrite leaves the pages the buffer only partly covers (one at each end) to us.
    const whole = buffer.whole;
    if (whole.length > 0) {
      whole[0] = 0;
      whole[whole.length - 1] = 0;
    }
    this.warmedBytes = whole.length;
    return 'warm';
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

/** Bytes of spare copy buffer faulted in per event-loop turn where it is done here: a few ms, so the loop stays responsive. */
const WARM_SLICE_BYTES = 8 << 20;
/**
 * Spares of rings this large or larger are faulted in on another thread; smaller ones here, in one
 * slice of well under a millisecond. The kernel zeroes each page on the CPU that faults it, and a
 * small copy then writes into what that CPU's cache still holds: at 1 MiB the bench's pause took
 * 1.3x C's into a spare faulted in on another thread, 1.15x into one faulted in here.
 */
const OFF_THREAD_MIN_BYTES = 2 << 20;
/** How often the warmer looks whether the caller's event loop has gone idle. */
const IDLE_CHECK_MS = 10;
/** The event loop counts as idle over a check when it ran callbacks for less than this share of it. */
const IDLE_UTILIZATION = 0.5;
/** A loop busy for this long gets its spares warmed anyway: a snapshot into cold pages costs more in the pause. */
const MAX_WAIT_FOR_IDLE_MS = 2000;

/** What the warmer needs of a ring: its spare (a BackwardRing has one). */
export interface WarmedRing {
  readonly spare: SpareCopyBuffer;
}

/**
 * Warms the spare copy buffers of a set of backward rings in the background, once the caller's
 * event loop is idle (a snapshot is followed by its decode and output: warming then would compete
 * with them, and leave the loop busy when the next pause starts). Each spare of OFF_THREAD_MIN_BYTES
 * or more is faulted in on a thread of libuv's pool (SpareCopyBuffer.warmOffThread); smaller ones,
 * and all where the kernel cannot, one slice per event-loop turn here. Whoever owns the rings calls `schedule()` after opening them and after each
 * snapshot (which takes the spares), and `dispose()` when it closes them.
 */
export class SpareBufferWarmer {
  private timer: NodeJS.Timeout | null = null;
  private tick: NodeJS.Immediate | null = null;
  /** A spare being faulted in on another thread. */
  private inFlight = false;
  /** When off-thread warming failed once, the rest is done here. */
  private offThread = true;
  private waiters: (() => void)[] = [];
  private disposed = false;

  /** `rings` is asked anew at every turn, so rings added or swapped later are warmed too. */
  constructor(
    private readonly rings: () => readonly WarmedRing[],
    private readonly enabled = true,
  ) {}

  schedule(): void {
    if (!this.enabled || this.disposed || this.timer || this.tick || this.inFlight) return;
    this.waitForIdle(performance.now());
  }

  /** Resolves once every spare is warm (at once when warming is off or disposed). */
  whenWarm(): Promise<void> {
    if (!this.enabled || this.disposed || this.rings().every((ring) => ring.spare.ready)) return Promise.resolve();
    this.schedule();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.tick) clearImmediate(this.tick);
    this.timer = null;
    this.tick = null;
    this.settle();
  }

  /** Looks every IDLE_CHECK_MS whether the loop was idle since the last look; then warms. */
  private waitForIdle(since: number): void {
    const mark = performance.eventLoopUtilization();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.stepWhenIdle(since, mark);
    }, IDLE_CHECK_MS);
  }

  /** Warms the next spare if the loop was idle since `mark` (or has been busy since `since` for too long), else waits. */
  private stepWhenIdle(since: number, mark: EventLoopUtilization): void {
    if (this.disposed) return;
    const idle = performance.eventLoopUtilization(mark).utilization < IDLE_UTILIZATION;
    if (idle || performance.now() - since >= MAX_WAIT_FOR_IDLE_MS) this.step();
    else this.waitForIdle(since);
  }

  private step(): void {
    if (this.disposed) return;
    const cold = this.rings().find((ring) => !ring.spare.ready);
    if (!cold) {
      this.settle();
      return;
    }
    if (this.offThread && cold.spare.size >= OFF_THREAD_MIN_BYTES) {
      this.inFlight = true;
      const started = performance.now();
      const mark = performance.eventLoopUtilization();
      void cold.spare.warmOffThread().then((outcome) => {
        this.inFlight = false;
        if (outcome === 'cannot') this.offThread = false;
        // The next ring at once if the loop stayed idle meanwhile (a taken spare is looked at again).
        this.stepWhenIdle(started, mark);
      });
      return;
    }
    cold.spare.warm(WARM_SLICE_BYTES);
    // Not unref'd: an unref'd immediate lets the loop block in poll between slices. Warming ends
    // on its own within a few turns per ring, and dispose cancels it.
    this.tick = setImmediate(() => {
      this.tick = null;
      this.step();
    });
  }

  private settle(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
