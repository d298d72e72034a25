// The keeper: a small process that opens a recording and holds its rings so they outlive the
// editor. It publishes what it holds (fd numbers, attrs, ring sizes) in its state file and waits;
// SIGTERM/SIGINT close everything and remove the file. `ringside keep` runs runKeeperUntilSignal.
// With a window its rings grow: each resize is published as a new generation of the state file,
// and the rings it retired stay open (published as retired) until no client can still need them.

import path from 'node:path';
import type { ResolvedEvent } from '../abi/snapshot';
import { Recorder, type RecorderTarget, type RetiredRing } from '../perf/recorder';
import type { BackwardRing } from '../perf/backward-ring';
import { pageSize } from '../sys/libc';
import { ensurePrivateDirectory } from '../sys/safe-file';
import { SPOOL_DRAIN_MS, SidebandSpool, sidebandSpoolPath, writeStartTasks } from './sideband';
import {
  buildKeeperState,
  collectPauseLeases,
  KeeperStateError,
  prepareKeeperStateDir,
  pruneDeadKeeperFiles,
  removeKeeperState,
  writeKeeperState,
  type KeeperRingState,
  type KeeperState,
  type KeeperTarget,
} from './state';

/** How soon a keeper notices that a client died with its rings paused. */
const LEASE_CHECK_MS = 250;

export interface KeeperOptions {
  readonly events: readonly ResolvedEvent[];
  readonly target: RecorderTarget;
  readonly pages?: number;
  /** Directory of state files (default: prepareKeeperStateDir(), the preferred one or a fallback). */
  readonly dir?: string;
  /** Trigger events (indices into `events`): each gets a ring of its own, whose moving data_head means it fired. */
  readonly ownRing?: readonly number[];
  /** Seconds of history wanted: the rings grow until they keep it (RecorderOptions.windowSec). */
  readonly windowSec?: number;
}

export interface RunningKeeper {
  readonly recorder: Recorder;
  /** What the state file says now (a new generation after every resize). */
  readonly state: KeeperState;
  readonly statePath: string;
  /** What the keeper has to say about its state directory: a fallback it had to use, dead keepers' files it removed. */
  readonly notes: readonly string[];
  /** Closes every ring and removes the state file. Idempotent. */
  stop(): void;
}

/**
 * Side-band ring pages a keeper asks for where locked memory is not limited (root, CAP_IPC_LOCK; an
 * ordinary user keeps the default): the keeper empties them every SPOOL_DRAIN_MS, and a busy target
 * (hundreds of short-lived processes a second, each a FORK, COMM, several MMAP2 and an EXIT) fills the
 * default 64 KiB within about 100 ms, so a keeper stalled that long by a loaded machine would lose them.
 */
const KEEPER_SIDEBAND_PAGES = 128;

/** Opens the recording and publishes the state file. */
export async function startKeeper(options: KeeperOptions): Promise<RunningKeeper> {
  // The directory first: a keeper that cannot publish is useless, and nobody should learn that after its rings are open.
  // Absolute: clients find the spools from the state's stateDir, whatever their own working directory.
  const notes: string[] = [];
  let dir: string;
  if (options.dir !== undefined) {
    dir = path.resolve(options.dir);
    const made = ensurePrivateDirectory(dir);
    if (!made.ok) throw new KeeperStateError(`not usable as a state directory: ${made.reason}`, dir);
  } else {
    const prepared = prepareKeeperStateDir();
    dir = prepared.dir;
    if (prepared.note) notes.push(prepared.note);
  }
  const pruned = pruneDeadKeeperFiles(dir);
  if (pruned.length > 0) notes.push(`removed the state files, leases and spools that dead keeper(s) ${pruned.join(', ')} left in ${dir}`);
  // Gap-free pairs swap rings behind a reader's back, so a keeper holds plain flight recorders.
  // The keeper only holds the rings; whoever attaches takes the snapshots (and keeps the spare copy buffers).
  // Its side-band rings are drained into spool files its clients read (below), not into its memory.
  // A resize is published twice: `resizing` before the larger rings record, then the new rings with
  // the old ones retired. Publishing may fail (disk full): the swap itself must go on regardless.
  let publish: (resizing: boolean) => boolean = () => false;
  const recorder = await Recorder.open({
    events: options.events,
    target: options.target,
    pages: options.pages,
    gapFree: false,
    warmCopyBuffers: false,
    drainSideband: false,
    sidebandPages: KEEPER_SIDEBAND_PAGES,
    ...(options.ownRing ? { ownRing: options.ownRing } : {}),
    ...(options.windowSec !== undefined ? { windowSec: options.windowSec, keepRetired: true } : {}),
    onResize: (phase) => void publish(phase === 'enabling'),
  });
  const spools = recorder.forwardRings.map((ring) => ({ ring, spool: new SidebandSpool(sidebandSpoolPath(process.pid, ring.meta.ringId, dir)) }));
  let sidebandDrain: NodeJS.Timeout | undefined;
  try {
    const page = pageSize();
    const ringState = (ring: BackwardRing | (typeof recorder.forwardRings)[number], direction: 'backward' | 'forward'): KeeperRingState => ({
      fd: ring.event.fd,
      ringId: ring.meta.ringId,
      label: ring.meta.label,
      cpu: ring.meta.cpu,
      tid: ring.meta.tid,
      direction,
      pages: ring.dataSize / page,
      defaultEvent: ring.meta.defaultEvent,
    });
    const target: KeeperTarget =
      options.target.kind === 'launch'
        ? { kind: 'launch', argv: options.target.argv, ...(recorder.childPid !== undefined ? { childPid: recorder.childPid } : {}) }
        : options.target.kind === 'pid'
          ? { kind: 'pid', pid: options.target.pid }
          : { kind: 'cpus', ...(options.target.cpus ? { cpus: options.target.cpus } : {}) };
    const startedAt = new Date();
    /** Retired rings no longer published: closed once no client's lease is out (see leaseWatch). */
    const withdrawn = new Set<RetiredRing>();
    const retiredState = (retired: RetiredRing): KeeperRingState => ({
      ...ringState(retired.ring, 'backward'),
      label: `${retired.ring.meta.label} (${retired.pages} pages, retired)`,
      retired: {
        ...(retired.cutAtNs !== null ? { cutAtNs: retired.cutAtNs.toString() } : {}),
        ...(retired.oldestNs !== null ? { oldestNs: retired.oldestNs.toString() } : {}),
        ...(retired.newestNs !== null ? { newestNs: retired.newestNs.toString() } : {}),
      },
    });
    // The tasks there were at the start, written before the state file names the keeper: a client that
    // finds the keeper finds them too. Without them only threads alive at snapshot time are named.
    const ownLimitations: string[] = [];
    try {
      writeStartTasks(process.pid, dir, recorder.startTasks);
    } catch (error) {
      const message =
        `the tasks there were when the keeper started could not be written to ${dir} ` +
        `(${error instanceof Error ? error.message : String(error)}): threads that exit before a snapshot may have no name in it`;
      notes.push(message);
      ownLimitations.push(message);
    }
    let generation = 0;
    const build = (resizing: boolean): KeeperState =>
      buildKeeperState({
        target,
        events: recorder.eventDescriptions(),
        stateDir: dir,
        startedAt,
        generation,
        resizing,
        limitations: [...recorder.limitations, ...ownLimitations],
        // Closed retired rings, and those withdrawn from the file but still open: clients copy neither any more.
        retiredBytesLeftOut: [...withdrawn].reduce((sum, retired) => sum + retired.bytesWritten, recorder.retiredBytesLeftOut),
        rings: [
          ...recorder.backwardRings.map((ring) => ringState(ring, 'backward')),
          ...recorder.retiredRings.filter((retired) => !withdrawn.has(retired)).map(retiredState),
          ...recorder.forwardRings.map((ring) => ringState(ring, 'forward')),
        ],
      });
    let state = build(false);
    const statePath = writeKeeperState(state, dir);
    let publishError: string | undefined;
    /** Writes the next generation; false when the file could not be written (it still says what it said). */
    publish = (resizing: boolean) => {
      // While `resizing` is published the rings are the previous generation's: clients wait it out.
      generation++;
      const next = resizing ? { ...state, generation, resizing: true } : build(false);
      try {
        writeKeeperState(next, dir);
        state = next;
        publishError = undefined;
        return true;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (message !== publishError) process.stderr.write(`ringside keep: cannot publish its state file: ${message}\n`);
        publishError = message;
        return false;
      }
    };
    // A side-band ring nobody empties stops taking records once full (COMM/MMAP2/EXIT of a busy
    // target would be lost within seconds), so the keeper empties them into their spools.
    let spoolError: string | undefined;
    const drainSideband = () => {
      let failure: unknown;
      for (const { ring, spool } of spools) {
        try {
          const { start, bytes } = ring.takePending();
          spool.append(start, bytes);
        } catch (error) {
          failure ??= error;
        }
      }
      // Records lost to a full file system are lost even when the spool made room by dropping its oldest.
      const lost = spools.reduce((sum, { spool }) => sum + spool.unspooled.records, 0n);
      const error =
        failure instanceof Error
          ? failure.message
          : failure !== undefined
            ? String(failure)
            : lost > 0n
              ? spools.find(({ spool }) => spool.unspooled.records > 0n)!.spool.unspooled.error
              : undefined;
      // Holding the rings matters more than the side-band: keep running, say it once per cause.
      // Every snapshot names the loss (the spool's segments count it).
      if (error !== undefined && error !== spoolError) {
        process.stderr.write(
          `ringside keep: cannot write the side-band spool in ${dir}: ${error}; ${lost} side-band records lost so far ` + '(snapshots name the loss)\n',
        );
      }
      spoolError = error ?? spoolError;
    };
    drainSideband();
    sidebandDrain = setInterval(drainSideband, SPOOL_DRAIN_MS);
    // Rings a client left paused when it died are resumed here (see collectPauseLeases). This
    // timer is not unref'd on purpose: holding rings is the keeper's whole job, and it is what keeps
    // `keep -a` and `keep -p` (no child to wait for) alive until a signal stops them.
    // The same scan closes retired rings: once a retired ring's records are no longer wanted (see
    // supersededRing), it is withdrawn from the state file; it is closed at a scan after that which
    // finds no live lease. A client takes its lease before it reads the state file, so one that read
    // it while the ring was still published holds a lease this scan sees.
    const retiredAtMs = new Map<RetiredRing, number>();
    // A dead client's lease is removed by the scan that finds it, but the resume it owes waits for a
    // scan with no live lease: clients take short leases just to read the state file, and one of those
    // at the wrong moment must not leave the rings paused for good.
    let resumeOwed = false;
    const leaseWatch = setInterval(() => {
      const leases = collectPauseLeases(state.pid, dir);
      if (leases.gone.length > 0) resumeOwed = true;
      if (resumeOwed && leases.alive.length === 0) {
        recorder.resume();
        resumeOwed = false;
      }
      if (leases.alive.length === 0) {
        for (const retired of withdrawn) {
          withdrawn.delete(retired);
          recorder.closeRetired(retired);
        }
      }
      const now = performance.now();
      for (const retired of recorder.retiredRings) if (!retiredAtMs.has(retired)) retiredAtMs.set(retired, now);
      for (const retired of retiredAtMs.keys()) if (!recorder.retiredRings.includes(retired)) retiredAtMs.delete(retired);
      const obsolete = recorder.retiredRings.filter(
        (retired) =>
          !withdrawn.has(retired) && supersededRing(retired, recorder.backwardRings, (now - retiredAtMs.get(retired)!) / 1000, options.windowSec ?? 0),
      );
      if (obsolete.length > 0) {
        for (const retired of obsolete) withdrawn.add(retired);
        // A ring the file still names is never closed: a client may read the file and borrow it.
        if (!publish(false)) for (const retired of obsolete) withdrawn.delete(retired);
      }
    }, LEASE_CHECK_MS);
    let stopped = false;
    return {
      recorder,
      statePath,
      notes,
      get state() {
        return state;
      },
      stop() {
        if (stopped) return;
        stopped = true;
        clearInterval(leaseWatch);
        clearInterval(sidebandDrain);
        try {
          recorder.dispose();
        } finally {
          removeKeeperState(state.pid, dir);
        }
      },
    };
  } catch (error) {
    clearInterval(sidebandDrain);
    try {
      recorder.dispose();
    } finally {
      for (const { spool } of spools) spool.dispose();
      // The start-time task list (and a state file, if it got that far): nothing of a keeper that never ran stays.
      removeKeeperState(process.pid, dir);
    }
    throw error;
  }
}

/**
 * Whether a retired ring's records are no longer needed: it holds no sample; or it was retired
 * `retiredForSec` ago, more than the window, so all it holds is older than the history asked for
 * (a ring of a CPU that is rarely written would otherwise stay open until the keeper stops); or the
 * live ring that records its CPU (or thread) and events now has wrapped, so its own history is full.
 */
function supersededRing(retired: RetiredRing, live: readonly BackwardRing[], retiredForSec: number, windowSec: number): boolean {
  if (retired.oldestNs === null || retiredForSec > windowSec) return true;
  const meta = retired.ring.meta;
  const successors = live.filter(
    (ring) => ring.meta.defaultEvent === meta.defaultEvent && (meta.cpu >= 0 ? ring.meta.cpu === meta.cpu : ring.meta.tid === meta.tid),
  );
  return successors.length > 0 && successors.every((ring) => ring.bytesWritten() >= BigInt(ring.dataSize));
}

/**
 * Runs a keeper until SIGTERM/SIGINT. `whileRunning` starts work that lives as long as the keeper
 * (triggered snapshots) and returns how to stop it.
 */
export async function runKeeperUntilSignal(
  options: KeeperOptions,
  log: (line: string) => void = (line) => process.stderr.write(line + '\n'),
  whileRunning?: (keeper: RunningKeeper) => () => void,
): Promise<number> {
  // Caught from before the program is launched: a stop while the rings are set up (the program already running) ends
  // the keeper once it holds them, cleaning up as a later one does, instead of killing it with its files and program left.
  let stopped = false;
  let wake: (() => void) | undefined;
  const stop = (): void => {
    stopped = true;
    wake?.();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  try {
    const keeper = await startKeeper(options);
    const stopWork = whileRunning?.(keeper);
    for (const note of keeper.notes) log(`ringside keep: ${note}`);
    log(
      `ringside keep: pid ${process.pid} holds ${keeper.state.rings.length} ring(s) of ${keeper.state.events.map((e) => e.name).join(', ')}; state in ${keeper.statePath}; stop with kill -TERM ${process.pid}`,
    );
    if (!stopped)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    stopWork?.();
    // A keeper that launched its program ends it too (SIGTERM, then SIGKILL): nothing it started outlives it.
    await keeper.recorder.endLaunched();
    keeper.stop();
    return 0;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}
