// The side panes that summarise: the brushed time range (records per event and per thread) and the ring
// coverage table of every snapshot.

import type { CoverageFact } from '../shared/protocol';
import type { RecordStore } from './store';
import { el } from './dom';
import { formatBytes, formatDuration, type TimeBase } from './time-format';
import { createButton } from './toolkit';

/** The brushed range in `target`, or the hint when there is none; `zoomTo` backs its Zoom to range button. */
export function renderRangeSummary(target: HTMLElement, range: [number, number] | null, store: RecordStore,
  rowsInRange: (t0: number, t1: number) => number[], zoomTo: (t0: number, t1: number) => void, base: TimeBase): void {
    target.replaceChildren();
    if (!range) { el('p', 'rs-hint', target, 'Shift+drag on the timeline to count records in a range.'); return; }
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
        for (const text of [s.name, c.label, c.path, formatBytes(c.dataSize), formatBytes(BigInt(c.bytesWritten)),
          formatBytes(BigInt(c.bytesOverwritten)), c.lost]) el('td', '', tr, text).title = text; // cut with an ellipsis when narrow
        if (BigInt(c.lost) > 0n) tr.classList.add('rs-lost');
      }
    }
  }
