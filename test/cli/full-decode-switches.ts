// The referee for host/thread-states.ts's snapshotSwitches, which reads the sched_switch fields in place: the same
// switches and edges found the plain way, every record through the full decode (decodeRecordAt) and its fields picked
// from the result. Used by the thread-states tests on real captures (test/cli) and on synthetic records (extension/panel).

import * as assert from 'node:assert/strict';
import type { DecodedSnapshot } from '../../native/decode/types';
import { decodeRecordAt } from '../../native/decode/record';
import { RecordType } from '../../native/abi/uapi';
import { isSchedSwitch, snapshotSwitches, switchRecordsOf, type SwitchRecord } from '../../host/thread-states';
import { threadStateOfPrevState } from '../../shared/thread-states';

/** snapshotSwitches by full decode: its switches, its last time and each CPU's first time (null: no switches). */
export function fullDecodeSwitches(snapshot: DecodedSnapshot): { switches: SwitchRecord[]; end: number; cpuStart: Map<number, number> } | null {
  const switchEvent = new Uint8Array(snapshot.events.length);
  snapshot.events.forEach((e, i) => {
    if (isSchedSwitch(e.name) && e.tracepoint?.fields.some((f) => f.name === 'prev_state')) switchEvent[i] = 1;
  });
  const { kind, event, time, cpu, length } = snapshot.columns;
  const switches: SwitchRecord[] = [];
  const cpuStart = new Map<number, number>();
  let last = -Infinity;
  for (let row = 0; row < length; row++) {
    const t = time[row];
    if (t !== t || kind[row] !== RecordType.SAMPLE) continue;
    if (t > last) last = t;
    const c = cpu[row];
    const first = cpuStart.get(c);
    if (first === undefined || t < first) cpuStart.set(c, t);
    if (event[row] >= switchEvent.length || switchEvent[event[row]] === 0) continue;
    let fields: Record<string, unknown> | undefined;
    try {
      fields = (decodeRecordAt(snapshot, row).fields as { tracepoint?: Record<string, unknown> }).tracepoint;
    } catch {
      // a damaged record has no fields to check
      continue;
    }
    const prevPid = fields?.prev_pid,
      nextPid = fields?.next_pid,
      prevState = fields?.prev_state;
    if (typeof prevPid !== 'number' || typeof nextPid !== 'number' || (typeof prevState !== 'bigint' && typeof prevState !== 'number')) continue;
    const nextComm = typeof fields?.next_comm === 'string' ? fields.next_comm : '';
    const prevComm = typeof fields?.prev_comm === 'string' ? fields.prev_comm : '';
    switches.push({ time: t, cpu: c, prevTid: prevPid, prevState: threadStateOfPrevState(prevState), nextTid: nextPid, nextComm, prevComm });
  }
  return switches.length === 0 ? null : { switches, end: last, cpuStart };
}

/** Asserts snapshotSwitches finds exactly what the full decode finds; returns how many switches that is. */
export function assertSwitchesAsFullDecode(snapshot: DecodedSnapshot): number {
  const fast = snapshotSwitches(snapshot);
  const full = fullDecodeSwitches(snapshot);
  if (!full || !fast) {
    assert.equal(fast, full);
    return 0;
  }
  assert.deepEqual(switchRecordsOf(fast.switches), full.switches);
  assert.equal(fast.edges.end, full.end);
  for (const [c, first] of full.cpuStart) assert.equal(fast.edges.cpuStart(c), first, `cpu ${c}'s first record`);
  return full.switches.length;
}
