// The sample symbols of every snapshot, each distinct name once: batches carry their own small tables, the store's
// symbol column refers to this one. Pure (no DOM).

import { StringTable } from '../native/abi/string-table';

export class SymbolNames {
  private readonly table = new StringTable();
  readonly names: readonly string[] = this.table.strings;

  intern(name: string): number {
    return this.table.indexOf(name);
  }

  /** A batch's symbol table as ids of this one. */
  map(table: readonly string[]): Int32Array {
    return Int32Array.from(table, (name) => this.intern(name));
  }
}
