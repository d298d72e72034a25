// Each thread lane's state band (as Perfetto draws a thread's state track): the intervals of the host's thread states
// (shared/thread-states.ts) of the lane's thread, sorted by start, drawn as a strip under its records and described
// by a tooltip. Built with the lanes (layout.ts), drawn by drawLanes, hit by the timeline's pointer.

import type { ThreadStateTable } from '../shared/thread-states';
import { StateFlag, ThreadState, THREAD_STATE_COUNT, THREAD_STATE_NAMES, threadStateLabel } from '../shared/thread-states';
import type { Lane } from './lanes';
import { formatDuration } from './time-format';

/** Height of the band under a thread lane's records, CSS pixels. */
export const STATE_BAND_HEIGHT = 7;

/** One lane's intervals sorted by start, with the running maximum of their ends (for bisection), and where each came from. */
export interface LaneStates {
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly prefixMaxEnd: Float64Array;
  readonly state: Uint8Array;
  /** Index into the store's tables, and the interval there. */
  readonly table: Uint16Array;
  readonly index: Uint32Array;
}

/**
 * The intervals of every expanded thread lane (key `thread:TID`) from the tables `include` admits (by index: another
 * capture's states may cover the same threads and time); undefined for lanes without any.
 */
export function laneStatesOf(
  tables: readonly ThreadStateTable[],
  lanes: readonly Lane[],
  include: (table: number) => boolean = () => true,
): (LaneStates | undefined)[] {
  const out: (LaneStates | undefined)[] = lanes.map(() => undefined);
  if (tables.length === 0) return out;
  const laneOfTid = new Map<number, number>();
  lanes.forEach((lane, i) => {
    if (lane.kind === 'group' && !lane.collapsed && lane.key.startsWith('thread:')) laneOfTid.set(Number(lane.key.slice(7)), i);
  });
  const perLane = new Map<number, number[]>();
  tables.forEach((table, t) => {
    if (!include(t)) return;
    for (let i = 0; i < table.count; i++) {
      const li = laneOfTid.get(table.tid[i]);
      if (li === undefined || table.end[i] <= table.start[i]) continue;
      let list = perLane.get(li);
      if (!list) {
        list = [];
        perLane.set(li, list);
      }
      list.push(t, i);
    }
  });
  for (const [li, pairs] of perLane) {
    const n = pairs.length / 2;
    const order = Array.from({ length: n }, (_, k) => k).sort(
      (a, b) => tables[pairs[2 * a]].start[pairs[2 * a + 1]] - tables[pairs[2 * b]].start[pairs[2 * b + 1]],
    );
    const ls: LaneStates = {
      start: new Float64Array(n),
      end: new Float64Array(n),
      prefixMaxEnd: new Float64Array(n),
      state: new Uint8Array(n),
      table: new Uint16Array(n),
      index: new Uint32Array(n),
    };
    let maxEnd = -Infinity;
    order.forEach((k, j) => {
      const table = tables[pairs[2 * k]];
      const i = pairs[2 * k + 1];
      ls.start[j] = table.start[i];
      ls.end[j] = table.end[i];
      ls.state[j] = table.state[i];
      ls.table[j] = pairs[2 * k];
      ls.index[j] = i;
      maxEnd = Math.max(maxEnd, table.end[i]);
      ls.prefixMaxEnd[j] = maxEnd;
    });
    out[li] = ls;
  }
  return out;
}

/** First position whose prefixMaxEnd reaches t (every interval before it ends before t). */
function firstEndingAtOrAfter(states: LaneStates, t: number): number {
  let lo = 0,
    hi = states.start.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (states.prefixMaxEnd[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Position of the interval at time t (within `radius` ns, the nearest), or -1. */
export function stateAt(states: LaneStates, t: number, radius: number): number {
  let best = -1;
  let bestDistance = Infinity;
  for (let i = firstEndingAtOrAfter(states, t - radius); i < states.start.length && states.start[i] <= t + radius; i++) {
    const distance = t < states.start[i] ? states.start[i] - t : t > states.end[i] ? t - states.end[i] : 0;
    if (distance < bestDistance) {
      best = i;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The band of one lane between t0 and t1 on a canvas in device pixels (`y`, `height`: the band's). Intervals narrower
 * than a pixel in a pixel already painted are skipped; a start or end that was not recorded is drawn paler.
 */
export function drawStateBand(
  ctx: CanvasRenderingContext2D,
  states: LaneStates,
  tables: readonly ThreadStateTable[],
  t0: number,
  t1: number,
  pxPerNs: number,
  y: number,
  height: number,
  colors: readonly string[],
): void {
  const W = ctx.canvas.width;
  let lastX1 = -1;
  for (let i = firstEndingAtOrAfter(states, t0); i < states.start.length && states.start[i] <= t1; i++) {
    if (states.end[i] < t0) continue;
    const x0 = Math.max(0, Math.floor((states.start[i] - t0) * pxPerNs));
    const x1 = Math.min(W, Math.max(x0 + 1, Math.ceil((states.end[i] - t0) * pxPerNs)));
    if (x1 <= lastX1 && x1 - x0 <= 1) continue;
    const flags = tables[states.table[i]].flags[states.index[i]];
    ctx.globalAlpha = flags === 0 ? 1 : 0.45;
    ctx.fillStyle = colors[states.state[i]] ?? colors[0];
    ctx.fillRect(x0, y, x1 - x0, height);
    lastX1 = x1;
  }
  ctx.globalAlpha = 1;
}

/** The tooltip of interval `i` of a lane: state and duration, CPU, who ran next, and what was not recorded. */
export function describeState(states: LaneStates, i: number, tables: readonly ThreadStateTable[]): string[] {
  const table = tables[states.table[i]];
  const k = states.index[i];
  const code = table.state[k];
  const flags = table.flags[k];
  const running = code === ThreadState.RUNNING;
  const uncertain = (flags & (StateFlag.START_UNKNOWN | StateFlag.END_UNKNOWN)) !== 0;
  const lines = [
    `${threadStateLabel(code)} · ${uncertain ? 'at least ' : ''}${formatDuration(table.end[k] - table.start[k])}`,
    running ? `on cpu ${table.cpu[k]}` : `switched out of cpu ${table.cpu[k]}`,
  ];
  if (table.nextTid[k] >= 0) {
    const comm = table.nextComm[k] >= 0 ? table.comms[table.nextComm[k]] : '';
    lines.push(`${running ? 'then' : 'and'} cpu ${table.cpu[k]} ran ${comm || '?'} ${table.nextTid[k]}`);
  }
  if (flags & StateFlag.START_UNKNOWN) lines.push('start not recorded (before the capture, or its switch-in unseen)');
  if (flags & StateFlag.END_UNKNOWN) lines.push('end not recorded (past the capture, or its switch-in unseen)');
  return lines;
}

/** The legend's state entries: the states present in `tables`, in code order, with their CSS colour. */
export function stateLegendEntries(tables: readonly ThreadStateTable[]): { readonly name: string; readonly color: string }[] {
  const present = new Uint8Array(THREAD_STATE_COUNT);
  for (const table of tables) for (let i = 0; i < table.count; i++) present[table.state[i]] = 1;
  const out: { name: string; color: string }[] = [];
  for (let code = 0; code < THREAD_STATE_COUNT; code++) {
    if (present[code]) out.push({ name: threadStateLabel(code), color: `var(--rs-state-${code})` });
  }
  return out;
}

/** The band colours by state code, from the --rs-state-N custom properties. */
export function readStateColors(style: CSSStyleDeclaration, fallback: string): string[] {
  return THREAD_STATE_NAMES.map((_, code) => style.getPropertyValue(`--rs-state-${code}`).trim() || fallback);
}
