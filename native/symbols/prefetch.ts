// Symbol tables read ahead on a second thread: while this thread reads, decodes and indexes a perf.data file, a
// worker (prefetch-worker.ts) parses /proc/kallsyms and builds the function index of each object the file names, the
// largest first, and hands each over as the columns the disk cache holds (symbol-cache.ts), transferred without a
// copy. When this thread then needs one (Kallsyms.read, ObjectFile's function index), it takes the worker's columns,
// waiting for them if the worker is building them now; an object the worker has not started yet this thread claims
// and builds itself, so no index is built twice and this thread never waits for work it could do. A cold decode spent
// 0.5-0.8 s of CPU in these indexes (node's own executable 100-280 ms, kallsyms 110-150 ms).
//
// Whether to start at all is the caller's choice (a core must be free: on a busy machine a second thread only takes
// time from the first). Who claimed what is shared memory, so both sides decide without a message round trip.

import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { StoredFunctionColumns } from './function-index';
import type { KallsymsColumns } from './symbol-cache';

/** A piece of work's claim: nobody yet, the worker, or this thread (which then builds it itself). */
export const Claim = { Free: 0, Worker: 1, Here: 2 } as const;

/**
 * The Int32Array over `PrefetchStart.control`: the worker sets Running when its code starts and Finished when it has
 * gone through its work, this thread Objects when it has sent the objects; kallsyms' claim and whether its reply was
 * posted.
 */
export const Control = { Running: 0, Objects: 1, KallsymsClaim: 2, KallsymsPosted: 3, Finished: 4, Length: 5 } as const;

/** What the worker is started with. */
export interface PrefetchStart {
  readonly kallsyms: boolean;
  /** Whether the worker may read and write the disk cache (this process's --no-symbol-cache and environment). */
  readonly cacheEnabled: boolean;
  readonly control: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** The objects, sent once the file says which: `shared` holds per object its Claim, then 1 once its reply was posted. */
export interface PrefetchObjects {
  readonly objects: readonly string[];
  readonly shared: SharedArrayBuffer;
}

/** A reply: columns, or nothing (the object could not be read there: this thread reads it and says why). */
export type PrefetchReply =
  | { readonly object: number; readonly key: string; readonly functions: StoredFunctionColumns }
  | { readonly object: number }
  | { readonly kallsyms: KallsymsColumns | undefined };

/**
 * How long this thread waits for work the worker claimed before it does the work itself and stops using the worker:
 * far longer than any index takes (node's, the largest seen, 0.3 s on a busy machine), there only for a worker that died.
 */
const GIVE_UP_MS = 20_000;

const WORKER_FILE = join(__dirname, 'prefetch-worker.js');

/** What take() waits on: a claim and its posted flag, and which reply answers it. */
interface Work {
  readonly claims: Int32Array;
  readonly claimAt: number;
  readonly posted: Int32Array;
  readonly postedAt: number;
  readonly answers: (reply: PrefetchReply) => boolean;
}

class Prefetch {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly control: Int32Array;
  private objectClaims: Int32Array | undefined;
  private objectPosted: Int32Array | undefined;
  private readonly objectOf = new Map<string, number>();
  private readonly replies: PrefetchReply[] = [];
  private stopped = false;
  /** Called once this thread has seen the worker's code run (then cleared). */
  private onRunning: (() => void) | undefined;

  constructor(kallsyms: boolean, cacheEnabled: boolean, onRunning: (() => void) | undefined) {
    this.onRunning = onRunning;
    const control = new SharedArrayBuffer(Control.Length * 4);
    this.control = new Int32Array(control);
    if (!kallsyms) this.control[Control.KallsymsClaim] = Claim.Here;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const start: PrefetchStart = { kallsyms, cacheEnabled, control, port: port2 };
    this.worker = new Worker(WORKER_FILE, { workerData: start, transferList: [port2] });
    // Never what keeps the process alive; a worker that fails leaves its work to this thread (see take()).
    this.worker.unref();
    this.worker.on('error', () => this.stop());
  }

  objects(objects: readonly string[]): void {
    if (this.stopped || this.objectClaims) return;
    const shared = new SharedArrayBuffer(Math.max(1, objects.length) * 2 * 4);
    this.objectClaims = new Int32Array(shared, 0, objects.length);
    this.objectPosted = new Int32Array(shared, objects.length * 4, objects.length);
    objects.forEach((file, index) => this.objectOf.set(file, index));
    const message: PrefetchObjects = { objects, shared };
    this.port.postMessage(message);
    Atomics.store(this.control, Control.Objects, 1);
    Atomics.notify(this.control, Control.Objects);
    this.seeRunning();
  }

  /**
   * Calls onRunning once the worker's code has run: looked at where this thread meets the worker anyway (never waited
   * for), by the time the file is indexed, and again at each table taken.
   */
  private seeRunning(): void {
    if (!this.onRunning || Atomics.load(this.control, Control.Running) !== 1) return;
    const onRunning = this.onRunning;
    this.onRunning = undefined;
    onRunning();
  }

  functions(file: string, key: string): StoredFunctionColumns | undefined {
    const object = this.objectOf.get(file);
    if (object === undefined || !this.objectClaims || !this.objectPosted) return undefined;
    const reply = this.take({
      claims: this.objectClaims,
      claimAt: object,
      posted: this.objectPosted,
      postedAt: object,
      answers: (r) => 'object' in r && r.object === object,
    });
    return reply && 'key' in reply && reply.key === key ? reply.functions : undefined;
  }

  kallsyms(): KallsymsColumns | undefined {
    const reply = this.take({
      claims: this.control,
      claimAt: Control.KallsymsClaim,
      posted: this.control,
      postedAt: Control.KallsymsPosted,
      answers: (r) => 'kallsyms' in r,
    });
    return reply && 'kallsyms' in reply ? reply.kallsyms : undefined;
  }

  /** The worker's reply for `work` (waited for while it works on it), or undefined when this thread is to do it. */
  private take(work: Work): PrefetchReply | undefined {
    if (this.stopped) return undefined;
    this.seeRunning();
    if (Atomics.compareExchange(work.claims, work.claimAt, Claim.Free, Claim.Here) !== Claim.Worker) return undefined;
    const deadline = performance.now() + GIVE_UP_MS;
    for (;;) {
      // The worker posts a reply before it marks it posted: once marked, the reply is in the port's queue.
      const posted = Atomics.load(work.posted, work.postedAt) === 1;
      for (let message = receiveMessageOnPort(this.port); message; message = receiveMessageOnPort(this.port)) {
        this.replies.push(message.message as PrefetchReply);
      }
      const at = this.replies.findIndex(work.answers);
      if (at >= 0) return this.replies.splice(at, 1)[0];
      const left = deadline - performance.now();
      if (posted || left <= 0) {
        this.stop();
        return undefined;
      }
      Atomics.wait(work.posted, work.postedAt, 0, Math.min(left, 100));
    }
  }

  /** Waits until the worker has gone through all its work (or `timeoutMs` passed); whether it has. */
  finish(timeoutMs: number): boolean {
    return this.stopped || Atomics.wait(this.control, Control.Finished, 0, timeoutMs) !== 'timed-out';
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // Whatever the worker has not started is nobody's: it skips it, and no later take() waits for it.
    const claims = [this.objectClaims ?? new Int32Array(0), this.control.subarray(Control.KallsymsClaim, Control.KallsymsClaim + 1)];
    for (const column of claims) for (let at = 0; at < column.length; at++) Atomics.compareExchange(column, at, Claim.Free, Claim.Here);
    this.replies.length = 0;
    // A worker still waiting for the objects is woken to find none, and ends.
    Atomics.store(this.control, Control.Objects, 1);
    Atomics.notify(this.control, Control.Objects);
    this.port.close();
    void this.worker.terminate();
  }
}

let active: Prefetch | undefined;

/**
 * Starts a worker thread that reads kallsyms (when `kallsyms`) and then the function index of each object
 * prefetchObjects() names; stopSymbolPrefetch() ends it. One at a time per process: a second start stops the first.
 * `onRunning` is called on this thread once it sees the worker's code run (in prefetchObjects or a later take,
 * never waiting for it): starting a worker resets the V8 heap flags the process set at run time (the CLI's small new
 * space), which are to be set again then.
 */
export function startSymbolPrefetch(options: { readonly kallsyms: boolean; readonly cacheEnabled: boolean; readonly onRunning?: () => void }): void {
  stopSymbolPrefetch();
  active = new Prefetch(options.kallsyms, options.cacheEnabled, options.onRunning);
}

/** The objects (absolute paths, the largest first is best) whose function indexes the worker builds after kallsyms. */
export function prefetchObjects(objects: readonly string[]): void {
  active?.objects(objects);
}

/**
 * Waits until the worker has built (or failed) everything it was given and nobody else claimed, or `timeoutMs` passed;
 * whether it has (tests: what the worker built is then what the take functions give).
 */
export function waitForSymbolPrefetch(timeoutMs: number): boolean {
  return active?.finish(timeoutMs) ?? true;
}

/** Stops the worker (what it built and nobody took is dropped). */
export function stopSymbolPrefetch(): void {
  active?.stop();
  active = undefined;
}

/**
 * The function index of `file` as the worker built it, when it was asked to and its key (build-id and the identity of
 * the files read, see ObjectFile) is `key`; waits while the worker builds it. Undefined: build it here.
 */
export function prefetchedFunctions(file: string, key: string): StoredFunctionColumns | undefined {
  return active?.functions(file, key);
}

/** /proc/kallsyms as the worker parsed it, when asked to; undefined: read it here. */
export function prefetchedKallsyms(): KallsymsColumns | undefined {
  return active?.kallsyms();
}
