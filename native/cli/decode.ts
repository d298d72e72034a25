// `ringside decode FILE.data`: perf.data written by `perf record` to the same outputs as capture
// (JSON Lines, perf.data, HTML, pprof). Every record is decoded in full before it is written
// (perfdata/damage.ts): a damaged one stops the decode naming its file offset, or with
// --keep-going is left out of the output and counted, on stderr and in the output's notes.
//
// JSON Lines and pprof are made a batch at a time: the file is read, decoded and named DECODE_BATCH_BYTES of records
// at a time, in time order, each batch written out (JSON Lines) or added to the profile (pprof, written at the end),
// so what is held is a batch and the tables (frames, stacks, names), not the file. perf.data and HTML decode the
// file whole.
import { statSync } from 'node:fs';
import path from 'node:path';
import type { DecodeOptions } from './args';
import { addSkipped, decodeChecked, describeSkipped, importPerfDataFile, openPerfDataFile, recordedUserBuildIds, type SkippedRecords } from '../perfdata/index';
import { SnapshotWriter } from './output';
import { prefetchObjects, startSymbolPrefetch, stopSymbolPrefetch } from '../symbols/prefetch';
import { inlineLess, keepHeapSmall } from './heap';
import { symbolCacheEnabled } from '../symbols/symbol-cache';
import { secondCoreFree } from '../decode-pool/parallel-choice';
import type { BuildIdEntry } from '../perfdata/reader';

/** Records per batch of a streamed decode: a few reads of the file, and far fewer bytes than a file worth streaming. */
const DECODE_BATCH_BYTES = 4 << 20;

const KEEP_GOING_HINT = 'ringside decode --keep-going leaves damaged records out and counts them';

export async function runDecode(options: DecodeOptions): Promise<number> {
  inlineLess();
  if (options.format === 'jsonl' || options.format === 'pprof') return runStreamedDecode(options);
  const imported = importPerfDataFile(options.input, { keepGoing: options.keepGoing });
  for (const warning of imported.warnings) process.stderr.write(`ringside: ${options.input}: ${warning}\n`);
  const { decoded, skipped } = decodeChecked(imported, options.input, { keepGoing: options.keepGoing, hint: KEEP_GOING_HINT });
  const skippedText = skipped ? describeSkipped(skipped) : undefined;
  const writer = new SnapshotWriter({ format: options.format, output: options.output, fromFile: true });
  writer.expectBuildIds(recordedUserBuildIds(imported.features.buildIds));
  // What the file could not give, shown on the timeline page as a recording's limitations are.
  const notes = [...imported.warnings, ...(skippedText ? [skippedText] : []), ...writer.changedObjectNotes()];
  try {
    await writer.write(decoded, [], notes);
  } finally {
    await writer.close();
  }
  warnChangedObjects(options.input, writer);
  summarize(options.input, decoded.columns.length, decoded.anomalies.length, skipped);
  return 0;
}

/**
 * JSON Lines or pprof a batch at a time. A damaged record found in a later batch stops the decode after the batches
 * before it were written: an -o file is then removed (no output, as for a damage found first); on stdout those lines
 * are out. (A pprof file is written only once every batch was added.)
 */
async function runStreamedDecode(options: DecodeOptions): Promise<number> {
  // Kallsyms needs no list: the worker parses it while this thread opens and indexes the file.
  if (prefetchWanted()) startSymbolPrefetch({ kallsyms: true, cacheEnabled: symbolCacheEnabled(), onRunning: settleFlagsAgain });
  let stream: ReturnType<typeof openPerfDataFile>;
  try {
    stream = openPerfDataFile(options.input, { keepGoing: options.keepGoing });
  } catch (error) {
    stopSymbolPrefetch();
    throw error;
  }
  prefetchObjects(objectsToPrefetch(stream.features.buildIds));
  let records = 0;
  let anomalies = 0;
  let skipped: SkippedRecords | undefined;
  try {
    for (const warning of stream.warnings) process.stderr.write(`ringside: ${options.input}: ${warning}\n`);
    const writer = new SnapshotWriter({ format: options.format, output: options.output, fromFile: true });
    writer.expectBuildIds(recordedUserBuildIds(stream.features.buildIds));
    writer.beginBatches();
    try {
      const takenAtMs = Date.now();
      for (const batch of stream.batches(DECODE_BATCH_BYTES)) {
        const raw = { events: stream.events, rings: [batch.ring], takenAtMs, pauseWindowNs: [] };
        const checked = decodeChecked({ raw, fileOffsetOf: batch.fileOffsetOf }, options.input, { keepGoing: options.keepGoing, hint: KEEP_GOING_HINT });
        skipped = addSkipped(skipped, checked.skipped);
        records += checked.decoded.columns.length;
        anomalies += checked.decoded.anomalies.length;
        await writer.writeBatch(checked.decoded);
      }
    } catch (error) {
      writer.discard();
      throw error;
    }
    await writer.close();
    warnChangedObjects(options.input, writer);
  } finally {
    stopSymbolPrefetch();
    stream.close();
  }
  summarize(options.input, records, anomalies, skipped);
  return 0;
}

/** What the CLI set of V8's flags, set again once a worker thread has started (which resets them). */
function settleFlagsAgain(): void {
  keepHeapSmall();
  inlineLess();
}

/**
 * Set to `1` to read symbol tables ahead on a worker thread whatever the load, `0` never to (tests and the bench
 * measure both ways); by default only when a second core is free now.
 */
export const SYMBOL_PREFETCH_ENV = 'RINGSIDE_SYMBOL_PREFETCH';

function prefetchWanted(): boolean {
  const forced = process.env[SYMBOL_PREFETCH_ENV];
  return forced === '1' || (forced !== '0' && secondCoreFree());
}

/**
 * The objects whose function indexes the file's frames will need, for the worker that builds them on a second core:
 * each user object perf listed in its build-id table (the DSOs with samples), the largest first (the longest to
 * build, and the worker starts them before the frames ask). Files that are no longer here are left to the frames,
 * which say so.
 */
function objectsToPrefetch(buildIds: readonly BuildIdEntry[]): string[] {
  const objects = new Map<string, number>();
  for (const entry of recordedUserBuildIds(buildIds)) {
    try {
      const stats = statSync(entry.path);
      if (stats.isFile()) objects.set(path.resolve(entry.path), stats.size);
    } catch {
      // gone since the recording: its frames say so when they are named
    }
  }
  return [...objects].sort((a, b) => b[1] - a[1]).map(([file]) => file);
}

function warnChangedObjects(input: string, writer: SnapshotWriter): void {
  for (const note of writer.changedObjectNotes()) process.stderr.write(`ringside: ${input}: ${note}\n`);
}

function summarize(input: string, records: number, anomalies: number, skipped: SkippedRecords | undefined): void {
  const anomalyText = anomalies ? `, ${anomalies} anomalies` : '';
  process.stderr.write(`ringside: ${input}: ${records} records${anomalyText}${skipped ? `, ${describeSkipped(skipped)}` : ''}\n`);
}
