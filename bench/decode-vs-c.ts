// decode_vs_c alone, for working on the decoder: `node out/bench/decode-vs-c.js [--layout
// callchain+raw|basic] [--sizes 1,16] [--rounds 21] [--builds DIR,...]` (as root; npm run build and
// tsc -b first). Fills a real ring per size as the bench does (captureRingForCounts), then takes
// decode_vs_c as runKernelCase takes it: the C walker and the decoder each in a process of its own
// over the same bytes, each settled for a second, then rounds of 3 timed passes after 5 untimed,
// the ratio per round and its median. --builds adds other builds' decoders (each DIR an out/ of
// another checkout, e.g. a copy of out/ before a change) to every round, in a rotating order, so
// old and new code meet the same machine state; every decoder's columns are checked against the C
// walker's. Prints one line per size and decoder. Not part of npm run bench.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkPrerequisites, compileC } from './tools';
import { captureRingForCounts, layouts, WalkerProcess, type Tools } from './kernel';
import { DecoderProcess, writeRingBytes } from './decoder-process';
import { median } from './stats';
import type { SideMeasurement } from './checksum';

const MIB = 1024 * 1024;
const SETTLE_NS = 1e9;

function option(args: readonly string[], name: string, fallback: string): string {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
}

function assertSameColumns(walker: SideMeasurement, decoder: SideMeasurement, who: string): void {
  if (walker.records !== decoder.records) throw new Error(`the C walker found ${walker.records} records where ${who} found ${decoder.records}`);
  for (const [key, value] of Object.entries(walker.checksum)) {
    if (decoder.checksum[key] !== value) throw new Error(`C walker and ${who} disagree on ${key}: ${value} vs ${decoder.checksum[key]}`);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const layoutName = option(args, '--layout', 'callchain+raw');
  const layout = layouts().find((l) => l.name === layoutName);
  if (!layout)
    throw new Error(
      `--layout ${layoutName}: not one of ${layouts()
        .map((l) => l.name)
        .join(', ')}`,
    );
  const sizes = option(args, '--sizes', '1,16').split(',').map(Number);
  const rounds = Number(option(args, '--rounds', '21'));
  const others = option(args, '--builds', '').split(',').filter(Boolean);
  const scripts = [join(__dirname, 'decoder-process.js'), ...others.map((dir) => join(resolve(dir), 'bench', 'decoder-process.js'))];
  const { gcc, perf } = checkPrerequisites(false);
  const tempDir = mkdtempSync(join(tmpdir(), 'ringside-decode-vs-c-'));
  try {
    const walkerBinary = compileC(gcc, join(__dirname, '..', '..', 'bench', 'walker.c'), tempDir, 'walker', ['-O3', '-march=native']);
    const workload = compileC(gcc, join(__dirname, '..', '..', 'bench', 'getpid_loop.c'), tempDir, 'getpid_loop', ['-O1', '-g', '-fno-omit-frame-pointer']);
    const tools: Tools = { perf, walker: walkerBinary, pauseCopy: '', workload, tempDir };
    for (const size of sizes) {
      const { decoded, copy } = await captureRingForCounts(tools, layout, size * MIB, 1);
      const bytesFile = writeRingBytes(tempDir, copy);
      const walker = new WalkerProcess(tools, bytesFile, copy, decoded);
      const decoders = scripts.map((script) => new DecoderProcess(tempDir, decoded.events, copy, bytesFile, script));
      try {
        await walker.measure(1, 0);
        const warmRuns = Math.max(2, Math.ceil(2_000_000 / Math.max(1, copy.validBytes / 56)));
        for (const decoder of decoders) {
          const first = await decoder.measure(1, warmRuns);
          const more = Math.ceil(SETTLE_NS / Math.max(1, first.median_ns)) - warmRuns;
          if (more > 0) await decoder.measure(1, more);
        }
        const ratios = decoders.map((): number[] => []);
        const times = decoders.map((): number[] => []);
        const walkerTimes: number[] = [];
        for (let round = 0; round < rounds; round++) {
          for (let k = 0; k < decoders.length; k++) {
            const d = (k + round) % decoders.length;
            const c = await walker.measure(3, 5);
            const ours = await decoders[d].measure(3, 5);
            assertSameColumns(c, ours, scripts[d]);
            walkerTimes.push(c.median_ns);
            times[d].push(ours.median_ns);
            ratios[d].push(c.median_ns / ours.median_ns);
          }
        }
        const cUs = (median(walkerTimes) / 1000).toFixed(0);
        scripts.forEach((script, d) => {
          const perRound = ratios[d].map((r) => r.toFixed(2)).join(' ');
          console.log(
            `${layout.name} ${size} MiB, ${copy.validBytes} bytes: decode_vs_c ${median(ratios[d]).toFixed(3)} (decoder ${(median(times[d]) / 1000).toFixed(0)} µs, C ${cUs} µs; rounds ${perRound}) ${script}`,
          );
        });
      } finally {
        await walker.close();
        for (const decoder of decoders) await decoder.close();
      }
    }
  } finally {
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exit(1);
});
