// An object's functions by address, as perf names an address (tools/perf/util/symbol.c): aliases at one address
// settled by choose_best_symbol, zero-size symbols running to the next one (symbols__fixup_end), untyped labels
// inside a sized function dropped. Built from symbol columns (elf.ts SymbolColumns): addresses, sizes and kinds as
// typed arrays, a name read only for the functions a lookup finds (and for aliases that need names to be told
// apart). Objects of a hundred thousand symbols (the node executable) cost a few passes over typed arrays, not an
// object, a BigInt and a string per symbol. Pure: no node imports.

import { compareAliases, type AliasCandidate } from './best-symbol';
import { demangle } from './demangle';
import { ElfFormatError, SYMBOL_TYPE_LABEL, SYMBOL_TYPE_OBJECT, type ElfSymbol, type StringTableReader, type SymbolColumns } from './elf';

export interface FunctionSymbol {
  readonly name: string;
  readonly start: bigint;
  /** Exclusive end: start+size, or the next symbol's start for zero-size symbols (as perf does). */
  readonly end: bigint;
}

/** Where the candidates come from, in order: symbol columns (maybe only their .symtab rows), then plain symbols (PLT stubs). */
export type FunctionSource = { readonly columns: SymbolColumns; readonly symtabOnly?: boolean } | { readonly symbols: readonly ElfSymbol[] };

const BINDING_LOCAL = 0;
const BINDING_GLOBAL = 1;
const BINDING_WEAK = 2;
const TWO_32 = 4294967296;
/** The largest distance from the lowest function a double holds exactly (2^53). */
const MAX_EXACT = 2 ** 53;

/** compareAliases before names: a sized symbol over a zero-size one, non-weak over weak, global over local. */
function compareBySizeAndBinding(sizeA: number, bindA: number, sizeB: number, bindB: number): number {
  if (sizeA > 0 !== sizeB > 0) return sizeA > 0 ? 1 : -1;
  if ((bindA === BINDING_WEAK) !== (bindB === BINDING_WEAK)) return bindB === BINDING_WEAK ? 1 : -1;
  if ((bindA === BINDING_GLOBAL) !== (bindB === BINDING_GLOBAL)) return bindA === BINDING_GLOBAL ? 1 : -1;
  return 0;
}

/** Of aliases that tie on size and binding, the first best by the names perf shows (demangled without parameters). */
export function bestShownAlias<Alias extends AliasCandidate>(group: readonly Alias[]): Alias {
  // Most ties are one symbol listed in both .symtab and .dynsym: one name, nothing to demangle or compare.
  if (group.every((symbol) => symbol.name === group[0].name)) return group[0];
  let best = group[0];
  let bestAlias = { size: best.size, binding: best.binding, name: demangle(best.name) ?? best.name };
  for (const candidate of group.slice(1)) {
    const alias = { size: candidate.size, binding: candidate.binding, name: demangle(candidate.name) ?? candidate.name };
    if (compareAliases(alias, bestAlias) > 0) {
      best = candidate;
      bestAlias = alias;
    }
  }
  return best;
}

/** A function whose name is chosen among tied aliases on first use: demangling every alias pair of a large C++ object took a fifth of its load. */
class AliasedFunction implements FunctionSymbol {
  private chosen: string | undefined;
  constructor(
    private readonly group: () => readonly AliasCandidate[],
    readonly start: bigint,
    readonly end: bigint,
  ) {}
  get name(): string {
    this.chosen ??= bestShownAlias(this.group()).name;
    return this.chosen;
  }
}

/** The function-kind symbols of the sources with a nonzero address, in table order, as columns. */
interface Candidates {
  readonly count: number;
  readonly high: Uint32Array;
  readonly low: Uint32Array;
  readonly size: Float64Array;
  /** Bit 0: an untyped label; bits 1-2: binding (BINDING_*). */
  readonly flags: Uint8Array;
  /** Which source and which row of it. */
  readonly sourceOf: Uint8Array;
  readonly rowOf: Uint32Array;
}

function collectCandidates(sources: readonly FunctionSource[]): Candidates {
  let capacity = 0;
  for (const source of sources) capacity += 'columns' in source ? source.columns.count : source.symbols.length;
  const c = {
    count: 0,
    high: new Uint32Array(capacity),
    low: new Uint32Array(capacity),
    size: new Float64Array(capacity),
    flags: new Uint8Array(capacity),
    sourceOf: new Uint8Array(capacity),
    rowOf: new Uint32Array(capacity),
  };
  for (let s = 0; s < sources.length; s++) {
    const source = sources[s];
    c.count = 'columns' in source ? addColumns(c, s, source.columns, source.symtabOnly === true) : addSymbols(c, s, source.symbols);
  }
  return c;
}

function addColumns(c: Candidates, source: number, columns: SymbolColumns, symtabOnly: boolean): number {
  const { high, low, size, flags, sourceOf, rowOf } = c;
  const { valueHigh, valueLow, info, symtab } = columns;
  let count = c.count;
  for (let row = 0; row < columns.count; row++) {
    const type = info[row] & 0xf;
    if (type === SYMBOL_TYPE_OBJECT || (valueHigh[row] === 0 && valueLow[row] === 0) || (symtabOnly && symtab[row] === 0)) continue;
    const bind = info[row] >> 4;
    high[count] = valueHigh[row];
    low[count] = valueLow[row];
    size[count] = columns.size[row];
    flags[count] = (type === SYMBOL_TYPE_LABEL ? 1 : 0) | ((bind === 0 ? BINDING_LOCAL : bind === 2 ? BINDING_WEAK : BINDING_GLOBAL) << 1);
    sourceOf[count] = source;
    rowOf[count] = row;
    count++;
  }
  return count;
}

function addSymbols(c: Candidates, source: number, symbols: readonly ElfSymbol[]): number {
  let count = c.count;
  for (let row = 0; row < symbols.length; row++) {
    const symbol = symbols[row];
    if (symbol.kind !== 'function' || symbol.value === 0n) continue;
    c.high[count] = Number(symbol.value >> 32n);
    c.low[count] = Number(symbol.value & 0xffffffffn);
    c.size[count] = symbol.size;
    c.flags[count] = (symbol.label ? 1 : 0) | ((symbol.binding === 'local' ? BINDING_LOCAL : symbol.binding === 'weak' ? BINDING_WEAK : BINDING_GLOBAL) << 1);
    c.sourceOf[count] = source;
    c.rowOf[count] = row;
    count++;
  }
  return count;
}

/** The lowest candidate address (as halves), and every candidate's distance from it as an exact double. */
function relativeAddresses(c: Candidates): { base: bigint; at: Float64Array } {
  const { count, high, low, size } = c;
  let baseHigh = TWO_32;
  let baseLow = 0;
  for (let i = 0; i < count; i++) {
    if (high[i] < baseHigh || (high[i] === baseHigh && low[i] < baseLow)) {
      baseHigh = high[i];
      baseLow = low[i];
    }
  }
  const at = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const relative = (high[i] - baseHigh) * TWO_32 + (low[i] - baseLow);
    if (relative + size[i] >= MAX_EXACT) {
      throw new ElfFormatError(`function symbols span more than 2^53 bytes (one at 0x${((BigInt(high[i]) << 32n) | BigInt(low[i])).toString(16)})`);
    }
    at[i] = relative;
  }
  return { base: count === 0 ? 0n : (BigInt(baseHigh) << 32n) | BigInt(baseLow), at };
}

/** Candidates grouped by address: the distinct addresses sorted, each group's candidates in table order. */
interface Groups {
  readonly addresses: Float64Array;
  /** The candidates by address; group g is grouped[start[g]] up to grouped[start[g + 1]]. */
  readonly start: Int32Array;
  readonly grouped: Int32Array;
}

function groupByAddress(at: Float64Array): Groups {
  const order = candidatesByAddress(at);
  const count = order.length;
  const addresses = new Float64Array(count);
  const start = new Int32Array(count + 1);
  let distinct = 0;
  for (let k = 0; k < count; k++) {
    const value = at[order[k]];
    if (k === 0 || value !== addresses[distinct - 1]) {
      start[distinct] = k;
      addresses[distinct++] = value;
    }
  }
  start[distinct] = count;
  return { addresses: addresses.subarray(0, distinct), start: start.subarray(0, distinct + 1), grouped: order };
}

/**
 * Candidate indexes sorted by address, table order among equals. Where address and index fit one double together
 * (the address's span times the candidate count below 2^53: any object), a native sort of those keys; else a
 * comparator sort.
 */
function candidatesByAddress(at: Float64Array): Int32Array {
  const count = at.length;
  let span = 0;
  for (let i = 0; i < count; i++) if (at[i] > span) span = at[i];
  const slots = 2 ** Math.ceil(Math.log2(count + 1));
  const order = new Int32Array(count);
  if ((span + 1) * slots <= MAX_EXACT) {
    const keys = new Float64Array(count);
    for (let i = 0; i < count; i++) keys[i] = at[i] * slots + i;
    keys.sort();
    for (let k = 0; k < count; k++) order[k] = keys[k] % slots;
  } else {
    const indexes = Array.from({ length: count }, (_, i) => i).sort((a, b) => at[a] - at[b] || a - b);
    order.set(indexes);
  }
  return order;
}

/** What the symbolizer asks of an object's functions: built from the symbol tables, or loaded from the disk cache. */
export interface FunctionLookup {
  readonly size: number;
  functionAt(vaddr: bigint): FunctionSymbol | undefined;
}

/**
 * A FunctionIndex as columns, for the on-disk cache: per function its start and exclusive end (relative to `base`)
 * and its names — one, or the tied aliases whose shown name waits for a lookup (nameFirst[f] up to nameFirst[f + 1]
 * in the name list; name n is the UTF-8 bytes of nameBytes from nameStart[n] up to the next NUL, and nameBytes ends
 * with a NUL).
 */
export interface StoredFunctionColumns {
  readonly base: bigint;
  readonly starts: Float64Array;
  readonly ends: Float64Array;
  readonly nameFirst: Uint32Array;
  readonly nameStart: Uint32Array;
  readonly nameBytes: Uint8Array;
  /**
   * Present when the names are not all in nameBytes (storedColumns with `inPlace`): the name list's tables in order
   * (StoredNameTable), nameBytes then holding only those not in a file.
   */
  readonly nameTables?: readonly StoredNameTable[];
}

/**
 * One string table of StoredFunctionColumns.nameTables: names numbered from `at` up to `at + size` are in nameBytes
 * from `held`, or in file `path` from `offset`.
 */
export interface StoredNameTable {
  readonly at: number;
  readonly size: number;
  readonly held?: number;
  readonly path?: string;
  readonly offset?: number;
}

/** The function slot holding `vaddr` in sorted starts/ends relative to `base`, or -1. */
function slotAt(base: bigint, starts: Float64Array, ends: Float64Array, vaddr: bigint): number {
  if (vaddr < base || starts.length === 0) return -1;
  const distance = vaddr - base;
  if (distance >= BigInt(MAX_EXACT)) return -1; // past every end (each is below 2^53)
  const relative = Number(distance);
  let lo = 0;
  let hi = starts.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] <= relative) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best >= 0 && relative < ends[best] ? best : -1;
}

const utf8 = new TextDecoder();

/**
 * A function index as the lookups need it, whether built from symbol tables or loaded from the disk cache: starts and
 * ends as in StoredFunctionColumns, and names as where they start in a few byte tables (a name runs to a NUL or its
 * table's end). Built ones point into the object's own string tables (nameTable says which), so nothing per symbol
 * outlives the build: no candidate columns, no address groups, no string per name until a lookup finds it.
 */
interface NameColumns {
  readonly base: bigint;
  readonly starts: Float64Array;
  readonly ends: Float64Array;
  readonly nameFirst: Uint32Array;
  readonly nameStart: Uint32Array;
  /** Per name, its table in `tables`; undefined: every name is in tables[0]. */
  readonly nameTable: Uint8Array | undefined;
  /** Held, or read a name at a time (readNamesFrom). */
  readonly tables: readonly (Uint8Array | StringTableReader)[];
}

/**
 * Lookups over NameColumns: a name decoded when a lookup finds its function. Tied aliases are settled by
 * bestShownAlias on first use (they tie on size and binding, so only their names decide).
 */
class ColumnFunctionIndex implements FunctionLookup {
  private readonly found = new Map<number, FunctionSymbol>();
  constructor(protected columns: NameColumns) {}

  get size(): number {
    return this.columns.starts.length;
  }

  private nameAt(n: number): string {
    const { nameStart, nameTable, tables } = this.columns;
    const strings = tables[nameTable ? nameTable[n] : 0];
    const offset = nameStart[n];
    if (!(strings instanceof Uint8Array)) return strings.nameAt(offset);
    if (offset > strings.length) throw new ElfFormatError(`string at offset ${offset} is past the end of its table (${strings.length} bytes)`);
    const end = strings.indexOf(0, offset);
    return utf8.decode(strings.subarray(offset, end < 0 ? strings.length : end));
  }

  functionAt(vaddr: bigint): FunctionSymbol | undefined {
    const { base, starts, ends, nameFirst } = this.columns;
    const slot = slotAt(base, starts, ends, vaddr);
    if (slot < 0) return undefined;
    let fn = this.found.get(slot);
    if (!fn) {
      const start = base + BigInt(starts[slot]);
      const end = base + BigInt(ends[slot]);
      const first = nameFirst[slot];
      const count = nameFirst[slot + 1] - first;
      fn =
        count === 1
          ? { name: this.nameAt(first), start, end }
          : new AliasedFunction(
              () => Array.from({ length: count }, (_, k) => ({ name: this.nameAt(first + k), size: 0, binding: 'global' as const })),
              start,
              end,
            );
      this.found.set(slot, fn);
    }
    return fn;
  }
}

/**
 * Functions loaded from the disk cache or built by the prefetch worker: the columns as read (no per-symbol work).
 * Names the columns place in files (nameTables) are read through `fileTable(path, offset, size)`.
 */
export class StoredFunctionIndex extends ColumnFunctionIndex {
  constructor(
    readonly stored: StoredFunctionColumns,
    fileTable?: (path: string, offset: number, size: number) => StringTableReader | undefined,
  ) {
    super({ ...stored, nameTable: undefined, tables: [stored.nameTables ? tablesReader(stored, fileTable) : stored.nameBytes] });
  }
}

/** One reader over stored names some of whose tables lie in files (StoredFunctionColumns.nameTables). */
function tablesReader(
  stored: StoredFunctionColumns,
  fileTable?: (path: string, offset: number, size: number) => StringTableReader | undefined,
): StringTableReader {
  const tables = stored.nameTables!.map((table) => {
    if (table.path === undefined || table.offset === undefined) return { ...table, reader: undefined };
    const reader = fileTable?.(table.path, table.offset, table.size);
    if (!reader) throw new ElfFormatError(`${table.path}: its string table at ${table.offset} cannot be read`);
    return { ...table, reader };
  });
  const last = tables[tables.length - 1];
  const size = last ? last.at + last.size + 1 : 0;
  return {
    offset: 0,
    size,
    nameAt: (offset) => {
      let t = tables.length - 1;
      while (t > 0 && tables[t].at > offset) t--;
      const table = tables[t];
      const within = Math.min(offset - table.at, table.size);
      if (table.reader) return table.reader.nameAt(within);
      const start = (table.held ?? 0) + within;
      const end = stored.nameBytes.indexOf(0, start);
      return utf8.decode(stored.nameBytes.subarray(start, end < 0 ? stored.nameBytes.length : end));
    },
    whole: () => {
      const bytes = new Uint8Array(size);
      for (const table of tables) {
        if (table.reader) bytes.set(table.reader.whole(), table.at);
        else bytes.set(stored.nameBytes.subarray(table.held ?? 0, (table.held ?? 0) + table.size), table.at);
      }
      return bytes;
    },
  };
}

/** An object's functions built from its symbol columns (see FunctionIndexBuilder), kept as NameColumns only. */
export class FunctionIndex extends ColumnFunctionIndex {
  constructor(sources: readonly FunctionSource[]) {
    super(new FunctionIndexBuilder(sources).nameColumns());
  }

  /** Reads names through the readers `readerOf` gives for its string tables, and lets go of those tables. */
  readNamesFrom(readerOf: (table: Uint8Array) => StringTableReader | undefined): void {
    this.columns = { ...this.columns, tables: this.columns.tables.map((table) => (table instanceof Uint8Array ? (readerOf(table) ?? table) : table)) };
  }

  /**
   * The index as columns for the disk cache: the string tables the names lie in stored whole, each followed by a
   * NUL, and each name as where it starts there (names were not copied one by one: 153k names of node took 0.15 s so).
   */
  storedColumns(inPlace = false): StoredFunctionColumns {
    const { base, starts, ends, nameFirst, nameStart, nameTable } = this.columns;
    // In place: the tables read from a file are named by where they lie there, not read again (the prefetch worker's
    // reply: the other thread reads the names from the file as it does for an index it built).
    const onFile = (table: Uint8Array | StringTableReader): boolean => inPlace && !(table instanceof Uint8Array) && table.path !== undefined;
    const tables = this.columns.tables.map((table) => (table instanceof Uint8Array || onFile(table) ? table : table.whole()));
    const tableBase = new Uint32Array(tables.length);
    let size = 0;
    tables.forEach((table, t) => {
      tableBase[t] = size;
      size += (table instanceof Uint8Array ? table.length : table.size) + 1;
    });
    const held = tables.every((table) => table instanceof Uint8Array);
    // The tables held, each followed by a NUL: all of them (each then where the names' numbering puts it), or only
    // those not placed in a file.
    let heldSize = 0;
    const heldAt = tables.map((table) => {
      if (!(table instanceof Uint8Array)) return -1;
      const at = heldSize;
      heldSize += table.length + 1;
      return at;
    });
    const nameBytes = new Uint8Array(Math.max(heldSize, 1));
    tables.forEach((table, t) => {
      if (table instanceof Uint8Array) nameBytes.set(table, heldAt[t]);
    });
    const storedStart = new Uint32Array(nameStart.length);
    for (let n = 0; n < nameStart.length; n++) {
      const t = nameTable ? nameTable[n] : 0;
      const table = tables[t];
      storedStart[n] = tableBase[t] + Math.min(nameStart[n], table instanceof Uint8Array ? table.length : table.size);
    }
    if (held) return { base, starts, ends, nameFirst, nameStart: storedStart, nameBytes };
    const nameTables = tables.map((table, t): StoredNameTable => {
      const at = tableBase[t];
      return table instanceof Uint8Array ? { at, size: table.length, held: heldAt[t] } : { at, size: table.size, path: table.path, offset: table.offset };
    });
    return { base, starts, ends, nameFirst, nameStart: storedStart, nameBytes, nameTables };
  }
}

/**
 * Builds an index from symbol columns: the candidates, their address groups and the alias choices live only while
 * it builds; nameColumns() is what is kept.
 */
class FunctionIndexBuilder {
  /** Addresses are kept as doubles relative to the lowest candidate's (exact: see MAX_EXACT). */
  private readonly base: bigint;
  /** Per function, by address: start and exclusive end (relative to base), and its address group. */
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;
  private readonly groupOf: Int32Array;
  /** Per address group: the candidate that names it, or -1 where tied aliases are told apart by name on lookup. */
  private readonly chosen: Int32Array;
  /** Per address group: a candidate whose label flag and size stand for the group's (tied aliases agree on both). */
  private readonly layout: Int32Array;
  private readonly candidates: Candidates;
  private readonly groups: Groups;

  constructor(private readonly sources: readonly FunctionSource[]) {
    this.candidates = collectCandidates(sources);
    const { base, at } = relativeAddresses(this.candidates);
    this.base = base;
    this.groups = groupByAddress(at);
    this.chosen = new Int32Array(this.groups.addresses.length);
    this.layout = new Int32Array(this.groups.addresses.length);
    this.settleAliases();
    const kept = this.withoutEnclosedLabels();
    const { addresses } = this.groups;
    const { size } = this.candidates;
    this.starts = new Float64Array(kept.length);
    this.ends = new Float64Array(kept.length);
    this.groupOf = kept;
    for (let f = 0; f < kept.length; f++) {
      const g = kept[f];
      const start = addresses[g];
      const bytes = size[this.layout[g]];
      this.starts[f] = start;
      this.ends[f] = bytes > 0 ? start + bytes : f + 1 < kept.length ? addresses[kept[f + 1]] : start + 1;
    }
  }

  private symbolOf = (candidate: number): ElfSymbol => {
    const source = this.sources[this.candidates.sourceOf[candidate]];
    return 'columns' in source ? source.columns.symbolAt(this.candidates.rowOf[candidate]) : source.symbols[this.candidates.rowOf[candidate]];
  };

  private isPltStub(candidate: number): boolean {
    const source = this.sources[this.candidates.sourceOf[candidate]];
    const row = this.candidates.rowOf[candidate];
    return 'columns' in source ? source.columns.nameEndsWith(row, '@plt') : source.symbols[row].name.endsWith('@plt');
  }

  /** Whether two candidates have one name, compared as bytes in their string tables where both come from columns. */
  private sameName(a: number, b: number): boolean {
    const sourceA = this.sources[this.candidates.sourceOf[a]];
    const sourceB = this.sources[this.candidates.sourceOf[b]];
    if (!('columns' in sourceA) || !('columns' in sourceB)) return this.symbolOf(a).name === this.symbolOf(b).name;
    const rowA = this.candidates.rowOf[a];
    const rowB = this.candidates.rowOf[b];
    const stringsA = sourceA.columns.nameTableOf(rowA);
    const stringsB = sourceB.columns.nameTableOf(rowB);
    let at = sourceA.columns.nameOffsetOf(rowA);
    let bt = sourceB.columns.nameOffsetOf(rowB);
    // Past a table's end reads as a NUL: a name runs to a NUL or its table's end.
    for (; ; at++, bt++) {
      const byteA = at < stringsA.length ? stringsA[at] : 0;
      const byteB = bt < stringsB.length ? stringsB[bt] : 0;
      if (byteA !== byteB) return false;
      if (byteA === 0) return true;
    }
  }

  /**
   * Per address, the alias perf would show: size and binding decide; where they tie, names decide (perf compares the
   * names it shows, demangled: `operator new[]` beats `operator new`), which needs demangling and so waits until the
   * address is looked up (-1), unless the tied aliases differ in what the layout reads (label, size). Symbols come
   * symtab first: ties keep symtab's. PLT stubs come last: a real symbol at the same address keeps its name.
   */
  private settleAliases(): void {
    const { start, grouped } = this.groups;
    const { size, flags } = this.candidates;
    const { chosen, layout } = this;
    for (let g = 0; g < chosen.length; g++) {
      // aliasesAt without its array: the best so far, how many tie with it, and whether they differ in label or size.
      let best = grouped[start[g]];
      let tied = 1;
      let second = -1;
      let differs = false;
      for (let k = start[g] + 1; k < start[g + 1]; k++) {
        const candidate = grouped[k];
        const order = compareBySizeAndBinding(size[candidate], flags[candidate] >> 1, size[best], flags[best] >> 1);
        if (order < 0 || this.isPltStub(candidate)) continue;
        if (order > 0) {
          best = candidate;
          tied = 1;
          differs = false;
        } else {
          if (++tied === 2) second = candidate;
          if ((flags[candidate] & 1) !== (flags[best] & 1) || size[candidate] !== size[best]) differs = true;
        }
      }
      // Two tied aliases of one name (a symbol in both .symtab and .dynsym, most ties of node's 62k): bestShownAlias
      // would keep the first, so it is chosen now, and the index keeps one name for the function, not two.
      if (tied === 1 || (tied === 2 && !differs && this.sameName(best, second))) chosen[g] = layout[g] = best;
      else if (differs) {
        const aliases = this.aliasesAt(g);
        const symbols = aliases.map(this.symbolOf);
        chosen[g] = layout[g] = aliases[symbols.indexOf(bestShownAlias(symbols))];
      } else {
        chosen[g] = -1;
        layout[g] = best;
      }
    }
  }

  /** The best of group g's candidates by size and binding: one, or several that tie (in table order). */
  private aliasesAt(g: number): number[] {
    const { start, grouped } = this.groups;
    const { size, flags } = this.candidates;
    let tied: number[] = [grouped[start[g]]];
    for (let k = start[g] + 1; k < start[g + 1]; k++) {
      const candidate = grouped[k];
      const best = tied[0];
      const order = compareBySizeAndBinding(size[candidate], flags[candidate] >> 1, size[best], flags[best] >> 1);
      // A PLT stub at an address already named is skipped; one that would lose anyway needs no name read.
      if (order < 0 || this.isPltStub(candidate)) continue;
      if (order > 0) tied = [candidate];
      else tied.push(candidate);
    }
    return tied;
  }

  /**
   * The address groups kept, by address: labels that lie inside a sized function (start < label < start + size) are
   * dropped, so the samples after such a label keep the function's name: V8's builtins have local labels like
   * `construct_stub_create_deopt_addr` inside `Builtins_JSConstructStubGeneric`, and perf names those samples
   * `Builtins_JSConstructStubGeneric+0x102`. Labels outside every sized function (ld.so's `_start`) stay: nothing
   * else names that code.
   */
  private withoutEnclosedLabels(): Int32Array {
    const { addresses } = this.groups;
    const { size, flags } = this.candidates;
    const kept = new Int32Array(addresses.length);
    let count = 0;
    let enclosingEnd = -1;
    for (let g = 0; g < addresses.length; g++) {
      const candidate = this.layout[g];
      const at = addresses[g];
      if (flags[candidate] & 1) {
        if (at < enclosingEnd) continue;
      } else if (size[candidate] > 0 && at + size[candidate] > enclosingEnd) {
        enclosingEnd = at + size[candidate];
      }
      kept[count++] = g;
    }
    return kept.slice(0, count);
  }

  /**
   * Every function's names as where they lie in the string tables (the chosen alias, or the tied aliases, unsettled),
   * PLT stub names, which no table holds, in one more table after them.
   */
  nameColumns(): NameColumns {
    const count = this.starts.length;
    // The candidates named, in order: each function's chosen one, or its tied aliases (rare: a typed array sized for
    // one name a function, grown when ties need more).
    let named = new Int32Array(count);
    let names = 0;
    const nameFirst = new Uint32Array(count + 1);
    for (let f = 0; f < count; f++) {
      nameFirst[f] = names;
      const chosen = this.chosen[this.groupOf[f]];
      const aliases = chosen >= 0 ? undefined : this.aliasesAt(this.groupOf[f]);
      const needed = names + (aliases ? aliases.length : 1) + (count - f - 1);
      if (needed > named.length) {
        const wider = new Int32Array(needed * 2);
        wider.set(named.subarray(0, names));
        named = wider;
      }
      if (aliases) for (const alias of aliases) named[names++] = alias;
      else named[names++] = chosen;
    }
    nameFirst[count] = names;
    const { sourceOf, rowOf } = this.candidates;
    const tableIndex = new Map<Uint8Array, number>();
    const tables: Uint8Array[] = [];
    const pltNames: Uint8Array[] = [];
    const encoder = new TextEncoder();
    const nameStart = new Uint32Array(names);
    const nameTable = new Uint8Array(names);
    const pltName = new Uint8Array(names);
    let lastStrings: Uint8Array | undefined;
    let lastTable = 0;
    for (let n = 0; n < names; n++) {
      const source = this.sources[sourceOf[named[n]]];
      const row = rowOf[named[n]];
      if ('columns' in source) {
        const strings = source.columns.nameTableOf(row);
        if (strings !== lastStrings) {
          let t = tableIndex.get(strings);
          if (t === undefined) {
            t = tables.length;
            tableIndex.set(strings, t);
            tables.push(strings);
          }
          lastStrings = strings;
          lastTable = t;
        }
        nameTable[n] = lastTable;
        nameStart[n] = source.columns.nameOffsetOf(row);
      } else {
        pltName[n] = 1;
        nameStart[n] = pltNames.length;
        pltNames.push(encoder.encode(source.symbols[row].name));
      }
    }
    if (pltNames.length > 0) {
      let size = 0;
      const pltStart = pltNames.map((name) => {
        const start = size;
        size += name.length + 1;
        return start;
      });
      const pltBytes = new Uint8Array(size);
      pltNames.forEach((name, i) => pltBytes.set(name, pltStart[i]));
      for (let n = 0; n < names; n++) {
        if (!pltName[n]) continue;
        nameTable[n] = tables.length;
        nameStart[n] = pltStart[nameStart[n]];
      }
      tables.push(pltBytes);
    }
    if (tables.length > 256) throw new ElfFormatError(`function names in ${tables.length} string tables (at most 256)`);
    return { base: this.base, starts: this.starts, ends: this.ends, nameFirst, nameStart, nameTable, tables };
  }
}
