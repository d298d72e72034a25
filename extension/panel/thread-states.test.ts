// Thread states through the real decoder on synthetic sched_switch bytes (the tracefs layout of 6.x kernels): the
// RAW fields are decoded, the intervals and names reach snapshotToWire, and the panel's streamer sends the states
// right after their snapshot's start.
import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../../native/decode/columns';
import type { EventDescription, RingCopy, TracepointField } from '../../native/abi/snapshot';
import { PerfType, RecordType, Sample } from '../../native/abi/uapi';
import type { HostToWebview, ThreadStates } from '../../shared/protocol';
import { ThreadState, THREAD_STATE_NAMES } from '../../shared/thread-states';
import { snapshotToWire } from '../../host/wire';
import { SnapshotStreamer } from './streamer';
import { assertSwitchesAsFullDecode } from '../../test/cli/full-decode-switches';

const field = (name: string, declaration: string, offset: number, size: number, signed: boolean, extra: Partial<TracepointField> = {}): TracepointField =>
  ({ name, declaration, offset, size, signed, arrayLength: 0, location: 'inline', isString: false, ...extra });
const comm = (name: string, offset: number) => field(name, `char ${name}[16]`, offset, 16, false, { arrayLength: 16, isString: true });

const SCHED_SWITCH: EventDescription = {
  index: 0, name: 'sched:sched_switch', ids: [],
  attr: { type: PerfType.TRACEPOINT, config: 372n, samplePeriod: 1n, sampleType: Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW, readFormat: 0, flags: {} },
  tracepoint: {
    system: 'sched', name: 'sched_switch', id: 372, printFormat: '',
    fields: [
      field('common_type', 'unsigned short common_type', 0, 2, false), field('common_flags', 'unsigned char common_flags', 2, 1, false),
      field('common_preempt_count', 'unsigned char common_preempt_count', 3, 1, false), field('common_pid', 'int common_pid', 4, 4, true),
      comm('prev_comm', 8), field('prev_pid', 'pid_t prev_pid', 24, 4, true), field('prev_prio', 'int prev_prio', 28, 4, true),
      field('prev_state', 'long prev_state', 32, 8, true), comm('next_comm', 40), field('next_pid', 'pid_t next_pid', 56, 4, true),
      field('next_prio', 'int next_prio', 60, 4, true),
    ],
  },
};

interface Switch { time: number; cpu: number; prev: [string, number, number]; next: [string, number] }

/** One ring of sched_switch samples: header, pid/tid, time, cpu, then the RAW payload (u32 size, 64 bytes, 4 of padding). */
function ringOf(switches: Switch[]): RingCopy {
  const size = 8 + 8 + 8 + 8 + 4 + 68;
  const bytes = new Uint8Array(size * switches.length);
  const view = new DataView(bytes.buffer);
  const text = (at: number, s: string) => { for (let i = 0; i < s.length; i++) bytes[at + i] = s.charCodeAt(i); };
  switches.forEach((s, i) => {
    const at = i * size;
    view.setUint32(at, RecordType.SAMPLE, true); view.setUint16(at + 4, 1, true); view.setUint16(at + 6, size, true);
    view.setInt32(at + 8, s.prev[1], true); view.setInt32(at + 12, s.prev[1], true);
    view.setBigUint64(at + 16, BigInt(s.time), true);
    view.setUint32(at + 24, s.cpu, true);
    view.setUint32(at + 32, 68, true);
    const raw = at + 36;
    view.setUint16(raw, 372, true); view.setInt32(raw + 4, s.prev[1], true);
    text(raw + 8, s.prev[0]); view.setInt32(raw + 24, s.prev[1], true); view.setInt32(raw + 28, 120, true);
    view.setBigInt64(raw + 32, BigInt(s.prev[2]), true);
    text(raw + 40, s.next[0]); view.setInt32(raw + 56, s.next[1], true); view.setInt32(raw + 60, 120, true);
  });
  return {
    ringId: 0, label: 'cpu0', cpu: 0, tid: -1, direction: 'forward', defaultEvent: 0, bytes, validBytes: bytes.length, dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length), path: 'paused',
  };
}

describe('thread states on synthetic sched_switch records', () => {
  // cpu 0: swapper → ten at 1000; ten sleeps (S) for twenty at 2000; twenty is preempted (R+) for ten at 3000.
  const decoded = decodeSnapshot({
    events: [SCHED_SWITCH], takenAtMs: 0, pauseWindowNs: [0],
    rings: [ringOf([
      { time: 1000, cpu: 0, prev: ['swapper/0', 0, 0], next: ['ten', 10] },
      { time: 2000, cpu: 0, prev: ['ten', 10, 1], next: ['twenty', 20] },
      { time: 3000, cpu: 0, prev: ['twenty', 20, 0x100], next: ['ten', 10] },
    ])],
  });

  it('decodes the RAW fields into intervals and names the threads from prev_comm', () => {
    assert.equal(assertSwitchesAsFullDecode(decoded), 3, 'the fields read in place are the full decode\'s');
    const { start, threadStates } = snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 0 });
    assert.ok(threadStates);
    const state = new Uint8Array(threadStates.columns.state);
    const tid = new Int32Array(threadStates.columns.tid);
    const origin = decoded.columns.timeOriginNs;
    const at = (t: number) => Number(origin + BigInt(t));
    const got = Array.from(state, (code, i) => [tid[i], THREAD_STATE_NAMES[code].letter || 'run', at(new Float64Array(threadStates.columns.start)[i]),
      at(new Float64Array(threadStates.columns.end)[i])]).sort((a, b) => (a[0] as number) - (b[0] as number) || (a[2] as number) - (b[2] as number));
    assert.deepEqual(got, [[10, 'run', 1000, 2000], [10, 'S', 2000, 3000], [10, 'run', 3000, 3000], [20, 'run', 2000, 3000], [20, 'R+', 3000, 3000]]);
    assert.equal(state.filter((s) => s === ThreadState.PREEMPTED).length, 1);
    assert.deepEqual(start.threads.map((t) => [t.tid, t.comm]).sort(), [[0, ''], [10, 'ten'], [20, 'twenty']]);
  });

  it('the panel\'s streamer sends the states right after their snapshot\'s start, and again after a reload', () => {
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((m) => sent.push(m));
    streamer.onReady();
    streamer.add('s', 'S', 0, decoded);
    assert.deepEqual(sent.map((m) => m.type), ['snapshotStart', 'threadStates', 'batch']);
    assert.equal((sent[1] as ThreadStates).snapshotId, 's');
    sent.length = 0;
    streamer.onReady(); // the page reloaded: it has nothing
    assert.deepEqual(sent.map((m) => m.type), ['snapshotStart', 'threadStates', 'batch']);
  });
});
