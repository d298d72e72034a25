import * as assert from 'node:assert/strict';
import { axisTickFormatter, formatAbsolute, formatAddress, formatDuration, formatOffset, TimeBase } from './time-format';
import { formatBytes } from '../native/abi/units';
import { bisectLeft, bisectRight, nearestPosition, visibleRange } from './hit-test';
import { binDensity } from './density';
import { mostFrequentEvent } from './layout';
import { buildLanes, identityRows, mergeByTime, sortRowsByTime, type LaneSource } from './lanes';
import { legendEntries, PALETTE_SIZE } from './legend';
import { pairSpans, SpanType, type SpanSource } from './spans';
import { compileFilter, parseFilter, type FilterSubject } from './filter';
import { breakpointFits, explainEnospc } from './budget';
import { FRAME_PAUSE_MS, RenderScheduler } from './scheduler';
import { parseWatchLocation, parseWatchTarget } from './watch-spec';
import type { WatchBudget } from '../shared/protocol';
import { prng } from '../native/decode/test-records';

const rowsOf = (n: number) => Uint32Array.from({ length: n }, (_, i) => i);

describe('time formatting', () => {
  it('formats durations with a unit and 4 significant digits', () => {
    assert.equal(formatDuration(0), '0 ns');
    assert.equal(formatDuration(999), '999 ns');
    assert.equal(formatDuration(1234567), '1.235 ms');
    assert.equal(formatDuration(2.5e9), '2.500 s');
    assert.equal(formatDuration(-1500), '-1.500 µs');
    assert.equal(formatDuration(NaN), '—');
  });
  it('picks one unit and enough decimals for the tick step', () => {
    assert.equal(axisTickFormatter(200_000)(1_400_000), '1.4 ms');
    assert.equal(axisTickFormatter(1e9)(3e9), '3 s');
    assert.equal(axisTickFormatter(5)(120), '120 ns');
    assert.equal(axisTickFormatter(20_000)(1_020_000), '1.02 ms');
  });
  it('formats absolute perf timestamps exactly from a bigint origin', () => {
    assert.equal(formatAbsolute(123_456_789_012_345_678n, 22), '123456789.012345700');
    assert.equal(formatAbsolute(5n, 0), '0.000000005');
  });
  it("formats a time since the capture's start in one unit, to the nanosecond", () => {
    assert.equal(formatOffset(505_000), '505.000 µs');
    assert.equal(formatOffset(1_500_000_000), '1.500000000 s');
    assert.equal(formatOffset(7), '7 ns');
    assert.equal(formatOffset(0), '0 ns');
    assert.equal(formatOffset(-2_500), '-2.500 µs');
    assert.equal(formatOffset(NaN), '—');
  });
  it("shows every time in one base: since the shown capture's start, or the perf clock with its exact integer", () => {
    // Store times count from 5000 s of the perf clock; the shown capture starts 2 ms later.
    const relative = new TimeBase(2_000_000, 5_000_000_000_000n, false);
    assert.equal(relative.format(2_505_000), '505.000 µs');
    assert.equal(relative.format(NaN), 'no time');
    assert.equal(relative.rawNs(2_505_000), '5000002505000');
    assert.equal(relative.shift(), -2_000_000);
    assert.equal(relative.tickFormatter(100_000)(2_500_000 + relative.shift()), '0.5 ms');
    const clock = new TimeBase(2_000_000, 5_000_000_000_000n, true);
    assert.equal(clock.format(2_505_000), '5000.002505000 s');
    assert.equal(clock.rawNs(2_505_000), relative.rawNs(2_505_000), 'the raw value does not depend on the base');
    assert.equal(clock.tickFormatter(100_000)(2_500_000 + clock.shift()), '5000.0025 s');
    assert.equal(clock.tickFormatter(1e9)(3e9 + clock.shift()), '5003 s');
  });
  it('formats bytes and split addresses', () => {
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(12n), '12 B');
    assert.equal(formatAddress(0xffffffff, 0x81000010), '0xffffffff81000010');
    assert.equal(formatAddress(0, 0x401000), '0x401000');
  });
});

describe('bisection hit-testing', () => {
  const time = Float64Array.from([10, 20, 20, 30, 50]);
  const rows = rowsOf(5);
  it('finds left/right bounds and visible ranges', () => {
    assert.equal(bisectLeft(time, rows, 20), 1);
    assert.equal(bisectRight(time, rows, 20), 3);
    assert.deepEqual(visibleRange(time, rows, 15, 30), [1, 4]);
    assert.deepEqual(visibleRange(time, rows, 60, 70), [5, 5]);
  });
  it('returns the nearest record within a radius, earlier on ties', () => {
    assert.equal(nearestPosition(time, rows, 24, 5), 2);
    assert.equal(nearestPosition(time, rows, 25, 5), 2, 'tie between 20 and 30 goes to the earlier');
    assert.equal(nearestPosition(time, rows, 40, 5), -1);
    assert.equal(nearestPosition(time, rows, 49, 5), 4);
    assert.equal(nearestPosition(time, new Uint32Array(0), 1, 5), -1);
  });
  it('searches through an indirection (lane row ids)', () => {
    const t = Float64Array.from([100, 1, 50, 7]);
    const laneRows = Uint32Array.from([1, 3, 2, 0]);
    assert.equal(bisectLeft(t, laneRows, 50), 2);
    assert.equal(nearestPosition(t, laneRows, 60, 20), 2);
  });
});

describe('density binning', () => {
  it('counts records per pixel column, clamping the right edge', () => {
    const time = Float64Array.from([0, 1, 2, 50, 99.9, 100, 150]);
    const { counts, max, total } = binDensity(time, rowsOf(7), 0, 100, 10);
    assert.deepEqual(Array.from(counts), [3, 0, 0, 0, 0, 1, 0, 0, 0, 2]);
    assert.equal(max, 3);
    assert.equal(total, 6);
  });
  it('handles a million records with one pass and a reusable buffer', () => {
    const n = 1_000_000;
    const time = new Float64Array(n);
    for (let i = 0; i < n; i++) time[i] = i;
    const buf = new Uint32Array(2000);
    const r = binDensity(time, rowsOf(n), 0, n, 1000, buf);
    assert.equal(r.total, n);
    assert.equal(
      r.counts.reduce((a, b) => a + b, 0),
      n,
    );
    assert.equal(r.counts.buffer, buf.buffer);
    assert.equal(r.max, 1000);
  });
  it('counts dense windows by bisection exactly as visiting every record would', () => {
    // Reference: one floor() per record, the definition of the binning.
    const naive = (time: Float64Array, rows: Uint32Array, t0: number, t1: number, width: number): number[] => {
      const counts = new Array<number>(width).fill(0);
      for (const row of rows) {
        const t = time[row];
        if (!(t >= t0 && t <= t1)) continue;
        counts[Math.min(width - 1, Math.floor((t - t0) * (width / (t1 - t0))))]++;
      }
      return counts;
    };
    for (let seed = 1; seed <= 40; seed++) {
      const random = prng(seed);
      const n = 20_000 + Math.floor(random() * 20_000);
      // Bursts and gaps, repeated times, fractional steps: the column edges fall anywhere.
      const time = new Float64Array(n);
      let t = random() * 1000;
      for (let i = 0; i < n; i++) {
        const r = random();
        t += r < 0.3 ? 0 : r < 0.95 ? random() * 3.7 : random() * 5000;
        time[i] = t;
      }
      const rows = rowsOf(n);
      const width = 8 + Math.floor(random() * 200);
      const t0 = time[Math.floor(random() * n * 0.2)] - random() * 10;
      const t1 = time[n - 1 - Math.floor(random() * n * 0.2)] + random() * 10;
      const r = binDensity(time, rows, t0, t1, width);
      const expected = naive(time, rows, t0, t1, width);
      assert.deepEqual(Array.from(r.counts), expected, `seed ${seed}`);
      assert.equal(r.max, Math.max(...expected), `seed ${seed}`);
      assert.equal(
        r.total,
        expected.reduce((a, b) => a + b, 0),
        `seed ${seed}`,
      );
    }
  });
});

function source(
  rows: { t: number; ev: number; pid: number; tid: number; cpu: number; kind?: number; misc?: number }[],
  events: { name: string; kind: 'tracepoint' | 'breakpoint' | 'software' | 'other' }[],
  comms: Record<number, string>,
): SpanSource {
  return {
    length: rows.length,
    time: Float64Array.from(rows.map((r) => r.t)),
    event: Uint16Array.from(rows.map((r) => r.ev)),
    pidOf: (row: number) => rows[row].pid,
    tid: Int32Array.from(rows.map((r) => r.tid)),
    cpu: Int32Array.from(rows.map((r) => r.cpu)),
    kind: Uint8Array.from(rows.map((r) => r.kind ?? 9)),
    misc: Uint16Array.from(rows.map((r) => r.misc ?? 0)),
    events,
    commOf: (row: number) => comms[rows[row].tid] ?? '',
  };
}

describe("a dense lane's colour", () => {
  it('is the event most of its rows belong to, the lowest index among equals, -1 for none, any 16-bit index', () => {
    const event = Uint16Array.from([3, 1, 3, 1, 65535, 65535, 65535, 2]);
    assert.equal(mostFrequentEvent(event, Uint32Array.from([0, 1, 2, 3])), 1, 'two each: the lower index');
    assert.equal(mostFrequentEvent(event, Uint32Array.from([3, 2, 1, 0])), 1, 'whatever the order of the rows');
    assert.equal(mostFrequentEvent(event, Uint32Array.from([0, 4, 5, 6, 7])), 65535);
    assert.equal(mostFrequentEvent(event, Uint32Array.from([7])), 2);
    assert.equal(mostFrequentEvent(event, new Uint32Array(0)), -1);
  });
});

describe('lane grouping', () => {
  const events = [
    { name: 'sched:sched_switch', kind: 'tracepoint' as const },
    { name: 'mem:0x1000:w', kind: 'breakpoint' as const },
  ];
  const src: LaneSource = source(
    [
      { t: 30, ev: 0, pid: 5, tid: 6, cpu: 1 },
      { t: 10, ev: 0, pid: 5, tid: 5, cpu: 0 },
      { t: 20, ev: 1, pid: 9, tid: 9, cpu: 1 },
      { t: NaN, ev: 0, pid: 9, tid: 9, cpu: 1 },
      { t: 5, ev: 0, pid: 9, tid: 9, cpu: 0 },
    ],
    events,
    { 5: 'app', 6: 'app-worker', 9: 'x<y>' },
  );

  it('groups by CPU with a watchpoint lane first and rows sorted by time', () => {
    const lanes = buildLanes(src, 'cpu', () => true, new Set(['cpu:1']));
    assert.deepEqual(
      lanes.map((l) => [l.key, l.label, l.kind, Array.from(l.rows), l.collapsed]),
      [
        ['watch:mem:0x1000:w', '◆ mem:0x1000:w', 'watch', [2], false],
        ['cpu:0', 'CPU 0', 'group', [4, 1], false],
        ['cpu:1', 'CPU 1', 'group', [2, 0], true],
      ],
    );
  });
  it("lays out only the rows of the shown capture's ranges", () => {
    const lanes = buildLanes(src, 'cpu', null, new Set(), [
      [0, 1],
      [3, 5],
    ]);
    assert.deepEqual(
      lanes.map((l) => [l.key, Array.from(l.rows)]),
      [
        ['cpu:0', [4]],
        ['cpu:1', [0]],
      ],
      'row 3 has no time; 1 and 2 are outside',
    );
    const all = buildLanes(src, 'cpu', null, new Set(), [[0, 5]]);
    assert.deepEqual(
      all.map((l) => [l.key, Array.from(l.rows)]),
      buildLanes(src, 'cpu', null, new Set()).map((l) => [l.key, Array.from(l.rows)]),
    );
    assert.deepEqual(buildLanes(src, 'cpu', null, new Set(), []), [], 'an empty capture has no lanes');
  });
  it('groups by thread under one header per process (comm, pid, thread count), and by event', () => {
    const threads = buildLanes(src, 'thread', () => true, new Set());
    assert.deepEqual(
      threads.map((l) => [l.key, l.label, l.kind, Array.from(l.rows)]),
      [
        ['watch:mem:0x1000:w', '◆ mem:0x1000:w', 'watch', [2]],
        ['process:5', 'app 5', 'process', [1, 0]],
        ['thread:5', 'app 5', 'group', [1]],
        ['thread:6', 'app-worker 6', 'group', [0]],
        ['thread:9', 'x<y> 9', 'group', [4, 2]],
      ],
      'a process of one thread is its thread lane alone (a header over it would repeat it)',
    );
    const folded = buildLanes(src, 'thread', null, new Set(['process:5']));
    assert.deepEqual(
      folded.map((l) => [l.key, l.collapsed]),
      [
        ['watch:mem:0x1000:w', false],
        ['process:5', true],
        ['thread:9', false],
      ],
      'a collapsed process hides its threads and keeps their rows in its summary',
    );
    assert.deepEqual(Array.from(folded[1].rows), [1, 0]);
    const kept = threads.map((l) => l.label.slice(l.label.length - (l.keep ?? 0)));
    assert.deepEqual(kept, ['', '5', '5', '6', '9'], 'what tells each lane apart');
    assert.deepEqual(
      threads.filter((l) => l.kind === 'process').map((l) => l.title),
      ['app 5: 2 threads'],
    );
    const byEvent = buildLanes(src, 'event', () => true, new Set());
    assert.deepEqual(
      byEvent.map((l) => [l.key, l.kind, l.rows.length]),
      [
        ['watch:mem:0x1000:w', 'watch', 1],
        ['event:sched:sched_switch', 'group', 3],
      ],
    );
  });
  it('trusts a time-sorted source (no sort pass) and gives the same lanes, with or without a filter function', () => {
    const rows = [0, 1, 2, 3, 4, 5].map((i) => ({ t: i * 10, ev: i % 2, pid: 5, tid: 5 + (i % 3), cpu: i % 2 }));
    const plain = source(rows, events, {});
    const sorted = { ...plain, timeSorted: true };
    for (const grouping of ['cpu', 'thread', 'event'] as const) {
      const a = buildLanes(plain, grouping, () => true, new Set());
      const b = buildLanes(sorted, grouping, null, new Set());
      assert.deepEqual(
        b.map((l) => [l.key, l.label, Array.from(l.rows)]),
        a.map((l) => [l.key, l.label, Array.from(l.rows)]),
        grouping,
      );
    }
  });
  it('applies the filter predicate', () => {
    const lanes = buildLanes(src, 'cpu', (r) => src.tid[r] === 9, new Set());
    assert.deepEqual(
      lanes.map((l) => [l.key, Array.from(l.rows)]),
      [
        ['watch:mem:0x1000:w', [2]],
        ['cpu:0', [4]],
        ['cpu:1', [2]],
      ],
    );
  });
  it('gives what a naive per-row grouping gives, whatever the mix of groups, gaps and filters', () => {
    const events = [
      { name: 'sched:sched_switch', kind: 'tracepoint' as const },
      { name: 'mem:0x1000:w', kind: 'breakpoint' as const },
      { name: 'syscalls:sys_enter_read', kind: 'tracepoint' as const },
    ];
    // Reference: every lane's rows by a plain filter over all rows.
    const naive = (
      lanes: readonly { key: string; rows: Uint32Array }[],
      src: LaneSource,
      grouping: 'cpu' | 'thread' | 'event',
      include: ((row: number) => boolean) | null,
      ranges: readonly (readonly [number, number])[],
    ) =>
      lanes.map((lane) => {
        const rows: number[] = [];
        for (let row = 0; row < src.length; row++) {
          if (Number.isNaN(src.time[row]) || (include && !include(row)) || !ranges.some(([a, b]) => row >= a && row < b)) continue;
          const ev = src.events[src.event[row]];
          const watch = `watch:${ev.name}`;
          const key =
            grouping === 'cpu'
              ? `cpu:${src.cpu[row]}`
              : grouping === 'thread'
                ? `thread:${src.tid[row]}`
                : ev.kind === 'breakpoint'
                  ? watch
                  : `event:${ev.name}`;
          if (key === lane.key || (lane.key === watch && ev.kind === 'breakpoint') || lane.key === `process:${src.pidOf(row)}`) rows.push(row);
        }
        return [lane.key, rows];
      });
    for (let seed = 1; seed <= 60; seed++) {
      const random = prng(seed);
      const n = 1 + Math.floor(random() * 300);
      // Long single-group prefixes (the lazy per-row table), then other groups, NaN times and filters at random points.
      // Half the seeds have no untimed row: told so (allTimed), the lanes take the path that reads only the grouping column.
      const switchAt = Math.floor(random() * n);
      const untimed = random() < 0.5;
      const rows = Array.from({ length: n }, (_, i) => {
        const late = i >= switchAt;
        const tid = late ? 7 + Math.floor(random() * 3) : 7;
        return {
          t: untimed && random() < 0.05 ? NaN : i * 10,
          ev: late && random() < 0.3 ? Math.floor(random() * 3) : 0,
          pid: tid === 9 ? 8 : 7, // two processes when grouped by thread
          tid,
          cpu: late ? Math.floor(random() * 3) : 1,
        };
      });
      const plain = { ...source(rows, events, {}), timeSorted: true, allTimed: !rows.some((r) => Number.isNaN(r.t)) };
      // Half the seeds give the grouping column in parts (as the store's uncopied batches): cut at random rows.
      const cuts = [0, ...Array.from({ length: 3 }, () => Math.floor(random() * n)).sort((x, y) => x - y), n];
      const inParts = (column: Int32Array) => cuts.slice(1).map((cut, k) => ({ base: cuts[k], values: column.slice(cuts[k], cut) }));
      const src: LaneSource = random() < 0.5 ? plain : { ...plain, partsOf: (name) => inParts(plain[name]) };
      const cut = Math.floor(random() * n);
      const include = random() < 0.5 ? null : (row: number) => row !== cut;
      // A third of the seeds show one capture's rows: two ranges with a gap between them.
      const [a, b, c] = [random(), random(), random()].map((x) => Math.floor(x * n)).sort((x, y) => x - y);
      const ranges =
        random() < 1 / 3
          ? ([
              [0, a],
              [b, c],
            ] as const)
          : undefined;
      for (const grouping of ['cpu', 'thread', 'event'] as const) {
        const lanes = buildLanes(src, grouping, include, new Set(), ranges);
        assert.deepEqual(
          lanes.map((l) => [l.key, Array.from(l.rows)]),
          naive(lanes, src, grouping, include, ranges ?? [[0, n]]),
          `seed ${seed} ${grouping}`,
        );
        // By event, a breakpoint's rows are its watch lane; otherwise watch lanes repeat rows of group lanes.
        const total = lanes.filter((l) => grouping === 'event' || l.kind === 'group').reduce((sum, l) => sum + l.rows.length, 0);
        if (grouping === 'thread') {
          // A process of one thread shows that thread's rows: the same array, filled once.
          for (const header of lanes.filter((l) => l.kind === 'process')) {
            const threads = lanes.filter((l) => l.kind === 'group' && l.pid === header.pid);
            if (threads.length === 1) assert.equal(header.rows, threads[0].rows, `seed ${seed}: process ${header.pid} shares its thread's rows`);
          }
        }
        const placeable = rows.filter((r, i) => !Number.isNaN(r.t) && (!include || include(i)) && (ranges ?? [[0, n]]).some(([x, y]) => i >= x && i < y));
        assert.equal(total, placeable.length, `seed ${seed} ${grouping}: every placeable row in exactly one lane`);
      }
    }
  });
  it("gives a lane holding every row the page's shared 0..n-1, and sorts a copy of it when times are not in order", () => {
    const rows = [30, 10, 20, 40].map((t) => ({ t, ev: 0, pid: 5, tid: 5, cpu: 0 }));
    const unsorted = { ...source(rows, events, {}), allTimed: true };
    const [lane] = buildLanes(unsorted, 'cpu', null, new Set());
    assert.deepEqual(Array.from(lane.rows), [1, 2, 0, 3]);
    assert.deepEqual(Array.from(identityRows(4)), [0, 1, 2, 3], 'the shared rows were not reordered');
    const [sorted] = buildLanes({ ...unsorted, timeSorted: true }, 'cpu', null, new Set());
    assert.equal(sorted.rows.buffer, identityRows(4).buffer, 'time-sorted: the shared rows themselves');
    assert.deepEqual(
      Array.from(identityRows(70_000).subarray(65_530, 65_540)),
      Array.from({ length: 10 }, (_, i) => 65_530 + i),
      'grown',
    );
  });

  it('merges sorted row lists by time, ties by row', () => {
    const t = Float64Array.from([5, 1, 3, 3, 9, 0]);
    const lists = [Uint32Array.from([1, 3, 4]), Uint32Array.from([5, 2]), Uint32Array.from([0])];
    assert.deepEqual(Array.from(mergeByTime(t, lists)), [5, 1, 2, 3, 0, 4]);
    assert.deepEqual(Array.from(mergeByTime(t, [])), []);
  });
  it('gives every event a legend entry in the colour its ticks use', () => {
    const events = Array.from({ length: PALETTE_SIZE + 1 }, (_, i) => ({ name: `e${i}`, kind: 'software' as const }));
    const entries = legendEntries(events);
    assert.deepEqual(
      entries.map((e) => e.name),
      events.map((e) => e.name),
    );
    assert.equal(new Set(entries.slice(0, PALETTE_SIZE).map((e) => e.color)).size, PALETTE_SIZE, 'distinct while the palette lasts');
    assert.equal(entries[PALETTE_SIZE].color, 'var(--rs-palette-0)');
    // A capture that recorded events 1 and 8 lists those alone, in the colours they have on every capture.
    assert.deepEqual(legendEntries(events, [1, PALETTE_SIZE]), [entries[1], entries[PALETTE_SIZE]]);
  });
  it('sorts only when needed', () => {
    const t = Float64Array.from([1, 2, 3]);
    const already = rowsOf(3);
    assert.equal(sortRowsByTime(t, already), already);
    assert.deepEqual(Array.from(sortRowsByTime(Float64Array.from([3, 1, 2]), rowsOf(3))), [1, 2, 0]);
  });
});

describe('span pairing', () => {
  it('pairs sched_switch per CPU, PERF_RECORD_SWITCH in→out, and sys_enter/sys_exit per thread (nested)', () => {
    const events = [
      { name: 'sched:sched_switch', kind: 'tracepoint' as const },
      { name: 'syscalls:sys_enter_read', kind: 'tracepoint' as const },
      { name: 'syscalls:sys_exit_read', kind: 'tracepoint' as const },
      { name: 'raw_syscalls:sys_enter', kind: 'tracepoint' as const },
      { name: 'raw_syscalls:sys_exit', kind: 'tracepoint' as const },
    ];
    const src = source(
      [
        { t: 0, ev: 0, pid: 1, tid: 1, cpu: 0 }, // 0: cpu0 switch (1 out)
        { t: 10, ev: 1, pid: 2, tid: 2, cpu: 0 }, // 1: tid2 enter read
        { t: 12, ev: 1, pid: 3, tid: 3, cpu: 1 }, // 2: tid3 enter read (never exits)
        { t: 15, ev: 1, pid: 2, tid: 2, cpu: 0 }, // 3: tid2 nested enter read
        { t: 18, ev: 2, pid: 2, tid: 2, cpu: 0 }, // 4: exit pairs with 3
        { t: 20, ev: 2, pid: 2, tid: 2, cpu: 0 }, // 5: exit pairs with 1
        { t: 30, ev: 0, pid: 2, tid: 2, cpu: 0 }, // 6: cpu0 switch: tid2 ran 0..30
        { t: 31, ev: 3, pid: 2, tid: 2, cpu: 1 }, // 7: raw enter
        { t: 33, ev: 4, pid: 2, tid: 2, cpu: 1 }, // 8: raw exit
        { t: 40, ev: 0, pid: 4, tid: 4, cpu: 1, kind: 14, misc: 0 }, // 9: switch in tid4
        { t: 45, ev: 0, pid: 4, tid: 4, cpu: 1, kind: 14, misc: 1 << 13 }, // 10: switch out tid4
        { t: 50, ev: 2, pid: 9, tid: 9, cpu: 1 }, // 11: unmatched exit
      ],
      events,
      {},
    );
    const spans = pairSpans(src);
    const got = Array.from({ length: spans.count }, (_, i) => [
      spans.openRow[i],
      spans.closeRow[i],
      spans.tid[i],
      spans.cpu[i],
      spans.type[i],
      spans.start[i],
      spans.end[i],
    ]);
    assert.deepEqual(got, [
      [3, 4, 2, 0, SpanType.SYSCALL, 15, 18],
      [1, 5, 2, 0, SpanType.SYSCALL, 10, 20],
      [0, 6, 2, 0, SpanType.RUN, 0, 30],
      [7, 8, 2, 1, SpanType.SYSCALL, 31, 33],
      [9, 10, 4, 1, SpanType.RUN, 40, 45],
    ]);
  });
});

describe('filter parsing', () => {
  const rows = [
    { ev: 'sched:sched_switch', comm: 'bash', sym: null, kind: 'SAMPLE', pid: 10, tid: 11, cpu: 0, misc: 1, ip: 'ffffffff81000000' },
    { ev: 'syscalls:sys_enter_read', comm: 'my app', sym: 'do_read', kind: 'SAMPLE', pid: 20, tid: 20, cpu: 1, misc: 2, ip: '401000' },
    { ev: 'mem:counter:w', comm: 'bash', sym: 'counter_loop', kind: 'SAMPLE', pid: 10, tid: 10, cpu: 1, misc: 2, ip: '401234' },
  ];
  const subject: FilterSubject = {
    eventName: (r) => rows[r].ev,
    comm: (r) => rows[r].comm,
    symbol: (r) => rows[r].sym,
    kindName: (r) => rows[r].kind,
    pid: (r) => rows[r].pid,
    tid: (r) => rows[r].tid,
    cpu: (r) => rows[r].cpu,
    misc: (r) => rows[r].misc,
    ipHex: (r) => rows[r].ip,
  };
  const matching = (text: string) => {
    const p = parseFilter(text);
    assert.ok(p.ok, p.ok ? '' : p.error);
    const f = compileFilter(p.ok ? p.terms : [], subject);
    return rows.map((_, i) => i).filter(f);
  };
  it('matches by key, bare words, negation and quotes', () => {
    assert.deepEqual(matching(''), [0, 1, 2]);
    assert.deepEqual(matching('event:sched'), [0]);
    assert.deepEqual(matching('pid:10'), [0, 2]);
    assert.deepEqual(matching('pid:10 -tid:11'), [2]);
    assert.deepEqual(matching('comm:"my app"'), [1]);
    assert.deepEqual(matching('sym:counter'), [2]);
    assert.deepEqual(matching('counter'), [2]);
    assert.deepEqual(matching('cpu:1 misc:2'), [1, 2]);
    assert.deepEqual(matching('ip:0x401000'), [1]);
    assert.deepEqual(matching('ip:4198964'), [2]);
    assert.deepEqual(matching('BASH'), [0, 2]);
  });
  it('reports malformed terms', () => {
    assert.deepEqual(parseFilter('pid:abc'), { ok: false, error: 'pid: expects a number, got "abc"' });
    assert.deepEqual(parseFilter('comm:"open'), { ok: false, error: 'unterminated quote at column 6' });
    assert.deepEqual(parseFilter('ip:xyz'), { ok: false, error: 'ip: expects 0xHEX or a decimal address, got "xyz"' });
    assert.deepEqual(parseFilter('tid:'), { ok: false, error: 'tid: needs a value' });
  });
});

describe("debug-register budget (the kernel's hw_breakpoint admission rule)", () => {
  const b = (cpuPinned: number, maxTaskPinned: number, flexible: number): WatchBudget => ({
    used: cpuPinned + maxTaskPinned + Math.min(flexible, 1),
    total: 4,
    cpuPinned,
    maxTaskPinned,
    flexible,
  });
  it('admits flexible breakpoints when one already exists or pinned use leaves a register', () => {
    assert.equal(breakpointFits(b(3, 0, 0), false), true);
    assert.equal(breakpointFits(b(2, 2, 0), false), false);
    assert.equal(breakpointFits(b(2, 2, 1), false), true);
  });
  it('keeps one register for flexible breakpoints when admitting a pinned one', () => {
    assert.equal(breakpointFits(b(3, 0, 0), true), true);
    assert.equal(breakpointFits(b(3, 0, 1), true), false);
    assert.equal(breakpointFits(b(2, 1, 1), true), false);
    assert.equal(breakpointFits(b(1, 1, 1), true), true);
  });
  it('explains the refusal in words', () => {
    assert.match(explainEnospc(b(3, 0, 1), true), /ENOSPC.*3 pinned per-CPU \+ 0 pinned by the busiest task, plus 1 register kept for the flexible/);
    assert.match(explainEnospc(b(2, 2, 0), false), /already use all 4 debug registers/);
    assert.match(explainEnospc(b(0, 0, 0), true), /counts shown leave a register free on this CPU.*busiest CPU/);
  });
});

describe('watch form parsing', () => {
  it('recognises addresses, file:line and symbols', () => {
    assert.deepEqual(parseWatchLocation('0x7FFF1000'), { kind: 'address', address: '0x7fff1000' });
    assert.deepEqual(parseWatchLocation('src/main.c:42'), { kind: 'line', file: 'src/main.c', line: 42 });
    assert.deepEqual(parseWatchLocation('counter'), { kind: 'symbol', symbol: 'counter' });
    assert.match(parseWatchLocation('') as string, /Enter an address/);
    assert.match(parseWatchLocation('a.c:0') as string, /start at 1/);
    assert.deepEqual(parseWatchTarget('process', '1234'), { kind: 'process', pid: 1234 });
    assert.deepEqual(parseWatchTarget('all-cpus', ''), { kind: 'all-cpus' });
    assert.match(parseWatchTarget('cpu', 'x') as string, /CPU number/);
  });
});

describe('render scheduler', () => {
  it('collapses many requests into one frame', () => {
    const frames: (() => void)[] = [];
    let renders = 0;
    const s = new RenderScheduler(
      () => renders++,
      (cb) => frames.push(cb),
    );
    assert.equal(s.schedule(), true);
    assert.equal(s.schedule(), false);
    assert.equal(frames.length, 1);
    frames.shift()!();
    assert.equal(renders, 1);
    assert.equal(s.schedule(), true);
  });

  it('runs the work that waits for a pause once no frame was drawn or asked for during FRAME_PAUSE_MS', () => {
    const frames: (() => void)[] = [];
    let now = 0;
    const timers: { at: number; task: () => void }[] = [];
    const s = new RenderScheduler(
      () => {},
      (cb) => frames.push(cb),
      { now: () => now, after: (ms, task) => timers.push({ at: now + ms, task }) },
    );
    /** Moves the clock to `t`, firing the timers due by then in order. */
    const advance = (t: number) => {
      for (let due = timers.sort((a, b) => a.at - b.at)[0]; due && due.at <= t; due = timers.sort((a, b) => a.at - b.at)[0]) {
        timers.shift();
        now = due.at;
        due.task();
      }
      now = t;
    };
    let ran = 0;
    s.whenFramesPause(() => ran++);
    assert.equal(frames.length, 1, 'it asks for the frame it waits after');
    frames.shift()!();
    // A zoom: a frame every 16 ms for a second, each asked for after the last.
    let last = 0;
    for (let t = 16; t <= 1000; t += 16) {
      advance(t);
      s.schedule();
      frames.shift()!();
      last = t;
    }
    assert.equal(ran, 0, 'nothing runs while frames keep coming');
    advance(last + FRAME_PAUSE_MS - 1);
    assert.equal(ran, 0);
    advance(last + 2 * FRAME_PAUSE_MS);
    assert.equal(ran, 1, 'it runs once the frames pause');
    advance(5000);
    assert.equal(ran, 1, 'and once');
  });
});
