// What the session logic needs from the kernel side and the pure core, as narrow interfaces.
// backend.ts binds them to native/ (Recorder, decoder, specs, perf.data); the session manager only
// sees these shapes, so it runs in plain node (tests, CLI) exactly as in the extension host.

import type { DecodedSnapshot } from '../../native/decode/types';
import type { SteppedStage } from '../../native/perfdata/index';
import type { EventDescription, RawSnapshot, ResolvedEvent } from '../../native/abi/snapshot';
import type { KeeperState } from '../../native/keeper/state';
import type { ForeignFdHint } from '../../native/attach/foreign';
import type { TriggerOptions } from '../../native/perf/trigger-watcher';
import type { FollowRead } from '../../native/perf/follow';
import type { ResolvedSpec } from '../../native/specs/resolve';
import type { LineProbeMode } from '../../native/specs/line-probe';
import type { RecordingTarget } from '../../native/perf/recorder-options';

export type { ForeignFdHint };
import type { ProcessSideband } from '../../native/perf/sideband-types';
import type { FrameSymbols } from '../../host/frame-symbols';

export type RecordTarget = RecordingTarget<{ readonly cwd?: string; readonly env?: Readonly<Record<string, string>> }>;

export interface RecordOptions {
  readonly events: readonly ResolvedEvent[];
  readonly target: RecordTarget;
  /** Data pages per ring (power of two). */
  readonly pages?: number;
  readonly gapFree?: boolean;
  readonly sideband?: boolean;
  /** Events (indices into `events`) whose firing takes a snapshot by itself ("Snapshot When…"). */
  readonly triggers?: TriggerOptions;
}

export type { RingStatus } from '../../native/perf/borrowed';
import type { RingStatus } from '../../native/perf/borrowed';

/** A snapshot plus, from our own Recorder, the /proc state of its processes taken with it (what names their code). */
export type SourceSnapshot = RawSnapshot & { readonly processes?: readonly ProcessSideband[] };

/** What the rings gained since the previous read, read without pausing them (native/perf/follow.ts RingFollower). */
export interface RingFollow {
  read(): FollowRead;
  close(): void;
}

/** Anything that holds rings and can snapshot them: our own recording, a keeper's rings, a borrowed fd. */
export interface RingSource {
  readonly events: readonly EventDescription[];
  /** Pause → copy → resume every ring (the kernel-side work); decoding happens later, outside the window. */
  snapshot(): SourceSnapshot | Promise<SourceSnapshot>;
  pause(): void;
  resume(): void;
  ringStats(): readonly RingStatus[];
  /** Launched target's pid, when we launched it. */
  readonly childPid?: number;
  /** What this recording cannot see and why (user space only, rings shrunk to the locked-memory budget). */
  readonly limitations?: readonly string[];
  /** Settles when the launched target exits (its rings stay readable), with how it ended when known ("killed by SIGSEGV"). */
  readonly exited?: Promise<unknown>;
  /** Borrowed rings: whether the process that owns them is alive (our fds keep the rings alive after it dies). */
  readonly ownerAlive?: boolean;
  /** Borrowed rings: cleans up after an owner that died (a keeper's state file). */
  ownerGone?(): void;
  /**
   * Calls `fire` when a trigger event of the recording fires (after `postSec`, at most once per
   * `minIntervalSec`); `rearm` once the snapshot is taken. Recordings opened with `triggers` only.
   */
  watchTriggers?(options: TriggerOptions, fire: () => void): { rearm(): void; stop(): void };
  /**
   * Live follow: a reader of what the rings gain from now on (our own Recorder only: a keeper drains its side-band
   * itself, so a borrowed recording has no tap on it), and the /proc state of its processes now, which names their code.
   */
  followLive?(): RingFollow;
  processesNow?(): readonly ProcessSideband[];
  /** Enable/disable/modify one event in place (watch controls). */
  setEventEnabled?(eventIndex: number, enabled: boolean): void;
  modifyEvent?(eventIndex: number, attr: EventDescription['attr']): void;
  dispose(): void;
}

/** How the editor wants source lines counted (native/specs/line-probe.ts decides, as for the CLI). */
export interface LineProbeRequest {
  readonly mode: LineProbeMode;
  /** Debug registers the target has free for these events. */
  readonly freeRegisters?: () => number;
}

/** The steps of opening a perf.data file, in order. */
export type PerfDataStage = SteppedStage | 'decode';

/** A perf.data file decoded, and how long its stages took, ms. */
export interface OpenedPerfData {
  readonly decoded: DecodedSnapshot;
  /** Reading the file's bytes (awaited reads). */
  readonly readMs: number;
  /** Header, features and the walk that indexes the kernel records and their time order. */
  readonly indexMs: number;
  /** The records copied in time order, a batch at a time. */
  readonly orderMs: number;
  readonly decodeMs: number;
  /** The user-space objects the file's build-id table lists, with their build-ids then (Symbolizer.expectBuildIds). */
  readonly buildIds: readonly { readonly path: string; readonly buildId: string }[];
  /** The parts told to onRecords are, in order, the rows of `decoded` (false: they are not, and must not be taken for them). */
  readonly partsInOrder: boolean;
}

export interface Backend {
  /**
   * Specs resolved against the target's symbols, with each source-line breakpoint moved to uprobes where the rule of
   * native/specs/line-probe.ts says (auto, as the CLI, unless `lines` says otherwise); each event's `notes` say why.
   */
  resolveEvents(specs: readonly string[], context: { readonly pid?: number; readonly executable?: string }, lines?: LineProbeRequest): Promise<ResolvedSpec[]>;
  record(options: RecordOptions): Promise<RingSource>;
  attachKeeper(state: KeeperState): Promise<RingSource>;
  borrowForeign(pid: number, fd: number, hint: ForeignFdHint): Promise<RingSource>;
  decode(raw: RawSnapshot): Promise<DecodedSnapshot>;
  /** Decodes a live follow's read: small and frequent, so not into the column memory kept warm for the next snapshot. */
  decodeIncrement?(raw: RawSnapshot): Promise<DecodedSnapshot>;
  /** Ends what decoding holds between snapshots (worker threads); later decodes still work, on this thread. */
  close?(): Promise<void>;
  /** One record as a JSON object line (JSON Lines export). */
  recordJson(snapshot: DecodedSnapshot, row: number): string;
  writePerfData(snapshot: DecodedSnapshot, file: string): Promise<void>;
  /**
   * A perf.data file decoded as one snapshot, read a step at a time with the event loop free between steps:
   * `between(stage)` is awaited after each step of reading, indexing and ordering its records, and before the decode;
   * a cancelled open throws from it (nothing is kept). `onRecords` is told of the records as they can be shown, decoded
   * a part at a time in time order (the first as soon as perf's first rounds let them go, while the rest is read);
   * when OpenedPerfData.partsInOrder says so, its parts are, in order, the rows of the capture.
   */
  readPerfData(file: string, between?: (stage: PerfDataStage) => Promise<void>, onRecords?: (part: DecodedSnapshot) => void): Promise<OpenedPerfData>;
  /** A self-contained HTML timeline page (same webview bundle, data embedded). */
  writeHtml(snapshot: DecodedSnapshot, file: string, symbols?: FrameSymbols): Promise<void>;
}
