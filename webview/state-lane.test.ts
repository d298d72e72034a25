import * as assert from 'node:assert/strict';
import { RecordStore } from './store';
import { describeState, laneStatesOf, stateAt, stateLegendEntries } from './state-lane';
import type { Lane } from './lanes';
import { StateFlag, ThreadState, THREAD_STATE_COLUMN_NAMES, type ThreadStateTable } from '../shared/thread-states';
import type { SnapshotStart, ThreadStates } from '../shared/protocol';

const start = (id: string, origin: string): SnapshotStart => ({
  type: 'snapshotStart',
  snapshotId: id,
  name: id,
  timeOriginNs: origin,
  totalRows: 0,
  batchCount: 1,
  takenAtMs: 0,
  events: [],
  threads: [],
  coverage: [],
});
const lane = (key: string, collapsed = false, kind: Lane['kind'] = 'group'): Lane => ({ key, label: key, kind, rows: new Uint32Array(0), collapsed });

describe('thread state lanes (page side)', () => {
  // cpu 0: 10 runs 100..200 and sleeps until 300, then runs to the end; 20 runs 200..300 and is preempted (as the host
  // builds them from three switches, host/thread-states.ts).
  const S = ThreadState;
  const rows: [number, number, number, number, number, number][] = [
    // start, end, tid, state, flags, next
    [100, 200, 10, S.RUNNING, 0, 20],
    [200, 300, 10, S.SLEEPING, 0, 20],
    [200, 300, 20, S.RUNNING, 0, 10],
    [300, 400, 20, S.PREEMPTED, StateFlag.END_UNKNOWN, 10],
    [300, 400, 10, S.RUNNING, StateFlag.END_UNKNOWN, -1],
  ];
  const table: ThreadStateTable = {
    count: rows.length,
    start: Float64Array.from(rows, (r) => r[0]),
    end: Float64Array.from(rows, (r) => r[1]),
    tid: Int32Array.from(rows, (r) => r[2]),
    cpu: new Int32Array(rows.length),
    state: Uint8Array.from(rows, (r) => r[3]),
    flags: Uint8Array.from(rows, (r) => r[4]),
    nextTid: Int32Array.from(rows, (r) => r[5]),
    nextComm: Int32Array.from(rows, (r) => (r[5] === 20 ? 1 : r[5] === 10 ? 0 : -1)),
    comms: ['ten', 'twenty'],
  };
  const message = (snapshotId: string): ThreadStates => ({
    type: 'threadStates',
    snapshotId,
    count: table.count,
    comms: table.comms,
    columns: Object.fromEntries(THREAD_STATE_COLUMN_NAMES.map((name) => [name, table[name].slice().buffer])) as ThreadStates['columns'],
  });

  it("the store keeps a snapshot's states once, rebased onto its time axis, and only for a snapshot it knows", () => {
    const store = new RecordStore();
    store.beginSnapshot(start('a', '1000'));
    store.beginSnapshot(start('b', '1500'));
    assert.equal(store.addThreadStates(message('nope')), false);
    const version = store.version;
    assert.equal(store.addThreadStates(message('b')), true);
    assert.equal(store.addThreadStates(message('b')), false, 'a resend is ignored');
    assert.ok(store.version > version, 'views rebuild');
    assert.deepEqual(
      Array.from(store.threadStates[0].start)
        .sort((x, y) => x - y)
        .slice(0, 2),
      [600, 700],
    );
  });

  it('gives expanded thread lanes their intervals by start, and finds the one under a time', () => {
    const lanes = [lane('process:1', false, 'process'), lane('thread:10'), lane('thread:20', true), lane('cpu:0')];
    const states = laneStatesOf([table], lanes);
    assert.equal(states[0], undefined);
    assert.equal(states[2], undefined, 'a collapsed lane shows no band');
    assert.equal(states[3], undefined);
    const ten = states[1]!;
    assert.deepEqual(Array.from(ten.start), [100, 200, 300]);
    // Another capture's table (not admitted) adds nothing; the admitted one keeps its table index.
    const withOther = laneStatesOf([table, table], lanes, (t) => t === 1);
    assert.deepEqual(
      [Array.from(withOther[1]!.start), Array.from(withOther[1]!.table)],
      [
        [100, 200, 300],
        [1, 1, 1],
      ],
    );
    assert.equal(laneStatesOf([table], lanes, () => false)[1], undefined);
    const tip = describeState(ten, stateAt(ten, 250, 0), [table]);
    assert.match(tip[0], /^Sleeping \(S\) · 100(\.0+)? ns$/);
    assert.deepEqual(tip.slice(1), ['switched out of cpu 0', 'and cpu 0 ran twenty 20']);
    assert.match(describeState(ten, 2, [table]).join('\n'), /^Running · at least .*\non cpu 0\nend not recorded/);
    assert.equal(stateAt(ten, 150, 0), 0);
    assert.equal(stateAt(ten, 50, 10), -1, 'nothing before its first interval');
    assert.equal(stateAt(ten, 95, 10), 0, 'the nearest within the radius');
    assert.deepEqual(
      stateLegendEntries([table]).map((e) => e.name),
      ['Running', 'Preempted (R+)', 'Sleeping (S)'],
    );
  });
});
