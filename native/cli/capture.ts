// `ringside capture` and the trigger loop around a Recorder: snapshot when the launched command
// exits (before its events are closed), on SIGUSR2 (repeatable), after --duration, on Ctrl-C, or
// when an attached pid exits, so a target that dies mid-capture loses nothing.

import { readFileSync, existsSync } from 'node:fs';
import type { CaptureOptions } from './args';
import { UsageError } from './args';
import type { DecodedSnapshot } from '../decode/types';
import type { ResolvedEvent } from '../abi/snapshot';
import { expandEventSpecs, resolveEventSpec } from '../specs/resolve';
import { chooseLineProbes } from '../specs/line-probe';
import { breakpointDelivery } from '../perf/breakpoint-delivery';
import { readPerfAccess } from '../sys/access';
import { constants as osConstants } from 'node:os';
import { Recorder, type RecorderTarget } from '../perf/recorder';
import { FollowOrder, type RingFollower } from '../perf/follow';
import { formatBytes } from '../abi/units';
import { describeExit, shellStatus } from '../perf/launch';
import { DecodePool } from '../decode-pool/pool';
import { allocateDecodableCopy } from '../decode/wasm/copy-room';
import { lazyTargetSymbols, resolveExecutable } from '../symbols/target';
import { SnapshotWriter, cliLosses, snapshotLimitations, summarizeSnapshot } from './output';
import { TriggerWatcher } from '../perf/trigger-watcher';
import { onExitSignal, writeTriggeredSnapshot } from './triggers';
import { checkWritableDirectory, checkWritableFile } from '../sys/writable';

export interface PreparedCapture {
  readonly events: ResolvedEvent[];
  /** What resolving the specs decided for the user (watch lengths, user space only, lines in several places). */
  readonly notes: readonly string[];
  /** Indices in `events` of the --snapshot-on events. */
  readonly triggerIndices: readonly number[];
  readonly executable?: string;
  readonly expectedLoadBase?: bigint;
}

export function prepareEvents(options: CaptureOptions): PreparedCapture {
  const target = options.target;
  if (target.kind === 'pid' && !existsSync(`/proc/${target.pid}`)) throw new UsageError(`-p ${target.pid}: no such process`);
  // Where the result goes is checked before anything runs: a recording that cannot be written is lost.
  if (options.output !== undefined && options.output !== '-') checkWritableFile(options.output, '-o');
  if (options.snapshotDir !== undefined) checkWritableDirectory(options.snapshotDir, '--snapshot-dir');
  const executable = target.kind === 'launch' ? resolveExecutable(target.argv[0]) : undefined;
  const lazy = target.kind === 'launch' ? lazyTargetSymbols({ executable }) : target.kind === 'pid' ? lazyTargetSymbols({ pid: target.pid }) : undefined;
  // Globs (syscalls:sys_enter_*) become the tracepoints they match, as perf record opens them.
  const recorded = expandEventSpecs(options.events.length > 0 ? options.events : [target.kind === 'cpus' ? 'cpu-clock' : 'task-clock']);
  const triggers = expandEventSpecs(options.snapshotOn);
  // A trigger is recorded like any event (its record belongs in the snapshot), once even if also given with -e.
  const specs = [...recorded, ...triggers.filter((spec) => !recorded.includes(spec))];
  const triggerIndices = triggers.map((spec) => specs.indexOf(spec));
  const context = { symbols: lazy?.symbols, period: options.period, freq: options.freq, callchain: options.callGraph };
  // A source-line breakpoint on a host whose breakpoints are silent is counted by uprobes where they may be opened.
  const resolved = chooseLineProbes(
    specs.map((spec) => resolveEventSpec(spec, context)),
    context,
    { delivery: breakpointDelivery, access: readPerfAccess },
  );
  const notes = resolved.flatMap((event) => event.notes.map((note) => `${event.name}: ${note}`));
  const events: ResolvedEvent[] = resolved;
  // Set only when a spec placed symbols at the predicted base: then the launch must verify it.
  const expectedLoadBase = target.kind === 'launch' ? lazy?.loadBase() : undefined;
  return { events, notes, triggerIndices, executable, expectedLoadBase };
}

export async function runCapture(options: CaptureOptions): Promise<number> {
  const prepared = prepareEvents(options);
  // Caught from before the command is launched: a Ctrl-C while the rings are set up (the command already running)
  // ends the capture with its snapshot, as one a moment later does, instead of killing Ringside with nothing written.
  const stops = new StopSignals();
  try {
    return await captureWith(options, prepared, stops);
  } finally {
    stops.dispose();
  }
}

async function captureWith(options: CaptureOptions, prepared: PreparedCapture, stops: StopSignals): Promise<number> {
  if (!options.quiet) for (const note of prepared.notes) process.stderr.write(`ringside: ${note}\n`);
  // Per-CPU rings decode on worker threads when the machine has more than one core and a snapshot
  // is big enough to pay for it (DecodePool.usesWorkers); the rings are then copied into shared
  // memory, which the workers read in place.
  const pool = new DecodePool();
  const recorder = await Recorder.open({
    events: prepared.events,
    target: recorderTarget(options, prepared),
    pages: options.pages,
    gapFree: options.gapFree,
    sideband: options.sideband,
    warmCopyBuffers: options.warmCopy,
    sharedCopyBuffers: pool.workerCount > 0,
    // A ring decoded on its own is decoded where it was copied, by the WebAssembly loop.
    allocateCopy: allocateDecodableCopy,
    // A trigger's ring holds only its own records, so a moving data_head means it fired.
    ownRing: prepared.triggerIndices,
    ...(options.windowSec !== undefined ? { windowSec: options.windowSec } : {}),
  });
  // What the recording cannot see is said before it runs (as perf warns when it falls back), and again in each summary.
  if (!options.quiet) for (const limitation of recorder.limitations) process.stderr.write(`ringside: ${limitation}\n`);
  const writer = new SnapshotWriter(options);
  let snapshots = 0;
  const follow = options.follow ? new FollowLoop(recorder, pool, writer, options.follow.intervalMs, options.target.kind === 'cpus') : undefined;
  try {
    const take = async (reason: string) => {
      if (follow) {
        // Following: SIGUSR2 reads at once; the end reads what is left, and says what was followed.
        const end = !reason.startsWith('SIGUSR2');
        await follow.readNow(end);
        if (!options.quiet && end) process.stderr.write(follow.summary(reason));
        return;
      }
      const raw = recorder.snapshot();
      const decoded: DecodedSnapshot = await pool.decode(raw);
      snapshots++;
      const losses = cliLosses(raw, decoded);
      await writer.write(decoded, raw.processes, snapshotLimitations(raw, losses));
      if (!options.quiet) process.stderr.write(summarizeSnapshot(snapshots, reason, raw, decoded, losses) + writer.logpointSummary(decoded));
      if (!options.quiet) for (const note of writer.replacedFileNotes()) process.stderr.write(`ringside: ${note}\n`);
    };
    let triggered = 0;
    // A triggered snapshot goes to a file of its own and takes nothing from -o's: its moments are in the next regular snapshot too.
    const takeTriggered = async (reason: string) => {
      const { file, records, losses } = await writeTriggeredSnapshot(() => recorder.peekSnapshot(), options.snapshotDir!, ++triggered);
      if (!options.quiet)
        process.stderr.write(`ringside: ${reason}: wrote ${file} (${records} records${losses.overwritten ? `; ${losses.overwritten}` : ''})\n`);
    };
    // A timed follow read that fails (stdout closed, a full disk) ends the capture now, through the same last read that rethrows it.
    const watchFollow = follow ? (end: (reason: string) => void) => follow.onFailure(() => end('a follow read failed')) : undefined;
    return await waitForTriggers(options, recorder, take, prepared, stops, takeTriggered, watchFollow);
  } finally {
    follow?.stop();
    // A capture that failed part way still ends the group it launched (at once when it is gone already).
    try {
      if (!options.leaveRunning) await recorder.endLaunched(LAUNCHED_GRACE_MS);
    } finally {
      recorder.dispose();
      await pool.close();
      await writer.close();
    }
  }
}

/**
 * `capture --follow`: every `intervalMs`, what the rings gained since the previous read (RingFollower),
 * decoded and written as JSON Lines. One read at a time: a read that takes longer than the interval
 * delays the next one instead of queueing reads behind it (the rings hold what comes meanwhile).
 */
class FollowLoop {
  private readonly follower: RingFollower;
  /** Reads overlap by the microseconds their heads are read apart: lines are released in time order. */
  private readonly order = new FollowOrder<string>();
  private readonly saidAtStart: ReadonlySet<string>;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  private reads = 0;
  private records = 0;
  private skippedBytes = 0n;
  private readsSkipping = 0;
  private failure: unknown;

  constructor(
    private readonly recorder: Recorder,
    private readonly pool: DecodePool,
    private readonly writer: SnapshotWriter,
    private readonly intervalMs: number,
    private readonly everyProcess: boolean,
  ) {
    this.follower = recorder.follow({ fromStart: true });
    this.saidAtStart = new Set(recorder.limitations);
    this.timer = setInterval(() => {
      if (!this.busy) void this.readNow(false).catch((error: unknown) => this.fail(error));
    }, intervalMs);
  }

  private failed: (() => void) | undefined;

  /** `failed` runs once, when a timed read fails (the failure is rethrown by the next readNow). */
  onFailure(failed: () => void): void {
    this.failed = failed;
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    clearInterval(this.timer);
    this.failed?.();
  }

  /** Reads now (after a read in progress), and rethrows the first failure of a timed read; `final` writes everything held back. */
  readNow(final = false): Promise<void> {
    if (final) clearInterval(this.timer); // nothing is read after the last read
    this.running = this.running.then(() => this.readOnce(final));
    return this.running.then(() => {
      if (this.failure !== undefined) throw this.failure;
    });
  }

  private async readOnce(final: boolean): Promise<void> {
    if (this.failure !== undefined) return;
    this.busy = true;
    try {
      const read = this.follower.read();
      const decoded = await this.pool.decode(read);
      // /proc of a launched command or one process is a few reads; of every process (-a) it is thousands: read once,
      // after which the side-band names what starts and maps code.
      const procState = this.reads === 0 || !this.everyProcess ? this.recorder.processesNow() : [];
      this.records += await this.writer.writeFollowed(decoded, procState, (lines) => this.order.take(lines, read.cutSpreadNs, final));
      this.reads++;
      if (read.skippedBytes > 0n) {
        this.skippedBytes += read.skippedBytes;
        this.readsSkipping++;
      }
    } finally {
      this.busy = false;
    }
  }

  summary(reason: string): string {
    // What the recording learned while it ran (a resize and why) was not said at the start.
    const lines = this.recorder.limitations.filter((note) => !this.saidAtStart.has(note)).map((note) => `ringside: ${note}\n`);
    lines.push(`ringside: followed ${this.records.toLocaleString('en-US')} records in ${this.reads} reads, one every ${this.intervalMs} ms, until ${reason}\n`);
    if (this.skippedBytes > 0n) {
      lines.push(
        `ringside: ${formatBytes(Number(this.skippedBytes))} were overwritten before they could be read (in ${this.readsSkipping} of ${this.reads} reads): ` +
          `the rings filled faster than --follow=${this.intervalMs} read them; give --pages more, or a shorter interval\n`,
      );
    }
    return lines.join('');
  }

  stop(): void {
    clearInterval(this.timer);
    this.follower.close();
  }
}

/** JSON Lines on stdout must stay parseable: a launched command's stdout then goes to our stderr. */
export function recorderTarget(options: CaptureOptions, prepared: PreparedCapture): RecorderTarget {
  const target = options.target;
  if (target.kind === 'pid') return { kind: 'pid', pid: target.pid };
  if (target.kind === 'cpus') return { kind: 'cpus' };
  const stdoutIsData = options.command === 'capture' && options.format === 'jsonl' && (!options.output || options.output === '-');
  return {
    kind: 'launch',
    argv: [prepared.executable ?? target.argv[0], ...target.argv.slice(1)],
    stdio: options.command === 'keep' ? 'ignore' : stdoutIsData ? ['inherit', 2, 'inherit'] : 'inherit',
    ...(options.command === 'capture' && options.leaveRunning ? { outlive: true } : {}),
  };
}

/** Signals that end a capture: each takes a final snapshot first. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The stop signals of one capture, caught from its start: the first one is kept until someone listens. */
class StopSignals {
  private first: NodeJS.Signals | undefined;
  private listener: ((signal: NodeJS.Signals) => void) | undefined;
  private readonly handler = (signal: NodeJS.Signals): void => {
    if (this.listener) this.listener(signal);
    else this.first ??= signal;
  };

  constructor() {
    for (const signal of STOP_SIGNALS) process.on(signal, this.handler);
  }

  /** `listener` is told of every stop signal from now on, and at once of one that came before. */
  listen(listener: ((signal: NodeJS.Signals) => void) | undefined): void {
    this.listener = listener;
    if (listener && this.first !== undefined) {
      const signal = this.first;
      this.first = undefined;
      listener(signal);
    }
  }

  dispose(): void {
    for (const signal of STOP_SIGNALS) process.off(signal, this.handler);
  }
}
/** How long a launched command gets between SIGTERM and SIGKILL when the capture ends before it does. */
const LAUNCHED_GRACE_MS = 2000;

type Trigger =
  | { kind: 'snapshot'; reason: string }
  /** A --snapshot-on event fired: the snapshot goes to a new file in --snapshot-dir. */
  | { kind: 'triggered'; reason: string }
  /** `status`: the exit status of the capture; `endLaunched`: the launched command still runs and is ended. */
  | { kind: 'done'; reason: string; status: number; endLaunched: boolean };

/**
 * Takes snapshots as triggers arrive and returns the capture's exit status: the launched command's
 * own status (128 + N when signal N killed it, as shells report), 128 + N when signal N stopped the
 * capture, else 0. A capture that ends before its launched command ends that command (SIGTERM, then
 * SIGKILL after a grace period) unless --leave-running, so nothing Ringside started outlives it.
 */
async function waitForTriggers(
  options: CaptureOptions,
  recorder: Recorder,
  take: (reason: string) => Promise<void>,
  prepared: PreparedCapture,
  stops: StopSignals,
  takeTriggered: (reason: string) => Promise<void> = take,
  /** Given a way to end the capture (as --duration does), by something outside these triggers. */
  endOn?: (end: (reason: string) => void) => void,
): Promise<number> {
  const queue: Trigger[] = [];
  let wake: (() => void) | undefined;
  const push = (trigger: Trigger) => {
    queue.push(trigger);
    wake?.();
  };
  endOn?.((reason) => push({ kind: 'done', reason, status: 1, endLaunched: true }));
  const onUsr2 = () => push({ kind: 'snapshot', reason: 'SIGUSR2' });
  // A launched command runs in a process group of its own, so Ctrl-C reaches only Ringside: the
  // snapshot is taken, then the command's whole group is ended (unless --leave-running).
  const onStop = (signal: NodeJS.Signals) => push({ kind: 'done', reason: signal, status: 128 + (osConstants.signals[signal] ?? 0), endLaunched: true });
  process.on('SIGUSR2', onUsr2);
  stops.listen(onStop);
  const watcher =
    prepared.triggerIndices.length > 0
      ? new TriggerWatcher(
          () => recorder.backwardRings,
          {
            eventIndices: prepared.triggerIndices,
            postSec: options.postSec,
            minIntervalSec: options.minIntervalSec,
          },
          () => push({ kind: 'triggered', reason: `trigger ${options.snapshotOn.join(', ')}` }),
        )
      : undefined;
  watcher?.start();
  const target = options.target;
  const timers: NodeJS.Timeout[] = [];
  if (options.durationSec !== undefined) {
    timers.push(setTimeout(() => push({ kind: 'done', reason: `${options.durationSec}s elapsed`, status: 0, endLaunched: true }), options.durationSec * 1000));
  }
  if (target.kind === 'launch') {
    // Registered first, so a crash's triggered snapshot is queued before the final one.
    if (options.snapshotOnExitSignal) onExitSignal(recorder, (reason) => push({ kind: 'triggered', reason }));
    void recorder.exitStatus?.then((exit) => {
      push({ kind: 'done', reason: `command ${describeExit(exit)}`, status: shellStatus(exit), endLaunched: false });
    });
    // Symbol addresses were computed before exec from the predicted load base: if the kernel put the
    // binary elsewhere the breakpoints watch the wrong bytes, so say it loudly and stop.
    // A non-PIE executable (load bias 0) cannot move; only a PIE's base depends on ASLR being off.
    if (prepared.expectedLoadBase !== undefined && prepared.expectedLoadBase !== 0n && prepared.executable) {
      try {
        recorder.verifyLoadBase(prepared.executable, prepared.expectedLoadBase);
      } catch (error) {
        // A command that already exited has no maps left to check; anything else is a real mismatch.
        const maps = `/proc/${recorder.childPid}/maps`;
        if (existsSync(maps) && readFileSync(maps, 'utf8').length > 0) throw error;
      }
    }
  } else if (target.kind === 'pid') {
    // Poll rather than wait on a pidfd: the rings stay readable after the target exits, so a late
    // detection only delays the snapshot, it never loses records.
    const pid = target.pid;
    timers.push(
      setInterval(() => {
        if (!existsSync(`/proc/${pid}`)) push({ kind: 'done', reason: `pid ${pid} exited`, status: 0, endLaunched: false });
      }, 200),
    );
  }
  try {
    for (;;) {
      while (queue.length === 0)
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      const trigger = queue.shift()!;
      if (trigger.kind === 'triggered') {
        await takeTriggered(trigger.reason);
        watcher?.rearm();
        continue;
      }
      await take(trigger.reason);
      if (trigger.kind === 'snapshot') continue;
      if (target.kind === 'launch' && !options.leaveRunning) {
        // Also when the command exited by itself: what it forked and left running is ended with it.
        const exit = await recorder.endLaunched(LAUNCHED_GRACE_MS);
        if (trigger.endLaunched && exit && !options.quiet) {
          process.stderr.write(`ringside: ended the launched command (pid ${recorder.childPid}): ${describeExit(exit)}\n`);
        }
      }
      return trigger.status;
    }
  } finally {
    watcher?.stop();
    for (const timer of timers) clearTimeout(timer);
    process.off('SIGUSR2', onUsr2);
    stops.listen(undefined);
  }
}
