// Thread states' cost per sched_switch record (not part of `npm run bench`):
//   node out/bench/thread-states.js [records] [perf.data]
// times reading the five fields thread states need from the RAW payload in place (rawFieldsReader, what
// snapshotSwitches in host/thread-states.ts does per record) against the full decode of the same records
// (decodeRecordAt, what the details pane uses), and snapshotSwitches as a whole, per record, on synthetic sched_switch
// records in the tracefs layout of 6.x kernels (default 200000) and, when given, on the records of a perf.data file
// (e.g. `ringside capture -e sched:sched_switch -a --duration 1 -o sw.data`).

import { decodeSnapshot } from '../native/decode/columns';
import { decodeRecordAt } from '../native/decode/record';
import { importPerfDataFile } from '../native/perfdata/index';
import { rawFieldsReader } from '../native/decode/raw-fields';
import type { TracepointValue } from '../native/decode/tracepoint';
import type { EventDescription, RingCopy, TracepointField } from '../native/abi/snapshot';
import { PerfType, RecordType, Sample } from '../native/abi/uapi';
import type { DecodedSnapshot } from '../native/decode/types';
import { snapshotSwitches } from '../host/thread-states';
import { median, nowNs, round } from './stats';

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

/** n switches on two CPUs among eight threads, 1 µs apart, in one ring. */
function synthetic(n: number): DecodedSnapshot {
  const size = 8 + 8 + 8 + 8 + 4 + 68;
  const bytes = new Uint8Array(size * n);
  const view = new DataView(bytes.buffer);
  const text = (at: number, s: string) => { for (let i = 0; i < s.length; i++) bytes[at + i] = s.charCodeAt(i); };
  for (let i = 0; i < n; i++) {
    const at = i * size;
    const prev = 100 + (i % 8);
    const next = 100 + ((i + 1) % 8);
    view.setUint32(at, RecordType.SAMPLE, true); view.setUint16(at + 4, 1, true); view.setUint16(at + 6, size, true);
    view.setInt32(at + 8, prev, true); view.setInt32(at + 12, prev, true);
    view.setBigUint64(at + 16, BigInt(1_000_000 + i * 1000), true);
    view.setUint32(at + 24, i & 1, true);
    view.setUint32(at + 32, 68, true);
    const raw = at + 36;
    view.setUint16(raw, 372, true); view.setInt32(raw + 4, prev, true);
    text(raw + 8, `worker-${prev}`); view.setInt32(raw + 24, prev, true); view.setInt32(raw + 28, 120, true);
    view.setBigInt64(raw + 32, BigInt(i % 3 === 0 ? 1 : 0x100), true);
    text(raw + 40, `worker-${next}`); view.setInt32(raw + 56, next, true); view.setInt32(raw + 60, 120, true);
  }
  const ring: RingCopy = {
    ringId: 0, label: 'cpu0', cpu: 0, tid: -1, direction: 'forward', defaultEvent: 0, bytes, validBytes: bytes.length, dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length), path: 'paused',
  };
  return decodeSnapshot({ events: [SCHED_SWITCH], rings: [ring], takenAtMs: 0, pauseWindowNs: [0] });
}

/** Median ns per sched_switch record of `body` over `runs` runs after one warm-up. */
function perRecord(records: number, runs: number, body: () => void): number {
  body();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowNs();
    body();
    times.push(nowNs() - t0);
  }
  return median(times) / records;
}

function measure(label: string, snapshot: DecodedSnapshot): void {
  const switchEvent = new Set(snapshot.events.filter((e) => e.name === 'sched:sched_switch').map((e) => e.index));
  const rows: number[] = [];
  for (let row = 0; row < snapshot.columns.length; row++) {
    if (snapshot.columns.kind[row] === RecordType.SAMPLE && switchEvent.has(snapshot.columns.event[row])) rows.push(row);
  }
  if (rows.length === 0) { console.log(`${label}: no sched_switch records`); return; }
  const runs = Math.max(5, Math.min(51, Math.round(2_000_000 / rows.length)));
  const full = perRecord(rows.length, runs, () => { for (const row of rows) decodeRecordAt(snapshot, row); });
  const values: (TracepointValue | undefined)[] = [];
  const fields = perRecord(rows.length, runs, () => {
    const read = rawFieldsReader(snapshot, ['prev_pid', 'next_pid', 'prev_state', 'next_comm', 'prev_comm']);
    for (const row of rows) read(row, values);
  });
  let found = 0;
  const whole = perRecord(rows.length, runs, () => { found = snapshotSwitches(snapshot)?.switches.length ?? 0; });
  console.log(`${label}: ${rows.length} sched_switch records (${found} switches), median of ${runs} runs`);
  console.log(`  decodeRecordAt (full decode)     ${round(full / 1000, 3)} µs/record`);
  console.log(`  rawFieldsReader (five fields)    ${round(fields / 1000, 3)} µs/record`);
  console.log(`  snapshotSwitches (all of it)     ${round(whole / 1000, 3)} µs/record`);
}

const [records = '200000', file] = process.argv.slice(2);
measure(`synthetic (${records})`, synthetic(Number(records)));
if (file) {
  const imported = importPerfDataFile(file);
  measure(file, decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] }));
}
