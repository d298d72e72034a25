// The extension's session logic in node against the real kernel: start/snapshot/stop, repeated
// snapshots, retention, 200 open/close cycles without a leaked fd or mapping, and the editor's
// hardware breakpoints (a gutter line and a watched variable) on a launched -g fixture.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionManager } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import { executableLocator, lineBreakpointSpec, summarizeHits, watchLensText, watchSpec } from '../../extension/editor/hardware-breakpoints';
import { predictedLoadBase } from '../../native/symbols/resolve';
import { RecordType } from '../../native/abi/uapi';
import { fixture, openFdCount, ownPerfFds, ownPerfMappings, repoRoot } from './helpers';
import { assertSilentBreakpoints, hostBreakpoints } from '../host/breakpoints';

function sampleCount(manager: SessionManager, snapshotId: string, eventIndex?: number): number {
  const { columns } = manager.snapshotById(snapshotId).decoded;
  let count = 0;
  for (let row = 0; row < columns.length; row++) {
    if (columns.kind[row] === RecordType.SAMPLE && (eventIndex === undefined || columns.event[row] === eventIndex)) count++;
  }
  return count;
}

describe('extension: session manager on the real kernel', function () {
  this.timeout(120000);
  const backend = createBackend();

  it('names sessions so two can be told apart: the program, its arguments and pid, not its path; never twice the same name', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const manager = new SessionManager({ backend });
    try {
      const events = await backend.resolveEvents(['task-clock'], {});
      const launch = { kind: 'launch' as const, argv: [fixture('ext_loops'), '0', '3000'] };
      const a = await manager.startRecording({ events, target: launch, pages: 4 });
      const b = await manager.startRecording({ events, target: launch, pages: 4 });
      assert.equal(a.label, `ext_loops 0 3000 (pid ${a.childPid}): task-clock`);
      assert.equal(b.label, `ext_loops 0 3000 (pid ${b.childPid}): task-clock`);
      assert.notEqual(a.childPid, b.childPid);
      const triggered = await manager.startRecording({ events, target: launch, pages: 4, label: 'snapshot when task-clock: task-clock' });
      assert.equal(triggered.label, `ext_loops 0 3000 (pid ${triggered.childPid}) · snapshot when task-clock: task-clock`);
      const self = await manager.startRecording({ events, target: { kind: 'pid', pid: process.pid }, pages: 1, sideband: false });
      const again = await manager.startRecording({ events, target: { kind: 'pid', pid: process.pid }, pages: 1, sideband: false });
      assert.deepEqual([self.label, again.label], [`pid ${process.pid}: task-clock`, `pid ${process.pid}: task-clock (2)`]);
    } finally {
      await manager.dispose();
    }
    assert.equal(ownPerfFds().length, before.fds);
    assert.equal(ownPerfMappings(), before.maps);
  });

  it('starts a launched recording, snapshots it repeatedly while it runs, keeps rings readable after exit, and stops cleanly', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const manager = new SessionManager({ backend, retention: 3 });
    const changes: string[] = [];
    manager.onDidChange((change) => changes.push(change.what));
    const events = await backend.resolveEvents(['task-clock'], {});
    const session = await manager.startRecording({ events, target: { kind: 'launch', argv: [fixture('ext_loops'), '0', '1500'] }, pages: 16 });
    assert.equal(session.state, 'running');
    assert.ok(session.childPid && session.childPid > 0);
    assert.ok(manager.ringStats(session.id).length > 0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const first = await manager.snapshot(session.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await manager.snapshot(session.id);
    assert.ok(sampleCount(manager, first.id, 0) > 5, `task-clock samples in the first snapshot: ${sampleCount(manager, first.id, 0)}`);
    assert.ok(
      second.decoded.coverage.some((ring, i) => ring.bytesWritten > first.decoded.coverage[i].bytesWritten),
      'rings kept running between snapshots',
    );
    assert.notEqual(first.name, second.name);
    assert.ok(first.maxPauseNs > 0 && first.maxPauseNs < 50e6, `pause window ${first.maxPauseNs} ns`);

    // The target exits; its rings stay readable until we stop.
    await manager.whenTargetExited(session.id);
    assert.equal(manager.get(session.id).targetExited, true);
    const afterExit = await manager.snapshot(session.id);
    assert.ok(sampleCount(manager, afterExit.id, 0) > 5, 'samples still there after the target exited');

    // Retention 3: a fourth snapshot drops the oldest.
    const fourth = await manager.snapshot(session.id);
    assert.deepEqual(
      manager.get(session.id).snapshots.map((s) => s.id),
      [second.id, afterExit.id, fourth.id],
    );
    assert.throws(() => manager.snapshotById(first.id), /retention/);

    // Export a snapshot as JSON Lines: one line per record.
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-ext-'));
    try {
      const file = path.join(dir, 'snap.jsonl');
      await manager.exportSnapshot(fourth.id, 'jsonl', file);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      assert.equal(lines.length, fourth.recordCount);
      assert.ok(lines.some((line) => JSON.parse(line).type === 'SAMPLE'));
      // perf.data export: perf itself reads it back with the same sample count.
      const data = path.join(dir, 'snap.data');
      await manager.exportSnapshot(fourth.id, 'perf.data', data);
      const script = execFileSync('perf', ['script', '-i', data, '-F', 'pid,event'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const perfSamples = script.split('\n').filter((line) => /task-clock/.test(line)).length;
      assert.equal(perfSamples, sampleCount(manager, fourth.id, 0), 'perf script sees every task-clock sample');
      // Exports hold addresses, comms and command lines: private, like perf record's output.
      for (const exported of [file, data]) assert.equal(statSync(exported).mode & 0o777, 0o600, exported);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    manager.deleteSnapshot(fourth.id);
    assert.equal(manager.get(session.id).snapshots.length, 2);
    await manager.stop(session.id);
    assert.equal(manager.get(session.id).state, 'stopped');
    await assert.rejects(manager.snapshot(session.id), /stopped/);
    assert.equal(ownPerfFds().length, before.fds, 'every perf fd closed');
    assert.equal(ownPerfMappings(), before.maps, 'every ring unmapped');
    assert.ok(changes.includes('started') && changes.includes('snapshot') && changes.includes('stopped'));
    await manager.dispose();
  });

  it('pauses and resumes a recording of this process without losing the session', async () => {
    const manager = new SessionManager({ backend });
    const events = await backend.resolveEvents(['task-clock'], {});
    const session = await manager.startRecording({ events, target: { kind: 'pid', pid: process.pid }, pages: 4, sideband: false });
    manager.pause(session.id);
    assert.equal(manager.get(session.id).state, 'paused');
    const written = manager.ringStats(session.id).map((r) => r.bytesWritten);
    const spinUntil = Date.now() + 100;
    while (Date.now() < spinUntil) {
      /* burn task-clock while paused */
    }
    assert.deepEqual(
      manager.ringStats(session.id).map((r) => r.bytesWritten),
      written,
      'nothing written while paused',
    );
    manager.resume(session.id);
    const spinAgain = Date.now() + 100;
    while (Date.now() < spinAgain) {
      /* burn task-clock while running */
    }
    assert.ok(
      manager.ringStats(session.id).some((r, i) => r.bytesWritten > written[i]),
      'writes resumed',
    );
    await manager.dispose();
  });

  it('opens and closes 200 sessions without leaving an fd or a mapping in /proc/self', async () => {
    const manager = new SessionManager({ backend });
    const events = await backend.resolveEvents(['task-clock'], {});
    const before = { fds: openFdCount(), perfFds: ownPerfFds().length, maps: ownPerfMappings() };
    for (let i = 0; i < 200; i++) {
      const session = await manager.startRecording({ events, target: { kind: 'pid', pid: process.pid }, pages: 1, sideband: i % 2 === 0 });
      if (i % 20 === 0) await manager.snapshot(session.id);
      await manager.remove(session.id);
    }
    assert.equal(manager.list().length, 0);
    assert.equal(ownPerfFds().length, before.perfFds, 'perf fds');
    assert.equal(ownPerfMappings(), before.maps, 'perf mappings');
    assert.equal(openFdCount(), before.fds, 'all fds');
    await manager.dispose();
  });

  it('Stop ends the program the recording launched', async () => {
    const manager = new SessionManager({ backend, retention: 3 });
    const events = await backend.resolveEvents(['task-clock'], {});
    const session = await manager.startRecording({ events, target: { kind: 'launch', argv: [fixture('ext_loops'), '0', '60000'] }, pages: 16 });
    const pid = session.childPid!;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(existsSync(`/proc/${pid}`), 'the launched program runs');
    await manager.stop(session.id);
    const gone = () => !existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    for (const deadline = Date.now() + 10000; !gone() && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(gone(), `pid ${pid} still runs after Stop`);
    await manager.dispose();
  });

  it('arms a gutter line breakpoint and a write watchpoint on a launched fixture: exact hit counts, IPs back at the line', async () => {
    const source = path.join(repoRoot, 'test/fixtures/ext_loops.c');
    const writeLine =
      readFileSync(source, 'utf8')
        .split('\n')
        .findIndex((line) => line.includes('EXT_WRITE_LINE')) + 1;
    assert.ok(writeLine > 0);
    const loops = 2500;
    for (const variant of ['ext_loops', 'ext_loops_nopie']) {
      const executable = fixture(variant);
      const manager = new SessionManager({ backend });
      const specs = [lineBreakpointSpec('ext_loops.c', writeLine), watchSpec('ext_counter', 'w')];
      const events = await backend.resolveEvents(specs, { executable });
      assert.ok(events.every((event) => event.isBreakpoint));
      // Both events write into one ring per thread: 2 × 2500 samples need more than 64 pages, and an
      // overwrite ring that wraps would drop the oldest hits from the count.
      const session = await manager.startRecording({ events, target: { kind: 'launch', argv: [executable, String(loops)] }, pages: 256 });
      await manager.whenTargetExited(session.id);
      const snapshot = await manager.snapshot(session.id);
      await manager.stop(session.id);
      const locate = executableLocator(executable, predictedLoadBase(executable));
      const place = (_pid: number, ip: bigint) => locate(ip);
      const line = summarizeHits(snapshot.decoded, 0, place);
      const watch = summarizeHits(snapshot.decoded, 1, place);
      if (!hostBreakpoints().fire) {
        // The session tells the editor what it cannot see (the status bar and the panel show it).
        assertSilentBreakpoints(snapshot.limitations, line.count + watch.count);
        await manager.dispose();
        continue;
      }
      assert.equal(line.count, loops, `${variant}: execute breakpoint hits`);
      assert.equal(watch.count, loops, `${variant}: write watchpoint hits`);
      // The execute breakpoint's IP is the line's first instruction; a write watchpoint traps after
      // the writing instruction, still inside the same statement at -O0.
      assert.deepEqual(
        [...line.byLine.entries()].map(([key, n]) => [path.basename(key), n]),
        [[`ext_loops.c:${writeLine}`, loops]],
      );
      assert.deepEqual(
        [...watch.byLine.entries()].map(([key, n]) => [path.basename(key), n]),
        [[`ext_loops.c:${writeLine}`, loops]],
      );
      assert.equal(watch.last[watch.last.length - 1].place?.function, 'ext_bump');
      assert.equal(watchLensText(watch, 'w'), `written ${loops.toLocaleString('en-US')}× in this snapshot; last by ext_bump() line ${writeLine}`);
      await manager.dispose();
    }
  });
});
