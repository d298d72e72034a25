// The call tree pane: for the samples with callchains in the brushed range (the whole capture when
// nothing is brushed), a top-down tree, an inverted (bottom-up) tree, a flame graph on canvas (click a
// frame to zoom into it, the breadcrumb to zoom back out, hover for its counts), and the self samples per
// function and per source line. Choosing a function anywhere here filters the tracks to the samples whose
// stack holds it (the filter's `stack:=` term) and reveals its source in the editor when the host has one.
// The trees and counts are built by call-tree.ts (pure) in the aggregation worker (aggregation.ts), off the main thread;
// this module asks it for each selection and lays out and draws the answer.

import type { RecordStore } from './store';
import {
  childrenByTotal,
  flameBoxAt,
  flameLayout,
  pathTo,
  selectionWeights,
  type Aggregate,
  type CallTree,
  type FlameBox,
  type FunctionCount,
  type LineCount,
  type TreeDirection,
} from './call-tree';
import { transformStacks, type CallTreeTransform } from './call-tree-transforms';
import { openTransformMenu, transformChoices, TransformBar, type TransformTarget } from './call-tree-transform-bar';
import { diffCaptures } from './call-tree-diff';
import { renderDiff, type DiffViewState } from './call-tree-diff-view';
import { Aggregation, type Selection } from './aggregation';
import type { SourceLocation, StackTable } from '../shared/stacks';
import type { HostToWebview } from '../shared/protocol';
import type { HostRequests } from './details';
import { readColors, sizeCanvas } from './draw';
import { el } from './dom';
import { VirtualRows } from './virtual-rows';

export type CallTreeMode = TreeDirection | 'flame' | 'functions' | 'lines' | 'diff';

/** Two captures compared: A the shown one, B the compared one (the Difference tab shows B − A). */
export interface Comparison {
  readonly a: Selection;
  readonly b: Selection;
  readonly labelA: string;
  readonly labelB: string;
}

type RevealReply = Extract<HostToWebview, { type: 'revealReply' }>;

/** What the pane asks of the page: the host for reveal requests, and the filter box for `stack:` terms. */
export interface CallTreeActions {
  readonly host: HostRequests;
  /** The filter box's text. */
  filterText(): string;
  /** Puts `text` in the filter box and applies it to the tracks. */
  filterTo(text: string): void;
  /** The transforms changed (added or a breadcrumb removed): the stack charts draw through them too. */
  transformsChanged?(transforms: readonly CallTreeTransform[]): void;
}

/** One flame graph box as the page drew it, in CSS pixels of the canvas (for hit-testing from outside and tests). */
export interface DrawnFlameBox {
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly self: number;
  readonly total: number;
}

/** Rows of the tree list beyond this many are left out (the heaviest paths come first). */
const MAX_LIST_ROWS = 400;
/** Rows of the functions and lines tables beyond this many are left out (most self samples first). */
const MAX_TABLE_ROWS = 200;
const FLAME_ROW = 18;

/** The filter term for the samples whose stack holds function `name` exactly (quoted when it has spaces, as C++ signatures do). */
export function stackTerm(name: string): string {
  return /[\s"]/.test(name) ? `stack:="${name.replace(/"/g, '')}"` : `stack:=${name}`;
}

/** `filter` with its stack:= terms replaced by `term` (none: removed); the user's other terms stay. */
export function withStackTerm(filter: string, term: string | null): string {
  const others = filter.replace(/(?<=^|\s)-?stack:=("[^"]*"|\S+)\s*/g, '').trim();
  return [others, term ?? ''].filter((part) => part !== '').join(' ');
}

const baseName = (file: string) => file.slice(file.lastIndexOf('/') + 1);

/** Black or white, whichever reads on `fill` (any CSS colour; the canvas normalizes it to #rrggbb or rgba()). */
function labelColorOn(ctx: CanvasRenderingContext2D, fill: string): string {
  ctx.fillStyle = fill;
  const normalized = String(ctx.fillStyle);
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(normalized);
  const rgb = hex ? hex.slice(1).map((h) => parseInt(h, 16)) : /^rgba?\((\d+), (\d+), (\d+)/.exec(normalized)?.slice(1).map(Number);
  if (!rgb) return '#000';
  const [r, g, b] = rgb;
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#000' : '#fff';
}

export class CallTreeView {
  private readonly section: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly selection: HTMLElement;
  private readonly body: HTMLElement;
  private mode: CallTreeMode = 'top-down';
  private label = 'whole capture';
  /** The selection's trees and counts, from the worker; the previous selection's until they arrive. */
  private aggregate: Aggregate | null = null;
  private pending = false;
  /** Where the aggregation runs (its worker), and its counters. */
  readonly aggregation = new Aggregation();
  private readonly buttons = new Map<CallTreeMode, HTMLButtonElement>();
  /** The flame graph's zoom as the function names from the outermost caller down (node ids change with every rebuild). */
  private flamePath: number[] = [];
  private drawnBoxes: DrawnFlameBox[] = [];
  /** The width the flame graph was laid out for (CSS px), to redraw it when the pane is resized. */
  private flameWidth = 0;
  /** The function last chosen (index into the store's stack names), or -1. */
  private chosen = -1;
  /** The source line shown (and revealed) for the chosen function. */
  private chosenAt: SourceLocation | undefined;
  private editor = false;
  private readonly pendingReveal = new Set<number>();
  /** The transforms applied before the trees are built, as breadcrumbs. */
  private readonly transformBar: TransformBar;
  /** The selection shown, asked again when the transforms change. */
  private lastSelection: Selection | null = null;
  private comparison: Comparison | null = null;
  private diffState: DiffViewState = { mode: 'functions', sort: 'self-delta' };
  /** The list shown (tree, functions or lines), which holds only the rows in view; null in the other modes. */
  private list: VirtualRows | null = null;
  /** Where the body is scrolled to and how tall it shows, as its scroll events and resizes said (no layout read). */
  private readonly bodyView = { scrollTop: 0, height: 0 };

  constructor(
    parent: HTMLElement,
    private readonly store: RecordStore,
    private readonly actions: CallTreeActions,
  ) {
    this.section = el('section', 'rs-calltree', parent);
    this.section.id = 'rs-calltree';
    this.section.setAttribute('aria-label', 'Call tree');
    el('h2', '', this.section, 'Call tree');
    const modes = el('div', 'rs-calltree-modes', this.section);
    modes.setAttribute('role', 'tablist');
    const labels = [
      ['top-down', 'Top-down'],
      ['bottom-up', 'Bottom-up'],
      ['flame', 'Flame graph'],
      ['functions', 'Functions'],
      ['lines', 'Lines'],
      ['diff', 'Difference'],
    ] as const;
    for (const [mode, text] of labels) {
      const button = el('button', 'rs-calltree-mode', modes, text);
      button.type = 'button';
      button.dataset.mode = mode;
      button.setAttribute('role', 'tab');
      button.addEventListener('click', () => {
        this.mode = mode;
        this.render();
      });
      this.buttons.set(mode, button);
    }
    const diffButton = this.buttons.get('diff')!;
    diffButton.hidden = true; // shown while two captures are compared
    diffButton.title = 'B − A: the compared capture minus the shown one, per function and as a differential flame graph';
    this.summary = el('p', 'rs-calltree-summary rs-hint', this.section);
    this.selection = el('div', 'rs-calltree-selection', this.section);
    this.selection.setAttribute('aria-live', 'polite');
    this.transformBar = new TransformBar(this.section, () => {
      this.actions.transformsChanged?.(this.transformBar.transforms);
      if (this.lastSelection) this.setSelection(this.lastSelection, this.label);
      else this.render();
    });
    this.body = el('div', 'rs-calltree-body', this.section);
    // A scroll event comes after the page is laid out: its position is read there, and the list's rows follow it.
    this.body.addEventListener(
      'scroll',
      () => {
        this.bodyView.scrollTop = this.body.scrollTop;
        this.list?.update();
      },
      { passive: true },
    );
    new ResizeObserver((entries) => {
      const height = entries[entries.length - 1]?.contentRect.height ?? 0;
      if (height !== this.bodyView.height) {
        this.bodyView.height = height;
        this.list?.update();
      }
      // The flame graph is laid out for one width: lay it out again when the pane around it is resized.
      if (this.mode === 'flame' && this.flameWidth > 0 && Math.abs(this.layoutWidth() - this.flameWidth) >= 1) this.render();
    }).observe(this.body);
    this.render();
  }

  private layoutWidth(): number {
    return Math.max(200, this.body.clientWidth || this.section.clientWidth || 320);
  }

  /**
   * The pane says a count of `label` is coming, before it is asked for (the page asks once the timeline's frames pause):
   * whoever waits for the tree waits for that count's answer, not for the tree shown before it.
   */
  countingSoon(label: string): void {
    if (this.store.stackTable().start.length > 1) this.markCounting(label);
  }

  private markCounting(label: string): void {
    this.label = label;
    this.pending = true;
    this.section.dataset.pending = 'true';
    this.summary.textContent = `Counting samples with callchains… · ${label}`;
  }

  /** Show the samples of a selection (every row with a stack when its range is null): asks the worker, draws its answer. */
  setSelection(selection: Selection, label: string): void {
    this.label = label;
    this.lastSelection = selection;
    if (this.store.stackTable().start.length <= 1) {
      this.aggregate = null;
      this.render();
      return;
    }
    this.markCounting(label);
    this.aggregation.query(this.store, { ...selection, transforms: this.transformBar.transforms }, (aggregate) => {
      if (aggregate === null) return; // a newer selection replaced this one
      this.aggregate = aggregate;
      this.pending = false;
      delete this.section.dataset.pending;
      this.render();
    });
  }

  /** Two captures to subtract in the Difference tab (null: one capture shown, no tab). */
  setComparison(comparison: Comparison | null): void {
    this.comparison = comparison;
    this.buttons.get('diff')!.hidden = comparison === null;
    if (comparison === null && this.mode === 'diff') this.mode = 'top-down';
    if (this.mode === 'diff') this.render();
  }

  /** Applies a transform (as the menu or a key does): the trees are built again through it. */
  addTransform(t: CallTreeTransform): void {
    this.transformBar.push(t);
  }

  get transforms(): readonly CallTreeTransform[] {
    return this.transformBar.transforms;
  }

  /**
   * The filter box changed: when it no longer holds a stack:= term, the chosen function, its line and the flame graph's
   * zoom are forgotten (they said what the tracks showed).
   */
  filterChanged(text: string): void {
    if (/(?<=^|\s)-?stack:=/.test(text) || (this.chosen < 0 && this.flamePath.length === 0)) return;
    this.chosen = -1;
    this.chosenAt = undefined;
    this.flamePath = [];
    this.selection.replaceChildren();
    this.render();
  }

  /** Whether the host answers reveal requests (the panel does; the offline page does not). */
  setEditor(available: boolean): void {
    this.editor = available;
    this.renderSelection();
  }

  revealReply(m: RevealReply): void {
    if (!this.pendingReveal.delete(m.replyTo)) return;
    const out = this.selection.querySelector('.rs-reveal-status');
    if (out) out.textContent = m.ok ? '' : `${m.error?.code}: ${m.error?.message}${m.error?.hint ? ` — ${m.error.hint}` : ''}`;
  }

  /** The boxes of the flame graph drawn last (empty in the other modes). */
  flameBoxes(): readonly DrawnFlameBox[] {
    return this.drawnBoxes;
  }

  render(): void {
    for (const [mode, button] of this.buttons) button.setAttribute('aria-selected', String(mode === this.mode));
    this.body.replaceChildren();
    this.list = null;
    this.drawnBoxes = [];
    this.flameWidth = 0;
    const table = this.store.stackTable();
    if (table.start.length <= 1) {
      this.summary.textContent = 'No samples with callchains (record with -g, or the call graph option).';
      return;
    }
    if (this.mode === 'diff' && this.comparison) {
      this.renderDifference(this.comparison, table);
      return;
    }
    const aggregate = this.aggregate;
    if (!aggregate) return; // the worker has not answered yet
    const direction: TreeDirection = this.mode === 'bottom-up' ? 'bottom-up' : 'top-down';
    const tree = direction === 'bottom-up' ? aggregate.bottomUp : aggregate.topDown;
    if (!this.pending) this.summary.textContent = `${tree.total[0].toLocaleString('en-US')} samples with callchains · ${this.label}`;
    if (tree.total[0] === 0) return;
    if (this.mode === 'flame') this.drawFlame(tree, aggregate.names);
    else if (this.mode === 'functions') this.renderFunctions(table, aggregate.names, aggregate.functions, tree.total[0]);
    else if (this.mode === 'lines') this.renderLines(table, aggregate.names, aggregate.lines, tree.total[0]);
    else this.renderList(tree, aggregate.names, direction);
  }

  /** B − A of the two compared captures (their whole captures, through the same transforms), counted here. */
  private renderDifference(comparison: Comparison, table: StackTable): void {
    const n = this.store.length;
    const time = this.store.time.subarray(0, n);
    const stack = this.store.stack.subarray(0, Math.min(n, this.store.stack.length));
    const side = (selection: Selection) =>
      transformStacks(
        table,
        selectionWeights(table, time, stack, selection.range, selection.shown ? selection.shown.mask() : null),
        this.transformBar.transforms,
      );
    const diff = diffCaptures(side(comparison.a), side(comparison.b));
    this.summary.textContent = `Difference of ${comparison.labelB} (B) and ${comparison.labelA} (A)`;
    renderDiff(this.body, diff, { a: comparison.labelA, b: comparison.labelB }, this.diffState, (state) => {
      this.diffState = state;
      this.render();
    });
  }

  /** The transforms a node offers: its function, its call path (top-down trees) and its library, when the host named one. */
  private transformTarget(names: readonly string[], name: number, path: readonly string[] | null): TransformTarget | null {
    const label = names[name];
    if (label === undefined) return null;
    const table = this.store.stackTable();
    const library = name < table.names.length ? (table.libraries?.[table.nameLibrary?.[name] ?? -1] ?? null) : null;
    return { name: label, path, library };
  }

  /** Right-click and the f / F / m / C keys on `element` offer the transforms of `target` (of the event's row, in a list). */
  private transformable(element: HTMLElement, target: (e: Event) => TransformTarget | null): void {
    element.addEventListener('contextmenu', (e) => {
      const t = target(e);
      if (!t) return;
      e.preventDefault();
      openTransformMenu(this.section, e.clientX, e.clientY, t, (transform) => this.addTransform(transform));
    });
    element.addEventListener('keydown', (e) => {
      if (e.ctrlKey || e.altKey || e.metaKey) return;
      const t = target(e);
      const choice = t ? transformChoices(t).find((c) => c.key === e.key) : undefined;
      if (!choice) return;
      e.preventDefault();
      this.addTransform(choice.transform);
    });
  }

  /** Filters the tracks to the samples whose stack holds function `name` and reveals `at` (default: the function's entry). */
  private choose(name: number, at?: SourceLocation): void {
    const table = this.store.stackTable();
    const label = table.names[name];
    if (label === undefined) return;
    this.chosen = name;
    this.actions.filterTo(withStackTerm(this.actions.filterText(), stackTerm(label)));
    const location = at ?? this.entryOf(table, name);
    this.chosenAt = location;
    this.renderSelection();
    if (location && this.editor) {
      const requestId = this.actions.host.nextRequestId();
      this.pendingReveal.add(requestId);
      this.actions.host.post({ type: 'revealRequest', requestId, file: location.file, line: location.line });
    }
    for (const row of this.list?.renderedRows() ?? []) row.classList.toggle('rs-chosen', Number(row.dataset.name) === name);
  }

  private entryOf(table: StackTable, name: number): SourceLocation | undefined {
    const at = table.nameLocation?.[name] ?? -1;
    return at >= 0 ? table.locations?.[at] : undefined;
  }

  /** The line under the mode tabs: which function filters the tracks, where its source is, and a way to clear it. */
  private renderSelection(): void {
    this.selection.replaceChildren();
    const location = this.chosenAt;
    const name = this.store.stackTable().names[this.chosen];
    if (name === undefined) return;
    const line = el('p', 'rs-hint', this.selection);
    line.append('Tracks show samples through ');
    el('code', 'rs-calltree-chosen', line, name);
    if (location) line.append(` · ${location.file}:${location.line}${this.editor ? '' : ' (open the panel in VS Code to jump there)'}`);
    const clear = el('button', 'rs-calltree-clear', line, 'Clear');
    clear.type = 'button';
    clear.title = 'Show every record again';
    clear.addEventListener('click', () => {
      this.chosen = -1;
      this.chosenAt = undefined;
      this.actions.filterTo(withStackTerm(this.actions.filterText(), null));
      this.selection.replaceChildren();
      for (const row of this.body.querySelectorAll('.rs-chosen')) row.classList.remove('rs-chosen');
    });
    el('span', 'rs-reveal-status rs-hint', this.selection);
  }

  /** Marks `row` as choosing function `name` (the list's click and Enter handlers read it): focusable, titled, chosen or not. */
  private choosable(row: HTMLElement, name: number, title: string): void {
    row.dataset.name = String(name);
    row.tabIndex = 0;
    row.title = title;
    if (name === this.chosen) row.classList.add('rs-chosen');
  }

  /**
   * A list of `count` rows in the body, holding only those in view (virtual-rows.ts), its rows' clicks, Enter, right-click
   * and transform keys handled once on the table: row i chooses `choice(i)` (its function, and a line to reveal instead
   * of the entry) and offers the transforms of `target(i)`.
   */
  private virtualList(
    className: string,
    columns: readonly { heading: string; width?: string }[],
    count: number,
    fill: (tr: HTMLTableRowElement, index: number) => void,
    choice: (index: number) => { name: number; at?: SourceLocation },
    target: ((index: number) => TransformTarget | null) | null,
  ): void {
    const list = (this.list = new VirtualRows(this.body, () => this.bodyView, {
      className,
      columns,
      count,
      fill,
      scrollTo: (top) => {
        this.body.scrollTop = top;
        this.bodyView.scrollTop = this.body.scrollTop;
      },
    }));
    const indexOf = (e: Event): number => {
      const row = e.target instanceof Element ? e.target.closest<HTMLElement>('tr[data-index]') : null;
      return row ? Number(row.dataset.index) : -1;
    };
    const choose = (e: Event) => {
      const index = indexOf(e);
      if (index < 0) return;
      const { name, at } = choice(index);
      this.choose(name, at);
    };
    list.table.addEventListener('click', choose);
    list.table.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      choose(e);
    });
    if (target)
      this.transformable(list.table, (e) => {
        const index = indexOf(e);
        return index < 0 ? null : target(index);
      });
  }

  private renderList(tree: CallTree, names: readonly string[], direction: TreeDirection): void {
    const all = tree.total[0];
    const percent = (n: number) => `${((100 * n) / all).toFixed(1)}%`;
    // The rows in order: every root (in the inverted tree they are the self counts per function), each followed by its
    // subtree, heaviest first; the subtrees share a row budget.
    const order: number[] = [];
    let shown = 0;
    const visit = (node: number) => {
      for (const child of childrenByTotal(tree, node)) {
        if (shown >= MAX_LIST_ROWS) return;
        shown++;
        order.push(child);
        visit(child);
      }
    };
    for (const root of childrenByTotal(tree, 0)) {
      order.push(root);
      visit(root);
    }
    const digits = String(all).length;
    this.virtualList(
      'rs-calltree-list',
      [{ heading: 'Total', width: `${digits + 10}ch` }, { heading: 'Self', width: `${digits + 2}ch` }, { heading: 'Function' }],
      order.length,
      (tr, index) => {
        const node = order[index];
        tr.className = 'rs-calltree-node';
        tr.dataset.depth = String(tree.depth[node]);
        el('td', 'rs-num rs-calltree-total', tr, `${tree.total[node]} (${percent(tree.total[node])})`).dataset.count = String(tree.total[node]);
        el('td', 'rs-num rs-calltree-self', tr, String(tree.self[node]));
        const name = names[tree.name[node]] ?? '?';
        const cell = el('td', 'rs-calltree-fn', tr, name);
        cell.style.paddingLeft = `${(tree.depth[node] - 1) * 12 + 4}px`;
        this.choosable(tr, tree.name[node], `Show the samples through ${name} on the tracks (right-click or f, F, m, C: transform the tree)`);
      },
      (index) => ({ name: tree.name[order[index]] }),
      // A top-down path is a call path from the root; a bottom-up one is not, so it offers no subtree.
      (index) => {
        const node = order[index];
        return this.transformTarget(names, tree.name[node], direction === 'top-down' ? pathTo(tree, node).map((n) => names[tree.name[n]] ?? '?') : null);
      },
    );
  }

  private renderFunctions(table: StackTable, names: readonly string[], functions: readonly FunctionCount[], all: number): void {
    const percent = (n: number) => `${((100 * n) / all).toFixed(1)}%`;
    const listed = functions.slice(0, MAX_TABLE_ROWS);
    const digits = String(all).length;
    this.virtualList(
      'rs-calltree-list rs-functions',
      [
        { heading: 'Self', width: `${digits + 10}ch` },
        { heading: 'Total', width: `${digits + 10}ch` },
        { heading: 'Function' },
        { heading: 'Source', width: '30%' },
      ],
      listed.length,
      (tr, index) => {
        const f = listed[index];
        tr.className = 'rs-function-row';
        el('td', 'rs-num rs-function-self', tr, `${f.self} (${percent(f.self)})`).dataset.count = String(f.self);
        el('td', 'rs-num rs-function-total', tr, `${f.total} (${percent(f.total)})`).dataset.count = String(f.total);
        const name = names[f.name] ?? '?';
        el('td', 'rs-calltree-fn', tr, name);
        const entry = this.entryOf(table, f.name);
        const source = el('td', 'rs-calltree-source', tr, entry ? `${baseName(entry.file)}:${entry.line}` : '');
        if (entry) source.title = `${entry.file}:${entry.line}`;
        this.choosable(tr, f.name, `Show the samples through ${name} on the tracks${entry ? ' and reveal its source' : ''}`);
      },
      (index) => ({ name: listed[index].name }),
      (index) => this.transformTarget(names, listed[index].name, null),
    );
  }

  private renderLines(table: StackTable, names: readonly string[], lines: readonly LineCount[], all: number): void {
    if (lines.length === 0) {
      el('p', 'rs-hint', this.body, 'No source lines for these samples (build with -g, or the binaries are gone).');
      return;
    }
    const known = lines.reduce((sum, l) => sum + l.self, 0);
    if (known < all) {
      el('p', 'rs-hint', this.body, `${(all - known).toLocaleString('en-US')} samples without a source line are not listed.`);
    }
    const listed: { line: LineCount; at: SourceLocation }[] = [];
    for (const line of lines.slice(0, MAX_TABLE_ROWS)) {
      const at = table.locations?.[line.location];
      if (at) listed.push({ line, at });
    }
    this.virtualList(
      'rs-calltree-list rs-lines',
      [{ heading: 'Self', width: `${String(all).length + 10}ch` }, { heading: 'Line', width: '35%' }, { heading: 'Function' }],
      listed.length,
      (tr, index) => {
        const { line: l, at } = listed[index];
        tr.className = 'rs-line-row';
        tr.dataset.file = at.file;
        tr.dataset.line = String(at.line);
        el('td', 'rs-num rs-line-self', tr, `${l.self} (${((100 * l.self) / all).toFixed(1)}%)`).dataset.count = String(l.self);
        el('td', 'rs-calltree-source', tr, `${baseName(at.file)}:${at.line}`).title = `${at.file}:${at.line}`;
        const name = names[l.name] ?? '?';
        el('td', 'rs-calltree-fn', tr, name);
        this.choosable(tr, l.name, `Show the samples through ${name} on the tracks and reveal ${at.file}:${at.line}`);
      },
      (index) => ({ name: listed[index].line.name, at: listed[index].at }),
      null,
    );
  }

  /** The node of the zoom path in this tree: as deep as the path still exists (the range may have changed). */
  private flameFocus(tree: CallTree): number {
    let node = 0;
    const kept: number[] = [];
    for (const name of this.flamePath) {
      let next = -1;
      for (let c = tree.firstChild[node]; c >= 0; c = tree.nextSibling[c])
        if (tree.name[c] === name) {
          next = c;
          break;
        }
      if (next < 0) break;
      node = next;
      kept.push(name);
    }
    this.flamePath = kept;
    return node;
  }

  private zoomTo(tree: CallTree, node: number): void {
    this.flamePath = pathTo(tree, node).map((n) => tree.name[n]);
    this.render();
  }

  private drawFlame(tree: CallTree, names: readonly string[]): void {
    const focus = this.flameFocus(tree);
    const crumbs = el('nav', 'rs-flame-crumbs', this.body);
    crumbs.setAttribute('aria-label', 'Flame graph zoom');
    const crumb = (text: string, node: number, current: boolean) => {
      const button = el('button', 'rs-flame-crumb', crumbs, text);
      button.type = 'button';
      if (current) button.setAttribute('aria-current', 'true');
      button.addEventListener('click', () => this.zoomTo(tree, node));
    };
    if (focus !== 0) {
      const back = el('button', 'rs-flame-back', crumbs, '← Back');
      back.type = 'button';
      back.title = 'Zoom out one level (Escape)';
      back.addEventListener('click', () => this.zoomTo(tree, tree.parent[focus]));
    }
    crumb('All', 0, focus === 0);
    for (const node of pathTo(tree, focus)) crumb(names[tree.name[node]] ?? '?', node, node === focus);

    const width = this.layoutWidth();
    this.flameWidth = width;
    // Pure layout first; then one synchronous draw.
    const boxes: FlameBox[] = flameLayout(tree, 1 / width, focus);
    let depth = 0;
    for (const b of boxes) depth = Math.max(depth, b.depth + 1);
    const frame = el('div', 'rs-flame-frame', this.body);
    const canvas = el('canvas', 'rs-flame', frame);
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `Flame graph of ${tree.total[focus]} samples${focus ? ` in ${names[tree.name[focus]]}` : ''}`);
    canvas.tabIndex = 0;
    const tip = el('div', 'rs-flame-tip', frame);
    tip.setAttribute('role', 'tooltip');
    tip.hidden = true;
    const dpr = window.devicePixelRatio || 1;
    const height = depth * FLAME_ROW;
    sizeCanvas(canvas, width, height, dpr);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    const colors = readColors(this.section);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    for (const b of boxes) {
      const x = b.x * width;
      const w = b.width * width;
      // Callers at the top (an icicle, as Perfetto draws its flame graph): the drawer is often shorter than the graph,
      // and the outermost callers, which hold every sample, must be in view when it opens; deep leaves may scroll.
      const y = b.depth * FLAME_ROW;
      const name = names[tree.name[b.node]] ?? '?';
      this.drawnBoxes.push({ name, x, y, width: w, height: FLAME_ROW - 1, self: tree.self[b.node], total: tree.total[b.node] });
      ctx.globalAlpha = b.depth < tree.depth[focus] ? 0.55 : 1; // the callers of a zoomed frame are context, drawn faded
      ctx.fillStyle = colors.palette[tree.name[b.node] % colors.palette.length];
      ctx.fillRect(x, y, Math.max(1, w - 1), FLAME_ROW - 1);
      if (tree.name[b.node] === this.chosen) {
        ctx.strokeStyle = colors.foreground;
        ctx.strokeRect(x + 0.5, y + 0.5, Math.max(1, w - 2), FLAME_ROW - 2);
      }
      ctx.globalAlpha = 1;
      if (w > 30) {
        ctx.fillStyle = labelColorOn(ctx, colors.palette[tree.name[b.node] % colors.palette.length]);
        ctx.save();
        ctx.beginPath();
        ctx.rect(x, y, w - 1, FLAME_ROW - 1);
        ctx.clip();
        ctx.fillText(name, x + 3, y + FLAME_ROW / 2);
        ctx.restore();
      }
    }
    canvas.dataset.boxes = String(boxes.length);
    canvas.dataset.focus = focus === 0 ? '' : (names[tree.name[focus]] ?? '?');

    const boxAt = (e: MouseEvent) => {
      const r = canvas.getBoundingClientRect();
      return flameBoxAt(boxes, (e.clientX - r.left) / width, Math.floor((e.clientY - r.top) / FLAME_ROW));
    };
    const all = tree.total[0];
    canvas.addEventListener('mousemove', (e) => {
      const b = boxAt(e);
      if (!b) {
        tip.hidden = true;
        canvas.style.cursor = '';
        return;
      }
      const n = b.node;
      const count = (v: number) => v.toLocaleString('en-US');
      tip.textContent =
        `${names[tree.name[n]] ?? '?'}\nself ${count(tree.self[n])} · total ${count(tree.total[n])}` +
        ` (${((100 * tree.total[n]) / all).toFixed(1)}% of ${all.toLocaleString('en-US')} samples)`;
      tip.hidden = false;
      const fr = frame.getBoundingClientRect();
      tip.style.left = `${Math.min(e.clientX - fr.left + 12, Math.max(0, fr.width - tip.offsetWidth))}px`;
      tip.style.top = `${e.clientY - fr.top + 14}px`;
      canvas.style.cursor = 'pointer';
    });
    canvas.addEventListener('mouseleave', () => {
      tip.hidden = true;
    });
    // Right-click a frame: its transforms (the box under the pointer, found again when the menu opens).
    let lastBox: FlameBox | undefined;
    canvas.addEventListener(
      'contextmenu',
      (e) => {
        lastBox = boxAt(e);
      },
      true,
    );
    this.transformable(canvas, () => {
      // A key on the focused graph: the frame it is zoomed into.
      const node = lastBox?.node ?? focus;
      lastBox = undefined;
      return node > 0
        ? this.transformTarget(
            names,
            tree.name[node],
            pathTo(tree, node).map((n) => names[tree.name[n]] ?? '?'),
          )
        : null;
    });
    // A click zooms into the frame and chooses its function (filter and reveal), as a row of the tree does.
    canvas.addEventListener('click', (e) => {
      const b = boxAt(e);
      if (!b) return;
      this.chosen = tree.name[b.node]; // drawn outlined by the zoomed graph
      this.zoomTo(tree, b.node);
      this.choose(tree.name[b.node]);
    });
    canvas.addEventListener('keydown', (e) => {
      if ((e.key !== 'Escape' && e.key !== 'Backspace') || focus === 0) return;
      e.preventDefault();
      this.zoomTo(tree, tree.parent[focus]);
      this.focusFlame();
    });
  }

  private focusFlame(): void {
    this.body.querySelector<HTMLCanvasElement>('canvas.rs-flame')?.focus();
  }
}
