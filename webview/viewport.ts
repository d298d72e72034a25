// The visible time window of the timeline: D3's linear scale, zoom/pan (wheel, drag) and brush (Shift+drag)
// on the plot's SVG overlay. It owns the zoom transform and nothing about lanes or records; it tells its owner
// when the view moved and when a range was brushed.

import * as d3 from 'd3';

/** The narrowest window zoom allows, ns. */
export const MIN_WINDOW_NS = 50;

/** Shift+wheel, or a wheel event that is mostly horizontal (a trackpad's sideways swipe). */
export function isPanWheel(event: Pick<WheelEvent, 'shiftKey' | 'deltaX' | 'deltaY'>): boolean {
  return event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY);
}

/**
 * How far a panning wheel event moves, in pixels (positive: later). Browsers give Shift+wheel either as deltaY or
 * already turned into deltaX; line and page modes are scaled to pixels.
 */
export function wheelPanPixels(event: Pick<WheelEvent, 'deltaX' | 'deltaY' | 'deltaMode'>): number {
  const delta = Math.abs(event.deltaX) >= Math.abs(event.deltaY) ? event.deltaX : event.deltaY;
  return delta * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1);
}

export interface ViewportCallbacks {
  /** The view moved; `byUser` when a gesture moved it (not setWindow). */
  onZoom(byUser: boolean): void;
  /** A brush gesture ended: the brushed time range, or null when it was cleared. */
  onBrush(range: [number, number] | null): void;
}

export class Viewport {
  private base = d3.scaleLinear().domain([0, 1]);
  private transform: d3.ZoomTransform = d3.zoomIdentity;
  private readonly zoom: d3.ZoomBehavior<SVGSVGElement, unknown>;
  private readonly brush: d3.BrushBehavior<unknown>;
  private brushed: [number, number] | null = null;
  private pendingWindow: [number, number] | null = null;
  private hasData = false;
  /** Until the user zooms or pans, new data widens the view to show everything. */
  private userAdjusted = false;
  private height = 0;
  /**
   * The plot width, cached: reading the scroll area's clientWidth forces a layout, and it is asked for on every
   * batch (dataChanged → setWindow). invalidateWidth drops the cache when the size changes.
   */
  private cachedWidth = -1;
  /** The extent the brush was last applied with (configure). */
  private brushWidth = -1;
  private brushHeight = -1;
  /**
   * Set while resized() applies the same window to a new width: the zoom event it raises moves nothing the frame that
   * resized the plot is not already drawing, so the owner is not told (it would ask for a second frame of the same view).
   */
  private quiet = false;

  constructor(
    private readonly overlay: SVGSVGElement,
    private readonly brushLayer: SVGGElement,
    private readonly measureWidth: () => number,
    private readonly callbacks: ViewportCallbacks,
  ) {
    this.zoom = d3
      .zoom<SVGSVGElement, unknown>()
      .filter((event: Event) => {
        // Shift+wheel and horizontal scrolling (trackpads) pan: see panByWheel.
        if (event.type === 'wheel') return !isPanWheel(event as WheelEvent);
        const m = event as MouseEvent;
        return !m.ctrlKey && !m.shiftKey && !m.button;
      })
      .on('zoom', (event: d3.D3ZoomEvent<SVGSVGElement, unknown>) => {
        this.transform = event.transform;
        const byUser = Boolean(event.sourceEvent);
        if (byUser) this.userAdjusted = true;
        this.syncBrush();
        if (!this.quiet) this.callbacks.onZoom(byUser);
      });
    d3.select(this.overlay).call(this.zoom).on('dblclick.zoom', null);
    this.overlay.addEventListener('wheel', (event) => this.panByWheel(event), { passive: false });

    this.brush = d3
      .brushX()
      .filter((event: MouseEvent) => event.shiftKey && !event.button)
      .on('end', (event: d3.D3BrushEvent<unknown>) => {
        if (!event.sourceEvent) return; // programmatic moves while zooming
        const sel = event.selection as [number, number] | null;
        const x = this.x();
        this.brushed = sel ? [x.invert(sel[0]), x.invert(sel[1])] : null;
        this.callbacks.onBrush(this.brushed);
      });
    d3.select(this.brushLayer).call(this.brush);
  }

  plotWidth(): number {
    if (this.cachedWidth < 0) this.cachedWidth = this.measureWidth();
    return this.cachedWidth;
  }

  invalidateWidth(): void {
    this.cachedWidth = -1;
  }

  /** The time scale of the visible window: ns (relative to the store origin) → plot pixels. */
  x(): d3.ScaleLinear<number, number> {
    this.base.range([0, Math.max(1, this.plotWidth())]);
    return this.transform.rescaleX(this.base);
  }

  /** The whole data range with its margin, [start, end] ns: what Fit shows. */
  fullDomain(): [number, number] {
    const [a, b] = this.base.domain();
    return [a, b];
  }

  /** The visible time window [start, end] (ns relative to the store origin). */
  window(): [number, number] {
    const d = this.x().domain();
    return [d[0], d[1]];
  }

  setWindow(start: number, end: number): void {
    if (!(end > start)) return;
    const width = Math.max(1, this.plotWidth());
    this.base.range([0, width]);
    const [b0, b1] = this.base.domain();
    const k = Math.max(1e-9, (b1 - b0) / (end - start));
    const tx = -k * this.base(start);
    const t = d3.zoomIdentity.translate(tx, 0).scale(k);
    this.configure();
    d3.select(this.overlay).call(this.zoom.transform, t);
    this.transform = t;
  }

  zoomBy(factor: number, centerTime?: number): void {
    this.userAdjusted = true;
    const [a, b] = this.window();
    const c = centerTime ?? (a + b) / 2;
    const na = c - (c - a) / factor;
    const nb = c + (b - c) / factor;
    if (nb - na < MIN_WINDOW_NS) return;
    this.setWindow(na, nb);
  }

  /** Move the window by `fraction` of its width (positive: later), keeping its width. */
  panBy(fraction: number): void {
    this.userAdjusted = true;
    const [a, b] = this.window();
    const shift = (b - a) * fraction;
    this.setWindow(a + shift, b + shift);
  }

  resetZoom(): void {
    this.userAdjusted = true;
    const [a, b] = this.base.domain();
    this.setWindow(a, b);
  }

  /** Restore a window once data arrives (persisted view state). */
  restoreWindow(start: number, end: number): void {
    this.userAdjusted = true;
    if (this.hasData) this.setWindow(start, end);
    else this.pendingWindow = [start, end];
  }

  /**
   * The data's time extent changed (a snapshot began or a batch arrived): widen the scale, and keep the view
   * where the user left it, show everything (never adjusted), or follow the newest records.
   */
  dataChanged(extent: [number, number], followLatest: boolean): void {
    const previousWindow = this.hasData ? this.window() : null;
    const span = Math.max(extent[1] - extent[0], MIN_WINDOW_NS * 10);
    const pad = span * 0.02;
    this.base = d3.scaleLinear().domain([extent[0] - pad, extent[0] + span + pad]);
    this.hasData = true;
    if (this.pendingWindow && this.pendingWindowFits(extent)) {
      this.setWindow(this.pendingWindow[0], this.pendingWindow[1]);
      this.pendingWindow = null;
    } else if (previousWindow && !this.userAdjusted) {
      this.setWindow(this.base.domain()[0], this.base.domain()[1]);
    } else if (previousWindow && followLatest) {
      const width = previousWindow[1] - previousWindow[0];
      const end = this.base.domain()[1];
      this.setWindow(end - width, end);
    } else if (previousWindow) {
      this.setWindow(previousWindow[0], previousWindow[1]);
    } else {
      this.setWindow(this.base.domain()[0], this.base.domain()[1]);
    }
  }

  /**
   * Another capture is shown: its time extent (null before its first timed record) becomes the data range and the
   * view fits it, and keeps fitting it as its records arrive until the user zooms or pans.
   */
  showExtent(extent: [number, number] | null): void {
    this.userAdjusted = false;
    this.hasData = false;
    this.clearBrush();
    if (extent) this.dataChanged(extent, false);
  }

  /** The plot changed size: zoom and brush extents follow, and the visible window stays. */
  resized(height: number): void {
    const current = this.hasData ? this.window() : null;
    this.height = height;
    this.configure();
    if (!current) return;
    this.quiet = true;
    try {
      this.setWindow(current[0], current[1]);
    } finally {
      this.quiet = false;
    }
  }

  clearBrush(): void {
    this.brushed = null;
    d3.select(this.brushLayer).call(this.brush.move, null);
  }

  private pendingWindowFits(extent: [number, number]): boolean {
    const [a, b] = this.pendingWindow!;
    return b > a && b >= extent[0] && a <= extent[1];
  }

  private configure(): void {
    const width = this.plotWidth();
    const height = Math.max(1, this.height);
    const [b0, b1] = this.base.domain();
    this.zoom
      .extent([
        [0, 0],
        [width, height],
      ])
      .scaleExtent([0.5, Math.max(1, (b1 - b0) / MIN_WINDOW_NS)])
      .translateExtent([
        [-width * 0.5, 0],
        [width * 1.5, height],
      ]);
    // The brush sizes its overlay when applied, so re-apply it when its extent changes (only then:
    // each batch of a capture moves the window, and re-applying a brush is DOM work, 7 ms over the
    // 16 batches of a million rows).
    if (width !== this.brushWidth || height !== this.brushHeight) {
      this.brushWidth = width;
      this.brushHeight = height;
      this.brush.extent([
        [0, 0],
        [width, height],
      ]);
      d3.select(this.brushLayer).call(this.brush);
    }
  }

  /** A wheel event that pans: its horizontal distance in pixels of the plot moves the window as far. */
  private panByWheel(event: WheelEvent): void {
    if (!isPanWheel(event)) return;
    event.preventDefault();
    const pixels = wheelPanPixels(event);
    this.panBy(pixels / Math.max(1, this.plotWidth()));
    this.callbacks.onZoom(true);
  }

  private syncBrush(): void {
    if (!this.brushed) return;
    const x = this.x();
    d3.select(this.brushLayer).call(this.brush.move, [x(this.brushed[0]), x(this.brushed[1])]);
  }
}
