import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ColumnArena } from '../decode/arena';
import { decodeSnapshot } from '../decode/columns';
import { flightRecordersWithRecords, type SnapshotInput } from '../decode/assemble';
import { Sample } from '../abi/uapi';
import { attrOf, columnByteDifferences, eventOf, randomPerCpuSnapshot, recordByRecordMismatches, ringFromRecords, sampleRecord } from '../decode/test-records';
import type { DecodedSnapshot } from '../decode/types';
import type { RingCopy } from '../abi/snapshot';
import { ByteWriter, commRecord, header, otherRecord, throttleRecord } from '../decode/test-records';
import { RecordType } from '../abi/uapi';
import { DecodePool } from './pool';

/** Everything a parallel decode must give exactly as one thread does: column bytes, coverage, anomalies. */
function assertSameDecode(parallel: DecodedSnapshot, single: DecodedSnapshot, label: string): void {
  assert.deepEqual(columnByteDifferences(parallel.columns, single.columns), [], label);
  assert.deepEqual(parallel.coverage, single.coverage, label);
  assert.deepEqual(parallel.anomalies, single.anomalies, label);
}

/**
 * The single-thread decoder on its merge path (every ring decoded into rows of its own, then
 * merged): a different way to the same columns than the scatter path the pool takes.
 */
const referee = (input: SnapshotInput): DecodedSnapshot => decodeSnapshot(input, { scatter: false });

const backwardRingsWithRecords = (input: SnapshotInput) => flightRecordersWithRecords(input.rings).length;

describe('decode-pool: rings decoded on worker threads', function () {
  this.timeout(60_000);
  const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
  after(() => pool.close());

  it('gives the single-thread columns byte for byte on seeded per-CPU snapshots (rings of a few KiB up to 4 MiB)', async () => {
    let parallelRuns = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const input = randomPerCpuSnapshot(seed, seed % 4 === 0 ? 40_000 : 400);
      const single = referee(input);
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
      assertSameDecode(parallel, referee(input), `seed ${seed}`);
      assert.ok(parallel.columns.length === 0 || parallel.columns.time.buffer instanceof SharedArrayBuffer, `seed ${seed}`);
      if (previous) assert.equal(arena.recycle(previous.columns), true, `seed ${seed}`);
      arena.warm();
      previous = parallel;
    }
    await assert.rejects(pool.decode(randomPerCpuSnapshot(5), { arena: new ColumnArena() }), /shared column arena/);
  });

  it('rings whose times lie 2^60 ns apart (damaged): still the single-thread bytes', async () => {
    const st = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
    const ringAt = (r: number, base: bigint) =>
      ringFromRecords(
        Array.from({ length: 300 }, (_, i) =>
          sampleRecord(st, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 2, time: base + BigInt(i * 7), cpu: r, period: 1n }),
        ),
        1 << 16,
        'backward',
        { ringId: r, cpu: r },
      );
    const input = { events: [eventOf(0, attrOf(st), [11n])], rings: [ringAt(0, 1000n), ringAt(1, 1n << 60n), ringAt(2, 5000n)] };
    assert.equal(pool.usesWorkers(input), true);
    assertSameDecode(await pool.decode(input), referee(input), 'far apart');
  });

  it('decodes snapshots asked for at the same time one after another, each exactly', async () => {
    const inputs = [11, 12, 13, 14].map((seed) => randomPerCpuSnapshot(seed, 4000));
    const decoded = await Promise.all(inputs.map((input) => pool.decode(input)));
    decoded.forEach((parallel, i) => assertSameDecode(parallel, referee(inputs[i]), `snapshot ${i}`));
  });

  /** Backward rings of `times[r]` samples each (ring r on cpu r); no records: an empty ring. */
  const ringsOf = (times: readonly (readonly bigint[])[]): SnapshotInput => {
    const st = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
    const rings = times.map((list, r) =>
      ringFromRecords(
        list.map((time, i) => sampleRecord(st, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 100 + r, time, cpu: r, period: 1n })),
        1 << 18,
        'backward',
        { ringId: r, cpu: r },
      ),
    );
    return { events: [eventOf(0, attrOf(st), [11n])], rings };
  };

  /** Decodes `input` with the pool, asserts it merged in slices and gave the single-thread bytes. */
  const assertMergedInSlices = async (input: SnapshotInput, label: string) => {
    const before = pool.parallelMerges;
    const parallel = await pool.decode(input);
    assert.equal(pool.parallelMerges, before + 1, `${label}: merged in slices`);
    assertSameDecode(parallel, referee(input), label);
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
    // A copy holds what its bytes hold, whatever validBytes claims: one whose bytes end before a
    // record header is not a second ring to merge.
    const [first, second] = input.rings.filter((ring) => ring.direction === 'backward' && ring.validBytes >= 8);
    assert.equal(pool.usesWorkers({ events: input.events, rings: [first, second] }), true, 'two rings with records');
    const cut = { ...second, bytes: second.bytes.subarray(0, 4) };
    assert.equal(pool.usesWorkers({ events: input.events, rings: [first, cut] }), false, 'a copy shorter than its validBytes claims');
  });

  it('an unclosed pool does not keep the process alive; close() ends its workers and later decodes run here', async () => {
    const script = `
      const { DecodePool } = require(${JSON.stringify(require.resolve('./pool'))});
      const { randomPerCpuSnapshot } = require(${JSON.stringify(require.resolve('../decode/test-records'))});
      const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, parallelWhen: 'always' });
      pool.decode(randomPerCpuSnapshot(11, 20000)).then((d) => console.log(d.columns.length, pool.runningWorkers));`;
    const child = spawnSync(process.execPath, ['-e', script], { timeout: 20_000, encoding: 'utf8' });
    assert.equal(child.error, undefined, 'the child exited by itself');
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /^\d+ 1\n$/);

    const own = new DecodePool({ workers: 1, minWorkerBytes: 0, parallelWhen: 'always' });
    const input = randomPerCpuSnapshot(11, 20000);
    await own.decode(input);
    assert.equal(own.runningWorkers, 1);
    await own.close();
    assert.equal(own.runningWorkers, 0);
    assert.equal(own.usesWorkers(input), false);
    assertSameDecode(await own.decode(input), referee(input), 'after close');
  });
});

describe('decode-pool: the scatter path (rows decoded straight into their merged place)', function () {
  this.timeout(60_000);
  const one = new DecodePool({ workers: 1, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
  const three = new DecodePool({ workers: 3, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
  // Default minMergeRows: these snapshots are too small to cut, so this thread writes every row after the workers keyed.
  const here = new DecodePool({ workers: 1, minWorkerBytes: 0, parallelWhen: 'always' });
  after(() => Promise.all([one.close(), three.close(), here.close()]));

  /** Decodes `input` with every pool, asserts each gave the single-thread bytes and the scatter pools keyed `keyed` rings. */
  const assertScattered = async (input: SnapshotInput, label: string, keyed: number) => {
    const single = referee(input);
    for (const [name, pool] of [
      ['1 worker', one],
      ['3 workers', three],
      ['written here', here],
    ] as const) {
      const before = pool.keyedRings;
      const slicedBefore = pool.parallelMerges;
      assertSameDecode(await pool.decode(input), single, `${label}, ${name}`);
      assert.equal(pool.keyedRings - before, keyed, `${label}, ${name}: rings keyed`);
      if (pool === here) assert.equal(pool.parallelMerges, slicedBefore, `${label}: written on this thread alone`);
    }
  };

  const st = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
  const untimedType = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.CPU;
  const events = [eventOf(0, attrOf(st, { flags: { sampleIdAll: true } }), [11n]), eventOf(1, attrOf(untimedType), [21n])];
  const sample = (r: number, i: number, time: bigint) => sampleRecord(st, { id: 11n, ip: 0x1000n + BigInt(i), pid: 1, tid: 100 + r, time, cpu: r, period: 1n });
  const ringOf = (r: number, records: readonly Uint8Array[]): RingCopy => ringFromRecords(records, 1 << 18, 'backward', { ringId: r, cpu: r });
  const timed = (r: number, times: readonly bigint[]) =>
    ringOf(
      r,
      times.map((time, i) => sample(r, i, time)),
    );

  it('gives the single-thread bytes with equal times across rings at every cut, and with every ring at one time', async () => {
    const ties = [0, 1, 2, 3].map((r) =>
      timed(
        r,
        Array.from({ length: 900 + r }, (_, i) => 5000n + BigInt(Math.floor(i / 300))),
      ),
    );
    await assertScattered({ events, rings: ties }, 'ties', 4);
    await assertScattered({ events, rings: [0, 1, 2].map((r) => timed(r, Array<bigint>(700).fill(42n))) }, 'one time', 3);
  });

  it('gives the single-thread bytes with empty rings, one ring far longer, runs of one row, and a side-band ring', async () => {
    const steady = (length: number, step: number, at = 0) => Array.from({ length }, (_, i) => 1000n + BigInt(at + i * step));
    await assertScattered({ events, rings: [timed(0, []), timed(1, steady(500, 3)), timed(2, []), timed(3, steady(400, 4, 1))] }, 'empty rings', 4);
    await assertScattered({ events, rings: [timed(0, steady(3000, 1)), timed(1, steady(3, 700))] }, 'one long ring', 2);
    const dealt = Array.from({ length: 16 }, (_, r) =>
      timed(
        r,
        Array.from({ length: 200 }, (_, i) => 1000n + BigInt(16 * i + r)),
      ),
    );
    const comm = commRecord(st, 'task', 900n, 11n);
    const side = ringFromRecords([comm], 1 << 12, 'forward', { ringId: 16 });
    await assertScattered({ events, rings: [...dealt, side] }, 'bursts of one, side-band', 16);
    await assertScattered({ events, rings: [timed(0, []), timed(1, [])] }, 'no records (decoded here, not on workers)', 0);
  });

  it('keys rings with records other than timed samples, and copies the rows of rings it cannot key between keyed rings', async () => {
    const steady = (r: number) => Array.from({ length: 600 }, (_, i) => 2000n + BigInt(5 * i + r));
    const untimed = ringOf(
      1,
      Array.from({ length: 300 }, (_, i) =>
        i % 7 === 3 ? sampleRecord(untimedType, { id: 21n, ip: 1n, pid: 1, tid: 1, cpu: 1 }) : sample(1, i, 2000n + BigInt(10 * i)),
      ),
    );
    const comm = commRecord(st, 'task', 2500n, 11n);
    const throttle = throttleRecord(st, 2700n, 11n);
    const withOthers = ringOf(2, [
      ...steady(2)
        .slice(0, 100)
        .map((time, i) => sample(2, i, time)),
      comm,
      sample(2, 101, 2600n),
      throttle,
      sample(2, 102, 2800n),
    ]);
    const cut = ringOf(3, [header(RecordType.SAMPLE, 2, 12).u64(0n).toBytes(), ...steady(3).map((time, i) => sample(3, i, time))]);
    // Not keyed: an unknown id (an anomaly the decoder lists). Keyed: a LOST record, moved before its partner as the decoder does.
    const stranger = ringOf(5, [
      ...steady(5)
        .slice(0, 200)
        .map((time, i) => sample(5, i, time)),
      sampleRecord(st, { id: 99n, ip: 1n, pid: 1, tid: 1, time: 3100n, cpu: 5, period: 1n }),
    ]);
    const lost = otherRecord(RecordType.LOST, 0, new ByteWriter().u64(11n).u64(3n).toBytes(), st, true, { pid: 1, tid: 1, time: 2300n, id: 11n });
    const withLost = ringOf(6, [
      ...steady(6)
        .slice(0, 50)
        .map((time, i) => sample(6, i, time)),
      lost,
      sample(6, 50, 2400n),
    ]);
    await assertScattered({ events, rings: [timed(0, steady(0)), untimed, withOthers, cut, timed(4, steady(4)), stranger, withLost] }, 'mixed', 6);
  });

  it('gives the single-thread bytes on seeded random per-CPU snapshots, into a shared arena reused across them', async () => {
    const arena = new ColumnArena({ shared: true });
    let previous: DecodedSnapshot | null = null;
    let keyed = 0;
    for (let seed = 100; seed < 130; seed++) {
      const input = randomPerCpuSnapshot(seed, seed % 3 === 0 ? 20_000 : 2000);
      const before = three.keyedRings;
      const parallel = await three.decode(input, { arena });
      keyed += three.keyedRings - before;
      assertSameDecode(parallel, referee(input), `seed ${seed}`);
      if (previous) assert.equal(arena.recycle(previous.columns), true, `seed ${seed}`);
      arena.warm();
      previous = parallel;
    }
    assert.ok(keyed >= 30, `${keyed} rings keyed`);
  });
});
