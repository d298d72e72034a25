// The worker-thread side of a DecodePool: it runs its lane of the scatter plan's steps
// (decode/scatter-plan.ts). The key step keys the rings it is sent (keyOrDecode: keyRing, or
// decodeRingRows into column sets of shared memory for a ring keyRing does not take) and sends back
// each ring's keys, or rows, decode state and anomalies. The write step writes one slice of the
// merge straight from the ring bytes into its rows of the shared output set: the slices of one
// merge cover disjoint output rows, so workers never write the same memory. Ring bytes arrive
// without a copy when they live in a SharedArrayBuffer (a recorder with sharedCopyBuffers);
// otherwise the pool stages them in shared memory of its own.
//
// Requests and replies go over a channel of the worker's own (its port arrives as workerData), so
// either side can take the next message synchronously (receiveMessageOnPort) instead of waiting
// for its event loop: a worker told to stand by polls for the request about to come, and the pool
// polls for a reply it expects within a few milliseconds. Waking a sleeping thread through its
// event loop took 0.05 to 1.7 ms on a 2-vCPU VM, as long as half of a 64 MiB merge's slice.

import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { ColumnSet, columnSetBytes, type SetSource } from '../decode/column-set';
import { eventTables, type RingDecode, type RingState, type TimeMark } from '../decode/decode-ring';
import type { MergeSlice } from '../decode/merge';
import { scatterSlice, type KeyedRing, type ScatterSource } from '../decode/scatter';
import { keyOrDecode } from '../decode/scatter-plan';
import { sharedKeyScratch, type KeyScratch } from '../decode/key-scratch';
import type { DecodeAnomaly } from '../decode/types';
import type { EventDescription, RingCopy } from '../abi/snapshot';
import type { KeyArraysInMemory } from '../decode/wasm/key-run';
import { scatterPlanned, type ScatterPlan } from '../decode/wasm/memory-scatter';

/** A column set as it crosses threads: its shared buffer and its capacity in rows. */
export interface SharedSet {
  readonly buffer: SharedArrayBuffer;
  readonly length: number;
  /** Where the set starts in the buffer (a set in a copy's room or a snapshot memory starts past the copy). */
  readonly byteOffset: number;
}

/** A set of shared memory as it crosses threads. */
export function sharedSetOf(set: ColumnSet): SharedSet {
  return { buffer: set.buffer as SharedArrayBuffer, length: set.length, byteOffset: set.byteOffset };
}

/** The set a SharedSet names, on this thread. */
export function columnSetOf(shared: SharedSet): ColumnSet {
  return new ColumnSet(shared.length, shared.buffer, shared.byteOffset);
}

/** One ring decoded: its rows are rows [first, first + count) of `set`; `spare`: sets used on the way. */
export interface RingResult {
  readonly ringNumber: number;
  readonly set: SharedSet;
  readonly first: number;
  readonly count: number;
  readonly state: RingState;
  readonly anomalies: DecodeAnomaly[];
  readonly spare: readonly SharedSet[];
}

/** Decoded rows of one ring as they cross threads: rows [first, first + count) of `set`. */
export interface SharedRows {
  readonly set: SharedSet;
  readonly first: number;
  readonly count: number;
}

/** Rings to key (scatter path); `scratch`: arrays for the keys from the caller, reused across snapshots. */
export interface KeyRequest {
  readonly kind: 'key';
  readonly id: number;
  readonly events: readonly EventDescription[];
  readonly known: TimeMark;
  readonly tasks: readonly KeyTask[];
}

/** One ring to key; `place`: its key arrays in the memory its copy is in (keyed there by WebAssembly), instead of `scratch`. */
export interface KeyTask {
  readonly ringNumber: number;
  readonly ring: RingCopy;
  readonly scratch: KeyScratch | null;
  readonly place?: KeyArraysInMemory;
}

/** Write one slice of a merge planned in a snapshot memory (wasm/memory-scatter.ts) with job record `lane`. */
export interface PlannedScatterRequest {
  readonly kind: 'scatter-planned';
  readonly id: number;
  readonly plan: ScatterPlan;
  readonly slice: MergeSlice;
  readonly lane: number;
}

/** One ring of a KeyRequest: keyed, or decoded into rows (a ring keyRing does not take). */
export type KeyResult = { readonly ringNumber: number; readonly keyed: KeyedRing } | { readonly ringNumber: number; readonly decoded: RingResult };

/** A ScatterSource as it crosses threads. */
export type SharedSource = { readonly kind: 'keyed'; readonly ring: RingCopy; readonly keys: KeyedRing } | { readonly kind: 'rows'; readonly rows: SharedRows };

/** Write one slice of the scatter merge of `sources` into `out`. */
export interface ScatterRequest {
  readonly kind: 'scatter';
  readonly id: number;
  readonly events: readonly EventDescription[];
  readonly sources: readonly SharedSource[];
  readonly shift: readonly number[];
  readonly out: SharedSet;
  readonly slice: MergeSlice;
}

/**
 * Poll for the next request for up to `pollMs` before going back to the event loop: a request is
 * about to come (no reply).
 */
export interface StandByRequest {
  readonly kind: 'stand-by';
  readonly pollMs: number;
}

export type WorkerRequest = KeyRequest | ScatterRequest | PlannedScatterRequest | StandByRequest;

export type DecodeReply =
  | { readonly id: number; readonly keyed: readonly KeyResult[] }
  | { readonly id: number; readonly merged: number }
  | { readonly id: number; readonly planned: { readonly rows: number; readonly others: number; readonly failed: boolean } }
  | { readonly id: number; readonly error: string };

/** Fresh sets of shared memory for a ring decoded on this thread; the ones the decode gives back go back to the pool with it. */
class SharedSets implements SetSource {
  readonly spare: ColumnSet[] = [];

  take(rows: number): ColumnSet {
    return new ColumnSet(rows, new SharedArrayBuffer(columnSetBytes(rows)));
  }

  give(set: ColumnSet): void {
    this.spare.push(set);
  }
}

/** One ring decoded into rows from `sets`, as it crosses back to the pool with the sets the decode took and did not use. */
function ringResult(ringNumber: number, decode: RingDecode, sets: SharedSets): RingResult {
  const { rows, state, anomalies } = decode;
  return {
    ringNumber,
    set: sharedSetOf(rows.set),
    first: rows.first,
    count: rows.count,
    state,
    anomalies,
    spare: sets.spare.filter((set) => set !== rows.set).map(sharedSetOf),
  };
}

/** Keys every ring of a request as the scatter plan's key step does on any thread (exported so it is testable on one thread). */
export function keyRequest(request: KeyRequest): KeyResult[] {
  const tables = eventTables(request.events);
  return request.tasks.map((task): KeyResult => {
    const sets = new SharedSets();
    const outcome = keyOrDecode(task.ring, task.ringNumber, tables, request.known, sets, task.place ?? null, task.scratch, sharedKeyScratch);
    return 'keyed' in outcome
      ? { ringNumber: task.ringNumber, keyed: outcome.keyed }
      : { ringNumber: task.ringNumber, decoded: ringResult(task.ringNumber, outcome.decoded, sets) };
  });
}

/** Writes the request's slice of the scatter merge; returns the rows written (exported so it is testable on one thread). */
export function scatterRequest(request: ScatterRequest): number {
  const sources = request.sources.map((source): ScatterSource =>
    source.kind === 'keyed' ? source : { kind: 'rows', rows: { set: columnSetOf(source.rows.set), first: source.rows.first, count: source.rows.count } },
  );
  scatterSlice(columnSetOf(request.out), sources, eventTables(request.events), request.shift, request.slice);
  let rows = 0;
  for (let r = 0; r < sources.length; r++) rows += request.slice.to[r] - request.slice.from[r];
  return rows;
}

/** The worker's channel to its pool (null when this module is loaded on another thread, as tests do). */
function channelOf(data: unknown): MessagePort | null {
  if (typeof data !== 'object' || data === null || !('port' in data)) return null;
  const port: unknown = data.port;
  return typeof port === 'object' && port !== null && 'postMessage' in port ? (port as MessagePort) : null;
}

function answer(request: Exclude<WorkerRequest, StandByRequest>): DecodeReply {
  try {
    switch (request.kind) {
      case 'key':
        return { id: request.id, keyed: keyRequest(request) };
      case 'scatter':
        return { id: request.id, merged: scatterRequest(request) };
      case 'scatter-planned':
        return { id: request.id, planned: scatterPlanned(request.plan, request.slice, request.lane) };
    }
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

const port = channelOf(workerData);
if (port) {
  const handle = (request: WorkerRequest): void => {
    if (request.kind !== 'stand-by') {
      port.postMessage(answer(request));
      return;
    }
    const until = performance.now() + request.pollMs;
    while (performance.now() < until) {
      const next = receiveMessageOnPort(port);
      if (next) {
        handle(next.message as WorkerRequest);
        return;
      }
    }
  };
  port.on('message', handle);
}
