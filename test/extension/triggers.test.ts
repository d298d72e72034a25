// "Snapshot When…" in the editor's session logic, on the real kernel: a recording with a trigger
// event takes a snapshot by itself when the trigger fires (the snapshot holds the trigger records
// and what came before), re-arms, and stops watching when the session stops.
import assert from 'node:assert/strict';
import { SessionManager, type SessionChange } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import type { RingSource } from '../../extension/session/ports';
import { RecordType } from '../../native/abi/uapi';
import { fixture, ownPerfFds, ownPerfMappings } from './helpers';

describe('extension: snapshots taken when a trigger fires', function () {
  this.timeout(60_000);
  const backend = createBackend();

  it('a getpid trigger takes one snapshot by itself, holding its three records, then nothing more until it fires again', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const manager = new SessionManager({ backend });
    const changes: SessionChange[] = [];
    manager.onDidChange((change) => changes.push(change));
    const specs = ['task-clock', 'syscalls:sys_enter_getpid'];
    const events = await backend.resolveEvents(specs, {});
    // kernel_getpid 3 1500: three getpid() calls at once, then 1.5 s asleep.
    const session = await manager.startRecording({
      events,
      target: { kind: 'launch', argv: [fixture('kernel_getpid'), '3', '1500'] },
      pages: 16,
      triggers: { eventIndices: [1], postSec: 0, minIntervalSec: 0.2 },
    });
    try {
      const deadline = Date.now() + 5000;
      while (!changes.some((change) => change.what === 'triggered') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const info = manager.get(session.id);
      assert.equal(info.snapshots.length, 1, `snapshots: ${info.snapshots.map((s) => s.trigger ?? 'manual').join(', ')}`);
      const [entry] = info.snapshots;
      assert.equal(entry.trigger, 'syscalls:sys_enter_getpid');
      const { columns } = entry.decoded;
      let getpids = 0;
      for (let row = 0; row < columns.length; row++) if (columns.kind[row] === RecordType.SAMPLE && columns.event[row] === 1) getpids++;
      assert.equal(getpids, 3, 'the trigger records are in the snapshot');
      // Nothing fires again while the program sleeps: the watch re-armed after the snapshot.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(manager.get(session.id).snapshots.length, 1);
    } finally {
      await manager.stop(session.id);
    }
    const stoppedWith = manager.get(session.id).snapshots.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(manager.get(session.id).snapshots.length, stoppedWith, 'no trigger after stop');
    await manager.dispose();
    assert.equal(ownPerfFds().length, before.fds);
    assert.equal(ownPerfMappings(), before.maps);
  });

  it('a trigger whose snapshot fails says why (not silence), and the watch re-arms', async () => {
    // A ring source whose copy fails, so the failure path runs without depending on the kernel.
    let fire: (() => void) | undefined;
    let rearmed = 0;
    const source: RingSource = {
      events: [],
      snapshot: () => {
        throw new Error('the rings could not be copied (EIO)');
      },
      pause: () => undefined,
      resume: () => undefined,
      ringStats: () => [],
      watchTriggers: (_options, fired) => {
        fire = fired;
        return {
          rearm: () => {
            rearmed++;
          },
          stop: () => undefined,
        };
      },
      dispose: () => undefined,
    };
    const manager = new SessionManager({ backend: { ...backend, record: async () => source } });
    const changes: SessionChange[] = [];
    manager.onDidChange((change) => changes.push(change));
    const events = await backend.resolveEvents(['task-clock', 'syscalls:sys_enter_getpid'], {});
    const session = await manager.startRecording({
      events,
      target: { kind: 'pid', pid: process.pid },
      triggers: { eventIndices: [1], postSec: 0, minIntervalSec: 0 },
    });
    assert.ok(fire, 'the source was asked to watch the trigger');
    fire();
    for (const deadline = Date.now() + 2000; rearmed === 0 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5));
    const failed = changes.filter((change) => change.what === 'trigger-failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0].detail, 'syscalls:sys_enter_getpid fired, but its snapshot failed: the rings could not be copied (EIO)');
    assert.equal(rearmed, 1);
    assert.equal(manager.get(session.id).snapshots.length, 0);
    // Once the session is stopped, a late trigger is quietly nothing.
    await manager.stop(session.id);
    fire();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(changes.filter((change) => change.what === 'trigger-failed').length, 1);
    await manager.dispose();
  });
});
