import * as assert from 'node:assert/strict';
import { Misc, ReadFormat, RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { DecodeError } from './errors';
import { decodeRecordAt, decodeRecordBytes, type BranchEntry, type CallchainFrame, type ReadBlock, type RegsBlock } from './record';
import { attrOf, ByteWriter, eventOf, otherRecord, readBlock, ringFromRecords, sampleRecord } from './test-records';

const ALL_FIXED = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.ADDR | Sample.ID | Sample.STREAM_ID | Sample.CPU | Sample.PERIOD;
const KERNEL_MARK = 0xffffffffffffff80n;
const USER_MARK = 0xfffffffffffffe00n;

function everythingSample() {
  const sampleType =
    ALL_FIXED |
    Sample.READ |
    Sample.CALLCHAIN |
    Sample.RAW |
    Sample.BRANCH_STACK |
    Sample.REGS_USER |
    Sample.STACK_USER |
    Sample.WEIGHT_STRUCT |
    Sample.DATA_SRC |
    Sample.TRANSACTION |
    Sample.REGS_INTR |
    Sample.PHYS_ADDR |
    Sample.CGROUP |
    Sample.DATA_PAGE_SIZE |
    Sample.CODE_PAGE_SIZE |
    Sample.AUX;
  const readFormat = ReadFormat.GROUP | ReadFormat.TOTAL_TIME_ENABLED | ReadFormat.TOTAL_TIME_RUNNING | ReadFormat.ID | ReadFormat.LOST;
  const attr = attrOf(sampleType, { readFormat, sampleRegsUser: 0b101n, sampleRegsIntr: 0xffn, branchSampleType: 1n << 17n });
  const tail = new ByteWriter()
    .raw(
      readBlock(
        readFormat,
        [
          { value: 11n, id: 1n, lost: 0n },
          { value: 22n, id: 2n, lost: 3n },
        ],
        1000n,
        900n,
      ),
    )
    .u64(5n)
    .u64(KERNEL_MARK)
    .u64(0xffffffff81234567n)
    .u64(0xffffffff81000010n)
    .u64(USER_MARK)
    .u64(0x401136n) // callchain
    .u32(12)
    .raw([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) // raw: 4 + 12 = 16
    .u64(2n)
    .u64(7n) // branch nr, hw_idx
    .u64(0x401000n)
    .u64(0x402000n)
    .u64(1n | (123n << 4n) | (3n << 20n))
    .u64(0x403000n)
    .u64(0x404000n)
    .u64(2n)
    .u64(2n)
    .u64(0xaan)
    .u64(0xccn) // regs user: abi 64, r0, r2
    .u64(16n)
    .raw(Array.from({ length: 16 }, (_, i) => i))
    .u64(10n) // stack user
    .u32(0x11223344)
    .u16(0x5566)
    .u16(0x7788) // weight struct
    .u64(0x1234n) // data src
    .u64(0x55n) // transaction
    .u64(0n) // regs intr abi NONE: no registers follow
    .u64(0xdead000n) // phys addr
    .u64(99n) // cgroup
    .u64(4096n) // data page size
    .u64(2097152n) // code page size
    .u64(8n)
    .raw([9, 8, 7, 6, 5, 4, 3, 2]) // aux
    .toBytes();
  const bytes = sampleRecord(
    sampleType,
    { id: 77n, ip: 0xffffffff81234567n, pid: 100, tid: 101, time: 123456789012345678n, addr: 0x7ffd0000n, streamId: 78n, cpu: 1, period: 4000n, tail },
    Misc.KERNEL | Misc.EXACT_IP,
  );
  return { attr, bytes };
}

describe('decode/record', () => {
  it('decodes every sample_type field of one sample', () => {
    const { attr, bytes } = everythingSample();
    const record = decodeRecordBytes(bytes, 0, eventOf(0, attr, [77n], 'cpu-clock'));
    assert.equal(record.type, 'SAMPLE');
    assert.equal(record.event, 'cpu-clock');
    assert.equal(record.misc, Misc.KERNEL | Misc.EXACT_IP);
    assert.equal(record.timeNs, 123456789012345678n);
    assert.deepEqual([record.pid, record.tid, record.cpu], [100, 101, 1]);
    const f = record.fields;
    assert.equal(f.identifier, 77n);
    assert.equal(f.id, 77n);
    assert.equal(f.ip, 0xffffffff81234567n);
    assert.equal(f.addr, 0x7ffd0000n);
    assert.equal(f.streamId, 78n);
    assert.equal(f.period, 4000n);
    const read = f.read as ReadBlock;
    assert.equal(read.timeEnabled, 1000n);
    assert.equal(read.timeRunning, 900n);
    assert.deepEqual(read.values, [
      { value: 11n, id: 1n, lost: 0n },
      { value: 22n, id: 2n, lost: 3n },
    ]);
    const chain = f.callchain as CallchainFrame[];
    assert.deepEqual(
      chain.map((frame) => [frame.context, frame.isMarker]),
      [
        ['kernel', true],
        ['kernel', false],
        ['kernel', false],
        ['user', true],
        ['user', false],
      ],
    );
    assert.equal(chain[4].ip, 0x401136n);
    assert.deepEqual(Array.from(f.raw as Uint8Array), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const branches = f.branchStack as { hwIndex?: bigint; entries: BranchEntry[] };
    assert.equal(branches.hwIndex, 7n);
    assert.equal(branches.entries.length, 2);
    assert.deepEqual(
      [branches.entries[0].from, branches.entries[0].to, branches.entries[0].mispred, branches.entries[0].cycles, branches.entries[0].branchType],
      [0x401000n, 0x402000n, true, 123, 3],
    );
    assert.equal(branches.entries[1].predicted, true);
    const regsUser = f.regsUser as RegsBlock;
    assert.equal(regsUser.abi, 2n);
    assert.deepEqual(regsUser.regs, { 0: 0xaan, 2: 0xccn });
    assert.deepEqual(f.regsIntr, { abi: 0n, regs: {} });
    const stack = f.stackUser as { size: bigint; data: Uint8Array; dynSize: bigint };
    assert.equal(stack.size, 16n);
    assert.equal(stack.dynSize, 10n);
    assert.equal(stack.data[15], 15);
    assert.deepEqual(f.weight, { var1Dw: 0x11223344, var2W: 0x5566, var3W: 0x7788 });
    assert.equal(f.dataSrc, 0x1234n);
    assert.equal(f.transaction, 0x55n);
    assert.equal(f.physAddr, 0xdead000n);
    assert.equal(f.cgroup, 99n);
    assert.equal(f.dataPageSize, 4096n);
    assert.equal(f.codePageSize, 2097152n);
    assert.deepEqual(Array.from(f.aux as Uint8Array), [9, 8, 7, 6, 5, 4, 3, 2]);
    assert.equal(f.trailingBytes, undefined, 'every byte accounted for');
  });

  it('decodes a plain WEIGHT, a non-group READ, branch counters and an empty user stack', () => {
    const st = Sample.READ | Sample.BRANCH_STACK | Sample.STACK_USER | Sample.WEIGHT;
    const readFormat = ReadFormat.TOTAL_TIME_RUNNING | ReadFormat.ID;
    const attr = attrOf(st, { readFormat, branchSampleType: 1n << 19n });
    const tail = new ByteWriter()
      .raw(readBlock(readFormat, [{ value: 5n, id: 9n }], 0n, 44n))
      .u64(1n)
      .u64(1n)
      .u64(2n)
      .u64(0n)
      .u64(6n) // 1 branch, then its counter
      .u64(0n) // stack size 0: no data, no dyn_size
      .u64(300n)
      .toBytes();
    const record = decodeRecordBytes(sampleRecord(st, { tail }), 0, eventOf(0, attr));
    assert.deepEqual(record.fields.read, { timeRunning: 44n, values: [{ value: 5n, id: 9n }] });
    const branches = record.fields.branchStack as { hwIndex?: bigint; entries: BranchEntry[]; counters?: bigint[] };
    assert.equal(branches.hwIndex, undefined);
    assert.deepEqual(branches.counters, [6n]);
    assert.equal((record.fields.stackUser as { size: bigint }).size, 0n);
    assert.equal(record.fields.weight, 300n);
  });

  it('decodes every non-sample record type with its sample_id trailer', () => {
    const st = Sample.TID | Sample.TIME | Sample.ID | Sample.STREAM_ID | Sample.CPU | Sample.IDENTIFIER;
    const attr = attrOf(st, { flags: { sampleIdAll: true }, readFormat: ReadFormat.ID });
    const event = eventOf(0, attr, [5n], 'dummy');
    const ids = { pid: 1, tid: 2, time: 3000n, id: 5n, streamId: 6n, cpu: 7 };
    const w = () => new ByteWriter();
    const cases: [number, number, Uint8Array, Record<string, unknown>][] = [
      [
        RecordType.MMAP,
        0,
        w().u32(10).u32(11).u64(0x400000n).u64(0x1000n).u64(0n).cstring('/bin/true').toBytes(),
        { pid: 10, tid: 11, addr: 0x400000n, len: 0x1000n, pgoff: 0n, filename: '/bin/true', data: false },
      ],
      [RecordType.LOST, 0, w().u64(5n).u64(12n).toBytes(), { id: 5n, lost: 12n }],
      [RecordType.COMM, Misc.COMM_EXEC, w().u32(10).u32(10).cstring('worker').toBytes(), { pid: 10, tid: 10, comm: 'worker', exec: true }],
      [RecordType.EXIT, 0, w().u32(10).u32(1).u32(12).u32(1).u64(2999n).toBytes(), { pid: 10, ppid: 1, tid: 12, ptid: 1, time: 2999n }],
      [RecordType.THROTTLE, 0, w().u64(100n).u64(5n).u64(6n).toBytes(), { time: 100n, id: 5n, streamId: 6n }],
      [RecordType.UNTHROTTLE, 0, w().u64(200n).u64(5n).u64(6n).toBytes(), { time: 200n, id: 5n, streamId: 6n }],
      [RecordType.FORK, 0, w().u32(20).u32(10).u32(20).u32(10).u64(2998n).toBytes(), { pid: 20, ppid: 10, tid: 20, ptid: 10, time: 2998n }],
      [RecordType.READ, 0, w().u32(10).u32(11).u64(77n).u64(5n).toBytes(), { pid: 10, tid: 11, read: { values: [{ value: 77n, id: 5n }] } }],
      [
        RecordType.MMAP2,
        0,
        w().u32(10).u32(10).u64(0x7f0000000000n).u64(0x2000n).u64(0x1000n).u32(8).u32(1).u64(123456n).u64(1n).u32(5).u32(2).cstring('/lib/libc.so.6').toBytes(),
        {
          pid: 10,
          tid: 10,
          addr: 0x7f0000000000n,
          len: 0x2000n,
          pgoff: 0x1000n,
          maj: 8,
          min: 1,
          ino: 123456n,
          inoGeneration: 1n,
          prot: 5,
          flags: 2,
          filename: '/lib/libc.so.6',
          data: false,
        },
      ],
      [
        RecordType.MMAP2,
        Misc.MMAP_BUILD_ID,
        w()
          .u32(10)
          .u32(10)
          .u64(0x1000n)
          .u64(0x1000n)
          .u64(0n)
          .u8(4)
          .u8(0)
          .u16(0)
          .raw([0xde, 0xad, 0xbe, 0xef])
          .raw(new Uint8Array(16))
          .u32(5)
          .u32(2)
          .cstring('/x')
          .toBytes(),
        { pid: 10, tid: 10, addr: 0x1000n, len: 0x1000n, pgoff: 0n, buildId: 'deadbeef', prot: 5, flags: 2, filename: '/x', data: false },
      ],
      [RecordType.AUX, 0, w().u64(64n).u64(128n).u64(1n).toBytes(), { auxOffset: 64n, auxSize: 128n, flags: 1n }],
      [RecordType.ITRACE_START, 0, w().u32(10).u32(11).toBytes(), { pid: 10, tid: 11 }],
      [RecordType.LOST_SAMPLES, 0, w().u64(4n).toBytes(), { lost: 4n }],
      [RecordType.SWITCH, Misc.SWITCH_OUT | Misc.SWITCH_OUT_PREEMPT, new Uint8Array(0), { out: true, preempt: true }],
      [RecordType.SWITCH_CPU_WIDE, 0, w().u32(30).u32(31).toBytes(), { nextPrevPid: 30, nextPrevTid: 31, out: false, preempt: false }],
      [
        RecordType.NAMESPACES,
        0,
        w().u32(10).u32(10).u64(2n).u64(1n).u64(2n).u64(3n).u64(4n).toBytes(),
        {
          pid: 10,
          tid: 10,
          namespaces: [
            { dev: 1n, inode: 2n },
            { dev: 3n, inode: 4n },
          ],
        },
      ],
      [
        RecordType.KSYMBOL,
        0,
        w().u64(0xffffffffc0000000n).u32(256).u16(1).u16(0).cstring('bpf_prog_x').toBytes(),
        { addr: 0xffffffffc0000000n, len: 256, ksymType: 1, flags: 0, name: 'bpf_prog_x' },
      ],
      [RecordType.BPF_EVENT, 0, w().u16(1).u16(0).u32(42).raw([1, 2, 3, 4, 5, 6, 7, 8]).toBytes(), { bpfType: 1, flags: 0, id: 42, tag: '0102030405060708' }],
      [RecordType.CGROUP, 0, w().u64(9n).cstring('/sys/fs/cgroup/x').toBytes(), { id: 9n, path: '/sys/fs/cgroup/x' }],
      [
        RecordType.TEXT_POKE,
        0,
        w().u64(0xffffffff81000000n).u16(2).u16(3).raw([1, 2, 3, 4, 5]).pad8().toBytes(),
        { addr: 0xffffffff81000000n, oldBytes: Uint8Array.from([1, 2]), newBytes: Uint8Array.from([3, 4, 5]) },
      ],
      [RecordType.AUX_OUTPUT_HW_ID, 0, w().u64(3n).toBytes(), { hwId: 3n }],
      [
        RecordType.CALLCHAIN_DEFERRED,
        0,
        w().u64(0xc00c1en).u64(2n).u64(USER_MARK).u64(0x401000n).toBytes(),
        {
          cookie: 0xc00c1en,
          callchain: [
            { ip: USER_MARK, context: 'user', isMarker: true },
            { ip: 0x401000n, context: 'user', isMarker: false },
          ],
        },
      ],
    ];
    for (const [type, misc, body, expected] of cases) {
      const bytes = otherRecord(type, misc, body, st, true, ids);
      const record = decodeRecordBytes(bytes, 0, event);
      const { sampleId, ...fields } = record.fields;
      assert.deepEqual(fields, expected, `type ${type}`);
      assert.deepEqual(sampleId, { pid: 1, tid: 2, time: 3000n, id: 5n, streamId: 6n, cpu: 7, identifier: 5n }, `trailer of type ${type}`);
      assert.equal(record.timeNs, 3000n);
      assert.equal(record.cpu, 7);
      assert.equal(record.pid, typeof expected.pid === 'number' ? expected.pid : 1);
    }
    assert.equal(cases.length, 22, 'MMAP2 twice: 21 record types');
  });

  it('turns unknown record types into RAW_<n> records', () => {
    const bytes = new ByteWriter().u32(4000).u16(0).u16(16).u64(0x0102n).toBytes();
    const record = decodeRecordBytes(bytes, 0, undefined);
    assert.equal(record.type, 'RAW_4000');
    assert.deepEqual(record.fields, { bytes: '0201000000000000' });
  });

  it('throws DecodeError (with offset and what) on bad bytes', () => {
    const attr = attrOf(Sample.CALLCHAIN);
    const hugeChain = sampleRecord(Sample.CALLCHAIN, { tail: new ByteWriter().u64(1000n).u64(1n).toBytes() });
    assert.throws(
      () => decodeRecordBytes(hugeChain, 0, eventOf(0, attr)),
      (error: unknown) => error instanceof DecodeError && error.what === 'SAMPLE.callchain.nr' && error.offset === 8,
    );
    const hugeRaw = sampleRecord(Sample.RAW, { tail: new ByteWriter().u32(64).u32(0).toBytes() });
    assert.throws(() => decodeRecordBytes(hugeRaw, 0, eventOf(0, attrOf(Sample.RAW))), DecodeError);
    const cutComm = otherRecord(RecordType.COMM, 0, new ByteWriter().u32(1).toBytes().subarray(0, 0));
    assert.throws(() => decodeRecordBytes(cutComm, 0, eventOf(0, attrOf(0))), DecodeError);
    assert.throws(() => decodeRecordBytes(new Uint8Array(4), 0, undefined), DecodeError);
    assert.throws(() => decodeRecordBytes(new ByteWriter().u32(9).u16(0).u16(64).toBytes(), 0, eventOf(0, attrOf(0))), DecodeError);
    assert.throws(() => decodeRecordBytes(sampleRecord(Sample.IP, {}), 0, undefined), DecodeError);
  });

  it('decodes a row of a snapshot on demand, with the event its id maps to', () => {
    const st = Sample.IDENTIFIER | Sample.IP | Sample.TIME;
    const events = [eventOf(0, attrOf(st), [1n], 'a'), eventOf(1, attrOf(st), [2n], 'b')];
    const ring = ringFromRecords([sampleRecord(st, { id: 2n, ip: 0x10n, time: 5n }), sampleRecord(st, { id: 1n, ip: 0x20n, time: 6n })], 256, 'backward', {
      cpu: 3,
    });
    const snapshot = decodeSnapshot({ events, rings: [ring] });
    const first = decodeRecordAt(snapshot, 0);
    assert.equal(first.event, 'b');
    assert.equal(first.fields.ip, 0x10n);
    assert.equal(first.cpu, 3, 'per-CPU ring gives the cpu when the sample has none');
    assert.equal(decodeRecordAt(snapshot, 1).event, 'a');
    assert.throws(() => decodeRecordAt(snapshot, 2), DecodeError);
  });
});
