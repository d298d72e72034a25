// What /proc says about every process, kept between snapshots of a CPU-wide recording. Reading it
// all at each snapshot (every process's maps, every thread's comm: 100 processes and 200 threads
// took 22-50 ms on this 2-vCPU VM) is the slow part of a snapshot outside its pause, on the
// caller's thread. Yet almost nothing changes between two snapshots, and what does change says so
// in the side-band the recording already receives: a process that maps code writes MMAP2, a thread
// that is made, renamed or ends writes FORK, COMM or EXIT, an exec writes COMM with the exec bit.
// So each process is read once, and again only when a side-band record says it changed. Which
// processes there are is learnt the same way: /proc is listed once, then a FORK of a new process
// adds it and the EXIT of its main thread has it checked until /proc no longer has it (listing /proc
// took 0.7 ms a snapshot on the loaded VM). Only munmap writes nothing: a mapping unmapped and not
// replaced stays listed until the process is read again, as perf's own model of the process keeps it.
//
// The table is only right while it sees every side-band record of every CPU: a record it could not
// see (the kernel's LOST, a record it cannot parse) makes it list and read everything again once.

import { Misc, RecordType } from '../abi/uapi';
import { commOf, readMaps, threadsOf, allPids, type ProcessMapping, type ProcessSideband } from './procfs';

interface KnownProcess {
  /** Executable mappings as /proc showed them at the last read; null: to be read again. */
  maps: readonly ProcessMapping[] | null;
  /** Each thread's comm, as /proc or a later COMM record gave it. */
  readonly threads: Map<number, string>;
  /** The thread list is to be read again (a thread was made or ended); the comms of threads still there are kept. */
  threadsStale: boolean;
  /** Its main thread ended: the process is looked for at every now() until /proc no longer has it. */
  exiting: boolean;
}

function unread(): KnownProcess {
  return { maps: null, threads: new Map(), threadsStale: true, exiting: false };
}

const HEADER_BYTES = 8;
const COMM_OFFSET = HEADER_BYTES + 8;
/** Where the file name starts: after pid, tid, addr, len, pgoff; in MMAP2 also the device/inode (or build id), prot and flags. */
const MMAP_FILENAME = HEADER_BYTES + 8 + 24;
const MMAP2_FILENAME = MMAP_FILENAME + 24 + 8;
const SLASH = 0x2f;
const commDecoder = new TextDecoder();

export class ProcessTable {
  private readonly known = new Map<number, KnownProcess>();
  /** /proc was listed since the table was made or last forgot everything: every process since is known from FORK. */
  private listed = false;

  /**
   * Learns from side-band records (whole records, as a forward ring hands them out) which processes changed. Any
   * record it cannot account for makes the whole table read again.
   */
  observe(chunk: Uint8Array): void {
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let offset = 0;
    while (offset + HEADER_BYTES <= chunk.byteLength) {
      const type = view.getUint32(offset, true);
      const misc = view.getUint16(offset + 4, true);
      const size = view.getUint16(offset + 6, true);
      if (size < HEADER_BYTES || offset + size > chunk.byteLength) {
        this.forgetAll(); // not a record stream this walk understands: trust nothing it would have said
        return;
      }
      if (type === RecordType.LOST || type === RecordType.LOST_SAMPLES) this.forgetAll();
      else if (size >= HEADER_BYTES + 8) this.note(type, misc, view, offset, size);
      offset += size;
    }
  }

  private note(type: number, misc: number, view: DataView, offset: number, size: number): void {
    const pid = view.getUint32(offset + HEADER_BYTES, true);
    switch (type) {
      case RecordType.MMAP:
      case RecordType.MMAP2: {
        // A data mapping (side-band with mmap_data) holds no code: the table keeps executable mappings only.
        if (misc & Misc.MMAP_DATA) return;
        // Nor is anonymous code (a JIT's, perf's `//anon`) anything a reader of the table names frames by (they keep
        // the mappings of files), and a JIT maps it all the time: reading a node's 1,000-line maps again for each
        // one cost 10 ms a snapshot on the loaded VM. Where it covers a file's code, the side-band record itself,
        // which a snapshot carries, tells the symbolizer.
        const filenameAt = offset + (type === RecordType.MMAP2 ? MMAP2_FILENAME : MMAP_FILENAME);
        if (filenameAt < offset + size && view.getUint8(filenameAt) !== SLASH) return;
        const entry = this.known.get(pid);
        if (entry) entry.maps = null;
        return;
      }
      case RecordType.COMM: {
        // After an exec the process is another program: its maps and (one) thread are read afresh.
        if (misc & Misc.COMM_EXEC) {
          this.known.set(pid, unread());
          return;
        }
        const entry = this.known.get(pid);
        if (!entry) return;
        const tid = view.getUint32(offset + HEADER_BYTES + 4, true);
        const bytes = new Uint8Array(view.buffer, view.byteOffset + offset + COMM_OFFSET, size - COMM_OFFSET);
        const end = bytes.indexOf(0);
        const comm = commDecoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
        if (!entry.threads.has(tid)) entry.threadsStale = true;
        entry.threads.set(tid, comm);
        return;
      }
      case RecordType.FORK:
      case RecordType.EXIT: {
        if (size < HEADER_BYTES + 12) return;
        const tid = view.getUint32(offset + HEADER_BYTES + 8, true);
        // A new process (or a pid reused) is read whole.
        if (type === RecordType.FORK && tid === pid) {
          this.known.set(pid, unread());
          return;
        }
        const entry = this.known.get(pid);
        if (!entry) return;
        entry.threadsStale = true;
        // The main thread's end: the process ends with it, or lives on in its other threads (pthread_exit in main).
        if (tid === pid) entry.exiting = true;
        return;
      }
    }
  }

  /** Drops everything known: the next now() lists /proc and reads every process. */
  forgetAll(): void {
    this.known.clear();
    this.listed = false;
  }

  /**
   * COMM/MMAP2 equivalents of every process alive now (as procfs.synthesizeSideband gives them), reading /proc only
   * for processes new or changed since the previous call.
   */
  now(): ProcessSideband[] {
    if (!this.listed) {
      for (const pid of allPids()) if (pid > 0 && !this.known.has(pid)) this.known.set(pid, unread());
      this.listed = true;
    }
    const result: ProcessSideband[] = [];
    for (const [pid, entry] of this.known) {
      if (!this.refresh(pid, entry)) continue;
      for (const [tid, comm] of entry.threads) result.push({ pid, tid, comm, maps: entry.maps! });
    }
    return result;
  }

  /** Reads the process where it is new or changed; false (and forgets it) when it has exited. */
  private refresh(pid: number, entry: KnownProcess): boolean {
    try {
      if (entry.exiting) entry.threadsStale = true;
      if (entry.maps === null) entry.maps = readMaps(pid, { executableOnly: true });
      if (entry.threadsStale) {
        const before = new Map(entry.threads);
        entry.threads.clear();
        for (const tid of threadsOf(pid)) {
          const comm = before.get(tid) ?? commOf(pid, tid);
          if (comm !== null) entry.threads.set(tid, comm);
        }
        entry.threadsStale = false;
      }
      if (entry.threads.size > 0) return true;
      // No thread whose comm could be read (each ended as it was listed): nothing to give now, the list is read again next time.
      entry.threadsStale = true;
      return false;
    } catch {
      // the process exited (its FORK seen, or its main thread's EXIT): it has no side band left to synthesise
    }
    this.known.delete(pid);
    return false;
  }
}
