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
import { SCHED_SWITCH, schedSwitchRing, type SwitchSample } from '../native/decode/test-records';
import { RecordType } from '../native/abi/uapi';
import type { DecodedSnapshot } from '../native/decode/types';
import { snapshotSwitches } from '../host/thread-states';
import { median, nowNs, round } from './stats';

/** n switches on two CPUs among eight threads, 1 µs apart, in one ring. */
function synthetic(n: number): DecodedSnapshot {
  const switches = Array.from({ length: n }, (_, i): SwitchSample => {
    const prev = 100 + (i % 8);
    const next = 100 + ((i + 1) % 8);
    return { time: 1_000_000 + i * 1000, cpu: i & 1, prev: [`worker-${prev}`, prev, i % 3 === 0 ? 1 : 0x100], next: [`worker-${next}`, next] };
  });
  return decodeSnapshot({ events: [SCHED_SWITCH], rings: [schedSwitchRing(switches)], takenAtMs: 0, pauseWindowNs: [0] });
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
  if (rows.length === 0) {
    console.log(`${label}: no sched_switch records`);
    return;
  }
  const runs = Math.max(5, Math.min(51, Math.round(2_000_000 / rows.length)));
  const full = perRecord(rows.length, runs, () => {
    for (const row of rows) decodeRecordAt(snapshot, row);
  });
  const values: (TracepointValue | undefined)[] = [];
  const fields = perRecord(rows.length, runs, () => {
    const read = rawFieldsReader(snapshot, ['prev_pid', 'next_pid', 'prev_state', 'next_comm', 'prev_comm']);
    for (const row of rows) read(row, values);
  });
  let found = 0;
  const whole = perRecord(rows.length, runs, () => {
    found = snapshotSwitches(snapshot)?.switches.length ?? 0;
  });
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
