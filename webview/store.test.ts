import * as assert from 'node:assert/strict';
import { BatchRejected, RecordStore } from './store';
import { mostFrequentEvent, TimelineLayout } from './layout';
import { columnsToBatches } from '../shared/batches';
import type { LiveAppend, SnapshotStart } from '../shared/protocol';
import type { RecordColumns } from '../native/decode/types';

function columns(times: number[], tids: number[], events: number[]): RecordColumns {
  const n = times.length;
  return {
    length: n,
    timeOriginNs: 0n,
    time: Float64Array.from(times),
    kind: new Uint8Array(n).fill(9),
    misc: new Uint16Array(n),
    event: Uint16Array.from(events),
    pid: Int32Array.from(tids),
    tid: Int32Array.from(tids),
    cpu: new Int32Array(n),
    ipHi: new Uint32Array(n),
    ipLo: new Uint32Array(n),
    ring: new Uint16Array(n),
    offset: new Uint32Array(n),
  };
}

function start(id: string, origin: string, rows: number, batches: number, eventName: string): SnapshotStart {
  return {
    type: 'snapshotStart',
    snapshotId: id,
    name: id,
    timeOriginNs: origin,
    totalRows: rows,
    batchCount: batches,
    takenAtMs: 0,
    events: [
      { index: 0, name: eventName, kind: 'tracepoint' },
      { index: 1, name: 'mem:x:w', kind: 'breakpoint' },
    ],
    threads: [
      { pid: 7, tid: 7, comm: 'seven' },
      { pid: 7, tid: 8, comm: 'eight' },
    ],
    coverage: [],
  };
}

describe('record store', () => {
  it("keeps perf's time-0 side-band records of a perf.data capture untimed: counted, outside the capture's extent", () => {
    const store = new RecordStore();
    store.beginSnapshot(start('live', '5000000000000', 2, 1, 'cpu-clock'));
    for (const b of columnsToBatches(columns([0, 1000], [7, 7], [0, 0]), { snapshotId: 'live' })) store.addBatch(b);
    // The decoder's origin for such a file is 0 (the smallest time); the samples are at 7000 s.
    const file = { ...columns([0, 0, 7e12, 7e12 + 500, NaN], [7, 7, 7, 8, 8], [0, 0, 0, 0, 0]), timeOriginNs: 0n };
    store.beginSnapshot(start('file', '0', 5, 1, 'cpu-clock'));
    for (const b of columnsToBatches(file, { snapshotId: 'file' })) store.addBatch(b);
    const [live, pd] = store.snapshots;
    assert.deepEqual([live.untimedRows, pd.untimedRows], [0, 3]);
    assert.deepEqual(Array.from(store.time.subarray(2, 7)), [NaN, NaN, 2e12, 2e12 + 500, NaN]);
    assert.deepEqual(store.timeExtent(1), [2e12, 2e12 + 500], 'the capture spans its timed records only');
    assert.deepEqual(store.timeExtent(0), [0, 1000]);
    assert.deepEqual(Array.from(store.rowsOf(1)), [2, 3, 4, 5, 6]);
    assert.ok(store.timeSorted, 'untimed rows neither break nor advance the order');
  });
  it('fits a capture to its samples, not to side-band from long before them (a keeper attached after 170 s)', () => {
    const store = new RecordStore();
    // COMM and MMAP2 of the target at 0 s and 5 s (kept: the samples need them), then samples from 70 s to 170 s.
    const kept = columns([0, 5e9, 70e9, 120e9, 170e9], [7, 7, 7, 7, 7], [0, 0, 0, 0, 0]);
    kept.kind.set([3, 10], 0);
    store.beginSnapshot(start('kept', '1000', 5, 1, 'task-clock'));
    for (const b of columnsToBatches(kept, { snapshotId: 'kept' })) store.addBatch(b);
    assert.deepEqual(store.timeExtent(0), [70e9, 170e9], 'Fit shows the samples');
    // A capture of side-band alone spans its records.
    const sideband = columns([1e9, 2e9], [7, 7], [0, 0]);
    sideband.kind.fill(3);
    store.beginSnapshot(start('side', '1000', 2, 1, 'task-clock'));
    for (const b of columnsToBatches(sideband, { snapshotId: 'side' })) store.addBatch(b);
    assert.deepEqual(store.timeExtent(1), [1e9, 2e9]);
    assert.deepEqual(store.timeExtent(), [70e9, 170e9], 'all captures: their samples');
  });

  it('appends snapshots on one internal clock, rebasing later origins exactly, and maps events by name', () => {
    const store = new RecordStore();
    const a = columns([0, 10, 20], [7, 8, 7], [0, 1, 0]);
    store.beginSnapshot(start('a', '1000000000000000000', 3, 2, 'sched:sched_switch'));
    for (const b of columnsToBatches(a, { snapshotId: 'a', batchRows: 2, symbols: ['f', null, 'g'] })) store.addBatch(b);
    const b = columns([5, 6], [8, 8], [1, 0]);
    store.beginSnapshot({
      ...start('b', '1000000000000000500', 2, 1, 'cpu-clock'),
      events: [
        { index: 0, name: 'cpu-clock', kind: 'software' },
        { index: 1, name: 'mem:x:w', kind: 'breakpoint' },
      ],
    });
    for (const batch of columnsToBatches(b, { snapshotId: 'b' })) store.addBatch(batch);
    assert.equal(store.length, 5);
    assert.deepEqual(Array.from(store.time.subarray(0, 5)), [0, 10, 20, 505, 506]);
    assert.deepEqual(
      store.events.map((e) => e.name),
      ['sched:sched_switch', 'mem:x:w', 'cpu-clock'],
    );
    assert.deepEqual(Array.from(store.event.subarray(0, 5)), [0, 1, 0, 1, 2]);
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => store.symbolOf(r)),
      ['f', null, 'g', null],
    );
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((r) => store.localRowOf(r)),
      [0, 1, 2, 0, 1],
    );
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((r) => store.snapshotIndexOf(r)),
      [0, 0, 0, 1, 1],
    );
    assert.equal(store.commOf(1), 'eight');
    assert.deepEqual(store.timeExtent(), [0, 506]);
    // Each capture's events with records, by store index: b announced mem:x:w (1) and recorded it; a never recorded cpu-clock (2).
    assert.deepEqual(
      [store.eventsWithRecords([0]), store.eventsWithRecords([1]), store.eventsWithRecords([0, 1])],
      [
        [0, 1],
        [1, 2],
        [0, 1, 2],
      ],
    );
    assert.deepEqual(store.snapshots[0].eventRows, [2, 1]);
    assert.ok(store.isComplete(store.getSnapshot('a')!));
  });

  it('rejects batches out of order, for unknown snapshots, or past the announced size', () => {
    const store = new RecordStore();
    const batches = columnsToBatches(columns([1, 2, 3, 4], [7, 7, 7, 7], [0, 0, 0, 0]), { snapshotId: 'a', batchRows: 2 });
    assert.throws(() => store.addBatch(batches[0]), BatchRejected);
    store.beginSnapshot(start('a', '0', 3, 2, 'e'));
    assert.throws(() => store.addBatch(batches[1]), /starts at row 2, expected 0/);
    store.addBatch(batches[0]);
    assert.throws(() => store.addBatch(batches[1]), /overflows/);
    assert.equal(store.length, 2);
  });

  it('reserves the announced rows once, maps unannounced events through its table, and tracks time order', () => {
    const store = new RecordStore();
    store.beginSnapshot(start('a', '0', 6, 3, 'e'));
    const reserved = store.time;
    assert.ok(reserved.length >= 6);
    // Event 5 was never announced: interned once as a placeholder, then read from the table.
    const a = columns([1, 2, 2, 3, NaN, 4], [7, 7, 7, 7, 7, 7], [0, 5, 1, 5, 0, 5]);
    for (const b of columnsToBatches(a, { snapshotId: 'a', batchRows: 2 })) store.addBatch(b);
    assert.equal(store.time, reserved, 'no regrowth while the batches arrive');
    assert.deepEqual(
      store.events.map((e) => e.name),
      ['e', 'mem:x:w', 'event 5'],
    );
    assert.deepEqual(Array.from(store.event.subarray(0, 6)), [0, 2, 1, 2, 0, 2]);
    assert.equal(store.getSnapshot('a')!.eventMap.get(5), 2);
    assert.deepEqual(store.eventsWithRecords([0]), [0, 1, 2], 'the placeholder event counts as recorded');
    assert.equal(store.timeSorted, true, 'equal times and a NaN keep the order');
    assert.deepEqual(store.timeExtent(), [1, 4]);
    store.beginSnapshot(start('b', '0', 1, 1, 'e'));
    for (const b of columnsToBatches(columns([3.5], [7], [0]), { snapshotId: 'b' })) store.addBatch(b);
    assert.equal(store.timeSorted, false, 'a row older than the previous one');
    store.beginSnapshot(start('c', '0', 100_000, 2, 'e'));
    assert.equal(store.time.length, 7 + 100_000, 'a big snapshot reserves exactly its announced rows');
    assert.equal(store.symbol.length, 0, 'no symbol column until a batch carries symbols');
  });

  it('answers snapshot and local row from interleaved batches, and starts the symbol column late', () => {
    const store = new RecordStore();
    store.beginSnapshot(start('a', '0', 5, 3, 'e'));
    store.beginSnapshot(start('b', '0', 4, 2, 'e'));
    const a = columnsToBatches(columns([1, 2, 3, 4, 5], [7, 7, 7, 7, 7], [0, 0, 0, 0, 0]), { snapshotId: 'a', batchRows: 2 });
    const b = columnsToBatches(columns([1, 2, 3, 4], [8, 8, 8, 8], [0, 0, 0, 0]), { snapshotId: 'b', batchRows: 2, symbols: ['f', 'g', null, 'f'] });
    // The host's flow control interleaves the streams of two snapshots: a0 b0 a1 b1 a2.
    for (const batch of [a[0], b[0], a[1], b[1], a[2]]) store.addBatch(batch);
    const expected: [number, number][] = [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
      [0, 2],
      [0, 3],
      [1, 2],
      [1, 3],
      [0, 4],
    ];
    const at = (r: number): [number, number] => [store.snapshotIndexOf(r), store.localRowOf(r)];
    assert.deepEqual(
      expected.map((_, r) => at(r)),
      expected,
      'in order',
    );
    for (const r of [8, 0, 5, 3, 7, 1, 6, 2, 4, 4, 0]) assert.deepEqual(at(r), expected[r], `row ${r}, out of order`);
    assert.deepEqual(
      expected.map((_, r) => store.symbolOf(r)),
      [null, null, 'f', 'g', null, null, null, 'f', null],
    );
    assert.ok(store.symbol.length >= 9);
  });

  it('copies the columns a first frame does not read when they are first read, whatever the batches in between', () => {
    const store = new RecordStore();
    const rowsA = 7;
    const rowsB = 5;
    // Every column distinct per row, so a batch copied to the wrong rows shows (times from 1: origin 0 makes time 0 untimed).
    const filled = (n: number, from: number): RecordColumns => {
      const c = columns(
        Array.from({ length: n }, (_, i) => 1 + from + i),
        Array.from({ length: n }, (_, i) => 100 + from + i),
        new Array<number>(n).fill(0),
      );
      for (let i = 0; i < n; i++) {
        c.kind[i] = (from + i) % 200;
        c.misc[i] = 1000 + from + i;
        c.pid[i] = 500 + from + i;
        c.cpu[i] = from + i;
        c.ipHi[i] = 0x7fff0000 + from + i;
        c.ipLo[i] = 0x1000 + from + i;
      }
      return c;
    };
    const a = columnsToBatches(filled(rowsA, 0), { snapshotId: 'a', batchRows: 2 });
    const b = columnsToBatches(filled(rowsB, rowsA), { snapshotId: 'b', batchRows: 2 });
    store.beginSnapshot(start('a', '0', rowsA, a.length, 'e'));
    store.beginSnapshot(start('b', '0', rowsB, b.length, 'e'));
    const order = [a[0], b[0], a[1], a[2], b[1], a[3], b[2]];
    // Store row r holds the record numbered want[r] (a's rows are 0..6, b's 7..11), batches interleaved.
    const want: number[] = [];
    for (const batch of order) for (let i = 0; i < batch.rowCount; i++) want.push((batch.snapshotId === 'a' ? 0 : rowsA) + batch.firstRow + i);
    const readEach = (rows: number) => {
      for (let r = 0; r < rows; r++) {
        const k = want[r];
        assert.equal(store.valueAt('pid', r), 500 + k, `pid of row ${r}, read from its batch or the column`);
        assert.equal(store.valueAt('ipLo', r), 0x1000 + k, `ipLo of row ${r}`);
      }
    };
    // Read the kind column after two batches, the misc column after four, valueAt all the way, every column at the end.
    order.forEach((batch, n) => {
      store.addBatch(batch);
      readEach(store.length);
      if (n === 1)
        assert.deepEqual(
          Array.from(store.kind.subarray(0, store.length)),
          want.slice(0, store.length).map((k) => k % 200),
        );
      if (n === 3)
        assert.deepEqual(
          Array.from(store.misc.subarray(0, store.length)),
          want.slice(0, store.length).map((k) => 1000 + k),
        );
      if (n === 4) void store.cpu; // cpu copied up to here: its parts are the column's rows, then the batches after
      const parts = store.columnParts('cpu');
      assert.deepEqual(
        parts.flatMap((p) => Array.from(p.values)),
        want.slice(0, store.length),
        `cpu in parts after batch ${n}`,
      );
      assert.deepEqual(
        parts.map((p) => p.base),
        parts.map((_, k) => parts.slice(0, k).reduce((sum, q) => sum + q.values.length, 0)),
      );
    });
    const n = rowsA + rowsB;
    assert.equal(store.length, n);
    const expect = (f: (k: number) => number) => want.map(f);
    assert.deepEqual(
      Array.from(store.kind.subarray(0, n)),
      expect((k) => k % 200),
      'kind: its first copy and then the rest',
    );
    assert.deepEqual(
      Array.from(store.misc.subarray(0, n)),
      expect((k) => 1000 + k),
    );
    for (const column of [store.pid, store.tid, store.cpu, store.ipHi, store.ipLo]) assert.ok(column.length >= n, 'every column read, so copied');
    readEach(n);
    assert.deepEqual(
      Array.from(store.pid.subarray(0, n)),
      expect((k) => 500 + k),
    );
    assert.deepEqual(
      Array.from(store.tid.subarray(0, n)),
      expect((k) => 100 + k),
    );
    assert.deepEqual(
      Array.from(store.cpu.subarray(0, n)),
      expect((k) => k),
    );
    assert.deepEqual(
      Array.from(store.ipHi.subarray(0, n)),
      expect((k) => 0x7fff0000 + k),
    );
    assert.deepEqual(
      Array.from(store.ipLo.subarray(0, n)),
      expect((k) => 0x1000 + k),
    );
    assert.deepEqual(
      Array.from(store.time.subarray(0, n)),
      expect((k) => 1 + k),
    );
    assert.deepEqual([store.commOf(0), store.commOf(n - 1)], ['', ''], 'no thread announced for these tids');
  });

  it("colours each dense lane by its most frequent event: the store's counts for a lane of every row, the lane's rows otherwise", () => {
    const twoEvents = [
      { index: 0, name: 'a', kind: 'tracepoint' as const },
      { index: 1, name: 'b', kind: 'tracepoint' as const },
    ];
    const cases: { tids: number[]; events: number[]; times?: number[]; want: Record<string, number> }[] = [
      // One thread: its lane (a process of one thread has no header) holds every row. Event 0 has 4 rows, event 1 has 3.
      { tids: [7, 7, 7, 7, 7, 7, 7], events: [1, 1, 0, 1, 0, 0, 0], want: { 'thread:7': 0 } },
      // A tie goes to the lower index.
      { tids: [7, 7, 7, 7], events: [1, 0, 1, 0], want: { 'thread:7': 0 } },
      // Two threads: each lane by its own rows (thread 7 mostly a, thread 8 all b), the header over both by all (b: 4 of 7).
      { tids: [7, 8, 8, 7, 8, 7, 7], events: [0, 1, 1, 0, 1, 1, 0], want: { 'process:7': 1, 'thread:7': 0, 'thread:8': 1 } },
      // An untimed row is counted by the store but placed in no lane: the lane's own rows decide (b: 2 of 3 placed).
      { tids: [7, 7, 7, 7], events: [0, 1, 1, 0], times: [1, 2, 3, NaN], want: { 'thread:7': 1 } },
    ];
    for (const [k, c] of cases.entries()) {
      const store = new RecordStore();
      const n = c.tids.length;
      store.beginSnapshot({
        ...start('s', '0', n, 1, 'a'),
        events: twoEvents,
        threads: [
          { pid: 7, tid: 7, comm: 'p' },
          { pid: 7, tid: 8, comm: 'q' },
        ],
      });
      const rows = { ...columns(c.times ?? c.tids.map((_, i) => i + 1), c.tids, c.events), pid: new Int32Array(n).fill(7) };
      for (const b of columnsToBatches(rows, { snapshotId: 's' })) store.addBatch(b);
      const layout = new TimelineLayout(store);
      layout.update('thread', null, 0, new Set(), 0);
      // One device pixel: every lane with a record is drawn dense.
      const frame = layout.frame(0, 10, 1, 0, 1000);
      const got = Object.fromEntries(frame.map((f) => [layout.lanes[f.lane].key, f.densityEvent]));
      assert.deepEqual(got, c.want, `case ${k}`);
      for (const f of frame) assert.equal(f.densityEvent, mostFrequentEvent(store.event, layout.lanes[f.lane].rows), `case ${k}: as counting its rows`);
    }
  });

  it('makes the busiest thread with callchains a stack chart by default and keeps what the user chose for a lane', () => {
    // Threads 7 (three samples) and 8 (one, as a forked child's) of process 7, each with callchains (stack 0: f ← main).
    const store = new RecordStore();
    store.beginSnapshot({ ...start('s', '0', 4, 1, 'e'), stacks: { names: ['main', 'f'], start: [0, 2], frames: [1, 0] } });
    const rows = { ...columns([1, 2, 3, 4], [7, 8, 7, 7], [0, 0, 0, 0]), pid: new Int32Array(4).fill(7) };
    for (const b of columnsToBatches(rows, { snapshotId: 's', stacks: new Int32Array(4) })) store.addBatch(b);
    const layout = new TimelineLayout(store);
    const charts = () => layout.lanes.flatMap((lane, i) => (layout.stackDepth[i] > 0 ? [lane.key] : []));
    const onlySeven = (row: number) => store.tid[row] === 7;
    // The busiest lane is the chart; the other keeps ticks (its button makes it one).
    layout.update('thread', null, 0, new Set(), 0);
    assert.deepEqual(charts(), ['thread:7']);
    const both = new Map([['thread:8', 'chart' as const]]);
    layout.update('thread', null, 1, new Set(), 0, both);
    assert.deepEqual(charts(), ['thread:7', 'thread:8']);
    // A filter that leaves thread 7 alone keeps it a chart; a collapse of thread 7 leaves thread 8 the one lane that
    // can be a chart, and expanding thread 7 gives it back its default.
    layout.update('thread', onlySeven, 2, new Set(), 0);
    assert.deepEqual(charts(), ['thread:7']);
    layout.update('thread', null, 3, new Set(['thread:7']), 0);
    assert.deepEqual(charts(), ['thread:8'], 'the one lane left with callchains is a chart by default');
    layout.update('thread', null, 4, new Set(), 0);
    assert.deepEqual(charts(), ['thread:7']);
    // Switched to ticks, the busiest lane stays ticks whatever filter or collapse comes and goes, and the chart does
    // not move to another lane.
    const ticks = new Map([['thread:7', 'ticks' as const]]);
    layout.update('thread', null, 5, new Set(), 0, ticks);
    assert.deepEqual(charts(), []);
    layout.update('thread', onlySeven, 6, new Set(), 0, ticks);
    assert.deepEqual(charts(), []);
    layout.update('thread', null, 7, new Set(['thread:8']), 0, ticks);
    assert.deepEqual(charts(), []);
  });

  it('counts the rows of each event across runs of one event, the last run and a new highest index included', () => {
    const events = [0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 4, 4, 0, 0, 1, 7, 7, 7];
    const store = new RecordStore();
    store.beginSnapshot(start('a', '0', events.length, 2, 'e'));
    const times = events.map((_, i) => i);
    for (const b of columnsToBatches(columns(times, Array(events.length).fill(7), events), { snapshotId: 'a', batchRows: 10 })) store.addBatch(b);
    const snap = store.getSnapshot('a')!;
    // Store events: e (0), mem:x:w (1), then the unannounced local 4 and 7 as placeholders (2, 3).
    assert.deepEqual(
      store.events.map((e) => e.name),
      ['e', 'mem:x:w', 'event 4', 'event 7'],
    );
    assert.deepEqual(snap.eventRows, [6, 7, 2, 3]);
    assert.deepEqual(
      Array.from(store.event.subarray(0, events.length)),
      events.map((e) => (e === 4 ? 2 : e === 7 ? 3 : e)),
    );
  });

  it('finds the same extent, untimed count and order for batches in order (read at their ends) as for others (row by row)', () => {
    // Rows: NaN and side-band (kind 3) at both ends of ordered batches, then a batch out of order.
    const times = [NaN, 1, 2, 3, 4, NaN, 5, 6, NaN, 9, 7, NaN];
    const kinds = [9, 3, 9, 9, 3, 9, 9, 3, 9, 9, 9, 9];
    const c = { ...columns(times, Array(12).fill(7), Array(12).fill(0)), kind: Uint8Array.from(kinds) };
    const expected = (rows: number) => {
      const timed = times.slice(0, rows).filter((t) => t === t);
      const samples = times.slice(0, rows).filter((t, i) => t === t && kinds[i] === 9);
      const sorted = timed.every((t, i) => i === 0 || t >= timed[i - 1]);
      return { min: Math.min(...timed), max: Math.max(...timed), minS: Math.min(...samples), maxS: Math.max(...samples), untimed: rows - timed.length, sorted };
    };
    const store = new RecordStore();
    store.beginSnapshot(start('a', '1', 12, 3, 'e'));
    const batches = columnsToBatches(c, { snapshotId: 'a', batchRows: 4 });
    for (const [k, batch] of batches.entries()) {
      store.addBatch(batch);
      const snap = store.getSnapshot('a')!;
      const want = expected(4 * (k + 1));
      const got = {
        min: snap.minTime,
        max: snap.maxTime,
        minS: snap.minSampleTime,
        maxS: snap.maxSampleTime,
        untimed: snap.untimedRows,
        sorted: store.timeSorted,
      };
      assert.deepEqual(got, want, `after batch ${k}`);
    }
  });

  it("copies the first capture's stack ids as they are, and makes ids past its table none", () => {
    const store = new RecordStore();
    store.beginSnapshot({ ...start('a', '0', 4, 1, 'e'), stacks: { names: ['main', 'f'], start: [0, 2, 3], frames: [1, 0, 0] } });
    for (const batch of columnsToBatches(columns([1, 2, 3, 4], [7, 7, 7, 7], [0, 0, 0, 0]), { snapshotId: 'a', stacks: Int32Array.from([1, 0, 2, -1]) }))
      store.addBatch(batch);
    assert.deepEqual(Array.from(store.stack.subarray(0, 4)), [1, 0, -1, -1]);
  });

  it('merges the stacks of every snapshot into one table and maps each row to it', () => {
    const store = new RecordStore();
    // a: stack 0 = f ← main, stack 1 = main; b: its stack 0 is a's stack 0 under other name numbers, its stack 1 is new.
    store.beginSnapshot({ ...start('a', '0', 3, 1, 'e'), stacks: { names: ['main', 'f'], start: [0, 2, 3], frames: [1, 0, 0] } });
    store.beginSnapshot({ ...start('b', '0', 3, 1, 'e'), stacks: { names: ['f', 'main', 'g'], start: [0, 2, 4], frames: [0, 1, 2, 1] } });
    const ca = columns([1, 2, 3], [7, 7, 7], [0, 0, 0]);
    const cb = columns([4, 5, 6], [7, 7, 7], [0, 0, 0]);
    for (const batch of columnsToBatches(ca, { snapshotId: 'a', stacks: Int32Array.from([0, -1, 1]) })) store.addBatch(batch);
    for (const batch of columnsToBatches(cb, { snapshotId: 'b', stacks: Int32Array.from([1, 0, -1]) })) store.addBatch(batch);
    const table = store.stackTable();
    const named = (id: number) => Array.from(table.frames.subarray(table.start[id], table.start[id + 1]), (n) => table.names[n]).join(' ← ');
    assert.deepEqual(table.names, ['main', 'f', 'g']);
    assert.deepEqual(
      Array.from(store.stack.subarray(0, 6), (id) => (id < 0 ? '-' : named(id))),
      ['f ← main', '-', 'main', 'g ← main', 'f ← main', '-'],
    );
    assert.equal(table.start.length - 1, 3, 'f ← main is stored once');
    assert.equal(table.locations, undefined, 'no lines sent, none kept');
  });

  it('keeps the source lines of stacks across snapshots: a stack per leaf line, the first known entry line per function', () => {
    const store = new RecordStore();
    const at = (line: number) => ({ file: '/src/a.c', line });
    // a: f ← main at line 5 of f; b (its own numbering): f ← main at line 5 again and at line 6, and main's entry line.
    store.beginSnapshot({
      ...start('a', '0', 1, 1, 'e'),
      stacks: { names: ['main', 'f'], start: [0, 2], frames: [1, 0], locations: [at(5), at(3)], leafLocation: [0], nameLocation: [-1, 1] },
    });
    store.beginSnapshot({
      ...start('b', '0', 2, 1, 'e'),
      stacks: {
        names: ['f', 'main'],
        start: [0, 2, 4],
        frames: [0, 1, 0, 1],
        locations: [at(6), at(1), at(5), at(9)],
        leafLocation: [2, 0],
        nameLocation: [3, 1],
      },
    });
    for (const batch of columnsToBatches(columns([1], [7], [0]), { snapshotId: 'a', stacks: Int32Array.from([0]) })) store.addBatch(batch);
    const b = columnsToBatches(columns([2, 3], [7, 7], [0, 0]), { snapshotId: 'b', stacks: Int32Array.from([0, 1]) });
    for (const batch of b) store.addBatch(batch);
    const table = store.stackTable();
    const line = (l: number) => (l < 0 ? -1 : table.locations![l].line);
    assert.deepEqual(Array.from(store.stack.subarray(0, 3)), [0, 0, 1], 'the same functions at the same line are one stack');
    assert.deepEqual(Array.from(table.leafLocation!, line), [5, 6]);
    assert.deepEqual(Array.from(table.nameLocation!, line), [1, 3], 'main from b, f from a (the first snapshot that knew it)');
  });

  describe('live capture', () => {
    /** An append of rows at `times` (ns after `origin`), numbered on from `firstRow`, keeping the window from `keepFromNs`. */
    function append(seq: number, firstRow: number, origin: bigint, times: number[], keepFromNs: bigint, extra: Partial<SnapshotStart> = {}): LiveAppend {
      const n = times.length;
      const rows = columns(
        times,
        times.map(() => 7),
        times.map((_, i) => i % 2),
      );
      rows.kind.fill(9); // samples
      const [batch] = columnsToBatches(
        { ...rows, timeOriginNs: origin },
        { snapshotId: 'live', symbols: times.map((_, i) => `fn${seq}_${i}`), stacks: Int32Array.from(times, () => 0) },
      );
      return {
        type: 'liveAppend',
        snapshotId: 'live',
        seq,
        part: {
          ...start('live', String(origin), n, 1, 'cpu-clock'),
          stacks: { names: [`leaf${seq}`, 'main'], start: [0, 2], frames: [0, 1] },
          ...extra,
        },
        batch: { ...batch, firstRow },
        keepFromNs: String(keepFromNs),
      };
    }

    it('extends its lanes by each append to what a build from scratch makes, through new threads, processes and dropped rows', () => {
      const store = new RecordStore();
      const layout = new TimelineLayout(store);
      const described = (l: TimelineLayout) =>
        l.lanes.map((lane, i) => ({ ...lane, rows: Array.from(lane.rows), hasStacks: l.hasStacks[i], depth: l.stackDepth[i] }));
      // Thread 8 (of process 7) joins at append 3, process 9 at append 6; odd rows are breakpoint hits (a watch lane).
      const tidsOf = (seq: number) => (seq < 3 ? [7, 7, 7, 7] : seq < 6 ? [7, 8, 7, 8] : [8, 9, 7, 9]);
      let row = 0;
      let t = 0;
      let extendedInPlace = 0;
      // 80 appends of 4 rows into a window of 160 rows: rows are dropped every 5 appends once it is full.
      for (let seq = 0; seq < 80; seq++) {
        const tids = tidsOf(seq);
        const times = tids.map(() => (t += 100));
        const c = {
          ...columns(
            times,
            tids,
            tids.map((_, i) => i % 2),
          ),
          pid: Int32Array.from(tids, (tid) => (tid === 9 ? 9 : 7)),
        };
        // The first appends have no callchain, so a lane's stack chart starts on a later one.
        const stacks = Int32Array.from(tids, () => (seq < 2 ? -1 : 0));
        const [batch] = columnsToBatches({ ...c, timeOriginNs: 1000n }, { snapshotId: 'live', stacks });
        store.appendLive({
          type: 'liveAppend',
          snapshotId: 'live',
          seq,
          part: { ...start('live', '1000', tids.length, 1, 'cpu-clock'), stacks: { names: ['leaf', 'main'], start: [0, 2], frames: [0, 1] } },
          batch: { ...batch, firstRow: row },
          keepFromNs: String(1000 + Math.max(0, t - 16000)),
        });
        row += tids.length;
        const before = new Map(layout.lanes.map((lane) => [lane.key, lane.rows]));
        layout.update('thread', null, 0, new Set(), 0);
        for (const lane of layout.lanes) {
          const was = before.get(lane.key);
          if (was && lane.rows.length > was.length && lane.rows.buffer === was.buffer) extendedInPlace++;
        }
        const rebuilt = new TimelineLayout(store);
        rebuilt.update('thread', null, 0, new Set(), 0);
        assert.deepEqual(described(layout), described(rebuilt), `after append ${seq}`);
      }
      assert.ok(store.snapshots[0].live!.droppedRows > 0, 'rows fell out of the window on the way');
      assert.ok(extendedInPlace > 0, 'appends extended lanes in place, not by a build from scratch');
      assert.deepEqual(
        layout.lanes.map((lane) => lane.key),
        ['watch:mem:x:w', 'process:7', 'thread:7', 'thread:8', 'thread:9'],
      );
    });

    it('grows by appends (each with its own origin) and drops the rows that fell out of its window, keeping every part consistent', () => {
      const store = new RecordStore();
      // A snapshot first (its origin is the store's), then the live capture, with another snapshot arriving between appends.
      store.beginSnapshot(start('a', '1000', 2, 1, 'cpu-clock'));
      for (const b of columnsToBatches(columns([0, 1], [7, 7], [0, 0]), { snapshotId: 'a' })) store.addBatch(b);
      const live = store.appendLive(append(0, 0, 2000n, [0, 100, 200], 0n), 0);
      assert.ok(live.live);
      assert.equal(live.index, 1);
      store.beginSnapshot(start('b', '1000', 1, 1, 'cpu-clock'));
      for (const b of columnsToBatches(columns([5], [7], [0]), { snapshotId: 'b' })) store.addBatch(b);
      store.appendLive(append(1, 3, 2300n, [0, 50, 100], 0n, { losses: [{ row: 1, kind: 'LOST', lost: '4', ring: 'cpu0', sinceNs: '2300' }] }), 0);
      assert.deepEqual(Array.from(store.time.subarray(0, 9)), [0, 1, 1000, 1100, 1200, 5, 1300, 1350, 1400]);
      assert.deepEqual(store.rangesOf(1), [
        [2, 5],
        [6, 9],
      ]);
      assert.deepEqual(store.timeExtent(1), [1000, 1400]);
      assert.deepEqual(live.eventRows, [4, 2]);
      assert.deepEqual(
        live.losses.map((l) => l.row),
        [4],
        'a loss is numbered among the live rows',
      );
      assert.throws(() => store.appendLive(append(2, 5, 2500n, [0], 0n), 0), /starts at row 5, expected 6/);

      // The window moves to 3250 ns absolute (store time 1250): the rows at 1000, 1100 and 1200 fall out.
      const selectedBefore = 7; // the row at 1350
      store.appendLive(append(2, 6, 2500n, [0, 10], 2250n), 0);
      assert.equal(store.length, 8);
      assert.deepEqual(Array.from(store.time.subarray(0, 8)), [0, 1, 5, 1300, 1350, 1400, 1500, 1510]);
      assert.deepEqual(store.rangesOf(1), [[3, 8]]);
      assert.deepEqual(store.rangesOf(2), [[2, 3]], 'the other snapshot moved down, whole');
      assert.deepEqual(
        [3, 4, 5, 6, 7].map((r) => store.localRowOf(r)),
        [3, 4, 5, 6, 7],
        'live rows keep their numbers (the host answers details by them)',
      );
      assert.deepEqual(
        [0, 1, 2, 3, 7].map((r) => store.snapshotIndexOf(r)),
        [0, 0, 2, 1, 1],
      );
      assert.equal(store.getSnapshot('b')!.firstGlobalRow, 2);
      assert.equal(live.receivedRows, 5);
      assert.equal(live.live!.droppedRows, 3);
      assert.deepEqual(live.eventRows, [3, 2], 'rows per event count what is held');
      assert.deepEqual(store.timeExtent(1), [1300, 1510]);
      assert.deepEqual(
        live.losses.map((l) => l.row),
        [4],
      );
      assert.equal(store.rowAfterDrop(selectedBefore), 4, 'a row kept is found where it moved');
      assert.equal(store.rowAfterDrop(3), -1, 'a row dropped is gone');
      assert.deepEqual(
        [3, 4, 5, 6, 7].map((r) => store.symbolOf(r)),
        ['fn1_0', 'fn1_1', 'fn1_2', 'fn2_0', 'fn2_1'],
        'symbols moved with their rows',
      );
      assert.deepEqual(
        [3, 6].map((r) => store.stackFunctionsOf(r)),
        [
          ['leaf1', 'main'],
          ['leaf2', 'main'],
        ],
        'stacks moved with their rows; the interned tables keep every stack',
      );
      assert.equal(store.stackTable().start.length - 1, 3);
      assert.deepEqual(Array.from(store.rowsOf(0)), [0, 1]);
    });

    it('drops rows once an eighth of what it holds fell out, and cuts its extent to the window at once', () => {
      const store = new RecordStore();
      const times = Array.from({ length: 80 }, (_, i) => i * 10); // 0..790 ns
      store.appendLive(append(0, 0, 1000n, times, 0n));
      // 5 rows (under an eighth of 80) fall out: the extent starts at the window, the rows wait.
      store.appendLive(append(1, 80, 1800n, [0], 1050n));
      assert.equal(store.length, 81);
      assert.deepEqual(store.timeExtent(0), [50, 800]);
      // 20 rows fall out: they go.
      store.appendLive(append(2, 81, 1810n, [0], 1200n));
      assert.equal(store.length, 62);
      assert.equal(store.time[0], 200);
      assert.deepEqual(store.timeExtent(0), [200, 810]);
    });

    it('keeps thread states that reach into the window and drops the rest', () => {
      const store = new RecordStore();
      const states = (ends: number[]) => {
        const n = ends.length;
        const f64 = (values: number[]) => Float64Array.from(values).buffer;
        return {
          type: 'threadStates' as const,
          snapshotId: 'live',
          count: n,
          columns: {
            start: f64(ends.map((e) => e - 5)),
            end: f64(ends),
            tid: new Int32Array(n).fill(7).buffer,
            cpu: new Int32Array(n).buffer,
            state: new Uint8Array(n).buffer,
            flags: new Uint8Array(n).buffer,
            nextTid: new Int32Array(n).buffer,
            nextComm: new Int32Array(n).fill(-1).buffer,
          },
          comms: [],
        };
      };
      store.appendLive({ ...append(0, 0, 0n, [0, 10], 0n), threadStates: states([10]) }, 0);
      store.appendLive({ ...append(1, 2, 100n, [0, 10], 0n), threadStates: states([10]) }, 0);
      assert.equal(store.threadStates.length, 2);
      store.appendLive(append(2, 4, 200n, [0], 50n), 0);
      assert.equal(store.threadStates.length, 1);
      assert.equal(store.threadStates[0].end[0], 110, 'rebased by its own part origin');
    });
  });
});
