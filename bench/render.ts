// render_first_paint and render_zoom_frame: the real timeline bundle (dist/webview/timeline.js)
// in headless Debian Chromium, fed decoded records through App.receive exactly as the host's
// messages arrive. First paint: from handing the page the snapshotStart and every batch to the end
// of the first timeline render (the rAF frame that draws them). Zoom frame: Timeline.lastRenderMs
// of the frame each zoom step schedules (the renderer's own timing hook; compositing excluded).

import { createServer, type Server } from 'node:http';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { COLUMN_NAMES, DEFAULT_BATCH_ROWS } from '../shared/columns';
import type { SnapshotStart } from '../shared/protocol';
import type { RecordColumns } from '../native/decode/types';
import { BenchUnavailableError, median } from './stats';
import { CHROMIUM, CHROMIUM_FLAGS } from './tools';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Ringside bench</title>
<link rel="stylesheet" href="/timeline.css">
<style>:root { --vscode-foreground: #ccc; --vscode-editor-background: #1e1e1e; --vscode-charts-blue: #3794ff;
  --vscode-charts-green: #89d185; --vscode-charts-yellow: #cca700; --vscode-charts-red: #f14c4c; --vscode-charts-orange: #d18616;
  --vscode-charts-purple: #b180d7; --vscode-focusBorder: #007fd4; --vscode-descriptionForeground: #999;
  --vscode-list-hoverBackground: #2a2d2e; --vscode-font-family: sans-serif; --vscode-font-size: 13px; }</style>
</head><body><div id="ringside-root"></div><script src="/timeline.js"></script></body></html>`;

export interface RenderResult {
  readonly rows: number;
  readonly firstPaintMs: number;
  /** Part of first paint spent in App.receive (validation + store append) before the frame. */
  readonly receiveMs: number;
  /** Lanes the first frame laid out, largest first: a lane of a few records (another thread's) is drawn zoomed in. */
  readonly laneRows: readonly number[];
  readonly firstRenderMs: number;
  readonly zoomFrameMs: number;
  readonly zoomFrameMaxMs: number;
  /** 95th percentile of the zoom frames of every run (a single spike of the machine's load shows in max, not here). */
  readonly zoomFrameP95Ms: number;
  /** Timeline.lastRenderMs of pan steps (a tenth of the window each) at 8× zoom. */
  readonly panFrameMs: number;
  readonly panFrameMaxMs: number;
  readonly panFrameP95Ms: number;
  /**
   * The same measures as the page's main thread's CPU time (Chromium's trace: thread time of the tasks), when asked for
   * (`threadCpu`): what the page itself spent, where wall time also counts the time the machine's other work held the
   * CPU. A frame whose wall time spikes and whose CPU time does not was the machine's, not the page's.
   */
  readonly cpu?: {
    readonly firstPaintMs: number;
    readonly zoomFrameMs: number;
    readonly zoomFrameP95Ms: number;
    readonly zoomFrameMaxMs: number;
    readonly panFrameMs: number;
    readonly panFrameP95Ms: number;
    readonly panFrameMaxMs: number;
    /**
     * The zoom and pan frames' whole task on the main thread (the browser's frame: the animation frame callbacks, then
     * the style, layout, paint and commit of what they changed): what the frame cost the page even when its layout is
     * not forced inside the callback (it then runs after it, in this task, and the callback's time above leaves it out).
     */
    readonly zoomTaskMs: number;
    readonly zoomTaskMaxMs: number;
    readonly panTaskMs: number;
    readonly panTaskMaxMs: number;
  };
}

interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly ts: number;
  readonly dur?: number;
  readonly tdur?: number;
  readonly tid: number;
}

/** Marks the page sets (installThreadCpuMarks, firstPaint) to find its renders and its first paint in a trace. */
const RENDER_MARK = 'ringside-bench-render ';
const PAINT_START = 'ringside-bench-paint-start';
const PAINT_END = 'ringside-bench-paint-end';

/**
 * From a trace of one run: the main thread's CPU time (ms) of its first paint (every task from its start mark to its end
 * mark) and of render number `n` for each of `renders` (the animation frame task that ran it, and the top-level task that
 * holds that one: the browser's whole frame).
 */
function threadCpu(trace: Buffer, renders: readonly number[]): { paint: number; frames: number[]; tasks: number[] } {
  const parsed = JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const marks = new Map<string, TraceEvent>();
  for (const e of events) if (e.name.startsWith(RENDER_MARK) || e.name === PAINT_START || e.name === PAINT_END) marks.set(e.name, e);
  const start = marks.get(PAINT_START);
  const end = marks.get(PAINT_END);
  if (!start || !end) throw new Error('the trace lacks the first paint marks');
  const tasks = events
    .filter(
      (e) => e.tid === start.tid && e.ph === 'X' && e.dur !== undefined && e.tdur !== undefined && (e.name === 'RunTask' || e.name === 'FireAnimationFrame'),
    )
    .sort((a, b) => a.ts - b.ts);
  const covering = (name: string, at: number) => tasks.find((t) => t.name === name && t.ts <= at && at <= t.ts + t.dur!);
  // Top-level tasks (not inside another one) from the one the first paint started in up to its end.
  let paint = 0;
  let reach = -Infinity;
  for (const t of tasks) {
    if (t.name !== 'RunTask' || t.ts < reach) continue;
    reach = t.ts + t.dur!;
    if (reach >= start.ts && t.ts <= end.ts) paint += t.tdur!;
  }
  const frames: number[] = [];
  const frameTasks: number[] = [];
  for (const n of renders) {
    const mark = marks.get(`${RENDER_MARK}${n}`);
    const frame = mark && covering('FireAnimationFrame', mark.ts);
    if (!frame) throw new Error(`the trace lacks render ${n}`);
    frames.push(frame.tdur! / 1000);
    // The outermost task around it (RunTask nests when the browser runs a task inside another).
    const task = tasks.find((t) => t.name === 'RunTask' && t.ts <= frame.ts && frame.ts + frame.dur! <= t.ts + t.dur!);
    frameTasks.push((task ?? frame).tdur! / 1000);
  }
  return { paint: paint / 1000, frames, tasks: frameTasks };
}

/** Each render of the page's timeline sets a mark (its number), so a trace tells which animation frame ran it. */
async function installThreadCpuMarks(page: Page): Promise<void> {
  await page.evaluate((prefix) => {
    const timeline = (window as unknown as { ringside: { timeline: { renderCount: number; render(): void } } }).ringside.timeline;
    const render = timeline.render.bind(timeline);
    timeline.render = () => {
      performance.mark(`${prefix}${timeline.renderCount}`);
      render();
    };
  }, RENDER_MARK);
}

/** The p-th percentile (nearest rank) of `values`. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function serve(distDir: string, columns: RecordColumns, start: SnapshotStart, stackIndex?: Int32Array): Promise<Server> {
  const parts = COLUMN_NAMES.map((name) => {
    const column = columns[name];
    return Buffer.from(column.buffer, column.byteOffset, column.byteLength);
  });
  // The stack id per row (start.stacks), sent with each batch as the host does, after the columns.
  if (stackIndex) parts.push(Buffer.from(stackIndex.buffer, stackIndex.byteOffset, stackIndex.byteLength));
  const body = Buffer.concat(parts);
  const meta = JSON.stringify({ start, rows: columns.length, batchRows: DEFAULT_BATCH_ROWS, columns: COLUMN_NAMES, stacks: stackIndex !== undefined });
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html', PAGE],
    '/timeline.js': ['text/javascript', readFileSync(join(distDir, 'timeline.js'))],
    '/timeline.css': ['text/css', readFileSync(join(distDir, 'timeline.css'))],
    '/meta.json': ['application/json', meta],
    '/columns.bin': ['application/octet-stream', body],
  };
  const server = createServer((request, response) => {
    const file = files[request.url ?? ''];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** Loads the page and builds the messages in it (untimed): snapshotStart and exact-length batches. */
async function prepare(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { ringside?: unknown }).ringside !== undefined);
  await page.evaluate(async () => {
    const meta = (await (await fetch('/meta.json')).json()) as {
      start: { totalRows: number; batchCount: number } & Record<string, unknown>;
      rows: number;
      batchRows: number;
      columns: string[];
      stacks: boolean;
    };
    const body = await (await fetch('/columns.bin')).arrayBuffer();
    const sizes: Record<string, number> = { time: 8, kind: 1, misc: 2, event: 2, pid: 4, tid: 4, cpu: 4, ipHi: 4, ipLo: 4, ring: 2, offset: 4 };
    const rows = meta.rows;
    const offsets: Record<string, number> = {};
    let at = 0;
    for (const name of meta.columns) {
      offsets[name] = at;
      at += rows * sizes[name];
    }
    const batchCount = meta.start.batchCount;
    const batches: unknown[] = [];
    for (let b = 0; b < batchCount; b++) {
      const first = b * meta.batchRows;
      const last = Math.min(rows, first + meta.batchRows);
      const columns: Record<string, ArrayBuffer> = {};
      for (const name of meta.columns) columns[name] = body.slice(offsets[name] + first * sizes[name], offsets[name] + last * sizes[name]);
      const stackIndex = meta.stacks ? { stackIndex: body.slice(at + first * 4, at + last * 4) } : {};
      batches.push({
        type: 'batch',
        snapshotId: meta.start.snapshotId,
        batchIndex: b,
        batchCount,
        firstRow: first,
        rowCount: last - first,
        columns,
        ...stackIndex,
      });
    }
    (window as unknown as { benchMessages: unknown[] }).benchMessages = [meta.start, ...batches];
  });
}

interface PaintTiming {
  firstPaintMs: number;
  receiveMs: number;
  renderMs: number;
  rows: number;
  rejected: number;
  laneRows: number[];
}

async function firstPaint(page: Page): Promise<PaintTiming> {
  return page.evaluate(
    async (marks) => {
      type Timeline = { renderCount: number; lastRenderMs: number; lanes: { rows: { length: number } }[] };
      const w = window as unknown as {
        ringside: { receive(m: unknown): void; timeline: Timeline; store: { length: number }; rejected: number };
        benchMessages: unknown[];
      };
      const app = w.ringside;
      const before = app.timeline.renderCount;
      performance.mark(marks[0]);
      const started = performance.now();
      for (const message of w.benchMessages) app.receive(message);
      const received = performance.now();
      await new Promise<void>((resolve) => {
        const check = () => (app.timeline.renderCount > before ? resolve() : requestAnimationFrame(check));
        requestAnimationFrame(check);
      });
      const firstPaintMs = performance.now() - started;
      performance.mark(marks[1]);
      return {
        firstPaintMs,
        receiveMs: received - started,
        renderMs: app.timeline.lastRenderMs,
        rows: app.store.length,
        rejected: app.rejected,
        laneRows: app.timeline.lanes.map((lane) => lane.rows.length).sort((a, b) => b - a),
      };
    },
    [PAINT_START, PAINT_END],
  );
}

/** Each measured frame's time (Timeline.lastRenderMs) and the number of the render it timed. */
interface Frames {
  readonly ms: number[];
  readonly render: number[];
}

async function zoomFrames(page: Page, steps: number): Promise<Frames> {
  return page.evaluate(async (count) => {
    type Timeline = { renderCount: number; lastRenderMs: number; zoomBy(factor: number, center?: number): void; window(): [number, number] };
    const app = (window as unknown as { ringside: { timeline: Timeline } }).ringside;
    const frames: number[] = [];
    const render: number[] = [];
    const [a, b] = app.timeline.window();
    const center = a + (b - a) * 0.37;
    for (let i = 0; i < count; i++) {
      const before = app.timeline.renderCount;
      app.timeline.zoomBy(i < count / 2 ? 2 : 0.5, center);
      await new Promise<void>((resolve) => {
        const check = () => (app.timeline.renderCount > before ? resolve() : requestAnimationFrame(check));
        requestAnimationFrame(check);
      });
      frames.push(app.timeline.lastRenderMs);
      render.push(app.timeline.renderCount - 1);
    }
    return { ms: frames, render };
  }, steps);
}

/** Pans a zoomed-in window step by step (a tenth of it each), timing each frame the step schedules. */
async function panFrames(page: Page, steps: number): Promise<Frames> {
  return page.evaluate(async (count) => {
    type Timeline = { renderCount: number; lastRenderMs: number; window(): [number, number]; setWindow(a: number, b: number): void };
    const app = (window as unknown as { ringside: { timeline: Timeline } }).ringside;
    const frame = async (change: () => void): Promise<[number, number]> => {
      const before = app.timeline.renderCount;
      change();
      await new Promise<void>((resolve) => {
        const check = () => (app.timeline.renderCount > before ? resolve() : requestAnimationFrame(check));
        requestAnimationFrame(check);
      });
      return [app.timeline.lastRenderMs, app.timeline.renderCount - 1];
    };
    const [a, b] = app.timeline.window();
    const width = (b - a) / 8;
    await frame(() => app.timeline.setWindow(a + (b - a) * 0.3, a + (b - a) * 0.3 + width));
    const frames: number[] = [];
    const render: number[] = [];
    for (let i = 0; i < count; i++) {
      const [x, y] = app.timeline.window();
      const [ms, n] = await frame(() => app.timeline.setWindow(x + width / 10, y + width / 10));
      frames.push(ms);
      render.push(n);
    }
    await frame(() => app.timeline.setWindow(a, b));
    return { ms: frames, render };
  }, steps);
}

/** `stackIndex`: a stack id per row into start.stacks, sent with the batches (a capture with callchains). */
export async function runRender(
  distDir: string,
  columns: RecordColumns,
  start: SnapshotStart,
  runs: number,
  warmup: number,
  screenshot?: string,
  stackIndex?: Int32Array,
  /** Also time each run's main thread CPU (a Chromium trace of every run; RenderResult.cpu). */
  threadCpuToo = false,
): Promise<RenderResult> {
  if (!existsSync(join(distDir, 'timeline.js'))) throw new BenchUnavailableError(`${distDir}/timeline.js is missing: run npm run build`);
  const server = await serve(distDir, columns, start, stackIndex);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
  } catch (error) {
    server.close();
    throw new BenchUnavailableError(`Chromium did not start: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const paints: PaintTiming[] = [];
    const zooms: number[] = [];
    const pans: number[] = [];
    const cpuPaints: number[] = [];
    const cpuZooms: number[] = [];
    const cpuPans: number[] = [];
    const taskZooms: number[] = [];
    const taskPans: number[] = [];
    // RINGSIDE_BENCH_CPUPROFILE=PREFIX: Chromium's CPU profiles (CDP Profiler) of the last run's first paint and of its zoom
    // and pan frames, written to PREFIX.<snapshot id>.paint.cpuprofile and .frames.cpuprofile (the format DevTools
    // opens), to see where a frame's time goes. That run is timed with the profiler on: read its figures as a profile's.
    const profilePrefix = process.env.RINGSIDE_BENCH_CPUPROFILE;
    let profiler: CDPSession | undefined;
    const profiled = async <T>(part: string, measure: () => Promise<T>): Promise<T> => {
      if (!profiler || !profilePrefix) return measure();
      await profiler.send('Profiler.start');
      const result = await measure();
      const { profile } = await profiler.send('Profiler.stop');
      writeFileSync(`${profilePrefix}.${start.snapshotId}.${part}.cpuprofile`, JSON.stringify(profile));
      return result;
    };
    for (let i = -warmup; i < runs; i++) {
      await prepare(page, url);
      if (profilePrefix && i === runs - 1) {
        profiler = await page.context().newCDPSession(page);
        await profiler.send('Profiler.enable');
        await profiler.send('Profiler.setSamplingInterval', { interval: 100 });
      }
      // RINGSIDE_BENCH_TRACE=PREFIX: a Chromium performance trace (GC, compilation, layout, paint and the rAF frames) of
      // the last run, first paint to the last pan frame, written to PREFIX.<snapshot id>.trace.json (DevTools'
      // Performance panel opens it).
      const tracePrefix = process.env.RINGSIDE_BENCH_TRACE;
      const traced = (tracePrefix !== undefined && i === runs - 1) || (threadCpuToo && i >= 0);
      if (threadCpuToo) await installThreadCpuMarks(page);
      if (traced)
        await browser.startTracing(page, {
          ...(tracePrefix !== undefined && i === runs - 1 ? { path: `${tracePrefix}.${start.snapshotId}.trace.json` } : {}),
          // RINGSIDE_BENCH_TRACE_CATEGORIES=a,b: more trace categories (e.g. cc,blink,skia: what a frame's Commit does).
          categories: [
            'devtools.timeline',
            'disabled-by-default-devtools.timeline',
            'v8',
            'v8.execute',
            'disabled-by-default-v8.gc',
            'blink.user_timing',
            ...(process.env.RINGSIDE_BENCH_TRACE_CATEGORIES?.split(',').filter(Boolean) ?? []),
          ],
        });
      const paint = await profiled('paint', () => firstPaint(page));
      if (paint.rejected > 0) throw new Error(`the webview rejected ${paint.rejected} bench messages`);
      if (paint.rows !== columns.length) throw new Error(`the webview holds ${paint.rows} rows, sent ${columns.length}`);
      const [zoomed, pannedFrames] = await profiled('frames', async () => [await zoomFrames(page, 12), await panFrames(page, 10)] as const);
      const frames = zoomed.ms;
      const panned = pannedFrames.ms;
      const trace = traced ? await browser.stopTracing() : undefined;
      let cpuLine = '';
      if (threadCpuToo && trace && i >= 0) {
        const { paint: cpuPaint, frames: cpuFrames, tasks: cpuTasks } = threadCpu(trace, [...zoomed.render, ...pannedFrames.render]);
        cpuPaints.push(cpuPaint);
        cpuZooms.push(...cpuFrames.slice(0, zoomed.render.length));
        cpuPans.push(...cpuFrames.slice(zoomed.render.length));
        taskZooms.push(...cpuTasks.slice(0, zoomed.render.length));
        taskPans.push(...cpuTasks.slice(zoomed.render.length));
        const list = (values: readonly number[]) => values.map((v) => v.toFixed(1)).join(' ');
        cpuLine =
          ` | CPU: paint ${cpuPaint.toFixed(1)} · zoom ${list(cpuFrames.slice(0, zoomed.render.length))} · pan ${list(cpuFrames.slice(zoomed.render.length))}` +
          ` | frame task: zoom ${list(cpuTasks.slice(0, zoomed.render.length))} · pan ${list(cpuTasks.slice(zoomed.render.length))}`;
      }
      if (profiler) {
        await profiler.detach();
        profiler = undefined;
      }
      if (i < 0) continue;
      // RINGSIDE_BENCH_FRAMES=1: each run's frames in order (which step of the zoom or the pan a spike is), on stderr.
      if (process.env.RINGSIDE_BENCH_FRAMES === '1') {
        const list = (values: readonly number[]) => values.map((v) => v.toFixed(1)).join(' ');
        process.stderr.write(`${start.snapshotId} run ${i}: paint ${paint.firstPaintMs.toFixed(1)} · zoom ${list(frames)} · pan ${list(panned)}${cpuLine}\n`);
      }
      paints.push(paint);
      zooms.push(...frames);
      pans.push(...panned);
      if (screenshot && i === runs - 1) await page.screenshot({ path: screenshot });
    }
    return {
      rows: columns.length,
      firstPaintMs: median(paints.map((p) => p.firstPaintMs)),
      receiveMs: median(paints.map((p) => p.receiveMs)),
      laneRows: paints[0].laneRows,
      firstRenderMs: median(paints.map((p) => p.renderMs)),
      zoomFrameMs: median(zooms),
      zoomFrameMaxMs: Math.max(...zooms),
      zoomFrameP95Ms: percentile(zooms, 95),
      panFrameMs: median(pans),
      panFrameMaxMs: Math.max(...pans),
      panFrameP95Ms: percentile(pans, 95),
      ...(cpuPaints.length > 0
        ? {
            cpu: {
              firstPaintMs: median(cpuPaints),
              zoomFrameMs: median(cpuZooms),
              zoomFrameP95Ms: percentile(cpuZooms, 95),
              zoomFrameMaxMs: Math.max(...cpuZooms),
              panFrameMs: median(cpuPans),
              panFrameP95Ms: percentile(cpuPans, 95),
              panFrameMaxMs: Math.max(...cpuPans),
              zoomTaskMs: median(taskZooms),
              zoomTaskMaxMs: Math.max(...taskZooms),
              panTaskMs: median(taskPans),
              panTaskMaxMs: Math.max(...taskPans),
            },
          }
        : {}),
    };
  } finally {
    await browser.close();
    server.close();
  }
}
