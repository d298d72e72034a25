// Each snapshot's thread states (from its sched_switch records, shared/thread-states.ts), times rebased onto the
// store's origin like its rows'. Pure (no DOM).

import type { ThreadStates } from '../shared/protocol';
import { THREAD_STATE_COLUMNS, type ThreadStateTable } from '../shared/thread-states';

export class ThreadStateTables {
  readonly tables: ThreadStateTable[] = [];
  /** Which snapshot (by index) each table came from. */
  readonly snapshotOf: number[] = [];
  private readonly received = new Set<string>();

  /** The tables of the given snapshots (by index). */
  ofSnapshots(snapshotIndexes: readonly number[]): ThreadStateTable[] {
    return this.tables.filter((_, k) => snapshotIndexes.includes(this.snapshotOf[k]));
  }

  /** Whether the snapshot's thread states were kept already (a resend). */
  has(snapshotId: string): boolean {
    return this.received.has(snapshotId);
  }

  /** Drops the tables of snapshot `snapshotIndex` whose every interval ended before `time` (a live capture's window moved on). */
  dropEndingBefore(snapshotIndex: number, time: number): void {
    for (let k = this.tables.length - 1; k >= 0; k--) {
      if (this.snapshotOf[k] !== snapshotIndex) continue;
      const table = this.tables[k];
      let newest = -Infinity;
      for (let i = 0; i < table.count; i++) if (table.end[i] > newest) newest = table.end[i];
      if (newest < time) {
        this.tables.splice(k, 1);
        this.snapshotOf.splice(k, 1);
      }
    }
  }

  /** Keeps a snapshot's thread states, rebased by its `offsetNs`. */
  add(msg: ThreadStates, snapshotIndex: number, offsetNs: number): void {
    const c = msg.columns;
    const start = new THREAD_STATE_COLUMNS.start(c.start.slice(0));
    const end = new THREAD_STATE_COLUMNS.end(c.end.slice(0));
    for (let i = 0; i < msg.count; i++) {
      start[i] += offsetNs;
      end[i] += offsetNs;
    }
    this.tables.push({
      count: msg.count,
      start,
      end,
      tid: new Int32Array(c.tid),
      cpu: new Int32Array(c.cpu),
      state: new Uint8Array(c.state),
      flags: new Uint8Array(c.flags),
      nextTid: new Int32Array(c.nextTid),
      nextComm: new Int32Array(c.nextComm),
      comms: msg.comms,
    });
    this.snapshotOf.push(snapshotIndex);
    this.received.add(msg.snapshotId);
  }
}
