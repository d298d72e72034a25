// The tracing-data blob perf stores for tracepoint events (feature HEADER_TRACING_DATA in files,
// record HEADER_TRACING_DATA in pipes): tracefs' header_page/header_event, the ftrace formats, then
// every used event's `format` text grouped by system, kallsyms, printk formats and saved cmdlines.
// Layout learned from tools/perf/util/trace-event-info.c / trace-event-read.c.

import type { TracepointField, TracepointFormat } from '../abi/snapshot';
import { Cursor, encodeText } from './format';

/** "\x17\x08\x44tracing" */
const TRACING_MAGIC = [0x17, 0x08, 0x44, 0x74, 0x72, 0x61, 0x63, 0x69, 0x6e, 0x67];
const TRACING_VERSION = '0.6';

export interface TracingData {
  readonly version: string;
  readonly bigEndian: boolean;
  readonly longSize: number;
  readonly pageSize: number;
  readonly headerPage: string;
  readonly headerEvent: string;
  readonly ftraceFormats: readonly string[];
  /** Event format texts per system, in file order. */
  readonly systems: readonly { readonly system: string; readonly formats: readonly string[] }[];
  readonly kallsyms: string;
  readonly printk: string;
  readonly savedCmdlines: string;
  /** Bytes the blob occupied (pipe mode needs it to find the next record). */
  readonly byteLength: number;
}

/** Parses the blob starting at the cursor's position; the cursor ends just after it. */
export function parseTracingData(cursor: Cursor): TracingData {
  const start = cursor.pos;
  const magic = cursor.take(TRACING_MAGIC.length, 'tracing data magic');
  if (!TRACING_MAGIC.every((byte, i) => magic[i] === byte))
    cursor.fail('tracing data does not start with the "\\x17\\x08\\x44tracing" magic', cursor.absolute - magic.length);
  const version = cursor.cString('tracing data version');
  const bigEndian = cursor.u8('endianness flag') !== 0;
  const longSize = cursor.u8('long size');
  // The rest of the blob is in the recording machine's byte order.
  const inner = new Cursor(cursor.bytes, !bigEndian, cursor.file, cursor.base, cursor.context);
  inner.pos = cursor.pos;
  const pageSize = inner.u32('page size');
  const expectName = (name: string) => {
    const at = inner.absolute;
    const got = inner.cString(`${name} tag`);
    if (got !== name) inner.fail(`expected "${name}", found "${got.slice(0, 40)}"`, at);
  };
  const sizedText = (what: string, sizeBytes: 4 | 8) => {
    const size = sizeBytes === 8 ? inner.u64Number(`${what} size`, inner.remaining) : inner.u32(`${what} size`);
    return decodeLatin(inner.take(size, what));
  };
  expectName('header_page');
  const headerPage = sizedText('header_page', 8);
  expectName('header_event');
  const headerEvent = sizedText('header_event', 8);
  const ftraceCount = inner.u32('ftrace format count');
  const ftraceFormats: string[] = [];
  for (let i = 0; i < ftraceCount; i++) ftraceFormats.push(sizedText(`ftrace format ${i}`, 8));
  const systemCount = inner.u32('event system count');
  const systems: { system: string; formats: string[] }[] = [];
  for (let s = 0; s < systemCount; s++) {
    const system = inner.cString(`event system ${s} name`);
    const count = inner.u32(`event count of system ${system}`);
    const formats: string[] = [];
    for (let i = 0; i < count; i++) formats.push(sizedText(`${system} event format ${i}`, 8));
    systems.push({ system, formats });
  }
  const kallsyms = sizedText('kallsyms', 4);
  const printk = sizedText('printk formats', 4);
  // Saved cmdlines exist from version 0.6 on.
  const savedCmdlines = parseFloat(version) >= 0.6 && inner.remaining >= 8 ? sizedText('saved cmdlines', 8) : '';
  cursor.pos = inner.pos;
  return {
    version,
    bigEndian,
    longSize,
    pageSize,
    headerPage,
    headerEvent,
    ftraceFormats,
    systems,
    kallsyms,
    printk,
    savedCmdlines,
    byteLength: cursor.pos - start,
  };
}

function decodeLatin(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

export interface TracingDataInput {
  readonly pageSize: number;
  readonly headerPage: string;
  readonly headerEvent: string;
  readonly formats: readonly TracepointFormat[];
}

/** Builds a version-0.6 little-endian tracing-data blob holding the given event formats. */
export function buildTracingData(input: TracingDataInput): Uint8Array {
  const parts: Uint8Array[] = [];
  const push = (bytes: Uint8Array) => parts.push(bytes);
  const u32 = (value: number) => {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, value, true);
    push(bytes);
  };
  const u64 = (value: number) => {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(value), true);
    push(bytes);
  };
  const cString = (text: string) => {
    push(encodeText(text));
    push(new Uint8Array(1));
  };
  const sized = (text: string) => {
    const bytes = encodeText(text);
    u64(bytes.length);
    push(bytes);
  };
  push(Uint8Array.from(TRACING_MAGIC));
  cString(TRACING_VERSION);
  push(Uint8Array.of(0, 8)); // little endian, 8-byte long
  u32(input.pageSize);
  cString('header_page');
  sized(input.headerPage);
  cString('header_event');
  sized(input.headerEvent);
  u32(0); // no ftrace formats
  const bySystem = new Map<string, TracepointFormat[]>();
  for (const format of input.formats) {
    const list = bySystem.get(format.system) ?? [];
    if (!list.some((f) => f.id === format.id)) list.push(format);
    bySystem.set(format.system, list);
  }
  u32(bySystem.size);
  for (const [system, formats] of bySystem) {
    cString(system);
    u32(formats.length);
    for (const format of formats) sized(formatToText(format));
  }
  u32(0); // kallsyms: perf reads /proc/kallsyms itself
  u32(0); // printk formats
  u64(0); // saved cmdlines
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Writes a TracepointFormat back as the text tracefs prints in `events/<sys>/<name>/format`. */
export function formatToText(format: TracepointFormat): string {
  const line = (field: TracepointField) => `\tfield:${field.declaration};\toffset:${field.offset};\tsize:${field.size};\tsigned:${field.signed ? 1 : 0};\n`;
  const common = format.fields.filter((field) => field.name.startsWith('common_'));
  const own = format.fields.filter((field) => !field.name.startsWith('common_'));
  return (
    `name: ${format.name}\nID: ${format.id}\nformat:\n` + common.map(line).join('') + '\n' + own.map(line).join('') + `\nprint fmt: ${format.printFormat}\n`
  );
}

/** The standard x86_64/aarch64 header_page text (struct buffer_data_page), used when tracefs is not at hand. */
export const DEFAULT_HEADER_PAGE =
  '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n' +
  '\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n' +
  '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n' +
  '\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n';

export const DEFAULT_HEADER_EVENT =
  '# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n' +
  '\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n';
