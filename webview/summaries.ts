// The side panes that summarise: the brushed time range (records per event and per thread), the records of the
// shown capture that have no time (listed, since no lane can place them), and the ring coverage table of every snapshot.

import type { CoverageFact } from '../shared/protocol';
import type { RecordStore } from './store';
import { el } from './dom';
import { formatDuration, type TimeBase } from './time-format';
import { formatBytes } from '../native/abi/units';
import { recordTypeName } from '../shared/columns';
import { createButton } from './toolkit';

/** The brushed range in `target`, or the hint when there is none; `zoomTo` backs its Zoom to range button. */
export function renderRangeSummary(
  target: HTMLElement,
  range: [number, number] | null,
  store: RecordStore,
  rowsInRange: (t0: number, t1: number) => number[],
  zoomTo: (t0: number, t1: number) => void,
  base: TimeBase,
): void {
  target.replaceChildren();
  if (!range) {
    el('p', 'rs-hint', target, 'Shift+drag on the timeline to count records in a range.');
    return;
  }
  const [t0, t1] = range;
  const rows = rowsInRange(t0, t1);
  const s = store;
  el('h2', '', target, 'Selected range');
  el('p', 'rs-range-span', target, `${formatDuration(t1 - t0)} · ${rows.length.toLocaleString('en-US')} records`);
  el('p', 'rs-range-bounds', target, `from ${base.format(t0)} to ${base.format(t1)}`);
  const perEvent = new Map<string, number>();
  const perThread = new Map<string, number>();
  for (const r of rows) {
    const e = s.events[s.event[r]]?.name ?? '?';
    perEvent.set(e, (perEvent.get(e) ?? 0) + 1);
    const t = `${s.commOf(r) || '?'} ${s.tid[r]}`;
    perThread.set(t, (perThread.get(t) ?? 0) + 1);
  }
  const table = (title: string, counts: Map<string, number>, cls: string) => {
    el('h3', '', target, title);
    const t = el('table', `rs-counts ${cls}`, target);
    for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
      const tr = t.insertRow();
      el('th', '', tr, k).scope = 'row';
      el('td', '', tr, v.toLocaleString('en-US'));
    }
  };
  table('Per event', perEvent, 'rs-counts-event');
  table('Per thread', perThread, 'rs-counts-thread');
  const zoom = createButton('Zoom to range', 'Zoom to the selected range', { appearance: 'secondary', id: 'rs-zoom-range' });
  zoom.addEventListener('click', () => zoomTo(t0, t1));
  target.appendChild(zoom);
}

/** Per snapshot and ring: path, size, bytes written and overwritten, records lost. */
export function renderCoverageTable(target: HTMLElement, snapshots: readonly { readonly name: string; readonly coverage: readonly CoverageFact[] }[]): void {
  target.replaceChildren();
  el('h2', '', target, 'Coverage');
  const table = el('table', 'rs-coverage-table', target);
  const head = table.createTHead().insertRow();
  for (const h of ['Snapshot', 'Ring', 'Path', 'Size', 'Written', 'Overwritten', 'Lost']) {
    const th = el('th', '', head, h);
    th.scope = 'col';
  }
  const tbody = table.createTBody();
  for (const s of snapshots) {
    for (const c of s.coverage) {
      const tr = tbody.insertRow();
      for (const text of [
        s.name,
        c.label,
        c.path,
        formatBytes(c.dataSize),
        formatBytes(BigInt(c.bytesWritten)),
        formatBytes(BigInt(c.bytesOverwritten)),
        c.lost,
      ])
        el('td', '', tr, text).title = text; // cut with an ellipsis when narrow
      if (BigInt(c.lost) > 0n) tr.classList.add('rs-lost');
    }
  }
}

/** How many records without a time the list shows; the heading counts all of them. */
export const UNTIMED_LISTED = 100;

/**
 * The records of capture `snapshotIndex` without a time, as a list (event, type, comm, pid/tid, cpu) whose rows `open`
 * shows in the details; hidden when the capture has none.
 */
export function renderUntimed(target: HTMLElement, store: RecordStore, snapshotIndex: number, open: (row: number) => void): void {
  target.replaceChildren();
  const snap = store.snapshots[snapshotIndex];
  target.hidden = !snap || snap.untimedRows === 0;
  if (!snap || snap.untimedRows === 0) return;
  el('h2', '', target, `Without a time (${snap.untimedRows.toLocaleString('en-US')})`);
  el('p', 'rs-hint', target, 'Records without a time (perf stamps those it synthesizes for what already ran with 0): counted, not on the axis.');
  const table = el('table', 'rs-counts rs-untimed-table', target);
  const time = store.time;
  let listed = 0;
  for (const [a, b] of store.rangesOf(snapshotIndex)) {
    for (let row = a; row < b && listed < UNTIMED_LISTED; row++) {
      if (time[row] === time[row]) continue;
      listed++;
      const tr = table.insertRow();
      tr.tabIndex = 0;
      tr.dataset.row = String(row);
      const th = el('th', '', tr, `${store.events[store.event[row]]?.name ?? '?'} · ${recordTypeName(store.kind[row])}`);
      th.scope = 'row';
      el('td', '', tr, `${store.commOf(row) || '?'} ${store.pid[row]}/${store.tid[row]} · cpu ${store.cpu[row]}`);
      tr.addEventListener('click', () => open(row));
      tr.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          open(row);
        }
      });
    }
  }
  if (snap.untimedRows > listed) el('p', 'rs-hint', target, `The first ${listed.toLocaleString('en-US')} are listed.`);
}
