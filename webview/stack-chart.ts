// The stack chart of a thread lane (as Firefox Profiler's Stack Chart): every sample's callchain as stacked boxes over
// time, root at the top, consecutive samples with the same call path down to a depth merged into one box at that depth.
// Built once per lane before the frame from the stacks the store already interns (shared/stacks.ts: a stack id per
// row, frames leaf first); drawn per frame with at most a box per device pixel column and depth (bisection over the
// boxes' ends skips what one pixel hides), so a million samples cost the same frame as a thousand.

import type { SourceLocation, StackTable } from '../shared/stacks';
import { formatDuration } from './time-format';

/** Height of one depth of the stack chart, CSS pixels. */
export const STACK_ROW_HEIGHT = 13;

/** A gap between two samples of a lane longer than this many sampling intervals ends every box (the thread was off CPU). */
const GAP_INTERVALS = 4;

/** The boxes of one depth, sorted by start; they never overlap, so their ends are sorted too. */
export interface StackLevel {
  readonly count: number;
  /** Times (store ns) each box covers: from its first sample to the end of its last. */
  readonly start: Float64Array;
  readonly end: Float64Array;
  /** The function (index into the stack table's names). */
  readonly name: Int32Array;
  /** Position in the lane's rows of its first sample, and how many samples it merges. */
  readonly firstPos: Uint32Array;
  readonly samples: Uint32Array;
}

export interface StackChart {
  /** Depths with boxes (0: no sample of the lane has a callchain). */
  readonly depth: number;
  readonly levels: readonly StackLevel[];
  /** The lane's sampling interval (median gap between its samples), the time one sample stands for at a gap. */
  readonly interval: number;
}

/** A growable box list of one depth. */
class LevelBuilder {
  count = 0;
  start = new Float64Array(64);
  end = new Float64Array(64);
  name = new Int32Array(64);
  firstPos = new Uint32Array(64);
  samples = new Uint32Array(64);

  push(start: number, end: number, name: number, firstPos: number, samples: number): void {
    if (this.count === this.start.length) {
      const size = this.count * 2;
      const grow = <T extends Float64Array | Int32Array | Uint32Array>(a: T, make: (n: number) => T): T => { const b = make(size); b.set(a); return b; };
      this.start = grow(this.start, (n) => new Float64Array(n));
      this.end = grow(this.end, (n) => new Float64Array(n));
      this.name = grow(this.name, (n) => new Int32Array(n));
      this.firstPos = grow(this.firstPos, (n) => new Uint32Array(n));
      this.samples = grow(this.samples, (n) => new Uint32Array(n));
    }
    const i = this.count++;
    this.start[i] = start; this.end[i] = end; this.name[i] = name; this.firstPos[i] = firstPos; this.samples[i] = samples;
  }

  done(): StackLevel {
    const n = this.count;
    return {
      count: n, start: this.start.subarray(0, n), end: this.end.subarray(0, n), name: this.name.subarray(0, n),
      firstPos: this.firstPos.subarray(0, n), samples: this.samples.subarray(0, n),
    };
  }
}

/** The median gap between consecutive samples with a callchain among the first few thousand (0: fewer than two). */
export function samplingInterval(rows: Uint32Array, time: Float64Array, stack: Int32Array): number {
  const gaps: number[] = [];
  let previous = NaN;
  for (let i = 0; i < rows.length && gaps.length < 4096; i++) {
    const row = rows[i];
    if (row >= stack.length || stack[row] < 0) continue;
    const t = time[row];
    if (previous === previous && t > previous) gaps.push(t - previous);
    previous = t;
  }
  if (gaps.length === 0) return 0;
  gaps.sort((a, b) => a - b);
  return gaps[gaps.length >> 1];
}

/**
 * The stack chart of a lane's rows (sorted by time): for each depth, the runs of consecutive samples whose call path
 * from the root down to that depth is the same, as one box each. Rows without a callchain are passed over; a gap of
 * more than GAP_INTERVALS sampling intervals ends every box. A sample lasts until the next one (or, at a gap and at the
 * end, one sampling interval).
 */
export function buildStackChart(rows: Uint32Array, time: Float64Array, stack: Int32Array, table: StackTable): StackChart {
  const interval = samplingInterval(rows, time, stack);
  const gap = interval > 0 ? interval * GAP_INTERVALS : Infinity;
  const { start: stackStart, frames } = table;
  const levels: LevelBuilder[] = [];
  // The open box of each depth: its function, first position, the samples before it and its start time.
  let openName = new Int32Array(32);
  let openPos = new Uint32Array(32);
  let openSample = new Uint32Array(32);
  let openStart = new Float64Array(32);
  let openDepth = 0;
  let previousStack = -1;
  let previousTime = NaN;
  let sample = 0; // samples with a callchain so far
  const close = (fromDepth: number, endTime: number): void => {
    for (let d = fromDepth; d < openDepth; d++) levels[d].push(openStart[d], endTime, openName[d], openPos[d], sample - openSample[d]);
    openDepth = Math.min(openDepth, fromDepth);
  };
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const s = row < stack.length ? stack[row] : -1;
    // Records without a callchain (a tracepoint of the same thread) are not samples: they neither draw nor break boxes.
    if (s < 0 || s + 1 >= stackStart.length) continue;
    const t = time[row];
    if (openDepth > 0 && t - previousTime > gap) {
      close(0, previousTime + interval);
      previousStack = -1;
    }
    previousTime = t;
    if (s !== previousStack) {
      previousStack = s;
      // Frames of s are leaf first: depth d (0: root) is frames[last - d].
      const last = stackStart[s + 1] - 1;
      const depth = stackStart[s + 1] - stackStart[s];
      let common = 0;
      const shared = Math.min(depth, openDepth);
      while (common < shared && frames[last - common] === openName[common]) common++;
      close(common, t);
      if (depth > openName.length) {
        const size = Math.max(depth, openName.length * 2);
        const n = new Int32Array(size); n.set(openName); openName = n;
        const p = new Uint32Array(size); p.set(openPos); openPos = p;
        const k = new Uint32Array(size); k.set(openSample); openSample = k;
        const st = new Float64Array(size); st.set(openStart); openStart = st;
      }
      for (let d = common; d < depth; d++) {
        openName[d] = frames[last - d];
        openPos[d] = i;
        openSample[d] = sample;
        openStart[d] = t;
        if (levels.length <= d) levels.push(new LevelBuilder());
      }
      openDepth = depth;
    }
    sample++;
  }
  if (openDepth > 0) close(0, previousTime + interval);
  return { depth: levels.length, levels: levels.map((l) => l.done()), interval };
}

/** The box of `level` that covers time t (within `slack` ns of its ends), or -1. */
export function boxAt(level: StackLevel, t: number, slack = 0): number {
  let lo = 0;
  let hi = level.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (level.end[mid] + slack <= t) lo = mid + 1; else hi = mid;
  }
  return lo < level.count && level.start[lo] - slack <= t ? lo : -1;
}

/** First box of `level` whose end is after t. */
function firstEndingAfter(level: StackLevel, t: number, lo: number): number {
  let hi = level.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (level.end[mid] <= t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export interface StackChartStyle {
  readonly palette: readonly string[];
  readonly foreground: string;
  /** Drawn around the boxes of the highlighted function. */
  readonly selection: string;
}

/** Where one box was drawn (device pixels), for tests and hit-testing from outside. */
export interface DrawnBox { readonly depth: number; readonly box: number; readonly x0: number; readonly x1: number }

/**
 * The chart of one lane on `ctx` (device pixels): depth d's boxes at y + d·rowHeight, each at least one pixel wide and
 * at most one per pixel column (what a pixel hides is skipped by bisection), coloured by function, the `highlight`
 * function's boxes bright and the others dimmed while one is highlighted, names inside the boxes wide enough for them.
 */
export function drawStackChart(ctx: CanvasRenderingContext2D, chart: StackChart, names: readonly string[], t0: number, t1: number,
  width: number, y: number, rowHeight: number, dpr: number, style: StackChartStyle, highlight: number): void {
  const pxPerNs = width / (t1 - t0);
  const palette = style.palette;
  const charWidth = 6 * dpr;
  const labels: { x: number; y: number; text: string }[] = [];
  const outlines: { x: number; y: number; w: number }[] = [];
  const boxHeight = Math.max(1, rowHeight - Math.max(1, Math.round(dpr)));
  for (let d = 0; d < chart.depth; d++) {
    const level = chart.levels[d];
    const top = y + d * rowHeight;
    let b = firstEndingAfter(level, t0, 0);
    while (b < level.count && level.start[b] <= t1) {
      const x0 = Math.max(0, Math.floor((level.start[b] - t0) * pxPerNs));
      const x1 = Math.min(width, Math.max(x0 + 1, Math.ceil((level.end[b] - t0) * pxPerNs)));
      const name = level.name[b];
      const highlighted = name === highlight;
      ctx.globalAlpha = highlight < 0 ? 0.7 : highlighted ? 1 : 0.25;
      ctx.fillStyle = palette[name % palette.length];
      // A box of several pixels keeps a pixel's gap to the next one, so neighbours read as two boxes.
      ctx.fillRect(x0, top, x1 - x0 > 3 ? x1 - x0 - 1 : x1 - x0, boxHeight);
      if (highlighted) outlines.push({ x: x0, y: top, w: x1 - x0 });
      const chars = Math.floor((x1 - x0 - 4 * dpr) / charWidth);
      if (chars >= 3) {
        const text = names[name] ?? '?';
        labels.push({ x: x0 + 2 * dpr, y: top + boxHeight / 2, text: text.length <= chars ? text : `${text.slice(0, chars - 1)}…` });
      }
      // Every box ending inside the pixel column x1 - 1 drew nothing more: go on at the first one ending past it.
      const next = b + 1;
      b = next < level.count && level.end[next] > t0 + x1 / pxPerNs ? next : firstEndingAfter(level, t0 + x1 / pxPerNs, next);
    }
  }
  ctx.globalAlpha = 1;
  if (outlines.length > 0) {
    ctx.strokeStyle = style.selection;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    for (const o of outlines) ctx.strokeRect(o.x + 0.5, o.y + 0.5, Math.max(1, o.w - 1), boxHeight - 1);
  }
  if (labels.length > 0) {
    ctx.fillStyle = style.foreground;
    ctx.font = `${Math.round(10 * dpr)}px sans-serif`;
    ctx.textBaseline = 'middle';
    for (const l of labels) ctx.fillText(l.text, l.x, l.y);
  }
}

/** Where a stack chart box's function is: its entry line when the host knows it. */
export function entryOf(table: StackTable, name: number): SourceLocation | undefined {
  const at = table.nameLocation?.[name] ?? -1;
  return at >= 0 ? table.locations?.[at] : undefined;
}

/** The tooltip of box `box` at depth `depth`: function, source line, duration and sample count. */
export function describeBox(chart: StackChart, depth: number, box: number, table: StackTable): string[] {
  const level = chart.levels[depth];
  const name = level.name[box];
  const at = entryOf(table, name);
  const samples = level.samples[box];
  return [
    table.names[name] ?? '?',
    at ? `${at.file}:${at.line}` : 'source line unknown',
    `${formatDuration(level.end[box] - level.start[box])} · ${samples.toLocaleString('en-US')} sample${samples === 1 ? '' : 's'} · depth ${depth}`,
  ];
}
