// The bottom drawer under the timeline (as Perfetto's details panel): the record details, range summary, call tree,
// coverage and breakpoint sections side by side, so the plot keeps the whole width. It takes the height the lanes leave
// (they take only what they need), at least the height its handle sets by dragging or with the arrow keys, which the
// page remembers (view-state.ts).

import { el } from './dom';

export const DEFAULT_DRAWER_HEIGHT = 280;
/** The least the drawer and the timeline above it keep, in CSS pixels. */
export const MIN_DRAWER_HEIGHT = 60;
export const MIN_TIMELINE_HEIGHT = 160;
const KEY_STEP = 24;

/**
 * A drawer height that leaves the timeline its minimum (`above`: what the charts above need, two compared ones more than
 * one) within `available` pixels (drawer and timeline together). Pure.
 */
export function clampDrawerHeight(height: number, available: number, above = MIN_TIMELINE_HEIGHT): number {
  const most = Math.max(MIN_DRAWER_HEIGHT, available - Math.max(MIN_TIMELINE_HEIGHT, above));
  return Math.round(Math.min(most, Math.max(MIN_DRAWER_HEIGHT, Number.isFinite(height) ? height : DEFAULT_DRAWER_HEIGHT)));
}

export class Drawer {
  /** Where the sections go. */
  readonly element: HTMLElement;
  private readonly handle: HTMLElement;
  private wanted: number;

  /**
   * `available` measures the height the drawer shares with the timeline, `above` the least the charts above it need;
   * `onResized` is told the new height when the user has resized it (to save it).
   */
  constructor(
    parent: HTMLElement,
    height: number | undefined,
    private readonly available: () => number,
    private readonly onResized: (height: number) => void,
    private readonly above: () => number = () => MIN_TIMELINE_HEIGHT,
  ) {
    this.wanted = height ?? DEFAULT_DRAWER_HEIGHT;
    this.handle = el('div', 'rs-drawer-handle', parent);
    this.handle.setAttribute('role', 'separator');
    this.handle.setAttribute('aria-orientation', 'horizontal');
    this.handle.setAttribute('aria-label', 'Resize the details drawer (drag, or Up and Down arrows)');
    this.handle.tabIndex = 0;
    this.element = el('aside', 'rs-side rs-drawer', parent);
    this.element.setAttribute('aria-label', 'Details');
    this.handle.addEventListener('pointerdown', (e) => this.startDrag(e));
    this.handle.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      e.preventDefault();
      this.setHeight(this.shownHeight() + (e.key === 'ArrowUp' ? KEY_STEP : -KEY_STEP));
      this.onResized(this.height);
    });
    new ResizeObserver(() => this.apply()).observe(parent);
    this.apply();
  }

  /** The height asked for (dragged, or remembered): the least the drawer takes; it takes more when the lanes leave more. */
  get height(): number {
    return clampDrawerHeight(this.wanted, this.available(), this.above());
  }

  /** The height on screen: a drag or a key step starts from it, not from the least it may take. */
  private shownHeight(): number {
    return Math.round(this.element.getBoundingClientRect().height) || this.height;
  }

  setHeight(height: number): void {
    this.wanted = clampDrawerHeight(height, this.available(), this.above());
    this.apply();
  }

  /** What the charts above need changed (a second one was opened or closed): the drawer gives way, or takes back its height. */
  refit(): void {
    this.apply();
  }

  private apply(): void {
    const h = this.height;
    this.element.style.height = `${h}px`;
    this.handle.setAttribute('aria-valuenow', String(h));
  }

  private startDrag(e: PointerEvent): void {
    if (e.button !== 0) return;
    e.preventDefault();
    this.handle.setPointerCapture(e.pointerId);
    const startY = e.clientY;
    const startHeight = this.shownHeight();
    const move = (m: PointerEvent) => this.setHeight(startHeight + (startY - m.clientY));
    const end = () => {
      this.handle.removeEventListener('pointermove', move);
      this.handle.removeEventListener('pointerup', end);
      this.handle.removeEventListener('pointercancel', end);
      this.onResized(this.height);
    };
    this.handle.addEventListener('pointermove', move);
    this.handle.addEventListener('pointerup', end);
    this.handle.addEventListener('pointercancel', end);
  }
}
