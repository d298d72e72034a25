// The cost per hit of counting a source line (not part of `npm run bench`):
//   node out/bench/line-probe-cost.js [hits] [rounds]
// bench/line_loop.c runs one marked line `hits` times (default 2000) and times the loop itself. Each round runs it
// three ways, in a rotating order: unprobed (the baseline), under Ringside's uprobes (`ringside capture -e
// line:line_loop.c:LINE`, every hit a sample in the flight-recorder ring), and under gdb's `dprintf` at the same line
// (a breakpoint that prints and continues: every hit stops the program in the debugger). The cost per hit is the
// probed loop's time less the unprobed one's, divided by the hits; each side checks that it saw every hit. Medians of
// `rounds` (default 5) rounds, and the ratio gdb / uprobe from the same rounds.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPrerequisites, compileC } from './tools';
import { BenchUnavailableError, median, round, Table } from './stats';

const SOURCE = join(__dirname, '..', '..', 'bench', 'line_loop.c');
const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

/** The loop's own time from its "loop_ns LOOPS NS" line. */
function loopNs(stdout: string, hits: number, side: string): number {
  const match = /^loop_ns (\d+) (\d+)$/m.exec(stdout);
  if (!match || Number(match[1]) !== hits) throw new BenchUnavailableError(`${side}: the loop printed no time for ${hits} iterations:\n${stdout.slice(-2000)}`);
  return Number(match[2]);
}

function main(): void {
  const hits = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 5);
  if (!Number.isInteger(hits) || hits < 1 || !Number.isInteger(rounds) || rounds < 1)
    throw new BenchUnavailableError('usage: line-probe-cost.js [hits ≥ 1] [rounds ≥ 1]');
  const { gcc } = checkPrerequisites(false);
  if (spawnSync('sh', ['-c', 'command -v gdb'], { encoding: 'utf8' }).status !== 0)
    throw new BenchUnavailableError('gdb is not installed (the dprintf baseline): apt-get install gdb');
  const dir = mkdtempSync(join(tmpdir(), 'ringside-line-cost-'));
  try {
    // -O0: the marked line has an address of its own (at -O1 it shares the function's entry, which perf probe refuses).
    const program = compileC(gcc, SOURCE, dir, 'line_loop', ['-O0', '-g']);
    const line =
      readFileSync(SOURCE, 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('/* BENCH_LINE */')) + 1;
    const spec = `line:line_loop.c:${line}`;
    const sides: Record<string, () => number> = {
      unprobed: () => {
        const run = spawnSync(program, [String(hits)], { encoding: 'utf8' });
        if (run.status !== 0) throw new BenchUnavailableError(`line_loop failed: ${run.stderr}`);
        return loopNs(run.stdout, hits, 'unprobed');
      },
      uprobe: () => {
        const out = join(dir, 'hits.jsonl');
        const run = spawnSync(process.execPath, [CLI, 'capture', '-q', '-e', spec, '--pages', '256', '-o', out, '--', program, String(hits)], {
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        });
        if (run.status !== 0) throw new BenchUnavailableError(`ringside capture -e ${spec} failed (${run.status}): ${run.stderr}`);
        const seen = readFileSync(out, 'utf8')
          .split('\n')
          .filter((row) => row.includes(`"event":"${spec}"`)).length;
        if (seen !== hits) throw new BenchUnavailableError(`ringside counted ${seen} of ${hits} hits of ${spec}`);
        return loopNs(run.stdout, hits, 'uprobe');
      },
      gdb: () => {
        const run = spawnSync('gdb', ['-batch', '-nx', '-ex', `dprintf line_loop.c:${line},"hit\\n"`, '-ex', 'run', '--args', program, String(hits)], {
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        });
        const seen = run.stdout.split('\n').filter((row) => row === 'hit').length;
        if (run.status !== 0 || seen !== hits)
          throw new BenchUnavailableError(`gdb dprintf printed ${seen} of ${hits} hits (${run.status}): ${run.stderr.slice(-2000)}`);
        return loopNs(run.stdout, hits, 'gdb dprintf');
      },
    };
    const names = Object.keys(sides);
    const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      // A rotating order, so no side always runs first after the others warmed (or loaded) the machine.
      for (let i = 0; i < names.length; i++) {
        const name = names[(r + i) % names.length];
        times[name].push(sides[name]());
      }
    }
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const perHit = (name: string) => times[name].map((ns, r) => (ns - times.unprobed[r]) / hits);
    const uprobe = perHit('uprobe');
    const gdb = perHit('gdb');
    const table = new Table(['side', 'loop ns/iteration (median)', 'cost per hit ns (median)', 'vs uprobe']);
    table.add('unprobed', median(times.unprobed) / hits, 0, '—');
    table.add(`Ringside uprobe (${spec})`, median(times.uprobe) / hits, median(uprobe), 1);
    table.add('gdb dprintf', median(times.gdb) / hits, median(gdb), median(gdb.map((g, r) => g / uprobe[r])));
    console.log(`${hits} hits per run, ${rounds} rounds, load average ${loadavg}`);
    console.log(table.toString());
    console.log(
      JSON.stringify({
        hits,
        rounds,
        loadavg,
        unprobed_ns_per_iteration: round(median(times.unprobed) / hits),
        uprobe_ns_per_hit: round(median(uprobe)),
        gdb_dprintf_ns_per_hit: round(median(gdb)),
        gdb_dprintf_vs_uprobe: round(median(gdb.map((g, r) => g / uprobe[r]))),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (error) {
  if (!(error instanceof BenchUnavailableError)) throw error;
  process.stderr.write(`line-probe-cost: ${error.message}\n`);
  process.exitCode = 1;
}
