// The transport case on its own (`node out/bench/transport-pairs.js [--rounds N] [--before OTHER/out/bench/transport.js]`,
// root, gcc and perf needed, no browser): a real 64 MiB ring of the bench's workload, its first 1M records moved to the
// page's stand-in as transport.ts moves them, in rounds; each round also takes a warm memcpy of the same bytes and,
// with --before, runs another build's transport case on the same records between this build's runs (before, after,
// memcpy, ...; which build goes first alternates), so a change is measured side by side on a machine other work shares instead of in runs minutes apart.
// Prints each round, then the medians of the times and of the per-round ratios, with the load average at start and end.
// Each run's CPU time (this process: both sides' threads) is printed beside its wall time: on a machine other work
// shares, wall time also measures the others, CPU time mostly the run. And the time to the page holding the first
// batch: what the panel's first paint waits for.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkPrerequisites, compileC } from './tools';
import { captureRingForCounts, layouts } from './kernel';
import { firstRows, TransportCase } from './transport';
import { BenchUnavailableError, median, round } from './stats';

const MIB = 1024 * 1024;
const ROWS = 1_000_000;

type Case = Pick<TransportCase, 'measure' | 'memcpy' | 'close'>;

function argValue(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = Number(argValue(args, '--rounds') ?? 9);
  if (!Number.isInteger(rounds) || rounds < 1) throw new BenchUnavailableError('--rounds takes a positive integer');
  const beforePath = argValue(args, '--before');
  const { gcc, perf } = checkPrerequisites(false);
  const tempDir = mkdtempSync(join(tmpdir(), 'ringside-bench-'));
  const loadBefore = loadavg();
  const cases: { name: string; transport: Case }[] = [];
  try {
    const source = join(__dirname, '..', '..', 'bench');
    const walker = compileC(gcc, join(source, 'walker.c'), tempDir, 'walker', ['-O3', '-march=native']);
    const workload = compileC(gcc, join(source, 'getpid_loop.c'), tempDir, 'getpid_loop', ['-O1', '-g', '-fno-omit-frame-pointer']);
    const tools = { perf, walker, pauseCopy: walker, workload, tempDir };
    process.stderr.write('ring 64 MiB: filling\n');
    const ring = await captureRingForCounts(tools, layouts()[0], 64 * MIB, 1);
    const columns = firstRows(ring.decoded.columns, ROWS);
    if (columns.length < ROWS) throw new Error(`the 64 MiB ring held ${columns.length} records, fewer than ${ROWS}`);
    if (beforePath) {
      const before = (await import(resolve(beforePath))) as { TransportCase: new (...a: ConstructorParameters<typeof TransportCase>) => Case };
      cases.push({ name: 'before', transport: new before.TransportCase(ring.decoded, columns) });
    }
    cases.push({ name: 'after', transport: new TransportCase(ring.decoded, columns) });
    const times = new Map<string, number[]>();
    const add = (key: string, value: number) => times.set(key, [...(times.get(key) ?? []), value]);
    for (let round_ = -2; round_ < rounds; round_++) {
      const memcpy = cases[cases.length - 1].transport.memcpy();
      const line: string[] = [`memcpy ${memcpy.toFixed(2)}`];
      const ofRound = new Map<string, number>();
      // The builds take turns going first: a run pays for the garbage of the one before it.
      const order = round_ % 2 === 0 ? cases : [...cases].reverse();
      for (const transfer of [true, false]) {
        for (const { name, transport } of order) {
          const { wallMs, cpuMs, firstBatchMs } = await transport.measure(transfer);
          const key = `${name} ${transfer ? 'transfer' : 'clone'}`;
          ofRound.set(key, wallMs);
          ofRound.set(`${key} cpu`, cpuMs);
          ofRound.set(`${key} first batch`, firstBatchMs);
          line.push(`${key} ${wallMs.toFixed(1)} (cpu ${cpuMs.toFixed(1)}, first batch ${firstBatchMs.toFixed(1)})`);
        }
      }
      if (round_ < 0) continue;
      process.stderr.write(`round ${round_ + 1}: ${line.join(', ')}\n`);
      add('memcpy', memcpy);
      for (const [key, ms] of ofRound) {
        add(key, ms);
        if (!key.endsWith(' cpu') && !key.endsWith(' first batch')) add(`${key} / memcpy`, ms / memcpy);
      }
      if (beforePath)
        for (const mode of ['transfer', 'clone', 'transfer cpu', 'clone cpu', 'transfer first batch', 'clone first batch'])
          add(`after/before ${mode}`, ofRound.get(`after ${mode}`)! / ofRound.get(`before ${mode}`)!);
    }
    const result: Record<string, unknown> = { records: columns.length, rounds };
    for (const [key, values] of times) result[key] = round(median(values));
    result.load_before = loadBefore.map((v) => round(v, 3));
    result.load_after = loadavg().map((v) => round(v, 3));
    for (const [key, value] of Object.entries(result)) console.log(`${key.padEnd(28)} ${JSON.stringify(value)}`);
    console.log(JSON.stringify(result));
  } finally {
    for (const { transport } of cases) await transport.close();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof BenchUnavailableError ? error.message : ((error as Error).stack ?? String(error))}\n`);
  process.exitCode = 1;
});
