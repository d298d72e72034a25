// `capture --snapshot-on SPEC` and `keep --snapshot-on SPEC` write each triggered snapshot as a
// numbered perf.data file; the watcher that decides when is native/perf/trigger-watcher.ts.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { decodeSnapshot } from '../decode/columns';
import type { Recorder } from '../perf/recorder';
import { SnapshotWriter } from './output';

/** `DIR/ringside-N-TIME.data`, numbered from 1, the time as ISO 8601 with ':' replaced for file systems that refuse it. */
export function triggeredSnapshotPath(dir: string, index: number, at: Date = new Date()): string {
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `ringside-${String(index).padStart(3, '0')}-${at.toISOString().replace(/:/g, '-')}.data`);
}

/**
 * Takes a snapshot of `recorder` and writes it as `dir`'s snapshot number `index` (a perf.data that
 * perf script reads, with COMM/MMAP of the live processes); returns the file and its record count.
 */
export async function writeTriggeredSnapshot(recorder: Recorder, dir: string, index: number): Promise<{ file: string; records: number }> {
  const raw = recorder.snapshot();
  const decoded = decodeSnapshot(raw);
  const file = triggeredSnapshotPath(dir, index);
  const writer = new SnapshotWriter({ format: 'perf.data', output: file });
  try {
    await writer.write(decoded, raw.processes, raw.limitations);
  } finally {
    await writer.close();
  }
  return { file, records: decoded.columns.length };
}
