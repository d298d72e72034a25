// The colour legend follows the capture shown, in Chromium: it lists the events that have records in that capture (not
// every event of every capture the page holds, nor an event the capture announced but never recorded), the union of
// both while two are compared, and each event keeps the colour its ticks are drawn in whichever capture shows it.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { afterFrames, openTimelinePage, type TimelineSession } from './harness';

interface Probe {
  __stream(which: string): Promise<number>;
}

const SMALL = ['sched:sched_switch', 'syscalls:sys_enter_read', 'syscalls:sys_exit_read', 'mem:counter:w', 'cpu-clock'];
const OTHER = ['cpu-clock', 'page-faults'];

/** The legend's event entries, in order: name and swatch colour. */
const legend = (page: Page) =>
  page.$$eval('.rs-legend-item:not(.rs-legend-state)', (els) =>
    els.map((e) => [(e as HTMLElement).dataset.event ?? '', getComputedStyle(e.querySelector('.rs-legend-swatch')!).backgroundColor] as const),
  );
const names = async (page: Page) => (await legend(page)).map(([name]) => name);

/** Waits until the legend lists exactly `expected` (it is redrawn when the shown capture or its records change). */
async function legendIs(page: Page, expected: readonly string[], what: string): Promise<void> {
  try {
    await page.waitForFunction(
      (want) =>
        [...document.querySelectorAll('.rs-legend-item:not(.rs-legend-state)')].map((e) => (e as HTMLElement).dataset.event).join('|') === want.join('|'),
      expected,
      { timeout: 5000 },
    );
  } catch {
    // the wait timed out: the assertion names what the legend shows instead
    assert.deepEqual(await names(page), expected, what);
  }
  assert.equal(await page.getAttribute('.rs-legend', 'data-events'), String(expected.length), what);
}

/** The colour most painted pixels of a lane have, as CSS computes a swatch's background ('rgb(r, g, b)'). */
async function laneColour(page: Page, key: string): Promise<string> {
  await afterFrames(page);
  return page.evaluate((k) => {
    const label = document.querySelector<HTMLElement>(`.rs-lane-label[data-lane="${CSS.escape(k)}"]`)!;
    const canvas = document.querySelector<HTMLCanvasElement>('.rs-canvas')!;
    const dpr = canvas.width / parseFloat(canvas.style.width);
    const scroll = document.querySelector('.rs-scroll')!.scrollTop;
    const y = Math.round((parseFloat(label.style.top) - scroll + parseFloat(label.style.height) / 2) * dpr);
    const data = canvas.getContext('2d')!.getImageData(0, y, canvas.width, 1).data;
    const seen = new Map<string, number>();
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3] === 0) continue;
      const rgb = `rgb(${data[i]}, ${data[i + 1]}, ${data[i + 2]})`;
      seen.set(rgb, (seen.get(rgb) ?? 0) + 1);
    }
    return [...seen].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'nothing painted';
  }, key);
}

describe('legend of the shown capture in Chromium', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors });
    page = session.page;
  });

  after(() => session?.close());

  it('lists the events with records in the shown capture, the union of two compared ones, each in its own colour', async () => {
    await page.evaluate(() => (window as unknown as Probe).__stream('small'));
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records · 1 snapshot'));
    await legendIs(page, SMALL, 'the first capture: its five events');
    const colours = new Map(await legend(page));

    await page.evaluate(() => (window as unknown as Probe).__stream('otherEvents'));
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('25 records · 2 snapshots'));
    // It announced sched:sched_switch too, but recorded none: the legend names what is drawn.
    await legendIs(page, OTHER, 'the new capture shown: only its events');
    const other = new Map(await legend(page));
    assert.equal(other.get('cpu-clock'), colours.get('cpu-clock'), 'cpu-clock keeps its colour in either capture');
    assert.ok(![...colours.values()].includes(other.get('page-faults')!), `page-faults has a colour of its own: ${[...other]}`);
    // The lane of process 200's one thread (no header over it) is mostly the colour of the event most of its records belong
    // to: 20 cpu-clock samples and 5 page faults.
    assert.equal(await laneColour(page, 'thread:200'), other.get('cpu-clock'), "the thread's lane is drawn in cpu-clock's colour");

    await page.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await legendIs(page, SMALL, 'back to the first capture');

    await page.click('.rs-snapshot[data-snapshot="snap-e"] button', { modifiers: ['Control'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 2);
    await legendIs(page, [...SMALL, 'page-faults'], 'two captures compared: the events of either');
    assert.deepEqual(new Map(await legend(page)), new Map([...colours, ...other]), 'the same colours as each alone');

    await page.click('.rs-snapshot[data-snapshot="snap-e"] button', { modifiers: ['Shift'] });
    await page.waitForFunction(() => document.querySelectorAll('.rs-timeline').length === 1);
    await legendIs(page, SMALL, "comparison closed: the shown capture's events again");

    await page.click('.rs-snapshot[data-snapshot="snap-e"] button');
    await legendIs(page, OTHER, 'the strip shows the other capture');
    assert.deepEqual(errors, []);
  });
});
