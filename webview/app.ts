// The page controller: the toolbar, the snapshot list and the filter, and the wiring of the timeline, the
// details pane, the summaries and the breakpoint controls to the host through the typed protocol. The store keeps
// every capture; the page shows one at a time (a new capture when it arrives, or the one picked in the strip). Every
// incoming message is validated before use; every name from the system is set with textContent.

import { PROTOCOL_VERSION, type ErrorInfo, type HostToWebview, type WatchRequest, type WebviewToHost } from '../shared/protocol';
import { validateHostToWebview } from '../shared/validate';
import { isViewState, type LaneGrouping, type PersistedViewState } from './view-state';
import { BatchRejected, RecordStore, type SnapshotEntry } from './store';
import { Timeline } from './timeline';
import { recordTypeName } from '../shared/columns';
import { WatchPanel } from './watch';
import { DetailsPane } from './details';
import { renderCoverageTable, renderRangeSummary, renderUntimed } from './summaries';
import { CallTreeView } from './call-tree-view';
import { el } from './dom';
import { renderLegend } from './legend';
import { stateLegendEntries } from './state-lane';
import { Drawer } from './drawer';
import { compileFilter, fieldTermKey, parseFilter, type FilterTerm } from './filter';
import { formatAddress } from './time-format';
import { HitValueStore } from './value-lane';
import { createButton, createCheckbox, createDropdown, createTextField, registerToolkit } from './toolkit';

/** How the recorder's limitation begins when this host's hardware breakpoints never fire (native/perf/breakpoint-delivery.ts). */
const SILENT_BREAKPOINTS_PREFIX = 'hardware breakpoints do not fire on this machine';
/** What an empty capture says on such a host, in the status line and on its chip (the evidence and the fix in its tooltip). */
const HITS_UNSEEN = 'no hits can be seen on this machine: hardware breakpoints do not fire here';
/** The host's work for the page is shown once it has taken this long (the progress notification's rule): no flash for short work. */
const TASK_SHOWN_AFTER_MS = 1000;

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
  /** The shown capture's records without a time, listed (no lane places them). */
  private readonly untimed: HTMLElement;
  /** Which capture and how many untimed rows the list was rendered for. */
  private untimedKey = '';
  readonly callTree: CallTreeView;
  /** The logpoint values of the value lanes' hits, asked of the host (the drawer's detailsRequest) as the lanes are drawn. */
  private readonly hitValues = new HitValueStore(
    (snapshotId, row) => {
      const requestId = this.nextRequestId++;
      this.post({ type: 'detailsRequest', requestId, snapshotId, row });
      return requestId;
    },
    () => {
      for (const t of this.timelines()) t.scheduler.schedule();
    },
  );
  private brushed = false;
  private readonly coverageList: HTMLElement;
  private readonly legend: HTMLElement;
  /** What the legend lists (event indexes and state names), so a batch that changes nothing leaves it alone. */
  private legendKey = '';
  private readonly drawer: Drawer;
  private readonly status: HTMLElement;
  /** Per snapshot: what its recording could not see and why (from snapshotStart). */
  private readonly limitations = new Map<string, readonly string[]>();
  private readonly filterError: HTMLElement;
  private readonly followBox: ReturnType<typeof createCheckbox>;
  private readonly perfClockBox: ReturnType<typeof createCheckbox>;
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
  /** The host's work in progress for this page (TaskProgress), each shown with its Cancel once it has taken a second. */
  private readonly tasksElement: HTMLElement;
  private readonly tasks = new Map<string, { title: string; step: string; cancellable: boolean; timer?: ReturnType<typeof setTimeout>; shown: boolean }>();
  /** Whether the applied filter has terms (the toolbar then counts "N of M"). */
  private filtering = false;
  rejected = 0;

  constructor(
    root: HTMLElement,
    private readonly api: VsCodeApi,
    initialState: unknown,
  ) {
    registerToolkit();
    const restored = isViewState(api.getState()) ? (api.getState() as PersistedViewState) : isViewState(initialState) ? initialState : null;

    const toolbar = el('header', 'rs-toolbar', root);
    toolbar.setAttribute('role', 'toolbar');
    toolbar.setAttribute('aria-label', 'Timeline controls');
    this.groupingBox = createDropdown(
      'Group lanes by',
      [
        { value: 'cpu', label: 'By CPU' },
        { value: 'thread', label: 'By thread' },
        { value: 'event', label: 'By event' },
      ],
      { id: 'rs-grouping', value: restored?.grouping ?? 'thread' },
    );
    const filter = (this.filterField = createTextField('Filter records', {
      id: 'rs-filter',
      placeholder: 'event:… pid:… tid:… comm:… sym:… stack:… cpu:… ip:0x… field.NAME=… field.NAME~…',
      value: restored?.filter ?? '',
    }));
    this.filterError = el('span', 'rs-filter-error', undefined);
    this.filterError.setAttribute('role', 'alert');
    this.filterStatus = el('span', 'rs-filter-status', undefined);
    this.filterStatus.setAttribute('aria-live', 'polite');
    this.matchCount = el('span', 'rs-match-count', undefined);
    this.matchCount.id = 'rs-match-count';
    this.matchCount.setAttribute('aria-live', 'polite');
    const previousMatch = createButton('↑', 'Previous match (Shift+Enter in the filter)', { appearance: 'icon', id: 'rs-match-previous' });
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
    this.followBox = createCheckbox('Follow live', { id: 'rs-follow', checked: restored?.followLatest ?? false });
    this.followBox.title =
      'While a recording runs, show it live: its newest records as the rings gain them (several times a second, without ' +
      'pausing them), the last ringside.follow.windowSeconds of them. Capture Snapshot still freezes a copy.';
    this.perfClockBox = createCheckbox('Perf clock', { id: 'rs-perf-clock', checked: restored?.perfClock ?? false });
    this.perfClockBox.title = "Show times as the perf clock (what perf script prints, exact ns in the details) instead of time since the capture's start";
    const exportButton = createButton('Export HTML', 'Export the shown capture as a self-contained HTML file', { appearance: 'secondary', id: 'rs-export' });
    exportButton.addEventListener('click', () => {
      const shown = this.store.snapshots[this.timeline.shown];
      if (!shown) {
        this.status.textContent = 'Nothing to export yet.';
        return;
      }
      if (shown.live && !shown.live.opening) {
        // The host keeps only the reads of its window, not a capture it can write: a snapshot freezes one.
        this.status.textContent = 'A live capture is not exported: Capture Snapshot freezes a copy that can be.';
        return;
      }
      this.post({ type: 'exportRequest', requestId: this.nextRequestId++, snapshotId: shown.id });
    });
    this.status = el('span', 'rs-status');
    this.status.setAttribute('aria-live', 'polite');
    this.tasksElement = el('span', 'rs-tasks');
    this.tasksElement.setAttribute('role', 'status');
    this.tasksElement.hidden = true;
    toolbar.append(
      this.groupingBox,
      filter,
      this.filterError,
      this.filterStatus,
      this.matchCount,
      previousMatch,
      nextMatch,
      zoomIn,
      zoomOut,
      reset,
      this.followBox,
      this.perfClockBox,
      exportButton,
      this.tasksElement,
      this.status,
    );

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
    this.center = center;
    this.timeline = this.active = this.createTimeline();
    this.drawer = new Drawer(
      body,
      restored?.drawerHeight,
      () => body.clientHeight - 6,
      () => this.saveStateSoon(),
      () => this.chartsMinimumHeight(),
    );
    const side = this.drawer.element;
    this.details = new DetailsPane(side, this.store, { nextRequestId: () => this.nextRequestId++, post: (m) => this.post(m) }, () => this.active.timeBase());
    this.rangeSummary = el('section', 'rs-range', side);
    this.rangeSummary.id = 'rs-range';
    this.rangeSummary.setAttribute('aria-label', 'Selected time range');
    el('p', 'rs-hint', this.rangeSummary, 'Shift+drag on the timeline to count records in a range.');
    this.untimed = el('section', 'rs-untimed', side);
    this.untimed.id = 'rs-untimed';
    this.untimed.setAttribute('aria-label', 'Records without a time');
    this.untimed.hidden = true;
    this.callTree = new CallTreeView(side, this.store, {
      host: { nextRequestId: () => this.nextRequestId++, post: (m) => this.post(m) },
      filterText: () => this.filterText,
      filterTo: (text) => {
        this.filterField.value = text;
        this.applyFilter(text);
      },
      // The stack charts draw the samples through the same transforms as the trees and the flame graph.
      transformsChanged: (transforms) => {
        for (const t of this.timelines()) t.setStackTransforms(transforms);
      },
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
      if (v === 'cpu' || v === 'thread' || v === 'event') {
        for (const t of this.timelines()) t.setGrouping(v as LaneGrouping);
        this.saveStateSoon();
      }
    });
    filter.addEventListener('input', () => this.applyFilter(filter.value ?? ''));
    filter.addEventListener('change', () => this.applyFilter(filter.value ?? ''));
    zoomIn.addEventListener('click', () => this.active.zoomBy(2));
    zoomOut.addEventListener('click', () => this.active.zoomBy(0.5));
    reset.addEventListener('click', () => this.active.resetZoom());
    this.timeline.setPerfClock(this.perfClockBox.checked);
    this.perfClockBox.addEventListener('change', () => {
      for (const t of this.timelines()) t.setPerfClock(this.perfClockBox.checked);
      this.details.updateTime();
      if (this.brushedRange) this.renderRange(this.active, this.brushedRange);
      this.saveStateSoon();
    });
    this.followBox.addEventListener('change', () => {
      this.timeline.followLatest = this.followBox.checked;
      if (this.followBox.checked) this.timeline.dataChanged();
      this.post({ type: 'liveFollow', on: this.followBox.checked });
      if (this.followBox.checked) {
        // Back to the live capture when one grows already.
        const live = this.liveCapture();
        if (live && live.index !== this.timeline.shown) this.showSnapshot(live.index);
      } else this.liveStatus = '';
      this.updateStatus();
      this.saveStateSoon();
    });
    document.addEventListener('visibilitychange', () => {
      // A live capture is the host's follower's, not a snapshot it streams: it is not asked for again (a file being
      // opened is the host's streamer's: it is).
      if (document.visibilityState === 'visible')
        this.post({
          type: 'resync',
          have: this.store.snapshots.filter((s) => !s.live || s.live.opening).map((s) => ({ snapshotId: s.id, rows: s.receivedRows })),
        });
    });
    this.updateStatus();
    this.timeline.scheduler.schedule();
  }

  private restoreWindow: PersistedViewState['window'] | undefined;
  /** Snapshots whose first paint was reported. */
  private readonly painted = new Set<string>();
  /** What the host says of live follow (following which recording, or why not), in the status line. */
  private liveStatus = '';
  /** When the call tree last followed the live capture (it is counted again at most once a second). */
  private liveTreeAt = 0;
  private liveTreeTimer: ReturnType<typeof setTimeout> | undefined;

  /** The live capture the host appends to now (the newest one), if any. */
  private liveCapture(): SnapshotEntry | undefined {
    for (let k = this.store.snapshots.length - 1; k >= 0; k--)
      if (this.store.snapshots[k].live && !this.store.snapshots[k].live?.opening) return this.store.snapshots[k];
    return undefined;
  }

  /** The frame a loading capture's page chrome waits for (renderBatchChrome), if any. */
  private batchChromeFrame: number | undefined;

  /** What a batch changes beside the lanes: the snapshot strip, the untimed list, the legend and the status. */
  private renderBatchChrome(): void {
    if (this.batchChromeFrame !== undefined) cancelAnimationFrame(this.batchChromeFrame);
    this.batchChromeFrame = undefined;
    this.renderSnapshots();
    this.renderUntimed();
    // A batch of a shown capture may hold its first record of an event (or of one it did not announce).
    this.renderLegend();
    this.updateStatus();
  }

  /** A live append: held and acknowledged, shown when it is the shown capture (the first one shows it). */
  private receiveLive(m: Extract<HostToWebview, { type: 'liveAppend' }>): void {
    const isNew = !this.store.getSnapshot(m.snapshotId);
    const dropsBefore = this.store.lastDrop;
    let entry: SnapshotEntry;
    try {
      entry = this.store.appendLive(m);
    } catch (e) {
      if (!(e instanceof BatchRejected)) throw e;
      this.post({ type: 'webviewError', message: e.message });
      return;
    }
    this.post({ type: 'liveAck', snapshotId: m.snapshotId, seq: m.seq });
    // Rows moved down when the window dropped some: the selections follow their records.
    if (this.store.lastDrop !== dropsBefore) for (const t of this.timelines()) t.rowsDropped();
    if (isNew) {
      if (m.part.limitations?.length) this.limitations.set(m.snapshotId, m.part.limitations);
      // A file being opened is what the user asked to see, as a new snapshot is; its first frame is timed as theirs.
      if (this.followBox.checked || m.opening) this.showSnapshot(entry.index);
      if (m.opening && !this.painted.has(m.snapshotId)) {
        this.painted.add(m.snapshotId);
        requestAnimationFrame(() => requestAnimationFrame(() => this.post({ type: 'painted', snapshotId: m.snapshotId })));
      }
    }
    for (const t of this.timelines()) t.dataChanged();
    // A file being opened has no names before it is all read: its call tree is counted once they come (snapshotSymbols).
    if (entry.index === this.active.shown && !this.brushed && !m.opening) this.followLiveTree();
    this.renderSnapshots();
    this.renderLegend();
    this.updateStatus();
  }

  /** The call tree of the live capture, counted again at most once a second while it grows. */
  private followLiveTree(): void {
    if (this.liveTreeTimer !== undefined) return;
    const wait = Math.max(0, this.liveTreeAt + 1000 - performance.now());
    this.liveTreeTimer = setTimeout(() => {
      this.liveTreeTimer = undefined;
      this.liveTreeAt = performance.now();
      if (!this.brushed) this.showWholeCapture();
    }, wait);
  }
  private brushedRange: [number, number] | null = null;
  /** Whether the host reveals source in an editor (the panel says so in its init; the offline page has none). */
  private editor = false;
  private readonly center: HTMLElement;
  /** A second capture stacked under the first for comparison (Ctrl/Shift+click in the strip), or null. */
  private compare: Timeline | null = null;
  /** The chart the user last selected or brushed in: the details, the range, the zoom buttons and stepping act on it. */
  private active: Timeline;
  /** The filter applied to the charts (null: every record). */
  private include: ((row: number) => boolean) | null = null;

  /**
   * The least height the center needs: the legend, and per chart its axis and coverage rows plus the least its lane
   * area keeps (its CSS min-height), set as each chart's min-height. Two compared charts need about twice one's; the
   * drawer gives way so they never overlap it or each other.
   */
  private chartsMinimumHeight(): number {
    let height = this.legend.hidden ? 0 : this.legend.offsetHeight;
    for (const root of this.center.querySelectorAll<HTMLElement>('.rs-timeline')) {
      const lanes = root.querySelector<HTMLElement>('.rs-scroll');
      const least = lanes ? parseFloat(getComputedStyle(lanes).minHeight) || 0 : 0;
      // Its rows other than the lanes (axis, coverage strip; the tooltip is positioned, 0 high) and its border, summed:
      // not its own height, which the min-height set here holds up.
      let chart = root.offsetHeight - root.clientHeight + least;
      for (const row of root.children) if (row !== lanes) chart += (row as HTMLElement).offsetHeight;
      // Its content (every lane) would be its minimum otherwise: the lanes scroll within the least area instead.
      root.style.minHeight = `${chart}px`;
      height += chart;
    }
    return height;
  }

  /** The charts on the page: the shown capture's, then the compared one's. */
  private timelines(): Timeline[] {
    return this.compare ? [this.timeline, this.compare] : [this.timeline];
  }

  /** A chart in the center; its selection and brushed range feed the details, the range summary and the call tree. */
  private createTimeline(): Timeline {
    const timeline: Timeline = new Timeline(this.center, this.store, {
      onSelect: (row) => {
        if (timeline !== this.active) {
          if (row !== null) this.activate(timeline); // (null: the other chart let go of its selection)
          return;
        }
        this.details.show(row);
        this.updateMatchCount();
      },
      onLanesChanged: () => {
        this.updateStatus();
        this.updateMatchCount();
      },
      onBrush: (range) => {
        if (timeline !== this.active) {
          if (range === null) return;
          this.activate(timeline);
        }
        this.brushedRange = range;
        this.renderRange(timeline, range);
        // The call tree follows the range; without one it shows the whole capture.
        this.brushed = range !== null;
        if (range) this.callTree.setSelection({ range, shown: timeline.shownRows() }, 'selected range');
        else this.showWholeCapture();
      },
      onViewChange: () => this.saveStateSoon(),
      // Only the panel has an editor to reveal in (the offline page shows the line in the box's tooltip).
      onRevealSource: (at) => {
        if (this.editor) this.post({ type: 'revealRequest', requestId: this.nextRequestId++, file: at.file, line: at.line });
      },
    });
    timeline.hitValues = this.hitValues;
    // A chart made while transforms apply (the second of two compared captures) draws through them too.
    if (this.callTree) timeline.setStackTransforms(this.callTree.transforms);
    return timeline;
  }

  private renderRange(timeline: Timeline, range: [number, number] | null): void {
    renderRangeSummary(
      this.rangeSummary,
      range,
      this.store,
      (t0, t1) => timeline.rowsInRange(t0, t1),
      (t0, t1) => {
        timeline.clearBrush();
        timeline.setWindow(t0, t1);
      },
      timeline.timeBase(),
    );
  }

  /** Show a capture (index in the store): fitted, its records alone on the lanes, counted and stepped through. */
  private showSnapshot(index: number): void {
    if (this.compare?.shown === index) this.closeCompare();
    this.activate(this.timeline);
    this.timeline.showSnapshot(index);
    this.updateComparison();
    this.showWholeCapture();
    this.renderSnapshots();
    this.renderLegend();
    this.updateStatus();
    this.updateMatchCount();
  }

  /** Ctrl/Shift+click in the strip: compare a capture with the shown one in a second chart (again: stop comparing). */
  private toggleCompare(index: number): void {
    if (index === this.timeline.shown) return;
    if (this.compare?.shown === index) {
      this.closeCompare();
      return;
    }
    if (!this.compare) {
      const compare = (this.compare = this.createTimeline());
      compare.grouping = this.timeline.grouping;
      for (const key of this.timeline.collapsed) compare.collapsed.add(key);
      compare.setFilter(this.include);
      compare.setHighlightedFunction(this.timeline.highlightedFunction());
      compare.setPerfClock(this.perfClockBox.checked);
    }
    this.compare.showSnapshot(index);
    this.renderSnapshots();
    this.renderLegend();
    this.updateComparison();
    this.drawer.refit();
  }

  /** The call tree's Difference tab: the compared capture (B) minus the shown one (A), while two are compared. */
  private updateComparison(): void {
    const compare = this.compare;
    const a = this.store.snapshots[this.timeline.shown];
    const b = compare ? this.store.snapshots[compare.shown] : undefined;
    if (!compare || !a || !b) {
      this.callTree.setComparison(null);
      return;
    }
    this.callTree.setComparison({
      a: { range: null, shown: this.timeline.captureRows() },
      b: { range: null, shown: compare.captureRows() },
      labelA: a.name,
      labelB: b.name,
    });
  }

  private closeCompare(): void {
    if (!this.compare) return;
    if (this.active === this.compare) this.activate(this.timeline);
    this.compare.dispose();
    this.compare = null;
    this.drawer.refit();
    this.updateComparison();
    this.renderSnapshots();
    this.renderLegend();
    this.updateMatchCount();
  }

  /**
   * Make `timeline` the one the details, the range summary, the call tree and the toolbar act on: the other lets go
   * of its selection and brushed range.
   */
  private activate(timeline: Timeline): void {
    if (timeline === this.active) return;
    const previous = this.active;
    this.active = timeline;
    previous.clearSelection();
    previous.clearBrush();
    this.brushedRange = null;
    this.brushed = false;
    this.renderRange(timeline, null);
    this.showWholeCapture();
    this.details.show(timeline.selectedRow());
    this.updateMatchCount();
  }

  /** The list of the active chart's records without a time, redrawn when it would change. */
  private renderUntimed(): void {
    const shown = this.active.shown;
    const key = `${shown}:${this.store.snapshots[shown]?.untimedRows ?? 0}`;
    if (key === this.untimedKey) return;
    this.untimedKey = key;
    renderUntimed(this.untimed, this.store, shown, (row) => {
      this.active.clearSelection();
      this.details.show(row);
    });
  }

  /** The call tree of the shown capture, as far as it has arrived. */
  private showWholeCapture(): void {
    this.renderUntimed();
    const shown = this.active.shown;
    // The whole of the shown capture, whatever the filter (with one capture: every row, no mask to build).
    this.callTree.setSelection({ range: null, shown: shown < 0 ? null : this.active.captureRows() }, 'whole capture');
  }

  start(): void {
    this.post({ type: 'ready', protocolVersion: PROTOCOL_VERSION });
    // Whether to follow the running recording live is the page's choice (its box, kept in its view state).
    if (this.followBox.checked) this.post({ type: 'liveFollow', on: true });
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
        this.editor = m.editor === true;
        this.details.setRecorder(m.recorder === true);
        this.callTree.setEditor(m.editor === true);
        return;
      case 'snapshotStart': {
        const isNew = !this.store.getSnapshot(m.snapshotId);
        const entry = this.store.beginSnapshot(m);
        if (m.limitations?.length) this.limitations.set(m.snapshotId, m.limitations);
        if (this.filterText.includes('field.')) this.applyFilter(this.filterText); // ask about the new snapshot too
        this.renderSnapshots();
        // A new capture (Capture Snapshot, Open perf.data) is what the user wants to see: show it, fitted.
        if (isNew) this.showSnapshot(entry.index);
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
        // Once the frame after a snapshot's first batch is drawn, the host times its first paint.
        if (m.firstRow === 0 && !this.painted.has(m.snapshotId)) {
          this.painted.add(m.snapshotId);
          requestAnimationFrame(() => requestAnimationFrame(() => this.post({ type: 'painted', snapshotId: m.snapshotId })));
        }
        // A capture with callchains opens with the call tree of the whole capture, once all of it is here: counted once
        // the timeline's frames pause after its first one (sending the worker its columns copies them, which the first
        // paint need not wait for, and the worker's pass took the CPU of the zoom frames of a busy machine).
        const received = this.store.getSnapshot(m.snapshotId);
        if (!this.brushed && m.stackIndex && received?.index === this.active.shown && this.store.isComplete(received)) {
          this.callTree.countingSoon('whole capture');
          this.active.scheduler.whenFramesPause(() => {
            if (!this.brushed && this.active.shown === received.index) this.showWholeCapture();
          });
        }
        if (m.stackIndex && this.compare && received && this.store.isComplete(received)) this.updateComparison();
        if (this.restoreWindow && this.store.originNs !== null && BigInt(this.restoreWindow.originNs) === this.store.originNs) {
          this.timeline.restoreWindow(this.restoreWindow.start, this.restoreWindow.end);
          this.restoreWindow = undefined;
        }
        for (const t of this.timelines()) t.dataChanged();
        // The snapshot strip, untimed list, legend and status rebuild DOM: once a capture is complete at once, while it
        // loads once per frame (a big capture's batches arrive back to back: one rebuild each cost its first paint).
        if (received && this.store.isComplete(received)) this.renderBatchChrome();
        else if (this.batchChromeFrame === undefined)
          this.batchChromeFrame = requestAnimationFrame(() => {
            this.renderBatchChrome();
            // The charts size their lane areas against the chrome above them (the snapshot strip may have grown a row).
            for (const t of this.timelines()) t.dataChanged();
          });
        return;
      }
      case 'snapshotSymbols': {
        // The names of a capture whose records came first: it now looks as it would had they come with them.
        let named: SnapshotEntry;
        try {
          named = this.store.addNames(m);
        } catch (e) {
          if (!(e instanceof BatchRejected)) throw e;
          this.post({ type: 'webviewError', message: e.message });
          return;
        }
        if (!this.brushed && named.index === this.active.shown) this.showWholeCapture();
        if (this.compare) this.updateComparison();
        if (this.filterText !== '') this.applyFilter(this.filterText); // sym: and stack: terms read the names
        for (const t of this.timelines()) t.dataChanged();
        this.renderBatchChrome();
        return;
      }
      case 'progress':
        this.taskProgress(m);
        return;
      case 'threadStates':
        // Drawn as each thread lane's state band; the legend names the states.
        if (this.store.addThreadStates(m)) {
          this.renderLegend();
          this.timeline.dataChanged();
        }
        return;
      case 'detailsReply':
        // A logpoint hit's values for a value lane, or the drawer's record.
        if (this.hitValues.owns(m.replyTo)) this.hitValues.reply(m.replyTo, m.details, m.error?.message);
        else this.details.detailsReply(m);
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
          // By the snapshot's own row numbers (a live capture's run on from its first append).
          const mask = new Uint8Array(snap?.live ? snap.live.nextRow : (snap?.totalRows ?? 0));
          for (const row of new Uint32Array(m.rows)) if (row < mask.length) mask[row] = 1;
          bySnapshot.set(pending.snapshotId, mask);
        } else if (m.error) {
          bySnapshot.set(pending.snapshotId, m.error);
        }
        this.applyFilter(this.filterText);
        return;
      }
      case 'liveAppend':
        this.receiveLive(m);
        return;
      case 'liveState':
        this.liveStatus = m.state === 'following' ? `live: ${m.detail ?? 'following'}` : m.state === 'unavailable' ? `live: ${m.detail ?? 'unavailable'}` : '';
        this.updateStatus();
        return;
      case 'removeSnapshot':
        // Rows stay in the store (the axis would jump); the list marks the snapshot as removed.
        this.snapshotList.querySelector(`[data-snapshot="${CSS.escape(m.snapshotId)}"]`)?.classList.add('rs-removed');
        // Its names will not come (a capture cancelled while they were resolved).
        this.store.namesWontCome(m.snapshotId);
        this.updateStatus();
        return;
    }
  }

  /**
   * The host's progress of a task: kept from its first message, shown (what it does, and its Cancel) once it has
   * taken a second, as the progress notification is; gone when it is done.
   */
  private taskProgress(m: Extract<HostToWebview, { type: 'progress' }>): void {
    const known = this.tasks.get(m.taskId);
    if (m.done) {
      if (known?.timer !== undefined) clearTimeout(known.timer);
      this.tasks.delete(m.taskId);
      this.renderTasks();
      return;
    }
    const task = known ?? { title: m.title, step: '', cancellable: m.cancellable, shown: false };
    task.title = m.title;
    task.step = m.step ?? task.step;
    task.cancellable = m.cancellable;
    if (!known) {
      this.tasks.set(m.taskId, task);
      task.timer = setTimeout(() => {
        task.shown = true;
        this.renderTasks();
      }, TASK_SHOWN_AFTER_MS);
    }
    this.renderTasks();
  }

  private renderTasks(): void {
    const shown = [...this.tasks].filter(([, task]) => task.shown);
    this.tasksElement.hidden = shown.length === 0;
    this.tasksElement.replaceChildren();
    for (const [taskId, task] of shown) {
      const item = el('span', 'rs-task', this.tasksElement);
      item.dataset.task = taskId;
      el('span', 'rs-task-text', item, task.step ? `${task.title}: ${task.step}` : task.title);
      el('progress', 'rs-task-bar', item).setAttribute('aria-label', task.title);
      if (task.cancellable) {
        const cancel = createButton('Cancel', `Cancel: ${task.title}`, { appearance: 'secondary' });
        cancel.classList.add('rs-task-cancel');
        cancel.addEventListener('click', () => this.post({ type: 'cancel', taskId }));
        item.append(cancel);
      }
    }
  }

  /**
   * The legend of the captures on the page (the shown one, and the compared one): the events they recorded and the
   * thread states of their bands. Redrawn only when that list changes.
   */
  private renderLegend(): void {
    const shown = this.timelines().map((t) => t.shown);
    const events = this.store.eventsWithRecords(shown);
    const states = stateLegendEntries(this.store.threadStatesOfSnapshots(shown));
    const key = `${events.join(',')}|${states.map((s) => s.name).join(',')}`;
    if (key === this.legendKey) return;
    this.legendKey = key;
    renderLegend(this.legend, this.store.events, events, states);
  }

  private applyFilter(text: string): void {
    this.filterText = text;
    this.callTree.filterChanged(text);
    const parsed = parseFilter(text);
    // A filter that does not parse says why and leaves the lanes as they were (never an empty timeline without a word).
    this.filterField.setAttribute('aria-invalid', String(!parsed.ok));
    this.filterField.classList.toggle('rs-invalid', !parsed.ok);
    if (!parsed.ok) {
      this.filterError.textContent = parsed.error;
      return;
    }
    this.filterError.textContent = '';
    this.filtering = parsed.terms.length > 0;
    // The function a stack:= term names (the call tree's and flame graph's choice) is highlighted in the stack charts.
    const chosen = parsed.terms.find((t) => t.key === 'stack' && t.exact === true && !t.negate);
    for (const t of this.timelines()) t.setHighlightedFunction(chosen?.value ?? null);
    const s = this.store;
    if (!this.resolveFieldTerms(parsed.terms)) {
      this.saveStateSoon();
      return;
    } // applied when the host answers
    if (parsed.terms.length === 0) {
      this.setFilter(null);
      this.saveStateSoon();
      return;
    }
    const fieldMatches = this.fieldMatches;
    this.setFilter(
      compileFilter(parsed.terms, {
        eventName: (r) => s.events[s.event[r]]?.name ?? '',
        comm: (r) => s.commOf(r),
        symbol: (r) => s.symbolOf(r),
        stackFunctions: (r) => s.stackFunctionsOf(r),
        kindName: (r) => recordTypeName(s.kind[r]),
        pid: (r) => s.pid[r],
        tid: (r) => s.tid[r],
        cpu: (r) => s.cpu[r],
        misc: (r) => s.misc[r],
        ipHex: (r) => formatAddress(s.ipHi[r], s.ipLo[r]).slice(2),
        fieldMatches: (term, r) => {
          const snap = s.snapshots[s.snapshotIndexOf(r)];
          const answer = snap ? fieldMatches.get(fieldTermKey(term))?.get(snap.id) : undefined;
          return answer instanceof Uint8Array && answer[s.localRowOf(r)] === 1;
        },
      }),
    );
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
      if (!bySnapshot) {
        bySnapshot = new Map();
        this.fieldMatches.set(key, bySnapshot);
      }
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
      perfClock: this.perfClockBox.checked,
    };
  }

  private setFilter(include: ((row: number) => boolean) | null): void {
    this.include = include;
    for (const t of this.timelines()) t.setFilter(include);
  }

  /** Enter / Shift+Enter in the filter and the ↓ ↑ buttons: select the next or previous record the filter shows. */
  private step(direction: 1 | -1): void {
    if (!this.active.stepMatch(direction)) this.matchCount.textContent = 'no records match';
  }

  private updateMatchCount(): void {
    if (!this.filtering) {
      this.matchCount.textContent = '';
      return;
    }
    const shown = this.active.shownCount();
    const at = this.active.selectedMatchIndex();
    this.matchCount.textContent =
      shown === 0 ? 'no records match' : `${at > 0 ? `${at.toLocaleString('en-US')} of ` : ''}${shown.toLocaleString('en-US')} match${shown === 1 ? '' : 'es'}`;
  }

  /** Breakpoint events with no record on a host whose breakpoints are silent: that is not "0 hits" (issue 38). */
  private hitsUnseen(capture: SnapshotEntry): boolean {
    return (
      this.limitations.get(capture.id)?.some((line) => line.startsWith(SILENT_BREAKPOINTS_PREFIX)) === true &&
      this.store.events.some((event) => event.kind === 'breakpoint') &&
      this.store.events.every((event, index) => event.kind !== 'breakpoint' || (capture.eventRows[index] ?? 0) === 0)
    );
  }

  private updateStatus(): void {
    const snaps = this.store.snapshots;
    const loading = snaps.filter((s) => s.receivedRows < s.totalRows);
    const capture = snaps[this.timeline.shown];
    const userSpaceOnly = capture !== undefined && this.limitations.get(capture.id)?.some((line) => line.startsWith('user space only'));
    const unseen = capture !== undefined && this.hitsUnseen(capture);
    // The shown capture's records; with a filter on, what it shows out of them.
    const shown = this.filtering ? `${this.timeline.shownCount().toLocaleString('en-US')} of ` : '';
    const untimed = capture?.untimedRows ?? 0;
    this.status.textContent =
      `${shown}${(capture?.receivedRows ?? 0).toLocaleString('en-US')} records` +
      ` · ${snaps.length} snapshot${snaps.length === 1 ? '' : 's'}` +
      (untimed > 0 ? ` · ${untimed.toLocaleString('en-US')} without a time` : '') +
      (userSpaceOnly ? ' · user space only' : '') +
      (unseen ? ` · ${HITS_UNSEEN}` : '') +
      (loading.length ? ` · loading ${loading.map((s) => `${Math.floor((100 * s.receivedRows) / Math.max(1, s.totalRows))}%`).join(', ')}` : '') +
      (capture?.namesPending ? ' · function names still coming' : '') +
      (this.followBox.checked && this.liveStatus ? ` · ${this.liveStatus}` : '');
  }

  /** The coverage of the rings of the captures on the page (the shown one, and the compared one), not of every capture kept. */
  private renderCoverage(): void {
    const onPage = this.timelines()
      .map((t) => this.store.snapshots[t.shown])
      .filter((s) => s !== undefined);
    const key = onPage.map((s) => `${s.id}:${s.coverage.length}`).join('|');
    if (key === this.coverageKey) return;
    this.coverageKey = key;
    renderCoverageTable(this.coverageList, onPage);
  }

  private coverageKey: string | null = null;

  private renderSnapshots(): void {
    this.snapshotList.replaceChildren();
    for (const s of this.store.snapshots) {
      const li = el('li', 'rs-snapshot', this.snapshotList);
      li.dataset.snapshot = s.id;
      const button = el('button', 'rs-snapshot-button', li);
      button.type = 'button';
      button.setAttribute('aria-label', `Show snapshot ${s.name} (Ctrl or Shift+click: compare it with the shown one)`);
      button.setAttribute('aria-pressed', String(s.index === this.timeline.shown));
      if (s.index === this.compare?.shown) li.classList.add('rs-compared');
      el('span', 'rs-snapshot-name', button, s.name);
      // The capture time first: captures of one session share their name, the time tells them apart.
      const time = el('span', 'rs-snapshot-time', undefined, new Date(s.takenAtMs).toLocaleTimeString('en-GB'));
      const meta = el('span', 'rs-snapshot-meta', button);
      meta.append(
        time,
        ` · ${s.live && !s.live.opening ? 'live · ' : ''}${s.receivedRows.toLocaleString('en-US')}${s.receivedRows < s.totalRows ? `/${s.totalRows.toLocaleString('en-US')}` : ''} records`,
      );
      if (s.live && !s.live.opening) li.classList.add('rs-live');
      const limitations = this.limitations.get(s.id) ?? [];
      if (limitations.length) {
        // The first clause ("user space only", "rings are 16 pages") on the page; the reason in the tooltip. A capture
        // whose breakpoints recorded nothing on a host where they are silent says that no hit can be seen, not why alone.
        const unseen = this.hitsUnseen(s);
        const clauses = limitations.map((line) => (unseen && line.startsWith(SILENT_BREAKPOINTS_PREFIX) ? HITS_UNSEEN : line.split(':')[0]));
        const note = el('span', 'rs-snapshot-limit', button, clauses.join(' · '));
        note.title = limitations.join('\n');
      }
      const untimed = s.untimedRows > 0 ? [`${s.untimedRows.toLocaleString('en-US')} records without a time are counted but not placed on the axis`] : [];
      button.title = [button.textContent ?? '', ...limitations, ...untimed].join('\n'); // all of it, where the strip cuts it short
      button.addEventListener('click', (e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey) this.toggleCompare(s.index);
        else this.showSnapshot(s.index);
      });
    }
    this.renderCoverage();
    // Two charts: each names its capture above its lane labels.
    const nameOf = (t: Timeline) => this.store.snapshots[t.shown]?.name ?? null;
    this.timeline.setTitle(this.compare ? nameOf(this.timeline) : null);
    this.compare?.setTitle(nameOf(this.compare));
  }
}
