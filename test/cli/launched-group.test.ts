// A launched command and everything it forks end with the recording: `capture -- CMD` on a signal
// and when CMD exits leaving children behind, `keep -- CMD` when its keeper stops, and a VS Code
// recording when it is stopped. Each command forks sleeps that carry a number only this test run
// uses, so /proc tells exactly whether any of them (or anything else in the group) survived.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { processGroupMembers, readProcessStat } from '../../native/perf/procfs';
import { createBackend } from '../../extension/session/backend';
import { resolveEventSpec } from '../../native/specs/resolve';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');

let serial = 0;
/** A `sleep` argument no other process on the machine has: 600.<our pid><serial>. */
const marker = () => `600.${process.pid}${++serial}`;

/** Pids of live processes whose command line is exactly `sleep MARKER`. */
function sleepers(mark: string): number[] {
  const found = spawnSync('pgrep', ['-f', `^sleep ${mark.replace('.', '\\.')}$`], { encoding: 'utf8' }).stdout.trim();
  return found
    ? found
        .split('\n')
        .map(Number)
        .filter((pid) => readProcessStat(pid)?.state !== 'Z')
    : [];
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 20000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const value = probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
  }
}

describe("a launched command's whole process group ends with the recording (real kernel)", function () {
  this.timeout(60000);
  let dir: string;
  const leftovers: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-group-'));
  });
  afterEach(() => {
    for (const pid of leftovers.splice(0))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    rmSync(dir, { recursive: true, force: true });
  });

  it('capture -- CMD, stopped by SIGTERM: no process of the group remains, and perf followed the forked child too', async () => {
    const forked = marker();
    const busy = fixture('kernel_busy');
    const out = path.join(dir, 'out.jsonl');
    // The shell forks a spinner and a sleep, then becomes a second spinner (the launched pid).
    const capture = spawn(
      process.execPath,
      [cli, 'capture', '-e', 'task-clock', '-o', out, '--', '/bin/sh', '-c', `${busy} 30000 & sleep ${forked} & exec ${busy} 30001`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    capture.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => capture.once('exit', (code) => resolve(code)));
    const sleeper = await waitFor('the forked sleep', () => sleepers(forked)[0]);
    leftovers.push(sleeper);
    const group = readProcessStat(sleeper)!.pgrp;
    assert.notEqual(group, readProcessStat(process.pid)!.pgrp, 'the command leads a group of its own');
    assert.equal(readProcessStat(group)?.ppid, capture.pid, 'the group is the one the capture launched');
    assert.ok(processGroupMembers(group).length >= 3, 'two spinners and the sleep');
    await new Promise((resolve) => setTimeout(resolve, 500));
    capture.kill('SIGTERM');
    assert.equal(await exited, 143, stderr);
    assert.deepEqual(processGroupMembers(group), [], 'no process of the launched group remains');
    assert.deepEqual(sleepers(forked), []);
    // perf inheritance still follows children: task-clock samples of both spinners.
    const records = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; pid?: number });
    const pids = new Set(records.filter((record) => record.type === 'SAMPLE').map((record) => record.pid));
    assert.ok(pids.has(group), `samples of the launched command (${[...pids].join(', ')})`);
    assert.ok(
      [...pids].some((pid) => pid !== group && pid !== undefined),
      `samples of the forked spinner (${[...pids].join(', ')})`,
    );
  });

  it('capture -- CMD that exits leaving a child behind ends that child with the capture', async () => {
    const forked = marker();
    const run = spawnSync(
      process.execPath,
      [cli, 'capture', '-q', '-e', 'task-clock', '-o', path.join(dir, 'o.jsonl'), '--', '/bin/sh', '-c', `sleep ${forked} & exit 0`],
      { encoding: 'utf8' },
    );
    leftovers.push(...sleepers(forked));
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(sleepers(forked), [], 'the forked sleep did not outlive the capture');
  });

  it('capture --leave-running leaves the group running', async () => {
    const forked = marker();
    // The sleeps that stay would hold a pipe open for 600 s: the capture writes its stderr to a file.
    const log = path.join(dir, 'stderr.txt');
    const logFd = openSync(log, 'w');
    const run = spawnSync(
      process.execPath,
      [
        cli,
        'capture',
        '-q',
        '--leave-running',
        '--duration',
        '0.3',
        '-e',
        'task-clock',
        '-o',
        path.join(dir, 'o.jsonl'),
        '--',
        '/bin/sh',
        '-c',
        `sleep ${forked} & exec sleep ${forked}`,
      ],
      { stdio: ['ignore', 'ignore', logFd] },
    );
    closeSync(logFd);
    const left = sleepers(forked);
    leftovers.push(...left);
    assert.equal(run.status, 0, readFileSync(log, 'utf8'));
    assert.equal(left.length, 2, 'both sleeps still run');
  });

  it('capture -- CMD killed by SIGKILL (nothing of it runs to clean up): its guardian ends the group; with --leave-running nothing does', async () => {
    for (const leaveRunning of [false, true]) {
      const forked = marker();
      const launched = marker();
      const capture = spawn(
        process.execPath,
        [
          cli,
          'capture',
          '-q',
          ...(leaveRunning ? ['--leave-running'] : []),
          '-e',
          'task-clock',
          '-o',
          path.join(dir, 'o.jsonl'),
          '--',
          '/bin/sh',
          '-c',
          `sleep ${forked} & exec sleep ${launched}`,
        ],
        { stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => capture.once('exit', resolve));
      const [command] = await waitFor('both sleeps', () => {
        const pids = [...sleepers(launched), ...sleepers(forked)];
        return pids.length === 2 ? pids : undefined;
      });
      leftovers.push(...sleepers(forked), command);
      const group = readProcessStat(command)!.pgrp;
      capture.kill('SIGKILL');
      await exited;
      if (leaveRunning) {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        assert.equal(processGroupMembers(group).length, 2, 'left running: both sleeps outlive the capture');
      } else {
        await waitFor('the guardian to end the group', () => (processGroupMembers(group).length === 0 ? true : undefined), 5000);
      }
    }
  });

  it('keep -- CMD: SIGTERM to the keeper ends every process of the group', async () => {
    const forked = marker();
    const launched = marker();
    const command = ['/bin/sh', '-c', `sleep ${forked} & exec sleep ${launched}`];
    const keeper = spawn(process.execPath, [cli, 'keep', '-e', 'task-clock', '--', ...command], {
      env: { ...process.env, XDG_RUNTIME_DIR: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    keeper.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      const exited = new Promise<number | null>((resolve) => keeper.once('exit', (code) => resolve(code)));
      await waitFor('both sleeps', () => (sleepers(forked).length && sleepers(launched).length ? true : undefined));
      await waitFor('the keeper to hold its rings', () => (/holds \d+ ring/.test(stderr) ? true : undefined));
      const group = readProcessStat(sleepers(forked)[0])!.pgrp;
      leftovers.push(...sleepers(forked), ...sleepers(launched));
      keeper.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      assert.deepEqual(processGroupMembers(group), []);
      assert.deepEqual([...sleepers(forked), ...sleepers(launched)], []);
    } finally {
      if (keeper.exitCode === null) keeper.kill('SIGKILL');
    }
  });

  it('a VS Code recording, stopped, ends every process of its launched group', async () => {
    const forked = marker();
    const launched = marker();
    const backend = createBackend();
    const argv = ['/bin/sh', '-c', `sleep ${forked} & exec sleep ${launched}`];
    const source = await backend.record({ events: [resolveEventSpec('task-clock')], target: { kind: 'launch', argv } });
    const group = source.childPid!;
    await waitFor('both sleeps', () => (sleepers(forked).length && sleepers(launched).length ? true : undefined));
    leftovers.push(...sleepers(forked), ...sleepers(launched));
    assert.equal(processGroupMembers(group).length, 2);
    source.dispose();
    await waitFor('the group to end', () => (processGroupMembers(group).length === 0 ? true : undefined), 5000);
    assert.deepEqual([...sleepers(forked), ...sleepers(launched)], []);
  });
});
