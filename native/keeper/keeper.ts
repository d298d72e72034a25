// The keeper: a small process that opens a recording and holds its rings so they outlive the
// editor. It publishes what it holds (fd numbers, attrs, ring sizes) in its state file and waits;
// SIGTERM/SIGINT close everything and remove the file. `ringside keep` runs runKeeperUntilSignal.

import type { ResolvedEvent } from '../abi/snapshot';
import { Recorder, type RecorderTarget } from '../perf/recorder';
import { pageSize } from '../sys/libc';
import { buildKeeperState, collectPauseLeases, removeKeeperState, writeKeeperState, keeperStateDir, type KeeperRingState, type KeeperState, type KeeperTarget } from './state';

/** How soon a keeper notices that a client died with its rings paused. */
const LEASE_CHECK_MS = 250;

export interface KeeperOptions {
  readonly events: readonly ResolvedEvent[];
  readonly target: RecorderTarget;
  readonly pages?: number;
  /** Directory of state files (default keeperStateDir()). */
  readonly dir?: string;
}

export interface RunningKeeper {
  readonly recorder: Recorder;
  readonly state: KeeperState;
  readonly statePath: string;
  /** Closes every ring and removes the state file. Idempotent. */
  stop(): void;
}

/** Opens the recording and publishes the state file. */
export async function startKeeper(options: KeeperOptions): Promise<RunningKeeper> {
  // Gap-free pairs swap rings behind a reader's back, so a keeper holds plain flight recorders.
  // The keeper only holds the rings; whoever attaches takes the snapshots (and keeps the spare copy buffers).
  // Its clients peek at the side-band rings themselves, so the keeper must not drain them.
  const recorder = await Recorder.open({ events: options.events, target: options.target, pages: options.pages, gapFree: false, warmCopyBuffers: false, drainSideband: false });
  const dir = options.dir ?? keeperStateDir();
  try {
    const page = pageSize();
    const rings: KeeperRingState[] = [
      ...recorder.backwardRings.map((ring) => ({ ring, direction: 'backward' as const })),
      ...recorder.forwardRings.map((ring) => ({ ring, direction: 'forward' as const })),
    ].map(({ ring, direction }) => ({
      fd: ring.event.fd,
      ringId: ring.meta.ringId,
      label: ring.meta.label,
      cpu: ring.meta.cpu,
      tid: ring.meta.tid,
      direction,
      pages: ring.dataSize / page,
      defaultEvent: ring.meta.defaultEvent,
    }));
    const target: KeeperTarget = options.target.kind === 'launch'
      ? { kind: 'launch', argv: options.target.argv, ...(recorder.childPid !== undefined ? { childPid: recorder.childPid } : {}) }
      : options.target.kind === 'pid' ? { kind: 'pid', pid: options.target.pid }
      : { kind: 'cpus', ...(options.target.cpus ? { cpus: options.target.cpus } : {}) };
    const state = buildKeeperState({ target, events: recorder.eventDescriptions(), rings, stateDir: dir });
    const statePath = writeKeeperState(state, dir);
    // Rings a client left paused when it died are resumed here (see collectPauseLeases). This
    // timer is not unref'd on purpose: holding rings is the keeper's whole job, and it is what keeps
    // `keep -a` and `keep -p` (no child to wait for) alive until a signal stops them.
    const leaseWatch = setInterval(() => {
      const leases = collectPauseLeases(state.pid, dir);
      if (leases.gone.length > 0 && leases.alive.length === 0) recorder.resume();
    }, LEASE_CHECK_MS);
    let stopped = false;
    return {
      recorder, state, statePath,
      stop() {
        if (stopped) return;
        stopped = true;
        clearInterval(leaseWatch);
        try {
          recorder.dispose();
        } finally {
          removeKeeperState(state.pid, dir);
        }
      },
    };
  } catch (error) {
    recorder.dispose();
    throw error;
  }
}

/** Runs a keeper until SIGTERM/SIGINT; returns the exit code. */
export async function runKeeperUntilSignal(options: KeeperOptions, log: (line: string) => void = (line) => process.stderr.write(line + '\n')): Promise<number> {
  const keeper = await startKeeper(options);
  log(`ringside keep: pid ${process.pid} holds ${keeper.state.rings.length} ring(s) of ${keeper.state.events.map((e) => e.name).join(', ')}; state in ${keeper.statePath}; stop with kill -TERM ${process.pid}`);
  await new Promise<void>((resolve) => {
    const done = () => {
      process.off('SIGTERM', done);
      process.off('SIGINT', done);
      resolve();
    };
    process.on('SIGTERM', done);
    process.on('SIGINT', done);
  });
  // A keeper that launched its program ends it too (SIGTERM, then SIGKILL): nothing it started outlives it.
  await keeper.recorder.endLaunched();
  keeper.stop();
  return 0;
}
