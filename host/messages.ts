// Host-side conversions from the decoder's shapes to protocol messages (pure; bigints become decimal
// strings). wire.ts adds what only a host knows (symbols, comms, source lines) on top of these.

import type { DecodedRecord, DecodedSnapshot, RingCoverage } from '../native/decode/types';
import type { EventDescription } from '../native/abi/snapshot';
import { PerfType } from '../native/abi/uapi';
import { BatchBuilder, type BatchOptions } from '../shared/batches';
import type {
  WireStacks,
  CallchainEntry,
  CoverageFact,
  EventInfo,
  EventKind,
  JsonValue,
  LossInfo,
  RecordBatch,
  RecordDetails,
  SnapshotStart,
  ThreadInfo,
} from '../shared/protocol';

export function eventInfoOf(e: EventDescription): EventInfo {
  const kind: EventKind =
    e.attr.type === PerfType.TRACEPOINT
      ? 'tracepoint'
      : e.attr.type === PerfType.BREAKPOINT
        ? 'breakpoint'
        : e.attr.type === PerfType.SOFTWARE
          ? 'software'
          : 'other';
  return { index: e.index, name: e.name, kind };
}

export function coverageFactOf(c: RingCoverage): CoverageFact {
  return {
    ringId: c.ringId,
    label: c.label,
    path: c.path,
    dataSize: c.dataSize,
    bytesWritten: c.bytesWritten.toString(),
    bytesOverwritten: c.bytesOverwritten.toString(),
    recordsRetained: c.recordsRetained,
    oldestTimeNs: c.oldestTimeNs === null ? null : c.oldestTimeNs.toString(),
    newestTimeNs: c.newestTimeNs === null ? null : c.newestTimeNs.toString(),
    lost: (c.lostSinceOpen ?? c.lostRecords).toString(),
  };
}

/** A snapshot's start and its batches (send start, then batch 0, then one per ack). */
export interface SnapshotMessages {
  readonly start: SnapshotStart;
  /** Its batches one at a time, for a sender that builds each as it sends it: nothing copied before, nothing kept after. */
  readonly batchBuilder: BatchBuilder;
  /** Every batch, built on first read. */
  readonly batches: RecordBatch[];
}

/** The snapshotStart message for a decoded snapshot plus its batches. */
export function snapshotMessages(
  decoded: DecodedSnapshot,
  options: BatchOptions & {
    readonly name: string;
    readonly takenAtMs: number;
    readonly threads: readonly ThreadInfo[];
    readonly limitations?: readonly string[];
    readonly stackTable?: WireStacks;
    readonly losses?: readonly LossInfo[];
    /** The records go without their names, which follow in a snapshotSymbols message. */
    readonly namesFollow?: boolean;
  },
): SnapshotMessages {
  const batchBuilder = new BatchBuilder(decoded.columns, options);
  const start: SnapshotStart = {
    type: 'snapshotStart',
    snapshotId: options.snapshotId,
    name: options.name,
    timeOriginNs: decoded.columns.timeOriginNs.toString(),
    totalRows: decoded.columns.length,
    batchCount: batchBuilder.count,
    takenAtMs: options.takenAtMs,
    events: decoded.events.map(eventInfoOf),
    threads: options.threads,
    coverage: decoded.coverage.map(coverageFactOf),
    ...(options.limitations?.length ? { limitations: [...options.limitations] } : {}),
    ...(options.stackTable ? { stacks: options.stackTable } : {}),
    ...(options.losses?.length ? { losses: options.losses } : {}),
    ...(options.namesFollow ? { namesFollow: true } : {}),
  };
  let batches: RecordBatch[] | undefined;
  return {
    start,
    batchBuilder,
    get batches() {
      return (batches ??= batchBuilder.all());
    },
  };
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
export function recordDetailsOf(
  record: DecodedRecord,
  extra: {
    readonly tracepointFields?: Readonly<Record<string, unknown>>;
    readonly callchain?: readonly CallchainEntry[];
    readonly symbols?: readonly string[];
    readonly source?: { readonly file: string; readonly line: number };
  } = {},
): RecordDetails {
  const fields = toJsonValue(record.fields) as { [name: string]: JsonValue };
  return {
    type: record.type,
    misc: record.misc,
    fields,
    ...(record.event !== undefined ? { event: record.event } : {}),
    ...(record.timeNs !== undefined ? { timeNs: record.timeNs.toString() } : {}),
    ...(record.pid !== undefined ? { pid: record.pid } : {}),
    ...(record.tid !== undefined ? { tid: record.tid } : {}),
    ...(record.cpu !== undefined ? { cpu: record.cpu } : {}),
    ...(extra.tracepointFields ? { tracepointFields: toJsonValue(extra.tracepointFields) as { [name: string]: JsonValue } } : {}),
    ...(extra.callchain ? { callchain: extra.callchain } : {}),
    ...(extra.symbols ? { symbols: extra.symbols } : {}),
    ...(extra.source ? { source: extra.source } : {}),
  };
}
