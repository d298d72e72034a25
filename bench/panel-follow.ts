// What the timeline panel's live follow costs (not part of `npm run bench`):
//   node out/bench/panel-follow.js [seconds] [rates] [rounds]      e.g. panel-follow.js 8 10000,200000 3
// A paced tracepoint load (test/fixtures/kernel_paced.c: close(100000 + i) at RATE calls a second for SECONDS) is
// recorded through the extension's own SessionManager (the recording Start Recording makes), two ways in a rotating
// order, side by side in the same run:
//   alone:  the recording alone (the rings record; nobody reads them until it ends)
//   follow: the same recording followed as the visible panel follows it: LiveFollow reads what the rings gained
//           five times a second (no pause), decodes and names it and builds each liveAppend (the host), and the page's
//           side takes it as the page does: validated, appended to its RecordStore (window 30 s, eviction included)
//           and the lanes laid out again (TimelineLayout.update, what the next frame does first). Drawing is not
//           counted (it is bound by the frame rate, not by the record rate).
// The CPU of this process (every thread: the decode pool's workers too) is read with process.cpuUsage(); the host's
// share is follow's less alone's less the page's, the page's is read around its handling of each append. Each
// recording's one-time work is in it (its symbol tables, read on the first append).
// Printed:
// CPU % of one core per side over the workload's seconds (medians of the rounds), and what the live capture kept of
// the calls (the least of the rounds). The workload's own CPU (a child process) is in neither.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionManager } from '../extension/session/session-manager';
import { createBackend } from '../extension/session/backend';
import { LiveFollow } from '../extension/panel/live-follow';
import { validateHostToWebview } from '../shared/validate';
import type { HostToWebview } from '../shared/protocol';
import { RecordStore } from '../webview/store';
import { TimelineLayout } from '../webview/layout';
import { RecordType } from '../native/abi/uapi';
import { checkPrerequisites, compileC } from './tools';
import { BenchUnavailableError, median, round, Table } from './stats';

const ROOT = join(__dirname, '..', '..');
const WORKLOAD = join(ROOT, 'test', 'fixtures', 'kernel_paced.c');
const EVENT = 'syscalls:sys_enter_close';

/** CPU seconds of this process (all threads) since `since`. */
function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

interface Run {
  readonly cpu: number;
  /** Of which the page's handling of the appends. */
  readonly page: number;
  /** Calls the live capture held (follow only). */
  readonly kept: number;
  readonly appends: number;
  readonly skippedBytes: bigint;
}

async function record(workload: string, rate: number, seconds: number, follow: boolean): Promise<Run> {
  const backend = createBackend();
  const manager = new SessionManager({ backend });
  const calls = Math.round(rate * seconds);
  // Rings that hold two seconds at the rate (about 120 bytes a record): a read that comes late still finds its records.
  const pages = Math.max(64, 2 ** Math.ceil(Math.log2((rate * 2 * 120) / 4096)));
  try {
    const events = await backend.resolveEvents([EVENT], {});
    const started = process.cpuUsage();
    const session = await manager.startRecording({ events, target: { kind: 'launch', argv: [workload, String(calls), String(seconds * 1000)] }, pages });
    let page = 0;
    let live: LiveFollow | undefined;
    const store = new RecordStore();
    const layout = new TimelineLayout(store);
    if (follow) {
      const post = (message: HostToWebview) => {
        // The page's work is synchronous, while the decode pool's workers are idle (the read was decoded before): the
        // process's CPU across it is the page's (not its wall time, which a loaded machine stretches).
        const pageStarted = process.cpuUsage();
        const checked = validateHostToWebview(structuredClone(message));
        if (!checked.ok) throw new Error(checked.reason);
        const m = checked.message;
        if (m.type === 'liveAppend') {
          const entry = store.appendLive(m);
          // The page acknowledges an append once it holds it; its lanes are laid out again by the next frame, after.
          live?.onAck(m.snapshotId, m.seq);
          layout.update('thread', null, 0, new Set(), entry.index);
        }
        page += cpuSeconds(pageStarted);
      };
      live = new LiveFollow(manager.follow(session.id), post, { snapshotId: 'live', name: 'live', windowNs: () => 30e9 });
    }
    await manager.whenTargetExited(session.id);
    if (live) {
      // What the rings gained since the last read: the end of the run, read as the panel's next tick would (after the
      // read in progress, if one is).
      await live.tick();
      await live.tick();
      live.stop();
    }
    const cpu = cpuSeconds(started);
    let kept = 0;
    for (let row = 0; row < store.length; row++) if (store.kind[row] === RecordType.SAMPLE && store.events[store.event[row]]?.name === EVENT) kept++;
    return { cpu, page, kept: kept / calls, appends: live?.appends ?? 0, skippedBytes: live?.skippedBytes ?? 0n };
  } finally {
    await manager.dispose();
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 8);
  const rates = (process.argv[3] ?? '10000,200000').split(',').map(Number);
  const rounds = Number(process.argv[4] ?? 3);
  if (!(seconds > 0) || rates.some((rate) => !(rate > 0)) || !(rounds >= 1))
    throw new BenchUnavailableError('usage: panel-follow.js [seconds] [rate,rate...] [rounds]');
  if (process.getuid?.() !== 0) throw new BenchUnavailableError(`${EVENT} needs root (tracefs) here`);
  const { gcc } = checkPrerequisites(false);
  const dir = mkdtempSync(join(tmpdir(), 'ringside-panel-follow-'));
  try {
    const workload = compileC(gcc, WORKLOAD, dir, 'kernel_paced', ['-O2']);
    const table = new Table(['calls/s', 'recording alone', 'follow: host', 'follow: page', 'follow: both', 'appends', 'kept', 'overwritten']);
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const json: Record<string, number | string> = { seconds, rounds, loadavg };
    const percent = (cpu: number) => (100 * cpu) / seconds;
    for (const rate of rates) {
      const alone: Run[] = [];
      const followed: Run[] = [];
      // One untimed run of each first: the modules following loads on its first read (decoder, symbolizer) are loaded
      // once per process, not per recording; what a recording learns (its symbols) is learnt again each run.
      if (rate === rates[0]) for (const follow of [false, true]) await record(workload, rate, 1, follow);
      for (let r = 0; r < rounds; r++) {
        // Rotating order, so a machine that warms up or gets busier part way weighs on both alike.
        for (const follow of r % 2 === 0 ? [false, true] : [true, false]) (follow ? followed : alone).push(await record(workload, rate, seconds, follow));
      }
      const host = median(followed.map((run, r) => run.cpu - run.page - alone[r].cpu));
      const pageCost = median(followed.map((run) => run.page));
      const both = median(followed.map((run, r) => run.cpu - alone[r].cpu));
      const kept = Math.min(...followed.map((run) => run.kept));
      const skipped = followed.reduce((sum, run) => sum + run.skippedBytes, 0n);
      table.add(
        rate,
        percent(median(alone.map((run) => run.cpu))),
        percent(host),
        percent(pageCost),
        percent(both),
        median(followed.map((run) => run.appends)),
        `${round(100 * kept)} %`,
        `${skipped} B`,
      );
      json[`panel_follow_host_pct_${rate}`] = round(percent(host));
      json[`panel_follow_page_pct_${rate}`] = round(percent(pageCost));
      json[`panel_follow_total_pct_${rate}`] = round(percent(both));
      json[`recording_alone_pct_${rate}`] = round(percent(median(alone.map((run) => run.cpu))));
      json[`panel_follow_kept_min_${rate}`] = round(kept);
    }
    console.log(`${seconds} s per run, ${rounds} rounds, load average ${loadavg}; CPU of this process as % of one core (the workload's own not counted)`);
    console.log(table.toString());
    console.log(JSON.stringify(json));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  if (!(error instanceof BenchUnavailableError)) throw error;
  process.stderr.write(`panel-follow: ${error.message}\n`);
  process.exitCode = 1;
});
