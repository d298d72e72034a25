// Synthetic snapshots for the browser tests, bundled into the test page (IIFE global
// `RingsideSynthetic`). It plays the extension host: columns built like the decoder's, split with
// the real columnsToBatches, streamed one batch per acknowledgement.

import { columnsToBatches } from '../../shared/batches';
import type { EventInfo, LiveAppend, RecordBatch, SnapshotStart, ThreadInfo, CoverageFact } from '../../shared/protocol';
import type { RecordColumns } from '../../native/decode/types';

export interface SyntheticRow {
  t: number;
  event: number;
  pid: number;
  tid: number;
  cpu: number;
  kind?: number;
  misc?: number;
  ip?: number;
  symbol?: string | null;
  /** Index into SMALL_STACKS. */
  stack?: number;
}

/** The sampled stacks of the small snapshot, leaf first: busy_loop ← main, and helper ← busy_loop ← main. */
export const SMALL_STACKS = { names: ['main', 'busy_loop', 'helper'], start: [0, 2, 5], frames: [1, 0, 2, 1, 0] };

export interface SyntheticSnapshot {
  start: SnapshotStart;
  batches: RecordBatch[];
}

export const SMALL_ORIGIN = 5_000_000_000_000n;
export const US = 1000;

export const SMALL_EVENTS: EventInfo[] = [
  { index: 0, name: 'sched:sched_switch', kind: 'tracepoint' },
  { index: 1, name: 'syscalls:sys_enter_read', kind: 'tracepoint' },
  { index: 2, name: 'syscalls:sys_exit_read', kind: 'tracepoint' },
  { index: 3, name: 'mem:counter:w', kind: 'breakpoint' },
  { index: 4, name: 'cpu-clock', kind: 'software' },
];

export const SMALL_THREADS: ThreadInfo[] = [
  { pid: 100, tid: 100, comm: 'worker' },
  { pid: 100, tid: 101, comm: 'worker' },
  { pid: 200, tid: 200, comm: '<img src=x onerror="window.__pwned=1">' },
];

function toColumns(rows: SyntheticRow[], origin: bigint): { columns: RecordColumns; symbols: (string | null)[] } {
  const n = rows.length;
  const c = {
    length: n,
    timeOriginNs: origin,
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
  rows.forEach((r, i) => {
    c.time[i] = r.t;
    c.kind[i] = r.kind ?? 9;
    c.misc[i] = r.misc ?? 2;
    c.event[i] = r.event;
    c.pid[i] = r.pid;
    c.tid[i] = r.tid;
    c.cpu[i] = r.cpu;
    c.ipHi[i] = 0;
    c.ipLo[i] = r.ip ?? 0;
    c.ring[i] = r.cpu;
    c.offset[i] = i * 64;
  });
  return { columns: c, symbols: rows.map((r) => r.symbol ?? null) };
}

/** The small, fully known snapshot the assertions are written against (116 records over 1 ms). */
export function smallRows(): SyntheticRow[] {
  const rows: SyntheticRow[] = [];
  for (let i = 0; i <= 10; i++) rows.push({ t: i * 100 * US, event: 0, pid: 100, tid: i % 2 === 0 ? 100 : 101, cpu: 0 });
  // Every fourth sample (i % 4 === 3) was in helper, called from busy_loop.
  for (let i = 0; i <= 100; i++)
    rows.push({
      t: i * 10 * US + 5 * US,
      event: 4,
      pid: 200,
      tid: 200,
      cpu: 1,
      ip: 0x401000 + i * 4,
      symbol: 'busy_loop',
      stack: i % 4 === 3 ? 1 : 0,
    });
  rows.push({ t: 300 * US + 50, event: 1, pid: 100, tid: 100, cpu: 0 });
  rows.push({ t: 350 * US + 50, event: 2, pid: 100, tid: 100, cpu: 0 });
  rows.push({ t: 500 * US + 1, event: 3, pid: 200, tid: 200, cpu: 1, ip: 0x401100, symbol: 'bump_counter' });
  rows.push({ t: 510 * US + 1, event: 3, pid: 200, tid: 200, cpu: 1, ip: 0x401100, symbol: 'bump_counter' });
  return rows.sort((a, b) => a.t - b.t);
}

function coverage(origin: bigint, oldest: number, newest: number, lost: string, overwritten: string): CoverageFact[] {
  return [0, 1].map((cpu) => ({
    ringId: cpu,
    label: `cpu${cpu}`,
    path: 'paused',
    dataSize: 65536,
    bytesWritten: '1048576',
    bytesOverwritten: overwritten,
    recordsRetained: 50,
    oldestTimeNs: (origin + BigInt(oldest)).toString(),
    newestTimeNs: (origin + BigInt(newest)).toString(),
    lost: cpu === 1 ? lost : '0',
  }));
}

export function snapshot(
  id: string,
  name: string,
  rows: SyntheticRow[],
  origin: bigint,
  batchRows: number,
  events = SMALL_EVENTS,
  threads = SMALL_THREADS,
): SyntheticSnapshot {
  const { columns, symbols } = toColumns(rows, origin);
  const withStacks = rows.some((r) => r.stack !== undefined);
  const stacks = withStacks ? Int32Array.from(rows, (r) => r.stack ?? -1) : undefined;
  const batches = columnsToBatches(columns, { snapshotId: id, batchRows, symbols, ...(stacks ? { stacks } : {}) });
  const times = rows.map((r) => r.t);
  const start: SnapshotStart = {
    type: 'snapshotStart',
    snapshotId: id,
    name,
    timeOriginNs: origin.toString(),
    totalRows: rows.length,
    batchCount: batches.length,
    takenAtMs: 1_700_000_000_000,
    events,
    threads,
    coverage: coverage(origin, Math.min(...times.slice(0, 1)), times[times.length - 1] ?? 0, '7', '4096'),
    ...(withStacks ? { stacks: SMALL_STACKS } : {}),
  };
  return { start, batches };
}

export function small(): SyntheticSnapshot {
  return snapshot('snap-1', 'snapshot 1', smallRows(), SMALL_ORIGIN, 50);
}

/** A later snapshot of the same recording: 2.0–2.5 ms, with its own origin. */
export function second(): SyntheticSnapshot {
  const origin = SMALL_ORIGIN + 2_000_000n;
  const rows: SyntheticRow[] = [];
  for (let i = 0; i <= 50; i++) rows.push({ t: i * 10 * US, event: 4, pid: 200, tid: 200, cpu: 1, ip: 0x401000, symbol: 'busy_loop' });
  return snapshot('snap-2', 'snapshot 2', rows, origin, 20);
}

/**
 * Another capture of the same rings over the same millisecond as the small one (same origin): 10 cpu-clock samples on
 * CPU 0, at 50, 150, … 950 µs. On one shared axis its records would sit between the small capture's.
 */
export function overlapping(): SyntheticSnapshot {
  const rows: SyntheticRow[] = [];
  for (let i = 0; i < 10; i++) rows.push({ t: 50 * US + i * 100 * US, event: 4, pid: 200, tid: 200, cpu: 0, ip: 0x401000, symbol: 'busy_loop' });
  return snapshot('snap-o', 'overlapping capture', rows, SMALL_ORIGIN, 20);
}

/**
 * A capture with other events than the small one's: 20 cpu-clock samples and 5 page-faults on CPU 0 over 200 µs, 3 ms
 * after the small capture's origin. It also announces sched:sched_switch, which recorded nothing in it.
 */
export function otherEvents(): SyntheticSnapshot {
  const events: EventInfo[] = [
    { index: 0, name: 'cpu-clock', kind: 'software' },
    { index: 1, name: 'page-faults', kind: 'software' },
    { index: 2, name: 'sched:sched_switch', kind: 'tracepoint' },
  ];
  const rows: SyntheticRow[] = [];
  for (let i = 0; i < 20; i++) rows.push({ t: i * 10 * US, event: 0, pid: 200, tid: 200, cpu: 0, ip: 0x401000, symbol: 'busy_loop' });
  for (let i = 0; i < 5; i++) rows.push({ t: i * 40 * US + 5 * US, event: 1, pid: 200, tid: 200, cpu: 0, ip: 0x401010 });
  rows.sort((a, b) => a.t - b.t);
  return snapshot('snap-e', 'other events', rows, SMALL_ORIGIN + 3_000_000n, 10, events);
}

/** Where the perf.data capture's timed records start, perf clock ns (7000 s after boot). */
export const PERFDATA_FIRST_NS = 7_000_000_000_000;

/**
 * A capture read from a perf.data file as the decoder gives it: perf's synthesized side-band records (4 MMAP2, 1 COMM of
 * processes that already ran, pid -1 or their own, with time 0) first, then 50 cpu-clock samples 20 µs apart from 7000 s.
 * The time origin is 0 (the smallest time), so the samples' relative times are their perf clock.
 */
export function perfData(): SyntheticSnapshot {
  const rows: SyntheticRow[] = [];
  for (let i = 0; i < 4; i++) rows.push({ t: 0, event: 4, pid: -1, tid: -1, cpu: 0, kind: 10, misc: 0 });
  rows.push({ t: 0, event: 4, pid: 300, tid: 300, cpu: 0, kind: 3, misc: 0 });
  for (let i = 0; i < 50; i++) rows.push({ t: PERFDATA_FIRST_NS + i * 20 * US, event: 4, pid: 300, tid: 300, cpu: i % 2, ip: 0x401000 });
  const threads = [{ pid: 300, tid: 300, comm: 'pd_work' }];
  return snapshot('pd', 'pd_work.data', rows, 0n, 25, SMALL_EVENTS, threads);
}

/**
 * A ring that lost and overwrote records: cpu-clock samples on CPU 0 every 10 µs from 0 to 100 µs but none at 60 and 70,
 * a LOST record of 12 records at 75 µs (its ring's previous record at 50 µs), and 4 KiB overwritten before the oldest
 * sample kept (0 µs); CPU 1 lost and overwrote nothing.
 */
export function lossy(): SyntheticSnapshot {
  const origin = SMALL_ORIGIN + 10_000_000n;
  const rows: SyntheticRow[] = [];
  for (let i = 0; i <= 10; i++) if (i !== 6 && i !== 7) rows.push({ t: i * 10 * US, event: 4, pid: 200, tid: 200, cpu: 0 });
  rows.push({ t: 75 * US, event: 4, pid: 200, tid: 200, cpu: 0, kind: 2, misc: 0 });
  for (let i = 0; i <= 10; i++) rows.push({ t: i * 10 * US + 5 * US, event: 4, pid: 200, tid: 201, cpu: 1 });
  rows.sort((a, b) => a.t - b.t);
  const threads = [
    { pid: 200, tid: 200, comm: 'app' },
    { pid: 200, tid: 201, comm: 'app' },
  ];
  const snap = snapshot('lossy', 'lossy snapshot', rows, origin, 100, SMALL_EVENTS, threads);
  const lostRow = rows.findIndex((r) => r.kind === 2);
  const ring = (cpu: number, overwritten: string): CoverageFact => ({
    ringId: cpu,
    label: `cpu${cpu}`,
    path: 'paused',
    dataSize: 65536,
    bytesWritten: String(65536 + Number(overwritten)),
    bytesOverwritten: overwritten,
    recordsRetained: 1024,
    oldestTimeNs: (origin + BigInt(cpu * 5 * US)).toString(),
    newestTimeNs: (origin + BigInt(100 * US + cpu * 5 * US)).toString(),
    lost: cpu === 0 ? '12' : '0',
  });
  return {
    start: {
      ...snap.start,
      coverage: [ring(0, '4096'), ring(1, '0')],
      losses: [{ row: lostRow, kind: 'LOST', lost: '12', ring: 'cpu0', sinceNs: (origin + BigInt(50 * US)).toString() }],
    },
    batches: snap.batches,
  };
}

/** n samples over one second on two CPUs and four threads. */
export function big(n: number): SyntheticSnapshot {
  const origin = 9_000_000_000_000n;
  const { columns } = toColumns([], origin);
  const c = {
    ...columns,
    length: n,
    time: new Float64Array(n),
    kind: new Uint8Array(n).fill(9),
    misc: new Uint16Array(n).fill(2),
    event: new Uint16Array(n).fill(4),
    pid: new Int32Array(n),
    tid: new Int32Array(n),
    cpu: new Int32Array(n),
    ipHi: new Uint32Array(n),
    ipLo: new Uint32Array(n),
    ring: new Uint16Array(n),
    offset: new Uint32Array(n),
  };
  for (let i = 0; i < n; i++) {
    c.time[i] = Math.floor((i * 1e9) / n);
    c.cpu[i] = i & 1;
    c.tid[i] = 300 + (i % 4);
    c.pid[i] = 300;
    c.ipLo[i] = 0x401000 + (i % 64);
  }
  const batches = columnsToBatches(c, { snapshotId: 'big', batchRows: 65536 });
  const start: SnapshotStart = {
    type: 'snapshotStart',
    snapshotId: 'big',
    name: `${n} records`,
    timeOriginNs: origin.toString(),
    totalRows: n,
    batchCount: batches.length,
    takenAtMs: 1_700_000_000_000,
    events: SMALL_EVENTS,
    threads: [0, 1, 2, 3].map((i) => ({ pid: 300, tid: 300 + i, comm: `load-${i}` })),
    coverage: coverage(origin, 0, 1e9, '0', '0'),
  };
  return { start, batches };
}

/**
 * big(n) with two of its rows (at the middle) from a thread of another process: grouped by thread, that process's
 * lanes hold two records, drawn zoomed in (ticks and spans) while every other lane is drawn as density.
 */
export function bigWithStray(n: number): SyntheticSnapshot {
  const { start, batches } = big(n);
  for (const row of [n >> 1, (n >> 1) + 1]) {
    const batch = batches.find((b) => row >= b.firstRow && row < b.firstRow + b.rowCount)!;
    new Int32Array(batch.columns.tid)[row - batch.firstRow] = 777;
    new Int32Array(batch.columns.pid)[row - batch.firstRow] = 777;
  }
  return { start: { ...start, threads: [...start.threads, { pid: 777, tid: 777, comm: 'stray' }] }, batches };
}

/**
 * n cpu-clock samples over 1 s with callchains: row i sampled stack i % 16, which is `main` calling `f<k>` (k = i % 16),
 * so any time range's counts are known exactly.
 */
export function bigStacks(n: number): SyntheticSnapshot {
  const { start, batches } = big(n);
  const stackIndex = new Int32Array(n);
  for (let i = 0; i < n; i++) stackIndex[i] = i % 16;
  const names = ['main', ...Array.from({ length: 16 }, (_, k) => `f${k}`)];
  const stacks = { names, start: Array.from({ length: 17 }, (_, k) => 2 * k), frames: Array.from({ length: 32 }, (_, f) => (f % 2 === 0 ? 1 + f / 2 : 0)) };
  return {
    start: { ...start, snapshotId: 'stacks', stacks },
    batches: batches.map((b) => ({ ...b, snapshotId: 'stacks', stackIndex: stackIndex.slice(b.firstRow, b.firstRow + b.rowCount).buffer })),
  };
}

/**
 * The call paths of a small interpreter, leaf first: main; parse ← main; lex ← parse ← main; eval ← main; add ← eval ← main.
 * Every function has an entry line in interp.c (line 10 × its index + 1).
 */
export const CALL_PATH_STACKS = {
  names: ['main', 'parse', 'lex', 'eval', 'add'],
  start: [0, 1, 3, 6, 8, 11],
  frames: [0, 1, 0, 2, 1, 0, 3, 0, 4, 3, 0],
  locations: [0, 1, 2, 3, 4].map((n) => ({ file: '/src/interp.c', line: 10 * n + 1 })),
  leafLocation: [-1, -1, -1, -1, -1],
  nameLocation: [0, 1, 2, 3, 4],
  // parse and lex are in a library of their own (what Collapse library folds into one frame).
  libraries: ['/usr/lib/libparse.so'],
  nameLibrary: [-1, 0, 0, -1, -1],
};

/** The stack (index into CALL_PATH_STACKS) of each sample of thread 300, one every 10 µs from 1 ms (see callPaths). */
export const CALL_PATH_SEQUENCE = [1, 1, 2, 2, 2, 1, 3, 4, 4, 3, 0, 2];

/**
 * Thread 300 of process `interp` sampled (cpu-clock, with callchains) every 10 µs from 1 ms along CALL_PATH_SEQUENCE,
 * with a sched_switch of the same thread (no callchain) between its 4th and 5th samples, and thread 301 of the same
 * process with two sched_switch records only.
 */
export function callPaths(): SyntheticSnapshot {
  const rows: SyntheticRow[] = CALL_PATH_SEQUENCE.map((stack, i) => ({ t: 1000 * US + i * 10 * US, event: 4, pid: 300, tid: 300, cpu: 0, stack }));
  rows.push({ t: 1000 * US + 35 * US, event: 0, pid: 300, tid: 300, cpu: 0 });
  rows.push({ t: 1000 * US + 20 * US, event: 0, pid: 300, tid: 301, cpu: 1 });
  rows.push({ t: 1000 * US + 90 * US, event: 0, pid: 300, tid: 301, cpu: 1 });
  rows.sort((a, b) => a.t - b.t);
  const threads = [
    { pid: 300, tid: 300, comm: 'interp' },
    { pid: 300, tid: 301, comm: 'interp' },
  ];
  const { start, batches } = snapshot('calls', 'call paths', rows, SMALL_ORIGIN, 8, SMALL_EVENTS, threads);
  return { start: { ...start, stacks: CALL_PATH_STACKS }, batches };
}

type Send = (message: unknown) => void;

/**
 * Stream snapshots like the host does: snapshotStart, then one batch per batchAck. Resolves when
 * the last batch has been acknowledged.
 */
export function stream(
  send: Send,
  snapshots: SyntheticSnapshot[],
  onPost: (hook: (m: { type: string; snapshotId?: string; batchIndex?: number }) => void) => void,
): Promise<number> {
  return new Promise((resolve) => {
    let s = 0;
    let acks = 0;
    const begin = () => {
      if (s >= snapshots.length) {
        resolve(acks);
        return;
      }
      send(snapshots[s].start);
      send(snapshots[s].batches[0]);
    };
    onPost((m) => {
      if (m.type !== 'batchAck' || s >= snapshots.length || m.snapshotId !== snapshots[s].start.snapshotId) return;
      acks++;
      const next = (m.batchIndex ?? 0) + 1;
      if (next < snapshots[s].batches.length) send(snapshots[s].batches[next]);
      else {
        s++;
        begin();
      }
    });
    begin();
  });
}

/**
 * The small capture recorded again with twice the work in helper: the same rows plus, for each of its 25 samples in
 * helper (stack 1), another at 2.5 µs after it. helper's samples double (25 → 50), busy_loop's own stay 76.
 */
export function smallDoubled(): SyntheticSnapshot {
  const rows = smallRows();
  const extra = rows.filter((r) => r.stack === 1).map((r) => ({ ...r, t: r.t + 2.5 * US }));
  return snapshot(
    'snap-3',
    'helper doubled',
    [...rows, ...extra].sort((a, b) => a.t - b.t),
    SMALL_ORIGIN + 10_000_000n,
    50,
  );
}

/**
 * A live append as the panel's host sends it (extension/panel/live-follow.ts): `count` cpu-clock samples of thread 100
 * on cpu 0, one every `step` ns from `from` (ns after SMALL_ORIGIN, which is also the part's own origin offset: each
 * read has its own), numbered on from `firstRow`, keeping the window from `keepFrom` (ns after SMALL_ORIGIN).
 */
export function liveAppend(seq: number, firstRow: number, from: number, count: number, step: number, keepFrom: number): LiveAppend {
  const rows: SyntheticRow[] = Array.from({ length: count }, (_, i) => ({
    t: i * step,
    event: 4,
    pid: 100,
    tid: 100,
    cpu: 0,
    ip: 0x401000,
    symbol: 'busy_loop',
  }));
  const part = snapshot('live-1', 'worker · live', rows, SMALL_ORIGIN + BigInt(from), Math.max(1, count));
  return {
    type: 'liveAppend',
    snapshotId: 'live-1',
    seq,
    part: part.start,
    batch: { ...part.batches[0], firstRow },
    keepFromNs: (SMALL_ORIGIN + BigInt(keepFrom)).toString(),
  };
}

/** Functions `wideCalls` has main call, f0 … f(WIDE_CALLS − 1). */
export const WIDE_CALLS = 300;

/**
 * A call tree too tall to show at once: thread 300 sampled every 10 µs in main → f<k>, f<k> sampled k + 1 times (so every
 * row of the tree has a count of its own and the order by total is known: main, then f299 … f0).
 */
export function wideCalls(): SyntheticSnapshot {
  const rows: SyntheticRow[] = [];
  for (let k = 0; k < WIDE_CALLS; k++) for (let j = 0; j <= k; j++) rows.push({ t: rows.length * 10 * US, event: 4, pid: 300, tid: 300, cpu: 0, stack: k });
  const names = ['main', ...Array.from({ length: WIDE_CALLS }, (_, k) => `f${k}`)];
  const stacks = {
    names,
    start: Array.from({ length: WIDE_CALLS + 1 }, (_, k) => 2 * k),
    frames: Array.from({ length: 2 * WIDE_CALLS }, (_, f) => (f % 2 === 0 ? 1 + f / 2 : 0)),
  };
  const threads = [{ pid: 300, tid: 300, comm: 'wide' }];
  const { start, batches } = snapshot('wide', 'wide calls', rows, SMALL_ORIGIN, 4096, SMALL_EVENTS, threads);
  return { start: { ...start, stacks }, batches };
}
