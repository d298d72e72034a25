// A few tracepoint fields of many SAMPLE records, read straight from the ring bytes (thread states read five fields of
// every sched_switch). Where the RAW payload sits and how each field reads are worked out once per event, as parse
// info is per attr; per record only the header is checked and the variable-size fields before RAW (a READ group, a
// callchain) are stepped over. What it gives is decodeRecordAt's `fields.tracepoint[name]`, and it leaves out the
// records decodeRecordAt would give no tracepoint fields for (or throw on).

import type { EventDescription, RingCopy, TracepointField } from '../abi/snapshot';
import { ReadFormat, RecordType, Sample } from '../abi/uapi';
import { parseInfoFor, type ParseInfo } from './parse-info';
import { decodeRecordAt } from './record';
import { tracepointFieldReader, tracepointPayloadCheck, type TracepointFieldReader, type TracepointValue } from './tracepoint';
import type { DecodedSnapshot } from './types';

/**
 * Fills `out[k]` with field `names[k]` of the row's tracepoint payload (undefined: the format has no such field) and
 * returns true; false when decodeRecordAt would give the row no tracepoint fields. Never throws.
 */
export type RawFieldsReader = (row: number, out: (TracepointValue | undefined)[]) => boolean;

/** Sample fields after RAW whose size varies per record: events with one are read through decodeRecordAt. */
const VARIABLE_AFTER_RAW = Sample.BRANCH_STACK | Sample.REGS_USER | Sample.STACK_USER | Sample.REGS_INTR | Sample.AUX;
/** The u64 sample fields after RAW (WEIGHT_STRUCT takes WEIGHT's 8 bytes). */
const FIXED_AFTER_RAW = [Sample.DATA_SRC, Sample.TRANSACTION, Sample.PHYS_ADDR, Sample.CGROUP, Sample.DATA_PAGE_SIZE, Sample.CODE_PAGE_SIZE];

/** Where an event's samples hold their RAW payload: nowhere, at a place only decodeRecordAt finds, or a place stepped to. */
type EventLayout =
  | { readonly path: 'none' }
  | { readonly path: 'full' }
  | {
      readonly path: 'fast';
      readonly info: ParseInfo;
      /** Bytes of the sample fields after RAW, all of which must fit the record. */
      readonly tailBytes: number;
      readonly payloadFits: (view: DataView, raw: number, rawLength: number) => boolean;
    };

function layoutOf(event: EventDescription | undefined): EventLayout {
  const format = event?.tracepoint;
  if (!event || !format) return { path: 'none' };
  const info = parseInfoFor(event);
  if ((info.sampleType & Sample.RAW) === 0) return { path: 'none' };
  if ((info.sampleType & VARIABLE_AFTER_RAW) !== 0) return { path: 'full' };
  const weight = (info.sampleType & (Sample.WEIGHT | Sample.WEIGHT_STRUCT)) !== 0 ? 8 : 0;
  const tailBytes = weight + 8 * FIXED_AFTER_RAW.filter((bit) => (info.sampleType & bit) !== 0).length;
  return { path: 'fast', info, tailBytes, payloadFits: tracepointPayloadCheck(format) };
}

/**
 * The field of a tracepoint format that decodeTracepoint gives as `name`: it leaves out the common fields, and a later
 * field of the same name replaces an earlier one. Undefined when there is none.
 */
export function tracepointFieldNamed(event: EventDescription, name: string): TracepointField | undefined {
  return [...(event.tracepoint?.fields ?? [])].reverse().find((f) => f.name === name && !f.name.startsWith('common_'));
}

/** The u64 at `at` as a number when it is below 2^32 (every count that can fit a record is), else Infinity. */
function smallU64(view: DataView, at: number): number {
  return view.getUint32(at + 4, true) === 0 ? view.getUint32(at, true) : Infinity;
}

/**
 * Where the RAW payload of the SAMPLE at `offset` starts (its u32 size is the 4 bytes before), stepping over what
 * precedes it as decodeRecordAt reads it; -1 where decodeRecordAt would throw on the record.
 */
function payloadStart(view: DataView, offset: number, info: ParseInfo, tailBytes: number): number {
  if (offset + 8 > view.byteLength) return -1;
  const size = view.getUint16(offset + 6, true);
  const end = offset + size;
  if (size < 8 || end > view.byteLength || view.getUint32(offset, true) !== RecordType.SAMPLE) return -1;
  let at = offset + info.sample.fixedEnd;
  if (at > end) return -1;
  if (info.sampleType & Sample.READ) {
    if (info.readFormat & ReadFormat.GROUP) {
      if (at + 8 > end) return -1;
      const nr = smallU64(view, at);
      at += 8 + (info.readFormat & ReadFormat.TOTAL_TIME_ENABLED ? 8 : 0) + (info.readFormat & ReadFormat.TOTAL_TIME_RUNNING ? 8 : 0);
      if (at > end || nr > Math.floor((end - at) / info.readGroupEntrySize)) return -1;
      at += nr * info.readGroupEntrySize;
    } else {
      at += info.readSizeSingle;
      if (at > end) return -1;
    }
  }
  if (info.sampleType & Sample.CALLCHAIN) {
    if (at + 8 > end) return -1;
    const nr = smallU64(view, at);
    at += 8;
    if (nr > Math.floor((end - at) / 8)) return -1;
    at += nr * 8;
  }
  if (at + 4 > end) return -1;
  const length = view.getUint32(at, true);
  const start = at + 4;
  if (start + length + tailBytes > end) return -1;
  return start;
}

/** Where a row's RAW payload is (filled by a RawPayloadLocator): bytes [raw, raw + rawLength) of `bytes`, `view` over them. */
export interface PayloadPlace {
  bytes: Uint8Array;
  view: DataView;
  raw: number;
  rawLength: number;
}

/**
 * Finds a row's tracepoint payload in its ring's bytes, for a caller that reads the fields itself: 'fast' with `place`
 * filled (the payload fits its format: every inline field lies inside it); 'full' where only decodeRecordAt can tell
 * (its event's samples vary in size after RAW: rawFieldsReader reads those); 'none' where decodeRecordAt would give the
 * row no tracepoint fields (or throw on it). Never throws.
 */
export type RawPayloadLocator = (row: number, place: PayloadPlace) => 'fast' | 'full' | 'none';

/** A locator of the snapshot's tracepoint payloads, each event's layout worked out once. */
export function rawPayloadLocator(snapshot: DecodedSnapshot): RawPayloadLocator {
  const { ring: ringColumn, offset: offsetColumn, event: eventColumn, length } = snapshot.columns;
  const layouts = new Map<number, EventLayout>();
  const views = new Map<RingCopy, DataView>();
  return (row, place) => {
    if (!Number.isInteger(row) || row < 0 || row >= length) return 'none';
    const eventIndex = eventColumn[row];
    let layout = layouts.get(eventIndex);
    if (!layout) {
      layout = layoutOf(snapshot.events.find((e) => e.index === eventIndex));
      layouts.set(eventIndex, layout);
    }
    if (layout.path !== 'fast') return layout.path;
    const ring = snapshot.rings[ringColumn[row]];
    if (!ring) return 'none';
    let view = views.get(ring);
    if (!view) {
      view = new DataView(ring.bytes.buffer, ring.bytes.byteOffset, ring.bytes.length);
      views.set(ring, view);
    }
    const raw = payloadStart(view, offsetColumn[row], layout.info, layout.tailBytes);
    if (raw < 0) return 'none';
    const rawLength = view.getUint32(raw - 4, true);
    if (!layout.payloadFits(view, raw, rawLength)) return 'none';
    place.bytes = ring.bytes;
    place.view = view;
    place.raw = raw;
    place.rawLength = rawLength;
    return 'fast';
  };
}

/** A reader of fields `names` of the snapshot's tracepoint samples, its layouts worked out once per event. */
export function rawFieldsReader(snapshot: DecodedSnapshot, names: readonly string[]): RawFieldsReader {
  const locate = rawPayloadLocator(snapshot);
  const { event: eventColumn } = snapshot.columns;
  // Per event: per name, its reader, or null when the format has no such (non-common) field.
  const readersOf = new Map<number, readonly (TracepointFieldReader | null)[]>();
  const place: PayloadPlace = { bytes: new Uint8Array(0), view: new DataView(new ArrayBuffer(0)), raw: 0, rawLength: 0 };
  return (row, out) => {
    const path = locate(row, place);
    if (path === 'none') return false;
    if (path === 'full') {
      let fields: Record<string, TracepointValue> | undefined;
      try {
        fields = (decodeRecordAt(snapshot, row).fields as { tracepoint?: Record<string, TracepointValue> }).tracepoint;
      } catch {
        // a damaged record has no fields: it does not match
        return false;
      }
      if (!fields) return false;
      for (let k = 0; k < names.length; k++) out[k] = fields[names[k]];
      return true;
    }
    const eventIndex = eventColumn[row];
    let readers = readersOf.get(eventIndex);
    if (!readers) {
      const event = snapshot.events.find((e) => e.index === eventIndex)!;
      readers = names.map((name) => {
        const field = tracepointFieldNamed(event, name);
        return field ? tracepointFieldReader(field) : null;
      });
      readersOf.set(eventIndex, readers);
    }
    for (let k = 0; k < readers.length; k++) out[k] = readers[k]?.(place.bytes, place.view, place.raw, place.rawLength);
    return true;
  };
}
