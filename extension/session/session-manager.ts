// Recording sessions and their snapshots, independent of the VS Code API so the same logic runs in
// node tests against the real kernel. A session wraps one RingSource (our own Recorder, a keeper's
// rings, or a borrowed fd); a snapshot is pause → copy → resume in the source, then decoding here,
// after the rings are running again, so the pause window stays as short as the copy.

import type { DecodedSnapshot } from '../../native/decode/types';
import { formatBytes } from '../../native/abi/units';
import type { EventDescription } from '../../native/abi/snapshot';
import type { KeeperState } from '../../native/keeper/state';
import type { ProcessSideband } from '../../native/perf/sideband-types';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import type { FrameSymbols } from '../../host/frame-symbols';
import { PerfType } from '../../native/abi/uapi';
import { describeLosses } from '../../native/decode/losses';
import { pageSize } from '../../native/sys/libc';
import { writeFileAtomic } from '../../native/sys/safe-file';
import type { Backend, ForeignFdHint, PerfDataStage, RecordOptions, RingSource, RingStatus, SourceSnapshot } from './ports';

export type SessionKind = 'recording' | 'keeper' | 'borrowed' | 'file';
export type SessionState = 'running' | 'paused' | 'stopped';

export interface SnapshotEntry {
  readonly id: string;
  /** Named by time: `14:03:22.125`, unique within the session. */
  readonly name: string;
  readonly sessionId: string;
  readonly takenAtMs: number;
  readonly decoded: DecodedSnapshot;
  /** Bytes copied out of the rings. */
  readonly sizeBytes: number;
  readonly recordCount: number;
  /** Longest pause of any ring, ns (what the target saw). */
  readonly maxPauseNs: number;
  /** Time spent decoding after the rings resumed, ms. */
  readonly decodeMs: number;
  /** How long each stage took, for the Output log (the panel adds symbolize, wire and first paint). */
  readonly stages?: SnapshotStages;
  /** What the recording could not see and why (user space only, rings shrunk to the lock budget). */
  readonly limitations: readonly string[];
  /** Set when a trigger took this snapshot ("Snapshot When…"): which events fired it. */
  readonly trigger?: string;
  /** The session's symbol table (mappings learnt from this and earlier snapshots): names IPs and callchain frames. */
  readonly symbols: FrameSymbols;
}

/**
 * What a session's events are bound to, as the kernel counts debug registers (kernel/events/hw_breakpoint.c): the
 * threads of one process (a launched command, -p, a per-thread ring), or every CPU. Absent for an opened file.
 */
export type SessionScope = { readonly kind: 'process'; readonly pid: number } | { readonly kind: 'cpus' };

/** One breakpoint or watchpoint event of a live session: while its fds are open it holds a debug register. */
export interface BreakpointHolder {
  readonly sessionId: string;
  readonly sessionLabel: string;
  readonly eventIndex: number;
  /** The event as the user gave it (`mem:demo_rounds:w`). */
  readonly name: string;
  readonly scope: SessionScope;
  /** Registers the event takes on its scope: one per place its line was armed at (a line the compiler put in several). */
  readonly registers: number;
}

export interface SessionInfo {
  readonly id: string;
  readonly kind: SessionKind;
  readonly label: string;
  readonly state: SessionState;
  readonly startedAtMs: number;
  readonly targetExited: boolean;
  /** How the launched target ended ("exited with status 0", "killed by SIGSEGV"), once it has. */
  readonly targetExit?: string;
  readonly childPid?: number;
  /** What the recording cannot see and why (user space only, rings shrunk to the locked-memory budget). */
  readonly limitations: readonly string[];
  /** Borrowed rings whose owner (a keeper) died: still readable through this session's fds, by no one else. */
  readonly ownerExited: boolean;
  readonly snapshots: readonly SnapshotEntry[];
}

export interface SessionChange {
  readonly sessionId: string;
  readonly what:
    'started' | 'state' | 'snapshot' | 'snapshot-deleted' | 'stopped' | 'removed' | 'target-exited' | 'owner-exited' | 'triggered' | 'trigger-failed';
  /** 'trigger-failed': why the triggered snapshot could not be taken. */
  readonly detail?: string;
}

export type ExportFormat = 'perf.data' | 'jsonl' | 'html';

/** The user cancelled opening a file: nothing was added. */
export class OpenCancelled extends Error {
  constructor(readonly file: string) {
    super(`opening ${file} was cancelled`);
    this.name = 'OpenCancelled';
  }
}

/** The user cancelled a snapshot before it was added: the rings were copied (and resumed), nothing was kept. */
export class CaptureCancelled extends Error {
  constructor(readonly session: string) {
    super(`the snapshot of ${session} was cancelled`);
    this.name = 'CaptureCancelled';
  }
}

export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

interface Session {
  readonly id: string;
  readonly kind: SessionKind;
  readonly label: string;
  readonly scope?: SessionScope;
  readonly startedAtMs: number;
  source?: RingSource;
  state: SessionState;
  targetExited: boolean;
  readonly childPid?: number;
  snapshots: SnapshotEntry[];
  /** Mappings and comms learnt across the session's snapshots, as the CLI's capture does. */
  readonly symbols: SnapshotSymbols;
  snapshotInFlight?: Promise<SnapshotEntry>;
  ownerExited: boolean;
  targetExit?: string;
  /** Polls a borrowed source's owner until it dies or the session stops. */
  ownerWatch?: NodeJS.Timeout;
  /** Takes a snapshot when one of the recording's trigger events fires, until the session stops. */
  triggerWatch?: { rearm(): void; stop(): void };
  /** Per event of a recording Ringside opened: the places it is armed at (1 + its line's extra sites). */
  placesOfEvent?: readonly number[];
}

/** The stages of a snapshot before the panel gets it, ms; `startedAt` is performance.now() when it was asked for. */
export interface SnapshotStages {
  readonly startedAt: number;
  /** Pause → copy → resume of every ring (a perf.data: 0, its `file` stages say how it was read). */
  readonly copyMs: number;
  readonly decodeMs: number;
  /** A perf.data file's: reading its bytes, indexing its records (header, walk, times) and copying them in time order, ms. */
  readonly file?: { readonly readMs: number; readonly indexMs: number; readonly orderMs: number };
  /** Learning the mappings and comms that name its addresses (the session's symbol table). */
  readonly learnMs: number;
}

/** A running recording followed live (SessionManager.follow): each read is what its rings gained since the previous. */
export interface LiveReads {
  readonly sessionId: string;
  readonly label: string;
  read(): Promise<LiveRead>;
  /** Stops following: the side-band taps close. */
  close(): void;
}

/** One live read, decoded and named by the session's symbol table (which learns its mappings as snapshots do). */
export interface LiveRead {
  readonly decoded: DecodedSnapshot;
  readonly symbols: FrameSymbols;
  /** Bytes written since the previous read and overwritten before they could be read. */
  readonly skippedBytes: bigint;
  readonly limitations: readonly string[];
  /** Reading the rings (no pause) and decoding, ms. */
  readonly readMs: number;
  readonly decodeMs: number;
}

/** Why a session cannot be followed live, for the page to say (null: it can). */
export function liveUnavailableReason(info: Pick<SessionInfo, 'kind' | 'state' | 'label'>, canFollow: boolean): string | null {
  if (info.state === 'stopped') return `"${info.label}" is stopped: nothing to follow`;
  if (info.kind === 'file') return 'an opened perf.data is not a recording';
  if (!canFollow || info.kind !== 'recording') {
    // A keeper drains its own side-band (MMAP, COMM) into its spool, so this window has no tap of its own on it.
    return `${info.kind === 'keeper' ? 'a kept recording' : 'borrowed rings'} cannot be followed live here (the process that owns the rings drains their side-band); Capture Snapshot shows it`;
  }
  return null;
}

/** How soon a session notices that the process owning its borrowed rings (a keeper) died. */
const OWNER_CHECK_MS = 1000;
/** How long after a recording starts its symbols are read ahead (a launched program has mapped its libraries by then, most of the time). */
const PREWARM_AFTER_MS = 300;

export interface SessionManagerOptions {
  readonly backend: Backend;
  /** Snapshots kept per session; the oldest are dropped beyond it. */
  retention?: number;
  readonly now?: () => number;
}

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly listeners = new Set<(change: SessionChange) => void>();
  private nextSessionNumber = 1;
  private disposed = false;
  retention: number;

  constructor(private readonly options: SessionManagerOptions) {
    this.retention = Math.max(1, options.retention ?? 10);
  }

  get backend(): Backend {
    return this.options.backend;
  }

  onDidChange(listener: (change: SessionChange) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].map((session) => this.info(session));
  }

  get(sessionId: string): SessionInfo {
    return this.info(this.session(sessionId));
  }

  /** The session a command without an explicit target acts on: the newest running one. */
  active(): SessionInfo | undefined {
    const running = [...this.sessions.values()].filter((s) => s.state !== 'stopped');
    const newest = running[running.length - 1];
    return newest ? this.info(newest) : undefined;
  }

  /** Live ring facts (no pause); empty once stopped. */
  ringStats(sessionId: string): readonly RingStatus[] {
    const session = this.session(sessionId);
    return session.source && session.state !== 'stopped' ? session.source.ringStats() : [];
  }

  events(sessionId: string) {
    const session = this.session(sessionId);
    return session.source?.events ?? session.snapshots[session.snapshots.length - 1]?.decoded.events ?? [];
  }

  /**
   * The breakpoint and watchpoint events of every session whose fds are open, whoever opened them (Start Recording, a
   * kept or borrowed recording, the editor's gutter): the kernel reserves a debug register for each when it is opened
   * and releases it at close, so a paused session or a disabled event still holds one; a stopped session does not.
   */
  breakpointHolders(): BreakpointHolder[] {
    const holders: BreakpointHolder[] = [];
    for (const session of this.sessions.values()) {
      if (!session.source || session.state === 'stopped' || !session.scope) continue;
      for (const [eventIndex, event] of session.source.events.entries()) {
        if (event.attr.type !== PerfType.BREAKPOINT) continue;
        const registers = session.placesOfEvent?.[eventIndex] ?? 1;
        holders.push({ sessionId: session.id, sessionLabel: session.label, eventIndex, name: event.name, scope: session.scope, registers });
      }
    }
    return holders;
  }

  async startRecording(options: RecordOptions & { readonly label?: string }): Promise<SessionInfo> {
    this.assertLive();
    const source = await this.backend.record(options);
    const label = options.label ? `${describeRecordTarget(options.target, source.childPid)} · ${options.label}` : describeTarget(options, source.childPid);
    const info = this.adopt('recording', label, source, recordScope(options.target, source.childPid));
    this.session(info.id).placesOfEvent = options.events.map((event) => 1 + (event.extraSites?.length ?? 0));
    this.prewarmSymbols(this.session(info.id));
    if (options.triggers && source.watchTriggers) {
      const session = this.session(info.id);
      const names = options.triggers.eventIndices.map((index) => options.events[index]?.name ?? `event ${index}`).join(', ');
      session.triggerWatch = source.watchTriggers(options.triggers, () => void this.snapshotOnTrigger(session, names));
    }
    return info;
  }

  /**
   * While the recording runs and nothing is asked of it, the session's symbols read kallsyms and the target's objects,
   * so the first Capture Snapshot does not wait for them. A moment after the start, when a launched program has mapped
   * its libraries; given up once a snapshot is taken or the session stops (that snapshot reads what it needs itself).
   */
  private prewarmSymbols(session: Session): void {
    const processesNow = session.source?.processesNow;
    if (!processesNow) return;
    const given = () => session.state === 'stopped' || session.snapshots.length > 0;
    const timer = setTimeout(() => {
      if (given()) return;
      let processes: readonly ProcessSideband[];
      try {
        processes = processesNow.call(session.source);
      } catch (error) {
        void error; // the target is gone or unreadable: the first snapshot says so, a warm-up has nothing to add
        return;
      }
      void session.symbols.prewarm(processes, given);
    }, PREWARM_AFTER_MS);
    timer.unref();
  }

  /** A trigger fired: the snapshot is taken like any other (it appears in the Sessions view), then the watch re-arms. */
  private async snapshotOnTrigger(session: Session, trigger: string): Promise<void> {
    try {
      if (session.state === 'stopped') return;
      await this.snapshot(session.id, undefined, trigger);
      this.emit(session, 'triggered');
    } catch (error) {
      // A session stopped while the trigger waited for its post time has nothing to take; any other
      // failure is the user's to know: the trigger fired and no snapshot holds it.
      if (session.state !== 'stopped')
        this.emitId(session.id, 'trigger-failed', `${trigger} fired, but its snapshot failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      session.triggerWatch?.rearm();
    }
  }

  async attachKeeper(state: KeeperState): Promise<SessionInfo> {
    this.assertLive();
    const source = await this.backend.attachKeeper(state);
    const target = state.target;
    const pid = target.kind === 'pid' ? target.pid : target.kind === 'launch' ? target.childPid : undefined;
    const scope: SessionScope | undefined = target.kind === 'cpus' ? { kind: 'cpus' } : pid !== undefined ? { kind: 'process', pid } : undefined;
    return this.adopt('keeper', `keeper ${state.pid}: ${state.events.map((e) => e.name).join(', ')}`, source, scope);
  }

  async borrow(pid: number, fd: number, hint: ForeignFdHint = {}, label?: string): Promise<SessionInfo> {
    this.assertLive();
    const source = await this.backend.borrowForeign(pid, fd, hint);
    return this.adopt('borrowed', label ?? `pid ${pid} fd ${fd}`, source);
  }

  /**
   * A perf.data file as a session with one snapshot and no rings. The file is read a step at a time, the event loop
   * served between steps (a Cancel is heard while a big file is read); `cancelled` is asked after every step and once
   * it is decoded: when it says so, reading stops there, nothing is added and OpenCancelled is thrown. `stage` is told
   * as each stage begins (for progress). `onRecords` is told of its records a part at a time while the file is read
   * (Backend.readPerfData), with the id its snapshot will have: when the parts are, in order, the snapshot's rows, the
   * snapshot gets that id; otherwise another (the parts were not its rows).
   */
  async openPerfData(
    file: string,
    cancelled?: () => boolean,
    stage?: (stage: PerfDataStage) => void,
    onRecords?: (part: DecodedSnapshot, snapshotId: string) => void,
  ): Promise<SessionInfo> {
    this.assertLive();
    const startedAt = performance.now();
    let current: PerfDataStage | undefined;
    const partsId = `file-${++this.openNumber}-${Math.random().toString(36).slice(2, 8)}`;
    const opened = await this.backend.readPerfData(
      file,
      async (next) => {
        if (next !== current) stage?.((current = next));
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (cancelled?.()) throw new OpenCancelled(file);
      },
      onRecords ? (part) => onRecords(part, partsId) : undefined,
    );
    if (cancelled?.()) throw new OpenCancelled(file);
    const { decoded, readMs, indexMs, orderMs, decodeMs, partsInOrder } = opened;
    const session = this.create('file', file.split('/').pop() ?? file);
    session.state = 'stopped';
    // A program rebuilt since the recording is named from perf's copy of the recorded build, or not at all, and the
    // timeline says which (as a recording's limitations are shown).
    session.symbols.expectBuildIds(opened.buildIds);
    const rebuilt = session.symbols.changedObjectNotes();
    this.addSnapshot(
      session,
      decoded,
      Date.now(),
      sizeOfRings(decoded),
      0,
      decodeMs,
      rebuilt,
      [],
      undefined,
      { startedAt, copyMs: 0, file: { readMs, indexMs, orderMs } },
      onRecords && partsInOrder ? partsId : undefined,
    );
    return this.info(session);
  }

  /** Numbers the opens of perf.data files (the ids of the snapshots they grow). */
  private openNumber = 0;

  /** Adds an already-open source (used by the tests and the keeper client); without `scope` (or a child pid to name it), its rings tell. */
  adopt(kind: SessionKind, label: string, source: RingSource, scope?: SessionScope): SessionInfo {
    const session = this.create(kind, label, source, scope ?? ringScope(source.ringStats()));
    if (source.exited) {
      // The target's exit does not close its rings: keep them readable until the user stops.
      source.exited.then(
        (how) => this.markExited(session, typeof how === 'string' ? how : undefined),
        () => {
          // how it ended could not be learnt (the wait itself failed): that it ended is still shown, without a cause
          this.markExited(session);
        },
      );
    }
    if (source.ownerAlive !== undefined) {
      session.ownerWatch = setInterval(() => {
        if (session.source !== source || source.ownerAlive !== false) return;
        clearInterval(session.ownerWatch);
        session.ownerWatch = undefined;
        session.ownerExited = true;
        source.ownerGone?.();
        this.emit(session, 'owner-exited');
      }, OWNER_CHECK_MS);
      session.ownerWatch.unref();
    }
    return this.info(session);
  }

  /** `cancelled` is asked after the copy and after decoding: when it says so, nothing is added and CaptureCancelled is thrown. */
  async snapshot(
    sessionId: string,
    progress?: (message: string, fraction: number) => void,
    trigger?: string,
    cancelled?: () => boolean,
  ): Promise<SnapshotEntry> {
    const session = this.session(sessionId);
    if (!session.source || session.state === 'stopped') throw new SessionError(`session "${session.label}" is stopped: nothing to snapshot`);
    // Two clicks while a big copy is running must not pause the rings twice.
    if (session.snapshotInFlight) return session.snapshotInFlight;
    const source = session.source;
    const work = (async () => {
      const startedAt = performance.now();
      progress?.('copying rings', 0);
      const raw: SourceSnapshot = await source.snapshot();
      const copyMs = performance.now() - startedAt;
      const sizeBytes = raw.rings.reduce((sum, ring) => sum + ring.validBytes, 0);
      if (cancelled?.()) throw new CaptureCancelled(session.label);
      progress?.(`decoding ${formatBytes(sizeBytes)}`, 0.3);
      const decodeStart = performance.now();
      const decoded = await this.backend.decode(raw);
      const decodeMs = performance.now() - decodeStart;
      if (cancelled?.()) throw new CaptureCancelled(session.label);
      progress?.(`${decoded.columns.length} records`, 1);
      const maxPauseNs = raw.pauseWindowNs.reduce((max, ns) => Math.max(max, ns), 0);
      // What this snapshot lost (rings that overwrote the start, side-band not spooled) joins the recording's limitations.
      const losses = describeLosses(decoded, raw, { pageBytes: pageSize(), pagesOption: 'ringside.bufferPages' });
      const limitations = [...(raw.limitations ?? []), ...losses.notes];
      return this.addSnapshot(session, decoded, raw.takenAtMs, sizeBytes, maxPauseNs, decodeMs, limitations, raw.processes ?? [], trigger, {
        startedAt,
        copyMs,
      });
    })();
    session.snapshotInFlight = work;
    try {
      return await work;
    } finally {
      session.snapshotInFlight = undefined;
    }
  }

  /**
   * Follows a running recording live: reads what its rings gained since the previous read (no pause, no re-read of
   * what was read before), decodes it and names it through the session's symbol table. Throws a SessionError saying
   * why when the session cannot be followed (liveUnavailableReason).
   */
  follow(sessionId: string): LiveReads {
    const session = this.session(sessionId);
    const source = session.source;
    const why = liveUnavailableReason(this.info(session), source?.followLive !== undefined);
    if (why !== null || !source?.followLive) throw new SessionError(why ?? `"${session.label}" cannot be followed live`);
    const follower = source.followLive();
    // /proc of a launched command or one process is a few reads; of every process (-a) thousands: read once, after
    // which the side-band names what starts and maps code (as capture --follow does).
    const everyProcess = session.scope?.kind === 'cpus';
    let reads = 0;
    const decode = (raw: SourceSnapshot) => (this.backend.decodeIncrement ? this.backend.decodeIncrement(raw) : this.backend.decode(raw));
    return {
      sessionId: session.id,
      label: session.label,
      read: async (): Promise<LiveRead> => {
        const started = performance.now();
        const raw = follower.read();
        const decodeStart = performance.now();
        const decoded = await decode(raw);
        const processes = reads === 0 || !everyProcess ? (source.processesNow?.() ?? []) : [];
        reads++;
        session.symbols.learn(decoded, processes);
        return {
          decoded: session.symbols.withValueReaders(decoded),
          symbols: session.symbols.frames,
          skippedBytes: raw.skippedBytes,
          limitations: raw.limitations ?? [],
          readMs: decodeStart - started,
          decodeMs: performance.now() - decodeStart,
        };
      },
      close: () => follower.close(),
    };
  }

  /** Resolves when the session's launched target has exited (at once if it already has). */
  whenTargetExited(sessionId: string): Promise<void> {
    const session = this.session(sessionId);
    if (session.targetExited) return Promise.resolve();
    return new Promise((resolve) => {
      const subscription = this.onDidChange((change) => {
        if (change.sessionId === sessionId && (change.what === 'target-exited' || change.what === 'removed')) {
          subscription.dispose();
          resolve();
        }
      });
    });
  }

  pause(sessionId: string): void {
    const session = this.session(sessionId);
    if (session.state !== 'running' || !session.source) return;
    session.source.pause();
    session.state = 'paused';
    this.emit(session, 'state');
  }

  resume(sessionId: string): void {
    const session = this.session(sessionId);
    if (session.state !== 'paused' || !session.source) return;
    session.source.resume();
    session.state = 'running';
    this.emit(session, 'state');
  }

  /** ioctl ENABLE/DISABLE on every fd of one event (watch controls). */
  setEventEnabled(sessionId: string, eventIndex: number, enabled: boolean): void {
    const source = this.liveSource(sessionId);
    if (!source.setEventEnabled) throw new SessionError("this session's rings were borrowed: their owner decides what is enabled");
    source.setEventEnabled(eventIndex, enabled);
    this.emit(this.session(sessionId), 'state');
  }

  /** PERF_EVENT_IOC_MODIFY_ATTRIBUTES on every fd of one event (move a breakpoint without reopening). */
  modifyEvent(sessionId: string, eventIndex: number, attr: EventDescription['attr']): void {
    const source = this.liveSource(sessionId);
    if (!source.modifyEvent) throw new SessionError("this session's rings were borrowed: their owner decides their attributes");
    source.modifyEvent(eventIndex, attr);
    this.emit(this.session(sessionId), 'state');
  }

  private liveSource(sessionId: string): RingSource {
    const session = this.session(sessionId);
    if (!session.source || session.state === 'stopped') throw new SessionError(`session "${session.label}" is stopped`);
    return session.source;
  }

  /** Closes the rings (fds, mappings); snapshots stay browsable until the session is removed. */
  async stop(sessionId: string): Promise<void> {
    const session = this.session(sessionId);
    if (session.ownerWatch) clearInterval(session.ownerWatch);
    session.triggerWatch?.stop();
    session.triggerWatch = undefined;
    if (session.snapshotInFlight)
      await session.snapshotInFlight.catch(() => {
        // the snapshot's failure reaches whoever awaits it; stopping only waits for it to settle
      });
    if (session.source) {
      const source = session.source;
      session.source = undefined;
      source.dispose();
    }
    if (session.state !== 'stopped') {
      session.state = 'stopped';
      this.emit(session, 'stopped');
    }
  }

  async remove(sessionId: string): Promise<void> {
    await this.stop(sessionId);
    this.sessions.delete(sessionId);
    this.emitId(sessionId, 'removed');
  }

  snapshotById(snapshotId: string): SnapshotEntry {
    for (const session of this.sessions.values()) {
      const found = session.snapshots.find((s) => s.id === snapshotId);
      if (found) return found;
    }
    throw new SessionError(`no snapshot ${snapshotId} (deleted, or dropped by the retention setting)`);
  }

  allSnapshots(): SnapshotEntry[] {
    return [...this.sessions.values()].flatMap((s) => s.snapshots);
  }

  deleteSnapshot(snapshotId: string): void {
    const entry = this.snapshotById(snapshotId);
    const session = this.session(entry.sessionId);
    session.snapshots = session.snapshots.filter((s) => s.id !== snapshotId);
    this.emit(session, 'snapshot-deleted');
  }

  async exportSnapshot(snapshotId: string, format: ExportFormat, file: string): Promise<void> {
    const entry = this.snapshotById(snapshotId);
    switch (format) {
      case 'perf.data':
        await this.backend.writePerfData(entry.decoded, file);
        return;
      case 'jsonl': {
        const lines: string[] = [];
        for (let row = 0; row < entry.decoded.columns.length; row++) lines.push(this.backend.recordJson(entry.decoded, row));
        // Like every output: mode 0600 (addresses, comms, command lines), whole or not at all.
        writeFileAtomic(file, lines.length ? lines.join('\n') + '\n' : '');
        return;
      }
      case 'html':
        await this.backend.writeHtml(entry.decoded, file, entry.symbols);
        return;
    }
  }

  setRetention(retention: number): void {
    this.retention = Math.max(1, Math.floor(retention));
    for (const session of this.sessions.values()) this.trim(session);
  }

  /** Stops every session: all fds, mappings and timers are released. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const id of [...this.sessions.keys()])
      await this.stop(id).catch(() => {
        // stop reports its own failures to the user; dispose goes on stopping the rest
      });
    this.sessions.clear();
    this.listeners.clear();
    await this.backend.close?.();
  }

  private create(kind: SessionKind, label: string, source?: RingSource, scope?: SessionScope): Session {
    const id = `s${this.nextSessionNumber++}`;
    const session: Session = {
      id,
      kind,
      label: distinctLabel(
        label,
        [...this.sessions.values()].map((s) => s.label),
      ),
      source,
      ...(scope ? { scope } : {}),
      startedAtMs: this.now(),
      state: 'running',
      targetExited: false,
      ownerExited: false,
      ...(source?.childPid !== undefined ? { childPid: source.childPid } : {}),
      snapshots: [],
      symbols: new SnapshotSymbols(),
    };
    this.sessions.set(id, session);
    this.emit(session, 'started');
    return session;
  }

  private addSnapshot(
    session: Session,
    decoded: DecodedSnapshot,
    takenAtMs: number,
    sizeBytes: number,
    maxPauseNs: number,
    decodeMs: number,
    limitations: readonly string[] = [],
    processes: readonly ProcessSideband[] = [],
    trigger?: string,
    timing?: Pick<SnapshotStages, 'startedAt' | 'copyMs' | 'file'>,
    id?: string,
  ): SnapshotEntry {
    // Mappings from /proc at snapshot time and from the side-band (a perf.data file's MMAP2 records) name its IPs.
    const learnStarted = performance.now();
    session.symbols.learn(decoded, processes);
    // Files replaced on disk whose running copy this user cannot read: why their frames have no names.
    const unnamed = session.symbols.replacedFileNotes();
    const learnMs = performance.now() - learnStarted;
    let name = formatClock(takenAtMs);
    // Two snapshots in the same millisecond still need distinct names.
    for (let n = 2; session.snapshots.some((s) => s.name === name); n++) name = `${formatClock(takenAtMs)} (${n})`;
    // A logpoint's records carry the values read from their registers and stack (details drawer, JSON Lines, the editor's line).
    const withValues = session.symbols.withValueReaders(decoded);
    const entry: SnapshotEntry = {
      id: id ?? `${session.id}-${takenAtMs}-${session.snapshots.length + 1}-${Math.random().toString(36).slice(2, 8)}`,
      name,
      sessionId: session.id,
      takenAtMs,
      decoded: withValues,
      sizeBytes,
      recordCount: decoded.columns.length,
      maxPauseNs,
      decodeMs,
      limitations: unnamed.length ? [...limitations, ...unnamed] : limitations,
      symbols: session.symbols.frames,
      ...(trigger !== undefined ? { trigger } : {}),
      ...(timing ? { stages: { ...timing, decodeMs, learnMs } } : {}),
    };
    session.snapshots.push(entry);
    this.trim(session);
    this.emit(session, 'snapshot');
    return entry;
  }

  private trim(session: Session): void {
    if (session.snapshots.length > this.retention) session.snapshots.splice(0, session.snapshots.length - this.retention);
  }

  private markExited(session: Session, how?: string): void {
    if (session.targetExited) return;
    session.targetExited = true;
    if (how) session.targetExit = how;
    this.emit(session, 'target-exited');
  }

  private session(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw new SessionError(`no session ${sessionId}`);
    return session;
  }

  private info(session: Session): SessionInfo {
    return {
      id: session.id,
      kind: session.kind,
      label: session.label,
      state: session.state,
      startedAtMs: session.startedAtMs,
      targetExited: session.targetExited,
      ...(session.childPid !== undefined ? { childPid: session.childPid } : {}),
      limitations: session.source?.limitations ?? [],
      ownerExited: session.ownerExited,
      ...(session.targetExit ? { targetExit: session.targetExit } : {}),
      snapshots: [...session.snapshots],
    };
  }

  private emit(session: Session, what: SessionChange['what']): void {
    this.emitId(session.id, what);
  }

  private emitId(sessionId: string, what: SessionChange['what'], detail?: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener({ sessionId, what, ...(detail !== undefined ? { detail } : {}) });
      } catch {
        // A broken view must not break recording.
      }
    }
  }

  private assertLive(): void {
    if (this.disposed) throw new SessionError('Ringside is shutting down');
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * What the timeline calls a capture: an opened perf.data by its file name (its session's label), a live snapshot by its
 * session and the clock time it was taken (unique within the session).
 */
export function captureName(session: Pick<SessionInfo, 'kind' | 'label'> | undefined, snapshot: Pick<SnapshotEntry, 'name'>): string {
  if (!session) return snapshot.name;
  return session.kind === 'file' ? session.label : `${session.label} · ${snapshot.name}`;
}

/** Arguments of a launched command shown in its session's name, at most this many characters. */
const SHOWN_ARGS = 32;

/**
 * What a recording watches, short enough for the Sessions view and a quick pick: a launched command by its program's
 * name, arguments and pid (`demo 500 (pid 4242)`, never its full path, which two sessions share and the view cuts
 * off), a process by pid, or the CPUs.
 */
export function describeRecordTarget(target: RecordOptions['target'], childPid?: number): string {
  switch (target.kind) {
    case 'pid':
      return `pid ${target.pid}`;
    case 'cpus':
      return target.cpus ? `cpus ${target.cpus.join(',')}` : 'all CPUs';
    case 'launch': {
      const program = (target.argv[0] ?? '').split('/').pop() ?? '';
      const args = target.argv.slice(1).join(' ');
      const shown = args.length > SHOWN_ARGS ? `${args.slice(0, SHOWN_ARGS - 1)}…` : args;
      return `${program}${shown ? ` ${shown}` : ''}${childPid !== undefined ? ` (pid ${childPid})` : ''}`;
    }
  }
}

/** The scope of a recording: a launched command's or a process's threads, or the CPUs. */
function recordScope(target: RecordOptions['target'], childPid?: number): SessionScope | undefined {
  switch (target.kind) {
    case 'pid':
      return { kind: 'process', pid: target.pid };
    case 'cpus':
      return { kind: 'cpus' };
    case 'launch':
      return childPid !== undefined ? { kind: 'process', pid: childPid } : undefined;
  }
}

/**
 * The scope rings tell when nothing else does (borrowed rings): a ring of a task (tid ≥ 0) binds its events to that
 * task, whose id stands for its process (right for a process's main thread, the ring a launched or -p recording owns);
 * a ring of a CPU alone (tid -1) binds them to the CPUs.
 */
function ringScope(rings: readonly RingStatus[]): SessionScope | undefined {
  const task = rings.find((ring) => ring.tid >= 0);
  if (task) return { kind: 'process', pid: task.tid };
  return rings.length ? { kind: 'cpus' } : undefined;
}

/** A recording's name: its target (describeRecordTarget), then its events. */
export function describeTarget(options: RecordOptions, childPid?: number): string {
  return `${describeRecordTarget(options.target, childPid)}: ${options.events.map((e) => e.name).join(', ')}`;
}

/** `label`, or `label (2)`, `label (3)`... when sessions already have it: two sessions are never named alike. */
export function distinctLabel(label: string, taken: readonly string[]): string {
  let name = label;
  for (let n = 2; taken.includes(name); n++) name = `${label} (${n})`;
  return name;
}

function sizeOfRings(decoded: DecodedSnapshot): number {
  return decoded.rings.reduce((sum, ring) => sum + ring.validBytes, 0);
}

export function formatClock(ms: number): string {
  const date = new Date(ms);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}
