// Browser tests of two compared captures and the call tree's drawer: the two charts and the drawer never overlap (bounding
// boxes of axes, labels and headings at 1280×800 and 1920×1080, dark and light), the coverage table lists the shown
// captures' rings only, the Difference tab subtracts the shown capture from the compared one (helper's samples double:
// +100 %), transforms show as removable breadcrumbs, and clearing a stack: filter forgets the chosen function and the
// flame graph's zoom. The built bundle in Debian Chromium, as in captures.browser.test.ts.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { ARTIFACTS, afterFrames, openTimelinePage, type TimelineSession } from './harness';

type Probe = { __stream(which: string): Promise<number> };
const stream = (page: Page, which: string) => page.evaluate((w) => (window as unknown as Probe).__stream(w), which);

interface Box {
  what: string;
  chart: number;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The boxes that must not overlap: per chart its axis, axis label, coverage strip and label, lanes; the drawer and its headings. */
function measure(page: Page): Promise<Box[]> {
  return page.evaluate(() => {
    const out: Box[] = [];
    const add = (what: string, chart: number, e: Element | null) => {
      if (!e) return;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      out.push({ what, chart, left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    };
    document.querySelectorAll('.rs-timeline').forEach((root, chart) => {
      add('axis', chart, root.querySelector('.rs-axis'));
      add('axis label', chart, root.querySelector('.rs-axis-row .rs-axis-corner'));
      add('coverage', chart, root.querySelector('.rs-coverage'));
      add('coverage label', chart, root.querySelector('.rs-coverage-label'));
      add('lanes', chart, root.querySelector('.rs-scroll'));
    });
    add('drawer', -1, document.querySelector('.rs-drawer'));
    return out;
  });
}

/** Headings inside the drawer must lie within it (a heading over a chart is what the issue saw). */
function drawerHeadings(page: Page): Promise<{ text: string; top: number; bottom: number }[]> {
  return page.evaluate(() => {
    const drawer = document.querySelector('.rs-drawer')!;
    return [...drawer.querySelectorAll('h2, h3, .rs-range .rs-hint, .rs-range h2')]
      .map((h) => {
        const r = h.getBoundingClientRect();
        return { text: h.textContent ?? '', top: r.top, bottom: r.bottom };
      })
      .filter((h) => h.bottom > h.top);
  });
}

/** The boxes and the drawer's headings, once a measure equals the one a frame before (at most 50 tries). */
async function settledLayout(page: Page): Promise<{ boxes: Box[]; headings: { text: string; top: number; bottom: number }[] }> {
  let before = '';
  for (let attempt = 0; ; attempt++) {
    await afterFrames(page);
    const now = { boxes: await measure(page), headings: await drawerHeadings(page) };
    const text = JSON.stringify(now);
    if (text === before || attempt === 50) return now;
    before = text;
  }
}

const overlaps = (a: Box, b: Box) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;

describe('two compared captures and the call tree drawer in Chromium', function () {
  this.timeout(90000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors, viewport: { width: 1280, height: 800 } });
    page = session.page;
    await stream(page, 'small');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records · 1 snapshot'));
    await stream(page, 'smallDoubled');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('141 records · 2 snapshots'));
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.click('.rs-snapshot[data-snapshot="snap-3"] button', { modifiers: ['Control'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 2);
  });

  after(() => session?.close());

  // The window sizes, and the panel's own size inside code-server's window of that size (activity bar, title, tabs and
  // status bar taken off; the panel is what the page gets).
  for (const [width, height] of [
    [1280, 800],
    [1920, 1080],
    [1232, 690],
    [1872, 970],
    [1232, 560],
  ] as const) {
    for (const theme of ['vscode-dark', 'vscode-light']) {
      it(`at ${width}×${height} (${theme}) the two charts and the drawer do not overlap`, async () => {
        await page.setViewportSize({ width, height });
        await page.evaluate((cls) => {
          document.body.className = cls;
        }, theme);
        // The layout settles after the resize over a few frames and idle slices (stack-chart boxes are built in idle
        // time, and the lane area fits its content): measure once two measures a frame apart agree.
        const { boxes, headings } = await settledLayout(page);
        for (const chart of [0, 1]) {
          for (const what of ['axis', 'axis label', 'coverage', 'coverage label', 'lanes']) {
            assert.ok(
              boxes.some((b) => b.chart === chart && b.what === what),
              `chart ${chart} shows its ${what}: ${JSON.stringify(boxes)}`,
            );
          }
        }
        const lanes = boxes.filter((b) => b.what === 'lanes');
        assert.ok(
          lanes.every((b) => b.bottom - b.top >= 40),
          `each chart keeps room for its lanes: ${JSON.stringify(lanes)}`,
        );
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i], boxes[j]];
            if (a.chart === b.chart && a.chart >= 0) continue; // a chart's own parts sit side by side by design
            assert.ok(!overlaps(a, b), `${a.what} of chart ${a.chart} overlaps ${b.what} of chart ${b.chart}: ${JSON.stringify([a, b])}`);
          }
        }
        const drawer = boxes.find((b) => b.what === 'drawer')!;
        const chartBottom = Math.max(...boxes.filter((b) => b.chart >= 0).map((b) => b.bottom));
        for (const h of headings) {
          assert.ok(h.top >= drawer.top - 0.5, `"${h.text}" starts inside the drawer, not over a chart (${h.top} < ${drawer.top})`);
          assert.ok(h.top >= chartBottom - 0.5 || h.bottom <= drawer.top, `"${h.text}" is below the charts`);
        }
        await page.screenshot({ path: path.join(ARTIFACTS, `webview-compare-${width}-${theme}.png`) });
      });
    }
  }

  it("chips show the capture time whatever the name's length, and a limitation note wraps inside the 260 px chip", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.evaluate(() => {
      const g = window as unknown as {
        RingsideSynthetic: {
          snapshot(...a: unknown[]): { start: { limitations?: string[]; takenAtMs: number } };
          smallRows(): unknown[];
          stream(send: unknown, snaps: unknown[], onPost: unknown): Promise<number>;
        };
        __send: unknown;
        __onPost: unknown;
      };
      const snap = g.RingsideSynthetic.snapshot(
        'snap-long',
        'demo (pid 28131): task-clock, mem:demo_rounds:w, syscalls:sys_enter_write',
        g.RingsideSynthetic.smallRows(),
        5_000_100_000_000n,
        50,
      );
      snap.start.takenAtMs = Date.UTC(2026, 0, 2, 3, 4, 5);
      snap.start.limitations = ['hardware breakpoints do not fire on this machine: the hypervisor does not pass debug registers through'];
      return g.RingsideSynthetic.stream(g.__send, [snap], g.__onPost);
    });
    const chip = page.locator('.rs-snapshot[data-snapshot="snap-long"] .rs-snapshot-button');
    await chip.waitFor();
    const fit = await chip.evaluate((button) => {
      const box = button.getBoundingClientRect();
      const part = (selector: string) => {
        const e = button.querySelector(selector) as HTMLElement;
        const r = e.getBoundingClientRect();
        return { text: e.textContent ?? '', left: r.left, right: r.right, bottom: r.bottom, clipped: e.scrollWidth > e.clientWidth + 1 };
      };
      return {
        box: { left: box.left, right: box.right, bottom: box.bottom, width: box.width },
        time: part('.rs-snapshot-time'),
        meta: part('.rs-snapshot-meta'),
        note: part('.rs-snapshot-limit'),
      };
    });
    assert.ok(fit.box.width <= 260.5, `the chip keeps its 260 px: ${fit.box.width}`);
    assert.match(fit.time.text, /^\d\d:\d\d:\d\d$/);
    assert.ok(fit.time.right <= fit.box.right && fit.meta.right <= fit.box.right && !fit.meta.clipped, `the time is not cut: ${JSON.stringify(fit)}`);
    assert.equal(fit.note.text, 'hardware breakpoints do not fire on this machine');
    assert.ok(!fit.note.clipped && fit.note.right <= fit.box.right && fit.note.bottom <= fit.box.bottom + 0.5, `the note wraps inside: ${JSON.stringify(fit)}`);
    // Back to snapshot 1 shown (the new capture was shown on arrival), still compared with helper doubled.
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records · 3 snapshots'));
    assert.equal(await page.locator('.rs-timeline').count(), 2);
  });

  it('lists the rings of the two captures on the page in the coverage table, not of every capture kept', async () => {
    const names = () => page.$$eval('.rs-coverage-table tbody tr td:first-child', (tds) => [...new Set(tds.map((t) => t.textContent))]);
    assert.deepEqual(await names(), ['snapshot 1', 'helper doubled']);
    await page.click('.rs-snapshot[data-snapshot="snap-3"] button', { modifiers: ['Control'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 1);
    assert.deepEqual(await names(), ['snapshot 1']);
    await page.click('.rs-snapshot[data-snapshot="snap-3"] button');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('141 records'));
    assert.deepEqual(await names(), ['helper doubled']);
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.click('.rs-snapshot[data-snapshot="snap-3"] button', { modifiers: ['Control'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 2);
  });

  it("subtracts the shown capture from the compared one: helper's samples double, +100 %, red in the flame graph", async () => {
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.evaluate(() => {
      document.body.className = 'vscode-dark';
    });
    const tab = page.locator('#rs-calltree .rs-calltree-mode[data-mode="diff"]');
    await tab.waitFor({ state: 'visible' });
    await tab.click();
    const rows = () => page.$$eval('.rs-diff-functions tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    await page.locator('.rs-diff-functions').waitFor();
    const byName = new Map((await rows()).map((r) => [r[0], r]));
    // A: helper 25, busy_loop 76 self of 101; B: helper 50, busy_loop 76 of 126.
    const pp = (b: number, nb: number, a: number, na: number) => {
      const d = (100 * b) / nb - (100 * a) / na;
      return `${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(2)} pp`;
    };
    assert.deepEqual(byName.get('helper'), ['helper', '25', '50', pp(50, 126, 25, 101), '+100 %', pp(50, 126, 25, 101)]);
    // busy_loop is on every stack: its total share stays 100 %.
    assert.deepEqual(byName.get('busy_loop'), ['busy_loop', '76', '76', pp(76, 126, 76, 101), '0 %', '0.00 pp']);
    assert.equal((await rows())[0][0], 'helper', 'sorted by the size of the change of share: helper first');
    await page.click('.rs-diff-sort[data-sort="name"]');
    assert.deepEqual(
      (await rows()).map((r) => r[0]),
      ['busy_loop', 'helper', 'main'],
    );
    await page.click('.rs-diff-sort[data-sort="self-change"]');
    assert.deepEqual(
      (await rows()).map((r) => r[0]),
      ['helper', 'busy_loop', 'main'],
    );

    await page.click('.rs-diff-modes [data-diff-mode="flame"]');
    const boxes = JSON.parse((await page.getAttribute('canvas.rs-diff-flame', 'data-boxes')) ?? '[]') as { name: string; delta: number; color: string }[];
    const helper = boxes.find((b) => b.name === 'helper')!;
    const [r, g, b] = /rgb\((\d+), (\d+), (\d+)\)/.exec(helper.color)!.slice(1).map(Number);
    assert.ok(helper.delta > 0 && r === 255 && g < 255 && b < 255, `helper has a larger share in B: red (${helper.color})`);
    const loop = boxes.find((x) => x.name === 'busy_loop')!;
    assert.equal(loop.delta, 0, 'busy_loop is on every stack of both: no change of total share');
    // The painted pixel in helper's box is the colour the box says.
    const pixel = await page.evaluate(() => {
      const c = document.querySelector('canvas.rs-diff-flame') as HTMLCanvasElement;
      const drawn = JSON.parse(c.dataset.boxes!) as { name: string; x: number; y: number; width: number }[];
      const h = drawn.find((d) => d.name === 'helper')!;
      const dpr = c.width / parseFloat(c.style.width);
      return Array.from(
        c
          .getContext('2d')!
          .getImageData(Math.round((h.x + 1) * dpr), Math.round((h.y + 2) * dpr), 1, 1)
          .data.slice(0, 3),
      );
    });
    assert.deepEqual(pixel, [r, g, b]);
    await page.click('.rs-diff-modes [data-diff-mode="tree"]');
    const tree = await page.$$eval('.rs-diff-tree tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    assert.deepEqual(
      tree.map((t) => [t[0], t[1], t[3]]),
      [
        ['101', '126', 'main'],
        ['101', '126', 'busy_loop'],
        ['25', '50', 'helper'],
      ],
    );
    assert.deepEqual(errors, []);
  });

  it('applies transforms from the menu and the keys as removable breadcrumbs', async () => {
    await page.click('#rs-calltree .rs-calltree-mode[data-mode="top-down"]');
    const tree = () =>
      page.$$eval('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node', (trs) =>
        trs.map((tr) => [tr.querySelector('.rs-calltree-fn')!.textContent, tr.querySelector('.rs-calltree-self')!.textContent]),
      );
    const crumbs = () => page.$$eval('.rs-transforms .rs-transform-crumb', (els) => els.map((e) => e.textContent));
    await page.waitForFunction(() => document.querySelectorAll('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node').length === 3);
    assert.deepEqual(await tree(), [
      ['main', '0'],
      ['busy_loop', '76'],
      ['helper', '25'],
    ]);
    assert.equal(await page.locator('.rs-transforms').isHidden(), true, 'no transforms: no breadcrumbs');

    await page.click('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node[data-index="2"]', { button: 'right' });
    await page.click('.rs-transform-menu .rs-transform-item[data-kind="merge-function"]');
    await page.waitForFunction(() => document.querySelectorAll('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node').length === 2);
    assert.deepEqual(
      await tree(),
      [
        ['main', '0'],
        ['busy_loop', '101'],
      ],
      "helper merged: its samples are busy_loop's own",
    );
    assert.deepEqual(await crumbs(), ['Complete tree', 'Merge: helper']);

    // F on the focused busy_loop row: focus on the function.
    await page.focus('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node[data-index="1"]');
    await page.keyboard.press('Shift+F');
    await page.waitForFunction(() => document.querySelectorAll('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node').length === 1);
    assert.deepEqual(await tree(), [['busy_loop', '101']]);
    assert.deepEqual(await crumbs(), ['Complete tree', 'Merge: helper', 'Focus: busy_loop']);

    // × on the merge: only the focus stays, helper is back under busy_loop.
    await page.click('.rs-transform[data-kind="merge-function"] .rs-transform-remove');
    await page.waitForFunction(() => document.querySelectorAll('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node').length === 2);
    assert.deepEqual(await tree(), [
      ['busy_loop', '76'],
      ['helper', '25'],
    ]);
    assert.deepEqual(await crumbs(), ['Complete tree', 'Focus: busy_loop']);
    // The flame graph reads the same transformed tree.
    await page.click('#rs-calltree .rs-calltree-mode[data-mode="flame"]');
    await page.waitForFunction(() => document.querySelector('canvas.rs-flame:not(.rs-diff-flame)')?.getAttribute('data-boxes') === '2');
    await page.click('.rs-transforms .rs-transform-crumb:first-child');
    await page.waitForFunction(() => document.querySelector('canvas.rs-flame:not(.rs-diff-flame)')?.getAttribute('data-boxes') === '3');
    assert.equal(await page.locator('.rs-transforms').isHidden(), true);
    assert.deepEqual(errors, []);
  });

  it("forgets the chosen function and the flame graph's zoom when the stack: filter is cleared", async () => {
    const canvas = page.locator('canvas.rs-flame:not(.rs-diff-flame)');
    const box = (await canvas.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + 18 + 9); // busy_loop, under main
    await page.waitForFunction(() => document.querySelector('canvas.rs-flame')?.getAttribute('data-focus') === 'busy_loop');
    assert.equal(await page.inputValue('#rs-filter input'), 'stack:=busy_loop');
    await page.locator('.rs-calltree-selection', { hasText: 'Tracks show samples through busy_loop' }).waitFor();
    await page.fill('#rs-filter input', '');
    await page.waitForFunction(() => document.querySelector('canvas.rs-flame')?.getAttribute('data-focus') === '');
    assert.equal(await page.locator('.rs-calltree-selection').textContent(), '');
    assert.deepEqual(errors, []);
  });
});
