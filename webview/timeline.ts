// The timeline plot: D3 for the time scale, axis, zoom/pan and brush; marks on one canvas sized
// to device pixels, redrawn synchronously from the store's typed columns on the single rAF
// scheduler. Wide zoom draws per-pixel density per lane; zoomed in it draws each record as a
// tick and paired records as bars. SVG is only used for the axis and overlays.

import * as d3 from 'd3';
import type { LaneGrouping } from './viewState';
import type { RecordStore } from './store';
import { buildLanes, type Lane } from './lanes';
import { pairSpans, SpanType, type Spans } from './spans';
import { binDensity, densityAlpha } from './density';
import { bisectLeft, bisectRight, nearestPosition, visibleRange } from './hitTest';
import { axisTickFormatter, formatAbsolute, formatAddress, formatDuration } from './timeFormat';
import { RenderScheduler } from './scheduler';

export const LABEL_WIDTH = 190;
const LANE_HEIGHT = 22;
const COLLAPSED_HEIGHT = 8;
const COVERAGE_ROW = 7;
const AXIS_HEIGHT = 24;
const HIT_RADIUS_PX = 5;
const MIN_WINDOW_NS = 50;

const KIND_NAMES: Readonly<Record<number, string>> = {
  1: 'MMAP', 2: 'LOST', 3: 'COMM', 4: 'EXIT', 5: 'THROTTLE', 6: 'UNTHROTTLE', 7: 'FORK', 8: 'READ', 9: 'SAMPLE',
  10: 'MMAP2', 11: 'AUX', 12: 'ITRACE_START', 13: 'LOST_SAMPLES', 14: 'SWITCH', 15: 'SWITCH_CPU_WIDE', 16: 'NAMESPACES',
  17: 'KSYMBOL', 18: 'BPF_EVENT', 19: 'CGROUP', 20: 'TEXT_POKE',
};
export function kindName(kind: number): string { return KIND_NAMES[kind] ?? `TYPE_${kind}`; }

interface LaneSpans { start: Float64Array; end: Float64Array; prefixMaxEnd: Float64Array; type: Uint8Array }

export interface TimelineCallbacks {
  onSelect(row: number | null): void;
  onBrush(range: [number, number] | null): void;
  onViewChange(): void;
}

interface Colors {
  mark: string; laneAlt: string; hatch: string; lost: string; span: string; syscall: string; selection: string;
  boundary: string; foreground: string; palette: string[];
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, parent?: Element): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = className;
  parent?.appendChild(e);
  return e;
}

export class Timeline {
  grouping: LaneGrouping = 'cpu';
  readonly collapsed = new Set<string>();
  followLatest = false;
  lanes: Lane[] = [];
  /** The active filter; null when every row is shown (the common case skips a call per row). */
  private include: ((row: number) => boolean) | null = null;
  private filterVersion = 0;
  private laneTop: number[] = [];
  private laneHeight: number[] = [];
  private totalHeight = 0;
  private laneSpans: (LaneSpans | undefined)[] = [];
  private spans: Spans | null = null;
  private builtKey = '';
  private spansVersion = -1;
  /** builtKey the per-lane spans were built for. */
  private laneSpansKey = '';
  private idleSpansPending = false;

  private base = d3.scaleLinear().domain([0, 1]);
  private transform: d3.ZoomTransform = d3.zoomIdentity;
  private readonly zoom: d3.ZoomBehavior<SVGSVGElement, unknown>;
  private readonly brush: d3.BrushBehavior<unknown>;
  private brushed: [number, number] | null = null;
  private pendingWindow: [number, number] | null = null;
  private hasData = false;
  /** Until the user zooms or pans, new data widens the view to show everything. */
  private userAdjusted = false;

  selectedLane = -1;
  selectedPos = -1;
  private hover: { lane: number; pos: number; x: number; y: number } | null = null;

  readonly scheduler: RenderScheduler;
  private readonly scroll: HTMLDivElement;
  private readonly plot: HTMLDivElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly coverageCanvas: HTMLCanvasElement;
  private readonly overlay: SVGSVGElement;
  private readonly axisSvg: SVGSVGElement;
  private readonly labels: HTMLDivElement;
  private readonly tooltip: HTMLDivElement;
  private readonly brushLayer: SVGGElement;
  private readonly marks: SVGGElement;
  private width = 0;
  private viewportHeight = 0;
  private dpr = 1;
  private colors: Colors | null = null;
  private densityBuffer = new Uint32Array(0);
  /** Time spent in the last render, ms (for benchmarks and the status line). */
  lastRenderMs = 0;
  renderCount = 0;

  constructor(host: HTMLElement, private readonly store: RecordStore, private readonly callbacks: TimelineCallbacks) {
    this.scheduler = new RenderScheduler(() => this.render());
    const root = el('div', 'rs-timeline', host);

    const axisRow = el('div', 'rs-axis-row', root);
    el('div', 'rs-axis-corner', axisRow).textContent = 'Lanes';
    this.axisSvg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.axisSvg.classList.add('rs-axis');
    this.axisSvg.setAttribute('role', 'img');
    this.axisSvg.setAttribute('aria-label', 'Time axis');
    axisRow.appendChild(this.axisSvg);

    const coverageRow = el('div', 'rs-coverage-row', root);
    const coverageLabel = el('div', 'rs-axis-corner rs-coverage-label', coverageRow);
    coverageLabel.textContent = 'Coverage';
    coverageLabel.title = 'Per ring: retained time range (solid), overwritten part (hatched), records lost while paused (red)';
    this.coverageCanvas = el('canvas', 'rs-coverage', coverageRow);
    this.coverageCanvas.setAttribute('role', 'img');
    this.coverageCanvas.setAttribute('aria-label', 'Ring coverage: retained, overwritten and lost ranges');

    this.scroll = el('div', 'rs-scroll', root);
    this.scroll.tabIndex = 0;
    this.scroll.setAttribute('role', 'application');
    this.scroll.setAttribute('aria-label', 'Timeline lanes. Arrows move between records, plus and minus zoom, Home and End jump, Shift+drag selects a range.');
    this.plot = el('div', 'rs-plot', this.scroll);
    this.canvas = el('canvas', 'rs-canvas', this.plot);
    this.canvas.setAttribute('role', 'img');
    this.overlay = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.overlay.classList.add('rs-overlay');
    this.plot.appendChild(this.overlay);
    this.marks = document.createElementNS('http://www.w3.org/2000/svg', 'g');
    this.marks.classList.add('rs-marks');
    this.brushLayer = document.createElementNS('http://www.w3.org/2000/svg', 'g');
    this.brushLayer.classList.add('rs-brush');
    this.overlay.append(this.brushLayer, this.marks);
    const content = el('div', 'rs-content', this.scroll);
    this.labels = el('div', 'rs-labels', content);
    this.labels.setAttribute('role', 'list');
    this.labels.setAttribute('aria-label', 'Lanes');
    this.tooltip = el('div', 'rs-tooltip', root);
    this.tooltip.setAttribute('role', 'tooltip');
    this.tooltip.hidden = true;

    this.zoom = d3.zoom<SVGSVGElement, unknown>()
      .filter((event: Event) => {
        if (event.type === 'wheel') return true;
        const m = event as MouseEvent;
        return !m.ctrlKey && !m.shiftKey && !m.button;
      })
      .on('zoom', (event: d3.D3ZoomEvent<SVGSVGElement, unknown>) => {
        this.transform = event.transform;
        if (event.sourceEvent) { this.followLatest = false; this.userAdjusted = true; }
        this.syncBrush();
        this.hideTooltip();
        this.scheduler.schedule();
        this.callbacks.onViewChange();
      });
    d3.select(this.overlay).call(this.zoom).on('dblclick.zoom', null);

    this.brush = d3.brushX()
      .filter((event: MouseEvent) => event.shiftKey && !event.button)
      .on('end', (event: d3.D3BrushEvent<unknown>) => {
        if (!event.sourceEvent) return; // programmatic moves while zooming
        const sel = event.selection as [number, number] | null;
        const x = this.x();
        this.brushed = sel ? [x.invert(sel[0]), x.invert(sel[1])] : null;
        this.callbacks.onBrush(this.brushed);
      });
    d3.select(this.brushLayer).call(this.brush);

    this.overlay.addEventListener('pointermove', (e) => this.onPointerMove(e));
    this.overlay.addEventListener('pointerleave', () => { this.hover = null; this.hideTooltip(); this.scheduler.schedule(); });
    this.overlay.addEventListener('click', (e) => this.onClick(e));
    this.scroll.addEventListener('scroll', () => this.scheduler.schedule());
    this.scroll.addEventListener('keydown', (e) => this.onKey(e));
    new ResizeObserver(() => { this.scrollWidth = -1; this.scheduler.schedule(); }).observe(this.scroll);
    new MutationObserver(() => { this.colors = null; this.scheduler.schedule(); })
      .observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  // ---------------------------------------------------------------------------------------------
  // Public controls

  setGrouping(grouping: LaneGrouping): void {
    if (grouping === this.grouping) return;
    this.grouping = grouping;
    this.clearSelection();
    this.scheduler.schedule();
  }

  /** `include` null shows every row. */
  setFilter(include: ((row: number) => boolean) | null): void {
    this.include = include;
    this.filterVersion++;
    this.clearSelection();
    this.scheduler.schedule();
  }

  toggleLane(key: string): void {
    if (this.collapsed.has(key)) this.collapsed.delete(key); else this.collapsed.add(key);
    this.builtKey = '';
    this.scheduler.schedule();
    this.callbacks.onViewChange();
  }

  /** Called after the store changed (a snapshot began or a batch arrived). */
  dataChanged(): void {
    const extent = this.store.timeExtent();
    if (!extent) { this.scheduler.schedule(); return; }
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
    } else if (previousWindow && this.followLatest) {
      const width = previousWindow[1] - previousWindow[0];
      const end = this.base.domain()[1];
      this.setWindow(end - width, end);
    } else if (previousWindow) {
      this.setWindow(previousWindow[0], previousWindow[1]);
    } else {
      this.setWindow(this.base.domain()[0], this.base.domain()[1]);
    }
    this.scheduler.schedule();
  }

  /** Restore a window once data arrives (persisted view state). */
  restoreWindow(start: number, end: number): void {
    this.userAdjusted = true;
    if (this.hasData) this.setWindow(start, end); else this.pendingWindow = [start, end];
  }

  private pendingWindowFits(extent: [number, number]): boolean {
    const [a, b] = this.pendingWindow!;
    return b > a && b >= extent[0] && a <= extent[1];
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
    this.configureZoom();
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

  resetZoom(): void {
    this.userAdjusted = true;
    const [a, b] = this.base.domain();
    this.setWindow(a, b);
  }

  clearBrush(): void {
    this.brushed = null;
    d3.select(this.brushLayer).call(this.brush.move, null);
  }

  selectedRow(): number | null {
    const lane = this.lanes[this.selectedLane];
    if (!lane || this.selectedPos < 0 || this.selectedPos >= lane.rows.length) return null;
    return lane.rows[this.selectedPos];
  }

  /** Rows (after the filter) in [t0, t1], each counted once. */
  rowsInRange(t0: number, t1: number): number[] {
    const out: number[] = [];
    for (const lane of this.lanes) {
      if (lane.kind === 'watch' && this.grouping !== 'event') continue; // those rows are also in a group lane
      const [s, e] = visibleRange(this.store.time, lane.rows, t0, t1);
      for (let i = s; i < e; i++) out.push(lane.rows[i]);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Derived data

  /**
   * The scroll area's clientWidth, cached: reading it forces a layout, and it is asked for on every
   * batch (dataChanged → setWindow). The ResizeObserver drops the cache when the size changes.
   */
  private scrollWidth = -1;

  private plotWidth(): number {
    if (this.scrollWidth < 0) this.scrollWidth = this.scroll.clientWidth;
    return Math.max(50, this.scrollWidth - LABEL_WIDTH);
  }

  private x(): d3.ScaleLinear<number, number> {
    this.base.range([0, Math.max(1, this.plotWidth())]);
    return this.transform.rescaleX(this.base);
  }

  private configureZoom(): void {
    const width = this.plotWidth();
    const height = Math.max(1, this.viewportHeight);
    const [b0, b1] = this.base.domain();
    this.zoom.extent([[0, 0], [width, height]])
      .scaleExtent([0.5, Math.max(1, (b1 - b0) / MIN_WINDOW_NS)])
      .translateExtent([[-width * 0.5, 0], [width * 1.5, height]]);
    this.brush.extent([[0, 0], [width, height]]);
    // The brush sizes its overlay when applied, so re-apply it for the new extent.
    d3.select(this.brushLayer).call(this.brush);
  }

  /**
   * Lanes (what the first frame needs: rows per lane, sorted by time). Span pairing is not part of
   * it: see ensureSpans.
   */
  private ensureDerived(): void {
    const key = `${this.store.version}|${this.grouping}|${this.filterVersion}|${[...this.collapsed].join(',')}`;
    if (key === this.builtKey) return;
    const previousKey = this.lanes[this.selectedLane]?.key;
    const previousRow = this.selectedRow();
    this.lanes = buildLanes(this.storeSource(), this.grouping, this.include, this.collapsed);
    this.laneTop = [];
    this.laneHeight = [];
    let y = 0;
    for (const lane of this.lanes) {
      this.laneTop.push(y);
      const h = lane.collapsed ? COLLAPSED_HEIGHT : LANE_HEIGHT;
      this.laneHeight.push(h);
      y += h + 1;
    }
    this.totalHeight = y;
    this.laneSpans = [];
    this.laneSpansKey = '';
    this.selectedLane = -1;
    this.selectedPos = -1;
    if (previousRow !== null) {
      const li = this.lanes.findIndex((l) => l.key === previousKey);
      if (li >= 0) {
        const pos = bisectLeft(this.store.time, this.lanes[li].rows, this.store.time[previousRow]);
        for (let p = pos; p < this.lanes[li].rows.length && this.store.time[this.lanes[li].rows[p]] === this.store.time[previousRow]; p++) {
          if (this.lanes[li].rows[p] === previousRow) { this.selectedLane = li; this.selectedPos = p; break; }
        }
      }
    }
    this.builtKey = key;
    this.renderLabels();
  }

  private storeSource() {
    const s = this.store;
    return {
      length: s.length, time: s.time, event: s.event, pid: s.pid, tid: s.tid, cpu: s.cpu, events: s.events, timeSorted: s.timeSorted,
      commOf: (row: number) => s.commOf(row),
    };
  }

  /**
   * Paired spans per lane, only drawn zoomed in: built on demand by the first zoomed-in frame, or
   * ahead of it in idle time after a frame (so the first paint of a big snapshot never waits for it).
   */
  private ensureSpans(): void {
    if (this.spansVersion !== this.store.version) {
      this.spans = pairSpans({ ...this.storeSource(), kind: this.store.kind, misc: this.store.misc });
      this.spansVersion = this.store.version;
      this.laneSpansKey = '';
    }
    if (this.laneSpansKey !== this.builtKey) {
      this.buildLaneSpans();
      this.laneSpansKey = this.builtKey;
    }
  }

  private ensureSpansWhenIdle(): void {
    if (this.idleSpansPending || (this.spansVersion === this.store.version && this.laneSpansKey === this.builtKey)) return;
    this.idleSpansPending = true;
    const run = () => {
      this.idleSpansPending = false;
      // Lanes may have changed since: build spans for what the next frame will show.
      if (!this.scheduler.isPending) { this.ensureDerived(); this.ensureSpans(); }
    };
    if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 1000 }); else setTimeout(run, 50);
  }

  private buildLaneSpans(): void {
    this.laneSpans = this.lanes.map(() => undefined);
    const spans = this.spans;
    if (!spans || spans.count === 0) return;
    const laneOfKey = new Map(this.lanes.map((l, i) => [l.key, i]));
    const perLane = new Map<number, number[]>();
    for (let i = 0; i < spans.count; i++) {
      const open = spans.openRow[i];
      if (this.include !== null && !this.include(open)) continue;
      let key: string;
      switch (this.grouping) {
        case 'cpu': key = `cpu:${spans.cpu[i]}`; break;
        case 'thread': key = `thread:${spans.tid[i]}`; break;
        case 'event': key = `event:${this.store.events[this.store.event[open]]?.name}`; break;
      }
      const li = laneOfKey.get(key);
      if (li === undefined) continue;
      let list = perLane.get(li);
      if (!list) { list = []; perLane.set(li, list); }
      list.push(i);
    }
    for (const [li, list] of perLane) {
      list.sort((a, b) => spans.start[a] - spans.start[b]);
      const n = list.length;
      const ls: LaneSpans = { start: new Float64Array(n), end: new Float64Array(n), prefixMaxEnd: new Float64Array(n), type: new Uint8Array(n) };
      let maxEnd = -Infinity;
      list.forEach((s, j) => {
        ls.start[j] = spans.start[s]; ls.end[j] = spans.end[s]; ls.type[j] = spans.type[s];
        maxEnd = Math.max(maxEnd, spans.end[s]);
        ls.prefixMaxEnd[j] = maxEnd;
      });
      this.laneSpans[li] = ls;
    }
  }

  private renderLabels(): void {
    this.labels.replaceChildren();
    this.labels.style.height = `${this.totalHeight}px`;
    this.lanes.forEach((lane, i) => {
      const row = el('div', `rs-lane-label${lane.kind === 'watch' ? ' rs-watch-lane' : ''}${lane.collapsed ? ' rs-collapsed' : ''}`, this.labels);
      row.setAttribute('role', 'listitem');
      row.dataset.lane = lane.key;
      row.style.top = `${this.laneTop[i]}px`;
      row.style.height = `${this.laneHeight[i]}px`;
      const toggle = el('button', 'rs-lane-toggle', row);
      toggle.type = 'button';
      toggle.textContent = lane.collapsed ? '▸' : '▾';
      toggle.setAttribute('aria-expanded', String(!lane.collapsed));
      toggle.setAttribute('aria-label', `${lane.collapsed ? 'Expand' : 'Collapse'} lane ${lane.label}`);
      toggle.addEventListener('click', () => this.toggleLane(lane.key));
      const name = el('span', 'rs-lane-name', row);
      name.textContent = lane.label;
      name.title = lane.label;
      const count = el('span', 'rs-lane-count', row);
      count.textContent = lane.rows.length.toLocaleString('en-US');
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering

  private readColors(): Colors {
    const style = getComputedStyle(this.scroll);
    const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    const mark = v('--rs-mark', '#3794ff');
    return {
      mark, laneAlt: v('--rs-lane-alt', 'rgba(128,128,128,0.08)'), hatch: v('--rs-hatch', '#888'), lost: v('--rs-lost', '#f14c4c'),
      span: v('--rs-span', mark), syscall: v('--rs-syscall', '#cca700'), selection: v('--rs-selection', '#ffffff'),
      boundary: v('--rs-boundary', '#888'), foreground: v('--rs-foreground', '#ccc'),
      palette: [0, 1, 2, 3, 4, 5].map((i) => v(`--rs-palette-${i}`, mark)),
    };
  }

  render(): void {
    const started = performance.now();
    this.ensureDerived();
    this.colors ??= this.readColors();
    const width = this.plotWidth();
    const viewport = Math.max(40, this.scroll.clientHeight);
    const resized = width !== this.width || viewport !== this.viewportHeight;
    this.width = width;
    this.viewportHeight = viewport;
    this.dpr = window.devicePixelRatio || 1;
    if (resized) {
      const current = this.hasData ? this.window() : null;
      this.configureZoom();
      if (current) this.setWindow(current[0], current[1]);
    }
    this.plot.style.width = `${width}px`;
    this.plot.style.height = `${viewport}px`;
    this.plot.style.marginLeft = `${LABEL_WIDTH}px`;
    (this.labels.parentElement as HTMLElement).style.marginTop = `${-viewport}px`;
    this.sizeCanvas(this.canvas, width, viewport);
    this.overlay.setAttribute('width', String(width));
    this.overlay.setAttribute('height', String(viewport));
    const x = this.x();
    this.drawAxis(x);
    this.drawCoverage(x);
    this.drawLanes(x);
    this.drawOverlay(x);
    this.canvas.setAttribute('aria-label', `Timeline: ${this.store.length.toLocaleString('en-US')} records in ${this.lanes.length} lanes`);
    this.lastRenderMs = performance.now() - started;
    this.renderCount++;
    this.canvas.dataset.renders = String(this.renderCount);
    this.ensureSpansWhenIdle();
  }

  private sizeCanvas(canvas: HTMLCanvasElement, width: number, height: number): void {
    const w = Math.round(width * this.dpr);
    const h = Math.round(height * this.dpr);
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }

  private drawAxis(x: d3.ScaleLinear<number, number>): void {
    const width = this.width;
    const svg = d3.select(this.axisSvg).attr('width', width).attr('height', AXIS_HEIGHT);
    const ticks = x.ticks(Math.max(2, Math.floor(width / 110)));
    const step = ticks.length > 1 ? ticks[1] - ticks[0] : (x.domain()[1] - x.domain()[0]);
    const axis = d3.axisBottom(x).tickValues(ticks).tickFormat((d) => axisTickFormatter(step)(+d)).tickSizeOuter(0);
    let g = svg.select<SVGGElement>('g.rs-axis-g');
    if (g.empty()) g = svg.append('g').attr('class', 'rs-axis-g');
    g.attr('transform', 'translate(0,2)').call(axis);
    const [d0, d1] = x.domain();
    this.axisSvg.dataset.domainStart = String(d0);
    this.axisSvg.dataset.domainEnd = String(d1);
    this.axisSvg.setAttribute('aria-label', `Time axis from ${formatDuration(d0)} to ${formatDuration(d1)} (${formatDuration(d1 - d0)} visible)`);
  }

  private hatchPattern(ctx: CanvasRenderingContext2D, color: string): CanvasPattern | string {
    const tile = document.createElement('canvas');
    tile.width = tile.height = 6;
    const t = tile.getContext('2d');
    if (!t) return color;
    t.strokeStyle = color;
    t.lineWidth = 1.5;
    t.beginPath(); t.moveTo(0, 6); t.lineTo(6, 0); t.moveTo(-1, 1); t.lineTo(1, -1); t.moveTo(5, 7); t.lineTo(7, 5); t.stroke();
    return ctx.createPattern(tile, 'repeat') ?? color;
  }

  private drawCoverage(x: d3.ScaleLinear<number, number>): void {
    const colors = this.colors!;
    const origin = this.store.originNs;
    const labels: string[] = [];
    for (const s of this.store.snapshots) for (const c of s.coverage) if (!labels.includes(c.label)) labels.push(c.label);
    const height = Math.max(1, labels.length * COVERAGE_ROW + 2);
    this.sizeCanvas(this.coverageCanvas, this.width, height);
    const ctx = this.coverageCanvas.getContext('2d');
    if (!ctx || origin === null) return;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, height);
    const hatch = this.hatchPattern(ctx, colors.hatch);
    const lostHatch = this.hatchPattern(ctx, colors.lost);
    let previousEnd = this.base.domain()[0];
    for (const snap of this.store.snapshots) {
      for (const c of snap.coverage) {
        const y = 1 + labels.indexOf(c.label) * COVERAGE_ROW;
        const h = COVERAGE_ROW - 2;
        const oldest = c.oldestTimeNs === null ? null : Number(BigInt(c.oldestTimeNs) - origin);
        const newest = c.newestTimeNs === null ? null : Number(BigInt(c.newestTimeNs) - origin);
        if (oldest !== null && newest !== null) {
          const x0 = x(oldest);
          const x1 = Math.max(x(newest), x0 + 1);
          ctx.globalAlpha = 0.55;
          ctx.fillStyle = colors.mark;
          ctx.fillRect(x0, y, x1 - x0, h);
          ctx.globalAlpha = 1;
          if (BigInt(c.bytesOverwritten) > 0n) {
            // What the ring overwrote happened before its oldest retained record: hatch back to the
            // previous snapshot (or the start of the view), at least a few pixels so it shows.
            const hx0 = Math.min(x(previousEnd), x0 - 6);
            ctx.fillStyle = hatch;
            ctx.fillRect(hx0, y, x0 - hx0, h);
          }
        }
        if (BigInt(c.lost) > 0n) {
          const at = x(newest ?? snap.maxTime);
          ctx.fillStyle = lostHatch;
          ctx.fillRect(at, y - 1, 6, h + 2);
        }
      }
      if (Number.isFinite(snap.maxTime)) previousEnd = snap.maxTime;
    }
  }

  private drawLanes(x: d3.ScaleLinear<number, number>): void {
    const ctx = this.canvas.getContext('2d', { alpha: true });
    if (!ctx) return;
    const colors = this.colors!;
    const dpr = this.dpr;
    const W = this.canvas.width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, W, this.canvas.height);
    const [t0, t1] = x.domain();
    const scrollTop = this.scroll.scrollTop;
    const time = this.store.time;
    const event = this.store.event;
    const pxPerNs = W / (t1 - t0);
    if (this.densityBuffer.length < W) this.densityBuffer = new Uint32Array(W);
    for (let li = 0; li < this.lanes.length; li++) {
      const top = this.laneTop[li] - scrollTop;
      const h = this.laneHeight[li];
      if (top + h < 0) continue;
      if (top > this.viewportHeight) break;
      const lane = this.lanes[li];
      const y = Math.round(top * dpr);
      const hp = Math.round(h * dpr);
      // A hairline under each lane; no background fill, so every painted pixel is a mark.
      ctx.fillStyle = colors.laneAlt;
      ctx.fillRect(0, y + hp, W, 1);
      const [s, e] = visibleRange(time, lane.rows, t0, t1);
      const n = e - s;
      if (n === 0) continue;
      if (lane.collapsed || n > W / 3) {
        // Wide zoom: one fill per device-pixel column, intensity by log(count).
        const { counts, max } = binDensity(time, lane.rows, t0, t1, W, this.densityBuffer);
        ctx.fillStyle = lane.kind === 'watch' ? colors.palette[3] : colors.mark;
        for (let px = 0; px < counts.length; px++) {
          const c = counts[px];
          if (c === 0) continue;
          ctx.globalAlpha = densityAlpha(c, max);
          ctx.fillRect(px, y + 1, 1, hp - 2);
        }
        ctx.globalAlpha = 1;
        continue;
      }
      // Zoomed in: spans as bars on the lower half, records as ticks; same-pixel marks skipped.
      this.ensureSpans();
      const spans = this.laneSpans[li];
      if (spans) {
        const first = bisectLeft(spans.prefixMaxEnd, identity(spans.prefixMaxEnd.length), t0);
        const last = bisectRight(spans.start, identity(spans.start.length), t1);
        let lastX1 = -1;
        for (let i = first; i < last; i++) {
          if (spans.end[i] < t0) continue;
          const x0 = Math.max(0, Math.floor((spans.start[i] - t0) * pxPerNs));
          const x1 = Math.min(W, Math.ceil((spans.end[i] - t0) * pxPerNs));
          if (x1 <= lastX1 && x1 - x0 <= 1) continue;
          ctx.fillStyle = spans.type[i] === SpanType.SYSCALL ? colors.syscall : colors.span;
          ctx.globalAlpha = 0.45;
          ctx.fillRect(x0, y + Math.round(hp / 2), Math.max(1, x1 - x0), Math.round(hp / 2) - 1);
          lastX1 = x1;
        }
        ctx.globalAlpha = 1;
      }
      let lastPx = -1;
      const tickW = Math.max(1, Math.round(dpr));
      for (let i = s; i < e; i++) {
        const row = lane.rows[i];
        const px = Math.floor((time[row] - t0) * pxPerNs);
        if (px === lastPx) continue;
        lastPx = px;
        ctx.fillStyle = colors.palette[event[row] % colors.palette.length];
        ctx.fillRect(px, y + 2, tickW, hp - 4);
      }
    }
  }

  private drawOverlay(x: d3.ScaleLinear<number, number>): void {
    const colors = this.colors!;
    const marks = d3.select(this.marks);
    const scrollTop = this.scroll.scrollTop;
    const boundaries = this.store.snapshots.filter((s) => Number.isFinite(s.maxTime));
    marks.selectAll<SVGLineElement, unknown>('line.rs-boundary')
      .data(boundaries, (d) => (d as { id: string }).id)
      .join('line').attr('class', 'rs-boundary')
      .attr('x1', (d) => x(d.maxTime)).attr('x2', (d) => x(d.maxTime))
      .attr('y1', 0).attr('y2', this.viewportHeight)
      .attr('stroke', colors.boundary);
    marks.selectAll<SVGTextElement, unknown>('text.rs-boundary-label')
      .data(boundaries, (d) => (d as { id: string }).id)
      .join('text').attr('class', 'rs-boundary-label')
      .attr('x', (d) => x(d.maxTime) - 4).attr('y', 10).attr('text-anchor', 'end')
      .text((d) => d.name);
    const row = this.selectedRow();
    const sel = row === null ? [] : [row];
    marks.selectAll<SVGCircleElement, number>('circle.rs-selected')
      .data(sel).join('circle').attr('class', 'rs-selected')
      .attr('cx', (r) => x(this.store.time[r]))
      .attr('cy', () => this.laneTop[this.selectedLane] - scrollTop + this.laneHeight[this.selectedLane] / 2)
      .attr('r', 5).attr('stroke', colors.selection);
    const hover = this.hover ? [this.hover] : [];
    marks.selectAll<SVGLineElement, unknown>('line.rs-hover')
      .data(hover).join('line').attr('class', 'rs-hover')
      .attr('x1', (h) => h.x).attr('x2', (h) => h.x).attr('y1', 0).attr('y2', this.viewportHeight);
  }

  // ---------------------------------------------------------------------------------------------
  // Interaction

  private laneAtY(y: number): number {
    const target = y + this.scroll.scrollTop;
    let lo = 0;
    let hi = this.lanes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (target < this.laneTop[mid]) hi = mid - 1;
      else if (target > this.laneTop[mid] + this.laneHeight[mid]) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** The record under a point of the plot, or null. */
  hitTest(px: number, py: number): { lane: number; pos: number } | null {
    const li = this.laneAtY(py);
    if (li < 0) return null;
    const x = this.x();
    const t = x.invert(px);
    const radius = Math.abs(x.invert(px + HIT_RADIUS_PX) - t);
    const pos = nearestPosition(this.store.time, this.lanes[li].rows, t, radius);
    return pos < 0 ? null : { lane: li, pos };
  }

  private onPointerMove(e: PointerEvent): void {
    const r = this.overlay.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const hit = this.hitTest(px, py);
    if (!hit) { this.hover = null; this.hideTooltip(); this.scheduler.schedule(); return; }
    const row = this.lanes[hit.lane].rows[hit.pos];
    this.hover = { ...hit, x: this.x()(this.store.time[row]), y: py };
    this.showTooltip(row, e.clientX, e.clientY);
    this.scheduler.schedule();
  }

  private onClick(e: MouseEvent): void {
    if (e.shiftKey) return;
    this.scroll.focus({ preventScroll: true });
    const r = this.overlay.getBoundingClientRect();
    const hit = this.hitTest(e.clientX - r.left, e.clientY - r.top);
    if (hit) this.select(hit.lane, hit.pos); else this.clearSelection();
  }

  describeRow(row: number): string[] {
    const s = this.store;
    const origin = s.originNs ?? 0n;
    const ev = s.events[s.event[row]];
    const lines = [
      `${ev?.name ?? 'event ?'} · ${kindName(s.kind[row])}`,
      `time ${formatAbsolute(origin, s.time[row])} (+${formatDuration(s.time[row] - (this.store.timeExtent()?.[0] ?? 0))})`,
      `${s.commOf(row) || '?'} pid ${s.pid[row]} tid ${s.tid[row]} · cpu ${s.cpu[row]}`,
    ];
    const ipHi = s.ipHi[row];
    const ipLo = s.ipLo[row];
    const sym = s.symbolOf(row);
    if (ipHi !== 0 || ipLo !== 0 || sym) lines.push(`ip ${formatAddress(ipHi, ipLo)}${sym ? ` ${sym}` : ''}`);
    return lines;
  }

  private showTooltip(row: number, clientX: number, clientY: number): void {
    const lines = this.describeRow(row);
    this.tooltip.replaceChildren(...lines.map((l) => { const d = document.createElement('div'); d.textContent = l; return d; }));
    this.tooltip.hidden = false;
    const host = this.tooltip.parentElement!.getBoundingClientRect();
    const left = Math.min(clientX - host.left + 14, host.width - this.tooltip.offsetWidth - 4);
    this.tooltip.style.left = `${Math.max(0, left)}px`;
    this.tooltip.style.top = `${clientY - host.top + 14}px`;
  }

  private hideTooltip(): void { this.tooltip.hidden = true; }

  select(lane: number, pos: number): void {
    this.selectedLane = lane;
    this.selectedPos = pos;
    const row = this.lanes[lane].rows[pos];
    this.ensureVisible(lane, this.store.time[row]);
    this.scheduler.schedule();
    this.callbacks.onSelect(row);
  }

  clearSelection(): void {
    if (this.selectedLane < 0) return;
    this.selectedLane = -1;
    this.selectedPos = -1;
    this.scheduler.schedule();
    this.callbacks.onSelect(null);
  }

  private ensureVisible(lane: number, t: number): void {
    const [a, b] = this.window();
    if (t < a || t > b) {
      const half = (b - a) / 2;
      this.setWindow(t - half, t + half);
    }
    const top = this.laneTop[lane];
    if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
    else if (top + this.laneHeight[lane] > this.scroll.scrollTop + this.viewportHeight) {
      this.scroll.scrollTop = top + this.laneHeight[lane] - this.viewportHeight;
    }
  }

  private firstVisibleLane(): number {
    return this.lanes.findIndex((l) => l.rows.length > 0);
  }

  private onKey(e: KeyboardEvent): void {
    this.ensureDerived();
    let lane = this.selectedLane;
    let pos = this.selectedPos;
    const rowsOf = (li: number) => this.lanes[li].rows;
    const time = this.store.time;
    const needSelection = (): boolean => {
      if (lane >= 0) return true;
      lane = this.firstVisibleLane();
      if (lane < 0) return false;
      const [a] = this.window();
      pos = Math.min(bisectLeft(time, rowsOf(lane), a), rowsOf(lane).length - 1);
      this.select(lane, pos);
      return false;
    };
    switch (e.key) {
      case 'ArrowRight':
        if (needSelection() && pos + 1 < rowsOf(lane).length) this.select(lane, pos + 1);
        break;
      case 'ArrowLeft':
        if (needSelection() && pos > 0) this.select(lane, pos - 1);
        break;
      case 'ArrowDown':
      case 'ArrowUp': {
        if (!needSelection()) break;
        const t = time[rowsOf(lane)[pos]];
        const step = e.key === 'ArrowDown' ? 1 : -1;
        for (let li = lane + step; li >= 0 && li < this.lanes.length; li += step) {
          if (rowsOf(li).length === 0) continue;
          const p = nearestPosition(time, rowsOf(li), t, Infinity);
          this.select(li, p);
          break;
        }
        break;
      }
      case 'Home':
        if (lane < 0) lane = this.firstVisibleLane();
        if (lane >= 0) this.select(lane, 0);
        break;
      case 'End':
        if (lane < 0) lane = this.firstVisibleLane();
        if (lane >= 0) this.select(lane, rowsOf(lane).length - 1);
        break;
      case '+':
      case '=':
        this.zoomBy(2, this.selectedRow() !== null ? time[this.selectedRow()!] : undefined);
        break;
      case '-':
      case '_':
        this.zoomBy(0.5, this.selectedRow() !== null ? time[this.selectedRow()!] : undefined);
        break;
      case 'Escape':
        this.clearSelection();
        this.clearBrush();
        this.callbacks.onBrush(null);
        break;
      default:
        return;
    }
    e.preventDefault();
    this.callbacks.onViewChange();
  }

  private syncBrush(): void {
    if (!this.brushed) return;
    const x = this.x();
    d3.select(this.brushLayer).call(this.brush.move, [x(this.brushed[0]), x(this.brushed[1])]);
  }
}

let identityCache = new Uint32Array(0);
/** 0..n-1, so the row-indexed bisection helpers can search a plain sorted array. */
function identity(n: number): Uint32Array {
  if (identityCache.length < n) {
    identityCache = new Uint32Array(Math.max(n, identityCache.length * 2));
    for (let i = 0; i < identityCache.length; i++) identityCache[i] = i;
  }
  return identityCache.subarray(0, n);
}

