// The side-band a snapshot's samples need. A keeper spools up to 32 MiB per ring of side-band
// (COMM, FORK, EXIT, MMAP, MMAP2 of every process its target ran) while its flight recorders keep
// the last moments: emitting all of it made a snapshot of a busy keeper take tens of seconds and a
// perf.data many times larger than its samples. Records from the oldest sample on stay as they are;
// older ones are kept only where they make the state a reader (perf, our symbolizer) holds when the
// samples begin: the comm of each thread the samples (or the forks after them) name, the mappings
// still live in their processes, and the forks those came through. The other older COMM, FORK, EXIT,
// MMAP, MMAP2 and context switches go; every other record (LOST, THROTTLE, KSYMBOL...) stays where
// it was.
//
// What the state is follows perf's machine model (tools/perf/util/machine.c): a COMM sets its
// thread's comm; a FORK makes a thread whose comm is its parent thread's and, for a new process, a
// copy of the parent's mappings; an MMAP/MMAP2 replaces what it overlaps in its process; EXIT only
// marks a thread dead (its comm and mappings stay). Replaying the kept records in time order gives
// each needed thread the same comm and each needed process the same mapping at every address as
// replaying all of them: the record that last covered an address (or set a comm) is kept, and so
// is every fork it was inherited through.

import type { RawSnapshot, RingCopy } from '../abi/snapshot';
import { RecordType } from '../abi/uapi';
import { mapRange } from '../abi/mappings';
import { decodeSnapshot } from './columns';
import { validEnd } from './walk';

/** What pruneSideband left out. */
export interface SidebandPruning {
  /** Records of the side-band rings before the oldest sample, and how many of them were kept as state. */
  readonly olderRecords: number;
  readonly keptRecords: number;
  /** Bytes left out of the side-band rings. */
  readonly droppedBytes: number;
  /** Absolute ns of the oldest sample (null when the snapshot holds none: nothing is left out then). */
  readonly oldestSampleNs: bigint | null;
}

/** What was left out, as a sentence (null when nothing was). */
export function describePruning(pruning: SidebandPruning): string | null {
  if (pruning.olderRecords === pruning.keptRecords) return null;
  const mib = (pruning.droppedBytes / (1 << 20)).toFixed(1);
  return (
    `side-band before the oldest sample: kept ${pruning.keptRecords} of ${pruning.olderRecords} records (the comms, mappings and forks ` +
    `the samples need; ${mib} MiB left out)`
  );
}

/** One mapping piece of a process: [start, end) of the record at `row`, filed under `owner` (whose pid the record names). */
interface Piece {
  readonly start: bigint;
  readonly end: bigint;
  readonly row: number;
  readonly owner: Proc;
}

/** One incarnation of a process: its mappings (sorted, disjoint) and the fork that made it. */
interface Proc {
  readonly pid: number;
  pieces: Piece[];
  readonly forkRow: number;
  readonly parent: Proc | null;
}

/** Where a thread's comm came from: a COMM row, or a FORK row and then the parent thread's source at that moment. */
interface CommSource {
  readonly row: number;
  readonly inherited: CommSource | null;
}

interface Thread {
  readonly pid: number;
  comm: CommSource | null;
}

/** Record types that only set per-task state, which the replay below stands in for. */
function isTaskState(type: number): boolean {
  return (
    type === RecordType.COMM ||
    type === RecordType.FORK ||
    type === RecordType.EXIT ||
    type === RecordType.MMAP ||
    type === RecordType.MMAP2 ||
    type === RecordType.SWITCH ||
    type === RecordType.SWITCH_CPU_WIDE
  );
}

/** Maps [start, end) to `row` in `proc`, cutting what it overlaps as perf's maps__fixup_overlappings does. */
function insertPiece(proc: Proc, start: bigint, end: bigint, row: number, owner: Proc): void {
  if (end <= start) return;
  mapRange(proc.pieces, start, end, { start, end, row, owner }, (piece, from, to) => ({ ...piece, start: from, end: to }));
}

/**
 * `raw` with its side-band (forward) rings cut down to what its samples need (see the head of this
 * file); rings and everything else as they were. A snapshot without samples is returned whole.
 */
export function pruneSideband<T extends RawSnapshot>(raw: T): { snapshot: T; pruning: SidebandPruning } {
  const nothing = (oldestSampleNs: bigint | null) => ({ snapshot: raw, pruning: { olderRecords: 0, keptRecords: 0, droppedBytes: 0, oldestSampleNs } });
  if (!raw.rings.some((ring) => ring.direction === 'forward')) return nothing(null);
  const decoded = decodeSnapshot(raw);
  const { columns } = decoded;
  const { kind, time, pid, tid, ring: ringOf, offset, length } = columns;
  const forward = raw.rings.map((ring) => ring.direction === 'forward');

  let oldest = Infinity;
  for (let row = 0; row < length; row++) {
    if (kind[row] === RecordType.SAMPLE && !forward[ringOf[row]] && time[row] < oldest) oldest = time[row];
  }
  if (oldest === Infinity) return nothing(null);
  const oldestSampleNs = columns.timeOriginNs + BigInt(oldest);

  // What the samples and the records after them name: their processes' mappings and their threads' comms.
  const neededPids = new Set<number>();
  const neededTids = new Set<number>();
  const views = raw.rings.map((ring) => new DataView(ring.bytes.buffer, ring.bytes.byteOffset, ring.bytes.byteLength));
  const before = (row: number) => time[row] < oldest;
  for (let row = 0; row < length; row++) {
    if (before(row)) continue;
    if (kind[row] === RecordType.SAMPLE && !forward[ringOf[row]]) {
      neededPids.add(pid[row]);
      neededTids.add(tid[row]);
    } else if (kind[row] === RecordType.FORK && forward[ringOf[row]]) {
      // A fork after the oldest sample copies its parent's state as it is then.
      const view = views[ringOf[row]];
      neededPids.add(view.getInt32(offset[row] + 12, true));
      neededTids.add(view.getInt32(offset[row] + 20, true));
    }
  }

  // Replays the older side-band in time order (the rows are merged by time).
  const procs = new Map<number, Proc>();
  const threads = new Map<number, Thread>();
  const procOf = (p: number): Proc => {
    let proc = procs.get(p);
    if (!proc) procs.set(p, (proc = { pid: p, pieces: [], forkRow: -1, parent: null }));
    return proc;
  };
  const keep = new Uint8Array(length);
  let olderRecords = 0;
  for (let row = 0; row < length; row++) {
    const r = ringOf[row];
    if (!forward[r]) continue;
    // A record without a time stays where it is, as one after the oldest sample does.
    if (!before(row)) {
      keep[row] = 1;
      continue;
    }
    olderRecords++;
    const type = kind[row];
    if (!isTaskState(type)) {
      keep[row] = 1;
      continue;
    }
    const view = views[r];
    const at = offset[row];
    switch (type) {
      case RecordType.COMM: {
        const thread = threads.get(tid[row]);
        if (thread && thread.pid === pid[row]) thread.comm = { row, inherited: null };
        else threads.set(tid[row], { pid: pid[row], comm: { row, inherited: null } });
        break;
      }
      case RecordType.FORK: {
        const childPid = view.getInt32(at + 8, true);
        const parentPid = view.getInt32(at + 12, true);
        const childTid = view.getInt32(at + 16, true);
        const parentTid = view.getInt32(at + 20, true);
        threads.set(childTid, { pid: childPid, comm: { row, inherited: threads.get(parentTid)?.comm ?? null } });
        if (childPid !== parentPid) {
          const parent = procs.get(parentPid) ?? null;
          procs.set(childPid, { pid: childPid, pieces: parent ? [...parent.pieces] : [], forkRow: row, parent });
        }
        break;
      }
      case RecordType.MMAP:
      case RecordType.MMAP2: {
        const proc = procOf(view.getInt32(at + 8, true));
        const start = view.getBigUint64(at + 16, true);
        insertPiece(proc, start, start + view.getBigUint64(at + 24, true), row, proc);
        break;
      }
      default:
        break; // EXIT only marks a thread dead (perf keeps its comm and mappings); context switches set nothing
    }
  }

  // The state the needed processes and threads hold at the oldest sample, and the forks it came through.
  let keptRecords = 0;
  const mark = (row: number) => {
    if (row >= 0 && !keep[row]) {
      keep[row] = 1;
      keptRecords++;
    }
  };
  for (const p of neededPids) {
    const proc = procs.get(p);
    if (!proc) continue;
    for (const piece of proc.pieces) {
      mark(piece.row);
      for (let via: Proc | null = proc; via && via !== piece.owner; via = via.parent) mark(via.forkRow);
    }
  }
  for (const t of neededTids) {
    for (let source = threads.get(t)?.comm ?? null; source; source = source.inherited) mark(source.row);
  }
  // Records that set no task state were kept above; they count as kept older records too.
  for (let row = 0; row < length; row++) if (forward[ringOf[row]] && before(row) && !isTaskState(kind[row])) keptRecords++;

  // The kept records of each side-band ring, in ring order (a forward ring's rows are in it already).
  const kept: number[][] = raw.rings.map(() => []);
  const keptBytes = new Array<number>(raw.rings.length).fill(0);
  for (let row = 0; row < length; row++) {
    const r = ringOf[row];
    if (!forward[r] || !keep[row]) continue;
    kept[r].push(offset[row]);
    keptBytes[r] += views[r].getUint16(offset[row] + 6, true);
  }
  let droppedBytes = 0;
  const rings = raw.rings.map((ring, r): RingCopy => {
    if (!forward[r]) return ring;
    const bytes = new Uint8Array(keptBytes[r]);
    let to = 0;
    for (const at of kept[r].sort((a, b) => a - b)) {
      const size = views[r].getUint16(at + 6, true);
      bytes.set(ring.bytes.subarray(at, at + size), to);
      to += size;
    }
    droppedBytes += validEnd(ring) - to;
    return { ...ring, bytes, validBytes: to };
  });
  return { snapshot: { ...raw, rings }, pruning: { olderRecords, keptRecords, droppedBytes, oldestSampleNs } };
}
