// Where capture output goes: JSON Lines (stdout or a file, appended snapshot after snapshot,
// each record emitted once), perf.data, or a self-contained HTML timeline. Also the stderr summary.

import { closeSync, constants, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { constants as zlibConstants, gzipSync } from 'node:zlib';
import type { CaptureOptions } from './args';
import type { DecodedSnapshot, RingCoverage } from '../decode/types';
import type { RawSnapshot } from '../abi/snapshot';
import type { ProcessSideband } from '../perf/sideband-types';
import { ProfileTables } from '../tables/profile-tables';
import { LineBytes, TableJsonl } from '../tables/jsonl';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import { BatchLines, BatchTables } from '../../host/batch-lines';
import { RecordType } from '../abi/uapi';
import { checkWritableFile, isCharacterDevice } from '../sys/writable';
import { pageSize } from '../sys/libc';
import { describeLosses, type LossReport } from '../decode/losses';
import { formatBytes } from '../abi/units';
import { AtomicFile, FileWriteError, writeFileAtomic } from '../sys/safe-file';
import { describeLogpointTally, tallyLogpoints } from '../decode/logpoint-tally';
import { isLogpointSpec } from '../specs/parse';
import { PprofBuilder } from '../tables/pprof';

/** JSON Lines go out in writes of about this many bytes. */
const FLUSH_BYTES = 1 << 20;

/** perf.data / HTML files get one file per snapshot: FILE for the first, FILE.N.ext after. */
function numberedPath(file: string, index: number): string {
  if (index === 1) return file;
  const ext = /\.pb\.gz$/i.test(file) ? file.slice(-'.pb.gz'.length) : path.extname(file);
  return `${file.slice(0, file.length - ext.length)}.${index}${ext}`;
}

export class SnapshotWriter {
  /**
   * `-o FILE.jsonl`: written beside under a temporary name (mode 0600), renamed into place by close(); `-o` on a
   * character device (/dev/null): written there in place. Else stdout.
   */
  private readonly file: AtomicFile | DeviceOutput | undefined;
  /** Newest absolute time (ns) emitted per ring label, so repeated snapshots of the same flight recorder never print a record twice. */
  private readonly newestEmitted = new Map<string, bigint>();
  private readonly symbols = new SnapshotSymbols();
  private snapshotIndex = 0;
  /** The first error of the output (a full disk, say): every later write fails with it. */
  private streamError: Error | undefined;
  /** A file decoded a batch at a time (writeBatch): one table of frames and stacks for all its batches. */
  private readonly batchLines = new BatchLines(this.symbols);
  /** The lines of those batches being written: one buffer for them all (a new one per batch was a megabyte of garbage each). */
  private readonly batchOut = new LineBytes();
  /** pprof of a file decoded a batch at a time (beginBatches): each batch's samples added up, the file written by close(). */
  private batchProfile: { readonly tables: BatchTables; readonly builder: PprofBuilder } | undefined;

  /** Throws an OutputPathError, before anything is recorded, when the output file cannot be written. */
  constructor(
    private readonly options: Pick<CaptureOptions, 'format' | 'output'> & {
      /** Snapshots read from a file (decode): its pids are history, so perf.data gets no COMM/MMAP from today's /proc. */
      readonly fromFile?: boolean;
    },
  ) {
    if (options.output !== undefined && options.output !== '-') checkWritableFile(options.output, '-o');
    // Opened here, before anything is recorded: a file that cannot be created fails the capture now.
    if (options.format === 'jsonl' && options.output && options.output !== '-') {
      this.file = isCharacterDevice(options.output) ? new DeviceOutput(options.output) : new AtomicFile(options.output);
    }
  }

  /**
   * Writes one snapshot; `procState` is the /proc synthesis taken with it (absent for files), `limitations` what its
   * recording could not see (the timeline page shows them).
   */
  async write(snapshot: DecodedSnapshot, procState: readonly ProcessSideband[] = [], limitations: readonly string[] = []): Promise<void> {
    this.snapshotIndex++;
    this.symbols.learn(snapshot, procState);
    // Samples with user registers and stack (-g dwarf) show their unwound callers in JSON Lines and on the timeline.
    const decoded = this.withHostReaders(snapshot);
    if (this.options.format === 'jsonl') {
      try {
        await this.writeJsonLines(decoded);
      } catch (error) {
        // Whatever failed part way, the file keeps whole snapshots only (a disk error has done this already).
        this.file?.rollback();
        throw error;
      }
      return;
    }
    const file = numberedPath(this.options.output!, this.snapshotIndex);
    if (this.options.format === 'perf.data') {
      const { exportSnapshot } = await import('../perfdata/index');
      await exportSnapshot(file, decoded, { processes: this.symbols.processes(), cmdline: process.argv.slice(1), liveProcesses: !this.options.fromFile });
    } else if (this.options.format === 'pprof') {
      const tables = new ProfileTables(decoded);
      tables.symbolize((pid, ip, kernel) => this.symbols.resolveFrame(pid, ip, kernel));
      const builder = new PprofBuilder();
      builder.add(tables);
      writePprof(file, builder);
    } else {
      const { writeStandaloneHtml } = await import('../../host/html-file');
      writeStandaloneHtml(file, decoded, this.symbols.frames, limitations);
    }
  }

  /**
   * A file decoded a batch at a time follows (writeBatch, then close): for pprof, the profile is written by close()
   * even when no batch comes (a file without records gives an empty profile, as its whole-file decode did).
   */
  beginBatches(): void {
    if (this.options.format === 'pprof') this.batchProfile ??= { tables: new BatchTables(this.symbols), builder: new PprofBuilder() };
  }

  /**
   * One batch of a file decoded a batch at a time (JSON Lines, or pprof after beginBatches): records in time order
   * after the previous batch's, every one written (nothing is a repeat, unlike snapshots of one recorder). Frames and
   * stacks of an earlier batch are not named or formatted again, except those of a process whose mappings this batch
   * changed. pprof adds the batch's samples to the profile close() writes: memory follows the tables, not the file.
   */
  async writeBatch(snapshot: DecodedSnapshot): Promise<void> {
    this.snapshotIndex = 1;
    if (this.batchProfile) {
      this.batchProfile.builder.add(this.batchProfile.tables.next(snapshot, (s) => this.withHostReaders(s)).tables);
      return;
    }
    const jsonl = this.batchLines.next(snapshot, (s) => this.withHostReaders(s));
    const out = this.batchOut;
    for (let row = 0; row < snapshot.columns.length; row++) {
      jsonl.write(row, out);
      if (out.length > FLUSH_BYTES) await this.flushLines(out);
    }
    if (out.length) await this.flushLines(out);
  }

  /** After a failure part way (a damaged record): no -o file is left behind. */
  discard(): void {
    this.batchProfile = undefined;
    this.file?.abort();
  }

  /**
   * A follower's read (JSON Lines only): records never written before, formatted and handed to `release`
   * (a FollowOrder's take), which returns the lines that may be written now, in time order.
   */
  async writeFollowed(
    snapshot: DecodedSnapshot,
    procState: readonly ProcessSideband[],
    release: (lines: readonly { time: bigint | null; item: string }[]) => readonly string[],
  ): Promise<number> {
    this.snapshotIndex++;
    this.symbols.learn(snapshot, procState);
    const decoded = this.withHostReaders(snapshot);
    const { columns } = decoded;
    const origin = columns.timeOriginNs;
    const jsonl = this.tableJsonl(decoded);
    const lines: { time: bigint | null; item: string }[] = [];
    for (let row = 0; row < columns.length; row++) {
      const time = columns.time[row];
      lines.push({ time: Number.isNaN(time) ? null : origin + BigInt(Math.round(time)), item: jsonl.line(row) + '\n' });
    }
    const released = release(lines);
    let chunk = '';
    for (const line of released) {
      chunk += line;
      if (chunk.length > 1 << 20) {
        await this.flush(chunk);
        chunk = '';
      }
    }
    if (chunk) await this.flush(chunk);
    return released.length;
  }

  /** The snapshot with what only the host can read: unwound user stacks (-g dwarf) and logpoint values. */
  private withHostReaders(snapshot: DecodedSnapshot): DecodedSnapshot {
    return {
      ...this.symbols.withValueReaders(snapshot),
      unwindUserStack: (pid, registers, stack) => this.symbols.unwindUserStack(pid, registers, stack),
    };
  }

  /** The summary lines of the logpoints of the snapshot written last (hits, last value, distinct values per variable). */
  logpointSummary(snapshot: DecodedSnapshot): string {
    const tallies = tallyLogpoints(this.withHostReaders(snapshot), isLogpointSpec);
    return tallies.flatMap((tally) => describeLogpointTally(tally).map((line) => `  ${line}\n`)).join('');
  }

  /** A recording read back (decode): the build-ids it found, so that objects rebuilt since are not named from the new build. */
  expectBuildIds(entries: readonly { readonly path: string; readonly buildId: string }[]): void {
    this.symbols.expectBuildIds(entries);
  }

  /** Files replaced on disk under the processes of the snapshot written last, whose running copy cannot be read here. */
  replacedFileNotes(): string[] {
    return this.symbols.replacedFileNotes();
  }

  /** What decode tells the user of objects rebuilt since the recording (see SnapshotSymbols.changedObjectNotes). */
  changedObjectNotes(): string[] {
    return this.symbols.changedObjectNotes();
  }

  /** Samples are formatted from the stack and frame tables: each distinct address named and formatted once. */
  private tableJsonl(decoded: DecodedSnapshot): TableJsonl {
    const tables = new ProfileTables(decoded);
    tables.symbolize((pid, ip, kernel) => this.symbols.resolveFrame(pid, ip, kernel));
    return new TableJsonl(decoded, tables, (pid, ip, kernel) => this.symbols.frames.nameOf(pid, ip, kernel));
  }

  private async writeJsonLines(decoded: DecodedSnapshot): Promise<void> {
    const { columns, rings } = decoded;
    const origin = columns.timeOriginNs;
    const jsonl = this.tableJsonl(decoded);
    // Per label: what an earlier snapshot already printed, relative to this snapshot's origin (exact as
    // a double: both are recent perf clock values), and the newest relative time printed now.
    const printedBefore = new Map<string, number | undefined>();
    const newestNow = new Map<string, number>();
    const out = new LineBytes();
    for (let row = 0; row < columns.length; row++) {
      const label = rings[columns.ring[row]]?.label ?? '';
      let threshold = printedBefore.get(label);
      if (!printedBefore.has(label)) {
        const previous = this.newestEmitted.get(label);
        threshold = previous === undefined ? undefined : Number(previous - origin);
        printedBefore.set(label, threshold);
      }
      const time = columns.time[row];
      // A record at or before what was printed (or without a time, once the label was printed) is a repeat.
      if (threshold !== undefined && !(time > threshold)) continue;
      if (time > (newestNow.get(label) ?? -Infinity)) newestNow.set(label, time);
      jsonl.write(row, out);
      if (out.length > FLUSH_BYTES) await this.flushLines(out);
    }
    for (const [label, newest] of newestNow) this.newestEmitted.set(label, origin + BigInt(newest));
    if (out.length) await this.flushLines(out);
    // A later snapshot that fails (a full disk) leaves this one whole in the file, never a cut line.
    this.file?.checkpoint();
  }

  /**
   * Writes what `out` holds and empties it. A file (or device) is written synchronously, so the same bytes are reused
   * for the next lines; stdout may keep them until it drains, so it is handed them and `out` starts new ones.
   */
  private async flushLines(out: LineBytes): Promise<void> {
    if (this.file && !this.streamError) {
      await this.flush(out.bytes.subarray(0, out.length));
      out.length = 0;
    } else await this.flush(out.take());
  }

  private flush(text: string | Uint8Array): Promise<void> {
    if (this.streamError) return Promise.reject(this.streamError);
    if (this.file) {
      try {
        this.file.write(text);
      } catch (error) {
        this.streamError = error as Error;
        throw error;
      }
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      if (process.stdout.write(text)) {
        resolve();
        return;
      }
      // Full buffer: wait for drain, or fail with the error that ends the stream instead.
      const drained = () => {
        process.stdout.off('error', failed);
        resolve();
      };
      const failed = (error: Error) => {
        process.stdout.off('drain', drained);
        this.streamError ??= error;
        reject(error);
      };
      process.stdout.once('drain', drained);
      process.stdout.once('error', failed);
    });
  }

  /** Renames the finished -o file into place (a failed write already removed it, or kept its whole snapshots). */
  async close(): Promise<void> {
    if (this.batchProfile) {
      const { builder } = this.batchProfile;
      this.batchProfile = undefined;
      writePprof(numberedPath(this.options.output!, 1), builder);
    }
    if (!this.file) return;
    if (this.snapshotIndex === 0 && this.streamError === undefined) {
      // Nothing was ever written (the recording failed to start): no empty file where none was asked for.
      this.file.abort();
      return;
    }
    this.file.commit();
  }
}

/** The profile `builder` holds, gzipped, as `file` (temporary file + rename). */
function writePprof(file: string, builder: PprofBuilder): void {
  // Fastest gzip level, as Go's runtime/pprof writes its profiles: half the default level's time for ~8 % more bytes.
  writeFileAtomic(file, gzipSync(builder.encode(), { level: zlibConstants.Z_BEST_SPEED }));
}

/**
 * `-o` on a character device: nothing to rename into place, so it is written as it goes (`perf script > /dev/null`
 * times a decode the same way). Opened without O_CREAT: it exists, and a file is never created in its stead.
 */
class DeviceOutput {
  private readonly fd: number;

  constructor(readonly file: string) {
    try {
      this.fd = openSync(file, constants.O_WRONLY | constants.O_NOCTTY);
    } catch (error) {
      throw new FileWriteError(file, (error as Error).message, 'name a regular file, or a device this user may write', (error as NodeJS.ErrnoException).code);
    }
  }

  write(text: string | Uint8Array): void {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    try {
      for (let offset = 0; offset < bytes.length;) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      throw new FileWriteError(this.file, (error as Error).message, 'name a regular file instead', (error as NodeJS.ErrnoException).code);
    }
  }

  /** A device keeps what reached it: nothing to mark or roll back. */
  checkpoint(): void {
    /* nothing to mark */
  }
  rollback(): void {
    /* nothing to take back */
  }

  commit(): void {
    closeSync(this.fd);
  }

  abort(): void {
    closeSync(this.fd);
  }
}

/** What a snapshot lost, in the CLI's words (the ring size is --pages). */
export function cliLosses(raw: RawSnapshot, decoded: DecodedSnapshot): LossReport {
  return describeLosses(decoded, raw, { pageBytes: pageSize(), pagesOption: '--pages' });
}

/** A snapshot's limitations as its output shows them: the recording's, then what this snapshot lost. */
export function snapshotLimitations(raw: RawSnapshot, losses: LossReport): string[] {
  return [...(raw.limitations ?? []), ...losses.notes];
}

/**
 * Samples per event in each ring copy, for rings that several events share: a shared ring's
 * coverage line alone cannot say which event filled it.
 */
export function samplesPerEventByRing(decoded: DecodedSnapshot): Map<number, Map<number, number>> {
  const { kind, event, ring, length } = decoded.columns;
  const byRing = new Map<number, Map<number, number>>();
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE) continue;
    let counts = byRing.get(ring[row]);
    if (!counts) byRing.set(ring[row], (counts = new Map()));
    counts.set(event[row], (counts.get(event[row]) ?? 0) + 1);
  }
  return byRing;
}

/**
 * What a ring lost: the kernel's exact count since the ring opened where it has one (it includes
 * losses whose PERF_RECORD_LOST never reached the ring, or was overwritten since), and how much of
 * it the LOST records in this copy account for; else the LOST records alone.
 */
function lostText(ring: RingCoverage): string {
  const unspooled = ring.unspooled ? `, ${ring.unspooled.records} not spooled (${ring.unspooled.error})` : '';
  if (ring.lostSinceOpen === undefined) return `${ring.lostRecords}${unspooled}`;
  return `${ring.lostSinceOpen} since the ring opened (${ring.lostRecords} in LOST records of this copy)${unspooled}`;
}

/**
 * The stderr summary of a snapshot. A snapshot whose rings overwrote the start of what they
 * recorded says so on its first line: the per-ring lines below are easy to read past.
 */
export function summarizeSnapshot(
  index: number,
  reason: string,
  raw: RawSnapshot,
  decoded: DecodedSnapshot,
  losses: LossReport = cliLosses(raw, decoded),
): string {
  const overwrote = losses.overwritten ? `; ${losses.overwritten}` : '';
  const lines = [`ringside: snapshot ${index} (${reason}): ${decoded.columns.length} records from ${decoded.rings.length} ring(s)${overwrote}`];
  for (const limitation of raw.limitations ?? []) lines.push(`  ${limitation}`);
  for (const note of losses.notes) if (note !== losses.overwritten) lines.push(`  ${note}`);
  // Gap-free copies hold what was written since the snapshot that last swapped them.
  const sinceLast = raw.gapFreeSinceMs !== undefined && raw.gapFreeSinceMs !== raw.recordingStartedAtMs;
  const worstPause = raw.pauseWindowNs.length ? Math.max(...raw.pauseWindowNs) : 0;
  if (worstPause) lines.push(`  longest pause window ${(worstPause / 1e3).toFixed(1)} us`);
  const perEvent = samplesPerEventByRing(decoded);
  const nameOf = new Map(decoded.events.map((event) => [event.index, event.name]));
  for (const [r, ring] of decoded.coverage.entries()) {
    const counts = perEvent.get(r);
    const shared = counts && counts.size > 1 ? `; samples ${[...counts].map(([event, count]) => `${nameOf.get(event) ?? event} ${count}`).join(', ')}` : '';
    const oldest = ring.oldestTimeNs === null ? '-' : ring.oldestTimeNs.toString();
    lines.push(
      `  ${ring.label.padEnd(10)} ${ring.path.padEnd(8)} ${String(ring.recordsRetained).padStart(8)} records  ` +
        `written ${formatBytes(ring.bytesWritten)}${sinceLast && ring.path === 'gap-free' ? ' since the last snapshot' : ''}, overwritten ${formatBytes(ring.bytesOverwritten)} of ${formatBytes(ring.dataSize)}, ` +
        `oldest ${oldest}, lost ${lostText(ring)}${ring.anomalies ? `, ${ring.anomalies} anomalies` : ''}${shared}`,
    );
  }
  return lines.join('\n') + '\n';
}
