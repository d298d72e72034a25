import * as assert from 'node:assert/strict';
import { Misc, RecordType, Sample } from '../abi/uapi';
import { decodeSnapshot } from './columns';
import { formatRecordJson, formatSnapshotJsonl, toJson } from './jsonl';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord } from './test-records';
import type { EventDescription, TracepointFormat } from '../abi/snapshot';

const KERNEL_MARK = 0xffffffffffffff80n;
const USER_MARK = 0xfffffffffffffe00n;

describe('decode/jsonl', () => {
  it('writes a SAMPLE line with exact integer time, hex ip/addr, symbols and callchain', () => {
    const st = Sample.IP | Sample.TID | Sample.TIME | Sample.ADDR | Sample.CPU | Sample.PERIOD | Sample.CALLCHAIN;
    const time = 1234567890123456789n; // far above 2^53: a double would round it
    const tail = new ByteWriter().u64(5n).u64(KERNEL_MARK).u64(0xffffffff81000100n).u64(USER_MARK).u64(0x401136n).u64(0x401200n).toBytes();
    const bytes = sampleRecord(st, { ip: 0x401136n, pid: 50, tid: 51, time, addr: 0x404028n, cpu: 1, period: 1n, tail }, Misc.USER);
    const snapshot = decodeSnapshot({ events: [eventOf(0, attrOf(st), [], 'mem:counter:w')], rings: [ringFromRecords([bytes], 512, 'backward')] });
    const calls: [number, bigint, boolean][] = [];
    const line = formatRecordJson(snapshot, 0, (pid, ip, kernel) => {
      calls.push([pid, ip, kernel]);
      return ip === 0x401136n ? 'bump+0x6' : kernel ? 'do_syscall_64+0x10' : undefined;
    });
    assert.ok(line.includes('"time":1234567890123456789,'), line);
    const parsed = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(
      { ...parsed, time: undefined },
      {
        type: 'SAMPLE',
        event: 'mem:counter:w',
        time: undefined,
        pid: 50,
        tid: 51,
        cpu: 1,
        ip: '0x401136',
        sym: 'bump+0x6',
        period: 1,
        addr: '0x404028',
        callchain: ['0xffffffff81000100', '0x401136', '0x401200'],
        callchainSyms: ['do_syscall_64+0x10', 'bump+0x6', null],
      },
    );
    assert.deepEqual(calls, [
      [50, 0x401136n, false],
      [50, 0xffffffff81000100n, true],
      [50, 0x401136n, false],
      [50, 0x401200n, false],
    ]);
    const plain = JSON.parse(formatRecordJson(snapshot, 0)) as Record<string, unknown>;
    assert.equal(plain.sym, undefined);
    assert.equal(plain.callchainSyms, undefined);
  });

  it('writes tracepoint fields under "fields" and side-band records with their own fields', () => {
    const tp: TracepointFormat = {
      system: 'syscalls',
      name: 'sys_enter_getpid',
      id: 9,
      printFormat: '',
      fields: [
        {
          name: 'common_type',
          declaration: 'unsigned short common_type',
          offset: 0,
          size: 2,
          signed: false,
          arrayLength: 0,
          location: 'inline',
          isString: false,
        },
        { name: '__syscall_nr', declaration: 'int __syscall_nr', offset: 8, size: 4, signed: true, arrayLength: 0, location: 'inline', isString: false },
        { name: 'count', declaration: 'size_t count', offset: 16, size: 8, signed: false, arrayLength: 0, location: 'inline', isString: false },
      ],
    };
    const st = Sample.IDENTIFIER | Sample.TID | Sample.TIME | Sample.RAW;
    const tpEvent: EventDescription = {
      ...eventOf(0, attrOf(st, { type: 2, flags: { sampleIdAll: true } }), [3n], 'syscalls:sys_enter_getpid'),
      tracepoint: tp,
    };
    const raw = new ByteWriter().u32(28).u16(9).u16(0).u32(7).u32(39).u32(0).u64(0xffffffffffffff00n).u32(0).toBytes();
    const sample = sampleRecord(st, { id: 3n, pid: 7, tid: 7, time: 20n, tail: raw });
    const comm = otherRecord(RecordType.COMM, Misc.COMM_EXEC, new ByteWriter().u32(7).u32(7).cstring('fixture').toBytes(), st, true, {
      pid: 7,
      tid: 7,
      time: 10n,
      id: 3n,
    });
    const exit = otherRecord(RecordType.EXIT, 0, new ByteWriter().u32(7).u32(1).u32(7).u32(1).u64(30n).toBytes(), st, true, {
      pid: 7,
      tid: 7,
      time: 30n,
      id: 3n,
    });
    const snapshot = decodeSnapshot({ events: [tpEvent], rings: [ringFromRecords([comm, sample, exit], 1024, 'backward', { cpu: 0 })] });
    const lines = formatSnapshotJsonl(snapshot).map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines[0], {
      type: 'COMM',
      event: 'syscalls:sys_enter_getpid',
      time: 10,
      pid: 7,
      tid: 7,
      cpu: 0,
      comm: 'fixture',
      exec: true,
      sampleId: { pid: 7, tid: 7, time: 10, identifier: 3 },
    });
    // JSON.parse reads the u64 as the nearest double; the text itself is checked digit for digit below.
    assert.deepEqual(lines[1], {
      type: 'SAMPLE',
      event: 'syscalls:sys_enter_getpid',
      time: 20,
      pid: 7,
      tid: 7,
      cpu: 0,
      fields: { __syscall_nr: 39, count: Number('18446744073709551360') },
      identifier: 3,
    });
    assert.ok(formatRecordJson(snapshot, 1).includes('"count":18446744073709551360'), 'u64 digits written exactly');
    assert.equal(lines[2].type, 'EXIT');
    assert.equal(lines[2].ppid, 1);
  });

  it('serialises bigint exactly, bytes as hex and addresses as hex strings', () => {
    assert.equal(
      toJson({ a: 2n ** 64n - 1n, addr: 255n, b: Uint8Array.from([1, 171]), c: undefined, d: [1, 'x', null, NaN] }),
      '{"a":18446744073709551615,"addr":"0xff","b":"01ab","d":[1,"x",null,null]}',
    );
  });
});
