// Field filter: which rows have a decoded field of a given value (the page cannot know; it has columns
// only), answering the page's fieldFilterRequest. Pure: decodes rows of the snapshot it is given.

import type { DecodedSnapshot } from '../native/decode/types';
import { decodeRecordAt } from '../native/decode/record';
import { rawFieldsReader } from '../native/decode/raw-fields';
import type { TracepointValue } from '../native/decode/tracepoint';
import { RecordType, Sample } from '../native/abi/uapi';
import type { FieldFilterOp } from '../shared/protocol';
import { toJsonValue } from './messages';

/** Sample fields by the sample_type bit that puts them in the record (names as decodeRecordAt gives them). */
const SAMPLE_FIELDS: readonly (readonly [number, string])[] = [
  [Sample.IDENTIFIER, 'identifier'],
  [Sample.IP, 'ip'],
  [Sample.TID, 'pid'],
  [Sample.TID, 'tid'],
  [Sample.TIME, 'time'],
  [Sample.ADDR, 'addr'],
  [Sample.ID, 'id'],
  [Sample.STREAM_ID, 'streamId'],
  [Sample.CPU, 'cpu'],
  [Sample.PERIOD, 'period'],
  [Sample.WEIGHT, 'weight'],
  [Sample.DATA_SRC, 'dataSrc'],
  [Sample.TRANSACTION, 'transaction'],
  [Sample.PHYS_ADDR, 'physAddr'],
  [Sample.CGROUP, 'cgroup'],
  [Sample.DATA_PAGE_SIZE, 'dataPageSize'],
  [Sample.CODE_PAGE_SIZE, 'codePageSize'],
];
/** Shown (and so substring-matched) as hex, as in the details pane. */
const HEX_FIELDS: ReadonlySet<string> = new Set(['ip', 'addr']);

const NO_FIELD = 0,
  TRACEPOINT_FIELD = 1,
  SAMPLE_FIELD = 2;

/** 0x-hex or decimal (optionally negative) integer text as a bigint, else null. */
export function parseIntegerText(text: string): bigint | null {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return BigInt(t);
  if (/^0x[0-9a-f]+$/i.test(t)) return BigInt(t);
  if (/^-0x[0-9a-f]+$/i.test(t)) return -BigInt(t.slice(1));
  return null;
}

/**
 * Compare one decoded value: `=` is exact (integers numerically, so 0x10 = 16; strings byte-exact),
 * `~` a case-insensitive substring of the value as the details pane shows it.
 */
export function fieldValueMatches(v: unknown, op: FieldFilterOp, value: string, hexShown = false): boolean {
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) {
    const n = BigInt(v);
    if (op === '=') {
      const want = parseIntegerText(value);
      return want !== null && want === n;
    }
    const shown = hexShown && n >= 0n ? '0x' + n.toString(16) : n.toString();
    return shown.includes(value.toLowerCase());
  }
  if (typeof v === 'number') return op === '=' ? Number(value) === v : String(v).includes(value.toLowerCase());
  if (typeof v === 'string') return op === '=' ? v === value : v.toLowerCase().includes(value.toLowerCase());
  if (v === null || v === undefined) return false;
  const json = toJsonValue(v);
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  return op === '=' ? text === value : text.toLowerCase().includes(value.toLowerCase());
}

/**
 * Snapshot-local rows (ascending) of SAMPLE records whose decoded field `name` matches. Only rows of
 * events that carry such a field are decoded: tracepoint fields (from the event's format) first,
 * read in place from the ring bytes (rawFieldsReader gives the value decodeRecordAt would, without
 * decoding the rest of the record: 3-4x faster on 200k sys_enter_openat samples), then sample
 * fields selected by the attr's sample_type. Records that fail to decode do not match.
 */
export function rowsMatchingField(snapshot: DecodedSnapshot, name: string, op: FieldFilterOp, value: string): Uint32Array {
  const source = new Uint8Array(snapshot.events.length);
  for (let i = 0; i < snapshot.events.length; i++) {
    const e = snapshot.events[i];
    if (e.tracepoint?.fields.some((f) => f.name === name)) source[i] = TRACEPOINT_FIELD;
    else if (SAMPLE_FIELDS.some(([bit, field]) => field === name && (e.attr.sampleType & bit) !== 0)) source[i] = SAMPLE_FIELD;
  }
  const { kind, event, length } = snapshot.columns;
  const out = new Uint32Array(length);
  let count = 0;
  if (!source.some((s) => s !== NO_FIELD)) return out.slice(0, 0);
  const tracepointField = rawFieldsReader(snapshot, [name]);
  const read: (TracepointValue | undefined)[] = [undefined];
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE) continue;
    const from = event[row] < source.length ? source[event[row]] : NO_FIELD;
    if (from === NO_FIELD) continue;
    let v: unknown;
    if (from === TRACEPOINT_FIELD) {
      if (!tracepointField(row, read)) continue;
      v = read[0];
    } else {
      try {
        v = (decodeRecordAt(snapshot, row).fields as Record<string, unknown>)[name];
      } catch {
        // a record the decoder cannot read has no field to match: the filter leaves it out
        continue;
      }
    }
    if (fieldValueMatches(v, op, value, from === SAMPLE_FIELD && HEX_FIELDS.has(name))) out[count++] = row;
  }
  return out.slice(0, count);
}
