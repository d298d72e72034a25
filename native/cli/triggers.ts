// `capture`'s and `keep`'s triggers (--snapshot-on SPEC, --snapshot-on-exit-signal) write each
// triggered snapshot as a numbered perf.data file; the watcher that decides when a SPEC fired is
// native/perf/trigger-watcher.ts.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { decodeSnapshot } from '../decode/columns';
import type { Recorder } from '../perf/recorder';
import type { RawSnapshot } from '../abi/snapshot';
import type { ProcessSideband } from '../perf/sideband-types';
import { describeExit } from '../perf/launch';
import { SnapshotWriter, cliLosses, snapshotLimitations } from './output';
import type { LossReport } from '../decode/losses';

/** `DIR/ringside-N-TIME.data`, numbered from 1, the time as ISO 8601 with ':' replaced for file systems that refuse it. */
export function triggeredSnapshotPath(dir: string, index: number, at: Date = new Date()): string {
  // Private like the snapshots in it (they hold kernel addresses and command lines).
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return path.join(dir, `ringside-${String(index).padStart(3, '0')}-${at.toISOString().replace(/:/g, '-')}.data`);
}

/**
 * --snapshot-on-exit-signal: calls `fire` with the reason when the launched command is killed by a
 * signal (SIGSEGV, SIGABRT...). Its events stay open after it died, so a snapshot taken then still
 * holds the moments before.
 */
export function onExitSignal(recorder: Recorder, fire: (reason: string) => void): void {
  void recorder.exitStatus?.then((exit) => {
    if (exit.signal) fire(`command ${describeExit(exit)}`);
  });
}

/** What a triggered snapshot holds: the rings' copies and the /proc state of the live processes. */
export type TriggeredSnapshot = RawSnapshot & { readonly processes: readonly ProcessSideband[] };

/**
 * Takes a snapshot with `take` (a Recorder's, or a keeper's as its clients see it) and writes it as
 * `dir`'s snapshot number `index` (a perf.data that perf script reads, with COMM/MMAP of the live
 * processes); returns the file and its record count.
 */
export async function writeTriggeredSnapshot(
  take: () => TriggeredSnapshot,
  dir: string,
  index: number,
): Promise<{ file: string; records: number; losses: LossReport }> {
  const raw = take();
  const decoded = decodeSnapshot(raw);
  const losses = cliLosses(raw, decoded);
  const file = triggeredSnapshotPath(dir, index);
  const writer = new SnapshotWriter({ format: 'perf.data', output: file });
  try {
    await writer.write(decoded, raw.processes, snapshotLimitations(raw, losses));
  } finally {
    await writer.close();
  }
  return { file, records: decoded.columns.length, losses };
}
