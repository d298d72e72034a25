// Threads that were running before a recording started have no COMM record in its rings: the perf.data Ringside
// writes names them as perf record does (it synthesizes every task), so perf script prints each sample's thread
// name, never ':TID'. The referee is perf record -p of the same running process, and /proc.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');

/** perf script's comm of every sample, by tid. */
function commsByTid(file: string, pid: number): Map<number, Set<string>> {
  const script = execFileSync('perf', ['script', '-i', file, '-F', 'comm,pid,tid'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 1 << 28,
  });
  const byTid = new Map<number, Set<string>>();
  for (const line of script.split('\n')) {
    // "parser 1234/1236" (a comm may hold spaces and, when unknown, reads ":1236")
    const match = /^\s*(.*?)\s+(\d+)\/(\d+)\s*$/.exec(line);
    if (!match || Number(match[2]) !== pid) continue;
    const tid = Number(match[3]);
    const names = byTid.get(tid) ?? new Set<string>();
    names.add(match[1]);
    byTid.set(tid, names);
  }
  return byTid;
}

describe('perf.data of a process whose threads started before the recording (real kernel, perf as referee)', function () {
  this.timeout(120_000);
  let dir: string;
  let demo: ChildProcess | undefined;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-thread-comm-'));
    const created = spawnSync(process.execPath, [path.join(root, 'scripts/demo/create.mjs'), path.join(dir, 'demo')], { encoding: 'utf8' });
    assert.equal(created.status, 0, created.stderr);
    demo = spawn(path.join(dir, 'demo', 'demo'), [], { stdio: 'ignore' });
    // The demo names its three workers (parser, hasher, logger) as it starts them: wait until all are named.
    const named = () => readdirSync(`/proc/${demo!.pid}/task`).map((tid) => readFileSync(`/proc/${demo!.pid}/task/${tid}/comm`, 'utf8').trim());
    for (
      const deadline = Date.now() + 30_000;
      !['parser', 'hasher', 'logger'].every((name) => named().includes(name));
      await new Promise((resolve) => setTimeout(resolve, 50))
    ) {
      assert.ok(Date.now() < deadline, `the demo's threads: ${named().join(', ')}`);
    }
  });

  after(() => {
    demo?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('every sample of every thread is named as perf record -p names it, none as :TID', () => {
    const pid = demo!.pid!;
    const ours = path.join(dir, 'ours.data');
    const capture = spawnSync(process.execPath, [cli, 'capture', '-q', '-e', 'task-clock', '-p', String(pid), '--duration', '1', '-o', ours], {
      encoding: 'utf8',
    });
    assert.equal(capture.status, 0, capture.stderr);
    const theirs = path.join(dir, 'perf.data');
    const perf = spawnSync('perf', ['record', '-q', '-e', 'task-clock', '-p', String(pid), '-o', theirs, '--', 'sleep', '1'], { encoding: 'utf8' });
    assert.equal(perf.status, 0, perf.stderr);

    const ourComms = commsByTid(ours, pid);
    const perfComms = commsByTid(theirs, pid);
    const workers = [...ourComms.keys()].filter((tid) => tid !== pid);
    assert.ok(workers.length >= 3, `samples of the demo's workers: ${JSON.stringify([...ourComms].map(([tid, names]) => [tid, [...names]]))}`);
    for (const [tid, names] of ourComms) {
      assert.ok(![...names].some((name) => name.startsWith(':')), `tid ${tid} is named ${[...names].join(', ')}`);
      const live = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      assert.deepEqual([...names], [live], `tid ${tid}: as /proc names it`);
      const perfs = perfComms.get(tid);
      if (perfs) assert.deepEqual([...names], [...perfs], `tid ${tid}: as perf record -p names it`);
    }
    assert.ok(
      workers.some((tid) => perfComms.has(tid)),
      'perf sampled the same workers',
    );
  });
});
