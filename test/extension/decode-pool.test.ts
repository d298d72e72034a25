// The extension's snapshot path decodes per-CPU rings through a DecodePool: the columns are the
// single-thread decoder's byte for byte, the pool's worker thread runs only once a snapshot is
// large enough, and disposing the session manager (what deactivate does) ends it.

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import type { Backend, RingSource } from '../../extension/session/ports';
import { decodeSnapshot } from '../../native/decode/columns';
import { columnByteDifferences, randomPerCpuSnapshot } from '../../native/decode/test-records';

/** Threads of this process (a worker thread is one more). */
const threads = (): number => readdirSync('/proc/self/task').length;

describe('extension: snapshots decode on worker threads', function () {
  this.timeout(60_000);

  it('decodes a per-CPU snapshot on the pool exactly as one thread does, and dispose ends the worker', async () => {
    const backend: Backend = {
      // Sizes lowered so that a few hundred KiB of rings go to the worker, whatever else this machine runs.
      ...createCoreBackend(undefined, { workers: 1, minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' }),
      resolveEvents: async () => {
        throw new Error('not used here');
      },
      record: async () => {
        throw new Error('not used here');
      },
    };
    const manager = new SessionManager({ backend });
    let seed = 1;
    while (randomPerCpuSnapshot(seed, 20_000).rings.filter((ring) => ring.direction === 'backward' && ring.validBytes >= 8).length < 3) seed++;
    const input = randomPerCpuSnapshot(seed, 20_000);
    const source: RingSource = {
      events: input.events,
      snapshot: () => ({ events: input.events, rings: input.rings, takenAtMs: Date.now(), pauseWindowNs: input.rings.map(() => 0) }),
      pause: () => undefined,
      resume: () => undefined,
      ringStats: () => [],
      dispose: () => undefined,
    };
    try {
      const info = manager.adopt('recording', 'synthetic per-CPU rings', source);
      const before = threads();
      const first = await manager.snapshot(info.id);
      assert.equal(threads(), before + 1, 'one worker thread runs after a snapshot that used it');
      const second = await manager.snapshot(info.id);
      assert.equal(threads(), before + 1, 'the worker is reused');
      const single = decodeSnapshot(input);
      for (const entry of [first, second]) {
        assert.deepEqual(columnByteDifferences(entry.decoded.columns, single.columns), []);
        assert.deepEqual(entry.decoded.coverage, single.coverage);
      }
      assert.ok(first.decoded.columns.time.buffer instanceof SharedArrayBuffer, 'columns from the shared arena');
      await manager.dispose();
      assert.equal(threads(), before, 'dispose ended the worker thread');
    } finally {
      await manager.dispose();
    }
  });
});
