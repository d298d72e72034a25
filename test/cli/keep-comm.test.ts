// A keeper names every sample's thread as perf record does, under fork/exec load: threads that were alive when the
// keeper started and exited before the snapshot (named only by the tasks synthesised at its start, as perf synthesises
// every task at record start), threads born while it kept (COMM records in its spooled side-band), and processes forked
// and exec'd meanwhile. The referee is `perf record -p` of the same process in the same run, read with perf script.
// Every step waits on a condition (a file the workload creates, perf's control ack, the keeper's first line).
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
/** The same sampling for both recorders: task-clock every 250 µs of CPU time. */
const EVENT = ['-e', 'task-clock', '-c', '250000'];

interface Sample {
  readonly comm: string;
  readonly pid: number;
  readonly tid: number;
}

/** Every sample of a perf.data as perf script prints its comm, pid and tid. */
function samplesOf(file: string): Sample[] {
  const script = execFileSync('perf', ['script', '-i', file, '-F', 'comm,pid,tid'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 1 << 28,
  });
  const samples: Sample[] = [];
  for (const line of script.split('\n')) {
    // "early-0 1234/1236" (a comm may hold spaces and, when perf knows none, reads ":1236")
    const match = /^\s*(.*?)\s+(\d+)\/(\d+)\s*$/.exec(line);
    if (match) samples.push({ comm: match[1], pid: Number(match[2]), tid: Number(match[3]) });
  }
  return samples;
}

async function until(condition: () => boolean, what: () => string, timeoutMs = 90_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    assert.ok(Date.now() < deadline, what());
  }
}

describe('ringside keep names threads as perf does under fork/exec load (real kernel, perf record in the same run as referee)', function () {
  this.timeout(240_000);
  let dir: string;
  let work: string;
  const started: ChildProcess[] = [];

  before(() => {
    assert.ok(existsSync(cli), 'dist/cli.js is built by npm test (npm run build)');
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-keep-comm-'));
    work = path.join(dir, 'work');
    mkdirSync(work);
  });

  after(() => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it("perf script of a snapshot names every sample as perf record -p names it: threads of before the keeper, born under it, and exec'd children", async () => {
    const early = 3;
    const late = 3;
    const children = 3;
    const load = spawn(fixture('comm_churn'), [work, String(early), String(late), String(children), '40'], { stdio: 'ignore' });
    started.push(load);
    await until(
      () => existsSync(path.join(work, 'ready')) || load.exitCode !== null,
      () => 'the workload named its early threads',
    );
    assert.equal(load.exitCode, null, 'the workload runs');
    const pid = load.pid!;

    // The keeper: it starts while the early threads exist and are blocked (they exit long before the snapshot).
    const keeper = spawn(process.execPath, [cli, 'keep', ...EVENT, '--pages', '512', '-p', String(pid)], {
      env: { ...process.env, XDG_RUNTIME_DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    started.push(keeper);
    let keeperLog = '';
    keeper.stderr!.on('data', (chunk) => {
      keeperLog += String(chunk);
    });
    await until(
      () => /holds \d+ ring/.test(keeperLog) || keeper.exitCode !== null,
      () => `the keeper started: ${keeperLog}`,
    );
    assert.equal(keeper.exitCode, null, keeperLog);

    // perf record of the same process, its events enabled on our command and acknowledged (--control).
    const referee = path.join(dir, 'perf.data');
    const perf = spawn('perf', ['record', '-q', ...EVENT, '-D', '-1', '--control', 'fd:3,4', '-p', String(pid), '-o', referee], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    started.push(perf);
    let perfLog = '';
    perf.stderr!.on('data', (chunk) => {
      perfLog += String(chunk);
    });
    let acked = '';
    (perf.stdio[4] as Readable).on('data', (chunk) => {
      acked += String(chunk);
    });
    (perf.stdio[3] as Writable).write('enable\n');
    await until(
      () => acked.includes('ack') || perf.exitCode !== null,
      () => `perf record enabled its events: ${perfLog}`,
    );
    assert.equal(perf.exitCode, null, perfLog);

    writeFileSync(path.join(work, 'go'), '');
    await until(
      () => existsSync(path.join(work, 'done')) || load.exitCode !== null,
      () => 'the workload ran every phase',
    );
    assert.equal(load.exitCode, null, 'the workload waits for quit');

    const snapshotTo = (file: string) => {
      const run = spawnSync(process.execPath, [cli, 'snapshot', String(keeper.pid), '-o', file], {
        encoding: 'utf8',
        env: { ...process.env, XDG_RUNTIME_DIR: dir },
      });
      assert.equal(run.status, 0, run.stderr);
    };
    const ours = path.join(dir, 'ours.data');
    snapshotTo(ours);
    // The timeline page of the same rings names the threads with the same knowledge (its snapshot's thread list).
    const page = path.join(dir, 'ours.html');
    snapshotTo(page);
    const perfExited = new Promise((resolve) => perf.once('exit', resolve));
    perf.kill('SIGINT');
    await perfExited;
    writeFileSync(path.join(work, 'quit'), '');
    // The task list of the keeper's start: private to its user beside its state, gone with the keeper.
    const stateDir = path.join(dir, `ringside-${process.getuid!()}`);
    const tasksFile = path.join(stateDir, `keeper-${keeper.pid}.sideband-tasks.json`);
    assert.equal(statSync(tasksFile).mode & 0o777, 0o600);
    const keeperExited = new Promise((resolve) => keeper.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await keeperExited, 0, keeperLog);
    assert.deepEqual(
      readdirSync(stateDir).filter((name) => name.includes(`keeper-${keeper.pid}.`)),
      [],
      'the keeper removed its files',
    );

    const namesByTid = new Map<number, Set<string>>();
    for (const sample of samplesOf(referee)) {
      const names = namesByTid.get(sample.tid) ?? new Set<string>();
      names.add(sample.comm);
      namesByTid.set(sample.tid, names);
    }
    const samples = samplesOf(ours);
    const wrong = samples.filter((sample) => {
      const perfs = namesByTid.get(sample.tid);
      if (!perfs) return sample.comm.startsWith(':');
      return !perfs.has(sample.comm) || (sample.comm.startsWith(':') && [...perfs].some((name) => !name.startsWith(':')));
    });
    const described = (list: Sample[]) =>
      [...new Set(list.map((s) => `${s.comm} ${s.pid}/${s.tid} (perf: ${[...(namesByTid.get(s.tid) ?? ['no sample'])].join(', ')})`))].slice(0, 20).join('\n');
    assert.equal(wrong.length, 0, `${wrong.length} of ${samples.length} samples named otherwise than perf names their thread:\n${described(wrong)}`);

    // What the comparison covered: each kind of thread has samples in the snapshot, named as the workload named it.
    const named = (prefix: string) => new Set(samples.filter((sample) => sample.comm.startsWith(prefix)).map((sample) => sample.tid));
    assert.equal(named('early-').size, early, `samples of every thread alive at the keeper's start: ${described(samples)}`);
    assert.equal(named('late-').size, late, 'samples of every thread born under the keeper');
    assert.equal(named('kid-').size, children, "samples of a named thread of every exec'd child");
    const childProcesses = new Set(samples.filter((sample) => sample.pid !== pid).map((sample) => sample.pid));
    assert.equal(childProcesses.size, children, 'samples of every child process');
    for (const tid of named('early-')) {
      assert.ok(!existsSync(`/proc/${pid}/task/${tid}`), `early thread ${tid} had exited before the snapshot (only the keeper's start named it)`);
    }

    const embedded = /<script type="application\/json" id="ringside-standalone-data">(.*?)<\/script>/s.exec(readFileSync(page, 'utf8'));
    assert.ok(embedded, 'the page embeds its snapshot');
    const threads = (JSON.parse(embedded[1]) as { snapshots: { start: { threads: Sample[] } }[] }).snapshots[0].start.threads;
    for (const tid of named('early-')) {
      const thread = threads.find((candidate) => candidate.tid === tid);
      const expected = namesByTid.get(tid) ?? new Set(samples.filter((sample) => sample.tid === tid).map((sample) => sample.comm));
      assert.deepEqual(thread && [thread.comm], [...expected], `the page names early thread ${tid} as perf does`);
    }
  });
});
