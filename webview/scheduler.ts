// One animation-frame scheduler for the whole page: any number of "something changed" calls
// between two frames collapse into a single synchronous render of the cached columns. Work that
// must not delay a frame (the call tree's count of a new capture) is queued to run after it.

export class RenderScheduler {
  private pending = false;
  private readonly raf: (cb: () => void) => unknown;
  /** Run after the next frame, in a task of their own (afterNextFrame). */
  private afterFrame: (() => void)[] = [];

  constructor(
    private readonly render: () => void,
    raf: ((cb: () => void) => unknown) | undefined = globalThis.requestAnimationFrame?.bind(globalThis),
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
      if (this.afterFrame.length === 0) return;
      const tasks = this.afterFrame;
      this.afterFrame = [];
      // A task of its own after the frame's callbacks: the browser paints what render drew before the work starts.
      setTimeout(() => {
        for (const task of tasks) task();
      }, 0);
    });
    return true;
  }

  /** Run `task` once the next frame is drawn and painted (asking for that frame). */
  afterNextFrame(task: () => void): void {
    this.afterFrame.push(task);
    this.schedule();
  }

  get isPending(): boolean {
    return this.pending;
  }
}
