// Browser tests of one view per capture: the page keeps every capture it received and shows one, fitted and
// named; the strip switches between them; records without a time never stretch the axis; one time base (time
// since the capture's start, or the perf clock on demand) for the axis, tooltips, details and the range summary.
// The built bundle in Debian Chromium through playwright-core, as in timeline.browser.test.ts.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { ARTIFACTS, afterFrames, openTimelinePage, type TimelineSession } from './harness';
import { PERFDATA_FIRST_NS, SMALL_ORIGIN, US } from './synthetic';

interface Posted {
  type: string;
  [k: string]: unknown;
}
type Probe = {
  __posted: Posted[];
  __stream(which: string): Promise<number>;
  __domain(): [number, number];
  __point(key: string, t: number): { x: number; y: number };
  __send(m: unknown): void;
  __getState(): { perfClock?: boolean } | undefined;
};

const posted = (page: Page, type: string) => page.evaluate((t) => (window as unknown as Probe).__posted.filter((m) => m.type === t), type);
const domain = (page: Page) => page.evaluate(() => (window as unknown as Probe).__domain());
const stream = (page: Page, which: string) => page.evaluate((w) => (window as unknown as Probe).__stream(w), which);
const status = async (page: Page) => (await page.locator('.rs-status').textContent()) ?? '';
const shownName = async (page: Page) => await page.locator('.rs-snapshot-button[aria-pressed="true"] .rs-snapshot-name').allTextContents();
const lanes = (page: Page) =>
  page.$$eval('.rs-lane-label', (els) => els.map((e) => [(e as HTMLElement).dataset.lane, e.querySelector('.rs-lane-count')!.textContent]));
const ticks = (page: Page) => page.$$eval('.rs-axis .tick text', (els) => els.map((e) => e.textContent ?? ''));

/** Axis labels that count time since the capture's start: one unit below a second, and a 0 among them. */
function sinceStart(labels: readonly string[]): boolean {
  const unit = / (ns|µs|ms)$/.exec(labels[0] ?? '')?.[1];
  return unit !== undefined && labels.every((l) => new RegExp(`^-?\\d+(\\.\\d+)? ${unit}$`).test(l)) && labels.some((l) => /^0(\.0+)? /.test(l));
}

/** The window Fit shows for records from `first` to `last` (store ns): the span (at least 500 ns) with 2% on each side. */
function fitted(first: number, last: number): [number, number] {
  const span = Math.max(last - first, 500);
  return [first - span * 0.02, first + span * 1.02];
}

function assertDomain(actual: [number, number], expected: [number, number], what: string): void {
  assert.ok(Math.abs(actual[0] - expected[0]) < 2 && Math.abs(actual[1] - expected[1]) < 2, `${what}: axis ${actual}, expected ${expected}`);
}

describe('one view per capture in Chromium', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors, grouping: 'cpu' });
    page = session.page;
  });

  after(() => session?.close());

  it('shows a second capture fitted and named, and the strip switches back to the first', async () => {
    await stream(page, 'small');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records · 1 snapshot'));
    await afterFrames(page);
    assertDomain(await domain(page), fitted(0, 1005 * US), 'the first capture opens fitted');
    assert.deepEqual(await shownName(page), ['snapshot 1']);

    await stream(page, 'second');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('51 records · 2 snapshots'));
    await afterFrames(page);
    // snapshot 2's origin is 2 ms after the first's: its records sit at 2.0–2.5 ms of the page's internal clock.
    assertDomain(await domain(page), fitted(2_000_000, 2_500_000), 'Capture Snapshot switches to the new capture, fitted');
    assert.deepEqual(await shownName(page), ['snapshot 2']);
    assert.deepEqual(await lanes(page), [['cpu:1', '51']], 'only its records are on the lanes');
    assert.match((await page.getAttribute('.rs-canvas', 'aria-label')) ?? '', /^Timeline: 51 records in 1 lanes$/);
    assert.deepEqual(await page.$$eval('.rs-boundary-label', (els) => els.map((e) => e.textContent)), ['snapshot 2']);
    // The axis counts from the capture's start: 0 at its first record, not 2 ms.
    const labels = await ticks(page);
    assert.ok(sinceStart(labels), `axis since the capture's start: ${labels}`);

    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records · 2 snapshots'));
    await afterFrames(page);
    assertDomain(await domain(page), fitted(0, 1005 * US), 'the strip shows the first capture again, fitted');
    assert.deepEqual(await shownName(page), ['snapshot 1']);
    assert.deepEqual(await lanes(page), [
      ['watch:mem:counter:w', '2'],
      ['cpu:0', '13'],
      ['cpu:1', '103'],
    ]);
    assert.equal(await page.getAttribute('.rs-snapshot[data-snapshot="snap-2"] button', 'aria-pressed'), 'false');
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-captures.png') });
  });

  it('fits a perf.data capture to its timed records; the untimed ones are counted, not placed', async () => {
    await stream(page, 'perfData');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('55 records · 3 snapshots'));
    await afterFrames(page);
    assert.deepEqual(await shownName(page), ['pd_work.data'], 'named by its file, as the host names it');
    assert.match(await status(page), /· 5 without a time/);
    // The store's clock starts at the first capture's origin (5000 s); the samples are at 7000 s of the perf clock.
    const first = PERFDATA_FIRST_NS - Number(SMALL_ORIGIN);
    const d = await domain(page);
    assertDomain(d, fitted(first, first + 49 * 20 * US), 'Fit spans the 50 samples, not back to time 0 of the side-band records');
    assert.deepEqual(
      await lanes(page),
      [
        ['cpu:0', '25'],
        ['cpu:1', '25'],
      ],
      'the side-band records have no place on a lane',
    );
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
    assertDomain(await domain(page), d, 'Fit is the same window');
    const labels = await ticks(page);
    assert.ok(sinceStart(labels), `the axis counts from the first sample: ${labels}`);
    const title = (await page.getAttribute('.rs-snapshot[data-snapshot="pd"] button', 'title')) ?? '';
    assert.match(title, /5 records without a time are counted but not placed on the axis/);
    // They are listed in the drawer, and each opens in the details.
    assert.equal(await page.locator('#rs-untimed h2').textContent(), 'Without a time (5)');
    const listed = await page.$$eval('#rs-untimed tr', (rows) => rows.map((r) => r.textContent));
    assert.deepEqual(listed, [...Array(4).fill('cpu-clock · MMAP2? -1/-1 · cpu 0'), 'cpu-clock · COMMpd_work 300/300 · cpu 0']);
    await page.locator('#rs-untimed tr').nth(4).click();
    await page.waitForFunction(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'detailsRequest').at(-1)?.snapshotId === 'pd');
    const request = (await posted(page, 'detailsRequest')).at(-1)!;
    assert.equal(request.row, 4);
    assert.equal(await page.locator('#rs-details .rs-time-main').textContent(), 'no time (not on the axis)');
    await page.evaluate(
      (id) =>
        (window as unknown as Probe).__send({
          type: 'detailsReply',
          replyTo: id,
          snapshotId: 'pd',
          row: 4,
          details: { type: 'COMM', misc: 0, fields: { comm: 'pd_work' } },
        }),
      request.requestId as number,
    );
    await page.locator('#rs-details .rs-remote-details', { hasText: 'pd_work' }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-perfdata-untimed.png') });
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => (document.querySelector('#rs-untimed') as HTMLElement).hidden);
    await page.click('.rs-snapshot[data-snapshot="pd"] button');
    await page.waitForFunction(() => !(document.querySelector('#rs-untimed') as HTMLElement).hidden);
  });

  it('shows the perf clock on demand, in the axis, the tooltip, the details and the range summary alike', async () => {
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records'));
    await afterFrames(page);
    const hover = async () => {
      await page.mouse.move(0, 0);
      const p = await page.evaluate(() => (window as unknown as Probe).__point('cpu:1', 505000));
      await page.mouse.move(p.x, p.y);
      await page.waitForSelector('.rs-tooltip:not([hidden])');
      return page.locator('.rs-tooltip').innerText();
    };
    assert.match(await hover(), /^time 505\.000 µs$/m, "time since the capture's start");
    const p = await page.evaluate(() => (window as unknown as Probe).__point('cpu:1', 505000));
    await page.mouse.click(p.x, p.y);
    await page.waitForSelector('#rs-details .rs-time');
    const timeCell = () =>
      page.evaluate(() => {
        const cell = document.querySelector('#rs-details .rs-time') as HTMLElement;
        const raw = cell.querySelector('.rs-time-raw') as HTMLElement;
        return {
          main: cell.querySelector('.rs-time-main')!.textContent,
          raw: raw.textContent,
          rawShown: !raw.hidden && raw.offsetHeight > 0,
          title: cell.title,
        };
      });
    assert.deepEqual(await timeCell(), { main: '505.000 µs', raw: '5000000505000 ns', rawShown: false, title: 'perf clock 5000000505000 ns' });
    // The host's decoded details carry the raw perf clock: listed only with the perf clock on.
    const [request] = (await posted(page, 'detailsRequest')).slice(-1);
    await page.evaluate(
      (id) =>
        (window as unknown as Probe).__send({
          type: 'detailsReply',
          replyTo: id,
          snapshotId: 'snap-1',
          row: 0,
          details: { type: 'SAMPLE', event: 'cpu-clock', misc: 2, timeNs: '5000000505000', fields: { period: 10000 } },
        }),
      request.requestId as number,
    );
    await page.waitForSelector('#rs-details .rs-perf-clock-only', { state: 'attached' });
    assert.equal(await page.locator('#rs-details .rs-perf-clock-only').isHidden(), true);
    // A brushed range says where it is in the same base.
    const box = (await page.locator('.rs-overlay').boundingBox())!;
    const from = await page.evaluate(() => (window as unknown as Probe).__point('cpu:1', 200 * 1000));
    const to = await page.evaluate(() => (window as unknown as Probe).__point('cpu:1', 400 * 1000));
    await page.keyboard.down('Shift');
    await page.mouse.move(from.x, box.y + 5);
    await page.mouse.down();
    await page.mouse.move(to.x, box.y + 5, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForSelector('#rs-range .rs-range-bounds');
    assert.match((await page.locator('#rs-range .rs-range-bounds').textContent()) ?? '', /^from \d+\.\d{3} µs to \d+\.\d{3} µs$/);

    await page.click('#rs-perf-clock');
    await afterFrames(page);
    const clock = await ticks(page);
    assert.ok(clock.length > 2 && clock.every((l) => /^5000\.\d+ s$/.test(l)), `the axis reads the perf clock: ${clock}`);
    assert.deepEqual(await timeCell(), { main: '5000.000505000 s', raw: '5000000505000 ns', rawShown: true, title: 'perf clock 5000000505000 ns' });
    assert.equal(await page.locator('#rs-details .rs-perf-clock-only').isVisible(), true);
    assert.match((await page.locator('#rs-range .rs-range-bounds').textContent()) ?? '', /^from 5000\.000\d{6} s to 5000\.000\d{6} s$/);
    assert.match(await hover(), /^time 5000\.000505000 s$/m);
    await page.waitForFunction(() => (window as unknown as Probe).__getState()?.perfClock === true);

    await page.click('#rs-perf-clock');
    await afterFrames(page);
    assert.ok(sinceStart(await ticks(page)), `back to time since the start: ${await ticks(page)}`);
    assert.equal((await timeCell()).rawShown, false);
    assert.equal(await page.locator('#rs-details .rs-perf-clock-only').isHidden(), true);
    assert.match(await hover(), /^time 505\.000 µs$/m);
    await page.mouse.move(0, 0);
    await page.keyboard.press('Escape');
  });

  it("keeps End, → and the filter's stepping and counts within the shown capture", async () => {
    await stream(page, 'overlapping');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('10 records · 4 snapshots'));
    await afterFrames(page);
    assert.deepEqual(await shownName(page), ['overlapping capture']);
    // Its ten records lie between the first capture's, over the same millisecond: only they are on the lanes.
    assert.deepEqual(await lanes(page), [['cpu:0', '10']]);
    const last = async () => {
      const m = (await posted(page, 'detailsRequest')).at(-1)!;
      return [m.snapshotId, m.row];
    };
    await page.focus('.rs-scroll');
    await page.keyboard.press('Home');
    assert.deepEqual(await last(), ['snap-o', 0]);
    await page.keyboard.press('End');
    assert.deepEqual(await last(), ['snap-o', 9]);
    const requests = (await posted(page, 'detailsRequest')).length;
    await page.keyboard.press('ArrowRight');
    assert.equal((await posted(page, 'detailsRequest')).length, requests, "→ at the capture's last record stays there");
    assert.deepEqual(await last(), ['snap-o', 9]);
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowLeft');
    assert.deepEqual(await last(), ['snap-o', 5]);

    await page.fill('#rs-filter input', 'event:cpu-clock');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('10 of 10 records'));
    await page.focus('#rs-filter input');
    const count = () => page.locator('#rs-match-count').textContent();
    for (let i = 1; i <= 10; i++) {
      await page.keyboard.press('Enter');
      assert.equal(await count(), `${i} of 10 matches`);
    }
    assert.deepEqual(await last(), ['snap-o', 9]);
    await page.keyboard.press('Enter');
    assert.equal(await count(), '1 of 10 matches', 'stepping wraps within the capture, never into another');
    assert.deepEqual(await last(), ['snap-o', 0]);
    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('101 of 116 records'));
    assert.equal(await count(), '101 matches');
    await page.fill('#rs-filter input', '');
    assert.deepEqual(errors, []);
  });

  it('compares a second capture in its own chart below (Ctrl+click in the strip), each on its own relative axis', async () => {
    await page.click('.rs-snapshot[data-snapshot="snap-2"] button', { modifiers: ['Control'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 2);
    await afterFrames(page);
    const charts = () =>
      page.$$eval('.rs-timeline', (roots) =>
        roots.map((root) => {
          const axis = root.querySelector('.rs-axis') as SVGSVGElement;
          return {
            title: root.querySelector('.rs-axis-row .rs-axis-corner')!.textContent,
            domain: [Number(axis.dataset.domainStart), Number(axis.dataset.domainEnd)] as [number, number],
            ticks: [...axis.querySelectorAll('.tick text')].map((t) => t.textContent ?? ''),
            lanes: [...root.querySelectorAll('.rs-lane-label')].map((l) => [(l as HTMLElement).dataset.lane, l.querySelector('.rs-lane-count')!.textContent]),
          };
        }),
      );
    const [first, second] = await charts();
    assert.deepEqual([first.title, second.title], ['snapshot 1', 'snapshot 2']);
    assertDomain(first.domain, fitted(0, 1005 * US), 'the shown capture keeps its view');
    assertDomain(second.domain, fitted(2_000_000, 2_500_000), 'the compared capture opens fitted');
    assert.ok(sinceStart(first.ticks) && sinceStart(second.ticks), `each axis counts from its own capture's start: ${first.ticks} / ${second.ticks}`);
    assert.deepEqual(second.lanes, [['cpu:1', '51']]);
    assert.equal(first.lanes.length, 3);
    assert.deepEqual(await page.$$eval('.rs-snapshot.rs-compared', (els) => els.map((e) => (e as HTMLElement).dataset.snapshot)), ['snap-2']);
    assert.deepEqual(await shownName(page), ['snapshot 1'], 'the strip still marks the shown capture');

    // A record of the compared chart: the details are its own, in its own time base.
    const point = await page.evaluate((t) => {
      const root = document.querySelectorAll('.rs-timeline')[1];
      const axis = root.querySelector('.rs-axis') as SVGSVGElement;
      const lane = root.querySelector('.rs-lane-label[data-lane="cpu:1"]') as HTMLElement;
      const r = root.querySelector('.rs-overlay')!.getBoundingClientRect();
      const d0 = Number(axis.dataset.domainStart);
      const d1 = Number(axis.dataset.domainEnd);
      return { x: r.left + ((t - d0) / (d1 - d0)) * r.width, y: r.top + parseFloat(lane.style.top) + parseFloat(lane.style.height) / 2 };
    }, 2_250_000);
    await page.mouse.click(point.x, point.y);
    await page.waitForFunction(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'detailsRequest').at(-1)?.snapshotId === 'snap-2');
    assert.equal((await posted(page, 'detailsRequest')).at(-1)!.row, 25);
    assert.equal(await page.locator('#rs-details .rs-time-main').textContent(), '250.000 µs');
    assert.match(await page.locator('#rs-details .rs-fields').innerText(), /snapshot\s+snapshot 2 · row 25/);
    // The call tree follows the chart the record was chosen in: snapshot 2 sampled no callchains (snapshot 1 did).
    await page.locator('#rs-calltree .rs-calltree-summary', { hasText: /^0 samples with callchains · whole capture$/ }).waitFor();
    await page.click('#rs-perf-clock');
    await afterFrames(page);
    const clocks = await charts();
    assert.ok(
      clocks.every((c) => c.ticks.length > 1 && c.ticks.every((l) => /^5000\.\d+ s$/.test(l))),
      `both read the perf clock: ${clocks.map((c) => c.ticks)}`,
    );
    assert.equal(await page.locator('#rs-details .rs-time-main').textContent(), '5000.002250000 s');
    await page.click('#rs-perf-clock');

    await page.setViewportSize({ width: 1280, height: 800 });
    await afterFrames(page);
    const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    assert.ok(widths.scroll <= widths.client, `two charts at 1280 px: no horizontal scrolling: ${JSON.stringify(widths)}`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-compare-1280.png') });
    await page.setViewportSize({ width: 1400, height: 900 });

    await page.click('.rs-snapshot[data-snapshot="snap-2"] button', { modifiers: ['Shift'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 1);
    assert.equal(await page.locator('.rs-axis-row .rs-axis-corner').textContent(), 'Lanes');
    assert.equal(await page.locator('.rs-snapshot.rs-compared').count(), 0);
    assert.deepEqual(errors, []);
  });

  it('at 1280 px with four captures, nothing scrolls sideways and the toolbar keeps its controls on screen', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await afterFrames(page);
    const layout = await page.evaluate(() => {
      const rect = (selector: string) => document.querySelector(selector)!.getBoundingClientRect();
      return {
        page: { scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth },
        body: { scroll: document.body.scrollWidth, client: document.body.clientWidth },
        perfClock: rect('#rs-perf-clock').right,
        status: rect('.rs-status').right,
        strip: rect('.rs-snapshots').right,
        plot: parseFloat((document.querySelector('.rs-canvas') as HTMLElement).style.width),
      };
    });
    assert.ok(layout.page.scroll <= layout.page.client, `no horizontal scrolling: ${JSON.stringify(layout)}`);
    assert.ok(layout.body.scroll <= layout.body.client, `no horizontal scrolling: ${JSON.stringify(layout)}`);
    for (const k of ['perfClock', 'status', 'strip'] as const) assert.ok(layout[k] <= 1280, `${k} ends on screen: ${JSON.stringify(layout)}`);
    assert.ok(layout.plot >= 1280 - 190 - 24, `the plot takes the width: ${layout.plot} px`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-captures-1280.png') });
  });
});
