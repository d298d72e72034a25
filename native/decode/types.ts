// What the decoder hands the CLI, perf.data writer and webview: typed-array columns, one row per
// record, oldest first, plus details decoded on demand. What the kernel side hands the decoder
// (ring copies and the events that describe them) is in native/abi/snapshot.ts.
// Pure types: nothing here imports node, koffi or vscode.

import type { EventDescription, RingCopy, SnapshotPath, SpoolLoss } from '../abi/snapshot';
import type { ColumnArrays } from './column-schema';

/** A counted oddity found while walking; the walk stops or skips, never throws. */
export interface DecodeAnomaly {
  readonly ringId: number;
  readonly offset: number;
  readonly kind: 'size-too-small' | 'size-past-end' | 'truncated-oldest' | 'unknown-event-id' | 'field-past-end' | 'bad-misc' | 'size-misaligned';
  readonly detail: string;
}

/** Per-ring facts reported with every snapshot. */
export interface RingCoverage {
  readonly ringId: number;
  readonly label: string;
  readonly path: SnapshotPath;
  readonly dataSize: number;
  readonly bytesWritten: bigint;
  /** bytesWritten - bytes retained: what the flight recorder overwrote. */
  readonly bytesOverwritten: bigint;
  readonly recordsRetained: number;
  /** Absolute ns of the oldest / newest retained record with a time, or null when none. */
  readonly oldestTimeNs: bigint | null;
  readonly newestTimeNs: bigint | null;
  /** Sum of PERF_RECORD_LOST.lost and LOST_SAMPLES seen in this ring (e.g. records lost while paused). */
  readonly lostRecords: bigint;
  /** RingCopy.lostSinceOpen: every record the kernel could not write into this ring; absent where not counted. */
  readonly lostSinceOpen?: bigint;
  /** RingCopy.unspooled: side-band a keeper lost because it could not write its spool. */
  readonly unspooled?: SpoolLoss;
  readonly anomalies: number;
}

/**
 * Decoded records as columns (struct-of-arrays), oldest first: one typed array per column of
 * column-schema.ts. `time` is relative to `timeOriginNs` so a Float64 holds it exactly (any span
 * under 104 days); absent time is NaN.
 * Each array has exactly `length` elements but may be a view (byteOffset > 0, a slightly larger
 * buffer): use the typed array, never its `.buffer` whole, and copy before transferring it.
 */
export interface RecordColumns extends ColumnArrays {
  readonly length: number;
  readonly timeOriginNs: bigint;
}

/** The full decoded form of one record (on demand, for details panes and JSON output). */
export interface DecodedRecord {
  readonly type: string;
  readonly event?: string;
  readonly misc: number;
  readonly timeNs?: bigint;
  readonly pid?: number;
  readonly tid?: number;
  readonly cpu?: number;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Unwinds a user stack sampled with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER: the sampled pc
 * first, then each caller's call site (return address - 1, as perf lists them). `registers` are keyed by perf_regs bit, `stack` holds the
 * valid (dyn_size) bytes copied from the stack pointer up.
 */
export type UserStackUnwinder = (pid: number, registers: Readonly<Record<number, bigint>>, stack: Uint8Array) => readonly bigint[];

/**
 * The fields a host reads from a sample's user registers and stack for its event (a logpoint's
 * variable values), or undefined when the event is not one it reads. They replace the registers and
 * the stack bytes in the record: the values are what those were sampled for.
 */
export type SampleValuesReader = (
  event: EventDescription,
  pid: number,
  registers: Readonly<Record<number, bigint>>,
  stack: Uint8Array,
  /** The sample's PERF_SAMPLE_RAW, where its event has one (a logpoint's uprobe that fetched memory, see tracefs-uprobes.ts). */
  raw?: Uint8Array,
) => Readonly<Record<string, unknown>> | undefined;

/**
 * A logpoint's hits as columns, as a host reads them (native/symbols/logpoint-columns.ts makes them): per variable
 * a column with one text id per hit, each distinct text once. What a tally of many hits reads instead of a record
 * per hit (logpoint-tally.ts).
 */
/** Id of "no such variable at this hit" in a LogpointColumnsView column. */
export const NO_VALUE = -1;

export interface LogpointColumnsView {
  /** Hits, in the order of the rows asked for. */
  readonly length: number;
  /** Column c holds the values of the variable names[c]. */
  readonly names: readonly string[];
  /** Per column, per hit: the id of the variable's value, NO_VALUE where that hit has no such variable. */
  readonly columns: readonly Int32Array[];
  /** The text of an id (written when first asked, for a value kept by its bytes). */
  textOf(id: number): string;
  /** Ids are 0..idCount-1. */
  readonly idCount: number;
  /** Whether two different ids of a column always have different texts (its distinct values can be counted by id). */
  sameIdSameText(column: number): boolean;
  /** Per hit with no values at all: why. */
  readonly errors: ReadonlyMap<number, string>;
  /** Per hit: the names read as <not captured> for a reason their text cannot say, and that reason. */
  readonly notCaptured: ReadonlyMap<number, Readonly<Record<string, string>>>;
}

/** Reads the values of a logpoint's hits (its sample rows of `snapshot`, oldest first) as columns, one hit per row. */
export type LogpointColumnsReader = (snapshot: DecodedSnapshot, event: EventDescription, rows: readonly number[]) => LogpointColumnsView;

/** What decodeSnapshot returns. */
export interface DecodedSnapshot {
  readonly events: readonly EventDescription[];
  readonly rings: readonly RingCopy[];
  readonly columns: RecordColumns;
  readonly coverage: readonly RingCoverage[];
  readonly anomalies: readonly DecodeAnomaly[];
  /**
   * Set by a host that can read the sampled processes' mapped objects (the decoder cannot): with it,
   * decodeRecordAt gives a sample that carries user registers and stack its unwound user callchain.
   */
  readonly unwindUserStack?: UserStackUnwinder;
  /** Set by a host that reads logpoint values (native/symbols/logpoint-values.ts): decodeRecordAt adds them to the record's fields. */
  readonly sampleValues?: SampleValuesReader;
  /** Set by the same host: the values of many hits at once, for a tally (see LogpointColumnsReader). */
  readonly logpointColumns?: LogpointColumnsReader;
}
