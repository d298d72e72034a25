// The ring-count case on its own (`node out/bench/ring-counts.js [--sizes 16,64] [--counts 1,2,16,64]`,
// root, gcc and perf needed, no browser): for each size, a real ring filled by the bench's
// tracepoint workload, the C walker over it, then its records dealt out to N simulated per-CPU
// rings (rings.ts), decoded on one thread and by a DecodePool; the parallel columns are checked
// byte for byte against one thread's. Minutes instead of the full bench's
// quarter hour, for working on the pool and the merge. Prints a table and one line of JSON with
// the load average at start and end.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPrerequisites, compileC } from './tools';
import { captureRingForCounts, layouts, WalkerProcess } from './kernel';
import { writeRingBytes } from './decoder-process';
import { splitIntoRings } from './rings';
import { measureParallel } from './parallel';
import { BenchUnavailableError, round, Table } from './stats';
import { DecodePool } from '../native/decode-pool/pool';

const MIB = 1024 * 1024;

function listArg(args: readonly string[], name: string, fallback: readonly number[]): number[] {
  const at = args.indexOf(name);
  if (at < 0) return [...fallback];
  const values = (args[at + 1] ?? '').split(',').map(Number);
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v <= 0))
    throw new BenchUnavailableError(`${name} takes positive integers, e.g. ${name} 16,64`);
  return values;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const sizes = listArg(args, '--sizes', [16, 64]);
  const counts = listArg(args, '--counts', [1, 2, 16, 64]);
  const runs = 7;
  const warmup = 4;
  const { gcc, perf } = checkPrerequisites(false);
  const tempDir = mkdtempSync(join(tmpdir(), 'ringside-bench-'));
  const loadBefore = loadavg();
  const started = Date.now();
  // Workers for every ring count, whatever the size, as npm run bench measures the pool.
  const pool = new DecodePool({ minWorkerBytes: 0 });
  const table = new Table(['ring', 'rings', 'records', 'threads', 'one thread ms', 'parallel ms', 'parallel/one', 'C ms', 'one thread/C', 'parallel/C']);
  const json: Record<string, unknown> = {};
  try {
    const walker = compileC(gcc, join(__dirname, '..', '..', 'bench', 'walker.c'), tempDir, 'walker', ['-O3', '-march=native']);
    const workload = compileC(gcc, join(__dirname, '..', '..', 'bench', 'getpid_loop.c'), tempDir, 'getpid_loop', ['-O1', '-g', '-fno-omit-frame-pointer']);
    const pauseCopy = compileC(gcc, join(__dirname, '..', '..', 'bench', 'pause_copy.c'), tempDir, 'pause_copy', ['-O3', '-march=native']);
    const tools = { perf, walker, pauseCopy, workload, tempDir };
    for (const size of sizes) {
      process.stderr.write(`ring ${size} MiB: filling, C walker\n`);
      const ring = await captureRingForCounts(tools, layouts()[0], size * MIB, runs);
      const bySize: Record<string, unknown> = { records: ring.records, c_walker_ms: round(ring.cWalkerNs / 1e6) };
      // The C walker is timed again around each count: on a VM the memory bandwidth both sides get
      // moves from minute to minute, so a C time from before the counts would measure that moment.
      const walker = new WalkerProcess(tools, writeRingBytes(tools.tempDir, ring.copy), ring.copy, ring.decoded);
      try {
        for (const count of counts) {
          process.stderr.write(`ring ${size} MiB as ${count} ring(s)\n`);
          const before = await walker.measure(3, 5);
          const c = await measureParallel({ events: ring.decoded.events, rings: splitIntoRings(ring.copy, count) }, runs, warmup, pool);
          const after = await walker.measure(3, 5);
          const cMs = (before.median_ns + after.median_ns) / 2e6;
          const oneMs = c.singleNs / 1e6;
          const parallelMs = c.parallelNs / 1e6;
          table.add(`${size} MiB`, count, c.records, c.threads, oneMs, parallelMs, parallelMs / oneMs, cMs, cMs / oneMs, cMs / parallelMs);
          bySize[String(count)] = {
            parallel_threads: c.threads,
            one_thread_same_runs_ms: round(oneMs),
            parallel_decode_ms: round(parallelMs),
            c_walker_ms: round(cMs),
            one_thread_vs_c: round(cMs / oneMs),
            parallel_vs_c: round(cMs / parallelMs),
          };
        }
      } finally {
        await walker.close();
      }
      json[`${size}MiB`] = bySize;
    }
    json.load_average = [loadBefore.map((v) => round(v, 3)), loadavg().map((v) => round(v, 3))];
    json.date = new Date(started).toISOString();
    json.seconds = Math.round((Date.now() - started) / 1000);
    console.log(
      `Ring count: a real ring's records dealt out to N simulated rings in bursts of 8; one thread vs ${pool.workerCount} worker(s)` +
        ` + this thread (C = the C walker over the same records as one ring, warm columns, timed just before and after each count); medians of ${runs} runs.`,
    );
    console.log(
      `Load average at start ${loadBefore.map((v) => v.toFixed(2)).join(' ')}, at end ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}.`,
    );
    console.log(table.toString());
    console.log(JSON.stringify(json));
  } finally {
    await pool.close();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof BenchUnavailableError ? `bench cannot run: ${error.message}` : error);
  process.exit(1);
});
