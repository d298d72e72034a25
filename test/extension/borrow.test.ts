// Attach to another process's flight recorder: a real `perf record --overwrite` started by the
// test. Its rings are borrowed with pidfd_getfd, mapped with the owner's page count, snapshotted
// through the session manager, and released without disturbing perf.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import { borrowForeignRing, borrowForeignRingAsking, scanPerfFds } from '../../native/attach/foreign';
import { AttachError } from '../../native/perf/borrowed';
import type { Backend } from '../../extension/session/ports';
import { RecordType } from '../../native/abi/uapi';
import { childrenOf, fixture, ownPerfFds, ownPerfMappings, waitFor } from './helpers';

function coreOnly(): Backend {
  const core = createCoreBackend();
  return {
    ...core,
    resolveEvents: async () => {
      throw new Error('not used here');
    },
    record: async () => {
      throw new Error('not used here');
    },
  };
}

describe('extension: borrowing the ring of a running perf record --overwrite', function () {
  this.timeout(60000);
  let dir: string;
  let perf: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-borrow-'));
  });
  afterEach(async () => {
    if (perf && perf.exitCode === null && perf.signalCode === null) {
      const exited = new Promise((resolve) => perf!.once('exit', resolve));
      // perf record ends when its workload does: end the workload, then perf writes its file and exits.
      for (const child of childrenOf(perf.pid!)) process.kill(child, 'SIGKILL');
      perf.kill('SIGINT');
      await exited;
    }
    perf = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('maps the same backward ring, reads the attr from perf.data, snapshots the workload and leaks nothing', async () => {
    const output = path.join(dir, 'perf.data');
    const workload = fixture('ext_loops');
    perf = spawn(
      'perf',
      // Pinned: the ring borrowed below is one CPU's, and a workload the scheduler moved to the other CPU
      // would leave it unwritten between the two snapshots.
      ['record', '--overwrite', '-m', '16', '-e', 'cpu-clock', '-c', '200000', '-o', output, '--', 'taskset', '-c', '0', workload, '0', '20000'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    perf.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const perfPid = perf.pid!;
    const child = await waitFor('the workload to start', () =>
      childrenOf(perfPid).find((pid) => /ext_loops/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))),
    );
    const fds = await waitFor('perf to map its rings', () => {
      const found = scanPerfFds().filter((fd) => fd.pid === perfPid);
      return found.length > 0 && found[0].mappedPages.length > 0 ? found : undefined;
    });
    assert.equal(fds[0].comm, 'perf');
    assert.ok(fds[0].mappedPages.includes(16), `perf maps -m 16: ${JSON.stringify(fds[0])}`);
    await waitFor('the perf.data header', () => statSync(output).size > 0);
    await new Promise((resolve) => setTimeout(resolve, 500)); // let the workload fill the ring a little

    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const manager = new SessionManager({ backend: coreOnly() });
    // perf has one flight recorder per CPU (plus a forward side-band ring): keep the busiest backward one.
    let borrowed: ReturnType<typeof borrowForeignRing> | undefined;
    let borrowedFrom: (typeof fds)[number] | undefined;
    const refusals: string[] = [];
    for (const candidate of fds) {
      let attempt: ReturnType<typeof borrowForeignRing>;
      try {
        attempt = borrowForeignRing(candidate.pid, candidate.fd);
      } catch (error) {
        refusals.push(`fd ${candidate.fd}: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      const written = (info: typeof attempt) => info.source.ringStats()[0].bytesWritten;
      if (attempt.direction === 'backward' && (!borrowed || written(attempt) > written(borrowed))) {
        borrowed?.source.dispose();
        borrowed = attempt;
        borrowedFrom = candidate;
      } else {
        attempt.source.dispose();
      }
    }
    assert.ok(borrowed, `no perf fd of ${perfPid} could be borrowed (${refusals.length} refused: ${refusals.join('; ')}; ${stderr})`);
    assert.equal(borrowed.direction, 'backward');
    assert.equal(borrowed.pages, 16);
    assert.equal(borrowed.attrOrigin, 'perf.data', borrowed.explanation);
    assert.equal(borrowed.source.events[0].attr.flags.writeBackward, true);
    assert.match(borrowed.explanation, /16 data pages/);
    // With the owner's perf.data header at hand, the asking variant must not ask.
    const notAsked = await borrowForeignRingAsking(borrowedFrom!.pid, borrowedFrom!.fd, {
      ask: async () => {
        throw new Error('asked although perf.data names the event');
      },
      resolveSpec: () => {
        throw new Error('no spec expected');
      },
    });
    assert.equal(notAsked.attrOrigin, 'perf.data');
    notAsked.source.dispose();

    const session = manager.adopt('borrowed', `perf ${perfPid}`, borrowed.source);
    assert.equal(ownPerfFds().length, before.fds + 1);
    assert.equal(ownPerfMappings(), before.maps + 1);
    const first = await manager.snapshot(session.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await manager.snapshot(session.id);
    for (const snap of [first, second]) {
      const { columns } = snap.decoded;
      let samples = 0;
      let workloadSamples = 0;
      for (let row = 0; row < columns.length; row++) {
        if (columns.kind[row] !== RecordType.SAMPLE) continue;
        samples++;
        if (columns.pid[row] === child) workloadSamples++;
      }
      assert.ok(samples > 10, `expected samples in the borrowed ring, got ${samples} of ${columns.length} records`);
      assert.ok(workloadSamples > 10, `the samples are the workload's (pid ${child}): ${workloadSamples}/${samples}`);
      assert.equal(snap.decoded.anomalies.filter((a) => a.kind !== 'truncated-oldest').length, 0, JSON.stringify(snap.decoded.anomalies.slice(0, 3)));
    }
    assert.ok(second.decoded.coverage[0].bytesWritten > first.decoded.coverage[0].bytesWritten, 'the owner kept recording between snapshots');
    assert.equal(manager.get(session.id).snapshots.length, 2);

    await manager.stop(session.id);
    assert.equal(ownPerfFds().length, before.fds, 'borrowed fds closed on stop');
    assert.equal(ownPerfMappings(), before.maps, 'borrowed mapping unmapped on stop');
    assert.equal(perf.exitCode, null, 'perf is still recording after we detached');
    await manager.dispose();
  });

  it('explains a pid/fd that is not a perf ring', () => {
    assert.throws(
      () => borrowForeignRing(process.pid, 0),
      (error: unknown) => error instanceof AttachError && /not a perf event/.test(error.message),
    );
    assert.throws(
      () => borrowForeignRing(process.pid, 999999),
      (error: unknown) => error instanceof AttachError && /no fd 999999/.test(error.message),
    );
  });
});
