// What a user waits for, Ringside against perf in the same run (`node out/bench/profile-outputs.js [--rounds N]`,
// root; not part of `npm run bench`'s ring cases): each command as a whole process, wall time and peak RSS from
// /usr/bin/time, the two sides of every ratio run in turn within one round so a machine whose speed drifts moves
// both. Cases:
//   capture -a -e cpu-clock -c 50000 -g for 1 s and 3 s to symbolized JSON Lines
//     vs perf record -a (same event and period) -- sleep SEC, then perf script into a file;
//   decode of perf's own `perf record -a -g` perf.data to JSON Lines vs perf script of it;
//   the same decode to HTML, and to pprof (.pb.gz), each vs the decode to JSON Lines.
// Those decodes run without the symbol cache (RINGSIDE_NO_SYMBOL_CACHE=1: every run cold, as before there was one);
// two more rows run the decode to JSON Lines with a fresh cache per round: its first run (cold, writing the cache)
// and its second (warm), each vs perf script.
// `--decode-only` leaves the capture cases out; `--data FILE` decodes that perf.data instead of recording one. `--before CLI` (another build's dist/cli.js) runs that build's decodes in the same rounds, for a change's before
// and after side by side. Prints a table per case (medians of the rounds, ratios paired by round) and one line of JSON.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { checkPrerequisites } from './tools';
import { BenchUnavailableError, median, round, Table } from './stats';

const cli = path.resolve(__dirname, '../../dist/cli.js');
/** `--before CLI`: another build's dist/cli.js, whose decodes run in the same rounds (a change's before and after). */
const beforeAt = process.argv.indexOf('--before');
const beforeCli = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1]) : undefined;

interface Measured {
  readonly wallS: number;
  /** User + system CPU seconds of the command and its children: steadier than wall on a machine shared with others. */
  readonly cpuS: number;
  readonly rssMiB: number;
}

/** The symbol cache off: what the rows measured before there was one, and what another build (--before) ignores. */
const NO_CACHE = { RINGSIDE_NO_SYMBOL_CACHE: '1' };

/** Runs `argv` under /usr/bin/time with `env` added; its wall and CPU seconds and the peak RSS of its largest process. */
function timed(argv: readonly string[], env: Record<string, string> = NO_CACHE): Measured {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', ...argv], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  });
  const last = result.stderr.trim().split('\n').pop() ?? '';
  const match = /^([\d.]+) ([\d.]+) ([\d.]+) (\d+)$/.exec(last);
  if (result.status !== 0 || !match) throw new BenchUnavailableError(`${argv.join(' ')} failed (${result.status}): ${result.stderr.slice(-2000)}`);
  return { wallS: Number(match[1]), cpuS: Number(match[2]) + Number(match[3]), rssMiB: Number(match[4]) / 1024 };
}

function lines(file: string): number {
  const text = readFileSync(file, 'utf8');
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

interface PairRow {
  readonly what: string;
  readonly ours: Measured[];
  readonly theirs: Measured[];
  readonly note: string;
}

function summarize(table: Table, row: PairRow): Record<string, number> {
  const wall = row.ours.map((m, i) => m.wallS / row.theirs[i].wallS);
  const rss = row.ours.map((m, i) => m.rssMiB / row.theirs[i].rssMiB);
  const cpu = row.ours.map((m, i) => m.cpuS / row.theirs[i].cpuS);
  const figures = {
    ours_wall_s: median(row.ours.map((m) => m.wallS)),
    theirs_wall_s: median(row.theirs.map((m) => m.wallS)),
    wall_ratio: median(wall),
    wall_ratio_min: Math.min(...wall),
    wall_ratio_max: Math.max(...wall),
    ours_cpu_s: median(row.ours.map((m) => m.cpuS)),
    theirs_cpu_s: median(row.theirs.map((m) => m.cpuS)),
    cpu_ratio: median(cpu),
    cpu_ratio_min: Math.min(...cpu),
    cpu_ratio_max: Math.max(...cpu),
    ours_rss_mib: median(row.ours.map((m) => m.rssMiB)),
    theirs_rss_mib: median(row.theirs.map((m) => m.rssMiB)),
    rss_ratio: median(rss),
  };
  table.add(
    row.what,
    figures.ours_wall_s,
    figures.theirs_wall_s,
    `${round(figures.wall_ratio, 3)} (${round(figures.wall_ratio_min, 3)}-${round(figures.wall_ratio_max, 3)})`,
    `${round(figures.cpu_ratio, 3)} (${round(figures.cpu_ratio_min, 3)}-${round(figures.cpu_ratio_max, 3)})`,
    round(figures.ours_rss_mib, 4),
    round(figures.theirs_rss_mib, 4),
    round(figures.rss_ratio, 3),
    row.note,
  );
  return Object.fromEntries(Object.entries(figures).map(([key, value]) => [key, round(value)]));
}

function main(): void {
  const roundsAt = process.argv.indexOf('--rounds');
  const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 3;
  const { perf } = checkPrerequisites(false);
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-bench-outputs-'));
  const loadStart = loadavg()[0];
  const table = new Table([
    'case',
    'ringside s',
    'baseline s',
    'wall ratio (range)',
    'CPU ratio (range)',
    'ringside MiB',
    'baseline MiB',
    'RSS ratio',
    'records ringside / baseline',
  ]);
  const json: Record<string, unknown> = { rounds, load_start: round(loadStart, 3) };
  try {
    for (const seconds of process.argv.includes('--decode-only') ? [] : [1, 3]) {
      const row: PairRow & { ours: Measured[]; theirs: Measured[] } = {
        what: `capture -a -g ${seconds} s → JSONL vs perf record + perf script`,
        ours: [],
        theirs: [],
        note: '',
      };
      let counts = '';
      for (let r = 0; r < rounds; r++) {
        const ours = path.join(dir, 'capture.jsonl');
        row.ours.push(timed([process.execPath, cli, 'capture', '-q', '-a', '-e', 'cpu-clock', '-c', '50000', '-g', '--duration', String(seconds), '-o', ours]));
        const data = path.join(dir, 'perf-capture.data');
        const text = path.join(dir, 'perf-capture.txt');
        row.theirs.push(
          timed(['sh', '-c', `"$0" record -q -a -e cpu-clock -c 50000 -g -o "$1" -- sleep ${seconds} && "$0" script -i "$1" > "$2"`, perf, data, text]),
        );
        counts = `${lines(ours)} lines / ${
          spawnSync(perf, ['script', '-i', data, '-F', 'time'], { encoding: 'utf8', maxBuffer: 1 << 30 })
            .stdout.split('\n')
            .filter(Boolean).length
        } samples`;
      }
      json[`capture_${seconds}s_jsonl_vs_perf`] = { ...summarize(table, { ...row, note: counts }) };
    }

    // perf's own file: perf record -a -g for 1 s, decoded by both; or `--data FILE`, one such file kept, so runs on a
    // quiet and on a busy machine decode the same records (a quiet second records a fifth of a busy one's).
    const dataAt = process.argv.indexOf('--data');
    const data = dataAt > 0 ? path.resolve(process.argv[dataAt + 1]) : path.join(dir, 'perf-a-g.data');
    if (dataAt < 0) {
      const recorded = spawnSync(perf, ['record', '-q', '-a', '-g', '-o', data, '--', 'sleep', '1'], { encoding: 'utf8' });
      if (recorded.status !== 0) throw new BenchUnavailableError(`perf record -a -g failed: ${recorded.stderr}`);
    }
    const decodeTo = (out: string, which = cli) => [process.execPath, which, 'decode', data, '-o', path.join(dir, out)];
    const jsonl: Measured[] = [];
    const perfScript: Measured[] = [];
    const html: Measured[] = [];
    const pprof: Measured[] = [];
    const before = { jsonl: [] as Measured[], html: [] as Measured[], pprof: [] as Measured[] };
    const cached = { cold: [] as Measured[], warm: [] as Measured[], perfScript: [] as Measured[] };
    for (let r = 0; r < rounds; r++) {
      // A cache of this round's own: its first decode builds and writes it, the second loads it; perf script between.
      const cacheHome = { XDG_CACHE_HOME: mkdtempSync(path.join(dir, 'cache-')) };
      cached.cold.push(timed(decodeTo('cold.jsonl'), cacheHome));
      cached.perfScript.push(timed(['sh', '-c', '"$0" script -i "$1" > "$2"', perf, data, path.join(dir, 'decode.txt')]));
      cached.warm.push(timed(decodeTo('warm.jsonl'), cacheHome));
      if (beforeCli) before.jsonl.push(timed(decodeTo('before.jsonl', beforeCli)));
      jsonl.push(timed(decodeTo('decode.jsonl')));
      perfScript.push(timed(['sh', '-c', '"$0" script -i "$1" > "$2"', perf, data, path.join(dir, 'decode.txt')]));
      if (beforeCli) before.html.push(timed(decodeTo('before.html', beforeCli)));
      html.push(timed(decodeTo('decode.html')));
      if (beforeCli) before.pprof.push(timed(decodeTo('before.pb.gz', beforeCli)));
      pprof.push(timed(decodeTo('decode.pb.gz')));
    }
    const size = `${(statSync(data).size / 1048576).toFixed(1)} MiB perf.data, ${lines(path.join(dir, 'decode.jsonl'))} lines`;
    json.decode_jsonl_vs_perf_script = summarize(table, {
      what: 'decode perf.data (-a -g) → JSONL vs perf script',
      ours: jsonl,
      theirs: perfScript,
      note: size,
    });
    json.decode_jsonl_cache_cold_vs_perf_script = summarize(table, {
      what: 'decode → JSONL, symbol cache cold (first run) vs perf script',
      ours: cached.cold,
      theirs: cached.perfScript,
      note: '',
    });
    json.decode_jsonl_cache_warm_vs_perf_script = summarize(table, {
      what: 'decode → JSONL, symbol cache warm (second run) vs perf script',
      ours: cached.warm,
      theirs: cached.perfScript,
      note: '',
    });
    json.decode_jsonl_cache_warm_vs_cold = summarize(table, { what: 'decode → JSONL, warm vs cold', ours: cached.warm, theirs: cached.cold, note: '' });
    json.decode_html_vs_jsonl = summarize(table, { what: 'decode → HTML vs → JSONL', ours: html, theirs: jsonl, note: '' });
    json.decode_pprof_vs_jsonl = summarize(table, { what: 'decode → pprof vs → JSONL', ours: pprof, theirs: jsonl, note: '' });
    if (beforeCli) {
      // The same rows for the other build, from the same rounds, then each output of this build against its own.
      json.before_decode_jsonl_vs_perf_script = summarize(table, {
        what: 'before: decode → JSONL vs perf script',
        ours: before.jsonl,
        theirs: perfScript,
        note: beforeCli,
      });
      json.before_decode_html_vs_jsonl = summarize(table, { what: 'before: decode → HTML vs → JSONL', ours: before.html, theirs: before.jsonl, note: '' });
      json.before_decode_pprof_vs_jsonl = summarize(table, { what: 'before: decode → pprof vs → JSONL', ours: before.pprof, theirs: before.jsonl, note: '' });
      for (const [name, after, was] of [
        ['jsonl', jsonl, before.jsonl],
        ['html', html, before.html],
        ['pprof', pprof, before.pprof],
      ] as const) {
        json[`decode_${name}_after_vs_before`] = summarize(table, { what: `after vs before: decode → ${name}`, ours: after, theirs: was, note: '' });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  json.load_end = round(loadavg()[0], 3);
  console.log(`load average ${round(loadStart, 3)} at start, ${json.load_end} at end; ${rounds} rounds, medians (ratios paired by round)`);
  console.log(table.toString());
  console.log(JSON.stringify(json));
}

try {
  main();
} catch (error) {
  if (error instanceof BenchUnavailableError) {
    console.error(`bench: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
