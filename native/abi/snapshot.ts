// What the kernel side hands the decoder: an event resolved for perf_event_open, the events of a
// recording with their sample ids, and each ring's data area as copied during a pause. The ground
// floor with the ABI (uapi.ts, attr.ts): native/perf produces these, native/decode reads them.
// Pure types.

import type { PerfEventAttr } from './attr';

/** One event as the decoder needs to know it. */
export interface EventDescription {
  /** Index of this event in the snapshot's `events` table; `RecordColumns.event` refers to it. */
  readonly index: number;
  /** The spec as the user gave it (`syscalls:sys_enter_getpid`, `mem:counter:w`, ...). Used as the JSON `event`. */
  readonly name: string;
  readonly attr: PerfEventAttr;
  /** Kernel-assigned sample ids (PERF_EVENT_IOC_ID) of every fd opened for this event, to map ID/IDENTIFIER back. */
  readonly ids: readonly bigint[];
  /** Tracepoint format (from tracefs) when attr.type is PERF_TYPE_TRACEPOINT. */
  readonly tracepoint?: TracepointFormat;
}

export interface TracepointField {
  readonly name: string;
  /** C declaration as tracefs prints it, e.g. `const char * filename`, `__data_loc char[] name`. */
  readonly declaration: string;
  readonly offset: number;
  readonly size: number;
  readonly signed: boolean;
  /** Element count for fixed arrays (`char comm[16]` -> 16), 0 otherwise. */
  readonly arrayLength: number;
  /** `__data_loc` (u32: len<<16 | offset) or `__rel_loc` (offset relative to the field's end). */
  readonly location: 'inline' | 'data_loc' | 'rel_loc';
  /** True for char arrays and data_loc char[]: decode as a NUL-terminated string. */
  readonly isString: boolean;
}

export interface TracepointFormat {
  readonly system: string;
  readonly name: string;
  readonly id: number;
  /** Common fields (common_type, common_pid, ...) first, then the event's own. */
  readonly fields: readonly TracepointField[];
  readonly printFormat: string;
}

/**
 * Which path produced a ring copy (reported in coverage). paused: pause → copy → resume; gap-free: a standby ring took
 * over first; peek: read without pausing (a borrowed forward ring); file: records read from a perf.data file.
 */
export type SnapshotPath = 'paused' | 'gap-free' | 'peek' | 'file';

/**
 * One ring's data area as copied during the pause. The bytes are linearised: bytes[0] is the
 * record at data_head (the newest, for a backward ring), and the ring's wrap point has been
 * removed by copying the two halves in order, so no record straddles the end of `bytes`.
 */
export interface RingCopy {
  readonly ringId: number;
  /** Human label: `cpu0`, `tid 1234`. */
  readonly label: string;
  readonly cpu: number;
  readonly tid: number;
  readonly direction: 'backward' | 'forward';
  /** Event index whose attr describes records in this ring when they carry no ID. */
  readonly defaultEvent: number;
  readonly bytes: Uint8Array;
  /** Bytes of valid data at the start of `bytes` (< data size while the ring has not wrapped yet). */
  readonly validBytes: number;
  readonly dataSize: number;
  /** Total bytes the kernel has written into this ring since it was opened (|data_head| for backward). */
  readonly bytesWritten: bigint;
  readonly path: SnapshotPath;
  /**
   * Forward rings: side-band bytes the host drained but then dropped, oldest first, because its
   * bounded store was full. The kernel never overwrites a forward ring; this is the only overwrite.
   */
  readonly droppedBytes?: bigint;
  /**
   * Records the kernel could not write into this ring since it was opened (paused, or a full
   * side-band ring), summed over the fds writing into it: the PERF_FORMAT_LOST count, read when
   * the copy was taken. Absent where the kernel (before 6.0) or the source cannot count them.
   */
  readonly lostSinceOpen?: bigint;
  /** Wall-clock ns (performance.now based, host side) when the copy was taken: for the timeline's snapshot marks. */
  readonly copiedAtNs?: number;
  /**
   * Forward rings a keeper spools (native/keeper/sideband): side-band it drained but could not keep
   * because writing its spool failed (a full file system), since the spool began. Not in droppedBytes.
   */
  readonly unspooled?: SpoolLoss;
}

/** Side-band records a keeper drained from a ring and lost because its spool could not be written. */
export interface SpoolLoss {
  readonly records: bigint;
  readonly bytes: bigint;
  /** The error that lost them, e.g. 'ENOSPC'. */
  readonly error: string;
  /** The spool file (its directory is the keeper's state directory). */
  readonly file: string;
}

/** An event spec turned into what perf_event_open needs (native/specs produces it, native/perf opens it). */
export interface ResolvedEvent {
  /** The spec as the user gave it. */
  readonly name: string;
  readonly attr: PerfEventAttr;
  readonly tracepoint?: TracepointFormat;
  /** Breakpoints: at most 4 debug registers, so no gap-free standby ring set. */
  readonly isBreakpoint: boolean;
  /** For breakpoints resolved from a symbol or source line: what the address means, for messages and lanes. */
  readonly location?: { readonly symbol?: string; readonly file?: string; readonly line?: number; readonly address: bigint; readonly length: number };
  /**
   * The spec carried a privilege modifier (:u, :k, :h...): its exclude bits are what the user asked
   * for, so a recorder that may not see the kernel refuses it instead of narrowing it to user space.
   */
  readonly explicitModifiers?: boolean;
  /**
   * Execute breakpoints on a source line the compiler placed in several functions: the other sites'
   * addresses (attr.config1 is the first), armed together as one event.
   */
  readonly extraSites?: readonly { readonly address: bigint; readonly function?: string }[];
  /**
   * A uprobe PMU event (line:, uprobe:, or a source-line breakpoint moved to uprobes): the ELF file and
   * every place in it, each its own fd (attr.config2 is the first's offset). The kernel takes the
   * path as a user pointer in config1, which open time fills in (see OpenOptions.uprobePath).
   */
  readonly uprobe?: UprobeTarget;
}

export interface UprobeTarget {
  /** Absolute path of the probed executable or shared library. */
  readonly path: string;
  /** Lowest address first: file offset (what the kernel probes), address (runtime for the target, else link-time), function. */
  readonly sites: readonly { readonly offset: bigint; readonly address: bigint; readonly function?: string }[];
}

/** What one snapshot of a recording yields before decoding. */
export interface RawSnapshot {
  readonly events: readonly EventDescription[];
  /** Flight-recorder (backward) ring copies and the side-band (forward) ring copies, together. */
  readonly rings: readonly RingCopy[];
  /** Wall-clock ms since the epoch when the snapshot was requested. */
  readonly takenAtMs: number;
  /** Pause window of each ring (pause ioctl -> resume ioctl returned), ns. */
  readonly pauseWindowNs: readonly number[];
  /** What the recording could not see and why (user space only, rings shrunk to the locked-memory budget). */
  readonly limitations?: readonly string[];
  /** Wall-clock ms since the epoch when the recording began: what a paused copy's bytesWritten counts from. Absent for files. */
  readonly recordingStartedAtMs?: number;
  /** Wall-clock ms since which the gap-free copies hold what was written: the snapshot that last swapped them, else the start. */
  readonly gapFreeSinceMs?: number;
  /**
   * Bytes that rings a resize retired wrote (less what their successors also hold) and that this snapshot no longer
   * holds: the rings were closed, or their copies dropped once the grown rings wrapped. Overwritten, as far as this
   * snapshot goes; the overwrite note counts them (decode/losses.ts). Absent: none.
   */
  readonly retiredBytesLeftOut?: bigint;
}

/**
 * Memory a flight-recorder ring's next copy goes into. `bytes` is what the copy fills (from 0);
 * `whole` is everything allocated for it, which its owner faults in while idle: it may hold room
 * after the copy that the decoder writes the ring's columns into (native/decode/wasm/copy-room.ts).
 */
export interface CopyBuffer {
  readonly bytes: Uint8Array;
  readonly whole: Uint8Array;
}

/**
 * Allocates the memory for a ring's next copy of `copyBytes` bytes (SharedArrayBuffer memory when
 * `shared`). `previous`: the ring's last copy, if any, from which the room for its columns can be
 * sized. Supplied by whoever decodes the copies; without one, copies go into plain buffers.
 */
export type CopyAllocator = (copyBytes: number, shared: boolean, previous: Uint8Array | null, group?: CopyGroup) => CopyBuffer;

/**
 * The rings whose copies one snapshot takes together (a recorder's flight-recorder rings), as an
 * allocator sees them when one of them asks for its next copy: it may put all their next copies in
 * one memory (native/decode/wasm/snapshot-memory.ts).
 */
export interface CopyGroup {
  /** The group's identity (the same object at every call for one recorder). */
  readonly key: object;
  /** The ring asking. */
  readonly member: object;
  /** Every ring of the group now, with the size of its copies. */
  members(): readonly { readonly member: object; readonly copyBytes: number }[];
  /** Threads that may decode one snapshot of the group at once (a decode pool's: one per CPU). */
  readonly threads: number;
}

/** A copy in a plain buffer of its own, nothing after it: what a ring's copies go into without an allocator. */
export const plainCopyBuffer: CopyAllocator = (copyBytes, shared) => {
  const bytes = new Uint8Array(shared ? new SharedArrayBuffer(copyBytes) : new ArrayBuffer(copyBytes));
  return { bytes, whole: bytes };
};
