// Parser for a tracefs `format` file (events/SYSTEM/NAME/format). Pure: no node imports, so the
// perf.data reader can run it on the format texts embedded in a file's tracing-data section,
// and the webview can run it too.
//
//   name: sched_switch
//   ID: 372
//   format:
//   \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
//   \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
//   \tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;
//
//   print fmt: "...", REC->prev_comm, ...

import type { TracepointField, TracepointFormat } from '../abi/snapshot';

export class TracepointFormatError extends Error {
  override readonly name = 'TracepointFormatError';
  constructor(
    message: string,
    readonly lineNumber: number,
  ) {
    super(`tracepoint format line ${lineNumber}: ${message}`);
  }
}

const FIELD_LINE = /^\s*field:(.*?);\s*offset:(\d+);\s*size:(\d+);(?:\s*signed:(\d+);)?\s*$/;
// The declaration's last identifier is the field name, optionally followed by [N] (N may be a macro).
const DECLARATION = /^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[([^\]]*)\])?\s*$/;

/**
 * Parses format text into a TracepointFormat. `system` is not part of the text (it is the
 * directory name in tracefs, or stored beside the text in perf.data), so the caller passes it.
 */
export function parseTracepointFormat(text: string, system: string = ''): TracepointFormat {
  let name: string | undefined;
  let id: number | undefined;
  let printFormat = '';
  const fields: TracepointField[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const lineNumber = index + 1;
    if (line.startsWith('name:')) {
      name = line.slice(5).trim();
    } else if (line.startsWith('ID:')) {
      const value = line.slice(3).trim();
      if (!/^\d+$/.test(value)) throw new TracepointFormatError(`ID '${value}' is not a number`, lineNumber);
      id = Number(value);
    } else if (line.startsWith('print fmt:')) {
      // The print format is the rest of the text (it never spans lines today, but keep it whole if it does).
      printFormat = [line.slice('print fmt:'.length).trim(), ...lines.slice(index + 1)].join('\n').trimEnd();
      break;
    } else if (/^\s*field/.test(line)) {
      fields.push(parseFieldLine(line, lineNumber));
    } else if (line.trim() !== '' && line.trim() !== 'format:') {
      throw new TracepointFormatError(`unexpected line '${line.trim()}'`, lineNumber);
    }
  }
  if (name === undefined || name === '') throw new TracepointFormatError('no "name:" line', 1);
  if (id === undefined) throw new TracepointFormatError('no "ID:" line', 1);
  return { system, name, id, fields, printFormat };
}

function parseFieldLine(line: string, lineNumber: number): TracepointField {
  const match = FIELD_LINE.exec(line);
  if (!match) throw new TracepointFormatError(`malformed field line '${line.trim()}'`, lineNumber);
  const declaration = match[1].trim();
  const offset = Number(match[2]);
  const size = Number(match[3]);
  const signed = match[4] === '1';

  let location: TracepointField['location'] = 'inline';
  let rest = declaration;
  if (rest.startsWith('__data_loc ')) {
    location = 'data_loc';
    rest = rest.slice('__data_loc '.length);
  } else if (rest.startsWith('__rel_loc ')) {
    location = 'rel_loc';
    rest = rest.slice('__rel_loc '.length);
  }

  if (location !== 'inline') {
    // `__data_loc char[] name`: the element type carries the empty brackets, the name comes last.
    // `__data_loc cpumask_t cpumask` (ipi:ipi_send_cpumask): a dynamic bitmask, no brackets.
    const dynamic = /^(.*?)\s*(?:\[\s*\]\s*|\s)([A-Za-z_][A-Za-z0-9_]*)$/.exec(rest);
    if (!dynamic) throw new TracepointFormatError(`malformed ${location === 'data_loc' ? '__data_loc' : '__rel_loc'} field '${declaration}'`, lineNumber);
    if (size !== 4) throw new TracepointFormatError(`${dynamic[2]}: a dynamic-location field is a u32, size ${size}`, lineNumber);
    return { name: dynamic[2], declaration, offset, size, signed, arrayLength: 0, location, isString: isCharType(dynamic[1]) };
  }

  const parts = DECLARATION.exec(rest);
  if (!parts || (parts[1].trim() === '' && !rest.includes('*'))) {
    throw new TracepointFormatError(`cannot find the type and name in '${declaration}'`, lineNumber);
  }
  const type = parts[1].trim();
  const fieldName = parts[2];
  const bracket = parts[3];
  let arrayLength = 0;
  let isString = false;
  if (bracket !== undefined) {
    const isPointerArray = type.includes('*');
    isString = !isPointerArray && isCharType(type);
    if (/^\d+$/.test(bracket.trim())) arrayLength = Number(bracket.trim());
    else if (isString)
      arrayLength = size; // `char comm[TASK_COMM_LEN]` on old kernels: one byte per char
    else arrayLength = 0;
  }
  if (offset > 0xffff || size > 0xffff) throw new TracepointFormatError(`${fieldName}: offset ${offset} / size ${size} out of range`, lineNumber);
  return { name: fieldName, declaration, offset, size, signed, arrayLength, location, isString };
}

/** `char`, `const char`, `signed char`, `unsigned char`? libtraceevent prints char arrays as strings, but not u8 arrays. */
function isCharType(type: string): boolean {
  const bare = type.replace(/\b(const|volatile|signed|unsigned)\b/g, '').trim();
  return bare === 'char' && !/\bunsigned\b/.test(type);
}
