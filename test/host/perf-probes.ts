// perf as the referee of uprobe counts: `perf probe -x BINARY -a GROUP:pN=PROBE` for each probe, counted by
// `perf stat` of every probe of the group, either around a command (perf stat follows its children: the command may
// be a Ringside capture, so that perf counts the very run Ringside records) or system-wide while something else
// launches the program (the editor, in the e2e tests). The probes are deleted whatever happens.

import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let groups = 0;

function withPerfProbes<T>(binary: string, probes: readonly string[], body: (group: string, dir: string) => T): T {
  const group = `ringside_test_${process.pid}_${groups++}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-perf-'));
  const cleanup = () => {
    spawnSync('perf', ['probe', '-q', '-d', `${group}:*`], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  let result: T;
  try {
    probes.forEach((probe, index) =>
      execFileSync('perf', ['probe', '-q', '-x', binary, '-a', `${group}:p${index}=${probe}`], { stdio: ['ignore', 'ignore', 'pipe'] }),
    );
    result = body(group, dir);
  } catch (error) {
    cleanup();
    throw error;
  }
  if (result instanceof Promise) return result.finally(cleanup) as T;
  cleanup();
  return result;
}

/** The sum of the group's counts in a `perf stat -x , -o FILE` output. */
function statSum(file: string, group: string, probes: number, stderr: string): number {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((row) => row.includes(`${group}:`));
  assert.ok(rows.length >= probes, `perf stat printed no count for ${group}: ${stderr}`);
  return rows.reduce((sum, row) => sum + Number(row.split(',')[0]), 0);
}

/** perf's count of the probes while `command` runs (and its children), and the command's output. */
export function underPerfProbes(binary: string, probes: readonly string[], command: readonly string[]) {
  return withPerfProbes(binary, probes, (group, dir) => {
    const counts = path.join(dir, 'stat.csv');
    const run = spawnSync('perf', ['stat', '-x', ',', '-o', counts, '-e', `${group}:*`, '--', ...command], { encoding: 'utf8', maxBuffer: 1 << 30, input: '' });
    return { perf: statSum(counts, group, probes.length, run.stderr), code: run.status, stdout: run.stdout, stderr: run.stderr };
  });
}

/**
 * perf's count of the probes, system-wide (`perf stat -a`), while `body` runs: every execution of those addresses of
 * `binary` by any process. For a binary only the test runs (a fresh build), that is the test's own run.
 */
export function perfProbeCountWhile<T>(binary: string, probes: readonly string[], body: () => Promise<T>): Promise<{ perf: number; value: T }> {
  return withPerfProbes(binary, probes, async (group, dir) => {
    const counts = path.join(dir, 'stat.csv');
    // Opened disabled (-D -1) and enabled through its control fd (3), which answers "ack" on fd 4 once counting.
    const stat = spawn('perf', ['stat', '-a', '-x', ',', '-o', counts, '-e', `${group}:*`, '-D', '-1', '--control', 'fd:3,4'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    stat.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const exited = new Promise<void>((resolve) => stat.once('exit', () => resolve()));
    try {
      const ack = stat.stdio[4] as NodeJS.ReadableStream;
      const enabled = new Promise<void>((resolve, reject) => {
        ack.once('data', () => resolve());
        void exited.then(() => reject(new Error(`perf stat ended before counting: ${stderr}`)));
      });
      (stat.stdio[3] as NodeJS.WritableStream).write('enable\n');
      await enabled;
      const value = await body();
      stat.kill('SIGINT');
      await exited;
      return { perf: statSum(counts, group, probes.length, stderr), value };
    } finally {
      if (stat.exitCode === null && stat.signalCode === null) {
        stat.kill('SIGKILL');
        await exited;
      }
    }
  });
}
