// The page controller: the toolbar, the snapshot list and the filter, and the wiring of the timeline, the
// details pane, the summaries and the breakpoint controls to the host through the typed protocol. Every
// incoming message is validated before use; every name from the system is set with textContent.

import { PROTOCOL_VERSION, type ErrorInfo, type HostToWebview, type WatchRequest, type WebviewToHost } from '../shared/protocol';
import { validateHostToWebview } from '../shared/validate';
import { isViewState, type LaneGrouping, type PersistedViewState } from './view-state';
import { BatchRejected, RecordStore } from './store';
import { Timeline } from './timeline';
import { recordTypeName } from '../shared/columns';
import { WatchPanel } from './watch';
import { DetailsPane } from './details';
import { renderCoverageTable, renderRangeSummary } from './summaries';
import { CallTreeView } from './call-tree-view';
import { el } from './dom';
import { renderLegend } from './legend';
import { stateLegendEntries } from './state-lane';
import { Drawer } from './drawer';
import { compileFilter, fieldTermKey, parseFilter, type FilterTerm } from './filter';
import { formatAddress } from './time-format';
import { createButton, createCheckbox, createDropdown, createTextField, registerToolkit } from './toolkit';

export interface VsCodeApi {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  getState(): unknown;
  setState(state: unknown): unknown;
}

export class App {
  readonly store = new RecordStore();
  readonly timeline: Timeline;
  private readonly watch: WatchPanel;
  private nextRequestId = 1;
  private readonly snapshotList: HTMLOListElement;
  private readonly details: DetailsPane;
  private readonly rangeSummary: HTMLElement;
  readonly callTree: CallTreeView;
  private brushed = false;
  private readonly coverageList: HTMLElement;
  private readonly legend: HTMLElement;
  private readonly drawer: Drawer;
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
  private readonly filterField: ReturnType<typeof createTextField>;
  /** "3 of 24 matches" while a filter is on. */
  private readonly matchCount: HTMLElement;
  /** Whether the applied filter has terms (the toolbar then counts "N of M"). */
  private filtering = false;
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
    const filter = this.filterField = createTextField('Filter records', {
      id: 'rs-filter', placeholder: 'event:… pid:… tid:… comm:… sym:… stack:… cpu:… ip:0x… field.NAME=… field.NAME~…',
      value: restored?.filter ?? '',
    });
    this.filterError = el('span', 'rs-filter-error', undefined);
    this.filterError.setAttribute('role', 'alert');
    this.filterStatus = el('span', 'rs-filter-status', undefined);
    this.filterStatus.setAttribute('aria-live', 'polite');
    this.matchCount = el('span', 'rs-match-count', undefined);
    this.matchCount.id = 'rs-match-count';
    this.matchCount.setAttribute('aria-live', 'polite');
    const previousMatch = createButton('↑', 'Previous match (Shift+Enter in the filter)',
      { appearance: 'icon', id: 'rs-match-previous' });
    const nextMatch = createButton('↓', 'Next match (Enter in the filter)', { appearance: 'icon', id: 'rs-match-next' });
    previousMatch.addEventListener('click', () => this.step(-1));
    nextMatch.addEventListener('click', () => this.step(1));
    filter.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      if ((filter.value ?? '') !== this.filterText) this.applyFilter(filter.value ?? ''); // (re-applying would drop the selection)
      this.step(e.shiftKey ? -1 : 1);
    });
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
    toolbar.append(this.groupingBox, filter, this.filterError, this.filterStatus, this.matchCount, previousMatch, nextMatch,
      zoomIn, zoomOut, reset, this.followBox, exportButton, this.status);

    // The snapshots as a strip under the toolbar, the timeline over the whole width, the details in a drawer below it.
    const nav = el('nav', 'rs-snapshots', root);
    nav.setAttribute('aria-label', 'Snapshots');
    el('h2', '', nav, 'Snapshots');
    this.snapshotList = el('ol', 'rs-snapshot-list', nav);
    const body = el('div', 'rs-body', root);
    const center = el('main', 'rs-center', body);
    this.legend = el('div', 'rs-legend', center);
    this.legend.setAttribute('role', 'list');
    this.legend.setAttribute('aria-label', 'Event colours');
    this.legend.hidden = true;
    this.timeline = new Timeline(center, this.store, {
      onSelect: (row) => { this.details.show(row); this.updateMatchCount(); },
      onLanesChanged: () => { this.updateStatus(); this.updateMatchCount(); },
      onBrush: (range) => {
        renderRangeSummary(this.rangeSummary, range, this.store, (t0, t1) => this.timeline.rowsInRange(t0, t1),
          (t0, t1) => { this.timeline.clearBrush(); this.timeline.setWindow(t0, t1); });
        // The call tree follows the range; without one it shows the whole capture.
        this.brushed = range !== null;
        this.callTree.setSelection({ range, shown: range ? this.timeline.shownRows() : null }, range ? 'selected range' : 'whole capture');
      },
      onViewChange: () => this.saveStateSoon(),
    });
    this.drawer = new Drawer(body, restored?.drawerHeight, () => body.clientHeight - 6, () => this.saveStateSoon());
    const side = this.drawer.element;
    this.details = new DetailsPane(
      side,
      this.store,
      { nextRequestId: () => this.nextRequestId++, post: (m) => this.post(m) },
      () => this.timeline.selectedRow(),
    );
    this.rangeSummary = el('section', 'rs-range', side);
    this.rangeSummary.id = 'rs-range';
    this.rangeSummary.setAttribute('aria-label', 'Selected time range');
    el('p', 'rs-hint', this.rangeSummary, 'Shift+drag on the timeline to count records in a range.');
    this.callTree = new CallTreeView(side, this.store, {
      host: { nextRequestId: () => this.nextRequestId++, post: (m) => this.post(m) },
      filterText: () => this.filterText,
      filterTo: (text) => { this.filterField.value = text; this.applyFilter(text); },
    });
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
        this.details.setEditor(m.editor === true);
        this.callTree.setEditor(m.editor === true);
        return;
      case 'snapshotStart': {
        this.store.beginSnapshot(m);
        if (m.limitations?.length) this.limitations.set(m.snapshotId, m.limitations);
        if (this.filterText.includes('field.')) this.applyFilter(this.filterText); // ask about the new snapshot too
        this.renderSnapshots();
        this.renderLegend();
        renderCoverageTable(this.coverageList, this.store.snapshots);
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
        // A capture with callchains opens with the call tree of the whole capture, once all of it is here.
        const received = this.store.getSnapshot(m.snapshotId);
        if (!this.brushed && m.stackIndex && received && this.store.isComplete(received)) this.callTree.setSelection({ range: null, shown: null }, 'whole capture');
        if (this.restoreWindow && this.store.originNs !== null && BigInt(this.restoreWindow.originNs) === this.store.originNs) {
          this.timeline.restoreWindow(this.restoreWindow.start, this.restoreWindow.end);
          this.restoreWindow = undefined;
        }
        this.timeline.dataChanged();
        this.renderSnapshots();
        // A batch may name an event its snapshot did not announce (the store interns a placeholder for it).
        if (this.legend.dataset.events !== String(this.store.events.length)) this.renderLegend();
        this.updateStatus();
        return;
      }
      case 'threadStates':
        // Drawn as each thread lane's state band; the legend names the states.
        if (this.store.addThreadStates(m)) { this.renderLegend(); this.timeline.dataChanged(); }
        return;
      case 'detailsReply':
        this.details.detailsReply(m);
        return;
      case 'watchReply':
        this.watch.reply(m.replyTo, m.ok, m.error);
        return;
      case 'watchList':
        this.watch.setList(m.watches, m.budget);
        return;
      case 'revealReply':
        this.details.revealReply(m);
        this.callTree.revealReply(m);
        return;
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

  private renderLegend(): void {
    renderLegend(this.legend, this.store.events, stateLegendEntries(this.store.threadStates));
  }

  private applyFilter(text: string): void {
    this.filterText = text;
    const parsed = parseFilter(text);
    // A filter that does not parse says why and leaves the lanes as they were (never an empty timeline without a word).
    this.filterField.setAttribute('aria-invalid', String(!parsed.ok));
    this.filterField.classList.toggle('rs-invalid', !parsed.ok);
    if (!parsed.ok) { this.filterError.textContent = parsed.error; return; }
    this.filterError.textContent = '';
    this.filtering = parsed.terms.length > 0;
    const s = this.store;
    if (!this.resolveFieldTerms(parsed.terms)) { this.saveStateSoon(); return; } // applied when the host answers
    if (parsed.terms.length === 0) { this.timeline.setFilter(null); this.saveStateSoon(); return; }
    const fieldMatches = this.fieldMatches;
    this.timeline.setFilter(compileFilter(parsed.terms, {
      eventName: (r) => s.events[s.event[r]]?.name ?? '',
      comm: (r) => s.commOf(r),
      symbol: (r) => s.symbolOf(r),
      stackFunctions: (r) => s.stackFunctionsOf(r),
      kindName: (r) => recordTypeName(s.kind[r]),
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
      drawerHeight: this.drawer.height,
    };
  }

  /** Enter / Shift+Enter in the filter and the ↓ ↑ buttons: select the next or previous record the filter shows. */
  private step(direction: 1 | -1): void {
    if (!this.timeline.stepMatch(direction)) this.matchCount.textContent = 'no records match';
  }

  private updateMatchCount(): void {
    if (!this.filtering) { this.matchCount.textContent = ''; return; }
    const shown = this.timeline.shownCount();
    const at = this.timeline.selectedMatchIndex();
    this.matchCount.textContent = shown === 0 ? 'no records match'
      : `${at > 0 ? `${at.toLocaleString('en-US')} of ` : ''}${shown.toLocaleString('en-US')} match${shown === 1 ? '' : 'es'}`;
  }

  private updateStatus(): void {
    const snaps = this.store.snapshots;
    const loading = snaps.filter((s) => s.receivedRows < s.totalRows);
    const userSpaceOnly = snaps.some((s) => this.limitations.get(s.id)?.some((line) => line.startsWith('user space only')));
    // With a filter on, the count is what it shows out of every record received.
    const shown = this.filtering ? `${this.timeline.shownCount().toLocaleString('en-US')} of ` : '';
    this.status.textContent = `${shown}${this.store.length.toLocaleString('en-US')} records`
      + ` · ${snaps.length} snapshot${snaps.length === 1 ? '' : 's'}`
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
      button.title = [button.textContent ?? '', ...limitations].join('\n'); // all of it, where the strip cuts it short
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




}
