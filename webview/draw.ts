// The timeline's draw functions: each paints one part (axis, coverage strip, lanes, overlay marks) from what
// it is given, synchronously, keeping no state between frames. What to draw is decided before (layout.ts).

import * as d3 from 'd3';
import type { CoverageFact } from '../shared/protocol';
import { LANE_HEIGHT, type FrameLane, type LaneSpans } from './layout';
import { identityRows, type Lane } from './lanes';
import { SpanType } from './spans';
import type { LossMark } from './losses';
import { PALETTE_SIZE } from './legend';
import { bisectLeft, bisectRight } from './hit-test';
import { formatDuration, type TimeBase } from './time-format';
import { drawStateBand, readStateColors, type LaneStates } from './state-lane';
import type { ThreadStateTable } from '../shared/thread-states';
import type { StackTable } from '../shared/stacks';
import { ACTIVITY_BUCKET_PX, activityPixels, buildActivityGraph, drawActivityGraph, writeActivityGraph, type ActivityGraph } from './activity-graph';
import { drawStackColumns, STACK_ROW_HEIGHT } from './stack-chart';
import { drawValueLane, type ValueSeries } from './value-lane';

export const AXIS_HEIGHT = 24;
const COVERAGE_ROW = 7;

export interface Colors {
  mark: string;
  laneAlt: string;
  hatch: string;
  lost: string;
  span: string;
  syscall: string;
  selection: string;
  boundary: string;
  foreground: string;
  palette: string[];
  /** Thread state band colours by state code. */
  states: string[];
}

type TimeScale = d3.ScaleLinear<number, number>;

/** The theme's colours, from the --rs-* custom properties (which follow the --vscode-* theme variables). */
export function readColors(element: Element): Colors {
  const style = getComputedStyle(element);
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  const mark = v('--rs-mark', '#3794ff');
  return {
    mark,
    laneAlt: v('--rs-lane-alt', 'rgba(128,128,128,0.08)'),
    hatch: v('--rs-hatch', '#888'),
    lost: v('--rs-lost', '#f14c4c'),
    span: v('--rs-span', mark),
    syscall: v('--rs-syscall', '#cca700'),
    selection: v('--rs-selection', '#ffffff'),
    boundary: v('--rs-boundary', '#888'),
    foreground: v('--rs-foreground', '#ccc'),
    palette: Array.from({ length: PALETTE_SIZE }, (_, i) => v(`--rs-palette-${i}`, mark)),
    states: readStateColors(style, mark),
  };
}

/** A canvas of `width` × `height` CSS pixels backed by device pixels. */
export function sizeCanvas(canvas: HTMLCanvasElement, width: number, height: number, dpr: number): void {
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  // Each written only when it changes: a canvas's backing store is cleared and made again when sized, and the coverage
  // strip is sized every frame.
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const cssWidth = `${width}px`;
  const cssHeight = `${height}px`;
  if (canvas.style.width !== cssWidth) canvas.style.width = cssWidth;
  if (canvas.style.height !== cssHeight) canvas.style.height = cssHeight;
}

/** The time axis of the visible window, labelled in `base` (time since the shown capture's start, or the perf clock). */
export function drawAxis(axisSvg: SVGSVGElement, x: TimeScale, width: number, base: TimeBase): void {
  const svg = d3.select(axisSvg).attr('width', width).attr('height', AXIS_HEIGHT);
  const [d0, d1] = x.domain();
  // Ticks at round values of what is shown, not of the store's internal time.
  const shift = base.shift();
  const shown = x.copy().domain([d0 + shift, d1 + shift]);
  const ticks = shown.ticks(Math.max(2, Math.floor(width / 110)));
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : d1 - d0;
  const format = base.tickFormatter(step);
  const axis = d3
    .axisBottom(shown)
    .tickValues(ticks)
    .tickFormat((d) => format(+d))
    .tickSizeOuter(0);
  let g = svg.select<SVGGElement>('g.rs-axis-g');
  if (g.empty()) g = svg.append('g').attr('class', 'rs-axis-g');
  g.attr('transform', 'translate(0,2)').call(axis);
  axisSvg.dataset.domainStart = String(d0);
  axisSvg.dataset.domainEnd = String(d1);
  axisSvg.dataset.baseStart = String(base.startNs);
  axisSvg.setAttribute('aria-label', `Time axis from ${base.format(d0)} to ${base.format(d1)} (${formatDuration(d1 - d0)} visible)`);
}

/** The hatch tiles by colour, drawn once: a frame draws its hatches from them without making canvases. */
const hatchTiles = new Map<string, HTMLCanvasElement>();

function hatchPattern(ctx: CanvasRenderingContext2D, color: string): CanvasPattern | string {
  const made = hatchTiles.get(color);
  if (made) return ctx.createPattern(made, 'repeat') ?? color;
  const tile = document.createElement('canvas');
  tile.width = tile.height = 6;
  const t = tile.getContext('2d');
  if (!t) return color;
  hatchTiles.set(color, tile);
  t.strokeStyle = color;
  t.lineWidth = 1.5;
  t.beginPath();
  t.moveTo(0, 6);
  t.lineTo(6, 0);
  t.moveTo(-1, 1);
  t.lineTo(1, -1);
  t.moveTo(5, 7);
  t.lineTo(7, 5);
  t.stroke();
  return ctx.createPattern(tile, 'repeat') ?? color;
}

export interface CoverageInput {
  readonly snapshots: readonly { readonly coverage: readonly CoverageFact[]; readonly maxTime: number }[];
  /** Absolute ns of the store's time 0, or null before any snapshot. */
  readonly origin: bigint | null;
  /** Where the view's data range starts (the overwritten part of the first snapshot hatches back to it). */
  readonly viewStart: number;
  readonly width: number;
  readonly dpr: number;
  readonly colors: Colors;
}

/** One row per ring: retained range (solid), overwritten part (hatched), records lost while paused (red). */
export function drawCoverage(canvas: HTMLCanvasElement, x: TimeScale, input: CoverageInput): void {
  const { colors, origin, width, dpr } = input;
  const labels: string[] = [];
  for (const s of input.snapshots) for (const c of s.coverage) if (!labels.includes(c.label)) labels.push(c.label);
  const height = Math.max(1, labels.length * COVERAGE_ROW + 2);
  sizeCanvas(canvas, width, height, dpr);
  const ctx = canvas.getContext('2d');
  if (!ctx || origin === null) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const hatch = hatchPattern(ctx, colors.hatch);
  const lostHatch = hatchPattern(ctx, colors.lost);
  let previousEnd = input.viewStart;
  for (const snap of input.snapshots) {
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

export interface LanesInput {
  readonly frame: readonly FrameLane[];
  readonly lanes: readonly Lane[];
  readonly laneSpans: readonly (LaneSpans | undefined)[];
  /** Per row: time (ns from the origin) and event index, the store's columns. */
  readonly time: Float64Array;
  readonly event: ArrayLike<number>;
  readonly t0: number;
  readonly t1: number;
  readonly dpr: number;
  readonly colors: Colors;
  /** Per lane: lost records (red hatch) and overwritten parts (grey hatch) to draw under its marks. */
  readonly laneMarks: readonly (readonly LossMark[] | undefined)[];
  /** Per lane: its thread's states, drawn as a band of `FrameLane.band` pixels at its bottom; and the tables they index. */
  readonly laneStates: readonly (LaneStates | undefined)[];
  readonly stateTables: readonly ThreadStateTable[];
  /** The callchains: activity graphs coloured by function, and the stack charts of the lanes that are ones. */
  readonly stacks: StacksInput;
  /** A logpoint's value lane's hits with the values read so far (its kind is 'values'); absent: drawn as ticks. */
  valuesOf?(lane: number): ValueSeries | undefined;
}

export interface StacksInput {
  /** The store's stack id per row (-1: none; empty: no callchains) and the table they index. */
  readonly stack: Int32Array;
  readonly table: StackTable;
  /** What the stack charts draw: the table, and each store stack id's stack in it (the call tree's transforms; null: none). */
  readonly chart: { readonly table: StackTable; readonly map: Int32Array | null };
  /** The highlighted function (index into the chart table's names; -1: none) and which of that table's stacks hold it (null: none). */
  readonly highlight: number;
  readonly holding: Uint8Array | null;
  /** A lane's sampling interval (0: unknown), the activity graph's full height. */
  intervalOf(lane: number): number;
  /** Filled with each drawn activity graph, by lane index (what the page drew, for hover and tests). */
  readonly drawn: Map<number, ActivityGraph>;
}

/** The narrowest a loss is drawn, in CSS pixels, so a loss between two close records still shows. */
export const MIN_LOSS_WIDTH = 4;

/**
 * The lanes on a canvas in device pixels. Wide zoom: an activity graph (records per bucket, coloured by the top
 * self function or the lane's event). Zoomed in: spans as bars on the lower half, records as ticks coloured by event;
 * same-pixel marks are skipped. A stack chart lane: its activity graph over its boxes (stack-chart.ts).
 */
export function drawLanes(canvas: HTMLCanvasElement, input: LanesInput): void {
  const ctx = canvas.getContext('2d', { alpha: true });
  if (!ctx) return;
  const { colors, dpr, time, event, t0, t1 } = input;
  const W = canvas.width;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, W, canvas.height);
  const pxPerNs = W / (t1 - t0);
  let lostHatch: CanvasPattern | string | null = null;
  let overwrittenHatch: CanvasPattern | string | null = null;
  let binnedRows: Uint32Array | null = null;
  let binned: ActivityGraph | null = null;
  for (const f of input.frame) {
    const lane = input.lanes[f.lane];
    const y = Math.round(f.top * dpr);
    // The records above the state band (when the lane has one).
    const hp = Math.round((f.height - f.band) * dpr);
    // A hairline under each lane; no background fill, so every painted pixel is a mark.
    ctx.fillStyle = colors.laneAlt;
    ctx.fillRect(0, Math.round((f.top + f.height) * dpr), W, 1);
    const states = input.laneStates[f.lane];
    if (states && f.band > 0) drawStateBand(ctx, states, input.stateTables, t0, t1, pxPerNs, y + hp, Math.round(f.band * dpr) - 1, colors.states);
    for (const mark of input.laneMarks[f.lane] ?? []) {
      if (mark.end < t0 || mark.start > t1) continue;
      const x1 = Math.min(W, Math.ceil((mark.end - t0) * pxPerNs));
      const x0 = Math.max(0, Math.min(Math.floor((mark.start - t0) * pxPerNs), x1 - Math.round(MIN_LOSS_WIDTH * dpr)));
      if (mark.overwritten) ctx.fillStyle = overwrittenHatch ??= hatchPattern(ctx, colors.hatch);
      else ctx.fillStyle = lostHatch ??= hatchPattern(ctx, colors.lost);
      ctx.fillRect(x0, y, x1 - x0, hp);
      if (!mark.overwritten) {
        ctx.fillStyle = colors.lost;
        ctx.fillRect(x0, y, x1 - x0, Math.max(1, Math.round(dpr)));
      }
    }
    const s = f.first;
    const e = f.end;
    if (e - s === 0) continue;
    const series = lane.kind === 'values' ? input.valuesOf?.(f.lane) : undefined;
    if (series) {
      drawValueLane(ctx, series, s, e, t0, t1, W, y, hp, dpr, { palette: colors.palette, foreground: colors.foreground });
      continue;
    }
    if (f.dense) {
      // The activity graph: over the whole lane, or over the top LANE_HEIGHT of a stack chart. A process header over one
      // thread holds that thread lane's rows (the same array): built once.
      const graphHeight = f.stackDepth > 0 ? Math.round(LANE_HEIGHT * dpr) : hp;
      const { stacks } = input;
      if (lane.rows !== binnedRows || !binned) {
        const buckets = Math.max(1, Math.floor(W / (ACTIVITY_BUCKET_PX * dpr)));
        // Through the call tree's transforms, as the stack charts are (the highlighted function's stacks are the charts' too).
        const { table, map } = stacks.chart;
        binned = buildActivityGraph(time, lane.rows, t0, t1, buckets, stacks.stack, table, stacks.holding, stacks.intervalOf(f.lane), map);
        binnedRows = lane.rows;
      }
      stacks.drawn.set(f.lane, binned);
      const graph = binned;
      const activityStyle = {
        palette: colors.palette,
        // In the legend colour of the event most of the lane's records belong to (a lane mostly holds one event).
        plain: f.densityEvent >= 0 ? colors.palette[f.densityEvent % colors.palette.length] : colors.mark,
        dim: colors.foreground,
      };
      if (f.stackDepth === 0) drawActivityGraph(ctx, graph, W, y + 1, graphHeight - 2, stacks.highlight, activityStyle);
      else {
        // The graph is written into the chart's image, over its boxes: the lane is one image.
        drawStackColumns(
          ctx,
          {
            rows: lane.rows,
            time,
            stack: stacks.stack,
            table: stacks.chart.table,
            interval: stacks.intervalOf(f.lane),
            ...(stacks.chart.map ? { map: stacks.chart.map } : {}),
          },
          t0,
          t1,
          W,
          y + graphHeight,
          Math.round(STACK_ROW_HEIGHT * dpr),
          f.stackDepth,
          dpr,
          { palette: colors.palette, foreground: colors.foreground, selection: colors.selection },
          stacks.highlight,
          {
            height: graphHeight,
            write: (pixels, stride) => writeActivityGraph(pixels, stride, graph, W, 1, graphHeight - 2, stacks.highlight, activityPixels(activityStyle)),
          },
        );
      }
      continue;
    }
    const spans = input.laneSpans[f.lane];
    if (spans) {
      const first = bisectLeft(spans.prefixMaxEnd, identityRows(spans.prefixMaxEnd.length), t0);
      const last = bisectRight(spans.start, identityRows(spans.start.length), t1);
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

export interface OverlayInput {
  /** Snapshots with records: a boundary line and name at the end of each. */
  readonly boundaries: readonly { readonly id: string; readonly name: string; readonly maxTime: number }[];
  readonly viewportHeight: number;
  /** The selected record: its time and the vertical centre of its lane (plot pixels), or null. */
  readonly selected: { readonly time: number; readonly y: number } | null;
  /** The hovered record's x (plot pixels), or null. */
  readonly hoverX: number | null;
  readonly colors: Colors;
}

/** Snapshot boundaries, the selected record and the hover line, as SVG on the overlay. */
export function drawOverlay(marksGroup: SVGGElement, x: TimeScale, input: OverlayInput): void {
  const { colors } = input;
  const marks = d3.select(marksGroup);
  marks
    .selectAll<SVGLineElement, unknown>('line.rs-boundary')
    .data(input.boundaries, (d) => (d as { id: string }).id)
    .join('line')
    .attr('class', 'rs-boundary')
    .attr('x1', (d) => x(d.maxTime))
    .attr('x2', (d) => x(d.maxTime))
    .attr('y1', 0)
    .attr('y2', input.viewportHeight)
    .attr('stroke', colors.boundary);
  marks
    .selectAll<SVGTextElement, unknown>('text.rs-boundary-label')
    .data(input.boundaries, (d) => (d as { id: string }).id)
    .join('text')
    .attr('class', 'rs-boundary-label')
    .attr('x', (d) => x(d.maxTime) - 4)
    .attr('y', 10)
    .attr('text-anchor', 'end')
    .text((d) => d.name);
  const sel = input.selected === null ? [] : [input.selected];
  marks
    .selectAll<SVGCircleElement, { time: number; y: number }>('circle.rs-selected')
    .data(sel)
    .join('circle')
    .attr('class', 'rs-selected')
    .attr('cx', (s) => x(s.time))
    .attr('cy', (s) => s.y)
    .attr('r', 5)
    .attr('stroke', colors.selection);
  const hover = input.hoverX === null ? [] : [input.hoverX];
  marks
    .selectAll<SVGLineElement, number>('line.rs-hover')
    .data(hover)
    .join('line')
    .attr('class', 'rs-hover')
    .attr('x1', (h) => h)
    .attr('x2', (h) => h)
    .attr('y1', 0)
    .attr('y2', input.viewportHeight);
}
