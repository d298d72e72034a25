// The page controller: toolbar, snapshot list, timeline, details pane, range summary, coverage
// list and breakpoint controls, wired to the host through the typed protocol. Every incoming
// message is validated before use; every name from the system is set with textContent.

import { PROTOCOL_VERSION, type ErrorInfo, type HostToWebview, type RecordDetails, type WatchRequest, type WebviewToHost, type JsonValue } from '../shared/protocol';
import { validateHostToWebview } from '../shared/validate';
import { isViewState, type LaneGrouping, type PersistedViewState } from './viewState';
import { BatchRejected, RecordStore } from './store';
import { Timeline } from './timeline';
import { kindName } from './interaction';
import { WatchPanel } from './watch';
import { compileFilter, fieldTermKey, parseFilter, type FilterTerm } from './filter';
import { formatAbsolute, formatAddress, formatBytes, formatDuration } from './timeFormat';
import { createButton, createCheckbox, createDropdown, createTextField, registerToolkit } from './toolkit';

export interface VsCodeApi {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  getState(): unknown;
  setState(state: unknown): unknown;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, parent?: Element, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  parent?.appendChild(e);
  return e;
}

function jsonText(v: JsonValue | undefined): string {
  if (v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export class App {
  readonly store = new RecordStore();
  readonly timeline: Timeline;
  private readonly watch: WatchPanel;
  private nextRequestId = 1;
  private readonly pendingDetails = new Map<number, number>();
  private readonly pendingReveal = new Set<number>();
  private readonly snapshotList: HTMLOListElement;
  private readonly details: HTMLElement;
  private readonly rangeSummary: HTMLElement;
  private readonly coverageList: HTMLElement;
  private readonly status: HTMLElement;
  /** Per snapshot: what its recording could not see and why (from snapshotStart). */
  private readonly limitations = new Map<string, readonly string[]>();
  private readonly filterError: HTMLElement;
  private readonly followBox: ReturnType<typeof createCheckbox>;
  private readonly groupingBox: ReturnType<typeof createDropdown>;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private filterText = '';
  /** Host answers for field terms: term key → snapshot id → a 0/1 mask by snapshot-local row, or the host's error. */
  private readonly fieldMatches = new Map<string, Map<string, Uint8Array | ErrorInfo>>();
  /** Field requests in flight: request id → which term and snapshot it answers. */
  private readonly pendingField = new Map<number, { readonly key: string; readonly snapshotId: string }>();
  private fieldRequestTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly filterStatus: HTMLElement;
  rejected = 0;

  constructor(root: HTMLElement, private readonly api: VsCodeApi, initialState: unknown) {
    registerToolkit();
    const restored = isViewState(api.getState()) ? api.getState() as PersistedViewState : isViewState(initialState) ? initialState : null;

    const toolbar = el('header', 'rs-toolbar', root);
    toolbar.setAttribute('role', 'toolbar');
    toolbar.setAttribute('aria-label', 'Timeline controls');
    this.groupingBox = createDropdown('Group lanes by', [
      { value: 'cpu', label: 'By CPU' }, { value: 'thread', label: 'By thread' }, { value: 'event', label: 'By event' },
    ], { id: 'rs-grouping', value: restored?.grouping ?? 'cpu' });
    const filter = createTextField('Filter records', {
      id: 'rs-filter', placeholder: 'event:… pid:… tid:… comm:… sym:… cpu:… ip:0x… field.NAME=… field.NAME~…', value: restored?.filter ?? '',
    });
    this.filterError = el('span', 'rs-filter-error', undefined);
    this.filterError.setAttribute('role', 'alert');
    this.filterStatus = el('span', 'rs-filter-status', undefined);
    this.filterStatus.setAttribute('aria-live', 'polite');
    const zoomIn = createButton('+', 'Zoom in', { appearance: 'icon', id: 'rs-zoom-in' });
    const zoomOut = createButton('−', 'Zoom out', { appearance: 'icon', id: 'rs-zoom-out' });
    const reset = createButton('Fit', 'Show everything', { appearance: 'secondary', id: 'rs-zoom-reset' });
    this.followBox = createCheckbox('Follow latest', { id: 'rs-follow', checked: restored?.followLatest ?? false });
    const exportButton = createButton('Export HTML', 'Export the latest snapshot as a self-contained HTML file', { appearance: 'secondary', id: 'rs-export' });
    exportButton.addEventListener('click', () => {
      const latest = this.store.snapshots.at(-1);
      if (!latest) { this.status.textContent = 'Nothing to export yet.'; return; }
      this.post({ type: 'exportRequest', requestId: this.nextRequestId++, snapshotId: latest.id });
    });
    this.status = el('span', 'rs-status');
    this.status.setAttribute('aria-live', 'polite');
    toolbar.append(this.groupingBox, filter, this.filterError, this.filterStatus, zoomIn, zoomOut, reset, this.followBox, exportButton, this.status);

    const body = el('div', 'rs-body', root);
    const nav = el('nav', 'rs-snapshots', body);
    nav.setAttribute('aria-label', 'Snapshots');
    el('h2', '', nav, 'Snapshots');
    this.snapshotList = el('ol', 'rs-snapshot-list', nav);
    const center = el('main', 'rs-center', body);
    this.timeline = new Timeline(center, this.store, {
      onSelect: (row) => this.showDetails(row),
      onBrush: (range) => this.showRange(range),
      onViewChange: () => this.saveStateSoon(),
    });
    const side = el('aside', 'rs-side', body);
    this.details = el('section', 'rs-details', side);
    this.details.id = 'rs-details';
    this.details.setAttribute('aria-label', 'Record details');
    this.details.setAttribute('aria-live', 'polite');
    el('p', 'rs-hint', this.details, 'Click a record to see its details.');
    this.rangeSummary = el('section', 'rs-range', side);
    this.rangeSummary.id = 'rs-range';
    this.rangeSummary.setAttribute('aria-label', 'Selected time range');
    el('p', 'rs-hint', this.rangeSummary, 'Shift+drag on the timeline to count records in a range.');
    this.coverageList = el('section', 'rs-coverage-list', side);
    this.coverageList.setAttribute('aria-label', 'Ring coverage');
    this.watch = new WatchPanel(side, (request) => this.postWatch(request));

    if (restored) {
      this.timeline.grouping = restored.grouping;
      for (const k of restored.collapsed) this.timeline.collapsed.add(k);
      this.timeline.followLatest = restored.followLatest;
      if (restored.window) this.restoreWindow = restored.window;
      this.applyFilter(restored.filter);
    }

    this.groupingBox.addEventListener('change', () => {
      const v = this.groupingBox.value;
      if (v === 'cpu' || v === 'thread' || v === 'event') { this.timeline.setGrouping(v as LaneGrouping); this.saveStateSoon(); }
    });
    filter.addEventListener('input', () => this.applyFilter(filter.value ?? ''));
    filter.addEventListener('change', () => this.applyFilter(filter.value ?? ''));
    zoomIn.addEventListener('click', () => this.timeline.zoomBy(2));
    zoomOut.addEventListener('click', () => this.timeline.zoomBy(0.5));
    reset.addEventListener('click', () => this.timeline.resetZoom());
    this.followBox.addEventListener('change', () => {
      this.timeline.followLatest = this.followBox.checked;
      if (this.followBox.checked) this.timeline.dataChanged();
      this.saveStateSoon();
    });
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.post({ type: 'resync', have: this.store.snapshots.map((s) => ({ snapshotId: s.id, rows: s.receivedRows })) });
    });
    this.updateStatus();
    this.timeline.scheduler.schedule();
  }

  private restoreWindow: PersistedViewState['window'] | undefined;

  start(): void {
    this.post({ type: 'ready', protocolVersion: PROTOCOL_VERSION });
  }

  private post(message: WebviewToHost): void {
    this.api.postMessage(message);
  }

  private postWatch(request: WatchRequest): number {
    const requestId = this.nextRequestId++;
    this.post({ type: 'watchRequest', requestId, ...request } as WebviewToHost);
    return requestId;
  }

  /** Entry for every message event. */
  receive(data: unknown): void {
    const checked = validateHostToWebview(data);
    if (!checked.ok) {
      this.rejected++;
      console.warn(`Ringside: rejected a host message: ${checked.reason}`);
      this.post({ type: 'webviewError', message: `rejected message: ${checked.reason}` });
      return;
    }
    this.handle(checked.message);
  }

  private handle(m: HostToWebview): void {
    switch (m.type) {
      case 'init':
        if (m.title) document.title = m.title;
        return;
      case 'snapshotStart': {
        this.store.beginSnapshot(m);
        if (m.limitations?.length) this.limitations.set(m.snapshotId, m.limitations);
        if (this.filterText.includes('field.')) this.applyFilter(this.filterText); // ask about the new snapshot too
        this.renderSnapshots();
        this.renderCoverage();
        this.timeline.dataChanged();
        this.updateStatus();
        return;
      }
      case 'batch': {
        try {
          this.store.addBatch(m);
        } catch (e) {
          if (!(e instanceof BatchRejected)) throw e;
          this.post({ type: 'webviewError', message: e.message });
          return;
        }
        this.post({ type: 'batchAck', snapshotId: m.snapshotId, batchIndex: m.batchIndex });
        if (this.restoreWindow && this.store.originNs !== null && BigInt(this.restoreWindow.originNs) === this.store.originNs) {
          this.timeline.restoreWindow(this.restoreWindow.start, this.restoreWindow.end);
          this.restoreWindow = undefined;
        }
        this.timeline.dataChanged();
        this.renderSnapshots();
        this.updateStatus();
        return;
      }
      case 'detailsReply': {
        const row = this.pendingDetails.get(m.replyTo);
        if (row === undefined) return;
        this.pendingDetails.delete(m.replyTo);
        if (this.timeline.selectedRow() !== row) return; // the user moved on
        const target = this.details.querySelector('.rs-remote-details');
        if (!target) return;
        target.replaceChildren();
        if (m.details) this.renderRemoteDetails(target as HTMLElement, m.details);
        else this.renderError(target as HTMLElement, m.error);
        return;
      }
      case 'watchReply':
        this.watch.reply(m.replyTo, m.ok, m.error);
        return;
      case 'watchList':
        this.watch.setList(m.watches, m.budget);
        return;
      case 'revealReply': {
        if (!this.pendingReveal.delete(m.replyTo)) return;
        const out = this.details.querySelector('.rs-reveal-status');
        if (out) out.textContent = m.ok ? '' : `${m.error?.code}: ${m.error?.message}${m.error?.hint ? ` — ${m.error.hint}` : ''}`;
        return;
      }
      case 'fieldFilterReply': {
        const pending = this.pendingField.get(m.replyTo);
        if (!pending) return;
        this.pendingField.delete(m.replyTo);
        const bySnapshot = this.fieldMatches.get(pending.key);
        if (!bySnapshot) return; // the term left the filter meanwhile
        const snap = this.store.getSnapshot(pending.snapshotId);
        if (m.rows) {
          const mask = new Uint8Array(snap?.totalRows ?? 0);
          for (const row of new Uint32Array(m.rows)) if (row < mask.length) mask[row] = 1;
          bySnapshot.set(pending.snapshotId, mask);
        } else if (m.error) {
          bySnapshot.set(pending.snapshotId, m.error);
        }
        this.applyFilter(this.filterText);
        return;
      }
      case 'removeSnapshot':
        // Rows stay in the store (the axis would jump); the list marks the snapshot as removed.
        this.snapshotList.querySelector(`[data-snapshot="${CSS.escape(m.snapshotId)}"]`)?.classList.add('rs-removed');
        return;
    }
  }

  private applyFilter(text: string): void {
    this.filterText = text;
    const parsed = parseFilter(text);
    if (!parsed.ok) { this.filterError.textContent = parsed.error; return; }
    this.filterError.textContent = '';
    const s = this.store;
    if (!this.resolveFieldTerms(parsed.terms)) { this.saveStateSoon(); return; } // applied when the host answers
    if (parsed.terms.length === 0) { this.timeline.setFilter(null); this.saveStateSoon(); return; }
    const fieldMatches = this.fieldMatches;
    this.timeline.setFilter(compileFilter(parsed.terms, {
      eventName: (r) => s.events[s.event[r]]?.name ?? '',
      comm: (r) => s.commOf(r),
      symbol: (r) => s.symbolOf(r),
      kindName: (r) => kindName(s.kind[r]),
      pid: (r) => s.pid[r], tid: (r) => s.tid[r], cpu: (r) => s.cpu[r], misc: (r) => s.misc[r],
      ipHex: (r) => formatAddress(s.ipHi[r], s.ipLo[r]).slice(2),
      fieldMatches: (term, r) => {
        const snap = s.snapshots[s.snapshotIndexOf(r)];
        const answer = snap ? fieldMatches.get(fieldTermKey(term))?.get(snap.id) : undefined;
        return answer instanceof Uint8Array && answer[s.localRowOf(r)] === 1;
      },
    }));
    this.saveStateSoon();
  }

  /**
   * Field terms need the host (only it decodes records). True when every field term has an answer
   * for every snapshot; otherwise asks for what is missing (debounced while typing), says
   * "filtering…" and returns false — the reply re-applies the filter.
   */
  private resolveFieldTerms(terms: readonly FilterTerm[]): boolean {
    const fieldTerms = terms.filter((t) => t.key === 'field');
    const keys = new Set(fieldTerms.map(fieldTermKey));
    for (const key of [...this.fieldMatches.keys()]) if (!keys.has(key)) this.fieldMatches.delete(key);
    const missing: { term: FilterTerm; key: string; snapshotId: string }[] = [];
    const errors: string[] = [];
    let waiting = false;
    for (const term of fieldTerms) {
      const key = fieldTermKey(term);
      let bySnapshot = this.fieldMatches.get(key);
      if (!bySnapshot) { bySnapshot = new Map(); this.fieldMatches.set(key, bySnapshot); }
      for (const snap of this.store.snapshots) {
        const answer = bySnapshot.get(snap.id);
        if (answer === undefined) {
          waiting = true;
          if (![...this.pendingField.values()].some((p) => p.key === key && p.snapshotId === snap.id)) missing.push({ term, key, snapshotId: snap.id });
        } else if (!(answer instanceof Uint8Array)) {
          errors.push(`field.${term.field}: ${answer.message}`);
        }
      }
    }
    if (errors.length) this.filterError.textContent = [...new Set(errors)].join('; ');
    clearTimeout(this.fieldRequestTimer);
    if (missing.length) {
      this.fieldRequestTimer = setTimeout(() => {
        for (const { term, key, snapshotId } of missing) {
          if (!this.fieldMatches.has(key)) continue; // edited away before the timer fired
          const requestId = this.nextRequestId++;
          this.pendingField.set(requestId, { key, snapshotId });
          this.post({ type: 'fieldFilterRequest', requestId, snapshotId, name: term.field ?? '', op: term.op ?? '=', value: term.value });
        }
      }, 200);
    }
    this.filterStatus.textContent = waiting ? 'filtering…' : '';
    return !waiting;
  }

  private saveStateSoon(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.api.setState(this.viewState()), 150);
  }

  viewState(): PersistedViewState {
    const [start, end] = this.timeline.window();
    return {
      ...(this.store.originNs !== null ? { window: { originNs: this.store.originNs.toString(), start, end } } : {}),
      grouping: this.timeline.grouping,
      collapsed: [...this.timeline.collapsed],
      filter: this.filterText,
      followLatest: this.timeline.followLatest,
    };
  }

  private updateStatus(): void {
    const snaps = this.store.snapshots;
    const loading = snaps.filter((s) => s.receivedRows < s.totalRows);
    const userSpaceOnly = snaps.some((s) => this.limitations.get(s.id)?.some((line) => line.startsWith('user space only')));
    this.status.textContent = `${this.store.length.toLocaleString('en-US')} records · ${snaps.length} snapshot${snaps.length === 1 ? '' : 's'}`
      + (userSpaceOnly ? ' · user space only' : '')
      + (loading.length ? ` · loading ${loading.map((s) => `${Math.floor((100 * s.receivedRows) / Math.max(1, s.totalRows))}%`).join(', ')}` : '');
  }

  private renderSnapshots(): void {
    this.snapshotList.replaceChildren();
    for (const s of this.store.snapshots) {
      const li = el('li', 'rs-snapshot', this.snapshotList);
      li.dataset.snapshot = s.id;
      const button = el('button', 'rs-snapshot-button', li);
      button.type = 'button';
      button.setAttribute('aria-label', `Show snapshot ${s.name}`);
      el('span', 'rs-snapshot-name', button, s.name);
      el('span', 'rs-snapshot-meta', button,
        `${s.receivedRows.toLocaleString('en-US')}${s.receivedRows < s.totalRows ? `/${s.totalRows.toLocaleString('en-US')}` : ''} records · `
        + new Date(s.takenAtMs).toLocaleTimeString('en-GB'));
      const limitations = this.limitations.get(s.id) ?? [];
      if (limitations.length) {
        // The first clause ("user space only", "rings are 16 pages") on the page; the reason in the tooltip.
        const note = el('span', 'rs-snapshot-limit', button, limitations.map((line) => line.split(':')[0]).join(' · '));
        note.title = limitations.join('\n');
      }
      button.addEventListener('click', () => {
        if (Number.isFinite(s.minTime)) {
          const pad = Math.max(100, (s.maxTime - s.minTime) * 0.02);
          this.timeline.followLatest = false;
          this.followBox.checked = false;
          this.timeline.setWindow(s.minTime - pad, s.maxTime + pad);
        }
      });
    }
  }

  private renderCoverage(): void {
    this.coverageList.replaceChildren();
    el('h2', '', this.coverageList, 'Coverage');
    const table = el('table', 'rs-coverage-table', this.coverageList);
    const head = table.createTHead().insertRow();
    for (const h of ['Snapshot', 'Ring', 'Path', 'Size', 'Written', 'Overwritten', 'Lost']) {
      const th = el('th', '', head, h);
      th.scope = 'col';
    }
    const tbody = table.createTBody();
    for (const s of this.store.snapshots) {
      for (const c of s.coverage) {
        const tr = tbody.insertRow();
        for (const text of [s.name, c.label, c.path, formatBytes(c.dataSize), formatBytes(BigInt(c.bytesWritten)),
          formatBytes(BigInt(c.bytesOverwritten)), c.lost]) el('td', '', tr, text);
        if (BigInt(c.lost) > 0n) tr.classList.add('rs-lost');
      }
    }
  }

  private showDetails(row: number | null): void {
    this.details.replaceChildren();
    if (row === null) { el('p', 'rs-hint', this.details, 'Click a record to see its details.'); return; }
    const s = this.store;
    el('h2', '', this.details, s.events[s.event[row]]?.name ?? 'record');
    const table = el('table', 'rs-fields', this.details);
    const add = (k: string, v: string) => { const tr = table.insertRow(); el('th', '', tr, k).scope = 'row'; el('td', '', tr, v); };
    add('type', kindName(s.kind[row]));
    add('time', formatAbsolute(s.originNs ?? 0n, s.time[row]));
    add('comm', s.commOf(row) || '?');
    add('pid / tid', `${s.pid[row]} / ${s.tid[row]}`);
    add('cpu', String(s.cpu[row]));
    add('misc', `0x${s.misc[row].toString(16)}`);
    if (s.ipHi[row] !== 0 || s.ipLo[row] !== 0) add('ip', formatAddress(s.ipHi[row], s.ipLo[row]));
    const sym = s.symbolOf(row);
    if (sym) add('symbol', sym);
    const snap = s.snapshots[s.snapshotIndexOf(row)];
    add('snapshot', `${snap?.name ?? '?'} · row ${s.localRowOf(row)}`);
    const remote = el('div', 'rs-remote-details', this.details);
    el('p', 'rs-hint', remote, 'Loading details…');
    if (snap) {
      const requestId = this.nextRequestId++;
      this.pendingDetails.set(requestId, row);
      this.post({ type: 'detailsRequest', requestId, snapshotId: snap.id, row: s.localRowOf(row) });
    }
  }

  private renderRemoteDetails(target: HTMLElement, d: RecordDetails): void {
    const section = (title: string, entries: readonly [string, string][]) => {
      if (entries.length === 0) return;
      el('h3', '', target, title);
      const table = el('table', 'rs-fields', target);
      for (const [k, v] of entries) { const tr = table.insertRow(); el('th', '', tr, k).scope = 'row'; el('td', '', tr, v); }
    };
    const base: [string, string][] = [['record', d.type]];
    if (d.timeNs !== undefined) base.push(['time (ns)', d.timeNs]);
    section('Record', base);
    section('Fields', Object.entries(d.fields).map(([k, v]) => [k, jsonText(v)]));
    if (d.tracepointFields) section('Tracepoint fields', Object.entries(d.tracepointFields).map(([k, v]) => [k, jsonText(v)]));
    if (d.callchain && d.callchain.length > 0) {
      el('h3', '', target, 'Callchain');
      const list = el('ol', 'rs-callchain', target);
      for (const f of d.callchain) {
        el('li', '', list, `${f.ip} ${f.symbol ?? '?'}${f.file ? ` (${f.file}${f.line ? `:${f.line}` : ''})` : ''}`);
      }
    }
    if (d.source) {
      const src = d.source;
      el('h3', '', target, 'Source');
      const row = el('div', 'rs-source', target);
      el('code', '', row, `${src.file}:${src.line}`);
      const reveal = createButton('Reveal in editor', `Reveal ${src.file}:${src.line} in the editor`, { appearance: 'secondary', id: 'rs-reveal' });
      reveal.addEventListener('click', () => {
        const requestId = this.nextRequestId++;
        this.pendingReveal.add(requestId);
        this.post({ type: 'revealRequest', requestId, file: src.file, line: src.line });
      });
      row.appendChild(reveal);
      el('div', 'rs-reveal-status rs-hint', target);
    }
  }

  private renderError(target: HTMLElement, error: ErrorInfo | undefined): void {
    const p = el('p', 'rs-hint', target, `${error?.code ?? 'error'}: ${error?.message ?? 'no details'}`);
    if (error?.hint) p.title = error.hint;
  }

  private showRange(range: [number, number] | null): void {
    this.rangeSummary.replaceChildren();
    if (!range) { el('p', 'rs-hint', this.rangeSummary, 'Shift+drag on the timeline to count records in a range.'); return; }
    const [t0, t1] = range;
    const rows = this.timeline.rowsInRange(t0, t1);
    const s = this.store;
    el('h2', '', this.rangeSummary, 'Selected range');
    el('p', 'rs-range-span', this.rangeSummary, `${formatDuration(t1 - t0)} · ${rows.length.toLocaleString('en-US')} records`);
    const perEvent = new Map<string, number>();
    const perThread = new Map<string, number>();
    for (const r of rows) {
      const e = s.events[s.event[r]]?.name ?? '?';
      perEvent.set(e, (perEvent.get(e) ?? 0) + 1);
      const t = `${s.commOf(r) || '?'} ${s.tid[r]}`;
      perThread.set(t, (perThread.get(t) ?? 0) + 1);
    }
    const table = (title: string, counts: Map<string, number>, cls: string) => {
      el('h3', '', this.rangeSummary, title);
      const t = el('table', `rs-counts ${cls}`, this.rangeSummary);
      for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
        const tr = t.insertRow();
        el('th', '', tr, k).scope = 'row';
        el('td', '', tr, v.toLocaleString('en-US'));
      }
    };
    table('Per event', perEvent, 'rs-counts-event');
    table('Per thread', perThread, 'rs-counts-thread');
    const zoom = createButton('Zoom to range', 'Zoom to the selected range', { appearance: 'secondary', id: 'rs-zoom-range' });
    zoom.addEventListener('click', () => { this.timeline.clearBrush(); this.timeline.setWindow(t0, t1); });
    this.rangeSummary.appendChild(zoom);
  }
}
