import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../native/decode/columns';
import { attrOf, ByteWriter, eventOf, otherRecord, ringFromRecords, sampleRecord } from '../native/decode/test-records';
import { RecordType, Sample } from '../native/perf/uapi';
import { validateHostToWebview } from './protocol';
import { rowDetails, snapshotToWire } from './wire';

const sampleType = Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN;

function snapshot() {
  const comm = new ByteWriter().u32(42).u32(43).raw(new TextEncoder().encode('worker\0\0')).toBytes();
  const chain = (ips: bigint[]) => { const w = new ByteWriter().u64(BigInt(ips.length)); for (const ip of ips) w.u64(ip); return w.toBytes(); };
  const USER_CONTEXT = 0xfffffffffffffe00n;
  const records = [
    otherRecord(RecordType.COMM, 0, comm),
    sampleRecord(sampleType, { ip: 0x401000n, pid: 42, tid: 43, time: 100n, tail: chain([USER_CONTEXT, 0x401000n, 0x401100n]) }),
    sampleRecord(sampleType, { ip: 0x401000n, pid: 42, tid: 43, time: 200n, tail: chain([USER_CONTEXT, 0x401000n]) }),
  ];
  return decodeSnapshot({ events: [eventOf(0, attrOf(sampleType), [], 'task-clock')], rings: [ringFromRecords(records, 4096, 'backward')] });
}

describe('host-side wire: decoded snapshot → protocol messages', () => {
  it('names threads from COMM records and symbolizes each distinct IP once', () => {
    const decoded = snapshot();
    const asked: bigint[] = [];
    const { start, batches } = snapshotToWire(decoded, {
      snapshotId: 's', name: 'S', takenAtMs: 1,
      symbolize: (_pid, ip) => { asked.push(ip); return ip === 0x401000n ? 'main+0x10' : undefined; },
    });
    assert.ok(validateHostToWebview(start).ok);
    assert.deepEqual(start.threads, [{ pid: 42, tid: 43, comm: 'worker' }]);
    assert.deepEqual(asked, [0x401000n], 'cached per (pid, ip)');
    const batch = batches[0];
    assert.deepEqual(batch.symbolTable, ['main+0x10']);
    assert.deepEqual([...new Int32Array(batch.symbolIndex!)], [-1, 0, 0]);
  });

  it('details carry the symbolized callchain without context markers, and the source line', () => {
    const decoded = snapshot();
    const details = rowDetails(decoded, 1, (_pid, ip) => `f_${ip.toString(16)}`, (_pid, ip) => ({ file: 'a.c', line: Number(ip & 0xfffn) }));
    assert.deepEqual(details.callchain, [
      { ip: '0x401000', symbol: 'f_401000', file: 'a.c', line: 0 },
      { ip: '0x401100', symbol: 'f_401100', file: 'a.c', line: 0x100 },
    ]);
    assert.deepEqual(details.source, { file: 'a.c', line: 0 });
    assert.equal(details.fields.sym, 'f_401000');
    assert.equal(details.fields.ip, '0x401000');
    assert.ok(validateHostToWebview({ type: 'detailsReply', replyTo: 1, snapshotId: 's', row: 1, details }).ok);
  });
});
