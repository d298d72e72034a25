// Host side of the protocol: turns a DecodedSnapshot into what the panel receives (a SnapshotStart,
// columnar batches, and record details on demand). Shared by the extension's panel host and the
// CLI's self-contained HTML export so both show exactly the same thing. Pure: symbols and comms come
// in as callbacks, so this imports nothing from node, koffi or vscode.

import type { DecodedSnapshot, DecodedRecord } from '../native/decode/types';
import { decodeRecordAt, type CallchainFrame } from '../native/decode/record';
import { PerfType, RecordType, Misc } from '../native/perf/uapi';
import {
  columnsToBatches,
  type CallchainEntry, type CoverageFact, type EventInfo, type EventKind, type JsonValue,
  type RecordBatch, type RecordDetails, type SnapshotStart, type ThreadInfo,
} from './protocol';

export type SymbolizeFn = (pid: number, ip: bigint, kernel: boolean) => string | undefined;
export type SourceLineFn = (pid: number, ip: bigint) => { file: string; line: number } | undefined;

export interface WireOptions {
  readonly snapshotId: string;
  readonly name: string;
  readonly takenAtMs: number;
  readonly symbolize?: SymbolizeFn;
  /** comm of a thread, when the side-band or /proc knew it. */
  readonly comm?: (pid: number, tid: number) => string | undefined;
  readonly batchRows?: number;
}

function eventKind(type: number): EventKind {
  switch (type) {
    case PerfType.TRACEPOINT: return 'tracepoint';
    case PerfType.BREAKPOINT: return 'breakpoint';
    case PerfType.SOFTWARE: return 'software';
    default: return 'other';
  }
}

/** The comm of every thread: COMM records of the snapshot win over the caller's knowledge. */
function threadsOf(snapshot: DecodedSnapshot, comm: WireOptions['comm']): ThreadInfo[] {
  const { pid, tid, kind, length } = snapshot.columns;
  const names = new Map<string, ThreadInfo>();
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.COMM) continue;
    const fields = decodeRecordAt(snapshot, row).fields as { pid?: number; tid?: number; comm?: string };
    if (fields.pid !== undefined && fields.tid !== undefined) names.set(`${fields.pid}/${fields.tid}`, { pid: fields.pid, tid: fields.tid, comm: fields.comm ?? '' });
  }
  for (let row = 0; row < length; row++) {
    if (tid[row] < 0) continue;
    const key = `${pid[row]}/${tid[row]}`;
    if (names.has(key)) continue;
    const processComm = names.get(`${pid[row]}/${pid[row]}`)?.comm;
    names.set(key, { pid: pid[row], tid: tid[row], comm: comm?.(pid[row], tid[row]) ?? processComm ?? '' });
  }
  return [...names.values()];
}

function coverageOf(snapshot: DecodedSnapshot): CoverageFact[] {
  return snapshot.coverage.map((ring) => ({
    ringId: ring.ringId,
    label: ring.label,
    path: ring.path,
    dataSize: ring.dataSize,
    bytesWritten: ring.bytesWritten.toString(),
    bytesOverwritten: ring.bytesOverwritten.toString(),
    recordsRetained: ring.recordsRetained,
    oldestTimeNs: ring.oldestTimeNs === null ? null : ring.oldestTimeNs.toString(),
    newestTimeNs: ring.newestTimeNs === null ? null : ring.newestTimeNs.toString(),
    lost: ring.lostRecords.toString(),
  }));
}

/** Symbol per SAMPLE row, cached per (pid, ip): hot loops repeat the same few IPs millions of times. */
function rowSymbols(snapshot: DecodedSnapshot, symbolize: SymbolizeFn): (string | null)[] {
  const { kind, pid, ipHi, ipLo, misc, length } = snapshot.columns;
  const cache = new Map<string, string | null>();
  const out = new Array<string | null>(length);
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE || (ipHi[row] === 0 && ipLo[row] === 0)) { out[row] = null; continue; }
    const kernel = (misc[row] & Misc.CPUMODE_MASK) === Misc.KERNEL;
    const key = `${kernel ? -1 : pid[row]}:${ipHi[row]}:${ipLo[row]}`;
    let symbol = cache.get(key);
    if (symbol === undefined) {
      const ip = (BigInt(ipHi[row]) << 32n) | BigInt(ipLo[row]);
      symbol = symbolize(pid[row], ip, kernel) ?? null;
      cache.set(key, symbol);
    }
    out[row] = symbol;
  }
  return out;
}

export function snapshotToWire(snapshot: DecodedSnapshot, options: WireOptions): { start: SnapshotStart; batches: RecordBatch[] } {
  const events: EventInfo[] = snapshot.events.map((event) => ({ index: event.index, name: event.name, kind: eventKind(event.attr.type) }));
  const batches = columnsToBatches(snapshot.columns, {
    snapshotId: options.snapshotId,
    batchRows: options.batchRows,
    symbols: options.symbolize ? rowSymbols(snapshot, options.symbolize) : undefined,
  });
  const start: SnapshotStart = {
    type: 'snapshotStart',
    snapshotId: options.snapshotId,
    name: options.name,
    timeOriginNs: snapshot.columns.timeOriginNs.toString(),
    totalRows: snapshot.columns.length,
    batchCount: batches.length,
    takenAtMs: options.takenAtMs,
    events,
    threads: threadsOf(snapshot, options.comm),
    coverage: coverageOf(snapshot),
  };
  return { start, batches };
}

function toJsonValue(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Uint8Array) return Array.from(value, (b) => b.toString(16).padStart(2, '0')).join('');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) out[key] = toJsonValue(inner);
    return out;
  }
  return String(value);
}

const hex = (value: bigint) => '0x' + value.toString(16);

/** Every decoded field of one row, with the callchain symbolized and the source line when known. */
export function recordDetailsOf(snapshot: DecodedSnapshot, row: number, symbolize?: SymbolizeFn, sourceLine?: SourceLineFn): RecordDetails {
  const record: DecodedRecord = decodeRecordAt(snapshot, row);
  const { raw, callchain, tracepoint, ...fields } = record.fields as Record<string, unknown> & { raw?: unknown; callchain?: unknown; tracepoint?: unknown };
  const pid = record.pid ?? -1;
  let chain: CallchainEntry[] | undefined;
  if (Array.isArray(callchain)) {
    chain = [];
    for (const frame of callchain as CallchainFrame[]) {
      if (frame.isMarker) continue;
      const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel';
      const symbol = symbolize?.(pid, frame.ip, kernel);
      const position = kernel ? undefined : sourceLine?.(pid, frame.ip);
      chain.push({ ip: hex(frame.ip), ...(symbol ? { symbol } : {}), ...(position ? { file: position.file, line: position.line } : {}) });
    }
  }
  const ip = typeof fields.ip === 'bigint' ? fields.ip : undefined;
  const kernelIp = (record.misc & Misc.CPUMODE_MASK) === Misc.KERNEL;
  const source = ip !== undefined && !kernelIp ? sourceLine?.(pid, ip) : undefined;
  const symbol = ip !== undefined ? symbolize?.(pid, ip, kernelIp) : undefined;
  const tracepointFields = tracepoint !== undefined ? toJsonValue(tracepoint) : undefined;
  return {
    type: record.type,
    ...(record.event !== undefined ? { event: record.event } : {}),
    misc: record.misc,
    ...(record.timeNs !== undefined ? { timeNs: record.timeNs.toString() } : {}),
    ...(record.pid !== undefined ? { pid: record.pid } : {}),
    ...(record.tid !== undefined ? { tid: record.tid } : {}),
    ...(record.cpu !== undefined ? { cpu: record.cpu } : {}),
    fields: { ...(toJsonValue(fields) as Record<string, JsonValue>), ...(raw instanceof Uint8Array ? { rawSize: raw.length } : {}), ...(ip !== undefined ? { ip: hex(ip) } : {}), ...(symbol ? { sym: symbol } : {}) },
    ...(tracepointFields && typeof tracepointFields === 'object' && !Array.isArray(tracepointFields) ? { tracepointFields: tracepointFields as Record<string, JsonValue> } : {}),
    ...(chain ? { callchain: chain } : {}),
    ...(source ? { source } : {}),
  };
}
