// A GapFreeRingPair keeps two backward rings for one event and swaps them instead of pausing.

import type { PerfEventFd } from './events';
import type { RingCopy } from '../abi/snapshot';
import type { CopyMode, RingSnapshot, RingStats } from './ring-mapping';
import type { BackwardRing } from './backward-ring';

/**
 * Two backward rings for the same event and target. One is live, the other's event is disabled.
 * A snapshot enables the standby BEFORE disabling the live one (so there is an overlap of a few
 * microseconds instead of a gap), then copies the now idle ring at leisure and makes it the
 * standby. DISABLE is synchronous in the kernel (it runs on the event's CPU), so once it returns
 * nothing writes the retired ring. The copy covers only what was written since that ring became
 * live, so consecutive snapshots tile time without repeating the retired ring's older contents.
 * Records in the overlap window can appear in both copies.
 */
export class GapFreeRingPair {
  private live: BackwardRing;
  private standby: BackwardRing;
  private liveSinceHead: bigint;
  /** Per ring, the other fds that write into it (an attached process's other threads): enabled and disabled with it. */
  private readonly followersOf: Map<BackwardRing, readonly PerfEventFd[]>;

  /** `first` must be freshly mapped and enabled (or enable-on-exec), `second` opened disabled, and each ring's followers likewise. */
  constructor(first: BackwardRing, second: BackwardRing, followers: { first?: readonly PerfEventFd[]; second?: readonly PerfEventFd[] } = {}) {
    this.live = first;
    this.standby = second;
    // Everything `first` holds counts: it is fresh, and an enabled event writes from the moment it
    // is opened, before the standby is opened and the pair built (35 ms on a busy machine).
    this.liveSinceHead = 0n;
    this.followersOf = new Map([
      [first, followers.first ?? []],
      [second, followers.second ?? []],
    ]);
  }

  get rings(): readonly BackwardRing[] {
    return [this.live, this.standby];
  }

  get active(): BackwardRing {
    return this.live;
  }

  snapshot(mode?: CopyMode): RingSnapshot {
    const standbyHead = this.standby.head();
    const started = process.hrtime.bigint();
    this.standby.event.enable();
    for (const fd of this.followersOf.get(this.standby) ?? []) fd.enable();
    this.live.event.disable();
    for (const fd of this.followersOf.get(this.live) ?? []) fd.disable();
    const switchNs = Number(process.hrtime.bigint() - started);
    const retired = this.live;
    const result = retired.copyQuiescent(mode ?? retired.mode, this.liveSinceHead);
    this.live = this.standby;
    this.liveSinceHead = standbyHead;
    this.standby = retired;
    // The retired ring keeps its meta (ringId/label) so the decoder sees one logical ring per target,
    // and the pair's losses are those of both rings.
    return { copy: retired.toCopy(result.bytes, result.validBytes, result.written, 'gap-free', this.lostSinceOpen()), pauseWindowNs: switchNs };
  }

  /** The pair's losses: those of both rings (null where the kernel does not count them). */
  private lostSinceOpen(): bigint | null {
    const first = this.live.lostSinceOpen();
    const second = this.standby.lostSinceOpen();
    return first === null || second === null ? null : first + second;
  }

  /**
   * What the live ring holds since it went live, paused and copied without a swap: the next
   * snapshot() still hands it out (a triggered snapshot must not take records from the series
   * the regular snapshots tile).
   */
  peek(mode?: CopyMode): RingSnapshot {
    return this.live.snapshot(mode ?? this.live.mode, this.liveSinceHead, () => this.lostSinceOpen());
  }

  pauseOutput(paused: boolean): void {
    this.live.event.pauseOutput(paused);
  }

  /** What the live ring holds since it went live; for an owner that has disabled every fd of the pair and retires it. */
  finalCopy(mode?: CopyMode): RingCopy {
    const result = this.live.copyQuiescent(mode ?? this.live.mode, this.liveSinceHead);
    return this.live.toCopy(result.bytes, result.validBytes, result.written, 'gap-free');
  }

  stats(): RingStats {
    return this.live.stats('gap-free');
  }

  dispose(): void {
    try {
      this.live.dispose();
    } finally {
      this.standby.dispose();
    }
  }
}
