// A few tracepoint fields of many SAMPLE records, read straight from the ring bytes (thread states read five fields of
// every sched_switch). Where the RAW payload sits and how each field reads are worked out once per event, as parse
// info is per attr; per record only the header is checked and the variable-size fields before RAW (a READ group, a
// callchain) are stepped over. What it gives is decodeRecordAt's `fields.tracepoint[name]`, and it leaves out the
// records decodeRecordAt would give no tracepoint fields for (or throw on).

import type { EventDescription, RingCopy } from '../abi/snapshot';
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

type EventPlan =
  | { readonly path: 'none' }
  | { readonly path: 'full'; readonly names: readonly string[] }
  | {
      readonly path: 'fast';
      readonly info: ParseInfo;
      /** Bytes of the sample fields after RAW, all of which must fit the record. */
      readonly tailBytes: number;
      readonly payloadFits: (view: DataView, raw: number, rawLength: number) => boolean;
      /** Per name: its reader, or null when the format has no such (non-common) field. */
      readonly readers: readonly (TracepointFieldReader | null)[];
    };

function planOf(event: EventDescription | undefined, names: readonly string[]): EventPlan {
  const format = event?.tracepoint;
  if (!event || !format) return { path: 'none' };
  const info = parseInfoFor(event);
  if ((info.sampleType & Sample.RAW) === 0) return { path: 'none' };
  if ((info.sampleType & VARIABLE_AFTER_RAW) !== 0) return { path: 'full', names };
  const weight = (info.sampleType & (Sample.WEIGHT | Sample.WEIGHT_STRUCT)) !== 0 ? 8 : 0;
  const tailBytes = weight + 8 * FIXED_AFTER_RAW.filter((bit) => (info.sampleType & bit) !== 0).length;
  // decodeTracepoint leaves out the common fields, and a later field of the same name replaces an earlier one.
  const readers = names.map((name) => {
    const field = [...format.fields].reverse().find((f) => f.name === name && !f.name.startsWith('common_'));
    return field ? tracepointFieldReader(field) : null;
  });
  return { path: 'fast', info, tailBytes, payloadFits: tracepointPayloadCheck(format), readers };
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

/** A reader of fields `names` of the snapshot's tracepoint samples, its layouts worked out once per event. */
export function rawFieldsReader(snapshot: DecodedSnapshot, names: readonly string[]): RawFieldsReader {
  const { ring: ringColumn, offset: offsetColumn, event: eventColumn, length } = snapshot.columns;
  const plans = new Map<number, EventPlan>();
  const views = new Map<RingCopy, DataView>();
  return (row, out) => {
    if (!Number.isInteger(row) || row < 0 || row >= length) return false;
    const eventIndex = eventColumn[row];
    let plan = plans.get(eventIndex);
    if (!plan) {
      plan = planOf(
        snapshot.events.find((e) => e.index === eventIndex),
        names,
      );
      plans.set(eventIndex, plan);
    }
    if (plan.path === 'none') return false;
    if (plan.path === 'full') {
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
    const ring = snapshot.rings[ringColumn[row]];
    if (!ring) return false;
    let view = views.get(ring);
    if (!view) {
      view = new DataView(ring.bytes.buffer, ring.bytes.byteOffset, ring.bytes.length);
      views.set(ring, view);
    }
    const raw = payloadStart(view, offsetColumn[row], plan.info, plan.tailBytes);
    if (raw < 0) return false;
    const rawLength = view.getUint32(raw - 4, true);
    if (!plan.payloadFits(view, raw, rawLength)) return false;
    const readers = plan.readers;
    for (let k = 0; k < readers.length; k++) out[k] = readers[k]?.(ring.bytes, view, raw, rawLength);
    return true;
  };
}
