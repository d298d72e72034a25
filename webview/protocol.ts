// The one message protocol between the extension host and the timeline webview. Both sides import
// this module, so it must stay free of DOM, node and vscode imports (pure data + pure functions).
//
// Shape: one union per direction. Requests from the webview carry a `requestId`; the host answers
// with the same number in `replyTo`. The webview starts with `ready`; the host answers `init` and
// only then streams snapshots. Bulk records travel as columnar batches of exact-length
// ArrayBuffers (transferable, never arrays of objects); each batch is acknowledged before the host
// sends the next one, and the host sends nothing while the panel is hidden (the webview sends
// `resync` when it becomes visible again, saying how many rows of each snapshot it already has).

import type { DecodedRecord, DecodedSnapshot, EventDescription, RecordColumns, RingCoverage } from '../native/decode/types';
import { PerfType } from '../native/perf/uapi';

export const PROTOCOL_VERSION = 1;

/** Default rows per batch: 64k rows * 39 bytes/row ≈ 2.5 MB per message. */
export const DEFAULT_BATCH_ROWS = 65536;

// ---------------------------------------------------------------------------------------------
// Shared payload shapes

export type EventKind = 'tracepoint' | 'breakpoint' | 'software' | 'other';

export interface EventInfo {
  readonly index: number;
  readonly name: string;
  readonly kind: EventKind;
}

export interface ThreadInfo {
  readonly pid: number;
  readonly tid: number;
  readonly comm: string;
}

/** Per-ring coverage facts; 64-bit counters and absolute times as decimal strings. */
export interface CoverageFact {
  readonly ringId: number;
  readonly label: string;
  readonly path: string;
  readonly dataSize: number;
  readonly bytesWritten: string;
  readonly bytesOverwritten: string;
  readonly recordsRetained: number;
  /** Absolute ns (decimal) of the oldest / newest retained record, or null. */
  readonly oldestTimeNs: string | null;
  readonly newestTimeNs: string | null;
  /** Records the kernel reported lost (e.g. while the ring was paused), decimal. */
  readonly lost: string;
}

/**
 * Column name → element constructor of the columns that go on the wire; the order is the order of
 * the batch fields. The decoder's `ring` and `offset` columns stay on the host: they locate a
 * record's bytes, and the page asks for details by row, so sending them would only add 6 of every
 * 45 bytes to each batch.
 */
export const COLUMN_TYPES = {
  time: Float64Array,
  kind: Uint8Array,
  misc: Uint16Array,
  event: Uint16Array,
  pid: Int32Array,
  tid: Int32Array,
  cpu: Int32Array,
  ipHi: Uint32Array,
  ipLo: Uint32Array,
} as const;

export type ColumnName = keyof typeof COLUMN_TYPES;
export const COLUMN_NAMES = Object.keys(COLUMN_TYPES) as ColumnName[];

/** The decoded columns a batch carries (RecordColumns without the host-only ring/offset). */
export type WireColumns = Pick<RecordColumns, ColumnName | 'length' | 'timeOriginNs'>;

export type BatchBuffers = { readonly [K in ColumnName]: ArrayBuffer };

export interface SnapshotStart {
  readonly type: 'snapshotStart';
  readonly snapshotId: string;
  readonly name: string;
  /** Decimal absolute ns that every batch's `time` column is relative to. */
  readonly timeOriginNs: string;
  readonly totalRows: number;
  readonly batchCount: number;
  readonly takenAtMs: number;
  readonly events: readonly EventInfo[];
  readonly threads: readonly ThreadInfo[];
  readonly coverage: readonly CoverageFact[];
  /** What the recording could not see and why (user space only, rings shrunk to the lock budget); absent when nothing. */
  readonly limitations?: readonly string[];
}

export interface RecordBatch {
  readonly type: 'batch';
  readonly snapshotId: string;
  readonly batchIndex: number;
  readonly batchCount: number;
  /** Row index (within the snapshot) of this batch's first row. */
  readonly firstRow: number;
  readonly rowCount: number;
  readonly columns: BatchBuffers;
  /** Optional symbol per row: Int32 index into `symbolTable`, -1 for none. */
  readonly symbolIndex?: ArrayBuffer;
  readonly symbolTable?: readonly string[];
}

export interface CallchainEntry {
  readonly ip: string;
  readonly symbol?: string;
  readonly file?: string;
  readonly line?: number;
}

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** The DecodedRecord of one row as JSON (bigints as decimal strings). */
export interface RecordDetails {
  readonly type: string;
  readonly event?: string;
  readonly misc: number;
  readonly timeNs?: string;
  readonly pid?: number;
  readonly tid?: number;
  readonly cpu?: number;
  readonly fields: { readonly [name: string]: JsonValue };
  readonly tracepointFields?: { readonly [name: string]: JsonValue };
  readonly callchain?: readonly CallchainEntry[];
  readonly source?: { readonly file: string; readonly line: number };
}

export type WatchType = 'r' | 'w' | 'rw' | 'x';
export type WatchLength = 1 | 2 | 4 | 8;
export type WatchLocation =
  | { readonly kind: 'address'; readonly address: string }
  | { readonly kind: 'symbol'; readonly symbol: string }
  | { readonly kind: 'line'; readonly file: string; readonly line: number };
export type WatchTarget =
  | { readonly kind: 'process'; readonly pid: number }
  | { readonly kind: 'cpu'; readonly cpu: number }
  | { readonly kind: 'all-cpus' };

export interface WatchSpec {
  readonly location: WatchLocation;
  readonly type: WatchType;
  readonly length: WatchLength;
  readonly target: WatchTarget;
  /** Pinned breakpoints must always be on the CPU; flexible ones are multiplexed (kernel/events/hw_breakpoint.c). */
  readonly pinned: boolean;
}

export interface WatchInfo extends WatchSpec {
  readonly id: string;
  readonly enabled: boolean;
  readonly hits: number;
  /** Resolved address (hex) when the location was a symbol or a line. */
  readonly resolvedAddress?: string;
}

/**
 * The debug-register budget. `total` is HBP_NUM (4 on x86). The kernel's rule (kernel/events/hw_breakpoint.c) uses
 * the per-CPU pinned count, the largest per-task pinned count and the flexible count.
 */
export interface WatchBudget {
  readonly used: number;
  readonly total: number;
  readonly cpuPinned: number;
  readonly maxTaskPinned: number;
  readonly flexible: number;
}

export interface ErrorInfo {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
}

export interface PersistedViewState {
  /** Visible window in ns relative to `originNs`. */
  readonly window?: { readonly originNs: string; readonly start: number; readonly end: number };
  readonly grouping: LaneGrouping;
  readonly collapsed: readonly string[];
  readonly filter: string;
  readonly followLatest: boolean;
}

export type LaneGrouping = 'cpu' | 'thread' | 'event';

// ---------------------------------------------------------------------------------------------
// Host → webview

export type HostToWebview =
  | { readonly type: 'init'; readonly protocolVersion: number; readonly title?: string }
  | SnapshotStart
  | RecordBatch
  | { readonly type: 'detailsReply'; readonly replyTo: number; readonly snapshotId: string; readonly row: number;
      readonly details?: RecordDetails; readonly error?: ErrorInfo }
  | { readonly type: 'watchReply'; readonly replyTo: number; readonly ok: boolean; readonly error?: ErrorInfo }
  | { readonly type: 'watchList'; readonly watches: readonly WatchInfo[]; readonly budget: WatchBudget }
  | { readonly type: 'revealReply'; readonly replyTo: number; readonly ok: boolean; readonly error?: ErrorInfo }
  | { readonly type: 'removeSnapshot'; readonly snapshotId: string }
  | FieldFilterReply;

/**
 * Rows of one snapshot whose decoded field matches (answer to `fieldFilterRequest`): `rows` holds
 * snapshot-local row indexes as Uint32 (exact length, ascending), or `error` says why there are none.
 */
export interface FieldFilterReply {
  readonly type: 'fieldFilterReply';
  readonly replyTo: number;
  readonly snapshotId: string;
  readonly rows?: ArrayBuffer;
  readonly error?: ErrorInfo;
}

/** `=`: exact (numbers numerically, 0x-hex or decimal; strings exactly). `~`: case-insensitive substring. */
export type FieldFilterOp = '=' | '~';

// ---------------------------------------------------------------------------------------------
// Webview → host

export type WatchRequest =
  | { readonly op: 'add'; readonly spec: WatchSpec }
  | { readonly op: 'remove'; readonly id: string }
  | { readonly op: 'enable'; readonly id: string }
  | { readonly op: 'disable'; readonly id: string }
  | { readonly op: 'modify'; readonly id: string; readonly spec: WatchSpec };

export type WebviewToHost =
  | { readonly type: 'ready'; readonly protocolVersion: number }
  | { readonly type: 'batchAck'; readonly snapshotId: string; readonly batchIndex: number }
  | { readonly type: 'resync'; readonly have: readonly { readonly snapshotId: string; readonly rows: number }[] }
  | { readonly type: 'detailsRequest'; readonly requestId: number; readonly snapshotId: string; readonly row: number }
  | ({ readonly type: 'watchRequest'; readonly requestId: number } & WatchRequest)
  | { readonly type: 'revealRequest'; readonly requestId: number; readonly file: string; readonly line: number }
  | { readonly type: 'exportRequest'; readonly requestId: number; readonly snapshotId: string }
  | { readonly type: 'fieldFilterRequest'; readonly requestId: number; readonly snapshotId: string; readonly name: string;
      readonly op: FieldFilterOp; readonly value: string }
  | { readonly type: 'webviewError'; readonly message: string };

// ---------------------------------------------------------------------------------------------
// Validation: every incoming message is checked field by field before use.

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
  if (o.limitations !== undefined) arr(o, 'limitations', 'snapshotStart').forEach((_, i) => str(o.limitations as Obj, String(i), 'snapshotStart.limitations', 4096));
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
  if (o.symbolIndex !== undefined || o.symbolTable !== undefined) {
    buffer(o, 'symbolIndex', p, rows * 4);
    const table = arr(o, 'symbolTable', p);
    table.forEach((s, i) => { if (typeof s !== 'string') fail(`${p}.symbolTable[${i}]`, 'a string'); });
    const index = new Int32Array(o.symbolIndex as ArrayBuffer);
    for (let i = 0; i < index.length; i++) {
      if (index[i] < -1 || index[i] >= table.length) fail(`${p}.symbolIndex[${i}]`, `-1..${table.length - 1}`);
    }
  }
}

function validateJson(v: unknown, path: string, depth = 0): void {
  if (depth > 32) fail(path, 'JSON nested at most 32 deep');
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') { if (!Number.isFinite(v)) fail(path, 'a finite number'); return; }
  if (Array.isArray(v)) { v.forEach((x, i) => validateJson(x, `${path}[${i}]`, depth + 1)); return; }
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
  if (d.callchain !== undefined) {
    arr(d, 'callchain', path).forEach((c, i) => {
      const p = `${path}.callchain[${i}]`;
      const co = obj(c, p);
      str(co, 'ip', p, 32);
      optStr(co, 'symbol', p);
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
    case 'process': int(tgt, 'pid', `${path}.target`, 1, 2 ** 31 - 1); break;
    case 'cpu': int(tgt, 'cpu', `${path}.target`, 0, 65535); break;
    case 'all-cpus': break;
  }
  bool(s, 'pinned', path);
}

function validateWatchInfo(v: unknown, path: string): void {
  validateWatchSpec(v, path);
  const w = v as Obj;
  str(w, 'id', path, 256);
  bool(w, 'enabled', path);
  int(w, 'hits', path);
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
      case 'init': int(o, 'protocolVersion', 'init'); optStr(o, 'title', 'init'); return;
      case 'snapshotStart': validateSnapshotStart(o); return;
      case 'batch': validateBatch(o); return;
      case 'detailsReply':
        int(o, 'replyTo', type); str(o, 'snapshotId', type, 256); int(o, 'row', type);
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
        return;
      }
      case 'removeSnapshot': str(o, 'snapshotId', type, 256); return;
      case 'fieldFilterReply': {
        int(o, 'replyTo', type); str(o, 'snapshotId', type, 256);
        if ((o.rows === undefined) === (o.error === undefined)) fail(type, 'exactly one of rows or error');
        if (o.rows !== undefined) {
          if (!isArrayBuffer(o.rows) || o.rows.byteLength % 4 !== 0) fail(`${type}.rows`, 'an ArrayBuffer of Uint32 row indexes');
        }
        if (o.error !== undefined) error(o.error, `${type}.error`);
        return;
      }
      default: fail('message.type', `a known host message type (got ${JSON.stringify(type)})`);
    }
  }, v);
}

/** Validate a message the host received from the webview. */
export function validateWebviewToHost(v: unknown): Validated<WebviewToHost> {
  return guard<WebviewToHost>((o) => {
    const type = str(o, 'type', 'message', 64);
    switch (type) {
      case 'ready': int(o, 'protocolVersion', type); return;
      case 'batchAck': str(o, 'snapshotId', type, 256); int(o, 'batchIndex', type); return;
      case 'resync':
        arr(o, 'have', type).forEach((h, i) => {
          const ho = obj(h, `${type}.have[${i}]`);
          str(ho, 'snapshotId', `${type}.have[${i}]`, 256);
          int(ho, 'rows', `${type}.have[${i}]`);
        });
        return;
      case 'detailsRequest': int(o, 'requestId', type); str(o, 'snapshotId', type, 256); int(o, 'row', type); return;
      case 'watchRequest': {
        int(o, 'requestId', type);
        const op = oneOf(o, 'op', type, ['add', 'remove', 'enable', 'disable', 'modify'] as const);
        if (op !== 'add') str(o, 'id', type, 256);
        if (op === 'add' || op === 'modify') validateWatchSpec(o.spec, `${type}.spec`);
        return;
      }
      case 'revealRequest': int(o, 'requestId', type); str(o, 'file', type, 4096); int(o, 'line', type, 1); return;
      case 'exportRequest': int(o, 'requestId', type); str(o, 'snapshotId', type, 256); return;
      case 'fieldFilterRequest':
        int(o, 'requestId', type); str(o, 'snapshotId', type, 256);
        if (str(o, 'name', type, 256) === '') fail(`${type}.name`, 'a non-empty field name');
        oneOf(o, 'op', type, ['=', '~'] as const);
        str(o, 'value', type, 4096);
        return;
      case 'webviewError': str(o, 'message', type); return;
      default: fail('message.type', `a known webview message type (got ${JSON.stringify(type)})`);
    }
  }, v);
}

// ---------------------------------------------------------------------------------------------
// Columns ⇄ batches (pure; the host splits, the webview reassembles).

/** A symbol per row as a column: `index[row]` is a position in `table`, or -1 for none. */
export interface SymbolColumn {
  readonly index: Int32Array;
  readonly table: readonly string[];
}

export interface BatchOptions {
  readonly snapshotId: string;
  readonly batchRows?: number;
  /**
   * Optional symbol per row (same length as the columns): a SymbolColumn (built in one typed pass,
   * see wire.ts), or one string per row, null for none.
   */
  readonly symbols?: SymbolColumn | readonly (string | null)[];
}

function isSymbolColumn(symbols: BatchOptions['symbols']): symbols is SymbolColumn {
  return symbols !== undefined && !Array.isArray(symbols) && (symbols as SymbolColumn).index instanceof Int32Array;
}

/** Per-row strings → SymbolColumn (one Map lookup per row; callers with many rows should build the column directly). */
export function symbolColumnOf(symbols: readonly (string | null)[]): SymbolColumn {
  const index = new Int32Array(symbols.length);
  const table: string[] = [];
  const seen = new Map<string, number>();
  for (let r = 0; r < symbols.length; r++) {
    const s = symbols[r];
    if (s === null || s === undefined) { index[r] = -1; continue; }
    let id = seen.get(s);
    if (id === undefined) { id = table.length; table.push(s); seen.set(s, id); }
    index[r] = id;
  }
  return { index, table };
}

function sliceColumn(column: ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; BYTES_PER_ELEMENT: number },
  start: number, end: number): ArrayBuffer {
  const size = column.BYTES_PER_ELEMENT;
  // slice() copies into a fresh exact-length buffer, which is what makes it transferable.
  return (column.buffer as ArrayBuffer).slice(column.byteOffset + start * size, column.byteOffset + end * size);
}

function batchRowsOf(batchRows: number | undefined): number {
  return Math.max(1, Math.floor(batchRows ?? DEFAULT_BATCH_ROWS));
}

/** How many batches columnsToBatches makes of `rows` rows (at least one, even for none). */
export function batchCountOf(rows: number, batchRows?: number): number {
  return Math.max(1, Math.ceil(rows / batchRowsOf(batchRows)));
}

/** Split decoded columns into exact-length batches for postMessage (transfer `transferablesOf(batch)`). */
export function columnsToBatches(columns: WireColumns, options: BatchOptions): RecordBatch[] {
  const batchRows = batchRowsOf(options.batchRows);
  const batchCount = batchCountOf(columns.length, batchRows);
  const symbolCount = options.symbols === undefined ? 0 : isSymbolColumn(options.symbols) ? options.symbols.index.length : options.symbols.length;
  if (options.symbols && symbolCount !== columns.length) {
    throw new RangeError(`symbols has ${symbolCount} entries for ${columns.length} rows`);
  }
  const symbols = options.symbols === undefined ? undefined : isSymbolColumn(options.symbols) ? options.symbols : symbolColumnOf(options.symbols);
  // Global symbol id → id in the current batch's table (-1: not in it yet); reset per batch.
  const localId = symbols ? new Int32Array(symbols.table.length).fill(-1) : null;
  const batches: RecordBatch[] = [];
  for (let b = 0; b < batchCount; b++) {
    const start = b * batchRows;
    const end = Math.min(columns.length, start + batchRows);
    const buffers = {} as Record<ColumnName, ArrayBuffer>;
    for (const name of COLUMN_NAMES) buffers[name] = sliceColumn(columns[name], start, end);
    let symbolIndex: ArrayBuffer | undefined;
    let symbolTable: string[] | undefined;
    if (symbols && localId) {
      // Each batch carries only the symbols its rows use, renumbered from 0.
      const index = new Int32Array(end - start);
      const used: number[] = [];
      const global = symbols.index;
      for (let r = start; r < end; r++) {
        const g = global[r];
        if (g < 0) { index[r - start] = -1; continue; }
        if (g >= localId.length) throw new RangeError(`symbols.index[${r}] = ${g} is past the table (${localId.length} entries)`);
        let id = localId[g];
        if (id < 0) { id = localId[g] = used.length; used.push(g); }
        index[r - start] = id;
      }
      symbolTable = used.map((g) => symbols.table[g]);
      for (const g of used) localId[g] = -1;
      symbolIndex = index.buffer;
    }
    batches.push({
      type: 'batch', snapshotId: options.snapshotId, batchIndex: b, batchCount, firstRow: start, rowCount: end - start,
      columns: buffers, ...(symbolIndex ? { symbolIndex, symbolTable } : {}),
    });
  }
  return batches;
}

/** The buffers of a batch, for postMessage's transfer list. */
export function transferablesOf(batch: RecordBatch): ArrayBuffer[] {
  const list = COLUMN_NAMES.map((n) => batch.columns[n]);
  if (batch.symbolIndex) list.push(batch.symbolIndex);
  return list;
}

export interface ReassembledColumns {
  readonly columns: WireColumns;
  /** Symbol per row, or undefined when no batch carried symbols. */
  readonly symbols?: (string | null)[];
}

/**
 * Reassemble batches (any order, all present) into one set of columns. Throws a RangeError
 * when batches are missing, overlap or do not cover `totalRows`.
 */
export function batchesToColumns(batches: readonly RecordBatch[], timeOriginNs: bigint): ReassembledColumns {
  const sorted = [...batches].sort((a, b) => a.firstRow - b.firstRow);
  let total = 0;
  for (const b of sorted) {
    if (b.firstRow !== total) throw new RangeError(`batch ${b.batchIndex} starts at row ${b.firstRow}, expected ${total}`);
    total += b.rowCount;
  }
  const out = {} as Record<ColumnName, ArrayLike<number> & { set(a: ArrayLike<number>, offset: number): void }>;
  for (const name of COLUMN_NAMES) out[name] = new COLUMN_TYPES[name](total);
  const anySymbols = sorted.some((b) => b.symbolIndex);
  const symbols: (string | null)[] | undefined = anySymbols ? new Array<string | null>(total).fill(null) : undefined;
  for (const b of sorted) {
    for (const name of COLUMN_NAMES) out[name].set(new COLUMN_TYPES[name](b.columns[name]), b.firstRow);
    if (symbols && b.symbolIndex && b.symbolTable) {
      const index = new Int32Array(b.symbolIndex);
      for (let i = 0; i < index.length; i++) symbols[b.firstRow + i] = index[i] >= 0 ? b.symbolTable[index[i]] : null;
    }
  }
  const columns = { length: total, timeOriginNs, ...out } as unknown as WireColumns;
  return symbols ? { columns, symbols } : { columns };
}

// ---------------------------------------------------------------------------------------------
// Host-side conversions from the decoder's shapes (pure; bigints become decimal strings).


export function eventInfoOf(e: EventDescription): EventInfo {
  const kind: EventKind = e.attr.type === PerfType.TRACEPOINT ? 'tracepoint' : e.attr.type === PerfType.BREAKPOINT ? 'breakpoint'
    : e.attr.type === PerfType.SOFTWARE ? 'software' : 'other';
  return { index: e.index, name: e.name, kind };
}

export function coverageFactOf(c: RingCoverage): CoverageFact {
  return {
    ringId: c.ringId, label: c.label, path: c.path, dataSize: c.dataSize, bytesWritten: c.bytesWritten.toString(),
    bytesOverwritten: c.bytesOverwritten.toString(), recordsRetained: c.recordsRetained,
    oldestTimeNs: c.oldestTimeNs === null ? null : c.oldestTimeNs.toString(),
    newestTimeNs: c.newestTimeNs === null ? null : c.newestTimeNs.toString(), lost: (c.lostSinceOpen ?? c.lostRecords).toString(),
  };
}

/** The snapshotStart message for a decoded snapshot plus its batches (send start, then batch 0, then one per ack). */
export function snapshotMessages(decoded: DecodedSnapshot, options: BatchOptions & {
  readonly name: string; readonly takenAtMs: number; readonly threads: readonly ThreadInfo[]; readonly limitations?: readonly string[];
}): { start: SnapshotStart; batches: RecordBatch[] } {
  const batches = columnsToBatches(decoded.columns, options);
  const start: SnapshotStart = {
    type: 'snapshotStart', snapshotId: options.snapshotId, name: options.name, timeOriginNs: decoded.columns.timeOriginNs.toString(),
    totalRows: decoded.columns.length, batchCount: batches.length, takenAtMs: options.takenAtMs,
    events: decoded.events.map(eventInfoOf), threads: options.threads, coverage: decoded.coverage.map(coverageFactOf),
    ...(options.limitations?.length ? { limitations: [...options.limitations] } : {}),
  };
  return { start, batches };
}

/** Any decoded value as JSON: bigints to decimal strings, byte arrays to hex, undefined dropped. */
export function toJsonValue(v: unknown, depth = 0): JsonValue {
  if (depth > 30) return '…';
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Uint8Array) return Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('');
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, (x) => toJsonValue(x, depth + 1));
  if (Array.isArray(v)) return v.map((x) => toJsonValue(x, depth + 1));
  if (typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = toJsonValue(x, depth + 1);
    return out;
  }
  return String(v);
}

/** A DecodedRecord as the details pane wants it; the host adds symbolized callchain and source when it has them. */
export function recordDetailsOf(record: DecodedRecord, extra: {
  readonly tracepointFields?: Readonly<Record<string, unknown>>; readonly callchain?: readonly CallchainEntry[];
  readonly source?: { readonly file: string; readonly line: number };
} = {}): RecordDetails {
  const fields = toJsonValue(record.fields) as { [name: string]: JsonValue };
  return {
    type: record.type, misc: record.misc, fields,
    ...(record.event !== undefined ? { event: record.event } : {}),
    ...(record.timeNs !== undefined ? { timeNs: record.timeNs.toString() } : {}),
    ...(record.pid !== undefined ? { pid: record.pid } : {}),
    ...(record.tid !== undefined ? { tid: record.tid } : {}),
    ...(record.cpu !== undefined ? { cpu: record.cpu } : {}),
    ...(extra.tracepointFields ? { tracepointFields: toJsonValue(extra.tracepointFields) as { [name: string]: JsonValue } } : {}),
    ...(extra.callchain ? { callchain: extra.callchain } : {}),
    ...(extra.source ? { source: extra.source } : {}),
  };
}
