// Browser test of the page's part in timing a snapshot's stages (issue 34's editor path): once the frame after a
// snapshot's first batch is drawn, the page tells the host (`painted`), once per snapshot, so the Output log can say
// how long the first paint took. The built bundle in Debian Chromium through playwright-core.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openTimelinePage, type TimelineSession } from './harness';

type Probe = { __posted: { type: string; snapshotId?: string }[]; __stream(which: string): Promise<number> };

/** What the quiet-page test reads: the page's app and its one timeline's frame count. */
type Quiet = {
  ringside: {
    receive(message: unknown): void;
    store: { length: number };
    timeline: { renderCount: number; scheduler: { isPending: boolean }; layout: { spansReady: boolean } };
  };
  RingsideSynthetic: Record<string, (n?: number) => { start: unknown; batches: unknown[] }>;
};

describe('first paint of a snapshot (Chromium)', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors });
    page = session.page;
  });
  after(() => session?.close());

  it('says once per snapshot that its first batch is painted, after its lanes are drawn', async () => {
    await page.evaluate(() => (window as unknown as Probe).__stream('small'));
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'painted' && m.snapshotId === 'snap-1'));
    // By then the frame holds its lanes and records (its first batch at least).
    const label = (await page.getAttribute('.rs-canvas', 'aria-label')) ?? '';
    const shown = /^Timeline: ([\d,]+) records in (\d+) lanes$/.exec(label);
    assert.ok(shown && Number(shown[1].replace(/,/g, '')) >= 50 && Number(shown[2]) > 0, label);
    await page.evaluate(() => (window as unknown as Probe).__stream('second'));
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'painted' && m.snapshotId === 'snap-2'));
    const painted = await page.evaluate(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'painted').map((m) => m.snapshotId));
    assert.deepEqual(painted, ['snap-1', 'snap-2']);
    assert.deepEqual(errors, []);
  });

  // A capture that arrives whole (as a bench or a restored panel hands it over) is drawn once: the frame that sized the
  // lane area for it asked for a second frame of the same view, through the viewport's zoom event and through the
  // ResizeObserver of the size it had set itself. Counted in frames, not timed.
  for (const [which, rows] of [
    ['bigStacks', 20_000],
    ['big', 20_000],
  ] as const) {
    it(`draws a whole ${which} capture in one frame and asks for no other while nothing changes`, async () => {
      const quiet = await session.newPage({ viewport: { width: 1280, height: 800 } });
      try {
        const before = await quiet.evaluate(() => (window as unknown as Quiet).ringside.timeline.renderCount);
        await quiet.evaluate(
          ([name, n]) => {
            const w = window as unknown as Quiet;
            const snapshot = w.RingsideSynthetic[name](n);
            for (const message of [snapshot.start, ...snapshot.batches]) w.ringside.receive(message);
          },
          [which, rows] as const,
        );
        // Settled: every row drawn, the spans paired (idle time's work, which may ask for its frame), no frame pending;
        // then a few more frames in which nothing may be drawn.
        await quiet.waitForFunction((n) => {
          const w = window as unknown as Quiet;
          return w.ringside.store.length === n && w.ringside.timeline.layout.spansReady && !w.ringside.timeline.scheduler.isPending;
        }, rows);
        const renders = await quiet.evaluate(async () => {
          const timeline = (window as unknown as Quiet).ringside.timeline;
          for (let i = 0; i < 5; i++) await new Promise((r) => requestAnimationFrame(r));
          return timeline.renderCount;
        });
        assert.equal(renders - before, 1, `frames drawn for one capture that arrived whole: ${renders - before}`);
      } finally {
        await quiet.close();
      }
    });
  }
});
