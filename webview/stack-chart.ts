// The stack chart of a thread lane (as Firefox Profiler's Stack Chart): every sample's callchain as stacked boxes over
// time, root at the top, consecutive samples with the same call path down to a depth merged into one box at that depth,
// from the stacks the store already interns (shared/stacks.ts: a stack id per row, frames leaf first). Nothing is built
// ahead of a frame but the lane's depth: a frame draws it per pixel column from the samples themselves (drawStackColumns:
// the cost of the columns, not of the samples), and hover and click find the one box under the pointer from the samples
// too (stackBoxAt: the run of samples around it). The whole chart's boxes (buildStackChart, a pass over every sample of
// the lane: 70-150 ms for a million) are built only when asked for (tests and tools read them).

import type { SourceLocation, StackTable } from '../shared/stacks';
import { formatDuration } from './time-format';
import { colourPixel, lanePixels } from './pixel-image';

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

/** Deepest callchain a stack chart draws (deeper frames are left out). */
const MAX_DEPTH = 255;

/**
 * `map` (the call tree's transforms, call-tree-transforms.ts transformStackView): per stack id of the store, the stack of
 * `table` the chart draws instead, -1 where the transforms drop its samples (such a sample ends every box and draws
 * nothing). Without it, the store's stack ids index `table` directly.
 */
export function buildStackChart(rows: Uint32Array, time: Float64Array, stack: Int32Array, table: StackTable, map?: Int32Array): StackChart {
  const builder = new StackChartBuilder(rows, time, stack, table, map);
  builder.advance(Infinity);
  return builder.chart();
}

/**
 * buildStackChart in steps: `advance(n)` reads the next n rows (the boxes of a lane of a million samples are about a
 * tenth of a second of a thread: a caller that cannot wait for them all can spread them). The boxes are those of one pass
 * over every row.
 */
export class StackChartBuilder {
  private readonly interval: number;
  private readonly gap: number;
  private readonly nodes: Int32Array;
  // Each depth's boxes in arrays of their own, grown by doubling, written as they close (in time order).
  private readonly levelStart: Float64Array[] = [];
  private readonly levelEnd: Float64Array[] = [];
  private readonly levelName: Int32Array[] = [];
  private readonly levelSamples: Uint32Array[] = [];
  private levelCount = new Uint32Array(0);
  // The open box of each depth: its function, its call node, the samples before it and its start time.
  private readonly openName = new Int32Array(MAX_DEPTH);
  private readonly openNode = new Int32Array(MAX_DEPTH);
  private readonly openSample = new Uint32Array(MAX_DEPTH);
  private readonly openStart = new Float64Array(MAX_DEPTH);
  private openDepth = 0;
  private deepest = 0;
  private previousStack = -1;
  private previousTime = NaN;
  /** Samples with a callchain so far. */
  private sample = 0;
  /** The next row to read (rows.length + 1: done, every box closed). */
  private next = 0;

  constructor(
    private readonly rows: Uint32Array,
    private readonly time: Float64Array,
    private readonly stack: Int32Array,
    private readonly table: StackTable,
    private readonly map?: Int32Array,
  ) {
    this.interval = samplingInterval(rows, time, stack);
    this.gap = this.interval > 0 ? this.interval * GAP_INTERVALS : Infinity;
    this.nodes = callNodes(table);
  }

  get done(): boolean {
    return this.next > this.rows.length;
  }

  /**
   * Reads up to `count` more rows; true once every row is read. The loop keeps its state in locals, written back at the
   * end (no closure over them: V8 keeps captured variables in a heap context, which made it 10× slower).
   */
  advance(count: number): boolean {
    const { rows, time, stack, map, interval, gap, nodes, levelStart, levelEnd, levelName, levelSamples, openName, openNode, openSample, openStart } = this;
    const { start: stackStart, frames } = this.table;
    let { levelCount, openDepth, deepest, previousStack, previousTime, sample } = this;
    const last = Math.min(rows.length, this.next + count - 1);
    let i = this.next;
    for (; i <= last; i++) {
      // Past the last row: close every box (closeFrom 0).
      let closeFrom = openDepth;
      let endTime = 0;
      let s = -1;
      let t = 0;
      if (i < rows.length) {
        const row = rows[i];
        const sampled = row < stack.length ? stack[row] : -1;
        // Records without a callchain (a tracepoint of the same thread) are not samples: they neither draw nor break boxes.
        if (sampled < 0 || (map ? sampled >= map.length : sampled + 1 >= stackStart.length)) continue;
        // A sample the transforms drop is one of no frames (s = -1): it closes every box.
        s = map ? map[sampled] : sampled;
        if (s + 1 >= stackStart.length) s = -1;
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
      // Frames of s are leaf first: depth d (0: root) is frames[leaf - d]; the common part with the open boxes goes on.
      let depth = 0;
      let leaf = 0;
      if (i < rows.length && s !== previousStack) {
        if (s >= 0) {
          leaf = stackStart[s + 1] - 1;
          depth = Math.min(MAX_DEPTH, stackStart[s + 1] - stackStart[s]);
        }
        // The deepest depth whose call node is the open box's (all above it are then the same too).
        let common = Math.min(depth, closeFrom);
        while (common > 0 && nodes[leaf - (common - 1)] !== openNode[common - 1]) common--;
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
      if (i === rows.length) {
        // Every box closed: done (a step that ends just before this leaves it to the next one).
        i = rows.length + 1;
        break;
      }
      previousTime = t;
      if (s !== previousStack) {
        previousStack = s;
        for (let d = openDepth; d < depth; d++) {
          openName[d] = frames[leaf - d];
          openNode[d] = nodes[leaf - d];
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
    this.next = i;
    Object.assign(this, { levelCount, openDepth, deepest, previousStack, previousTime, sample });
    return this.done;
  }

  /** The chart, once every row is read (advance returned true). */
  chart(): StackChart {
    if (!this.done) throw new Error('the stack chart is not built yet');
    const levels: StackLevel[] = [];
    for (let d = 0; d < this.deepest; d++) {
      const n = this.levelCount[d];
      levels.push({
        count: n,
        start: this.levelStart[d].subarray(0, n),
        end: this.levelEnd[d].subarray(0, n),
        name: this.levelName[d].subarray(0, n),
        samples: this.levelSamples[d].subarray(0, n),
      });
    }
    return { depth: this.deepest, levels, interval: this.interval };
  }
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

/** Per stack table: its deepest stack (capped as the charts are), found once per table. */
const tableDepthOf = new WeakMap<StackTable, number>();

function tableDepth(table: StackTable): number {
  let deepest = tableDepthOf.get(table);
  if (deepest !== undefined) return deepest;
  deepest = 0;
  for (let s = 0; s + 1 < table.start.length; s++) deepest = Math.max(deepest, table.start[s + 1] - table.start[s]);
  deepest = Math.min(MAX_DEPTH, deepest);
  tableDepthOf.set(table, deepest);
  return deepest;
}

/**
 * The deepest callchain among `rows` (0: none has one): a stack chart lane's height, found without building its boxes.
 * The pass over the rows ends at the first sample as deep as the table's deepest stack (nothing can be deeper), which
 * is soon in most captures: the first paint of a lane need not read its million rows for its height.
 */
export function maxStackDepth(rows: Uint32Array, stack: Int32Array, table: StackTable, map?: Int32Array): number {
  const { start } = table;
  const limit = tableDepth(table);
  let deepest = 0;
  let previous = -1;
  for (let i = 0; i < rows.length && deepest < limit; i++) {
    const row = rows[i];
    const sampled = row < stack.length ? stack[row] : -1;
    const s = map && sampled >= 0 ? (sampled < map.length ? map[sampled] : -1) : sampled;
    if (s === previous || s < 0 || s + 1 >= start.length) continue;
    previous = s;
    const depth = start[s + 1] - start[s];
    if (depth > deepest) deepest = depth;
  }
  return Math.min(MAX_DEPTH, deepest);
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
  /** The transforms' stack of each store stack id in `table` (-1: dropped), as buildStackChart's `map`; absent: none. */
  readonly map?: Int32Array;
}

/** A box is drawn with a gap of one device pixel after it when it is wider than this (narrower ones touch). */
const GAP_ABOVE_PX = 3;

/** The opacity of a box: no function highlighted; the highlighted function's; the others' while one is. */
const ALPHAS = [0.7, 1, 0.25];

/**
 * What drawStackColumns keeps from frame to frame so a frame allocates nothing per box (its pixels are lanePixels'): the
 * labels (x, y, function, characters) and the outlines, reused with their length reset; and each function's label cut to
 * a number of characters, made once (a frame cuts no string per box).
 */
class ColumnScratch {
  labelX: number[] = [];
  labelY: number[] = [];
  labelName: number[] = [];
  labelChars: number[] = [];
  outlines: number[] = [];
  private readonly cut = new Map<StackTable, string[][]>();

  reset(): void {
    this.labelX.length = this.labelY.length = this.labelName.length = this.labelChars.length = 0;
    this.outlines.length = 0;
  }

  /** Function `name`'s label in at most `chars` characters (an ellipsis where it is cut). */
  label(table: StackTable, name: number, chars: number): string {
    let byName = this.cut.get(table);
    if (!byName) {
      byName = [];
      this.cut.set(table, byName);
    }
    const byChars = (byName[name] ??= []);
    let text = byChars[chars];
    if (text === undefined) {
      const full = table.names[name] ?? '?';
      text = byChars[chars] = full.length <= chars ? full : `${full.slice(0, chars - 1)}…`;
    }
    return text;
  }
}

const scratch = new ColumnScratch();

/**
 * The stack chart of one lane on `ctx` (device pixels), drawn without its boxes: each pixel column shows the callchain
 * of the sample that covers its left edge, depth d at y + d·rowHeight, and a run of columns whose samples share their
 * call path from the root down to a depth is one box there. That is the picture buildStackChart's boxes give, whatever
 * the zoom (a sample lasts until the next one, or one interval at a gap of more than GAP_INTERVALS and at the end;
 * records without a callchain are passed over), at a cost of the columns, not the samples: a million samples need no
 * boxes to be drawn, and a column costs one bisection (from the previous column's position) and, when its sample's
 * stack is another one, a comparison of the two paths from the root. Boxes are coloured by function; the `highlight`
 * function's are outlined and the others dimmed while one is.
 *
 * The boxes are written as pixels (one row per depth, copied down the box's height) and put on the canvas as one image:
 * thousands of one- and two-pixel slivers filled as paths cost this software-composited Chromium 3-5 ms a frame to
 * rasterise at commit, the pixels well under one. `above`, when given, writes the rows over the chart (its lane's
 * activity graph) into the same image, which is then drawn from `above.height` pixels over `y`.
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
  above?: { readonly height: number; write(pixels: Uint32Array, stride: number): void },
): void {
  const { rows, time, stack, table, interval, map } = input;
  const { start: stackStart, frames } = table;
  const gap = interval > 0 ? interval * GAP_INTERVALS : Infinity;
  const nsPerPx = (t1 - t0) / width;
  const palette = style.palette;
  scratch.reset();
  const { labelX, labelY, labelName, labelChars, outlines } = scratch;
  const boxHeight = Math.max(1, rowHeight - Math.max(1, Math.round(dpr)));
  const charWidth = 6 * dpr;
  const imageWidth = Math.max(1, Math.ceil(width));
  const aboveHeight = above?.height ?? 0;
  const pixels = lanePixels.pixelsFor(imageWidth, aboveHeight + depth * rowHeight);
  if (!pixels) return;
  above?.write(pixels, imageWidth);
  // Where the chart's rows start in the image, under what `above` wrote.
  const chartAt = aboveHeight * imageWidth;
  // The pixel of each colour and opacity (palette index × ALPHAS), for this palette.
  const colours = new Uint32Array(palette.length * ALPHAS.length);
  for (let k = 0; k < palette.length; k++) for (let a = 0; a < ALPHAS.length; a++) colours[k * ALPHAS.length + a] = colourPixel(palette[k], ALPHAS[a]);
  // The run open at each depth (open while runOpen): its function and first column. Its call path is the open stack's.
  const runOpen = new Uint8Array(depth);
  const runName = new Int32Array(depth);
  const runX = new Int32Array(depth);
  // The stack of the previous column (-1: none) and where its frames end.
  let openStack = -1;
  let openLast = 0;
  let openDepth = 0;
  let pos = 0;
  // How many rows the previous column moved past: the next one is looked for that far on first.
  let advance = 1;
  for (let x = 0; x <= width; x++) {
    // The sample covering column x: the last row at or before its left edge (with a callchain), while it lasts.
    let s = -1;
    if (x < width) {
      const t = t0 + x * nsPerPx;
      // The first row after t: first looked for where the previous column's advance puts it (samples come at a steady
      // rate: two neighbouring probes when that is right), else galloped to, up or down from there, and what that
      // brackets bisected. The probes stay near each other (a bisection of the whole rest of a million-row lane per
      // column missed the cache on most of its 20 probes), and a wide view's column costs a few of them, not a
      // bisection of its advance (~9 probes at full view of a million samples, most of a cold zoom frame's time).
      const guess = Math.min(rows.length, pos + advance);
      let lo = pos;
      let hi = guess;
      if (guess > pos && time[rows[guess - 1]] > t) {
        // At or before guess - 1: gallop down while the probe is still after t.
        hi = guess - 1;
        for (let step = 1; hi - step >= pos; step *= 2) {
          if (time[rows[hi - step]] <= t) {
            lo = hi - step + 1;
            break;
          }
          hi -= step;
        }
      } else {
        // At or after guess: gallop up while the probe is not after t.
        lo = guess;
        for (let step = 1; hi < rows.length && time[rows[hi]] <= t; step *= 2) {
          lo = hi + 1;
          hi = Math.min(rows.length, hi + step);
        }
      }
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (time[rows[mid]] <= t) lo = mid + 1;
        else hi = mid;
      }
      advance = Math.max(1, lo - pos);
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
          const sampled = stack[rows[p]];
          const id = map ? (sampled < map.length ? map[sampled] : -1) : sampled;
          if (id >= 0 && id + 1 < stackStart.length) s = id;
        }
      }
    }
    if (s === openStack) continue;
    // The depth down to which this column's call path is the open one's: those runs go on, the rest close.
    let last = 0;
    let frameDepth = 0;
    if (s >= 0) {
      last = stackStart[s + 1] - 1;
      frameDepth = Math.min(depth, stackStart[s + 1] - stackStart[s]);
    }
    let common = 0;
    const shared = Math.min(frameDepth, openDepth);
    while (common < shared && frames[last - common] === frames[openLast - common]) common++;
    // Close the runs below the shared path: each is a box from its first column to this one. Written here, not in a
    // closure: a closure over this function's variables put them all in a context object, read and written from there
    // in the loop over columns, and its call per box ran interpreted in a cold frame.
    for (let d = common; d < openDepth; d++) {
      if (runOpen[d] !== 1) continue;
      runOpen[d] = 0;
      const name = runName[d];
      const x0 = runX[d];
      const w = x - x0;
      const highlighted = name === highlight;
      const colour = colours[(name % palette.length) * ALPHAS.length + (highlight < 0 ? 0 : highlighted ? 1 : 2)];
      // The top row of the box; the rows under it are copied from it once every box is written.
      const row = chartAt + d * rowHeight * imageWidth;
      const from = row + x0;
      const to = row + Math.min(imageWidth, w > GAP_ABOVE_PX ? x - 1 : x);
      // Most boxes of a wide view are slivers: a loop writes a few pixels faster than a call of fill.
      if (to - from > 32) pixels.fill(colour, from, to);
      else for (let i = from; i < to; i++) pixels[i] = colour;
      if (highlighted) outlines.push(x0, y + d * rowHeight, w);
      const chars = Math.floor((w - 4 * dpr) / charWidth);
      if (chars >= 3) {
        labelX.push(x0 + 2 * dpr);
        labelY.push(y + d * rowHeight + boxHeight / 2);
        labelName.push(name);
        labelChars.push(chars);
      }
    }
    for (let d = common; d < frameDepth; d++) {
      runOpen[d] = 1;
      runName[d] = frames[last - d];
      runX[d] = x;
    }
    openStack = s;
    openLast = last;
    openDepth = frameDepth;
  }
  for (let d = 0; d < depth; d++) {
    const row = chartAt + d * rowHeight * imageWidth;
    for (let k = 1; k < boxHeight; k++) pixels.copyWithin(row + k * imageWidth, row, row + imageWidth);
  }
  // Drawn over what the lane holds (its loss marks), as filled boxes would be.
  lanePixels.drawOn(ctx, y - aboveHeight, aboveHeight + depth * rowHeight);
  if (outlines.length > 0) {
    ctx.strokeStyle = style.selection;
    ctx.lineWidth = Math.max(1, Math.round(dpr));
    for (let o = 0; o < outlines.length; o += 3) ctx.strokeRect(outlines[o] + 0.5, outlines[o + 1] + 0.5, Math.max(1, outlines[o + 2] - 1), boxHeight - 1);
  }
  if (labelX.length > 0) {
    ctx.fillStyle = style.foreground;
    ctx.font = `${Math.round(10 * dpr)}px sans-serif`;
    ctx.textBaseline = 'middle';
    for (let l = 0; l < labelX.length; l++) ctx.fillText(scratch.label(table, labelName[l], labelChars[l]), labelX[l], labelY[l]);
  }
}

/** Where a stack chart box's function is: its entry line when the host knows it. */
export function entryOf(table: StackTable, name: number): SourceLocation | undefined {
  const at = table.nameLocation?.[name] ?? -1;
  return at >= 0 ? table.locations?.[at] : undefined;
}

/** One box of a stack chart: what buildStackChart's levels hold at one index of one depth. */
export interface StackBox {
  readonly depth: number;
  /** Times (store ns) it covers: from its first sample to the end of its last. */
  readonly start: number;
  readonly end: number;
  /** The function (index into the chart table's names). */
  readonly name: number;
  /** How many samples it merges. */
  readonly samples: number;
}

/**
 * The box of depth `depth` under time t (within `slack` ns of its ends: the earliest such box, as boxAt finds it in
 * buildStackChart's levels), found from the samples alone: the first sample whose time covers that window and has a frame
 * at that depth, and the run of samples around it with the same call path down to the depth (no gap of more than
 * GAP_INTERVALS intervals, no sample the transforms drop, records without a callchain passed over). It costs the samples
 * of that box (a root box of a million samples, a few milliseconds), not of the lane, and nothing before it is asked.
 */
export function stackBoxAt(input: StackColumnsInput, t: number, depth: number, slack = 0): StackBox | null {
  const { rows, time, stack, table, interval, map } = input;
  const { start: stackStart, frames } = table;
  if (depth < 0 || depth >= MAX_DEPTH) return null;
  const gap = interval > 0 ? interval * GAP_INTERVALS : Infinity;
  const nodes = callNodes(table);
  // The chart's stack of the row at lane position i: -2 a record without a callchain (passed over), -1 a sample the
  // transforms drop (it ends every box), else its stack in `table` (as StackChartBuilder reads a row).
  const stackOf = (i: number): number => {
    const row = rows[i];
    const sampled = row < stack.length ? stack[row] : -1;
    if (sampled < 0 || (map ? sampled >= map.length : sampled + 1 >= stackStart.length)) return -2;
    const s = map ? map[sampled] : sampled;
    return s + 1 >= stackStart.length ? -1 : s;
  };
  // Its frame's index at the depth (-1: it has none there).
  const frameAt = (s: number): number => (s >= 0 && Math.min(MAX_DEPTH, stackStart[s + 1] - stackStart[s]) > depth ? stackStart[s + 1] - 1 - depth : -1);
  const nextSample = (i: number): number => {
    let k = i + 1;
    while (k < rows.length && stackOf(k) === -2) k++;
    return k;
  };
  // The last row at or before t - slack: the first sample that may cover the window is there or after it.
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (time[rows[mid]] <= t - slack) lo = mid + 1;
    else hi = mid;
  }
  let i = lo - 1;
  while (i >= 0 && stackOf(i) === -2) i--;
  if (i < 0) i = nextSample(-1);
  let found = -1;
  for (; i < rows.length && time[rows[i]] <= t + slack; i = nextSample(i)) {
    const k = nextSample(i);
    const sampled = time[rows[i]];
    const end = k < rows.length && time[rows[k]] - sampled <= gap ? time[rows[k]] : sampled + interval;
    if (end + slack > t && frameAt(stackOf(i)) >= 0) {
      found = i;
      break;
    }
  }
  if (found < 0) return null;
  const foundStack = stackOf(found);
  const frame = frameAt(foundStack);
  const node = nodes[frame];
  // The runs are walked with the reads written out (a root box is every sample of the lane): a sample of the same stack
  // as the one before it needs no look at its frames.
  let samples = 1;
  // Back to the first sample of its run.
  let firstTime = time[rows[found]];
  let same = foundStack;
  for (let k = found - 1; k >= 0; k--) {
    const row = rows[k];
    const sampled = row < stack.length ? stack[row] : -1;
    if (sampled < 0 || (map ? sampled >= map.length : sampled + 1 >= stackStart.length)) continue;
    const s = map ? map[sampled] : sampled;
    const at = time[row];
    if (s < 0 || s + 1 >= stackStart.length || firstTime - at > gap) break;
    if (s !== same) {
      const n = Math.min(MAX_DEPTH, stackStart[s + 1] - stackStart[s]);
      if (n <= depth || nodes[stackStart[s + 1] - 1 - depth] !== node) break;
      same = s;
    }
    firstTime = at;
    samples++;
  }
  // On to its last: it ends at the next sample that is not of it, or one interval after the last at a gap or the end.
  let lastTime = time[rows[found]];
  let end = NaN;
  same = foundStack;
  for (let k = found + 1; k < rows.length; k++) {
    const row = rows[k];
    const sampled = row < stack.length ? stack[row] : -1;
    if (sampled < 0 || (map ? sampled >= map.length : sampled + 1 >= stackStart.length)) continue;
    const at = time[row];
    if (at - lastTime > gap) break;
    const s = map ? map[sampled] : sampled;
    if (s !== same) {
      const n = s < 0 || s + 1 >= stackStart.length ? 0 : Math.min(MAX_DEPTH, stackStart[s + 1] - stackStart[s]);
      if (n <= depth || nodes[stackStart[s + 1] - 1 - depth] !== node) {
        end = at;
        break;
      }
      same = s;
    }
    lastTime = at;
    samples++;
  }
  if (end !== end) end = lastTime + interval;
  return { depth, start: firstTime, end, name: frames[frame], samples };
}

/** The tooltip of a box: function, source line, duration and sample count. */
export function describeBox(box: StackBox, table: StackTable): string[] {
  const at = entryOf(table, box.name);
  return [
    table.names[box.name] ?? '?',
    at ? `${at.file}:${at.line}` : 'source line unknown',
    `${formatDuration(box.end - box.start)} · ${box.samples.toLocaleString('en-US')} sample${box.samples === 1 ? '' : 's'} · depth ${box.depth}`,
  ];
}
