// Snapshots taken when something happens, without anyone watching: the CLI's --snapshot-on and the
// editor's "Snapshot When…". The trigger events are recorded like every other event (so the trigger
// record is in the snapshot); their rings hold nothing else (the Recorder's `ownRing`), so a moving
// data_head means a trigger fired. The watcher polls those heads, waits `postSec` (the recording goes
// on), asks for a snapshot, and re-arms once it is taken, at most once per `minIntervalSec`.

import type { BackwardRing } from './backward-ring';

/** How often trigger rings are looked at: a trigger fires at most this late (plus --post). */
const TRIGGER_POLL_MS = 10;

export interface TriggerOptions {
  /** Indices of the trigger events in the recorder's event list. */
  readonly eventIndices: readonly number[];
  readonly postSec: number;
  readonly minIntervalSec: number;
}

export class TriggerWatcher {
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private armedAt = 0n;
  private lastFiredMs = -Infinity;

  /** `rings()` is asked at every poll (gap-free pairs swap which ring is live). */
  constructor(
    private readonly rings: () => readonly BackwardRing[],
    private readonly options: TriggerOptions,
    private readonly fire: () => void,
  ) {}

  private written(): bigint {
    const triggers = new Set(this.options.eventIndices);
    return this.rings()
      .filter((ring) => triggers.has(ring.meta.defaultEvent))
      .reduce((sum, ring) => sum + ring.bytesWritten(), 0n);
  }

  /**
   * The rings are new when the capture starts, so anything in them is a trigger: a launched program
   * can fire one before the first poll (a baseline read here would swallow it).
   */
  start(): void {
    this.armedAt = 0n;
    this.timer = setInterval(() => this.poll(), TRIGGER_POLL_MS);
  }

  private poll(): void {
    if (this.pending || this.written() === this.armedAt) return;
    const wait = Math.max(this.options.postSec * 1000, this.lastFiredMs + this.options.minIntervalSec * 1000 - Date.now());
    this.pending = setTimeout(() => {
      this.lastFiredMs = Date.now();
      this.fire();
    }, wait);
  }

  /** After the triggered snapshot is written: records that arrived until now belong to it. */
  rearm(): void {
    this.pending = undefined;
    this.armedAt = this.written();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
    this.timer = undefined;
    this.pending = undefined;
  }
}
