// `node out/bench/stack-chart.js [--runs N]`: the timeline's first paint, zoom and pan frames in headless Chromium
// (render.ts, the real bundle fed through App.receive) for three synthetic captures of a million records, in the same run
// so they are read as ratios of each other:
//   one lane    — one thread's 1M samples without callchains (the shape of the main bench's render case);
//   stack chart — the same thread's samples with 20-frame callchains (the thread lane is a stack chart);
//   54 lanes    — 1M records over 4 busy threads and 50 threads of 1–9 records each (a real capture's lane_rows), in 2 processes.
// Targets (issue 37): stack chart first paint ≤ 150 ms and zoom/pan frame ≤ 16 ms; 54 lanes first paint ≤ 100 ms.

import { DEFAULT_BATCH_ROWS } from '../shared/columns';
import type { SnapshotStart, ThreadInfo, WireStacks } from '../shared/protocol';
import type { RecordColumns } from '../native/decode/types';
import { runRender, type RenderResult } from './render';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';

const N = 1_000_000;
const DEPTH = 20;
/** Callees a function below its phase's path may call at each depth. */
const FANOUT = 2;
/** RINGSIDE_BENCH_DIST: another build's dist/webview (to set two builds side by side in alternating runs). */
const DIST_WEBVIEW = process.env.RINGSIDE_BENCH_DIST ?? join(__dirname, '..', '..', 'dist', 'webview');

/** A small deterministic PRNG (mulberry32), so every run draws the same capture. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Columns of n SAMPLE records 1 µs apart on CPU 0, of the threads `tidOf(i)` gives, in the processes `pidOf(tid)` gives. */
function columnsOf(n: number, tidOf: (i: number) => number, pidOf: (tid: number) => number = (tid) => tid): RecordColumns {
  const c = {
    length: n,
    timeOriginNs: 1_000_000_000_000n,
    time: new Float64Array(n),
    kind: new Uint8Array(n).fill(9),
    misc: new Uint16Array(n).fill(2),
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
    c.time[i] = i * 1000;
    const tid = tidOf(i);
    c.pid[i] = pidOf(tid);
    c.tid[i] = tid;
    c.offset[i] = i * 64;
  }
  return c;
}

function startOf(id: string, columns: RecordColumns, threads: ThreadInfo[], stacks?: WireStacks): SnapshotStart {
  return {
    type: 'snapshotStart',
    snapshotId: id,
    name: id,
    timeOriginNs: columns.timeOriginNs.toString(),
    totalRows: columns.length,
    batchCount: Math.ceil(columns.length / DEFAULT_BATCH_ROWS),
    takenAtMs: Date.now(),
    events: [{ index: 0, name: 'cpu-clock', kind: 'software' }],
    threads,
    coverage: [],
    ...(stacks ? { stacks } : {}),
  };
}

/**
 * A program's samples as a walk over its call tree, 20 frames deep: it runs in one of 16 phases (each a fixed path
 * down to depth 12, changed every ~2,000 samples on average), and below that each sample keeps the previous one's path
 * down to some depth (most often a deep one: leaves change fastest) and picks new callees below it among 2 per depth.
 * Returns the distinct stacks (leaf first) and each sample's stack id.
 */
function walkStacks(n: number): { stacks: WireStacks; stackIndex: Int32Array } {
  const next = random(37);
  const PHASES = 16;
  const PHASE_DEPTH = 12;
  const names: string[] = ['main'];
  for (let d = 1; d < DEPTH; d++) for (let k = 0; k < (d < PHASE_DEPTH ? PHASES : FANOUT); k++) names.push(`fn_${d}_${k}`);
  const nameOf = (d: number, k: number) =>
    d === 0 ? 0 : d < PHASE_DEPTH ? 1 + (d - 1) * PHASES + k : 1 + (PHASE_DEPTH - 1) * PHASES + (d - PHASE_DEPTH) * FANOUT + k;
  const path = new Int32Array(DEPTH); // the callee chosen per depth (root fixed)
  const ids = new Map<string, number>();
  const start: number[] = [0];
  const frames: number[] = [];
  const stackIndex = new Int32Array(n);
  let current = -1;
  for (let i = 0; i < n; i++) {
    if (current < 0 || next() < 0.0005) {
      const phase = Math.floor(next() * PHASES);
      for (let d = 1; d < PHASE_DEPTH; d++) path[d] = (phase + d) % PHASES;
      current = -1;
    }
    if (current < 0 || next() < 0.5) {
      // Keep the path above a depth drawn towards the leaves (geometric from the leaf), redraw the rest.
      let keep = DEPTH - 1;
      while (keep > PHASE_DEPTH && next() < 0.55) keep--;
      for (let d = keep; d < DEPTH; d++) path[d] = Math.floor(next() * FANOUT);
      const key = path.join(',');
      let id = ids.get(key);
      if (id === undefined) {
        id = start.length - 1;
        ids.set(key, id);
        for (let d = DEPTH - 1; d >= 0; d--) frames.push(nameOf(d, path[d]));
        start.push(frames.length);
      }
      current = id;
    }
    stackIndex[i] = current;
  }
  return { stacks: { names, start, frames }, stackIndex };
}

function line(label: string, r: RenderResult, base?: RenderResult): string {
  const ratio = base ? ` (${(r.firstPaintMs / base.firstPaintMs).toFixed(2)}× one lane)` : '';
  return (
    `${label.padEnd(12)} first paint ${r.firstPaintMs.toFixed(1)} ms${ratio} (receive ${r.receiveMs.toFixed(1)} ms)` +
    ` · first render ${r.firstRenderMs.toFixed(1)} ms` +
    ` · zoom frame ${r.zoomFrameMs.toFixed(1)} ms (p95 ${r.zoomFrameP95Ms.toFixed(1)}, max ${r.zoomFrameMaxMs.toFixed(1)})` +
    ` · pan frame ${r.panFrameMs.toFixed(1)} ms (p95 ${r.panFrameP95Ms.toFixed(1)}, max ${r.panFrameMaxMs.toFixed(1)}) · lanes ${r.laneRows.length}` +
    ` · load ${loadavg()[0].toFixed(2)}` +
    (r.cpu
      ? `\n${''.padEnd(12)} main thread CPU: first paint ${r.cpu.firstPaintMs.toFixed(1)} ms · zoom frame ${r.cpu.zoomFrameMs.toFixed(1)} ms` +
        ` (p95 ${r.cpu.zoomFrameP95Ms.toFixed(1)}, max ${r.cpu.zoomFrameMaxMs.toFixed(1)}) · pan frame ${r.cpu.panFrameMs.toFixed(1)} ms` +
        ` (p95 ${r.cpu.panFrameP95Ms.toFixed(1)}, max ${r.cpu.panFrameMaxMs.toFixed(1)})` +
        `\n${''.padEnd(12)} whole frame task (callbacks, style, layout, paint, commit): zoom ${r.cpu.zoomTaskMs.toFixed(1)} ms` +
        ` (max ${r.cpu.zoomTaskMaxMs.toFixed(1)}) · pan ${r.cpu.panTaskMs.toFixed(1)} ms (max ${r.cpu.panTaskMaxMs.toFixed(1)})`
      : '')
  );
}

async function main(): Promise<void> {
  const runsAt = process.argv.indexOf('--runs');
  const runs = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 5;
  // --only one-lane|stack-chart|many-lanes: that capture alone (to profile or iterate on one; no ratios then).
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt > 0 ? process.argv[onlyAt + 1] : undefined;
  const wanted = (id: string) => only === undefined || only === id;
  const oneThread = columnsOf(N, () => 1000);
  const thread: ThreadInfo[] = [{ pid: 1000, tid: 1000, comm: 'walker' }];
  const { stacks, stackIndex } = walkStacks(N);
  // 50 threads of 1–9 records at spread-out rows; the rest taken in turns by 4 busy threads, 1,000 records at a time.
  const small = new Map<number, number>();
  for (let t = 0; t < 50; t++) for (let k = 0; k <= t % 9; k++) small.set(((t * 9 + k) * 2003) % N, 3000 + t);
  // Two processes: the busy threads' (pid 2000) and the small ones' (pid 3000); 54 thread lanes under 2 headers.
  const pidOf = (tid: number) => (tid < 3000 ? 2000 : 3000);
  const manyLanes = columnsOf(N, (i) => small.get(i) ?? 2000 + (Math.floor(i / 1000) % 4), pidOf);
  const manyThreads: ThreadInfo[] = [...new Set(manyLanes.tid)].map((tid) => ({ pid: pidOf(tid), tid, comm: tid < 3000 ? 'busy' : 'small' }));
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (${cpus().length} CPUs)`,
  );
  console.log(`${N.toLocaleString('en-US')} records each; stack chart: ${stacks.start.length - 1} distinct ${DEPTH}-frame stacks; ${runs} runs, median`);
  const one = wanted('one-lane')
    ? await runRender(DIST_WEBVIEW, oneThread, startOf('one-lane', oneThread, thread), runs, 1, undefined, undefined, true)
    : undefined;
  if (one) console.log(line('one lane', one));
  if (wanted('stack-chart')) {
    const chart = await runRender(DIST_WEBVIEW, oneThread, startOf('stack-chart', oneThread, thread, stacks), runs, 1, undefined, stackIndex, true);
    console.log(line('stack chart', chart, one));
  }
  if (wanted('many-lanes')) {
    const many = await runRender(DIST_WEBVIEW, manyLanes, startOf('many-lanes', manyLanes, manyThreads), runs, 1, undefined, undefined, true);
    console.log(line('54 lanes', many, one));
    const small1to9 = many.laneRows.filter((rows) => rows >= 1 && rows <= 9).length;
    console.log(`54 lanes: ${many.laneRows.length} lanes laid out, ${small1to9} of them with 1–9 rows`);
  }
  console.log(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
