// transport_1m_ms: moving decoded records to the webview side as columnar buffers. A worker
// thread stands in for the webview (postMessage over a MessagePort, with the ArrayBuffers
// transferred, or structured-cloned); the clock runs from the decoded columns (split into the
// protocol's exact-length batches) to the worker having received and validated every batch.
// Also timed: the same plus appending every batch to the webview's real RecordStore.

import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { columnsToBatches, transferablesOf } from '../shared/batches';
import type { SnapshotStart } from '../shared/protocol';
import type { DecodedSnapshot, RecordColumns } from '../native/decode/types';
import { columnRows } from '../native/decode/column-set';
import { coverageFactOf, eventInfoOf } from '../host/messages';
import { median, nowNs } from './stats';

/** The first `rows` rows of `columns` (views, no copy). */
export function firstRows(columns: RecordColumns, rows: number): RecordColumns {
  return columnRows(columns, columns.timeOriginNs, 0, Math.min(rows, columns.length));
}

/** The snapshotStart message the host sends before the batches (its events and coverage as the host writes them). */
export function snapshotStartFor(snapshot: DecodedSnapshot, columns: RecordColumns, snapshotId: string, batchCount: number): SnapshotStart {
  return {
    type: 'snapshotStart',
    snapshotId,
    name: snapshotId,
    timeOriginNs: columns.timeOriginNs.toString(),
    totalRows: columns.length,
    batchCount,
    takenAtMs: Date.now(),
    events: snapshot.events.map(eventInfoOf),
    threads: [],
    coverage: snapshot.coverage.map(coverageFactOf),
  };
}

export interface TransportResult {
  readonly rows: number;
  readonly transferMs: number;
  readonly cloneMs: number;
  /** Transfer plus RecordStore.addBatch of every batch on the receiving side. */
  readonly transferAndStoreMs: number;
}

export async function runTransport(snapshot: DecodedSnapshot, columns: RecordColumns, runs: number, warmup: number): Promise<TransportResult> {
  const worker = new Worker(join(__dirname, 'transport-worker.js'));
  type Reply = { type: string; rows?: number; reason?: string };
  let pending: { resolve: (reply: Reply) => void; reject: (error: unknown) => void } | null = null;
  worker.on('message', (reply: Reply) => {
    pending?.resolve(reply);
    pending = null;
  });
  worker.on('error', (error) => {
    pending?.reject(error);
    pending = null;
  });
  const next = () =>
    new Promise<Reply>((resolve, reject) => {
      pending = { resolve, reject };
    });
  let counter = 0;
  const once = async (transfer: boolean, mode: 'move' | 'store' = 'move'): Promise<number> => {
    worker.postMessage(mode);
    await next();
    const snapshotId = `bench-${counter++}`;
    const started = nowNs();
    const batches = columnsToBatches(columns, { snapshotId });
    const done = next();
    worker.postMessage(snapshotStartFor(snapshot, columns, snapshotId, batches.length));
    for (const batch of batches) {
      if (transfer) worker.postMessage(batch, transferablesOf(batch));
      else worker.postMessage(batch);
    }
    const reply = await done;
    const elapsed = nowNs() - started;
    if (reply.type !== 'done') throw new Error(`the webview stand-in rejected a message: ${reply.reason}`);
    if (reply.rows !== columns.length) throw new Error(`the webview stand-in holds ${reply.rows} rows, sent ${columns.length}`);
    return elapsed / 1e6;
  };
  try {
    const transfer: number[] = [];
    const clone: number[] = [];
    const stored: number[] = [];
    for (let i = -warmup; i < runs; i++) {
      const t = await once(true);
      const c = await once(false);
      const s = await once(true, 'store');
      if (i >= 0) {
        transfer.push(t);
        clone.push(c);
        stored.push(s);
      }
    }
    return { rows: columns.length, transferMs: median(transfer), cloneMs: median(clone), transferAndStoreMs: median(stored) };
  } finally {
    await worker.terminate();
  }
}
