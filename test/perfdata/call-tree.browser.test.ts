// The call tree pane in Chromium against perf: a `perf record -g` capture imported by Ringside, written
// as the offline timeline page, opened, and the inverted tree's roots (samples per leaf function) read
// off the page and compared with `perf report --no-children -n`, and so are the self samples of the thread lanes'
// stack charts; the flame graph draws boxes. Then the
// aggregate views of the same page: the flame graph's hot frame, hover, click-to-zoom and back; the
// functions and lines tables against `perf report --sort sym/srcline`; and a chosen function filtering
// the tracks to exactly the samples `perf script` shows it in.
import * as assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { writeStandaloneHtml } from '../../host/html-file';
import { UNKNOWN_FRAME } from '../../shared/stacks';
import type { DrawnFlameBox } from '../../webview/call-tree-view';
import { allCallTreeRows, chromiumAndTempDir, launchChromium } from '../webview/harness';
import { fixture, perfOutput, perfRecord, perfScript, repoRoot, tempDir, withFirstPltStubAsInit, openNamed } from './perf-tools';

interface PageApp {
  ringside: { callTree: { flameBoxes(): DrawnFlameBox[] }; timeline: { rowsInRange(t0: number, t1: number): number[] } };
}

/** stdout of `perf report --no-children -n --stdio -g none` on `file` with `how` (the columns or the sort key). */
function perfReport(file: string, how: readonly string[]): string {
  const report = perfOutput(['report', '-i', file, '--no-children', '-n', '--stdio', ...how, '-g', 'none', '--percent-limit', '0']);
  assert.equal(report.status, 0, report.stderr);
  return report.stdout;
}

/** Samples of `perf script` (callchains printed) with a frame of function `name`. */
function samplesThrough(file: string, name: string): number {
  const { lines } = perfScript(file, ['-F', 'comm,tid,time,ip,sym']);
  let count = 0;
  let inThis = false;
  for (const line of lines) {
    if (!/^\s/.test(line)) {
      inThis = false;
      continue;
    } // a sample's header line; its frames follow indented
    const frame = /^\s+[0-9a-f]+ (\S+)/.exec(line);
    if (!inThis && frame && frame[1].replace(/\+0x[0-9a-f]+$/, '') === name) {
      count++;
      inThis = true;
    }
  }
  return count;
}

describe('call tree pane of an imported perf.data in Chromium', function () {
  this.timeout(120000);
  const env = chromiumAndTempDir('ringside-perfdata-');

  it('bottom-up roots equal perf report --no-children -n; top-down starts at the callers; the flame graph draws', async () => {
    const data = path.join(env.dir, 'g.data');
    perfRecord(data, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const { decoded, symbols } = openNamed(data);
    const page = path.join(env.dir, 'g.html');
    writeStandaloneHtml(page, decoded, symbols.frames);

    const report = perfOutput(['report', '-i', data, '--no-children', '-n', '--stdio', '-F', 'sample,sym', '-g', 'none', '--percent-limit', '0']);
    assert.equal(report.status, 0, report.stderr);
    const theirs = new Map<string, number>();
    for (const line of report.stdout.split('\n')) {
      const match = /^\s+(\d+)\s+\[.\]\s+(.+?)\s*$/.exec(line);
      if (!match) continue;
      const name = /^0x[0-9a-f]+$/.test(match[2]) ? UNKNOWN_FRAME : match[2];
      theirs.set(name, (theirs.get(name) ?? 0) + Number(match[1]));
    }

    const tab = await env.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    // The capture opens with the call tree of the whole capture in view.
    await tab.locator('#rs-calltree .rs-calltree-node').first().waitFor({ timeout: 30000 });
    // Every row of the list, not only those the page holds near the view.
    const rows = () => allCallTreeRows(tab);
    const topDown = await rows();
    // Counted by the aggregation worker, which the offline page (file://, its policy allows blob: workers) starts too.
    const where = await tab.evaluate(() =>
      (
        window as unknown as { ringside: { callTree: { aggregation: { stats(): { worker: boolean; computedOnPage: number } } } } }
      ).ringside.callTree.aggregation.stats(),
    );
    assert.deepEqual({ worker: where.worker, computedOnPage: where.computedOnPage }, { worker: true, computedOnPage: 0 });
    const total = [...theirs.values()].reduce((a, b) => a + b, 0);
    assert.equal(
      topDown.filter((r) => r.depth === 1).reduce((sum, r) => sum + r.total, 0),
      total,
      'every sample once',
    );
    assert.match(
      await tab.locator('#rs-calltree .rs-calltree-summary').innerText(),
      new RegExp(`^${total.toLocaleString('en-US')} samples with callchains · whole capture`),
    );
    const inner = topDown.find((r) => r.fn === 'pd_inner');
    assert.ok(inner && inner.depth > 2, 'pd_inner sits below its callers in the top-down tree');

    await tab.click('#rs-calltree button[data-mode="bottom-up"]');
    const roots = (await rows()).filter((r) => r.depth === 1);
    const ours = withFirstPltStubAsInit(new Map(roots.map((r) => [r.fn, r.total])), fixture('pd_work'));
    assert.deepEqual(Object.fromEntries([...ours].sort()), Object.fromEntries([...theirs].sort()));

    // The thread lanes' stack charts hold the same samples: a function's self samples are its boxes' samples less those
    // of the boxes under them (each box at depth d + 1 lies inside one at depth d).
    const chartSelf = await tab.evaluate(() => {
      type Level = { count: number; start: Float64Array; name: Int32Array; samples: Uint32Array };
      type Chart = { depth: number; levels: Level[] };
      type App = {
        timeline: {
          lanes: { key: string }[];
          layout: { hasStacks: boolean[] };
          stackChartOf(key: string): Chart | undefined;
          toggleStackChart(key: string): void;
        };
        store: { stackTable(): { names: string[] } };
      };
      const app = (window as unknown as { ringside: App }).ringside;
      const names = app.store.stackTable().names;
      const self: Record<string, number> = {};
      let charts = 0;
      // What each lane was, for the failure message: its kind, key, rows and stack depth.
      const lanes = app.timeline.lanes.map((lane) =>
        JSON.stringify({ ...lane, rows: (lane as unknown as { rows: ArrayLike<number> }).rows.length, depth: app.timeline.stackChartOf(lane.key)?.depth ?? 0 }),
      );
      // The busiest sampled thread is a chart from the start; the others (the fork's child, when a sample caught it)
      // are made charts by their lane's button, so the charts hold every sample perf counts.
      const byDefault = app.timeline.lanes.filter((lane) => app.timeline.stackChartOf(lane.key)).length;
      app.timeline.lanes.forEach((lane, i) => {
        if (app.timeline.layout.hasStacks[i] && !app.timeline.stackChartOf(lane.key)) app.timeline.toggleStackChart(lane.key);
      });
      for (const lane of app.timeline.lanes) {
        const chart = app.timeline.stackChartOf(lane.key);
        if (!chart) continue;
        charts++;
        chart.levels.forEach((level, d) => {
          for (let b = 0; b < level.count; b++) {
            const name = names[level.name[b]];
            self[name] = (self[name] ?? 0) + level.samples[b];
            if (d === 0) continue;
            const parent = chart.levels[d - 1];
            let lo = 0;
            let hi = parent.count;
            while (lo < hi) {
              const mid = (lo + hi) >> 1;
              if (parent.start[mid] <= level.start[b]) lo = mid + 1;
              else hi = mid;
            }
            self[names[parent.name[lo - 1]]] -= level.samples[b];
          }
        });
      }
      return { byDefault, charts, self, lanes };
    });
    assert.equal(chartSelf.byDefault, 1, `the busiest sampled thread is a stack chart from the start; lanes: ${chartSelf.lanes.join(' ')}`);
    const chartOurs = withFirstPltStubAsInit(new Map(Object.entries(chartSelf.self).filter(([, n]) => n !== 0)), fixture('pd_work'));
    assert.deepEqual(Object.fromEntries([...chartOurs].sort()), Object.fromEntries([...theirs].sort()), 'stack chart self samples = perf report');

    await tab.click('#rs-calltree button[data-mode="flame"]');
    const boxes = Number(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-boxes'));
    assert.ok(boxes >= 3, `${boxes} boxes`);
    assert.deepEqual(problems, []);
    await tab.close();
  });
});

describe('flame graph, functions and lines of an imported perf.data in Chromium', function () {
  this.timeout(180000);
  let dir = '';
  let browser: Browser;
  let data = '';
  let page = '';
  before(async () => {
    dir = tempDir();
    browser = await launchChromium();
    data = path.join(dir, 'g.data');
    perfRecord(data, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const { decoded, symbols } = openNamed(data);
    page = path.join(dir, 'g.html');
    writeStandaloneHtml(page, decoded, symbols.frames);
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hot function widest; hover names it; a click zooms, filters the tracks, names its line; back zooms out', async () => {
    const report = perfReport(data, ['-F', 'sample,sym']);
    const hot = /^\s+(\d+)\s+\[\.\]\s+pd_inner\s*$/m.exec(report);
    assert.ok(hot, report);
    const hotSamples = Number(hot[1]);
    // Where the editor goes for pd_inner: the line of its definition in the fixture's source.
    const source = readFileSync(path.join(repoRoot, 'test/fixtures/pd_work.c'), 'utf8').split('\n');
    const definition = source.findIndex((line) => line.includes('double pd_inner(long n) {')) + 1;
    assert.ok(definition > 0);

    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    await tab.locator('#rs-calltree .rs-calltree-node').first().waitFor({ timeout: 30000 });
    await tab.click('#rs-calltree button[data-mode="flame"]');
    const boxes = () => tab.evaluate(() => (window as unknown as PageApp).ringside.callTree.flameBoxes());
    const before = await boxes();
    const hottest = before.reduce((a, b) => (b.self > a.self ? b : a));
    assert.equal(hottest.name, 'pd_inner');
    const hotSelf = before.filter((b) => b.name === 'pd_inner').reduce((sum, b) => sum + b.self, 0);
    assert.equal(hotSelf, hotSamples, 'self samples of pd_inner = perf report');
    // The drawer scrolls: pointing goes through the canvas's locator, which scrolls it into view and fails when
    // something else would receive the event.
    const flame = tab.locator('#rs-calltree canvas.rs-flame');
    const canvas = await flame.boundingBox();
    assert.ok(canvas);
    const center = (b: DrawnFlameBox) => ({ position: { x: b.x + b.width / 2, y: b.y + b.height / 2 } });

    await flame.hover(center(hottest));
    const tip = tab.locator('#rs-calltree .rs-flame-tip');
    await tip.waitFor({ state: 'visible' });
    const count = (n: number) => n.toLocaleString('en-US');
    assert.match(await tip.innerText(), new RegExp(`^pd_inner\\nself ${count(hottest.self)} · total ${count(hottest.total)} \\(`));

    await flame.click(center(hottest));
    assert.equal(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-focus'), 'pd_inner');
    const zoomed = await boxes();
    const focused = zoomed.find((b) => b.name === 'pd_inner')!;
    assert.equal(focused.x, 0);
    assert.equal(focused.width, canvas.width, 'the zoomed frame spans the width');
    assert.ok(focused.width > hottest.width, 'wider than before the zoom');
    const crumbs = await tab.$$eval('#rs-calltree .rs-flame-crumb', (els) => els.map((e) => e.textContent));
    assert.deepEqual(crumbs.slice(0, 1).concat(crumbs.slice(-3)), ['All', 'main', 'pd_outer', 'pd_inner']);
    // The tracks now show exactly the samples perf script shows pd_inner in.
    assert.equal(await tab.$eval('#rs-filter', (e) => (e as HTMLInputElement).value), 'stack:=pd_inner');
    const shown = () => tab.evaluate(() => (window as unknown as PageApp).ringside.timeline.rowsInRange(-Infinity, Infinity).length);
    assert.equal(await shown(), samplesThrough(data, 'pd_inner'));
    // The offline page has no editor: it names the line that the panel would reveal.
    const selection = tab.locator('#rs-calltree .rs-calltree-selection');
    assert.match(await selection.innerText(), new RegExp(`pd_inner · \\S*/pd_work\\.c:${definition}\\b`));

    // With an editor (the panel's init says so) the click also asks the host to reveal that line: this page's stand-in host
    // answers that it has no editor, naming the file and line it was asked for.
    await tab.evaluate(() => window.postMessage({ type: 'init', protocolVersion: 1, editor: true }, '*'));
    const again = (await boxes()).find((b) => b.name === 'pd_inner')!;
    await flame.click(center(again));
    const status = tab.locator('#rs-calltree .rs-calltree-selection .rs-reveal-status');
    await tab.waitForFunction(() => document.querySelector('#rs-calltree .rs-reveal-status')?.textContent !== '');
    assert.match(await status.innerText(), new RegExp(`^EREADONLY: There is no editor to reveal /\\S*/pd_work\\.c:${definition} in\\.`));

    await tab.click('#rs-calltree .rs-flame-back');
    assert.equal(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-focus'), 'pd_outer');
    await tab.locator('#rs-calltree canvas.rs-flame').focus();
    await tab.keyboard.press('Escape');
    assert.equal(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-focus'), 'main');
    await tab.click('#rs-calltree .rs-flame-crumb >> text=All');
    assert.equal(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-focus'), '');
    assert.equal((await boxes()).length, before.length);
    // A wider pane lays the graph out again for its new width.
    await tab.evaluate(() => {
      (document.querySelector('#rs-calltree') as HTMLElement).style.gridColumn = '1 / -1';
    });
    const widened = (w: number) => (document.querySelector('#rs-calltree canvas.rs-flame') as HTMLElement).clientWidth > w;
    await tab.waitForFunction(widened, canvas.width + 100);
    const wider = await tab.locator('#rs-calltree canvas.rs-flame').boundingBox();
    assert.ok(wider);
    const widest = (list: readonly DrawnFlameBox[]) => Math.max(...list.map((b) => b.width));
    const share = widest(await boxes()) / wider.width;
    assert.ok(Math.abs(share - widest(before) / canvas.width) < 1e-9, `the widest frame keeps its share of the new width (${share})`);
    await tab.click('#rs-calltree .rs-calltree-clear');
    assert.equal(await tab.$eval('#rs-filter', (e) => (e as HTMLInputElement).value), '');
    assert.deepEqual(problems, []);
    await tab.close();
  });

  it('functions and lines: self samples equal perf report --sort sym and --sort srcline; a row filters the tracks', async () => {
    const theirFunctions = new Map<string, number>();
    for (const line of perfReport(data, ['-F', 'sample,sym']).split('\n')) {
      const match = /^\s+(\d+)\s+\[.\]\s+(.+?)\s*$/.exec(line);
      if (!match) continue;
      const name = /^0x[0-9a-f]+$/.test(match[2]) ? UNKNOWN_FRAME : match[2];
      theirFunctions.set(name, (theirFunctions.get(name) ?? 0) + Number(match[1]));
    }
    // perf's srcline of each sampled address; only the fixture's own lines are compared (libc's depend on its debug info).
    const bySrcline = perfReport(data, ['--sort', 'srcline']);
    const theirLines = new Map<string, number>();
    for (const line of bySrcline.split('\n')) {
      const match = /^\s+[\d.]+%\s+(\d+)\s+(pd_work\.c:\d+)\s*$/.exec(line);
      if (match) theirLines.set(match[2], (theirLines.get(match[2]) ?? 0) + Number(match[1]));
    }
    assert.ok(theirLines.size > 0, bySrcline);

    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    await tab.locator('#rs-calltree .rs-calltree-node').first().waitFor({ timeout: 30000 });

    await tab.click('#rs-calltree button[data-mode="functions"]');
    const functions = await tab.$$eval('#rs-calltree .rs-function-row', (trs) =>
      trs.map((tr) => ({
        fn: tr.querySelector('.rs-calltree-fn')?.textContent ?? '',
        self: Number((tr.querySelector('.rs-function-self') as HTMLElement).dataset.count),
        total: Number((tr.querySelector('.rs-function-total') as HTMLElement).dataset.count),
      })),
    );
    assert.equal(functions[0].fn, 'pd_inner', 'most self samples first');
    // The fixture's own functions exactly; every sample once. (Elsewhere a sample in a PLT stub can be named apart.)
    const own = (counts: Map<string, number>) => Object.fromEntries([...counts].filter(([fn]) => /^(pd_|main$)/.test(fn)).sort());
    const ourFunctions = new Map(functions.filter((f) => f.self > 0).map((f) => [f.fn, f.self]));
    assert.deepEqual(own(ourFunctions), own(theirFunctions));
    const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);
    assert.equal(sum(ourFunctions), sum(theirFunctions));
    const outer = functions.find((f) => f.fn === 'pd_outer')!;
    assert.equal(outer.total, samplesThrough(data, 'pd_outer'), 'total: samples with pd_outer anywhere on the stack');
    await tab.locator('#rs-calltree .rs-function-row', { hasText: 'pd_outer' }).click();
    assert.equal(await tab.$eval('#rs-filter', (e) => (e as HTMLInputElement).value), 'stack:=pd_outer');
    const shown = () => tab.evaluate(() => (window as unknown as PageApp).ringside.timeline.rowsInRange(-Infinity, Infinity).length);
    assert.equal(await shown(), outer.total);

    await tab.click('#rs-calltree button[data-mode="lines"]');
    const lines = await tab.$$eval('#rs-calltree .rs-line-row', (trs) =>
      trs.map((tr) => ({
        file: (tr as HTMLElement).dataset.file ?? '',
        line: Number((tr as HTMLElement).dataset.line),
        fn: tr.querySelector('.rs-calltree-fn')?.textContent ?? '',
        self: Number((tr.querySelector('.rs-line-self') as HTMLElement).dataset.count),
      })),
    );
    const ourLines = new Map<string, number>();
    for (const l of lines.filter((l) => l.file.endsWith('/pd_work.c'))) {
      ourLines.set(`pd_work.c:${l.line}`, (ourLines.get(`pd_work.c:${l.line}`) ?? 0) + l.self);
    }
    assert.deepEqual(Object.fromEntries([...ourLines].sort()), Object.fromEntries([...theirLines].sort()));
    assert.equal(lines[0].fn, 'pd_inner', 'the hottest line is in the hot loop');
    await tab.locator('#rs-calltree .rs-line-row').first().click();
    assert.equal(await tab.$eval('#rs-filter', (e) => (e as HTMLInputElement).value), 'stack:=pd_inner');
    assert.match(await tab.locator('#rs-calltree .rs-calltree-selection').innerText(), new RegExp(`pd_work\\.c:${lines[0].line}\\b`));
    assert.deepEqual(problems, []);
    await tab.close();
  });
});
