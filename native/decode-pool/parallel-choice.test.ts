import * as assert from 'node:assert/strict';
import { ParallelChoice, REPROBE_EVERY, procsRunningNow } from './parallel-choice';
import { DecodePool } from './pool';
import { columnByteDifferences, randomPerCpuSnapshot } from '../decode/test-records';

describe('decode-pool: workers only when cores are free and never slower than one thread', () => {
  const idle = { procsRunning: () => 1, cpus: 2 };
  const busy = { procsRunning: () => 3, cpus: 2 };

  it('reads the runnable task count of this machine from /proc/stat (this thread is one)', () => {
    const running = procsRunningNow();
    assert.ok(running !== null && running >= 1, String(running));
  });

  it('keeps every decode on this thread while the other cores are taken', () => {
    const choice = new ParallelChoice('cores-free', busy);
    for (let i = 0; i < 3 * REPROBE_EVERY; i++) assert.equal(choice.choose(), 'one-thread');
    // One other runnable task on a 4-CPU machine still leaves a core for a worker.
    assert.equal(new ParallelChoice('cores-free', { procsRunning: () => 2, cpus: 4 }).choose(), 'parallel');
  });

  it('times both ways, stays with the faster, and tries the workers again after a while', () => {
    const choice = new ParallelChoice('cores-free', idle);
    assert.equal(choice.choose(), 'parallel', 'the workers first');
    choice.record('parallel', 1 << 20, 4e6); // slower, as under load
    assert.equal(choice.choose(), 'one-thread', 'then one thread, for its time');
    choice.record('one-thread', 1 << 20, 2e6);
    const ways = Array.from({ length: REPROBE_EVERY }, () => choice.choose());
    assert.deepEqual(ways.slice(0, REPROBE_EVERY - 1), Array(REPROBE_EVERY - 1).fill('one-thread'));
    assert.equal(ways[REPROBE_EVERY - 1], 'parallel', 'a new try of the workers');
    // The machine went quiet: the workers are faster now and keep the work.
    for (let i = 0; i < 6; i++) choice.record('parallel', 1 << 20, 1e6);
    assert.equal(choice.choose(), 'parallel');
    assert.equal(choice.choose(), 'parallel');
  });

  it("'always' gives every eligible decode to the workers (tests of the parallel path)", () => {
    const choice = new ParallelChoice('always', busy);
    choice.record('parallel', 1, 1e9);
    choice.record('one-thread', 1, 1);
    assert.equal(choice.choose(), 'parallel');
  });

  it('a pool on a busy machine decodes on this thread, with the same columns', async () => {
    const input = randomPerCpuSnapshot(11, 20000);
    const busyPool = new DecodePool({ workers: 1, minWorkerBytes: 0, probes: busy });
    const idlePool = new DecodePool({ workers: 1, minWorkerBytes: 0, probes: idle });
    try {
      const here = await busyPool.decode(input);
      const there = await idlePool.decode(input);
      assert.deepEqual(busyPool.decodesByWay, { parallel: 0, 'one-thread': 1 });
      assert.equal(busyPool.runningWorkers, 0, 'no worker was started');
      assert.deepEqual(idlePool.decodesByWay, { parallel: 1, 'one-thread': 0 });
      assert.deepEqual(columnByteDifferences(here.columns, there.columns), []);
    } finally {
      await Promise.all([busyPool.close(), idlePool.close()]);
    }
  });
});
