// What following a recording costs (not part of `npm run bench`):
//   node out/bench/follow-cost.js [seconds] [rates] [rounds]      e.g. follow-cost.js 3 10000,200000 3
// A paced tracepoint load (test/fixtures/kernel_paced.c: close(100000 + i) at RATE calls a second for SECONDS) runs
// four ways, in a rotating order, and the CPU time of everything each way ran is read from the kernel's account of
// reaped children (/proc/self/stat cutime + cstime); each way's cost is that less the workload's own, same round:
//   workload: the load alone, unrecorded (the baseline subtracted)
//   alone:  `ringside capture -q -o /dev/null` — the rings record; one snapshot at the end (what a flight recorder costs)
//   follow: `ringside capture --follow -q` to a file — every record read live and written as JSON Lines
//   perf:   `perf record -o - | perf script -i -` — perf's own live pipe, the best the other side does, to a file
// What each side wrote of the calls is counted (the least of the rounds is printed). Printed: CPU % of one core per side, and follow's cost over
// against perf's. Medians of the rounds.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { powerOfTwoAtLeast } from '../native/abi/units';
import { checkPrerequisites, compileC } from './tools';
import { BenchUnavailableError, median, round, Table } from './stats';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const WORKLOAD = join(ROOT, 'test', 'fixtures', 'kernel_paced.c');
const EVENT = 'syscalls:sys_enter_close';
const FIRST_FD = 100000;

/** CPU seconds of every child this process has reaped (and theirs), from /proc/self/stat. */
function reapedCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state (field 3), in clock ticks.
  const ticks = Number(fields[16 - 3]) + Number(fields[17 - 3]);
  return ticks / clockTicks;
}

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** The workload's numbered calls in `file`: JSON Lines (`"fd":100000`...) or perf script text (`fd: 0x000186a0`). */
function countCalls(file: string): number {
  let seen = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('sys_enter_close')) continue;
    const json = /"fd":(\d+)/.exec(line);
    const text = /fd: (0x[0-9a-f]+)/.exec(line);
    const fd = json ? Number(json[1]) : text ? Number(text[1]) : -1;
    if (fd >= FIRST_FD) seen++;
  }
  return seen;
}

function main(): void {
  const seconds = Number(process.argv[2] ?? 3);
  const rates = (process.argv[3] ?? '10000,200000').split(',').map(Number);
  const rounds = Number(process.argv[4] ?? 3);
  if (!(seconds > 0) || rates.some((rate) => !(rate > 0)) || !(rounds >= 1))
    throw new BenchUnavailableError('usage: follow-cost.js [seconds] [rate,rate...] [rounds]');
  const { gcc, perf } = checkPrerequisites(false);
  try {
    statSync(CLI);
  } catch {
    // Any stat failure means the same here: there is no bundle to run.
    throw new BenchUnavailableError(`${CLI} is missing: npm run build first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ringside-follow-cost-'));
  try {
    const workload = compileC(gcc, WORKLOAD, dir, 'kernel_paced', ['-O2']);
    const out = join(dir, 'out');
    const results: { rate: number; cpu: Record<string, number[]>; kept: Record<'follow' | 'perf', number[]> }[] = [];
    for (const rate of rates) {
      const calls = Math.round(rate * seconds);
      const argv = [workload, String(calls), String(seconds * 1000)];
      // Rings that hold a read's worth at the highest rate: 250 ms of 200k calls a second is about 5 MiB.
      // What each side wrote of the calls: a follower that falls behind its rings loses the overwritten part (and says so);
      // perf's pipe blocks the recording's reader instead, and loses what its ring cannot take.
      const kept: Record<'follow' | 'perf', number[]> = { follow: [], perf: [] };
      const pages = String(Math.max(64, powerOfTwoAtLeast((rate * 0.5 * 120) / 4096)));
      const sides: Record<string, () => void> = {
        workload: () => run(workload, argv.slice(1)),
        alone: () => run(process.execPath, [CLI, 'capture', '-q', '-e', EVENT, '--pages', pages, '-o', '/dev/null', '--', ...argv]),
        follow: () => {
          run(process.execPath, [CLI, 'capture', '--follow', '-q', '-e', EVENT, '--pages', pages, '--', ...argv], out);
          kept.follow.push(countCalls(out) / calls);
        },
        perf: () => {
          run(
            'sh',
            ['-c', `"${perf}" record -q -e ${EVENT} -o - -- ${argv.map((a) => `'${a}'`).join(' ')} | "${perf}" script -i - -F comm,tid,time,event,trace`],
            out,
          );
          kept.perf.push(countCalls(out) / calls);
        },
      };
      const names = Object.keys(sides);
      const cpu: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < names.length; i++) {
          const name = names[(r + i) % names.length];
          const before = reapedCpuSeconds();
          sides[name]();
          cpu[name].push(reapedCpuSeconds() - before);
        }
      }
      results.push({ rate, cpu, kept });
    }
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const percent = (cpuSeconds: number) => (100 * cpuSeconds) / seconds;
    const table = new Table([
      'calls/s',
      'workload % CPU',
      'ringside capture (no follow)',
      'ringside --follow',
      'perf record | perf script',
      'follow / perf',
      'follow kept',
      'perf kept',
    ]);
    const json: Record<string, number | string> = { seconds, rounds, loadavg };
    for (const { rate, cpu, kept } of results) {
      // What each way costs beyond the workload's own CPU, paired per round.
      const cost = (side: string) => cpu[side].map((c, r) => c - cpu.workload[r]);
      const follow = median(cost('follow'));
      const perfPipe = median(cost('perf'));
      table.add(
        rate,
        percent(median(cpu.workload)),
        percent(median(cost('alone'))),
        percent(follow),
        percent(perfPipe),
        follow / perfPipe,
        `${round(100 * Math.min(...kept.follow))} %`,
        `${round(100 * Math.min(...kept.perf))} %`,
      );
      json[`follow_cost_pct_${rate}`] = round(percent(follow));
      json[`perf_pipe_cost_pct_${rate}`] = round(percent(perfPipe));
      json[`capture_cost_pct_${rate}`] = round(percent(median(cost('alone'))));
      json[`follow_vs_perf_pipe_${rate}`] = round(follow / perfPipe);
      json[`follow_kept_min_${rate}`] = round(Math.min(...kept.follow));
      json[`perf_pipe_kept_min_${rate}`] = round(Math.min(...kept.perf));
    }
    console.log(`${seconds} s per run, ${rounds} rounds, load average ${loadavg}; CPU as % of one core beyond the workload's own`);
    console.log(table.toString());
    console.log(JSON.stringify(json));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs argv to its end (stdout to `file`, or ignored); a failure is the bench's error. */
function run(command: string, args: readonly string[], file?: string): void {
  const result = spawnSync('sh', ['-c', `exec "$0" "$@" > "${file ?? '/dev/null'}"`, command, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (result.status !== 0)
    throw new BenchUnavailableError(`${command} ${args.slice(0, 6).join(' ')}… failed (${result.status}): ${result.stderr.slice(-2000)}`);
}

try {
  main();
} catch (error) {
  if (!(error instanceof BenchUnavailableError)) throw error;
  process.stderr.write(`follow-cost: ${error.message}\n`);
  process.exitCode = 1;
}
