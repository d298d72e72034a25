// The time axis of an opened perf.data in Chromium, with `perf script` as referee: a system-wide `perf record -a`
// synthesizes MMAP/COMM/FORK records for every process that already ran, stamped with time 0. The page counts
// them, places none of them, counts times from the first record that has one, and fits the axis to the samples
// (from the first to the last sample time `perf script` prints), not from the boot.
import * as assert from 'node:assert/strict';
import path from 'node:path';
import { writeStandaloneHtml } from '../../host/html-file';
import { chromiumAndTempDir } from '../webview/harness';
import { openNamed, perfRecord, perfScript } from './perf-tools';

describe('time axis of an opened perf.data in Chromium (perf script is the referee)', function () {
  this.timeout(120000);
  const env = chromiumAndTempDir('ringside-perfdata-');

  it("fits the axis to the samples; perf's time-0 side-band records are counted, not placed", async () => {
    const data = path.join(env.dir, 'all.data');
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
    // Fit shows the samples (issue 37: not side-band from long before them): perf script's sample lines alone.
    const samples = perfScript(data, ['--ns', '-F', 'time']).lines.map((line) => {
      const [, seconds, nanos] = /^\s*(\d+)\.(\d{9}):/.exec(line) ?? assert.fail(`perf script printed no time: ${line}`);
      return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
    });
    const firstSample = samples.reduce((a, b) => (b < a ? b : a));
    const lastSample = samples.reduce((a, b) => (b > a ? b : a));

    const { decoded, symbols } = openNamed(data);
    assert.equal(decoded.columns.length, times.length, 'Ringside reads every record perf script lists');
    const page = path.join(env.dir, 'all.html');
    writeStandaloneHtml(page, decoded, symbols.frames);

    const tab = await env.browser.newPage({ viewport: { width: 1280, height: 800 } });
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
    const span = Number(lastSample - firstSample);
    assert.ok(
      Math.abs(axis.start - (Number(firstSample) - span * 0.02)) < 2 && Math.abs(axis.end - (Number(firstSample) + span * 1.02)) < 2,
      `Fit spans the samples ${firstSample}..${lastSample} ns with its margin, not from 0: the axis shows ${axis.start}..${axis.end}`,
    );
    assert.equal(axis.base, Number(first), 'times count from the first timed record');
    // The ticks read time since that record (not the perf clock): the first sample's, give or take a tick step.
    const tickSeconds = axis.ticks.map((t) => {
      const [, value, unit] = /^([\d.]+) (ms|s)$/.exec(t) ?? assert.fail(`a tick in ms or s: ${t}`);
      return Number(value) / (unit === 'ms' ? 1000 : 1);
    });
    const sampleStart = Number(firstSample - first) / 1e9;
    assert.ok(
      tickSeconds[0] >= sampleStart - 0.05 && tickSeconds[0] <= sampleStart + span / 1e9 / 4,
      `the ticks count from the capture's first record: ${axis.ticks} (its samples start ${sampleStart} s in)`,
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
