// Seeded fuzz of the decoder: random and mutated ring copies must never hang, never throw from the
// bulk decode, and make the per-record decode throw nothing but DecodeError. Buffers are exact-size
// Uint8Arrays, so a DataView read past the end would raise RangeError and fail the test.

import * as assert from 'node:assert/strict';
import { ReadFormat, RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { DecodeError } from './errors';
import { formatRecordJson } from './jsonl';
import { decodeRecordAt, decodeRecordBytes, rowSource } from './record';
import { attrOf, ByteWriter, eventOf, otherRecord, prng, readBlock, ringFromRecords, sampleRecord } from './test-records';
import type { EventDescription, RingCopy, TracepointFormat } from '../abi/snapshot';

const ST =
  Sample.IDENTIFIER |
  Sample.IP |
  Sample.TID |
  Sample.TIME |
  Sample.CPU |
  Sample.PERIOD |
  Sample.READ |
  Sample.CALLCHAIN |
  Sample.RAW |
  Sample.BRANCH_STACK |
  Sample.REGS_USER |
  Sample.STACK_USER |
  Sample.WEIGHT;
const READ_FORMAT = ReadFormat.GROUP | ReadFormat.ID;
const TRACEPOINT: TracepointFormat = {
  system: 'fuzz',
  name: 'tp',
  id: 1,
  printFormat: '',
  fields: [
    { name: 'value', declaration: 'int value', offset: 0, size: 4, signed: true, arrayLength: 0, location: 'inline', isString: false },
    { name: 'name', declaration: '__data_loc char[] name', offset: 4, size: 4, signed: false, arrayLength: 0, location: 'data_loc', isString: true },
  ],
};

function events(): EventDescription[] {
  const attr = attrOf(ST, { readFormat: READ_FORMAT, flags: { sampleIdAll: true }, sampleRegsUser: 0x3n, branchSampleType: 1n << 17n });
  return [
    { ...eventOf(0, attr, [1n], 'fuzz'), tracepoint: TRACEPOINT },
    eventOf(1, attrOf(Sample.TID | Sample.TIME | Sample.IDENTIFIER, { flags: { sampleIdAll: true } }), [2n], 'side'),
  ];
}

function validRecords(random: () => number, count: number): Uint8Array[] {
  const records: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const time = 1000n + BigInt(i);
    if (random() < 0.2) {
      records.push(
        otherRecord(RecordType.COMM, 0, new ByteWriter().u32(1).u32(1).cstring(`task${i}`).toBytes(), ST, true, { pid: 1, tid: 1, time, id: 1n, cpu: 0 }),
      );
      continue;
    }
    const tail = new ByteWriter()
      .raw(readBlock(READ_FORMAT, [{ value: 1n, id: 1n }]))
      .u64(2n)
      .u64(0xffffffffffffff80n)
      .u64(0xffffffff81000000n)
      .u32(12)
      .u32(7)
      .u32((4 << 16) | 8)
      .u32(0x00636261)
      .u64(1n)
      .u64(0n)
      .u64(1n)
      .u64(2n)
      .u64(0n)
      .u64(2n)
      .u64(1n)
      .u64(2n)
      .u64(8n)
      .u64(0n)
      .u64(8n)
      .u64(5n)
      .toBytes();
    records.push(sampleRecord(ST, { id: 1n, ip: 0x401000n, pid: 1, tid: 1, time, cpu: 0, period: 1n, tail }));
  }
  return records;
}

function exercise(rings: RingCopy[], evs: EventDescription[]): void {
  const snapshot = decodeSnapshot({ events: evs, rings });
  const c = snapshot.columns;
  for (let row = 0; row < c.length; row++) {
    const ring = snapshot.rings[c.ring[row]];
    const size = ring.bytes[c.offset[row] + 6] | (ring.bytes[c.offset[row] + 7] << 8);
    assert.ok(c.offset[row] + size <= Math.min(ring.validBytes, ring.bytes.length), 'a row never points past the valid bytes');
    // The record alone in an exact-size buffer: any read past its end is a RangeError, not a DecodeError.
    const { offset, event } = rowSource(snapshot, row);
    const alone = ring.bytes.slice(offset, offset + size);
    for (const call of [() => decodeRecordAt(snapshot, row), () => formatRecordJson(snapshot, row, () => 'f+0x1'), () => decodeRecordBytes(alone, 0, event)]) {
      try {
        call();
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
      }
    }
  }
}

describe('decode/fuzz (seeded)', () => {
  it('survives random bytes', () => {
    const evs = events();
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed);
      const length = 8 * Math.floor(random() * 64);
      const bytes = new Uint8Array(length);
      for (let i = 0; i < length; i++) bytes[i] = random() * 256;
      // Plausible headers now and then so the walk gets past the first record.
      for (let at = 0; at + 8 <= length; at += 8) {
        if (random() < 0.3) {
          bytes[at] = Math.floor(random() * 24);
          bytes[at + 1] = 0;
          bytes[at + 2] = 0;
          bytes[at + 3] = 0;
          bytes[at + 6] = 8 * Math.floor(random() * 12);
          bytes[at + 7] = 0;
        }
      }
      const direction = random() < 0.5 ? 'backward' : 'forward';
      const validBytes = Math.floor(random() * (length + 64));
      exercise(
        [
          {
            ringId: 0,
            label: 'r',
            cpu: 0,
            tid: -1,
            direction,
            defaultEvent: random() < 0.8 ? 0 : 1,
            bytes,
            validBytes,
            dataSize: length,
            bytesWritten: BigInt(validBytes),
            path: 'paused',
          },
        ],
        evs,
      );
    }
  });

  it('survives mutated valid rings (bit flips, byte stores, odd byte offsets)', () => {
    const evs = events();
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed * 7919);
      const ring = ringFromRecords(
        validRecords(random, 3 + Math.floor(random() * 20)),
        1 << (9 + Math.floor(random() * 3)),
        random() < 0.7 ? 'backward' : 'forward',
      );
      const mutations = 1 + Math.floor(random() * 8);
      for (let m = 0; m < mutations; m++) {
        const at = Math.floor(random() * ring.validBytes);
        if (random() < 0.5) ring.bytes[at] ^= 1 << Math.floor(random() * 8);
        else ring.bytes[at] = random() < 0.5 ? 0xff : 0;
      }
      // An exact-size copy at an odd byte offset of a larger buffer exercises the unaligned path too.
      let bytes = ring.bytes;
      if (random() < 0.3) {
        const backing = new Uint8Array(ring.bytes.length + 3);
        backing.set(ring.bytes, 1);
        bytes = backing.subarray(1, 1 + ring.bytes.length);
      }
      exercise([{ ...ring, bytes }], evs);
    }
  });

  it('decodes the unmutated rings completely (the fuzz corpus is valid to begin with)', () => {
    const evs = events();
    const random = prng(42);
    const ring = ringFromRecords(validRecords(random, 10), 4096, 'backward');
    const snapshot = decodeSnapshot({ events: evs, rings: [ring] });
    assert.equal(snapshot.columns.length, 10);
    assert.deepEqual(snapshot.anomalies, []);
    for (let row = 0; row < 10; row++) {
      const record = decodeRecordAt(snapshot, row);
      assert.equal(record.timeNs, 1000n + BigInt(row));
      if (record.type === 'SAMPLE') {
        assert.equal(record.fields.trailingBytes, undefined);
        assert.deepEqual(record.fields.tracepoint, { value: 7, name: 'abc' });
      }
    }
  });
});
