// Every row writer of plain samples against the schema's declaration of where each column's value
// comes from (PLAIN_SAMPLE_SOURCES): the sample run of one ring in JavaScript and in WebAssembly, the
// keyed scatter of several rings and the merge of several rings. Each decodes into memory that a
// previous decode left filled with garbage, so a writer that forgets a column leaves garbage behind
// and fails here, and a column added to the schema fails here until every writer writes it.

import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sample } from '../abi/uapi';
import type { RingCopy } from '../abi/snapshot';
import { ColumnArena } from './arena';
import type { SnapshotInput } from './assemble';
import {
  ELEMENT_ARRAYS,
  PLAIN_SAMPLE_SOURCES,
  RECORD_COLUMNS,
  RECORD_COLUMN_NAMES,
  newColumn,
  type ElementKind,
  type PlainSampleSource,
  type RecordColumnName,
} from './column-schema';
import { decodeSnapshot } from './columns';
import { parseInfoFor } from './parse-info';
import { attrOf, eventOf, prng, ringFromRecords, sampleRecord } from './test-records';
import type { DecodedSnapshot, RecordColumns } from './types';
import { decodableCopyOf, hasRoom, returnRoom } from './wasm/copy-room';
import { inSnapshotMemory, mergedInMemory } from './wasm/test-memory';
import { DecodePool } from '../decode-pool/pool';

const PLAIN = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const TIME_BASE = 1_700_000_000_000_000_000n;

/**
 * `rings` flight-recorder rings of plain samples of two events (runs of one event, then the other;
 * with `oneEvent`, three ids of one event), every field a distinct value with high bits set (negative
 * pids, kernel ips), times interleaved across rings.
 */
function plainSamples(rings: number, perRing: number, seed: number, oneEvent = false): SnapshotInput {
  const random = prng(seed);
  const events = oneEvent
    ? [eventOf(0, attrOf(PLAIN), [41n, 42n, 43n], 'only')]
    : [eventOf(0, attrOf(PLAIN), [41n, 42n], 'first'), eventOf(1, attrOf(PLAIN), [43n], 'second')];
  const copies: RingCopy[] = [];
  for (let r = 0; r < rings; r++) {
    const records: Uint8Array[] = [];
    let time = TIME_BASE + BigInt(r);
    let id = 41n;
    for (let i = 0; i < perRing; i++) {
      if (random() < 0.05) id = id === 43n ? 41n + BigInt(Math.floor(random() * 2)) : 43n;
      time += BigInt(1 + Math.floor(random() * 5000));
      const pid = random() < 0.1 ? -1 : 1000 + r * 100 + (i % 7);
      records.push(
        sampleRecord(
          PLAIN,
          { id, ip: 0xffff_ffff_8100_0000n + BigInt(i * 16 + r), pid, tid: pid + (i % 3), time, cpu: r, period: 1n },
          i % 2 === 0 ? 2 : 1 | 0x4000,
        ),
      );
    }
    const dataSize = 1 << Math.ceil(Math.log2(records.reduce((sum, record) => sum + record.length, 0) + 64));
    copies.push(ringFromRecords(records, dataSize, 'backward', { ringId: r, cpu: r }));
  }
  return { events, rings: copies };
}

/** Column `name` of `row` as the schema's declaration says a writer must store it, read from the record's own bytes. */
function declaredValue(snapshot: DecodedSnapshot, input: SnapshotInput, name: RecordColumnName, row: number): number {
  const { columns } = snapshot;
  const r = columns.ring[row];
  const o = columns.offset[row];
  const view = new DataView(snapshot.rings[r].bytes.buffer, snapshot.rings[r].bytes.byteOffset);
  const id = view.getBigUint64(o + 8, true);
  const event = input.events.find((candidate) => candidate.ids.includes(id));
  assert.ok(event, `row ${row}: ring ${r} offset ${o} holds a sample of id ${id}, which no event has`);
  const layout = parseInfoFor(event).sample;
  const source: PlainSampleSource = PLAIN_SAMPLE_SOURCES[name];
  switch (source.from) {
    case 'time':
      return Number(view.getBigUint64(o + layout.time, true) - columns.timeOriginNs);
    case 'header-type':
      return view.getUint32(o, true);
    case 'header-misc':
      return view.getUint16(o + 4, true);
    case 'event':
      return event.index;
    case 'sample-word':
      return view.getUint32(o + layout[source.field] + 4 * source.word, true);
    case 'ring':
      return r;
    case 'offset':
      return o;
  }
}

/** Rows whose column differs from what the declaration gives (as the column's element kind stores it), at most `limit`. */
function undeclaredRows(snapshot: DecodedSnapshot, input: SnapshotInput, limit = 10): string[] {
  const { columns } = snapshot;
  const wrong: string[] = [];
  for (const name of RECORD_COLUMN_NAMES) {
    const want = newColumn(name, 1);
    const column = columns[name] as ArrayLike<number>;
    for (let row = 0; row < columns.length && wrong.length < limit; row++) {
      want[0] = declaredValue(snapshot, input, name, row);
      if (!Object.is(column[row], want[0])) wrong.push(`${name}[${row}]: ${column[row]}, declared ${want[0]}`);
    }
  }
  return wrong;
}

/** Every record of every ring is one row (no row twice, none lost), oldest first. */
function assertEveryRecordOnce(snapshot: DecodedSnapshot, perRing: number, what: string): void {
  const { columns } = snapshot;
  assert.equal(columns.length, snapshot.rings.length * perRing, what);
  const seen = new Set<number>();
  for (let row = 0; row < columns.length; row++) seen.add(columns.ring[row] * 2 ** 32 + columns.offset[row]);
  assert.equal(seen.size, columns.length, `${what}: every row a record of its own`);
  for (let row = 1; row < columns.length; row++) assert.ok(columns.time[row - 1] <= columns.time[row], `${what}: row ${row} oldest first`);
}

/** Fills every column with 0xa5 bytes, values no writer stores for these samples. */
function fillWithGarbage(columns: RecordColumns): void {
  for (const name of RECORD_COLUMN_NAMES) {
    const column = columns[name];
    new Uint8Array(column.buffer, column.byteOffset, column.byteLength).fill(0xa5);
  }
}

describe('decode/row-writers: every writer of plain samples stores what the column schema declares', () => {
  const perRing = 3000;

  for (const [label, rings, options] of [
    ['the sample run of one ring (JavaScript)', 1, {}],
    ['the keyed scatter of several rings (JavaScript)', 4, {}],
    ['the merge of several rings (JavaScript)', 4, { scatter: false }],
  ] as const) {
    it(`${label}, into reused memory left full of garbage`, () => {
      const arena = new ColumnArena();
      for (let seed = 1; seed <= 4; seed++) {
        const input = plainSamples(rings, perRing, seed);
        const first = decodeSnapshot(input, { arena, ...options });
        assert.deepEqual(first.anomalies, [], `seed ${seed}`);
        fillWithGarbage(first.columns);
        assert.ok(arena.recycle(first.columns), `seed ${seed}: the arena takes its columns back`);
        const again = decodeSnapshot(input, { arena, ...options });
        assert.equal(again.columns.time.buffer, first.columns.time.buffer, `seed ${seed}: decoded into the garbage`);
        assertEveryRecordOnce(again, perRing, `seed ${seed}`);
        assert.deepEqual(undeclaredRows(again, input), [], `seed ${seed}`);
        arena.recycle(again.columns);
      }
    });
  }

  it('the sample run of one ring in WebAssembly (a copy decoded in its room), into a room left full of garbage', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const plain = plainSamples(1, perRing, seed);
      const bytes = decodableCopyOf(plain.rings[0].bytes);
      assert.ok(hasRoom(bytes), 'the copy got a WebAssembly memory');
      const input = { ...plain, rings: [{ ...plain.rings[0], bytes }] };
      const first = decodeSnapshot(input);
      assert.equal(first.columns.time.buffer, bytes.buffer, `seed ${seed}: decoded in the room`);
      fillWithGarbage(first.columns);
      assert.ok(returnRoom(first.columns), `seed ${seed}: the room takes its columns back`);
      const again = decodeSnapshot(input);
      assert.equal(again.columns.time.buffer, bytes.buffer, `seed ${seed}: decoded in the room again`);
      assertEveryRecordOnce(again, perRing, `seed ${seed}`);
      assert.deepEqual(undeclaredRows(again, input), [], `seed ${seed}`);
      returnRoom(again.columns);
    }
  });

  it('the merge of several rings in WebAssembly (a snapshot memory), into its output set left full of garbage', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const input = inSnapshotMemory(plainSamples(4, perRing, seed, true), 2);
      const first = decodeSnapshot(input);
      assert.ok(mergedInMemory(first), `seed ${seed}: merged in the memory`);
      fillWithGarbage(first.columns);
      assert.ok(returnRoom(first.columns), `seed ${seed}: the memory takes its output set back`);
      const again = decodeSnapshot(input);
      assert.equal(again.columns.time.buffer, first.columns.time.buffer, `seed ${seed}: merged into the garbage`);
      assertEveryRecordOnce(again, perRing, `seed ${seed}`);
      assert.deepEqual(undeclaredRows(again, input), [], `seed ${seed}`);
      returnRoom(again.columns);
    }
  });

  it('the decode pool (keyed and merged as WebAssembly on its workers), into an output set left full of garbage', async () => {
    const pool = new DecodePool({ minWorkerBytes: 0, minMergeRows: 0, parallelWhen: 'always' });
    try {
      for (let seed = 1; seed <= 4; seed++) {
        const input = inSnapshotMemory(plainSamples(4, perRing, seed, true), 2);
        const first = await pool.decode(input);
        assert.ok(mergedInMemory(first), `seed ${seed}: merged in the memory`);
        fillWithGarbage(first.columns);
        assert.ok(returnRoom(first.columns), `seed ${seed}: the memory takes its output set back`);
        const again = await pool.decode(input);
        assert.equal(again.columns.time.buffer, first.columns.time.buffer, `seed ${seed}: merged into the garbage`);
        assertEveryRecordOnce(again, perRing, `seed ${seed}`);
        assert.deepEqual(undeclaredRows(again, input), [], `seed ${seed}`);
        returnRoom(again.columns);
      }
      assert.ok(pool.parallelMerges >= 4, `${pool.parallelMerges} merges cut into slices for the workers`);
    } finally {
      await pool.close();
    }
  });
});

// The row writers above are written from the schema at build time (scripts/build-row-writers.mjs
// rewrites each `// row-writer` region of the hot loops). These check that the committed files are
// what the schema gives, and that a column added to the schema alone reaches every writer.

interface RowWriterGenerator {
  ROW_WRITER_FILES: readonly string[];
  writeRegions(text: string, schema: Schema, file: string): string;
}
interface Schema {
  readonly columns: Readonly<Record<string, string>>;
  readonly sources: Readonly<Record<string, PlainSampleSource>>;
}

/** tsc compiles import() to require(), which cannot load an ES module in Node 20: this keeps it an import. */
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<RowWriterGenerator>;
const ROOT = join(__dirname, '..', '..', '..');
const generator = () => importModule(join(ROOT, 'scripts', 'build-row-writers.mjs'));
const SCHEMA: Schema = { columns: RECORD_COLUMNS, sources: PLAIN_SAMPLE_SOURCES };

/** Each region of `text`: its template, the marker's keys and its generated lines (the note line left out). */
function regionsOf(text: string): { template: string; keys: string; body: string[] }[] {
  const regions: { template: string; keys: string; body: string[] }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const begin = /^\s*\/\/ row-writer ([a-z-]+)(.*)$/.exec(lines[i]);
    if (!begin) continue;
    const body: string[] = [];
    for (i += 2; !/^\s*\/\/ end row-writer/.test(lines[i]); i++) body.push(lines[i].trim());
    regions.push({ template: begin[1], keys: begin[2], body });
  }
  return regions;
}

describe('decode/row-writers: written from the column schema at build time', () => {
  it('the committed row writers are what the schema gives (else: npm run build)', async () => {
    const { ROW_WRITER_FILES, writeRegions } = await generator();
    for (const file of ROW_WRITER_FILES) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      assert.ok(text === writeRegions(text, SCHEMA, file), `${file} is not what column-schema.ts gives: run npm run build`);
    }
  });

  it('a column added to the schema alone is stored by every row writer, and the store writes its declared value', async () => {
    const { ROW_WRITER_FILES, writeRegions } = await generator();
    // A column that is the cpu field again, and one that is the ring again, appended to the schema.
    const wider: Schema = {
      columns: { ...RECORD_COLUMNS, cpuAgain: 'i32', ringAgain: 'u16' },
      sources: { ...PLAIN_SAMPLE_SOURCES, cpuAgain: { from: 'sample-word', field: 'cpu', word: 0, absent: 'ring-cpu' }, ringAgain: { from: 'ring' } },
    };
    const count = Object.keys(wider.columns).length;
    const seen = new Set<string>();
    for (const file of ROW_WRITER_FILES) {
      for (const region of regionsOf(writeRegions(readFileSync(join(ROOT, file), 'utf8'), wider, file))) {
        seen.add(region.template);
        const omitsRing = /\bomit=(\S*,)?ring\b/.test(region.keys);
        const text = region.body.join('\n');
        switch (region.template) {
          case 'ts-flat-at':
            assert.match(text, /const cpuAgainAt = at\.cpuAgain;/, file);
            assert.equal(/ringAgainAt/.test(text), !omitsRing, `${file}: ringAgain's local where ring's is`);
            break;
          case 'ts-flat-store':
            // cpu is read by two columns now: its word index is a local of its own, as pid/tid's is.
            assert.match(text, /const cpuWord = \(o \+ (sCpu|cpu)\) >>> 2;/, file);
            assert.match(text, /w32\[cpuAgainAt \+ row\] = u32\[cpuWord\];/, file);
            assert.equal(/w16\[ringAgainAt \+ row\] = r;/.test(text), !omitsRing, `${file}: ringAgain stored where ring is`);
            break;
          case 'ts-typed-columns':
            assert.match(text, /const cpuAgainColumn = out\.cpuAgain;/, file);
            assert.equal(/ringAgainColumn/.test(text), !omitsRing, `${file}: ringAgain's local where ring's is`);
            break;
          case 'ts-typed-store':
            assert.match(
              text,
              /const cpuWord = [^;]+;\n *cpuColumn\[(row|to)\] = u32\[cpuWord\] \| 0;\n *cpuAgainColumn\[(row|to)\] = u32\[cpuWord\] \| 0;/,
              file,
            );
            assert.match(text, /cpuAgainColumn\[(row|to)\] = ringCpu;/, `${file}: without a cpu field, the ring's`);
            assert.equal(/ringAgainColumn\[to\] = r;/.test(text), !omitsRing, `${file}: ringAgain stored where ring is`);
            break;
          case 'as-column-addresses':
            assert.match(text, new RegExp(`const cCpuAgain = load<u32>\\(job, [A-Z_]+ \\+ ${4 * (count - 2)}\\);`), file);
            break;
          case 'as-store':
            assert.match(text, /store<u32>\(cCpuAgain \+ \((row|r) << 2\), load<u32>\(p \+ sCpu\)\);/, file);
            assert.equal(/store<u16>\(cRingAgain \+ \(row << 1\), best\);/.test(text), !omitsRing, `${file}: ringAgain stored where ring is`);
            break;
          case 'job-columns': {
            const [, at, bytes] = /= (\d+);[^]*= (\d+);/.exec(text) ?? [];
            assert.equal(Number(bytes), Math.ceil((Number(at) + 4 * count) / 8) * 8, `${file}: the job grows by the new columns' addresses`);
            break;
          }
          default:
            assert.fail(`${file}: region ${region.template} has no check here`);
        }
      }
    }
    assert.deepEqual([...seen].sort(), ['as-column-addresses', 'as-store', 'job-columns', 'ts-flat-at', 'ts-flat-store', 'ts-typed-columns', 'ts-typed-store']);

    // decodeSampleRun's generated row, run on one sample: every column of the wider schema gets its declared value.
    const ring = decodeRingRegions(writeRegions(readFileSync(join(ROOT, 'native/decode/decode-ring.ts'), 'utf8'), wider, 'decode-ring.ts'));
    const names = Object.keys(wider.columns);
    const buffer = new ArrayBuffer(64 * names.length);
    const at: Record<string, number> = {};
    names.forEach((name, i) => (at[name] = (64 * i) / ELEMENT_ARRAYS[wider.columns[name] as ElementKind].BYTES_PER_ELEMENT));
    const flat = { f64: new Float64Array(buffer), u32: new Uint32Array(buffer), u16: new Uint16Array(buffer), u8: new Uint8Array(buffer), at };
    // A sample at byte 8 of the ring: header, then pid/tid at +8, cpu at +16, ip at +24.
    const u32 = new Uint32Array(16).fill(0xdeadbeef);
    u32.set([9, (48 << 16) | 0x4002, 0xfffffff0, 77, 5, 0, 0x81000010, 0xffffffff], 2);
    const row = 3;
    new Function(
      'env',
      `const { f64, u32: w32, u16: w16, u8: w8, at } = env.flat; const { u32, o, row, rel, SAMPLE, sizeMisc, event, sPidTid, sCpu, sIp } = env;\n${ring}`,
    )({
      flat,
      u32,
      o: 8,
      row,
      rel: 12.5,
      SAMPLE: 9,
      sizeMisc: u32[3],
      event: 6,
      sPidTid: 8,
      sCpu: 16,
      sIp: 24,
    });
    const want: Record<string, number> = {
      time: 12.5,
      kind: 9,
      misc: 0x4002,
      event: 6,
      pid: -16,
      tid: 77,
      cpu: 5,
      ipHi: 0xffffffff,
      ipLo: 0x81000010,
      offset: 8,
      cpuAgain: 5,
    };
    for (const name of names) {
      const source = wider.sources[name];
      if (source.from === 'ring') continue; // decodeSampleRun leaves the ring's columns to the decoder (omit=ring)
      const view = new ELEMENT_ARRAYS[wider.columns[name] as ElementKind](buffer);
      assert.equal(view[at[name] + row], want[name], `${name}: what the generated row stored`);
    }

    // decodeRing's generated row for any record, run on the same sample with its fields and without them.
    const general = regionsOf(writeRegions(readFileSync(join(ROOT, 'native/decode/decode-ring.ts'), 'utf8'), wider, 'decode-ring.ts'));
    const columnsRegion = general.find((region) => region.template === 'ts-typed-columns');
    const storeRegion = general.find((region) => region.template === 'ts-typed-store' && region.keys.includes('pidTid=ptOffset'));
    assert.ok(columnsRegion && storeRegion, "decodeRing's typed regions");
    const runGeneral = (ptOffset: number, cpuOffset: number, ipOffset: number) => {
      const out = Object.fromEntries(names.map((name) => [name, new ELEMENT_ARRAYS[wider.columns[name] as ElementKind](8).fill(0xa5)]));
      const body = [...columnsRegion.body, ...storeRegion.body].join('\n');
      new Function('env', `const { out, u32, o, row, recordKind, sizeMisc, eventIndex, ptOffset, cpuOffset, ipOffset, ringCpu } = env;\n${body}`)({
        out,
        u32,
        o: 8,
        row,
        recordKind: 9,
        sizeMisc: u32[3],
        eventIndex: 6,
        ptOffset,
        cpuOffset,
        ipOffset,
        ringCpu: 7,
      });
      return Object.fromEntries(names.filter((name) => name !== 'time' && wider.sources[name].from !== 'ring').map((name) => [name, out[name][row]]));
    };
    const { time: _time, ...present } = want;
    assert.deepEqual(runGeneral(16, 24, 32), present, 'every field present');
    assert.deepEqual(
      runGeneral(-1, -1, -1),
      { ...present, pid: -1, tid: -1, cpu: 7, cpuAgain: 7, ipHi: 0, ipLo: 0 },
      "every field absent: the schema's absent values",
    );
  });
});

/** decodeSampleRun's generated locals and row stores from decode-ring.ts as given, one piece of code. */
function decodeRingRegions(text: string): string {
  const regions = regionsOf(text).filter((region) => region.template.startsWith('ts-flat-'));
  assert.deepEqual(
    regions.map((region) => region.template),
    ['ts-flat-at', 'ts-flat-store'],
    'decode-ring.ts holds the flat regions of decodeSampleRun only',
  );
  return regions.flatMap((region) => region.body).join('\n');
}
