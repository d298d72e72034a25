// The messages between the extension host (or the CLI's offline page) and the timeline webview, and
// nothing else: both sides import this module, so it holds only types and the protocol version.
// Validation is in validate.ts, the columnar batch codec in batches.ts, the column schema in columns.ts.
//
// Shape: one union per direction. Requests from the webview carry a `requestId`; the host answers
// with the same number in `replyTo`. The webview starts with `ready`; the host answers `init` and
// only then streams snapshots. Bulk records travel as columnar batches of exact-length
// ArrayBuffers (transferable, never arrays of objects); each batch is acknowledged before the host
// sends the next one, and the host sends nothing while the panel is hidden (the webview sends
// `resync` when it becomes visible again, saying how many rows of each snapshot it already has).

import type { BatchBuffers } from './columns';
import type { ThreadStateColumn } from './thread-states';

export const PROTOCOL_VERSION = 1;

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
  /** The snapshot's distinct sampled call stacks (function names), when its samples have callchains; batches refer to them by id. */
  readonly stacks?: WireStacks;
  /** Its LOST and LOST_SAMPLES records, to draw where the records went missing; absent when none. */
  readonly losses?: readonly LossInfo[];
  /**
   * Its batches carry no names: the symbols and stacks of its rows follow in one snapshotSymbols message once the host
   * has them (the panel paints the records first, then fills the names in).
   */
  readonly namesFollow?: boolean;
}

/**
 * The names of a snapshot sent with `namesFollow`, for all its rows: per row a symbol (Int32 index into
 * `symbolTable`, -1 none) and a stack (Int32 index into `stacks`, -1 none; both absent when no sample has a callchain).
 * Once the page has it, the snapshot looks as it would had the names come with its records.
 */
export interface SnapshotSymbols {
  readonly type: 'snapshotSymbols';
  readonly snapshotId: string;
  readonly symbolIndex: ArrayBuffer;
  readonly symbolTable: readonly string[];
  readonly stacks?: BinaryStacks;
  readonly stackIndex?: ArrayBuffer;
}

/**
 * WireStacks with its numbers as exact-length ArrayBuffers (Uint32 `start`, Int32 the others), as a big capture's
 * stacks travel after its records: hundreds of thousands of frames as JSON arrays took code-server 18 s to carry to
 * the page, as bytes a batch's time. shared/stacks-buffers.ts converts.
 */
export interface BinaryStacks {
  readonly names: readonly string[];
  readonly start: ArrayBuffer;
  readonly frames: ArrayBuffer;
  readonly locations?: readonly { readonly file: string; readonly line: number }[];
  readonly leafLocation?: ArrayBuffer;
  readonly nameLocation?: ArrayBuffer;
  readonly libraries?: readonly string[];
  readonly nameLibrary?: ArrayBuffer;
}

/**
 * Work the host does for the page that may take a while (Capture Snapshot, Open perf.data, naming a capture's
 * functions): the page shows it with a Cancel once it has taken a second. `step` names what is under way; `done` ends
 * it (whether it finished, failed or was cancelled). The page's `cancel` with the same `taskId` cancels it, as the
 * progress notification's Cancel does.
 */
export interface TaskProgress {
  readonly type: 'progress';
  readonly taskId: string;
  readonly title: string;
  readonly step?: string;
  readonly cancellable: boolean;
  readonly done?: boolean;
}

/** A LOST / LOST_SAMPLES record: how many records the kernel did not write, where and since when. */
export interface LossInfo {
  /** The record's row in the snapshot. */
  readonly row: number;
  readonly kind: 'LOST' | 'LOST_SAMPLES';
  /** Records lost, decimal. */
  readonly lost: string;
  /** The ring's coverage label (e.g. `cpu1`). */
  readonly ring: string;
  /** Absolute ns (decimal) of the ring's last record before this one, or null when it is the ring's first: the gap's start. */
  readonly sinceNs: string | null;
}

/**
 * A snapshot's thread states from its sched:sched_switch records (shared/thread-states.ts), sent once after its
 * snapshotStart when it has any: `count` intervals, each column an exact-length ArrayBuffer of `count` elements.
 */
export interface ThreadStates {
  readonly type: 'threadStates';
  readonly snapshotId: string;
  readonly count: number;
  readonly columns: { readonly [K in ThreadStateColumn]: ArrayBuffer };
  /** The names `nextComm` refers to. */
  readonly comms: readonly string[];
}

/**
 * A StackTable (shared/stacks.ts) as JSON: stack s is frames[start[s] .. start[s+1]), leaf first, indexes into names.
 * Source lines, when the host has line tables: per stack the line of its leaf address, per name the line of the
 * function's entry, as indexes into `locations` (-1: unknown); both absent when no line is known.
 */
export interface WireStacks {
  readonly names: readonly string[];
  readonly start: readonly number[];
  readonly frames: readonly number[];
  readonly locations?: readonly { readonly file: string; readonly line: number }[];
  readonly leafLocation?: readonly number[];
  readonly nameLocation?: readonly number[];
  /** The object files of the functions: `nameLibrary[n]` indexes `libraries` (-1: unknown). */
  readonly libraries?: readonly string[];
  readonly nameLibrary?: readonly number[];
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
  /** Optional stack per row: Int32 index into the snapshot's `stacks`, -1 for none. */
  readonly stackIndex?: ArrayBuffer;
}

/** One callchain frame: `symbol` indexes RecordDetails.symbols (absent: no symbol, shown as [unknown] or [kernel]). */
export interface CallchainEntry {
  readonly ip: string;
  readonly symbol?: number;
  /** A kernel address: without a readable /proc/kallsyms it has no name, only this. */
  readonly kernel?: boolean;
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
  /** The names the callchain refers to by index, each once. */
  readonly symbols?: readonly string[];
  readonly source?: { readonly file: string; readonly line: number };
}

export type WatchType = 'r' | 'w' | 'rw' | 'x';
export type WatchLength = 1 | 2 | 4 | 8;
export type WatchLocation =
  | { readonly kind: 'address'; readonly address: string }
  | { readonly kind: 'symbol'; readonly symbol: string }
  | { readonly kind: 'line'; readonly file: string; readonly line: number };
export type WatchTarget = { readonly kind: 'process'; readonly pid: number } | { readonly kind: 'cpu'; readonly cpu: number } | { readonly kind: 'all-cpus' };

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
  /**
   * Why no hit can be seen on this machine (breakpoints accepted and never delivered, as the probe measured): the
   * Hits column then says so instead of 0.
   */
  readonly unseen?: string;
  /**
   * `uprobe`: a source line counted by the kernel's uprobes (breakpoints silent here, no register free, or asked), which
   * take no debug register: listed apart from the hardware breakpoints and not counted in the budget.
   */
  readonly probe?: 'uprobe';
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
  /**
   * Breakpoints counted in `used` that the list does not show, as `event (recording)`: the breakpoint events of
   * recordings started otherwise (Start Recording, a kept or attached one), which hold registers all the same.
   */
  readonly heldByRecordings?: readonly string[];
}

export interface ErrorInfo {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
}

/**
 * Live follow: what the rings of a running recording gained since the previous append, added to the live capture
 * `snapshotId` (shown like a capture, growing by itself). `part` describes these rows as a snapshotStart describes a
 * snapshot (their own time origin, events, threads, stacks, losses by row within the part; `coverage`: what the host
 * holds of the live capture now), `batch` holds them (one batch; `firstRow` numbers them on from the previous append,
 * from 0 at the first), `threadStates` their thread states. Rows of the live capture older than `keepFromNs` (absolute
 * ns, decimal) fall out of its window and are dropped. Each append is acknowledged (`liveAck` with its `seq`) before
 * the host reads the rings again.
 */
export interface LiveAppend {
  readonly type: 'liveAppend';
  readonly snapshotId: string;
  readonly seq: number;
  readonly part: SnapshotStart;
  readonly batch: RecordBatch;
  readonly threadStates?: ThreadStates;
  readonly keepFromNs: string;
  /**
   * The capture is a perf.data file being opened, not a recording followed: it grows by these appends while the host
   * reads the file (each part in time order after the previous), keeps every row (`keepFromNs` is not a window), is
   * shown at once and its first paint reported (`painted`), is not the capture "Follow live" shows, and has its names
   * (part.namesFollow) in one snapshotSymbols once the whole file is read. Its rows are then the snapshot's.
   */
  readonly opening?: boolean;
}

/**
 * Whether the panel follows a recording live, and why not: `following` names the recording; `off` when the page asked
 * for none or the panel is hidden; `unavailable` with the reason (no recording runs, or one that cannot be followed).
 */
export interface LiveState {
  readonly type: 'liveState';
  readonly state: 'following' | 'off' | 'unavailable';
  readonly detail?: string;
}

// ---------------------------------------------------------------------------------------------
// Host → webview

export type HostToWebview =
  | {
      readonly type: 'init';
      readonly protocolVersion: number;
      readonly title?: string;
      /** The host has an editor that answers `revealRequest` (the panel does; the offline page does not). */
      readonly editor?: boolean;
      /** The host can start a recording, so it answers `snapshotWhenRequest` (the panel can; the offline page cannot). */
      readonly recorder?: boolean;
    }
  | SnapshotStart
  | RecordBatch
  | ThreadStates
  | SnapshotSymbols
  | TaskProgress
  | {
      readonly type: 'detailsReply';
      readonly replyTo: number;
      readonly snapshotId: string;
      readonly row: number;
      readonly details?: RecordDetails;
      readonly error?: ErrorInfo;
    }
  | { readonly type: 'watchReply'; readonly replyTo: number; readonly ok: boolean; readonly error?: ErrorInfo }
  | { readonly type: 'watchList'; readonly watches: readonly WatchInfo[]; readonly budget: WatchBudget }
  | { readonly type: 'revealReply'; readonly replyTo: number; readonly ok: boolean; readonly error?: ErrorInfo }
  | { readonly type: 'removeSnapshot'; readonly snapshotId: string }
  | FieldFilterReply
  | LiveAppend
  | LiveState;

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
  /** The page wants the running recording followed live (its "Follow live" box), or no longer. */
  | { readonly type: 'liveFollow'; readonly on: boolean }
  /** The page drew the first frame of a snapshot's records (its first batch): the last stage the Output log times. */
  | { readonly type: 'painted'; readonly snapshotId: string }
  /** The user pressed the page's Cancel of a task the host announced (TaskProgress). */
  | { readonly type: 'cancel'; readonly taskId: string }
  /** The page holds the live append `seq` of `snapshotId`: the host may read the rings again. */
  | { readonly type: 'liveAck'; readonly snapshotId: string; readonly seq: number }
  | { readonly type: 'resync'; readonly have: readonly { readonly snapshotId: string; readonly rows: number }[] }
  | { readonly type: 'detailsRequest'; readonly requestId: number; readonly snapshotId: string; readonly row: number }
  | ({ readonly type: 'watchRequest'; readonly requestId: number } & WatchRequest)
  | { readonly type: 'revealRequest'; readonly requestId: number; readonly file: string; readonly line: number }
  | { readonly type: 'exportRequest'; readonly requestId: number; readonly snapshotId: string }
  | {
      readonly type: 'fieldFilterRequest';
      readonly requestId: number;
      readonly snapshotId: string;
      readonly name: string;
      readonly op: FieldFilterOp;
      readonly value: string;
    }
  /** Offer "Snapshot When…" with this event (its spec as the recording names it) as the trigger; the user confirms it. */
  | { readonly type: 'snapshotWhenRequest'; readonly event: string }
  | { readonly type: 'webviewError'; readonly message: string };
