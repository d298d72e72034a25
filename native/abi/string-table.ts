// Strings numbered in the order they are first added, each kept once: the name tables messages and exports refer
// to by index.

export class StringTable {
  /** Every string added, at its index. */
  readonly strings: string[] = [];
  private readonly indexes = new Map<string, number>();

  /** The index of `text`, added at the end when new. */
  indexOf(text: string): number {
    let index = this.indexes.get(text);
    if (index === undefined) {
      index = this.strings.length;
      this.strings.push(text);
      this.indexes.set(text, index);
    }
    return index;
  }
}
