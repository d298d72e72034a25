// Outputs of a file decoded a batch at a time (`ringside decode`): each batch's records in time order after the
// previous batch's, with one frame, stack and function table for all of them, so an address is named and a stack
// formatted once in the whole file, not once per batch. The side-band of each batch is learnt before its samples
// are named; a process whose mappings a batch changed has its addresses named afresh from then on. BatchTables gives
// each batch's symbolized tables (what pprof adds up); BatchLines its JSON Lines, formatted from them.

import type { DecodedSnapshot } from '../native/decode/types';
import { ProfileTables } from '../native/tables/profile-tables';
import { TableJsonl } from '../native/tables/jsonl';
import type { SnapshotSymbols } from './snapshot-symbols';

export class BatchTables {
  private previous: ProfileTables | undefined;

  constructor(private readonly symbols: SnapshotSymbols) {}

  /**
   * The symbolized tables of the next batch, and the snapshot they were read from: `withReaders` gives it what the host
   * adds (unwound user stacks, logpoint values).
   */
  next(
    snapshot: DecodedSnapshot,
    withReaders: (snapshot: DecodedSnapshot) => DecodedSnapshot = (s) => s,
  ): { readonly decoded: DecodedSnapshot; readonly tables: ProfileTables } {
    const remapped = this.symbols.learn(snapshot);
    if (this.previous) for (const pid of remapped) this.previous.remapOwner(pid);
    const decoded = withReaders(snapshot);
    const tables = new ProfileTables(decoded, this.previous);
    tables.symbolize((pid, ip, kernel) => this.symbols.resolveFrame(pid, ip, kernel));
    this.previous = tables;
    return { decoded, tables };
  }
}

export class BatchLines {
  private readonly tables: BatchTables;
  private previous: TableJsonl | undefined;

  constructor(private readonly symbols: SnapshotSymbols) {
    this.tables = new BatchTables(symbols);
  }

  /**
   * The lines of the next batch (`line(row)` for each of its rows). `withReaders` gives the snapshot the lines are
   * formatted from what the host adds to it (unwound user stacks, logpoint values).
   */
  next(snapshot: DecodedSnapshot, withReaders: (snapshot: DecodedSnapshot) => DecodedSnapshot = (s) => s): TableJsonl {
    const { decoded, tables } = this.tables.next(snapshot, withReaders);
    this.previous = new TableJsonl(decoded, tables, (pid, ip, kernel) => this.symbols.frames.nameOf(pid, ip, kernel), this.previous);
    return this.previous;
  }
}
