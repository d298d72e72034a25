// JSON Lines of a file decoded a batch at a time (`ringside decode`): each batch's records in time order after the
// previous batch's, with one frame, stack and function table for all of them, so an address is named and a stack
// formatted once in the whole file, not once per batch. The side-band of each batch is learnt before its samples
// are named; a process whose mappings a batch changed has its addresses named afresh from then on.

import type { DecodedSnapshot } from '../native/decode/types';
import { ProfileTables } from '../native/tables/profile-tables';
import { TableJsonl } from '../native/tables/jsonl';
import type { SnapshotSymbols } from './snapshot-symbols';

export class BatchLines {
  private previous: TableJsonl | undefined;

  constructor(private readonly symbols: SnapshotSymbols) {}

  /**
   * The lines of the next batch (`line(row)` for each of its rows). `withReaders` gives the snapshot the lines are
   * formatted from what the host adds to it (unwound user stacks, logpoint values).
   */
  next(snapshot: DecodedSnapshot, withReaders: (snapshot: DecodedSnapshot) => DecodedSnapshot = (s) => s): TableJsonl {
    const remapped = this.symbols.learn(snapshot);
    if (this.previous) for (const pid of remapped) this.previous.tables.remapOwner(pid);
    const decoded = withReaders(snapshot);
    const tables = new ProfileTables(decoded, this.previous?.tables);
    tables.symbolize((pid, ip, kernel) => this.symbols.resolveFrame(pid, ip, kernel));
    this.previous = new TableJsonl(decoded, tables, (pid, ip, kernel) => this.symbols.frames.nameOf(pid, ip, kernel), this.previous);
    return this.previous;
  }
}
