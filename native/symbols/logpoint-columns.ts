// A logpoint's hits as columns: per variable, one text id per hit, and each distinct text once. The
// evaluator (logpoint-values.ts) appends a hit without making an object for it, and what reads many
// hits (the editor's tally at the line, the CLI's summary) counts ids instead of comparing strings.
// Most hits repeat values (a loop's bounds, its strings, its modes), so most hits add no text.

/** Set of columns an evaluator wrote into, for the texts it keeps per value (see TextTable): ids are per set. */
let nextGeneration = 1;

/** Hits of one or more logpoints read into columns (see LogpointEvaluator.evaluateInto). */
export class LogpointColumns {
  /** Every distinct text of the hits once (values, function names); a text id indexes here. */
  readonly texts: string[] = [];
  /** Column c holds the values of the variable names[c], columns in the order their names first came. */
  readonly names: string[] = [];
  /** Per column, per hit: the text id of the variable's value, -1 where that hit has no such variable. */
  readonly columns: Int32Array[] = [];
  /** Per hit: the text id of the function its pc is in, -1 where none is known. */
  functions = new Int32Array(0);
  /** Per hit: the index in `layoutColumns` of the columns it wrote, in its variables' order; -1: no values (see errors). */
  layouts = new Int32Array(0);
  /** The columns of each set of variables a hit was read with, in the order the evaluator read them. */
  readonly layoutColumns: Int32Array[] = [];
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

  private readonly textIds = new Map<string, number>();
  private readonly columnOfName = new Map<string, number>();
  private readonly layoutOfKey = new Map<object, number>();
  private lastLayoutKey: object | undefined;
  private lastLayout = -1;
  private capacity = 0;

  /** The id of `text`, added when it is new. */
  intern(text: string): number {
    let id = this.textIds.get(text);
    if (id === undefined) {
      id = this.texts.length;
      this.texts.push(text);
      this.textIds.set(text, id);
    }
    return id;
  }

  /**
   * The layout (index in layoutColumns) of a set of variables named `names`, made once per `key` (the evaluator's
   * plan, which reads those names in that order at every hit of its pc).
   */
  layoutOf(key: object, names: readonly string[]): number {
    if (key === this.lastLayoutKey) return this.lastLayout;
    let layout = this.layoutOfKey.get(key);
    if (layout === undefined) {
      layout = this.layoutColumns.length;
      this.layoutColumns.push(Int32Array.from(names, (name) => this.columnOf(name)));
      this.layoutOfKey.set(key, layout);
    }
    this.lastLayoutKey = key;
    this.lastLayout = layout;
    return layout;
  }

  /** `expectedHits`: room for that many hits from the start (a tally knows its rows), else it grows as hits come. */
  constructor(expectedHits = 64) {
    this.grow(Math.max(1, expectedHits));
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
    for (const column of this.columns) column[row] = -1;
    if (error !== undefined) this.errors.set(row, error);
    return row;
  }

  /**
   * Gives hit `row` the columns of `layout`, which its caller then writes; every other column reads -1 there.
   * A snapshot's hits mostly share one layout that covers every column, which writes nothing more.
   */
  setLayout(row: number, layout: number): void {
    this.layouts[row] = layout;
    const own = this.layoutColumns[layout];
    if (own.length === this.columns.length && this.layoutColumns.length === 1) return;
    for (let c = 0; c < this.columns.length; c++) if (!own.includes(c)) this.columns[c][row] = -1;
  }

  /** The text of variable column `column` at hit `row`, undefined where that hit has no such variable. */
  textAt(column: number, row: number): string | undefined {
    const id = this.columns[column][row];
    return id < 0 ? undefined : this.texts[id];
  }

  /** One hit's values as a record carries them: name -> text, in the order its variables were read. */
  valuesOf(row: number): Record<string, string> {
    const values: Record<string, string> = {};
    const layout = this.layouts[row];
    if (layout < 0) return values;
    for (const column of this.layoutColumns[layout]) {
      const id = this.columns[column][row];
      // A name a plan reads twice holds its last text in its column, at the place of its first (as assignment in order).
      if (id < 0) continue;
      const name = this.names[column];
      // `__proto__` as an own property, as the evaluator's object literal makes it.
      if (name === '__proto__') Object.defineProperty(values, name, { value: this.texts[id], enumerable: true, writable: true, configurable: true });
      else values[name] = this.texts[id];
    }
    return values;
  }

  private columnOf(name: string): number {
    let column = this.columnOfName.get(name);
    if (column === undefined) {
      column = this.names.length;
      this.names.push(name);
      this.columnOfName.set(name, column);
      // -1 for the hits before it (none of them had this variable); the rows to come are written by setLayout's caller.
      this.columns.push(new Int32Array(this.capacity).fill(-1, 0, this.length));
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
