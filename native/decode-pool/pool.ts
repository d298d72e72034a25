// Decoding a snapshot's rings in parallel, by default by executing the scatter plan
// (decode/scatter-plan.ts, the one decodeSnapshot executes on one thread): worker
// threads and this one each key their share of the flight-recorder rings (each record's time,
// byte offset and event: 14 bytes, not a 39-byte row), then the merge order of those keys is cut
// into slices of about equal rows (mergeSlicesOfTimes: cut rows sampled from the rings, each ring
// cut by binary search), and each thread decodes the records of its slice from the ring bytes
// straight into their rows of the shared output set. Every row is written once, at its final
// place. A ring that cannot be keyed (side-band records, records without a time, unknown ids,
// damaged times) is decoded into its own rows as one thread would and copied into place.
// (The pool before that path decoded whole rings into their own column sets and then merged them
// in slices: every row written twice. It was never faster, at 2 to 64 rings of 16 and 64 MiB
// (README, "Parallel decode"), and is gone.)
// The columns are the single-thread decoder's, value for value, either way: each record is decoded
// by the same rules, the merge order is the same total order (key, ring, row), and every time is
// an exact integer while the snapshot spans under 2^53 ns; a snapshot that does not (damaged
// times) is decoded on one thread instead.
//
// Workers start on the first parallel decode and are reused for every later snapshot. An idle
// worker is unref'd (it never keeps the process alive); close() terminates them, and a worker that
// fails is terminated and replaced on the next decode.

import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ColumnSet, columnSetBytes, type SetSource } from '../decode/column-set';
import { decodeSnapshot } from '../decode/columns';
import { decodeRingByRing, flightRecordersWithRecords, type SnapshotInput } from '../decode/assemble';
import {
  keyOrDecode,
  scatterPlan,
  type KeyOutcome,
  type KeyStep,
  type ScatterCounts,
  type ScatterThreads,
  type StepOutcome,
  type WriteStep,
} from '../decode/scatter-plan';
import type { MergeSlice } from '../decode/merge';
import { scatterSlice } from '../decode/scatter';
import { sharedKeyScratch, type KeyScratch } from '../decode/key-scratch';
import { validEnd } from '../decode/walk';
import { eventTables, type EventTables, type RingDecode } from '../decode/decode-ring';
import type { ColumnArena } from '../decode/arena';
import type { DecodedSnapshot } from '../decode/types';
import type { RingCopy } from '../abi/snapshot';
import { columnSetOf, sharedSetOf, type DecodeReply, type KeyResult, type RingResult, type SharedSource, type WorkerRequest } from './decode-worker';
import { keyArrayViews, type KeyArraysInMemory } from '../decode/wasm/key-run';
import { releaseRoomSet } from '../decode/wasm/copy-room';
import { scatterPlanned } from '../decode/wasm/memory-scatter';
import { ParallelChoice, type DecodeWay, type ParallelChoiceProbes, type ParallelWhen } from './parallel-choice';

/**
 * Bytes of flight-recorder ring a worker must get, on average, before the pool uses workers: below
 * it, posting the work and waiting for the worker costs about what decoding it here does.
 * `node out/bench/parallel.js` (two rings of 56-byte samples, this pool against one thread in the
 * same rounds) on the 2-vCPU bench VM at load average 0.8-0.9, three runs: the scatter path took
 * 0.63-0.73× one thread's time at 1 MiB per ring, 0.62-0.64× at 2 MiB, 0.52-0.55× at 4-16 MiB, and
 * 2.0-2.6× at 256 KiB. Earlier, with the pool before the scatter path and other test runs loading
 * the machine (load average 5-8), parallel took 0.7-1.4× at 1-2 MiB: a loaded machine rarely gives
 * both threads a CPU at once, and losing there costs about a millisecond at this size.
 */
export const MIN_WORKER_BYTES = 1024 * 1024;

/**
 * Rows a merge must hold before the pool cuts it into slices for the workers (only when the rings
 * went to workers, which MIN_WORKER_BYTES already keeps to about 37k rows of 56-byte samples and
 * more): a floor against posting slices of a few rows each when a caller lowers minWorkerBytes,
 * not a measured break-even. Below it, this thread writes every row after the rings are keyed.
 */
export const MIN_PARALLEL_MERGE_ROWS = 1 << 14;

/** Worker threads a pool starts unless told otherwise: one per CPU beside the thread that decodes with them. */
export function defaultWorkerCount(): number {
  return Math.max(0, availableParallelism() - 1);
}

/** The compiled worker: next to this module (tsc) or next to the bundle that holds it (dist/). */
const WORKER_FILE = join(__dirname, 'decode-worker.js');

/**
 * How long a worker polls for a request it was told is coming, and this thread for a reply after
 * its own share: a few times what waking a sleeping thread takes (decode-worker.ts), short enough
 * that a late request or reply costs little CPU before the event loop takes over.
 */
const STAND_BY_MS = 2;
const REPLY_POLL_MS = 3;

/** No arena: fresh sets of shared memory, left to the GC. */
const FRESH_SHARED_SETS: SetSource = {
  take: (rows) => new ColumnSet(rows, new SharedArrayBuffer(columnSetBytes(rows))),
  give: (set) => void releaseRoomSet(set),
};

export interface DecodePoolOptions {
  /** Worker threads (default: one per core beyond this thread's). 0: every decode runs on this thread. */
  readonly workers?: number;
  /** Smallest share of ring bytes a worker gets before the pool uses workers (default MIN_WORKER_BYTES). */
  readonly minWorkerBytes?: number;
  /** Fewest rows of a merge the pool merges in parallel (default MIN_PARALLEL_MERGE_ROWS); Infinity: always here. */
  readonly minMergeRows?: number;
  /** When workers are used (parallel-choice.ts): 'cores-free' by default; tests of the parallel path say 'always'. */
  readonly parallelWhen?: ParallelWhen;
  /** What the 'cores-free' choice reads (tests inject a busy or an idle machine). */
  readonly probes?: ParallelChoiceProbes;
}

export interface PoolDecodeOptions {
  /** Take column memory from this arena; it must be a shared one (new ColumnArena({ shared: true })). */
  readonly arena?: ColumnArena;
}

interface Pending {
  resolve(reply: DecodeReply): void;
  reject(error: Error): void;
}

/** One worker thread and the request it is working on. */
class PoolWorker {
  private pending: Pending | null = null;
  private failed: Error | null = null;
  private readonly worker: Worker;
  /** This side of the worker's channel (decode-worker.ts says why a channel of its own). */
  private readonly port: MessagePort;

  constructor(
    file: string,
    private readonly onFailure: (self: PoolWorker) => void,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(file, { workerData: { port: port2 }, transferList: [port2] });
    this.worker.unref();
    port1.on('message', (reply: DecodeReply) => this.settle(reply));
    // After on('message'), which refs the port: an idle pool does not keep the process alive.
    port1.unref();
    this.worker.on('error', (error: Error) => this.fail(error));
    this.worker.on('exit', (code: number) => this.fail(new Error(`decode worker exited with code ${code}`)));
  }

  run(request: WorkerRequest): Promise<DecodeReply> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      // Busy: the worker keeps the process alive until it answers.
      this.worker.ref();
      this.port.postMessage(request);
    });
  }

  /** Tells the worker a request is coming: it polls for it for up to `pollMs` instead of sleeping (no reply). */
  standBy(pollMs: number): void {
    if (!this.failed && !this.pending) this.port.postMessage({ kind: 'stand-by', pollMs } satisfies WorkerRequest);
  }

  /** Polls for the reply to the pending request until `until` (performance.now()), settling it when it comes; the event loop delivers it otherwise. */
  pollReply(until: number): void {
    while (this.pending && performance.now() < until) {
      const reply = receiveMessageOnPort(this.port);
      if (reply) this.settle(reply.message as DecodeReply);
    }
  }

  terminate(): Promise<number> {
    this.failed ??= new Error('decode pool closed');
    this.port.close();
    return this.worker.terminate();
  }

  private settle(reply: DecodeReply): void {
    const pending = this.pending;
    this.pending = null;
    this.worker.unref();
    if (!pending) return;
    if ('error' in reply) pending.reject(new Error(`decode worker: ${reply.error}`));
    else pending.resolve(reply);
  }

  private fail(error: Error): void {
    const first = this.failed === null;
    this.failed ??= error;
    const pending = this.pending;
    this.pending = null;
    pending?.reject(error);
    if (first) this.onFailure(this);
  }
}

/** Splits rings among `lanes` by bytes, largest first onto the least loaded lane (lane 0 is this thread). */
function lanesOf(rings: readonly RingCopy[], ringNumbers: readonly number[], lanes: number): number[][] {
  const out: number[][] = Array.from({ length: lanes }, () => []);
  const load = new Array<number>(lanes).fill(0);
  const bytes = (r: number): number => validEnd(rings[r]);
  for (const r of [...ringNumbers].sort((a, b) => bytes(b) - bytes(a) || a - b)) {
    let lane = 0;
    for (let l = 1; l < lanes; l++) if (load[l] < load[lane]) lane = l;
    out[lane].push(r);
    load[lane] += bytes(r);
  }
  return out;
}

export class DecodePool {
  readonly workerCount: number;
  readonly minWorkerBytes: number;
  readonly minMergeRows: number;
  private workers: PoolWorker[] = [];
  /** Key arrays of the scatter path by ring number, reused across snapshots (12 bytes a record, shared memory). */
  private keyScratch: KeyScratch[] = [];
  /**
   * Shared copies of ring bytes that are not in shared memory already, one per ring slot a worker
   * decodes, reused across snapshots: a warm memcpy instead of structured clone, which copies into
   * fresh memory (about 7 ms per MiB on the bench machine).
   */
  private staging: Uint8Array[] = [];
  private nextId = 0;
  /** What the scatter plan did. */
  private readonly counts: ScatterCounts = { inMemory: 0, readInPlace: 0, readInPlaceRedone: 0, inSlices: 0 };
  private ringsKeyed = 0;
  private readonly choice: ParallelChoice;
  private readonly decodesBy: Record<DecodeWay, number> = { parallel: 0, 'one-thread': 0 };
  private closed = false;
  /** The decode in progress: decodes run one after another, since each worker holds one request at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: DecodePoolOptions = {}) {
    this.workerCount = Math.max(0, Math.floor(options.workers ?? defaultWorkerCount()));
    this.minWorkerBytes = options.minWorkerBytes ?? MIN_WORKER_BYTES;
    this.minMergeRows = options.minMergeRows ?? MIN_PARALLEL_MERGE_ROWS;
    this.choice = new ParallelChoice(options.parallelWhen ?? 'cores-free', options.probes);
  }

  /** Merges this pool has cut into slices and merged on its workers (for tests and the bench). */
  get parallelMerges(): number {
    return this.counts.inSlices;
  }

  /** Merges this pool has written as WebAssembly in a snapshot memory (wasm/memory-scatter.ts; for tests and the bench). */
  get mergesInSnapshotMemory(): number {
    return this.counts.inMemory;
  }

  /**
   * Merges that read uniform rings in place (uniform.ts), and of them those a slice found a ring
   * not uniform in, merged again with every ring keyed (for tests and the bench).
   */
  get mergesInPlace(): { readonly read: number; readonly redone: number } {
    return { read: this.counts.readInPlace, redone: this.counts.readInPlaceRedone };
  }

  /** Flight-recorder rings this pool has decoded straight into their merged rows (the scatter path; for tests and the bench). */
  get keyedRings(): number {
    return this.ringsKeyed;
  }

  /** Worker threads running now. */
  get runningWorkers(): number {
    return this.workers.length;
  }

  /**
   * True when `raw` is decoded with workers: at least two flight-recorder rings hold records and
   * the bytes the workers would get reach minWorkerBytes each on average.
   */
  usesWorkers(raw: SnapshotInput): boolean {
    if (this.workerCount === 0 || this.closed) return false;
    const backward = flightRecordersWithRecords(raw.rings);
    if (backward.length < 2) return false;
    const lanes = lanesOf(raw.rings, backward, Math.min(backward.length, this.workerCount + 1));
    let workerBytes = 0;
    for (const lane of lanes.slice(1)) for (const r of lane) workerBytes += validEnd(raw.rings[r]);
    return workerBytes >= this.minWorkerBytes * (lanes.length - 1);
  }

  /**
   * Decodes a snapshot: on worker threads when usesWorkers(raw), else as decodeSnapshot does. Same
   * columns either way. Calls made while one runs wait for it.
   */
  decode(raw: SnapshotInput, options: PoolDecodeOptions = {}): Promise<DecodedSnapshot> {
    const run = this.queue.then(() => this.decodeNow(raw, options));
    this.queue = run.catch(() => {
      // the caller gets this decode's failure from `run`; the queue only orders the next decode after it
    });
    return run;
  }

  private async decodeNow(raw: SnapshotInput, options: PoolDecodeOptions): Promise<DecodedSnapshot> {
    const arena = options.arena;
    if (arena && !arena.shared) {
      throw new TypeError('DecodePool.decode needs a shared column arena: new ColumnArena({ shared: true })');
    }
    if (!this.usesWorkers(raw)) return decodeSnapshot(raw, { arena });
    const way = this.choice.choose();
    const bytes = flightRecordersWithRecords(raw.rings).reduce((sum, r) => sum + validEnd(raw.rings[r]), 0);
    const started = process.hrtime.bigint();
    const decoded = way === 'parallel' ? await this.decodeScattered(raw, arena) : decodeSnapshot(raw, { arena });
    this.choice.record(way, bytes, Number(process.hrtime.bigint() - started));
    this.decodesBy[way]++;
    return decoded;
  }

  /** Decodes the pool could have given its workers, by the way each went (for tests and the bench). */
  get decodesByWay(): Readonly<Record<DecodeWay, number>> {
    return this.decodesBy;
  }

  /**
   * The scatter plan (decode/scatter-plan.ts) executed by this pool: this thread and every worker
   * key a lane of flight-recorder rings (largest first onto the least loaded), then each writes one
   * slice of the merge order straight into its rows of the output set. What the plan leaves (times
   * spanning 2^53 ns or more) is decoded ring by ring on this thread.
   */
  private async decodeScattered(raw: SnapshotInput, arena: ColumnArena | undefined): Promise<DecodedSnapshot> {
    arena?.beginSnapshot();
    // The workers get their first request after the side-band rings and the cuts: awake by then.
    this.ensureWorkers(this.workerCount);
    for (const worker of this.workers) worker.standBy(STAND_BY_MS);
    const sets: SetSource = arena ?? FRESH_SHARED_SETS;
    const tables = eventTables(raw.events);
    const threads: ScatterThreads = {
      count: this.workerCount + 1,
      minSliceRows: this.minMergeRows,
      shared: (ring, slot) => this.shared(ring, slot),
    };
    try {
      const run = scatterPlan(raw, tables, sets, arena, threads, this.counts);
      // usesWorkers found two flight-recorder rings with records, so there is a plan; null would mean ring by ring.
      if (!run) return decodeRingByRing(raw, tables, sets, arena);
      let next = run.next();
      while (!next.done) {
        const step = next.value;
        let outcome: StepOutcome;
        try {
          outcome = step.kind === 'key' ? await this.keyStep(raw, tables, sets, step) : await this.writeStep(raw, tables, step);
        } catch (error) {
          next = run.throw(error);
          continue;
        }
        next = run.next(outcome);
      }
      return next.value ?? decodeRingByRing(raw, tables, sets, arena);
    } catch (error) {
      arena?.endSnapshot(null);
      throw error;
    }
  }

  /** The plan's key step: lane 0 here, the others on the workers; rings decoded into rows on the way come back in `sets` on failure. */
  private async keyStep(raw: SnapshotInput, tables: EventTables, sets: SetSource, step: KeyStep): Promise<StepOutcome> {
    const rings = raw.rings;
    const lanes = lanesOf(rings, step.rings, Math.max(1, Math.min(step.rings.length, this.workerCount + 1)));
    const keyPlace = (r: number, lane: number): KeyArraysInMemory | null => step.memory?.keyPlaceOf(rings[r].bytes, lane) ?? null;
    const requests = lanes.slice(1).map((lane, w) =>
      this.workers[w]
        .run({
          kind: 'key',
          id: this.nextId++,
          events: raw.events,
          known: step.known,
          tasks: lane.map((r) => {
            const place = keyPlace(r, w + 1);
            const ring = step.shared[r];
            return place ? { ringNumber: r, ring, scratch: null, place } : { ringNumber: r, ring, scratch: this.keyScratch[r] ?? null };
          }),
        })
        .then(keyedOf),
    );
    const outcomes = new Map<number, KeyOutcome>();
    let failure: unknown = null;
    try {
      for (const r of lanes[0]) {
        outcomes.set(r, keyOrDecode(rings[r], r, tables, step.known, sets, keyPlace(r, 0), this.keyScratch[r] ?? null, sharedKeyScratch));
      }
    } catch (error) {
      failure = error;
    }
    this.pollReplies();
    const settled = await Promise.allSettled(requests);
    for (const s of settled) {
      if (s.status === 'rejected') failure ??= s.reason;
      else
        for (const result of s.value)
          outcomes.set(result.ringNumber, 'keyed' in result ? { keyed: result.keyed } : { decoded: decodeOf(result.decoded, sets) });
    }
    const answered: KeyOutcome[] = [];
    for (const r of step.rings) {
      const outcome = outcomes.get(r);
      if (outcome) answered.push(outcome);
      else failure ??= new Error(`a decode worker answered nothing for ring ${r}, which it was asked to key`);
    }
    if (failure !== null) {
      for (const outcome of outcomes.values()) if ('decoded' in outcome) sets.give(outcome.decoded.rows.set);
      throw failure;
    }
    // Keyed: the workers went back to sleep when they answered; the slices come next.
    for (const worker of this.workers) worker.standBy(STAND_BY_MS);
    return {
      kind: 'key',
      rings: step.rings.map((r, i): KeyOutcome => {
        const outcome = answered[i];
        if (!('keyed' in outcome)) return outcome;
        let keys = outcome.keyed;
        const place = keyPlace(r, 0);
        if (place && keys.scratch.time.byteOffset === place.arrays.time) {
          // Keyed in the memory on another thread: the same arrays, seen through this thread's views of it.
          keys = { ...keys, scratch: keyArrayViews(place.memory.buffer, place.arrays) };
        } else {
          this.keyScratch[r] = keys.scratch;
        }
        this.ringsKeyed++;
        return { keyed: keys };
      }),
    };
  }

  /** The plan's write step: slice 0 here, slice w + 1 on worker w. */
  private async writeStep(raw: SnapshotInput, tables: EventTables, step: WriteStep): Promise<StepOutcome> {
    const { slices, plan, out, sources, shift } = step;
    let writes: Promise<DecodeReply>[];
    if (plan) {
      writes = slices
        .slice(1)
        .map((slice, w) => this.workers[w].run({ kind: 'scatter-planned', id: this.nextId++, plan, slice: plainSlice(slice), lane: w + 1 }));
    } else {
      const shifts = Array.from(shift);
      const wire = sources.map((source, r): SharedSource => {
        if (source.kind === 'keyed') return source;
        if (source.kind === 'uniform') throw new Error(`ring ${r} is read in place, which only a snapshot memory's merge does`);
        return { kind: 'rows', rows: { set: sharedSetOf(source.rows.set), first: source.rows.first, count: source.rows.count } };
      });
      writes = slices.slice(1).map((slice, w) =>
        this.workers[w].run({
          kind: 'scatter',
          id: this.nextId++,
          events: raw.events,
          sources: wire,
          shift: shifts,
          out: sharedSetOf(out),
          slice: plainSlice(slice),
        }),
      );
    }
    let failure: unknown = null;
    const others = [0];
    let failed = false;
    try {
      if (plan) {
        const own = scatterPlanned(plan, slices[0], 0);
        others[0] = own.others;
        failed = own.failed;
      } else {
        scatterSlice(out, sources, tables, shift, slices[0]);
      }
    } catch (error) {
      failure = error;
    }
    this.pollReplies();
    const written = await Promise.allSettled(writes);
    written.forEach((s, w) => {
      if (s.status === 'rejected') {
        failure ??= s.reason;
      } else if (plan) {
        if ('planned' in s.value) {
          others.push(s.value.planned.others);
          failed ||= s.value.planned.failed;
        } else {
          failure ??= new Error(`decode worker ${w} answered a planned slice with no count`);
        }
      }
    });
    if (failure !== null) throw failure;
    return { kind: 'write', others, failed };
  }

  /** Terminates every worker; later decodes run on this thread. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers;
    this.workers = [];
    this.staging = [];
    this.keyScratch = [];
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  /** `ring` with its bytes in shared memory: as it is when they are, else copied into staging slot `slot`. */
  private shared(ring: RingCopy, slot: number): RingCopy {
    if (ring.bytes.buffer instanceof SharedArrayBuffer) return ring;
    let staged = this.staging[slot];
    if (!staged || staged.length < ring.bytes.length) {
      staged = this.staging[slot] = new Uint8Array(new SharedArrayBuffer(ring.bytes.length));
    }
    staged.set(ring.bytes);
    return { ...ring, bytes: staged.subarray(0, ring.bytes.length) };
  }

  /** Polls every worker's reply, all within one REPLY_POLL_MS however many workers there are. */
  private pollReplies(): void {
    const until = performance.now() + REPLY_POLL_MS;
    for (const worker of this.workers) worker.pollReply(until);
  }

  private ensureWorkers(count: number): void {
    while (this.workers.length < count) {
      const worker = new PoolWorker(WORKER_FILE, (failed) => {
        this.workers = this.workers.filter((w) => w !== failed);
        void failed.terminate();
      });
      this.workers.push(worker);
    }
  }
}

function keyedOf(reply: DecodeReply): readonly KeyResult[] {
  if (!('keyed' in reply)) throw new Error('decode worker answered a key request with no rings');
  return reply.keyed;
}

/** A ring a worker decoded into rows; the sets it used on the way go back to `sets`. */
function decodeOf(result: RingResult, sets: SetSource): RingDecode {
  for (const spare of result.spare) sets.give(columnSetOf(spare));
  return { rows: { set: columnSetOf(result.set), first: result.first, count: result.count }, state: result.state, anomalies: result.anomalies };
}

/** A slice as plain arrays (what structured clone copies cheaply). */
function plainSlice(slice: MergeSlice): MergeSlice {
  return { from: Array.from(slice.from), to: Array.from(slice.to), at: slice.at };
}
