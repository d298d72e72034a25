// The timeline chart: the lanes of the shown capture on one canvas under a D3 time axis (time since the
// capture's start, or the perf clock), with its ring coverage strip, its end mark, selection and hover. It
// composes its parts: the viewport (zoom, pan, brush; viewport.ts), the layout built before each frame (lanes
// and spans; layout.ts), the draw functions (draw.ts) and interaction (hit-testing, tooltip, keys;
// interaction.ts). Every redraw goes through the one rAF scheduler.

import type { LaneGrouping } from './view-state';
import type { RecordStore } from './store';
import type { Lane } from './lanes';
import { bisectLeft, visibleRange } from './hit-test';
import { RenderScheduler } from './scheduler';
import { Viewport } from './viewport';
import { TimelineLayout, type LaneMode, type StackView } from './layout';
import { transformStackView, type CallTreeTransform } from './call-tree-transforms';
import { describeHitValues, valueSeries, VALUE_HITS_MAX, type HitValues, type HitValueStore, type ValueSeries } from './value-lane';
import { drawAxis, drawCoverage, drawLanes, drawOverlay, readColors, sizeCanvas, type Colors } from './draw';
import { describeRow, handleKey, hitTest, laneAtY, Tooltip } from './interaction';
import { markAt, type LossMark } from './losses';
import { matchIndex, stepMatch } from './search';
import { MIN_LOSS_WIDTH } from './draw';
import { el } from './dom';
import { TimeBase } from './time-format';
import type { Selection } from './aggregation';
import { describeState, stateAt, STATE_BAND_HEIGHT } from './state-lane';
import { describeBox, entryOf, stackBoxAt, STACK_ROW_HEIGHT, type StackBox, type StackChart, type StackColumnsInput } from './stack-chart';
import { stacksHolding, type ActivityGraph } from './activity-graph';
import { LANE_HEIGHT } from './layout';
import type { SourceLocation, StackTable } from '../shared/stacks';

export const LABEL_WIDTH = 190;
/**
 * Up to this many records a frame that shows a lane zoomed in pairs the spans itself; above it they
 * are paired in idle time after the frame and the frame is drawn again (pairing takes about a
 * quarter of a microsecond a row in code the page has not optimised yet: 25 ms here).
 */
const SPANS_IN_FRAME_MAX_ROWS = 100_000;

export interface TimelineCallbacks {
  onSelect(row: number | null): void;
  onBrush(range: [number, number] | null): void;
  onViewChange(): void;
  /** The lanes were rebuilt (new records, grouping, filter or collapsed lanes): counts may have changed. */
  onLanesChanged?(): void;
  /** A stack chart box was clicked: reveal its function's source (the panel asks the editor; the offline page cannot). */
  onRevealSource?(location: SourceLocation): void;
}

/** Stack chart boxes found under the pointer that are kept for the pointer's next moves (Timeline.foundBoxes). */
const FOUND_BOXES_KEPT = 32;

/** A stack chart box under the pointer, and its lane. */
export interface StackBoxHit {
  readonly lane: number;
  readonly box: StackBox;
}

export class Timeline {
  grouping: LaneGrouping = 'thread';
  readonly collapsed = new Set<string>();
  /**
   * What the user chose, by lane key, for thread lanes with callchains (their button); the others have the default: a
   * stack chart where one such lane is shown, ticks and an activity graph where several are (see LaneLayout.update).
   */
  readonly laneModes = new Map<string, LaneMode>();
  followLatest = false;
  /** The capture shown (index in the store's snapshots; -1 before any): its records alone are laid out. */
  shown = -1;
  /** Times as the perf clock instead of time since the shown capture's start. */
  private perfClock = false;
  /** The active filter; null when every row is shown (the common case skips a call per row). */
  private include: ((row: number) => boolean) | null = null;
  private filterVersion = 0;
  private readonly layout: TimelineLayout;
  private readonly viewport: Viewport;

  selectedLane = -1;
  selectedPos = -1;
  private hover: { lane: number; pos: number; x: number; y: number } | null = null;
  /**
   * The function whose stack chart boxes and activity are highlighted (index into the charts' table's names, which start
   * with the store's; -1: none).
   */
  private highlightName = -1;
  /** The name asked for by setHighlightedFunction (null: none), resolved to highlightName as stacks arrive. */
  private highlightText: string | null = null;
  /** Which stacks hold the highlighted function, for the table they were found in. */
  private holding: { name: number; of: StackTable; table: Uint8Array } | null = null;
  /** Each activity graph the last frame drew, by lane index. */
  private readonly drawnActivity = new Map<number, ActivityGraph>();
  /** Where the value lanes' hits get their values (the page's one store of them; null: value lanes draw ticks only). */
  hitValues: HitValueStore | null = null;
  /** Each value lane's series, for the lane's rows and the values known when it was made. */
  private readonly valueSeriesOf = new Map<number, { rows: Uint32Array; version: number; series: ValueSeries }>();
  /** The call tree's transforms, which the stack charts draw through too. */
  private stackTransforms: readonly CallTreeTransform[] = [];
  /** The stacks rewritten by them, for the stack table they were rewritten from. */
  private transformedStacks: { table: StackTable; view: StackView } | null = null;

  readonly scheduler: RenderScheduler;
  private readonly scroll: HTMLDivElement;
  private readonly plot: HTMLDivElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly coverageCanvas: HTMLCanvasElement;
  private readonly overlay: SVGSVGElement;
  private readonly axisSvg: SVGSVGElement;
  private readonly labels: HTMLDivElement;
  private readonly tooltip: Tooltip;
  private readonly brushLayer: SVGGElement;
  private readonly marks: SVGGElement;
  private readonly root: HTMLDivElement;
  private readonly corner: HTMLDivElement;
  private readonly resizes: ResizeObserver;
  private readonly themes: MutationObserver;
  /** Removed from the page: a frame already asked for draws nothing. */
  private disposed = false;
  private width = 0;
  private viewportHeight = 0;
  private dpr = 1;
  private colors: Colors | null = null;
  /**
   * The lane area's visible height and scroll position as last read, or -1: read them again. Reading either lays the
   * page out when anything changed it since the last frame (the call tree's rows just drawn, a tooltip), inside the
   * frame's callback; a zoom or pan frame changes neither, and what does is known: the resize observer, the scroll
   * event, and this chart's own writes of the lane area's height and scroll position.
   */
  private knownHeight = -1;
  private knownScrollTop = -1;
  /** The numbers of the canvas's aria-label as last set (set again only when they change). */
  private canvasLabel = '';
  /** Time spent in the last render, ms (for benchmarks and the status line). */
  lastRenderMs = 0;
  renderCount = 0;
  /** A frame was drawn without the spans it shows: draw again once idle time has paired them. */
  private redrawWithSpans = false;

  constructor(
    host: HTMLElement,
    private readonly store: RecordStore,
    private readonly callbacks: TimelineCallbacks,
  ) {
    this.scheduler = new RenderScheduler(() => this.render());
    this.layout = new TimelineLayout(store, () => this.stackView());
    const root = (this.root = el('div', 'rs-timeline', host));

    const axisRow = el('div', 'rs-axis-row', root);
    this.corner = el('div', 'rs-axis-corner', axisRow, 'Lanes');
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
    this.scroll.setAttribute(
      'aria-label',
      'Timeline lanes. Arrows move between records, plus and minus or W and S zoom, A and D pan, ' + 'Home and End jump, Shift+drag selects a range.',
    );
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
    this.tooltip = new Tooltip(el('div', 'rs-tooltip', root));

    this.viewport = new Viewport(this.overlay, this.brushLayer, () => this.measurePlotWidth(), {
      onZoom: (byUser) => {
        if (byUser) this.followLatest = false;
        this.tooltip.hide();
        this.scheduler.schedule();
        this.callbacks.onViewChange();
      },
      onBrush: (range) => this.callbacks.onBrush(range),
    });

    this.overlay.addEventListener('pointermove', (e) => this.onPointerMove(e));
    this.overlay.addEventListener('pointerleave', () => {
      this.hover = null;
      this.tooltip.hide();
      this.scheduler.schedule();
    });
    this.overlay.addEventListener('click', (e) => this.onClick(e));
    this.scroll.addEventListener('scroll', () => {
      this.knownScrollTop = -1;
      this.scheduler.schedule();
    });
    this.scroll.addEventListener('keydown', (e) => this.onKey(e));
    this.resizes = new ResizeObserver(() => {
      // The frames set the lane area's height themselves (renderLabels): a size the last frame was drawn at is no
      // resize (it asked for a second frame of the same view after every first paint). Layout is clean here: the reads
      // cost nothing.
      if (this.renderCount > 0 && this.measurePlotWidth() === this.width && this.measurePlotHeight() === this.viewportHeight) return;
      this.viewport.invalidateWidth();
      this.knownHeight = -1;
      this.knownScrollTop = -1;
      this.scheduler.schedule();
    });
    this.resizes.observe(this.scroll);
    this.themes = new MutationObserver(() => {
      this.colors = null;
      this.scheduler.schedule();
    });
    this.themes.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  /** Names the chart (its capture, when two are compared) in the corner above its lane labels; null: "Lanes". */
  setTitle(title: string | null): void {
    this.corner.textContent = title ?? 'Lanes';
    this.corner.title = title ?? '';
    this.root.classList.toggle('rs-titled', title !== null);
  }

  /** Removes the chart from the page and stops observing it. */
  dispose(): void {
    this.disposed = true;
    this.resizes.disconnect();
    this.themes.disconnect();
    this.tooltip.hide();
    this.root.remove();
  }

  get lanes(): Lane[] {
    return this.layout.lanes;
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
    if (this.collapsed.has(key)) this.collapsed.delete(key);
    else this.collapsed.add(key);
    this.layout.invalidate();
    this.scheduler.schedule();
    this.callbacks.onViewChange();
  }

  /** Switch a thread lane with callchains between its stack chart and ticks. */
  toggleStackChart(key: string): void {
    this.ensureLayout();
    const li = this.lanes.findIndex((l) => l.key === key);
    const chart = li >= 0 && this.layout.stackDepth[li] > 0;
    this.laneModes.set(key, chart ? 'ticks' : 'chart');
    this.layout.invalidate();
    this.scheduler.schedule();
    this.callbacks.onViewChange();
  }

  /**
   * Highlight a function's boxes in the stack charts and its share of the activity graphs (the function the call tree,
   * the flame graph and the filter's stack:= term choose; null: none). Names are the stack table's (functions).
   */
  setHighlightedFunction(name: string | null): void {
    this.highlightText = name;
    this.highlightName = -1;
    this.resolveHighlight();
    this.scheduler.schedule();
  }

  /**
   * Draw the stack charts through the call tree's transforms (focus on a function, merge a function, collapse a library),
   * as its trees and flame graph are: their boxes are the transformed callchains of the samples.
   */
  setStackTransforms(transforms: readonly CallTreeTransform[]): void {
    if (JSON.stringify(transforms) === JSON.stringify(this.stackTransforms)) return;
    this.stackTransforms = [...transforms];
    this.transformedStacks = null;
    // The highlighted name is found again in the new table (a collapsed library's frame is gone or elsewhere).
    if (this.highlightText !== null) this.highlightName = -1;
    this.layout.invalidate();
    this.scheduler.schedule();
  }

  /** The stacks the charts draw: the store's, or rewritten by the transforms (once per stack table and transforms). */
  private stackView(): StackView {
    const table = this.store.stackTable();
    if (this.stackTransforms.length === 0) return { table, map: null, key: '' };
    if (this.transformedStacks?.table !== table) {
      const { table: rewritten, map } = transformStackView(table, this.stackTransforms);
      this.transformedStacks = { table, view: { table: rewritten, map, key: `${JSON.stringify(this.stackTransforms)}|${table.start.length}` } };
    }
    return this.transformedStacks.view;
  }

  /** The highlighted function's index, once the stacks that name it have arrived (the filter's text is lower-cased). */
  private resolveHighlight(): void {
    if (this.highlightText === null || this.highlightName >= 0) return;
    // The charts' table: a collapsed library's frame, which the transforms added, can be highlighted too.
    const names = this.stackView().table.names;
    const wanted = this.highlightText;
    let index = names.indexOf(wanted);
    if (index < 0) index = names.findIndex((n) => n.toLowerCase() === wanted.toLowerCase());
    this.highlightName = index;
  }

  /** The highlighted function's name, or null. */
  highlightedFunction(): string | null {
    return this.highlightName < 0 ? null : (this.stackView().table.names[this.highlightName] ?? null);
  }

  /**
   * Which stacks of the charts' table (the transforms' rewrite) hold the highlighted function, found again when stacks
   * were added or the transforms changed; null without one.
   */
  private holdingStacks(): Uint8Array | null {
    if (this.highlightName < 0) return null;
    const table = this.stackView().table;
    if (this.holding?.name !== this.highlightName || this.holding.of !== table) {
      this.holding = { name: this.highlightName, of: table, table: stacksHolding(table, this.highlightName) };
    }
    return this.holding.table;
  }

  /**
   * The boxes of the stack chart of the lane `key` as laid out (undefined: the lane is not one): a pass over the lane's
   * samples, made when asked (for tests and tools; drawing, hover and click need none of it).
   */
  stackChartOf(key: string): StackChart | undefined {
    this.ensureLayout();
    const li = this.lanes.findIndex((l) => l.key === key);
    return li < 0 ? undefined : this.layout.stackChart(li);
  }

  /** A value lane's hits and their values as read so far (asking the host for the first VALUE_HITS_MAX hits' values). */
  valueSeries(lane: number): ValueSeries | undefined {
    const store = this.hitValues;
    const l = this.lanes[lane];
    if (!store || l?.kind !== 'values') return undefined;
    const cached = this.valueSeriesOf.get(lane);
    if (cached && cached.rows === l.rows && cached.version === store.version) return cached.series;
    const times = new Float64Array(l.rows.length);
    const values: (HitValues | undefined)[] = [];
    for (let i = 0; i < l.rows.length; i++) {
      const row = l.rows[i];
      times[i] = this.store.time[row];
      values.push(this.hitValuesOf(row, i < VALUE_HITS_MAX));
    }
    const series = valueSeries(times, values);
    this.valueSeriesOf.set(lane, { rows: l.rows, version: store.version, series });
    return series;
  }

  /** A store row's logpoint values (undefined: not known yet; asked of the host when `ask`). */
  private hitValuesOf(row: number, ask: boolean): HitValues | undefined {
    const snap = this.store.snapshots[this.store.snapshotIndexOf(row)];
    return snap ? this.hitValues?.valuesOf(snap.id, this.store.localRowOf(row), ask) : undefined;
  }

  /** The stack table the charts' boxes name their functions in (the store's, with what the transforms added). */
  stackChartTable(): StackTable {
    return this.stackView().table;
  }

  /** The activity graph the last frame drew in the lane `key`, or undefined. */
  activityOf(key: string): ActivityGraph | undefined {
    const li = this.lanes.findIndex((l) => l.key === key);
    return li < 0 ? undefined : this.drawnActivity.get(li);
  }

  /**
   * The boxes last found under the pointer, newest first, and what they were found in: a pointer moving inside one, or
   * back to one (down a depth and up again), finds it without a search (a root box of a million samples is a pass over
   * them, ~20 ms). Forgotten when the lanes or the stacks they were found in change.
   */
  private foundBoxes: { hits: StackBoxHit[]; lanes: readonly Lane[]; table: StackTable; map: Int32Array | null } | null = null;

  /** The stack chart box under a point of the plot, or null: found from the lane's samples (stackBoxAt), none built. */
  stackBoxAt(px: number, py: number): StackBoxHit | null {
    const y = py + this.scroll.scrollTop;
    const li = laneAtY(this.layout, y);
    if (li < 0 || !(this.layout.stackDepth[li] > 0)) return null;
    const depth = Math.floor((y - this.layout.laneTop[li] - LANE_HEIGHT) / STACK_ROW_HEIGHT);
    if (depth < 0 || depth >= this.layout.stackDepth[li]) return null;
    const x = this.viewport.x();
    const t = x.invert(px);
    // Half a pixel either side: a box of a single sample at wide zoom is still under the pointer it is drawn under.
    const slack = Math.abs(x.invert(px + 0.5) - t);
    const view = this.stackView();
    let found = this.foundBoxes;
    // (Lanes built again are a new list: a live append or a filter changes their rows.)
    if (!found || found.lanes !== this.lanes || found.table !== view.table || found.map !== view.map) {
      found = this.foundBoxes = { hits: [], lanes: this.lanes, table: view.table, map: view.map };
    }
    const known = found.hits.find((h) => h.lane === li && h.box.depth === depth && h.box.start <= t && t < h.box.end);
    if (known) return known;
    const box = stackBoxAt(this.stackInput(li, view), t, depth, slack);
    if (!box) return null;
    const hit = { lane: li, box };
    found.hits.unshift(hit);
    if (found.hits.length > FOUND_BOXES_KEPT) found.hits.pop();
    return hit;
  }

  /** What stack chart lane `li` is drawn from (drawStackColumns and stackBoxAt read the same). */
  private stackInput(li: number, view: StackView = this.stackView()): StackColumnsInput {
    return {
      rows: this.lanes[li].rows,
      time: this.store.time,
      stack: this.store.stack,
      table: view.table,
      interval: this.layout.intervalOf(li),
      ...(view.map ? { map: view.map } : {}),
    };
  }

  /** The selected record's row after the store dropped rows (a live capture's window moved on), until the lanes are rebuilt. */
  private movedSelection: number | null = null;

  /** The store dropped rows: the selected record is found where it moved to, or let go when it was dropped. */
  rowsDropped(): void {
    const row = this.movedSelection ?? this.selectedRow();
    if (row === null) return;
    const moved = this.store.rowAfterDrop(row);
    if (moved < 0) {
      this.movedSelection = null;
      this.clearSelection();
      return;
    }
    this.movedSelection = moved;
    this.callbacks.onSelect(moved);
  }

  /** Called after the store changed (a snapshot began or a batch arrived). */
  dataChanged(): void {
    const extent = this.shown >= 0 ? this.store.timeExtent(this.shown) : null;
    if (extent) this.viewport.dataChanged(extent, this.followLatest);
    this.scheduler.schedule();
  }

  /** Show one capture (index in the store's snapshots), fitted; the selection and the brushed range go with the old one. */
  showSnapshot(index: number): void {
    if (index === this.shown || !this.store.snapshots[index]) return;
    this.shown = index;
    this.clearSelection();
    this.hover = null;
    this.tooltip.hide();
    this.viewport.showExtent(this.store.timeExtent(index));
    this.callbacks.onBrush(null);
    this.scheduler.schedule();
    this.callbacks.onViewChange();
  }

  /** The one way times are shown: since the shown capture's first timed record, or the perf clock. */
  timeBase(): TimeBase {
    const start = this.store.snapshots[this.shown]?.minTime ?? NaN;
    return new TimeBase(Number.isFinite(start) ? start : 0, this.store.originNs ?? 0n, this.perfClock);
  }

  setPerfClock(on: boolean): void {
    if (on === this.perfClock) return;
    this.perfClock = on;
    this.tooltip.hide();
    this.scheduler.schedule();
  }

  /** Restore a window once data arrives (persisted view state). */
  restoreWindow(start: number, end: number): void {
    this.viewport.restoreWindow(start, end);
  }

  /** The visible time window [start, end] (ns relative to the store origin). */
  window(): [number, number] {
    return this.viewport.window();
  }

  setWindow(start: number, end: number): void {
    this.viewport.setWindow(start, end);
  }

  zoomBy(factor: number, centerTime?: number): void {
    this.viewport.zoomBy(factor, centerTime);
  }

  resetZoom(): void {
    this.viewport.resetZoom();
  }

  clearBrush(): void {
    this.viewport.clearBrush();
  }

  selectedRow(): number | null {
    const lane = this.lanes[this.selectedLane];
    if (!lane || this.selectedPos < 0 || this.selectedPos >= lane.rows.length) return null;
    return lane.rows[this.selectedPos];
  }

  /** The lanes that hold every shown row once (indexes into `lanes`): not the watch lanes and expanded process headers. */
  countedLanes(): number[] {
    this.ensureLayout();
    const out: number[] = [];
    this.lanes.forEach((lane, i) => {
      if (lane.kind === 'watch' && this.grouping !== 'event') return; // those rows are also in a group lane
      if (lane.kind === 'process' && !lane.collapsed) return; // and those in its thread lanes, which are shown
      out.push(i);
    });
    return out;
  }

  /** Rows (after the filter) in [t0, t1], each counted once. */
  rowsInRange(t0: number, t1: number): number[] {
    const out: number[] = [];
    for (const li of this.countedLanes()) {
      const rows = this.lanes[li].rows;
      const [s, e] = visibleRange(this.store.time, rows, t0, t1);
      for (let i = s; i < e; i++) out.push(rows[i]);
    }
    return out;
  }

  /** The rows the filter shows, for the call tree's worker (null without a filter): named by the filter and the store's version. */
  shownRows(): Selection['shown'] {
    if (this.include === null) return this.captureRows();
    return {
      version: `${this.filterVersion}|${this.store.version}|${this.shown}`,
      mask: () => {
        const mask = new Uint8Array(this.store.length);
        for (const li of this.countedLanes()) for (const row of this.lanes[li].rows) mask[row] = 1;
        return mask;
      },
    };
  }

  /**
   * The shown capture's rows, whatever the filter, as a selection mask; null when the store holds no
   * other capture (every row is the shown capture's). Captures of one recording overlap in time, so a
   * time range alone would count another capture's samples too.
   */
  captureRows(): Selection['shown'] {
    const shown = this.shown;
    if (this.store.snapshots.length <= 1 || shown < 0) return null;
    return {
      version: `capture|${this.store.version}|${shown}`,
      mask: () => {
        const mask = new Uint8Array(this.store.length);
        for (const row of this.store.rowsOf(shown)) mask[row] = 1;
        return mask;
      },
    };
  }

  /** How many records the filter shows (records without a time are never shown). */
  shownCount(): number {
    let n = 0;
    for (const li of this.countedLanes()) n += this.lanes[li].rows.length;
    return n;
  }

  /** Select the next (1) or previous (-1) shown record after the selected one (from the window's start or end without one). */
  stepMatch(direction: 1 | -1): boolean {
    const counted = this.countedLanes();
    const row = this.selectedRow();
    const [a, b] = this.window();
    const from = row !== null ? { time: this.store.time[row], row } : direction === 1 ? { time: a, row: -1 } : { time: b, row: Number.MAX_SAFE_INTEGER };
    const found = stepMatch(
      counted.map((li) => this.lanes[li]),
      this.store.time,
      from,
      direction,
    );
    if (!found) return false;
    this.select(counted[found.lane], found.pos);
    return true;
  }

  /** The selected record's place among the shown records (1-based), or 0 without a selection. */
  selectedMatchIndex(): number {
    const row = this.selectedRow();
    if (row === null) return 0;
    const counted = this.countedLanes();
    return matchIndex(
      counted.map((li) => this.lanes[li]),
      this.store.time,
      { time: this.store.time[row], row },
    );
  }

  /** The record under a point of the plot, or null. */
  hitTest(px: number, py: number): { lane: number; pos: number } | null {
    return hitTest(this.layout, this.store.time, this.viewport.x(), px, py, this.scroll.scrollTop);
  }

  /** The lost or overwritten span under a point of the plot, or null. */
  lossAt(px: number, py: number): LossMark | null {
    const li = laneAtY(this.layout, py + this.scroll.scrollTop);
    const marks = li < 0 ? undefined : this.layout.laneMarks[li];
    if (!marks) return null;
    const x = this.viewport.x();
    const t = x.invert(px);
    return markAt(marks, t, Math.abs(x.invert(px + MIN_LOSS_WIDTH) - t));
  }

  /** Height of a lane's records: the lane without its state band. */
  private recordsHeight(lane: number): number {
    return this.layout.laneHeight[lane] - (this.layout.laneStates[lane] ? STATE_BAND_HEIGHT : 0);
  }

  /** The tooltip of the thread state under a point of the plot (in a thread lane's state band), or null. */
  stateAt(px: number, py: number): string[] | null {
    const y = py + this.scroll.scrollTop;
    const li = laneAtY(this.layout, y);
    const states = li < 0 ? undefined : this.layout.laneStates[li];
    if (!states || y < this.layout.laneTop[li] + this.layout.laneHeight[li] - STATE_BAND_HEIGHT) return null;
    const x = this.viewport.x();
    const t = x.invert(px);
    const i = stateAt(states, t, Math.abs(x.invert(px + 2) - t));
    return i < 0 ? null : describeState(states, i, this.store.threadStates);
  }

  describeRow(row: number): string[] {
    return describeRow(this.store, row, this.timeBase());
  }

  select(lane: number, pos: number): void {
    this.selectedLane = lane;
    this.selectedPos = pos;
    const row = this.lanes[lane].rows[pos];
    this.ensureVisible(lane, this.store.time[row]);
    this.scheduler.schedule();
    this.callbacks.onSelect(row);
  }

  clearSelection(): void {
    this.movedSelection = null;
    if (this.selectedLane < 0) return;
    this.selectedLane = -1;
    this.selectedPos = -1;
    this.scheduler.schedule();
    this.callbacks.onSelect(null);
  }

  // ---------------------------------------------------------------------------------------------
  // Layout, before the frame

  /** Lanes for the current inputs; when they were rebuilt, the selected record is found again and labels redrawn. */
  private ensureLayout(): void {
    const previousKey = this.lanes[this.selectedLane]?.key;
    const previousRow = this.movedSelection ?? this.selectedRow();
    if (!this.layout.update(this.grouping, this.include, this.filterVersion, this.collapsed, this.shown, this.laneModes)) return;
    this.movedSelection = null;
    this.selectedLane = -1;
    this.selectedPos = -1;
    if (previousRow !== null) {
      const li = this.lanes.findIndex((l) => l.key === previousKey);
      if (li >= 0) {
        const pos = bisectLeft(this.store.time, this.lanes[li].rows, this.store.time[previousRow]);
        for (let p = pos; p < this.lanes[li].rows.length && this.store.time[this.lanes[li].rows[p]] === this.store.time[previousRow]; p++) {
          if (this.lanes[li].rows[p] === previousRow) {
            this.selectedLane = li;
            this.selectedPos = p;
            break;
          }
        }
      }
    }
    this.renderLabels();
    this.callbacks.onLanesChanged?.();
  }

  private renderLabels(): void {
    this.labels.style.height = `${this.layout.totalHeight}px`;
    // The lane area is as tall as its lanes (flex shrinks it when the drawer needs the room); the drawer takes the rest.
    this.scroll.style.height = `${this.layout.totalHeight}px`;
    this.knownHeight = -1;
    this.knownScrollTop = -1;
    // Rows are kept per lane and updated in place, not rebuilt: a label row replaced between a pointer's press and its
    // release swallows the click (seen when lanes were rebuilt while a busy page caught up), and a kept row keeps focus.
    const kept = new Map<string, HTMLDivElement>();
    for (const row of this.labels.children) if (row instanceof HTMLDivElement && row.dataset.lane) kept.set(row.dataset.lane, row);
    const rows = this.lanes.map((lane, i) => {
      const row = kept.get(lane.key) ?? this.labelRow(lane.key);
      kept.delete(lane.key);
      const kindClass =
        lane.kind === 'watch'
          ? ' rs-watch-lane'
          : lane.kind === 'values'
            ? ' rs-values-lane'
            : lane.kind === 'process'
              ? ' rs-process-lane'
              : lane.pid !== undefined
                ? ' rs-thread-lane'
                : '';
      const chart = this.layout.stackDepth[i] > 0;
      row.className = `rs-lane-label${kindClass}${lane.collapsed ? ' rs-collapsed' : ''}${chart ? ' rs-stack-lane' : ''}`;
      row.style.top = `${this.layout.laneTop[i]}px`;
      row.style.height = `${this.layout.laneHeight[i]}px`;
      const [toggle, name, count] = row.children as unknown as [HTMLButtonElement, HTMLSpanElement, HTMLSpanElement];
      // Stack chart or ticks, on the thread lanes with callchains only (made when first needed: a label costs the first paint).
      // A new row is not in the document yet: its button is labelled all the same (no later frame may label it).
      const mode = row.querySelector<HTMLButtonElement>('.rs-lane-mode');
      if (!this.layout.hasStacks[i] || lane.collapsed) mode?.remove();
      else this.updateModeButton(mode ?? this.modeButton(row, lane.key), lane.label, chart);

      toggle.textContent = lane.collapsed ? '▸' : '▾';
      toggle.setAttribute('aria-expanded', String(!lane.collapsed));
      toggle.setAttribute(
        'aria-label',
        lane.kind === 'process'
          ? `${lane.collapsed ? 'Show' : 'Hide'} the threads of ${lane.label}`
          : `${lane.collapsed ? 'Expand' : 'Collapse'} lane ${lane.label}`,
      );
      // What tells the lane apart (a pid, a tid, an event's name) stays whole; the rest is cut with an ellipsis.
      const keep = Math.min(lane.keep ?? 0, lane.label.length);
      name.replaceChildren();
      el('span', 'rs-lane-head', name, lane.label.slice(0, lane.label.length - keep));
      if (keep > 0) el('span', 'rs-lane-tail', name, lane.label.slice(lane.label.length - keep));
      name.title = lane.title ?? (lane.kind === 'values' ? `${lane.label}: each hit with the values it recorded (hover a hit)` : lane.label);
      count.textContent = lane.rows.length.toLocaleString('en-US');
      return row;
    });
    // In lane order (assistive technology reads the list in DOM order); rows already in place are not moved.
    rows.forEach((row, i) => {
      if (this.labels.children[i] !== row) this.labels.insertBefore(row, this.labels.children[i] ?? null);
    });
    for (const stale of kept.values()) stale.remove();
  }

  /** A label row for the lane `key`: its collapse toggle, name and record count (renderLabels fills them in). */
  private labelRow(key: string): HTMLDivElement {
    const row = el('div', 'rs-lane-label');
    row.setAttribute('role', 'listitem');
    row.dataset.lane = key;
    const toggle = el('button', 'rs-lane-toggle', row);
    toggle.type = 'button';
    toggle.addEventListener('click', () => this.toggleLane(key));
    el('span', 'rs-lane-name', row);
    el('span', 'rs-lane-count', row);
    return row;
  }

  /** The button of a thread lane with callchains that switches it between stack chart and ticks. */
  private modeButton(row: HTMLDivElement, key: string): HTMLButtonElement {
    const mode = el('button', 'rs-lane-mode', row);
    mode.type = 'button';
    mode.addEventListener('click', () => this.toggleStackChart(key));
    return mode;
  }

  private updateModeButton(mode: HTMLButtonElement, label: string, chart: boolean): void {
    mode.textContent = chart ? 'ticks' : 'stack';
    mode.setAttribute('aria-pressed', String(chart));
    mode.setAttribute('aria-label', chart ? `Show ${label} as ticks` : `Show ${label} as a stack chart`);
    mode.title = chart ? "Show this thread's records as ticks" : "Show this thread's callchains as a stack chart";
  }

  // ---------------------------------------------------------------------------------------------
  // Rendering

  /** The plot's width and the lane area's visible height, CSS px (reading them lays the page out when it is not). */
  private measurePlotWidth(): number {
    return Math.max(50, this.scroll.clientWidth - LABEL_WIDTH);
  }

  private measurePlotHeight(): number {
    return Math.max(40, this.scroll.clientHeight);
  }

  render(): void {
    if (this.disposed) return;
    const started = performance.now();
    this.ensureLayout();
    this.colors ??= readColors(this.scroll);
    // Every read of the page's layout comes before this frame's first write of a style: a read after a write makes the
    // browser lay the page out there and then (scrollTop read after the sizes were set took a zoom frame more than drawing).
    const width = this.viewport.plotWidth();
    const viewport = this.knownHeight >= 0 ? this.knownHeight : (this.knownHeight = this.measurePlotHeight());
    let scrollTop = this.knownScrollTop >= 0 ? this.knownScrollTop : (this.knownScrollTop = this.scroll.scrollTop);
    const dpr = window.devicePixelRatio || 1;
    const resized = width !== this.width || viewport !== this.viewportHeight || dpr !== this.dpr || this.renderCount === 0;
    this.width = width;
    this.viewportHeight = viewport;
    this.dpr = dpr;
    if (resized) {
      this.viewport.resized(viewport);
      this.plot.style.width = `${width}px`;
      this.plot.style.height = `${viewport}px`;
      this.plot.style.marginLeft = `${LABEL_WIDTH}px`;
      (this.labels.parentElement as HTMLElement).style.marginTop = `${-viewport}px`;
      sizeCanvas(this.canvas, width, viewport, this.dpr);
      this.overlay.setAttribute('width', String(width));
      this.overlay.setAttribute('height', String(viewport));
      // New sizes may have moved the scroll position (a shorter plot): read it again, once. A position of 0 cannot move,
      // and reading it after the writes above lays the page out a second time (every label of a first paint, again).
      if (scrollTop > 0) scrollTop = this.knownScrollTop = this.scroll.scrollTop;
    }
    const x = this.viewport.x();
    const [t0, t1] = x.domain();
    const deviceWidth = this.canvas.width;
    const frame = this.layout.frame(t0, t1, deviceWidth, scrollTop, this.viewportHeight);
    if (frame.some((f) => f.end > f.first && !f.dense) && !this.layout.spansReady) {
      // Pairing spans reads every row of the store. A big capture's frame is drawn without them and
      // drawn again once idle time has built them: one small lane (a thread with two records among
      // a million) made the first paint wait 250 ms for spans it barely shows.
      if (this.store.length <= SPANS_IN_FRAME_MAX_ROWS) this.layout.ensureSpans(this.grouping, this.include);
      else this.redrawWithSpans = true;
    }
    const colors = this.colors;
    const shown = this.store.snapshots[this.shown];
    // The canvases first, the axis's and overlay's DOM after: a canvas's font set after a DOM write makes the browser
    // recalculate the page's style there and then (the stack chart's labels did, after the axis's new ticks).
    drawCoverage(this.coverageCanvas, x, {
      snapshots: shown ? [shown] : [],
      origin: this.store.originNs,
      viewStart: this.viewport.fullDomain()[0],
      width: this.width,
      dpr: this.dpr,
      colors,
    });
    this.drawnActivity.clear();
    this.resolveHighlight();
    drawLanes(this.canvas, {
      frame,
      lanes: this.lanes,
      laneSpans: this.layout.laneSpans,
      time: this.store.time,
      event: this.store.event,
      t0,
      t1,
      dpr: this.dpr,
      colors,
      laneMarks: this.layout.laneMarks,
      laneStates: this.layout.laneStates,
      stateTables: this.store.threadStates,
      valuesOf: (lane) => this.valueSeries(lane),
      stacks: {
        stack: this.store.stack,
        table: this.store.stackTable(),
        chart: this.stackView(),
        highlight: this.highlightName,
        holding: this.holdingStacks(),
        intervalOf: (lane) => this.layout.intervalOf(lane),
        drawn: this.drawnActivity,
      },
    });
    drawAxis(this.axisSvg, x, this.width, this.timeBase());
    const row = this.selectedRow();
    drawOverlay(this.marks, x, {
      boundaries: shown && Number.isFinite(shown.maxTime) ? [shown] : [],
      viewportHeight: this.viewportHeight,
      selected:
        row === null ? null : { time: this.store.time[row], y: this.layout.laneTop[this.selectedLane] - scrollTop + this.recordsHeight(this.selectedLane) / 2 },
      hoverX: this.hover ? this.hover.x : null,
      colors,
    });
    // Formatted only when its numbers change (toLocaleString cost a zoom frame more than its axis).
    const labelKey = `${shown?.receivedRows ?? 0}|${this.lanes.length}`;
    if (labelKey !== this.canvasLabel) {
      this.canvasLabel = labelKey;
      this.canvas.setAttribute('aria-label', `Timeline: ${(shown?.receivedRows ?? 0).toLocaleString('en-US')} records in ${this.lanes.length} lanes`);
    }
    this.lastRenderMs = performance.now() - started;
    this.renderCount++;
    this.canvas.dataset.renders = String(this.renderCount);
    this.layout.ensureSpansWhenIdle(() => {
      // Lanes may have changed since: build spans for what the next frame will show (the frame asks again after it).
      if (this.scheduler.isPending) return;
      this.ensureLayout();
      this.layout.ensureSpans(this.grouping, this.include);
      if (this.redrawWithSpans) {
        this.redrawWithSpans = false;
        this.scheduler.schedule();
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Interaction

  private onPointerMove(e: PointerEvent): void {
    const r = this.overlay.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const box = this.stackBoxAt(px, py);
    if (box) {
      this.hover = null;
      this.tooltip.show(describeBox(box.box, this.stackView().table), e.clientX, e.clientY);
      this.scheduler.schedule();
      return;
    }
    const state = this.stateAt(px, py);
    const hit = state ? null : this.hitTest(px, py);
    if (!hit) {
      this.hover = null;
      if (state) {
        this.tooltip.show(state, e.clientX, e.clientY);
        this.scheduler.schedule();
        return;
      }
      const mark = this.lossAt(px, py);
      if (mark) this.tooltip.show(mark.lines, e.clientX, e.clientY);
      else this.tooltip.hide();
      this.scheduler.schedule();
      return;
    }
    const row = this.lanes[hit.lane].rows[hit.pos];
    this.hover = { ...hit, x: this.viewport.x()(this.store.time[row]), y: py };
    const lines = this.describeRow(row);
    // A logpoint hit in its value lane: the values it recorded.
    if (this.lanes[hit.lane].kind === 'values') {
      const snap = this.store.snapshots[this.store.snapshotIndexOf(row)];
      const local = this.store.localRowOf(row);
      lines.push(...describeHitValues(this.hitValuesOf(row, true), snap ? this.hitValues?.errorOf(snap.id, local) : undefined));
    }
    this.tooltip.show(lines, e.clientX, e.clientY);
    this.scheduler.schedule();
  }

  private onClick(e: MouseEvent): void {
    if (e.shiftKey) return;
    this.scroll.focus({ preventScroll: true });
    const r = this.overlay.getBoundingClientRect();
    const box = this.stackBoxAt(e.clientX - r.left, e.clientY - r.top);
    if (box) {
      this.chooseBox(box);
      return;
    }
    const hit = this.hitTest(e.clientX - r.left, e.clientY - r.top);
    if (hit) this.select(hit.lane, hit.pos);
    else this.clearSelection();
  }

  /** A click on a stack chart box: its function is highlighted and its source revealed. */
  private chooseBox(hit: StackBoxHit): void {
    const name = hit.box.name;
    // The charts' table: the store's names first, then what the transforms added (a collapsed library's frame).
    const table = this.stackView().table;
    this.highlightName = name;
    this.highlightText = table.names[name] ?? null;
    this.scheduler.schedule();
    const at = entryOf(table, name);
    if (at) this.callbacks.onRevealSource?.(at);
  }

  private ensureVisible(lane: number, t: number): void {
    const [a, b] = this.window();
    if (t < a || t > b) {
      const half = (b - a) / 2;
      this.setWindow(t - half, t + half);
    }
    const top = this.layout.laneTop[lane];
    const height = this.layout.laneHeight[lane];
    if (top < this.scroll.scrollTop) this.scroll.scrollTop = top;
    else if (top + height > this.scroll.scrollTop + this.viewportHeight) {
      this.scroll.scrollTop = top + height - this.viewportHeight;
    }
    this.knownScrollTop = -1;
  }

  private onKey(e: KeyboardEvent): void {
    if (e.ctrlKey || e.metaKey || e.altKey) return; // the editor's shortcuts (Ctrl+S, Ctrl+A...)
    this.ensureLayout();
    const handled = handleKey(e.key, {
      lanes: this.lanes,
      selectedLane: this.selectedLane,
      selectedPos: this.selectedPos,
      time: this.store.time,
      window: () => this.window(),
      selectedRow: () => this.selectedRow(),
      select: (lane, pos) => this.select(lane, pos),
      clearSelection: () => this.clearSelection(),
      zoomBy: (factor, centerTime) => this.zoomBy(factor, centerTime),
      panBy: (fraction) => {
        this.followLatest = false;
        this.viewport.panBy(fraction);
      },
      clearBrush: () => {
        this.clearBrush();
        this.callbacks.onBrush(null);
      },
    });
    if (!handled) return;
    e.preventDefault();
    this.callbacks.onViewChange();
  }
}
