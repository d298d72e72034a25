// Rings other processes own: finding their perf fds (/proc), learning which event each one is (the
// owner's perf.data header, or the user's answer), and borrowing the ring through native/perf/borrowed.
// Keepers, whose state files say all of this, are attached through native/keeper/attach.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { EventDescription, ResolvedEvent } from '../abi/snapshot';
import { PERF_EVENT_INODE } from '../abi/object-names';
import { isPowerOfTwo } from '../abi/units';
import { listEvents, type EventList } from '../specs/list';
import type { PerfEventAttr } from '../abi/attr';
import { findAttrBySampleId } from '../perfdata/attr-lookup';
import { adoptEventFd } from '../perf/events';
import type { BackwardRing } from '../perf/backward-ring';
import type { RingMeta } from '../perf/ring-mapping';
import * as libc from '../sys/libc';
import { readProcMapsIfAlive } from '../sys/procmaps';
import { PerfError } from '../sys/errors';
import {
  AttachCancelledError,
  AttachError,
  AttachedRingSource,
  PeekRing,
  borrowPerfFd,
  mapExistingRing,
  processAlive,
  type AttachedRing,
  type CopyBufferOptions,
} from '../perf/borrowed';

export interface ForeignFdHint {
  /** Data pages of the owner's mapping when known (else probed). */
  readonly pages?: number;
  /** The event's attr when known (from the owner's perf.data header or the user's answer). */
  readonly event?: { readonly name: string; readonly attr: EventDescription['attr'] };
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
    // no /proc to read (a masked procfs): there are no processes to offer
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
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === PERF_EVENT_INODE) perfFds.push(Number(fd));
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
    // a process that exited, or one we may not read: nothing known about it
    return '';
  }
}

/** Distinct data-page counts of a process's perf ring mappings, from /proc/PID/maps. */
export function perfMappingPages(pid: number): number[] {
  const page = libc.pageSize();
  const counts = new Set<number>();
  for (const map of readProcMapsIfAlive(pid)) {
    if (map.path !== PERF_EVENT_INODE) continue;
    const pages = Number((map.end - map.start) / BigInt(page)) - 1;
    if (isPowerOfTwo(pages)) counts.add(pages);
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
    // the process exited or is another user's: it holds no ring we can borrow
    return undefined;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      // that fd closed since the listing: skip it
      continue;
    }
    if (!target.startsWith('/')) continue;
    const found = findAttrBySampleId(`/proc/${pid}/fd/${fd}`, sampleId);
    if (found) return { attr: found, file: target.replace(/ \(deleted\)$/, '') };
  }
  return undefined;
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
    throw new AttachError(
      `pid ${pid} has no fd ${fd} we can see (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      'the process may have exited or closed it; borrowing needs the same user or CAP_SYS_PTRACE',
    );
  }
  if (link !== PERF_EVENT_INODE) throw new AttachError(`fd ${fd} of pid ${pid} is ${link}, not a perf event`, `pick an fd listed as ${PERF_EVENT_INODE}`);
  const pages = pagesHint !== undefined ? [pagesHint] : perfMappingPages(pid);
  if (pages.length === 0) {
    throw new AttachError(
      `pid ${pid} fd ${fd} has no ring mapped`,
      "the owner never mmapped it (a counting event, or its output goes into another fd's ring via SET_OUTPUT: pick that fd)",
    );
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
  const identity: EventIdentity = hint.event
    ? { attr: hint.event.attr, name: hint.event.name, origin: 'hint' }
    : probe.ownerAttr
      ? { attr: probe.ownerAttr.attr, origin: 'perf.data', file: probe.ownerAttr.file }
      : { origin: 'unknown' };
  return mapForeignRing(probe, identity, options);
}

// ------------------------------------------------------------------------------------------------
// "Which event is it?" — asked when the attr is nowhere to be read

/** The user's answer: an event spec (decoded with that spec's sample layout) or raw records. */
export type EventAnswer = { readonly kind: 'spec'; readonly spec: string } | { readonly kind: 'raw' };

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
    choices.push({
      label: event.name,
      detail: `software event, Ringside's sample layout (ip tid time cpu period id)${event.aliases.length ? ` · ${event.aliases.join(', ')}` : ''}`,
      group: 'Software',
      answer: { kind: 'spec', spec: event.name },
    });
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
    pid,
    fd,
    comm: readText(`/proc/${pid}/comm`).trim(),
    sampleId: probe.sampleId,
    pages: probe.pages,
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
      ring = mapExistingRing(borrowed, pages, 'backward', {
        meta,
        attr: { ...(attr ?? unknownAttr()), flags: { ...(attr?.flags ?? {}), writeBackward: true } },
      }) as BackwardRing;
    } catch (error) {
      lastError = error;
      if (error instanceof PerfError && error.errno === EINVAL) continue;
      throw error;
    }
    const head = ring.head();
    const backward = attr && attrKnowsDirection ? attr.flags.writeBackward === true : head > 1n << 63n;
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
      hint: "The event's attr was given by you.",
      answer: `You said it is ${name}: records are decoded with that event's sample layout (if the owner asked for other sample fields, decoding reports anomalies: pick again or decode raw).`,
      raw: 'You chose raw records: records are shown by type and size, sample fields are not decoded.',
      unknown:
        "The event's attr is unknown (the owner writes no perf.data header Ringside can read): records are shown by type, sample fields cannot be decoded until you say which event it is.",
    };
    const explanation = [
      `Borrowed fd ${fd} of pid ${pid} with pidfd_getfd: the same event and the same ring as its owner.`,
      `Inherited from the owner: ${pages} data pages and ${backward ? 'an overwrite (backward) ring' : 'a forward ring'}; Ringside cannot change either.`,
      backward
        ? 'Snapshots pause the shared ring briefly (the owner loses nothing it has not already overwritten).'
        : "A forward ring belongs to its owner's reader: Ringside only peeks at the unread part and never consumes it.",
      attrSentence[identity.origin],
    ].join(' ');
    return {
      source: new AttachedRingSource(events, [attached], { pid, alive: () => processAlive(pid) }, options.warmCopyBuffers),
      pages,
      direction: backward ? 'backward' : 'forward',
      sampleId,
      attrOrigin: identity.origin,
      explanation,
    };
  }
  throw lastError instanceof Error ? lastError : new AttachError(`pid ${pid} fd ${fd}: no candidate ring size was accepted`);
}

function unknownAttr(): PerfEventAttr {
  return { type: 1, config: 0n, samplePeriod: 0n, sampleType: 0, readFormat: 0, flags: {} };
}
