// Thread states from real sched:sched_switch records: `ringside capture -a` writes perf.data while a fixture spins
// and another sleeps; the intervals the host builds from it (host/thread-states.ts) are checked against perf on the
// same file: every switch-out's time and prev_state against `perf script`, run and wait times against
// `perf sched timehist`.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importPerfDataFile } from '../../native/perfdata/index';
import { decodeSnapshot } from '../../native/decode';
import { buildThreadStates, snapshotSwitches, threadStatesAndComms } from '../../host/thread-states';
import { writeStandaloneHtml } from '../../host/html-file';
import { StateFlag, ThreadState, THREAD_STATE_NAMES } from '../../shared/thread-states';
import { assertSwitchesAsFullDecode } from './full-decode-switches';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const fixture = (name: string) => path.join(root, 'fixtures-bin', name);

describe('thread states from a real sched_switch capture, against perf script and perf sched timehist', function () {
  this.timeout(120000);
  let dir: string;
  let data: string;
  let busyPid = 0;
  let pacedPid = 0;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-states-'));
    data = path.join(dir, 'sw.data');
    // A spinner (runnable, preempted when it shares a CPU) and a sleeper (1 ms sleeps), running through the capture:
    // both outlive it whatever the capture's start costs on a busy machine, and are ended once it is written.
    const busy = spawn(fixture('kernel_busy'), ['120000'], { stdio: 'ignore' });
    const paced = spawn(fixture('kernel_paced'), ['120000', '120000'], { stdio: 'ignore' });
    busyPid = busy.pid ?? 0;
    pacedPid = paced.pid ?? 0;
    const captured = spawnSync(process.execPath, [cli, 'capture', '-q', '-e', 'sched:sched_switch', '-a', '--duration', '1', '-o', data], { encoding: 'utf8' });
    const running = [busy, paced].map((child) => child.exitCode === null && child.signalCode === null);
    await Promise.all(
      [busy, paced].map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) resolve(null);
            else {
              child.on('exit', resolve);
              child.kill('SIGKILL');
            }
          }),
      ),
    );
    assert.equal(captured.status, 0, captured.stderr);
    assert.deepEqual(running, [true, true], 'the spinner and the sleeper ran through the whole capture');
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every switch-out ends a running interval on its CPU and starts one in the state perf script prints', () => {
    const imported = importPerfDataFile(data);
    const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
    const found = snapshotSwitches(decoded);
    assert.ok(found, 'the capture has sched_switch records');
    // The fields read in place are the full decode's, switch for switch.
    assert.equal(assertSwitchesAsFullDecode(decoded), found.switches.count);
    const table = buildThreadStates(found.switches, found.edges);
    const origin = decoded.columns.timeOriginNs;
    const at = (t: number) => origin + BigInt(t);
    // Our intervals by (tid, ns): the running one ending there and the off-CPU one starting there.
    const runEnding = new Map<string, number>();
    const offStarting = new Map<string, number>();
    for (let i = 0; i < table.count; i++) {
      if (table.state[i] === ThreadState.RUNNING) runEnding.set(`${table.tid[i]}@${at(table.end[i])}`, i);
      else offStarting.set(`${table.tid[i]}@${at(table.start[i])}`, i);
    }
    const script = execFileSync('perf', ['script', '-i', data, '--ns', '-F', 'time,cpu,trace'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    let checked = 0;
    const states = new Set<string>();
    for (const line of script.split('\n')) {
      const m = /^\s*\[(\d+)\]\s+(\d+)\.(\d{9}):.*prev_pid=(\d+) prev_prio=-?\d+ prev_state=(\S+) ==> .*next_pid=(\d+)/.exec(line);
      if (!m) continue;
      const [, cpu, sec, ns, prev, state] = m;
      if (prev === '0') continue; // the idle task has no state lane
      const time = BigInt(sec) * 1000000000n + BigInt(ns);
      const run = runEnding.get(`${prev}@${time}`);
      const off = offStarting.get(`${prev}@${time}`);
      assert.ok(run !== undefined, `a running interval of ${prev} ends at ${time}`);
      assert.ok(off !== undefined, `an off-CPU interval of ${prev} starts at ${time}`);
      assert.equal(table.cpu[run], Number(cpu));
      assert.equal(THREAD_STATE_NAMES[table.state[off]].letter, state.split('|')[0], `prev_state of ${prev} at ${time}`);
      states.add(state);
      checked++;
    }
    assert.equal(checked, found.switches.prevTid.filter((tid) => tid !== 0).length, 'as many switch-outs as perf script shows');
    assert.ok(checked > 100, `${checked} switch-outs`);
    assert.ok(states.has('S'), 'the sleeper sleeps');

    // perf sched timehist, on every switch-out: how long the task ran since its switch-in, and how long it waited off
    // CPU before that (since its previous switch-out). Printed in µs; ours are exact ns.
    const timehist = execFileSync('perf', ['sched', 'timehist', '-i', data], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const byTid = new Map<number, { ours: number; theirs: number; lines: number }>();
    let compared = 0;
    for (const line of timehist.split('\n')) {
      const m = /^\s*(\d+)\.(\d{6})\s+\[(\d+)\]\s+.*\[(\d+)(?:\/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$/.exec(line);
      if (!m) continue;
      const [, sec, us, , tidText, wait, , runTime] = m;
      const tid = Number(tidText);
      if (tid === 0) continue;
      const endUs = BigInt(sec) * 1000000n + BigInt(us);
      // Our interval ending at this µs (timehist truncates the ns).
      let run: number | undefined;
      for (let i = 0; i < table.count && run === undefined; i++) {
        if (table.tid[i] === tid && table.state[i] === ThreadState.RUNNING && at(table.end[i]) / 1000n === endUs) run = i;
      }
      assert.ok(run !== undefined, `timehist's switch-out of ${tid} at ${sec}.${us} is one of ours`);
      if ((table.flags[run] & StateFlag.START_UNKNOWN) !== 0) continue; // its switch-in predates the capture
      const ranMs = (table.end[run] - table.start[run]) / 1e6;
      assert.ok(Math.abs(ranMs - Number(runTime)) <= 0.002, `${tid} ran ${ranMs} ms at ${sec}.${us}, timehist says ${runTime}`);
      const entry = byTid.get(tid) ?? { ours: 0, theirs: 0, lines: 0 };
      entry.ours += ranMs;
      entry.theirs += Number(runTime);
      entry.lines++;
      byTid.set(tid, entry);
      // The off-CPU interval that the switch-in closed, when its switch-out is in the capture.
      let off: number | undefined;
      for (let i = 0; i < table.count && off === undefined; i++) {
        if (table.tid[i] === tid && table.state[i] !== ThreadState.RUNNING && table.end[i] === table.start[run]) off = i;
      }
      if (off !== undefined && (table.flags[off] & StateFlag.END_UNKNOWN) === 0) {
        const waitedMs = (table.end[off] - table.start[off]) / 1e6;
        assert.ok(Math.abs(waitedMs - Number(wait)) <= 0.002, `${tid} waited ${waitedMs} ms before ${sec}.${us}, timehist says ${wait}`);
      }
      compared++;
    }
    // How many runs fall inside the 1 s capture depends on the machine's load; enough to mean something, of both threads.
    assert.ok(compared >= 20, `${compared} runs compared with timehist`);
    assert.ok(byTid.has(pacedPid), `runs of the sleeper ${pacedPid} compared with timehist`);
    // Total running time per thread within 1 µs per switch of timehist's; the spinner ran (how long depends on the load).
    for (const [tid, { ours, theirs, lines }] of byTid) assert.ok(Math.abs(ours - theirs) <= lines * 0.001, `tid ${tid}: ${ours} vs ${theirs} ms`);
    const busy = byTid.get(busyPid);
    assert.ok(busy && busy.ours > 0, `the spinner ${busyPid} ran ${busy?.ours} ms`);
    const sleeper = [...offStarting.values()].filter((i) => table.tid[i] === pacedPid && table.state[i] === ThreadState.SLEEPING);
    assert.ok(sleeper.length > 50, `the sleeper ${pacedPid} slept ${sleeper.length} times`);

    // sched_switch names the threads it switches (prev_comm), for lanes no COMM record named.
    const { comms } = threadStatesAndComms(decoded, 's');
    assert.equal(comms.get(busyPid), 'kernel_busy');
    assert.equal(comms.get(pacedPid), 'kernel_paced');

    // The HTML export (`-o FILE.html`, Export Snapshot…) carries the same states for its page.
    const html = path.join(dir, 'sw.html');
    writeStandaloneHtml(html, decoded);
    const embedded = /<script type="application\/json" id="ringside-standalone-data">(.*?)<\/script>/s.exec(readFileSync(html, 'utf8'));
    const exported = JSON.parse(embedded![1]) as { snapshots: { threadStates?: { count: number } }[] };
    assert.equal(exported.snapshots[0].threadStates?.count, table.count);
  });

  it("with callchains (-g) and copied user stacks (-g dwarf) in the records, the switches are the full decode's", () => {
    // The callchain comes before the RAW payload (read past in place); a user stack after it (read by the full decode).
    for (const callGraph of [['-g'], ['-g', 'dwarf,1024']]) {
      const file = path.join(dir, `sw${callGraph.length}.data`);
      const captured = spawnSync(process.execPath, [cli, 'capture', '-q', '-e', 'sched:sched_switch', '-a', ...callGraph, '--duration', '0.3', '-o', file], {
        encoding: 'utf8',
      });
      assert.equal(captured.status, 0, captured.stderr);
      const imported = importPerfDataFile(file);
      const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
      assert.ok(assertSwitchesAsFullDecode(decoded) > 0, `${callGraph.join(' ')}: the capture has switches`);
    }
  });
});
