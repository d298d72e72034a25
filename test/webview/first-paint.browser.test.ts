// Browser test of the page's part in timing a snapshot's stages (issue 34's editor path): once the frame after a
// snapshot's first batch is drawn, the page tells the host (`painted`), once per snapshot, so the Output log can say
// how long the first paint took. The built bundle in Debian Chromium through playwright-core.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { openTimelinePage, type TimelineSession } from './harness';

type Probe = { __posted: { type: string; snapshotId?: string }[]; __stream(which: string): Promise<number> };

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
});
