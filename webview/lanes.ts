// Lane grouping: which lane each record belongs to (by CPU, by thread, or by event), plus one
// extra lane per hardware watchpoint/breakpoint event whatever the grouping, and one value lane per logpoint (its hits
// with the values they recorded, value-lane.ts) in every grouping. Each lane holds its
// row ids sorted by time so the renderer can cull and hit-test by bisection.

import type { EventKind } from '../shared/protocol';
import type { LaneGrouping } from './view-state';
import { isLogpointEvent } from './value-lane';

export interface LaneSource {
  readonly length: number;
  readonly time: Float64Array;
  readonly event: Uint16Array;
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly events: readonly { readonly name: string; readonly kind: EventKind }[];
  /** True when time is non-decreasing by row (NaN rows aside): rows in row order are then already sorted. */
  readonly timeSorted?: boolean;
  /** True when no row's time is NaN: every row can be placed, so the lanes need not read the time column to group. */
  readonly allTimed?: boolean;
  /**
   * The grouping column (tid or cpu) as consecutive parts covering rows [0, length), when the source can give it
   * without building the whole column first (the store's batches); absent: the column itself.
   */
  partsOf?(name: 'tid' | 'cpu'): readonly { readonly base: number; readonly values: Int32Array }[];
  /** The process of a row: read once per thread lane, so a source may answer it without a whole column. */
  pidOf(row: number): number;
  commOf(row: number): string;
  /** A process's own comm (its main thread's), whatever rows a filter leaves: process headers are named by it. */
  processCommOf?(pid: number): string | undefined;
}

export interface Lane {
  /**
   * Stable key (for collapse state): `cpu:3`, `process:1234`, `thread:1234`, `event:sched:sched_switch`, `watch:...`,
   * `values:log:loop.c:42`.
   */
  readonly key: string;
  readonly label: string;
  /**
   * group: the records of one CPU, thread or event; watch: a breakpoint's hits (also in a group lane unless grouped by
   * event); process: the header of a process's thread lanes, holding all their rows (a summary; collapsing it hides them).
   */
  readonly kind: 'group' | 'watch' | 'process' | 'values';
  readonly rows: Uint32Array;
  /** Grouped by thread: the process of the lane (its header's and its threads'). */
  readonly pid?: number;
  /** The label's tooltip, when it says more than the label. */
  readonly title?: string;
  /** How many characters at the end of the label tell it apart from its neighbours (a pid, a tid, an event's name): kept when it is cut. */
  readonly keep?: number;
  collapsed: boolean;
}

let identityCache = new Uint32Array(0);

/**
 * 0..n-1 as a view of one array the page keeps and grows (the new part filled once): the rows of a
 * lane that holds every row, rebuilt at every new batch or regrouping, and what the row-indexed
 * bisection helpers search a plain sorted array with. Never written through: whoever must reorder
 * such rows copies them first.
 */
export function identityRows(n: number): Uint32Array {
  if (identityCache.length < n) {
    const grown = new Uint32Array(Math.max(n, identityCache.length * 2));
    grown.set(identityCache);
    for (let i = identityCache.length; i < grown.length; i++) grown[i] = i;
    identityCache = grown;
  }
  return identityCache.subarray(0, n);
}

/** The first index in [from, to) of `values` whose value is not `value` (to: none). */
function runEnd(values: Int32Array | Uint16Array, from: number, to: number, value: number): number {
  let i = from;
  while (i < to && values[i] === value) i++;
  return i;
}

/** Slots of buildLanes' cache of recent groups by value (a power of two). */
const RECENT_GROUPS = 64;

/** Sort row ids by time, cheaply when they already are (the common case: rows arrive oldest first). */
export function sortRowsByTime(time: Float64Array, rows: Uint32Array): Uint32Array {
  for (let i = 1; i < rows.length; i++) {
    if (time[rows[i]] < time[rows[i - 1]]) return rows.sort((a, b) => time[a] - time[b] || a - b);
  }
  return rows;
}

interface Group {
  key: string;
  label: string;
  order: number;
  /** The extra lane an event's rows also go to: a breakpoint's hits (watch) or a logpoint's values; null: a group. */
  extra: 'watch' | 'values' | null;
  count: number;
  rows?: Uint32Array;
  fill: number;
  pid?: number;
  keep?: number;
}

/**
 * Group rows into lanes. `include(row)` is the active filter (null: every row); rows without a
 * time are left out (they cannot be placed). Lanes are ordered: watchpoints first, then by CPU
 * number / pid,tid / event index.
 *
 * One typed pass over the columns: the group of a row is found from a number (cpu, tid or event
 * index) through the previous row's answer or a numeric map, so the per-row cost is a few array
 * reads; keys and labels are built once per group, not per row.
 */
export function buildLanes(
  src: LaneSource,
  grouping: LaneGrouping,
  include: ((row: number) => boolean) | null,
  collapsed: ReadonlySet<string>,
  ranges?: readonly (readonly [number, number])[],
): Lane[] {
  const built = buildGroupLanes(src, grouping, include, collapsed, ranges);
  return grouping === 'thread' ? withProcessHeaders(built.lanes, src.time, collapsed, built.headerRows, src.processCommOf?.bind(src)) : built.lanes;
}

/** buildLanes' lanes before process headers are put over them, and (grouped by thread, rows in time order) each process's rows. */
export interface GroupLanes {
  readonly lanes: Lane[];
  readonly headerRows?: ReadonlyMap<number, Uint32Array>;
}

/** buildLanes without its process headers (see there). */
export function buildGroupLanes(
  src: LaneSource,
  grouping: LaneGrouping,
  include: ((row: number) => boolean) | null,
  collapsed: ReadonlySet<string>,
  ranges?: readonly (readonly [number, number])[],
): GroupLanes {
  const n = src.length;
  // Only the rows in `ranges` (one capture's) are placed; without them, every row.
  const scan = ranges ?? [[0, n] as const];
  const partial = ranges !== undefined && !(ranges.length === 1 && ranges[0][0] === 0 && ranges[0][1] >= n);
  const groups: Group[] = [];
  const byKey = new Map<string, number>();
  const intern = (key: string, label: string, order: number, extra: Group['extra'] = null): number => {
    let g = byKey.get(key);
    if (g === undefined) {
      g = groups.length;
      groups.push({ key, label, order, extra, count: 0, fill: 0 });
      byKey.set(key, g);
    }
    return g;
  };
  const eventCount = src.events.length;
  // Per event: its extra lane (-1: none, or not made yet): a breakpoint's watch lane when the grouping is not by event,
  // a logpoint's value lane in every grouping. extraOfEvent says which (0: none).
  const watchLaneOfEvent = new Int32Array(eventCount).fill(-1);
  const extraOfEvent = new Uint8Array(eventCount);
  let anyWatch = false;
  for (let e = 0; e < eventCount; e++) {
    if (src.events[e].kind === 'breakpoint' && grouping !== 'event') extraOfEvent[e] = 1;
    else if (isLogpointEvent(src.events[e].name)) extraOfEvent[e] = 2;
    if (extraOfEvent[e] !== 0) anyWatch = true;
  }
  const groupByNumber = new Map<number, number>();
  // The last group found for each value's low bits, in front of the map: a multi-threaded capture's
  // rows change thread nearly every row, and a map lookup per row made its lanes take 160-330 ms for
  // a million rows of four threads.
  const recentValue = new Float64Array(RECENT_GROUPS).fill(NaN);
  const recentGroup = new Int32Array(RECENT_GROUPS);
  const groupOfNumber = (value: number, row: number): number => {
    const slot = value & (RECENT_GROUPS - 1);
    if (recentValue[slot] === value) return recentGroup[slot];
    let g = groupByNumber.get(value);
    if (g !== undefined) {
      recentValue[slot] = value;
      recentGroup[slot] = g;
      return g;
    }
    switch (grouping) {
      case 'cpu':
        g = intern(`cpu:${value}`, value < 0 ? 'CPU ?' : `CPU ${value}`, value);
        break;
      case 'thread': {
        const comm = src.commOf(row);
        const pid = src.pidOf(row);
        g = intern(`thread:${value}`, threadLabel(comm, value), pid * 4294967296 + value);
        groups[g].pid = pid;
        groups[g].keep = String(value).length;
        break;
      }
      case 'event': {
        const ev = src.events[value];
        const isBreakpoint = ev?.kind === 'breakpoint';
        const name = ev?.name ?? `event ${value}`;
        g = intern(
          isBreakpoint ? `watch:${name}` : `event:${name}`,
          isBreakpoint ? `◆ ${name}` : name,
          isBreakpoint ? -1e18 + value : value,
          isBreakpoint ? 'watch' : null,
        );
        groups[g].keep = name.length - name.lastIndexOf(':') - 1; // sys_enter_read, not syscalls:
        break;
      }
    }
    groupByNumber.set(value, g);
    recentValue[slot] = value;
    recentGroup[slot] = g;
    return g;
  };
  // The general path reads the grouping column by row; the path that places every row reads it in parts.
  const columnOf = (): Int32Array | Uint16Array => (grouping === 'cpu' ? src.cpu : grouping === 'thread' ? src.tid : src.event);
  const partsOf = (): readonly { readonly base: number; readonly values: Int32Array | Uint16Array }[] =>
    grouping === 'event' ? [{ base: 0, values: src.event }] : (src.partsOf?.(grouping === 'cpu' ? 'cpu' : 'tid') ?? [{ base: 0, values: columnOf() }]);
  const time = src.time;
  const event = src.event;
  let counts = new Int32Array(64);
  const countSlot = (g: number): void => {
    if (g >= counts.length) {
      const grown = new Int32Array(Math.max(g + 1, counts.length * 2));
      grown.set(counts);
      counts = grown;
    }
  };

  // Pass 1: the size of every group, and which group each row is in. Rows of one group come in runs (one thread's or
  // CPU's records are mostly consecutive), so the hot path is a compare; counts are added per run, not per row. When
  // every row is placed (no filter, every row timed) the runs themselves are kept (first row and group of each, in
  // growable typed arrays), not a group per row: pass 2 then writes each run's rows as consecutive numbers, and a
  // capture of many lanes costs its runs, not a table of 4 bytes a row written and read again (a million rows over 54
  // thread lanes took 100-300 ms that way). The general path (a filter, rows without a time) keeps a group per row
  // (`groupOf`, -1: left out), allocated only when a second group or a left-out row shows up, so a single-lane
  // capture stores nothing per row; rows before that point are all in group 0 (the first one interned), which is what
  // a fresh Int32Array holds. Rows outside the ranges are left out from the start (the table is filled with -1).
  let groupOf: Int32Array | null = null;
  let runStarts = new Uint32Array(256);
  let runGroups = new Int32Array(256);
  let runCount = 0;
  let useRuns = include === null && src.allTimed === true;
  if (!useRuns && partial) groupOf = new Int32Array(n).fill(-1);
  let firstGroup = -1;
  let lastValue = NaN;
  let lastGroup = -1;
  let run = 0;
  let parts: readonly { readonly base: number; readonly values: Int32Array | Uint16Array }[] | undefined;
  let column: Int32Array | Uint16Array | undefined;
  for (const [from, to] of scan) {
    const end = Math.min(to, n);
    if (useRuns) {
      // Every row is placed: only the grouping column is read (the first paint of a big snapshot runs this loop cold,
      // so it is kept to a read and a compare). A range starts a run of its own (rows between ranges are left out).
      let runStart = from;
      lastValue = NaN;
      for (const { base, values } of (parts ??= partsOf())) {
        const last = Math.min(end, base + values.length);
        for (let row = Math.max(from, base); row < last; row++) {
          // The rest of the run in a function of its own: its loop is optimised soon after it starts, where the loop of
          // this long function waited for an on-stack replacement that took a first paint's tens of milliseconds to come.
          row = base + runEnd(values, row - base, last - base, lastValue);
          if (row >= last) break;
          const value = values[row - base];
          if (lastGroup >= 0 && row > runStart) counts[lastGroup] += row - runStart;
          runStart = row;
          lastValue = value;
          const slot = value & (RECENT_GROUPS - 1); // the cache's hit here, without a call a row
          lastGroup = recentValue[slot] === value ? recentGroup[slot] : groupOfNumber(value, row);
          countSlot(lastGroup);
          if (firstGroup < 0) firstGroup = lastGroup;
          if (runCount === runStarts.length) [runStarts, runGroups] = doubledRuns(runStarts, runGroups);
          runStarts[runCount] = row;
          runGroups[runCount++] = lastGroup;
        }
      }
      if (lastGroup >= 0 && end > runStart) counts[lastGroup] += end - runStart;
      // The run ends where the range does: a left-out stretch up to the next range's first row.
      if (runCount === runStarts.length) [runStarts, runGroups] = doubledRuns(runStarts, runGroups);
      runStarts[runCount] = end;
      runGroups[runCount++] = -1;
      continue;
    }
    column ??= columnOf();
    for (let row = from; row < end; row++) {
      const t = time[row];
      if (t !== t || (include !== null && !include(row))) {
        if (groupOf === null) groupOf = new Int32Array(n);
        groupOf[row] = -1;
        continue;
      }
      const value = column[row];
      if (value !== lastValue) {
        if (lastGroup >= 0) counts[lastGroup] += run;
        run = 0;
        lastValue = value;
        const slot = value & (RECENT_GROUPS - 1);
        lastGroup = recentValue[slot] === value ? recentGroup[slot] : groupOfNumber(value, row);
        countSlot(lastGroup);
        if (firstGroup < 0) firstGroup = lastGroup;
        else if (groupOf === null && lastGroup !== firstGroup) groupOf = new Int32Array(n);
      }
      if (groupOf !== null) groupOf[row] = lastGroup;
      run++;
    }
    if (lastGroup >= 0) counts[lastGroup] += run;
    run = 0;
  }
  // Runs of one group covering rows 0..n-1 are the single-lane case: no run list is needed.
  if (useRuns) {
    let singleGroup = firstGroup >= 0 && !partial;
    for (let r = 0; singleGroup && r < runCount; r++) if (runGroups[r] !== firstGroup && runGroups[r] !== -1) singleGroup = false;
    if (singleGroup) useRuns = false;
  }
  // groupOf === null && !useRuns: every row 0..n-1 is in firstGroup.

  // Watch and value lanes: a breakpoint's or a logpoint's rows also go to a lane of its own (only when such events exist).
  let watchRows = 0;
  if (anyWatch) {
    for (const [from, to] of useRuns ? scan : [[0, n] as const]) {
      for (let row = from; row < Math.min(to, n); row++) {
        if (groupOf !== null && groupOf[row] < 0) continue;
        const e = event[row];
        if (e < eventCount && extraOfEvent[e] !== 0) {
          let w = watchLaneOfEvent[e];
          if (w < 0) {
            const name = src.events[e].name;
            w = watchLaneOfEvent[e] =
              extraOfEvent[e] === 1 ? intern(`watch:${name}`, `◆ ${name}`, -1e18 + e, 'watch') : intern(`values:${name}`, `≈ ${name}`, -5e17 + e, 'values');
            countSlot(w);
          }
          counts[w]++;
          watchRows++;
        }
      }
    }
  }

  // Pass 2: each group's rows, in row order.
  // Every row in one group (no table was needed): its rows are 0..n-1, shared with the page's identity rows.
  const onlyGroup = groupOf === null && !useRuns && firstGroup >= 0 ? firstGroup : -1;
  for (let g = 0; g < groups.length; g++) {
    groups[g].count = counts[g];
    groups[g].rows = g === onlyGroup ? identityRows(n) : new Uint32Array(groups[g].count);
  }
  const rowsOf = groups.map((g) => g.rows!);
  const sharedRows = onlyGroup >= 0 ? rowsOf[onlyGroup] : null;
  const fill = new Int32Array(groups.length);
  // Grouped by thread over rows in time order: each process header's rows (its threads' rows, in row
  // order, which is then time order) are filled in this pass too, not merged from its threads' lanes
  // afterwards (a million rows of four threads took 50 ms to merge).
  const headerRows = grouping === 'thread' && src.timeSorted ? new Map<number, Uint32Array>() : null;
  const processOf = new Int32Array(groups.length).fill(-1);
  const processRows: Uint32Array[] = [];
  if (headerRows) {
    const slotOfPid = new Map<number, number>();
    const sizes: number[] = [];
    const threadsOf: number[][] = [];
    groups.forEach((group, g) => {
      if (group.pid === undefined) return;
      let slot = slotOfPid.get(group.pid);
      if (slot === undefined) {
        slot = sizes.length;
        slotOfPid.set(group.pid, slot);
        sizes.push(0);
        threadsOf.push([]);
      }
      processOf[g] = slot;
      sizes[slot] += counts[g];
      threadsOf[slot].push(g);
    });
    for (const [pid, slot] of slotOfPid) {
      // A process of one thread shows that thread's rows: the same array, filled once.
      if (threadsOf[slot].length === 1) {
        const only = threadsOf[slot][0];
        processOf[only] = -1;
        processRows[slot] = rowsOf[only];
      } else {
        processRows[slot] = new Uint32Array(sizes[slot]);
      }
      headerRows.set(pid, processRows[slot]);
    }
  }
  const processFill = new Int32Array(processRows.length);
  if (useRuns) {
    // Each run's rows are consecutive numbers, written into its lane (and its process header): a long run is a block
    // copy from the page's 0..n-1 (identityRows, made once), a short one a loop.
    const identity = identityRows(n);
    for (let r = 0; r < runCount; r++) {
      const g = runGroups[r];
      if (g < 0) continue;
      const first = runStarts[r];
      const last = r + 1 < runCount ? runStarts[r + 1] : n;
      const rows = rowsOf[g];
      const p = processOf[g];
      const header = p >= 0 ? processRows[p] : null;
      if (last - first > 32) {
        const block = identity.subarray(first, last);
        rows.set(block, fill[g]);
        if (header) header.set(block, processFill[p]);
      } else {
        let at = fill[g];
        for (let row = first; row < last; row++) rows[at++] = row;
        if (header) {
          let h = processFill[p];
          for (let row = first; row < last; row++) header[h++] = row;
        }
      }
      fill[g] += last - first;
      if (header) processFill[p] += last - first;
    }
  } else if (groupOf !== null) {
    for (let row = 0; row < n; row++) {
      const g = groupOf[row];
      if (g < 0) continue;
      rowsOf[g][fill[g]++] = row;
      const p = processOf[g];
      if (p >= 0) processRows[p][processFill[p]++] = row;
    }
  }
  if (watchRows > 0) {
    for (const [from, to] of useRuns ? scan : [[0, n] as const]) {
      for (let row = from; row < Math.min(to, n); row++) {
        if (groupOf !== null && groupOf[row] < 0) continue;
        const e = event[row];
        const w = e < eventCount ? watchLaneOfEvent[e] : -1;
        if (w >= 0) rowsOf[w][fill[w]++] = row;
      }
    }
  }
  const lanes: Lane[] = groups
    .sort((a, b) => a.order - b.order || a.key.localeCompare(b.key))
    .map((g) => ({
      key: g.key,
      label: g.label,
      kind: g.extra ?? ('group' as const),
      rows: src.timeSorted ? g.rows! : sortRowsByTime(src.time, g.rows === sharedRows ? g.rows.slice() : g.rows!),
      ...(g.pid !== undefined ? { pid: g.pid } : {}),
      ...(g.keep !== undefined ? { keep: g.keep } : {}),
      collapsed: collapsed.has(g.key),
    }));
  return headerRows ? { lanes, headerRows } : { lanes };
}

/**
 * A live capture's lanes extended by what each append brings, for the cost of the appended rows: each lane's rows sit
 * at the front of a buffer of its own with room to grow (a full build's rows are copied into one the first time), so
 * the rows of an append are written after them and the lane is a longer view of the same buffer. Rows in time order,
 * every row placed, no filter: then the lanes of rows [0, b) are those of [0, a) each followed by those of [a, b), and
 * the result equals buildLanes' over the whole range.
 */
export class GrowingLanes {
  private groups: Lane[] = [];
  private headers = new Map<number, Uint32Array>();
  /** Per lane key (and `process:<pid>` for a header's rows): the buffer its rows are the front of. */
  private readonly buffers = new Map<string, Uint32Array>();

  /** Start again from a full build (buildGroupLanes of every row placed, rows in time order). */
  reset(built: GroupLanes): void {
    this.groups = built.lanes;
    this.headers = new Map(built.headerRows ?? []);
    this.buffers.clear();
  }

  /**
   * The lanes once `added` (buildGroupLanes of the appended rows alone, same grouping and collapsed set) is appended;
   * null when it brings a lane not held yet (the lanes and their order change: build them all again).
   */
  extend(added: GroupLanes, src: LaneSource, grouping: LaneGrouping, collapsed: ReadonlySet<string>): Lane[] | null {
    const index = new Map(this.groups.map((lane, i) => [lane.key, i]));
    if (added.lanes.some((lane) => !index.has(lane.key))) return null;
    if (grouping === 'thread' && added.headerRows === undefined) return null;
    const groups = [...this.groups];
    for (const lane of added.lanes) {
      const i = index.get(lane.key)!;
      const rows = this.append(lane.key, groups[i].rows, lane.rows);
      // A thread lane is named by its thread's comm as the store knows it now (an append may have brought it).
      const label = lane.key.startsWith('thread:') ? threadLabel(src.commOf(rows[0]), lane.key.slice('thread:'.length)) : groups[i].label;
      groups[i] = { ...groups[i], rows, label };
    }
    this.groups = groups;
    for (const [pid, rows] of added.headerRows ?? []) this.headers.set(pid, this.append(`process:${pid}`, this.headers.get(pid) ?? new Uint32Array(0), rows));
    return grouping === 'thread' ? withProcessHeaders(groups, src.time, collapsed, this.headers, src.processCommOf?.bind(src)) : groups;
  }

  /** `rows` followed by `more`, in the buffer of `key` (grown, or made from `rows`, when it has no room after them). */
  private append(key: string, rows: Uint32Array, more: Uint32Array): Uint32Array {
    if (more.length === 0) return rows;
    const length = rows.length + more.length;
    let buffer = this.buffers.get(key);
    const inPlace = buffer !== undefined && rows.buffer === buffer.buffer && rows.byteOffset === buffer.byteOffset && buffer.length >= length;
    if (!inPlace) {
      buffer = new Uint32Array(Math.max(1024, Math.ceil(length * 1.5)));
      buffer.set(rows);
      this.buffers.set(key, buffer);
    }
    buffer!.set(more, rows.length);
    return buffer!.subarray(0, length);
  }
}

/** The run lists (first row, group of each run) at twice their length, every entry kept: they were full. */
function doubledRuns(starts: Uint32Array, groups: Int32Array): [Uint32Array<ArrayBuffer>, Int32Array<ArrayBuffer>] {
  const moreStarts = new Uint32Array(starts.length * 2);
  moreStarts.set(starts);
  const moreGroups = new Int32Array(groups.length * 2);
  moreGroups.set(groups);
  return [moreStarts, moreGroups];
}

/** A thread lane's label: its comm ('?' unknown) and tid. */
function threadLabel(comm: string, tid: number | string): string {
  return `${comm === '' ? '?' : comm} ${tid}`;
}

/** Row lists each sorted by time merged into one (pairwise, so n·log k steps and no comparator calls); ties by row. */
export function mergeByTime(time: Float64Array, lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 0) return new Uint32Array(0);
  let level = [...lists];
  while (level.length > 1) {
    const next: Uint32Array[] = [];
    for (let k = 0; k + 1 < level.length; k += 2) {
      const a = level[k];
      const b = level[k + 1];
      const out = new Uint32Array(a.length + b.length);
      let i = 0,
        j = 0,
        o = 0;
      while (i < a.length && j < b.length) {
        const ta = time[a[i]];
        const tb = time[b[j]];
        out[o++] = ta < tb || (ta === tb && a[i] < b[j]) ? a[i++] : b[j++];
      }
      while (i < a.length) out[o++] = a[i++];
      while (j < b.length) out[o++] = b[j++];
      next.push(out);
    }
    if (level.length % 2 === 1) next.push(level[level.length - 1]);
    level = next;
  }
  return level[0];
}

/**
 * Thread lanes (ordered by pid, then tid) under one header lane per process of several threads, as Perfetto groups
 * tracks: the header is named by the process's comm (its main thread's, else its first thread's) and pid, counts its
 * threads (title), holds all their rows in time order (drawn as a density summary). A collapsed header hides its thread
 * lanes. A process of one thread is its thread's lane alone.
 */
export function withProcessHeaders(
  lanes: readonly Lane[],
  time: Float64Array,
  collapsed: ReadonlySet<string>,
  headerRows?: ReadonlyMap<number, Uint32Array>,
  processComm?: (pid: number) => string | undefined,
): Lane[] {
  const out: Lane[] = [];
  for (let i = 0; i < lanes.length;) {
    const pid = lanes[i].pid;
    if (pid === undefined) {
      out.push(lanes[i++]);
      continue;
    }
    let end = i;
    while (end < lanes.length && lanes[end].pid === pid) end++;
    const threads = lanes.slice(i, end);
    const main = threads.find((t) => t.key === `thread:${pid}`) ?? threads[0];
    // The process's own name when the source knows it: a filter that hides the main thread must not rename the header.
    const comm = processComm?.(pid) || main.label.slice(0, main.label.lastIndexOf(' '));
    if (threads.length === 1) {
      // A process of one thread (lane) is shown once, as its thread's lane: a header over it would hold the same rows
      // under the same name. When that thread is not the process's main one, its tooltip names the process.
      const only = threads[0];
      const process = `${comm} ${pid}`;
      out.push(only.key === `thread:${pid}` ? only : { ...only, title: `${only.title ?? only.label}, a thread of ${process}` });
      i = end;
      continue;
    }
    const rows =
      headerRows?.get(pid) ??
      mergeByTime(
        time,
        threads.map((t) => t.rows),
      );
    const key = `process:${pid}`;
    const isCollapsed = collapsed.has(key);
    const label = `${comm} ${pid}`;
    out.push({
      key,
      label,
      title: `${label}: ${threads.length} thread${threads.length === 1 ? '' : 's'}`,
      kind: 'process',
      pid,
      keep: String(pid).length,
      rows,
      collapsed: isCollapsed,
    });
    if (!isCollapsed) out.push(...threads);
    i = end;
  }
  return out;
}
