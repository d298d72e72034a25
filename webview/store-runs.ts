// Which snapshot each store row came from, and its row number there, without a column per row: the store keeps the
// list of appended batches (a run is a batch: consecutive store rows of one snapshot, starting at one of its rows).
// Pure (no DOM).

export class BatchRuns {
  /** Rows [runStart[k], runStart[k+1]) came from snapshot runSnapshot[k], starting at its row runLocal[k]. */
  private runStart = new Uint32Array(16);
  private runLocal = new Uint32Array(16);
  private runSnapshot = new Uint16Array(16);
  private runCount = 0;
  /** The run the last lookup landed in: filters walk rows in order, so the next lookup usually lands there too. */
  private lastRun = 0;

  /** Index in the store's snapshots of the snapshot row `row` came from. */
  snapshotIndexOf(row: number): number {
    return this.runSnapshot[this.runOf(row)];
  }

  /** The row's number within its own snapshot (what the host calls it). */
  localRowOf(row: number): number {
    const run = this.runOf(row);
    return this.runLocal[run] + (row - this.runStart[run]);
  }

  /** The store rows of a snapshot, as [start, end) ranges in store order (one per batch received); `length`: the store's rows. */
  rangesOf(snapshotIndex: number, length: number): [number, number][] {
    const out: [number, number][] = [];
    for (let k = 0; k < this.runCount; k++) {
      if (this.runSnapshot[k] !== snapshotIndex) continue;
      const end = k + 1 < this.runCount ? this.runStart[k + 1] : length;
      const last = out.at(-1);
      if (last && last[1] === this.runStart[k]) last[1] = end;
      else out.push([this.runStart[k], end]);
    }
    return out;
  }

  /** The store row of a snapshot's row `localRow`, or -1 when it has not arrived. */
  globalRowOf(snapshotIndex: number, localRow: number, length: number): number {
    for (let k = 0; k < this.runCount; k++) {
      if (this.runSnapshot[k] !== snapshotIndex || localRow < this.runLocal[k]) continue;
      const end = k + 1 < this.runCount ? this.runStart[k + 1] : length;
      const row = this.runStart[k] + (localRow - this.runLocal[k]);
      if (row < end) return row;
    }
    return -1;
  }

  /** The run holding `row` (0 <= row < length): the cached one, its successor, or bisection. */
  private runOf(row: number): number {
    const starts = this.runStart;
    const count = this.runCount;
    let run = this.lastRun;
    if (run < count && starts[run] <= row && (run + 1 >= count || row < starts[run + 1])) return run;
    if (run + 1 < count && starts[run + 1] <= row && (run + 2 >= count || row < starts[run + 2])) return (this.lastRun = run + 1);
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    run = lo;
    this.lastRun = run;
    return run;
  }

  /**
   * The store rows in `removed` (ascending, disjoint ranges, each the start of a run or runs of one snapshot) are gone:
   * a run they cover goes, one they cut keeps its rest, and every later run moves down (`length`: the rows before).
   */
  removeRows(removed: readonly (readonly [number, number])[], length: number): void {
    const before = (row: number) => {
      let count = 0;
      for (const [a, b] of removed) if (a < row) count += Math.min(b, row) - a;
      return count;
    };
    let kept = 0;
    for (let k = 0; k < this.runCount; k++) {
      const start = this.runStart[k];
      const end = k + 1 < this.runCount ? this.runStart[k + 1] : length;
      let keptStart = start;
      for (const [a, b] of removed) if (a <= keptStart && b > keptStart) keptStart = b;
      if (keptStart >= end) continue;
      this.runLocal[kept] = this.runLocal[k] + (keptStart - start);
      this.runSnapshot[kept] = this.runSnapshot[k];
      this.runStart[kept] = keptStart - before(keptStart);
      kept++;
    }
    this.runCount = kept;
    this.lastRun = 0;
  }

  add(globalStart: number, localStart: number, snapshotIndex: number): void {
    if (this.runCount === this.runStart.length) {
      const size = this.runCount * 2;
      const start = new Uint32Array(size);
      start.set(this.runStart);
      this.runStart = start;
      const local = new Uint32Array(size);
      local.set(this.runLocal);
      this.runLocal = local;
      const snapshot = new Uint16Array(size);
      snapshot.set(this.runSnapshot);
      this.runSnapshot = snapshot;
    }
    this.runStart[this.runCount] = globalStart;
    this.runLocal[this.runCount] = localStart;
    this.runSnapshot[this.runCount] = snapshotIndex;
    this.runCount++;
  }
}
