// The record columns that travel from the host to the page: every column of the decoder's schema
// (native/decode/column-schema.ts) but the host-only ones, in batch field order; and the record
// kind names the page shows for the `kind` column. Pure (types and constants), imported by the
// batch codec, the validator and the page's store.

import { WIRE_COLUMN_NAMES, columnConstructor, type ColumnArray, type ColumnConstructor, type WireColumnName } from '../native/decode/column-schema';
import type { RecordColumns } from '../native/decode/types';

export { recordTypeName, RecordType } from '../native/abi/uapi';

/** Default rows per batch: 64k rows * 33 bytes/row ≈ 2.2 MB per message. */
export const DEFAULT_BATCH_ROWS = 65536;

export type ColumnName = WireColumnName;
/** The columns that go on the wire; the order is the order of the batch fields. */
export const COLUMN_NAMES: readonly ColumnName[] = WIRE_COLUMN_NAMES;

/** Column name → element constructor of the columns that go on the wire. */
export const COLUMN_TYPES = Object.fromEntries(COLUMN_NAMES.map((name) => [name, columnConstructor(name)])) as {
  readonly [K in ColumnName]: ColumnConstructor<K>;
};

/** The decoded columns a batch carries (RecordColumns without the host-only ring/offset). */
export type WireColumns = Pick<RecordColumns, ColumnName | 'length' | 'timeOriginNs'>;

/** The typed array of wire column K. */
export type WireColumnArray<K extends ColumnName> = ColumnArray<K>;

export type BatchBuffers = { readonly [K in ColumnName]: ArrayBuffer };
