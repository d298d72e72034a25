// Parallel decode on real rings: per-CPU flight-recorder rings and their side-band rings, captured
// from the kernel and decoded by a DecodePool's worker threads, must give the single-thread
// decoder's columns byte for byte, with the same coverage and anomalies.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Recorder } from '../../native/perf/recorder';
import { ColumnArena } from '../../native/decode/arena';
import { decodeSnapshot } from '../../native/decode/columns';
import { columnByteDifferences, recordByRecordMismatches } from '../../native/decode/test-records';
import { DecodePool } from '../../native/decode-pool/pool';
import { allocateDecodableCopy } from '../../native/decode/wasm/copy-room';
import { snapshotMemoryOf } from '../../native/decode/wasm/snapshot-memory';
import { onlineCpus } from '../../native/perf/procfs';
import { fixture, softwareEvent, tracepointEvent, SoftwareConfig } from './helpers';

describe('kernel: parallel decode of real rings', function () {
  this.timeout(60_000);

  for (const sharedCopyBuffers of [true, false]) {
    const copies = sharedCopyBuffers ? 'in shared memory' : 'cloned';
    it(`decodes per-CPU rings on worker threads to the single-thread bytes (ring copies ${copies})`, async () => {
      const recorder = await Recorder.open({
        events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 100_000n, 'cpu-clock'), tracepointEvent('syscalls', 'sys_enter_getpid')],
        target: { kind: 'cpus' },
        pages: 64,
        sharedCopyBuffers,
      });
      const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, parallelWhen: 'always' });
      const arena = new ColumnArena({ shared: true });
      try {
        let previous: Awaited<ReturnType<typeof pool.decode>> | undefined;
        let parallelRounds = 0;
        let flightRings = 0;
        for (let round = 0; round < 3; round++) {
          assert.equal(spawnSync(fixture('kernel_busy'), ['60']).status, 0);
          assert.equal(spawnSync(fixture('kernel_getpid'), ['2000']).status, 0);
          const raw = recorder.snapshot();
          const backward = raw.rings.filter((ring) => ring.direction === 'backward');
          flightRings += backward.length;
          assert.equal(
            backward.every((ring) => ring.bytes.buffer instanceof SharedArrayBuffer === sharedCopyBuffers),
            true,
          );
          if (pool.usesWorkers(raw)) parallelRounds++;
          const parallel = await pool.decode(raw, { arena });
          const single = decodeSnapshot(raw);
          assert.deepEqual(columnByteDifferences(parallel.columns, single.columns), [], `round ${round}`);
          assert.deepEqual(parallel.coverage, single.coverage, `round ${round}`);
          assert.deepEqual(parallel.anomalies, single.anomalies, `round ${round}`);
          assert.deepEqual(recordByRecordMismatches(parallel, 20), [], `round ${round}`);
          assert.ok(parallel.columns.length > 1000, `round ${round}: ${parallel.columns.length} rows`);
          if (previous) assert.equal(arena.recycle(previous.columns), true);
          arena.warm();
          previous = parallel;
        }
        assert.equal(parallelRounds, 3, 'every round had at least two per-CPU rings with records and went to the worker');
        // Per-CPU rings hold samples of both events and the kernel's throttle records: all keyed, none left to the full decoder.
        assert.equal(pool.keyedRings, flightRings, `${pool.keyedRings} per-CPU rings decoded straight into their merged rows`);
      } finally {
        await pool.close();
        recorder.dispose();
      }
    });
  }

  it('copies every per-CPU ring of a snapshot into one snapshot memory, keyed and merged there as WebAssembly, to the same bytes', async () => {
    const recorder = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 100_000n, 'cpu-clock')],
      target: { kind: 'cpus' },
      pages: 64,
      sharedCopyBuffers: true,
      allocateCopy: allocateDecodableCopy,
    });
    const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    try {
      await recorder.copyBuffersWarm();
      let parallelRounds = 0;
      for (let round = 0; round < 3; round++) {
        assert.equal(spawnSync(fixture('kernel_busy'), ['200']).status, 0);
        const raw = recorder.snapshot();
        const backward = raw.rings.filter((ring) => ring.direction === 'backward');
        const memory = snapshotMemoryOf(backward[0].bytes);
        assert.ok(memory, `round ${round}: the copies are in a snapshot memory`);
        assert.ok(
          backward.every((ring) => snapshotMemoryOf(ring.bytes) === memory),
          `round ${round}: all ${backward.length} in the same one`,
        );
        // The reference: the same bytes in plain buffers, decoded on this thread by the JavaScript loops.
        const plain = { ...raw, rings: raw.rings.map((ring) => ({ ...ring, bytes: ring.bytes.slice() })) };
        if (pool.usesWorkers(raw)) parallelRounds++;
        const parallel = await pool.decode(raw);
        const single = decodeSnapshot(plain);
        assert.deepEqual(columnByteDifferences(parallel.columns, single.columns), [], `round ${round}`);
        assert.deepEqual(parallel.coverage, single.coverage, `round ${round}`);
        assert.deepEqual(parallel.anomalies, single.anomalies, `round ${round}`);
        assert.ok(parallel.columns.length > 1000, `round ${round}: ${parallel.columns.length} rows`);
        assert.equal(parallel.columns.time.buffer, memory.buffer, `round ${round}: merged into the memory's output set`);
        await recorder.copyBuffersWarm();
      }
      assert.equal(parallelRounds, 3, 'every round had two per-CPU rings with records and went to the worker');
      assert.equal(pool.mergesInSnapshotMemory, 3, 'every merge was written as WebAssembly in the memory');
    } finally {
      await pool.close();
      recorder.dispose();
    }
  });
  it('reads per-CPU rings holding the LOST records of earlier pauses in place, to the same bytes', async () => {
    // One tracepoint, fired without pause on every CPU: each ring holds samples of one size and,
    // after each snapshot's pause, a LOST record of that size. Snapshots taken back to back: the
    // second finds the LOST record the first one's pause left (a 16 MiB ring takes the workload
    // about 100 ms to overwrite; a 256 KiB one was overwritten between the two).
    const recorder = await Recorder.open({
      events: [tracepointEvent('syscalls', 'sys_enter_getpid')],
      target: { kind: 'cpus' },
      pages: 4096,
      sharedCopyBuffers: true,
      allocateCopy: allocateDecodableCopy,
    });
    const pool = new DecodePool({ workers: 1, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    const workloads: ChildProcess[] = onlineCpus().map((cpu) =>
      spawn('taskset', ['-c', String(cpu), fixture('kernel_getpid'), '200000000'], { stdio: 'ignore' }),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      let withLost = 0;
      for (let round = 0; round < 5; round++) {
        await recorder.copyBuffersWarm();
        recorder.snapshot();
        const raw = recorder.snapshot();
        const plain = { ...raw, rings: raw.rings.map((ring) => ({ ...ring, bytes: ring.bytes.slice() })) };
        const before = pool.mergesInPlace;
        const parallel = await pool.decode(raw);
        const single = decodeSnapshot(plain);
        assert.deepEqual(columnByteDifferences(parallel.columns, single.columns), [], `round ${round}`);
        assert.deepEqual(parallel.coverage, single.coverage, `round ${round}`);
        assert.deepEqual(parallel.anomalies, single.anomalies, `round ${round}`);
        const lostRecords = parallel.coverage.reduce((sum, ring) => sum + ring.lostRecords, 0n);
        const after = pool.mergesInPlace;
        if (lostRecords === 0n) continue;
        withLost++;
        assert.deepEqual(
          { read: after.read - before.read, redone: after.redone - before.redone },
          { read: 1, redone: 0 },
          `round ${round}: ${lostRecords} lost, read in place`,
        );
      }
      assert.ok(withLost >= 3, `${withLost} of 5 snapshots held LOST records`);
    } finally {
      for (const child of workloads) child.kill('SIGKILL');
      await pool.close();
      recorder.dispose();
    }
  });
});
