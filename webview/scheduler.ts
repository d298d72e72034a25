// One animation-frame scheduler for the whole page: any number of "something changed" calls
// between two frames collapse into a single synchronous render of the cached columns. Work that
// must not delay a frame (the call tree's count of a new capture) waits until the frames pause.

/**
 * How long no frame must be drawn or asked for before the work that waits for a pause runs (whenFramesPause). A zoom or
 * pan asks for a frame every 16 ms or so while it lasts; a capture's first paint is one frame.
 */
export const FRAME_PAUSE_MS = 150;

/** The clock and timer the scheduler waits for a pause with (a test's fake one, or the page's). */
export interface PauseClock {
  now(): number;
  after(ms: number, task: () => void): void;
}

const PAGE_CLOCK: PauseClock = { now: () => performance.now(), after: (ms, task) => setTimeout(task, ms) };

export class RenderScheduler {
  private pending = false;
  private readonly raf: (cb: () => void) => unknown;
  /** Run once the frames pause (whenFramesPause), in a task of their own. */
  private afterPause: (() => void)[] = [];
  private pauseArmed = false;
  /** When the last frame was drawn (performance.now()). */
  private lastFrameAt = -Infinity;

  constructor(
    private readonly render: () => void,
    raf: ((cb: () => void) => unknown) | undefined = globalThis.requestAnimationFrame?.bind(globalThis),
    private readonly clock: PauseClock = PAGE_CLOCK,
  ) {
    this.raf = raf ?? ((cb) => setTimeout(cb, 16));
  }

  /** Ask for a frame; returns false when one was already pending. */
  schedule(): boolean {
    if (this.pending) return false;
    this.pending = true;
    this.raf(() => {
      this.pending = false;
      this.render();
      this.lastFrameAt = this.clock.now();
    });
    return true;
  }

  /**
   * Run `task` once the next frame is drawn and no other has been drawn or asked for during FRAME_PAUSE_MS (asking for
   * that frame). Started right after a capture's first frame, the call tree's count (a copy of its columns to the worker,
   * then the worker's pass) ran beside the zoom frames that followed and took the main thread's CPU from them on a busy
   * machine (the stack chart bench's first zoom frame: median 21.6 ms, 13.3 with the count later).
   */
  whenFramesPause(task: () => void): void {
    this.afterPause.push(task);
    this.lastFrameAt = Math.max(this.lastFrameAt, this.clock.now());
    this.schedule();
    this.armPause(FRAME_PAUSE_MS);
  }

  private armPause(delay: number): void {
    if (this.pauseArmed) return;
    this.pauseArmed = true;
    this.clock.after(delay, () => {
      this.pauseArmed = false;
      const quiet = this.clock.now() - this.lastFrameAt;
      if (this.pending || quiet < FRAME_PAUSE_MS) {
        this.armPause(this.pending ? FRAME_PAUSE_MS : FRAME_PAUSE_MS - quiet);
        return;
      }
      const tasks = this.afterPause;
      this.afterPause = [];
      for (const task of tasks) task();
    });
  }

  get isPending(): boolean {
    return this.pending;
  }
}
