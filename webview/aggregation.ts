// The call tree's aggregation off the page's main thread: this module owns the one Web Worker (aggregate-worker.ts) that
// counts the samples of a selection and builds the trees, so a range selection over millions of rows never blocks
// input or frames. The worker's bundle is inlined in the page's (scripts/build.mjs defines RINGSIDE_AGGREGATE_WORKER)
// and started from a Blob URL: a VS Code webview cannot start a worker from its resource URLs, and the offline export
// has no URL at all; both pages' policies allow `worker-src blob:`. The columns go to the worker once per change of the
// store, the filter's mask once per filter; a query is a few numbers. Answers to queries a newer one replaced are dropped.
// Where no worker can start, the same pure code runs here (counted, so tests can tell).

import type { StackTable } from '../shared/stacks';
import { selectionWeights, type Aggregate } from './call-tree';
import { aggregateTransformed, type CallTreeTransform } from './call-tree-transforms';

declare const RINGSIDE_AGGREGATE_WORKER: string | undefined;

/** Which rows a selection counts: every row with a stack (`range` null), or those timed in the range that the filter shows. */
export interface Selection {
  readonly range: readonly [number, number] | null;
  /**
   * The rows that count (null: every row): the filter's shown rows, or the shown capture's; `version` names the mask,
   * `mask()` builds it (1: counted) when the worker lacks it.
   */
  readonly shown: { readonly version: string; mask(): Uint8Array } | null;
  /** Applied to the stacks before the trees are built (none: the stacks as sampled). */
  readonly transforms?: readonly CallTreeTransform[];
}

/** What the aggregation reads from the store. */
export interface AggregationSource {
  readonly version: number;
  readonly length: number;
  readonly time: Float64Array;
  readonly stack: Int32Array;
  stackTable(): StackTable;
}

export type ToAggregateWorker =
  | { readonly type: 'columns'; readonly version: number; readonly time: Float64Array; readonly stack: Int32Array; readonly table: StackTable }
  | { readonly type: 'shown'; readonly version: string; readonly mask: Uint8Array }
  | {
      readonly type: 'query';
      readonly id: number;
      readonly columnsVersion: number;
      readonly range: readonly [number, number] | null;
      readonly shownVersion: string | null;
      readonly transforms: readonly CallTreeTransform[];
    };

export interface AggregateAnswer {
  readonly type: 'answer';
  readonly id: number;
  /** Queries the worker has computed so far. */
  readonly computed: number;
  readonly aggregate?: Aggregate;
  readonly error?: string;
}

/** Counters of where the aggregation ran and what became of the answers. */
export interface AggregationStats {
  readonly worker: boolean;
  readonly queries: number;
  readonly answered: number;
  /** Answers that arrived after a newer query: not shown. */
  readonly dropped: number;
  /** Queries computed in the worker (its own count) and on the page's main thread (no worker). */
  readonly computedInWorker: number;
  readonly computedOnPage: number;
  readonly columnsSent: number;
}

export class Aggregation {
  private worker: Worker | null = null;
  private url = '';
  private nextId = 1;
  private latest = 0;
  private pending: ((aggregate: Aggregate | null) => void) | null = null;
  /** The query the worker is answering, to count it on the page if the worker dies meanwhile. */
  private pendingQuery: { readonly source: AggregationSource; readonly selection: Selection } | null = null;
  private columnsVersion = -1;
  private shownVersion: string | null = null;
  private counts = { queries: 0, answered: 0, dropped: 0, computedInWorker: 0, computedOnPage: 0, columnsSent: 0 };

  constructor() {
    if (typeof RINGSIDE_AGGREGATE_WORKER !== 'string' || typeof Worker !== 'function') return;
    try {
      this.url = URL.createObjectURL(new Blob([RINGSIDE_AGGREGATE_WORKER], { type: 'text/javascript' }));
      this.worker = new Worker(this.url, { name: 'ringside-aggregation' });
      this.worker.onmessage = (event: MessageEvent<AggregateAnswer>) => this.answer(event.data);
      this.worker.onerror = (event) => {
        console.warn(`Ringside: the aggregation worker failed (${event.message}); counting on the page instead`);
        this.stop();
        const [query, done] = [this.pendingQuery, this.pending];
        if (query && done) this.query(query.source, query.selection, done);
      };
    } catch (error) {
      console.warn(`Ringside: no aggregation worker (${String(error)}); counting on the page instead`);
      this.stop();
    }
  }

  stats(): AggregationStats {
    return { worker: this.worker !== null, ...this.counts };
  }

  /**
   * Count `selection` of `source` and call `done` with the trees, or with null when a newer query replaced this one
   * before it was answered (its answer is dropped).
   */
  query(source: AggregationSource, selection: Selection, done: (aggregate: Aggregate | null) => void): void {
    this.counts.queries++;
    this.pending?.(null);
    this.pending = null;
    const id = this.nextId++;
    this.latest = id;
    if (!this.worker) {
      this.counts.answered++;
      done(this.computeOnPage(source, selection));
      return;
    }
    if (this.columnsVersion !== source.version) {
      // Copies of the store's columns (it keeps growing its own), transferred: the worker holds them until the store changes.
      const n = source.length;
      const time = source.time.slice(0, n);
      const stack = source.stack.slice(0, Math.min(n, source.stack.length));
      const message: ToAggregateWorker = { type: 'columns', version: source.version, time, stack, table: source.stackTable() };
      this.worker.postMessage(message, [time.buffer, stack.buffer]);
      this.columnsVersion = source.version;
      this.shownVersion = null;
      this.counts.columnsSent++;
    }
    const shown = selection.shown;
    if (shown && this.shownVersion !== shown.version) {
      const mask = shown.mask();
      this.worker.postMessage({ type: 'shown', version: shown.version, mask } satisfies ToAggregateWorker, [mask.buffer]);
      this.shownVersion = shown.version;
    }
    this.pending = done;
    this.pendingQuery = { source, selection };
    const query: ToAggregateWorker = {
      type: 'query',
      id,
      columnsVersion: source.version,
      range: selection.range,
      shownVersion: shown ? shown.version : null,
      transforms: selection.transforms ?? [],
    };
    this.worker.postMessage(query);
  }

  private answer(m: AggregateAnswer): void {
    this.counts.computedInWorker = Math.max(this.counts.computedInWorker, m.computed);
    if (m.id !== this.latest) {
      this.counts.dropped++;
      return;
    }
    const done = this.pending;
    const query = this.pendingQuery;
    this.pending = null;
    this.pendingQuery = null;
    this.counts.answered++;
    if (m.aggregate) {
      done?.(m.aggregate);
      return;
    }
    // The worker lacked this query's data (it never should): send it again next time, count this one here.
    console.warn(`Ringside: the aggregation worker could not answer: ${m.error}`);
    this.columnsVersion = -1;
    this.shownVersion = null;
    if (query && done) done(this.computeOnPage(query.source, query.selection));
  }

  /** The same count on the page's main thread, where no worker runs. */
  private computeOnPage(source: AggregationSource, selection: Selection): Aggregate {
    const n = source.length;
    const table = source.stackTable();
    const weight = selectionWeights(
      table,
      source.time.subarray(0, n),
      source.stack.subarray(0, Math.min(n, source.stack.length)),
      selection.range,
      selection.shown ? selection.shown.mask() : null,
    );
    this.counts.computedOnPage++;
    return aggregateTransformed(table, weight, selection.transforms ?? []);
  }

  private stop(): void {
    this.worker?.terminate();
    this.worker = null;
    if (this.url) URL.revokeObjectURL(this.url);
    this.url = '';
    this.columnsVersion = -1;
    this.shownVersion = null;
  }

  dispose(): void {
    this.pending = null;
    this.pendingQuery = null;
    this.stop();
  }
}
