// The thread state band in Chromium: a snapshot whose sched_switch records alternate two threads on one CPU, with the
// thread states the host builds for them (host/thread-states.ts), opened as the self-contained HTML export (its
// stand-in host sends the states after the start, as the panel does). Grouped by thread, each thread lane shows its
// states under its records, the tooltip names the state, and the legend lists the states drawn.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { renderStandaloneHtml } from '../../host/standalone';
import { buildThreadStates, threadStatesMessage, type SwitchRecord } from '../../host/thread-states';
import { threadStateOfPrevState } from '../../shared/thread-states';
import { ARTIFACTS, STAND_IN, afterFrames, openTimelinePage, type TimelineSession } from './harness';
import { SMALL_ORIGIN, small, smallRows, snapshot, US, type SyntheticRow } from './synthetic';

describe('thread state band in Chromium', function () {
  this.timeout(60000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    // The small snapshot's sched_switch rows: at i·100 µs on cpu 0, worker 100 (even i) or 101 (odd i) is switched out
    // for the other; 100 leaves sleeping, 101 preempted.
    const switches: SwitchRecord[] = smallRows()
      .filter((r) => r.event === 0)
      .map((r) => ({
        time: r.t,
        cpu: 0,
        prevTid: r.tid,
        prevState: threadStateOfPrevState(r.tid === 100 ? 1 : 0x100),
        nextTid: r.tid === 100 ? 101 : 100,
        nextComm: 'worker',
      }));
    const states = threadStatesMessage('snap-1', buildThreadStates(switches, { cpuStart: () => 0, end: 1005 * US }));
    // Another capture over the same millisecond (same origin) with cpu-clock samples of worker 100 and no switches.
    const samples: SyntheticRow[] = Array.from({ length: 10 }, (_, i) => ({ t: 50 * US + i * 100 * US, event: 4, pid: 100, tid: 100, cpu: 1 }));
    const other = snapshot('snap-s', 'samples only', samples, SMALL_ORIGIN, 20);
    session = await openTimelinePage({
      pages: ({ script, css }) => ({
        '/states.html': renderStandaloneHtml({ script, css, data: { title: 'Ringside states test', snapshots: [{ ...small(), threadStates: states }] } }),
        '/two.html': renderStandaloneHtml({ script, css, data: { title: 'Ringside two captures', snapshots: [{ ...small(), threadStates: states }, other] } }),
      }),
      path: '/states.html',
      status: '116 records',
      errors,
      // The harness's probes (__ink, __point, __lane) without its stand-in host: the export brings its own.
      initScript: STAND_IN.replace(/window\.acquireVsCodeApi = [\s\S]*?\n};\n/, ''),
    });
    page = session.page;
  });

  after(() => session?.close());

  it('grouped by thread, each thread lane gets a band of its states under its records, and the legend names them', async () => {
    await page.click('#rs-grouping');
    await page.click('vscode-option[value="thread"]');
    await page.waitForSelector('.rs-lane-label[data-lane="thread:101"]');
    await afterFrames(page);
    const lane = (key: string) => page.evaluate((k) => (window as unknown as { __lane(k: string): { top: number; height: number } }).__lane(k), key);
    assert.equal((await lane('thread:100')).height, 22 + 7, 'a thread lane with states is taller by its band');
    // Thread 200's samples have callchains (main ← busy_loop ← helper): its stack chart, 3 depths of 13 px under its
    // activity graph, and no band under them.
    assert.equal((await lane('thread:200')).height, 22 + 3 * 13, 'a thread without sched_switch records has no band');
    const ink = (key: string, t0: number, t1: number, from: number, to: number) =>
      page.evaluate(
        ([k, a, b, f, g]) =>
          (window as unknown as { __ink(k: string, a: number, b: number, f: number, g: number): number }).__ink(
            k as string,
            a as number,
            b as number,
            f as number,
            g as number,
          ),
        [key, t0, t1, from, to] as const,
      );
    const band: [number, number] = [23.5 / 29, 28 / 29];
    assert.ok((await ink('thread:100', 120 * US, 180 * US, ...band)) > 0, 'running is drawn in the band');
    assert.ok((await ink('thread:100', 20 * US, 80 * US, ...band)) > 0, 'sleeping is drawn in the band');
    const legend = await page.$$eval('.rs-legend-state', (els) => els.map((e) => (e as HTMLElement).dataset.state));
    assert.deepEqual(legend, ['Running', 'Preempted (R+)', 'Sleeping (S)']);
  });

  it('hovering the band says the state, how long, on which CPU and who ran next', async () => {
    const hover = async (key: string, t: number) => {
      const p = await page.evaluate(
        ([k, time]) => {
          const w = window as unknown as { __lane(k: string): { top: number; height: number }; __domain(): [number, number] };
          const l = w.__lane(k as string);
          const r = document.querySelector('.rs-overlay')!.getBoundingClientRect();
          const d = w.__domain();
          const scroll = document.querySelector('.rs-scroll')!.scrollTop;
          return { x: r.left + (((time as number) - d[0]) / (d[1] - d[0])) * r.width, y: r.top + l.top - scroll + l.height - 3 };
        },
        [key, t] as const,
      );
      await page.mouse.move(p.x, p.y);
      await page.waitForSelector('.rs-tooltip:not([hidden])');
      return page.locator('.rs-tooltip').innerText();
    };
    const sleeping = await hover('thread:100', 50 * US);
    assert.match(sleeping, /^Sleeping \(S\) · 100(\.0+)? µs/m);
    assert.match(sleeping, /switched out of cpu 0/);
    assert.match(sleeping, /cpu 0 ran worker 101/);
    const running = await hover('thread:100', 150 * US);
    assert.match(running, /^Running · 100(\.0+)? µs/m);
    assert.match(running, /on cpu 0/);
    const preempted = await hover('thread:101', 150 * US);
    assert.match(preempted, /^Preempted \(R\+\)/m);
    // The last interval runs to the snapshot's end: not recorded past it.
    const last = await hover('thread:101', 1002 * US);
    assert.match(last, /end not recorded/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'webview-thread-states.png') });
    assert.deepEqual(errors, []);
  });

  it("a capture shows its own states: another capture's, over the same time and threads, stay off its lanes and its legend", async () => {
    const two = await session.newPage({
      path: '/two.html',
      status: '10 records',
      initScript: STAND_IN.replace(/window\.acquireVsCodeApi = [\s\S]*?\n};\n/, ''),
    });
    await two.click('#rs-grouping');
    await two.click('vscode-option[value="thread"]');
    const height = async () => {
      await afterFrames(two);
      return two.evaluate(() => (window as unknown as { __lane(k: string): { height: number } }).__lane('thread:100').height);
    };
    const states = () => two.$$eval('.rs-legend-state', (els) => els.map((e) => (e as HTMLElement).dataset.state));
    await two.waitForSelector('.rs-lane-label[data-lane="thread:100"]');
    assert.equal(await height(), 22, "the shown capture recorded no switches: worker 100's lane has no band");
    assert.deepEqual(await states(), []);
    await two.click('.rs-snapshot[data-snapshot="snap-1"] button');
    await two.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.startsWith('116 records'));
    assert.equal(await height(), 22 + 7, 'the capture with the switches: its band');
    assert.deepEqual(await states(), ['Running', 'Preempted (R+)', 'Sleeping (S)']);
    await two.close();
    assert.deepEqual(errors, []);
  });
});
