// The call tree pane in Chromium against perf: a `perf record -g` capture imported by Ringside, written
// as the offline timeline page, opened, and the inverted tree's roots (samples per leaf function) read
// off the page and compared with `perf report --no-children -n`; the flame graph draws boxes.
import * as assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { decodeSnapshot } from '../../native/decode';
import { readPerfData } from '../../native/perfdata';
import { SnapshotSymbols } from '../../native/cli/symbols';
import { writeStandaloneHtml } from '../../host/html-file';
import { UNKNOWN_FRAME } from '../../shared/stacks';
import { launchChromium } from '../webview/harness';
import { fixture, perfOutput, perfRecord, tempDir } from './perf-tools';

describe('call tree pane of an imported perf.data in Chromium', function () {
  this.timeout(120000);
  let dir = '';
  let browser: Browser;
  before(async () => { dir = tempDir(); browser = await launchChromium(); });
  after(async () => { await browser?.close(); rmSync(dir, { recursive: true, force: true }); });

  it('bottom-up roots equal perf report --no-children -n; top-down starts at the callers; the flame graph draws', async () => {
    const data = path.join(dir, 'g.data');
    perfRecord(data, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const imported = readPerfData(new Uint8Array(readFileSync(data)), data, { keepGoing: true });
    const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
    const symbols = new SnapshotSymbols();
    symbols.learn(decoded);
    const page = path.join(dir, 'g.html');
    writeStandaloneHtml(page, decoded, symbols.frames);

    const report = perfOutput(['report', '-i', data, '--no-children', '-n', '--stdio', '-F', 'sample,sym', '-g', 'none', '--percent-limit', '0']);
    assert.equal(report.status, 0, report.stderr);
    const theirs = new Map<string, number>();
    for (const line of report.stdout.split('\n')) {
      const match = /^\s+(\d+)\s+\[.\]\s+(.+?)\s*$/.exec(line);
      if (!match) continue;
      const name = /^0x[0-9a-f]+$/.test(match[2]) ? UNKNOWN_FRAME : match[2];
      theirs.set(name, (theirs.get(name) ?? 0) + Number(match[1]));
    }

    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(String(error)));
    await tab.goto('file://' + page);
    // The capture opens with the call tree of the whole capture in view.
    await tab.locator('#rs-calltree .rs-calltree-node').first().waitFor({ timeout: 30000 });
    const rows = () => tab.$$eval('#rs-calltree .rs-calltree-node', (trs) => trs.map((tr) => ({
      depth: Number((tr as HTMLElement).dataset.depth), fn: tr.querySelector('.rs-calltree-fn')?.textContent ?? '',
      total: Number((tr.querySelector('.rs-calltree-total') as HTMLElement).dataset.count), self: Number(tr.querySelector('.rs-calltree-self')?.textContent),
    })));
    const topDown = await rows();
    const total = [...theirs.values()].reduce((a, b) => a + b, 0);
    assert.equal(topDown.filter((r) => r.depth === 1).reduce((sum, r) => sum + r.total, 0), total, 'every sample once');
    assert.match(await tab.locator('#rs-calltree .rs-calltree-summary').innerText(), new RegExp(`^${total.toLocaleString('en-US')} samples with callchains · whole capture`));
    const inner = topDown.find((r) => r.fn === 'pd_inner');
    assert.ok(inner && inner.depth > 2, 'pd_inner sits below its callers in the top-down tree');

    await tab.click('#rs-calltree button[data-mode="bottom-up"]');
    const roots = (await rows()).filter((r) => r.depth === 1);
    const ours = new Map(roots.map((r) => [r.fn, r.total]));
    assert.deepEqual(Object.fromEntries([...ours].sort()), Object.fromEntries([...theirs].sort()));

    await tab.click('#rs-calltree button[data-mode="flame"]');
    const boxes = Number(await tab.locator('#rs-calltree canvas.rs-flame').getAttribute('data-boxes'));
    assert.ok(boxes >= 3, `${boxes} boxes`);
    assert.deepEqual(problems, []);
    await tab.close();
  });
});
