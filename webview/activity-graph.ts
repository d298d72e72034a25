// The activity graph of a lane (as Firefox Profiler's track activity graph): its records per time bucket as a filled
// graph, each bucket coloured by the function most of its samples were in (the top self function: the leaf of their
// callchains), or, while a function is highlighted, split into the samples whose stack holds it (bright) and the rest
// (dim). Lanes without callchains take their event's colour. The call tree's transforms apply as they do to the stack
// chart: a bucket's colour is read from its samples' transformed stacks, and the samples the transforms drop (focus on a
// function drops those not through it) are drawn apart, faint, on top of the rest (Firefox Profiler's "filtered out by
// transform" fill). Counts are exact (by bisection, density.ts); the colour of a bucket of many samples is read from an
// even subsample of them, so a frame costs the same at any record count.

import type { StackTable } from '../shared/stacks';
import { binDensity } from './density';
import { visibleRange } from './hit-test';
import { colourPixel, lanePixels } from './pixel-image';

/** Width of one bucket in CSS pixels. */
export const ACTIVITY_BUCKET_PX = 2;
/** At most this many samples of a bucket are read for its colour (its count is always exact). */
const COLOUR_SAMPLES = 32;

export interface ActivityGraph {
  readonly t0: number;
  readonly t1: number;
  /** Records per bucket: bucket b covers times [t0 + b·(t1−t0)/n, t0 + (b+1)·(t1−t0)/n) (the last one includes t1). */
  readonly counts: Uint32Array;
  /** Per bucket: the top self function of the samples the transforms keep (index into the stack table's names), or -1 (none). */
  readonly top: Int32Array;
  /** Per bucket, while a function is highlighted: how many of its records have it in their stack (estimated from the subsample). */
  readonly highlighted: Uint32Array | null;
  /** Per bucket, under transforms that drop samples: how many of its records they drop (estimated as `highlighted`); else null. */
  readonly filtered: Uint32Array | null;
  /** The count drawn at full height. */
  readonly scale: number;
}

/** Per stack id: 1 when its frames hold function `name` (so a sample's test is one read). */
export function stacksHolding(table: StackTable, name: number): Uint8Array {
  const count = table.start.length - 1;
  const out = new Uint8Array(Math.max(0, count));
  for (let s = 0; s < count; s++) {
    for (let f = table.start[s]; f < table.start[s + 1]; f++)
      if (table.frames[f] === name) {
        out[s] = 1;
        break;
      }
  }
  return out;
}

/** Per stack table: each stack's leaf function (its first frame), read once per sample of a bucket (leavesOf). */
const leavesOfTable = new WeakMap<StackTable, Int32Array>();

/** Each stack's leaf function, found once per table: a bucket's sample then costs one read, not two scattered ones. */
function leavesOf(table: StackTable): Int32Array {
  let leaves = leavesOfTable.get(table);
  if (!leaves) {
    const count = Math.max(0, table.start.length - 1);
    leaves = new Int32Array(count);
    for (let s = 0; s < count; s++) leaves[s] = table.frames[table.start[s]];
    leavesOfTable.set(table, leaves);
  }
  return leaves;
}

/**
 * The activity graph of `rows` (sorted by time) over [t0, t1] in `buckets` buckets. `stack` gives each row's stack id
 * (-1: none); `map`, each such id's stack in `table` after the call tree's transforms (-1: dropped; null: no transforms,
 * `table` indexes `stack` itself); `holding` (stacksHolding over `table`) the highlighted function's stacks, or null.
 * `interval`, the lane's sampling interval (0: unknown), makes a thread sampled every interval reach full height;
 * otherwise the fullest bucket does.
 */
export function buildActivityGraph(
  time: Float64Array,
  rows: Uint32Array,
  t0: number,
  t1: number,
  buckets: number,
  stack: Int32Array,
  table: StackTable,
  holding: Uint8Array | null,
  interval: number,
  map: Int32Array | null = null,
  scratch?: Int32Array,
): ActivityGraph {
  const { counts, max } = binDensity(time, rows, t0, t1, buckets);
  const n = counts.length;
  const top = new Int32Array(n).fill(-1);
  const highlighted = holding ? new Uint32Array(n) : null;
  const filtered = map ? new Uint32Array(n) : null;
  const names = table.names.length;
  const tally = scratch && scratch.length >= names ? scratch : new Int32Array(names);
  const anyFiltered =
    stack.length > 0 && table.start.length > 1
      ? colourBuckets(counts, rows, visibleRange(time, rows, t0, t1)[0], stack, leavesOf(table), map, holding, tally, top, highlighted, filtered)
      : false;
  const bucketNs = (t1 - t0) / n;
  const expected = interval > 0 ? bucketNs / interval : 0;
  return { t0, t1, counts, top, highlighted, filtered: anyFiltered ? filtered : null, scale: Math.max(1, max, expected) };
}

/**
 * Each bucket's top self function (`top`) and, when asked for, its records through the highlighted function and those the
 * transforms drop, from an even subsample of its rows (from position `pos` on, `counts[b]` a bucket); true when any are
 * dropped. The loop alone in a function: V8 compiles a long loop on its first run (on-stack replacement) before the code
 * after it has run, and every later frame re-entering that compiled loop fell back to the interpreter at the first
 * property write after it (buildActivityGraph's result, once a frame).
 */
function colourBuckets(
  counts: Uint32Array,
  rows: Uint32Array,
  pos: number,
  stack: Int32Array,
  leaves: Int32Array,
  map: Int32Array | null,
  holding: Uint8Array | null,
  tally: Int32Array,
  top: Int32Array,
  highlighted: Uint32Array | null,
  filtered: Uint32Array | null,
): boolean {
  const touched: number[] = [];
  let anyFiltered = false;
  for (let b = 0; b < counts.length; b++) {
    const count = counts[b];
    if (count === 0) continue;
    const step = count > COLOUR_SAMPLES ? count / COLOUR_SAMPLES : 1;
    let read = 0;
    let held = 0;
    let dropped = 0;
    let best = -1;
    let bestCount = 0;
    for (let k = 0; k < count; k = Math.floor(++read * step)) {
      const row = rows[pos + k];
      const stored = row < stack.length ? stack[row] : -1;
      if (stored < 0) continue;
      const s = map ? (stored < map.length ? map[stored] : -1) : stored;
      if (s < 0) {
        dropped++;
        continue;
      }
      if (holding !== null && holding[s] === 1) held++;
      const leaf = leaves[s];
      if (tally[leaf]++ === 0) touched.push(leaf);
      if (tally[leaf] > bestCount || (tally[leaf] === bestCount && leaf < best)) {
        best = leaf;
        bestCount = tally[leaf];
      }
    }
    for (const leaf of touched) tally[leaf] = 0;
    touched.length = 0;
    top[b] = best;
    if (highlighted) highlighted[b] = read === count ? held : Math.round((held * count) / read);
    if (filtered && dropped > 0) {
      filtered[b] = read === count ? dropped : Math.round((dropped * count) / read);
      anyFiltered = true;
    }
    pos += count;
  }
  return anyFiltered;
}

export interface ActivityStyle {
  readonly palette: readonly string[];
  /** The colour of a bucket without callchains (the lane's event's). */
  readonly plain: string;
  /** The part of a bucket not through the highlighted function, and (fainter) the part the transforms drop. */
  readonly dim: string;
}

/** The pixels (pixel-image.ts colourPixel: RGBA words at their opacity) of an activity graph's colours. */
export interface ActivityPixels {
  /** Per palette colour: a bucket's top self function's, nearly opaque. */
  readonly palette: Uint32Array;
  /** Per palette colour: the highlighted function's share, opaque. */
  readonly highlighted: Uint32Array;
  /** A bucket without callchains. */
  readonly plain: number;
  /** The part of a highlighted graph not through its function (the theme's foreground, faint), and what the transforms drop (fainter still). */
  readonly dim: number;
  readonly filtered: number;
}

/** Per palette (the theme's, one array until it changes): the pixels of each plain and dim colour with it. */
const pixelsOfStyle = new WeakMap<readonly string[], Map<string, ActivityPixels>>();

/** The pixels of `style`'s colours, found once per theme (a frame reads them for every graph it draws). */
export function activityPixels(style: ActivityStyle): ActivityPixels {
  let byColours = pixelsOfStyle.get(style.palette);
  if (!byColours) {
    byColours = new Map();
    pixelsOfStyle.set(style.palette, byColours);
  }
  const key = `${style.plain}\0${style.dim}`;
  let pixels = byColours.get(key);
  if (!pixels) {
    pixels = {
      palette: Uint32Array.from(style.palette, (c) => colourPixel(c, 0.85)),
      highlighted: Uint32Array.from(style.palette, (c) => colourPixel(c, 1)),
      plain: colourPixel(style.plain, 0.85),
      dim: colourPixel(style.dim, 0.45),
      filtered: colourPixel(style.dim, 0.18),
    };
    byColours.set(key, pixels);
  }
  return pixels;
}

/**
 * The graph written into `pixels` (rows of `stride` words, device pixels): one column per bucket over `width`, rising
 * from the bottom of rows [y, y + height); coloured by its top self function, or, while `highlight` is a function, split
 * into its share (bright) and the rest (dim); what the transforms drop tops the column, faint.
 */
export function writeActivityGraph(
  pixels: Uint32Array,
  stride: number,
  graph: ActivityGraph,
  width: number,
  y: number,
  height: number,
  highlight: number,
  colours: ActivityPixels,
): void {
  const n = graph.counts.length;
  const columnWidth = width / n;
  const bottom = y + height;
  const paletteSize = colours.palette.length;
  // Each bucket's column, top down: what the transforms drop (filtered) from `top`, then the part not through the
  // highlighted function (dim) from `dimFrom`, then its main colour from `mainFrom` to the bottom.
  const x0 = new Int32Array(n);
  const x1 = new Int32Array(n);
  const top = new Int32Array(n).fill(bottom);
  const dimFrom = new Int32Array(n);
  const mainFrom = new Int32Array(n);
  const main = new Uint32Array(n);
  let highest = bottom;
  for (let b = 0; b < n; b++) {
    const count = graph.counts[b];
    if (count === 0) continue;
    x0[b] = Math.round(b * columnWidth);
    x1[b] = Math.min(stride, x0[b] + Math.max(1, Math.round((b + 1) * columnWidth) - x0[b]));
    const whole = Math.max(1, Math.round((height * Math.min(count, graph.scale)) / graph.scale));
    const dropped = graph.filtered ? Math.min(whole, Math.round((whole * graph.filtered[b]) / count)) : 0;
    const h = whole - dropped;
    top[b] = bottom - whole;
    dimFrom[b] = bottom - h;
    if (graph.highlighted) {
      mainFrom[b] = bottom - Math.min(h, Math.round((whole * graph.highlighted[b]) / count));
      main[b] = colours.highlighted[highlight % paletteSize];
    } else {
      mainFrom[b] = bottom - h;
      const fn = graph.top[b];
      main[b] = fn >= 0 ? colours.palette[fn % paletteSize] : colours.plain;
    }
    if (top[b] < highest) highest = top[b];
  }
  // Written a row at a time, every bucket in one loop: a frame's first run of this code is cold, and a long loop is
  // compiled within it where a rectangle per bucket (a call and two short loops each) ran interpreted.
  for (let row = highest; row < bottom; row++) {
    const at = row * stride;
    for (let b = 0; b < n; b++) {
      if (row < top[b]) continue;
      const colour = row < dimFrom[b] ? colours.filtered : row < mainFrom[b] ? colours.dim : main[b];
      for (let i = at + x0[b]; i < at + x1[b]; i++) pixels[i] = colour;
    }
  }
}

/**
 * The graph on `ctx` in device pixels, in rows [y, y + height): written as pixels (writeActivityGraph) and drawn as one
 * image. Filled as paths, a graph's hundreds of columns were rasterised one by one at commit in software-composited
 * Chromium, and gathering them per colour cost the frame's script as much again.
 */
export function drawActivityGraph(
  ctx: CanvasRenderingContext2D,
  graph: ActivityGraph,
  width: number,
  y: number,
  height: number,
  highlight: number,
  style: ActivityStyle,
): void {
  const stride = Math.max(1, Math.ceil(width));
  const pixels = lanePixels.pixelsFor(stride, height);
  if (!pixels) return;
  writeActivityGraph(pixels, stride, graph, width, 0, height, highlight, activityPixels(style));
  lanePixels.drawOn(ctx, y, height);
}
