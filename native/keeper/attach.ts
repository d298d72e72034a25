// Attaching to a keeper: every ring its state file publishes, borrowed from the keeper process. A
// keeper with a window publishes a new generation of its state file whenever its rings grow; a
// KeptRingSource follows the generations, so its snapshots always hold the rings that record now
// and the retired rings' last records.

import type { RawSnapshot } from '../abi/snapshot';
import {
  AttachError,
  AttachedRingSource,
  PeekRing,
  borrowPerfFd,
  mapExistingRing,
  type AttachedRing,
  type CopyBufferOptions,
  type RingStatus,
} from '../perf/borrowed';
import type { BackwardRing } from '../perf/backward-ring';
import type { RingMeta } from '../perf/ring-mapping';
import { readSidebandSpool, readStartTasks, sidebandSpoolPath, StartTasksError } from './sideband';
import { mergeTasks, synthesizeSideband } from '../perf/procfs';
import type { ProcessSideband } from '../perf/sideband-types';
import { describePruning, pruneSideband } from '../decode/sideband-prune';
import {
  KeeperStateError,
  isKeeperAlive,
  keeperEventDescriptions,
  keeperStateDir,
  keeperStatePath,
  readKeeperState,
  releasePauseLease,
  removeKeeperState,
  takePauseLease,
  type KeeperState,
} from './state';

/** How long a client waits for a keeper to finish swapping its rings (the swap itself takes milliseconds). */
const RESIZE_WAIT_MS = 2000;
/** Copies a snapshot makes at most when the keeper keeps resizing under it. */
const SNAPSHOT_ATTEMPTS = 5;

/** Borrows every ring of one generation of a keeper's state. Leases are the caller's (see KeptRingSource). */
function borrowGeneration(state: KeeperState, options: CopyBufferOptions): AttachedRingSource {
  if (!isKeeperAlive(state)) throw new AttachError(`keeper ${state.pid} is not running any more`, 'start a new kept recording; its rings died with it');
  const events = keeperEventDescriptions(state);
  const rings: AttachedRing[] = [];
  try {
    for (const ring of state.rings) {
      const fd = borrowPerfFd(state.pid, ring.fd);
      const meta: RingMeta = { ringId: ring.ringId, label: ring.label, cpu: ring.cpu, tid: ring.tid, defaultEvent: ring.defaultEvent };
      if (ring.direction === 'backward') {
        const attr = events[ring.defaultEvent]?.attr;
        const mapped = mapExistingRing(fd, ring.pages, 'backward', { meta, ...(attr ? { attr } : {}) }) as BackwardRing;
        if (ring.retired) {
          const cutAtNs = ring.retired.cutAtNs !== undefined ? BigInt(ring.retired.cutAtNs) : null;
          rings.push({ kind: 'retired', ring: mapped, cutAtNs });
        } else {
          rings.push({ kind: 'backward', ring: mapped });
        }
      } else {
        // The keeper drains its side-band rings into spools beside its state: a copy is the spool, then
        // the ring. A state without stateDir comes from a keeper that did not spool yet.
        const spool = state.stateDir !== undefined ? sidebandSpoolPath(state.pid, ring.ringId, state.stateDir) : undefined;
        rings.push({
          kind: 'peek',
          ring: new PeekRing(fd, ring.pages, meta, events[ring.defaultEvent]?.attr, spool ? () => readSidebandSpool(spool) : undefined),
        });
      }
    }
  } catch (error) {
    for (const attached of rings) attached.ring.dispose();
    throw error;
  }
  return new AttachedRingSource(
    events,
    rings,
    {
      pid: state.pid,
      alive: () => isKeeperAlive(state),
      // A keeper killed by SIGKILL leaves its state file; nobody can attach to it any more.
      gone: () => removeKeeperState(state.pid, state.stateDir ?? keeperStateDir()),
    },
    options.warmCopyBuffers,
  );
}

/**
 * A keeper's rings as a recording source, following the generations of its state file. Every read
 * of the state file happens under this client's pause lease, so a retired ring the file names is
 * still open in the keeper when it is borrowed; a snapshot copies, then checks that the generation
 * it copied is still the newest, and copies again from the newest when a resize came in between
 * (the rings it copied may have stopped recording).
 */
export interface KeptRingOptions extends CopyBufferOptions {
  /**
   * Each snapshot keeps only the side-band its samples need (decode/sideband-prune.ts): a keeper spools up to 32 MiB
   * per ring of side-band history while its rings keep seconds, and all of it made every snapshot slow and its
   * timeline mostly side-band. Default: every spooled record.
   */
  readonly neededSidebandOnly?: boolean;
}

/** A keeper's snapshot with the /proc state of its tasks: read at its start (those gone since) and now. */
export type KeptSnapshot = RawSnapshot & { readonly processes: readonly ProcessSideband[] };

/**
 * The processes whose tasks a snapshot reads from /proc now: the keeper's launched command or process. Not
 * every process for a keeper of CPUs: perf.data export reads the sampled ones (perfdata/index.ts), and the
 * task list of its start names the rest.
 */
function targetPids(state: KeeperState): number[] {
  const target = state.target;
  if (target.kind === 'launch') return target.childPid !== undefined ? [target.childPid] : [];
  return target.kind === 'pid' ? [target.pid] : [];
}

export class KeptRingSource {
  private state: KeeperState;
  /** The keeper's start-time tasks, read once (they never change), or why they could not be. */
  private startTasks: { tasks: readonly ProcessSideband[]; problem?: string } | undefined;
  private source: AttachedRingSource;
  private paused = false;
  private disposed = false;
  /** Where the keeper looks for leases; a state file from before keepers published it: the default. */
  private readonly dir: string;

  constructor(
    initial: KeeperState,
    private readonly options: KeptRingOptions = {},
  ) {
    this.dir = initial.stateDir ?? keeperStateDir();
    this.state = initial;
    this.lease(true);
    try {
      this.state = this.newestState() ?? initial;
      this.source = borrowGeneration(this.state, options);
    } finally {
      this.lease(false);
    }
  }

  /** The keeper's state as this source last borrowed it. */
  get keeperState(): KeeperState {
    return this.state;
  }

  get events(): AttachedRingSource['events'] {
    return this.source.events;
  }

  /** What the recording cannot see, and every resize of its rings so far. */
  get limitations(): readonly string[] {
    return this.state.limitations ?? [];
  }

  snapshot(): KeptSnapshot {
    this.assertLive();
    if (!this.paused) this.lease(true);
    try {
      for (let attempt = 1; ; attempt++) {
        // A user's pause holds the rings of the generation it paused: those are the ones to copy.
        if (!this.paused) this.follow();
        const raw = this.source.snapshot();
        if (this.paused || attempt === SNAPSHOT_ATTEMPTS || this.newestGeneration() === this.generation(this.state)) {
          // The keeper's rings are plain flight recorders: what they count as written began when it started.
          const { tasks, problem } = this.tasksAtStart();
          const described: KeptSnapshot = {
            ...raw,
            limitations: problem ? [...this.limitations, problem] : this.limitations,
            recordingStartedAtMs: Date.parse(this.state.startedAt),
            processes: mergeTasks(tasks, synthesizeSideband(targetPids(this.state))),
            ...(this.state.retiredBytesLeftOut !== undefined ? { retiredBytesLeftOut: BigInt(this.state.retiredBytesLeftOut) } : {}),
          };
          return this.options.neededSidebandOnly ? this.neededSideband(described) : described;
        }
      }
    } finally {
      if (!this.paused) this.lease(false);
    }
  }

  /** The tasks the keeper wrote when it started (see writeStartTasks), read on the first snapshot. */
  private tasksAtStart(): { tasks: readonly ProcessSideband[]; problem?: string } {
    if (!this.startTasks) {
      try {
        this.startTasks = { tasks: this.state.stateDir !== undefined ? readStartTasks(this.state.pid, this.state.stateDir) : [] };
      } catch (error) {
        if (!(error instanceof StartTasksError)) throw error;
        this.startTasks = {
          tasks: [],
          problem: `the keeper's task list of its start is not used (${error.message}): threads that exited before this snapshot may have no name`,
        };
      }
    }
    return this.startTasks;
  }

  /** `raw` with its side-band cut to what its samples need, saying so among its limitations when anything was left out. */
  private neededSideband<T extends RawSnapshot>(raw: T): T {
    const { snapshot, pruning } = pruneSideband(raw);
    const left = describePruning(pruning);
    return left ? { ...snapshot, limitations: [...(snapshot.limitations ?? []), left] } : snapshot;
  }

  pause(): void {
    this.assertLive();
    this.lease(true);
    this.follow();
    this.source.pause();
    this.paused = true;
  }

  resume(): void {
    this.assertLive();
    this.source.resume();
    this.paused = false;
    this.lease(false);
  }

  ringStats(): RingStatus[] {
    if (this.disposed) return [];
    if (!this.paused) {
      this.lease(true);
      try {
        this.follow();
      } finally {
        this.lease(false);
      }
    }
    return this.source.ringStats();
  }

  get copyBuffersReady(): boolean {
    return this.source.copyBuffersReady;
  }

  copyBuffersWarm(): Promise<void> {
    return this.source.copyBuffersWarm();
  }

  get ownerAlive(): boolean {
    return this.source.ownerAlive;
  }

  ownerGone(): void {
    this.source.ownerGone();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.source.dispose();
    } finally {
      if (this.paused) this.lease(false);
    }
  }

  /** Borrows the newest generation when the state file has moved on (under the lease the caller holds). */
  private follow(): void {
    const newest = this.newestState();
    if (!newest || this.generation(newest) === this.generation(this.state)) return;
    const next = borrowGeneration(newest, this.options);
    const previous = this.source;
    this.source = next;
    this.state = newest;
    previous.dispose();
  }

  /**
   * The state file as the keeper published it last, once no resize is half done (null when it is
   * gone: the keeper stopped, and the rings already borrowed are all there is).
   */
  private newestState(): KeeperState | null {
    const deadline = Date.now() + RESIZE_WAIT_MS;
    for (;;) {
      let state: KeeperState;
      try {
        state = readKeeperState(keeperStatePath(this.state.pid, this.dir));
      } catch (error) {
        if (error instanceof KeeperStateError && !isKeeperAlive(this.state)) return null;
        throw error;
      }
      if (!state.resizing || Date.now() >= deadline || !isKeeperAlive(state)) return state.resizing ? null : state;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }

  private newestGeneration(): number | null {
    const state = this.newestState();
    return state ? this.generation(state) : null;
  }

  private generation(state: KeeperState): number {
    return state.generation ?? 0;
  }

  /** Takes or releases this client's pause lease (the keeper resumes rings a dead client left paused). */
  private lease(take: boolean): void {
    if (take) takePauseLease(this.state.pid, process.pid, this.dir);
    else releasePauseLease(this.state.pid, process.pid, this.dir);
  }

  private assertLive(): void {
    if (this.disposed) throw new AttachError('rings were detached');
  }
}

/** Borrows every ring a keeper publishes (the keeper resumes them if this process dies with them paused). */
export function attachKeeperRings(state: KeeperState, options: KeptRingOptions = {}): KeptRingSource {
  return new KeptRingSource(state, options);
}
