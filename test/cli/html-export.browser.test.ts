// A real capture, shown by the real timeline in a real browser: `ringside capture -o FILE.html` on
// a fixture with a known number of writes, opened offline in Debian's Chromium. Checks what a user
// would see: a lane per event with the right count, pixels drawn in it, and details on click.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { DELIVERY_OVERRIDE_VARIABLE } from '../../native/perf/breakpoint-delivery';
import { assertSilentBreakpoints, hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from '../host/breakpoints';
import { ARTIFACTS, chromiumAndTempDir } from '../webview/harness';

const root = path.resolve(__dirname, '../../..');

describe('ringside capture -o FILE.html in Chromium (real capture)', function () {
  this.timeout(120000);
  const env = chromiumAndTempDir('ringside-html-');

  // A watchpoint lane where this host delivers breakpoint hits (elsewhere the capture must say it records nothing, and
  // the page too: the test after these), and a tracepoint on every host: its records sit in the lane of the thread
  // that made them (a process of one thread has no header over its lane).
  const fire = () => hostBreakpoints().fire;
  it('shows every hit of a watchpoint in its lane, draws them, and opens a record', async function () {
    const capture = captureTo('watch-lane.html', 'mem:counter:w', 'kernel_writer', 400);
    if (!fire())
      return assertSilentBreakpoints(
        capture.stderr,
        Number(/snapshot 1 \([^)]*\): (\d+) records/.exec(capture.stderr)?.[1] ?? NaN) - sideBandRecords(capture.stderr),
      );
    await showsLane(
      capture.file,
      (page) => page.locator('.rs-lane-label', { has: page.locator('.rs-lane-name', { hasText: 'mem:counter:w' }) }),
      400,
      /writer\+0x/,
    );
  });

  it("shows every record of a tracepoint capture in its thread's lanes, draws them, and opens a record", async () => {
    const n = 400;
    const capture = captureTo('tracepoint.html', 'syscalls:sys_enter_getpid', 'kernel_getpid', n);
    const total = Number(/snapshot 1 \([^)]*\): (\d+) records/.exec(capture.stderr)?.[1]);
    assert.ok(total > n, capture.stderr);
    const pid = Number(/pid (\d+) /.exec(capture.stderr)?.[1]);
    await showsLane(
      capture.file,
      // The program has one thread: its lane is the process's only one (no header repeats it), named as the process.
      (page) =>
        page.locator(`.rs-lane-label.rs-thread-lane[data-lane="thread:${pid}"]`, { has: page.locator('.rs-lane-name', { hasText: `kernel_getpid ${pid}` }) }),
      total,
      /kernel_getpid/,
    );
  });

  function captureTo(name: string, event: string, workload: string, n: number) {
    const file = path.join(env.dir, name);
    const capture = spawnSync(
      process.execPath,
      [path.join(root, 'dist/cli.js'), 'capture', '-e', event, '-o', file, '--', path.join(root, 'fixtures-bin', workload), String(n)],
      { encoding: 'utf8' },
    );
    assert.equal(capture.status, 0, capture.stderr);
    return { file, stderr: capture.stderr };
  }

  /** The side-band rings' records in a capture's summary (records that are not the event's own). */
  function sideBandRecords(stderr: string): number {
    return [...stderr.matchAll(/ sideband \S+ +(\d+) records/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  }

  /** Opens the page: the lane shows `count` records, its canvas row is painted, End opens a record whose details match. */
  async function showsLane(file: string, laneOf: (page: Page) => Locator, count: number, detail: RegExp): Promise<void> {
    const page = await env.browser.newPage({ viewport: { width: 1400, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    // blob: is the call tree's worker, started from the page's own memory (webview/aggregation.ts), not the network.
    page.on('request', (request) => {
      if (!/^(file|data|blob):/.test(request.url())) problems.push(`network: ${request.url()}`);
    });
    await page.goto('file://' + file);
    const lane = laneOf(page);
    await lane.first().waitFor({ timeout: 30000 });
    assert.equal(await lane.first().locator('.rs-lane-count').textContent(), String(count));

    // Pixels: the canvas row of that lane is not empty.
    const box = await lane.first().boundingBox();
    assert.ok(box);
    const painted = await page.evaluate(
      (y) => {
        const canvas = document.querySelector('canvas.rs-canvas') as HTMLCanvasElement;
        const rect = canvas.getBoundingClientRect();
        const scale = canvas.width / rect.width;
        const ctx = canvas.getContext('2d')!;
        const row = ctx.getImageData(0, Math.round((y - rect.top) * scale), canvas.width, 1).data;
        const bg = [row[0], row[1], row[2]];
        let different = 0;
        for (let i = 0; i < row.length; i += 4) if (Math.abs(row[i] - bg[0]) + Math.abs(row[i + 1] - bg[1]) + Math.abs(row[i + 2] - bg[2]) > 60) different++;
        return different;
      },
      box.y + box.height / 2,
    );
    assert.ok(painted > 5, `${painted} painted pixels in the lane`);

    // Keyboard: Home selects the first record and the details pane shows its decoded fields.
    await page.locator('svg.rs-overlay').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('End');
    await page.waitForFunction((pattern) => new RegExp(pattern).test(document.body.innerText), detail.source, { timeout: 15000 });
    // Follow live asks for a recording the page does not have: it says so instead of waiting for one.
    await page.click('#rs-follow');
    await page.waitForFunction(() => document.querySelector('.rs-status')?.textContent?.includes('live: an exported page has no recording to follow'));
    await page.click('#rs-follow');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `cli-html-export-${path.basename(file, '.html')}.png`) });
    assert.deepEqual(problems, []);
    await page.close();
  }

  // A watchpoint that saw no write: "0 records" is the truth where breakpoints fire, and a lie where they are silent
  // (issue 38): there the status says no hit can be seen. Both verdicts, on this host; the variable is never written.
  it('a watchpoint with no hit reads "no hits can be seen on this machine" only where breakpoints are silent', async () => {
    for (const verdict of ['silent', 'fires'] as const) {
      const file = path.join(env.dir, `unseen-${verdict}.html`);
      const capture = spawnSync(
        process.execPath,
        [path.join(root, 'dist/cli.js'), 'capture', '-e', 'mem:counter:w', '-o', file, '--', path.join(root, 'fixtures-bin/kernel_writer'), '0'],
        { encoding: 'utf8', env: { ...process.env, [DELIVERY_OVERRIDE_VARIABLE]: verdict } },
      );
      assert.equal(capture.status, 0, capture.stderr);
      const page = await env.browser.newPage({ viewport: { width: 1400, height: 800 } });
      await page.goto('file://' + file);
      await page.locator('.rs-lane-label').first().waitFor({ timeout: 30000 });
      const status = (await page.locator('.rs-status').textContent()) ?? '';
      if (verdict === 'silent') assert.match(status, /no hits can be seen on this machine: hardware breakpoints do not fire here/, status);
      else assert.doesNotMatch(status, /can be seen/, status);
      await page.close();
    }
  });

  // On this host's verdict and, assumed, on the other kind's: the page says so exactly when breakpoints are silent.
  it('a watchpoint page says what the recording could not see when breakpoints are silent, on either kind of host', async () => {
    for (const verdict of [undefined, otherHostVerdict()]) {
      const file = path.join(env.dir, `watch-${verdict ?? 'probed'}.html`);
      const capture = spawnSync(
        process.execPath,
        [path.join(root, 'dist/cli.js'), 'capture', '-e', 'mem:counter:w', '-o', file, '--', path.join(root, 'fixtures-bin/kernel_writer'), '50'],
        { encoding: 'utf8', env: { ...process.env, ...(verdict ? { [DELIVERY_OVERRIDE_VARIABLE]: verdict } : {}) } },
      );
      assert.equal(capture.status, 0, capture.stderr);
      const page = await env.browser.newPage({ viewport: { width: 1400, height: 800 } });
      await page.goto('file://' + file);
      // The snapshot list shows each limitation's first clause; its tooltip holds the whole text.
      await page.locator('.rs-lane-label').first().waitFor({ timeout: 30000 });
      const notes = await page
        .locator('.rs-snapshot-limit')
        .evaluateAll((nodes) => nodes.map((node) => ({ shown: node.textContent ?? '', title: (node as HTMLElement).title })));
      const silent = verdict === 'silent' || (verdict === undefined && !hostBreakpoints().fire);
      if (silent) {
        // A capture whose watchpoint recorded nothing says, like the status line, that no hit can be seen; the probe's
        // evidence and the fix are in the tooltip.
        const status = (await page.locator('.rs-status').textContent()) ?? '';
        const clause = status.includes('no hits can be seen')
          ? 'no hits can be seen on this machine: hardware breakpoints do not fire here'
          : 'hardware breakpoints do not fire on this machine';
        assert.ok(
          notes.some((note) => note.shown.includes(clause) && SILENT_BREAKPOINTS.test(note.title)),
          `${verdict}: ${status} ${JSON.stringify(notes)}`,
        );
      } else {
        assert.ok(
          notes.every((note) => !SILENT_BREAKPOINTS.test(note.title)),
          `${verdict}: ${JSON.stringify(notes)}`,
        );
      }
      await page.close();
    }
  });

  it('names every callchain frame of a -g capture of a binary with known functions, with its source line', async () => {
    const file = path.join(env.dir, 'callchains.html');
    // pd_work spins in pd_inner, called from pd_outer, called from main: task-clock samples with frame-pointer callchains.
    const capture = spawnSync(
      process.execPath,
      [path.join(root, 'dist/cli.js'), 'capture', '-e', 'task-clock', '-g', '-o', file, '--', path.join(root, 'fixtures-bin/pd_work'), '0', '300000000'],
      { encoding: 'utf8' },
    );
    assert.equal(capture.status, 0, capture.stderr);
    const source = readFileSync(path.join(root, 'test/fixtures/pd_work.c'), 'utf8').split('\n');
    const lineOf = (text: string) => source.findIndex((line) => line.includes(text)) + 1;
    const page = await env.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    await page.goto('file://' + file);
    await page.locator('.rs-lane-label').first().waitFor({ timeout: 30000 });
    // The sample symbols reach the filter: sym:pd_inner keeps the samples in pd_inner.
    await page.fill('#rs-filter input', 'sym:pd_inner');
    await page.locator('svg.rs-overlay').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('End');
    await page.locator('#rs-details .rs-callchain li').first().waitFor({ timeout: 15000 });
    const frames = await page.$$eval('#rs-details .rs-callchain li', (items) =>
      items.map((item) => ({
        name: item.querySelector('.rs-frame-name')?.textContent ?? '',
        source: item.querySelector('.rs-frame-source')?.textContent?.trim() ?? '',
        link: item.classList.contains('rs-frame-link'),
      })),
    );
    const names = frames.map((frame) => frame.name);
    assert.match(names[0], /^pd_inner\+0x[0-9a-f]+$/, names.join(' ← '));
    assert.match(names[1], /^pd_outer\+0x[0-9a-f]+$/, names.join(' ← '));
    assert.match(names[2], /^main\+0x[0-9a-f]+$/, names.join(' ← '));
    // Past main: libc's start code, named from libc's own symbols (or [unknown] where perf would print it too).
    assert.ok(names.length > 3 && names.slice(3).every((name) => /^[\w.@]+\+0x[0-9a-f]+$|^\[unknown\]$/.test(name)), names.join(' ← '));
    assert.ok(
      names.slice(3).some((name) => /libc_start/.test(name)),
      names.join(' ← '),
    );
    // Return addresses sit on the line of the call; the offline page shows file:line and links nothing.
    assert.match(frames[1].source, new RegExp(`pd_work\\.c:${lineOf('return pd_inner(n) + 1;')}$`), JSON.stringify(frames[1]));
    assert.match(frames[2].source, new RegExp(`pd_work\\.c:${lineOf('volatile double sink = pd_outer(spin);')}$`), JSON.stringify(frames[2]));
    assert.ok(
      frames.every((frame) => !frame.link),
      'no editor offline',
    );
    assert.deepEqual(problems, []);
    await page.close();
  });
});
