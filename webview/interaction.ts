// Pointing at and moving between records: which record is under a point (bisection over lane tops, then over
// the lane's rows by time), the tooltip that describes it, and the keyboard's record navigation and zoom keys.

import type { RecordStore } from './store';
import type { Lane } from './lanes';
import { bisectLeft, nearestPosition } from './hit-test';
import { formatAddress, type TimeBase } from './time-format';
import { recordTypeName } from '../shared/columns';

const HIT_RADIUS_PX = 5;

/** Where the lanes sit: top and height of each, in CSS pixels from the top of the lane area. */
export interface LanePlaces {
  readonly lanes: readonly Lane[];
  readonly laneTop: readonly number[];
  readonly laneHeight: readonly number[];
}

/** The lane at `y` (lane-area pixels, i.e. plot y plus scroll), by bisection over the lane tops; -1 for none. */
export function laneAtY(places: LanePlaces, y: number): number {
  let lo = 0;
  let hi = places.lanes.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (y < places.laneTop[mid]) hi = mid - 1;
    else if (y > places.laneTop[mid] + places.laneHeight[mid]) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/**
 * The record under a point of the plot (`px`, `py` in plot pixels, `scrollTop` of the lanes), or null: the
 * lane by bisection, then the nearest row of that lane within HIT_RADIUS_PX of `px`.
 */
export function hitTest(
  places: LanePlaces,
  time: Float64Array,
  x: { invert(px: number): number },
  px: number,
  py: number,
  scrollTop: number,
): { lane: number; pos: number } | null {
  const li = laneAtY(places, py + scrollTop);
  if (li < 0) return null;
  const t = x.invert(px);
  const radius = Math.abs(x.invert(px + HIT_RADIUS_PX) - t);
  const pos = nearestPosition(time, places.lanes[li].rows, t, radius);
  return pos < 0 ? null : { lane: li, pos };
}

/** A record in a few lines: event and type, time (in the page's one time base), thread and CPU, instruction pointer and symbol. */
export function describeRow(store: RecordStore, row: number, base: TimeBase): string[] {
  const s = store;
  const ev = s.events[s.event[row]];
  const lines = [
    `${ev?.name ?? 'event ?'} · ${recordTypeName(s.kind[row])}`,
    `time ${base.format(s.time[row])}`,
    `${s.commOf(row) || '?'} pid ${s.pid[row]} tid ${s.tid[row]} · cpu ${s.cpu[row]}`,
  ];
  const ipHi = s.ipHi[row];
  const ipLo = s.ipLo[row];
  const sym = s.symbolOf(row);
  if (ipHi !== 0 || ipLo !== 0 || sym) lines.push(`ip ${formatAddress(ipHi, ipLo)}${sym ? ` ${sym}` : ''}`);
  return lines;
}

/** The hover tooltip: text only (names from the system never become markup), kept inside its host. */
export class Tooltip {
  constructor(private readonly element: HTMLDivElement) {
    element.setAttribute('role', 'tooltip');
    element.hidden = true;
  }

  show(lines: readonly string[], clientX: number, clientY: number): void {
    const tooltip = this.element;
    tooltip.replaceChildren(
      ...lines.map((l) => {
        const d = document.createElement('div');
        d.textContent = l;
        return d;
      }),
    );
    tooltip.hidden = false;
    const host = tooltip.parentElement!.getBoundingClientRect();
    const left = Math.min(clientX - host.left + 14, host.width - tooltip.offsetWidth - 4);
    tooltip.style.left = `${Math.max(0, left)}px`;
    tooltip.style.top = `${clientY - host.top + 14}px`;
  }

  hide(): void {
    // Every zoom step hides it: an attribute written again, even unchanged, costs the next frame a style pass.
    if (!this.element.hidden) this.element.hidden = true;
  }
}

/** What the keyboard drives. */
export interface KeyTarget {
  readonly lanes: readonly Lane[];
  readonly selectedLane: number;
  readonly selectedPos: number;
  readonly time: Float64Array;
  window(): [number, number];
  selectedRow(): number | null;
  select(lane: number, pos: number): void;
  clearSelection(): void;
  zoomBy(factor: number, centerTime?: number): void;
  /** Move the window by a fraction of its width (positive: later). */
  panBy(fraction: number): void;
  /** Escape: drop the brushed range. */
  clearBrush(): void;
}

/** How far A and D pan: a fifth of the window, as Perfetto's WASD moves. */
export const PAN_FRACTION = 0.2;

/**
 * Arrows move between records (left/right in a lane, up/down to the nearest record of the next lane with
 * records), Home/End jump to a lane's first/last record, +/- zoom around the selection, W/S zoom in/out around the
 * middle and A/D pan (as in Perfetto), Escape clears. The first arrow press only selects the first record in view.
 * False when the key is not one of these.
 */
export function handleKey(key: string, target: KeyTarget): boolean {
  let lane = target.selectedLane;
  let pos = target.selectedPos;
  const lanes = target.lanes;
  const rowsOf = (li: number) => lanes[li].rows;
  const time = target.time;
  const firstLaneWithRows = () => lanes.findIndex((l) => l.rows.length > 0);
  const needSelection = (): boolean => {
    if (lane >= 0) return true;
    lane = firstLaneWithRows();
    if (lane < 0) return false;
    const [a] = target.window();
    pos = Math.min(bisectLeft(time, rowsOf(lane), a), rowsOf(lane).length - 1);
    target.select(lane, pos);
    return false;
  };
  switch (key) {
    case 'ArrowRight':
      if (needSelection() && pos + 1 < rowsOf(lane).length) target.select(lane, pos + 1);
      break;
    case 'ArrowLeft':
      if (needSelection() && pos > 0) target.select(lane, pos - 1);
      break;
    case 'ArrowDown':
    case 'ArrowUp': {
      if (!needSelection()) break;
      const t = time[rowsOf(lane)[pos]];
      const step = key === 'ArrowDown' ? 1 : -1;
      for (let li = lane + step; li >= 0 && li < lanes.length; li += step) {
        if (rowsOf(li).length === 0) continue;
        const p = nearestPosition(time, rowsOf(li), t, Infinity);
        target.select(li, p);
        break;
      }
      break;
    }
    case 'Home':
      if (lane < 0) lane = firstLaneWithRows();
      if (lane >= 0) target.select(lane, 0);
      break;
    case 'End':
      if (lane < 0) lane = firstLaneWithRows();
      if (lane >= 0) target.select(lane, rowsOf(lane).length - 1);
      break;
    case '+':
    case '=':
      target.zoomBy(2, target.selectedRow() !== null ? time[target.selectedRow()!] : undefined);
      break;
    case '-':
    case '_':
      target.zoomBy(0.5, target.selectedRow() !== null ? time[target.selectedRow()!] : undefined);
      break;
    case 'w':
    case 'W':
      target.zoomBy(2);
      break;
    case 's':
    case 'S':
      target.zoomBy(0.5);
      break;
    case 'a':
    case 'A':
      target.panBy(-PAN_FRACTION);
      break;
    case 'd':
    case 'D':
      target.panBy(PAN_FRACTION);
      break;
    case 'Escape':
      target.clearSelection();
      target.clearBrush();
      break;
    default:
      return false;
  }
  return true;
}
