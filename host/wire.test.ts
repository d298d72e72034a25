import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../native/decode/columns';
import { decodeRecordAt } from '../native/decode/record';
import { attrOf, ByteWriter, eventOf, otherRecord, prng, ringFromRecords, sampleRecord } from '../native/decode/test-records';
import { RecordType, Sample } from '../native/abi/uapi';
import { validateHostToWebview } from '../shared/validate';
import { lossesOf, rowDetails, snapshotToWire } from './wire';
import { fieldValueMatches, rowsMatchingField } from './field-filter';
import { FrameSymbols } from './frame-symbols';
import type { TracepointFormat } from '../native/abi/snapshot';

const sampleType = Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN;

function snapshot() {
  const comm = new ByteWriter().u32(42).u32(43).raw(new TextEncoder().encode('worker\0\0')).toBytes();
  const chain = (ips: bigint[]) => {
    const w = new ByteWriter().u64(BigInt(ips.length));
    for (const ip of ips) w.u64(ip);
    return w.toBytes();
  };
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
      snapshotId: 's',
      name: 'S',
      takenAtMs: 1,
      symbols: new FrameSymbols((_pid, ip) => {
        asked.push(ip);
        return ip === 0x401000n ? 'main+0x10' : undefined;
      }),
    });
    assert.ok(validateHostToWebview(start).ok);
    assert.deepEqual(start.threads, [{ pid: 42, tid: 43, comm: 'worker' }]);
    assert.deepEqual(
      asked,
      [0x401000n, 0x401100n],
      'each distinct (pid, ip) once: sample IPs and callchain frames alike (the entry of a named function is placed for its line, not named)',
    );
    const batch = batches[0];
    assert.deepEqual(batch.symbolTable, ['main+0x10']);
    assert.deepEqual([...new Int32Array(batch.symbolIndex!)], [-1, 0, 0]);
    // Stacks by function name (offsets dropped), leaf first, each distinct stack once; rows refer to them.
    assert.deepEqual(start.stacks, { names: ['main', '[unknown]'], start: [0, 2, 3], frames: [0, 1, 0] });
    assert.deepEqual([...new Int32Array(batch.stackIndex!)], [-1, 0, 1]);
    assert.ok(validateHostToWebview(batch).ok);
  });

  it('stacks carry the line of each leaf address and of each function entry; another leaf line is another stack', () => {
    const chain = (ips: bigint[]) => {
      const w = new ByteWriter().u64(BigInt(ips.length + 1)).u64(0xfffffffffffffe00n);
      for (const ip of ips) w.u64(ip);
      return w.toBytes();
    };
    const sample = (time: bigint, ips: bigint[]) => sampleRecord(sampleType, { ip: ips[0], pid: 42, tid: 42, time, tail: chain(ips) });
    const decoded = decodeSnapshot({
      events: [eventOf(0, attrOf(sampleType), [], 'task-clock')],
      rings: [
        ringFromRecords(
          [sample(100n, [0x401000n, 0x401100n]), sample(200n, [0x401000n]), sample(300n, [0x401008n, 0x401100n]), sample(400n, [0x401000n, 0x401100n])],
          4096,
          'backward',
        ),
      ],
    });
    // hot starts at 0x400ff0 (line 10), main at 0x4010f0 (line 20).
    const lines = new Map([
      [0x400ff0n, 10],
      [0x401000n, 12],
      [0x401008n, 13],
      [0x4010f0n, 20],
      [0x401100n, 22],
    ]);
    const symbols = new FrameSymbols(
      (_pid, ip) => (ip < 0x4010f0n ? `hot+0x${(ip - 0x400ff0n).toString(16)}` : `main+0x${(ip - 0x4010f0n).toString(16)}`),
      (_pid, ip) => (lines.has(ip) ? { file: '/src/a.c', line: lines.get(ip)! } : undefined),
    );
    const { start, batches } = snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 1, symbols });
    assert.ok(validateHostToWebview(start).ok);
    const at = (line: number) => ({ file: '/src/a.c', line });
    assert.deepEqual(start.stacks, {
      names: ['hot', 'main'],
      start: [0, 2, 3, 5],
      frames: [0, 1, 0, 0, 1],
      locations: [at(12), at(10), at(20), at(13)],
      leafLocation: [0, 0, 3],
      nameLocation: [1, 2],
    });
    assert.deepEqual([...new Int32Array(batches[0].stackIndex!)].sort(), [0, 0, 1, 2]);
  });

  it('details carry the symbolized callchain without context markers, and the source line', () => {
    const decoded = snapshot();
    const details = rowDetails(
      decoded,
      1,
      new FrameSymbols(
        (_pid, ip) => `f_${ip.toString(16)}`,
        (_pid, ip) => ({ file: 'a.c', line: Number(ip & 0xfffn) }),
      ),
    );
    assert.deepEqual(details.callchain, [
      { ip: '0x401000', symbol: 0, file: 'a.c', line: 0 },
      { ip: '0x401100', symbol: 1, file: 'a.c', line: 0x100 },
    ]);
    assert.deepEqual(details.symbols, ['f_401000', 'f_401100']);
    assert.deepEqual(details.source, { file: 'a.c', line: 0 });
    assert.equal(details.fields.sym, 'f_401000');
    assert.equal(details.fields.ip, '0x401000');
    assert.ok(validateHostToWebview({ type: 'detailsReply', replyTo: 1, snapshotId: 's', row: 1, details }).ok);
  });
});

describe('host-side wire: threads', () => {
  it('names each thread by the COMM and FORK records in row order, then by its process', () => {
    const comm = (pid: number, tid: number, name: string) => otherRecord(RecordType.COMM, 0, new ByteWriter().u32(pid).u32(tid).cstring(name).toBytes());
    const fork = (pid: number, ppid: number) => otherRecord(RecordType.FORK, 0, new ByteWriter().u32(pid).u32(ppid).u32(pid).u32(ppid).u64(0n).toBytes());
    const sample = (pid: number, tid: number, time: bigint) => sampleRecord(Sample.TID | Sample.TIME, { pid, tid, time });
    const records = [
      fork(16, 10), // before its parent's COMM: nothing names it (taken out of row order, it would be "parent")
      comm(10, 10, 'parent'),
      fork(11, 10), // named "parent" until its own COMM below
      comm(12, 12, 'other'),
      sample(10, 10, 100n),
      fork(13, 12), // "other": its parent's name at the fork
      comm(11, 11, 'child'),
      sample(11, 11, 200n),
      sample(11, 15, 300n), // a thread no record names: its process's name
      sample(14, 14, 400n), // nothing names it
      sample(16, 16, 500n),
    ];
    const decoded = decodeSnapshot({
      events: [eventOf(0, attrOf(Sample.TID | Sample.TIME), [], 'task-clock')],
      rings: [ringFromRecords(records, 4096, 'forward')],
    });
    const { start } = snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 1 });
    assert.deepEqual(start.threads, [
      { pid: 10, tid: 10, comm: 'parent' },
      { pid: 11, tid: 11, comm: 'child' },
      { pid: 12, tid: 12, comm: 'other' },
      { pid: 13, tid: 13, comm: 'other' },
      { pid: 16, tid: 16, comm: '' }, // the FORK's row carries its pid and tid
      { pid: 11, tid: 15, comm: 'child' },
      { pid: 14, tid: 14, comm: '' },
    ]);
    assert.deepEqual(lossesOf(decoded), [], 'no LOST or LOST_SAMPLES record: no losses');
  });
});

describe('host-side wire: losses', () => {
  it("sends each LOST / LOST_SAMPLES record with its count, ring and the time of the ring's previous record", () => {
    const idType = Sample.TID | Sample.TIME;
    const ids = (time: bigint) => ({ pid: 42, tid: 43, time });
    const lost = (count: bigint, time: bigint) => otherRecord(RecordType.LOST, 0, new ByteWriter().u64(7n).u64(count).toBytes(), idType, true, ids(time));
    const lostSamples = otherRecord(RecordType.LOST_SAMPLES, 0, new ByteWriter().u64(3n).toBytes(), idType, true, ids(400n));
    const records = [
      lost(5n, 50n),
      sampleRecord(idType, { pid: 42, tid: 43, time: 100n }),
      lost(12n, 250n),
      sampleRecord(idType, { pid: 42, tid: 43, time: 300n }),
      lostSamples,
    ];
    // A forward ring keeps write order (a backward ring's walk moves each LOST before its partner record; the decoder tests cover that).
    const decoded = decodeSnapshot({
      events: [eventOf(0, attrOf(idType, { flags: { sampleIdAll: true } }), [], 'task-clock')],
      rings: [ringFromRecords(records, 4096, 'forward')],
    });
    const origin = decoded.columns.timeOriginNs;
    const at = (ns: bigint) => ns.toString();
    const label = decoded.coverage[0].label;
    assert.deepEqual(lossesOf(decoded), [
      { row: 0, kind: 'LOST', lost: '5', ring: label, sinceNs: null },
      { row: 2, kind: 'LOST', lost: '12', ring: label, sinceNs: at(100n) },
      { row: 4, kind: 'LOST_SAMPLES', lost: '3', ring: label, sinceNs: at(300n) },
    ]);
    assert.equal(origin + BigInt(decoded.columns.time[2]), 250n, 'the LOST record keeps its own time');
    const { start } = snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 1 });
    assert.equal(start.losses?.length, 3);
    assert.ok(validateHostToWebview(start).ok);
    const pastTheEnd = { ...start, losses: [{ ...start.losses![0], row: 5 }] };
    assert.equal(validateHostToWebview(pastTheEnd).ok, false, 'a row past the snapshot is rejected');
  });
});

describe('host-side wire: losses of many rings', () => {
  /** The plain way: every row in order, each ring's latest time kept, read at each loss. */
  function referenceLosses(decoded: ReturnType<typeof decodeSnapshot>): { row: number; lost: string; sinceNs: string | null }[] {
    const { kind, time, ring, length, timeOriginNs } = decoded.columns;
    const latest = new Map<number, number>();
    const out: { row: number; lost: string; sinceNs: string | null }[] = [];
    for (let row = 0; row < length; row++) {
      if (kind[row] === RecordType.LOST || kind[row] === RecordType.LOST_SAMPLES) {
        const since = latest.get(ring[row]);
        const lost = String((decodeRecordAt(decoded, row).fields as { lost?: bigint }).lost ?? 0n);
        out.push({ row, lost, sinceNs: since === undefined ? null : (timeOriginNs + BigInt(since)).toString() });
      }
      if (!Number.isNaN(time[row])) latest.set(ring[row], time[row]);
    }
    return out;
  }

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    // Odd seeds record without sample_id_all: the LOST records carry no time, and a run of them shares one "since".
    const timedLosses = seed % 2 === 0;
    it(`seed ${seed}: three rings merged by time, losses ${timedLosses ? 'timed' : 'untimed'}, in runs and alone, some rings silent for long stretches: each loss's "since" is the plain pass's`, () => {
      const random = prng(seed);
      const idType = Sample.TID | Sample.TIME;
      const rings = [0, 1, 2].map((r) => {
        const records: Uint8Array[] = [];
        let time = 1000n + BigInt(r);
        // Ring 2 writes only at the start and the end: its losses walk back past the other rings' rows.
        const count = r === 2 ? 6 : 300;
        for (let i = 0; i < count; i++) {
          time += r === 2 && i === 3 ? 100_000n : BigInt(1 + Math.floor(random() * 50));
          const ids = { pid: 42, tid: 43 + r, time };
          const pick = random();
          if (pick < 0.12)
            records.push(
              otherRecord(
                RecordType.LOST,
                0,
                new ByteWriter()
                  .u64(7n)
                  .u64(BigInt(i + 1))
                  .toBytes(),
                idType,
                true,
                ids,
              ),
            );
          else if (pick < 0.18) records.push(otherRecord(RecordType.LOST_SAMPLES, 0, new ByteWriter().u64(BigInt(i + 2)).toBytes(), idType, timedLosses, ids));
          else records.push(sampleRecord(idType, ids));
        }
        return ringFromRecords(records, 1 << 16, 'forward');
      });
      const decoded = decodeSnapshot({ events: [eventOf(0, attrOf(idType, { flags: { sampleIdAll: timedLosses } }), [], 'task-clock')], rings });
      const expected = referenceLosses(decoded);
      assert.ok(expected.length > 20, `${expected.length} losses`);
      assert.deepEqual(
        lossesOf(decoded).map(({ row, lost, sinceNs }) => ({ row, lost, sinceNs })),
        expected,
      );
    });
  }
});

describe('host-side wire: rows matching a decoded field', () => {
  const tracepointType = Sample.IDENTIFIER | Sample.TID | Sample.TIME | Sample.RAW;
  const softwareType = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.ADDR | Sample.PERIOD;
  const format: TracepointFormat = {
    system: 'syscalls',
    name: 'sys_enter_openat',
    id: 600,
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
      { name: 'common_pid', declaration: 'int common_pid', offset: 4, size: 4, signed: true, arrayLength: 0, location: 'inline', isString: false },
      { name: '__syscall_nr', declaration: 'int __syscall_nr', offset: 8, size: 4, signed: true, arrayLength: 0, location: 'inline', isString: false },
      { name: 'filename', declaration: '__data_loc char[] filename', offset: 12, size: 4, signed: false, arrayLength: 0, location: 'data_loc', isString: true },
    ],
  };
  /** RAW payload of sys_enter_openat: fixed part (16 bytes), then the filename the data_loc points at. */
  function openat(nr: number, filename: string): Uint8Array {
    const name = new TextEncoder().encode(filename + '\0');
    const body = new ByteWriter()
      .u16(600)
      .u16(0)
      .u32(7)
      .u32(nr)
      .u32((name.length << 16) | 16)
      .raw(name);
    while ((body.length + 4) % 8 !== 0) body.u8(0);
    return new ByteWriter().u32(body.length).raw(body.toBytes()).toBytes();
  }
  function snapshotWithFields() {
    const events = [
      { ...eventOf(0, attrOf(tracepointType, { type: 2, flags: { sampleIdAll: true } }), [3n], 'syscalls:sys_enter_openat'), tracepoint: format },
      eventOf(1, attrOf(softwareType, { flags: { sampleIdAll: true } }), [4n], 'page-faults'),
    ];
    const comm = otherRecord(RecordType.COMM, 0, new ByteWriter().u32(7).u32(7).cstring('fixture').toBytes(), tracepointType, true, {
      pid: 7,
      tid: 7,
      time: 5n,
      id: 3n,
    });
    const records = [
      comm, // row 0: not a sample
      sampleRecord(tracepointType, { id: 3n, pid: 7, tid: 7, time: 10n, tail: openat(257, '/etc/passwd') }), // row 1
      sampleRecord(softwareType, { id: 4n, ip: 0x401000n, pid: 7, tid: 7, time: 15n, addr: 0x7ffd1000n, period: 16n }), // row 2
      sampleRecord(tracepointType, { id: 3n, pid: 7, tid: 7, time: 20n, tail: openat(257, '/tmp/Passwd.bak') }), // row 3
      sampleRecord(softwareType, { id: 4n, ip: 0x401010n, pid: 7, tid: 7, time: 25n, addr: 0x10n, period: 1n }), // row 4
      sampleRecord(tracepointType, { id: 3n, pid: 7, tid: 7, time: 30n, tail: openat(56, 'passwd') }), // row 5
    ];
    return decodeSnapshot({ events, rings: [ringFromRecords(records, 4096, 'backward', { cpu: 0 })] });
  }

  it('matches tracepoint strings exactly or by case-insensitive substring', () => {
    const s = snapshotWithFields();
    assert.equal(rowDetails(s, 1).tracepointFields?.filename, '/etc/passwd', 'the fixture decodes as intended');
    assert.deepEqual([...rowsMatchingField(s, 'filename', '=', '/etc/passwd')], [1]);
    assert.deepEqual([...rowsMatchingField(s, 'filename', '~', 'PASSWD')], [1, 3, 5]);
    assert.deepEqual([...rowsMatchingField(s, 'filename', '=', 'passwd')], [5]);
    assert.deepEqual([...rowsMatchingField(s, 'filename', '~', 'shadow')], []);
  });

  it('compares numbers numerically, in decimal or hex, for tracepoint and sample fields', () => {
    const s = snapshotWithFields();
    assert.deepEqual([...rowsMatchingField(s, '__syscall_nr', '=', '257')], [1, 3]);
    assert.deepEqual([...rowsMatchingField(s, '__syscall_nr', '=', '0x38')], [5]);
    assert.deepEqual([...rowsMatchingField(s, 'period', '=', '0x10')], [2]);
    assert.deepEqual([...rowsMatchingField(s, 'addr', '=', '16')], [4]);
    assert.deepEqual([...rowsMatchingField(s, 'addr', '~', '7FFD')], [2], 'addresses are matched as the pane shows them, in hex');
    assert.deepEqual([...rowsMatchingField(s, 'period', '=', 'sixteen')], [], 'a non-number never equals a number');
    // pid is a sample field of both events (TID): every SAMPLE row, never the COMM record.
    assert.deepEqual([...rowsMatchingField(s, 'pid', '=', '7')], [1, 2, 3, 4, 5]);
  });

  it('reads tracepoint fields in place with the same answer as decoding each record', () => {
    const s = snapshotWithFields();
    const byDecoding = (name: string, op: '=' | '~', value: string) => {
      const rows: number[] = [];
      for (let row = 0; row < s.columns.length; row++) {
        if (s.columns.kind[row] !== RecordType.SAMPLE || s.columns.event[row] !== 0) continue;
        const fields = decodeRecordAt(s, row).fields as { tracepoint?: Record<string, unknown> };
        if (fieldValueMatches(fields.tracepoint?.[name], op, value)) rows.push(row);
      }
      return rows;
    };
    for (const [name, op, value] of [
      ['filename', '~', 'passwd'],
      ['filename', '=', 'passwd'],
      ['__syscall_nr', '=', '257'],
      ['__syscall_nr', '~', '5'],
      ['common_pid', '=', '7'],
    ] as const) {
      assert.deepEqual([...rowsMatchingField(s, name, op, value)], byDecoding(name, op, value), `${name} ${op} ${value}`);
    }
    assert.deepEqual(byDecoding('common_pid', '=', '7'), [], 'common fields are not among the decoded ones, so they never match');
  });

  it('decodes only rows of events that have the field, and answers exact-length row lists', () => {
    const s = snapshotWithFields();
    assert.deepEqual([...rowsMatchingField(s, 'nosuchfield', '~', 'x')], []);
    assert.deepEqual([...rowsMatchingField(s, 'addr', '~', '0x')], [2, 4], 'the tracepoint event has no addr');
    const rows = rowsMatchingField(s, 'filename', '~', 'passwd');
    assert.equal(rows.buffer.byteLength, 3 * 4, 'exact-length buffer, transferable as is');
    assert.ok(validateHostToWebview({ type: 'fieldFilterReply', replyTo: 1, snapshotId: 's', rows: rows.buffer }).ok);
  });
});
