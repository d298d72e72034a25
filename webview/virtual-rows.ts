// A table whose body holds only the rows in view of the element that scrolls it (and some either side), as Firefox
// Profiler's call tree (a virtual list) and Perfetto's tables do: the rows are of one fixed height, so which ones are in
// view follows from the scroll position alone, and two spacer rows stand for the rest. A call tree of hundreds of rows
// then costs the page the style and layout of a few dozen, whichever frame they land in (a zoom of the timeline paid
// ~26 ms of layout for a 400-row table the worker's answer had just built), and scrolling adds and removes a few rows
// instead of laying out the whole table.

import { el } from './dom';

/** Height of one row, CSS pixels (set on the table as --rs-row-height, which the rows' CSS reads: one home for it). */
export const VIRTUAL_ROW_HEIGHT = 18;
/** Rows kept either side of the view: a fast scroll shows rows already there, and what sits above the table is covered. */
const OVERSCAN_ROWS = 24;
/** The height assumed for the scroller before it is first measured: its CSS max-height (timeline.css .rs-calltree-body). */
const DEFAULT_VIEW_HEIGHT = 420;

export interface VirtualRowsOptions {
  /** The table's column headings and their widths (CSS lengths; the table's layout is fixed, so rows never resize it). */
  readonly columns: readonly { readonly heading: string; readonly width?: string }[];
  readonly className: string;
  readonly count: number;
  /** Fills a (new or reused) row with row `index`'s cells; its data-index and aria-rowindex are set already. */
  fill(tr: HTMLTableRowElement, index: number): void;
  /**
   * Scrolls the element that scrolls the table to `top` (CSS px) and records it where `view` reads it, so a row the
   * keyboard moves to is put in the page before it is focused (the scroll event comes only after the next layout).
   */
  scrollTo(top: number): void;
}

/** The keys that move the focus between rows, as in a list: by one, by a page, to either end. */
const NAVIGATION_KEYS = new Set(['ArrowDown', 'ArrowUp', 'PageDown', 'PageUp', 'Home', 'End']);

export class VirtualRows {
  readonly table: HTMLTableElement;
  private readonly tbody: HTMLTableSectionElement;
  private readonly above: HTMLTableRowElement;
  private readonly aboveCell: HTMLTableCellElement;
  private readonly below: HTMLTableRowElement;
  private readonly belowCell: HTMLTableCellElement;
  /** The rows in the body: rows [first, first + rows.length) of the list, in order. */
  private rows: HTMLTableRowElement[] = [];
  private first = 0;

  constructor(
    parent: HTMLElement,
    /**
     * Where the element that scrolls the table is scrolled to and how tall it shows (CSS px), as last seen by its scroll
     * events and a ResizeObserver (0: not measured yet): read without laying the page out.
     */
    private readonly view: () => { readonly scrollTop: number; readonly height: number },
    private readonly options: VirtualRowsOptions,
  ) {
    const table = (this.table = el('table', options.className, parent));
    table.classList.add('rs-virtual-rows');
    table.style.setProperty('--rs-row-height', `${VIRTUAL_ROW_HEIGHT}px`);
    table.setAttribute('aria-rowcount', String(options.count + 1));
    const colgroup = el('colgroup', '', table);
    for (const c of options.columns) {
      const col = el('col', '', colgroup);
      if (c.width) col.style.width = c.width;
    }
    const head = table.createTHead().insertRow();
    head.setAttribute('aria-rowindex', '1');
    for (const c of options.columns) el('th', '', head, c.heading).scope = 'col';
    this.tbody = table.createTBody();
    const spacer = (): [HTMLTableRowElement, HTMLTableCellElement] => {
      const tr = el('tr', 'rs-virtual-spacer', this.tbody);
      tr.setAttribute('aria-hidden', 'true');
      tr.hidden = true;
      const td = el('td', '', tr);
      td.colSpan = options.columns.length;
      return [tr, td];
    };
    [this.above, this.aboveCell] = spacer();
    [this.below, this.belowCell] = spacer();
    // Only the rows near the view are in the page, so Tab alone would leave the table after them: the arrow, page and
    // Home/End keys move the focus to any row, bringing it into the page first.
    table.addEventListener('keydown', (e) => {
      if (!NAVIGATION_KEYS.has(e.key) || e.ctrlKey || e.altKey || e.metaKey || e.shiftKey) return;
      const row = e.target instanceof Element ? e.target.closest<HTMLElement>('tr[data-index]') : null;
      if (!row) return;
      e.preventDefault();
      this.focusRow(this.targetOf(e.key, Number(row.dataset.index)));
    });
    this.update();
  }

  private targetOf(key: string, from: number): number {
    const pageRows = Math.max(1, Math.floor(this.viewHeight() / VIRTUAL_ROW_HEIGHT) - 1);
    const last = this.options.count - 1;
    const to =
      key === 'ArrowDown'
        ? from + 1
        : key === 'ArrowUp'
          ? from - 1
          : key === 'PageDown'
            ? from + pageRows
            : key === 'PageUp'
              ? from - pageRows
              : key === 'Home'
                ? 0
                : last;
    return Math.max(0, Math.min(last, to));
  }

  private viewHeight(): number {
    const { height } = this.view();
    return height > 0 ? height : DEFAULT_VIEW_HEIGHT;
  }

  /**
   * Scrolls to about row `index` (the heading row above the list counted), puts it in the page and focuses it; focus
   * then scrolls it exactly into view, the overscan rows covering what sits above the table.
   */
  focusRow(index: number): void {
    if (index < 0 || index >= this.options.count) return;
    const { scrollTop } = this.view();
    const height = this.viewHeight();
    const top = index * VIRTUAL_ROW_HEIGHT;
    if (top < scrollTop) this.options.scrollTo(top);
    else if (top + 2 * VIRTUAL_ROW_HEIGHT > scrollTop + height) this.options.scrollTo(top + 2 * VIRTUAL_ROW_HEIGHT - height);
    this.update();
    this.rows[index - this.first]?.focus();
  }

  /** The rows in the body now, in order (each with its index in the list as data-index). */
  renderedRows(): readonly HTMLTableRowElement[] {
    return this.rows;
  }

  /** Shows the rows in view (after a scroll or a resize): the rows that stay are kept, with their focus. */
  update(): void {
    const { count } = this.options;
    const { scrollTop } = this.view();
    const view = this.viewHeight();
    // Rows are laid out from the table's top, which may sit below the scroller's (a hint line above it): the overscan
    // rows cover that.
    const from = Math.max(0, Math.min(count, Math.floor(scrollTop / VIRTUAL_ROW_HEIGHT) - OVERSCAN_ROWS));
    const to = Math.max(from, Math.min(count, Math.ceil((scrollTop + view) / VIRTUAL_ROW_HEIGHT) + OVERSCAN_ROWS));
    const end = this.first + this.rows.length;
    if (from === this.first && to === end) return;
    const kept: HTMLTableRowElement[] = [];
    this.rows.forEach((tr, k) => {
      const index = this.first + k;
      if (index >= from && index < to) kept.push(tr);
      else tr.remove();
    });
    const keptFrom = kept.length > 0 ? Math.max(from, this.first) : to;
    const keptTo = kept.length > 0 ? keptFrom + kept.length : to;
    const make = (index: number): HTMLTableRowElement => {
      const tr = document.createElement('tr');
      tr.dataset.index = String(index);
      tr.setAttribute('aria-rowindex', String(index + 2));
      this.options.fill(tr, index);
      return tr;
    };
    const before: HTMLTableRowElement[] = [];
    for (let i = from; i < keptFrom; i++) before.push(make(i));
    const after: HTMLTableRowElement[] = [];
    for (let i = keptTo; i < to; i++) after.push(make(i));
    const anchor = kept[0] ?? this.below;
    for (const tr of before) this.tbody.insertBefore(tr, anchor);
    for (const tr of after) this.tbody.insertBefore(tr, this.below);
    this.rows = [...before, ...kept, ...after];
    this.first = from;
    this.above.hidden = from === 0;
    this.aboveCell.style.height = `${from * VIRTUAL_ROW_HEIGHT}px`;
    this.below.hidden = to === count;
    this.belowCell.style.height = `${(count - to) * VIRTUAL_ROW_HEIGHT}px`;
  }
}
