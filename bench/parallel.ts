// Decoding rings in parallel (a DecodePool: worker threads plus this one) against one thread, on
// the same rings in the same run, the parallel columns checked byte for byte against the
// single-thread ones. Used by the ring-count case (rings.ts); run on its own
// (`node out/bench/parallel.js`) it prints where a pool starts to pay: two rings of growing size.

import { availableParallelism, loadavg } from 'node:os';
import { ColumnArena } from '../native/decode/arena';
import { decodeSnapshot } from '../native/decode/columns';
import type { SnapshotInput } from '../native/decode/assemble';
import type { RecordColumns } from '../native/decode/types';
import { RECORD_COLUMN_NAMES } from '../native/decode/column-schema';
import { DecodePool } from '../native/decode-pool/pool';
import { Sample } from '../native/abi/uapi';
import { attrOf, columnByteDifferences, eventOf, ringFromRecords, sampleRecord } from '../native/decode/test-records';
import { median, nowNs } from './stats';

export interface ParallelResult {
  /** Threads decoding: the pool's workers plus this one. */
  readonly threads: number;
  /** Records decoded. */
  readonly records: number;
  /** Decode + merge on one thread from a warm arena, median ns. */
  readonly singleNs: number;
  /** Decode on every thread + merge from a warm shared arena, median ns. */
  readonly parallelNs: number;
  /** The same for each of the `others` pools, in the same runs. */
  readonly othersNs: readonly number[];
}

/**
 * Times one thread, a pool and `others` pools on the same input, `runs` times each after `warmup`:
 * one of each per round, the pools in an order that rotates every round, so load and cache state
 * fall on every side alike. Every pool's columns are checked against one thread's once.
 */
export async function measureParallel(
  input: SnapshotInput,
  runs: number,
  warmup: number,
  pool: DecodePool,
  others: readonly DecodePool[] = [],
): Promise<ParallelResult> {
  const arena = new ColumnArena();
  const pools = [pool, ...others];
  const arenas = pools.map(() => new ColumnArena({ shared: true }));
  // One thread's columns of the first round, copied out: the pools' columns are checked against them.
  let reference: RecordColumns | undefined;
  let records = 0;
  const singleNs: number[] = [];
  const poolNs: number[][] = pools.map(() => []);
  for (let i = -warmup; i < runs; i++) {
    arena.warm();
    const started = nowNs();
    const single = decodeSnapshot(input, { arena });
    if (i >= 0) singleNs.push(nowNs() - started);
    records = single.columns.length;
    reference ??= copyOfColumns(single.columns);
    // Each decode's columns are handed back before the next decode, as a consumer done with a
    // snapshot does: their memory (an arena's set, or the snapshot memory's) serves the next one.
    arena.recycle(single.columns);
    for (let k = 0; k < pools.length; k++) {
      const p = (k + i + warmup) % pools.length;
      arenas[p].warm();
      const began = nowNs();
      const parallel = await pools[p].decode(input, { arena: arenas[p] });
      const took = nowNs() - began;
      if (i === -warmup) {
        const differences = columnByteDifferences(parallel.columns, reference);
        if (differences.length > 0) throw new Error(`parallel decode (pool ${p}) differs from one thread: ${differences.join('; ')}`);
      }
      arenas[p].recycle(parallel.columns);
      if (i >= 0) poolNs[p].push(took);
    }
  }
  const threads = pool.usesWorkers(input) ? Math.min(input.rings.length, pool.workerCount + 1) : 1;
  const medians = poolNs.map((list) => median(list));
  return { threads, records, singleNs: median(singleNs), parallelNs: medians[0], othersNs: medians.slice(1) };
}

/** `columns` copied into memory of their own (slice() copies a view of shared memory too). */
function copyOfColumns(columns: RecordColumns): RecordColumns {
  const copy: Record<string, unknown> = { ...columns };
  for (const name of RECORD_COLUMN_NAMES) copy[name] = columns[name].slice();
  return copy as unknown as RecordColumns;
}

/** Records one CPU writes before the other does, as in the ring-count case. */
const BURST = 8;

/** Two full backward rings of `ringBytes` (a power of two) of 56-byte samples each, interleaved in time in bursts. */
function twoRings(ringBytes: number): SnapshotInput {
  const recordsPerRing = Math.floor(ringBytes / 56);
  const timeOf = (i: number, cpu: number) => 1_000_000n + BigInt(2 * BURST * Math.floor(i / BURST) + cpu * BURST + (i % BURST));
  const sampleType = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
  const ring = (cpu: number) =>
    ringFromRecords(
      Array.from({ length: recordsPerRing }, (_, i) =>
        sampleRecord(sampleType, { id: 7n, ip: 0x401000n + BigInt(i & 255), pid: 10, tid: 10 + cpu, time: timeOf(i, cpu), cpu, period: 1n }),
      ),
      ringBytes,
      'backward',
      { ringId: cpu, cpu },
    );
  return { events: [eventOf(0, attrOf(sampleType), [7n], 'bench')], rings: [ring(0), ring(1)] };
}

async function thresholdSweep(): Promise<void> {
  const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
  try {
    console.log(
      `two rings, ${pool.workerCount} worker(s) + this thread (${availableParallelism()} CPUs), load average ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}`,
    );
    console.log('KiB per ring\tone thread ms\tparallel ms\tparallel/one');
    for (const kib of [64, 256, 1024, 2048, 4096, 16384]) {
      const r = await measureParallel(twoRings(kib * 1024), 15, 3, pool);
      const figures = [r.singleNs / 1e6, r.parallelNs / 1e6, r.parallelNs / r.singleNs];
      console.log(`${kib}\t${figures.map((value) => value.toFixed(2)).join('\t')}`);
    }
    console.log(
      `load average at the end ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await pool.close();
  }
}

if (require.main === module) {
  thresholdSweep().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
