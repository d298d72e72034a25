// `ringside keep`: events that outlive the editor. Opens the flight recorder like `capture`, then
// holds the rings and publishes what it holds (native/keeper) until SIGTERM/SIGINT; the extension,
// `ringside snapshot` and `ringside list` attach with pidfd_getfd and map the SAME rings.

import type { CaptureOptions, ListOptions, SnapshotOptions } from './args';
import { prepareEvents, recorderTarget } from './capture';
import { runKeeperUntilSignal } from '../keeper/keeper';
import { attachKeeperRings } from '../keeper/attach';
import { keeperStateDir, keeperStateDirs, listKeeperStates, type KeeperRetiredRing, type KeeperState } from '../keeper/state';
import type { RingStatus } from '../perf/borrowed';
import { SnapshotWriter, cliLosses, snapshotLimitations, summarizeSnapshot } from './output';
import { describePruning, pruneSideband, type SidebandPruning } from '../decode/sideband-prune';
import { DecodePool } from '../decode-pool/pool';
import { TriggerWatcher } from '../perf/trigger-watcher';
import { onExitSignal, writeTriggeredSnapshot, type TriggeredSnapshot } from './triggers';

export async function runKeep(options: CaptureOptions): Promise<number> {
  // A keeper outlives whoever started it: once its stderr's reader is gone (a pipe whose reader
  // exited; a hung-up terminal under nohup), a write fails (EPIPE, EIO), and an unhandled stream
  // error would end the keeper.
  process.stderr.on('error', () => undefined);
  const prepared = prepareEvents(options);
  const triggers = prepared.triggerIndices;
  const log = (line: string) => process.stderr.write(line + '\n');
  return runKeeperUntilSignal(
    {
      events: prepared.events,
      target: recorderTarget(options, prepared),
      pages: options.pages,
      ...(options.windowSec !== undefined ? { windowSec: options.windowSec } : {}),
      // A trigger's ring holds only its own records, so a moving data_head means it fired.
      ...(triggers.length ? { ownRing: triggers } : {}),
    },
    log,
    triggers.length === 0 && !options.snapshotOnExitSignal
      ? undefined
      : (keeper) => {
          // The keeper takes its triggered snapshots itself, so they are written with nobody attached. It
          // takes them as its clients do: its side-band lives in its spools, which the recorder no longer holds.
          let written = 0;
          const write = (reason: string) =>
            writeTriggeredSnapshot(() => keeperSnapshot(keeper.state, true).snapshot, options.snapshotDir!, ++written)
              .then(({ file, records }) => {
                if (!options.quiet) log(`ringside: ${reason}: wrote ${file} (${records} records)`);
              })
              .catch((error: unknown) => log(`ringside: a triggered snapshot failed: ${error instanceof Error ? error.message : String(error)}`));
          // The launched command's events stay open after it died: the rings hold the moments before.
          if (options.snapshotOnExitSignal) onExitSignal(keeper.recorder, (reason) => void write(reason));
          if (triggers.length === 0) return () => undefined;
          const watcher: TriggerWatcher = new TriggerWatcher(
            () => keeper.recorder.backwardRings,
            { eventIndices: triggers, postSec: options.postSec, minIntervalSec: options.minIntervalSec },
            () => void write(`trigger ${options.snapshotOn.join(', ')}`).finally(() => watcher.rearm()),
          );
          watcher.start();
          return () => watcher.stop();
        },
  );
}

/**
 * The live keepers of this user, in every state directory of theirs (a fallback included). What dead
 * keepers left there (killed with SIGKILL: state file, leases, spools, log) is removed on the way.
 */
function liveKeepers(): KeeperState[] {
  return listKeeperStates({ pruneDead: true }).flatMap((listed) => (listed.state && listed.alive ? [listed.state] : []));
}

/** Where the state files were looked for, for a message saying none was found. */
function searchedStateDirs(): string {
  const dirs = keeperStateDirs();
  return dirs.length > 0 ? dirs.join(', ') : keeperStateDir();
}

/** One snapshot of a running keeper's rings, written like a capture's (-o .jsonl, .data or .html). */
export async function runSnapshot(options: SnapshotOptions): Promise<number> {
  const keepers = liveKeepers();
  const state = keepers.find((keeper) => keeper.pid === options.keeperPid);
  if (!state) {
    const running = keepers.map((keeper) => keeper.pid).join(', ');
    throw new Error(
      `no running keeper with pid ${options.keeperPid} in ${searchedStateDirs()} (${running ? `running: ${running}` : 'none is running'}; \`ringside list\` shows them)`,
    );
  }
  const writer = new SnapshotWriter({ format: options.format, output: options.output });
  // A keeper of per-CPU rings gives one ring per CPU: large ones decode and merge on worker threads
  // (DecodePool.usesWorkers decides; workers start only then, and close() ends them on every path).
  const pool = new DecodePool();
  try {
    const { snapshot: raw, pruning } = keeperSnapshot(state, !options.allSideband);
    const decoded = await pool.decode(raw);
    const losses = cliLosses(raw, decoded);
    await writer.write(decoded, raw.processes, snapshotLimitations(raw, losses));
    if (!options.quiet) process.stderr.write(summarizeSnapshot(1, `keeper ${state.pid}`, raw, decoded, losses) + pruningSummary(pruning));
  } finally {
    await pool.close();
    await writer.close();
  }
  return 0;
}

/**
 * One snapshot of a keeper's rings as a client takes it (spooled side-band and ring joined, retired
 * rings with the grown ones), with its target's /proc state now and at the keeper's start. `state` names the keeper; its newest
 * generation is read under the lease. With `prune`, the side-band older than the oldest sample is
 * cut to the state the samples need: the spool holds up to 32 MiB per ring of history, the rings
 * seconds or less, and emitting it all took tens of seconds on a busy keeper.
 */
function keeperSnapshot(state: KeeperState, prune: boolean): { snapshot: TriggeredSnapshot; pruning: SidebandPruning | null } {
  const source = attachKeeperRings(state, { warmCopyBuffers: false });
  let whole: TriggeredSnapshot;
  try {
    // With its target's tasks, those of the keeper's start included (KeptRingSource.snapshot).
    whole = source.snapshot();
  } finally {
    source.dispose();
  }
  return prune ? pruneSideband(whole) : { snapshot: whole, pruning: null };
}

/** The summary's line on the side-band left out (nothing when none was). */
function pruningSummary(pruning: SidebandPruning | null): string {
  const left = pruning ? describePruning(pruning) : null;
  return left ? `  ${left.replace(/\)$/, ', --all-sideband keeps them)')}\n` : '';
}

/** How long `list` watches the rings to tell how fast they are written (their coverage). */
const LIST_RATE_MS = 200;

/**
 * The keepers this user runs: pid, target, events, each ring's size, fill and coverage (its size
 * over the rate it is written at, watched for LIST_RATE_MS), the retired rings with the time they
 * cover, and the resizes so far (the keeper's limitations).
 */
export async function runList(options: ListOptions): Promise<number> {
  const sources = liveKeepers().map((state) => attachKeeperRings(state, { warmCopyBuffers: false }));
  type ListedRing = RingStatus & { bytesPerSec: number; coverageSec: number | null; range: KeeperRetiredRing | undefined };
  let listed: { state: KeeperState; rings: ListedRing[] }[];
  try {
    const before = sources.map((source) => source.ringStats());
    const startedMs = performance.now();
    if (sources.length > 0) await new Promise((resolve) => setTimeout(resolve, LIST_RATE_MS));
    const seconds = (performance.now() - startedMs) / 1000;
    listed = sources.map((source, index) => {
      const state = source.keeperState;
      const rings = source.ringStats().map((ring) => {
        const earlier = before[index].find((seen) => seen.ringId === ring.ringId);
        const bytesPerSec = earlier && !ring.retired && ring.direction === 'backward' ? Number(ring.bytesWritten - earlier.bytesWritten) / seconds : 0;
        const published = state.rings.find((candidate) => candidate.ringId === ring.ringId);
        return { ...ring, bytesPerSec, coverageSec: bytesPerSec > 0 ? ring.dataSize / bytesPerSec : null, range: published?.retired };
      });
      return { state, rings };
    });
  } finally {
    for (const source of sources) source.dispose();
  }
  if (options.json) {
    process.stdout.write(
      JSON.stringify(
        listed.map(({ state, rings }) => ({
          pid: state.pid,
          startedAt: state.startedAt,
          target: state.target,
          events: state.events.map((event) => event.name),
          generation: state.generation ?? 0,
          rings: rings.map((ring) => ({
            label: ring.label,
            direction: ring.direction,
            dataSize: ring.dataSize,
            bytesWritten: ring.bytesWritten.toString(),
            ...(ring.direction === 'backward' && !ring.retired ? { bytesPerSec: Math.round(ring.bytesPerSec), coverageSec: ring.coverageSec } : {}),
            ...(ring.retired ? { retired: ring.range ?? {} } : {}),
          })),
          limitations: state.limitations ?? [],
        })),
      ) + '\n',
    );
    return 0;
  }
  if (listed.length === 0) process.stdout.write(`no keeper is running (state files in ${searchedStateDirs()})\n`);
  for (const { state, rings } of listed) {
    const target = state.target.kind === 'launch' ? state.target.argv.join(' ') : state.target.kind === 'pid' ? `pid ${state.target.pid}` : 'every CPU';
    const generation = state.generation ? `, state generation ${state.generation}` : '';
    process.stdout.write(`keeper ${state.pid}: ${state.events.map((event) => event.name).join(', ')} on ${target}, since ${state.startedAt}${generation}\n`);
    for (const ring of rings) {
      let written: string;
      if (ring.direction === 'forward') written = `${ring.bytesWritten} bytes of side-band`;
      else if (ring.retired) written = `retired, ${retiredRange(ring.range)}`;
      else {
        const coverage =
          ring.coverageSec === null ? 'not written meanwhile' : `keeps ${ring.coverageSec.toFixed(2)} s at ${Math.round(ring.bytesPerSec / 1024)} KiB/s`;
        written = `${ring.bytesWritten} bytes written${ring.bytesWritten > BigInt(ring.dataSize) ? ' (wrapped: holds the newest)' : ''}, ${coverage}`;
      }
      process.stdout.write(`  ${ring.label.padEnd(24)} ${ring.direction.padEnd(8)} ${ring.dataSize / 1024} KiB, ${written}\n`);
    }
    for (const limitation of state.limitations ?? []) process.stdout.write(`  ${limitation}\n`);
  }
  return 0;
}

/** The sample times a retired ring holds, in seconds of the perf clock as perf script prints them. */
function retiredRange(range: KeeperRetiredRing | undefined): string {
  const seconds = (ns: string) => (Number(BigInt(ns) / 1000n) / 1e6).toFixed(6);
  if (!range?.oldestNs || !range.newestNs) return 'holds no sample';
  const cut = range.cutAtNs !== undefined ? ` (its successor from ${seconds(range.cutAtNs)} on)` : '';
  return `holds ${seconds(range.oldestNs)} to ${seconds(range.newestNs)}${cut}`;
}
