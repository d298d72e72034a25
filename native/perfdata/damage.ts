// Records of a perf.data file whose framing is sound but whose contents are not (a callchain count
// larger than the record, a read block that does not fit...): the bulk walk files them as rows, and
// only the full decode of one record (JSON Lines, the perf.data and HTML writers, the details pane)
// finds the damage. Every record is decoded that way here, once, before any output is written, so
// that a damaged record either stops the decode with its file offset, or is left out of every
// output alike and counted, never half-written into one of them.

import { decodeSnapshot } from '../decode/columns';
import { DecodeError } from '../decode/errors';
import { decodeRecordAt } from '../decode/record';
import type { DecodedSnapshot } from '../decode/types';
import type { RawSnapshot, RingCopy } from '../abi/snapshot';
import { RecordType, recordTypeName } from '../abi/uapi';
import { sampleReaders, type SampleReader } from '../decode/sample-readers';
import { PerfDataError } from './format';
import type { PerfDataImport } from './reader';

/** A record whose full decode failed; the message names the record's and the bad field's file offsets. */
export class DamagedRecordError extends PerfDataError {
  override readonly name = 'DamagedRecordError';
  constructor(
    file: string,
    /** File offset of the bad field (the record's own when the decoder did not say). */
    fieldOffset: number,
    what: string,
    /** File offset of the damaged record's header. */
    readonly recordOffset: number,
    /** What the caller offers to do about it (the CLI: its --keep-going flag). */
    readonly hint?: string,
  ) {
    super(file, fieldOffset, what);
  }
}

/** What keepGoing left out: never silent, the CLI prints it and the HTML page shows it. */
export interface SkippedRecords {
  readonly count: number;
  /** File offset of the first damaged record in the file. */
  readonly firstOffset: number;
  /** Why the first one could not be decoded. */
  readonly firstReason: string;
}

export interface CheckedDecode {
  /** The snapshot the outputs are written from: without the skipped records. */
  readonly raw: RawSnapshot;
  readonly decoded: DecodedSnapshot;
  readonly skipped?: SkippedRecords;
}

export interface CheckOptions {
  /** Leave damaged records out (and count them) instead of throwing a DamagedRecordError for the first. */
  readonly keepGoing: boolean;
  /** Added to the DamagedRecordError thrown without keepGoing. */
  readonly hint?: string;
}

/** `skipped 3 damaged records (the first at offset 24184: ...)`: one phrase for stderr and the page's notes. */
export function describeSkipped(skipped: SkippedRecords): string {
  const records = skipped.count === 1 ? '1 damaged record' : `${skipped.count} damaged records`;
  return `skipped ${records} (the first at offset ${skipped.firstOffset}: ${skipped.firstReason})`;
}

/** Records read from a file (all of it, or one batch): their snapshot, and where each of its one ring's records was in the file. */
export interface RecordsOfFile {
  readonly raw: RawSnapshot;
  readonly fileOffsetOf: PerfDataImport['fileOffsetOf'];
}

/** The skipped records of two parts of one file as one count, whose first is the one earlier in the file. */
export function addSkipped(a: SkippedRecords | undefined, b: SkippedRecords | undefined): SkippedRecords | undefined {
  if (!a || !b) return a ?? b;
  const first = a.firstOffset <= b.firstOffset ? a : b;
  return { count: a.count + b.count, firstOffset: first.firstOffset, firstReason: first.firstReason };
}

interface Damage {
  readonly ring: number;
  readonly ringOffset: number;
  readonly fileOffset: number;
  readonly fieldOffset: number;
  readonly reason: string;
}

/**
 * Decodes an imported file and every record of it in full. With keepGoing, damaged records are
 * removed from the rings and the rest decoded again; else the first damaged record (in the file)
 * is a DamagedRecordError naming the file, the record's offset and the bad field's.
 */
export function decodeChecked(imported: RecordsOfFile, file: string, options: CheckOptions): CheckedDecode {
  const decoded = decodeSnapshot(imported.raw);
  const damage = findDamage(imported, decoded);
  if (damage.length === 0) return { raw: imported.raw, decoded };
  damage.sort((a, b) => a.fileOffset - b.fileOffset);
  const first = damage[0];
  if (!options.keepGoing) {
    throw new DamagedRecordError(file, first.fieldOffset, `damaged record at offset ${first.fileOffset}: ${first.reason}`, first.fileOffset, options.hint);
  }
  const raw: RawSnapshot = { ...imported.raw, rings: withoutRecords(imported.raw.rings, damage) };
  return { raw, decoded: decodeSnapshot(raw), skipped: { count: damage.length, firstOffset: first.fileOffset, firstReason: first.reason } };
}

function findDamage(imported: RecordsOfFile, decoded: DecodedSnapshot): Damage[] {
  const damage: Damage[] = [];
  const { ring, offset, kind, event } = decoded.columns;
  const readers = sampleReaders(decoded);
  const views = decoded.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
  for (let row = 0; row < decoded.columns.length; row++) {
    if (kind[row] === RecordType.SAMPLE) {
      const reader = readers.get(event[row]);
      if (reader?.inPlace && sampleFits(views[ring[row]], offset[row], reader)) continue;
    }
    try {
      decodeRecordAt(decoded, row);
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      const ringOffset = offset[row];
      // The reader's one ring maps back to the file; the field's offset is the same distance into the record there.
      const fileOffset = ring[row] === 0 ? (imported.fileOffsetOf(ringOffset) ?? ringOffset) : ringOffset;
      const bytes = decoded.rings[ring[row]].bytes;
      const size = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint16(ringOffset + 6, true);
      const inside = error.offset - ringOffset;
      const fieldOffset = inside >= 0 && inside < size ? fileOffset + inside : fileOffset;
      const type = recordTypeName(kind[row]);
      const field = error.what.startsWith(`${type}.`) ? error.what : `${type} ${error.what}`;
      const reason = `cannot decode ${field}${error.detail ? ` (${error.detail})` : ''}`;
      damage.push({ ring: ring[row], ringOffset, fileOffset, fieldOffset, reason });
    }
  }
  return damage;
}

/**
 * Whether a sample of an event the tables read in place (fixed fields, maybe a callchain) decodes: its fixed fields
 * fit the record, and so do its callchain's entries. The record decoder fails on exactly these (and then says why);
 * the samples that fit, nearly all of them, are not decoded whole just to learn that.
 */
function sampleFits(view: DataView, at: number, reader: SampleReader): boolean {
  if (at + 8 > view.byteLength) return false;
  const size = view.getUint16(at + 6, true);
  const fixedEnd = reader.info.sample.fixedEnd;
  if (size < fixedEnd || at + size > view.byteLength) return false;
  if (!reader.hasCallchain) return true;
  if (fixedEnd + 8 > size || view.getUint32(at + fixedEnd + 4, true) !== 0) return false;
  return view.getUint32(at + fixedEnd, true) <= Math.floor((size - fixedEnd - 8) / 8);
}

/** Copies of `rings` without the damaged records (each ring is whole records from offset 0, as the reader writes it). */
function withoutRecords(rings: readonly RingCopy[], damage: readonly Damage[]): RingCopy[] {
  return rings.map((ring, index) => {
    const drop = new Set(damage.filter((d) => d.ring === index).map((d) => d.ringOffset));
    if (drop.size === 0) return ring;
    const view = new DataView(ring.bytes.buffer, ring.bytes.byteOffset, ring.bytes.byteLength);
    const kept = new Uint8Array(ring.validBytes);
    let length = 0;
    for (let at = 0; at + 8 <= ring.validBytes;) {
      const size = view.getUint16(at + 6, true);
      if (size < 8) break; // cannot happen: the reader checked every record's framing
      if (!drop.has(at)) {
        kept.set(ring.bytes.subarray(at, at + size), length);
        length += size;
      }
      at += size;
    }
    const bytes = kept.subarray(0, length);
    return { ...ring, bytes, validBytes: length, dataSize: length, bytesWritten: BigInt(length) };
  });
}
