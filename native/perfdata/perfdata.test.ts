// Synthetic-bytes tests of the writer and reader (the real-perf tests live in test/perfdata).

import assert from 'node:assert/strict';
import { decodeRecordAt, decodeSnapshot } from '../decode';
import type { DecodedSnapshot } from '../decode/types';
import type { EventDescription, RingCopy, TracepointFormat } from '../abi/snapshot';
import { PerfType, RecordType, Sample, SoftwareConfig } from '../abi/uapi';
import { parseTracepointFormat } from '../specs/tracepoint-format';
import { Cursor, Feature, PerfDataError, UserRecord } from './format';
import { bytesSource, readPerfData, streamPerfData, wholeImport } from './reader';
import { buildTracingData, DEFAULT_HEADER_EVENT, DEFAULT_HEADER_PAGE, formatToText, parseTracingData } from './tracing';
import { writePerfData, type WriteOptions } from './writer';

const FORMAT_TEXT = `name: sys_enter_openat
ID: 612
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;
\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;
\tfield:char comm[16];\toffset:32;\tsize:16;\tsigned:0;

print fmt: "dfd: 0x%08lx, filename: 0x%08lx", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename))
`;

/** A SAMPLE with IP|TID|TIME|PERIOD (no ids), as the kernel would write it. */
function sample(ip: bigint, pid: number, time: bigint, period: bigint): Uint8Array {
  const bytes = new Uint8Array(40);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, RecordType.SAMPLE, true);
  view.setUint16(4, 2, true);
  view.setUint16(6, 40, true);
  view.setBigUint64(8, ip, true);
  view.setInt32(16, pid, true);
  view.setInt32(20, pid, true);
  view.setBigUint64(24, time, true);
  view.setBigUint64(32, period, true);
  return bytes;
}

function snapshotOf(records: Uint8Array[]): DecodedSnapshot {
  const bytes = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const record of records) {
    bytes.set(record, at);
    at += record.length;
  }
  const event: EventDescription = {
    index: 0,
    name: 'task-clock',
    attr: {
      type: PerfType.SOFTWARE,
      config: BigInt(SoftwareConfig.TASK_CLOCK),
      samplePeriod: 1000n,
      sampleType: Sample.IP | Sample.TID | Sample.TIME | Sample.PERIOD,
      readFormat: 0,
      flags: {},
    },
    ids: [],
  };
  const ring: RingCopy = {
    ringId: 0,
    label: 't',
    cpu: 0,
    tid: 1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'paused',
  };
  return decodeSnapshot({ events: [event], rings: [ring] });
}

const OPTIONS: WriteOptions = {
  synthesized: [
    {
      pid: 42,
      tid: 42,
      comm: 'demo',
      maps: [{ start: 0x400000n, end: 0x401000n, pgoff: 0n, path: '/usr/bin/demo', buildId: '00112233445566778899aabbccddeeff00112233' }],
    },
  ],
  cmdline: ['ringside', 'capture', '-e', 'task-clock'],
  hostname: 'box',
  osrelease: '6.1.0',
  arch: 'x86_64',
  nrcpus: 4,
  nrcpusAvailable: 8,
  cpudesc: 'Test CPU',
};

describe('perfdata (synthetic bytes)', () => {
  it('tracing data: build -> parse keeps page size, headers and every format field', () => {
    const format = parseTracepointFormat(FORMAT_TEXT, 'syscalls');
    const blob = buildTracingData({ pageSize: 4096, headerPage: DEFAULT_HEADER_PAGE, headerEvent: DEFAULT_HEADER_EVENT, formats: [format, format] });
    const parsed = parseTracingData(new Cursor(blob, true, 'x', 0, 'tracing'));
    assert.equal(parsed.version, '0.6');
    assert.equal(parsed.pageSize, 4096);
    assert.equal(parsed.headerPage, DEFAULT_HEADER_PAGE);
    assert.equal(parsed.byteLength, blob.length);
    assert.deepEqual(
      parsed.systems.map((s) => [s.system, s.formats.length]),
      [['syscalls', 1]],
      'duplicate formats written once',
    );
    const back: TracepointFormat = parseTracepointFormat(parsed.systems[0].formats[0], 'syscalls');
    assert.deepEqual(back, format);
    assert.equal(formatToText(back), formatToText(format));
  });

  it('tracing data with a bad magic is a PerfDataError at the blob start', () => {
    const blob = new Uint8Array(32);
    assert.throws(
      () => parseTracingData(new Cursor(blob, true, 'f.data', 100, 'tracing')),
      (e: unknown) => e instanceof PerfDataError && e.offset === 100,
    );
  });

  it('writer -> reader: features, ids, synthesized COMM/MMAP2, IDENTIFIER inserted, time order, FINISHED_ROUND', () => {
    // Written out of order on purpose: the writer emits time order.
    const snapshot = snapshotOf([sample(0x400100n, 42, 2000n, 7n), sample(0x400200n, 42, 1000n, 5n)]);
    const file = writePerfData(snapshot, OPTIONS);
    const read = readPerfData(file, 'synthetic.data');
    assert.deepEqual(read.warnings, []);
    const f = read.features;
    assert.equal(f.hostname, 'box');
    assert.equal(f.osrelease, '6.1.0');
    assert.equal(f.arch, 'x86_64');
    assert.equal(f.nrcpus, 4);
    assert.equal(f.nrcpusAvailable, 8);
    assert.equal(f.cpudesc, 'Test CPU');
    assert.deepEqual(f.cmdline, OPTIONS.cmdline);
    assert.deepEqual(f.buildIds, [{ pid: -1, cpumode: 2, buildId: '00112233445566778899aabbccddeeff00112233', path: '/usr/bin/demo' }]);
    assert.ok(!f.present.includes(Feature.TRACING_DATA), 'no tracing data without tracepoint events');
    assert.equal(read.events.length, 1);
    assert.equal(read.events[0].name, 'task-clock');
    assert.equal(read.events[0].ids.length, 1);
    assert.ok(read.events[0].attr.flags.sampleIdAll);
    assert.ok(read.events[0].attr.sampleType & Sample.IDENTIFIER);
    assert.equal(read.recordCounts.FINISHED_ROUND, 1);
    const decoded = decodeSnapshot({ events: read.events, rings: read.rings });
    assert.deepEqual(decoded.anomalies, []);
    const records = Array.from({ length: decoded.columns.length }, (_, row) => decodeRecordAt(decoded, row));
    assert.deepEqual(
      records.map((r) => r.type),
      ['COMM', 'MMAP2', 'SAMPLE', 'SAMPLE'],
    );
    assert.equal(records[0].fields.comm, 'demo');
    assert.equal(records[1].fields.filename, '/usr/bin/demo');
    assert.equal(records[1].fields.addr, 0x400000n);
    assert.equal(records[1].fields.len, 0x1000n);
    assert.deepEqual(
      records.slice(2).map((r) => [r.timeNs, r.fields.ip, r.fields.period, r.fields.identifier]),
      [
        [1000n, 0x400200n, 5n, read.events[0].ids[0]],
        [2000n, 0x400100n, 7n, read.events[0].ids[0]],
      ],
    );
  });

  it('reader sorts an out-of-order data section by time', () => {
    const file = writePerfData(snapshotOf([sample(0x1n, 1, 100n, 1n), sample(0x2n, 1, 200n, 1n), sample(0x3n, 1, 300n, 1n)]), { ...OPTIONS, synthesized: [] });
    const view = new DataView(file.buffer);
    const dataStart = Number(view.getBigUint64(40, true));
    // Swap the first two 48-byte samples (40 + the inserted IDENTIFIER) in the file.
    const first = file.slice(dataStart, dataStart + 48);
    file.copyWithin(dataStart, dataStart + 48, dataStart + 96);
    file.set(first, dataStart + 48);
    const read = readPerfData(file, 'swapped.data');
    const decoded = decodeSnapshot({ events: read.events, rings: read.rings });
    const ips = Array.from({ length: decoded.columns.length }, (_, row) => decodeRecordAt(decoded, row).fields.ip);
    assert.deepEqual(ips, [0x1n, 0x2n, 0x3n]);
  });

  // perf's ordered-events rule, round by round: nothing goes at the first round (its limit is time 0), the second lets
  // go what is at or before the first's newest time. A record of a later round earlier than one let go (perf warns
  // "Timestamp below last timeslice flush") stops the rounds: what they told is not the start of the time order, and
  // `released` says so; the ring is the whole data section sorted all the same.
  it('rounds let records go in time order, and a record earlier than one let go stops them', () => {
    const file = writePerfData(snapshotOf([100n, 200n, 300n, 400n, 500n, 600n].map((time, k) => sample(BigInt(k + 1), 1, time, 1n))), {
      ...OPTIONS,
      synthesized: [],
    });
    const view = new DataView(file.buffer);
    const dataStart = Number(view.getBigUint64(40, true));
    const slot = (k: number) => dataStart + 48 * k;
    const original = file.slice(dataStart, dataStart + 48 * 6);
    const put = (k: number, record: number) => file.set(original.subarray(48 * record, 48 * record + 48), slot(k));
    /** A FINISHED_ROUND, then a 40-byte file-only record the reader skips (THREAD_MAP), in one 48-byte slot. */
    const finishRound = (k: number) => {
      view.setUint32(slot(k), UserRecord.FINISHED_ROUND, true);
      view.setUint16(slot(k) + 6, 8, true);
      view.setUint32(slot(k) + 8, UserRecord.THREAD_MAP, true);
      view.setUint16(slot(k) + 14, 40, true);
      view.setBigUint64(slot(k) + 16, 0n, true);
    };
    // File order: ip 1 (t 100), ip 3 (t 300), round, ip 2 (t 200), round, ip 5 with its time set to 50.
    put(0, 0);
    put(1, 2);
    finishRound(2);
    put(3, 1);
    finishRound(4);
    put(5, 4);
    view.setBigUint64(slot(5) + 32, 50n, true);
    const ipsOf = (ring: RingCopy) => {
      const decoded = decodeSnapshot({ events: readPerfData(file, 'rounds.data').events, rings: [ring] });
      return Array.from({ length: decoded.columns.length }, (_, row) => decodeRecordAt(decoded, row).fields.ip);
    };
    const told: RingCopy[] = [];
    const stream = streamPerfData(bytesSource(file), 'rounds.data', { onRound: (batch) => told.push(batch.ring) });
    assert.deepEqual(told.map(ipsOf), [[0x1n, 0x2n, 0x3n]], 'the second round let go what is at or before 300, in time order');
    assert.equal(stream.released, 0, 'ip 5 at 50 came after 300 was let go');
    assert.deepEqual(ipsOf(wholeImport(stream, 'rounds.data').rings[0]), [0x5n, 0x1n, 0x2n, 0x3n]);

    // Without the late record the rounds are the start of the time order.
    view.setBigUint64(slot(5) + 32, 500n, true);
    const inOrder: RingCopy[] = [];
    const kept = streamPerfData(bytesSource(file), 'rounds.data', { onRound: (batch) => inOrder.push(batch.ring) });
    assert.equal(kept.released, 3);
    assert.deepEqual(ipsOf(wholeImport(kept, 'rounds.data').rings[0]), [0x1n, 0x2n, 0x3n, 0x5n]);
  });

  it('a damaged feature section is an error, or with keepGoing a warning while the samples survive', () => {
    const file = writePerfData(snapshotOf([sample(0x1n, 1, 100n, 1n)]), OPTIONS);
    const view = new DataView(file.buffer);
    const tableOffset = Number(view.getBigUint64(40, true) + view.getBigUint64(48, true));
    // First feature present is BUILD_ID: point it past the end of the file.
    view.setBigUint64(tableOffset, BigInt(file.length + 10), true);
    assert.throws(
      () => readPerfData(file, 'feat.data'),
      (e: unknown) => e instanceof PerfDataError && e.offset === tableOffset && /BUILD_ID/.test(e.message),
    );
    const lenient = readPerfData(file, 'feat.data', { keepGoing: true });
    assert.equal(lenient.warnings.length, 1);
    assert.equal(lenient.features.hostname, 'box');
    assert.equal(decodeSnapshot({ events: lenient.events, rings: lenient.rings }).columns.length, 3);
  });
});
