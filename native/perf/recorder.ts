// A Recorder is one flight-recording session: the events of a capture opened on every thread or
// CPU of the target, each ring group with a backward (overwrite) ring, plus a forward side-band ring
// per thread/CPU for COMM/EXIT/FORK/MMAP2. Snapshots pause, copy and resume each ring (or swap a
// gap-free pair) and return raw copies for the decoder. The CLI and the extension both use it. It
// composes the modules beside it: which events share a ring (ring-groups), how large the rings are
// (ring-sizing), their attrs (recorder-attrs), growth (ring-growth), the launched command (launch)
// and the snapshot loop it shares with borrowed rings (snapshot-loop).

import type { PerfEventAttr } from '../abi/attr';
import { availableParallelism } from 'node:os';
import { PerfType, Sample } from '../abi/uapi';
import { isPowerOfTwo } from '../abi/units';
import { openEvent, type PerfEventFd } from './events';
import { BackwardRing, type RingCopyGroup } from './backward-ring';
import { ForwardRing } from './forward-ring';
import { GapFreeRingPair } from './gap-free-pair';
import { SpareBufferWarmer } from './spare-buffer';
import { defaultCopyMode, type CopyMode, type RingMeta, type RingStats } from './ring-mapping';
import { onlineCpus, threadsOf, synthesizeSideband, allPids, mergeTasks } from './procfs';
import { ProcessTable } from './process-table';
import type { ProcessSideband } from './sideband-types';
import type { EventDescription, RawSnapshot, ResolvedEvent, RingCopy, UprobeTarget } from '../abi/snapshot';
import { TracefsUprobeError, TracefsUprobes } from './tracefs-uprobes';
import { PerfError } from '../sys/errors';
import { readPerfAccess, type PerfAccess } from '../sys/access';
import { planForAccess, type AccessPlan } from './access-plan';
import { breakpointDelivery } from './breakpoint-delivery';
import type { RecorderOptions, RecorderTarget } from './recorder-options';
import { flightRecorderAttr, followsNewThreads, sidebandAttr, standbyAttr } from './recorder-attrs';
import { isGrowable, ringGroupsFor, type RingGroup } from './ring-groups';
import { DEFAULT_RING_PAGES, ringSizesFor, type RingSizes } from './ring-sizing';
import { GROWTH_CHECK_MS, RingGrowth, dropFrom, growthCeiling, newestSampleTime, oldestSampleTime, peekUnwrapped } from './ring-growth';
import { LaunchedCommand, type ChildExit } from './launch';
import { LoadBaseMismatchError, checkBase, loadBaseFromSideband, verifyLoadBase } from './load-base';
import { pauseRings, quiescentCopy, snapshotRings } from './snapshot-loop';
import { RingFollower } from './follow';

/**
 * How often the side-band rings are emptied into their held store. A 16-page ring holds about 600
 * COMM/MMAP2/FORK/EXIT records: at 20 ms, a target would need 30,000 such records a second to fill
 * it between two drains.
 */
const SIDEBAND_DRAIN_MS = 20;

export type { RecorderOptions, RecorderTarget, LaunchStdio } from './recorder-options';

export interface RecorderSnapshot extends RawSnapshot {
  /**
   * /proc state of the watched processes at snapshot time (see procfs.synthesizeSideband), and of the tasks read at
   * the start that exited since (procfs.mergeTasks).
   */
  readonly processes: readonly ProcessSideband[];
}

/**
 * A ring a resize took out of recording but kept open and mapped (RecorderOptions.keepRetired):
 * every fd writing into it is disabled, so its contents no longer change.
 */
export interface RetiredRing {
  readonly ring: BackwardRing;
  /** Data pages it has. */
  readonly pages: number;
  /** Its successor's oldest sample time when it was retired: its records from then on are in the successor too (null: no overlap known). */
  readonly cutAtNs: bigint | null;
  /** Its oldest and newest sample times, after the cut (null when it holds no sample). */
  readonly oldestNs: bigint | null;
  readonly newestNs: bigint | null;
  /** What it wrote (data_head) less the cut: counted as left out of snapshots once it is closed (RawSnapshot.retiredBytesLeftOut). */
  readonly bytesWritten: bigint;
  /** Every fd that wrote into it, owner first (closeRetired closes them). */
  readonly fds: readonly PerfEventFd[];
}

/** Per event of a group, its fd on the slot's first thread (not its other threads or extra sites). */
type PrimaryFds = ReadonlyMap<number, PerfEventFd>;

/**
 * `fds`: every fd that writes into the unit's ring(s), owners included (a resize disables and closes
 * them); `firstLive`: those of the ring that records first (a resize enables them).
 */
type RingUnit =
  | {
      readonly kind: 'backward';
      readonly group: RingGroup;
      readonly ring: BackwardRing;
      readonly primaries: PrimaryFds;
      readonly fds: readonly PerfEventFd[];
      readonly firstLive: readonly PerfEventFd[];
    }
  | {
      readonly kind: 'pair';
      readonly group: RingGroup;
      readonly pair: GapFreeRingPair;
      readonly primaries: ReadonlyMap<BackwardRing, PrimaryFds>;
      readonly fds: readonly PerfEventFd[];
      readonly firstLive: readonly PerfEventFd[];
    }
  | { readonly kind: 'forward'; readonly ring: ForwardRing };

/** What openOnSlot opened: the ring, the fds redirected into it, and each event's first fd. */
interface OpenedGroup<R> {
  readonly ring: R;
  readonly followers: PerfEventFd[];
  readonly primaries: Map<number, PerfEventFd>;
}

interface Slot {
  readonly pid: number;
  readonly cpu: number;
  readonly label: string;
  /**
   * Attached processes: every thread there was at attach time, first the one whose fd owns the
   * slot's ring. The others' fds write into that ring (PERF_EVENT_IOC_SET_OUTPUT, same CPU).
   */
  readonly tids?: readonly number[];
}

function liveRing(unit: Exclude<RingUnit, { kind: 'forward' }>): BackwardRing {
  return unit.kind === 'backward' ? unit.ring : unit.pair.active;
}

export class Recorder {
  private readonly units: RingUnit[] = [];
  private readonly fdsByEvent: PerfEventFd[][] = [];
  private readonly attrs: PerfEventAttr[] = [];
  /** The launched command (launch targets). */
  private launched: LaunchedCommand | null = null;
  private disposed = false;
  /** Faults in every flight-recorder ring's spare copy buffer while idle (see SpareCopyBuffer). */
  private readonly warmer: SpareBufferWarmer;
  /** This recorder's flight-recorder rings as one group, whose copies a snapshot takes together (see CopyGroup). */
  private readonly copyGroup: RingCopyGroup = { key: this, rings: () => this.backwardRings, threads: availableParallelism() };
  /** Empties the side-band rings between snapshots, so a full ring never drops COMM/MMAP2/EXIT. */
  private drainTimer: NodeJS.Timeout | undefined;
  /** The uprobes of this recording defined in tracefs, so that new threads inherit them (null: none, or the PMU's). */
  private tracefsUprobes: TracefsUprobes | null = null;
  /** The logpoints' tracefs uprobes fetch the red zone: their samples carry it as PERF_SAMPLE_RAW (see tracefs-uprobes.ts). */
  private redZoneFetched = false;
  /** Per event, the sites of a multi-site source line no debug register was left for (address -> function). */
  private readonly unarmedSites = new Map<number, Map<bigint, string>>();

  /** Readers of what the rings gain while recording (follow()), told when a resize retires a ring. */
  private readonly followers = new Set<RingFollower>();
  /** Ring ids are never reused, so a retired ring's copies keep an id of their own. */
  private nextRingId = 0;
  /** What retired rings wrote that no snapshot holds any more (RawSnapshot.retiredBytesLeftOut). */
  private retiredLeftOut = 0n;
  /** Final contents of rings retired by a resize, handed to snapshots with the live rings. */
  private retired: RingCopy[] = [];
  /** Rings retired by a resize but kept open (keepRetired), oldest first. */
  private readonly retiredOpen: RetiredRing[] = [];
  /** Sample ids of retired fds whose records are still in `retired` or `retiredOpen`, per event. */
  private readonly retiredIds: bigint[][] = [];
  /** Growth of the rings (with a window): measures coverage, keeps the resize notes. */
  private readonly growth: RingGrowth | null;
  private growthTimer: NodeJS.Timeout | undefined;
  /** Pages of the rings a resize leaves alone (trigger events' own rings). */
  private readonly fixedPages: number;
  /**
   * A CPU-wide recording's /proc state, read again per process only where the side-band says it changed (see
   * ProcessTable); null: every snapshot reads /proc whole (another target, or no side-band to learn changes from).
   */
  private processTable: ProcessTable | null = null;
  /** Side-band rings on the online CPUs a CPU-wide recording has none on: read by the process table alone, never snapshot. */
  private readonly watchRings: ForwardRing[] = [];
  /** The CPUs whose side-band the process table sees. */
  private readonly watchedCpus = new Set<number>();
  /** COMM/MMAP2 equivalents of every task of the target when the recording started (see open). */
  private tasksAtStart: readonly ProcessSideband[] = [];
  /** Wall-clock ms when the events began recording (RawSnapshot.recordingStartedAtMs). */
  private recordingStartedAtMs = Date.now();
  /** Wall-clock ms since which the gap-free pairs' live rings record (RawSnapshot.gapFreeSinceMs). */
  private gapFreeSinceMs = this.recordingStartedAtMs;

  private constructor(
    private readonly options: RecorderOptions,
    private readonly mode: CopyMode,
    private readonly plan: AccessPlan,
    private sizes: RingSizes,
    private readonly limitationList: readonly string[],
    private readonly access: PerfAccess,
  ) {
    this.fixedPages = sizes.pages;
    this.growth = options.windowSec !== undefined ? new RingGrowth(options.windowSec, access) : null;
    this.warmer = new SpareBufferWarmer(() => this.backwardRings, options.warmCopyBuffers !== false);
  }

  /** Pid of the launched command (launch targets). */
  get childPid(): number | undefined {
    return this.launched?.pid;
  }

  /** Resolves with the launched command's exit code (null when killed by a signal). */
  get exited(): Promise<number | null> | undefined {
    return this.launched?.exited;
  }

  /** Resolves with how the launched command ended. */
  get exitStatus(): Promise<ChildExit> | undefined {
    return this.launched?.exitStatus;
  }

  /**
   * Ends the launched command if it still runs: SIGTERM, then SIGKILL once `graceMs` has passed,
   * and resolves when it has exited. Its events stay open (the rings keep what it did).
   */
  async endLaunched(graceMs = 2000): Promise<ChildExit | undefined> {
    return this.launched?.end(graceMs);
  }

  /** The events as opened: narrowed to user space where this process may not see the kernel. */
  get events(): readonly ResolvedEvent[] {
    return this.plan.events;
  }

  /** What this recording cannot see and why (user space only, rings shrunk to the budget, unarmed sites); empty when nothing. */
  get limitations(): readonly string[] {
    const unarmed = [...this.unarmedSites].map(([index, sites]) => {
      const event = this.plan.events[index];
      const total = (event.extraSites?.length ?? 0) + 1;
      const left = [...sites.values()].join(', ');
      const armed = `${total - sites.size} of ${total} places armed`;
      return `${event.name}: ${armed}; no debug register left for ${left} (x86 has 4 per task and CPU)`;
    });
    return [...this.limitationList, ...unarmed, ...(this.growth?.notes ?? [])];
  }

  static async open(options: RecorderOptions): Promise<Recorder> {
    const pages = options.pages ?? DEFAULT_RING_PAGES;
    if (!isPowerOfTwo(pages)) {
      throw new RangeError(`--pages must be a power of two, got ${pages}`);
    }
    if (options.events.length === 0) throw new Error('a recording needs at least one event');
    const mode: CopyMode = options.useZeroCopy === false ? 'memcpy' : defaultCopyMode();
    const access = options.access ?? readPerfAccess();
    const plan = planForAccess(options.events, options.target.kind, access, () => breakpointDelivery().state === 'fires');
    const sizes = ringSizesFor(options, plan.events, access);
    const perThread =
      options.target.kind === 'pid' && !followsNewThreads(options.target, plan.events)
        ? `hardware breakpoints${plan.events.some((event) => event.uprobe) ? ' (and, beside them, uprobes)' : ''} ` +
          `watch the ${threadsOf(options.target.pid).length} thread(s) process ${options.target.pid} has now; ` +
          'threads it creates later are not watched'
        : null;
    const delivery = plan.events.some((event) => event.isBreakpoint) ? breakpointDelivery() : null;
    const silentBreakpoints = delivery?.state === 'silent' ? delivery.message : null;
    if (options.windowSec !== undefined && !(options.windowSec > 0)) {
      throw new RangeError(`--window must be a positive number of seconds, got ${options.windowSec}`);
    }
    const uprobes = Recorder.defineUprobes(plan.events, options.target, access);
    let recorder: Recorder;
    try {
      recorder = new Recorder(
        options,
        mode,
        plan,
        sizes,
        [plan.limitation, sizes.note, perThread, silentBreakpoints, uprobes.note].filter((line): line is string => line !== null),
        access,
      );
    } catch (error) {
      uprobes.definitions?.dispose();
      throw error;
    }
    recorder.tracefsUprobes = uprobes.definitions;
    recorder.redZoneFetched = uprobes.redZone;
    try {
      if (options.target.kind === 'launch') {
        await recorder.launch(options.target);
      } else {
        recorder.openAll(recorder.slotsFor(options.target));
      }
    } catch (error) {
      recorder.dispose();
      throw error;
    }
    // A launched command's events start with its exec, which open() waited for.
    recorder.recordingStartedAtMs = recorder.gapFreeSinceMs = Date.now();
    // Every task there is now, read once the events record, as perf record synthesises them: threads
    // that exit before a snapshot are named by this alone. A launched command has none yet (its
    // tasks are all born under the recording, their FORK/COMM/MMAP2 in the side-band).
    if (options.target.kind !== 'launch') {
      recorder.watchProcesses();
      recorder.tasksAtStart = recorder.synthesize();
    }
    recorder.warmer.schedule();
    if (options.windowSec !== undefined) {
      recorder.growthTimer = setInterval(() => recorder.checkGrowth(), GROWTH_CHECK_MS);
      // Growth serves a recording someone keeps open; it must not keep the process alive itself.
      recorder.growthTimer.unref();
    }
    if (recorder.forwardRings.length > 0 && options.drainSideband !== false) {
      recorder.drainTimer = setInterval(() => recorder.drainSideband(), SIDEBAND_DRAIN_MS);
      // Draining serves whoever keeps the process alive for its own reasons; it must not be one.
      recorder.drainTimer.unref();
    }
    return recorder;
  }

  /**
   * A recording that follows new threads defines its uprobes in tracefs (see tracefs-uprobes.ts).
   * Where it may not (tracefs is root's), they are opened through the uprobe PMU without inherit:
   * the threads there are now are watched, and the note says what is not.
   */
  private static defineUprobes(
    events: readonly ResolvedEvent[],
    target: RecorderTarget,
    access: PerfAccess,
  ): { definitions: TracefsUprobes | null; note: string | null; redZone: boolean } {
    const probed = events.filter((event) => event.uprobe !== undefined);
    const follow = followsNewThreads(target, events);
    const redZoneWanted = probed.filter(wantsRedZone);
    if (probed.length === 0 || (!follow && redZoneWanted.length === 0)) return { definitions: null, note: null, redZone: false };
    const sites = probed.flatMap((event) =>
      event.uprobe!.sites.map((site) => ({ path: event.uprobe!.path, offset: site.offset, ...(wantsRedZone(event) ? { redZone: true } : {}) })),
    );
    try {
      return { definitions: TracefsUprobes.define(access.tracefs.path, sites), note: null, redZone: redZoneWanted.length > 0 };
    } catch (error) {
      if (!(error instanceof TracefsUprobeError)) throw error;
      const notes: string[] = [];
      if (follow) {
        notes.push(
          `${probed.map((event) => event.name).join(', ')}: uprobes watch only the threads there are when the recording starts, not threads or children created later: ` +
            `following them needs uprobes defined in tracefs, and ${error.message}`,
        );
      }
      if (redZoneWanted.length > 0) {
        notes.push(
          `${redZoneWanted.map((event) => event.name).join(', ')}: locals below the stack pointer (the x86-64 red zone of a function that calls none) ` +
            `read <not captured>: the kernel fetches them at the hit only through uprobes defined in tracefs, and ${error.message}`,
        );
      }
      return { definitions: null, note: notes.join('\n'), redZone: false };
    }
  }

  /** Moves what the kernel wrote into each side-band ring to its held store (see ForwardRing.drain). */
  drainSideband(): void {
    if (this.disposed) return;
    for (const ring of this.forwardRings) ring.drain();
    // Nothing reads these rings' records but the process table, which has seen them once drained.
    for (const ring of this.watchRings) ring.takePending();
  }

  /**
   * A CPU-wide recording keeps its /proc state in a ProcessTable fed by the side-band of every online CPU: its own
   * side-band rings, and on the CPUs it does not record, rings of the side-band event alone. Where those cannot be
   * opened (the locked-memory budget), or the side-band is not drained here, snapshots read /proc whole, as before.
   */
  private watchProcesses(): void {
    const { target } = this.options;
    const sidebandIndex = this.plan.events.length;
    const sideband = this.attrs[sidebandIndex];
    if (target.kind !== 'cpus' || this.options.synthesize === false || this.options.drainSideband === false || !sideband) return;
    const table = new ProcessTable();
    const observe = (chunk: Uint8Array) => table.observe(chunk);
    const covered = new Set(this.forwardRings.map((ring) => ring.meta.cpu));
    try {
      for (const cpu of onlineCpus()) {
        if (covered.has(cpu)) continue;
        // The records that say a process changed, not the context switches the recording may ask for.
        const attr: PerfEventAttr = { ...sideband, flags: { ...sideband.flags, contextSwitch: false } };
        const fd = openEvent(attr, -1, cpu, -1, undefined, { name: 'sideband (process watch)' });
        const meta: RingMeta = { ringId: this.nextRingId++, label: `cpu${cpu} process watch`, cpu, tid: -1, defaultEvent: sidebandIndex };
        let ring: ForwardRing;
        try {
          ring = new ForwardRing(fd, this.sizes.sidebandPages, meta, this.mode);
        } catch (error) {
          fd.dispose();
          throw error;
        }
        this.watchRings.push(ring);
        covered.add(cpu);
      }
    } catch (error) {
      void error; // no room for the watch rings: snapshots read /proc whole, which costs time and nothing else
      for (const ring of this.watchRings.splice(0)) ring.dispose();
      return;
    }
    for (const ring of [...this.forwardRings, ...this.watchRings]) ring.watch(observe);
    for (const cpu of covered) this.watchedCpus.add(cpu);
    this.processTable = table;
  }

  /** Resolves once every spare copy buffer is warm (at once when warming is off or the recorder is disposed). */
  copyBuffersWarm(): Promise<void> {
    return this.warmer.whenWarm();
  }

  private slotsFor(target: RecorderTarget): Slot[] {
    switch (target.kind) {
      case 'cpus': {
        const online = onlineCpus();
        const cpus = target.cpus ?? online;
        for (const cpu of cpus) if (!online.includes(cpu)) throw new Error(`CPU ${cpu} is not online (online: ${online.join(',')})`);
        return cpus.map((cpu) => ({ pid: -1, cpu, label: `cpu${cpu}` }));
      }
      case 'pid': {
        const tids = threadsOf(target.pid);
        if (tids.length === 0) throw new Error(`process ${target.pid} has no threads left to trace (it exited)`);
        // Breakpoints: one fd per existing thread on any CPU (see followsNewThreads).
        if (!followsNewThreads(target, this.plan.events)) {
          return tids.map((tid) => ({ pid: tid, cpu: -1, label: `tid ${tid}`, tids: [tid] }));
        }
        // Like `perf record -p`: one inherited fd per thread per CPU, so threads created after the
        // attach are followed too (the kernel refuses to mmap an inherited cpu -1 event). Per CPU
        // one ring per event; the other threads' fds write into it.
        return onlineCpus().map((cpu) => ({ pid: tids[0], cpu, label: `cpu${cpu} pid ${target.pid}`, tids }));
      }
      case 'launch':
        // The kernel refuses to mmap an inherited per-task (cpu -1) event, so a launched command
        // (which needs inherit to follow its children) gets one fd per CPU, like `perf record -- cmd`.
        return onlineCpus().map((cpu) => ({ pid: this.childPid ?? -1, cpu, label: `cpu${cpu} pid ${this.childPid}` }));
    }
  }

  /**
   * Opens every ring group (or `only` these, without side-band: a resize) on every slot. A resize
   * opens its events disabled and enables them all at once when every ring is mapped.
   */
  private openAll(slots: Slot[], only?: { groups: readonly RingGroup[]; pages: number }): void {
    const { target } = this.options;
    const { events } = this.plan;
    const { sidebandPages } = this.sizes;
    const pages = only?.pages ?? this.sizes.pages;
    const disabledUntilSwap = (attr: PerfEventAttr): PerfEventAttr => ({ ...attr, flags: { ...attr.flags, disabled: true, enableOnExec: false } });
    if (!only) {
      events.forEach((event, index) => {
        const attr = flightRecorderAttr(event, target, followsNewThreads(target, events));
        this.attrs[index] = this.redZoneFetched && wantsRedZone(event) ? { ...attr, sampleType: attr.sampleType | Sample.RAW } : attr;
        this.fdsByEvent[index] = [];
      });
    }
    const groups = only?.groups ?? ringGroupsFor(events, this.options.gapFree ?? false, new Set(this.options.ownRing));
    const allGroups = ringGroupsFor(events, this.options.gapFree ?? false, new Set(this.options.ownRing));
    const sidebandIndex = events.length;
    let opened = 0;
    for (const slot of slots) {
      let slotOpened = false;
      for (const group of groups) {
        const members = group.eventIndices.map((eventIndex) => ({
          eventIndex,
          attr: only ? disabledUntilSwap(this.attrs[eventIndex]) : this.attrs[eventIndex],
        }));
        const names = group.eventIndices.map((index) => events[index].name);
        const ringId = this.nextRingId++;
        const label = allGroups.length > 1 ? `${slot.label} ${names.join('+')}` : slot.label;
        const metaFor = (fd: PerfEventFd): RingMeta => ({ ringId, label, cpu: slot.cpu, tid: fd.pid, defaultEvent: group.eventIndices[0] });
        const first = this.openOnSlot(members, slot, (fd) => this.ring(fd, pages, metaFor(fd)));
        if (!first) continue;
        slotOpened = true;
        if (group.gapFree) {
          // The standby ring gets the same events on the same threads, opened disabled.
          const tids = [...new Set([first.ring.event.pid, ...first.followers.map((fd) => fd.pid)])];
          const standbySlot: Slot = { ...slot, pid: first.ring.event.pid, tids: slot.tids ? tids : undefined };
          const standbyMembers = members.map((member) => ({ ...member, attr: standbyAttr(member.attr) }));
          let standby: OpenedGroup<BackwardRing> | null;
          try {
            standby = this.openOnSlot(standbyMembers, standbySlot, (fd) => this.ring(fd, pages, first.ring.meta));
            if (!standby) throw new Error(`the threads of ${slot.label} exited while Ringside opened their standby ring`);
          } catch (error) {
            first.ring.dispose();
            throw error;
          }
          const pair = new GapFreeRingPair(first.ring, standby.ring, { first: first.followers, second: standby.followers });
          const firstLive = [first.ring.event, ...first.followers];
          const fds = [...firstLive, standby.ring.event, ...standby.followers];
          const primaries = new Map([
            [first.ring, first.primaries],
            [standby.ring, standby.primaries],
          ]);
          this.units.push({ kind: 'pair', group, pair, primaries, fds, firstLive });
        } else {
          const fds = [first.ring.event, ...first.followers];
          this.units.push({ kind: 'backward', group, ring: first.ring, primaries: first.primaries, fds, firstLive: fds });
        }
      }
      if (slotOpened) opened++;
      if (slotOpened && !only && this.options.sideband !== false) {
        this.attrs[sidebandIndex] = sidebandAttr(
          target,
          this.options.contextSwitch ?? false,
          this.plan.excludeKernel,
          followsNewThreads(target, events),
          events.some((event) => (event.attr.sampleType & Sample.STACK_USER) !== 0),
        );
        this.fdsByEvent[sidebandIndex] ??= [];
        const ringId = this.nextRingId++;
        const sideband = this.openOnSlot([{ eventIndex: sidebandIndex, attr: this.attrs[sidebandIndex] }], slot, (fd) => {
          const meta: RingMeta = { ringId, label: `${slot.label} sideband`, cpu: slot.cpu, tid: fd.pid, defaultEvent: sidebandIndex };
          try {
            return new ForwardRing(fd, sidebandPages, meta, this.mode);
          } catch (error) {
            fd.dispose();
            throw error;
          }
        });
        if (sideband) this.units.push({ kind: 'forward', ring: sideband.ring });
      }
    }
    if (opened === 0) throw new Error('no thread of the target could be traced (all exited?)');
  }

  /**
   * Opens a ring group's events on a slot and maps the ring with `map` on the owner fd (the first
   * event on the first of the slot's threads still alive); every other fd (the other events, the
   * other threads of an attached process, extra breakpoint sites) is redirected into that ring with
   * SET_OUTPUT. The kernel takes that only towards a mapped ring on the same CPU (or, for cpu -1,
   * the same task) with the same write direction and clock, which every member here shares.
   * Every fd goes into fdsByEvent (their ids identify records; dispose closes them). Null when
   * every thread has exited.
   */
  private openOnSlot<R extends { dispose(): void; addWriter(fd: PerfEventFd): void }>(
    members: readonly { eventIndex: number; attr: PerfEventAttr }[],
    slot: Slot,
    map: (owner: PerfEventFd) => R,
  ): OpenedGroup<R> | null {
    const tids = slot.tids ?? [slot.pid];
    const attached = slot.tids !== undefined;
    let ring: R | undefined;
    let owner: PerfEventFd | undefined;
    const followers: PerfEventFd[] = [];
    const primaries = new Map<number, PerfEventFd>();
    const keep = (fd: PerfEventFd, eventIndex: number) => {
      this.fdsByEvent[eventIndex] ??= [];
      this.fdsByEvent[eventIndex].push(fd);
    };
    const follow = (fd: PerfEventFd, eventIndex: number) => {
      keep(fd, eventIndex);
      fd.setOutput(owner!);
      ring!.addWriter(fd);
      followers.push(fd);
    };
    try {
      for (const tid of tids) {
        for (const { eventIndex, attr } of members) {
          const name = this.eventName(eventIndex);
          const uprobe = this.plan.events[eventIndex]?.uprobe;
          const first = uprobe ? this.uprobeSiteAttr(attr, uprobe, uprobe.sites[0]) : { attr };
          const fd = this.tryOpen(first.attr, { ...slot, pid: tid }, name, attached, first.path);
          if (!fd) continue;
          if (!primaries.has(eventIndex)) primaries.set(eventIndex, fd);
          if (!owner) {
            owner = fd;
            keep(fd, eventIndex);
            ring = map(fd);
          } else {
            follow(fd, eventIndex);
          }
          // A source line in several functions: one execute breakpoint per site, all writing into this ring.
          for (const site of this.plan.events[eventIndex]?.extraSites ?? []) {
            if (this.unarmedSites.get(eventIndex)?.has(site.address)) continue;
            let siteFd: PerfEventFd | null;
            try {
              siteFd = this.tryOpen({ ...attr, config1: site.address }, { ...slot, pid: tid }, name, attached);
            } catch (error) {
              // More sites than free debug registers: the first sites stay armed, the rest are named.
              if (!(error instanceof PerfError) || error.code !== 'ENOSPC') throw error;
              const unarmed = this.unarmedSites.get(eventIndex) ?? new Map<bigint, string>();
              unarmed.set(site.address, site.function ?? `0x${site.address.toString(16)}`);
              this.unarmedSites.set(eventIndex, unarmed);
              continue;
            }
            if (siteFd) follow(siteFd, eventIndex);
          }
          // A uprobe on each further place of a line (no register limit): each its own fd into this ring.
          for (const site of uprobe?.sites.slice(1) ?? []) {
            const opened = this.uprobeSiteAttr(attr, uprobe!, site);
            const siteFd = this.tryOpen(opened.attr, { ...slot, pid: tid }, name, attached, opened.path);
            if (siteFd) follow(siteFd, eventIndex);
          }
        }
      }
    } catch (error) {
      ring?.dispose();
      throw error;
    }
    return ring ? { ring, followers, primaries } : null;
  }

  /**
   * What one place of a uprobe event is opened as: its tracefs definition (a tracepoint, which the
   * kernel inherits into new threads) when the recording follows them, else the uprobe PMU on the
   * place's file offset, never inherited (see tracefs-uprobes.ts: inheriting it breaks the target's clone).
   */
  private uprobeSiteAttr(attr: PerfEventAttr, uprobe: UprobeTarget, site: UprobeTarget['sites'][number]): { attr: PerfEventAttr; path?: string } {
    if (this.tracefsUprobes) {
      const id = this.tracefsUprobes.id({ path: uprobe.path, offset: site.offset });
      return { attr: { ...attr, type: PerfType.TRACEPOINT, config: BigInt(id), config1: 0n, config2: 0n } };
    }
    return { attr: { ...attr, config2: site.offset, flags: { ...attr.flags, inherit: false } }, path: uprobe.path };
  }

  private eventName(eventIndex: number): string {
    return this.plan.events[eventIndex]?.name ?? 'sideband';
  }

  /** Opens one fd; a thread that exited between listing and opening (ESRCH) is skipped for -p. */
  private tryOpen(attr: PerfEventAttr, slot: Slot, name: string, skipGoneThreads: boolean, uprobePath?: string): PerfEventFd | null {
    try {
      return openEvent(attr, slot.pid, slot.cpu, -1, undefined, { name, ...(uprobePath !== undefined ? { uprobePath } : {}) });
    } catch (error) {
      if (skipGoneThreads && error instanceof PerfError && error.code === 'ESRCH') return null;
      throw error;
    }
  }

  /** Maps a backward ring on `event` (already in fdsByEvent); closes the fd when mapping fails. */
  private ring(event: PerfEventFd, pages: number, meta: RingMeta): BackwardRing {
    try {
      return new BackwardRing(event, pages, meta, this.mode, this.options.sharedCopyBuffers === true, this.options.allocateCopy, this.copyGroup);
    } catch (error) {
      event.dispose();
      throw error;
    }
  }

  private async launch(target: Extract<RecorderTarget, { kind: 'launch' }>): Promise<void> {
    const launched = await LaunchedCommand.spawn(target);
    this.launched = launched;
    // The shell sits in `read` until released; events armed now fire from the command's first instruction (enable_on_exec).
    this.openAll(this.slotsFor(target));
    launched.release();
    await launched.waitForExec();
  }

  /**
   * Method form for the launched command. A command that already exited is checked against the
   * MMAP2 records of the side-band rings instead (peeked, not consumed).
   */
  verifyLoadBase(exePath: string, expectedBase: bigint): void {
    const pid = this.childPid;
    if (pid === undefined) throw new Error('verifyLoadBase needs a launched command');
    try {
      verifyLoadBase(pid, exePath, expectedBase);
    } catch (error) {
      if (!(error instanceof LoadBaseMismatchError) || error.actual !== null) throw error;
      const fromSideband = loadBaseFromSideband(
        this.forwardRings.map((ring) => ring.peek()),
        pid,
        exePath,
      );
      if (fromSideband === null) throw error;
      checkBase(pid, exePath, expectedBase, fromSideband, 'side-band MMAP2');
    }
  }

  /** The growth check (every GROWTH_CHECK_MS with a window) over the growable rings that record now. */
  private checkGrowth(): void {
    if (this.disposed || !this.growth) return;
    const ownRing = new Set(this.options.ownRing);
    const rings = this.units.flatMap((unit) => (unit.kind !== 'forward' && isGrowable(unit.group, ownRing) ? [liveRing(unit)] : []));
    // Retired rings kept open still hold their locked pages.
    const held = this.retiredOpen.reduce((pages, retired) => pages + retired.pages + 1, 0);
    const ceiling = () => growthCeiling(this.options, this.plan.events, this.access, this.sizes, this.fixedPages, held);
    const notes = this.growth.notes.length;
    let resized = false;
    const { allWrapped } = this.growth.check(rings, this.sizes.pages, ceiling, (pages) => {
      resized = true;
      this.grow(pages);
    });
    // After the check: its note (a resize, or why growth stopped) is written by then.
    if (resized || this.growth.notes.length !== notes) this.options.onResize?.('done');
    if (!this.options.gapFree && allWrapped && this.retired.length > 0) {
      // Paused copies repeat the retired records in every snapshot until here: from now on they are left out.
      this.retiredLeftOut += this.retired.reduce((sum, copy) => sum + copy.bytesWritten, 0n);
      this.retired = [];
    }
  }

  /**
   * Reopens the growable ring groups with `pages`-page rings. Order, so that no moment is missing:
   * the new set is opened disabled and mapped (opening and mapping take tens of ms), then every fd
   * of it is enabled, then every fd of the old set is disabled (ENABLE and DISABLE are synchronous:
   * the new rings record once the first returns, nothing writes the old ones once the second does),
   * then the old rings are copied. Records of the microseconds both sets ran are dropped from the
   * old copy: on each CPU (or thread), those at or after the new ring's oldest record are in the new
   * ring too.
   */
  private grow(pages: number): void {
    const ownRing = new Set(this.options.ownRing);
    const groups = ringGroupsFor(this.plan.events, this.options.gapFree ?? false, ownRing).filter((group) => isGrowable(group, ownRing));
    const old = this.units.filter((unit): unit is Exclude<RingUnit, { kind: 'forward' }> => unit.kind !== 'forward' && isGrowable(unit.group, ownRing));
    const firstNew = this.units.length;
    // New fds are appended to each event's list: a failed resize closes exactly those.
    const fdCounts = this.fdsByEvent.map((fds) => fds?.length ?? 0);
    const abandon = () => {
      for (const unit of this.units.splice(firstNew)) this.closeUnit(unit);
      this.fdsByEvent.forEach((fds, index) => {
        for (const fd of fds?.splice(fdCounts[index] ?? 0) ?? []) fd.dispose();
      });
    };
    try {
      this.openAll(this.resizeSlots(), { groups, pages });
    } catch (error) {
      abandon();
      throw error;
    }
    const fresh = this.units.slice(firstNew) as Exclude<RingUnit, { kind: 'forward' }>[];
    this.options.onResize?.('enabling');
    try {
      for (const unit of fresh) for (const fd of unit.firstLive) fd.enable();
    } catch (error) {
      abandon();
      throw error;
    }
    for (const unit of old) for (const fd of unit.fds) fd.disable();
    for (const unit of old) {
      const copy = unit.kind === 'backward' ? quiescentCopy(unit.ring) : unit.pair.finalCopy();
      const successor = fresh.find(
        (candidate) =>
          candidate.group.eventIndices[0] === unit.group.eventIndices[0] &&
          (copy.cpu >= 0 ? liveRing(candidate).meta.cpu === copy.cpu : liveRing(candidate).meta.tid === copy.tid),
      );
      const since = successor ? oldestSampleTime(peekUnwrapped(liveRing(successor))) : null;
      const kept = since === null ? copy : dropFrom(copy, since);
      for (const follower of this.followers) {
        for (const ring of unit.kind === 'backward' ? [unit.ring] : unit.pair.rings) {
          follower.retire(ring, since === null ? undefined : (increment) => dropFrom(increment, since));
        }
      }
      if (this.options.keepRetired && unit.kind === 'backward') {
        this.retiredOpen.push({
          ring: unit.ring,
          pages: this.sizes.pages,
          cutAtNs: since,
          oldestNs: oldestSampleTime(kept),
          newestNs: newestSampleTime(kept),
          fds: unit.fds,
          bytesWritten: kept.bytesWritten,
        });
      } else {
        this.retired.push({ ...kept, label: `${copy.label} (${this.sizes.pages} pages, retired)` });
      }
    }
    for (const unit of old) {
      for (const fd of unit.fds) {
        const eventIndex = this.eventOfFd(fd);
        if (eventIndex >= 0) {
          (this.retiredIds[eventIndex] ??= []).push(fd.id());
          this.fdsByEvent[eventIndex] = this.fdsByEvent[eventIndex].filter((kept) => kept !== fd);
        }
      }
      this.units.splice(this.units.indexOf(unit), 1);
      if (!this.retiredOpen.some((retired) => unit.kind === 'backward' && retired.ring === unit.ring)) this.closeUnit(unit);
    }
    this.sizes = { ...this.sizes, pages };
    this.warmer.schedule();
  }

  /** What rings a resize retired wrote that no snapshot holds any more (RawSnapshot.retiredBytesLeftOut). */
  get retiredBytesLeftOut(): bigint {
    return this.retiredLeftOut;
  }

  /** Rings retired by a resize and kept open (RecorderOptions.keepRetired), oldest first. */
  get retiredRings(): readonly RetiredRing[] {
    return this.retiredOpen;
  }

  /** Closes a ring retiredRings lists (its mapping and every fd that wrote into it). Idempotent. */
  closeRetired(retired: RetiredRing): void {
    const index = this.retiredOpen.indexOf(retired);
    if (index < 0) return;
    this.retiredOpen.splice(index, 1);
    this.retiredLeftOut += retired.bytesWritten;
    try {
      retired.ring.dispose();
    } finally {
      for (const fd of retired.fds) fd.dispose();
    }
  }

  /** The slots a resize opens on: as at the start, but a launched command's threads are listed now (it exec'd). */
  private resizeSlots(): Slot[] {
    const target = this.options.target;
    const slots = this.slotsFor(target);
    const pid = this.childPid;
    if (target.kind !== 'launch' || pid === undefined) return slots;
    // Threads and children the command made before the resize are followed from their own fds;
    // inherit only reaches what is created after an event is opened.
    const tids = threadsOf(pid);
    return tids.length > 0 ? slots.map((slot) => ({ ...slot, tids })) : slots;
  }

  private eventOfFd(fd: PerfEventFd): number {
    return this.fdsByEvent.findIndex((fds) => fds?.includes(fd));
  }

  private closeUnit(unit: RingUnit): void {
    if (unit.kind === 'pair') unit.pair.dispose();
    else unit.ring.dispose();
    if (unit.kind !== 'forward') for (const fd of unit.fds) fd.dispose();
  }

  /** Event table for the decoder: user events first, the side-band dummy last. */
  eventDescriptions(): EventDescription[] {
    const descriptions: EventDescription[] = this.plan.events.map((event, index) => ({
      index,
      name: event.name,
      attr: this.attrs[index],
      ids: [...(this.fdsByEvent[index] ?? []).map((fd) => fd.id()), ...(this.retiredIds[index] ?? [])],
      tracepoint: event.tracepoint,
    }));
    const sidebandIndex = this.plan.events.length;
    if (this.attrs[sidebandIndex]) {
      const ids = (this.fdsByEvent[sidebandIndex] ?? []).map((fd) => fd.id());
      descriptions.push({ index: sidebandIndex, name: 'sideband', attr: this.attrs[sidebandIndex], ids });
    }
    return descriptions;
  }

  private checkOpen(): void {
    if (this.disposed) throw new Error('recorder used after dispose');
  }

  /** Pauses, copies and resumes every flight-recorder ring (or swaps gap-free pairs), and drains the side-band rings. */
  snapshot(): RecorderSnapshot {
    return this.takeSnapshot(false);
  }

  /**
   * A snapshot that takes nothing away from the next snapshot(): gap-free pairs are paused and
   * copied instead of swapped, the side-band is read without being consumed. For a triggered
   * snapshot written on the side, so the regular snapshots still hold the moments it shows.
   */
  peekSnapshot(): RecorderSnapshot {
    return this.takeSnapshot(true);
  }

  private takeSnapshot(leaveWhole: boolean): RecorderSnapshot {
    this.checkOpen();
    const takenAtMs = Date.now();
    const gapFreeSinceMs = this.gapFreeSinceMs;
    const { rings, pauseWindowNs } = snapshotRings([...this.units, ...this.retired.map((copy) => ({ kind: 'held' as const, copy }))], false, leaveWhole);
    // Gap-free copies tile time: each snapshot holds what happened since the previous one, so the
    // retired rings' last records are handed out once. Paused copies repeat the whole ring each
    // time, and keep the retired records until the grown rings hold the window by themselves.
    if (this.options.gapFree && !leaveWhole) {
      this.retired = [];
      this.gapFreeSinceMs = takenAtMs;
    }
    this.warmer.schedule();
    const processes = this.processesNow();
    return {
      events: this.eventDescriptions(),
      rings,
      takenAtMs,
      pauseWindowNs,
      processes,
      limitations: this.limitations,
      recordingStartedAtMs: this.recordingStartedAtMs,
      gapFreeSinceMs,
      ...(this.retiredLeftOut > 0n ? { retiredBytesLeftOut: this.retiredLeftOut } : {}),
    };
  }

  /** The /proc state of the watched processes now, with the tasks of the start that exited since (what a snapshot carries as `processes`). */
  processesNow(): ProcessSideband[] {
    this.checkOpen();
    return mergeTasks(this.tasksAtStart, this.synthesize());
  }

  /** Every task of the target as /proc showed it when the recording started (empty for a launched command). */
  get startTasks(): readonly ProcessSideband[] {
    return this.tasksAtStart;
  }

  private synthesize(): ProcessSideband[] {
    if (this.options.synthesize === false) return [];
    const target = this.options.target;
    if (target.kind === 'launch') return this.childPid ? synthesizeSideband([this.childPid]) : [];
    if (target.kind === 'pid') return synthesizeSideband([target.pid]);
    const table = this.processTable;
    if (table && onlineCpus().every((cpu) => this.watchedCpus.has(cpu))) {
      // What the side-band wrote up to now, peeked side-band included, is what the table knows.
      this.drainSideband();
      return table.now();
    }
    // A CPU brought online since the start is not watched: what runs there changes nothing the table would learn of.
    table?.forgetAll();
    return synthesizeSideband(allPids());
  }

  /**
   * Follows the recording: each read() of the result returns what the rings gained since the previous
   * read (the first: since this call, or `fromStart` everything they hold), without pausing them (see
   * RingFollower). close() it when done; dispose() closes it too.
   */
  follow(options: { fromStart?: boolean } = {}): RingFollower {
    this.checkOpen();
    const follower: RingFollower = new RingFollower(
      {
        backward: () => {
          this.checkOpen();
          return this.backwardRings;
        },
        forward: () => this.forwardRings,
        events: () => this.eventDescriptions(),
        limitations: () => this.limitations,
      },
      options.fromStart ?? false,
      () => this.followers.delete(follower),
    );
    this.followers.add(follower);
    return follower;
  }

  /** Stops writes into every flight-recorder ring (records arriving meanwhile are counted as lost). */
  pause(): void {
    this.checkOpen();
    pauseRings(this.units, true);
  }

  resume(): void {
    this.checkOpen();
    pauseRings(this.units, false);
  }

  ringStats(): RingStats[] {
    this.checkOpen();
    return this.units.map((unit) => (unit.kind === 'pair' ? unit.pair.stats() : unit.ring.stats()));
  }

  /** The rings themselves, for tests and the keeper (borrowing fds). */
  get backwardRings(): readonly BackwardRing[] {
    return this.units.flatMap((unit) => (unit.kind === 'backward' ? [unit.ring] : unit.kind === 'pair' ? unit.pair.rings : []));
  }

  /**
   * Per slot, the fd of event `eventIndex` on the slot's first thread in the ring that records now
   * (the live ring of a gap-free pair): what per-event controls (enable, disable, move a breakpoint)
   * act on. With events sharing a ring this is no longer the ring's owner fd.
   */
  primaryFds(eventIndex: number): PerfEventFd[] {
    this.checkOpen();
    return this.units.flatMap((unit) => {
      const primaries = unit.kind === 'backward' ? unit.primaries : unit.kind === 'pair' ? unit.primaries.get(unit.pair.active) : undefined;
      const fd = primaries?.get(eventIndex);
      return fd ? [fd] : [];
    });
  }

  get forwardRings(): readonly ForwardRing[] {
    return this.units.flatMap((unit) => (unit.kind === 'forward' ? [unit.ring] : []));
  }

  /** Closes every fd and mapping. Idempotent. A launched command that was never released is killed. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.warmer.dispose();
    for (const follower of [...this.followers]) follower.close();
    if (this.drainTimer) clearInterval(this.drainTimer);
    if (this.growthTimer) clearInterval(this.growthTimer);
    this.retired = [];
    const errors: unknown[] = [];
    for (const ring of this.watchRings.splice(0)) {
      try {
        ring.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    for (const retired of [...this.retiredOpen]) {
      try {
        this.closeRetired(retired);
      } catch (error) {
        errors.push(error);
      }
    }
    for (const unit of this.units) {
      try {
        if (unit.kind === 'pair') unit.pair.dispose();
        else unit.ring.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    // fds opened but never wrapped in a ring (failure mid-open) are closed here too; dispose is idempotent.
    for (const fds of this.fdsByEvent) for (const fd of fds ?? []) fd.dispose();
    this.units.length = 0;
    // After every fd on them is closed: the kernel keeps a definition that is in use.
    try {
      this.tracefsUprobes?.dispose();
    } catch (error) {
      errors.push(error);
    }
    this.launched?.dispose();
    if (errors.length) throw errors[0];
  }
}

/** A logpoint on x86-64 reads its leaf functions' locals from the red zone below the stack pointer (see tracefs-uprobes.ts). */
function wantsRedZone(event: ResolvedEvent): boolean {
  return event.logpoint !== undefined && event.uprobe !== undefined && process.arch === 'x64';
}
