// What a Recorder is asked to record: the target (a process, CPUs, or a command to launch) and the
// ring options every part of the recorder (sizing, grouping, growth, launching) reads.

import type { CopyAllocator, ResolvedEvent } from '../abi/snapshot';
import type { PerfAccess } from '../sys/access';

/**
 * What a recording watches: one process and its threads, every CPU (or the CPUs listed), or a command it launches.
 * The one definition every layer uses (recorder, keeper state, CLI, extension): each adds what its launch carries
 * (`Launch`), and a layer that records every CPU or none (the CLI's -a) drops the CPU list (`Cpus` = object).
 */
export type RecordingTarget<Launch extends object = object, Cpus extends object = { readonly cpus?: readonly number[] }> =
  | { readonly kind: 'pid'; readonly pid: number }
  | ({ readonly kind: 'cpus' } & Cpus)
  | ({ readonly kind: 'launch'; readonly argv: readonly string[] } & Launch);

/** A target as the command line names it: a process, every CPU (-a), or a command. */
export type AllCpusTarget = RecordingTarget<object, object>;

export type RecorderTarget = RecordingTarget<{
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdio?: LaunchStdio;
  /** The command may outlive this process (`capture --leave-running`); otherwise it ends when this process dies, however. */
  readonly outlive?: boolean;
}>;

/** How the launched command's stdin/stdout/stderr are wired: one choice for all three, or one each (an fd number reuses ours). */
export type LaunchStdio = StdioChoice | readonly [StdioChoice | number, StdioChoice | number, StdioChoice | number];
type StdioChoice = 'inherit' | 'ignore' | 'pipe';

export interface RecorderOptions {
  readonly events: readonly ResolvedEvent[];
  readonly target: RecorderTarget;
  /**
   * Data pages per flight-recorder ring, a power of two. Given: exactly that, or an AccessError with
   * the locked-memory numbers when the rings do not fit. Omitted: DEFAULT_RING_PAGES per event of
   * the largest ring group (rounded up to a power of two, see defaultRingPages), halved until
   * the rings fit this user's locked-memory budget (noted in `limitations`).
   */
  readonly pages?: number;
  /** Two rings per target for software events and tracepoints, swapped instead of paused (default false). */
  readonly gapFree?: boolean;
  /** Side-band ring per thread/CPU (default true). */
  readonly sideband?: boolean;
  /** Also record context switches in the side-band (default false). */
  readonly contextSwitch?: boolean;
  /** Data pages of each side-band ring (default 16). */
  readonly sidebandPages?: number;
  /** Zero-copy reads (koffi.view) when the runtime allows; false forces memcpy (default: allowed where supported). */
  readonly useZeroCopy?: boolean;
  /** Synthesize COMM/MMAP2 equivalents from /proc when the recording starts and at snapshot time (default true). */
  readonly synthesize?: boolean;
  /**
   * Keep one pre-faulted copy buffer per flight-recorder ring, warmed while idle, so a snapshot's
   * pause window is a warm memcpy (default true; costs one data area of memory per ring).
   */
  readonly warmCopyBuffers?: boolean;
  /**
   * Copy flight-recorder rings into SharedArrayBuffer memory (default false), so a DecodePool's
   * worker threads read a snapshot's bytes where they are instead of receiving a copy.
   */
  readonly sharedCopyBuffers?: boolean;
  /**
   * Where flight-recorder rings are copied into (default: plain buffers). The decoder's
   * (native/decode allocateDecodableCopy) keeps room after each copy for the ring's columns, so a
   * ring decoded on its own is decoded in place by its WebAssembly loop.
   */
  readonly allocateCopy?: CopyAllocator;
  /** What this process may record (default: read from /proc and /sys when the recorder opens). */
  readonly access?: PerfAccess;
  /**
   * Empty the side-band rings into this process's memory every SIDEBAND_DRAIN_MS (default true).
   * A keeper turns it off: its clients read the side-band from the ring itself, which draining
   * here would empty behind their backs.
   */
  readonly drainSideband?: boolean;
  /**
   * Indices of events that get a ring of their own instead of sharing their slot's ring with the
   * other events (trigger events: a moving data_head there means the trigger fired).
   */
  readonly ownRing?: readonly number[];
  /**
   * Seconds of history wanted. While a ring's coverage (its size over the rate it is written at)
   * falls below this, the recorder opens the same events with rings sized for it, makes sure they
   * record, then retires the old rings (their last contents stay in the snapshots), within the
   * locked-memory budget. Omitted: the rings keep their size.
   */
  readonly windowSec?: number;
  /**
   * With a window: a resize keeps the retired rings open and mapped (disabled) instead of copying
   * and closing them, for a keeper whose clients map its rings by fd (see Recorder.retiredRings);
   * the keeper closes them with closeRetired once no client can still be reading them.
   */
  readonly keepRetired?: boolean;
  /**
   * Told around a resize: 'enabling' once the larger rings are open and mapped, just before they
   * are enabled (the old rings still record); 'done' once the growth check that resized is over
   * (the old rings retired, its note in `limitations`), and after a check that stopped growth.
   */
  readonly onResize?: (phase: 'enabling' | 'done') => void;
}
