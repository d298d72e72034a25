// Browser test of live follow on the page: the "Follow live" box asks the host to follow, the live capture grows by
// the host's appends (each acknowledged) and drops the rows that fall out of its window, and the selected record stays
// selected while rows before it go. The built bundle in Debian Chromium through playwright-core; the appends are
// what extension/panel/live-follow.ts sends (test/webview/synthetic.ts liveAppend).

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { afterFrames, openTimelinePage, type TimelineSession } from './harness';
import { US } from './synthetic';

interface Posted {
  type: string;
  [k: string]: unknown;
}
type Probe = {
  __posted: Posted[];
  __send(m: unknown): void;
  __domain(): [number, number];
  RingsideSynthetic: { liveAppend(seq: number, firstRow: number, from: number, count: number, step: number, keepFrom: number): unknown };
};

const posted = (page: Page, type: string) => page.evaluate((t) => (window as unknown as Probe).__posted.filter((m) => m.type === t), type);
const status = async (page: Page) => (await page.locator('.rs-status').textContent()) ?? '';
const laneCounts = (page: Page) =>
  page.$$eval('.rs-lane-label', (els) => els.map((e) => [(e as HTMLElement).dataset.lane, e.querySelector('.rs-lane-count')!.textContent]));

/** Sends live append `seq` (see synthetic.ts liveAppend) and waits until the page acknowledged it. */
async function append(page: Page, seq: number, firstRow: number, from: number, count: number, step: number, keepFrom: number): Promise<void> {
  await page.evaluate(
    (a) => {
      const w = window as unknown as Probe;
      w.__send(w.RingsideSynthetic.liveAppend(a.seq, a.firstRow, a.from, a.count, a.step, a.keepFrom));
    },
    { seq, firstRow, from, count, step, keepFrom },
  );
  await page.waitForFunction((s) => (window as unknown as Probe).__posted.some((m) => m.type === 'liveAck' && m.seq === s && m.snapshotId === 'live-1'), seq);
  await afterFrames(page);
}

describe('live follow on the page (Chromium)', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors });
    page = session.page;
  });
  after(() => session?.close());

  it('asks the host to follow when the box is ticked, and says what the host follows', async () => {
    assert.deepEqual(await posted(page, 'liveFollow'), [], 'nothing is followed until asked');
    await page.click('#rs-follow');
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'liveFollow' && m.on === true));
    await page.evaluate(() => (window as unknown as Probe).__send({ type: 'liveState', state: 'following', detail: 'worker (last 30 s)' }));
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.includes('live: worker (last 30 s)'));
  });

  it('grows the live capture by each append and shows it, fitted, as it grows', async () => {
    // 100 samples over 0–990 µs, then 100 more over 1000–1990 µs: nothing falls out of a 30 s window.
    await append(page, 0, 0, 0, 100, 10 * US, -30e9);
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('100 records · 1 snapshot'));
    assert.match((await page.locator('.rs-snapshot-meta').textContent()) ?? '', /live · 100 records/);
    // A one-thread process is its thread's lane alone.
    assert.deepEqual(await laneCounts(page), [['thread:100', '100']]);
    await append(page, 1, 100, 1000 * US, 100, 10 * US, -30e9);
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('200 records · 1 snapshot'));
    const [start, end] = await page.evaluate(() => (window as unknown as Probe).__domain());
    assert.ok(start < 0 && start > -100 * US && end > 1990 * US && end < 2100 * US, `fitted to 0–1990 µs: ${start}, ${end}`);
  });

  it('drops what falls out of the window: rows, counts and the time range, and keeps the selected record selected', async () => {
    // Select the newest record (End), whose live row is 199.
    await page.focus('.rs-scroll');
    await page.keyboard.press('End');
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'detailsRequest' && m.row === 199));
    const requestsBefore = (await posted(page, 'detailsRequest')).length;
    // The window now starts at 1500 µs: the 150 samples before it fall out (more than an eighth of 225 held).
    await append(page, 2, 200, 2000 * US, 25, 10 * US, 1500 * US);
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('75 records · 1 snapshot'));
    assert.deepEqual(await laneCounts(page), [['thread:100', '75']]);
    const [start] = await page.evaluate(() => (window as unknown as Probe).__domain());
    assert.ok(start > 1400 * US && start < 1500 * US, `the view starts at the window: ${start}`);
    // The selection followed its record down the store: the details ask for the same live row again.
    const requests = await posted(page, 'detailsRequest');
    assert.ok(requests.length > requestsBefore, 'the details were asked for again');
    assert.deepEqual({ snapshotId: requests.at(-1)!.snapshotId, row: requests.at(-1)!.row }, { snapshotId: 'live-1', row: 199 });
    // A record that fell out is not selectable any more: Home selects the oldest held (live row 150).
    await page.focus('.rs-scroll');
    await page.keyboard.press('Home');
    await page.waitForFunction(() => (window as unknown as Probe).__posted.at(-1)?.type === 'detailsRequest');
    assert.equal((await posted(page, 'detailsRequest')).at(-1)!.row, 150);
  });

  it('keeps only the window while appends go on, and the capture stays out of what a resync asks for', async () => {
    // 40 more appends of 25 samples, the window 500 µs long: it holds at most the window plus an eighth.
    let row = 225;
    for (let k = 0; k < 40; k++) {
      const from = 2250 * US + k * 250 * US;
      await append(page, 3 + k, row, from, 25, 10 * US, from + 250 * US - 500 * US);
      row += 25;
    }
    const held = Number(/^([\d,]+) records/.exec(await status(page))![1].replace(/,/g, ''));
    assert.ok(held >= 50 && held <= Math.ceil(50 * (1 + 1 / 8)) + 25, `held ${held} records: the window's 50, plus at most an eighth and one append`);
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'resync'));
    const [resync] = await posted(page, 'resync');
    assert.deepEqual(resync.have, [], "the live capture is the follower's, not a snapshot to send again");
    assert.deepEqual(errors, []);
  });
});

// Open perf.data on the page: the file's capture grows by the host's parts (liveAppends marked `opening`, what
// extension/panel/streamer.ts grow sends) while the host reads the file: shown at once without "Follow live", its first
// paint reported, every row kept whatever `keepFromNs` says, not a live capture (nor the one Follow live shows), named
// by one snapshotSymbols at the end, and asked for again on resync like a snapshot.
describe('a perf.data being opened grows on the page (Chromium)', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors });
    page = session.page;
  });
  after(() => session?.close());

  /** Part `seq` of the file (see synthetic.ts liveAppend), marked opening, its names to follow; waits for its acknowledgement. */
  async function part(seq: number, firstRow: number, from: number, count: number): Promise<void> {
    await page.evaluate(
      (a) => {
        const w = window as unknown as Probe;
        // A window that would drop every row of a followed recording: a file keeps them all.
        const message = w.RingsideSynthetic.liveAppend(a.seq, a.firstRow, a.from, a.count, 10_000, 1e12) as { part: object; batch: object };
        const batch = { ...message.batch } as Record<string, unknown>;
        delete batch.symbolIndex;
        delete batch.symbolTable;
        w.__send({ ...message, part: { ...message.part, namesFollow: true }, batch, opening: true });
      },
      { seq, firstRow, from, count },
    );
    await page.waitForFunction((s) => (window as unknown as Probe).__posted.some((m) => m.type === 'liveAck' && m.seq === s && m.snapshotId === 'live-1'), seq);
    await afterFrames(page);
  }

  it('shows the first part at once and reports its paint, keeps every row of the next, and fills the names in at the end', async () => {
    assert.equal(await page.locator('#rs-follow').isChecked(), false);
    await part(0, 0, 0, 100);
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'painted' && m.snapshotId === 'live-1'));
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('100 records · 1 snapshot'));
    assert.match(await status(page), /function names still coming/);
    assert.equal(await page.locator('.rs-snapshot-button').getAttribute('aria-pressed'), 'true', 'shown');
    assert.doesNotMatch((await page.locator('.rs-snapshot-meta').textContent()) ?? '', /live/);
    await part(1, 100, 1000 * US, 150);
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('250 records · 1 snapshot'));
    assert.deepEqual(await laneCounts(page), [['thread:100', '250']]);
    assert.equal((await posted(page, 'painted')).length, 1, 'its first paint, once');

    await page.evaluate(() =>
      (window as unknown as Probe).__send({
        type: 'snapshotSymbols',
        snapshotId: 'live-1',
        symbolIndex: new Int32Array(250).fill(0).buffer,
        symbolTable: ['busy_loop'],
      }),
    );
    await page.waitForFunction(() => !document.querySelector('.rs-status')?.textContent?.includes('names'));

    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'resync'));
    const [resync] = await posted(page, 'resync');
    assert.deepEqual(resync.have, [{ snapshotId: 'live-1', rows: 250 }], "the file's capture is the host streamer's: asked for again");
    assert.deepEqual(errors, []);
  });
});
