// Symbol knowledge accumulated across the snapshots of one capture: /proc state synthesized at
// snapshot time (processes that are still alive) plus the side-band ring's COMM/FORK/MMAP/MMAP2
// records (processes that mapped code, or exited, while the flight recorder was overwriting).
// Used by the CLI's outputs and by the extension's sessions (one per session); `frames` is the
// per-address table the timeline's messages are built from.

import type { DecodedSnapshot } from '../native/decode/types';
import type { EventDescription } from '../native/abi/snapshot';
import { LogpointEvaluator, withRedZone, type RedZoneRoom } from '../native/symbols/logpoint-values';
import { LogpointColumns } from '../native/symbols/logpoint-columns';
import { readProcessMemory } from '../native/sys/process-memory';
import { isLogpointSpec, parseEventSpec } from '../native/specs/parse';
import { decodeRecordAt, sampleUserState, type SampleUserState, type SampleUserStateRoom } from '../native/decode/record';
import { RecordType } from '../native/abi/uapi';
import type { ProcessSideband } from '../native/perf/sideband-types';
import { Symbolizer } from '../native/symbols/symbolizer';
import { DELETED_SUFFIX } from '../native/abi/object-names';
import type { SynthesizedProcess } from '../native/perfdata/index';
import { FrameSymbols } from './frame-symbols';
import type { FrameResolution } from '../native/tables/profile-tables';

interface KnownProcess {
  pid: number;
  /** The main thread's comm (tid = pid): what perf names the process by. */
  comm: string;
  /** The comm of each other thread, which perf names its samples by: a worker is rarely named as its process. */
  readonly threads: Map<number, string>;
  maps: Map<string, { start: bigint; end: bigint; pgoff: bigint; path: string; executable: boolean }>;
}

export class SnapshotSymbols {
  private readonly symbolizer = new Symbolizer({ kallsyms: true });
  private readonly known = new Map<number, KnownProcess>();
  /** The processes the last learn() was told of by /proc (the live ones): whose replaced files replacedFileNotes() checks. */
  private learntPids: ReadonlySet<number> = new Set();
  private readonly logpoints = new LogpointEvaluator((pid, ip) => this.symbolizer.objectAt(pid, ip), readProcessMemory);
  /** Where a hit's red zone and stack are put together (see withRedZone), reused from hit to hit. */
  private readonly redZoneRoom: RedZoneRoom = { bytes: new Uint8Array(0) };
  /** What sampleUserState reuses from row to row of a tally (see logpointColumns). */
  private readonly userStateRoom: SampleUserStateRoom = {};
  /** The NAMEs of each logpoint spec (null: all in scope). */
  private readonly logpointNames = new Map<string, readonly string[] | null>();
  /** Each address resolved once (until the next learn(), whose mappings may name it differently). */
  readonly frames = new FrameSymbols(
    (pid, ip, kernel) => this.symbolizer.symbolize(pid, ip, kernel),
    (pid, ip) => this.symbolizer.sourceLine(pid, ip),
    (pid, tid) => this.commOf(pid, tid),
    (pid, ip, kernel) => this.symbolizer.dsoOf(pid, ip, kernel),
  );

  private process(pid: number): KnownProcess {
    let entry = this.known.get(pid);
    if (!entry) {
      entry = { pid, comm: '', threads: new Map(), maps: new Map() };
      this.known.set(pid, entry);
    }
    return entry;
  }

  /** Sets the comm of thread `tid` of `pid` (its main thread's is the process's). */
  private nameThread(pid: number, tid: number, comm: string): void {
    const entry = this.process(pid);
    if (tid === pid) entry.comm = comm;
    else entry.threads.set(tid, comm);
  }

  /**
   * Parses kallsyms and the function tables of every object `procState` maps before the first snapshot needs them
   * (the first capture spent 0.4 s of its 0.5 s there on a quiet machine, seconds on a busy one), one object per turn
   * of the event loop so the host stays responsive. The mappings are learnt as a snapshot would learn them.
   */
  async prewarm(procState: readonly ProcessSideband[], isCancelled: () => boolean = () => false): Promise<void> {
    this.learnProcesses(procState);
    this.logpoints.forgetLocations();
    const steps = this.symbolizer.prewarmSteps([...new Set(procState.map((proc) => proc.pid))]);
    while (!isCancelled() && !steps.next().done) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** The names and executable mappings of the recorder's /proc synthesis. */
  private learnProcesses(procState: readonly ProcessSideband[]): void {
    for (const proc of procState) {
      const entry = this.process(proc.pid);
      if (proc.comm) this.nameThread(proc.pid, proc.tid, proc.comm);
      for (const map of proc.maps) {
        if (!map.path.startsWith('/') || !map.perms.includes('x')) continue;
        this.symbolizer.addMmap(proc.pid, map.start, map.end - map.start, map.pgoff, map.path, map.deleted ? { inode: map.inode } : undefined);
        // An exported perf.data names an unlinked file as the kernel does, so perf does not read the file at its path now.
        const path = map.deleted ? map.path + DELETED_SUFFIX : map.path;
        entry.maps.set(`${map.start}`, { start: map.start, end: map.end, pgoff: map.pgoff, path, executable: true });
      }
    }
  }

  /**
   * Learns from the /proc synthesis the recorder made and from every side-band record, oldest first. Returns the pids
   * whose mappings the snapshot's records changed (MMAP, MMAP2, FORK).
   */
  learn(snapshot: DecodedSnapshot, procState: readonly ProcessSideband[] = []): ReadonlySet<number> {
    const remapped = new Set<number>();
    this.learntPids = new Set(procState.map((proc) => proc.pid));
    // Every snapshot names addresses afresh: a file replaced on disk at the same mapping is named by what it holds
    // now (the parsed objects themselves stay cached until the file changes, see symbols/object-file).
    this.frames.forgetAddresses();
    // The same for the logpoints' hits: their pcs are located again with the mappings learnt here.
    this.logpoints.forgetLocations();
    this.learnProcesses(procState);
    const unlinked = unlinkedInodes(procState);
    const { kind } = snapshot.columns;
    for (let row = 0; row < snapshot.columns.length; row++) {
      const type = kind[row];
      if (type !== RecordType.MMAP && type !== RecordType.MMAP2 && type !== RecordType.COMM && type !== RecordType.FORK) continue;
      let record;
      try {
        record = decodeRecordAt(snapshot, row);
      } catch {
        continue; // a damaged side-band record only costs symbols, the walk already counted it
      }
      const f = record.fields as Record<string, unknown>;
      const pid = Number(f.pid);
      if (type === RecordType.COMM) {
        this.nameThread(pid, Number(f.tid), String(f.comm ?? ''));
      } else if (type === RecordType.FORK) {
        const parent = Number(f.ppid);
        const tid = Number(f.tid);
        if (parent !== pid) {
          this.symbolizer.forkProcess(parent, pid);
          remapped.add(pid);
        }
        const from = this.known.get(parent);
        const child = this.process(pid);
        if (from && from !== child) for (const [key, map] of from.maps) child.maps.set(key, map);
        // A new task starts with the comm of the thread that made it (ptid of ppid), until it sets its own.
        const made = from ? (Number(f.ptid) === parent ? from.comm : (from.threads.get(Number(f.ptid)) ?? from.comm)) : '';
        const own = tid === pid ? child.comm : child.threads.get(tid);
        if (!own && made) this.nameThread(pid, tid, made);
      } else if (typeof f.filename === 'string') {
        const start = BigInt(f.addr as bigint);
        const length = BigInt(f.len as bigint);
        const pgoff = BigInt(f.pgoff as bigint);
        // Data mappings (side-band with mmap_data, for -g dwarf) hold no code to name, but an exported
        // perf.data needs them: perf's unwinder reads .eh_frame_hdr through them.
        if (!f.data) {
          // The kernel marks a file unlinked before this record was made as it marks /proc's; one unlinked since (a
          // launched program rebuilt while it runs) is known by its inode, which /proc now marks deleted.
          const marked = f.filename.endsWith(DELETED_SUFFIX);
          const path = marked ? f.filename.slice(0, -DELETED_SUFFIX.length) : f.filename;
          const inode = typeof f.ino === 'bigint' ? Number(f.ino) : 0;
          const deleted = marked || (inode !== 0 && unlinked.get(pid)?.has(inode) === true);
          this.symbolizer.addMmap(pid, start, length, pgoff, path, deleted ? { inode } : undefined);
          remapped.add(pid);
        }
        if (f.filename.startsWith('/')) this.process(pid).maps.set(`${start}`, { start, end: start + length, pgoff, path: f.filename, executable: !f.data });
      }
    }
    return remapped;
  }

  /**
   * The comm of thread `tid` of `pid` as learnt so far, undefined when unknown: its own name only (a caller may know
   * better than the process's name, e.g. from sched_switch).
   */
  commOf(pid: number, tid: number): string | undefined {
    const entry = this.known.get(pid);
    return (tid === pid ? entry?.comm : entry?.threads.get(tid)) || undefined;
  }

  /**
   * What the user is told of files replaced on disk while the processes of the last learn() ran, whose mapped copy this
   * user cannot read: one line each, with the cause and the fix.
   */
  replacedFileNotes(): string[] {
    return this.symbolizer
      .unreadableReplacedFiles(this.learntPids)
      .map(
        ({ pid, path }) =>
          `${path} was replaced on disk after pid ${pid} mapped it, and the copy it runs is readable only through /proc/${pid}/map_files, which needs CAP_SYS_ADMIN: its frames are left unnamed (restart the process, or record as root)`,
      );
  }

  /** See Symbolizer.expectBuildIds: a recording's build-ids, for a file read back (decode, Open perf.data). */
  expectBuildIds(entries: readonly { readonly path: string; readonly buildId: string }[]): void {
    this.symbolizer.expectBuildIds(entries);
  }

  /**
   * What the user is told of objects rebuilt or upgraded since the recording and not found as recorded: one line each,
   * with the fix (perf record keeps a copy in ~/.debug unless told not to).
   */
  changedObjectNotes(): string[] {
    return [...this.symbolizer.changedSinceRecording()].map(
      ([file, { recorded, now }]) =>
        `${file} was rebuilt or upgraded since the recording (build-id ${recorded} then, ${now} now) and perf's build-id cache (~/.debug) holds no copy of the recorded build: its frames are left unnamed (record with perf's default build-id cache, or keep the binary)`,
    );
  }

  symbolize(pid: number, ip: bigint, kernel: boolean): string | undefined {
    return this.symbolizer.symbolize(pid, ip, kernel);
  }

  /** The user frames of a sample with user registers and stack (see Symbolizer.unwindUserStack). */
  unwindUserStack(pid: number, registers: Readonly<Record<number, bigint>>, stack: Uint8Array): readonly bigint[] {
    return this.symbolizer.unwindUserStack(pid, registers, stack);
  }

  /**
   * `snapshot` with the logpoint readers only this side has (sampleValues, logpointColumns): a logpoint's records then
   * carry the values read from their registers and stack (details drawer, JSON Lines, the editor's line, the summary).
   */
  withValueReaders(snapshot: DecodedSnapshot): DecodedSnapshot {
    return {
      ...snapshot,
      sampleValues: (event, pid, registers, stack, raw) => this.sampleValues(event, pid, registers, stack, raw),
      logpointColumns: (withReaders, event, rows) => this.logpointColumns(withReaders, event, rows),
    };
  }

  /**
   * A logpoint hit's values (see LogpointEvaluator), or undefined for an event that is not a logpoint.
   * Memory beyond the sampled stack is read from the live process where this user may (/proc/PID/mem).
   */
  sampleValues(
    event: EventDescription,
    pid: number,
    registers: Readonly<Record<number, bigint>>,
    stack: Uint8Array,
    raw?: Uint8Array,
  ): Readonly<Record<string, unknown>> | undefined {
    if (!isLogpointSpec(event.name)) return undefined;
    // The text is written here, when the record is decoded.
    const read = this.logpoints.evaluate(withRedZone({ pid, registers, stack }, raw, this.redZoneRoom), this.namesOf(event));
    return {
      values: read.values,
      ...(read.function ? { function: read.function } : {}),
      ...(read.readLater ? { readLater: read.readLater } : {}),
      ...(read.error ? { error: read.error } : {}),
      ...(read.notCaptured ? { notCaptured: read.notCaptured } : {}),
    };
  }

  /**
   * The values of a logpoint's hits (`rows`, its samples in `snapshot`) as columns, read as sampleValues reads one
   * record's, without decoding the rest of each record (see sampleUserState): what the editor's line and the summary
   * tally. A row that does not decode is a hit without values that says why.
   */
  logpointColumns(snapshot: DecodedSnapshot, event: EventDescription, rows: readonly number[]): LogpointColumns {
    const columns = new LogpointColumns(rows.length);
    const names = this.namesOf(event);
    for (const row of rows) {
      let state: SampleUserState | undefined;
      try {
        state = sampleUserState(snapshot, row, this.userStateRoom);
      } catch (error) {
        columns.addHitWithoutValues((error as Error).message);
        continue;
      }
      if (!state) columns.addHitWithoutValues();
      else this.logpoints.evaluateInto(withRedZone(state, state.raw, this.redZoneRoom), names, columns);
    }
    return columns;
  }

  /** The NAMEs a logpoint spec asks for (undefined: every variable in scope), the same array every time (see LogpointEvaluator). */
  private namesOf(event: EventDescription): readonly string[] | undefined {
    let names = this.logpointNames.get(event.name);
    if (names === undefined) {
      const ast = parseEventSpec(event.name);
      names = ast.kind === 'logpoint' ? (ast.variables ?? null) : null;
      this.logpointNames.set(event.name, names);
    }
    return names ?? undefined;
  }

  /**
   * What the tables need of a frame: its name and its object. Straight from the symbolizer: the tables ask once per
   * frame, so the per-address table of `frames` would only hold a second copy of every name.
   */
  resolveFrame(pid: number, ip: bigint, kernel: boolean): FrameResolution {
    return this.symbolizer.resolve(pid, ip, kernel);
  }

  sourceLine(pid: number, ip: bigint) {
    return this.symbolizer.sourceLine(pid, ip);
  }

  /** What perf.data export synthesizes COMM/MMAP2 records from. */
  processes(): SynthesizedProcess[] {
    return [...this.known.values()]
      .filter((p) => p.pid > 0)
      .flatMap((p) => [
        {
          pid: p.pid,
          tid: p.pid,
          comm: p.comm || String(p.pid),
          maps: [...p.maps.values()].map((m) => ({ start: m.start, end: m.end, pgoff: m.pgoff, path: m.path, ...(m.executable ? {} : { executable: false }) })),
        },
        // The other threads' COMM only: their mappings are the process's.
        ...[...p.threads].map(([tid, comm]) => ({ pid: p.pid, tid, comm, maps: [] })),
      ]);
  }
}

/** Per process, the inodes of the files its /proc maps mark ` (deleted)`: mapped files unlinked since they were mapped. */
function unlinkedInodes(procState: readonly ProcessSideband[]): Map<number, Set<number>> {
  const unlinked = new Map<number, Set<number>>();
  for (const proc of procState) {
    for (const map of proc.maps) {
      if (!map.deleted || map.inode === 0) continue;
      let inodes = unlinked.get(proc.pid);
      if (!inodes) unlinked.set(proc.pid, (inodes = new Set()));
      inodes.add(map.inode);
    }
  }
  return unlinked;
}
