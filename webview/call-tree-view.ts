// The call tree pane: for the samples with callchains in the brushed range (the whole capture when
// nothing is brushed), a top-down tree, an inverted (bottom-up) tree, or a flame graph on canvas.
// The trees are built by call-tree.ts (pure); this module only lays them out and draws them.

import type { RecordStore } from './store';
import { buildCallTree, childrenByTotal, flameLayout, type CallTree, type FlameBox, type TreeDirection } from './call-tree';
import { readColors, sizeCanvas } from './draw';
import { el } from './dom';

export type CallTreeMode = TreeDirection | 'flame';

/** Rows of the tree list beyond this many are left out (the heaviest paths come first). */
const MAX_LIST_ROWS = 400;
const FLAME_ROW = 18;

export class CallTreeView {
  private readonly section: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly body: HTMLElement;
  private mode: CallTreeMode = 'top-down';
  private rows: ArrayLike<number> | null = null;
  private label = 'whole capture';
  private readonly buttons = new Map<CallTreeMode, HTMLButtonElement>();

  constructor(parent: HTMLElement, private readonly store: RecordStore) {
    this.section = el('section', 'rs-calltree', parent);
    this.section.id = 'rs-calltree';
    this.section.setAttribute('aria-label', 'Call tree');
    el('h2', '', this.section, 'Call tree');
    const modes = el('div', 'rs-calltree-modes', this.section);
    modes.setAttribute('role', 'tablist');
    for (const [mode, text] of [['top-down', 'Top-down'], ['bottom-up', 'Bottom-up'], ['flame', 'Flame graph']] as const) {
      const button = el('button', 'rs-calltree-mode', modes, text);
      button.type = 'button';
      button.dataset.mode = mode;
      button.setAttribute('role', 'tab');
      button.addEventListener('click', () => { this.mode = mode; this.render(); });
      this.buttons.set(mode, button);
    }
    this.summary = el('p', 'rs-calltree-summary rs-hint', this.section);
    this.body = el('div', 'rs-calltree-body', this.section);
    this.render();
  }

  /** Show the samples of `rows` (store rows), or of every row when null. */
  setRows(rows: ArrayLike<number> | null, label: string): void {
    this.rows = rows;
    this.label = label;
    this.render();
  }

  /** The samples shown: rows with a stack. */
  private sampleStacks(): Int32Array {
    const stack = this.store.stack;
    if (this.rows === null) return stack.subarray(0, Math.min(stack.length, this.store.length));
    const out = new Int32Array(this.rows.length);
    for (let i = 0; i < this.rows.length; i++) { const r = this.rows[i]; out[i] = r < stack.length ? stack[r] : -1; }
    return out;
  }

  render(): void {
    for (const [mode, button] of this.buttons) button.setAttribute('aria-selected', String(mode === this.mode));
    this.body.replaceChildren();
    const table = this.store.stackTable();
    if (table.start.length <= 1) {
      this.summary.textContent = 'No samples with callchains (record with -g, or the call graph option).';
      return;
    }
    const samples = this.sampleStacks();
    const tree = buildCallTree(table, samples, this.mode === 'bottom-up' ? 'bottom-up' : 'top-down');
    this.summary.textContent = `${tree.total[0].toLocaleString('en-US')} samples with callchains · ${this.label}`;
    if (tree.total[0] === 0) return;
    if (this.mode === 'flame') this.drawFlame(tree, table.names);
    else this.renderList(tree, table.names);
  }

  private renderList(tree: CallTree, names: readonly string[]): void {
    const list = el('table', 'rs-calltree-list', this.body);
    const head = list.createTHead().insertRow();
    for (const h of ['Total', 'Self', 'Function']) el('th', '', head, h).scope = 'col';
    const tbody = list.createTBody();
    const all = tree.total[0];
    const percent = (n: number) => `${((100 * n) / all).toFixed(1)}%`;
    let shown = 0;
    const row = (node: number) => {
      const tr = tbody.insertRow();
      tr.className = 'rs-calltree-node';
      tr.dataset.depth = String(tree.depth[node]);
      el('td', 'rs-num rs-calltree-total', tr, `${tree.total[node]} (${percent(tree.total[node])})`).dataset.count = String(tree.total[node]);
      el('td', 'rs-num rs-calltree-self', tr, String(tree.self[node]));
      const cell = el('td', 'rs-calltree-fn', tr, names[tree.name[node]] ?? '?');
      cell.style.paddingLeft = `${(tree.depth[node] - 1) * 12 + 4}px`;
    };
    const visit = (node: number) => {
      for (const child of childrenByTotal(tree, node)) {
        if (shown >= MAX_LIST_ROWS) return;
        shown++;
        row(child);
        visit(child);
      }
    };
    // Every root is listed (in the inverted tree they are the self counts per function); their subtrees share a row budget.
    for (const root of childrenByTotal(tree, 0)) { row(root); visit(root); }
  }

  private drawFlame(tree: CallTree, names: readonly string[]): void {
    const width = Math.max(200, this.body.clientWidth || this.section.clientWidth || 320);
    // Pure layout first; then one synchronous draw.
    const boxes: FlameBox[] = flameLayout(tree, 1 / width);
    let depth = 0;
    for (const b of boxes) depth = Math.max(depth, b.depth + 1);
    const canvas = el('canvas', 'rs-flame', this.body);
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `Flame graph of ${tree.total[0]} samples`);
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
      // Callers at the bottom, as flame graphs are drawn.
      const y = height - (b.depth + 1) * FLAME_ROW;
      ctx.fillStyle = colors.palette[tree.name[b.node] % colors.palette.length];
      ctx.fillRect(x, y, Math.max(1, w - 1), FLAME_ROW - 1);
      if (w > 30) {
        ctx.fillStyle = colors.foreground;
        ctx.save();
        ctx.beginPath();
        ctx.rect(x, y, w - 1, FLAME_ROW - 1);
        ctx.clip();
        ctx.fillText(names[tree.name[b.node]] ?? '?', x + 3, y + FLAME_ROW / 2);
        ctx.restore();
      }
    }
    canvas.title = 'Flame graph: width is the share of samples, callers below callees';
    canvas.dataset.boxes = String(boxes.length);
  }
}
