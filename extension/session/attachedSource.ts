// Rings we did not open: a keeper's (described by its state file) or any process's perf fd (e.g. a
// running `perf record --overwrite`). We borrow the fd with pidfd_open + pidfd_getfd and map the
// SAME ring (the kernel only allows the owner's page count), read-only. Backward rings are
// snapshotted like our own (pause → copy → resume on the shared ring). A forward ring belongs to
// its owner's reader: we only peek at [data_tail, data_head) and never move data_tail.

import { readdirSync, readFileSync, readlinkSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import type { EventDescription, RawSnapshot, ResolvedEvent, RingCopy } from '../../native/decode/types';
import { listEvents, type EventList } from '../../native/specs/list';
import { decodeAttr, type PerfEventAttr } from '../../native/perf/attr';
import { adoptEventFd } from '../../native/perf/events';
import { BackwardRing, RingMapping, SpareBufferWarmer, defaultCopyMode, mapExistingRing, type RingMeta } from '../../native/perf/ring';
import { MmapPage } from '../../native/perf/uapi';
import * as libc from '../../native/sys/libc';
import { readProcMapsIfAlive } from '../../native/sys/procmaps';
import { PerfError } from '../../native/sys/errors';
import { keeperEventDescriptions, keeperStateDir, releasePauseLease, takePauseLease, type KeeperState, isKeeperAlive } from '../../native/keeper/state';
import type { ForeignFdHint, RingSource, RingStatus } from './ports';

export class AttachError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'AttachError';
  }
}

/** The user dismissed a question attaching needed (the UI stays quiet; callers may still log it). */
export class AttachCancelledError extends AttachError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = 'AttachCancelledError';
  }
}

/** pidfd_open + pidfd_getfd: our own fd for the same open file (same event, same ring). */
export function borrowPerfFd(pid: number, targetFd: number): number {
  const pidfd = libc.pidfdOpen(pid);
  try {
    return libc.pidfdGetfd(pidfd, targetFd);
  } catch (error) {
    if (error instanceof PerfError) throw new PerfError('pidfd_getfd', error.errno, { pid, note: `(fd ${targetFd} of pid ${pid})` });
    throw error;
  } finally {
    libc.close(pidfd);
  }
}

/** A forward ring seen read-only: copies what the owner has not consumed yet, oldest first. */
export class PeekRing {
  private readonly ring: RingMapping;
  private disposed = false;

  constructor(private readonly fd: number, dataPages: number, readonly meta: RingMeta) {
    try {
      this.ring = new RingMapping(fd, dataPages, false, meta.label);
    } catch (error) {
      libc.close(fd);
      throw error;
    }
  }

  get dataSize(): number {
    return this.ring.dataSize;
  }

  head(): bigint {
    return this.ring.readU64(MmapPage.DATA_HEAD, defaultCopyMode());
  }

  peek(): RingCopy {
    const mode = defaultCopyMode();
    const head = this.ring.readU64(MmapPage.DATA_HEAD, mode);
    const tail = this.ring.readU64(MmapPage.DATA_TAIL, mode);
    const size = this.ring.dataSize;
    const length = Number(head - tail > BigInt(size) ? BigInt(size) : head - tail);
    const bytes = new Uint8Array(size);
    this.ring.copyLinear(Number((head - BigInt(length)) & BigInt(size - 1)), length, bytes, mode);
    return {
      ...this.meta, direction: 'forward', bytes, validBytes: length, dataSize: size,
      bytesWritten: head, path: 'peek', copiedAtNs: performance.now() * 1e6,
    };
  }

  status(): RingStatus {
    const head = this.head();
    return { ringId: this.meta.ringId, label: this.meta.label, cpu: this.meta.cpu, tid: this.meta.tid, direction: 'forward', dataSize: this.dataSize, bytesWritten: head, paused: false };
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.ring.unmap();
    } finally {
      libc.close(this.fd);
    }
  }
}

type AttachedRing = { kind: 'backward'; ring: BackwardRing } | { kind: 'peek'; ring: PeekRing };

/** The ringside.warmCopyBuffers setting, for sources over borrowed rings (default true). */
export interface CopyBufferOptions {
  readonly warmCopyBuffers?: boolean;
}

/** A RingSource over borrowed rings. Disposing closes our fds and mappings, never the owner's. */
export class AttachedRingSource implements RingSource {
  private paused = false;
  private disposed = false;
  /** Spare copy buffers of the borrowed backward rings, faulted in while idle, as a Recorder keeps them. */
  private readonly warmer: SpareBufferWarmer;

  /**
   * `keeperStateDir`: the owner is a keeper whose state lives there, so pauses are announced with a
   * lease it can see (it resumes the rings if this process dies with them paused).
   */
  constructor(readonly events: readonly EventDescription[], private readonly rings: readonly AttachedRing[], private readonly ownerPid: number,
    warmCopyBuffers = true, private readonly keeperStateDir?: string) {
    this.warmer = new SpareBufferWarmer(() => this.rings.flatMap((attached) => attached.kind === 'backward' ? [attached.ring] : []), warmCopyBuffers);
    this.warmer.schedule();
  }

  /** Resolves once every borrowed backward ring's spare copy buffer is warm. */
  copyBuffersWarm(): Promise<void> {
    return this.warmer.whenWarm();
  }

  /** True when every borrowed backward ring has a warm spare for its next snapshot. */
  get copyBuffersReady(): boolean {
    return this.rings.every((attached) => attached.kind !== 'backward' || attached.ring.spare.ready);
  }

  snapshot(): RawSnapshot {
    this.assertLive();
    const takenAtMs = Date.now();
    const copies: RingCopy[] = [];
    const pauseWindowNs: number[] = [];
    if (!this.paused) this.takeLease();
    for (const attached of this.rings) {
      if (attached.kind === 'backward') {
        if (this.paused) {
          // Already paused by the user: copy as is, and leave it paused.
          const result = attached.ring.copyQuiescent();
          copies.push(attached.ring.toCopy(result.bytes, result.validBytes, result.written, 'paused'));
          pauseWindowNs.push(0);
        } else {
          const { copy, pauseWindowNs: window } = attached.ring.snapshot();
          copies.push(copy);
          pauseWindowNs.push(window);
        }
      } else {
        copies.push(attached.ring.peek());
        pauseWindowNs.push(0);
      }
    }
    if (!this.paused) this.releaseLease();
    this.warmer.schedule();
    return { events: this.events, rings: copies, takenAtMs, pauseWindowNs };
  }

  pause(): void {
    this.assertLive();
    this.takeLease();
    for (const attached of this.rings) if (attached.kind === 'backward') attached.ring.event.pauseOutput(true);
    this.paused = true;
  }

  resume(): void {
    this.assertLive();
    for (const attached of this.rings) if (attached.kind === 'backward') attached.ring.event.pauseOutput(false);
    this.paused = false;
    this.releaseLease();
  }

  private takeLease(): void {
    if (this.keeperStateDir !== undefined) takePauseLease(this.ownerPid, process.pid, this.keeperStateDir);
  }

  private releaseLease(): void {
    if (this.keeperStateDir !== undefined) releasePauseLease(this.ownerPid, process.pid, this.keeperStateDir);
  }

  ringStats(): RingStatus[] {
    if (this.disposed) return [];
    return this.rings.map((attached) => {
      if (attached.kind === 'peek') return attached.ring.status();
      const stats = attached.ring.stats();
      return {
        ringId: stats.ringId, label: stats.label, cpu: attached.ring.meta.cpu, tid: attached.ring.meta.tid,
        direction: 'backward', dataSize: stats.dataSize, bytesWritten: stats.bytesWritten, paused: this.paused,
      };
    });
  }

  /** True while the process that owns the rings is alive (the rings survive it only while we hold them). */
  get ownerAlive(): boolean {
    return isKeeperAlive({ pid: this.ownerPid });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.warmer.dispose();
    // A ring we paused must not stay paused for its owner after we leave.
    if (this.paused) {
      for (const attached of this.rings) {
        if (attached.kind === 'backward') {
          try { attached.ring.event.pauseOutput(false); } catch { /* the owner may have closed it */ }
        }
      }
      this.releaseLease();
    }
    const errors: unknown[] = [];
    for (const attached of this.rings) {
      try { attached.ring.dispose(); } catch (error) { errors.push(error); }
    }
    if (errors.length) throw errors[0];
  }

  private assertLive(): void {
    if (this.disposed) throw new AttachError('rings were detached');
  }
}

/** Borrows every ring a keeper publishes. */
export function attachKeeperRings(state: KeeperState, options: CopyBufferOptions = {}): AttachedRingSource {
  if (!isKeeperAlive(state)) throw new AttachError(`keeper ${state.pid} is not running any more`, 'start a new kept recording; its rings died with it');
  const events = keeperEventDescriptions(state);
  const rings: AttachedRing[] = [];
  try {
    for (const ring of state.rings) {
      const fd = borrowPerfFd(state.pid, ring.fd);
      const meta: RingMeta = { ringId: ring.ringId, label: ring.label, cpu: ring.cpu, tid: ring.tid, defaultEvent: ring.defaultEvent };
      if (ring.direction === 'backward') {
        const attr = events[ring.defaultEvent]?.attr;
        rings.push({ kind: 'backward', ring: mapExistingRing(fd, ring.pages, 'backward', { meta, ...(attr ? { attr } : {}) }) as BackwardRing });
      } else {
        rings.push({ kind: 'peek', ring: new PeekRing(fd, ring.pages, meta) });
      }
    }
  } catch (error) {
    for (const attached of rings) attached.ring.dispose();
    throw error;
  }
  return new AttachedRingSource(events, rings, state.pid, options.warmCopyBuffers, keeperStateDir());
}

// ------------------------------------------------------------------------------------------------
// Other processes' perf fds

export interface ForeignPerfFd {
  readonly pid: number;
  readonly fd: number;
  readonly comm: string;
  readonly cmdline: string;
  /** Data-page counts of the process's perf mappings (candidates for this fd's ring). */
  readonly mappedPages: readonly number[];
}

/** Every `anon_inode:[perf_event]` fd of every process we can see (ours excluded). */
export function scanPerfFds(options: { excludePids?: readonly number[] } = {}): ForeignPerfFd[] {
  const exclude = new Set([process.pid, ...(options.excludePids ?? [])]);
  const found: ForeignPerfFd[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const pidText of pids) {
    const pid = Number(pidText);
    if (exclude.has(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // not ours to look at, or gone
    }
    const perfFds: number[] = [];
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:[perf_event]') perfFds.push(Number(fd));
      } catch {
        // closed while we looked
      }
    }
    if (perfFds.length === 0) continue;
    const comm = readText(`/proc/${pid}/comm`).trim();
    const cmdline = readText(`/proc/${pid}/cmdline`).split('\0').filter(Boolean).join(' ');
    const pages = perfMappingPages(pid);
    for (const fd of perfFds.sort((a, b) => a - b)) found.push({ pid, fd, comm, cmdline, mappedPages: pages });
  }
  return found;
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Distinct data-page counts of a process's perf ring mappings, from /proc/PID/maps. */
export function perfMappingPages(pid: number): number[] {
  const page = libc.pageSize();
  const counts = new Set<number>();
  for (const map of readProcMapsIfAlive(pid)) {
    if (map.path !== 'anon_inode:[perf_event]') continue;
    const pages = Number((map.end - map.start) / BigInt(page)) - 1;
    if (pages >= 1 && (pages & (pages - 1)) === 0) counts.add(pages);
  }
  return [...counts].sort((a, b) => b - a);
}

/**
 * The attr of a borrowed fd, from the owner's perf.data header when it writes one (perf record
 * writes the attr section, with every fd's sample id, before it starts recording).
 */
export function attrFromOwnerPerfData(pid: number, sampleId: bigint): { attr: PerfEventAttr; file: string } | undefined {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    if (!target.startsWith('/')) continue;
    const found = findAttrInPerfDataHeader(`/proc/${pid}/fd/${fd}`, sampleId);
    if (found) return { attr: found, file: target.replace(/ \(deleted\)$/, '') };
  }
  return undefined;
}

/** Reads just the attrs section of a perf.data file and returns the attr whose ids include `sampleId`. */
export function findAttrInPerfDataHeader(file: string, sampleId: bigint): PerfEventAttr | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const read = (offset: number, length: number): Uint8Array | undefined => {
      if (length < 0 || length > 1 << 24) return undefined;
      const bytes = new Uint8Array(length);
      return readSync(fd, bytes, 0, length, offset) === length ? bytes : undefined;
    };
    const header = read(0, 104);
    if (!header) return undefined;
    const view = new DataView(header.buffer);
    if (view.getBigUint64(0, true) !== 0x32454c4946524550n) return undefined; // "PERFILE2", little-endian
    const attrSize = Number(view.getBigUint64(16, true));
    const attrsOffset = Number(view.getBigUint64(24, true));
    const attrsSize = Number(view.getBigUint64(32, true));
    const entrySize = attrSize; // attr_size covers the attr plus its ids file_section (16 bytes)
    if (entrySize <= 16 || attrsSize % entrySize !== 0) return undefined;
    const attrs = read(attrsOffset, attrsSize);
    if (!attrs) return undefined;
    for (let at = 0; at < attrsSize; at += entrySize) {
      const entry = attrs.subarray(at, at + entrySize);
      const entryView = new DataView(entry.buffer, entry.byteOffset, entry.byteLength);
      const idsOffset = Number(entryView.getBigUint64(entrySize - 16, true));
      const idsSize = Number(entryView.getBigUint64(entrySize - 8, true));
      const ids = read(idsOffset, idsSize);
      if (!ids) continue;
      const idsView = new DataView(ids.buffer);
      for (let i = 0; i + 8 <= idsSize; i += 8) {
        if (idsView.getBigUint64(i, true) === sampleId) return decodeAttr(entry.subarray(0, entrySize - 16));
      }
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const EINVAL = 22;

/** Where a borrowed event's attr came from. */
export type AttrOrigin = 'hint' | 'perf.data' | 'answer' | 'raw' | 'unknown';

export interface BorrowedRingInfo {
  readonly source: AttachedRingSource;
  readonly pages: number;
  readonly direction: 'backward' | 'forward';
  readonly sampleId: bigint;
  /**
   * Where the attr came from: the hint, the owner's perf.data header, the user's answer to "which
   * event is it?", the user's choice to decode raw records, or nothing (shown by record type).
   */
  readonly attrOrigin: AttrOrigin;
  readonly explanation: string;
}

/** What the kernel and the owner's files tell about a foreign fd before we map its ring. */
export interface ForeignFdProbe {
  readonly pid: number;
  readonly fd: number;
  readonly sampleId: bigint;
  /** Candidate data-page counts (the hint, else the owner's perf mapping sizes). */
  readonly pages: readonly number[];
  /** The attr from the owner's perf.data header, when it writes one. */
  readonly ownerAttr?: { readonly attr: PerfEventAttr; readonly file: string };
}

/** Checks that `fd` of `pid` is a mapped perf event and learns its sample id (and attr, when the owner writes perf.data). */
export function probeForeignFd(pid: number, fd: number, pagesHint?: number): ForeignFdProbe {
  let link: string;
  try {
    link = readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch (error) {
    throw new AttachError(`pid ${pid} has no fd ${fd} we can see (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'the process may have exited or closed it; borrowing needs the same user or CAP_SYS_PTRACE');
  }
  if (link !== 'anon_inode:[perf_event]') throw new AttachError(`fd ${fd} of pid ${pid} is ${link}, not a perf event`, 'pick an fd listed as anon_inode:[perf_event]');
  const pages = pagesHint !== undefined ? [pagesHint] : perfMappingPages(pid);
  if (pages.length === 0) {
    throw new AttachError(`pid ${pid} fd ${fd} has no ring mapped`, 'the owner never mmapped it (a counting event, or its output goes into another fd\'s ring via SET_OUTPUT: pick that fd)');
  }
  // Ask the kernel for the sample id first: it names the event in the owner's perf.data header.
  const probeFd = borrowPerfFd(pid, fd);
  let sampleId: bigint;
  try {
    sampleId = adoptEventFd(probeFd, { type: 0, config: 0n, samplePeriod: 0n, sampleType: 0, readFormat: 0, flags: {} }).id();
  } finally {
    libc.close(probeFd);
  }
  const ownerAttr = attrFromOwnerPerfData(pid, sampleId);
  return { pid, fd, sampleId, pages, ...(ownerAttr ? { ownerAttr } : {}) };
}

/** The event Ringside decodes a borrowed ring as, and why. */
interface EventIdentity {
  readonly attr?: PerfEventAttr;
  readonly name?: string;
  readonly origin: AttrOrigin;
  readonly file?: string;
}

/**
 * Borrows fd `fd` of `pid` and maps its ring. Page count: the hint, else each of the owner's
 * perf mapping sizes in turn (the kernel answers EINVAL to any other size). Direction: from the
 * attr when known, else from data_head (a backward ring's head counts down from 2^64).
 */
export function borrowForeignRing(pid: number, fd: number, hint: ForeignFdHint = {}, options: CopyBufferOptions = {}): BorrowedRingInfo {
  const probe = probeForeignFd(pid, fd, hint.pages);
  const identity: EventIdentity = hint.event ? { attr: hint.event.attr, name: hint.event.name, origin: 'hint' }
    : probe.ownerAttr ? { attr: probe.ownerAttr.attr, origin: 'perf.data', file: probe.ownerAttr.file }
    : { origin: 'unknown' };
  return mapForeignRing(probe, identity, options);
}

// ------------------------------------------------------------------------------------------------
// "Which event is it?" — asked when the attr is nowhere to be read

/** The user's answer: an event spec (decoded with that spec's sample layout) or raw records. */
export type EventAnswer =
  | { readonly kind: 'spec'; readonly spec: string }
  | { readonly kind: 'raw' };

export interface EventChoice {
  readonly label: string;
  readonly detail: string;
  /** Section of the pick list (software, PMU, tracepoints, raw). */
  readonly group: string;
  readonly answer: EventAnswer;
}

export interface UnknownEventQuestion {
  readonly pid: number;
  readonly fd: number;
  readonly comm: string;
  readonly sampleId: bigint;
  readonly pages: readonly number[];
  /** Why we ask (shown above the choices). */
  readonly why: string;
  readonly choices: readonly EventChoice[];
}

/** The port the UI fills (a QuickPick in the extension); undefined = the user cancelled. */
export type AskWhichEvent = (question: UnknownEventQuestion) => Promise<EventAnswer | undefined>;

export const RAW_RECORDS_CHOICE: EventChoice = {
  label: 'Decode as raw records',
  detail: 'no sample layout: records are shown by type and size; sample fields stay undecoded',
  group: 'Layout',
  answer: { kind: 'raw' },
};

/** Likely events for an unknown fd: raw records first, then what `ringside events` lists. */
export function eventChoices(list: EventList): EventChoice[] {
  const choices: EventChoice[] = [RAW_RECORDS_CHOICE];
  for (const event of list.software) {
    choices.push({ label: event.name, detail: `software event, Ringside's sample layout (ip tid time cpu period id)${event.aliases.length ? ` · ${event.aliases.join(', ')}` : ''}`, group: 'Software', answer: { kind: 'spec', spec: event.name } });
  }
  for (const pmu of list.pmus) {
    for (const event of pmu.events) {
      const spec = `${pmu.name}/${event.name}/`;
      choices.push({ label: spec, detail: `${pmu.persistent ? 'persistent ' : ''}PMU event ${event.terms}`, group: 'PMU', answer: { kind: 'spec', spec } });
    }
  }
  for (const tp of list.tracepoints) {
    const spec = `${tp.system}:${tp.name}`;
    choices.push({ label: spec, detail: `tracepoint id ${tp.id} (raw field layout from tracefs)`, group: 'Tracepoints', answer: { kind: 'spec', spec } });
  }
  return choices;
}

export interface AskingBorrowOptions extends CopyBufferOptions {
  readonly ask: AskWhichEvent;
  /** Turns the answered spec into an attr (the normal spec path). */
  readonly resolveSpec: (spec: string) => ResolvedEvent | Promise<ResolvedEvent>;
  /** The choices offered; default: eventChoices(listEvents()). */
  readonly choices?: () => readonly EventChoice[];
  readonly pages?: number;
}

/**
 * Like borrowForeignRing, but when the event's attr cannot be read anywhere (no perf.data header
 * with its sample id), asks the user which event it is. The answer supplies the sample layout the
 * records are decoded with; the ring's direction and size still come from the kernel.
 */
export async function borrowForeignRingAsking(pid: number, fd: number, options: AskingBorrowOptions): Promise<BorrowedRingInfo> {
  const probe = probeForeignFd(pid, fd, options.pages);
  if (probe.ownerAttr) return mapForeignRing(probe, { attr: probe.ownerAttr.attr, origin: 'perf.data', file: probe.ownerAttr.file }, options);
  const question: UnknownEventQuestion = {
    pid, fd, comm: readText(`/proc/${pid}/comm`).trim(), sampleId: probe.sampleId, pages: probe.pages,
    why: `pid ${pid} writes no perf.data header with sample id ${probe.sampleId}: which event is fd ${fd}? Its records are decoded with that event's sample layout.`,
    choices: options.choices ? options.choices() : eventChoices(listEvents()),
  };
  const answer = await options.ask(question);
  if (!answer) throw new AttachCancelledError(`attaching to pid ${pid} fd ${fd} was cancelled`, 'pick an event, or "Decode as raw records"');
  if (answer.kind === 'raw') return mapForeignRing(probe, { origin: 'raw' }, options);
  const resolved = await options.resolveSpec(answer.spec);
  return mapForeignRing(probe, { attr: resolved.attr, name: resolved.name, origin: 'answer' }, options);
}

function mapForeignRing(probe: ForeignFdProbe, identity: EventIdentity, options: CopyBufferOptions): BorrowedRingInfo {
  const { pid, fd, sampleId } = probe;
  const attr = identity.attr;
  // Only the owner's own attr knows the ring's direction; a hint or an answer gives the layout only.
  const attrKnowsDirection = identity.origin === 'perf.data' || identity.origin === 'hint';
  let lastError: unknown;
  for (const pages of probe.pages) {
    const borrowed = borrowPerfFd(pid, fd);
    const meta: RingMeta = { ringId: 0, label: `pid ${pid} fd ${fd}`, cpu: -1, tid: -1, defaultEvent: 0 };
    let ring: BackwardRing;
    try {
      ring = mapExistingRing(borrowed, pages, 'backward', { meta, attr: { ...(attr ?? unknownAttr()), flags: { ...(attr?.flags ?? {}), writeBackward: true } } }) as BackwardRing;
    } catch (error) {
      lastError = error;
      if (error instanceof PerfError && error.errno === EINVAL) continue;
      throw error;
    }
    const head = ring.head();
    const backward = attr && attrKnowsDirection ? attr.flags.writeBackward === true : head > (1n << 63n);
    const eventAttr = attr ? { ...attr, flags: { ...attr.flags, writeBackward: backward } } : { ...unknownAttr(), flags: { writeBackward: backward } };
    const name = identity.name ?? (attr ? `pid ${pid} fd ${fd}` : `pid ${pid} fd ${fd} (${identity.origin === 'raw' ? 'raw records' : 'unknown event'})`);
    const events: EventDescription[] = [{ index: 0, name, attr: eventAttr, ids: [sampleId] }];
    let attached: AttachedRing;
    if (backward) {
      attached = { kind: 'backward', ring };
    } else {
      ring.dispose();
      attached = { kind: 'peek', ring: new PeekRing(borrowPerfFd(pid, fd), pages, meta) };
    }
    const attrSentence: Record<AttrOrigin, string> = {
      'perf.data': `The event's attr was read from the owner's perf.data header (${identity.file}).`,
      hint: 'The event\'s attr was given by you.',
      answer: `You said it is ${name}: records are decoded with that event's sample layout (if the owner asked for other sample fields, decoding reports anomalies: pick again or decode raw).`,
      raw: 'You chose raw records: records are shown by type and size, sample fields are not decoded.',
      unknown: 'The event\'s attr is unknown (the owner writes no perf.data header Ringside can read): records are shown by type, sample fields cannot be decoded until you say which event it is.',
    };
    const explanation = [
      `Borrowed fd ${fd} of pid ${pid} with pidfd_getfd: the same event and the same ring as its owner.`,
      `Inherited from the owner: ${pages} data pages and ${backward ? 'an overwrite (backward) ring' : 'a forward ring'}; Ringside cannot change either.`,
      backward ? 'Snapshots pause the shared ring briefly (the owner loses nothing it has not already overwritten).' : 'A forward ring belongs to its owner\'s reader: Ringside only peeks at the unread part and never consumes it.',
      attrSentence[identity.origin],
    ].join(' ');
    return { source: new AttachedRingSource(events, [attached], pid, options.warmCopyBuffers), pages, direction: backward ? 'backward' : 'forward', sampleId, attrOrigin: identity.origin, explanation };
  }
  throw lastError instanceof Error ? lastError : new AttachError(`pid ${pid} fd ${fd}: no candidate ring size was accepted`);
}

function unknownAttr(): PerfEventAttr {
  return { type: 1, config: 0n, samplePeriod: 0n, sampleType: 0, readFormat: 0, flags: {} };
}
