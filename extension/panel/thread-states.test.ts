// Thread states through the real decoder on synthetic sched_switch bytes (the tracefs layout of 6.x kernels): the
// RAW fields are decoded, the intervals and names reach snapshotToWire, and the panel's streamer sends the states
// right after their snapshot's start.
import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../../native/decode/columns';
import { SCHED_SWITCH, schedSwitchRing } from '../../native/decode/test-records';
import type { HostToWebview, ThreadStates } from '../../shared/protocol';
import { ThreadState, THREAD_STATE_NAMES } from '../../shared/thread-states';
import { snapshotToWire } from '../../host/wire';
import { SnapshotStreamer } from './streamer';
import { assertSwitchesAsFullDecode } from '../../test/cli/full-decode-switches';

describe('thread states on synthetic sched_switch records', () => {
  // cpu 0: swapper → ten at 1000; ten sleeps (S) for twenty at 2000; twenty is preempted (R+) for ten at 3000.
  const decoded = decodeSnapshot({
    events: [SCHED_SWITCH],
    takenAtMs: 0,
    pauseWindowNs: [0],
    rings: [
      schedSwitchRing([
        { time: 1000, cpu: 0, prev: ['swapper/0', 0, 0], next: ['ten', 10] },
        { time: 2000, cpu: 0, prev: ['ten', 10, 1], next: ['twenty', 20] },
        { time: 3000, cpu: 0, prev: ['twenty', 20, 0x100], next: ['ten', 10] },
      ]),
    ],
  });

  it('decodes the RAW fields into intervals and names the threads from prev_comm', () => {
    assert.equal(assertSwitchesAsFullDecode(decoded), 3, "the fields read in place are the full decode's");
    const { start, threadStates } = snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 0 });
    assert.ok(threadStates);
    const state = new Uint8Array(threadStates.columns.state);
    const tid = new Int32Array(threadStates.columns.tid);
    const origin = decoded.columns.timeOriginNs;
    const at = (t: number) => Number(origin + BigInt(t));
    const got = Array.from(state, (code, i) => [
      tid[i],
      THREAD_STATE_NAMES[code].letter || 'run',
      at(new Float64Array(threadStates.columns.start)[i]),
      at(new Float64Array(threadStates.columns.end)[i]),
    ]).sort((a, b) => (a[0] as number) - (b[0] as number) || (a[2] as number) - (b[2] as number));
    assert.deepEqual(got, [
      [10, 'run', 1000, 2000],
      [10, 'S', 2000, 3000],
      [10, 'run', 3000, 3000],
      [20, 'run', 2000, 3000],
      [20, 'R+', 3000, 3000],
    ]);
    assert.equal(state.filter((s) => s === ThreadState.PREEMPTED).length, 1);
    assert.deepEqual(start.threads.map((t) => [t.tid, t.comm]).sort(), [
      [0, ''],
      [10, 'ten'],
      [20, 'twenty'],
    ]);
  });

  it("the panel's streamer sends the states right after their snapshot's start, and again after a reload", () => {
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((m) => sent.push(m));
    streamer.onReady();
    streamer.add('s', 'S', 0, decoded);
    assert.deepEqual(
      sent.map((m) => m.type),
      ['snapshotStart', 'threadStates', 'batch'],
    );
    assert.equal((sent[1] as ThreadStates).snapshotId, 's');
    sent.length = 0;
    streamer.onReady(); // the page reloaded: it has nothing
    assert.deepEqual(
      sent.map((m) => m.type),
      ['snapshotStart', 'threadStates', 'batch'],
    );
  });
});
