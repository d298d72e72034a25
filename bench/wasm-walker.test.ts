import * as assert from 'node:assert/strict';
import { RecordType, Sample } from '../native/abi/uapi';
import { decodeSnapshot } from '../native/decode/columns';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord, throttleRecord } from '../native/decode/test-records';
import { columnChecksum } from './checksum';
import { WasmWalker } from './wasm-walker';

// The bench sets the WebAssembly walker against walker.c and the decoder by column checksums on
// real rings; here the same check runs on rings built byte by byte, with the records a real ring
// mixes into its samples, so a wrong step in the sample run's kernel (native/decode/kernels) fails `npm test`.

const HOT = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
const FULL = HOT | Sample.CALLCHAIN | Sample.RAW;
const events = (sampleType: number) => [
  eventOf(0, attrOf(sampleType, { flags: { sampleIdAll: true } }), [11n], 'a'),
  eventOf(1, attrOf(sampleType, { flags: { sampleIdAll: true } }), [12n], 'b'),
];

function sample(sampleType: number, i: number, id = 11n): Uint8Array {
  const tail =
    sampleType & Sample.CALLCHAIN
      ? new ByteWriter()
          .u64(BigInt(1 + (i % 3)))
          .u64(0x401000n)
          .u64(0x402000n)
          .u64(0x403000n)
          .toBytes()
          .subarray(0, 8 + 8 * (1 + (i % 3)))
      : undefined;
  return sampleRecord(sampleType, {
    id,
    ip: 0xffffffff81000000n + BigInt(i * 16),
    pid: 40,
    tid: 41 + (i % 3),
    time: 5_000_000_000n + BigInt(i * 1000),
    cpu: 1,
    period: 1n,
    ...(tail ? { tail: new ByteWriter().raw(tail).u32(4).u32(i).toBytes() } : {}),
  });
}

describe('the WebAssembly walker of the bench', () => {
  for (const [name, sampleType] of [
    ['basic', HOT],
    ['callchain+raw', FULL],
  ] as const) {
    it(`writes the decoder's columns for a backward ring of ${name} samples with LOST, throttle and another event's samples`, () => {
      const records: Uint8Array[] = [];
      for (let i = 0; i < 3000; i++) {
        if (i === 700) {
          // PERF_RECORD_LOST: id, count, then the sample_id trailer; older than the samples after it.
          records.push(
            otherRecord(RecordType.LOST, 0, new ByteWriter().u64(11n).u64(9n).toBytes(), sampleType, true, {
              pid: 40,
              tid: 41,
              time: 5_000_000_000n + BigInt(i * 1000) - 1n,
              id: 11n,
              cpu: 1,
            }),
          );
        }
        if (i === 1500) records.push(throttleRecord(sampleType, 5_000_000_000n + BigInt(i * 1000) - 1n, 11n));
        records.push(sample(sampleType, i, i >= 2000 && i < 2100 ? 12n : 11n));
      }
      const ring = ringFromRecords(records, 1 << 20, 'backward', { ringId: 0, cpu: 1 });
      const given = events(sampleType);
      const decoded = decodeSnapshot({ events: given, rings: [ring] });
      const walked = new WasmWalker(given, ring).measure(2, 1);
      assert.equal(walked.records, decoded.columns.length);
      assert.deepEqual(walked.checksum, columnChecksum(decoded.columns));
      assert.ok(decoded.columns.length > 3000, `${decoded.columns.length} rows`);
    });
  }

  it('takes a second pass when the oldest record in memory is not the oldest in time, as walker.c does', () => {
    // The probable oldest record (where the base is taken) is younger than every record after it.
    const records = [
      sampleRecord(HOT, { id: 11n, ip: 1n, pid: 1, tid: 1, time: 9_000_000_000n, cpu: 1, period: 1n }),
      ...Array.from({ length: 50 }, (_, i) => sample(HOT, i)),
    ];
    const ring = ringFromRecords(records, 1 << 16, 'backward', { ringId: 0, cpu: 1 });
    const given = events(HOT);
    const decoded = decodeSnapshot({ events: given, rings: [ring] });
    const walked = new WasmWalker(given, ring).measure(1, 0);
    assert.equal(walked.records, 51);
    assert.deepEqual(walked.checksum, columnChecksum(decoded.columns));
  });
});
