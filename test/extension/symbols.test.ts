// The extension's sessions name callchain frames as perf does: a perf.data recorded by `perf record -g`
// on a binary with known functions, opened through the SessionManager (as "Open perf.data" does), and
// every sample's frames as the panel's details reply carries them, against `perf script` on the same file.
import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { captureName, OpenCancelled, SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import type { Backend } from '../../extension/session/ports';
import { rowDetails } from '../../host/wire';
import { RecordType } from '../../native/abi/uapi';
import { fixture, perfRecord, perfScript, tempDir } from '../perfdata/perf-tools';

function coreOnly(): Backend {
  return {
    ...createCoreBackend(),
    resolveEvents: async () => {
      throw new Error('not used here');
    },
    record: async () => {
      throw new Error('not used here');
    },
  };
}

/** perf script's callchains, one line per sample: frame names joined by ' ← '. */
function perfChains(file: string): string[] {
  const { lines } = perfScript(file, ['-F', 'tid,ip,sym,symoff']);
  const chains: string[] = [];
  let current: string[] | undefined;
  for (const line of lines) {
    if (!line.startsWith('\t')) {
      if (current) chains.push(current.join(' ← '));
      current = [];
      continue;
    }
    const name = line.trim().split(/\s+/).slice(1).join(' ');
    current!.push(name);
  }
  if (current) chains.push(current.join(' ← '));
  return chains;
}

describe('extension: callchain frames of an opened perf.data are named as perf script names them', function () {
  this.timeout(120000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every frame of every sample, user and kernel', async () => {
    const file = path.join(dir, 'g.data');
    perfRecord(file, ['-g', '-e', 'task-clock', '-c', '500000'], [fixture('pd_work'), '1', '40000000']);
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const session = await manager.openPerfData(file);
      const entry = session.snapshots[0];
      // The timeline names the capture by its file; a live snapshot by its session and clock time.
      assert.equal(captureName(session, entry), 'g.data');
      assert.equal(captureName({ kind: 'recording', label: 'pd_work 1 (pid 42): task-clock' }, entry), `pd_work 1 (pid 42): task-clock · ${entry.name}`);
      const ours: string[] = [];
      const { kind } = entry.decoded.columns;
      for (let row = 0; row < entry.decoded.columns.length; row++) {
        if (kind[row] !== RecordType.SAMPLE) continue;
        const details = rowDetails(entry.decoded, row, entry.symbols);
        // What the panel shows, with perf's spelling for a frame without a name.
        ours.push((details.callchain ?? []).map((frame) => (frame.symbol !== undefined ? details.symbols![frame.symbol] : '[unknown]')).join(' ← '));
      }
      const theirs = perfChains(file);
      assert.ok(theirs.length > 20, `${theirs.length} samples`);
      assert.ok(
        theirs.some((chain) => /^pd_inner\+0x[0-9a-f]+ ← pd_outer\+0x[0-9a-f]+ ← main\+0x/.test(chain)),
        'the fixture spins in pd_inner ← pd_outer ← main',
      );
      assert.deepEqual([...ours].sort(), [...theirs].sort());
    } finally {
      await manager.dispose();
    }
  });

  it('opening cancelled while the file was read adds nothing and says so', async () => {
    const file = path.join(dir, 'cancelled.data');
    perfRecord(file, ['-e', 'task-clock', '-c', '500000'], [fixture('pd_work'), '1', '1000000']);
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      let asked = 0;
      await assert.rejects(
        manager.openPerfData(file, () => {
          asked++;
          return true;
        }),
        (error: unknown) => error instanceof OpenCancelled && error.file === file && /cancelled/.test(error.message),
      );
      assert.equal(asked, 1, 'asked once the file was read');
      assert.deepEqual(manager.list(), [], 'no session for a cancelled open');
      const opened = await manager.openPerfData(file, () => false);
      assert.equal(manager.list().length, 1);
      assert.ok(opened.snapshots[0].recordCount > 0);
    } finally {
      await manager.dispose();
    }
  });
});
