// The record columns that travel from the host to the page: name → typed-array kind, in batch field order.
// Pure (types and constants), imported by the batch codec, the validator and the page's store.

import type { RecordColumns } from '../native/decode/types';

/** Default rows per batch: 64k rows * 39 bytes/row ≈ 2.5 MB per message. */
export const DEFAULT_BATCH_ROWS = 65536;

/**
 * Column name → element constructor of the columns that go on the wire; the order is the order of
 * the batch fields. The decoder's `ring` and `offset` columns stay on the host: they locate a
 * record's bytes, and the page asks for details by row, so sending them would only add 6 of every
 * 45 bytes to each batch.
 */
export const COLUMN_TYPES = {
  time: Float64Array,
  kind: Uint8Array,
  misc: Uint16Array,
  event: Uint16Array,
  pid: Int32Array,
  tid: Int32Array,
  cpu: Int32Array,
  ipHi: Uint32Array,
  ipLo: Uint32Array,
} as const;

export type ColumnName = keyof typeof COLUMN_TYPES;
export const COLUMN_NAMES = Object.keys(COLUMN_TYPES) as ColumnName[];

/** The decoded columns a batch carries (RecordColumns without the host-only ring/offset). */
export type WireColumns = Pick<RecordColumns, ColumnName | 'length' | 'timeOriginNs'>;

export type BatchBuffers = { readonly [K in ColumnName]: ArrayBuffer };
