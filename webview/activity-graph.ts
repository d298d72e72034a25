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
  let anyFiltered = false;
  const names = table.names.length;
  const tally = scratch && scratch.length >= names ? scratch : new Int32Array(names);
  const touched: number[] = [];
  let pos = visibleRange(time, rows, t0, t1)[0];
  const hasStacks = stack.length > 0 && table.start.length > 1;
  const leaves = leavesOf(table);
  for (let b = 0; b < n; b++) {
    const count = counts[b];
    if (count === 0 || !hasStacks) {
      pos += count;
      continue;
    }
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
    const estimate = (part: number) => (read === count ? part : Math.round((part * count) / read));
    if (highlighted) highlighted[b] = estimate(held);
    if (filtered && dropped > 0) {
      filtered[b] = estimate(dropped);
      anyFiltered = true;
    }
    pos += count;
  }
  const bucketNs = (t1 - t0) / n;
  const expected = interval > 0 ? bucketNs / interval : 0;
  return { t0, t1, counts, top, highlighted, filtered: anyFiltered ? filtered : null, scale: Math.max(1, max, expected) };
}

export interface ActivityStyle {
  readonly palette: readonly string[];
  /** The colour of a bucket without callchains (the lane's event's). */
  readonly plain: string;
  /** The part of a bucket not through the highlighted function, and (fainter) the part the transforms drop. */
  readonly dim: string;
}

/** The keys of the dim part's and the filtered part's rectangles (not CSS colours, so no palette colour can be one). */
const DIM = '\0dim';
const FILTERED = '\0filtered';

/** The graph on `ctx` in device pixels: one filled column per bucket, rising from the bottom of [y, y + height). */
export function drawActivityGraph(
  ctx: CanvasRenderingContext2D,
  graph: ActivityGraph,
  width: number,
  y: number,
  height: number,
  highlight: number,
  style: ActivityStyle,
): void {
  const n = graph.counts.length;
  const columnWidth = width / n;
  const bottom = y + height;
  // Columns are gathered per colour and filled as one path each (a fill style set per column cost a frame most of its time).
  const byColour = new Map<string, number[]>();
  const add = (colour: string, x: number, top: number, w: number, h: number) => {
    let list = byColour.get(colour);
    if (!list) {
      list = [];
      byColour.set(colour, list);
    }
    list.push(x, top, w, h);
  };
  for (let b = 0; b < n; b++) {
    const count = graph.counts[b];
    if (count === 0) continue;
    const x0 = Math.round(b * columnWidth);
    const w = Math.max(1, Math.round((b + 1) * columnWidth) - x0);
    const whole = Math.max(1, Math.round((height * Math.min(count, graph.scale)) / graph.scale));
    // What the transforms drop tops the column; the samples they keep fill it from the bottom.
    const dropped = graph.filtered ? Math.min(whole, Math.round((whole * graph.filtered[b]) / count)) : 0;
    if (dropped > 0) add(FILTERED, x0, bottom - whole, w, dropped);
    const h = whole - dropped;
    if (h === 0) continue;
    if (graph.highlighted) {
      const through = Math.min(h, Math.round((whole * graph.highlighted[b]) / count));
      if (h > through) add(DIM, x0, bottom - h, w, h - through);
      if (through > 0) add(style.palette[highlight % style.palette.length], x0, bottom - through, w, through);
      continue;
    }
    const top = graph.top[b];
    add(top >= 0 ? style.palette[top % style.palette.length] : style.plain, x0, bottom - h, w, h);
  }
  for (const [colour, rects] of byColour) {
    // The rest of a highlighted graph is the theme's foreground, faint, and what the transforms drop fainter still;
    // every other colour nearly opaque.
    const faint = colour === DIM || colour === FILTERED;
    ctx.globalAlpha = colour === FILTERED ? 0.18 : colour === DIM ? 0.45 : graph.highlighted ? 1 : 0.85;
    ctx.fillStyle = faint ? style.dim : colour;
    ctx.beginPath();
    for (let r = 0; r < rects.length; r += 4) ctx.rect(rects[r], rects[r + 1], rects[r + 2], rects[r + 3]);
    ctx.fill();
  }
  ctx.globalAlpha = 1;
}
