// Host side of the protocol: turns a DecodedSnapshot into what the panel receives, adding what only
// the host knows (symbols, comms, source lines) to the builders in messages.ts (snapshotMessages,
// recordDetailsOf). Shared by the extension's panel host and the CLI's HTML export so both show the
// same thing. Pure: symbols and comms come in as callbacks; no koffi or vscode imports (node's only for memchr and memcmp
// over columns, column-search.ts).

import type { DecodedSnapshot } from '../native/decode/types';
import { decodeRecordAt, type CallchainFrame } from '../native/decode/record';
import { RecordType, Misc, Sample } from '../native/abi/uapi';
import type { BatchBuilder, BatchOptions, SymbolColumn } from '../shared/batches';
import type {
  CallchainEntry,
  LossInfo,
  RecordBatch,
  RecordDetails,
  SnapshotStart,
  SnapshotSymbols,
  ThreadInfo,
  ThreadStates,
  WireStacks,
} from '../shared/protocol';
import type { StackTable } from '../shared/stacks';
import { stacksToBuffers } from '../shared/stacks-buffers';
import { recordDetailsOf, snapshotMessages } from './messages';
import type { FrameSymbols } from './frame-symbols';
import type { CallchainEmbedder } from './embedded-callchains';
import { snapshotStacksInSteps } from './stacks';
import { ProfileTables } from '../native/tables/profile-tables';
import { threadStatesAndComms } from './thread-states';
import { ByteColumn, forEachThreadRun } from './column-search';

export interface WireOptions {
  readonly snapshotId: string;
  readonly name: string;
  readonly takenAtMs: number;
  /** The capture's symbol table (names every sample's IP); absent: no symbols. */
  readonly symbols?: FrameSymbols;
  /** comm of a thread, when the side-band or /proc knew it (default: what `symbols` knows, FrameSymbols.commOf). */
  readonly comm?: (pid: number, tid: number) => string | undefined;
  readonly batchRows?: number;
  /** What the recording could not see and why, shown with the snapshot. */
  readonly limitations?: readonly string[];
  /** The snapshot's stack and frame tables when the caller built them (the HTML export reads its details' callchains from them too). */
  readonly tables?: ProfileTables;
  /** Where the batches' buffers come from (BatchOptions.allocate). */
  readonly allocate?: BatchOptions['allocate'];
}

/**
 * The comm of every thread: COMM records of the snapshot win over the caller's knowledge, which wins over the names
 * sched_switch records carry (`switchComms`, by tid), then the process's name.
 */
function threadsOf(snapshot: DecodedSnapshot, comm: WireOptions['comm'], switchComms?: ReadonlyMap<number, string>): ThreadInfo[] {
  const { pid, tid, kind, length } = snapshot.columns;
  const names = new Map<string, ThreadInfo>();
  for (const row of rowsOfKinds(new ByteColumn(kind.subarray(0, length)), RecordType.COMM, RecordType.FORK)) {
    let fields: { pid?: number; tid?: number; ppid?: number; ptid?: number; comm?: string };
    try {
      fields = decodeRecordAt(snapshot, row).fields as typeof fields;
    } catch {
      continue; // a damaged record names nothing; the walk already counted it
    }
    if (fields.pid === undefined || fields.tid === undefined) continue;
    const key = `${fields.pid}/${fields.tid}`;
    if (kind[row] === RecordType.COMM) {
      names.set(key, { pid: fields.pid, tid: fields.tid, comm: fields.comm ?? '' });
      continue;
    }
    // A new task is named by the thread that made it until it sets its own (as perf's thread__fork does): a forked
    // subshell that never execs is "bash" in perf script, never nameless.
    const parent = names.get(`${fields.ppid}/${fields.ptid}`) ?? names.get(`${fields.ppid}/${fields.ppid}`);
    if (!names.has(key) && parent?.comm) names.set(key, { pid: fields.pid, tid: fields.tid, comm: parent.comm });
  }
  // Rows of one thread come in runs: only each run's first row is looked at. On a capture of several CPUs the rows of
  // their threads alternate, a run per row: those already named are told by a numeric set, no key built per row.
  const seen = new ThreadSet();
  forEachThreadRun(pid, tid, length, (row) => {
    const rowPid = pid[row];
    const rowTid = tid[row];
    if (rowTid < 0 || !seen.add(rowPid, rowTid)) return; // a row without a thread, or one already looked at
    const key = `${rowPid}/${rowTid}`;
    if (names.has(key)) return;
    const processComm = names.get(`${rowPid}/${rowPid}`)?.comm;
    names.set(key, { pid: rowPid, tid: rowTid, comm: comm?.(rowPid, rowTid) ?? switchComms?.get(rowTid) ?? processComm ?? '' });
  });
  return [...names.values()];
}

/** A set of (pid, tid) pairs, open addressing over typed arrays: a test per row that builds no string. */
class ThreadSet {
  private pids = new Int32Array(64);
  private tids = new Int32Array(64);
  /** 1 where a slot holds a pair. */
  private used = new Uint8Array(64);
  private size = 0;

  /** Adds the pair; false when it was in the set already. */
  add(pid: number, tid: number): boolean {
    const mask = this.used.length - 1;
    let slot = (Math.imul(pid, 0x9e3779b1) ^ tid) & mask;
    while (this.used[slot] !== 0) {
      if (this.pids[slot] === pid && this.tids[slot] === tid) return false;
      slot = (slot + 1) & mask;
    }
    this.used[slot] = 1;
    this.pids[slot] = pid;
    this.tids[slot] = tid;
    if (++this.size * 2 > this.used.length) this.grow();
    return true;
  }

  private grow(): void {
    const { pids, tids, used } = this;
    this.pids = new Int32Array(2 * used.length);
    this.tids = new Int32Array(2 * used.length);
    this.used = new Uint8Array(2 * used.length);
    this.size = 0;
    for (let slot = 0; slot < used.length; slot++) if (used[slot] !== 0) this.add(pids[slot], tids[slot]);
  }
}

/**
 * Symbol per SAMPLE row as a column (index into a table of distinct names), in one typed pass.
 * The capture's FrameSymbols resolves each address once; this pass adds a numeric cache in front of it
 * (no per-row strings or BigInts), since hot loops repeat the same few IPs millions of times.
 */
function rowSymbols(snapshot: DecodedSnapshot, symbols: FrameSymbols, tables?: ProfileTables): SymbolColumn {
  const { kind, pid, ipHi, ipLo, misc, length } = snapshot.columns;
  // With the snapshot's tables, a row's IP is its frame there: a symbol's position is kept per frame (-2: not yet), in
  // place of the maps below, for rows whose frame is the same address in the same address space (not by construction
  // only where the tables place an IP of an unknown or guest-kernel mode, or a row without a pid).
  const positionOfFrame = tables ? new Int32Array(tables.frameCount).fill(-2) : undefined;
  // (kernel ? -1 : pid) → ipHi → ipLo → table position (-1: no symbol).
  const cache = new Map<number, Map<number, Map<number, number>>>();
  const table: string[] = [];
  const positionOf = new Map<string, number>();
  const index = new Int32Array(length);
  let lastOwner = NaN,
    lastHi = NaN,
    lastLo = NaN,
    lastId = -1;
  for (let row = 0; row < length; row++) {
    const hi = ipHi[row];
    const lo = ipLo[row];
    if (kind[row] !== RecordType.SAMPLE || (hi === 0 && lo === 0)) {
      index[row] = -1;
      continue;
    }
    const kernel = (misc[row] & Misc.CPUMODE_MASK) === Misc.KERNEL;
    const owner = kernel ? -1 : pid[row];
    if (owner === lastOwner && hi === lastHi && lo === lastLo) {
      index[row] = lastId;
      continue;
    }
    const frame = tables && row < tables.sampleIpFrame.length ? tables.sampleIpFrame[row] : -1;
    const sameFrame =
      frame >= 0 &&
      tables!.frameOwner[frame] === owner &&
      tables!.frameIsKernel(frame) === kernel &&
      tables!.frameIpHigh[frame] === hi >>> 0 &&
      tables!.frameIpLow[frame] === lo >>> 0;
    if (sameFrame && positionOfFrame![frame] !== -2) {
      lastOwner = owner;
      lastHi = hi;
      lastLo = lo;
      lastId = index[row] = positionOfFrame![frame];
      continue;
    }
    let byHi = cache.get(owner);
    if (!byHi) {
      byHi = new Map();
      cache.set(owner, byHi);
    }
    let byLo = byHi.get(hi);
    if (!byLo) {
      byLo = new Map();
      byHi.set(hi, byLo);
    }
    let id = byLo.get(lo);
    if (id === undefined) {
      const symbol = symbols.nameOf(pid[row], (BigInt(hi) << 32n) | BigInt(lo), kernel);
      if (symbol === undefined) id = -1;
      else {
        id = positionOf.get(symbol);
        if (id === undefined) {
          id = table.length;
          table.push(symbol);
          positionOf.set(symbol, id);
        }
      }
      byLo.set(lo, id);
    }
    if (sameFrame) positionOfFrame![frame] = id;
    lastOwner = owner;
    lastHi = hi;
    lastLo = lo;
    lastId = id;
    index[row] = id;
  }
  return { index, table };
}

/** A StackTable as the JSON of snapshotStart.stacks. */
function wireStacks(table: StackTable): WireStacks {
  const { names, start, frames, locations, leafLocation, nameLocation, libraries, nameLibrary } = table;
  return {
    names,
    start: Array.from(start),
    frames: Array.from(frames),
    ...(libraries && nameLibrary ? { libraries, nameLibrary: Array.from(nameLibrary) } : {}),
    ...(locations && leafLocation && nameLocation ? { locations, leafLocation: Array.from(leafLocation), nameLocation: Array.from(nameLocation) } : {}),
  };
}

/**
 * The snapshot's LOST and LOST_SAMPLES records with their counts, each with the time of its ring's previous record:
 * the records went missing between that record and this one, which is where the page draws the loss.
 */
export function lossesOf(snapshot: DecodedSnapshot): LossInfo[] {
  const { kind, time, ring, length, timeOriginNs } = snapshot.columns;
  const kinds = new ByteColumn(kind.subarray(0, length));
  // Most snapshots lose nothing: the kind column's native scans (memchr) say so, and find the loss rows, without a pass
  // over the rows of our own. A loss's "since" is its ring's last timed row before it, found by walking back from it
  // only as far as the ring's previous loss (whose own "since" answers beyond that): a pass over every row up to the
  // last loss ran in V8's interpreter, 30 ms and more before the page's first batch of a 1M-row snapshot ending in one.
  const out: LossInfo[] = [];
  /** Per ring index: its previous loss row and that loss's "since" row (-1: none). */
  const previousLoss = new Map<number, { row: number; since: number }>();
  for (const row of rowsOfKinds(kinds, RecordType.LOST, RecordType.LOST_SAMPLES)) {
    const ringIndex = ring[row];
    const previous = previousLoss.get(ringIndex);
    const found = lastTimedRowOfRing(ring, time, ringIndex, row - 1, previous ? previous.row : 0);
    const since = found >= 0 ? found : previous ? previous.since : -1;
    previousLoss.set(ringIndex, { row, since });
    const lost = (decodeRecordAt(snapshot, row).fields as { lost?: bigint }).lost ?? 0n;
    out.push({
      row,
      kind: kind[row] === RecordType.LOST ? 'LOST' : 'LOST_SAMPLES',
      lost: lost.toString(),
      ring: snapshot.coverage[ringIndex]?.label ?? `ring ${ringIndex}`,
      sinceNs: since < 0 ? null : (timeOriginNs + BigInt(time[since])).toString(),
    });
  }
  return out;
}

/** The last row in [stop, from], walking back, of ring `ringIndex` with a time; -1 when none. A small loop of its own, compiled soon. */
function lastTimedRowOfRing(ring: Uint16Array, time: Float64Array, ringIndex: number, from: number, stop: number): number {
  for (let row = from; row >= stop; row--) if (ring[row] === ringIndex && time[row] === time[row]) return row;
  return -1;
}

/**
 * The rows whose kind is one of `kinds`, in row order, found by memchr over the kind column: a big snapshot has few
 * such rows (its COMM, FORK, LOST records), and a pass of our own over every row costs milliseconds per million.
 */
function* rowsOfKinds(kind: ByteColumn, ...kinds: readonly number[]): Generator<number> {
  const next = kinds.map((k) => kind.indexOf(k));
  for (;;) {
    let at = -1;
    for (let i = 0; i < next.length; i++) if (next[i] >= 0 && (at < 0 || next[i] < next[at])) at = i;
    if (at < 0) return;
    const row = next[at];
    yield row;
    next[at] = kind.indexOf(kinds[at], row + 1);
  }
}

/** A snapshot as the page receives it: its start, its thread states when it recorded sched_switch (sent right after), its batches. */
export interface WireSnapshot {
  readonly start: SnapshotStart;
  readonly threadStates?: ThreadStates;
  /** Every batch, built on first read. */
  readonly batches: RecordBatch[];
  /** Its batches one at a time, for a sender that builds each as it sends it (SnapshotStreamer). */
  readonly batchBuilder: BatchBuilder;
  /** ms spent naming its addresses (symbols per sample, stacks) and building the start (not the batches: built when read). */
  readonly timing: { readonly symbolizeMs: number; readonly wireMs: number };
}

/** What naming a snapshot's addresses gives: its sampled stacks (when any sample has a callchain) and a symbol per sample. */
export interface SnapshotNames {
  readonly stacks?: { readonly stackOf: Int32Array; readonly table: StackTable };
  readonly symbols: SymbolColumn;
}

/**
 * Names a snapshot's addresses through the capture's symbol table, in steps: each `yield` is a point where the caller
 * may let other work run (the extension host answers the page between them); the return value is the names. Without an
 * event that samples callchains there is no stack to find: the tables (which decode every sample) are not built at all
 * (a live follow's read, five a second).
 */
export function* snapshotNamesInSteps(snapshot: DecodedSnapshot, symbols: FrameSymbols, given?: ProfileTables): Generator<void, SnapshotNames> {
  const callchains = snapshot.events.some((e) => (e.attr.sampleType & Sample.CALLCHAIN) !== 0);
  let tables = given;
  if (callchains && !tables) {
    tables = new ProfileTables(snapshot);
    yield;
  }
  const stacks = callchains ? yield* snapshotStacksInSteps(snapshot, symbols, tables) : undefined;
  const withStacks = stacks && stacks.table.start.length > 1 ? stacks : undefined;
  yield;
  return { ...(withStacks ? { stacks: withStacks } : {}), symbols: rowSymbols(snapshot, symbols, tables) };
}

/** snapshotNamesInSteps run to its end. */
export function snapshotNames(snapshot: DecodedSnapshot, symbols: FrameSymbols, tables?: ProfileTables): SnapshotNames {
  const steps = snapshotNamesInSteps(snapshot, symbols, tables);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * A snapshot's names as one message, for a page that received its records without them (snapshotToWire with
 * `namesFollow`): the page fills them in, and then shows what it would have shown had they come with the records.
 */
export function snapshotNamesMessage(snapshotId: string, names: SnapshotNames): SnapshotSymbols {
  const { symbols, stacks } = names;
  return {
    type: 'snapshotSymbols',
    snapshotId,
    symbolIndex: exactBuffer(symbols.index),
    symbolTable: symbols.table,
    ...(stacks ? { stacks: stacksToBuffers(stacks.table), stackIndex: exactBuffer(stacks.stackOf) } : {}),
  };
}

/** An Int32Array's elements in an ArrayBuffer of exactly their length (what a message to the page carries). */
function exactBuffer(array: Int32Array): ArrayBuffer {
  return array.byteOffset === 0 && array.buffer instanceof ArrayBuffer && array.buffer.byteLength === array.byteLength
    ? array.buffer
    : (new Int32Array(array).buffer as ArrayBuffer);
}

/**
 * The messages of a snapshot. With `options.symbols` its names go with its records (the start holds the stacks, each
 * batch its rows' symbols and stacks); with `namesFollow` the records go without them, the start says that names
 * follow, and snapshotNamesMessage carries them once known (the panel paints the records first). Without either, the
 * snapshot is sent unnamed.
 */
export function snapshotToWire(snapshot: DecodedSnapshot, options: WireOptions & { readonly namesFollow?: boolean }): WireSnapshot {
  const started = performance.now();
  const names = options.symbols && !options.namesFollow ? snapshotNames(snapshot, options.symbols, options.tables) : undefined;
  const symbolizeMs = performance.now() - started;
  const { threadStates, comms: switchComms } = threadStatesAndComms(snapshot, options.snapshotId);
  const messages = snapshotMessages(snapshot, {
    ...(names?.stacks ? { stacks: names.stacks.stackOf, stackTable: wireStacks(names.stacks.table) } : {}),
    snapshotId: options.snapshotId,
    name: options.name,
    takenAtMs: options.takenAtMs,
    threads: threadsOf(snapshot, options.comm ?? (options.symbols ? (pid, tid) => options.symbols!.commOf(pid, tid) : undefined), switchComms),
    losses: lossesOf(snapshot),
    ...(options.limitations?.length ? { limitations: options.limitations } : {}),
    ...(options.batchRows ? { batchRows: options.batchRows } : {}),
    ...(options.allocate ? { allocate: options.allocate } : {}),
    ...(names ? { symbols: names.symbols } : {}),
    ...(options.namesFollow && options.symbols ? { namesFollow: true } : {}),
  });
  const timing = { symbolizeMs, wireMs: performance.now() - started - symbolizeMs };
  return {
    start: messages.start,
    batchBuilder: messages.batchBuilder,
    get batches() {
      return messages.batches;
    },
    ...(threadStates ? { threadStates } : {}),
    timing,
  };
}

const hex = (value: bigint) => '0x' + value.toString(16);

/**
 * Every decoded field of one row, with each callchain frame named through the capture's symbol table
 * (names sent once per record as a string table, frames referring to them by index), kernel frames
 * marked so the page can say [kernel] where kallsyms was unreadable, and source lines where known.
 */
export function rowDetails(snapshot: DecodedSnapshot, row: number, symbols?: FrameSymbols, embedder?: CallchainEmbedder): RecordDetails {
  const record = decodeRecordAt(snapshot, row);
  const { callchain, tracepoint, ...fields } = record.fields as Record<string, unknown> & { callchain?: unknown; tracepoint?: Record<string, unknown> };
  const pid = record.pid ?? -1;
  let chain: CallchainEntry[] | undefined;
  const names: string[] = [];
  const localIndex = new Map<number, number>();
  if (Array.isArray(callchain) && embedder) {
    // An export's details: the callchain goes to the embedder's tables, and not into the details.
    embedder.addRecordChain(row, callchain as CallchainFrame[], pid, symbols);
  } else if (Array.isArray(callchain)) {
    chain = [];
    for (const frame of callchain as CallchainFrame[]) {
      if (frame.isMarker) continue;
      const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel';
      const resolved = symbols?.resolve(pid, frame.ip, kernel);
      let symbol: number | undefined;
      if (symbols && resolved && resolved.name >= 0) {
        symbol = localIndex.get(resolved.name);
        if (symbol === undefined) {
          symbol = names.length;
          names.push(symbols.strings[resolved.name]);
          localIndex.set(resolved.name, symbol);
        }
      }
      chain.push({
        ip: hex(frame.ip),
        ...(symbol !== undefined ? { symbol } : {}),
        ...(kernel ? { kernel: true } : {}),
        ...(resolved?.file !== undefined && resolved.line !== undefined ? { file: resolved.file, line: resolved.line } : {}),
      });
    }
  }
  const ip = typeof fields.ip === 'bigint' ? fields.ip : undefined;
  const kernelIp = (record.misc & Misc.CPUMODE_MASK) === Misc.KERNEL;
  const resolvedIp = ip !== undefined ? symbols?.resolve(pid, ip, kernelIp) : undefined;
  const symbol = resolvedIp && resolvedIp.name >= 0 ? symbols?.strings[resolvedIp.name] : undefined;
  const source = resolvedIp?.file !== undefined && resolvedIp.line !== undefined ? { file: resolvedIp.file, line: resolvedIp.line } : undefined;
  // Addresses read as hex, as in perf script; everything else keeps its decimal form.
  const shown = {
    ...fields,
    ...(ip !== undefined ? { ip: hex(ip) } : {}),
    ...(typeof fields.addr === 'bigint' ? { addr: hex(fields.addr) } : {}),
    ...(symbol ? { sym: symbol } : {}),
  };
  return recordDetailsOf(
    { ...record, fields: shown },
    {
      ...(tracepoint ? { tracepointFields: tracepoint } : {}),
      ...(chain ? { callchain: chain, symbols: names } : {}),
      ...(source ? { source } : {}),
    },
  );
}
