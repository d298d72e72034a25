import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../abi/uapi';
import { attrOf, concat, eventOf, header, ringFromLinear, ringFromRecords, sampleRecord, trailer } from './test-records';
import { linearizeRing, walkRing } from './walk';
import { decodeSnapshot } from './columns';

const ST = Sample.IP | Sample.TID | Sample.TIME;
const rec = (time: number, extra = 0) =>
  sampleRecord(ST | (extra ? Sample.PERIOD : 0), { ip: 0x1000n + BigInt(time), pid: 1, tid: 2, time: BigInt(time), period: 1n });

describe('decode/walk', () => {
  it('walks a backward ring that has not filled up: newest first in memory, returned oldest first, stops at the zero header', () => {
    const records = [rec(1), rec(2), rec(3)];
    const ring = ringFromRecords(records, 4096, 'backward');
    assert.equal(ring.validBytes, 3 * 32);
    const walk = walkRing(ring);
    assert.deepEqual(Array.from(walk.offsets), [64, 32, 0]);
    assert.equal(walk.retainedBytes, 96);
    assert.deepEqual(walk.anomalies, []);
  });

  it('reports a zero-size header inside the valid region as damage, naming what the walk drops', () => {
    const bytes = concat([rec(1), new Uint8Array(32), rec(2)]);
    const walk = walkRing(ringFromLinear(bytes, 'backward'));
    assert.deepEqual(Array.from(walk.offsets), [0]);
    assert.equal(walk.anomalies.length, 1);
    assert.equal(walk.anomalies[0].kind, 'size-too-small');
    assert.equal(walk.anomalies[0].offset, 32);
    assert.match(walk.anomalies[0].detail, new RegExp(`record size 0 inside the valid data; the ${bytes.length - 32} bytes from here on are dropped`));
    // The decoder reports the same anomaly for the snapshot.
    assert.equal(decodeSnapshot({ events: [], rings: [ringFromLinear(bytes, 'backward')] }).anomalies.filter((a) => a.kind === 'size-too-small').length, 1);
  });

  it('counts a size below the header and a size not a multiple of 8 as anomalies, without throwing', () => {
    const small = concat([rec(1), header(9, 0, 4).toBytes(), new Uint8Array(24)]);
    const walkSmall = walkRing(ringFromLinear(small, 'backward'));
    assert.deepEqual(Array.from(walkSmall.offsets), [0]);
    assert.equal(walkSmall.anomalies[0].kind, 'size-too-small');
    assert.equal(walkSmall.anomalies[0].offset, 32);
    const odd = concat([rec(1), header(9, 0, 12).toBytes(), new Uint8Array(24)]);
    const walkOdd = walkRing(ringFromLinear(odd, 'backward'));
    assert.equal(walkOdd.anomalies[0].kind, 'size-misaligned');
  });

  it('flags a record running past validBytes of an unwrapped ring as size-past-end', () => {
    const bytes = concat([rec(1), header(9, 0, 64).toBytes(), new Uint8Array(24)]);
    const walk = walkRing(ringFromLinear(bytes, 'backward', 64, 4096));
    assert.deepEqual(Array.from(walk.offsets), [0]);
    assert.equal(walk.anomalies[0].kind, 'size-past-end');
  });

  it('drops the partly overwritten oldest record of a wrapped backward ring (truncated-oldest)', () => {
    // 256-byte ring, 40-byte records: after 20 writes the ring holds 6 whole records (240 bytes) and
    // 16 bytes of the 7th-newest, whose tail was overwritten by the newest.
    const records = Array.from({ length: 20 }, (_, i) => rec(i + 1, 1));
    assert.equal(records[0].length, 40);
    const ring = ringFromRecords(records, 256, 'backward');
    assert.equal(ring.validBytes, 256);
    assert.equal(ring.bytesWritten, 800n);
    const walk = walkRing(ring);
    assert.equal(walk.offsets.length, 6);
    assert.equal(walk.retainedBytes, 240);
    assert.equal(walk.anomalies.length, 1);
    assert.equal(walk.anomalies[0].kind, 'truncated-oldest');
    assert.equal(walk.anomalies[0].offset, 240);
  });

  it('walks a forward ring oldest first and flags a cut record as size-past-end', () => {
    const ring = ringFromRecords([rec(1), rec(2)], 4096, 'forward');
    assert.deepEqual(Array.from(walkRing(ring).offsets), [0, 32]);
    const cut = walkRing(ringFromLinear(concat([rec(1), rec(2)]), 'forward', 48, 4096));
    assert.deepEqual(Array.from(cut.offsets), [0]);
    assert.equal(cut.anomalies[0].kind, 'size-past-end');
  });

  describe('PERF_RECORD_LOST in a backward ring', () => {
    // The kernel reports a loss inside the next record's output: ONE reservation holding the LOST
    // record (with its sample_id trailer) and then that record, LOST at the lower address.
    const st = Sample.TID | Sample.TIME;
    const lost = (count: number, time: number) =>
      header(RecordType.LOST, 0, 8 + 16 + 16)
        .u64(1n)
        .u64(count)
        .raw(trailer(st, { pid: 1, tid: 2, time: BigInt(time) }))
        .toBytes();
    const sample = (time: number) => sampleRecord(st, { pid: 1, tid: 2, time: BigInt(time) });
    // Oldest first as written: samples 1, 2; a gap of 5 lost, reported with sample 3; sample 4; a
    // gap of 2, reported with sample 5. LOST's time is when the loss was written, after its partner was sampled.
    const blocks = [sample(1), sample(2), concat([lost(5, 31), sample(30)]), sample(40), concat([lost(2, 51), sample(50)])];
    const typeAndTime = (bytes: Uint8Array, offset: number) => {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      const type = view.getUint32(offset, true);
      return `${type === RecordType.LOST ? 'LOST' : 'SAMPLE'}@${Number(view.getBigUint64(offset + (type === RecordType.LOST ? 32 : 16), true))}`;
    };
    const order = ['SAMPLE@1', 'SAMPLE@2', 'LOST@31', 'SAMPLE@30', 'SAMPLE@40', 'LOST@51', 'SAMPLE@50'];

    it('lands in its true place, before the record whose output reported it, not one record late', () => {
      const ring = ringFromRecords(blocks, 4096, 'backward');
      const walk = walkRing(ring);
      assert.deepEqual(
        Array.from(walk.offsets, (o) => typeAndTime(ring.bytes, o)),
        order,
      );
      // A forward ring writes the same block in memory order: nothing to move there.
      const forward = ringFromRecords(blocks, 4096, 'forward');
      assert.deepEqual(
        Array.from(walkRing(forward).offsets, (o) => typeAndTime(forward.bytes, o)),
        order,
      );
    });

    it('keeps a LOST in the oldest row whose partner was overwritten, and decodes columns in the same order', () => {
      // Newest first in memory: LOST@51 SAMPLE@50 SAMPLE@40 LOST@31 | SAMPLE@30 cut by the valid length.
      const ring = ringFromRecords(blocks, 4096, 'backward');
      const cut = { ...ring, validBytes: 40 + 32 + 32 + 40 };
      assert.deepEqual(
        Array.from(walkRing(cut).offsets, (o) => typeAndTime(cut.bytes, o)),
        ['LOST@31', 'SAMPLE@40', 'LOST@51', 'SAMPLE@50'],
      );
      const event = eventOf(0, attrOf(st, { flags: { sampleIdAll: true } }));
      const decoded = decodeSnapshot({ events: [event], rings: [ring] });
      const kinds = Array.from(decoded.columns.kind, (kind) => (kind === RecordType.LOST ? 'LOST' : 'SAMPLE'));
      assert.deepEqual(
        kinds.map((kind, row) => `${kind}@${decoded.columns.time[row] + 1}`),
        order,
      );
      assert.equal(decoded.coverage[0].lostRecords, 7n);
      // Merged with another ring, each LOST still comes right before its partner.
      const other = ringFromRecords([sample(35)], 4096, 'backward', { ringId: 1 });
      const merged = decodeSnapshot({ events: [event], rings: [ring, other] });
      const mergedOrder = Array.from(merged.columns.kind, (kind, row) => `${kind === RecordType.LOST ? 'LOST' : 'SAMPLE'}@${merged.columns.time[row] + 1}`);
      assert.deepEqual(mergedOrder, ['SAMPLE@1', 'SAMPLE@2', 'LOST@31', 'SAMPLE@30', 'SAMPLE@35', 'SAMPLE@40', 'LOST@51', 'SAMPLE@50']);
    });
  });

  it('never trusts validBytes beyond the buffer', () => {
    const bytes = rec(1);
    const walk = walkRing({ ...ringFromLinear(bytes, 'backward'), validBytes: 1 << 20, dataSize: 1 << 20 });
    assert.deepEqual(Array.from(walk.offsets), [0]);
  });

  describe('linearizeRing', () => {
    it('puts the record at a backward data_head first and joins the halves around the wrap point', () => {
      const area = new Uint8Array(16);
      area.set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
      const head = (1n << 64n) - 36n; // wrote 36 bytes: head & 15 = 12
      const linear = linearizeRing(area, head, 'backward');
      assert.deepEqual(Array.from(linear.bytes), [13, 14, 15, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      assert.equal(linear.validBytes, 16);
      assert.equal(linear.bytesWritten, 36n);
      const fresh = linearizeRing(area, -8n, 'backward');
      assert.equal(fresh.validBytes, 8);
      assert.deepEqual(Array.from(fresh.bytes.subarray(0, 8)), [9, 10, 11, 12, 13, 14, 15, 16]);
      assert.equal(linearizeRing(area, 0n, 'backward').validBytes, 0);
    });

    it('linearises a forward ring from data_tail to data_head', () => {
      const area = Uint8Array.from({ length: 16 }, (_, i) => i);
      const linear = linearizeRing(area, 20n, 'forward', 12n);
      assert.equal(linear.validBytes, 8);
      assert.deepEqual(Array.from(linear.bytes.subarray(0, 8)), [12, 13, 14, 15, 0, 1, 2, 3]);
      assert.throws(() => linearizeRing(new Uint8Array(12), 0n, 'forward'), RangeError);
    });

    it('makes records that straddled the end of the data area whole again', () => {
      // 128-byte ring, 24-byte records: every few records one straddles the wrap.
      const records = Array.from({ length: 11 }, (_, i) => sampleRecord(Sample.TIME | Sample.IP, { time: BigInt(100 + i), ip: BigInt(0xabc0 + i) }));
      const ring = ringFromRecords(records, 128, 'backward');
      const walk = walkRing(ring);
      const view = new DataView(ring.bytes.buffer);
      const times = Array.from(walk.offsets, (o) => Number(view.getBigUint64(o + 16, true)));
      // 264 bytes written: head & 127 = 120, so the newest record occupies 120..127 and 0..15 of the area.
      assert.equal(Number(((-264n % 128n) + 128n) % 128n), 120);
      assert.deepEqual(times, [106, 107, 108, 109, 110]);
      const ips = Array.from(walk.offsets, (o) => Number(view.getBigUint64(o + 8, true)));
      assert.deepEqual(ips, [0xabc6, 0xabc7, 0xabc8, 0xabc9, 0xabca]);
      assert.equal(walk.anomalies[0].kind, 'truncated-oldest');
    });
  });
});
