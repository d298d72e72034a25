// "Snapshot When This Fires" in the timeline's record details, in Chromium: shown for a sample of a tracepoint, software
// event or breakpoint when the host can record (the panel says so in `init`), posting the event's spec; never for a
// side-band record, and never in the offline export, which has nothing to record with.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { renderStandaloneHtml } from '../../host/standalone';
import { afterFrames, openTimelinePage, type TimelineSession } from './harness';
import { PERFDATA_FIRST_NS, SMALL_ORIGIN, small, US } from './synthetic';

interface Posted {
  type: string;
  [k: string]: unknown;
}
interface Probe {
  __posted: Posted[];
  __send(m: unknown): void;
  __stream(which: string): Promise<number>;
  __point(lane: string, t: number): { x: number; y: number };
}

const BUTTON = '#rs-details #rs-snapshot-when';

/** Client coordinates of time t (ns since the capture's origin) in the middle of a lane, from the page's own DOM. */
function pointOf(page: Page, lane: string, t: number): Promise<{ x: number; y: number }> {
  return page.evaluate(
    ([key, time]) => {
      const label = document.querySelector(`.rs-lane-label[data-lane="${CSS.escape(key as string)}"]`) as HTMLElement;
      const r = document.querySelector('.rs-overlay')!.getBoundingClientRect();
      const a = document.querySelector('.rs-axis') as SVGElement;
      const d0 = Number(a.dataset.domainStart);
      const d1 = Number(a.dataset.domainEnd);
      const scroll = document.querySelector('.rs-scroll')!.scrollTop;
      return {
        x: r.left + (((time as number) - d0) / (d1 - d0)) * r.width,
        y: r.top + parseFloat(label.style.top) - scroll + parseFloat(label.style.height) / 2,
      };
    },
    [lane, t] as const,
  );
}

/** Clicks the record at time t of a lane and waits until the details show it (by its event's name). */
async function select(page: Page, lane: string, t: number, event: string): Promise<void> {
  const before = await page.evaluate(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'detailsRequest').length);
  const p = await pointOf(page, lane, t);
  await page.mouse.click(p.x, p.y);
  await page.waitForFunction((n) => (window as unknown as Probe).__posted.filter((m) => m.type === 'detailsRequest').length > n, before);
  assert.equal(await page.locator('#rs-details h2').textContent(), event);
}

describe('timeline webview in Chromium: Snapshot When This Fires', function () {
  this.timeout(60000);
  let session: TimelineSession;
  const errors: string[] = [];

  async function livePage(init: Record<string, unknown>): Promise<Page> {
    const page = await session.newPage({ grouping: 'cpu' });
    await page.evaluate((m) => (window as unknown as Probe).__send(m), { type: 'init', protocolVersion: 1, ...init });
    await page.evaluate(() => (window as unknown as Probe).__stream('small'));
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records'));
    // The status is set when the records are stored; lanes and axis follow in the next frames, and
    // pointOf reads their positions (clicking before then found no label, or missed the record).
    await page.waitForSelector('.rs-lane-label[data-lane="cpu:0"]');
    await afterFrames(page);
    return page;
  }

  const requests = (page: Page) => page.evaluate(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'snapshotWhenRequest'));

  before(async () => {
    // Each test opens its own pages: the first stays blank.
    session = await openTimelinePage({
      path: null,
      errors,
      pages: ({ script, css }) => ({
        '/standalone.html': renderStandaloneHtml({ script, css, data: { title: 'Ringside export test', snapshots: [small()] } }),
      }),
    });
  });

  after(() => session?.close());

  afterEach(() => {
    assert.deepEqual(errors.splice(0), [], 'no console error or CSP violation');
  });

  it('a tracepoint, software or breakpoint sample offers it and posts its event spec', async () => {
    const page = await livePage({ editor: true, recorder: true });
    // syscalls:sys_exit_read fires once, at 350.05 µs on CPU 0, 50 µs from any other record there.
    await select(page, 'cpu:0', 350 * US + 50, 'syscalls:sys_exit_read');
    assert.equal(await page.locator(BUTTON).textContent(), 'Snapshot When This Fires');
    assert.deepEqual(await requests(page), [], 'selecting posts nothing by itself');
    await page.click(BUTTON);
    await page.waitForFunction(() => (window as unknown as Probe).__posted.some((m) => m.type === 'snapshotWhenRequest'));
    assert.deepEqual(await requests(page), [{ type: 'snapshotWhenRequest', event: 'syscalls:sys_exit_read' }]);
    // A software event (cpu-clock, 505 µs on CPU 1) and a breakpoint's sample (mem:counter:w, its own lane at 500.001 µs).
    await select(page, 'cpu:1', 505 * US, 'cpu-clock');
    await page.click(BUTTON);
    await select(page, 'watch:mem:counter:w', 500 * US + 1, 'mem:counter:w');
    await page.click(BUTTON);
    await page.waitForFunction(() => (window as unknown as Probe).__posted.filter((m) => m.type === 'snapshotWhenRequest').length === 3);
    assert.deepEqual(
      (await requests(page)).map((m) => m.event),
      ['syscalls:sys_exit_read', 'cpu-clock', 'mem:counter:w'],
    );
    await page.close();
  });

  it("a side-band record (COMM, MMAP2) does not offer it: its ring's event did not fire", async () => {
    const page = await livePage({ editor: true, recorder: true });
    await page.evaluate(() => (window as unknown as Probe).__stream('perfData'));
    await page.waitForFunction(() => document.querySelectorAll('#rs-untimed tr').length === 5);
    for (const nth of [0, 4]) {
      await page.locator('#rs-untimed tr').nth(nth).click();
      await page.waitForFunction(
        (n) => (window as unknown as Probe).__posted.filter((m) => m.type === 'detailsRequest' && m.snapshotId === 'pd').at(-1)?.row === n,
        nth,
      );
      assert.equal(await page.locator('#rs-details h2').textContent(), 'cpu-clock');
      assert.match(await page.locator('#rs-details .rs-fields').first().innerText(), nth === 4 ? /type\s+COMM/ : /type\s+MMAP2/);
      assert.equal(await page.locator(BUTTON).count(), 0);
    }
    // A sample of the same event in the same capture does (the page's clock starts at the first capture's origin).
    await select(page, 'cpu:0', PERFDATA_FIRST_NS - Number(SMALL_ORIGIN) + 40 * US, 'cpu-clock');
    assert.match(await page.locator('#rs-details .rs-fields').first().innerText(), /type\s+SAMPLE/);
    assert.equal(await page.locator(BUTTON).count(), 1);
    await page.close();
  });

  it('is absent when the host cannot record: a page whose host did not say it can, and the offline export', async () => {
    const page = await livePage({ editor: true });
    await select(page, 'cpu:0', 350 * US + 50, 'syscalls:sys_exit_read');
    await page.locator('#rs-details .rs-fields').first().waitFor();
    assert.equal(await page.locator(BUTTON).count(), 0);
    await page.close();

    const offline = await session.newPage({ path: '/standalone.html', status: '116 records', grouping: 'cpu' });
    await offline.waitForSelector('.rs-lane-label[data-lane="cpu:0"]');
    await afterFrames(offline);
    const p = await pointOf(offline, 'cpu:0', 350 * US + 50);
    await offline.mouse.click(p.x, p.y);
    await offline.waitForFunction(() => document.querySelector('#rs-details h2')?.textContent === 'syscalls:sys_exit_read');
    // The export's stand-in host has answered the details request (no details embedded for this row) by now.
    await offline.waitForFunction(() => document.querySelector('#rs-details .rs-remote-details')?.textContent?.includes('not embedded'));
    assert.equal(await offline.locator(BUTTON).count(), 0);
    await offline.close();
  });
});
