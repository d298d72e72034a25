// The stack chart of a thread lane (as Firefox Profiler's Stack Chart): every sample's callchain as stacked boxes over
// time, root at the top, consecutive samples with the same call path down to a depth merged into one box at that depth,
// from the stacks the store already interns (shared/stacks.ts: a stack id per row, frames leaf first). A frame draws it
// per pixel column from the samples themselves (drawStackColumns: the cost of the columns, not of the samples, and
// nothing to build before the first paint but the lane's depth); the boxes (buildStackChart), which hover and click
// read, are built after the frame in idle time, or when first pointed at.

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
  /** How many samples it merges. */
  readonly samples: Uint32Array;
}

export interface StackChart {
  /** Depths with boxes (0: no sample of the lane has a callchain). */
  readonly depth: number;
  readonly levels: readonly StackLevel[];
  /** The lane's sampling interval (median gap between its samples), the time one sample stands for at a gap. */
  readonly interval: number;
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
/** Per stack table: each frame's call node (callNodes), found once per table however many lanes are built from it. */
const callNodesOf = new WeakMap<StackTable, Int32Array>();

/**
 * Each frame's call node: an id for the path from the root down to it (frames aligned with `table.frames`), so two stacks
 * share their path down to depth d exactly when their nodes at depth d are equal, and the deepest depth they share is
 * found from the leaf up in as many steps as levels differ (consecutive samples mostly differ near the leaf).
 */
export function callNodes(table: StackTable): Int32Array {
  let nodes = callNodesOf.get(table);
  if (nodes) return nodes;
  const { start, frames } = table;
  nodes = new Int32Array(frames.length);
  const ids = new Map<number, number>();
  const names = Math.max(1, table.names.length);
  for (let s = 0; s + 1 < start.length; s++) {
    let parent = -1;
    for (let f = start[s + 1] - 1; f >= start[s]; f--) {
      const key = (parent + 1) * names + frames[f];
      let id = ids.get(key);
      if (id === undefined) {
        id = ids.size;
        ids.set(key, id);
      }
      nodes[f] = id;
      parent = id;
    }
  }
  callNodesOf.set(table, nodes);
  return nodes;
}

export function buildStackChart(rows: Uint32Array, time: Float64Array, stack: Int32Array, table: StackTable): StackChart {
  const interval = samplingInterval(rows, time, stack);
  const gap = interval > 0 ? interval * GAP_INTERVALS : Infinity;
  const { start: stackStart, frames } = table;
  const nodes = callNodes(table);
  // Each depth's boxes in arrays of their own, grown by doubling, written as they close (in time order). The loop keeps
  // its state in locals (no closure over them: V8 keeps captured variables in a heap context, which made it 10× slower).
  const levelStart: Float64Array[] = [];
  const levelEnd: Float64Array[] = [];
  const levelName: Int32Array[] = [];
  const levelSamples: Uint32Array[] = [];
  let levelCount = new Uint32Array(0);
  // The open box of each depth: its function, its call node, the samples before it and its start time.
  const MAX_DEPTH = 255;
  const openName = new Int32Array(MAX_DEPTH);
  const openNode = new Int32Array(MAX_DEPTH);
  const openSample = new Uint32Array(MAX_DEPTH);
  const openStart = new Float64Array(MAX_DEPTH);
  let openDepth = 0;
  let deepest = 0;
  let previousStack = -1;
  let previousTime = NaN;
  let sample = 0; // samples with a callchain so far
  for (let i = 0; i <= rows.length; i++) {
    // Past the last row: close every box (closeFrom 0).
    let closeFrom = openDepth;
    let endTime = 0;
    let s = -1;
    let t = 0;
    if (i < rows.length) {
      const row = rows[i];
      s = row < stack.length ? stack[row] : -1;
      // Records without a callchain (a tracepoint of the same thread) are not samples: they neither draw nor break boxes.
      if (s < 0 || s + 1 >= stackStart.length) continue;
      t = time[row];
      if (openDepth > 0 && t - previousTime > gap) {
        closeFrom = 0;
        endTime = previousTime + interval;
        previousStack = -1;
      }
    } else {
      closeFrom = 0;
      endTime = previousTime + interval;
    }
    // Frames of s are leaf first: depth d (0: root) is frames[last - d]; the common part with the open boxes goes on.
    let depth = 0;
    let last = 0;
    if (s >= 0 && s !== previousStack) {
      last = stackStart[s + 1] - 1;
      depth = Math.min(MAX_DEPTH, stackStart[s + 1] - stackStart[s]);
      // The deepest depth whose call node is the open box's (all above it are then the same too).
      let common = Math.min(depth, closeFrom);
      while (common > 0 && nodes[last - (common - 1)] !== openNode[common - 1]) common--;
      if (common < closeFrom) {
        closeFrom = common;
        endTime = t;
      }
    }
    if (closeFrom < openDepth) {
      for (let d = closeFrom; d < openDepth; d++) {
        const k = levelCount[d]++;
        if (k === levelStart[d].length) {
          const size = k * 2;
          const f1 = new Float64Array(size);
          f1.set(levelStart[d]);
          levelStart[d] = f1;
          const f2 = new Float64Array(size);
          f2.set(levelEnd[d]);
          levelEnd[d] = f2;
          const i1 = new Int32Array(size);
          i1.set(levelName[d]);
          levelName[d] = i1;
          const u1 = new Uint32Array(size);
          u1.set(levelSamples[d]);
          levelSamples[d] = u1;
        }
        levelStart[d][k] = openStart[d];
        levelEnd[d][k] = endTime;
        levelName[d][k] = openName[d];
        levelSamples[d][k] = sample - openSample[d];
      }
      openDepth = closeFrom;
    }
    if (i === rows.length) break;
    previousTime = t;
    if (s !== previousStack) {
      previousStack = s;
      for (let d = openDepth; d < depth; d++) {
        openName[d] = frames[last - d];
        openNode[d] = nodes[last - d];
        openSample[d] = sample;
        openStart[d] = t;
      }
      openDepth = depth;
      if (depth > deepest) {
        // A depth seen for the first time: its box arrays.
        const counts = new Uint32Array(depth);
        counts.set(levelCount);
        levelCount = counts;
        for (let d = deepest; d < depth; d++) {
          levelStart.push(new Float64Array(256));
          levelEnd.push(new Float64Array(256));
          levelName.push(new Int32Array(256));
          levelSamples.push(new Uint32Array(256));
        }
        deepest = depth;
      }
    }
    sample++;
  }
  const levels: StackLevel[] = [];
  for (let d = 0; d < deepest; d++) {
    const n = levelCount[d];
    levels.push({
      count: n,
      start: levelStart[d].subarray(0, n),
      end: levelEnd[d].subarray(0, n),
      name: levelName[d].subarray(0, n),
      samples: levelSamples[d].subarray(0, n),
    });
  }
  return { depth: deepest, levels, interval };
}

/** The box of `level` that covers time t (within `slack` ns of its ends), or -1. */
export function boxAt(level: StackLevel, t: number, slack = 0): number {
  let lo = 0;
  let hi = level.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (level.end[mid] + slack <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo < level.count && level.start[lo] - slack <= t ? lo : -1;
}

/** The deepest callchain among `rows` (0: none has one): a stack chart lane's height, found without building its boxes. */
export function maxStackDepth(rows: Uint32Array, stack: Int32Array, table: StackTable): number {
  const { start } = table;
  let deepest = 0;
  let previous = -1;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const s = row < stack.length ? stack[row] : -1;
    if (s === previous || s < 0 || s + 1 >= start.length) continue;
    previous = s;
    const depth = start[s + 1] - start[s];
    if (depth > deepest) deepest = depth;
  }
  return Math.min(255, deepest);
}

export interface StackChartStyle {
  readonly palette: readonly string[];
  readonly foreground: string;
  /** Drawn around the boxes of the highlighted function. */
  readonly selection: string;
}

/** What drawStackColumns reads: the lane's rows (sorted by time), the store's columns and the stacks they index. */
export interface StackColumnsInput {
  readonly rows: Uint32Array;
  readonly time: Float64Array;
  readonly stack: Int32Array;
  readonly table: StackTable;
  /** The lane's sampling interval (samplingInterval): how long a sample lasts at a gap or at the end. */
  readonly interval: number;
}

/**
 * The stack chart of one lane on `ctx` (device pixels), drawn without its boxes: each pixel column shows the callchain
 * of the sample that covers its left edge, depth d at y + d·rowHeight, and a run of columns sharing a call node at a
 * depth is one box. That is the picture buildStackChart's boxes give, whatever the zoom (a sample lasts until the next
 * one, or one interval at a gap of more than GAP_INTERVALS and at the end; records without a callchain are passed
 * over), at a cost of the columns, not the samples: a million samples need no boxes to be drawn. Boxes are coloured by
 * function, batched per colour; the `highlight` function's are outlined and the others dimmed while one is.
 */
export function drawStackColumns(
  ctx: CanvasRenderingContext2D,
  input: StackColumnsInput,
  t0: number,
  t1: number,
  width: number,
  y: number,
  rowHeight: number,
  depth: number,
  dpr: number,
  style: StackChartStyle,
  highlight: number,
): void {
  const { rows, time, stack, table, interval } = input;
  const { start: stackStart, frames } = table;
  const nodes = callNodes(table);
  const gap = interval > 0 ? interval * GAP_INTERVALS : Infinity;
  const nsPerPx = (t1 - t0) / width;
  const palette = style.palette;
  const ALPHAS = [0.7, 1, 0.25]; // no highlight; the highlighted function; the others while one is
  const batches: number[][] = Array.from({ length: palette.length * ALPHAS.length }, () => []);
  const labels: { x: number; y: number; text: string }[] = [];
  const outlines: number[] = [];
  const boxHeight = Math.max(1, rowHeight - Math.max(1, Math.round(dpr)));
  const charWidth = 6 * dpr;
  // The run open at each depth: its call node, function and first column.
  const runNode = new Int32Array(depth).fill(-1);
  const runName = new Int32Array(depth);
  const runX = new Int32Array(depth);
  const closeRun = (d: number, x: number): void => {
    const name = runName[d];
    const w = x - runX[d];
    const highlighted = name === highlight;
    batches[(name % palette.length) * ALPHAS.length + (highlight < 0 ? 0 : highlighted ? 1 : 2)].push(runX[d], y + d * rowHeight, w > 3 ? w - 1 : w);
    if (highlighted) outlines.push(runX[d], y + d * rowHeight, w);
    const chars = Math.floor((w - 4 * dpr) / charWidth);
    if (chars >= 3) {
      const text = table.names[name] ?? '?';
      labels.push({ x: runX[d] + 2 * dpr, y: y + d * rowHeight + boxHeight / 2, text: text.length <= chars ? text : `${text.slice(0, chars - 1)}…` });
    }
    runNode[d] = -1;
  };
  // The sample covering column x: the last row at or before its left edge (with a callchain), while it lasts.
  let pos = 0;
  for (let x = 0; x <= width; x++) {
    let last = 0;
    let frameDepth = 0;
    if (x < width) {
      const t = t0 + x * nsPerPx;
      let lo = pos;
      let hi = rows.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (time[rows[mid]] <= t) lo = mid + 1;
        else hi = mid;
      }
      pos = lo; // later columns search from here
      let p = lo - 1;
      while (p >= 0 && (rows[p] >= stack.length || stack[rows[p]] < 0)) p--;
      if (p >= 0) {
        // Its next sample with a callchain ends it, unless that is a gap away (or there is none): then one interval does.
        let q = lo;
        while (q < rows.length && (rows[q] >= stack.length || stack[rows[q]] < 0)) q++;
        const sampled = time[rows[p]];
        const end = q < rows.length && time[rows[q]] - sampled <= gap ? time[rows[q]] : sampled + interval;
        if (t < end) {
          const s = stack[rows[p]];
          if (s + 1 < stackStart.length) {
            last = stackStart[s + 1] - 1;
            frameDepth = Math.min(depth, stackStart[s + 1] - stackStart[s]);
          }
        }
      }
    }
    for (let d = 0; d < depth; d++) {
      const node = d < frameDepth ? nodes[last - d] : -1;
      if (node === runNode[d]) continue;
      if (runNode[d] >= 0) closeRun(d, x);
      if (node >= 0) {
        runNode[d] = node;
        runName[d] = frames[last - d];
        runX[d] = x;
      }
    }
  }
  batches.forEach((rects, key) => {
    if (rects.length === 0) return;
    ctx.globalAlpha = ALPHAS[key % ALPHAS.length];
    ctx.fillStyle = palette[Math.floor(key / ALPHAS.length)];
    ctx.beginPath();
    for (let r = 0; r < rects.length; r += 3) ctx.rect(rects[r], rects[r + 1], rects[r + 2], boxHeight);
    ctx.fill();
  });
  ctx.globalAlpha = 1;
  if (outlines.length > 0) {
    ctx.strokeStyle = style.selection;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    for (let o = 0; o < outlines.length; o += 3) ctx.strokeRect(outlines[o] + 0.5, outlines[o + 1] + 0.5, Math.max(1, outlines[o + 2] - 1), boxHeight - 1);
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
