import * as assert from 'node:assert/strict';
import { buildThreadStates, type SwitchRecord } from './thread-states';
import { StateFlag, ThreadState, threadStateLabel, threadStateOfPrevState, type ThreadStateTable } from '../shared/thread-states';
import { validateHostToWebview } from '../shared/validate';
import { threadStatesMessage } from './thread-states';

const sw = (time: number, cpu: number, prevTid: number, prevState: number, nextTid: number, nextComm = `t${nextTid}`): SwitchRecord => ({
  time,
  cpu,
  prevTid,
  prevState: threadStateOfPrevState(prevState),
  nextTid,
  nextComm,
});

interface Row {
  tid: number;
  state: string;
  start: number;
  end: number;
  cpu: number;
  flags: number;
  next: number;
  nextComm: string;
}
function rows(table: ThreadStateTable): Row[] {
  const out: Row[] = [];
  for (let i = 0; i < table.count; i++) {
    out.push({
      tid: table.tid[i],
      state: threadStateLabel(table.state[i]),
      start: table.start[i],
      end: table.end[i],
      cpu: table.cpu[i],
      flags: table.flags[i],
      next: table.nextTid[i],
      nextComm: table.nextComm[i] < 0 ? '' : table.comms[table.nextComm[i]],
    });
  }
  return out.sort((a, b) => a.tid - b.tid || a.start - b.start);
}

describe('thread states from sched_switch', () => {
  it('decodes prev_state as the kernel prints it: R, R+, S, D, T, t, X, Z, P, I', () => {
    const cases: [number, string][] = [
      [0, 'R'],
      [0x100, 'R+'],
      [1, 'S'],
      [2, 'D'],
      [4, 'T'],
      [8, 't'],
      [16, 'X'],
      [32, 'Z'],
      [64, 'P'],
      [128, 'I'],
      [0x102, 'D'],
      [3, 'S'],
    ];
    for (const [value, letter] of cases) assert.ok(threadStateLabel(threadStateOfPrevState(value)).endsWith(`(${letter})`), `${value}`);
    assert.equal(threadStateOfPrevState(1n << 40n), ThreadState.RUNNABLE); // bits above the report mask say nothing
  });

  it('a thread runs between its switch-in and switch-out and is off CPU in the state it left with until its next switch-in', () => {
    // cpu0: 10 runs from 100 to 200 (sleeps), 20 runs 200..300 (preempted), 10 again 300..400 (blocked in D) on cpu0.
    const table = buildThreadStates([sw(100, 0, 0, 0, 10), sw(200, 0, 10, 1, 20), sw(300, 0, 20, 0x100, 10), sw(400, 0, 10, 2, 0, 'swapper/0')], {
      cpuStart: () => 50,
      end: 500,
    });
    assert.deepEqual(rows(table), [
      { tid: 10, state: 'Running', start: 100, end: 200, cpu: 0, flags: 0, next: 20, nextComm: 't20' },
      { tid: 10, state: 'Sleeping (S)', start: 200, end: 300, cpu: 0, flags: 0, next: 20, nextComm: 't20' },
      { tid: 10, state: 'Running', start: 300, end: 400, cpu: 0, flags: 0, next: 0, nextComm: 'swapper/0' },
      { tid: 10, state: 'Uninterruptible sleep (D)', start: 400, end: 500, cpu: 0, flags: StateFlag.END_UNKNOWN, next: 0, nextComm: 'swapper/0' },
      { tid: 20, state: 'Running', start: 200, end: 300, cpu: 0, flags: 0, next: 10, nextComm: 't10' },
      { tid: 20, state: 'Preempted (R+)', start: 300, end: 500, cpu: 0, flags: StateFlag.END_UNKNOWN, next: 10, nextComm: 't10' },
    ]);
  });

  it("at the capture edges: a switch-out with no switch-in ran since its CPU's first record, a last switch-in runs to the end", () => {
    const table = buildThreadStates([sw(150, 1, 7, 1, 8), sw(160, 0, 9, 0, 0)], { cpuStart: (cpu) => (cpu === 1 ? 120 : 140), end: 900 });
    assert.deepEqual(rows(table), [
      { tid: 7, state: 'Running', start: 120, end: 150, cpu: 1, flags: StateFlag.START_UNKNOWN, next: 8, nextComm: 't8' },
      { tid: 7, state: 'Sleeping (S)', start: 150, end: 900, cpu: 1, flags: StateFlag.END_UNKNOWN, next: 8, nextComm: 't8' },
      { tid: 8, state: 'Running', start: 150, end: 900, cpu: 1, flags: StateFlag.END_UNKNOWN, next: -1, nextComm: '' },
      { tid: 9, state: 'Running', start: 140, end: 160, cpu: 0, flags: StateFlag.START_UNKNOWN, next: 0, nextComm: 't0' },
      { tid: 9, state: 'Runnable (R)', start: 160, end: 900, cpu: 0, flags: StateFlag.END_UNKNOWN, next: 0, nextComm: 't0' },
    ]);
  });

  it("orders switches by time across CPUs (a thread migrates) and keeps one CPU's equal-time switches in ring order", () => {
    // Given out of order (cpu1's records first, as a per-CPU merge may hand them): 5 leaves cpu0 at 100, wakes on cpu1 at 130.
    const table = buildThreadStates(
      [
        sw(130, 1, 0, 0, 5),
        sw(180, 1, 5, 1, 0),
        sw(100, 0, 5, 1, 6),
        sw(100, 0, 6, 1, 7), // 6 ran for no time at 100: the second record follows the first
      ],
      { cpuStart: () => 0, end: 200 },
    );
    const five = rows(table).filter((r) => r.tid === 5);
    assert.deepEqual(
      five.map((r) => [r.state, r.start, r.end, r.cpu]),
      [
        ['Running', 0, 100, 0],
        ['Sleeping (S)', 100, 130, 0],
        ['Running', 130, 180, 1],
        ['Sleeping (S)', 180, 200, 1],
      ],
    );
    const six = rows(table).filter((r) => r.tid === 6);
    assert.deepEqual(
      six.map((r) => [r.state, r.start, r.end, r.flags]),
      [
        ['Running', 100, 100, 0],
        ['Sleeping (S)', 100, 200, StateFlag.END_UNKNOWN],
      ],
    );
    assert.equal(rows(table).filter((r) => r.tid === 7 && r.state === 'Running')[0].start, 100);
  });

  it('a lost switch-in: the open off-CPU interval and the next run meet, never overlap', () => {
    const table = buildThreadStates([sw(100, 0, 3, 1, 0), sw(300, 1, 3, 1, 0)], { cpuStart: (cpu) => (cpu === 0 ? 50 : 250), end: 400 });
    assert.deepEqual(
      rows(table).map((r) => [r.state, r.start, r.end, r.cpu, r.flags]),
      [
        ['Running', 50, 100, 0, StateFlag.START_UNKNOWN],
        ['Sleeping (S)', 100, 250, 0, StateFlag.END_UNKNOWN],
        ['Running', 250, 300, 1, StateFlag.START_UNKNOWN],
        ['Sleeping (S)', 300, 400, 1, StateFlag.END_UNKNOWN],
      ],
    );
  });

  it("a per-thread capture (switch-outs only): each run starts at the CPU's previous switch, as perf sched timehist counts it", () => {
    const table = buildThreadStates([sw(100, 0, 5, 1, 0), sw(200, 0, 5, 1, 0), sw(260, 0, 5, 0x100, 0)], { cpuStart: () => 90, end: 300 });
    assert.deepEqual(
      rows(table).map((r) => [r.state, r.start, r.end, r.flags]),
      [
        ['Running', 90, 100, StateFlag.START_UNKNOWN],
        ['Sleeping (S)', 100, 100, StateFlag.END_UNKNOWN],
        ['Running', 100, 200, StateFlag.START_UNKNOWN],
        ['Sleeping (S)', 200, 200, StateFlag.END_UNKNOWN],
        ['Running', 200, 260, StateFlag.START_UNKNOWN],
        ['Preempted (R+)', 260, 300, StateFlag.END_UNKNOWN],
      ],
    );
  });

  it('travels as one typed message that validates, and a malformed one is rejected naming the field', () => {
    const table = buildThreadStates([sw(100, 0, 0, 0, 10), sw(200, 0, 10, 1, 20)], { cpuStart: () => 0, end: 300 });
    const message = threadStatesMessage('s1', table);
    assert.equal(message.columns.start.byteLength, table.count * 8);
    assert.equal(validateHostToWebview(message).ok, true);
    const badState = { ...message, columns: { ...message.columns, state: new Uint8Array(table.count).fill(99).buffer } };
    assert.match((validateHostToWebview(badState) as { reason: string }).reason, /threadStates\.columns\.state\[0\]/);
    const short = { ...message, columns: { ...message.columns, end: new ArrayBuffer(8) } };
    assert.match((validateHostToWebview(short) as { reason: string }).reason, /threadStates\.columns\.end: expected exactly/);
    const badComm = { ...message, comms: [] };
    assert.match((validateHostToWebview(badComm) as { reason: string }).reason, /nextComm/);
  });
});
