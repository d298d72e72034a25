// The colour legend: one entry per event the shown captures recorded, in the colour its records are drawn in on the
// lanes (store event i in theme colour i % PALETTE_SIZE whichever capture shows it, set as a CSS variable so it follows
// the theme like the canvas does).

import type { StoreEvent } from './store';
import { el } from './dom';

/** How many event colours the theme gives (--rs-palette-0 … in timeline.css); event i is drawn in colour i % PALETTE_SIZE. */
export const PALETTE_SIZE = 8;

/**
 * The entries the legend shows: the name of each store event in `shown` (indexes into `events`; default: all) and the
 * CSS colour its ticks use. Pure.
 */
export function legendEntries(
  events: readonly StoreEvent[],
  shown: readonly number[] = [...events.keys()],
): { readonly name: string; readonly color: string }[] {
  return shown.map((i) => ({ name: events[i].name, color: `var(--rs-palette-${i % PALETTE_SIZE})` }));
}

/**
 * The legend: the events `shown` (store event indexes), then the thread states drawn in the state bands (`states`,
 * from stateLegendEntries). `data-events` on the target says how many events it lists.
 */
export function renderLegend(
  target: HTMLElement,
  events: readonly StoreEvent[],
  shown: readonly number[],
  states: readonly { readonly name: string; readonly color: string }[] = [],
): void {
  target.replaceChildren();
  target.hidden = shown.length === 0;
  target.dataset.events = String(shown.length);
  for (const entry of legendEntries(events, shown)) {
    const item = el('span', 'rs-legend-item', target);
    item.dataset.event = entry.name;
    item.setAttribute('role', 'listitem');
    const swatch = el('span', 'rs-legend-swatch', item);
    swatch.style.background = entry.color;
    swatch.setAttribute('aria-hidden', 'true');
    el('span', 'rs-legend-name', item, entry.name);
  }
  for (const entry of states) {
    const item = el('span', 'rs-legend-item rs-legend-state', target);
    item.dataset.state = entry.name;
    item.setAttribute('role', 'listitem');
    item.title = 'Thread state (the band under each thread lane, grouped by thread)';
    const swatch = el('span', 'rs-legend-swatch', item);
    swatch.style.background = entry.color;
    swatch.setAttribute('aria-hidden', 'true');
    el('span', 'rs-legend-name', item, entry.name);
  }
}
