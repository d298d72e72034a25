// Decoding a tracepoint's RAW payload by the fields of its tracefs `format` file, the way
// libtraceevent does: scalars by size and signedness, fixed arrays, char arrays as strings,
// pointers as hex, and dynamic `__data_loc` / `__rel_loc` strings and arrays.

import { DecodeError } from './errors';
import type { TracepointField, TracepointFormat } from '../abi/snapshot';

/** A decoded field value: numbers up to 32 bits, bigint for 64-bit, hex strings for pointers and opaque bytes. */
export type TracepointValue = number | bigint | string | readonly (number | bigint | string)[];
export type TracepointValues = Record<string, TracepointValue>;

const utf8 = new TextDecoder('utf-8');

function isPointer(declaration: string): boolean {
  return declaration.includes('*');
}

/** Element size of a dynamic array from its declared element type (`__data_loc u32[] ids` -> 4); 0 when unknown. */
function dynamicElementSize(declaration: string): number {
  const match = /__(?:data|rel)_loc\s+(.+?)\s*\[\s*\]/.exec(declaration);
  if (!match) return 0;
  const type = match[1]
    .replace(/\b(const|volatile|signed|unsigned)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (type.includes('*')) return 8;
  switch (type) {
    case 'char':
    case 'u8':
    case 's8':
    case 'bool':
    case '__u8':
    case '__s8':
      return 1;
    case 'short':
    case 'u16':
    case 's16':
    case '__u16':
    case '__s16':
      return 2;
    case 'int':
    case 'u32':
    case 's32':
    case '__u32':
    case '__s32':
    case 'pid_t':
      return 4;
    case 'long':
    case 'long long':
    case 'u64':
    case 's64':
    case '__u64':
    case '__s64':
    case 'size_t':
    case 'ssize_t':
    case 'loff_t':
      return 8;
    default:
      return 0;
  }
}

function dynamicElementSigned(declaration: string): boolean {
  const match = /__(?:data|rel)_loc\s+(.+?)\s*\[\s*\]/.exec(declaration);
  if (!match) return false;
  const type = match[1];
  if (/\bunsigned\b/.test(type) || /\b(__)?u(8|16|32|64)\b/.test(type) || /\b(size_t|bool)\b/.test(type)) return false;
  return true;
}

function hexOf(bytes: Uint8Array): string {
  let out = '0x';
  for (let i = bytes.length - 1; i >= 0; i--) out += bytes[i].toString(16).padStart(2, '0');
  return out;
}

function readScalar(view: DataView, at: number, size: number, signed: boolean, pointer: boolean): number | bigint | string {
  if (pointer) {
    if (size === 8) return `0x${view.getBigUint64(at, true).toString(16)}`;
    if (size === 4) return `0x${view.getUint32(at, true).toString(16)}`;
  }
  switch (size) {
    case 1:
      return signed ? view.getInt8(at) : view.getUint8(at);
    case 2:
      return signed ? view.getInt16(at, true) : view.getUint16(at, true);
    case 4:
      return signed ? view.getInt32(at, true) : view.getUint32(at, true);
    case 8:
      return signed ? view.getBigInt64(at, true) : view.getBigUint64(at, true);
    default:
      // Odd sizes (bitmaps, structs): little-endian hex of the bytes.
      return hexOf(new Uint8Array(view.buffer, view.byteOffset + at, size));
  }
}

/** The string a char array field of `length` bytes at `start` holds: its bytes up to the first NUL, as UTF-8. */
export function stringAt(raw: Uint8Array, start: number, length: number): string {
  let nul = start;
  const stop = start + length;
  while (nul < stop && raw[nul] !== 0) nul++;
  return utf8.decode(raw.subarray(start, nul));
}

function decodeField(field: TracepointField, raw: Uint8Array, view: DataView): TracepointValue {
  const where = `tracepoint field ${field.name}`;
  if (field.offset < 0 || field.size < 0 || field.offset + field.size > raw.length) {
    throw new DecodeError(field.offset, where, `field (${field.offset}+${field.size}) lies outside the ${raw.length}-byte payload`);
  }
  if (field.location !== 'inline') {
    if (field.size < 4) throw new DecodeError(field.offset, where, `dynamic location needs 4 bytes, field has ${field.size}`);
    const word = view.getUint32(field.offset, true);
    const length = word >>> 16;
    const base = field.location === 'rel_loc' ? field.offset + field.size : 0;
    const start = base + (word & 0xffff);
    if (start + length > raw.length) {
      throw new DecodeError(field.offset, where, `dynamic data ${start}+${length} runs past the ${raw.length}-byte payload`);
    }
    const elementSize = dynamicElementSize(field.declaration);
    if (field.isString || (elementSize === 1 && /\bchar\b/.test(field.declaration))) return stringAt(raw, start, length);
    if (elementSize === 0) return hexOf(raw.subarray(start, start + length));
    const pointer = isPointer(field.declaration.replace(/\[\s*\]/, ''));
    const signed = dynamicElementSigned(field.declaration);
    const items: (number | bigint | string)[] = [];
    for (let at = start; at + elementSize <= start + length; at += elementSize) items.push(readScalar(view, at, elementSize, signed, pointer));
    return items;
  }
  if (field.isString) return stringAt(raw, field.offset, field.size);
  const pointer = isPointer(field.declaration);
  if (field.arrayLength > 0) {
    const elementSize = Math.floor(field.size / field.arrayLength);
    if (elementSize <= 0) return hexOf(raw.subarray(field.offset, field.offset + field.size));
    const items: (number | bigint | string)[] = [];
    for (let i = 0; i < field.arrayLength; i++) items.push(readScalar(view, field.offset + i * elementSize, elementSize, field.signed, pointer));
    return items;
  }
  return readScalar(view, field.offset, field.size, field.signed, pointer);
}

/** Reads one field of a payload that starts at byte `raw` of `bytes` (`view` over the same bytes), `rawLength` bytes long. */
export type TracepointFieldReader = (bytes: Uint8Array, view: DataView, raw: number, rawLength: number) => TracepointValue;

/**
 * A reader of `field` giving the value decodeTracepoint gives it, chosen once per field: inline strings and scalars are
 * read in place, anything else through the same decodeField on the payload. Bounds are the caller's: read only payloads
 * that tracepointPayloadCheck accepts.
 */
export function tracepointFieldReader(field: TracepointField): TracepointFieldReader {
  if (field.location === 'inline' && field.isString) return (bytes, _view, raw) => stringAt(bytes, raw + field.offset, field.size);
  if (field.location === 'inline' && field.arrayLength === 0) {
    const pointer = isPointer(field.declaration);
    return (_bytes, view, raw) => readScalar(view, raw + field.offset, field.size, field.signed, pointer);
  }
  return (bytes, _view, raw, rawLength) => {
    const payload = bytes.subarray(raw, raw + rawLength);
    return decodeField(field, payload, new DataView(payload.buffer, payload.byteOffset, payload.length));
  };
}

/**
 * Whether decodeTracepoint(format, payload) decodes a payload (true) or throws (false), without decoding it: every
 * non-common field inside the payload, and every dynamic one's data too. The fixed part is computed once per format.
 */
export function tracepointPayloadCheck(format: TracepointFormat): (view: DataView, raw: number, rawLength: number) => boolean {
  const fields = format.fields.filter((f) => !f.name.startsWith('common_'));
  if (fields.some((f) => f.offset < 0 || f.size < 0 || (f.location !== 'inline' && f.size < 4))) return () => false;
  const minLength = fields.reduce((max, f) => Math.max(max, f.offset + f.size), 0);
  const dynamic = fields.filter((f) => f.location !== 'inline');
  return (view, raw, rawLength) => {
    if (rawLength < minLength) return false;
    for (const f of dynamic) {
      const word = view.getUint32(raw + f.offset, true);
      if ((f.location === 'rel_loc' ? f.offset + f.size : 0) + (word & 0xffff) + (word >>> 16) > rawLength) return false;
    }
    return true;
  };
}

/**
 * Decodes the RAW payload of a tracepoint sample into `{ fieldName: value }`. Common fields
 * (`common_type`, `common_pid`, ...) are left out unless `includeCommon` is set, like perf script.
 */
export function decodeTracepoint(format: TracepointFormat, raw: Uint8Array, includeCommon = false): TracepointValues {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.length);
  const values: TracepointValues = {};
  for (const field of format.fields) {
    if (!includeCommon && field.name.startsWith('common_')) continue;
    values[field.name] = decodeField(field, raw, view);
  }
  return values;
}
