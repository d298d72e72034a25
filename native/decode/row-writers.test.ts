// Every row writer of plain samples against the schema's declaration of where each column's value
// comes from (PLAIN_SAMPLE_SOURCES): the sample run of one ring in JavaScript and in WebAssembly, the
// keyed scatter of several rings and the merge of several rings. Each decodes into memory that a
// previous decode left filled with garbage, so a writer that forgets a column leaves garbage behind
// and fails here, and a column added to the schema fails here until every writer writes it.

import * as assert from 'node:assert/strict';
import { Sample } from '../abi/uapi';
import type { RingCopy } from '../abi/snapshot';
import { ColumnArena } from './arena';
import type { SnapshotInput } from './assemble';
import { PLAIN_SAMPLE_SOURCES, RECORD_COLUMN_NAMES, newColumn, type PlainSampleSource, type RecordColumnName } from './column-schema';
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
