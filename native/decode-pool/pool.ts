// Decoding a snapshot's rings in parallel, by default on the scatter path (scatter.ts): worker
// threads and this one each key their share of the flight-recorder rings (each record's time,
// byte offset and event: 14 bytes, not a 39-byte row), then the merge order of those keys is cut
// into slices of about equal rows (mergeSlicesOfTimes: cut rows sampled from the rings, each ring
// cut by binary search), and each thread decodes the records of its slice from the ring bytes
// straight into their rows of the shared output set. Every row is written once, at its final
// place. A ring that cannot be keyed (side-band records, records without a time, unknown ids,
// damaged times) is decoded into its own rows as one thread would and copied into place.
// With `scatter: false` (the pool before that path, kept for the bench's comparison), whole rings
// are decoded into their own column sets first and each thread then merges its slice of every
// ring into its rows of the output set (mergeSliceInto): every row is written twice.
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
import { ColumnSet, columnSetBytes } from '../decode/column-set';
import { assembleSnapshot, decodeSnapshot, exactSpan, flightRecordersWithRecords, sideBandFirst, timeAxis, type SnapshotInput } from '../decode/columns';
import { mergeSliceInto, mergeSlices, mergeSlicesOfTimes, type MergeSlice } from '../decode/merge';
import { UNPLACED, keyRing, placedIn, scatterSlice, sharedKeyScratch, sliceTimes, type KeyScratch, type ScatterSource } from '../decode/scatter';
import { uniformRing } from '../decode/uniform';
import { validEnd } from '../decode/walk';
import {
  decodeRingRows, eventTables, firstSetRows, type RingDecode, type RingRows, type SetSource,
} from '../decode/decode-ring';
import type { ColumnArena } from '../decode/arena';
import type { DecodedSnapshot } from '../decode/types';
import type { RingCopy } from '../abi/snapshot';
import { columnSetOf, sharedSetOf, type DecodeReply, type KeyResult, type RingResult, type RingTask, type SharedSource, type WorkerRequest } from './decode-worker';
import { commonSnapshotMemory, takeMergedSet } from '../decode/wasm/snapshot-memory';
import { keyArrayViews, keyRunIn, type KeyArraysInMemory } from '../decode/wasm/key-run';
import { releaseRoomSet } from '../decode/wasm/copy-room';
import { placeOtherRecords, placeSideBandRows, planScatter, scatterPlanned } from '../decode/wasm/memory-scatter';

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
  /**
   * Decode each flight-recorder row straight into its merged place (scatter.ts; default true), or
   * false: decode every ring into its own rows, then merge them into the output (the pool before
   * the scatter path, kept for the bench's comparison).
   */
  readonly scatter?: boolean;
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

  constructor(file: string, private readonly onFailure: (self: PoolWorker) => void) {
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
  readonly scatter: boolean;
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
  private mergesInSlices = 0;
  private mergesInMemory = 0;
  private mergesReadInPlace = 0;
  private mergesReadInPlaceRedone = 0;
  private ringsKeyed = 0;
  private closed = false;
  /** The decode in progress: decodes run one after another, since each worker holds one request at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: DecodePoolOptions = {}) {
    this.workerCount = Math.max(0, Math.floor(options.workers ?? defaultWorkerCount()));
    this.minWorkerBytes = options.minWorkerBytes ?? MIN_WORKER_BYTES;
    this.minMergeRows = options.minMergeRows ?? MIN_PARALLEL_MERGE_ROWS;
    this.scatter = options.scatter ?? true;
  }

  /** Merges this pool has cut into slices and merged on its workers (for tests and the bench). */
  get parallelMerges(): number {
    return this.mergesInSlices;
  }

  /** Merges this pool has written as WebAssembly in a snapshot memory (wasm/memory-scatter.ts; for tests and the bench). */
  get mergesInSnapshotMemory(): number {
    return this.mergesInMemory;
  }

  /**
   * Merges that read uniform rings in place (uniform.ts), and of them those a slice found a ring
   * not uniform in, merged again with every ring keyed (for tests and the bench).
   */
  get mergesInPlace(): { readonly read: number; readonly redone: number } {
    return { read: this.mergesReadInPlace, redone: this.mergesReadInPlaceRedone };
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
    if (this.scatter) return this.decodeScattered(raw, arena);
    arena?.beginSnapshot();
    const sets: SetSource = arena ?? FRESH_SHARED_SETS;
    const rings = raw.rings;
    const tables = eventTables(raw.events);
    const { decodes, known, backward } = sideBandFirst(rings, tables, sets);
    const lanes = lanesOf(rings, backward, Math.min(backward.length, this.workerCount + 1));
    this.ensureWorkers(lanes.length - 1);
    const lent: ColumnSet[] = [];
    let slot = 0;
    const requests = lanes.slice(1).map((lane, w) => {
      const tasks: RingTask[] = lane.map((r) => {
        const set = sets.take(firstSetRows(rings[r]));
        lent.push(set);
        return { ringNumber: r, ring: this.shared(rings[r], slot++), set: sharedSetOf(set) };
      });
      return this.workers[w].run({ kind: 'decode', id: this.nextId++, events: raw.events, known: { ...known }, tasks }).then(resultsOf);
    });
    // This thread's lane while the workers decode theirs; its errors wait for the workers to finish.
    let ownError: unknown = null;
    try {
      for (const r of lanes[0]) decodes[r] = decodeRingRows(rings[r], r, tables, known, sets);
    } catch (error) {
      ownError = error;
    }
    const settled = await Promise.allSettled(requests);
    const failure = ownError ?? settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
    if (failure !== null && failure !== undefined) {
      // The sets lent to workers come back whatever happened; decoded rows are dropped.
      for (const set of lent) sets.give(set);
      for (const decode of decodes) if (decode) sets.give(decode.rows.set);
      arena?.endSnapshot(null);
      throw failure;
    }
    for (const s of settled) {
      if (s.status !== 'fulfilled') continue;
      for (const result of s.value) {
        decodes[result.ringNumber] = {
          rows: { set: columnSetOf(result.set), first: result.first, count: result.count },
          state: result.state,
          anomalies: result.anomalies,
        };
        for (const spare of result.spare) sets.give(columnSetOf(spare));
      }
    }
    if (!exactSpan(rings, decodes)) {
      // Damaged times far apart: values may round differently per base, so decode as one thread does.
      for (const decode of decodes) sets.give(decode.rows.set);
      arena?.endSnapshot(null);
      return decodeSnapshot(raw, { arena });
    }
    let merged: RingRows | null;
    try {
      merged = await this.mergeInParallel(rings, decodes, sets);
    } catch (error) {
      for (const decode of decodes) sets.give(decode.rows.set);
      arena?.endSnapshot(null);
      throw error;
    }
    return assembleSnapshot(raw, decodes, sets, arena, merged ?? undefined);
  }

  /**
   * The scatter path (scatter.ts): every thread keys its lane of flight-recorder rings (side-band
   * rings are decoded here first, as decodeSnapshot does), the merge order of the keys is cut into
   * one slice per thread, and each thread decodes the records of its slice straight into their rows
   * of the output set. Rings keyRing does not take are decoded into their own rows on the way and
   * copied into place. Rings in one snapshot memory that look uniform (uniform.ts) are not keyed
   * but read in place by the slices (`inPlace`); when a slice finds one that is not, the snapshot
   * is decoded again with every ring keyed.
   */
  private async decodeScattered(raw: SnapshotInput, arena: ColumnArena | undefined, inPlace = true): Promise<DecodedSnapshot> {
    if (inPlace) arena?.beginSnapshot();
    // The workers get their first request after the side-band rings and the cuts: awake by then.
    this.ensureWorkers(this.workerCount);
    for (const worker of this.workers) worker.standBy(STAND_BY_MS);
    const sets: SetSource = arena ?? FRESH_SHARED_SETS;
    const rings = raw.rings;
    const tables = eventTables(raw.events);
    const { decodes, known, backward } = sideBandFirst(rings, tables, sets);
    const sources = new Array<ScatterSource>(rings.length);
    decodes.forEach((decode, r) => {
      sources[r] = { kind: 'rows', rows: decode.rows };
    });
    // Every thread reads every flight-recorder ring's bytes when it writes its slice: all in shared memory.
    const shared = new Array<RingCopy>(rings.length);
    backward.forEach((r, slot) => {
      shared[r] = this.shared(rings[r], slot);
    });
    // Copies in one snapshot memory are keyed there, by WebAssembly, and merged there (wasm/memory-scatter.ts).
    // Every thread that keys or writes a slice needs job records of its own there: lanes for this thread and each worker.
    const inOne = commonSnapshotMemory(rings, flightRecordersWithRecords(rings));
    const memory = inOne && this.workerCount + 1 <= inOne.lanes ? inOne : null;
    const toKey: number[] = [];
    for (const r of backward) {
      const uniform = memory && inPlace ? uniformRing(shared[r], tables) : null;
      if (!uniform) {
        toKey.push(r);
        continue;
      }
      decodes[r] = { rows: { set: UNPLACED, first: 0, count: uniform.count }, state: uniform.state, anomalies: uniform.anomalies };
      sources[r] = { kind: 'uniform', ring: shared[r], uniform };
    }
    const lanes = lanesOf(rings, toKey, Math.max(1, Math.min(toKey.length, this.workerCount + 1)));
    const keyPlace = (r: number, lane: number): KeyArraysInMemory | null => memory?.keyPlaceOf(rings[r].bytes, lane) ?? null;
    const keyed = (r: number, result: KeyResult | null, own: RingDecode | null): void => {
      if (result && 'keyed' in result) {
        let keys = result.keyed;
        const place = keyPlace(r, 0);
        if (place && keys.scratch.time.byteOffset === place.arrays.time) {
          // Keyed in the memory on another thread: the same arrays, seen through this thread's views of it.
          keys = { ...keys, scratch: keyArrayViews(place.memory.buffer, place.arrays) };
        } else {
          this.keyScratch[r] = keys.scratch;
        }
        this.ringsKeyed++;
        decodes[r] = { rows: { set: UNPLACED, first: 0, count: keys.count }, state: keys.state, anomalies: keys.anomalies };
        sources[r] = { kind: 'keyed', ring: shared[r], keys };
        return;
      }
      const decode = own ?? (result && 'decoded' in result ? decodeOf(result.decoded, sets) : null);
      if (!decode) throw new Error(`decode worker answered nothing for ring ${r}`);
      decodes[r] = decode;
      sources[r] = { kind: 'rows', rows: decode.rows };
    };
    const requests = lanes.slice(1).map((lane, w) => this.workers[w].run({
      kind: 'key', id: this.nextId++, events: raw.events, known: { ...known },
      tasks: lane.map((r) => {
        const place = keyPlace(r, w + 1);
        return place ? { ringNumber: r, ring: shared[r], scratch: null, place } : { ringNumber: r, ring: shared[r], scratch: this.keyScratch[r] ?? null };
      }),
    }).then(keyedOf));
    let ownError: unknown = null;
    try {
      for (const r of lanes[0]) {
        const place = keyPlace(r, 0);
        const inMemory = place ? keyRunIn(place) : null;
        const keys = inMemory
          ? keyRing(shared[r], tables, inMemory.scratch, sharedKeyScratch, inMemory.engine)
          : keyRing(shared[r], tables, this.keyScratch[r] ?? null, sharedKeyScratch);
        keyed(r, keys ? { ringNumber: r, keyed: keys } : null, keys ? null : decodeRingRows(rings[r], r, tables, known, sets));
      }
    } catch (error) {
      ownError = error;
    }
    this.pollReplies();
    const settled = await Promise.allSettled(requests);
    let failure = ownError ?? settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
    if (failure === null || failure === undefined) {
      try {
        for (const s of settled) if (s.status === 'fulfilled') for (const result of s.value) keyed(result.ringNumber, result, null);
      } catch (error) {
        failure = error;
      }
    }
    const giveDecoded = (): void => {
      for (const source of sources) if (source?.kind === 'rows' && source.rows.set !== UNPLACED) sets.give(source.rows.set);
    };
    if (failure !== null && failure !== undefined) {
      giveDecoded();
      arena?.endSnapshot(null);
      throw failure;
    }
    if (!exactSpan(rings, decodes)) {
      // Damaged times far apart: values may round differently per base, so decode as one thread does.
      giveDecoded();
      arena?.endSnapshot(null);
      return decodeSnapshot(raw, { arena });
    }
    // Keyed: the workers went back to sleep when they answered; the slices come next.
    if (toKey.length > 0) for (const worker of this.workers) worker.standBy(STAND_BY_MS);
    const { shift } = timeAxis(rings, decodes);
    const times = sliceTimes(sources);
    let total = 0;
    let nonEmpty = 0;
    for (const time of times) {
      total += time.length;
      if (time.length > 0) nonEmpty++;
    }
    const parts = nonEmpty >= 2 && total >= this.minMergeRows ? this.workerCount + 1 : 1;
    // A uniform ring's times are taken as sorted here; the slices check every one as they write it.
    const sorted = sources.map((source) => source.kind === 'uniform' || (source.kind === 'keyed' && source.keys.sorted));
    const slices: MergeSlice[] = parts > 1
      ? mergeSlicesOfTimes(times, shift, parts, sorted)
      : [{ from: new Array<number>(rings.length).fill(0), to: times.map((time) => time.length), at: 0 }];
    const merged = total > 0 ? takeMergedSet(memory, total) : null;
    const out = merged ?? (total > 0 ? sets.take(total) : UNPLACED);
    const plan = memory && merged ? planScatter(memory, sources, tables, shift, total) : null;
    const readsInPlace = sources.some((source) => source.kind === 'uniform');
    const giveAll = (): void => {
      giveDecoded();
      // give() frees the snapshot memory's set as well (releaseRoomSet).
      if (out !== UNPLACED) sets.give(out);
    };
    if (!plan && readsInPlace) {
      // Rings read in place are merged only by the snapshot memory's merge: key them all instead.
      giveAll();
      return this.decodeScattered(raw, arena, false);
    }
    const shifts = Array.from(shift);
    let writes: Promise<DecodeReply>[];
    if (plan) {
      writes = slices.slice(1).map((slice, w) => this.workers[w].run({ kind: 'scatter-planned', id: this.nextId++, plan, slice: plainSlice(slice), lane: w + 1 }));
    } else {
      const wire = sources.map((source, r): SharedSource => {
        if (source.kind === 'keyed') return source;
        if (source.kind === 'uniform') throw new Error(`ring ${r} is read in place, which only a snapshot memory's merge does`);
        return { kind: 'rows', rows: { set: sharedSetOf(source.rows.set), first: source.rows.first, count: source.rows.count } };
      });
      writes = slices.slice(1).map((slice, w) => this.workers[w].run({
        kind: 'scatter', id: this.nextId++, events: raw.events, sources: wire, shift: shifts, out: sharedSetOf(out), slice: plainSlice(slice),
      }));
    }
    ownError = null;
    let ownOthers = 0;
    let notUniform = false;
    try {
      if (plan) {
        const own = scatterPlanned(plan, slices[0], 0);
        ownOthers = own.others;
        notUniform = own.failed;
      } else {
        scatterSlice(out, sources, tables, shift, slices[0]);
      }
    } catch (error) {
      ownError = error;
    }
    this.pollReplies();
    const written = await Promise.allSettled(writes);
    failure = ownError ?? written.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
    for (const settled of written) if (settled.status === 'fulfilled' && 'planned' in settled.value && settled.value.planned.failed) notUniform = true;
    if ((failure === null || failure === undefined) && !notUniform && memory && plan) {
      try {
        // The side-band rows, then the records each thread listed (not plain samples), into their rows.
        const listed = [ownOthers, ...written.map((settled, w) => {
          if (settled.status !== 'fulfilled' || !('planned' in settled.value)) throw new Error(`decode worker ${w} answered a planned slice with no count`);
          return settled.value.planned.others;
        })];
        placeSideBandRows(memory, out, sources, shift);
        notUniform = !placeOtherRecords(plan, listed, out, sources, tables, shift);
      } catch (error) {
        failure = error;
      }
    }
    if ((failure === null || failure === undefined) && notUniform) {
      // A ring read in place was not uniform after all: key every ring and merge again.
      giveAll();
      this.mergesReadInPlaceRedone++;
      return this.decodeScattered(raw, arena, false);
    }
    if (failure !== null && failure !== undefined) {
      giveAll();
      arena?.endSnapshot(null);
      throw failure;
    }
    if (plan) this.mergesInMemory++;
    if (readsInPlace) this.mergesReadInPlace++;
    if (parts > 1) this.mergesInSlices++;
    return assembleSnapshot(raw, placedIn(out, decodes), sets, arena, { set: out, first: 0, count: total });
  }

  /**
   * The rings' rows merged by time on every thread into one set taken from `sets`, as the
   * single-thread merge orders them; null when the merge is too small to share or fewer than two
   * rings hold rows (assembleSnapshot then merges here). On failure the output set goes back.
   */
  private async mergeInParallel(rings: readonly RingCopy[], decodes: readonly RingDecode[], sets: SetSource): Promise<RingRows | null> {
    const sources = decodes.map((decode) => decode.rows);
    let total = 0;
    let nonEmpty = 0;
    for (const rows of sources) {
      total += rows.count;
      if (rows.count > 0) nonEmpty++;
    }
    if (nonEmpty < 2 || total < this.minMergeRows || this.workerCount === 0) return null;
    const { shift } = timeAxis(rings, decodes);
    const slices = mergeSlices(sources, shift, this.workerCount + 1);
    this.ensureWorkers(this.workerCount);
    const out = sets.take(total);
    const shared = sources.map((rows) => ({ set: sharedSetOf(rows.set), first: rows.first, count: rows.count }));
    const target = sharedSetOf(out);
    const shifts = Array.from(shift);
    // Slice 0 is this thread's; the workers take the rest.
    const requests = slices.slice(1).map((slice, w) =>
      this.workers[w].run({ kind: 'merge', id: this.nextId++, sources: shared, shift: shifts, out: target, slice: plainSlice(slice) }));
    let ownError: unknown = null;
    try {
      mergeSliceInto(out, sources, shift, slices[0]);
    } catch (error) {
      ownError = error;
    }
    const settled = await Promise.allSettled(requests);
    const failure = ownError ?? settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason;
    if (failure !== null && failure !== undefined) {
      sets.give(out);
      throw failure;
    }
    this.mergesInSlices++;
    return { set: out, first: 0, count: total };
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

function resultsOf(reply: DecodeReply): readonly RingResult[] {
  if (!('results' in reply)) throw new Error('decode worker answered a decode with no rings');
  return reply.results;
}

/** A slice as plain arrays (what structured clone copies cheaply). */
function plainSlice(slice: MergeSlice): MergeSlice {
  return { from: Array.from(slice.from), to: Array.from(slice.to), at: slice.at };
}
