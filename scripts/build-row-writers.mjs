// Writes the record columns into the decoder's hot row writers, from the column schema
// (native/decode/column-schema.ts: RECORD_COLUMNS, and PLAIN_SAMPLE_SOURCES, where each column's
// value comes from in a plain sample). The hot loops stay hand-written where they are; the part of
// each that lists the columns sits between a marker line and `// end row-writer`, and this script
// rewrites it: the column locals and the row's stores of the TypeScript fast loops (decode-ring.ts,
// scatter.ts), the column addresses and stores of the AssemblyScript kernels (kernels/), and where
// the jobs keep the column addresses (wasm/job-layout.ts). Written out as straight-line code, the
// same shape the hand-written loops had, so no writer got slower (a writer driven by the schema at
// run time could not be shown as fast).
//
// A marker: `// row-writer TEMPLATE key=value ...` (the values are the loop's own names: see each
// template). The files are committed as generated; `npm run build` runs this first (before the
// kernels are compiled from them), and row-writers.test.ts fails when a file is not what this gives.
// `node scripts/build-row-writers.mjs` runs it alone (from the repository's root).
import { build } from 'esbuild';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The files holding row-writer regions, relative to the repository's root. */
export const ROW_WRITER_FILES = [
  'native/decode/decode-ring.ts',
  'native/decode/scatter.ts',
  'native/decode/wasm/job-layout.ts',
  'native/decode/kernels/sample-run.ts',
  'native/decode/kernels/merge-scatter.ts',
];

const SCHEMA = 'native/decode/column-schema.ts';
const BEGIN = /^(\s*)\/\/ row-writer ([a-z-]+)((?: [A-Za-z]+=\S+)*)\s*$/;
const END = /^\s*\/\/ end row-writer\s*$/;
const GENERATED_NOTE = '// (generated from column-schema.ts by scripts/build-row-writers.mjs: edit the schema, then npm run build)';

/** Element kind → bytes per element. */
const WIDTH = { f64: 8, u32: 4, i32: 4, u16: 2, u8: 1 };
/** Element kind → the flat view a TypeScript fast loop stores through (FlatColumns: i32 columns through the u32 view, same bits). */
const FLAT_VIEW = { f64: 'f64', u32: 'w32', i32: 'w32', u16: 'w16', u8: 'w8' };
/** Element kind → the AssemblyScript store type (i32 columns stored as their u32 bits). */
const STORE_TYPE = { f64: 'f64', u32: 'u32', i32: 'u32', u16: 'u16', u8: 'u8' };

/** The schema as the templates read it: each column's name, element kind, source and index in the schema's order. */
function columnsOf(schema) {
  return Object.entries(schema.columns).map(([name, kind], index) => {
    const source = schema.sources[name];
    if (!source) throw new Error(`${SCHEMA}: column ${name} has no entry in PLAIN_SAMPLE_SOURCES`);
    if (!(kind in WIDTH)) throw new Error(`${SCHEMA}: column ${name} has element kind ${kind}, which no row writer stores`);
    return { name, kind, source, index };
  });
}

/** The columns a region writes: all but those whose source its `omit` names (e.g. omit=ring: the decoder fills the ring afterwards). */
function written(columns, params) {
  const omitted = new Set((params.omit ?? '').split(',').filter(Boolean));
  return columns.filter((column) => !omitted.has(column.source.from));
}

/**
 * The order a row's stores are written in, as the hand-written loops had it: first the columns not
 * read from a sample field (schema order), then each field's columns together, low word first,
 * fields in the order the schema first names them.
 */
function storeOrder(columns) {
  const fields = new Map();
  for (const column of columns) {
    if (column.source.from !== 'sample-word') continue;
    if (!fields.has(column.source.field)) fields.set(column.source.field, []);
    fields.get(column.source.field).push(column);
  }
  for (const group of fields.values()) group.sort((a, b) => a.source.word - b.source.word);
  return { others: columns.filter((column) => column.source.from !== 'sample-word'), fields: [...fields] };
}

function required(params, key, template) {
  const value = params[key];
  if (value === undefined) throw new Error(`row-writer ${template}: the marker lacks ${key}=`);
  return value;
}

/** Suffix of a column's local in the kernels: time → Time, ipHi → IpHi. */
function capitalized(name) {
  return name[0].toUpperCase() + name.slice(1);
}

/**
 * The sources whose value in a row is an expression the marker names, and the key naming it: time,
 * type (the record's type: PERF_RECORD_SAMPLE in the plain-sample loops), event, ring, o (the
 * record's byte offset in its ring). The other sources are read from the record, each language its way.
 */
const MARKER_KEY = { time: 'time', 'header-type': 'type', event: 'event', ring: 'ring', offset: 'o' };

function unknownSource(column) {
  return new Error(`${SCHEMA}: column ${column.name} has source ${column.source.from}, which no row writer knows`);
}

/**
 * The value of a plain sample's column in a TypeScript loop: MARKER_KEY's, or read through `words`
 * (the ring as u32) at o plus a sample field's offset (keys pidTid, cpu, ip), or from a word index
 * the region made a local of (`wordLocals`); misc: the header's second word, unless the loop has it.
 */
function tsValue(column, params, wordLocals, t) {
  const { source } = column;
  if (source.from in MARKER_KEY) return required(params, MARKER_KEY[source.from], t);
  const words = required(params, 'words', t);
  if (source.from === 'header-misc') return params.misc ?? `${words}[(${required(params, 'o', t)} >>> 2) + 1]`;
  if (source.from !== 'sample-word') throw unknownSource(column);
  const word = source.word ? ` + ${source.word}` : '';
  const local = wordLocals.get(source.field);
  if (local) return `${words}[${local}${word}]`;
  return `${words}[(${required(params, 'o', t)} + ${required(params, source.field, t)}) >>> 2${word}]`;
}

/** The value of a plain sample's column in a kernel: MARKER_KEY's, or loaded from the record at address p. */
function asValue(column, params) {
  const { source } = column;
  const t = 'as-store';
  if (source.from in MARKER_KEY) return required(params, MARKER_KEY[source.from], t);
  const p = required(params, 'p', t);
  if (source.from === 'header-misc') return params.misc ?? `load<u32>(${p}, 4)`;
  if (source.from !== 'sample-word') throw unknownSource(column);
  return `load<u32>(${p} + ${required(params, source.field, t)}${source.word ? `, ${4 * source.word}` : ''})`;
}

/** Each template: the lines of its region (without indentation), from the columns and the marker's keys. */
const TEMPLATES = {
  /** A TypeScript fast loop's locals: each column's row 0 as an index into its flat view (`at` from FlatColumns). */
  'ts-flat-at'(columns, params) {
    return written(columns, params).map(({ name }) => `const ${name}At = at.${name};`);
  },

  /** A TypeScript fast loop's stores of one row through the flat views (f64, w32, w16, w8) and the ts-flat-at locals. */
  'ts-flat-store'(columns, params) {
    const t = 'ts-flat-store';
    const row = required(params, 'row', t);
    const store = (column, wordLocals) => `${FLAT_VIEW[column.kind]}[${column.name}At + ${row}] = ${tsValue(column, params, wordLocals, t)};`;
    const { others, fields } = storeOrder(written(columns, params));
    const lines = others.map((column) => store(column, new Map()));
    for (const [field, group] of fields) {
      // A field read as two words (pid and tid, ip's halves) gets its word index once, as the hand-written loops had it.
      const wordLocals = new Map();
      if (group.length > 1) {
        wordLocals.set(field, `${field}Word`);
        lines.push(`const ${field}Word = (${required(params, 'o', t)} + ${required(params, field, t)}) >>> 2;`);
      }
      for (const column of group) lines.push(store(column, wordLocals));
    }
    return lines;
  },

  /** A TypeScript loop's typed arrays of the columns, one local each (`const pidColumn = out.pid;`). */
  'ts-typed-columns'(columns, params) {
    const from = required(params, 'from', 'ts-typed-columns');
    return written(columns, params).map(({ name }) => `const ${name}Column = ${from}.${name};`);
  },

  /**
   * A TypeScript loop's stores of one row through the ts-typed-columns locals, for a record that may
   * lack a sample field: a field whose offset is negative stores each of its columns' `absent` value
   * (the schema's; 'ring-cpu': ringCpu), so every column of every row is written (rows may land in
   * reused memory). A field's offset is relative to the record (fieldsFrom=o: o + offset) or, without
   * fieldsFrom, its byte offset in the ring; `pidTidWritten=-2` (any field) names an offset that says
   * the loop wrote that field's columns itself.
   */
  'ts-typed-store'(columns, params) {
    const t = 'ts-typed-store';
    const row = required(params, 'row', t);
    const words = required(params, 'words', t);
    const { others, fields } = storeOrder(written(columns, params));
    const lines = others.map((column) => `${column.name}Column[${row}] = ${tsValue(column, params, new Map(), t)};`);
    for (const [field, group] of fields) {
      const offset = required(params, field, t);
      const address = params.fieldsFrom ? `(${params.fieldsFrom} + ${offset}) >>> 2` : `${offset} >>> 2`;
      lines.push(`if (${offset} >= 0) {`, `  const ${field}Word = ${address};`);
      for (const c of group)
        lines.push(`  ${c.name}Column[${row}] = ${words}[${field}Word${c.source.word ? ` + ${c.source.word}` : ''}]${c.kind === 'i32' ? ' | 0' : ''};`);
      const writtenWhen = params[`${field}Written`];
      lines.push(writtenWhen === undefined ? '} else {' : `} else if (${offset} !== ${writtenWhen}) {`);
      for (const c of group) {
        if (c.source.absent === undefined) throw new Error(`${SCHEMA}: column ${c.name} does not say what it holds when its field is absent`);
        const value = c.source.absent === 'ring-cpu' ? required(params, 'ringCpu', t) : String(c.source.absent);
        lines.push(`  ${c.name}Column[${row}] = ${value};`);
      }
      lines.push('}');
    }
    return lines;
  },

  /** A kernel's locals: each column's row 0 address, read from the job's column addresses at `base` (job-columns). */
  'as-column-addresses'(columns, params) {
    const job = required(params, 'job', 'as-column-addresses');
    const base = required(params, 'base', 'as-column-addresses');
    return written(columns, params).map(({ name, index }) => `const c${capitalized(name)} = load<u32>(${job}, ${base} + ${4 * index});`);
  },

  /** A kernel's stores of one row through the as-column-addresses locals. */
  'as-store'(columns, params) {
    const row = required(params, 'row', 'as-store');
    const { others, fields } = storeOrder(written(columns, params));
    return [...others, ...fields.flatMap(([, group]) => group)].map((column) => {
      const width = WIDTH[column.kind];
      const address = width === 1 ? `c${capitalized(column.name)} + ${row}` : `c${capitalized(column.name)} + (${row} << ${Math.log2(width)})`;
      return `store<${STORE_TYPE[column.kind]}>(${address}, ${asValue(column, params)});`;
    });
  },

  /**
   * Where a job keeps its column addresses: `columns` at byte `at`, one u32 per record column in the
   * schema's order, and the job's size `bytes` after them (a multiple of 8, as its f64 fields need).
   */
  'job-columns'(columns, params) {
    const name = required(params, 'columns', 'job-columns');
    const at = Number(required(params, 'at', 'job-columns'));
    const bytes = required(params, 'bytes', 'job-columns');
    if (!Number.isInteger(at) || at % 4 !== 0) throw new Error(`row-writer job-columns: at=${params.at} is not a multiple of 4`);
    const end = Math.ceil((at + 4 * columns.length) / 8) * 8;
    return [
      `/** Byte address of row 0 of each record column, in the schema's order (${columns.map((c) => c.name).join(', ')}): u32 each. */`,
      `export const ${name} = ${at};`,
      `/** Bytes the job takes: to the end of its column addresses, rounded up to a multiple of 8. */`,
      `export const ${bytes} = ${end};`,
    ];
  },
};

function paramsOf(text) {
  const params = {};
  for (const pair of text.trim().split(/\s+/).filter(Boolean)) {
    const at = pair.indexOf('=');
    params[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return params;
}

/**
 * `text` (a file's contents) with every row-writer region written from `schema` ({ columns:
 * RECORD_COLUMNS, sources: PLAIN_SAMPLE_SOURCES }). `file` names the file in errors.
 */
export function writeRegions(text, schema, file) {
  const columns = columnsOf(schema);
  const lines = text.split('\n');
  const out = [];
  let regions = 0;
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]);
    const begin = BEGIN.exec(lines[i]);
    if (!begin) continue;
    const [, indent, template, keys] = begin;
    const write = TEMPLATES[template];
    if (!write) throw new Error(`${file}:${i + 1}: row-writer ${template} is no template (${Object.keys(TEMPLATES).join(', ')})`);
    let end = i + 1;
    while (end < lines.length && !END.test(lines[end])) {
      if (BEGIN.test(lines[end])) throw new Error(`${file}:${end + 1}: a row-writer region starts inside the one from line ${i + 1}`);
      end++;
    }
    if (end === lines.length) throw new Error(`${file}:${i + 1}: row-writer ${template} has no \`// end row-writer\``);
    out.push(`${indent}${GENERATED_NOTE}`);
    for (const line of write(columns, paramsOf(keys))) out.push(`${indent}${line}`);
    out.push(lines[end]);
    i = end;
    regions++;
  }
  if (regions === 0) throw new Error(`${file} has no row-writer region (scripts/build-row-writers.mjs lists it)`);
  return out.join('\n');
}

/** RECORD_COLUMNS and PLAIN_SAMPLE_SOURCES of the schema at `root`, read through esbuild (the schema is TypeScript). */
export async function loadSchema(root) {
  const bundled = await build({ entryPoints: [join(root, SCHEMA)], bundle: true, write: false, format: 'esm', platform: 'neutral', logLevel: 'silent' });
  const url = `data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`;
  const { RECORD_COLUMNS, PLAIN_SAMPLE_SOURCES } = await import(url);
  return { columns: RECORD_COLUMNS, sources: PLAIN_SAMPLE_SOURCES };
}

/** Rewrites every row-writer region under `root` from its schema; a file whose regions are already current is left alone. */
export async function buildRowWriters(root = '.') {
  const schema = await loadSchema(root);
  for (const file of ROW_WRITER_FILES) {
    const path = join(root, file);
    const before = readFileSync(path, 'utf8');
    const after = writeRegions(before, schema, file);
    if (after === before) continue;
    // Written whole and renamed into place: a build interrupted halfway leaves the previous file.
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, after, { mode: 0o644, flag: 'wx' });
    renameSync(temporary, path);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildRowWriters();
