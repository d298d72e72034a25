// perf.data import/export for the CLI and the extension: the pure reader/writer plus the host
// facts (hostname, kallsyms, /proc maps, ELF build ids, tracefs headers) only node can gather.

import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import { decodeRecordAt } from '../decode/record';
import type { DecodedSnapshot } from '../decode/types';
import type { EventDescription, RawSnapshot } from '../abi/snapshot';
import { Misc, RecordType } from '../abi/uapi';
import { ElfFile } from '../symbols/elf';
import { readProcMaps } from '../sys/procmaps';
import { commOf } from '../perf/procfs';
import { writeFileAtomic } from '../sys/safe-file';
import { FILE_HEADER_SIZE, PerfDataError } from './format';
import {
  bytesSource,
  dataSectionOf,
  indexPerfData,
  joinBatches,
  streamPerfData,
  wholeImport,
  type ByteSource,
  type PerfDataBatch,
  type PerfDataImport,
  type PerfDataStream,
  type ReadOptions,
} from './reader';
import type { BuildIdEntry } from './reader';
import { writePerfData, type SynthesizedMap, type SynthesizedProcess, type WriteOptions } from './writer';

export { PerfDataError, Feature, UserRecord } from './format';
export { dataSectionOf, indexPerfData, joinBatches, readPerfData, RecordLocator, streamPerfData } from './reader';
export { addSkipped, decodeChecked, describeSkipped, DamagedRecordError, type CheckedDecode, type RecordsOfFile, type SkippedRecords } from './damage';
export type { BuildIdEntry, ByteSource, PerfDataBatch, PerfDataFeatures, PerfDataImport, PerfDataStream, ReadOptions } from './reader';
export { writePerfData } from './writer';

/**
 * The user-space objects of a perf.data's build-id table (the DSOs with samples), with the build-id each had when it
 * was recorded: what the symbolizer checks the files at those paths against (Symbolizer.expectBuildIds).
 */
export function recordedUserBuildIds(buildIds: readonly BuildIdEntry[]): BuildIdEntry[] {
  return buildIds.filter((entry) => (entry.cpumode & Misc.CPUMODE_MASK) === Misc.USER && entry.path.startsWith('/'));
}
export type { SynthesizedMap, SynthesizedProcess, WriteOptions } from './writer';
export { parseTracingData, buildTracingData, formatToText } from './tracing';
export type { TracingData } from './tracing';

export interface ExportOptions extends Partial<Omit<WriteOptions, 'synthesized'>> {
  /** Processes to synthesize COMM/MMAP2 for; pids seen in the snapshot but missing here are read from /proc. */
  readonly processes?: readonly SynthesizedProcess[];
  /**
   * false: the snapshot's pids are not this machine's processes now (a perf.data file decoded again):
   * /proc is not read for them, their own COMM/MMAP records are all there is. Default true.
   */
  readonly liveProcesses?: boolean;
}

/**
 * Writes `snapshot` to `file` as perf.data, filling host facts perf wants from this machine. Mode 0600
 * (it holds kernel addresses and command lines), whole or not at all (writeFileAtomic).
 */
export async function exportSnapshot(file: string, snapshot: DecodedSnapshot, options: ExportOptions = {}): Promise<void> {
  writeFileAtomic(file, buildExport(snapshot, options));
}

/** The bytes exportSnapshot writes (separate so tests and the extension can keep them in memory). */
export function buildExport(snapshot: DecodedSnapshot, options: ExportOptions = {}): Uint8Array {
  // Processes by pid (their main thread's entry) and, apart, the COMM of their other threads.
  const given = new Map<number, SynthesizedProcess>();
  const threads: SynthesizedProcess[] = [];
  for (const process of options.processes ?? []) {
    if (process.tid === process.pid) given.set(process.pid, process);
    else threads.push(process);
  }
  const seen = new Set<number>();
  const { pid } = snapshot.columns;
  for (let row = 0; row < snapshot.columns.length; row++) if (pid[row] > 0) seen.add(pid[row]);
  for (const p of options.liveProcesses === false ? [] : seen) {
    if (!given.has(p)) {
      const fromProc = processFromProc(p);
      if (fromProc) given.set(p, fromProc);
    }
  }
  const buildIdCache = new Map<string, string | undefined>();
  const synthesized: SynthesizedProcess[] = [...given.values(), ...threads].map((process) => ({
    ...process,
    maps: process.maps.map((map) => (map.buildId ? map : withBuildId(map, buildIdCache))),
  }));
  if (options.liveProcesses !== false) synthesized.push(...threadComms(snapshot, synthesized));
  const cpus = os.cpus();
  const buildIds = mappedFileBuildIds(snapshot, buildIdCache);
  return writePerfData(snapshot, {
    buildIds,
    synthesized,
    cmdline: options.cmdline ?? process.argv.slice(1),
    hostname: options.hostname ?? os.hostname(),
    osrelease: options.osrelease ?? os.release(),
    arch: options.arch ?? unameMachine(),
    nrcpus: options.nrcpus ?? cpus.length,
    nrcpusAvailable: options.nrcpusAvailable,
    cpudesc: options.cpudesc ?? (cpus[0]?.model.trim() || 'unknown'),
    version: options.version,
    kernel: options.kernel ?? kernelFacts(),
    tracing: options.tracing ?? tracefsHeaders(),
  });
}

/** Reads a perf.data file; damage becomes a PerfDataError naming the file and offset. */
export function importPerfDataFile(file: string, options: ReadOptions = {}): PerfDataImport & { raw: RawSnapshot } {
  const stream = openPerfDataFile(file, options);
  try {
    const imported = wholeImport(stream, file);
    return { ...imported, raw: { events: imported.events, rings: imported.rings, takenAtMs: Date.now(), pauseWindowNs: [] } };
  } finally {
    stream.close();
  }
}

/**
 * Opens a perf.data file as a PerfDataStream; close() it when done. A regular file is read a range at a time (what is
 * held is a batch, not the file); anything else (a pipe, /dev/stdin) cannot be read at offsets and is read whole.
 * Damage becomes a PerfDataError naming the file and offset.
 */
export function openPerfDataFile(file: string, options: ReadOptions = {}): PerfDataStream & { close(): void } {
  const source = openByteSource(file);
  try {
    return Object.assign(streamPerfData(source, file, options), { close: source.close });
  } catch (error) {
    source.close();
    throw error;
  }
}

/** What readPerfDataFileInSteps gives: readPerfData's import without the file offsets, and how long its stages took, ms. */
export interface SteppedImport extends Omit<PerfDataImport, 'fileOffsetOf'> {
  /** The file's bytes, read with awaited reads a chunk at a time (the data section's walk runs between them). */
  readonly readMs: number;
  /** Header, features and the walk that indexes the kernel records, their times and their time order (beside the reads). */
  readonly indexMs: number;
  /** The kernel records copied in time order, a batch at a time, into the one ring. */
  readonly orderMs: number;
  /**
   * With ReadOptions.onRound: true when the batches it was told of, in order, are the one ring's records (the rounds
   * perf wrote let them go in time order, and the rest followed them); false when a record of a later round was
   * earlier than one let go (what it was told is then not the start of the ring).
   */
  readonly roundsInOrder: boolean;
}

/** The stages of readPerfDataFileInSteps, in order. */
export type SteppedStage = 'read' | 'index' | 'order';

/**
 * Bytes read per awaited read: small enough that a Cancel is served within a fraction of a millisecond of reading, and
 * that a file of a few thousand callchain samples already takes several steps (a 4 MiB step read a quiet machine's
 * 2-second `perf record -a -g` in one, before any Cancel could be seen); each step costs one await and one yield.
 */
const STEP_READ_BYTES = 512 << 10;
/** How much of the records one ordering step copies: a few ms. */
const STEP_BATCH_BYTES = 256 << 10;

/**
 * A perf.data file read as readPerfData reads it (the same events and the same one ring) without holding the thread
 * for more than a step: the file is read with awaited reads a chunk at a time (as readFile holds it whole, so does
 * this), the data section walked as its bytes come (so ReadOptions.onRound hears of each FINISHED_ROUND's records
 * while the rest is read), the times indexed, then the records put in time order a batch at a time; `between(stage)`
 * is awaited after every step. It is where the caller yields to its event loop, and it throws to stop: the file is
 * closed and nothing read is kept. Damage becomes a PerfDataError naming the file and offset.
 */
export async function readPerfDataFileInSteps(
  file: string,
  between: (stage: SteppedStage) => Promise<void>,
  options: ReadOptions = {},
): Promise<SteppedImport> {
  const started = performance.now();
  let readMs = 0;
  /** The batches told to onRound, in order (joined, they are the one ring when the rounds were in time order). */
  const told: PerfDataBatch[] = [];
  const onRound = options.onRound;
  const reading = await openInSteps(file);
  let stream: PerfDataStream;
  try {
    const readStep = async () => {
      const readStarted = performance.now();
      await reading.readStep();
      readMs += performance.now() - readStarted;
      await between('read');
    };
    // The header, the sections before the data (attrs, ids) and those after it (features) first: the walk of the data
    // section then runs as its bytes come.
    while (!reading.readyToWalk()) await readStep();
    const steps = indexPerfData(reading.source, file, {
      ...options,
      ...(onRound
        ? {
            onRound: (batch: PerfDataBatch, events: readonly EventDescription[]) => {
              told.push(batch);
              onRound(batch, events);
            },
          }
        : {}),
    });
    for (;;) {
      const step = steps.next();
      if (step.done) {
        stream = step.value;
        break;
      }
      if (!reading.whole()) await readStep();
      else await between('index');
    }
  } finally {
    await reading.close();
  }
  const indexMs = performance.now() - started - readMs;
  const orderStarted = performance.now();
  const { mode, events, features, tracing, recordCounts, warnings, released } = stream;
  // What the rounds let go is the ring's start when they were in time order: the rest follows it (and is told too).
  const roundsInOrder = released === told.reduce((n, batch) => n + batch.recordCount, 0);
  const batches: PerfDataBatch[] = roundsInOrder ? [...told] : [];
  for (const batch of stream.batches(STEP_BATCH_BYTES, roundsInOrder ? released : 0)) {
    batches.push(batch);
    if (roundsInOrder) onRound?.(batch, events);
    await between('order');
  }
  const ring = joinBatches(batches, file);
  const orderMs = performance.now() - orderStarted;
  return { mode, events, features, tracing, recordCounts, warnings, rings: [ring], readMs, indexMs, orderMs, roundsInOrder };
}

/**
 * A file read with awaited reads of STEP_READ_BYTES into one buffer (the reader's ByteSource over it): first the
 * header, what lies before the data section and what follows it, then the data section in order. A pipe (no size, no
 * offsets) is read to its end before anything is walked.
 */
interface SteppedFile {
  readonly source: ByteSource;
  /** Reads the next chunk (throws a PerfDataError naming the file when it cannot). */
  readStep(): Promise<void>;
  /** The header and every section but the data are read: the data section may be walked as it comes. */
  readyToWalk(): boolean;
  whole(): boolean;
  close(): Promise<void>;
}

async function openInSteps(file: string): Promise<SteppedFile> {
  /** A file system call whose failure is the file's, named with the offset it was at. */
  const io = async <T>(offset: number, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new PerfDataError(file, offset, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`);
    }
  };
  const handle = await io(0, () => open(file, 'r'));
  try {
    const stat = await io(0, () => handle.stat());
    const close = () => handle.close();
    if (!stat.isFile()) {
      // A pipe has no size: its chunks, joined at its end.
      const chunks: Uint8Array[] = [];
      let done = 0;
      let ended = false;
      let bytes: Uint8Array = new Uint8Array(0);
      return {
        get source() {
          return bytesSource(bytes);
        },
        async readStep() {
          const chunk = Buffer.allocUnsafe(STEP_READ_BYTES);
          const { bytesRead } = await io(done, () => handle.read(chunk, 0, chunk.length, null));
          if (bytesRead === 0) {
            ended = true;
            bytes = Buffer.concat(chunks);
            return;
          }
          chunks.push(chunk.subarray(0, bytesRead));
          done += bytesRead;
        },
        readyToWalk: () => ended,
        whole: () => ended,
        close,
      };
    }
    const size = stat.size;
    const bytes = Buffer.allocUnsafe(size);
    /** Bytes [0, front) are read, and [tailStart, tailDone): what follows the data section, read before the data. */
    let front = 0;
    let tailStart = size;
    let tailDone = size;
    /** The data section as the header says (null: a pipe-mode file, or no header: read in order); unknown before the header is read. */
    let section: { readonly offset: number; readonly size: number } | null | undefined;
    const readInto = async (at: number, length: number) => {
      const { bytesRead } = await io(at, () => handle.read(bytes, at, length, at));
      if (bytesRead === 0) throw new PerfDataError(file, at, 'the file ended while it was being read (it was cut short since it was opened)');
      return bytesRead;
    };
    const source: ByteSource = {
      size,
      read(offset, length) {
        const loaded = offset + length <= front || (offset >= tailStart && offset + length <= tailDone);
        // A section the header placed inside the data section (perf never does): read now, as it is asked for.
        for (let done = 0; !loaded && done < length;) {
          let count: number;
          try {
            count = readSync(handle.fd, bytes, offset + done, length - done, offset + done);
          } catch (error) {
            throw new PerfDataError(file, offset + done, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`);
          }
          if (count === 0) throw new PerfDataError(file, offset + done, 'the file ended while it was being read (it was cut short since it was opened)');
          done += count;
        }
        return bytes.subarray(offset, offset + length);
      },
      available: () => front,
    };
    return {
      source,
      async readStep() {
        if (tailDone < size && section && front >= section.offset) {
          tailDone += await readInto(tailDone, Math.min(STEP_READ_BYTES, size - tailDone));
          return;
        }
        if (front >= size) return;
        front += await readInto(front, Math.min(STEP_READ_BYTES, (front < tailStart ? tailStart : size) - front));
        if (front >= tailStart && tailDone >= size) front = size;
        if (section === undefined && front >= Math.min(FILE_HEADER_SIZE, size)) {
          section = dataSectionOf(bytes.subarray(0, front));
          const end = section ? section.offset + section.size : Infinity;
          // The sections after the data (features) are read before the data's own bytes; a header that says nothing
          // sensible has its file read in order, and the reader says what is wrong with it.
          if (!section || end > size) section = null;
          else if (front < end) tailStart = tailDone = end;
        }
      },
      readyToWalk: () => front >= size || (section !== undefined && (section === null || (front >= section.offset && tailDone >= size))),
      whole: () => front >= size,
      close,
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * A perf.data file as a ByteSource; close() it when done. A regular file is read a range at a time; anything else
 * (a pipe, /dev/stdin) cannot be read at offsets and is read whole.
 */
function openByteSource(file: string): ByteSource & { close(): void } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw new PerfDataError(file, 0, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`);
  }
  try {
    const stat = fstatSync(fd);
    const source = stat.isFile() ? fileSource(fd, stat.size, file) : bytesSource(readFileSync(fd));
    return { size: source.size, read: (offset, size) => source.read(offset, size), close: () => closeSync(fd) };
  } catch (error) {
    closeSync(fd);
    throw new PerfDataError(file, 0, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`);
  }
}

/** A regular file's bytes read where asked (each range a fresh buffer the caller may keep). */
function fileSource(fd: number, size: number, file: string): ByteSource {
  return {
    size,
    read(offset: number, length: number): Uint8Array {
      const bytes = Buffer.allocUnsafe(length);
      for (let done = 0; done < length;) {
        let count: number;
        try {
          count = readSync(fd, bytes, done, length - done, offset + done);
        } catch (error) {
          throw new PerfDataError(file, offset + done, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`);
        }
        if (count === 0) throw new PerfDataError(file, offset + done, 'the file ended while it was being read (it was cut short since it was opened)');
        done += count;
      }
      return bytes;
    },
  };
}

/** Build ids of the executable files the snapshot's own MMAP/MMAP2 records map, as perf record collects them. */
function mappedFileBuildIds(snapshot: DecodedSnapshot, cache: Map<string, string | undefined>): { path: string; buildId: string }[] {
  const out = new Map<string, string>();
  const { kind } = snapshot.columns;
  for (let row = 0; row < snapshot.columns.length; row++) {
    if (kind[row] !== RecordType.MMAP2 && kind[row] !== RecordType.MMAP) continue;
    let fields: Readonly<Record<string, unknown>>;
    try {
      fields = decodeRecordAt(snapshot, row).fields;
    } catch {
      continue; // a damaged record: its file simply gets no build id
    }
    const path = fields.filename;
    if (typeof path !== 'string' || out.has(path) || fields.data === true) continue;
    if (typeof fields.prot === 'number' && (fields.prot & 4) === 0) continue;
    const withId =
      typeof fields.buildId === 'string' && fields.buildId
        ? { path, buildId: fields.buildId.replace(/^0x/, '') }
        : withBuildId({ start: 0n, end: 0n, pgoff: 0n, path }, cache);
    if (withId.buildId) out.set(path, withId.buildId);
  }
  return [...out].map(([path, buildId]) => ({ path, buildId }));
}

function unameMachine(): string {
  switch (process.arch) {
    case 'x64':
      return 'x86_64';
    case 'arm64':
      return 'aarch64';
    case 'ia32':
      return 'i686';
    default:
      return process.arch;
  }
}

function withBuildId(map: SynthesizedMap, cache: Map<string, string | undefined>): SynthesizedMap {
  if (!map.path.startsWith('/')) return map;
  if (!cache.has(map.path)) {
    let id: string | undefined;
    try {
      id = new ElfFile(readFileSync(map.path)).buildId();
    } catch {
      id = undefined; // unreadable or not ELF: perf then uses the path alone
    }
    cache.set(map.path, id);
  }
  const buildId = cache.get(map.path);
  return buildId ? { ...map, buildId } : map;
}

/** comm and executable mappings of a live process, as perf synthesizes them at record start. */
export function processFromProc(pid: number): SynthesizedProcess | undefined {
  try {
    const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    const maps: SynthesizedMap[] = readProcMaps(pid)
      .filter((map) => map.perms[2] === 'x' && (map.path.startsWith('/') || map.path === '[vdso]'))
      .map((map) => ({ start: map.start, end: map.end, pgoff: map.offset, path: map.path }));
    return { pid, tid: pid, comm, maps };
  } catch {
    return undefined; // exited: its side-band records are all there is
  }
}

/**
 * A COMM for each thread (tid ≠ pid) the snapshot's rows name that no COMM record of the snapshot or of `synthesized`
 * names, from /proc while it lives: perf names a sample by its thread's comm, and a thread that was running before the
 * recording started (a pool's workers) has no COMM in the rings, so perf script printed ':TID' for its samples.
 */
function threadComms(snapshot: DecodedSnapshot, synthesized: readonly SynthesizedProcess[]): SynthesizedProcess[] {
  const named = new Set<string>(synthesized.map((process) => `${process.pid}/${process.tid}`));
  const { kind, pid, tid } = snapshot.columns;
  for (let row = 0; row < snapshot.columns.length; row++) if (kind[row] === RecordType.COMM) named.add(`${pid[row]}/${tid[row]}`);
  const threads: SynthesizedProcess[] = [];
  for (let row = 0; row < snapshot.columns.length; row++) {
    if (pid[row] <= 0 || tid[row] <= 0 || tid[row] === pid[row]) continue;
    const key = `${pid[row]}/${tid[row]}`;
    if (named.has(key)) continue;
    named.add(key);
    const comm = commOf(pid[row], tid[row]);
    if (comm !== null) threads.push({ pid: pid[row], tid: tid[row], comm, maps: [] });
  }
  return threads;
}

/** `_text` from /proc/kallsyms and the kernel's build id from /sys/kernel/notes, when readable. */
function kernelFacts(): WriteOptions['kernel'] {
  try {
    const match = /^([0-9a-f]+) [Tt] _text$/m.exec(readFileSync('/proc/kallsyms', 'utf8'));
    if (!match) return undefined;
    const textStart = BigInt('0x' + match[1]);
    if (textStart === 0n) return undefined; // kptr_restrict hides addresses
    return { textStart, buildId: kernelBuildId() };
  } catch {
    // kallsyms not readable here: the perf.data goes without kernel facts, as perf's own does
    return undefined;
  }
}

function kernelBuildId(): string | undefined {
  try {
    const notes = readFileSync('/sys/kernel/notes');
    const view = new DataView(notes.buffer, notes.byteOffset, notes.byteLength);
    let at = 0;
    while (at + 12 <= notes.length) {
      const nameSize = view.getUint32(at, true);
      const descSize = view.getUint32(at + 4, true);
      const type = view.getUint32(at + 8, true);
      const nameStart = at + 12;
      const descStart = nameStart + Math.ceil(nameSize / 4) * 4;
      const name = notes
        .subarray(nameStart, nameStart + nameSize)
        .toString('latin1')
        .replace(/\0+$/, '');
      if (type === 3 && name === 'GNU' && descStart + descSize <= notes.length) return notes.subarray(descStart, descStart + descSize).toString('hex');
      at = descStart + Math.ceil(descSize / 4) * 4;
    }
  } catch {
    // no notes file: perf falls back to kallsyms without a build id
  }
  return undefined;
}

function tracefsHeaders(): WriteOptions['tracing'] {
  for (const root of ['/sys/kernel/tracing', '/sys/kernel/debug/tracing']) {
    try {
      return {
        pageSize: 4096,
        headerPage: readFileSync(`${root}/events/header_page`, 'utf8'),
        headerEvent: readFileSync(`${root}/events/header_event`, 'utf8'),
      };
    } catch {
      // try the next mount point; the writer has defaults
    }
  }
  return undefined;
}
