// Live follow for the timeline panel, independent of vscode: while a recording runs and the panel is visible, every
// `intervalMs` what its rings gained since the previous read (SessionManager.follow: no pause, nothing read twice) is
// decoded, named through the session's symbol table and posted as one `liveAppend` of the live capture, with the
// window's start: the page drops what falls out of it, and so does this side (the reads it keeps answer the details
// and field filters of the rows the page still shows). One read at a time, and none while the page has not
// acknowledged the previous append: a slow page delays the next read (the rings hold what comes meanwhile) instead
// of queueing appends behind it.

import type { DecodedSnapshot, RingCoverage } from '../../native/decode/types';
import type { CoverageFact, FieldFilterOp, HostToWebview, LiveAppend, RecordDetails } from '../../shared/protocol';
import { snapshotToWire, rowDetails } from '../../host/wire';
import { coverageFactOf } from '../../host/messages';
import { rowsMatchingField } from '../../host/field-filter';
import type { FrameSymbols } from '../../host/frame-symbols';
import type { LiveRead, LiveReads } from '../session/session-manager';

export type Post = (message: HostToWebview) => void;

/** Reads per second the panel asks for: the floor is 4 updates a second. */
export const LIVE_INTERVAL_MS = 200;

export interface LiveFollowOptions {
  readonly snapshotId: string;
  /** The live capture's name in the strip. */
  readonly name: string;
  /** The window's length, ns (ringside.follow.windowSeconds; read at each append, so a changed setting applies at once). */
  readonly windowNs: () => number;
  readonly intervalMs?: number;
  /** Told of each append's stages, ms: reading the rings (no pause), decoding, naming and building the message. */
  readonly onAppend?: (timing: LiveAppendTiming) => void;
  /** Told when a read fails (the follow then ends: the recording stopped, or the rings went away). */
  readonly onFailure?: (error: unknown) => void;
}

export interface LiveAppendTiming {
  readonly seq: number;
  readonly records: number;
  readonly readMs: number;
  readonly decodeMs: number;
  /** Symbols, stacks, threads and the batch (snapshotToWire), and the window. */
  readonly wireMs: number;
}

/** A read the page may still show: its rows are live rows [firstRow, firstRow + rows). */
interface HeldRead {
  readonly firstRow: number;
  readonly decoded: DecodedSnapshot;
  readonly symbols: FrameSymbols;
  /** Absolute ns of its newest timed record (null: none). */
  readonly newestNs: bigint | null;
}

export class LiveFollow {
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private stopped = false;
  /** The append the page has not acknowledged yet (-1: none). */
  private awaiting = -1;
  private seq = 0;
  private nextRow = 0;
  private newestNs: bigint | null = null;
  private held: HeldRead[] = [];
  /** Per ring (by id), what the reads held so far covered: the live capture's coverage. */
  private coverage = new Map<number, RingCoverage[]>();
  /** Totals for the Output log and the benchmark. */
  reads = 0;
  records = 0;
  appends = 0;
  skippedBytes = 0n;
  /** Time spent reading, decoding and building appends, ms (what following costs this process). */
  workMs = 0;

  constructor(
    private readonly source: LiveReads,
    private readonly post: Post,
    private readonly options: LiveFollowOptions,
  ) {
    this.timer = setInterval(() => void this.tick(), options.intervalMs ?? LIVE_INTERVAL_MS);
  }

  get snapshotId(): string {
    return this.options.snapshotId;
  }

  get sessionId(): string {
    return this.source.sessionId;
  }

  /** The page holds append `seq`: the next read may go. */
  onAck(snapshotId: string, seq: number): void {
    if (snapshotId === this.options.snapshotId && seq === this.awaiting) this.awaiting = -1;
  }

  /** The read in progress (settled when none is). */
  private running: Promise<void> = Promise.resolve();

  /**
   * Reads now unless a read or an unacknowledged append is in the way; resolves when this read, or the one in the
   * way, is done (the benchmark's last read waits for the one in progress, then reads what is left).
   */
  tick(): Promise<void> {
    if (this.busy || this.stopped || this.awaiting >= 0) return this.running;
    this.running = this.readOnce();
    return this.running;
  }

  private async readOnce(): Promise<void> {
    this.busy = true;
    try {
      const read = await this.source.read();
      if (this.stopped) return;
      const started = performance.now();
      this.reads++;
      this.skippedBytes += read.skippedBytes;
      const message = this.append(read);
      const wireMs = performance.now() - started;
      if (message) {
        this.awaiting = message.seq;
        this.post(message);
        this.options.onAppend?.({ seq: message.seq, records: message.batch.rowCount, readMs: read.readMs, decodeMs: read.decodeMs, wireMs });
      }
      this.workMs += read.readMs + read.decodeMs + wireMs;
    } catch (error) {
      if (this.stopped) return;
      this.stop();
      this.options.onFailure?.(error);
    } finally {
      this.busy = false;
    }
  }

  /** The append of one read, or null when it brought no record. */
  private append(read: LiveRead): LiveAppend | null {
    const { decoded, symbols } = read;
    const rows = decoded.columns.length;
    if (rows === 0) return null;
    const newest = newestTimeNs(decoded);
    if (newest !== null && (this.newestNs === null || newest > this.newestNs)) this.newestNs = newest;
    const keepFromNs = this.newestNs === null ? 0n : this.newestNs - BigInt(Math.round(this.options.windowNs()));
    this.held.push({ firstRow: this.nextRow, decoded, symbols, newestNs: newest });
    for (const ring of decoded.coverage) {
      const list = this.coverage.get(ring.ringId) ?? [];
      list.push(ring);
      this.coverage.set(ring.ringId, list);
    }
    this.dropBefore(keepFromNs);
    const message = liveAppendOf(decoded, {
      snapshotId: this.options.snapshotId,
      name: this.options.name,
      seq: this.seq++,
      firstRow: this.nextRow,
      keepFromNs,
      symbols,
      limitations: read.limitations,
      coverage: this.heldCoverage(),
    });
    this.nextRow += rows;
    this.records += rows;
    this.appends++;
    return message;
  }

  /** Forgets the reads whose every record is older than the window (the page drops their rows). */
  private dropBefore(keepFromNs: bigint): void {
    while (this.held.length > 1 && this.held[0].newestNs !== null && this.held[0].newestNs < keepFromNs) {
      const gone = this.held.shift()!;
      for (const ring of gone.decoded.coverage) this.coverage.get(ring.ringId)?.shift();
    }
  }

  /**
   * The coverage of what is held, per ring: the bytes written and overwritten while it was followed, the records it
   * retained, its oldest and newest record, and the kernel's loss count as of the newest read.
   */
  private heldCoverage(): CoverageFact[] {
    const facts: CoverageFact[] = [];
    for (const list of this.coverage.values()) {
      if (list.length === 0) continue;
      const last = list[list.length - 1];
      let oldest: bigint | null = null;
      let newest: bigint | null = null;
      let written = 0n;
      let overwritten = 0n;
      let retained = 0;
      let lost = 0n;
      for (const ring of list) {
        lost += ring.lostRecords;
        written += ring.bytesWritten;
        overwritten += ring.bytesOverwritten;
        retained += ring.recordsRetained;
        if (ring.oldestTimeNs !== null && (oldest === null || ring.oldestTimeNs < oldest)) oldest = ring.oldestTimeNs;
        if (ring.newestTimeNs !== null && (newest === null || ring.newestTimeNs > newest)) newest = ring.newestTimeNs;
      }
      facts.push(
        coverageFactOf({
          ...last,
          bytesWritten: written,
          bytesOverwritten: overwritten,
          recordsRetained: retained,
          lostRecords: lost,
          oldestTimeNs: oldest,
          newestTimeNs: newest,
        }),
      );
    }
    return facts;
  }

  /** The held read that has live row `row`, and the row's number in it. */
  private readOf(row: number): { read: HeldRead; local: number } | undefined {
    for (let k = this.held.length - 1; k >= 0; k--) {
      const read = this.held[k];
      if (row >= read.firstRow) return row - read.firstRow < read.decoded.columns.length ? { read, local: row - read.firstRow } : undefined;
    }
    return undefined;
  }

  /** Every decoded field of live row `row` (as the details pane asks for a snapshot's). */
  details(row: number): RecordDetails {
    const at = this.readOf(row);
    if (!at) throw new RangeError(`row ${row} of the live capture fell out of its window`);
    return rowDetails(at.read.decoded, at.local, at.read.symbols);
  }

  /** The live rows held whose decoded field matches, ascending (a field filter's answer for the live capture). */
  rowsMatchingField(name: string, op: FieldFilterOp, value: string): Uint32Array {
    const parts = this.held.map((read) => ({ firstRow: read.firstRow, rows: rowsMatchingField(read.decoded, name, op, value) }));
    const out = new Uint32Array(parts.reduce((n, part) => n + part.rows.length, 0));
    let o = 0;
    for (const part of parts) for (const row of part.rows) out[o++] = part.firstRow + row;
    return out;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.source.close();
    this.held = [];
    this.coverage.clear();
  }
}

/** What a liveAppend says besides its rows (LiveAppend). */
export interface LiveAppendOptions {
  readonly snapshotId: string;
  readonly name: string;
  readonly seq: number;
  /** The capture's row number of the first row. */
  readonly firstRow: number;
  readonly keepFromNs: bigint;
  /** Names its rows; absent, the part says its names follow (namesFollow). */
  readonly symbols?: FrameSymbols;
  readonly limitations?: readonly string[];
  /** The capture's coverage now (absent: the part's own). */
  readonly coverage?: CoverageFact[];
  readonly opening?: boolean;
}

/** `decoded`'s rows as one liveAppend of a growing capture: a followed recording's read, or a part of an opened file. */
export function liveAppendOf(decoded: DecodedSnapshot, options: LiveAppendOptions): LiveAppend {
  const { start, threadStates, batches } = snapshotToWire(decoded, {
    snapshotId: options.snapshotId,
    name: options.name,
    takenAtMs: Date.now(),
    ...(options.symbols ? { symbols: options.symbols } : {}),
    limitations: options.limitations ?? [],
    batchRows: Math.max(1, decoded.columns.length),
  });
  return {
    type: 'liveAppend',
    snapshotId: options.snapshotId,
    seq: options.seq,
    // Unnamed rows: the page waits for the capture's names (one snapshotSymbols for all its rows).
    part: { ...start, ...(options.symbols ? {} : { namesFollow: true }), ...(options.coverage ? { coverage: options.coverage } : {}) },
    batch: { ...batches[0], firstRow: options.firstRow },
    ...(threadStates ? { threadStates } : {}),
    keepFromNs: options.keepFromNs.toString(),
    ...(options.opening ? { opening: true } : {}),
  };
}

/** Absolute ns of the newest timed record of a read (null: none has a time), as its rings' coverage says. */
function newestTimeNs(decoded: DecodedSnapshot): bigint | null {
  let newest: bigint | null = null;
  for (const ring of decoded.coverage) if (ring.newestTimeNs !== null && (newest === null || ring.newestTimeNs > newest)) newest = ring.newestTimeNs;
  return newest;
}
