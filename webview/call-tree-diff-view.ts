// The call tree pane's Difference tab while two captures are compared: B (the compared capture) − A (the shown one),
// from call-tree-diff.ts, as a table of functions sortable by each change, a merged call tree and a differential flame
// graph (B's shape; red where a path holds a larger share of B's samples, blue where a smaller one).

import { el } from './dom';
import { sizeCanvas } from './draw';
import { diffColor, diffFlameLayout, nodeDelta, sortFunctionDiffs, type CaptureDiff, type DiffSort } from './call-tree-diff';

export type DiffMode = 'functions' | 'tree' | 'flame';

export interface DiffViewState {
  mode: DiffMode;
  sort: DiffSort;
}

const FLAME_ROW = 18;
const MAX_ROWS = 300;

/** A change of share in percentage points, signed: "+12.50 pp". */
export function formatDelta(points: number): string {
  const fixed = Math.abs(points).toFixed(2);
  return fixed === '0.00' ? '0.00 pp' : `${points > 0 ? '+' : '−'}${fixed} pp`;
}

/** A change of a count as a percentage of the first: "+100 %", "−50 %", "new" where A had none. */
export function formatChange(percent: number): string {
  if (percent === Infinity) return 'new';
  const rounded = Math.round(percent);
  return rounded === 0 ? '0 %' : `${rounded > 0 ? '+' : '−'}${Math.abs(rounded)} %`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Renders the difference into `body` (emptied first); `changed` is told the tab's new state (mode, sort) to render again. */
export function renderDiff(
  body: HTMLElement,
  diff: CaptureDiff,
  labels: { readonly a: string; readonly b: string },
  state: DiffViewState,
  changed: (state: DiffViewState) => void,
): void {
  body.replaceChildren();
  const head = el('p', 'rs-hint rs-diff-summary', body);
  head.textContent =
    `B − A: ${labels.b} (${count(diff.samplesB)} samples) minus ${labels.a} (${count(diff.samplesA)} samples)` +
    " · change of each function's share of its capture's samples; red: more in B, blue: less";
  const tabs = el('div', 'rs-calltree-modes rs-diff-modes', body);
  tabs.setAttribute('role', 'tablist');
  for (const [mode, text] of [
    ['functions', 'Functions'],
    ['tree', 'Call tree'],
    ['flame', 'Flame graph'],
  ] as const) {
    const b = el('button', 'rs-calltree-mode', tabs, text);
    b.type = 'button';
    b.dataset.diffMode = mode;
    b.setAttribute('role', 'tab');
    b.setAttribute('aria-selected', String(mode === state.mode));
    b.addEventListener('click', () => changed({ ...state, mode }));
  }
  if (diff.samplesA === 0 || diff.samplesB === 0) {
    el('p', 'rs-hint', body, `No samples with callchains in ${diff.samplesA === 0 ? labels.a : labels.b}: nothing to subtract.`);
    return;
  }
  if (state.mode === 'functions') renderFunctions(body, diff, state, changed);
  else if (state.mode === 'tree') renderTree(body, diff);
  else renderFlame(body, diff);
}

function deltaCell(tr: HTMLTableRowElement, className: string, points: number): void {
  const td = el('td', `rs-num ${className}`, tr, formatDelta(points));
  td.dataset.value = String(points);
  td.classList.add(points > 0.005 ? 'rs-more' : points < -0.005 ? 'rs-less' : 'rs-same');
}

function renderFunctions(body: HTMLElement, diff: CaptureDiff, state: DiffViewState, changed: (state: DiffViewState) => void): void {
  const table = el('table', 'rs-calltree-list rs-diff-functions', body);
  const head = table.createTHead().insertRow();
  const columns: [string, DiffSort | null][] = [
    ['Function', 'name'],
    ['Self A', null],
    ['Self B', null],
    ['Δ self', 'self-delta'],
    ['Change', 'self-change'],
    ['Δ total', 'total-delta'],
  ];
  for (const [text, sort] of columns) {
    const th = el('th', '', head);
    th.scope = 'col';
    if (!sort) {
      th.textContent = text;
      continue;
    }
    const b = el('button', 'rs-diff-sort', th, text);
    b.type = 'button';
    b.dataset.sort = sort;
    th.setAttribute('aria-sort', state.sort === sort ? (sort === 'name' ? 'ascending' : 'descending') : 'none');
    b.title = sort === 'name' ? 'Sort by name' : 'Sort by the size of this change, either way';
    b.addEventListener('click', () => changed({ ...state, sort }));
  }
  const tbody = table.createTBody();
  for (const f of sortFunctionDiffs(diff.functions, state.sort).slice(0, MAX_ROWS)) {
    const tr = tbody.insertRow();
    tr.className = 'rs-diff-row';
    tr.dataset.name = f.name;
    el('td', 'rs-calltree-fn', tr, f.name);
    el('td', 'rs-num rs-diff-self-a', tr, count(f.selfA)).dataset.value = String(f.selfA);
    el('td', 'rs-num rs-diff-self-b', tr, count(f.selfB)).dataset.value = String(f.selfB);
    deltaCell(tr, 'rs-diff-self-delta', f.selfDelta);
    const change = el('td', 'rs-num rs-diff-change', tr, formatChange(f.selfChange));
    change.dataset.value = String(f.selfChange);
    deltaCell(tr, 'rs-diff-total-delta', f.totalDelta);
  }
}

function renderTree(body: HTMLElement, diff: CaptureDiff): void {
  const { tree } = diff;
  const table = el('table', 'rs-calltree-list rs-diff-tree', body);
  const head = table.createTHead().insertRow();
  for (const h of ['Total A', 'Total B', 'Δ total', 'Function']) el('th', '', head, h).scope = 'col';
  const tbody = table.createTBody();
  let rows = 0;
  const byChange = (node: number) => {
    const out: number[] = [];
    for (let c = tree.firstChild[node]; c >= 0; c = tree.nextSibling[c]) out.push(c);
    return out.sort((p, q) => Math.abs(nodeDelta(diff, q)) - Math.abs(nodeDelta(diff, p)) || p - q);
  };
  const visit = (node: number) => {
    for (const c of byChange(node)) {
      if (rows++ >= MAX_ROWS) return;
      const tr = tbody.insertRow();
      tr.className = 'rs-diff-node';
      tr.dataset.depth = String(tree.depth[c]);
      el('td', 'rs-num', tr, count(tree.totalA[c]));
      el('td', 'rs-num', tr, count(tree.totalB[c]));
      deltaCell(tr, 'rs-diff-total-delta', nodeDelta(diff, c));
      const fn = el('td', 'rs-calltree-fn', tr, tree.name[c]);
      fn.style.paddingLeft = `${(tree.depth[c] - 1) * 12 + 4}px`;
      visit(c);
    }
  };
  visit(0);
}

function renderFlame(body: HTMLElement, diff: CaptureDiff): void {
  const { tree } = diff;
  const width = Math.max(200, body.clientWidth || 320);
  const boxes = diffFlameLayout(tree, 1 / width);
  let depth = 0;
  for (const b of boxes) depth = Math.max(depth, b.depth + 1);
  const frame = el('div', 'rs-flame-frame', body);
  const canvas = el('canvas', 'rs-flame rs-diff-flame', frame);
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Differential flame graph of ${count(diff.samplesB)} samples of B, coloured by the change from A`);
  const tip = el('div', 'rs-flame-tip', frame);
  tip.setAttribute('role', 'tooltip');
  tip.hidden = true;
  const dpr = window.devicePixelRatio || 1;
  sizeCanvas(canvas, width, depth * FLAME_ROW, dpr);
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = '11px sans-serif';
  ctx.textBaseline = 'middle';
  const drawn: { name: string; delta: number; x: number; y: number; width: number; color: string }[] = [];
  for (const b of boxes) {
    const x = b.x * width;
    const w = b.width * width;
    const y = b.depth * FLAME_ROW;
    const delta = nodeDelta(diff, b.node);
    const [r, g, bl] = diffColor(delta);
    const color = `rgb(${r}, ${g}, ${bl})`;
    ctx.fillStyle = color;
    ctx.fillRect(x, y, Math.max(1, w - 1), FLAME_ROW - 1);
    drawn.push({ name: tree.name[b.node], delta, x, y, width: w, color });
    if (w > 30) {
      ctx.fillStyle = '#000'; // every diff colour is light (see diffColor)
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, w - 1, FLAME_ROW - 1);
      ctx.clip();
      ctx.fillText(tree.name[b.node], x + 3, y + FLAME_ROW / 2);
      ctx.restore();
    }
  }
  // What was drawn, for tests and for the tooltip.
  canvas.dataset.boxes = JSON.stringify(
    drawn.map((d) => ({ name: d.name, delta: Number(d.delta.toFixed(4)), color: d.color, x: d.x, width: d.width, y: d.y })),
  );
  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    const fx = (e.clientX - r.left) / width;
    const row = Math.floor((e.clientY - r.top) / FLAME_ROW);
    const hit = boxes.find((b) => b.depth === row && fx >= b.x && fx < b.x + b.width);
    if (!hit) {
      tip.hidden = true;
      return;
    }
    const n = hit.node;
    tip.textContent = `${tree.name[n]}\nA ${count(tree.totalA[n])} · B ${count(tree.totalB[n])} samples · ${formatDelta(nodeDelta(diff, n))}`;
    tip.hidden = false;
    const fr = frame.getBoundingClientRect();
    tip.style.left = `${Math.min(e.clientX - fr.left + 12, Math.max(0, fr.width - tip.offsetWidth))}px`;
    tip.style.top = `${e.clientY - fr.top + 14}px`;
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
}
