// One animation-frame scheduler for the whole page: any number of "something changed" calls
// between two frames collapse into a single synchronous render of the cached columns.

export class RenderScheduler {
  private pending = false;
  private readonly raf: (cb: () => void) => unknown;

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
    });
    return true;
  }

  get isPending(): boolean {
    return this.pending;
  }
}
