// Following a recording while it runs: what every ring gained since the previous read, and nothing else.
//
// A flight-recorder (backward) ring's data_head only moves down: the bytes between the head now and
// the head at the previous read are exactly the records written since, newest first. They are read
// without PERF_EVENT_IOC_PAUSE_OUTPUT (BackwardRing.readSince), so following never makes the flight
// recorder lose a record and costs the copy of the new bytes only, never a re-read of the ring.
// What the kernel overwrote before it could be read (more than a ring's worth between two reads) is
// counted as skipped, and shows as overwritten in the increment's coverage. Side-band records come
// through a tap on each forward ring, so the snapshots' own side-band is not taken from them.
//
// Order: every ring's head (side-band included) is read first, then every ring is copied up to it. A
// record in this read was written before its ring's head was read; one in a later read after it. The
// heads are read microseconds apart (more if this thread is preempted), so two reads may overlap by
// that much in time: FollowOrder holds back what a later read could still precede.

import type { EventDescription, RawSnapshot, RingCopy } from '../abi/snapshot';
import type { BackwardRing } from './backward-ring';
import type { ForwardRing, ForwardTap } from './forward-ring';

/** The rings a follower reads, as the recorder has them at each read. */
export interface FollowedRings {
  /** Every backward ring that may be written now: both rings of a gap-free pair, the rings of a resize. */
  backward(): readonly BackwardRing[];
  forward(): readonly ForwardRing[];
  events(): EventDescription[];
  limitations(): readonly string[];
}

/** One read: the increments as a snapshot the decoder takes as it is. */
export interface FollowRead extends RawSnapshot {
  /** Bytes written since the previous read that were overwritten before they could be read, all rings. */
  readonly skippedBytes: bigint;
  /** Wall time the read took (heads, copies, side-band), ns. */
  readonly readNs: number;
  /** Wall time between reading the first ring's head and the last's, ns: how far apart the cut's instants may be (FollowOrder). */
  readonly cutSpreadNs: number;
}

export class RingFollower {
  /** Per backward ring, its data_head at the previous read (where the next read starts). */
  private readonly cursors = new Map<BackwardRing, bigint>();
  private readonly taps = new Map<ForwardRing, ForwardTap>();
  /** Last increments of rings that left the recording (a resize) since the previous read. */
  private departed: RingCopy[] = [];
  private departedSkipped = 0n;
  private closed = false;

  /**
   * `fromStart`: the first read returns everything the rings hold (a capture that streams from its
   * start); else it starts at the rings' present heads and returns only what is written after this call.
   */
  constructor(
    private readonly rings: FollowedRings,
    fromStart: boolean,
    private readonly onClose: () => void = () => {},
  ) {
    if (!fromStart) for (const ring of rings.backward()) this.cursors.set(ring, ring.head());
    for (const ring of rings.forward()) this.taps.set(ring, ring.tap(fromStart));
  }

  /**
   * `ring` stops recording (its writers are disabled) and will be closed: its last increment is
   * read now and handed out by the next read(). `cut` drops what another ring holds too (a resize
   * runs both sets for microseconds: the successor's records from its oldest one on).
   */
  retire(ring: BackwardRing, cut?: (copy: RingCopy) => RingCopy): void {
    const since = this.cursors.get(ring);
    if (since === undefined || this.closed) return;
    this.cursors.delete(ring);
    const increment = this.increment(ring, since);
    if (!increment) return;
    this.departed.push(cut ? cut(increment.copy) : increment.copy);
    this.departedSkipped += increment.skippedBytes;
  }

  read(): FollowRead {
    if (this.closed) throw new Error('follower read after close');
    const started = process.hrtime.bigint();
    const takenAtMs = Date.now();
    const backward = this.rings.backward();
    const forward = this.rings.forward();
    // A ring first seen now was opened after the follower started (a resize, a new thread): all it holds is new.
    const since = backward.map((ring) => this.cursors.get(ring) ?? 0n);
    // The cut: every ring's head, side-band first, read back to back before anything is copied.
    const cutStarted = process.hrtime.bigint();
    const forwardHeads = forward.map((ring) => ring.head());
    const heads = backward.map((ring) => ring.head());
    const cutSpreadNs = Number(process.hrtime.bigint() - cutStarted);
    const rings: RingCopy[] = this.departed;
    let skippedBytes = this.departedSkipped;
    this.departed = [];
    this.departedSkipped = 0n;
    const present = new Set(backward);
    for (const ring of [...this.cursors.keys()]) if (!present.has(ring)) this.cursors.delete(ring);
    backward.forEach((ring, k) => {
      const increment = this.increment(ring, since[k], heads[k]);
      if (!increment) return;
      rings.push(increment.copy);
      skippedBytes += increment.skippedBytes;
    });
    forward.forEach((ring, k) => {
      let tap = this.taps.get(ring);
      if (!tap) this.taps.set(ring, (tap = ring.tap()));
      ring.drain(ring.mode, forwardHeads[k]);
      const copy = tap.take();
      if (copy.validBytes > 0 || copy.droppedBytes) rings.push(copy);
    });
    return {
      events: this.rings.events(),
      rings,
      takenAtMs,
      pauseWindowNs: rings.map(() => 0),
      limitations: this.rings.limitations(),
      skippedBytes,
      cutSpreadNs,
      readNs: Number(process.hrtime.bigint() - started),
    };
  }

  /** Stops following: the side-band taps are closed (nothing more is kept for this follower). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    for (const tap of this.taps.values()) tap.close();
    this.taps.clear();
    this.cursors.clear();
    this.departed = [];
  }

  private increment(ring: BackwardRing, since: bigint, head: bigint = ring.head()): { copy: RingCopy; skippedBytes: bigint } | null {
    const read = ring.readSince(since, head);
    this.cursors.set(ring, read.head);
    if (read.written === 0n) return null;
    const copy: RingCopy = {
      ...ring.meta,
      direction: 'backward',
      bytes: read.bytes,
      validBytes: read.bytes.byteLength,
      dataSize: ring.dataSize,
      // What this increment stands for: written since the previous read, so coverage's overwritten
      // bytes are exactly what was skipped.
      bytesWritten: read.written,
      path: 'peek',
      copiedAtNs: performance.now() * 1e6,
    };
    return { copy, skippedBytes: read.skippedBytes };
  }
}

/**
 * Puts a follower's reads back in time order. A record not read yet was written after the present
 * read's first head was read, so it is no older than the newest record read now minus the cut's
 * spread (and a margin for the kernel's publish latency and clock skew between CPUs): everything
 * older than that is released now, the rest held for the next read. What is held after one read is
 * released by the next whatever it brings, since nothing newer than the previous cut is then missing.
 */
export class FollowOrder<T> {
  /** Allowance beyond the cut's measured spread: a record's time is taken before the kernel publishes it. */
  static readonly MARGIN_NS = 1_000_000n;
  private held: { time: bigint; item: T }[] = [];

  /**
   * One read's items (each with its record time, or null for records without one: released at once),
   * in time order as the decoder gives them. Returns what may be written now, in time order; `final`
   * releases everything (the recording ended).
   */
  take(items: readonly { time: bigint | null; item: T }[], cutSpreadNs: number, final = false): T[] {
    const untimed: T[] = [];
    const timed: { time: bigint; item: T }[] = [];
    for (const entry of items) {
      if (entry.time === null) untimed.push(entry.item);
      else timed.push({ time: entry.time, item: entry.item });
    }
    timed.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
    const heldNewest = this.held.length > 0 ? this.held[this.held.length - 1].time : null;
    const merged = mergeByTime(this.held, timed);
    let release = merged.length;
    if (!final && timed.length > 0) {
      const newest = timed[timed.length - 1].time;
      let watermark = newest - BigInt(Math.ceil(cutSpreadNs)) - FollowOrder.MARGIN_NS;
      if (heldNewest !== null && heldNewest >= watermark) watermark = heldNewest + 1n;
      release = 0;
      while (release < merged.length && merged[release].time < watermark) release++;
    }
    this.held = merged.slice(release);
    return [...untimed, ...merged.slice(0, release).map((entry) => entry.item)];
  }

  /** Items held for the next read. */
  get heldCount(): number {
    return this.held.length;
  }
}

function mergeByTime<T>(a: readonly { time: bigint; item: T }[], b: readonly { time: bigint; item: T }[]): { time: bigint; item: T }[] {
  const out: { time: bigint; item: T }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(b[j].time < a[i].time ? b[j++] : a[i++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
