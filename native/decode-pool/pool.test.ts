import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ColumnArena } from '../decode/arena';
import { decodeSnapshot, type SnapshotInput } from '../decode/columns';
import { Sample } from '../abi/uapi';
import {
  attrOf, columnByteDifferences, eventOf, randomPerCpuSnapshot, recordByRecordMismatches, ringFromRecords, sampleRecord,
} from '../decode/test-records';
import type { DecodedSnapshot } from '../decode/types';
import { DecodePool } from './pool';

/** Everything a parallel decode must give exactly as one thread does: column bytes, coverage, anomalies. */
function assertSameDecode(parallel: DecodedSnapshot, single: DecodedSnapshot, label: string): void {
  assert.deepEqual(columnByteDifferences(parallel.columns, single.columns), [], label);
  assert.deepEqual(parallel.coverage, single.coverage, label);
  assert.deepEqual(parallel.anomalies, single.anomalies, label);
}

const backwardRingsWithRecords = (input: SnapshotInput) =>
  input.rings.filter((ring) => ring.direction === 'backward' && ring.validBytes >= 8).length;

describe('decode-pool: rings decoded on worker threads', function () {
  this.timeout(60_000);
  const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, minMergeRows: 0 });
  after(() => pool.close());

  it('gives the single-thread columns byte for byte on seeded per-CPU snapshots (rings of a few KiB up to 4 MiB)', async () => {
    let parallelRuns = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const input = randomPerCpuSnapshot(seed, seed % 4 === 0 ? 40_000 : 400);
      const single = decodeSnapshot(input);
      const parallel = await pool.decode(input);
      assert.equal(pool.usesWorkers(input), backwardRingsWithRecords(input) >= 2, `seed ${seed}`);
      if (pool.usesWorkers(input)) parallelRuns++;
      assertSameDecode(parallel, single, `seed ${seed}`);
      assert.deepEqual(recordByRecordMismatches(parallel, 10), [], `seed ${seed}`);
    }
    assert.ok(parallelRuns >= 20, `${parallelRuns} of 40 snapshots went to the workers`);
    assert.ok(pool.parallelMerges >= 20, `${pool.parallelMerges} of 40 snapshots were merged in slices`);
    assert.equal(pool.runningWorkers, 1);
  });

  it('decodes into a shared arena reused across snapshots, the same bytes as fresh columns', async () => {
    const arena = new ColumnArena({ shared: true });
    let previous: DecodedSnapshot | null = null;
    for (let seed = 50; seed < 62; seed++) {
      const input = randomPerCpuSnapshot(seed, 4000);
      const parallel = await pool.decode(input, { arena });
      assertSameDecode(parallel, decodeSnapshot(input), `seed ${seed}`);
      assert.ok(parallel.columns.length === 0 || parallel.columns.time.buffer instanceof SharedArrayBuffer, `seed ${seed}`);
      if (previous) assert.equal(arena.recycle(previous.columns), true, `seed ${seed}`);
      arena.warm();
      previous = parallel;
    }
    await assert.rejects(pool.decode(randomPerCpuSnapshot(5), { arena: new ColumnArena() }), /shared column arena/);
  });

  it('rings whose times lie 2^60 ns apart (damaged): still the single-thread bytes', async () => {
    const st = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
    const ringAt = (r: number, base: bigint) => ringFromRecords(
      Array.from({ length: 300 }, (_, i) =>
        sampleRecord(st, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 2, time: base + BigInt(i * 7), cpu: r, period: 1n })),
      1 << 16, 'backward', { ringId: r, cpu: r });
    const input = { events: [eventOf(0, attrOf(st), [11n])], rings: [ringAt(0, 1000n), ringAt(1, 1n << 60n), ringAt(2, 5000n)] };
    assert.equal(pool.usesWorkers(input), true);
    assertSameDecode(await pool.decode(input), decodeSnapshot(input), 'far apart');
  });

  it('decodes snapshots asked for at the same time one after another, each exactly', async () => {
    const inputs = [11, 12, 13, 14].map((seed) => randomPerCpuSnapshot(seed, 4000));
    const decoded = await Promise.all(inputs.map((input) => pool.decode(input)));
    decoded.forEach((parallel, i) => assertSameDecode(parallel, decodeSnapshot(inputs[i]), `snapshot ${i}`));
  });

  /** Backward rings of `times[r]` samples each (ring r on cpu r); no records: an empty ring. */
  const ringsOf = (times: readonly (readonly bigint[])[]): SnapshotInput => {
    const st = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
    const rings = times.map((list, r) => ringFromRecords(
      list.map((time, i) => sampleRecord(st, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 100 + r, time, cpu: r, period: 1n })),
      1 << 18, 'backward', { ringId: r, cpu: r }));
    return { events: [eventOf(0, attrOf(st), [11n])], rings };
  };

  /** Decodes `input` with the pool, asserts it merged in slices and gave the single-thread bytes. */
  const assertMergedInSlices = async (input: SnapshotInput, label: string) => {
    const before = pool.parallelMerges;
    const parallel = await pool.decode(input);
    assert.equal(pool.parallelMerges, before + 1, `${label}: merged in slices`);
    assertSameDecode(parallel, decodeSnapshot(input), label);
  };

  it('merges in time slices on the workers, exactly: equal times across rings at every cut', async () => {
    // Three rings whose samples all share a handful of times: every cut falls inside a tie.
    const ties = [0, 1, 2].map((r) => Array.from({ length: 900 + r }, (_, i) => 5000n + BigInt(Math.floor(i / 300))));
    await assertMergedInSlices(ringsOf(ties), 'ties');
    // Every ring at one time.
    await assertMergedInSlices(ringsOf([0, 1].map(() => Array<bigint>(700).fill(42n))), 'one time');
  });

  it('merges in time slices with empty rings among them, one ring far longer, and many short runs', async () => {
    const steady = (length: number, step: number, at = 0) => Array.from({ length }, (_, i) => 1000n + BigInt(at + i * step));
    await assertMergedInSlices(ringsOf([[], steady(500, 3), [], steady(400, 4, 1), []]), 'empty rings');
    await assertMergedInSlices(ringsOf([steady(3000, 1), steady(3, 700)]), 'one long ring');
    // 16 rings dealt samples in bursts of one and two: runs of one or two rows.
    const dealt = Array.from({ length: 16 }, (_, r) => Array.from({ length: 200 }, (_, i) => 1000n + BigInt(16 * i + r)));
    await assertMergedInSlices(ringsOf(dealt), 'bursts of one');
    await assertMergedInSlices(ringsOf(dealt.map((list, r) => list.map((time, i) => time - BigInt((r + i) & 1)))), 'bursts of two, ties');
  });

  it('keeps small snapshots on this thread: one flight-recorder ring, or too few bytes for a worker', () => {
    const measured = new DecodePool({ workers: 1 });
    const input = randomPerCpuSnapshot(11);
    assert.ok(backwardRingsWithRecords(input) >= 2);
    assert.equal(measured.usesWorkers(input), false, 'a few KiB per ring');
    assert.equal(pool.usesWorkers({ events: input.events, rings: input.rings.slice(0, 1) }), false, 'one ring');
    assert.equal(new DecodePool({ workers: 0, minWorkerBytes: 0 }).usesWorkers(input), false, 'no workers');
  });

  it('an unclosed pool does not keep the process alive; close() ends its workers and later decodes run here', async () => {
    const script = `
      const { DecodePool } = require(${JSON.stringify(require.resolve('./pool'))});
      const { randomPerCpuSnapshot } = require(${JSON.stringify(require.resolve('../decode/test-records'))});
      const pool = new DecodePool({ workers: 1, minWorkerBytes: 0 });
      pool.decode(randomPerCpuSnapshot(11, 20000)).then((d) => console.log(d.columns.length, pool.runningWorkers));`;
    const child = spawnSync(process.execPath, ['-e', script], { timeout: 20_000, encoding: 'utf8' });
    assert.equal(child.error, undefined, 'the child exited by itself');
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /^\d+ 1\n$/);

    const own = new DecodePool({ workers: 1, minWorkerBytes: 0 });
    const input = randomPerCpuSnapshot(11, 20000);
    await own.decode(input);
    assert.equal(own.runningWorkers, 1);
    await own.close();
    assert.equal(own.runningWorkers, 0);
    assert.equal(own.usesWorkers(input), false);
    assertSameDecode(await own.decode(input), decodeSnapshot(input), 'after close');
  });
});
