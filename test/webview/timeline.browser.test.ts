// Browser tests of the timeline panel: the built bundle served from 127.0.0.1 inside the real
// HTML shell (renderWebviewHtml, CSP header and meta), a test page standing in for the VS Code
// webview API, driven through Debian Chromium with playwright-core.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { renderStandaloneHtml } from '../../host/standalone';
import { ARTIFACTS, afterFrames, groupLanes, measurePaint, openTimelinePage, type Served, type TimelineSession } from './harness';
import { small, smallRows, US } from './synthetic';

interface Posted {
  type: string;
  [k: string]: unknown;
}

async function posted(page: Page, type: string): Promise<Posted[]> {
  return page.evaluate((t) => (window as unknown as { __posted: Posted[] }).__posted.filter((m) => m.type === t), type);
}

async function waitPosted(page: Page, type: string, count: number): Promise<Posted[]> {
  await page.waitForFunction(([t, c]) => (window as unknown as { __posted: Posted[] }).__posted.filter((m) => m.type === t).length >= (c as number), [
    type,
    count,
  ] as const);
  return posted(page, type);
}

/**
 * Console errors. None is expected: every CSP violation (the toolkit's <style> probe included,
 * which carries the nonce from the csp-nonce meta) fails the tests.
 */
function unexpected(errors: string[]): string[] {
  return errors;
}

/** Let the single rAF scheduler render whatever the last action changed. */

const text = async (page: Page, selector: string) => (await page.locator(selector).first().textContent()) ?? '';
const inner = (page: Page, selector: string) => page.locator(selector).first().innerText();

describe('timeline webview in Chromium', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let browser: Browser;
  let served: Served;
  let page: Page;
  const consoleErrors: string[] = [];
  let smallRowTimes: number[];

  before(async () => {
    const rows = smallRows();
    smallRowTimes = rows.map((r) => r.t);
    const snap = small();
    const sampleRow = rows.findIndex((r) => r.t === 505 * US);
    // The first test opens the page itself (it checks the response's policy).
    session = await openTimelinePage({
      path: null,
      errors: consoleErrors,
      pages: ({ script, css }) => {
        const standalone = renderStandaloneHtml({
          script,
          css,
          data: {
            title: 'Ringside export test',
            snapshots: [
              { ...snap, details: { [sampleRow]: { type: 'SAMPLE', event: 'cpu-clock', misc: 2, fields: { period: 10000, note: 'embedded detail' } } } },
            ],
          },
        });
        fs.writeFileSync(path.join(ARTIFACTS, 'standalone-export.html'), standalone);
        // An export with every row's details embedded: its stand-in host can answer field filters itself.
        const everyRow = Object.fromEntries(
          rows.map((r, i) => [i, { type: 'SAMPLE', misc: 2, fields: { tid: r.tid, addr: `0x${(0x1000 + i).toString(16)}` } }]),
        );
        const complete = renderStandaloneHtml({ script, css, data: { title: 'Ringside complete export', snapshots: [{ ...snap, details: everyRow }] } });
        return { '/standalone.html': standalone, '/standalone-complete.html': complete };
      },
    });
    ({ browser, served, page } = session);
  });

  after(() => session?.close());

  it("the policy admits the toolkit's nonce'd <style> probe and still blocks any other inline style", async () => {
    const probe = await browser.newPage();
    const errors: string[] = [];
    probe.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await probe.goto(served.url + '/');
    await waitPosted(probe, 'ready', 1);
    assert.deepEqual(errors, [], 'the page loads (toolkit included) without a single CSP violation');
    const violated = await probe.evaluate(async () => {
      const seen: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => seen.push(e.violatedDirective));
      const style = document.createElement('style');
      style.textContent = 'body { color: red }';
      document.head.appendChild(style);
      const div = document.createElement('div');
      div.setAttribute('style', 'color: red');
      document.body.appendChild(div);
      await new Promise((r) => setTimeout(r, 50));
      return [...new Set(seen)].sort(); // reported once per policy: the header and the meta
    });
    assert.deepEqual(violated, ['style-src-attr', 'style-src-elem']);
    await probe.close();
  });

  it('loads under the CSP, says ready, and acknowledges each batch (flow control)', async () => {
    const response = await page.goto(served.url + '/');
    assert.equal(response?.headers()['content-security-policy'], served.csp);
    const meta = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    assert.equal(meta, served.csp);
    const ready = await waitPosted(page, 'ready', 1);
    assert.deepEqual(ready, [{ type: 'ready', protocolVersion: 1 }]);
    const acks = await page.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('small'));
    assert.equal(acks, 3);
    assert.deepEqual(
      (await posted(page, 'batchAck')).map((m) => m.batchIndex),
      [0, 1, 2],
    );
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records'));
    // The cases below read the lanes of each CPU (the page starts grouped by thread).
    await groupLanes(page, 'cpu');
  });

  it('draws lanes by CPU with names, counts and a watchpoint lane', async () => {
    // The status line changes as the last batch arrives; the lanes are drawn on the next frame.
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 3);
    const labels = await page.$$eval('.rs-lane-label', (els) =>
      els.map((e) => [(e as HTMLElement).dataset.lane, e.querySelector('.rs-lane-name')!.textContent, e.querySelector('.rs-lane-count')!.textContent]),
    );
    assert.deepEqual(labels, [
      ['watch:mem:counter:w', '◆ mem:counter:w', '2'],
      ['cpu:0', 'CPU 0', '13'],
      ['cpu:1', 'CPU 1', '103'],
    ]);
  });

  it('lists every event in a legend, in the colour its ticks are drawn in', async () => {
    const legend = await page.$$eval('.rs-legend-item', (els) =>
      els.map((e) => [(e as HTMLElement).dataset.event, getComputedStyle(e.querySelector('.rs-legend-swatch')!).backgroundColor]),
    );
    assert.deepEqual(
      legend.map(([name]) => name),
      ['sched:sched_switch', 'syscalls:sys_enter_read', 'syscalls:sys_exit_read', 'mem:counter:w', 'cpu-clock'],
    );
    assert.equal(new Set(legend.map(([, colour]) => colour)).size, 5, `distinct colours: ${JSON.stringify(legend)}`);
    // The cpu-clock sample at 505 µs is drawn in the legend's cpu-clock colour.
    const tick = await page.evaluate(() => {
      const w = window as unknown as { __lane(k: string): { top: number; height: number }; __domain(): number[] };
      const lane = w.__lane('cpu:1');
      const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
      const d = w.__domain();
      const dpr = canvas.width / parseFloat(canvas.style.width);
      const x = Math.floor(((505000 - d[0]) / (d[1] - d[0])) * canvas.width);
      const px = canvas.getContext('2d')!.getImageData(x, Math.round((lane.top + lane.height / 2) * dpr), 1, 1).data;
      return `rgb(${px[0]}, ${px[1]}, ${px[2]})`;
    });
    assert.equal(tick, legend[4][1]);
  });

  it('paints ticks where records are, bars for spans, and nothing elsewhere', async () => {
    const ink = (key: string, a: number, b: number, y0?: number, y1?: number) =>
      page.evaluate(([k, t0, t1, f0, f1]) => (window as unknown as { __ink(...a: unknown[]): number }).__ink(k, t0, t1, f0, f1), [key, a, b, y0, y1] as const);
    assert.ok((await ink('cpu:1', 503 * US, 507 * US)) > 0, 'the sample at 505 µs is drawn');
    assert.equal(await ink('cpu:1', 506.2 * US, 507.8 * US), 0, 'no sample between 505 and 510 µs');
    assert.ok((await ink('watch:mem:counter:w', 499 * US, 502 * US)) > 0, 'breakpoint hit drawn in its lane');
    assert.equal(await ink('watch:mem:counter:w', 520 * US, 900 * US), 0);
    // CPU 0: sched_switch every 100 µs → ticks at 100, 200; between them only the run-span bar (lower half).
    assert.equal(await ink('cpu:0', 120 * US, 180 * US, 0.12, 0.45), 0, 'no tick between switches');
    assert.ok((await ink('cpu:0', 120 * US, 180 * US, 0.55, 0.9)) > 0, 'run span bar between switches');
    assert.ok((await ink('cpu:0', 199 * US, 201 * US, 0.12, 0.45)) > 0, 'switch tick at 200 µs');
  });

  it('shows a tooltip on hover, with system names as text only', async () => {
    const p = await page.evaluate(() => (window as unknown as { __point(k: string, t: number): { x: number; y: number } }).__point('cpu:1', 505000));
    await page.mouse.move(p.x, p.y);
    await page.waitForSelector('.rs-tooltip:not([hidden])');
    const tip = await inner(page, '.rs-tooltip');
    assert.match(tip, /cpu-clock · SAMPLE/);
    assert.match(tip, /<img src=x onerror="window.__pwned=1"> pid 200 tid 200 · cpu 1/);
    assert.match(tip, /ip 0x4010c8 busy_loop/);
    assert.match(tip, /^time 505\.000 µs$/m, 'time since the start of the shown capture (the perf clock is a toggle)');
    assert.equal(await page.$('.rs-tooltip img'), null);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  });

  it('selects on click, requests details, shows fields, named callchain frames and Reveal in editor', async () => {
    // The panel's host says it has an editor (the offline page does not): frames with a source line become links.
    await page.evaluate(() => (window as unknown as { __send(m: unknown): void }).__send({ type: 'init', protocolVersion: 1, editor: true }));
    const p = await page.evaluate(() => (window as unknown as { __point(k: string, t: number): { x: number; y: number } }).__point('cpu:1', 505000));
    await page.mouse.click(p.x, p.y);
    const [request] = await waitPosted(page, 'detailsRequest', 1);
    const expectedRow = smallRowTimes.indexOf(505 * US);
    assert.deepEqual({ ...request, requestId: 0 }, { type: 'detailsRequest', requestId: 0, snapshotId: 'snap-1', row: expectedRow });
    assert.equal(await text(page, '#rs-details h2'), 'cpu-clock');
    const local = await inner(page, '#rs-details .rs-fields');
    assert.match(local, /ip\s+0x4010c8/);
    assert.match(local, /symbol\s+busy_loop/);
    await page.evaluate(
      (id) =>
        (window as unknown as { __send(m: unknown): void }).__send({
          type: 'detailsReply',
          replyTo: id,
          snapshotId: 'snap-1',
          row: 0,
          details: {
            type: 'SAMPLE',
            event: 'cpu-clock',
            misc: 2,
            timeNs: '5000000505000',
            fields: { period: 10000, ip: '0x4010c8' },
            callchain: [
              { ip: '0xffffffff81001234', kernel: true },
              { ip: '0x4010c8', symbol: 0, file: '/src/loop.c', line: 12 },
              { ip: '0x401200', symbol: 1, file: '/src/main.c', line: 30 },
              { ip: '0x7f0000001000' },
            ],
            symbols: ['busy_loop+0x8', '<b>main</b>+0x20'],
            source: { file: '/src/loop.c', line: 12 },
          },
        }),
      request.requestId as number,
    );
    await page.waitForSelector('#rs-details .rs-callchain');
    const callchain = await page.$$eval('#rs-details .rs-callchain li', (els) => els.map((e) => e.textContent));
    assert.deepEqual(callchain, [
      '[kernel] 0xffffffff81001234',
      'busy_loop+0x8 0x4010c8 /src/loop.c:12',
      '<b>main</b>+0x20 0x401200 /src/main.c:30',
      '[unknown] 0x7f0000001000',
    ]);
    assert.equal(await page.$('#rs-details .rs-callchain b'), null, 'names are text, never markup');
    assert.match(await inner(page, '#rs-details .rs-remote-details'), /period\s+10000/);
    await page.click('#rs-reveal');
    const [reveal] = await waitPosted(page, 'revealRequest', 1);
    assert.equal(reveal.file, '/src/loop.c');
    assert.equal(reveal.line, 12);
    // Each frame with a source line: click, or focus and Enter, asks the host to reveal it; the others are not links.
    assert.equal(await page.locator('#rs-details .rs-frame-link').count(), 2);
    await page.locator('#rs-details .rs-frame-link').nth(1).click();
    const clicked = (await waitPosted(page, 'revealRequest', 2)).at(-1)!;
    assert.deepEqual([clicked.file, clicked.line], ['/src/main.c', 30]);
    await page.locator('#rs-details .rs-frame-link').first().focus();
    await page.keyboard.press('Enter');
    const entered = (await waitPosted(page, 'revealRequest', 3)).at(-1)!;
    assert.deepEqual([entered.file, entered.line], ['/src/loop.c', 12]);
  });

  it('moves between records with the keyboard', async () => {
    const title = () => text(page, '#rs-details h2');
    const lastRow = async () => (await posted(page, 'detailsRequest')).at(-1)!.row;
    await page.focus('.rs-scroll'); // the Reveal button had focus
    await page.keyboard.press('ArrowRight');
    assert.equal(await title(), 'mem:counter:w', 'next record in the CPU 1 lane is the breakpoint hit at 510 µs');
    assert.equal(await lastRow(), smallRowTimes.indexOf(510 * US + 1));
    await page.keyboard.press('ArrowLeft');
    assert.equal(await title(), 'cpu-clock');
    await page.keyboard.press('ArrowUp');
    assert.equal(await title(), 'sched:sched_switch', 'CPU 0 lane, nearest record in time');
    await page.keyboard.press('Home');
    assert.equal(await lastRow(), 0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    assert.equal(await lastRow(), smallRowTimes.lastIndexOf(1005 * US));
  });

  it('zooms with +/-, the wheel and Fit, changing the axis domain', async () => {
    const domain = () => page.evaluate(() => (window as unknown as { __domain(): [number, number] }).__domain());
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
    const full = await domain();
    await page.focus('.rs-scroll');
    await page.keyboard.press('Escape');
    await page.keyboard.press('+');
    await page.waitForFunction((w) => {
      const d = (window as unknown as { __domain(): number[] }).__domain();
      return d[1] - d[0] < w * 0.6;
    }, full[1] - full[0]);
    const zoomed = await domain();
    assert.ok(Math.abs((zoomed[1] - zoomed[0]) * 2 - (full[1] - full[0])) < (full[1] - full[0]) * 0.01);
    assert.notEqual(await text(page, '.rs-axis .tick text'), '');
    await page.keyboard.press('-');
    await afterFrames(page);
    const back = await domain();
    assert.ok(Math.abs(back[1] - back[0] - (full[1] - full[0])) < (full[1] - full[0]) * 0.01);
    const box = (await page.locator('.rs-overlay').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 30);
    await page.mouse.wheel(0, -400);
    await page.waitForFunction((w) => {
      const d = (window as unknown as { __domain(): number[] }).__domain();
      return d[1] - d[0] < w * 0.9;
    }, full[1] - full[0]);
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
    const fitted = await domain();
    assert.ok(Math.abs(fitted[0] - full[0]) < 1 && Math.abs(fitted[1] - full[1]) < 1);
  });

  it('pans with A/D, Shift+wheel and sideways scrolling, and zooms with W/S', async () => {
    const domain = () => page.evaluate(() => (window as unknown as { __domain(): [number, number] }).__domain());
    const near = (a: number, b: number, width: number) => Math.abs(a - b) < width * 0.01;
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
    const full = await domain();
    const width = full[1] - full[0];
    await page.focus('.rs-scroll');
    await page.keyboard.press('d');
    await afterFrames(page);
    let d = await domain();
    assert.ok(near(d[0], full[0] + width * 0.2, width) && near(d[1] - d[0], width, width), `D pans a fifth later: ${full} → ${d}`);
    await page.keyboard.press('a');
    await page.keyboard.press('a');
    await afterFrames(page);
    d = await domain();
    assert.ok(near(d[0], full[0] - width * 0.2, width), `A pans earlier: ${d}`);
    await page.keyboard.press('w');
    await afterFrames(page);
    d = await domain();
    assert.ok(near(d[1] - d[0], width / 2, width), `W zooms in: ${d}`);
    await page.keyboard.press('s');
    await afterFrames(page);
    d = await domain();
    assert.ok(near(d[1] - d[0], width, width), `S zooms out: ${d}`);
    // Wheel gestures over the plot: Shift+wheel and a sideways (trackpad) scroll pan by the pixels scrolled.
    const box = (await page.locator('.rs-overlay').boundingBox())!;
    const perPixel = width / box.width;
    await page.mouse.move(box.x + box.width / 2, box.y + 30);
    let before = await domain();
    await page.keyboard.down('Shift');
    await page.mouse.wheel(0, 100);
    await page.keyboard.up('Shift');
    await page.waitForFunction((b) => (window as unknown as { __domain(): number[] }).__domain()[0] !== b, before[0]);
    d = await domain();
    assert.ok(near(d[0] - before[0], 100 * perPixel, width) && near(d[1] - d[0], width, width), `Shift+wheel pans, not zooms: ${before} → ${d}`);
    before = d;
    await page.mouse.wheel(-150, 0);
    await page.waitForFunction((b) => (window as unknown as { __domain(): number[] }).__domain()[0] !== b, before[0]);
    d = await domain();
    assert.ok(near(d[0] - before[0], -150 * perPixel, width) && near(d[1] - d[0], width, width), `sideways scrolling pans: ${before} → ${d}`);
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
  });

  it('brushes a range and counts records per event and thread, and shows the call tree of its samples', async () => {
    const calltree = async () =>
      page.$$eval('#rs-calltree .rs-calltree-node', (trs) =>
        trs.map((tr) => {
          const indent = '  '.repeat(Number((tr as HTMLElement).dataset.depth) - 1);
          const fn = tr.querySelector('.rs-calltree-fn')?.textContent;
          const self = tr.querySelector('.rs-calltree-self')?.textContent;
          return `${indent}${fn} ${self}/${(tr.querySelector('.rs-calltree-total') as HTMLElement).dataset.count}`;
        }),
      );
    // Nothing brushed: the whole capture (101 samples, every fourth in helper).
    await page.waitForSelector('#rs-calltree:not([data-pending])');
    assert.equal(await text(page, '#rs-calltree .rs-calltree-summary'), '101 samples with callchains · whole capture');
    assert.deepEqual(await calltree(), ['main 0/101', '  busy_loop 76/101', '    helper 25/25']);
    const a = await page.evaluate(() => (window as unknown as { __point(k: string, t: number): { x: number; y: number } }).__point('cpu:1', 252000));
    const b = await page.evaluate(() => (window as unknown as { __point(k: string, t: number): { x: number; y: number } }).__point('cpu:1', 448000));
    await page.keyboard.down('Shift');
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, a.y, { steps: 4 });
    await page.mouse.move(b.x, b.y, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForSelector('#rs-range .rs-range-span');
    assert.match(await text(page, '#rs-range .rs-range-span'), /^19\d\.\d µs · 24 records$/);
    const perEvent = await page.$$eval('#rs-range .rs-counts-event tr', (rows) => rows.map((r) => r.textContent));
    assert.deepEqual(perEvent, ['cpu-clock20', 'sched:sched_switch2', 'syscalls:sys_enter_read1', 'syscalls:sys_exit_read1']);
    const perThread = await page.$$eval('#rs-range .rs-counts-thread tr', (rows) => rows.map((r) => r.textContent));
    assert.deepEqual(perThread, ['<img src=x onerror="window.__pwned=1"> 20020', 'worker 1003', 'worker 1011']);
    // The range holds samples 25..44: 27, 31, 35, 39 and 43 in helper (counted by the aggregation worker, answered later).
    await page.waitForSelector('#rs-calltree:not([data-pending])');
    assert.equal(await text(page, '#rs-calltree .rs-calltree-summary'), '20 samples with callchains · selected range');
    assert.deepEqual(await calltree(), ['main 0/20', '  busy_loop 15/20', '    helper 5/5']);
    await page.click('#rs-calltree button[data-mode="bottom-up"]');
    assert.deepEqual(await calltree(), ['busy_loop 0/15', '  main 15/15', 'helper 0/5', '  busy_loop 0/5', '    main 5/5']);
    await page.click('#rs-calltree button[data-mode="flame"]');
    const flame = page.locator('#rs-calltree canvas.rs-flame');
    assert.equal(await flame.getAttribute('data-boxes'), '3');
    // Callers on top (the root row at the canvas's top edge, in view however short the drawer), callees below them.
    type Box = { name: string; x: number; y: number; width: number; height: number };
    const boxes = await page.evaluate(() =>
      (window as unknown as { ringside: { callTree: { flameBoxes(): Box[] } } }).ringside.callTree
        .flameBoxes()
        .map(({ name, x, y, width, height }) => ({ name, x, y, width, height })),
    );
    assert.deepEqual(
      boxes.map((b) => [b.name, b.y]),
      [
        ['main', 0],
        ['busy_loop', boxes[0].height + 1],
        ['helper', 2 * (boxes[0].height + 1)],
      ],
    );
    // A click lands on the box drawn there.
    const helperBox = boxes[2];
    await flame.click({ position: { x: helperBox.x + helperBox.width / 2, y: helperBox.y + helperBox.height / 2 } });
    assert.equal(await flame.getAttribute('data-focus'), 'helper');
    // Undo the choice (filter and zoom) for the cases that follow.
    await page.click('#rs-calltree .rs-calltree-clear');
    await page.click('#rs-calltree .rs-flame-crumb >> text=All');
    assert.equal(await page.locator('#rs-filter').evaluate((field) => (field as HTMLInputElement).value), '');
    await page.click('#rs-calltree button[data-mode="top-down"]');
  });

  it('regroups by thread and filters', async () => {
    await page.click('#rs-grouping');
    await page.click('vscode-option[value="thread"]');
    await page.waitForSelector('.rs-lane-label[data-lane="thread:101"]');
    const names = await page.$$eval('.rs-lane-name', (els) => els.map((e) => e.textContent));
    assert.deepEqual(names, [
      '◆ mem:counter:w',
      'worker 100',
      'worker 100',
      'worker 101',
      // A process of one thread is shown once: its thread's lane.
      '<img src=x onerror="window.__pwned=1"> 200',
    ]);
    assert.equal(await page.locator('.rs-lane-label[data-lane="process:200"]').count(), 0, 'no header over the one thread of process 200');
    const processTitle = await page.getAttribute('.rs-lane-label[data-lane="process:100"] .rs-lane-name', 'title');
    assert.equal(processTitle, 'worker 100: 2 threads');
    assert.deepEqual(
      await page.$$eval('.rs-lane-label.rs-thread-lane', (els) => els.map((e) => (e as HTMLElement).dataset.lane)),
      ['thread:100', 'thread:101', 'thread:200'],
      'threads are indented under their process header',
    );
    // A long comm is cut, never the pid that tells the lane apart.
    const cut = await page.$eval('.rs-lane-label[data-lane="thread:200"] .rs-lane-name', (name) => {
      const head = name.querySelector('.rs-lane-head') as HTMLElement;
      const tail = name.querySelector('.rs-lane-tail') as HTMLElement;
      return {
        tail: tail.textContent,
        headCut: head.scrollWidth > head.clientWidth,
        tailShown: tail.getBoundingClientRect().right <= name.getBoundingClientRect().right + 0.5,
      };
    });
    assert.deepEqual(cut, { tail: '200', headCut: true, tailShown: true });
    // Hiding a process's threads keeps its header, which sums them.
    await page.click('.rs-lane-label[data-lane="process:100"] .rs-lane-toggle');
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 3);
    assert.equal(await text(page, '.rs-lane-label[data-lane="process:100"] .rs-lane-count'), '13');
    await page.click('.rs-lane-label[data-lane="process:100"] .rs-lane-toggle');
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 5);
    await page.fill('#rs-filter input', 'tid:101');
    // One thread of process 100 left: its lane alone, no header over it.
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 1);
    assert.equal(await text(page, '.rs-lane-count'), '5');
    // The counts follow the filter, and Enter / Shift+Enter (or ↓ ↑) step through what it shows.
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent === '5 matches');
    assert.match(await text(page, '.rs-status'), /^5 of 116 records/);
    const tid101 = smallRows().flatMap((r, i) => (r.tid === 101 ? [i] : []));
    const lastRow = async () => (await posted(page, 'detailsRequest')).at(-1)!.row;
    await page.press('#rs-filter input', 'Enter');
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent === '1 of 5 matches');
    assert.equal(await lastRow(), tid101[0]);
    await page.press('#rs-filter input', 'Enter');
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent === '2 of 5 matches');
    assert.equal(await lastRow(), tid101[1]);
    await page.press('#rs-filter input', 'Shift+Enter');
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent === '1 of 5 matches');
    await page.click('#rs-match-previous');
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent === '5 of 5 matches');
    assert.equal(await lastRow(), tid101[4], 'stepping back from the first wraps to the last');
    // A filter that does not parse says why next to the box and leaves the lanes as they were.
    await page.fill('#rs-filter input', 'foo:bar');
    await page.waitForFunction(() => document.querySelector('.rs-filter-error')?.textContent?.startsWith('unknown key "foo:" in "foo:bar"'));
    assert.equal(await page.getAttribute('#rs-filter', 'aria-invalid'), 'true');
    assert.equal(await page.locator('.rs-lane-label').count(), 1, 'the lanes are not emptied');
    await page.fill('#rs-filter input', 'pid:x');
    assert.equal(await text(page, '.rs-filter-error'), 'pid: expects a number, got "x"');
    await page.fill('#rs-filter input', 'sym:bump');
    // The watchpoint's lane and the lane of process 200's one thread, whose hits they are (no header over it).
    await page.waitForFunction(
      () => [...document.querySelectorAll('.rs-lane-label')].map((l) => (l as HTMLElement).dataset.lane).join() === 'watch:mem:counter:w,thread:200',
    );
    await page.fill('#rs-filter input', '');
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 5);
    // Persisted through the webview API's setState (debounced).
    await page.waitForFunction(() => {
      const s = (window as unknown as { __getState(): { grouping?: string; filter?: string } | undefined }).__getState();
      return s?.grouping === 'thread' && s.filter === '';
    });
  });

  it('filters by a decoded field value: asks the host, says filtering…, then applies its rows with the other terms', async () => {
    const rows = smallRows();
    const answer = (requestId: number, snapshotId: string, body: { rows: number[] } | { error: { code: string; message: string } }) =>
      page.evaluate(
        ([id, snap, b]) => {
          const reply =
            'rows' in b
              ? { type: 'fieldFilterReply', replyTo: id, snapshotId: snap, rows: Uint32Array.from(b.rows).buffer }
              : { type: 'fieldFilterReply', replyTo: id, snapshotId: snap, error: b.error };
          (window as unknown as { __send(m: unknown): void }).__send(reply);
        },
        [requestId, snapshotId, body] as const,
      );
    const before = (await posted(page, 'fieldFilterRequest')).length;
    await page.fill('#rs-filter input', 'field.prev_pid=101');
    const [request] = (await waitPosted(page, 'fieldFilterRequest', before + 1)).slice(before);
    assert.deepEqual({ ...request, requestId: 0 }, { type: 'fieldFilterRequest', requestId: 0, snapshotId: 'snap-1', name: 'prev_pid', op: '=', value: '101' });
    assert.equal(await text(page, '.rs-filter-status'), 'filtering…');
    assert.equal(await page.locator('.rs-lane-label').count(), 5, 'nothing is hidden before the host answers');
    // The stand-in host: sched_switch records of thread 101 (snapshot-local rows).
    const matching = rows.flatMap((r, i) => (r.event === 0 && r.tid === 101 ? [i] : []));
    await answer(request.requestId as number, 'snap-1', { rows: matching });
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 1);
    assert.equal(await text(page, '.rs-lane-label .rs-lane-count'), String(matching.length));
    assert.equal(await text(page, '.rs-filter-status'), '');
    // Negated and combined with a column term: the cached answer is reused, no new request.
    await page.fill('#rs-filter input', 'event:sched -field.prev_pid=101');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.rs-lane-label').length === 1 && document.querySelectorAll('.rs-lane-label')[0]?.getAttribute('data-lane') === 'thread:100',
    );
    assert.equal(await text(page, '.rs-lane-label .rs-lane-count'), String(rows.filter((r) => r.event === 0 && r.tid !== 101).length));
    assert.equal((await posted(page, 'fieldFilterRequest')).length, before + 1);
    // The host's error is shown, and the term matches nothing.
    await page.fill('#rs-filter input', 'field.nosuch~x');
    const [failing] = (await waitPosted(page, 'fieldFilterRequest', before + 2)).slice(before + 1);
    await answer(failing.requestId as number, 'snap-1', { error: { code: 'FIELD_FILTER', message: 'no event has that field' } });
    await page.waitForFunction(() => document.querySelector('.rs-filter-error')?.textContent === 'field.nosuch: no event has that field');
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 0);
    await page.fill('#rs-filter input', '');
    await page.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 5);
  });

  it('collapses a lane from its label', async () => {
    await page.click('.rs-lane-label[data-lane="thread:100"] .rs-lane-toggle');
    await page.waitForSelector('.rs-lane-label[data-lane="thread:100"].rs-collapsed', { timeout: 10000 }).catch(async (error) => {
      const state = await page.evaluate(() => ({
        lane: (window as unknown as { __lane(k: string): unknown }).__lane('thread:100'),
        labels: [...document.querySelectorAll('.rs-lane-label')].map((n) => `${(n as HTMLElement).dataset.lane} ${n.className}`),
        active: document.activeElement?.className,
      }));
      throw new Error(`${String(error)}\n${JSON.stringify(state)}`);
    });
    assert.equal(await page.getAttribute('.rs-lane-label[data-lane="thread:100"] .rs-lane-toggle', 'aria-expanded'), 'false');
    assert.equal((await page.evaluate(() => (window as unknown as { __lane(k: string): { height: number } }).__lane('thread:100')))!.height, 8);
  });

  it('lists source lines counted by uprobes apart from the hardware breakpoints, outside the register meter', async () => {
    await page.evaluate(() =>
      (window as unknown as { __send(m: unknown): void }).__send({
        type: 'watchList',
        budget: { used: 1, total: 4, cpuPinned: 0, maxTaskPinned: 1, flexible: 0 },
        watches: [
          {
            id: 'u1',
            location: { kind: 'line', file: '/src/demo.c', line: 37 },
            type: 'x',
            length: 8,
            target: { kind: 'process', pid: 300 },
            pinned: false,
            enabled: true,
            hits: 3000,
            probe: 'uprobe',
          },
          {
            id: 'b1',
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'w',
            length: 8,
            target: { kind: 'process', pid: 300 },
            pinned: false,
            enabled: true,
            hits: 5,
          },
        ],
      }),
    );
    await page.waitForSelector('tr[data-watch-id="u1"]');
    // In the table's order: the breakpoint, then the uprobes' heading, then the uprobe line (type "uprobe", no length).
    const rows = await page.$$eval('tr', (trs) =>
      trs.map((tr) => tr.dataset.watchId ?? (tr.querySelector('.rs-watch-uprobes') ? 'heading' : '')).filter(Boolean),
    );
    assert.deepEqual(rows, ['b1', 'heading', 'u1']);
    assert.match(await text(page, '.rs-watch-uprobes'), /^Uprobes \(source lines counted by the kernel's uprobes: no debug register, not in the meter\)$/);
    assert.deepEqual(await page.$$eval('tr[data-watch-id="u1"] td', (tds) => tds.slice(0, 6).map((t) => t.textContent)), [
      '/src/demo.c:37',
      'uprobe',
      '—',
      'pid 300',
      '',
      '3,000',
    ]);
    assert.match(await text(page, '.rs-budget-text'), /^Debug registers: 1\/4 used/);
  });

  it('lists breakpoints, posts typed watch requests, and explains ENOSPC inline', async () => {
    await page.evaluate(() =>
      (window as unknown as { __send(m: unknown): void }).__send({
        type: 'watchList',
        budget: { used: 4, total: 4, cpuPinned: 3, maxTaskPinned: 0, flexible: 1, heldByRecordings: ['mem:flag:w (all CPUs: mem:flag:w)'] },
        watches: [
          {
            id: 'w1',
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'rw',
            length: 8,
            target: { kind: 'process', pid: 200 },
            pinned: false,
            enabled: true,
            hits: 3,
            resolvedAddress: '0x404028',
          },
        ],
      }),
    );
    await page.waitForSelector('tr[data-watch-id="w1"]');
    assert.deepEqual(await page.$$eval('tr[data-watch-id="w1"] td', (tds) => tds.slice(0, 6).map((t) => t.textContent)), [
      'counter',
      'rw',
      '8',
      'pid 200',
      '',
      '3',
    ]);
    assert.match(await text(page, '.rs-budget-text'), /^Debug registers: 4\/4 used/);
    // Where the machine delivers no breakpoint hits, a breakpoint that counted none says so instead of 0.
    const unseen = 'hardware breakpoints do not fire on this machine: the kernel accepted an execute breakpoint on getppid() ...';
    await page.evaluate(
      (why) =>
        (window as unknown as { __send(m: unknown): void }).__send({
          type: 'watchList',
          budget: { used: 1, total: 4, cpuPinned: 0, maxTaskPinned: 1, flexible: 0 },
          watches: [
            {
              id: 'w0',
              location: { kind: 'symbol', symbol: 'counter' },
              type: 'w',
              length: 8,
              target: { kind: 'process', pid: 200 },
              pinned: false,
              enabled: true,
              hits: 0,
              unseen: why,
            },
          ],
        }),
      unseen,
    );
    await page.waitForSelector('tr[data-watch-id="w0"]');
    const hitsCell = page.locator('tr[data-watch-id="w0"] td').nth(5);
    assert.equal(await hitsCell.textContent(), 'not seen here');
    assert.equal(await hitsCell.getAttribute('title'), unseen);
    await page.evaluate(() =>
      (window as unknown as { __send(m: unknown): void }).__send({
        type: 'watchList',
        budget: { used: 4, total: 4, cpuPinned: 3, maxTaskPinned: 0, flexible: 1, heldByRecordings: ['mem:flag:w (all CPUs: mem:flag:w)'] },
        watches: [
          {
            id: 'w1',
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'rw',
            length: 8,
            target: { kind: 'process', pid: 200 },
            pinned: false,
            enabled: true,
            hits: 3,
            resolvedAddress: '0x404028',
          },
        ],
      }),
    );
    await page.waitForSelector('tr[data-watch-id="w1"]');
    // Registers held by a recording's own breakpoint events are counted, and named since the list does not show them.
    assert.match(await text(page, '.rs-budget-text'), /; also held by recordings: mem:flag:w \(all CPUs: mem:flag:w\)$/);
    await page.fill('#rs-watch-location input', 'src/counter.c:42');
    await page.fill('#rs-watch-target input', '200');
    await page.click('#rs-watch-pinned');
    await page.click('#rs-watch-submit');
    const [add] = await waitPosted(page, 'watchRequest', 1);
    assert.deepEqual(
      { ...add, requestId: 0 },
      {
        type: 'watchRequest',
        requestId: 0,
        op: 'add',
        spec: {
          location: { kind: 'line', file: 'src/counter.c', line: 42 },
          type: 'w',
          length: 4,
          target: { kind: 'process', pid: 200 },
          pinned: true,
        },
      },
    );
    await page.evaluate(
      (id) =>
        (window as unknown as { __send(m: unknown): void }).__send({
          type: 'watchReply',
          replyTo: id,
          ok: false,
          error: { code: 'ENOSPC', message: 'No space left on device', hint: 'All debug registers are taken.' },
        }),
      add.requestId as number,
    );
    await page.waitForSelector('.rs-watch-status .rs-enospc');
    const status = await inner(page, '#rs-watch-status');
    assert.match(status, /Add src\/counter\.c:42 failed: ENOSPC: No space left on device/);
    assert.match(status, /All debug registers are taken\./);
    assert.match(status, /3 pinned per-CPU \+ 0 pinned by the busiest task, plus 1 register kept for the flexible breakpoints/);

    await page.click('tr[data-watch-id="w1"] .rs-watch-enable');
    await page.click('tr[data-watch-id="w1"] .rs-watch-edit');
    // Edit fills the form with the breakpoint; the toolkit field shows it one update later (typing
    // before that once gave 'counter0x404030'), so wait until the user would see it.
    await page.waitForFunction(
      () => (document.querySelector('#rs-watch-location')?.shadowRoot?.querySelector('input') as HTMLInputElement | null)?.value === 'counter',
    );
    await page.fill('#rs-watch-location input', '0x404030');
    await page.click('#rs-watch-submit');
    await page.click('tr[data-watch-id="w1"] .rs-watch-remove');
    const requests = (await waitPosted(page, 'watchRequest', 4)).slice(1).map((m) => ({ ...m, requestId: 0 }));
    assert.deepEqual(requests, [
      { type: 'watchRequest', requestId: 0, op: 'disable', id: 'w1' },
      {
        type: 'watchRequest',
        requestId: 0,
        op: 'modify',
        id: 'w1',
        spec: { location: { kind: 'address', address: '0x404030' }, type: 'rw', length: 8, target: { kind: 'process', pid: 200 }, pinned: false },
      },
      { type: 'watchRequest', requestId: 0, op: 'remove', id: 'w1' },
    ]);
  });

  it('shows coverage: retained, hatched overwritten part, lost records', async () => {
    const coverage = await page.evaluate(() => {
      const c = document.querySelector('.rs-coverage') as HTMLCanvasElement;
      const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      const d = (window as unknown as { __domain(): number[] }).__domain();
      const oldestX = Math.floor(((0 - d[0]) / (d[1] - d[0])) * c.width);
      let left = 0;
      let right = 0;
      for (let y = 0; y < c.height; y++) {
        for (let x = 0; x < c.width; x++) {
          if (data[(y * c.width + x) * 4 + 3] === 0) continue;
          if (x < oldestX) left++;
          else right++;
        }
      }
      return { left, right };
    });
    assert.ok(coverage.left > 0, 'hatched overwritten region before the oldest record');
    assert.ok(coverage.right > 0, 'retained range');
    const lostRows = await page.$$eval('.rs-coverage-table tr.rs-lost td', (tds) => tds.map((t) => t.textContent));
    assert.deepEqual(lostRows, ['snapshot 1', 'cpu1', 'paused', '64 KiB', '1.0 MiB', '4.0 KiB', '7']);
  });

  it('draws lost records and the overwritten part on the lane of their ring, with a tooltip saying how many and why', async () => {
    const lossy = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await lossy.goto(served.url + '/');
      await waitPosted(lossy, 'ready', 1);
      await groupLanes(lossy, 'cpu');
      await lossy.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('lossy'));
      await lossy.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 2);
      await afterFrames(lossy);
      const ink = (key: string, a: number, b: number) =>
        lossy.evaluate(([k, t0, t1]) => (window as unknown as { __ink(...a: unknown[]): number }).__ink(k, t0, t1), [key, a, b] as const);
      // 12 records went missing on CPU 0 between its sample at 50 µs and the LOST record at 75 µs.
      assert.ok((await ink('cpu:0', 52 * US, 73 * US)) > 50, 'the loss is drawn between 50 and 75 µs on CPU 0');
      assert.equal(await ink('cpu:0', 81 * US, 89 * US), 0, 'nothing where nothing was lost');
      assert.equal(await ink('cpu:1', 56 * US, 64 * US), 0, 'CPU 1 lost nothing');
      const topColour = await lossy.evaluate((t) => {
        const w = window as unknown as { __lane(k: string): { top: number; height: number }; __domain(): number[] };
        const lane = w.__lane('cpu:0');
        const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
        const d = w.__domain();
        const dpr = canvas.width / parseFloat(canvas.style.width);
        const x = Math.floor(((t - d[0]) / (d[1] - d[0])) * canvas.width);
        return Array.from(canvas.getContext('2d')!.getImageData(x, Math.round(lane.top * dpr), 1, 1).data);
      }, 62 * US);
      assert.deepEqual(topColour, [0xf1, 0x4c, 0x4c, 255], 'a loss is edged in --vscode-charts-red');
      const d0 = (await lossy.evaluate(() => (window as unknown as { __domain(): number[] }).__domain()))[0];
      assert.ok(d0 < -US, `Fit leaves room before the oldest record: ${d0}`);
      assert.ok((await ink('cpu:0', d0, -0.3 * US)) > 0, 'the overwritten part is hatched before the oldest record CPU 0 kept');
      assert.equal(await ink('cpu:1', d0, -0.3 * US), 0, 'CPU 1 overwrote nothing');
      const hover = async (key: string, t: number) => {
        type Points = { __point(k: string, t: number): { x: number; y: number } };
        const p = await lossy.evaluate(([k, time]) => (window as unknown as Points).__point(k, time), [key, t] as const);
        await lossy.mouse.move(p.x, p.y);
        await lossy.waitForSelector('.rs-tooltip:not([hidden])');
        return lossy.locator('.rs-tooltip').innerText();
      };
      const lostTip = await hover('cpu:0', 62 * US);
      assert.match(lostTip, /^12 records lost in ring cpu0 \(LOST\)\nin the 25\.00 µs before this record\n.*ring was paused while a snapshot was copied/);
      const overwrittenTip = await hover('cpu:0', d0 / 2);
      assert.match(overwrittenTip, /^about 64 records, 4\.0 KiB overwritten in ring cpu0\nbefore its oldest record kept \(lossy snapshot\)/);
    } finally {
      await lossy.close();
    }
  });

  it('at 1280 px: the plot takes the width, the tables fit, the drawer resizes and is remembered, the meter is themed', async () => {
    const narrow = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      await narrow.goto(served.url + '/');
      await waitPosted(narrow, 'ready', 1);
      await groupLanes(narrow, 'cpu');
      await narrow.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('small'));
      await narrow.evaluate(() =>
        (window as unknown as { __send(m: unknown): void }).__send({
          type: 'watchList',
          budget: { used: 0, total: 4, cpuPinned: 0, maxTaskPinned: 0, flexible: 0 },
          watches: [
            {
              id: 'w1',
              location: { kind: 'line', file: '/home/user/projects/a-rather-long-directory-name/src/counter_update_loop.c', line: 4242 },
              type: 'rw',
              length: 8,
              target: { kind: 'process', pid: 200 },
              pinned: true,
              enabled: true,
              hits: 123456789,
              resolvedAddress: '0x404028',
            },
          ],
        }),
      );
      await narrow.waitForSelector('tr[data-watch-id="w1"]');
      await narrow.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 3);
      await afterFrames(narrow);
      const layout = await narrow.evaluate(() => {
        const fits = (selector: string) => {
          const e = document.querySelector(selector) as HTMLElement;
          return { scroll: e.scrollWidth, client: e.clientWidth };
        };
        const meter = document.querySelector('.rs-budget-meter') as HTMLElement;
        return {
          page: { scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth },
          plot: parseFloat((document.querySelector('.rs-canvas') as HTMLElement).style.width),
          coverage: fits('.rs-coverage-table'),
          coverageSection: fits('.rs-coverage-list'),
          watch: fits('.rs-watch-table'),
          watchSection: fits('.rs-watch'),
          drawer: fits('.rs-drawer'),
          meterBackground: getComputedStyle(meter).backgroundColor,
          meterFill: (meter.firstElementChild as HTMLElement).getBoundingClientRect().width,
          locationTitle: (document.querySelector('tr[data-watch-id="w1"] td') as HTMLElement).title,
        };
      });
      assert.ok(layout.page.scroll <= layout.page.client, `no horizontal scrolling: ${JSON.stringify(layout.page)}`);
      assert.ok(layout.plot >= 1280 - 190 - 24, `the plot takes the width beside the lane labels: ${layout.plot} px`);
      for (const k of ['coverage', 'coverageSection', 'watch', 'watchSection', 'drawer'] as const) {
        assert.ok(layout[k].scroll <= layout[k].client, `${k} fits without scrolling sideways: ${JSON.stringify(layout[k])}`);
      }
      assert.equal(layout.locationTitle, '/home/user/projects/a-rather-long-directory-name/src/counter_update_loop.c:4242 (0x404028)');
      assert.equal(layout.meterBackground, 'rgb(60, 60, 60)', "0/4 draws the dark theme's input background, not a white bar");
      assert.equal(layout.meterFill, 0);
      await narrow.evaluate(() =>
        (window as unknown as { __send(m: unknown): void }).__send({
          type: 'watchList',
          budget: { used: 2, total: 4, cpuPinned: 0, maxTaskPinned: 0, flexible: 2 },
          watches: [],
        }),
      );
      await narrow.waitForFunction(() => document.querySelector('.rs-budget-meter')?.getAttribute('aria-valuenow') === '2');
      const half = await narrow.evaluate(() => {
        const m = document.querySelector('.rs-budget-meter') as HTMLElement;
        return (m.firstElementChild as HTMLElement).getBoundingClientRect().width / m.clientWidth;
      });
      assert.ok(Math.abs(half - 0.5) < 0.05, `2/4 fills half: ${half}`);
      // The lanes take their content's height and the drawer the rest, down to the page's bottom.
      await groupLanes(narrow, 'thread');
      await afterFrames(narrow);
      const drawerHeight = () => narrow.evaluate(() => document.querySelector('.rs-drawer')!.getBoundingClientRect().height);
      const sizes = await narrow.evaluate(() => ({
        lanes: (document.querySelector('.rs-scroll') as HTMLElement).clientHeight,
        content: parseFloat((document.querySelector('.rs-labels') as HTMLElement).style.height),
        drawerBottom: document.querySelector('.rs-drawer')!.getBoundingClientRect().bottom,
        center: document.querySelector('.rs-center')!.getBoundingClientRect().height,
      }));
      assert.ok(Math.abs(sizes.lanes - Math.max(80, sizes.content)) <= 2, `the lanes take their content's height: ${JSON.stringify(sizes)}`);
      assert.ok(Math.abs(sizes.drawerBottom - 800) <= 1, `the drawer takes the rest of the page: ${JSON.stringify(sizes)}`);
      // Drag the handle up: the drawer grows by as much (as far as the timeline keeps its 160 px) and the page remembers
      // its height.
      const step = Math.min(60, Math.floor(sizes.center - 160));
      assert.ok(step >= 30, `room to drag: ${JSON.stringify(sizes)}`);
      const before = await drawerHeight();
      const handle = (await narrow.locator('.rs-drawer-handle').boundingBox())!;
      await narrow.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
      await narrow.mouse.down();
      await narrow.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2 - step, { steps: 5 });
      await narrow.mouse.up();
      assert.equal(Math.round(await drawerHeight()), Math.round(before) + step);
      type Saved = { __getState(): { drawerHeight?: number } | undefined };
      await narrow.waitForFunction((h) => (window as unknown as Saved).__getState()?.drawerHeight === h, Math.round(before) + step);
      await narrow.focus('.rs-drawer-handle');
      await narrow.keyboard.press('ArrowDown');
      assert.equal(Math.round(await drawerHeight()), Math.round(before) + step - 24);
      // Below what the lanes leave it the drawer does not go: the lanes never take more than their content.
      await narrow.keyboard.press('ArrowDown');
      await narrow.keyboard.press('ArrowDown');
      assert.equal(Math.round(await drawerHeight()), Math.round(before));
      await narrow.screenshot({ path: path.join(ARTIFACTS, 'webview-1280.png') });
    } finally {
      await narrow.close();
    }
  });

  it('shows a new live snapshot fitted, and follows its newest records when asked', async () => {
    await page.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('second'));
    await page.waitForFunction(() => document.querySelectorAll('.rs-snapshot').length === 2);
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('51 records · 2 snapshots'));
    await afterFrames(page);
    const shown = await page.evaluate(() => (window as unknown as { __domain(): number[] }).__domain());
    assert.ok(shown[0] > 1_900_000 && shown[0] < 2_000_000 && shown[1] > 2_500_000 && shown[1] < 2_600_000, `fitted to snapshot 2: ${shown}`);
    // The end of the shown capture is marked with its name.
    await page.waitForFunction(() => [...document.querySelectorAll('.rs-marks text.rs-boundary-label')].map((e) => e.textContent).join() === 'snapshot 2');
    await page.focus('.rs-scroll');
    await page.keyboard.press('+');
    await page.click('#rs-follow');
    await page.waitForFunction(() => (window as unknown as { __domain(): number[] }).__domain()[1] >= 2_500_000);
    await page.click('#rs-follow');
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => (window as unknown as { __domain(): number[] }).__domain()[1] < 1_100_000);
    const first = await page.evaluate(() => (window as unknown as { __domain(): number[] }).__domain());
    assert.ok(first[0] < 0 && first[1] > 1_005_000, `the strip shows all of snapshot 1: ${first}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-timeline.png') });
  });

  it('re-requests what it lacks when it becomes visible again', async () => {
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const [resync] = await waitPosted(page, 'resync', 1);
    assert.deepEqual(resync, {
      type: 'resync',
      have: [
        { snapshotId: 'snap-1', rows: 116 },
        { snapshotId: 'snap-2', rows: 51 },
      ],
    });
  });

  it('takes its colours from the --vscode-* theme variables, live', async () => {
    await page.click('#rs-zoom-reset');
    // Thread 200's samples have callchains: its lane is a stack chart until switched to ticks.
    await page.click('.rs-lane-label[data-lane="thread:200"] .rs-lane-mode');
    // The frame that draws it as ticks, before its pixels are read.
    await page.waitForSelector('.rs-lane-label[data-lane="thread:200"] .rs-lane-mode[aria-pressed="false"]');
    await afterFrames(page);
    const tickColour = () =>
      page.evaluate(() => {
        const w = window as unknown as { __lane(k: string): { top: number; height: number }; __domain(): number[] };
        const lane = w.__lane('thread:200');
        const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
        const d = w.__domain();
        const scroll = document.querySelector('.rs-scroll')!.scrollTop;
        const x = Math.floor(((505000 - d[0]) / (d[1] - d[0])) * canvas.width);
        const px = canvas.getContext('2d')!.getImageData(x, Math.round(lane.top - scroll + lane.height / 2), 1, 1).data;
        return Array.from(px);
      });
    await page.waitForFunction(() => (window as unknown as { __domain(): number[] }).__domain()[1] > 1_005_000);
    assert.deepEqual(await tickColour(), [0xcc, 0xa7, 0x00, 255], 'cpu-clock ticks use --vscode-charts-yellow');
    await page.evaluate(() => {
      document.documentElement.style.setProperty('--vscode-charts-yellow', '#ff0000');
      document.body.className = 'vscode-light';
    });
    await afterFrames(page);
    assert.deepEqual(await tickColour(), [255, 0, 0, 255]);
    await page.click('.rs-lane-label[data-lane="thread:200"] .rs-lane-mode');
  });

  it('restores grouping, collapsed lanes and filter from the initial state', async () => {
    const restored = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await restored.goto(served.url + '/restored');
    await waitPosted(restored, 'ready', 1);
    await restored.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('small'));
    await restored.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 4);
    const lanes = await restored.$$eval('.rs-lane-label', (els) => els.map((e) => [(e as HTMLElement).dataset.lane, e.classList.contains('rs-collapsed')]));
    assert.deepEqual(lanes, [
      ['watch:mem:counter:w', false],
      ['event:syscalls:sys_enter_read', false],
      ['event:syscalls:sys_exit_read', false],
      ['event:cpu-clock', true],
    ]);
    assert.equal(await restored.inputValue('#rs-filter input'), '-event:sched');
    const drawer = await restored.evaluate(() => ({
      height: document.querySelector('.rs-drawer')!.getBoundingClientRect().height,
      lanes: (document.querySelector('.rs-scroll') as HTMLElement).clientHeight,
      content: parseFloat((document.querySelector('.rs-labels') as HTMLElement).style.height),
    }));
    // Its remembered height is the least it takes; the lanes take what they need and leave it the rest.
    assert.ok(drawer.height >= 200, `the drawer keeps at least its height: ${drawer.height}`);
    assert.ok(drawer.lanes <= Math.max(80, drawer.content) + 2, `the lanes take their content's height: ${JSON.stringify(drawer)}`);
    await restored.close();
  });

  it('asks the host to export the shown snapshot', async () => {
    await page.click('#rs-export');
    const [request] = await waitPosted(page, 'exportRequest', 1);
    assert.equal(request.snapshotId, 'snap-1');
  });

  it('rejects malformed messages with a reason and keeps working', async () => {
    await page.evaluate(() => (window as unknown as { __send(m: unknown): void }).__send({ type: 'batch', snapshotId: 'snap-1', batchIndex: 0 }));
    const [err] = await waitPosted(page, 'webviewError', 1);
    assert.match(String(err.message), /rejected message: batch\.batchCount/);
    assert.deepEqual(unexpected(consoleErrors), []);
  });

  it('paints 10k, 100k and a million records (first paint) as density and stays responsive', async () => {
    const results = [];
    for (const n of [10_000, 100_000, 1_000_000]) {
      const m = await measurePaint(browser, served.url, n);
      results.push(m);
      assert.ok(m.paintedFraction > 0.9, `density fills the lane at ${n}: ${m.paintedFraction}`);
      assert.ok(m.maxZoomFrameMs < 1000, `zoom frame ${m.maxZoomFrameMs} ms at ${n}`);
    }
    fs.writeFileSync(path.join(ARTIFACTS, 'webview-paint.json'), JSON.stringify(results, null, 2));
    const errors: string[] = [];
    const big = await session.newPage({ errors, grouping: 'cpu' });
    assert.equal(await big.evaluate(() => (window as unknown as { __stream(w: string, n: number): Promise<number> }).__stream('big', 1_000_000)), 16);
    await big.waitForFunction(() => document.querySelector('.rs-lane-label[data-lane="cpu:1"] .rs-lane-count')?.textContent === '500,000');
    await afterFrames(big);
    await big.screenshot({ path: path.join(ARTIFACTS, 'webview-1m.png') });
    assert.deepEqual(unexpected(errors), []);
    await big.close();
  });

  it("draws a big capture's frame before pairing its spans, and again once idle time has paired them", async () => {
    // One thread of another process with two records: its lanes are drawn zoomed in (spans), every other lane as density.
    type Probe = {
      __stream(w: string, n: number): Promise<number>;
      __renders: { rows: number; spansReady: boolean }[];
      ringside: { store: { length: number }; timeline: { render(): void; layout: { spansReady: boolean } } };
    };
    const watchRenders = () => {
      const w = window as unknown as Probe;
      w.__renders = [];
      const timeline = w.ringside.timeline;
      const render = timeline.render.bind(timeline);
      timeline.render = () => {
        render();
        w.__renders.push({ rows: w.ringside.store.length, spansReady: timeline.layout.spansReady });
      };
    };
    for (const n of [300_000, 50_000]) {
      const errors: string[] = [];
      const big = await session.newPage({ errors, grouping: 'thread' });
      await big.evaluate(watchRenders);
      await big.evaluate((count) => (window as unknown as Probe).__stream('bigWithStray', count), n);
      await big.waitForSelector('.rs-lane-label[data-lane="thread:777"]');
      // Until the frame drawn after the spans were paired (idle time, then a frame).
      await big.waitForFunction((count) => (window as unknown as Probe).__renders.some((r) => r.rows === count && r.spansReady), n);
      const renders = await big.evaluate(() => (window as unknown as Probe).__renders);
      const full = renders.filter((r) => r.rows === n);
      if (n > 100_000) {
        assert.equal(full[0].spansReady, false, `${n} records: the first frame of them all is drawn before the spans are paired`);
      } else {
        assert.ok(
          full.every((r) => r.spansReady),
          `${n} records: every frame of them all pairs its spans itself`,
        );
      }
      assert.equal(full.at(-1)!.spansReady, true, `${n} records: drawn again with its spans`);
      assert.deepEqual(unexpected(errors), []);
      await big.close();
    }
  });

  it('standalone export opens offline and answers details from embedded data', async () => {
    const errors: string[] = [];
    const page2 = await session.newPage({ path: null, errors });
    const requested: string[] = [];
    await page2.route('**/*', (route) => {
      requested.push(route.request().url());
      if (route.request().url() === served.url + '/standalone.html') return route.continue();
      return route.abort();
    });
    await page2.goto(served.url + '/standalone.html');
    await page2.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records'));
    await groupLanes(page2, 'cpu');
    assert.deepEqual(requested, [served.url + '/standalone.html'], 'nothing else is fetched');
    assert.equal(await page2.title(), 'Ringside export test');
    await page2.waitForSelector('.rs-lane-label[data-lane="cpu:1"]');
    const p = await page2.evaluate(() => {
      const lane = document.querySelector('.rs-lane-label[data-lane="cpu:1"]') as HTMLElement;
      const r = document.querySelector('.rs-overlay')!.getBoundingClientRect();
      const a = document.querySelector('.rs-axis') as SVGElement;
      const d0 = Number(a.dataset.domainStart);
      const d1 = Number(a.dataset.domainEnd);
      return { x: r.left + ((505000 - d0) / (d1 - d0)) * r.width, y: r.top + parseFloat(lane.style.top) + parseFloat(lane.style.height) / 2 };
    });
    await page2.mouse.click(p.x, p.y);
    await page2.waitForFunction(() => document.querySelector('#rs-details .rs-remote-details')?.textContent?.includes('embedded detail'));
    // Only one row's details are embedded: the field filter says it needs the live panel.
    await page2.fill('#rs-filter input', 'field.period=10000');
    await page2.waitForFunction(() => document.querySelector('.rs-filter-error')?.textContent?.includes('needs the live panel'));
    assert.deepEqual(unexpected(errors), []);
    await page2.screenshot({ path: path.join(ARTIFACTS, 'webview-standalone.png') });
    await page2.close();
  });

  it("standalone export with every row's details answers field filters offline", async () => {
    const errors: string[] = [];
    const page3 = await session.newPage({ path: '/standalone-complete.html', status: '116 records', errors, grouping: 'cpu' });
    await page3.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 3);
    const rows = smallRows();
    await page3.fill('#rs-filter input', 'field.tid=0x65'); // 101, numerically
    await page3.waitForFunction(() => document.querySelectorAll('.rs-lane-label').length === 1);
    assert.equal(await text(page3, '.rs-lane-label .rs-lane-count'), String(rows.filter((r) => r.tid === 101).length));
    await page3.fill('#rs-filter input', 'field.addr~0X100');
    // Rows 0..15 (addresses 0x1000..0x100f), case-insensitively, across whichever lanes they fall in.
    await page3.waitForFunction(
      () => [...document.querySelectorAll('.rs-lane-label .rs-lane-count')].reduce((sum, e) => sum + Number(e.textContent), 0) === 16,
    );
    assert.equal(await text(page3, '.rs-filter-error'), '');
    assert.deepEqual(unexpected(errors), []);
    await page3.close();
  });
});
