// The call tree's aggregation runs in its Web Worker, not on the page's main thread: on a large synthetic capture with
// callchains, a selection returns at once with the pane marked pending, the worker computes it (its own counter says
// so, the page's stays 0), the columns went to it once (not per selection), an answer a newer selection replaced is
// dropped, and the counts are the exact ones. No wall-clock threshold: where the work ran is what is asserted.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openTimelinePage, type TimelineSession } from './harness';
import type { AggregationStats } from '../../webview/aggregation';

const N = 400_000;

interface PageApp {
  ringside: {
    callTree: { aggregation: { stats(): AggregationStats }; setSelection(s: unknown, label: string): void };
    timeline: { shownRows(): unknown };
  };
}

describe('call tree aggregation in a Web Worker (Chromium)', function () {
  this.timeout(120000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors, warnings: true });
    page = session.page;
    await page.evaluate((n) => (window as unknown as { __stream(w: string, n: number): Promise<number> }).__stream('bigStacks', n), N);
    await page.waitForFunction(
      (n) =>
        document.querySelector('#rs-calltree .rs-calltree-summary')?.textContent === `${n.toLocaleString('en-US')} samples with callchains · whole capture`,
      N,
      { timeout: 60000 },
    );
  });

  after(() => session?.close());

  const stats = () => page.evaluate(() => (window as unknown as PageApp).ringside.callTree.aggregation.stats());
  const summary = () => page.locator('#rs-calltree .rs-calltree-summary').innerText();

  it("a selection is counted in the worker while the page stays free, and a replaced selection's answer is dropped", async () => {
    const before = await stats();
    assert.equal(before.worker, true, "the worker started under the page's policy (worker-src blob:)");
    assert.equal(before.computedOnPage, 0);
    assert.ok(before.computedInWorker >= 1, "the whole capture's tree came from the worker");
    const returned = await page.evaluate(() => {
      const app = (window as unknown as PageApp).ringside;
      // Two selections back to back: the first is replaced before the worker answers it.
      app.callTree.setSelection({ range: [0, 5e8], shown: null }, 'first range');
      app.callTree.setSelection({ range: [0, 2.5e8], shown: null }, 'selected range');
      // Both calls returned without counting a single sample: the pane waits for the worker.
      return (document.querySelector('#rs-calltree') as HTMLElement).dataset.pending === 'true';
    });
    assert.equal(returned, true, 'setSelection returns before the tree is built');
    // The page answers a frame while the worker counts (or has counted) — it never waited for the tree.
    await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => r())));
    await page.waitForSelector('#rs-calltree:not([data-pending])');
    // Rows 0 .. N/4 have times in [0, 0.25 s] (time = floor(i·1e9/N)).
    assert.equal(await summary(), `${(N / 4 + 1).toLocaleString('en-US')} samples with callchains · selected range`);
    const after = await stats();
    assert.equal(after.computedInWorker - before.computedInWorker, 2, 'both selections were computed by the worker');
    assert.equal(after.computedOnPage, 0, 'nothing was counted on the main thread');
    assert.equal(after.dropped - before.dropped, 1, "the replaced selection's answer was dropped");
    assert.equal(after.columnsSent, before.columnsSent, 'the columns went to the worker once, not per selection');
    await page.click('#rs-calltree button[data-mode="bottom-up"]');
    const roots = await page.$$eval('#rs-calltree .rs-calltree-node[data-depth="1"] .rs-calltree-total', (cells) =>
      cells.map((c) => Number((c as HTMLElement).dataset.count)),
    );
    assert.equal(roots.length, 16);
    assert.equal(
      roots.reduce((a, b) => a + b, 0),
      N / 4 + 1,
    );
    await page.click('#rs-calltree button[data-mode="top-down"]');
  });

  it('a filtered selection sends the shown rows once and counts only them', async () => {
    await page.fill('#rs-filter input', 'tid:300');
    await page.waitForFunction(() => document.querySelector('#rs-match-count')?.textContent?.includes('match'));
    const before = await stats();
    await page.evaluate(() => {
      const app = (window as unknown as PageApp).ringside;
      app.callTree.setSelection({ range: [0, 2.5e8], shown: app.timeline.shownRows() }, 'selected range');
    });
    await page.waitForSelector('#rs-calltree:not([data-pending])');
    // tid 300 is every fourth row: rows 0, 4, ..., N/4.
    assert.equal(await summary(), `${(N / 16 + 1).toLocaleString('en-US')} samples with callchains · selected range`);
    const after = await stats();
    assert.equal(after.computedInWorker - before.computedInWorker, 1);
    assert.equal(after.computedOnPage, 0);
    assert.deepEqual(errors, []);
  });
});
