import * as assert from 'node:assert/strict';
import { COLUMN_NAMES } from './columns';
import { BatchBuilder, batchCountOf, batchesToColumns, columnsToBatches, symbolColumnOf, transferablesOf } from './batches';
import { validateHostToWebview, validateWebviewToHost } from './validate';
import type { SnapshotStart } from './protocol';
import { stacksFromBuffers, stacksToBuffers } from './stacks-buffers';
import type { RecordColumns } from '../native/decode/types';
import type { PerfEventAttr } from '../native/abi/attr';

function makeColumns(n: number): RecordColumns {
  const c = {
    length: n,
    timeOriginNs: 1_000_000_000_000n,
    time: new Float64Array(n),
    kind: new Uint8Array(n),
    misc: new Uint16Array(n),
    event: new Uint16Array(n),
    pid: new Int32Array(n),
    tid: new Int32Array(n),
    cpu: new Int32Array(n),
    ipHi: new Uint32Array(n),
    ipLo: new Uint32Array(n),
    ring: new Uint16Array(n),
    offset: new Uint32Array(n),
  };
  for (let i = 0; i < n; i++) {
    c.time[i] = i * 1000.5;
    c.kind[i] = 9;
    c.misc[i] = i & 0xffff;
    c.event[i] = i % 3;
    c.pid[i] = 100 + (i % 7);
    c.tid[i] = -1 + i;
    c.cpu[i] = i % 2;
    c.ipHi[i] = 0xffffffff;
    c.ipLo[i] = i * 16;
    c.ring[i] = i % 4;
    c.offset[i] = i * 32;
  }
  return c;
}

const start: SnapshotStart = {
  type: 'snapshotStart',
  snapshotId: 's1',
  name: 'snap 1',
  timeOriginNs: '1000000000000',
  totalRows: 10,
  batchCount: 3,
  takenAtMs: 1700000000000,
  events: [{ index: 0, name: 'sched:sched_switch', kind: 'tracepoint' }],
  threads: [{ pid: 1, tid: 1, comm: '<b>init</b>' }],
  coverage: [
    {
      ringId: 0,
      label: 'cpu0',
      path: 'paused',
      dataSize: 65536,
      bytesWritten: '18446744073709551615',
      bytesOverwritten: '100',
      recordsRetained: 10,
      oldestTimeNs: '1000000000000',
      newestTimeNs: null,
      lost: '0',
    },
  ],
};

describe('webview protocol', () => {
  it('splits columns into exact-length batches and reassembles them bit for bit', () => {
    const cols = makeColumns(1000);
    const symbols = Array.from({ length: 1000 }, (_, i) => (i % 5 === 0 ? null : `fn${i % 3}`));
    const batches = columnsToBatches(cols, { snapshotId: 's', batchRows: 300, symbols });
    assert.deepEqual(
      batches.map((b) => [b.firstRow, b.rowCount, b.batchIndex, b.batchCount]),
      [
        [0, 300, 0, 4],
        [300, 300, 1, 4],
        [600, 300, 2, 4],
        [900, 100, 3, 4],
      ],
    );
    assert.equal(batchCountOf(1000, 300), batches.length);
    assert.equal(batchCountOf(0), 1, 'an empty snapshot still sends one batch');
    for (const b of batches) {
      assert.equal(b.columns.time.byteLength, b.rowCount * 8);
      assert.equal(b.columns.kind.byteLength, b.rowCount);
      assert.equal(transferablesOf(b).length, COLUMN_NAMES.length + 1);
      assert.deepEqual(Object.keys(b.columns), ['time', 'kind', 'misc', 'event', 'pid', 'tid', 'cpu', 'ipHi', 'ipLo'], 'ring and offset stay on the host');
      assert.equal(b.symbolTable!.length <= 3, true, 'symbols are interned per batch');
      const v = validateHostToWebview(b);
      assert.ok(v.ok, v.ok ? '' : v.reason);
    }
    const back = batchesToColumns([...batches].reverse(), cols.timeOriginNs);
    assert.equal(back.columns.length, 1000);
    for (const name of COLUMN_NAMES) assert.deepEqual(Array.from(back.columns[name]), Array.from(cols[name]), name);
    assert.deepEqual(back.symbols, symbols);
  });

  it('sends one empty batch for an empty snapshot and rejects a gap on reassembly', () => {
    const empty = columnsToBatches(makeColumns(0), { snapshotId: 'e' });
    assert.equal(empty.length, 1);
    assert.equal(empty[0].rowCount, 0);
    const batches = columnsToBatches(makeColumns(10), { snapshotId: 's', batchRows: 4 });
    assert.throws(() => batchesToColumns([batches[0], batches[2]], 0n), /starts at row 8, expected 4/);
  });

  it('takes symbols as a typed column and sends each batch only the names its rows use', () => {
    const cols = makeColumns(10);
    const strings = Array.from({ length: 10 }, (_, i) => (i % 4 === 3 ? null : `fn${i % 3}`));
    const column = symbolColumnOf(strings);
    assert.deepEqual(column.table, ['fn0', 'fn1', 'fn2']);
    const fromColumn = columnsToBatches(cols, { snapshotId: 's', batchRows: 4, symbols: column });
    const fromStrings = columnsToBatches(cols, { snapshotId: 's', batchRows: 4, symbols: strings });
    assert.deepEqual(
      fromColumn.map((b) => [b.symbolTable, Array.from(new Int32Array(b.symbolIndex!))]),
      fromStrings.map((b) => [b.symbolTable, Array.from(new Int32Array(b.symbolIndex!))]),
    );
    assert.deepEqual(
      fromColumn.map((b) => b.symbolTable),
      [
        ['fn0', 'fn1', 'fn2'],
        ['fn1', 'fn2', 'fn0'],
        ['fn2', 'fn0'],
      ],
    );
    assert.deepEqual(batchesToColumns(fromColumn, 0n).symbols, strings);
    assert.throws(() => columnsToBatches(cols, { snapshotId: 's', symbols: { index: new Int32Array(10).fill(3), table: ['a'] } }), /past the table/);
    assert.throws(() => columnsToBatches(cols, { snapshotId: 's', symbols: { index: new Int32Array(9), table: ['a'] } }), /9 entries for 10 rows/);
  });

  it('builds any batch alone, as columnsToBatches builds it, in buffers of its own each time', () => {
    const cols = makeColumns(10);
    const symbols = symbolColumnOf(Array.from({ length: 10 }, (_, i) => (i % 4 === 3 ? null : `fn${i % 3}`)));
    const options = { snapshotId: 's', batchRows: 4, symbols, stacks: Int32Array.from({ length: 10 }, (_, i) => i - 1) };
    const all = columnsToBatches(cols, options);
    const builder = new BatchBuilder(cols, options);
    assert.equal(builder.count, all.length);
    // Out of order and twice: a sender builds a batch when it sends it, and again after a resync.
    for (const index of [2, 0, 1, 2]) {
      const batch = builder.batch(index);
      assert.deepEqual(batch, all[index]);
      assert.equal(builder.firstRowOf(index), batch.firstRow);
      assert.equal(builder.rowCountOf(index), batch.rowCount);
    }
    assert.notEqual(builder.batch(1).columns.time, builder.batch(1).columns.time, 'a fresh copy: the caller may transfer it');
    assert.throws(() => builder.batch(3), /batch 3 of 3/);
    // A batch whose symbols are past the table throws, and the next batch is built from an empty table all the same.
    const bad = new BatchBuilder(cols, {
      snapshotId: 's',
      batchRows: 4,
      symbols: { index: Int32Array.from([0, 1, 0, 1, 1, 7, 0, 0, 1, 0]), table: ['a', 'b'] },
    });
    assert.throws(() => bad.batch(1), /past the table/);
    assert.deepEqual(bad.batch(2).symbolTable, ['b', 'a']);
    assert.deepEqual(bad.batch(0).symbolTable, ['a', 'b']);
  });

  it('copies the rows into the buffers a given allocator hands out, every byte written, and refuses one of another size', () => {
    const cols = makeColumns(10);
    const given: number[] = [];
    // Garbage in every byte the allocator gives: what an uninitialized buffer may hold.
    const dirty = (byteLength: number) => {
      given.push(byteLength);
      return new Uint8Array(byteLength).fill(0xa5).buffer;
    };
    const stacks = Int32Array.from({ length: 10 }, (_, i) => i - 1);
    const batches = columnsToBatches(cols, { snapshotId: 's', batchRows: 4, stacks, allocate: dirty });
    assert.deepEqual(batches, columnsToBatches(cols, { snapshotId: 's', batchRows: 4, stacks }));
    assert.equal(given.length, batches.length * (COLUMN_NAMES.length + 1), 'every column and the stack ids of every batch');
    const short = (byteLength: number) => new ArrayBuffer(Math.max(0, byteLength - 1));
    assert.throws(() => columnsToBatches(cols, { snapshotId: 's', allocate: short }), /gave another buffer/);
  });

  it('works on columns that are views into a larger buffer', () => {
    const big = makeColumns(20);
    const view = { ...big, length: 5 } as RecordColumns;
    for (const name of COLUMN_NAMES) (view as unknown as Record<string, unknown>)[name] = (big[name] as Uint8Array).subarray(10, 15);
    const [b] = columnsToBatches(view, { snapshotId: 'v' });
    assert.deepEqual(Array.from(new Float64Array(b.columns.time)), Array.from(big.time.subarray(10, 15)));
    assert.equal(b.columns.time.byteLength, 40);
  });

  it('batches columns that live in shared memory (decoded on worker threads) as plain ArrayBuffers the page accepts', () => {
    const plain = makeColumns(12);
    const shared = { ...plain } as RecordColumns;
    for (const name of [...COLUMN_NAMES, 'ring', 'offset'] as const) {
      const column = plain[name] as Uint8Array;
      const copy = new (column.constructor as Uint8ArrayConstructor)(new SharedArrayBuffer(column.byteLength));
      copy.set(column);
      (shared as unknown as Record<string, unknown>)[name] = copy;
    }
    for (const b of columnsToBatches(shared, { snapshotId: 'shm', batchRows: 5 })) {
      for (const buffer of transferablesOf(b)) assert.ok(buffer instanceof ArrayBuffer, 'a plain ArrayBuffer');
      const v = validateHostToWebview(b);
      assert.ok(v.ok, v.ok ? '' : v.reason);
    }
    const back = batchesToColumns(columnsToBatches(shared, { snapshotId: 'shm', batchRows: 5 }), plain.timeOriginNs);
    for (const name of COLUMN_NAMES) assert.deepEqual(Array.from(back.columns[name]), Array.from(plain[name]), name);
  });

  it('accepts well-formed host messages', () => {
    for (const m of [
      start,
      { ...start, limitations: ['user space only: kernel.perf_event_paranoid = 2 (uid 1000 (me), no CAP_PERFMON): kernel samples ...'] },
      { type: 'init', protocolVersion: 1 },
      { type: 'init', protocolVersion: 1, editor: true },
      { type: 'init', protocolVersion: 1, editor: true, recorder: true },
      { ...start, stacks: { names: ['main', 'f'], start: [0, 2, 3], frames: [1, 0, 0] } },
      {
        ...start,
        stacks: {
          names: ['main', 'f'],
          start: [0, 2, 3],
          frames: [1, 0, 0],
          locations: [{ file: 'a.c', line: 3 }],
          leafLocation: [0, -1],
          nameLocation: [-1, 0],
        },
      },
      {
        type: 'detailsReply',
        replyTo: 3,
        snapshotId: 's1',
        row: 2,
        details: {
          type: 'SAMPLE',
          misc: 2,
          timeNs: '123',
          fields: { a: [1, 'x', null] },
          callchain: [
            { ip: '0xffff', symbol: 0, file: 'a.c', line: 3 },
            { ip: '0xffffffff81000000', kernel: true },
          ],
          symbols: ['main'],
          source: { file: 'a.c', line: 3 },
        },
      },
      { type: 'watchReply', replyTo: 1, ok: false, error: { code: 'ENOSPC', message: 'no slot', hint: 'remove one' } },
      {
        type: 'watchList',
        watches: [
          {
            id: 'w1',
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'rw',
            length: 8,
            target: { kind: 'process', pid: 42 },
            pinned: true,
            enabled: true,
            hits: 3,
          },
        ],
        budget: { used: 1, total: 4, cpuPinned: 0, maxTaskPinned: 1, flexible: 0 },
      },
      {
        type: 'watchList',
        watches: [],
        budget: {
          used: 1,
          total: 4,
          cpuPinned: 0,
          maxTaskPinned: 1,
          flexible: 0,
          heldByRecordings: ['mem:demo_rounds:w (demo (pid 42): task-clock, mem:demo_rounds:w)'],
        },
      },
    ]) {
      const v = validateHostToWebview(m);
      assert.ok(v.ok, v.ok ? '' : v.reason);
    }
  });

  it('rejects malformed host messages with a reason naming the field', () => {
    const [batch] = columnsToBatches(makeColumns(4), { snapshotId: 's' });
    const cases: [unknown, RegExp][] = [
      [null, /message: expected an object/],
      [{ type: 'nope' }, /known host message type.*"nope"/],
      [{ ...start, timeOriginNs: '12a' }, /timeOriginNs: expected a decimal/],
      [{ ...start, totalRows: -1 }, /totalRows/],
      [{ ...start, events: [{ index: 0, name: 'x', kind: 'weird' }] }, /events\[0\]\.kind/],
      [{ ...start, coverage: [{ ...start.coverage[0], lost: 1 }] }, /coverage\[0\]\.lost/],
      [{ ...start, limitations: 'user space only' }, /limitations: expected an array/],
      [{ ...start, limitations: [7] }, /limitations\.0: expected a string/],
      [
        { type: 'watchList', watches: [], budget: { used: 1, total: 4, cpuPinned: 0, maxTaskPinned: 1, flexible: 0, heldByRecordings: [1] } },
        /budget\.heldByRecordings\.0: expected a string/,
      ],
      [{ ...batch, columns: { ...batch.columns, time: new ArrayBuffer(31) } }, /columns\.time: expected exactly 32 bytes/],
      [{ ...batch, columns: { ...batch.columns, pid: new Int32Array(4) } }, /columns\.pid: expected an ArrayBuffer/],
      [{ ...batch, batchIndex: 1 }, /batchIndex: expected < batchCount/],
      [{ ...batch, symbolIndex: new Int32Array([0, 0, 0, 5]).buffer, symbolTable: ['a'] }, /symbolIndex\[3\]/],
      [{ ...batch, stackIndex: new Int32Array([0, -2, 0, 0]).buffer }, /stackIndex\[1\]/],
      [{ ...batch, stackIndex: new Int32Array(3).buffer }, /stackIndex: expected exactly 16 bytes/],
      [{ ...start, stacks: { names: ['main'], start: [0, 2], frames: [0, 1] } }, /stacks\.frames\.1/],
      [{ ...start, stacks: { names: ['main'], start: [0, 2, 1], frames: [0, 0] } }, /stacks\.start\.2/],
      [{ ...start, stacks: { names: ['main'], start: [0, 1], frames: [0, 0] } }, /stacks\.start: expected ending at 2 frames/],
      [{ ...start, stacks: { names: ['main'], start: [0, 1], frames: [0], leafLocation: [0], nameLocation: [0] } }, /stacks\.locations: expected an array/],
      [
        { ...start, stacks: { names: ['main'], start: [0, 1], frames: [0], locations: [{ file: 'a.c', line: 0 }], leafLocation: [0], nameLocation: [0] } },
        /stacks\.locations\[0\]\.line/,
      ],
      [
        { ...start, stacks: { names: ['main'], start: [0, 1], frames: [0], locations: [{ file: 'a.c', line: 1 }], leafLocation: [1], nameLocation: [0] } },
        /stacks\.leafLocation\.0/,
      ],
      [
        { ...start, stacks: { names: ['main'], start: [0, 1], frames: [0], locations: [], leafLocation: [], nameLocation: [-1] } },
        /stacks\.leafLocation: expected 1 entries/,
      ],
      [{ type: 'detailsReply', replyTo: 1, snapshotId: 's', row: 0 }, /details or error/],
      [{ type: 'detailsReply', replyTo: 1, snapshotId: 's', row: 0, details: { type: 'x', misc: 0, fields: { n: Infinity } } }, /fields\.n/],
      [{ type: 'watchReply', replyTo: 1, ok: false }, /error when ok is false/],
    ];
    for (const [m, re] of cases) {
      const v = validateHostToWebview(m);
      assert.equal(
        v.ok,
        false,
        JSON.stringify(m, (_, x) => (x instanceof ArrayBuffer ? `AB${x.byteLength}` : x)),
      );
      if (!v.ok) assert.match(v.reason, re);
    }
  });

  it('validates webview requests, including watch specs', () => {
    const add = {
      type: 'watchRequest',
      requestId: 7,
      op: 'add',
      spec: { location: { kind: 'line', file: 'main.c', line: 12 }, type: 'w', length: 4, target: { kind: 'all-cpus' }, pinned: false },
    };
    assert.ok(validateWebviewToHost(add).ok);
    assert.ok(validateWebviewToHost({ type: 'ready', protocolVersion: 1 }).ok);
    assert.ok(validateWebviewToHost({ type: 'resync', have: [{ snapshotId: 's', rows: 10 }] }).ok);
    assert.ok(validateWebviewToHost({ type: 'watchRequest', requestId: 1, op: 'disable', id: 'w1' }).ok);
    const bad: [unknown, RegExp][] = [
      [{ ...add, spec: { ...add.spec, length: 3 } }, /spec\.length: expected 1, 2, 4 or 8/],
      [{ ...add, spec: { ...add.spec, type: 'rx' } }, /spec\.type/],
      [{ ...add, spec: { ...add.spec, location: { kind: 'address', address: '0xzz' } } }, /location\.address/],
      [{ ...add, spec: { ...add.spec, location: { kind: 'line', file: 'a.c', line: 0 } } }, /location\.line/],
      [{ ...add, spec: { ...add.spec, target: { kind: 'process', pid: 0 } } }, /target\.pid/],
      [{ type: 'watchRequest', requestId: 1, op: 'remove' }, /watchRequest\.id/],
      [{ type: 'revealRequest', requestId: 1, file: 'a.c' }, /revealRequest\.line/],
      [{ type: 'batchAck', snapshotId: 's' }, /batchIndex/],
    ];
    for (const [m, re] of bad) {
      const v = validateWebviewToHost(m);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    }
  });

  it('validates Snapshot When requests: one printable event spec, nothing else', () => {
    for (const event of ['syscalls:sys_enter_kill', 'cpu-clock', 'mem:counter:w', 'mem:main.c:12:x']) {
      const v = validateWebviewToHost({ type: 'snapshotWhenRequest', event });
      assert.ok(v.ok, event);
      if (v.ok) assert.deepEqual(v.message, { type: 'snapshotWhenRequest', event });
    }
    const bad: [unknown, RegExp][] = [
      [{ type: 'snapshotWhenRequest' }, /snapshotWhenRequest\.event: expected a string/],
      [{ type: 'snapshotWhenRequest', event: 42 }, /snapshotWhenRequest\.event: expected a string/],
      [{ type: 'snapshotWhenRequest', event: '' }, /snapshotWhenRequest\.event: expected a non-empty event spec/],
      [{ type: 'snapshotWhenRequest', event: '   ' }, /snapshotWhenRequest\.event: expected a non-empty event spec/],
      [{ type: 'snapshotWhenRequest', event: 'cpu-clock\nrm -rf' }, /without control characters/],
      [{ type: 'snapshotWhenRequest', event: 'x'.repeat(4097) }, /snapshotWhenRequest\.event: expected a string/],
    ];
    for (const [m, re] of bad) {
      const v = validateWebviewToHost(m);
      assert.equal(v.ok, false, JSON.stringify(m));
      if (!v.ok) assert.match(v.reason, re);
    }
    const init = validateHostToWebview({ type: 'init', protocolVersion: 1, recorder: 'yes' });
    assert.equal(init.ok, false);
    if (!init.ok) assert.match(init.reason, /init\.recorder: expected a boolean/);
  });

  it('validates field-filter requests and replies (rows as exact Uint32 buffers, or an error)', () => {
    const request = { type: 'fieldFilterRequest', requestId: 3, snapshotId: 's1', name: 'filename', op: '~', value: 'passwd' };
    assert.ok(validateWebviewToHost(request).ok);
    assert.ok(validateWebviewToHost({ ...request, op: '=', value: '0x10' }).ok);
    const badRequests: [unknown, RegExp][] = [
      [{ ...request, op: '>' }, /fieldFilterRequest\.op: expected =\|~/],
      [{ ...request, name: '' }, /fieldFilterRequest\.name/],
      [{ ...request, value: 5 }, /fieldFilterRequest\.value/],
      [{ ...request, requestId: -1 }, /fieldFilterRequest\.requestId/],
    ];
    for (const [m, re] of badRequests) {
      const v = validateWebviewToHost(m);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    }
    const rows = Uint32Array.from([1, 5, 9]).buffer;
    assert.ok(validateHostToWebview({ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', rows }).ok);
    assert.ok(validateHostToWebview({ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', error: { code: 'E', message: 'needs the live panel' } }).ok);
    const badReplies: [unknown, RegExp][] = [
      [{ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1' }, /exactly one of rows or error/],
      [{ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', rows, error: { code: 'E', message: 'm' } }, /exactly one of rows or error/],
      [{ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', rows: new ArrayBuffer(6) }, /rows: expected an ArrayBuffer of Uint32/],
      [{ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', rows: [1, 2] }, /rows: expected an ArrayBuffer of Uint32/],
      [{ type: 'fieldFilterReply', replyTo: 3, snapshotId: 's1', error: { code: 'E' } }, /error\.message/],
    ];
    for (const [m, re] of badReplies) {
      const v = validateHostToWebview(m);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    }
  });

  it('validates live appends (one batch of the live capture, its part announcing exactly its rows) and live follow requests', () => {
    const [batch] = columnsToBatches(makeColumns(4), { snapshotId: 'live-1' });
    const append = {
      type: 'liveAppend',
      snapshotId: 'live-1',
      seq: 0,
      part: { ...start, snapshotId: 'live-1', totalRows: 4, batchCount: 1 },
      batch,
      keepFromNs: '0',
    };
    assert.ok(validateHostToWebview(append).ok);
    assert.ok(validateHostToWebview({ type: 'liveState', state: 'unavailable', detail: 'no recording runs' }).ok);
    const bad: [unknown, RegExp][] = [
      [{ ...append, part: { ...append.part, snapshotId: 'other' } }, /liveAppend\.part: expected rows of live capture "live-1"/],
      [{ ...append, part: { ...append.part, totalRows: 5 } }, /liveAppend\.part\.totalRows: expected the batch's 4 rows/],
      [{ ...append, keepFromNs: 'soon' }, /liveAppend\.keepFromNs/],
      [{ ...append, batch: { ...batch, columns: { ...batch.columns, time: new ArrayBuffer(3) } } }, /batch\.columns\.time/],
      [{ type: 'liveState', state: 'maybe' }, /liveState\.state/],
    ];
    for (const [m, re] of bad) {
      const v = validateHostToWebview(m);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    }
    assert.ok(validateWebviewToHost({ type: 'liveFollow', on: true }).ok);
    assert.ok(validateWebviewToHost({ type: 'painted', snapshotId: 's1' }).ok);
    assert.equal(validateWebviewToHost({ type: 'painted' }).ok, false);
    assert.ok(validateWebviewToHost({ type: 'liveAck', snapshotId: 'live-1', seq: 3 }).ok);
    assert.equal(validateWebviewToHost({ type: 'liveFollow', on: 'yes' }).ok, false);
    assert.equal(validateWebviewToHost({ type: 'liveAck', snapshotId: 'live-1', seq: -1 }).ok, false);
  });
  it('validates the names that follow a streamed capture (stacks as bytes, every index within its table), progress and cancel', () => {
    const i32 = (values: number[]) => Int32Array.from(values).buffer;
    const stacks = stacksToBuffers({ names: ['main', 'work'], start: Uint32Array.from([0, 1, 3]), frames: Int32Array.from([0, 1, 0]) });
    const names = { type: 'snapshotSymbols', snapshotId: 's', symbolIndex: i32([-1, 0, 1]), symbolTable: ['a', 'b'], stacks, stackIndex: i32([-1, 0, 1]) };
    assert.ok(validateHostToWebview(names).ok);
    assert.deepEqual(stacksFromBuffers(stacks), { names: ['main', 'work'], start: [0, 1, 3], frames: [0, 1, 0] });
    const reason = (m: unknown) => {
      const v = validateHostToWebview(m);
      return v.ok ? 'accepted' : v.reason;
    };
    assert.match(reason({ ...names, stackIndex: i32([-1, 0, 2]) }), /snapshotSymbols\.stackIndex\[2\]/);
    assert.match(reason({ ...names, stackIndex: i32([0]) }), /snapshotSymbols\.stackIndex: expected exactly 12 bytes/);
    assert.match(reason({ ...names, symbolIndex: i32([-1, 0, 2]) }), /snapshotSymbols\.symbolIndex\[2\]/);
    assert.match(reason({ ...names, stacks: { ...stacks, frames: i32([0, 2, 0]) } }), /snapshotSymbols\.stacks\.frames\.1/);
    assert.match(reason({ ...names, stacks: undefined }), /stacks and stackIndex together/);
    assert.match(reason({ ...names, stacks: { ...stacks, start: [0, 1, 3] } }), /snapshotSymbols\.stacks\.start: expected an ArrayBuffer/);
    assert.ok(validateHostToWebview({ type: 'progress', taskId: 't', title: 'opening x', step: 'decoding', cancellable: true }).ok);
    assert.match(reason({ type: 'progress', taskId: 't', title: 'x' }), /progress\.cancellable/);
    assert.ok(validateWebviewToHost({ type: 'cancel', taskId: 't' }).ok);
    assert.ok(!validateWebviewToHost({ type: 'cancel' }).ok);
  });
});

describe('host-side conversions', () => {
  it('turns a decoded snapshot into a valid snapshotStart and batches', async () => {
    const { snapshotMessages, recordDetailsOf } = await import('../host/messages');
    const { validateHostToWebview: validate } = await import('./validate');
    const cols = makeColumns(5);
    const attr = (type: number) => ({ type }) as unknown as PerfEventAttr;
    const decoded = {
      events: [
        { index: 0, name: 'sched:sched_switch', attr: attr(2), ids: [] },
        { index: 1, name: 'mem:x:w', attr: attr(5), ids: [] },
        { index: 2, name: 'cpu-clock', attr: attr(1), ids: [] },
      ],
      rings: [],
      anomalies: [],
      columns: cols,
      coverage: [
        {
          ringId: 0,
          label: 'cpu0',
          path: 'paused' as const,
          dataSize: 4096,
          bytesWritten: 10n ** 19n,
          bytesOverwritten: 5n,
          recordsRetained: 5,
          oldestTimeNs: 1_000_000_000_000n,
          newestTimeNs: null,
          lostRecords: 3n,
          anomalies: 0,
        },
      ],
    };
    const { start, batches } = snapshotMessages(decoded, { snapshotId: 'x', name: 'X', takenAtMs: 1, threads: [], batchRows: 2 });
    assert.deepEqual(
      start.events.map((e) => e.kind),
      ['tracepoint', 'breakpoint', 'software'],
    );
    assert.equal(start.coverage[0].bytesWritten, '10000000000000000000');
    assert.equal(start.coverage[0].lost, '3');
    assert.equal(start.batchCount, 3);
    assert.equal(batches.length, 3);
    const v = validate(start);
    assert.ok(v.ok, v.ok ? '' : v.reason);
    const details = recordDetailsOf(
      { type: 'SAMPLE', misc: 2, timeNs: 123n, pid: 1, fields: { ip: 0xffffffff81000000n, raw: new Uint8Array([1, 171]), n: [1n, 2] } },
      {
        callchain: [
          { ip: '0x1', symbol: 0 },
          { ip: '0xffffffff81000000', kernel: true },
        ],
        symbols: ['f'],
      },
    );
    assert.deepEqual(details, {
      type: 'SAMPLE',
      misc: 2,
      timeNs: '123',
      pid: 1,
      fields: { ip: '18446744071578845184', raw: '01ab', n: ['1', 2] },
      callchain: [
        { ip: '0x1', symbol: 0 },
        { ip: '0xffffffff81000000', kernel: true },
      ],
      symbols: ['f'],
    });
    const r = validate({ type: 'detailsReply', replyTo: 1, snapshotId: 'x', row: 0, details });
    assert.ok(r.ok, r.ok ? '' : r.reason);
    // A frame's symbol must index the record's string table.
    const dangling = validate({ type: 'detailsReply', replyTo: 1, snapshotId: 'x', row: 0, details: { ...details, symbols: [] } });
    assert.ok(!dangling.ok && /callchain\[0\]\.symbol/.test(dangling.reason), dangling.ok ? 'accepted' : dangling.reason);
    const named = validate({ type: 'detailsReply', replyTo: 1, snapshotId: 'x', row: 0, details: { ...details, callchain: [{ ip: '0x1', symbol: 'f' }] } });
    assert.ok(!named.ok, 'a frame carries an index, not a name');
  });
});
