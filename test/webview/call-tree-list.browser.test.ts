// The call tree's list holds only the rows in view (webview/virtual-rows.ts), in Chromium, on a capture whose tree has
// 301 rows with a count each (synthetic.ts wideCalls): the rows in the page are a window of the whole list, each where
// its index puts it (so the scrollbar is the whole list's), they are the rows the tree has at those indices, scrolling
// brings the others, and a chosen function's row stays marked when it comes back into view.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { allCallTreeRows, openTimelinePage, type TimelineSession } from './harness';
import { WIDE_CALLS } from './synthetic';

interface Row {
  index: number;
  fn: string;
  total: number;
  /** Its top in the table less the heading's height, and its height (CSS px). */
  top: number;
  height: number;
  chosen: boolean;
}

/** The tree worked out from the fixture alone: main over every sample, then f<k> by total (k + 1 samples) descending. */
const SAMPLES = (WIDE_CALLS * (WIDE_CALLS + 1)) / 2;
const EXPECTED = [{ fn: 'main', total: SAMPLES }, ...Array.from({ length: WIDE_CALLS }, (_, i) => ({ fn: `f${WIDE_CALLS - 1 - i}`, total: WIDE_CALLS - i }))];

describe('call tree list: only the rows in view (Chromium)', function () {
  this.timeout(120000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors, viewport: { width: 1280, height: 800 } });
    page = session.page;
    await page.evaluate(() => (window as unknown as { __stream(w: string): Promise<number> }).__stream('wideCalls'));
    await page.waitForFunction(
      (n) =>
        document.querySelector('#rs-calltree .rs-calltree-summary')?.textContent === `${n.toLocaleString('en-US')} samples with callchains · whole capture`,
      SAMPLES,
    );
    await page.waitForSelector('#rs-calltree:not([data-pending]) .rs-calltree-node');
  });

  after(() => session?.close());

  const rendered = (): Promise<Row[]> =>
    page.$$eval('#rs-calltree .rs-calltree-list tbody tr.rs-calltree-node', (trs) => {
      const table = trs[0]?.closest('table') as HTMLTableElement;
      const head = table.tHead!.getBoundingClientRect();
      return trs.map((tr) => {
        const r = tr.getBoundingClientRect();
        return {
          index: Number((tr as HTMLElement).dataset.index),
          fn: tr.querySelector('.rs-calltree-fn')!.textContent!,
          total: Number((tr.querySelector('.rs-calltree-total') as HTMLElement).dataset.count),
          top: r.top - head.bottom,
          height: r.height,
          chosen: tr.classList.contains('rs-chosen'),
        };
      });
    });

  /** Rows in the page: consecutive indices, each the tree's row at its index and laid out where that index is. */
  function assertWindow(rows: Row[], label: string): void {
    assert.ok(rows.length > 0, `${label}: rows shown`);
    rows.forEach((row, k) => {
      assert.equal(row.index, rows[0].index + k, `${label}: consecutive rows`);
      assert.deepEqual({ fn: row.fn, total: row.total }, EXPECTED[row.index], `${label}: row ${row.index}`);
      assert.equal(row.height, 18, `${label}: row ${row.index} is one row tall`);
      assert.equal(row.top, row.index * 18, `${label}: row ${row.index} sits where its index puts it`);
    });
  }

  const scrollBodyTo = (fraction: number) =>
    page.evaluate((f) => {
      const body = document.querySelector('#rs-calltree .rs-calltree-body') as HTMLElement;
      body.scrollTop = f * (body.scrollHeight - body.clientHeight);
    }, fraction);

  it('holds a window of the 301 rows, each the tree row of its index, at its place in the whole list', async () => {
    const rows = await rendered();
    assertWindow(rows, 'at the top');
    assert.equal(rows[0].index, 0);
    assert.ok(rows.length < EXPECTED.length, `${rows.length} of ${EXPECTED.length} rows in the page`);
    assert.equal(await page.getAttribute('#rs-calltree .rs-calltree-list', 'aria-rowcount'), String(EXPECTED.length + 1));
    // The list is as tall as all of its rows: the scroll range reaches the last one.
    const height = await page.$eval(
      '#rs-calltree .rs-calltree-list',
      (t) => t.getBoundingClientRect().height - (t as HTMLTableElement).tHead!.getBoundingClientRect().height,
    );
    assert.equal(height, EXPECTED.length * 18);
  });

  it('brings the rows scrolled into view, down to the last one', async () => {
    await scrollBodyTo(0.5);
    await page.waitForFunction(() => {
      const body = document.querySelector('#rs-calltree .rs-calltree-body') as HTMLElement;
      const box = body.getBoundingClientRect();
      const at = document.elementFromPoint(box.left + 40, box.top + box.height / 2)?.closest('tr');
      return at?.classList.contains('rs-calltree-node') === true;
    });
    const middle = await rendered();
    assertWindow(middle, 'in the middle');
    assert.ok(middle[0].index > 0 && middle[middle.length - 1].index < EXPECTED.length - 1, `rows ${middle[0].index}-${middle[middle.length - 1].index}`);
    await scrollBodyTo(1);
    await page.waitForSelector(`#rs-calltree tr.rs-calltree-node[data-index="${EXPECTED.length - 1}"]`);
    const bottom = await rendered();
    assertWindow(bottom, 'at the bottom');
    assert.equal(bottom[bottom.length - 1].fn, 'f0');
    // The last row is in view at the bottom of the scroll range.
    const inView = await page.$eval(`#rs-calltree tr.rs-calltree-node[data-index="${EXPECTED.length - 1}"]`, (tr) => {
      const body = (tr.closest('.rs-calltree-body') as HTMLElement).getBoundingClientRect();
      const r = tr.getBoundingClientRect();
      return r.top >= body.top && r.bottom <= body.bottom + 1;
    });
    assert.equal(inView, true);
  });

  it("chooses a row's function on click, and the row is still marked when scrolled away and back", async () => {
    const row = page.locator(`#rs-calltree tr.rs-calltree-node[data-index="${EXPECTED.length - 2}"]`);
    await row.click();
    assert.equal(await page.inputValue('#rs-filter input'), 'stack:=f1');
    assert.equal((await rendered()).find((r) => r.fn === 'f1')?.chosen, true);
    await scrollBodyTo(0);
    await page.waitForFunction(() => document.querySelector('#rs-calltree tr.rs-calltree-node[data-index="0"]') !== null);
    assert.equal(await page.locator(`#rs-calltree tr.rs-calltree-node[data-index="${EXPECTED.length - 2}"]`).count(), 0, 'scrolled out of the page');
    await scrollBodyTo(1);
    await page.waitForSelector(`#rs-calltree tr.rs-calltree-node[data-index="${EXPECTED.length - 2}"]`);
    const back = await rendered();
    assert.deepEqual(
      back.filter((r) => r.chosen).map((r) => r.fn),
      ['f1'],
    );
    assert.deepEqual(errors, []);
  });

  it('gives the tests every row of the list through allCallTreeRows, scrolling (the harness the perf.data tests read it by)', async () => {
    const rows = await allCallTreeRows(page);
    assert.deepEqual(
      rows.map((r) => ({ fn: r.fn, total: r.total })),
      EXPECTED,
    );
  });

  it('moves the focus to any row with the arrow, page, Home and End keys, bringing the row into the page', async () => {
    const focused = () =>
      page.evaluate(() => {
        const tr = document.activeElement?.closest('tr.rs-calltree-node') as HTMLElement | null;
        if (!tr) return null;
        const body = (tr.closest('.rs-calltree-body') as HTMLElement).getBoundingClientRect();
        const r = tr.getBoundingClientRect();
        return { index: Number(tr.dataset.index), inView: r.top >= body.top - 1 && r.bottom <= body.bottom + 1 };
      });
    await scrollBodyTo(0);
    await page.waitForFunction(() => document.querySelector('#rs-calltree tr.rs-calltree-node[data-index="0"]') !== null);
    await page.locator('#rs-calltree tr.rs-calltree-node[data-index="0"]').focus();
    await page.keyboard.press('End');
    assert.deepEqual(await focused(), { index: EXPECTED.length - 1, inView: true }, 'End: the last row, which was not in the page');
    await page.keyboard.press('ArrowUp');
    assert.deepEqual(await focused(), { index: EXPECTED.length - 2, inView: true });
    await page.keyboard.press('Home');
    assert.deepEqual(await focused(), { index: 0, inView: true }, 'Home: the first row, scrolled out of the page before');
    // Down one row at a time past the rows the page held at the top: the focus never leaves the list.
    for (let i = 1; i <= 60; i++) await page.keyboard.press('ArrowDown');
    assert.deepEqual(await focused(), { index: 60, inView: true });
    await page.keyboard.press('PageDown');
    const paged = await focused();
    assert.ok(paged && paged.index > 61 && paged.inView, `PageDown from 60 went to ${JSON.stringify(paged)}`);
    await page.keyboard.press('PageUp');
    assert.deepEqual(await focused(), { index: 60, inView: true });
    assert.deepEqual(errors, []);
  });
});
