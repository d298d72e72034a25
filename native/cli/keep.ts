// `ringside keep`: events that outlive the editor. Opens the flight recorder like `capture`, then
// holds the rings and publishes what it holds (native/keeper) until SIGTERM/SIGINT; the extension,
// `ringside snapshot` and `ringside list` attach with pidfd_getfd and map the SAME rings.

import type { CaptureOptions, ListOptions, SnapshotOptions } from './args';
import { prepareEvents, recorderTarget } from './capture';
import { runKeeperUntilSignal } from '../keeper/keeper';
import { attachKeeperRings } from '../keeper/attach';
import { keeperStateDir, listKeeperStates, type KeeperState } from '../keeper/state';
import { SnapshotWriter, summarizeSnapshot } from './output';
import { DecodePool } from '../decode-pool/pool';
import { synthesizeSideband } from '../perf/procfs';
import { TriggerWatcher } from '../perf/trigger-watcher';
import { onExitSignal, writeTriggeredSnapshot, type TriggeredSnapshot } from './triggers';

export async function runKeep(options: CaptureOptions): Promise<number> {
  const prepared = prepareEvents(options);
  const triggers = prepared.triggerIndices;
  const log = (line: string) => process.stderr.write(line + '\n');
  return runKeeperUntilSignal({
    events: prepared.events, target: recorderTarget(options, prepared), pages: options.pages,
    // A trigger's ring holds only its own records, so a moving data_head means it fired.
    ...(triggers.length ? { ownRing: triggers } : {}),
  }, log, triggers.length === 0 && !options.snapshotOnExitSignal ? undefined : (keeper) => {
    // The keeper takes its triggered snapshots itself, so they are written with nobody attached. It
    // takes them as its clients do: its side-band lives in its spools, which the recorder no longer holds.
    let written = 0;
    const write = (reason: string) => writeTriggeredSnapshot(() => keeperSnapshot(keeper.state), options.snapshotDir!, ++written)
      .then(({ file, records }) => { if (!options.quiet) log(`ringside: ${reason}: wrote ${file} (${records} records)`); })
      .catch((error: unknown) => log(`ringside: a triggered snapshot failed: ${error instanceof Error ? error.message : String(error)}`));
    // The launched command's events stay open after it died: the rings hold the moments before.
    if (options.snapshotOnExitSignal) onExitSignal(keeper.recorder, (reason) => void write(reason));
    if (triggers.length === 0) return () => undefined;
    const watcher: TriggerWatcher = new TriggerWatcher(() => keeper.recorder.backwardRings,
      { eventIndices: triggers, postSec: options.postSec, minIntervalSec: options.minIntervalSec },
      () => void write(`trigger ${options.snapshotOn.join(', ')}`).finally(() => watcher.rearm()));
    watcher.start();
    return () => watcher.stop();
  });
}

function liveKeepers(): KeeperState[] {
  return listKeeperStates().flatMap((listed) => (listed.state && listed.alive ? [listed.state] : []));
}

/** One snapshot of a running keeper's rings, written like a capture's (-o .jsonl, .data or .html). */
export async function runSnapshot(options: SnapshotOptions): Promise<number> {
  const keepers = liveKeepers();
  const state = keepers.find((keeper) => keeper.pid === options.keeperPid);
  if (!state) {
    const running = keepers.map((keeper) => keeper.pid).join(', ');
    throw new Error(`no running keeper with pid ${options.keeperPid} in ${keeperStateDir()} (${running ? `running: ${running}` : 'none is running'}; \`ringside list\` shows them)`);
  }
  const writer = new SnapshotWriter({ format: options.format, output: options.output });
  // A keeper of per-CPU rings gives one ring per CPU: large ones decode and merge on worker threads
  // (DecodePool.usesWorkers decides; workers start only then, and close() ends them on every path).
  const pool = new DecodePool();
  try {
    const raw = keeperSnapshot(state);
    const decoded = await pool.decode(raw);
    await writer.write(decoded, raw.processes);
    if (!options.quiet) process.stderr.write(summarizeSnapshot(1, `keeper ${state.pid}`, raw, decoded));
  } finally {
    await pool.close();
    await writer.close();
  }
  return 0;
}

/** One snapshot of a keeper's rings as a client takes it (spooled side-band and ring joined), with its target's /proc state. */
function keeperSnapshot(state: KeeperState): TriggeredSnapshot {
  const source = attachKeeperRings(state, { warmCopyBuffers: false });
  try {
    const target = state.target;
    const pids = target.kind === 'launch' && target.childPid !== undefined ? [target.childPid] : target.kind === 'pid' ? [target.pid] : [];
    return { ...source.snapshot(), processes: synthesizeSideband(pids) };
  } finally {
    source.dispose();
  }
}

/** The keepers this user runs: pid, target, events and each ring's fill, read live from the rings. */
export async function runList(options: ListOptions): Promise<number> {
  const listed = liveKeepers().map((state) => {
    const source = attachKeeperRings(state, { warmCopyBuffers: false });
    try {
      return { state, rings: source.ringStats() };
    } finally {
      source.dispose();
    }
  });
  if (options.json) {
    process.stdout.write(JSON.stringify(listed.map(({ state, rings }) => ({
      pid: state.pid, startedAt: state.startedAt, target: state.target, events: state.events.map((event) => event.name),
      rings: rings.map((ring) => ({ label: ring.label, direction: ring.direction, dataSize: ring.dataSize, bytesWritten: ring.bytesWritten.toString() })),
    }))) + '\n');
    return 0;
  }
  if (listed.length === 0) process.stdout.write(`no keeper is running (state files in ${keeperStateDir()})\n`);
  for (const { state, rings } of listed) {
    const target = state.target.kind === 'launch' ? state.target.argv.join(' ') : state.target.kind === 'pid' ? `pid ${state.target.pid}` : 'every CPU';
    process.stdout.write(`keeper ${state.pid}: ${state.events.map((event) => event.name).join(', ')} on ${target}, since ${state.startedAt}\n`);
    for (const ring of rings) {
      const written = ring.direction === 'backward' ? `${ring.bytesWritten} bytes written${ring.bytesWritten > BigInt(ring.dataSize) ? ' (wrapped: holds the newest)' : ''}` : `${ring.bytesWritten} bytes of side-band`;
      process.stdout.write(`  ${ring.label.padEnd(24)} ${ring.direction.padEnd(8)} ${ring.dataSize / 1024} KiB, ${written}\n`);
    }
  }
  return 0;
}
