// The buffer a backward ring's next snapshot copies into, faulted in ahead of time, and the
// background warmer that does it for a set of rings between snapshots.

import { plainCopyBuffer, type CopyAllocator, type CopyBuffer } from '../abi/snapshot';

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

/** What the warmer needs of a ring: its spare (a BackwardRing has one). */
export interface WarmedRing {
  readonly spare: SpareCopyBuffer;
}

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
    private readonly rings: () => readonly WarmedRing[],
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
