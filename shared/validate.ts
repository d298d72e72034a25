// Validation of every message either side receives, field by field, before it is used: a malformed or
// unknown message is rejected with a reason naming the field. Pure.

import type { BinaryStacks, HostToWebview, WebviewToHost } from './protocol';
import { stacksFromBuffers } from './stacks-buffers';
import { COLUMN_NAMES, COLUMN_TYPES } from './columns';
import { StateFlag, THREAD_STATE_COLUMNS, THREAD_STATE_COLUMN_NAMES, THREAD_STATE_COUNT } from './thread-states';

export type Validated<T> = { readonly ok: true; readonly message: T } | { readonly ok: false; readonly reason: string };

class Invalid extends Error {}

type Obj = Record<string, unknown>;

function fail(path: string, expected: string): never {
  throw new Invalid(`${path}: expected ${expected}`);
}
function obj(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object');
  return v as Obj;
}
function str(o: Obj, k: string, path: string, maxLength = 1 << 16): string {
  const v = o[k];
  if (typeof v !== 'string' || v.length > maxLength) fail(`${path}.${k}`, 'a string');
  return v;
}
function optStr(o: Obj, k: string, path: string): void {
  if (o[k] !== undefined) str(o, k, path);
}
function int(o: Obj, k: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${path}.${k}`, `an integer in [${min}, ${max}]`);
  return v;
}
/** Every entry of `list` an integer in [min, max] (a plain loop: stack tables hold 100k entries and more). */
function intList(list: unknown[], path: string, min: number, max: number): void {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${path}.${i}`, `an integer in [${min}, ${max}]`);
  }
}
function num(o: Obj, k: string, path: string): number {
  const v = o[k];
  if (typeof v !== 'number' || Number.isNaN(v)) fail(`${path}.${k}`, 'a number');
  return v;
}
function bool(o: Obj, k: string, path: string): boolean {
  if (typeof o[k] !== 'boolean') fail(`${path}.${k}`, 'a boolean');
  return o[k] as boolean;
}
function arr(o: Obj, k: string, path: string): unknown[] {
  const v = o[k];
  if (!Array.isArray(v)) fail(`${path}.${k}`, 'an array');
  return v;
}
function oneOf<T extends string>(o: Obj, k: string, path: string, values: readonly T[]): T {
  const v = o[k];
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) fail(`${path}.${k}`, values.join('|'));
  return v as T;
}
const DECIMAL = /^-?\d{1,20}$/;
function decimal(o: Obj, k: string, path: string): string {
  const v = str(o, k, path, 24);
  if (!DECIMAL.test(v)) fail(`${path}.${k}`, 'a decimal integer string');
  return v;
}
/** Works across realms (a buffer from another frame is not `instanceof` this realm's ArrayBuffer). */
export function isArrayBuffer(v: unknown): v is ArrayBuffer {
  return v instanceof ArrayBuffer || Object.prototype.toString.call(v) === '[object ArrayBuffer]';
}
function buffer(o: Obj, k: string, path: string, byteLength: number): ArrayBuffer {
  const v = o[k];
  if (!isArrayBuffer(v)) fail(`${path}.${k}`, 'an ArrayBuffer');
  if (v.byteLength !== byteLength) fail(`${path}.${k}`, `exactly ${byteLength} bytes (got ${v.byteLength})`);
  return v;
}
function error(v: unknown, path: string): void {
  const e = obj(v, path);
  str(e, 'code', path);
  str(e, 'message', path);
  optStr(e, 'hint', path);
}

function validateSnapshotStart(o: Obj): void {
  str(o, 'snapshotId', 'snapshotStart', 256);
  str(o, 'name', 'snapshotStart', 1024);
  decimal(o, 'timeOriginNs', 'snapshotStart');
  int(o, 'totalRows', 'snapshotStart', 0, 2 ** 32 - 1);
  const batches = int(o, 'batchCount', 'snapshotStart');
  if (batches === 0 && (o.totalRows as number) > 0) fail('snapshotStart.batchCount', 'at least 1 when rows exist');
  num(o, 'takenAtMs', 'snapshotStart');
  arr(o, 'events', 'snapshotStart').forEach((e, i) => {
    const p = `snapshotStart.events[${i}]`;
    const eo = obj(e, p);
    int(eo, 'index', p, 0, 65535);
    str(eo, 'name', p, 4096);
    oneOf(eo, 'kind', p, ['tracepoint', 'breakpoint', 'software', 'other'] as const);
  });
  arr(o, 'threads', 'snapshotStart').forEach((t, i) => {
    const p = `snapshotStart.threads[${i}]`;
    const to = obj(t, p);
    int(to, 'pid', p, -1, 2 ** 31 - 1);
    int(to, 'tid', p, -1, 2 ** 31 - 1);
    str(to, 'comm', p, 4096);
  });
  arr(o, 'coverage', 'snapshotStart').forEach((c, i) => {
    const p = `snapshotStart.coverage[${i}]`;
    const co = obj(c, p);
    int(co, 'ringId', p);
    str(co, 'label', p, 4096);
    str(co, 'path', p, 64);
    int(co, 'dataSize', p);
    decimal(co, 'bytesWritten', p);
    decimal(co, 'bytesOverwritten', p);
    int(co, 'recordsRetained', p);
    for (const k of ['oldestTimeNs', 'newestTimeNs']) if (co[k] !== null) decimal(co, k, p);
    decimal(co, 'lost', p);
  });
  if (o.limitations !== undefined)
    arr(o, 'limitations', 'snapshotStart').forEach((_, i) => str(o.limitations as Obj, String(i), 'snapshotStart.limitations', 4096));
  if (o.namesFollow !== undefined) bool(o, 'namesFollow', 'snapshotStart');
  if (o.stacks !== undefined) validateStacks(o.stacks, 'snapshotStart.stacks');
  if (o.losses !== undefined) {
    const totalRows = o.totalRows as number;
    arr(o, 'losses', 'snapshotStart').forEach((l, i) => {
      const p = `snapshotStart.losses[${i}]`;
      const lo = obj(l, p);
      int(lo, 'row', p, 0, Math.max(0, totalRows - 1));
      oneOf(lo, 'kind', p, ['LOST', 'LOST_SAMPLES'] as const);
      decimal(lo, 'lost', p);
      str(lo, 'ring', p, 4096);
      if (lo.sinceNs !== null) decimal(lo, 'sinceNs', p);
    });
  }
}

/** A WireStacks (snapshotStart.stacks, snapshotSymbols.stacks): every index within its table. */
function validateStacks(v: unknown, p: string): void {
  const s = obj(v, p);
  const names = arr(s, 'names', p);
  names.forEach((_, i) => str(names as unknown as Obj, String(i), `${p}.names`, 4096));
  const frames = arr(s, 'frames', p);
  intList(frames, `${p}.frames`, 0, names.length - 1);
  const start = arr(s, 'start', p);
  if (start.length < 1) fail(`${p}.start`, 'at least [0]');
  let previous = 0;
  start.forEach((_, i) => {
    previous = int(start as unknown as Obj, String(i), `${p}.start`, i === 0 ? 0 : previous, i === 0 ? 0 : frames.length);
  });
  if (previous !== frames.length) fail(`${p}.start`, `ending at ${frames.length} frames`);
  if (s.locations !== undefined || s.leafLocation !== undefined || s.nameLocation !== undefined) {
    const locations = arr(s, 'locations', p);
    locations.forEach((l, i) => {
      const at = `${p}.locations[${i}]`;
      const lo = obj(l, at);
      str(lo, 'file', at, 4096);
      int(lo, 'line', at, 1);
    });
    // One entry per stack and per name, each -1 or a location.
    for (const [key, count] of [
      ['leafLocation', start.length - 1],
      ['nameLocation', names.length],
    ] as const) {
      const list = arr(s, key, p);
      if (list.length !== count) fail(`${p}.${key}`, `${count} entries`);
      intList(list, `${p}.${key}`, -1, locations.length - 1);
    }
  }
  if (s.libraries !== undefined || s.nameLibrary !== undefined) {
    const libraries = arr(s, 'libraries', p);
    libraries.forEach((_, i) => str(libraries as unknown as Obj, String(i), `${p}.libraries`, 4096));
    const nameLibrary = arr(s, 'nameLibrary', p);
    if (nameLibrary.length !== names.length) fail(`${p}.nameLibrary`, `${names.length} entries`);
    intList(nameLibrary, `${p}.nameLibrary`, -1, libraries.length - 1);
  }
}

function validateBatch(o: Obj): void {
  const p = 'batch';
  str(o, 'snapshotId', p, 256);
  const batchCount = int(o, 'batchCount', p, 1);
  const batchIndex = int(o, 'batchIndex', p);
  if (batchIndex >= batchCount) fail(`${p}.batchIndex`, `< batchCount (${batchCount})`);
  int(o, 'firstRow', p, 0, 2 ** 32 - 1);
  const rows = int(o, 'rowCount', p, 0, 2 ** 32 - 1);
  const columns = obj(o.columns, `${p}.columns`);
  for (const name of COLUMN_NAMES) buffer(columns, name, `${p}.columns`, rows * COLUMN_TYPES[name].BYTES_PER_ELEMENT);
  if (o.stackIndex !== undefined) {
    buffer(o, 'stackIndex', p, rows * 4);
    // The stack count is the snapshot's (checked against it by the store); here: -1 or an id.
    const bad = firstOutside(new Int32Array(o.stackIndex as ArrayBuffer), -1, 2 ** 31 - 1);
    if (bad >= 0) fail(`${p}.stackIndex[${bad}]`, '-1 or a stack id');
  }
  if (o.symbolIndex !== undefined || o.symbolTable !== undefined) {
    buffer(o, 'symbolIndex', p, rows * 4);
    const table = arr(o, 'symbolTable', p);
    table.forEach((s, i) => {
      if (typeof s !== 'string') fail(`${p}.symbolTable[${i}]`, 'a string');
    });
    const bad = firstOutside(new Int32Array(o.symbolIndex as ArrayBuffer), -1, table.length - 1);
    if (bad >= 0) fail(`${p}.symbolIndex[${bad}]`, `-1..${table.length - 1}`);
  }
}

/**
 * The first index of `values` outside [min, max], or -1. A function of its own, the loop and nothing after it: V8
 * compiles a long loop on its first run (on-stack replacement) before the code after it has run, and a later call
 * re-entering that compiled loop fell back to the interpreter at the first property read after it (validateBatch
 * bailed out so on 15 of a million-row capture's 16 batches).
 */
function firstOutside(values: Int32Array, min: number, max: number): number {
  for (let i = 0; i < values.length; i++) if (values[i] < min || values[i] > max) return i;
  return -1;
}

/** A snapshotSymbols message; its row count is the snapshot's, which the store checks (the page knows it, this cannot). */
function validateSnapshotSymbols(o: Obj): void {
  const p = 'snapshotSymbols';
  str(o, 'snapshotId', p, 256);
  const symbolIndex = o.symbolIndex;
  if (!isArrayBuffer(symbolIndex) || symbolIndex.byteLength % 4 !== 0) fail(`${p}.symbolIndex`, 'an ArrayBuffer of Int32 symbol indexes');
  const table = arr(o, 'symbolTable', p);
  table.forEach((_, i) => str(table as unknown as Obj, String(i), `${p}.symbolTable`, 4096));
  const index = new Int32Array(symbolIndex);
  for (let i = 0; i < index.length; i++) if (index[i] < -1 || index[i] >= table.length) fail(`${p}.symbolIndex[${i}]`, `-1..${table.length - 1}`);
  if ((o.stacks === undefined) !== (o.stackIndex === undefined)) fail(p, 'stacks and stackIndex together');
  if (o.stacks === undefined) return;
  const binary = obj(o.stacks, `${p}.stacks`);
  for (const key of ['start', 'frames', 'leafLocation', 'nameLocation', 'nameLibrary']) {
    const v = binary[key];
    if ((v !== undefined || key === 'start' || key === 'frames') && (!isArrayBuffer(v) || v.byteLength % 4 !== 0))
      fail(`${p}.stacks.${key}`, 'an ArrayBuffer of 32-bit integers');
  }
  validateStacks(stacksFromBuffers(binary as unknown as BinaryStacks), `${p}.stacks`);
  buffer(o, 'stackIndex', p, symbolIndex.byteLength);
  const stackCount = (binary.start as ArrayBuffer).byteLength / 4 - 1;
  const stacks = new Int32Array(o.stackIndex as ArrayBuffer);
  for (let i = 0; i < stacks.length; i++) if (stacks[i] < -1 || stacks[i] >= stackCount) fail(`${p}.stackIndex[${i}]`, `-1..${stackCount - 1}`);
}

function validateThreadStates(o: Obj): void {
  const p = 'threadStates';
  str(o, 'snapshotId', p, 256);
  const count = int(o, 'count', p, 0, 2 ** 31 - 1);
  const columns = obj(o.columns, `${p}.columns`);
  for (const name of THREAD_STATE_COLUMN_NAMES) buffer(columns, name, `${p}.columns`, count * THREAD_STATE_COLUMNS[name].BYTES_PER_ELEMENT);
  const comms = arr(o, 'comms', p);
  comms.forEach((c, i) => {
    if (typeof c !== 'string' || c.length > 256) fail(`${p}.comms[${i}]`, 'a string');
  });
  const start = new Float64Array(columns.start as ArrayBuffer);
  const end = new Float64Array(columns.end as ArrayBuffer);
  const state = new Uint8Array(columns.state as ArrayBuffer);
  const flags = new Uint8Array(columns.flags as ArrayBuffer);
  const nextComm = new Int32Array(columns.nextComm as ArrayBuffer);
  const allFlags = StateFlag.START_UNKNOWN | StateFlag.END_UNKNOWN;
  for (let i = 0; i < count; i++) {
    if (!Number.isFinite(start[i]) || !Number.isFinite(end[i]) || end[i] < start[i]) fail(`${p}.columns.end[${i}]`, 'finite times, end >= start');
    if (state[i] >= THREAD_STATE_COUNT) fail(`${p}.columns.state[${i}]`, `a state code below ${THREAD_STATE_COUNT}`);
    if ((flags[i] & ~allFlags) !== 0) fail(`${p}.columns.flags[${i}]`, 'START_UNKNOWN|END_UNKNOWN bits');
    if (nextComm[i] < -1 || nextComm[i] >= comms.length) fail(`${p}.columns.nextComm[${i}]`, `-1..${comms.length - 1}`);
  }
}

function validateJson(v: unknown, path: string, depth = 0): void {
  if (depth > 32) fail(path, 'JSON nested at most 32 deep');
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) fail(path, 'a finite number');
    return;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => validateJson(x, `${path}[${i}]`, depth + 1));
    return;
  }
  const o = obj(v, path);
  for (const k of Object.keys(o)) validateJson(o[k], `${path}.${k}`, depth + 1);
}

function validateDetails(v: unknown, path: string): void {
  const d = obj(v, path);
  str(d, 'type', path);
  optStr(d, 'event', path);
  int(d, 'misc', path, 0, 65535);
  if (d.timeNs !== undefined) decimal(d, 'timeNs', path);
  for (const k of ['pid', 'tid', 'cpu']) if (d[k] !== undefined) int(d, k, path, -1, 2 ** 32);
  validateJson(obj(d.fields, `${path}.fields`), `${path}.fields`);
  if (d.tracepointFields !== undefined) validateJson(obj(d.tracepointFields, `${path}.tracepointFields`), `${path}.tracepointFields`);
  const symbolCount = d.symbols === undefined ? 0 : arr(d, 'symbols', path).length;
  if (d.symbols !== undefined) arr(d, 'symbols', path).forEach((_, i) => str(d.symbols as Obj, String(i), `${path}.symbols`, 4096));
  if (d.callchain !== undefined) {
    arr(d, 'callchain', path).forEach((c, i) => {
      const p = `${path}.callchain[${i}]`;
      const co = obj(c, p);
      str(co, 'ip', p, 32);
      if (co.symbol !== undefined) int(co, 'symbol', p, 0, symbolCount - 1);
      if (co.kernel !== undefined) bool(co, 'kernel', p);
      optStr(co, 'file', p);
      if (co.line !== undefined) int(co, 'line', p);
    });
  }
  if (d.source !== undefined) {
    const s = obj(d.source, `${path}.source`);
    str(s, 'file', `${path}.source`);
    int(s, 'line', `${path}.source`);
  }
}

function validateWatchSpec(v: unknown, path: string): void {
  const s = obj(v, path);
  const loc = obj(s.location, `${path}.location`);
  const lp = `${path}.location`;
  switch (oneOf(loc, 'kind', lp, ['address', 'symbol', 'line'] as const)) {
    case 'address':
      if (!/^(0x[0-9a-fA-F]{1,16}|\d{1,20})$/.test(str(loc, 'address', lp, 24))) fail(`${lp}.address`, 'hex (0x...) or decimal');
      break;
    case 'symbol':
      if (str(loc, 'symbol', lp, 4096).trim() === '') fail(`${lp}.symbol`, 'a non-empty symbol');
      break;
    case 'line':
      if (str(loc, 'file', lp, 4096).trim() === '') fail(`${lp}.file`, 'a non-empty file');
      int(loc, 'line', lp, 1);
      break;
  }
  oneOf(s, 'type', path, ['r', 'w', 'rw', 'x'] as const);
  const len = s.length;
  if (len !== 1 && len !== 2 && len !== 4 && len !== 8) fail(`${path}.length`, '1, 2, 4 or 8');
  const tgt = obj(s.target, `${path}.target`);
  switch (oneOf(tgt, 'kind', `${path}.target`, ['process', 'cpu', 'all-cpus'] as const)) {
    case 'process':
      int(tgt, 'pid', `${path}.target`, 1, 2 ** 31 - 1);
      break;
    case 'cpu':
      int(tgt, 'cpu', `${path}.target`, 0, 65535);
      break;
    case 'all-cpus':
      break;
  }
  bool(s, 'pinned', path);
}

function validateWatchInfo(v: unknown, path: string): void {
  validateWatchSpec(v, path);
  const w = v as Obj;
  str(w, 'id', path, 256);
  bool(w, 'enabled', path);
  int(w, 'hits', path);
  optStr(w, 'unseen', path);
  if (w.probe !== undefined && w.probe !== 'uprobe') fail(`${path}.probe`, '"uprobe" or absent');
  optStr(w, 'resolvedAddress', path);
}

function guard<T>(check: (o: Obj) => void, v: unknown): Validated<T> {
  try {
    check(obj(v, 'message'));
    return { ok: true, message: v as T };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, reason: e.message };
    throw e;
  }
}

/** Validate a message the webview received. Unknown types and malformed fields are rejected with a reason. */
export function validateHostToWebview(v: unknown): Validated<HostToWebview> {
  return guard<HostToWebview>((o) => {
    const type = str(o, 'type', 'message', 64);
    switch (type) {
      case 'init':
        int(o, 'protocolVersion', 'init');
        optStr(o, 'title', 'init');
        if (o.editor !== undefined) bool(o, 'editor', 'init');
        if (o.recorder !== undefined) bool(o, 'recorder', 'init');
        return;
      case 'snapshotStart':
        validateSnapshotStart(o);
        return;
      case 'batch':
        validateBatch(o);
        return;
      case 'threadStates':
        validateThreadStates(o);
        return;
      case 'snapshotSymbols':
        validateSnapshotSymbols(o);
        return;
      case 'progress':
        str(o, 'taskId', type, 256);
        str(o, 'title', type, 1024);
        if (o.step !== undefined) str(o, 'step', type, 1024);
        bool(o, 'cancellable', type);
        if (o.done !== undefined) bool(o, 'done', type);
        return;
      case 'detailsReply':
        int(o, 'replyTo', type);
        str(o, 'snapshotId', type, 256);
        int(o, 'row', type);
        if (o.details === undefined && o.error === undefined) fail(type, 'details or error');
        if (o.details !== undefined) validateDetails(o.details, `${type}.details`);
        if (o.error !== undefined) error(o.error, `${type}.error`);
        return;
      case 'watchReply':
      case 'revealReply':
        int(o, 'replyTo', type);
        if (!bool(o, 'ok', type) && o.error === undefined) fail(`${type}.error`, 'an error when ok is false');
        if (o.error !== undefined) error(o.error, `${type}.error`);
        return;
      case 'watchList': {
        arr(o, 'watches', type).forEach((w, i) => validateWatchInfo(w, `${type}.watches[${i}]`));
        const b = obj(o.budget, `${type}.budget`);
        for (const k of ['used', 'total', 'cpuPinned', 'maxTaskPinned', 'flexible']) int(b, k, `${type}.budget`, 0, 64);
        if (b.heldByRecordings !== undefined) {
          arr(b, 'heldByRecordings', `${type}.budget`).forEach((_, i) => str(b.heldByRecordings as Obj, String(i), `${type}.budget.heldByRecordings`, 4096));
        }
        return;
      }
      case 'removeSnapshot':
        str(o, 'snapshotId', type, 256);
        return;
      case 'liveAppend': {
        const id = str(o, 'snapshotId', type, 256);
        int(o, 'seq', type);
        decimal(o, 'keepFromNs', type);
        if (o.opening !== undefined) bool(o, 'opening', type);
        const part = obj(o.part, `${type}.part`);
        validateSnapshotStart(part);
        const batch = obj(o.batch, `${type}.batch`);
        validateBatch(batch);
        // One live capture: the part, its rows and its states all belong to it, and the part announces exactly its rows.
        if (part.snapshotId !== id || batch.snapshotId !== id) fail(`${type}.part`, `rows of live capture ${JSON.stringify(id)}`);
        if (part.totalRows !== batch.rowCount) fail(`${type}.part.totalRows`, `the batch's ${batch.rowCount as number} rows`);
        if (o.threadStates !== undefined) {
          const states = obj(o.threadStates, `${type}.threadStates`);
          validateThreadStates(states);
          if (states.snapshotId !== id) fail(`${type}.threadStates.snapshotId`, JSON.stringify(id));
        }
        return;
      }
      case 'liveState':
        oneOf(o, 'state', type, ['following', 'off', 'unavailable'] as const);
        if (o.detail !== undefined) str(o, 'detail', type, 4096);
        return;
      case 'fieldFilterReply': {
        int(o, 'replyTo', type);
        str(o, 'snapshotId', type, 256);
        if ((o.rows === undefined) === (o.error === undefined)) fail(type, 'exactly one of rows or error');
        if (o.rows !== undefined) {
          if (!isArrayBuffer(o.rows) || o.rows.byteLength % 4 !== 0) fail(`${type}.rows`, 'an ArrayBuffer of Uint32 row indexes');
        }
        if (o.error !== undefined) error(o.error, `${type}.error`);
        return;
      }
      default:
        fail('message.type', `a known host message type (got ${JSON.stringify(type)})`);
    }
  }, v);
}

/** Validate a message the host received from the webview. */
export function validateWebviewToHost(v: unknown): Validated<WebviewToHost> {
  return guard<WebviewToHost>((o) => {
    const type = str(o, 'type', 'message', 64);
    switch (type) {
      case 'ready':
        int(o, 'protocolVersion', type);
        return;
      case 'batchAck':
        str(o, 'snapshotId', type, 256);
        int(o, 'batchIndex', type);
        return;
      case 'liveFollow':
        bool(o, 'on', type);
        return;
      case 'painted':
        str(o, 'snapshotId', type, 256);
        return;
      case 'cancel':
        str(o, 'taskId', type, 256);
        return;
      case 'liveAck':
        str(o, 'snapshotId', type, 256);
        int(o, 'seq', type);
        return;
      case 'resync':
        arr(o, 'have', type).forEach((h, i) => {
          const ho = obj(h, `${type}.have[${i}]`);
          str(ho, 'snapshotId', `${type}.have[${i}]`, 256);
          int(ho, 'rows', `${type}.have[${i}]`);
        });
        return;
      case 'detailsRequest':
        int(o, 'requestId', type);
        str(o, 'snapshotId', type, 256);
        int(o, 'row', type);
        return;
      case 'watchRequest': {
        int(o, 'requestId', type);
        const op = oneOf(o, 'op', type, ['add', 'remove', 'enable', 'disable', 'modify'] as const);
        if (op !== 'add') str(o, 'id', type, 256);
        if (op === 'add' || op === 'modify') validateWatchSpec(o.spec, `${type}.spec`);
        return;
      }
      case 'revealRequest':
        int(o, 'requestId', type);
        str(o, 'file', type, 4096);
        int(o, 'line', type, 1);
        return;
      case 'exportRequest':
        int(o, 'requestId', type);
        str(o, 'snapshotId', type, 256);
        return;
      case 'fieldFilterRequest':
        int(o, 'requestId', type);
        str(o, 'snapshotId', type, 256);
        if (str(o, 'name', type, 256) === '') fail(`${type}.name`, 'a non-empty field name');
        oneOf(o, 'op', type, ['=', '~'] as const);
        str(o, 'value', type, 4096);
        return;
      case 'snapshotWhenRequest': {
        // An event spec is one line of printable text: the host puts it in an input box for the user to confirm, then resolves it as an event.
        const spec = str(o, 'event', type, 4096);
        // eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
        if (spec.trim() === '' || /[\u0000-\u001f\u007f]/.test(spec)) fail(`${type}.event`, 'a non-empty event spec without control characters');
        return;
      }
      case 'webviewError':
        str(o, 'message', type);
        return;
      default:
        fail('message.type', `a known webview message type (got ${JSON.stringify(type)})`);
    }
  }, v);
}
