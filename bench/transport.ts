// transport_1m_ms: a decoded snapshot's records from the host to the page, as the user waits for them. A worker
// thread stands in for the webview. The clock runs from the decoded snapshot to the page holding every row:
// - the host's encoding, as the timeline panel does it: the panel's SnapshotStreamer (snapshotToWire: the start with
//   its threads, losses and coverage, the thread states, the batches) and its flow control (two batches
//   unacknowledged at most);
// - each message posted over a MessagePort, the batches' ArrayBuffers transferred (or, in the clone runs,
//   structured-cloned: copied twice, as VS Code's IPC copies them at least once);
// - the page's side as App.receive does it: every message validated, the snapshot begun in the webview's real
//   RecordStore, each batch appended to it and acknowledged.
// Until 2026-11-29 the clock covered only splitting the columns into batches, posting them all at once and
// validating them: the host's threads and losses and the page's store were outside it.
// Beside it, in the same rounds: a warm memcpy of the same bytes (the wire columns' 33 bytes a row), the floor any
// transport of them has on this machine at that moment.

import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { transferablesOf } from '../shared/batches';
import { COLUMN_NAMES } from '../shared/columns';
import type { HostToWebview, SnapshotStart } from '../shared/protocol';
import type { DecodedSnapshot, RecordColumns } from '../native/decode/types';
import { columnRows } from '../native/decode/column-set';
import { coverageFactOf, eventInfoOf } from '../host/messages';
import { SnapshotStreamer } from '../extension/panel/streamer';
import { cpuNs, median, nowNs } from './stats';

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
  /** Host encoding + transferred messages + the page's validation and store, median ms. */
  readonly transferMs: number;
  /** The same with every message structured-cloned instead, median ms. */
  readonly cloneMs: number;
  /** The transfer runs' time to the page holding the first batch, median ms. */
  readonly firstBatchMs: number;
  /** A warm memcpy of the same bytes, median ms (taken in the same rounds). */
  readonly memcpyMs: number;
  /** Median over the rounds of transferMs / memcpyMs. */
  readonly transferVsMemcpy: number;
}

/** One run of the case. */
export interface TransportRun {
  /** From the decoded snapshot to the page holding all its rows. */
  readonly wallMs: number;
  /**
   * CPU this process spent meanwhile (both sides' threads and V8's helpers: steadier than wall time when other work
   * shares the machine), and, with --expose-gc, collecting the host's garbage of the run after it.
   */
  readonly cpuMs: number;
  /** From the decoded snapshot to the page holding its first batch (what the panel's first paint waits for). */
  readonly firstBatchMs: number;
}

/** What the page's stand-in answers: a batch's acknowledgement, every row held, or a rejection. */
type Reply =
  { type: 'reset' } | { type: 'batchAck'; snapshotId: string; batchIndex: number } | { type: 'done'; rows: number } | { type: 'error'; reason: string };

/** The transport case's worker and the snapshot it moves, for runs one at a time (rounds alternating with other work). */
export class TransportCase {
  private readonly worker = new Worker(join(__dirname, 'transport-worker.js'));
  private readonly snapshot: DecodedSnapshot;
  private readonly wireBytes: Uint8Array[];
  private readonly memcpyTarget: Uint8Array;
  private onReply: ((reply: Reply) => void) | null = null;
  private onError: ((error: unknown) => void) | null = null;
  private counter = 0;

  constructor(snapshot: DecodedSnapshot, columns: RecordColumns) {
    // The first rows of the snapshot, as one snapshot of that many rows (the rows keep their ring and offset).
    this.snapshot = { ...snapshot, columns };
    this.wireBytes = COLUMN_NAMES.map((name) => {
      const column = columns[name];
      return new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
    });
    this.memcpyTarget = new Uint8Array(this.wireBytes.reduce((sum, bytes) => sum + bytes.length, 0));
    this.worker.on('message', (reply: Reply) => this.onReply?.(reply));
    this.worker.on('error', (error) => this.onError?.(error));
  }

  get rows(): number {
    return this.snapshot.columns.length;
  }

  private exchange(body: (resolve: () => void, reject: (error: unknown) => void, reply: Reply) => void, start: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.onError = reject;
      this.onReply = (reply) => body(resolve, reject, reply);
      start();
    }).finally(() => {
      this.onReply = null;
      this.onError = null;
    });
  }

  /** One run, in ms. */
  async measure(transfer: boolean): Promise<TransportRun> {
    await this.exchange(
      (resolve) => resolve(),
      () => this.worker.postMessage('reset'),
    );
    const cpuStarted = cpuNs();
    const { wallMs, firstBatchMs } = await this.send(transfer);
    // With --expose-gc, the CPU figure includes collecting what the run left on the host (its batches, the streamer),
    // whoever keeps them longest: without it, that collection falls into whichever run comes next.
    (globalThis as { gc?: () => void }).gc?.();
    return { wallMs, cpuMs: (cpuNs() - cpuStarted) / 1e6, firstBatchMs };
  }

  /** The snapshot from the panel's streamer to the page's store. */
  private async send(transfer: boolean): Promise<{ wallMs: number; firstBatchMs: number }> {
    const snapshotId = `bench-${this.counter++}`;
    const post = (message: HostToWebview) =>
      // Transferring detaches a batch's buffers: the streamer sends a batch again only after a resync (none here).
      this.worker.postMessage(message, transfer && message.type === 'batch' ? transferablesOf(message) : []);
    const streamer = new SnapshotStreamer(post);
    let rows = -1;
    let firstBatchAt = NaN;
    const started = nowNs();
    await this.exchange(
      (resolve, reject, reply) => {
        if (reply.type === 'batchAck') {
          if (reply.batchIndex === 0) firstBatchAt = nowNs();
          streamer.onAck(reply.snapshotId, reply.batchIndex);
        } else if (reply.type === 'done') {
          rows = reply.rows;
          resolve();
        } else if (reply.type === 'error') reject(new Error(`the webview stand-in rejected a message: ${reply.reason}`));
      },
      () => {
        streamer.onReady();
        streamer.add(snapshotId, snapshotId, Date.now(), this.snapshot);
      },
    );
    const elapsed = nowNs() - started;
    if (rows !== this.rows) throw new Error(`the webview stand-in holds ${rows} rows, sent ${this.rows}`);
    return { wallMs: elapsed / 1e6, firstBatchMs: (firstBatchAt - started) / 1e6 };
  }

  /** A warm memcpy of the bytes the batches carry, ms. */
  memcpy(): number {
    this.memcpyTarget.fill(0); // warm: every page of the target is written before the clock starts
    const started = nowNs();
    let at = 0;
    for (const bytes of this.wireBytes) {
      this.memcpyTarget.set(bytes, at);
      at += bytes.length;
    }
    return (nowNs() - started) / 1e6;
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

export async function runTransport(snapshot: DecodedSnapshot, columns: RecordColumns, runs: number, warmup: number): Promise<TransportResult> {
  const transportCase = new TransportCase(snapshot, columns);
  try {
    const transfer: number[] = [];
    const clone: number[] = [];
    const memcpy: number[] = [];
    const ratios: number[] = [];
    const firstBatch: number[] = [];
    for (let i = -warmup; i < runs; i++) {
      const m = transportCase.memcpy();
      const run = await transportCase.measure(true);
      const t = run.wallMs;
      const c = (await transportCase.measure(false)).wallMs;
      if (i >= 0) {
        firstBatch.push(run.firstBatchMs);
        transfer.push(t);
        clone.push(c);
        memcpy.push(m);
        ratios.push(t / m);
      }
    }
    return {
      rows: columns.length,
      transferMs: median(transfer),
      cloneMs: median(clone),
      firstBatchMs: median(firstBatch),
      memcpyMs: median(memcpy),
      transferVsMemcpy: median(ratios),
    };
  } finally {
    await transportCase.close();
  }
}
