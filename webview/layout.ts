// What a frame draws, built before it is drawn: the lanes (rows per lane, sorted by time), where each lane
// sits, the paired spans of each lane, and for one frame which lanes are visible and how each is drawn.
// Rebuilt only when its inputs change (store version, grouping, filter, collapsed lanes); drawing never builds.

import type { RecordStore } from './store';
import type { LaneGrouping } from './view-state';
import { buildGroupLanes, GrowingLanes, withProcessHeaders, type Lane, type LaneSource } from './lanes';
import { pairSpans, type Spans } from './spans';
import { visibleRange } from './hit-test';
import { snapshotLossMarks, type LossMark } from './losses';
import { laneStatesOf, STATE_BAND_HEIGHT, type LaneStates } from './state-lane';
import { buildStackChart, maxStackDepth, samplingInterval, STACK_ROW_HEIGHT, type StackChart } from './stack-chart';
import type { StackTable } from '../shared/stacks';

/**
 * The stacks the stack charts draw: the store's table, or its rewrite by the call tree's transforms with each store
 * stack id's rewritten stack (`map`, -1: dropped; null: no transforms). `key` changes whenever either does.
 */

/** How a thread lane with callchains is shown: its stack chart, or ticks under an activity graph. */
export type LaneMode = 'chart' | 'ticks';
export interface StackView {
  readonly table: StackTable;
  readonly map: Int32Array | null;
  readonly key: string;
}

export const LANE_HEIGHT = 22;
/** A logpoint's value lane: room for its step plots and labels (value-lane.ts). */
export const VALUE_LANE_HEIGHT = 44;
export const COLLAPSED_HEIGHT = 8;

/** The spans of one lane sorted by start, with the running maximum of their ends (for bisection). */
export interface LaneSpans {
  start: Float64Array;
  end: Float64Array;
  prefixMaxEnd: Float64Array;
  type: Uint8Array;
}

/** One visible lane of a frame: its position on screen and the rows [first, end) inside the window. */
export interface FrameLane {
  readonly lane: number;
  /** Top in CSS pixels from the top of the plot (after scrolling) and height. */
  readonly top: number;
  readonly height: number;
  readonly first: number;
  readonly end: number;
  /** Too many records for ticks (or collapsed, or a process summary): drawn as per-pixel density. */
  readonly dense: boolean;
  /** Height of the thread state band at the bottom of `height` (0: none). */
  readonly band: number;
  /** Dense lanes: the store event most of the lane's records belong to, whose legend colour the density takes. */
  readonly densityEvent: number;
  /** A thread lane shown as a stack chart: its depth (drawn under an activity graph of LANE_HEIGHT); 0: not one. */
  readonly stackDepth: number;
}

/**
 * The event most of `rows` belong to (the lowest index among equals); -1 for no rows. Counted in
 * an array by event index (the column is 16-bit): a Map per row took 30 ms of a 1M-row lane's
 * first frame in Chromium, about a third of it.
 */
export function mostFrequentEvent(event: Uint16Array, rows: Uint32Array): number {
  let counts = new Int32Array(64);
  for (let i = 0; i < rows.length; i++) {
    const e = event[rows[i]];
    if (e >= counts.length) {
      const grown = new Int32Array(Math.max(e + 1, counts.length * 2));
      grown.set(counts);
      counts = grown;
    }
    counts[e]++;
  }
  let best = -1;
  let bestCount = 0;
  for (let e = 0; e < counts.length; e++) {
    if (counts[e] > bestCount) {
      best = e;
      bestCount = counts[e];
    }
  }
  return best;
}

export class TimelineLayout {
  lanes: Lane[] = [];
  laneTop: number[] = [];
  laneHeight: number[] = [];
  totalHeight = 0;
  laneSpans: (LaneSpans | undefined)[] = [];
  /** Per lane: the losses and overwritten parts drawn on it (losses.ts). */
  laneMarks: (LossMark[] | undefined)[] = [];
  /** Per lane: its thread's states (state-lane.ts), drawn as a band under its records. */
  laneStates: (LaneStates | undefined)[] = [];
  /** Per lane shown as a stack chart (a thread lane with callchains the user did not switch to ticks): its depth; 0: not one. */
  stackDepth: number[] = [];
  /** Per stack chart lane: its boxes, once asked for (stackChart). */
  private stackCharts: (StackChart | undefined)[] = [];
  /** Per lane: whether any of its rows has a callchain (a stack chart can be shown), found when the lanes are built. */
  hasStacks: boolean[] = [];
  /** Per lane: its sampling interval for the activity graph's scale (0: unknown), found the first time it is drawn. */
  private laneInterval: (number | undefined)[] = [];
  /** Per lane: mostFrequentEvent of its rows, found the first time the lane is drawn dense. */
  private laneDensityEvent: (number | undefined)[] = [];
  /** Per complete snapshot (by id): its marks, found once. */
  private readonly marksOfSnapshot = new Map<string, LossMark[]>();
  private builtKey = '';
  private spans: Spans | null = null;
  private spansVersion = -1;
  /** builtKey the per-lane spans were built for. */
  private laneSpansKey = '';
  private idleSpansPending = false;
  /** The lanes as a live capture's appends extend them, the inputs they were built for and the store's last drop then. */
  private readonly growing = new GrowingLanes();
  private growingInputs = '';
  private growingDrop: RecordStore['lastDrop'] = null;
  /** The snapshot the lanes hold (index in the store; -1: every row) and its store row ranges. */
  private shown = -1;
  private shownRanges: [number, number][] | undefined;

  constructor(
    private readonly store: RecordStore,
    /** The stacks the charts draw (the call tree's transforms applied); the store's own by default. */
    private readonly stackView: () => StackView = () => ({ table: store.stackTable(), map: null, key: '' }),
  ) {}

  /** Forget the lanes, so the next update rebuilds them (a lane was collapsed or expanded). */
  invalidate(): void {
    this.builtKey = '';
  }

  /**
   * Lanes (what the first frame needs: rows per lane, sorted by time), rebuilt when an input changed; true when
   * they were. Span pairing is not part of it: see ensureSpans.
   */
  update(
    grouping: LaneGrouping,
    include: ((row: number) => boolean) | null,
    filterVersion: number,
    collapsed: ReadonlySet<string>,
    shown: number,
    modes: ReadonlyMap<string, LaneMode> = new Map(),
  ): boolean {
    const view = this.store.stack.length > 0 ? this.stackView() : null;
    const chosen = [...modes].map(([lane, mode]) => `${lane}=${mode}`).join(',');
    const inputs = `${shown}|${grouping}|${filterVersion}|${[...collapsed].join(',')}|${chosen}|${view?.key ?? ''}`;
    const key = `${this.store.version}|${inputs}`;
    if (key === this.builtKey) return false;
    const previousRanges = this.shownRanges;
    this.shown = shown;
    this.shownRanges = shown >= 0 ? this.store.rangesOf(shown) : undefined;
    const src = this.source();
    // A capture that only grew at its end (a live capture's append, or the next batch of one being streamed; no rows
    // dropped, same inputs): its lanes are extended by the new rows.
    const appended = inputs === this.growingInputs && this.store.lastDrop === this.growingDrop ? appendedRows(previousRanges, this.shownRanges) : null;
    const incremental = appended !== null && include === null && src.timeSorted === true && src.allTimed === true && shown >= 0;
    const previous = new Map(this.lanes.map((lane, i) => [lane.key, i]));
    const extended = incremental ? this.growing.extend(buildGroupLanes(src, grouping, null, collapsed, appended), src, grouping, collapsed) : null;
    if (extended) {
      this.lanes = extended;
    } else {
      const built = buildGroupLanes(src, grouping, include, collapsed, this.shownRanges);
      this.growing.reset(built);
      this.lanes = grouping === 'thread' ? withProcessHeaders(built.lanes, src.time, collapsed, built.headerRows, src.processCommOf?.bind(src)) : built.lanes;
    }
    this.growingInputs = include === null ? inputs : '';
    this.growingDrop = this.store.lastDrop;
    this.laneStates = laneStatesOf(this.store.threadStates, this.lanes, (t) => this.store.threadStatesSnapshot[t] === shown);
    this.laneTop = [];
    this.laneHeight = [];
    const stack = this.store.stack;
    const table = stack.length > 0 ? this.store.stackTable() : null;
    // Extended lanes: a lane had a callchain before, or one of its appended rows has (appended: the rows after `from`).
    const before = this.hasStacks;
    const newRows = (lane: Lane): Uint32Array => {
      const at = extended ? previous.get(lane.key) : undefined;
      if (at === undefined) return lane.rows;
      return lane.rows.subarray(bisectRows(lane.rows, appended![0][0]));
    };
    this.hasStacks = this.lanes.map((lane) => {
      if (table === null || lane.kind !== 'group' || lane.pid === undefined) return false;
      const at = extended ? previous.get(lane.key) : undefined;
      return (at !== undefined && before[at]) || anyStack(stack, newRows(lane));
    });
    // One thread lane with callchains is a stack chart by default, the busiest (as Firefox Profiler opens on its busiest
    // thread; ties go to the first): several deep charts would push every lane after the first out of sight, so the
    // others keep ticks and activity graphs, and each lane's button makes it a chart. A forked child with three samples
    // must not turn the main thread's chart into ticks. It is found from the lanes alone, so lanes a live capture's
    // growth extends choose as lanes built anew do. `modes` holds what the user chose for a lane with that button,
    // which no filter or collapse changes. A chart's depth is its height, found here; its boxes are not needed to draw it.
    let defaultChart = -1;
    for (let i = 0; i < this.lanes.length; i++) {
      if (!this.hasStacks[i] || this.lanes[i].collapsed) continue;
      if (defaultChart < 0 || this.lanes[i].rows.length > this.lanes[defaultChart].rows.length) defaultChart = i;
    }
    const depthBefore = this.stackDepth;
    this.stackDepth = this.lanes.map((lane, i) => {
      const chart = (modes.get(lane.key) ?? (i === defaultChart ? 'chart' : 'ticks')) === 'chart';
      if (!(this.hasStacks[i] && !lane.collapsed && chart && view !== null)) return 0;
      // An extended chart is as deep as it was or as its appended rows are.
      const at = extended ? previous.get(lane.key) : undefined;
      const was = at !== undefined ? (depthBefore[at] ?? 0) : 0;
      return was > 0
        ? Math.max(was, maxStackDepth(newRows(lane), stack, view.table, view.map ?? undefined))
        : maxStackDepth(lane.rows, stack, view.table, view.map ?? undefined);
    });
    this.stackCharts = [];
    this.laneInterval = [];
    let y = 0;
    for (const [i, lane] of this.lanes.entries()) {
      this.laneTop.push(y);
      // A collapsed process header keeps its height: it is the summary of the threads it hides. A stack chart is as
      // tall as its deepest callchain, under its activity graph.
      const records = lane.kind === 'values' ? VALUE_LANE_HEIGHT : LANE_HEIGHT + this.stackDepth[i] * STACK_ROW_HEIGHT;
      const h = lane.collapsed && lane.kind !== 'process' ? COLLAPSED_HEIGHT : records + (this.laneStates[i] ? STATE_BAND_HEIGHT : 0);
      this.laneHeight.push(h);
      y += h + 1;
    }
    this.totalHeight = y;
    this.laneMarks = this.placeMarks(grouping);
    this.laneDensityEvent = [];
    this.laneSpans = [];
    this.laneSpansKey = '';
    this.builtKey = key;
    return true;
  }

  /**
   * Paired spans per lane, only drawn zoomed in: built by the first frame that draws a lane zoomed in, or ahead
   * of it in idle time after a frame (so the first paint of a big snapshot never waits for it).
   */
  ensureSpans(grouping: LaneGrouping, include: ((row: number) => boolean) | null): void {
    if (this.spansVersion !== this.store.version) {
      // The source keeps its tid and cpu getters (a spread would read them): those columns are made whole only when a
      // record can open or close a span, not for a capture of samples (16 MB for a million rows, read for nothing).
      this.spans = pairSpans(Object.assign(this.source(), { kind: this.store.kind, misc: this.store.misc }));
      this.spansVersion = this.store.version;
      this.laneSpansKey = '';
    }
    if (this.laneSpansKey !== this.builtKey) {
      const eventNameOf = (row: number) => this.store.events[this.store.event[row]]?.name;
      // Only the spans that open in the shown capture (another capture's may cover the same time and lanes).
      const ranges = this.shownRanges;
      const inShown = ranges === undefined ? include : (row: number) => ranges.some(([a, b]) => row >= a && row < b) && (include === null || include(row));
      this.laneSpans = this.spans ? laneSpansOf(this.spans, this.lanes, grouping, inShown, eventNameOf) : this.lanes.map(() => undefined);
      this.laneSpansKey = this.builtKey;
    }
  }

  /** True when the current lanes' spans are built (ensureSpans has nothing to do). */
  get spansReady(): boolean {
    return this.spansVersion === this.store.version && this.laneSpansKey === this.builtKey;
  }

  /** After a frame: build the spans in idle time, unless a frame is due (`build` then rebuilds what it will show). */
  ensureSpansWhenIdle(build: () => void): void {
    if (this.idleSpansPending || this.spansReady) return;
    this.idleSpansPending = true;
    const run = () => {
      this.idleSpansPending = false;
      build();
    };
    if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 1000 });
    else setTimeout(run, 50);
  }

  /** The lanes a frame shows: visible in the scrolled viewport, with the rows inside [t0, t1]. */
  frame(t0: number, t1: number, deviceWidth: number, scrollTop: number, viewportHeight: number): FrameLane[] {
    const out: FrameLane[] = [];
    for (let li = 0; li < this.lanes.length; li++) {
      const top = this.laneTop[li] - scrollTop;
      const height = this.laneHeight[li];
      if (top + height < 0) continue;
      if (top > viewportHeight) break;
      const lane = this.lanes[li];
      const [first, end] = visibleRange(this.store.time, lane.rows, t0, t1);
      const stackDepth = this.stackDepth[li] ?? 0;
      // A value lane draws its hits and values however many (value-lane.ts), never as density.
      const dense = lane.kind !== 'values' && (stackDepth > 0 || lane.collapsed || lane.kind === 'process' || end - first > deviceWidth / 3);
      const densityEvent = dense ? (this.laneDensityEvent[li] ??= this.densityEventOf(lane)) : -1;
      out.push({ lane: li, top, height, first, end, dense, band: this.laneStates[li] ? STATE_BAND_HEIGHT : 0, densityEvent, stackDepth });
    }
    return out;
  }

  /**
   * The boxes of stack chart lane `lane` (undefined when it is not one): a pass over its samples, made when first asked
   * for these lanes (tests and tools read them; drawing, hover and click do not).
   */
  stackChart(lane: number): StackChart | undefined {
    if (!(this.stackDepth[lane] > 0)) return undefined;
    const view = this.stackView();
    return (this.stackCharts[lane] ??= buildStackChart(this.lanes[lane].rows, this.store.time, this.store.stack, view.table, view.map ?? undefined));
  }

  /** The sampling interval of a lane's callchain samples (the activity graph's full height), found once per lane. */
  intervalOf(lane: number): number {
    return (this.laneInterval[lane] ??= this.store.stack.length > 0 ? samplingInterval(this.lanes[lane].rows, this.store.time, this.store.stack) : 0);
  }

  /**
   * mostFrequentEvent of a lane's rows. A lane holding every row the lanes place (one thread's capture, a process
   * header over all its threads; rows are distinct, so holding as many rows means holding them all) is answered from
   * the store's rows per event of the shown snapshots, counted as they arrived, instead of a pass over its rows.
   */
  private densityEventOf(lane: Lane): number {
    const snaps = this.shown >= 0 ? this.store.snapshots.slice(this.shown, this.shown + 1) : this.store.snapshots;
    // One event in the shown capture: every lane's records are of it.
    const present = this.store.events.map((_, e) => snaps.some((snap) => (snap.eventRows[e] ?? 0) > 0));
    if (present.filter(Boolean).length === 1 && snaps.every((snap) => snap.untimedRows === 0)) return present.indexOf(true);
    let placed = 0;
    for (const snap of snaps) placed += snap.receivedRows - snap.untimedRows;
    if (lane.rows.length !== placed || snaps.some((snap) => snap.untimedRows > 0)) return mostFrequentEvent(this.store.event, lane.rows);
    let best = -1;
    let bestCount = 0;
    for (let e = 0; e < this.store.events.length; e++) {
      let count = 0;
      for (const snap of snaps) count += snap.eventRows[e] ?? 0;
      if (count > bestCount) {
        best = e;
        bestCount = count;
      }
    }
    return best;
  }

  /** Each snapshot's loss marks on the lane of the record that places them (filtered out or not), by lane key. */
  private placeMarks(grouping: LaneGrouping): (LossMark[] | undefined)[] {
    const s = this.store;
    const out: (LossMark[] | undefined)[] = this.lanes.map(() => undefined);
    const laneOfKey = new Map(this.lanes.map((l, i) => [l.key, i]));
    for (const snap of s.snapshots) {
      if (!s.isComplete(snap) || (this.shown >= 0 && snap.index !== this.shown)) continue;
      let marks = this.marksOfSnapshot.get(snap.id);
      if (!marks) {
        marks = snapshotLossMarks(s, snap.index);
        this.marksOfSnapshot.set(snap.id, marks);
      }
      for (const mark of marks) {
        const r = mark.row;
        const ev = s.events[s.event[r]];
        const keys =
          grouping === 'cpu'
            ? [`cpu:${s.cpu[r]}`]
            : grouping === 'thread'
              ? [`thread:${s.tid[r]}`, `process:${s.pid[r]}`]
              : [ev?.kind === 'breakpoint' ? `watch:${ev.name}` : `event:${ev?.name}`];
        const li = keys.map((k) => laneOfKey.get(k)).find((i) => i !== undefined);
        if (li === undefined) continue;
        (out[li] ??= []).push(mark);
      }
    }
    return out;
  }

  /**
   * The store's columns as the lanes read them: tid and cpu are getters (and parts, for one pass) and pid is read per
   * row, so a column the grouping never reads, or reads once, is not copied in (store.ts).
   */
  private source(): LaneSource {
    const s = this.store;
    return {
      length: s.length,
      time: s.time,
      event: s.event,
      events: s.events,
      timeSorted: s.timeSorted,
      allTimed: s.snapshots.every((snap) => snap.untimedRows === 0),
      get tid() {
        return s.tid;
      },
      get cpu() {
        return s.cpu;
      },
      partsOf: (name: 'tid' | 'cpu') => s.columnParts(name),
      pidOf: (row: number) => s.valueAt('pid', row),
      commOf: (row: number) => s.commOf(row),
      processCommOf: (pid: number) => s.processCommOf(pid),
    };
  }
}

/**
 * The store rows `after` holds beyond `before` when it only grew at its end (the same ranges, the last one longer, or
 * ranges after them): those rows as ranges; null otherwise (or when nothing was added).
 */
function appendedRows(before: readonly [number, number][] | undefined, after: readonly [number, number][] | undefined): [number, number][] | null {
  if (!before || !after || before.length === 0 || after.length < before.length) return null;
  const last = before.length - 1;
  for (let k = 0; k < last; k++) if (after[k][0] !== before[k][0] || after[k][1] !== before[k][1]) return null;
  if (after[last][0] !== before[last][0] || after[last][1] < before[last][1]) return null;
  const added: [number, number][] = [];
  if (after[last][1] > before[last][1]) added.push([before[last][1], after[last][1]]);
  for (let k = before.length; k < after.length; k++) added.push([after[k][0], after[k][1]]);
  return added.length > 0 ? added : null;
}

/** The first index of `rows` (ascending) holding a row ≥ `row`. */
function bisectRows(rows: Uint32Array, row: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid] < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether any of `rows` has a callchain (stack id ≥ 0). */
function anyStack(stack: Int32Array, rows: Uint32Array): boolean {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row < stack.length && stack[row] >= 0) return true;
  }
  return false;
}

/** The spans that open on a shown row, per lane of `lanes`, each sorted by start. */
export function laneSpansOf(
  spans: Spans,
  lanes: readonly Lane[],
  grouping: LaneGrouping,
  include: ((row: number) => boolean) | null,
  eventNameOf: (row: number) => string | undefined,
): (LaneSpans | undefined)[] {
  const out: (LaneSpans | undefined)[] = lanes.map(() => undefined);
  if (spans.count === 0) return out;
  const laneOfKey = new Map(lanes.map((l, i) => [l.key, i]));
  const perLane = new Map<number, number[]>();
  for (let i = 0; i < spans.count; i++) {
    const open = spans.openRow[i];
    if (include !== null && !include(open)) continue;
    let key: string;
    switch (grouping) {
      case 'cpu':
        key = `cpu:${spans.cpu[i]}`;
        break;
      case 'thread':
        key = `thread:${spans.tid[i]}`;
        break;
      case 'event':
        key = `event:${eventNameOf(open)}`;
        break;
    }
    const li = laneOfKey.get(key);
    if (li === undefined) continue;
    let list = perLane.get(li);
    if (!list) {
      list = [];
      perLane.set(li, list);
    }
    list.push(i);
  }
  for (const [li, list] of perLane) {
    list.sort((a, b) => spans.start[a] - spans.start[b]);
    const n = list.length;
    const ls: LaneSpans = { start: new Float64Array(n), end: new Float64Array(n), prefixMaxEnd: new Float64Array(n), type: new Uint8Array(n) };
    let maxEnd = -Infinity;
    list.forEach((s, j) => {
      ls.start[j] = spans.start[s];
      ls.end[j] = spans.end[s];
      ls.type[j] = spans.type[s];
      maxEnd = Math.max(maxEnd, spans.end[s]);
      ls.prefixMaxEnd[j] = maxEnd;
    });
    out[li] = ls;
  }
  return out;
}
