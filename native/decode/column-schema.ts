// The record columns, listed once: column name → element kind, one row per record. Everything that
// lists columns derives from this table: the decoder's RecordColumns and ColumnSet (types through
// mapped types, memory layout by iteration), the wire batches (shared/columns.ts: every column but
// the host-only ones, in this order) and the page's store.
// Pure (constants and types): the decoder, shared/ and the page all import it.

/** The typed array of each element kind (over any buffer, shared or not). */
export interface ElementArray {
  f64: Float64Array;
  u32: Uint32Array;
  i32: Int32Array;
  u16: Uint16Array;
  u8: Uint8Array;
}

export type ElementKind = keyof ElementArray;

/** What a column's constructor does: a fresh array, or a view of a buffer (shared or not). */
export interface ElementConstructor<A> {
  new (length: number): A;
  new (buffer: ArrayBufferLike): A;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): A;
  readonly BYTES_PER_ELEMENT: number;
}

/** Element kind → typed-array constructor. */
export const ELEMENT_ARRAYS: { readonly [K in ElementKind]: ElementConstructor<ElementArray[K]> } = {
  f64: Float64Array,
  u32: Uint32Array,
  i32: Int32Array,
  u16: Uint16Array,
  u8: Uint8Array,
};

/** The record columns, in wire order (the host-only ones last). */
export const RECORD_COLUMNS = {
  /** Time relative to the snapshot's timeOriginNs, exact as a double for any span under 104 days; NaN when absent. */
  time: 'f64',
  /** PERF_RECORD_* type; 255 for any type above 254. */
  kind: 'u8',
  /** perf_event_header.misc (cpumode, exact-ip, switch-out...). */
  misc: 'u16',
  event: 'u16',
  pid: 'i32',
  tid: 'i32',
  cpu: 'i32',
  /** Sample IP split in two u32 halves (kernel addresses do not fit a double exactly); 0 when absent. */
  ipHi: 'u32',
  ipLo: 'u32',
  /** Where the record's bytes are: ring copy index and byte offset, for details on demand. */
  ring: 'u16',
  offset: 'u32',
} as const satisfies Readonly<Record<string, ElementKind>>;

export type RecordColumnName = keyof typeof RECORD_COLUMNS;
export const RECORD_COLUMN_NAMES = Object.keys(RECORD_COLUMNS) as RecordColumnName[];

/**
 * Columns that stay on the host: they locate a record's bytes, and the page asks for details by
 * row, so sending them would only add 6 of every 39 bytes to each row of a batch.
 */
export const HOST_ONLY_COLUMNS = ['ring', 'offset'] as const satisfies readonly RecordColumnName[];
export type WireColumnName = Exclude<RecordColumnName, (typeof HOST_ONLY_COLUMNS)[number]>;
export const WIRE_COLUMN_NAMES = RECORD_COLUMN_NAMES.filter(
  (name): name is WireColumnName => !(HOST_ONLY_COLUMNS as readonly RecordColumnName[]).includes(name),
);

/**
 * Where a plain sample's value of a column comes from: a sample of an event whose layout has every
 * field a row reads (time, pid/tid, cpu, ip), the record the flight recorder is mostly made of and
 * the one every hot row writer (decode-ring's sample runs, scatter's rows, the WebAssembly kernels
 * in kernels/) writes without a test per field. The value is stored as the column's element kind.
 * scripts/build-row-writers.mjs writes those writers' column stores from this table at build time.
 */
export type PlainSampleSource =
  /** The sample's time field less the snapshot's timeOriginNs, as a double. */
  | { readonly from: 'time' }
  /** perf_event_header.type (PERF_RECORD_SAMPLE). */
  | { readonly from: 'header-type' }
  /** perf_event_header.misc. */
  | { readonly from: 'header-misc' }
  /** The index of the sample's event: a constant of a run of samples. */
  | { readonly from: 'event' }
  /**
   * u32 word `word` (0: low, 1: high) of a sample field, at the offset the event's parse info gives;
   * `absent`: what the column holds for a record without the field ('ring-cpu': the ring's cpu).
   */
  | { readonly from: 'sample-word'; readonly field: 'pidTid' | 'cpu' | 'ip'; readonly word: 0 | 1; readonly absent: number | 'ring-cpu' }
  /** The index of the ring copy the record is in: a constant of the ring. */
  | { readonly from: 'ring' }
  /** The record's byte offset in its ring copy. */
  | { readonly from: 'offset' };

/**
 * Every column's source for a plain sample. A mapped type over the schema, so a column added to
 * RECORD_COLUMNS does not compile until it says where its value comes from; row-writers.test.ts
 * checks each row writer against this table in memory filled with garbage first, so a writer that
 * forgets the column (or writes another value) fails there.
 */
export const PLAIN_SAMPLE_SOURCES: { readonly [K in RecordColumnName]: PlainSampleSource } = {
  time: { from: 'time' },
  kind: { from: 'header-type' },
  misc: { from: 'header-misc' },
  event: { from: 'event' },
  pid: { from: 'sample-word', field: 'pidTid', word: 0, absent: -1 },
  tid: { from: 'sample-word', field: 'pidTid', word: 1, absent: -1 },
  cpu: { from: 'sample-word', field: 'cpu', word: 0, absent: 'ring-cpu' },
  ipHi: { from: 'sample-word', field: 'ip', word: 1, absent: 0 },
  ipLo: { from: 'sample-word', field: 'ip', word: 0, absent: 0 },
  ring: { from: 'ring' },
  offset: { from: 'offset' },
};

/** The typed array of column K. */
export type ColumnArray<K extends RecordColumnName> = ElementArray[(typeof RECORD_COLUMNS)[K]];
/** The typed-array constructor of column K. */
export type ColumnConstructor<K extends RecordColumnName> = ElementConstructor<ColumnArray<K>>;

/** One typed array per named column. */
export type ColumnArrays<N extends RecordColumnName = RecordColumnName> = { readonly [K in N]: ColumnArray<K> };

/** The constructor of column `name`. */
export function columnConstructor<K extends RecordColumnName>(name: K): ColumnConstructor<K> {
  return ELEMENT_ARRAYS[RECORD_COLUMNS[name]];
}

/** Each column's element width in bytes: what schema-driven copies dispatch on (one loop per width, FlatColumns). */
export const COLUMN_WIDTH = Object.fromEntries(RECORD_COLUMN_NAMES.map((name) => [name, columnConstructor(name).BYTES_PER_ELEMENT])) as {
  readonly [K in RecordColumnName]: 1 | 2 | 4 | 8;
};

/** Bytes one row takes across all columns (39: time 8, pid/tid/cpu/ipHi/ipLo/offset 4 each, misc/event/ring 2 each, kind 1). */
export const COLUMN_BYTES_PER_ROW = RECORD_COLUMN_NAMES.reduce((sum, name) => sum + columnConstructor(name).BYTES_PER_ELEMENT, 0);

/** The columns widest element first (stable: schema order within a width), so views laid out in this order are aligned. */
export const COLUMNS_WIDEST_FIRST: readonly RecordColumnName[] = [...RECORD_COLUMN_NAMES].sort(
  (a, b) => columnConstructor(b).BYTES_PER_ELEMENT - columnConstructor(a).BYTES_PER_ELEMENT,
);

/** A fresh column `name` of `length` elements. */
export function newColumn<K extends RecordColumnName>(name: K, length: number): ColumnArray<K> {
  return new (columnConstructor(name))(length);
}

/** Column `name` as a view of `length` elements of `buffer` from `byteOffset`. */
export function columnView<K extends RecordColumnName>(name: K, buffer: ArrayBufferLike, byteOffset: number, length: number): ColumnArray<K> {
  return new (columnConstructor(name))(buffer, byteOffset, length);
}
