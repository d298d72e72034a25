// The details pane: what the page knows of the selected record at once (from the store's columns), then
// everything the host decodes for it (fields, tracepoint fields, callchain, source line with "Reveal in
// editor"), asked for by request and shown when the answer is still about the selected record.

import type { CallchainEntry, ErrorInfo, EventKind, HostToWebview, JsonValue, RecordDetails, WebviewToHost } from '../shared/protocol';
import type { RecordStore } from './store';
import { recordTypeName } from '../shared/columns';
import { formatAddress, type TimeBase } from './time-format';
import { createButton } from './toolkit';
import { el } from './dom';

type DetailsReply = Extract<HostToWebview, { type: 'detailsReply' }>;
type RevealReply = Extract<HostToWebview, { type: 'revealReply' }>;

/** How the pane asks the host: the page's one request counter and its one way to post. */
export interface HostRequests {
  nextRequestId(): number;
  post(message: WebviewToHost): void;
}

/** A frame as perf script names it: `function+0xoff`, else [kernel] (kallsyms unreadable) or [unknown]. */
export function frameName(frame: CallchainEntry, symbols: readonly string[] | undefined): string {
  const name = frame.symbol !== undefined ? symbols?.[frame.symbol] : undefined;
  return name ?? (frame.kernel ? '[kernel]' : '[unknown]');
}

/** Kinds of event a trigger can be (what Snapshot When…'s input box and `--snapshot-on` name); other kinds are not offered. */
const TRIGGER_KINDS: ReadonlySet<EventKind> = new Set(['tracepoint', 'software', 'breakpoint']);

/**
 * The event spec a record's event could be set as a trigger with, or undefined: only a sample fires its event (side-band
 * records such as COMM or MMAP carry the event of the ring they were read from, which did not fire).
 */
export function triggerSpecOf(recordType: number, event: { readonly name: string; readonly kind: EventKind } | undefined): string | undefined {
  return event && recordTypeName(recordType) === 'SAMPLE' && TRIGGER_KINDS.has(event.kind) ? event.name : undefined;
}

function jsonText(v: JsonValue | undefined): string {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export class DetailsPane {
  private readonly details: HTMLElement;
  private readonly pendingDetails = new Map<number, number>();
  private readonly pendingReveal = new Set<number>();
  /** Whether the host has an editor to reveal source in (the panel); the offline page only shows file:line. */
  private editor = false;
  /** Whether the host can start a recording (the panel); the offline page has nothing to record with. */
  private recorder = false;
  /** The record shown (store row: selected on a chart, or picked among those without a time), or null. */
  private row: number | null = null;

  constructor(
    parent: HTMLElement,
    private readonly store: RecordStore,
    private readonly host: HostRequests,
    private readonly timeBase: () => TimeBase,
  ) {
    this.details = el('section', 'rs-details', parent);
    this.details.id = 'rs-details';
    this.details.setAttribute('aria-label', 'Record details');
    this.details.setAttribute('aria-live', 'polite');
    el('p', 'rs-hint', this.details, 'Click a record to see its details.');
  }

  /** The host's decoded details, if they answer the record still selected. */
  detailsReply(m: DetailsReply): void {
    const row = this.pendingDetails.get(m.replyTo);
    if (row === undefined) return;
    this.pendingDetails.delete(m.replyTo);
    if (this.row !== row) return; // the user moved on
    const target = this.details.querySelector('.rs-remote-details');
    if (!target) return;
    target.replaceChildren();
    if (m.details) this.renderRemoteDetails(target as HTMLElement, m.details);
    else this.renderError(target as HTMLElement, m.error);
  }

  setEditor(available: boolean): void {
    this.editor = available;
  }

  setRecorder(available: boolean): void {
    this.recorder = available;
  }

  revealReply(m: RevealReply): void {
    if (!this.pendingReveal.delete(m.replyTo)) return;
    const out = this.details.querySelector('.rs-reveal-status');
    if (out) out.textContent = m.ok ? '' : `${m.error?.code}: ${m.error?.message}${m.error?.hint ? ` — ${m.error.hint}` : ''}`;
  }

  show(row: number | null): void {
    this.details.replaceChildren();
    this.row = row;
    if (row === null) {
      el('p', 'rs-hint', this.details, 'Click a record to see its details.');
      return;
    }
    const s = this.store;
    el('h2', '', this.details, s.events[s.event[row]]?.name ?? 'record');
    const table = el('table', 'rs-fields', this.details);
    const add = (k: string, v: string) => {
      const tr = table.insertRow();
      el('th', '', tr, k).scope = 'row';
      el('td', '', tr, v);
    };
    add('type', recordTypeName(s.kind[row]));
    const time = table.insertRow();
    el('th', '', time, 'time').scope = 'row';
    const cell = el('td', 'rs-time', time);
    el('span', 'rs-time-main', cell);
    // The exact perf clock: a second line when the toolbar's Perf clock is on, else on hover.
    el('span', 'rs-time-raw', cell);
    this.row = row;
    this.updateTime();
    add('comm', s.commOf(row) || '?');
    add('pid / tid', `${s.pid[row]} / ${s.tid[row]}`);
    add('cpu', String(s.cpu[row]));
    add('misc', `0x${s.misc[row].toString(16)}`);
    if (s.ipHi[row] !== 0 || s.ipLo[row] !== 0) add('ip', formatAddress(s.ipHi[row], s.ipLo[row]));
    const sym = s.symbolOf(row);
    if (sym) add('symbol', sym);
    const snap = s.snapshots[s.snapshotIndexOf(row)];
    add('snapshot', `${snap?.name ?? '?'} · row ${s.localRowOf(row)}`);
    const trigger = this.recorder ? triggerSpecOf(s.kind[row], s.events[s.event[row]]) : undefined;
    if (trigger !== undefined) {
      const button = createButton('Snapshot When This Fires', `Record, and take a snapshot each time ${trigger} fires (Snapshot When…)`, {
        appearance: 'secondary',
        id: 'rs-snapshot-when',
      });
      button.addEventListener('click', () => this.host.post({ type: 'snapshotWhenRequest', event: trigger }));
      el('div', 'rs-snapshot-when', this.details).appendChild(button);
    }
    const remote = el('div', 'rs-remote-details', this.details);
    el('p', 'rs-hint', remote, 'Loading details…');
    if (snap) {
      const requestId = this.host.nextRequestId();
      this.pendingDetails.set(requestId, row);
      this.host.post({ type: 'detailsRequest', requestId, snapshotId: snap.id, row: s.localRowOf(row) });
    }
  }

  private renderRemoteDetails(target: HTMLElement, d: RecordDetails): void {
    const section = (title: string, entries: readonly [string, string][]) => {
      if (entries.length === 0) return;
      el('h3', '', target, title);
      const table = el('table', 'rs-fields', target);
      for (const [k, v] of entries) {
        const tr = table.insertRow();
        el('th', '', tr, k).scope = 'row';
        el('td', '', tr, v);
      }
    };
    section('Record', [['record', d.type]]);
    if (d.timeNs !== undefined) {
      // The host's raw perf clock, as perf script has it, only when the page shows the perf clock.
      const tr = (target.querySelector('table.rs-fields') as HTMLTableElement).insertRow();
      tr.classList.add('rs-perf-clock-only');
      el('th', '', tr, 'perf clock (ns)').scope = 'row';
      el('td', '', tr, d.timeNs);
      tr.hidden = !this.timeBase().perfClock;
    }
    section(
      'Fields',
      Object.entries(d.fields).map(([k, v]) => [k, jsonText(v)]),
    );
    if (d.tracepointFields)
      section(
        'Tracepoint fields',
        Object.entries(d.tracepointFields).map(([k, v]) => [k, jsonText(v)]),
      );
    if (d.callchain && d.callchain.length > 0) {
      el('h3', '', target, 'Callchain');
      const list = el('ol', 'rs-callchain', target);
      for (const f of d.callchain) {
        const item = el('li', f.kernel ? 'rs-frame rs-frame-kernel' : 'rs-frame', list);
        el('span', 'rs-frame-name', item, frameName(f, d.symbols));
        el('span', 'rs-frame-ip', item, ` ${f.ip}`);
        if (f.file === undefined || f.line === undefined) continue;
        const { file, line } = f;
        el('span', 'rs-frame-source', item, ` ${file}:${line}`);
        if (!this.editor) continue;
        // Click or Enter asks the host to open the frame's line in the editor.
        item.classList.add('rs-frame-link');
        item.tabIndex = 0;
        item.setAttribute('role', 'link');
        item.title = `Reveal ${file}:${line} in the editor`;
        item.addEventListener('click', () => this.reveal(file, line));
        item.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            this.reveal(file, line);
          }
        });
      }
      el('div', 'rs-reveal-status rs-hint', target);
    }
    if (d.source) {
      const src = d.source;
      el('h3', '', target, 'Source');
      const row = el('div', 'rs-source', target);
      el('code', '', row, `${src.file}:${src.line}`);
      const reveal = createButton('Reveal in editor', `Reveal ${src.file}:${src.line} in the editor`, { appearance: 'secondary', id: 'rs-reveal' });
      reveal.addEventListener('click', () => this.reveal(src.file, src.line));
      if (this.editor) row.appendChild(reveal);
      if (!target.querySelector('.rs-reveal-status')) el('div', 'rs-reveal-status rs-hint', target);
    }
  }

  /** Shows the selected record's time in the page's time base (after it changed). */
  updateTime(): void {
    const row = this.row;
    const base = this.timeBase();
    const cell = this.details.querySelector<HTMLElement>('.rs-time');
    if (cell && row !== null) {
      const t = this.store.time[row];
      const raw = Number.isFinite(t) ? `${base.rawNs(t)} ns` : '';
      cell.querySelector('.rs-time-main')!.textContent = Number.isFinite(t) ? base.format(t) : 'no time (not on the axis)';
      const rawLine = cell.querySelector<HTMLElement>('.rs-time-raw')!;
      rawLine.textContent = raw;
      rawLine.hidden = !base.perfClock || raw === '';
      cell.title = raw === '' ? '' : `perf clock ${raw}`;
    }
    for (const tr of this.details.querySelectorAll<HTMLElement>('.rs-perf-clock-only')) tr.hidden = !base.perfClock;
  }

  private reveal(file: string, line: number): void {
    const requestId = this.host.nextRequestId();
    this.pendingReveal.add(requestId);
    this.host.post({ type: 'revealRequest', requestId, file, line });
  }

  private renderError(target: HTMLElement, error: ErrorInfo | undefined): void {
    const p = el('p', 'rs-hint', target, `${error?.code ?? 'error'}: ${error?.message ?? 'no details'}`);
    if (error?.hint) p.title = error.hint;
  }
}
