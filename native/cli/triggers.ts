// `capture --snapshot-on SPEC` writes each triggered snapshot as a numbered perf.data file; the
// watcher that decides when is native/perf/trigger-watcher.ts.

import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** `DIR/ringside-N-TIME.data`, numbered from 1, the time as ISO 8601 with ':' replaced for file systems that refuse it. */
export function triggeredSnapshotPath(dir: string, index: number, at: Date = new Date()): string {
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `ringside-${String(index).padStart(3, '0')}-${at.toISOString().replace(/:/g, '-')}.data`);
}
