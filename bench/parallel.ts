// Decoding rings in parallel (a DecodePool: worker threads plus this one) against one thread, on
// the same rings in the same run, the parallel columns checked byte for byte against the
// single-thread ones. Used by the ring-count case (rings.ts); run on its own
// (`node out/bench/parallel.js`) it prints where a pool starts to pay: two rings of growing size.

import { availableParallelism, loadavg } from 'node:os';
import { ColumnArena } from '../native/decode/arena';
import { decodeSnapshot, type SnapshotInput } from '../native/decode/columns';
import type { DecodedSnapshot } from '../native/decode/types';
import { DecodePool } from '../native/decode-pool/pool';
import { Sample } from '../native/abi/uapi';
import { attrOf, columnByteDifferences, eventOf, ringFromRecords, sampleRecord } from '../native/decode/test-records';
import { median, nowNs } from './stats';

export interface ParallelResult {
  /** Threads decoding: the pool's workers plus this one. */
  readonly threads: number;
  /** Decode + merge on one thread from a warm arena, median ns. */
  readonly singleNs: number;
  /** Decode on every thread + merge here from a warm shared arena, median ns. */
  readonly parallelNs: number;
}

/** Times one thread and a pool on the same input, alternating, `runs` times each after `warmup`. */
export async function measureParallel(input: SnapshotInput, runs: number, warmup: number, pool: DecodePool): Promise<ParallelResult> {
  const arena = new ColumnArena();
  const sharedArena = new ColumnArena({ shared: true });
  let single: DecodedSnapshot | undefined;
  let parallel: DecodedSnapshot | undefined;
  const singleNs: number[] = [];
  const parallelNs: number[] = [];
  for (let i = -warmup; i < runs; i++) {
    if (single) arena.recycle(single.columns);
    arena.warm();
    let started = nowNs();
    single = decodeSnapshot(input, { arena });
    const singleTook = nowNs() - started;
    if (parallel) sharedArena.recycle(parallel.columns);
    sharedArena.warm();
    started = nowNs();
    parallel = await pool.decode(input, { arena: sharedArena });
    const parallelTook = nowNs() - started;
    if (i === -warmup) {
      const differences = columnByteDifferences(parallel.columns, single.columns);
      if (differences.length > 0) throw new Error(`parallel decode differs from one thread: ${differences.join('; ')}`);
    }
    if (i < 0) continue;
    singleNs.push(singleTook);
    parallelNs.push(parallelTook);
  }
  const threads = pool.usesWorkers(input) ? Math.min(input.rings.length, pool.workerCount + 1) : 1;
  return { threads, singleNs: median(singleNs), parallelNs: median(parallelNs) };
}

/** Records one CPU writes before the other does, as in the ring-count case. */
const BURST = 8;

/** Two full backward rings of `ringBytes` (a power of two) of 56-byte samples each, interleaved in time in bursts. */
function twoRings(ringBytes: number): SnapshotInput {
  const recordsPerRing = Math.floor(ringBytes / 56);
  const timeOf = (i: number, cpu: number) => 1_000_000n + BigInt(2 * BURST * Math.floor(i / BURST) + cpu * BURST + (i % BURST));
  const sampleType = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
  const ring = (cpu: number) => ringFromRecords(Array.from({ length: recordsPerRing }, (_, i) =>
    sampleRecord(sampleType, { id: 7n, ip: 0x401000n + BigInt(i & 255), pid: 10, tid: 10 + cpu, time: timeOf(i, cpu), cpu, period: 1n })),
  ringBytes, 'backward', { ringId: cpu, cpu });
  return { events: [eventOf(0, attrOf(sampleType), [7n], 'bench')], rings: [ring(0), ring(1)] };
}

async function thresholdSweep(): Promise<void> {
  const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0 });
  // The same pool merging on this thread only: what cutting the merge into slices adds, under the same load.
  const mergeHere = new DecodePool({ minWorkerBytes: 0, minMergeRows: Infinity });
  try {
    console.log(`two rings, ${pool.workerCount} worker(s) + this thread (${availableParallelism()} CPUs), load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
    console.log('KiB per ring\tone thread ms\tparallel ms\tparallel/one\tmerge here: one thread ms\tparallel ms\tparallel/one');
    for (const kib of [64, 256, 1024, 2048, 4096, 16384]) {
      const input = twoRings(kib * 1024);
      const r = await measureParallel(input, 15, 3, pool);
      const h = await measureParallel(input, 15, 3, mergeHere);
      const figures = [r.singleNs / 1e6, r.parallelNs / 1e6, r.parallelNs / r.singleNs, h.singleNs / 1e6, h.parallelNs / 1e6, h.parallelNs / h.singleNs];
      console.log(`${kib}\t${figures.map((value) => value.toFixed(2)).join('\t')}`);
    }
    console.log(`load average at the end ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  } finally {
    await pool.close();
    await mergeHere.close();
  }
}

if (require.main === module) {
  thresholdSweep().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
