// Column memory reused across snapshots, faulted in while the caller is idle.
//
// Why: writing decoded rows into fresh memory takes one page fault per 4 KiB, and at 64 MiB of ring
// that is about half of what decoding costs (bench: c_walker_fresh_columns_mrec_s against
// c_walker_mrec_s). The copy buffers already avoid it (SpareCopyBuffer); this does the same for
// the columns: decodeSnapshot takes its column sets from the arena, and warm() prepares, between
// snapshots, as many sets as the last snapshot took, each big enough for it, with every page
// written once. The arena grows only when a snapshot needs more rows than any set it holds.
//
// Ownership: the set a decoded snapshot's columns live in belongs to whoever holds that snapshot,
// never to the arena. The arena reuses it only after the holder hands it back with recycle(), so a
// consumer that keeps earlier snapshots (the session keeps several) is never overwritten. Sets the
// decoder used on the way (per-ring sets merged into another) go back to the arena by themselves.
//
// Sets the arena did not make (a copy's room, wasm/copy-room.ts, which lives and dies with its
// copy) are neither lent nor pooled: handing back columns that live in a room frees the room.
//
// Pure TypeScript (no timers): whoever owns the idle time calls warm(budget) in slices.

import { ColumnSet, columnSetBytes } from './column-set';
import type { RecordColumns } from './types';
import { releaseRoomSet, returnRoom } from './wasm/copy-room';

/** The smallest page size Linux uses: writing every 4 KiB faults in every page whatever the real size. */
const TOUCH_STRIDE = 4096;

export interface ColumnArenaOptions {
  /** Back the sets with SharedArrayBuffer (for decoding on worker threads); default: ArrayBuffer. */
  readonly shared?: boolean;
}

interface Pooled {
  readonly set: ColumnSet;
  /** Bytes from the start of the set's buffer already written once (faulted in). */
  warmedBytes: number;
}

export class ColumnArena {
  private pool: Pooled[] = [];
  /** Sets handed out inside a decoded snapshot, by buffer: recycle() takes them back. */
  private readonly lent = new WeakMap<ArrayBufferLike, ColumnSet>();
  /** The buffer of every set this arena allocated: the only sets it lends or pools (a worker's reply names a set by its buffer). */
  private readonly made = new WeakSet<ArrayBufferLike>();
  /** Row capacities taken since the last beginSnapshot(): what the next snapshot will probably need. */
  private demand: number[] = [];
  private taking: number[] = [];
  /** True when the sets are SharedArrayBuffer memory (worker threads can decode into them). */
  readonly shared: boolean;

  constructor(options: ColumnArenaOptions = {}) {
    this.shared = options.shared === true && typeof SharedArrayBuffer === 'function';
  }

  /** Bytes of column memory the arena holds now (not counting sets lent to snapshots). */
  get pooledBytes(): number {
    let bytes = 0;
    for (const p of this.pool) bytes += p.set.buffer.byteLength;
    return bytes;
  }

  /** Number of sets the arena holds now. */
  get pooledSets(): number {
    return this.pool.length;
  }

  /** True when every set the last snapshot took has a warm counterpart in the pool. */
  get ready(): boolean {
    return this.plan() === null && this.pool.every((p) => p.warmedBytes >= columnSetBytes(p.set.length));
  }

  /** The decoder calls this when it starts a snapshot: demand is counted per snapshot. */
  beginSnapshot(): void {
    this.taking = [];
  }

  /** The decoder calls this when it finishes: what it took becomes the demand warm() prepares for. */
  endSnapshot(result: ColumnSet | null): void {
    this.demand = this.taking;
    this.taking = [];
    if (result && this.made.has(result.buffer)) this.lent.set(result.buffer, result);
  }

  /** A set of at least `rows` rows: the smallest pooled one that fits, else a new (cold) one. */
  take(rows: number): ColumnSet {
    this.taking.push(rows);
    let best = -1;
    for (let i = 0; i < this.pool.length; i++) {
      const length = this.pool[i].set.length;
      if (length >= rows && (best < 0 || length < this.pool[best].set.length)) best = i;
    }
    if (best >= 0) return this.pool.splice(best, 1)[0].set;
    return this.allocate(rows);
  }

  /** The decoder gives back a set it used on the way and did not hand out. */
  give(set: ColumnSet): void {
    if (releaseRoomSet(set)) return;
    if (this.made.has(set.buffer)) this.pool.push({ set, warmedBytes: 0 });
  }

  /**
   * Hands back the columns of a snapshot the caller no longer reads: their memory serves a later
   * snapshot. Returns false (and changes nothing) when they are not from this arena or were
   * already handed back. After true, the caller must not read those columns again.
   */
  recycle(columns: RecordColumns): boolean {
    if (returnRoom(columns)) return true;
    const buffer = columns.time.buffer;
    const set = this.lent.get(buffer);
    if (!set) return false;
    this.lent.delete(buffer);
    // It was written where rows were decoded; warm() re-touches the rest (cheap where present).
    this.pool.push({ set, warmedBytes: 0 });
    return true;
  }

  /**
   * Prepares for the next snapshot while the caller is idle: makes sure there is a pooled set for
   * every set the last snapshot took (allocating the missing ones), drops pooled sets nothing
   * needs, and writes up to `budgetBytes` more of their pages once. Returns `ready`.
   */
  warm(budgetBytes = Infinity): boolean {
    const missing = this.plan();
    if (missing) {
      for (const rows of missing.allocate) this.pool.push({ set: this.allocate(rows), warmedBytes: 0 });
      this.pool = this.pool.filter((p) => !missing.unused.has(p));
    }
    let budget = budgetBytes;
    for (const p of this.pool) {
      const size = columnSetBytes(p.set.length);
      if (p.warmedBytes >= size) continue;
      const bytes = new Uint8Array(p.set.buffer, 0, size);
      const stop = Math.min(size, p.warmedBytes + budget);
      for (let at = p.warmedBytes; at < stop; at += TOUCH_STRIDE) bytes[at] = 0;
      budget -= stop - p.warmedBytes;
      p.warmedBytes = stop;
      if (budget <= 0) break;
    }
    return this.ready;
  }

  /** Drops every pooled set (lent ones stay with their snapshots). */
  release(): void {
    this.pool = [];
  }

  /** Matches the last demand against the pool, largest first; null when it is covered with nothing spare. */
  private plan(): { allocate: number[]; unused: Set<Pooled> } | null {
    const free = [...this.pool].sort((a, b) => a.set.length - b.set.length);
    const allocate: number[] = [];
    for (const rows of [...this.demand].sort((a, b) => b - a)) {
      const at = free.findIndex((p) => p.set.length >= rows);
      if (at >= 0) free.splice(at, 1);
      else allocate.push(rows);
    }
    if (allocate.length === 0 && free.length === 0) return null;
    // Keep unused sets only while nothing has been asked yet (before the first snapshot).
    const unused = this.demand.length === 0 ? new Set<Pooled>() : new Set(free);
    if (allocate.length === 0 && unused.size === 0) return null;
    return { allocate, unused };
  }

  private allocate(rows: number): ColumnSet {
    const bytes = columnSetBytes(rows);
    const set = new ColumnSet(rows, this.shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
    this.made.add(set.buffer);
    return set;
  }
}
