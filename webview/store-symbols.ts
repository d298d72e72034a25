// The sample symbols of every snapshot, each distinct name once: batches carry their own small tables, the store's
// symbol column refers to this one. Pure (no DOM).

export class SymbolNames {
  readonly names: string[] = [];
  private readonly ids = new Map<string, number>();

  intern(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.names.push(name);
      this.ids.set(name, id);
    }
    return id;
  }

  /** A batch's symbol table as ids of this one. */
  map(table: readonly string[]): Int32Array {
    return Int32Array.from(table, (name) => this.intern(name));
  }
}
