import * as assert from 'node:assert/strict';
import type { EventDescription, RingCopy, TracepointFormat } from '../abi/snapshot';
import { ReadFormat, RecordType, Sample } from '../abi/uapi';
import { newColumn, RECORD_COLUMN_NAMES } from './column-schema';
import { rawFieldsReader } from './raw-fields';
import { decodeRecordAt } from './record';
import { attrOf, ByteWriter, concat, eventOf, prng, readBlock, sampleRecord, tracepointField } from './test-records';
import type { TracepointValue } from './tracepoint';
import type { DecodedSnapshot, RecordColumns } from './types';

const field = tracepointField;

/** A format with every kind of field decodeTracepoint knows, its dynamic data from byte 72. */
const FORMAT: TracepointFormat = {
  system: 'test',
  name: 'every_kind',
  id: 7,
  printFormat: '',
  fields: [
    field('common_type', 'unsigned short common_type', 0, 2, false),
    field('common_flags', 'unsigned char common_flags', 2, 1, false),
    field('common_preempt_count', 'unsigned char common_preempt_count', 3, 1, false),
    field('common_pid', 'int common_pid', 4, 4, true),
    field('comm', 'char comm[16]', 8, 16, false, { arrayLength: 16, isString: true }),
    field('pid', 'pid_t pid', 24, 4, true),
    field('state', 'long state', 32, 8, true),
    field('p', 'void * p', 40, 8, false),
    field('u16f', 'u16 u16f', 48, 2, false),
    field('u8f', 'u8 u8f', 50, 1, false),
    field('bits', 'struct three bits', 51, 3, false),
    field('arr', 'int arr[2]', 56, 8, true, { arrayLength: 2 }),
    field('name', '__data_loc char[] name', 64, 4, false, { location: 'data_loc', isString: true }),
    field('ids', '__rel_loc u32[] ids', 68, 4, false, { location: 'rel_loc' }),
    // A later field of an earlier name replaces it in decodeTracepoint's values.
    field('u8f', 'u8 u8f', 54, 1, false),
  ],
};
const NAMES = ['comm', 'pid', 'state', 'p', 'u16f', 'u8f', 'bits', 'arr', 'name', 'ids', 'missing', 'common_pid'];

/** A payload of FORMAT (86 bytes: name "hello" at 72, ids [7, 9] at 78). */
function payload(random: () => number): Uint8Array {
  const comm = new Uint8Array(16);
  comm.set(new TextEncoder().encode(`task-${Math.floor(random() * 1000)}`));
  return new ByteWriter()
    .u16(7)
    .u8(0)
    .u8(0)
    .u32(42)
    .raw(comm)
    .u32(Math.floor(random() * 2 ** 31))
    .u32(0)
    .u64(BigInt(Math.floor(random() * 2 ** 40)) - (1n << 39n))
    .u64(0xffffffff81000000n + BigInt(Math.floor(random() * 4096)))
    .u16(0xfffe)
    .u8(200)
    .u8(1)
    .u8(2)
    .u8(3)
    .u8(9)
    .u8(0)
    .u32(-5 >>> 0)
    .u32(6)
    .u32((6 << 16) | 72)
    .u32((8 << 16) | 6)
    .raw(new TextEncoder().encode('hello\0'))
    .u32(7)
    .u32(9)
    .toBytes();
}

type Damage = 'none' | 'short payload' | 'dynamic past end' | 'cut record' | 'payload past record' | 'huge count' | 'not a sample';
const DAMAGE: Damage[] = ['short payload', 'dynamic past end', 'cut record', 'payload past record', 'huge count', 'not a sample'];

/** The variable part of a sample for `event` (READ, CALLCHAIN, RAW, then what follows RAW), damaged as asked. */
function sampleOf(event: EventDescription, random: () => number, damage: Damage): Uint8Array {
  const st = event.attr.sampleType;
  const tail = new ByteWriter();
  if (st & Sample.READ) {
    const group = (event.attr.readFormat & ReadFormat.GROUP) !== 0;
    const values = Array.from({ length: group ? 1 + Math.floor(random() * 3) : 1 }, (_, i) => ({ value: BigInt(i + 1), id: 5n, lost: 0n }));
    const block = readBlock(event.attr.readFormat, values, 10n, 9n);
    if (damage === 'huge count' && group) new DataView(block.buffer).setUint32(0, 0x7fffffff, true);
    tail.raw(block);
  }
  if (st & Sample.CALLCHAIN) {
    const nr = Math.floor(random() * 5);
    tail.u64(damage === 'huge count' ? 0x10000000n : BigInt(nr));
    for (let i = 0; i < nr; i++) tail.u64(0xffffffff81000000n + BigInt(i));
  }
  if (st & Sample.RAW) {
    const raw = payload(random);
    if (damage === 'dynamic past end') new DataView(raw.buffer).setUint32(64, (40 << 16) | 72, true);
    // As the kernel writes it: the size counts the padding that ends the u32 and the payload on a u64 boundary.
    const padded = new Uint8Array(Math.ceil((raw.length + 4) / 8) * 8 - 4);
    padded.set(raw);
    const length = damage === 'short payload' ? 60 : damage === 'payload past record' ? 4000 : padded.length;
    tail.u32(length).raw(padded);
  }
  if (st & Sample.BRANCH_STACK) tail.u64(1n).u64(0x1000n).u64(0x2000n).u64(0n);
  if (st & (Sample.WEIGHT | Sample.WEIGHT_STRUCT)) tail.u64(3n);
  if (st & Sample.DATA_SRC) tail.u64(4n);
  if (st & Sample.PHYS_ADDR) tail.u64(5n);
  const record = sampleRecord(st, { id: 5n, ip: 0x401000n, pid: 10, tid: 11, time: 1000n, cpu: 1, period: 1n, tail: tail.toBytes() });
  const view = new DataView(record.buffer);
  if (damage === 'cut record') view.setUint16(6, record.length - 8, true);
  if (damage === 'not a sample') view.setUint32(0, RecordType.COMM, true);
  return record;
}

/** FORMAT without its dynamic fields (a payload too short for it has no dynamic field to say so). */
const INLINE_FORMAT: TracepointFormat = { ...FORMAT, fields: FORMAT.fields.filter((f) => f.location === 'inline') };

const tracepointEvent = (index: number, sampleType: number, readFormat = 0, format = FORMAT): EventDescription => ({
  ...eventOf(index, attrOf(sampleType, { readFormat })),
  tracepoint: format,
});

const EVENTS: EventDescription[] = [
  tracepointEvent(0, Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW),
  tracepointEvent(
    1,
    Sample.IDENTIFIER |
      Sample.IP |
      Sample.TID |
      Sample.TIME |
      Sample.ID |
      Sample.CPU |
      Sample.PERIOD |
      Sample.READ |
      Sample.CALLCHAIN |
      Sample.RAW |
      Sample.WEIGHT |
      Sample.DATA_SRC |
      Sample.PHYS_ADDR,
    ReadFormat.GROUP | ReadFormat.TOTAL_TIME_ENABLED | ReadFormat.ID,
  ),
  tracepointEvent(2, Sample.TID | Sample.TIME | Sample.READ | Sample.RAW | Sample.WEIGHT_STRUCT, ReadFormat.TOTAL_TIME_RUNNING | ReadFormat.LOST),
  // A field after RAW whose size varies per record: read through decodeRecordAt.
  tracepointEvent(3, Sample.TID | Sample.TIME | Sample.CALLCHAIN | Sample.RAW | Sample.BRANCH_STACK),
  eventOf(4, attrOf(Sample.TID | Sample.TIME | Sample.RAW)), // no format
  tracepointEvent(5, Sample.TID | Sample.TIME), // no RAW
  tracepointEvent(6, Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW, 0, INLINE_FORMAT),
];

/** A snapshot of `records` in one ring, row i the record of event `events[i]` (an index no event has: undescribed). */
function snapshotOf(records: readonly Uint8Array[], events: readonly number[]): DecodedSnapshot {
  const n = records.length;
  const columns = Object.fromEntries(RECORD_COLUMN_NAMES.map((name) => [name, newColumn(name, n)])) as unknown as RecordColumns;
  let at = 0;
  records.forEach((record, i) => {
    columns.offset[i] = at;
    columns.event[i] = events[i];
    columns.kind[i] = RecordType.SAMPLE;
    at += record.length;
  });
  const bytes = concat(records);
  const ring: RingCopy = {
    ringId: 0,
    label: 'ring0',
    cpu: 0,
    tid: -1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'paused',
  };
  return { events: EVENTS, rings: [ring], columns: { ...columns, length: n, timeOriginNs: 0n }, coverage: [], anomalies: [] };
}

describe('decode/raw-fields', () => {
  it('reads the fields decodeRecordAt gives, and leaves out the records it gives none for, on every layout and damage', () => {
    const random = prng(0x5eed);
    const records: Uint8Array[] = [];
    const events: number[] = [];
    const damages: Damage[] = [];
    for (let i = 0; i < 3000; i++) {
      const event = Math.floor(random() * (EVENTS.length + 1));
      const damage = random() < 0.6 ? 'none' : DAMAGE[Math.floor(random() * DAMAGE.length)];
      records.push(sampleOf(EVENTS[event] ?? EVENTS[0], random, damage));
      events.push(event);
      damages.push(damage);
    }
    const snapshot = snapshotOf(records, events);
    const read = rawFieldsReader(snapshot, NAMES);
    const out: (TracepointValue | undefined)[] = [];
    const read_ = new Map<string, number>();
    for (let row = 0; row < records.length; row++) {
      let expected: Record<string, TracepointValue> | undefined;
      try {
        expected = (decodeRecordAt(snapshot, row).fields as { tracepoint?: Record<string, TracepointValue> }).tracepoint;
      } catch {
        // a damaged record: the full decoder has no fields for it either, which the test compares
        expected = undefined;
      }
      const what = `row ${row}: event ${events[row]}, ${damages[row]}`;
      assert.equal(read(row, out), expected !== undefined, what);
      if (expected)
        assert.deepEqual(
          out,
          NAMES.map((name) => expected[name]),
          what,
        );
      const key = `${events[row]}:${damages[row]}:${expected !== undefined}`;
      read_.set(key, (read_.get(key) ?? 0) + 1);
    }
    // Every tracepoint layout read undamaged records, and every damage was left out somewhere.
    for (const event of [0, 1, 2, 3, 6]) assert.ok(read_.has(`${event}:none:true`), `event ${event} read: ${[...read_.keys()]}`);
    for (const damage of DAMAGE)
      assert.ok(
        [...read_.keys()].some((k) => k.endsWith(`:${damage}:false`)),
        `${damage} left out: ${[...read_.keys()]}`,
      );
    assert.equal(read(-1, out), false);
    assert.equal(read(records.length, out), false);
  });

  it('reads sched_switch as the full decode does: strings, pids and a 64-bit prev_state', () => {
    const snapshot = snapshotOf([sampleOf(EVENTS[0], prng(3), 'none')], [0]);
    const out: (TracepointValue | undefined)[] = [];
    assert.ok(rawFieldsReader(snapshot, ['comm', 'pid', 'state', 'name', 'ids', 'u8f'])(0, out));
    const full = (decodeRecordAt(snapshot, 0).fields as { tracepoint: Record<string, TracepointValue> }).tracepoint;
    assert.deepEqual(out, [full.comm, full.pid, full.state, 'hello', [7, 9], 9]);
    assert.equal(typeof out[2], 'bigint');
  });
});
