// Columns ⇄ batches: the host splits decoded columns into exact-length transferable batches, the webview
// (and tests) reassemble them. Pure.

import type { RecordBatch } from './protocol';
import { COLUMN_NAMES, COLUMN_TYPES, DEFAULT_BATCH_ROWS, type ColumnName, type WireColumns } from './columns';

/** A symbol per row as a column: `index[row]` is a position in `table`, or -1 for none. */
export interface SymbolColumn {
  readonly index: Int32Array;
  readonly table: readonly string[];
}

export interface BatchOptions {
  readonly snapshotId: string;
  readonly batchRows?: number;
  /**
   * Optional symbol per row (same length as the columns): a SymbolColumn (built in one typed pass,
   * see wire.ts), or one string per row, null for none.
   */
  readonly symbols?: SymbolColumn | readonly (string | null)[];
  /** Optional stack id per row (-1: none), same length as the columns. */
  readonly stacks?: Int32Array;
  /**
   * Where a batch's buffers come from: a fresh ArrayBuffer of exactly `byteLength` bytes, every one of which the batch
   * then writes, so it may be uninitialized memory (a node host's Buffer.allocUnsafeSlow). Default: a zeroed buffer.
   */
  readonly allocate?: (byteLength: number) => ArrayBuffer;
}

function isSymbolColumn(symbols: BatchOptions['symbols']): symbols is SymbolColumn {
  return symbols !== undefined && !Array.isArray(symbols) && (symbols as SymbolColumn).index instanceof Int32Array;
}

/** Per-row strings → SymbolColumn (one Map lookup per row; callers with many rows should build the column directly). */
export function symbolColumnOf(symbols: readonly (string | null)[]): SymbolColumn {
  const index = new Int32Array(symbols.length);
  const table: string[] = [];
  const seen = new Map<string, number>();
  for (let r = 0; r < symbols.length; r++) {
    const s = symbols[r];
    if (s === null || s === undefined) {
      index[r] = -1;
      continue;
    }
    let id = seen.get(s);
    if (id === undefined) {
      id = table.length;
      table.push(s);
      seen.set(s, id);
    }
    index[r] = id;
  }
  return { index, table };
}

function sliceColumn(
  column: ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; BYTES_PER_ELEMENT: number },
  start: number,
  end: number,
  allocate: BatchOptions['allocate'],
): ArrayBuffer {
  const size = column.BYTES_PER_ELEMENT;
  const begin = column.byteOffset + start * size;
  const finish = column.byteOffset + end * size;
  // A fresh exact-length buffer is what makes it transferable. Columns decoded on worker threads live in shared memory,
  // whose slice() is shared memory again: a message to the page carries (and its validation asks for) a plain ArrayBuffer.
  if (!allocate && column.buffer instanceof ArrayBuffer) return column.buffer.slice(begin, finish);
  const copy = allocate ? allocate(finish - begin) : new ArrayBuffer(finish - begin);
  // Every byte of the copy is written below: an allocator that handed out another size would leave some unwritten.
  if (!isPlainArrayBuffer(copy) || copy.byteLength !== finish - begin) throw new RangeError(`allocate(${finish - begin}) gave another buffer`);
  new Uint8Array(copy).set(new Uint8Array(column.buffer, begin, finish - begin));
  return copy;
}

function isPlainArrayBuffer(buffer: ArrayBufferLike): buffer is ArrayBuffer {
  return buffer instanceof ArrayBuffer;
}

function batchRowsOf(batchRows: number | undefined): number {
  return Math.max(1, Math.floor(batchRows ?? DEFAULT_BATCH_ROWS));
}

/** How many batches columnsToBatches makes of `rows` rows (at least one, even for none). */
export function batchCountOf(rows: number, batchRows?: number): number {
  return Math.max(1, Math.ceil(rows / batchRowsOf(batchRows)));
}

/**
 * The exact-length batches of decoded columns, built one at a time by index: a sender builds each as it sends it (the
 * page adopts one batch while the next is copied, and the sender holds no copy of the rows), columnsToBatches all at
 * once. Every call copies the batch's rows afresh, so what it returns is the caller's to transfer.
 */
export class BatchBuilder {
  readonly count: number;
  private readonly batchRows: number;
  private readonly symbols: SymbolColumn | undefined;
  /** Global symbol id → id in the batch being built (-1: not in it yet); back to -1 after each batch. */
  private readonly localId: Int32Array | null;

  constructor(
    private readonly columns: WireColumns,
    private readonly options: BatchOptions,
  ) {
    this.batchRows = batchRowsOf(options.batchRows);
    this.count = batchCountOf(columns.length, this.batchRows);
    const symbolCount = options.symbols === undefined ? 0 : isSymbolColumn(options.symbols) ? options.symbols.index.length : options.symbols.length;
    if (options.symbols && symbolCount !== columns.length) {
      throw new RangeError(`symbols has ${symbolCount} entries for ${columns.length} rows`);
    }
    this.symbols = options.symbols === undefined ? undefined : isSymbolColumn(options.symbols) ? options.symbols : symbolColumnOf(options.symbols);
    this.localId = this.symbols ? new Int32Array(this.symbols.table.length).fill(-1) : null;
  }

  /** The first row of batch `index`. */
  firstRowOf(index: number): number {
    return Math.min(this.columns.length, index * this.batchRows);
  }

  /** How many rows batch `index` holds. */
  rowCountOf(index: number): number {
    return Math.min(this.columns.length, (index + 1) * this.batchRows) - this.firstRowOf(index);
  }

  /** Every batch, in order. */
  all(): RecordBatch[] {
    return Array.from({ length: this.count }, (_, index) => this.batch(index));
  }

  /** Batch `index` (0 <= index < count), its rows copied into buffers of its own. */
  batch(index: number): RecordBatch {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) throw new RangeError(`batch ${index} of ${this.count}`);
    const { columns, options, symbols, localId } = this;
    const start = this.firstRowOf(index);
    const end = start + this.rowCountOf(index);
    const buffers = {} as Record<ColumnName, ArrayBuffer>;
    for (const name of COLUMN_NAMES) buffers[name] = sliceColumn(columns[name], start, end, options.allocate);
    let symbolIndex: ArrayBuffer | undefined;
    let symbolTable: string[] | undefined;
    if (symbols && localId) {
      // Each batch carries only the symbols its rows use, renumbered from 0.
      const local = new Int32Array(end - start);
      const used: number[] = [];
      const global = symbols.index;
      try {
        for (let r = start; r < end; r++) {
          const g = global[r];
          if (g < 0) {
            local[r - start] = -1;
            continue;
          }
          if (g >= localId.length) throw new RangeError(`symbols.index[${r}] = ${g} is past the table (${localId.length} entries)`);
          let id = localId[g];
          if (id < 0) {
            id = localId[g] = used.length;
            used.push(g);
          }
          local[r - start] = id;
        }
      } finally {
        // The next batch (built later, maybe after this one threw) starts from an empty table.
        for (const g of used) localId[g] = -1;
      }
      symbolTable = used.map((g) => symbols.table[g]);
      symbolIndex = local.buffer;
    }
    return {
      type: 'batch',
      snapshotId: options.snapshotId,
      batchIndex: index,
      batchCount: this.count,
      firstRow: start,
      rowCount: end - start,
      columns: buffers,
      ...(symbolIndex ? { symbolIndex, symbolTable } : {}),
      ...(options.stacks ? { stackIndex: sliceColumn(options.stacks, start, end, options.allocate) } : {}),
    };
  }
}

/** Split decoded columns into exact-length batches for postMessage (transfer `transferablesOf(batch)`). */
export function columnsToBatches(columns: WireColumns, options: BatchOptions): RecordBatch[] {
  return new BatchBuilder(columns, options).all();
}

/** The buffers of a batch, for postMessage's transfer list. */
export function transferablesOf(batch: RecordBatch): ArrayBuffer[] {
  const list = COLUMN_NAMES.map((n) => batch.columns[n]);
  if (batch.symbolIndex) list.push(batch.symbolIndex);
  if (batch.stackIndex) list.push(batch.stackIndex);
  return list;
}

export interface ReassembledColumns {
  readonly columns: WireColumns;
  /** Symbol per row, or undefined when no batch carried symbols. */
  readonly symbols?: (string | null)[];
}

/**
 * Reassemble batches (any order, all present) into one set of columns. Throws a RangeError
 * when batches are missing, overlap or do not cover `totalRows`.
 */
export function batchesToColumns(batches: readonly RecordBatch[], timeOriginNs: bigint): ReassembledColumns {
  const sorted = [...batches].sort((a, b) => a.firstRow - b.firstRow);
  let total = 0;
  for (const b of sorted) {
    if (b.firstRow !== total) throw new RangeError(`batch ${b.batchIndex} starts at row ${b.firstRow}, expected ${total}`);
    total += b.rowCount;
  }
  const out = {} as Record<ColumnName, ArrayLike<number> & { set(a: ArrayLike<number>, offset: number): void }>;
  for (const name of COLUMN_NAMES) out[name] = new COLUMN_TYPES[name](total);
  const anySymbols = sorted.some((b) => b.symbolIndex);
  const symbols: (string | null)[] | undefined = anySymbols ? new Array<string | null>(total).fill(null) : undefined;
  for (const b of sorted) {
    for (const name of COLUMN_NAMES) out[name].set(new COLUMN_TYPES[name](b.columns[name]), b.firstRow);
    if (symbols && b.symbolIndex && b.symbolTable) {
      const index = new Int32Array(b.symbolIndex);
      for (let i = 0; i < index.length; i++) symbols[b.firstRow + i] = index[i] >= 0 ? b.symbolTable[index[i]] : null;
    }
  }
  const columns = { length: total, timeOriginNs, ...out } as unknown as WireColumns;
  return symbols ? { columns, symbols } : { columns };
}
