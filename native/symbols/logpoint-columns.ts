// A logpoint's hits as columns: per variable, one value id per hit. The evaluator (logpoint-values.ts)
// appends a hit without making an object for it, and what reads many hits (the editor's tally at the
// line, the CLI's summary) counts ids instead of comparing strings. A value whose text tells its bytes
// apart (ValueFormatter.oneToOneText: integers, enums, floats, pointers, structs and arrays of them) is
// kept by its bytes, and its text written only when asked (textOf): a snapshot's loop counters take a new
// value at every hit, and a tally shows a handful of them. Any other value (a union, a value some of whose
// bytes are not there, a C string pointer to memory that can change) is kept by its text.

import { StringTable } from '../abi/string-table';

/** Set of columns an evaluator wrote into, for the texts it keeps per value: text ids are per set. */
let nextGeneration = 1;

/**
 * The text of a value from its bytes (all known) and the load bias of its object (runtime - link-time address) at its
 * hit, for a variable whose text tells its bytes apart (what its pointers point at is read from the object's file).
 */
export type BytesFormatter = (bytes: Uint8Array, bias: bigint) => string;

/** How a layout's variable is kept by its bytes (see LogpointColumns.layoutOf). */
export interface ByBytes {
  readonly size: number;
  /** The text names what pointers point at, which moves with the load address: bytes at another bias are another value. */
  readonly hasPointers: boolean;
  readonly format: BytesFormatter;
}

/** Id of "no such variable at this hit" in a column (the decoder's NO_VALUE, which this layer cannot import). */
const NO_VALUE = -1;

/** Hits of one or more logpoints read into columns (see LogpointEvaluator.evaluateInto). */
export class LogpointColumns {
  /** Column c holds the values of the variable names[c], columns in the order their names first came. */
  readonly names: string[] = [];
  /**
   * Per column, per hit: the id of the variable's value (see textOf), NO_VALUE where that hit has no such variable:
   * a value kept by its text (each distinct text one id) or by its bytes (each pattern one id, its text written when
   * first asked).
   */
  readonly columns: Int32Array[] = [];
  /** Per hit: the text id of the function its pc is in, -1 where none is known. */
  functions = new Int32Array(0);
  /** Per hit: the index in `layoutColumns` of the columns it wrote, in its variables' order; -1: no values (see errors). */
  layouts = new Int32Array(0);
  /** The columns of each set of variables a hit was read with, in the order the evaluator read them. */
  readonly layoutColumns: Int32Array[] = [];
  /** Per layout, per its variable: where that variable's values are kept by their bytes, undefined where by their text. */
  readonly layoutValues: (ValueKeys | undefined)[][] = [];
  /** Hits held. */
  length = 0;
  /** Per hit that has no values at all: why (no DWARF at the pc, registers not sampled). */
  readonly errors = new Map<number, string>();
  /** Per hit: the names whose bytes (or the text they point at) were read from the live process after the hit. */
  readonly readLater = new Map<number, readonly string[]>();
  /** Per hit: the names shown as <not captured> for a reason their text cannot say (the red zone), and that reason. */
  readonly notCaptured = new Map<number, Readonly<Record<string, string>>>();
  /** Tells apart the sets the evaluator's kept texts have ids in (an id means nothing in another set). */
  readonly generation = nextGeneration++;
  /** The texts values are kept by (and function names), each once: their ids by their index here (idOfText). */
  private readonly textTable = new StringTable();
  private readonly idOfText: number[] = [];
  /** Per id: its text, undefined until asked for a value kept by its bytes. */
  private readonly texts: (string | undefined)[] = [];
  /** Per id of a value kept by its bytes: where its bytes are and their index there. */
  private readonly owners: (ValueKeys | undefined)[] = [];
  private entries = new Int32Array(64);
  /** Per column: the layouts that write it and whether any keeps values by bytes (see sameIdSameText). */
  private readonly columnWriters: number[] = [];
  private readonly columnByBytes: boolean[] = [];
  private readonly columnRepeated: boolean[] = [];
  /** Per column: some of its values were kept by their text because their bytes meant another value (see ValueKeys.biasOf). */
  private readonly columnMixed: boolean[] = [];
  private readonly columnOfName = new Map<string, number>();
  private readonly layoutOfKey = new Map<object, number>();
  private lastLayoutKey: object | undefined;
  private lastLayout = -1;
  private capacity = 0;

  /** `expectedHits`: room for that many hits from the start (a tally knows its rows), else it grows as hits come. */
  constructor(expectedHits = 64) {
    this.grow(Math.max(1, expectedHits));
  }

  /** The id of `text` (kept by its text), added when it is new. */
  intern(text: string): number {
    const index = this.textTable.indexOf(text);
    if (index === this.idOfText.length) this.idOfText.push(this.add(text, undefined, 0));
    return this.idOfText[index];
  }

  /** Ids are 0..idCount-1. */
  get idCount(): number {
    return this.texts.length;
  }

  /** The text of an id of `columns` or `functions` (written here, once, for a value kept by its bytes). */
  textOf(id: number): string {
    return this.texts[id] ?? this.writeText(id);
  }

  /** textOf() of a value kept by its bytes, first asked (apart: textOf() is small enough to inline where it runs per value). */
  private writeText(id: number): string {
    return (this.texts[id] = this.owners[id]!.textOf(this.entries[id]));
  }

  /**
   * Whether two different ids of column `column` always have different texts, so that its distinct values can be
   * counted by id: true unless values kept by their bytes meet other values there (two layouts, or one that reads the
   * name twice), whose texts may then be the same.
   */
  sameIdSameText(column: number): boolean {
    return !this.columnByBytes[column] || (this.columnWriters[column] === 1 && !this.columnRepeated[column] && !this.columnMixed[column]);
  }

  /**
   * The layout (index in layoutColumns) of a set of variables named `names`, made once per `key` (the evaluator's
   * plan, which reads those names in that order at every hit of its pc). `byBytes[i]`: how the i-th variable's
   * values are written from their bytes where they may be kept by them (see BytesFormatter), with their size.
   */
  layoutOf(key: object, names: readonly string[], byBytes?: readonly (ByBytes | undefined)[]): number {
    if (key === this.lastLayoutKey) return this.lastLayout;
    let layout = this.layoutOfKey.get(key);
    if (layout === undefined) {
      layout = this.layoutColumns.length;
      const columns = Int32Array.from(names, (name) => this.columnOf(name));
      this.layoutColumns.push(columns);
      this.layoutValues.push(names.map((_, i) => (byBytes?.[i] ? new ValueKeys(this, columns[i], byBytes[i]!) : undefined)));
      columns.forEach((column, i) => {
        this.columnWriters[column]++;
        if (byBytes?.[i]) this.columnByBytes[column] = true;
        if (columns.indexOf(column) !== i) this.columnRepeated[column] = true;
      });
      this.layoutOfKey.set(key, layout);
    }
    this.lastLayoutKey = key;
    this.lastLayout = layout;
    return layout;
  }

  /** A new hit without values yet (no function, no layout: setLayout() gives its columns): its row. */
  addHit(): number {
    if (this.length === this.capacity) this.grow(this.capacity * 2);
    const row = this.length++;
    this.functions[row] = -1;
    this.layouts[row] = -1;
    return row;
  }

  /** A new hit that has no values (its sample holds no registers or stack; `error`: why not, where known): its row. */
  addHitWithoutValues(error?: string): number {
    const row = this.addHit();
    for (const column of this.columns) column[row] = NO_VALUE;
    if (error !== undefined) this.errors.set(row, error);
    return row;
  }

  /**
   * Gives hit `row` the columns of `layout`, which its caller then writes; every other column reads NO_VALUE there.
   * A snapshot's hits mostly share one layout that covers every column, which writes nothing more.
   */
  setLayout(row: number, layout: number): void {
    this.layouts[row] = layout;
    const own = this.layoutColumns[layout];
    if (own.length === this.columns.length && this.layoutColumns.length === 1) return;
    for (let c = 0; c < this.columns.length; c++) if (!own.includes(c)) this.columns[c][row] = NO_VALUE;
  }

  /** The text of variable column `column` at hit `row`, undefined where that hit has no such variable. */
  textAt(column: number, row: number): string | undefined {
    const id = this.columns[column][row];
    return id === NO_VALUE ? undefined : this.textOf(id);
  }

  /** One hit's values as a record carries them: name -> text, in the order its variables were read. */
  valuesOf(row: number): Record<string, string> {
    const values: Record<string, string> = {};
    const layout = this.layouts[row];
    if (layout < 0) return values;
    for (const column of this.layoutColumns[layout]) {
      const id = this.columns[column][row];
      // A name a plan reads twice holds its last text in its column, at the place of its first (as assignment in order).
      if (id === NO_VALUE) continue;
      const name = this.names[column];
      const text = this.textOf(id);
      // `__proto__` as an own property, as the evaluator's object literal makes it.
      if (name === '__proto__') Object.defineProperty(values, name, { value: text, enumerable: true, writable: true, configurable: true });
      else values[name] = text;
    }
    return values;
  }

  /** Column `column` holds values kept by their text that may read as some kept by their bytes (see sameIdSameText). */
  markMixed(column: number): void {
    this.columnMixed[column] = true;
  }

  /** A new value kept by its bytes (entry `entry` of `owner`), its text when already written: its id. */
  addByBytes(owner: ValueKeys, entry: number, text?: string): number {
    return this.add(text, owner, entry);
  }

  /** A new id: its text (undefined: not written yet), and where its bytes are for a value kept by them. */
  private add(text: string | undefined, owner: ValueKeys | undefined, entry: number): number {
    const id = this.texts.length;
    if (id === this.entries.length) {
      const wider = new Int32Array(id * 2);
      wider.set(this.entries);
      this.entries = wider;
    }
    this.texts.push(text);
    this.owners.push(owner);
    this.entries[id] = entry;
    return id;
  }

  private columnOf(name: string): number {
    let column = this.columnOfName.get(name);
    if (column === undefined) {
      column = this.names.length;
      this.names.push(name);
      this.columnOfName.set(name, column);
      this.columnWriters.push(0);
      this.columnByBytes.push(false);
      this.columnRepeated.push(false);
      this.columnMixed.push(false);
      // NO_VALUE for the hits before it (none of them had this variable); the rows to come are written by setLayout's caller.
      this.columns.push(new Int32Array(this.capacity).fill(NO_VALUE, 0, this.length));
    }
    return column;
  }

  private grow(capacity: number): void {
    // Rows past `length` are written when their hit comes (addHit, setLayout and its caller).
    const widen = (from: Int32Array) => {
      const to = new Int32Array(capacity);
      to.set(from.subarray(0, this.length));
      return to;
    };
    for (let c = 0; c < this.columns.length; c++) this.columns[c] = widen(this.columns[c]);
    this.functions = widen(this.functions);
    this.layouts = widen(this.layouts);
    this.capacity = capacity;
  }
}

/**
 * The distinct values of one variable of one layout, kept by their bytes (every byte known): each pattern once, as
 * little-endian 32-bit words, found by a hash over them in an open-addressed table that grows (a snapshot's counters
 * are all distinct), each with its id in the columns. The text of a pattern is written only when asked.
 */
export class ValueKeys {
  readonly size: number;
  private readonly words: number;
  /** The load bias its values' bytes are for, where they hold pointers (set by the first, see biasOf), and as a number. */
  private bias: bigint | undefined;
  private biasNumber = NaN;
  /**
   * The open-addressed table: per slot (`stride` numbers) the id + 1 (0: empty), the hash, then the key's words. One
   * typed array, so that a lookup touches one or two cache lines.
   */
  private table: Int32Array;
  private readonly stride: number;
  /** 32 - log2 of the table's slots (see slotOf). */
  private shift = 27;
  /** Per entry (in order of addition): its key's words, what textOf() writes from. */
  private keys: Int32Array;
  private count = 0;
  private readonly scratch: Int32Array;
  /** The hash of the key find() left in `scratch`. */
  private lastHash = 0;
  /** The key (of 4 or 8 bytes) findSmall() found or addFound() added last, and its id + 1 (0: none yet). */
  private lastLow = 0;
  private lastHigh = 0;
  private lastId = 0;
  private readonly format: BytesFormatter;
  private readonly hasPointers: boolean;

  constructor(
    private readonly columns: LogpointColumns,
    private readonly column: number,
    how: ByBytes,
  ) {
    this.size = how.size;
    this.format = how.format;
    this.hasPointers = how.hasPointers;
    this.words = Math.max(1, (how.size + 3) >>> 2);
    this.stride = 2 + this.words;
    this.table = new Int32Array(32 * this.stride);
    this.keys = new Int32Array(16 * this.words);
    this.scratch = new Int32Array(this.words);
  }

  /** Distinct patterns held. */
  get length(): number {
    return this.count;
  }

  /**
   * Whether values read at load bias `bias` can be kept here: the bias of the first (one process, or several
   * that load the object at one address), or any where the text has no pointer. Else (another process's
   * pointers) they are kept by their text, and the column's distinct values are then counted by their texts.
   */
  biasOf(bias: bigint, exact: number): boolean {
    // `exact`: `bias` as an exact number (NaN where none is), compared at every hit instead of the bigint.
    if (!this.hasPointers || exact === this.biasNumber) return true; // no pointer: the text does not depend on it
    if (this.bias === undefined) {
      this.bias = bias;
      this.biasNumber = exact;
      if (exact === exact) return true;
    }
    this.columns.markMixed(this.column);
    return false;
  }

  /** The id of the `size` bytes at `at` of `bytes` (added when new). */
  idOf(bytes: Uint8Array, at: number): number {
    const id = this.find(bytes, at);
    return id === NOT_FOUND ? this.addFound() : id;
  }

  /** The id of the `size` bytes at `at` of `bytes`, NOT_FOUND where they are new (addFound() then adds them). */
  find(bytes: Uint8Array, at: number): number {
    return this.findSmall(bytes, at);
  }

  /**
   * find() of a value of 4 or 8 bytes (ints, longs, enums, doubles, pointers): one or two words, no loop; kept small,
   * so that V8 inlines it where it is called per value (other sizes go to findLarge).
   */
  findSmall(bytes: Uint8Array, at: number): number {
    const size = this.size;
    if (size !== 4 && size !== 8) return this.findLarge(bytes, at);
    const low = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
    const high = size === 8 ? bytes[at + 4] | (bytes[at + 5] << 8) | (bytes[at + 6] << 16) | (bytes[at + 7] << 24) : 0;
    // The value of the hit before, before any hash: most variables of a line keep theirs from hit to hit.
    if (low === this.lastLow && high === this.lastHigh && this.lastId !== 0) return this.lastId - 1;
    let hash = Math.imul((0x811c9dc5 | 0) ^ low, 0x01000193);
    hash = Math.imul(hash ^ high, 0x01000193);
    const { table, stride } = this;
    const mask = table.length / stride - 1;
    const two = this.words === 2;
    for (let slot = slotOf(hash, this.shift); ; slot = (slot + 1) & mask) {
      const e = slot * stride;
      const stored = table[e];
      if (stored === 0) break;
      if (table[e + 1] === hash && table[e + 2] === low && (!two || table[e + 3] === high)) {
        this.lastLow = low;
        this.lastHigh = high;
        this.lastId = stored;
        return stored - 1;
      }
    }
    return this.missSmall(hash, low, high);
  }

  /** Not there: the key for addFound(). */
  private missSmall(hash: number, low: number, high: number): number {
    const key = this.scratch;
    key[0] = low;
    if (this.words === 2) key[1] = high;
    this.lastHash = hash;
    return NOT_FOUND;
  }

  /** find() of a value of any size (structs, arrays). */
  findLarge(bytes: Uint8Array, at: number): number {
    const key = this.scratch;
    const hash = wordsOf(bytes, at, this.size, key, 0, FNV_OFFSET);
    const { table, stride, words } = this;
    const mask = table.length / stride - 1;
    for (let slot = slotOf(hash, this.shift); ; slot = (slot + 1) & mask) {
      const e = slot * stride;
      const stored = table[e];
      if (stored === 0) break;
      if (table[e + 1] === hash && sameKey(table, e + 2, key, words)) return stored - 1;
    }
    this.lastHash = hash;
    return NOT_FOUND;
  }

  /** The text of entry `entry` (see LogpointColumns.textOf, which keeps it). */
  textOf(entry: number): string {
    const bytes = new Uint8Array(this.size);
    for (let b = 0; b < this.size; b++) bytes[b] = this.keys[entry * this.words + (b >>> 2)] >>> ((b & 3) * 8);
    return this.format(bytes, this.bias ?? 0n);
  }

  /** Adds the bytes the last find() did not find (`text`: their text, where already written): their new id. */
  addFound(text?: string): number {
    const hash = this.lastHash;
    const entry = this.count++;
    const { words, scratch } = this;
    if ((entry + 1) * 2 > this.table.length / this.stride) this.rehash((this.table.length / this.stride) * 2);
    if ((entry + 1) * words > this.keys.length) {
      const keys = new Int32Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    this.keys.set(scratch, entry * words);
    const id = this.columns.addByBytes(this, entry, text);
    this.place(this.table, id + 1, hash, scratch, 0);
    if (this.size === 4 || this.size === 8) {
      this.lastLow = scratch[0];
      this.lastHigh = words === 2 ? scratch[1] : 0;
      this.lastId = id + 1;
    }
    return id;
  }

  /** Puts an id + 1 with its hash and key (`words` words of `from` at `at`) in the first free slot of `table`. */
  private place(table: Int32Array, id: number, hash: number, from: Int32Array, at: number): void {
    const stride = this.stride;
    const mask = table.length / stride - 1;
    let slot = slotOf(hash, this.shift);
    while (table[slot * stride] !== 0) slot = (slot + 1) & mask;
    const e = slot * stride;
    table[e] = id;
    table[e + 1] = hash;
    for (let w = 0; w < this.words; w++) table[e + 2 + w] = from[at + w];
  }

  private rehash(slots: number): void {
    const old = this.table;
    const stride = this.stride;
    this.shift = 32 - Math.log2(slots);
    this.table = new Int32Array(slots * stride);
    for (let e = 0; e < old.length; e += stride) if (old[e] !== 0) this.place(this.table, old[e], old[e + 1], old, e + 2);
  }
}

/** find(): the bytes are not there yet. */
export const NOT_FOUND = -1;

/** The slot of a hash in a table of 2^(32 - shift) slots: its top bits after a multiply (Fibonacci hashing), which every bit of the hash moves. */
const slotOf = (hash: number, shift: number) => Math.imul(hash, 0x9e3779b1) >>> shift;

/** The `size` (0-3) bytes at `at` as a little-endian word. */
export function partialWord(bytes: Uint8Array, at: number, size: number): number {
  let word = 0;
  for (let b = 0, shift = 0; b < size; b++, shift += 8) word |= bytes[at + b] << shift;
  return word;
}

/** Whether the `words` words of `keys` from `from` are those of `key`. */
function sameKey(keys: Int32Array, from: number, key: Int32Array, words: number): boolean {
  for (let w = 0; w < words; w++) if (keys[from + w] !== key[w]) return false;
  return true;
}

/** FNV-1a's offset basis: what wordsOf() starts a key's hash from. */
export const FNV_OFFSET = 0x811c9dc5 | 0;

/**
 * `size` bytes at `at` as little-endian 32-bit words into `key` from `to` (the last one zero-padded), and FNV-1a over
 * them continued from `hash` (FNV_OFFSET for a key of its own). One home for the value keys here and logpoint-values'.
 */
export function wordsOf(bytes: Uint8Array, at: number, size: number, key: Int32Array, to: number, hash: number): number {
  let b = at;
  const end = at + size;
  for (; b + 4 <= end; b += 4, to++) {
    const word = bytes[b] | (bytes[b + 1] << 8) | (bytes[b + 2] << 16) | (bytes[b + 3] << 24);
    key[to] = word;
    hash = Math.imul(hash ^ word, 0x01000193);
  }
  if (b < end) {
    const word = partialWord(bytes, b, end - b);
    key[to] = word;
    hash = Math.imul(hash ^ word, 0x01000193);
  }
  return hash;
}
