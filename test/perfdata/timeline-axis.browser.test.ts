// The time axis of an opened perf.data in Chromium, with `perf script` as referee: a system-wide `perf record -a`
// synthesizes MMAP/COMM/FORK records for every process that already ran, stamped with time 0. The page counts
// them, places none of them, and fits the axis to the records that have a time: from the first to the last time
// `perf script` prints other than 0, not from the boot.
import * as assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { decodeSnapshot } from '../../native/decode';
import { readPerfData } from '../../native/perfdata';
import { SnapshotSymbols } from '../../native/cli/symbols';
import { writeStandaloneHtml } from '../../host/html-file';
import { launchChromium } from '../webview/harness';
import { perfRecord, perfScript, tempDir } from './perf-tools';

describe('time axis of an opened perf.data in Chromium (perf script is the referee)', function () {
  this.timeout(120000);
  let dir = '';
  let browser: Browser;
  before(async () => {
    dir = tempDir();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fits the axis to the timed records; perf's time-0 side-band records are counted, not placed", async () => {
    const data = path.join(dir, 'all.data');
    perfRecord(data, ['-a', '-e', 'cpu-clock', '-c', '1000000'], ['sleep', '0.2']);
    // Every record perf script reads, side-band included, with its time in ns.
    const times = perfScript(data, ['--ns', '-F', 'time', '--show-mmap-events', '--show-task-events']).lines.map((line) => {
      const [, seconds, nanos] = /^\s*(\d+)\.(\d{9}):/.exec(line) ?? assert.fail(`perf script printed no time: ${line}`);
      return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
    });
    const untimed = times.filter((t) => t === 0n).length;
    const timed = times.filter((t) => t !== 0n);
    assert.ok(untimed > 0, 'perf record -a wrote records stamped 0 (the premise of this test)');
    const first = timed.reduce((a, b) => (b < a ? b : a));
    const last = timed.reduce((a, b) => (b > a ? b : a));

    const imported = readPerfData(new Uint8Array(readFileSync(data)), data, { keepGoing: true });
    const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
    assert.equal(decoded.columns.length, times.length, 'Ringside reads every record perf script lists');
    const symbols = new SnapshotSymbols();
    symbols.learn(decoded);
    const page = path.join(dir, 'all.html');
    writeStandaloneHtml(page, decoded, symbols.frames);

    const tab = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    const total = times.length.toLocaleString('en-US');
    await tab.waitForFunction((t) => document.querySelector('.rs-status')?.textContent?.startsWith(`${t} records · 1 snapshot`), total, { timeout: 30000 });
    await tab.locator('.rs-lane-label').first().waitFor({ timeout: 30000 });
    assert.match((await tab.locator('.rs-status').textContent()) ?? '', new RegExp(` · ${untimed.toLocaleString('en-US')} without a time$`));
    // The page's clock starts at the capture's origin, which is 0 here: its times are the perf clock.
    const origin = decoded.columns.timeOriginNs;
    assert.equal(origin, 0n);
    const axis = await tab.evaluate(() => {
      const a = document.querySelector('.rs-axis') as SVGSVGElement;
      return {
        start: Number(a.dataset.domainStart),
        end: Number(a.dataset.domainEnd),
        base: Number(a.dataset.baseStart),
        ticks: [...a.querySelectorAll('.tick text')].map((t) => t.textContent ?? ''),
      };
    });
    const span = Number(last - first);
    assert.ok(
      Math.abs(axis.start - (Number(first) - span * 0.02)) < 2 && Math.abs(axis.end - (Number(first) + span * 1.02)) < 2,
      `Fit spans ${first}..${last} ns with its margin, not from 0: the axis shows ${axis.start}..${axis.end}`,
    );
    assert.equal(axis.base, Number(first), 'times count from the first timed record');
    assert.ok(
      axis.ticks.some((t) => /^0(\.0+)? (ms|s)$/.test(t)),
      `the axis starts at 0 of the capture: ${axis.ticks}`,
    );
    // A process header holds its threads' records again (and a watch lane its event's): count each record once.
    const placed = await tab.$$eval('.rs-lane-label:not(.rs-process-lane):not(.rs-watch-lane)', (labels) =>
      labels.reduce((n, l) => n + Number(l.querySelector('.rs-lane-count')!.textContent!.replace(/,/g, '')), 0),
    );
    assert.equal(placed, timed.length, 'every timed record is on a lane, no untimed one');
    assert.deepEqual(problems, []);
    await tab.close();
  });
});
