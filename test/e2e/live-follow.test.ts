// Scenario: live follow. "Ringside: Start Recording…" on the demo, "Ringside: Show Timeline", tick "Follow live":
// the timeline shows a live capture of the recording that gains records by itself, without Capture Snapshot (the
// page says what it follows; its record count grows on its own while the demo runs). Hidden behind another editor, the
// host stops following (its Output log says so) and starts again when the panel is shown. Every wait is on a
// condition, bounded; how long the first records and the growth took is printed.
import assert from 'node:assert/strict';
import {
  E2E_TIMEOUT_MS,
  E2eError,
  openFile,
  outputLogUntil,
  ringsideErrors,
  runCommand,
  scenarioLifecycle,
  startRecordingDemo,
  timelineFacts,
  webviewFrame,
  type TimelineFacts,
} from './harness';
import type { FrameLocator, Page } from 'playwright-core';

/** A tracepoint the demo hits 100 times a second and more (one clock_nanosleep per 10 ms round of main). */
const SYSCALL_EVENT = 'syscalls:sys_enter_clock_nanosleep';
/** How long the live capture may take to show records, and to gain more: generous for a machine whose cores are both busy. */
const LIVE_WAIT_MS = 20_000;

/** Polls the page's facts until `condition` holds (or throws after `timeoutMs`, with the last status). */
async function until(
  page: Page,
  frame: FrameLocator,
  what: string,
  condition: (facts: TimelineFacts) => boolean,
  timeoutMs = LIVE_WAIT_MS,
): Promise<TimelineFacts> {
  const deadline = Date.now() + timeoutMs;
  let last: TimelineFacts | undefined;
  while (Date.now() < deadline) {
    last = await timelineFacts(frame);
    if (condition(last)) return last;
    const errors = await ringsideErrors(page);
    if (errors.length) throw new E2eError(`the extension reported: ${errors.join(' | ')}`);
    await page.waitForTimeout(100);
  }
  throw new E2eError(`${what} did not happen within ${timeoutMs} ms: last status ${JSON.stringify(last?.status)}`);
}

describe('e2e: live follow — the timeline of a running recording grows by itself', function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('shows a live capture that gains records without Capture Snapshot', async () => {
    const scenario = await lifecycle.open('live-follow');
    const { page } = scenario;
    await startRecordingDemo(page, { tracepoints: [SYSCALL_EVENT] });
    await runCommand(page, 'Ringside: Show Timeline');
    const frame = await webviewFrame(page);
    await frame.locator('#rs-follow').first().waitFor({ state: 'visible' });
    const ticked = Date.now();
    await frame.locator('#rs-follow').first().click();

    // The host says what it follows, and the live capture shows records: no snapshot was taken.
    const first = await until(
      page,
      frame,
      'a live capture with records',
      (facts) => facts.records > 0 && facts.snapshots === 1 && /live: demo/.test(facts.status),
    );
    const firstMs = Date.now() - ticked;
    await frame.locator('.rs-snapshot-meta', { hasText: 'live ·' }).first().waitFor({ state: 'visible' });
    const grown = await until(page, frame, 'the live capture gaining records', (facts) => facts.records > first.records && facts.snapshots === 1);
    const grownMs = Date.now() - ticked - firstMs;
    await scenario.screenshot('live');
    process.stdout.write(
      `      live follow: first records ${firstMs} ms after ticking Follow live, more ${grownMs} ms later (${first.records} → ${grown.records})\n`,
    );
    // Its lanes are drawn, each lane's records painted.
    const painted = await until(page, frame, 'painted lanes', (facts) => facts.lanes.some((lane) => lane.count > 0 && lane.inkPixels > 0));
    assert.ok(
      painted.lanes.some((lane) => /^demo \d+$/.test(lane.label)),
      JSON.stringify(painted.lanes),
    );
    assert.match(painted.canvasLabel, /^Timeline: [\d,]+ records in \d+ lanes$/);

    // Hidden behind another editor of its group: the host stops reading the rings (its Output log says the follow
    // ended, and nothing starts another while the panel stays hidden). Shown again, the page is made anew (its context is
    // not kept while hidden), asks again from its saved box, and a new live capture grows.
    const followsStarted = (log = scenario.outputLog()) => (log.match(/timeline: following "demo[^"]*" live/g) ?? []).length;
    const followsEnded = (log = scenario.outputLog()) => (log.match(/timeline: live follow ended: /g) ?? []).length;
    await outputLogUntil(scenario, 'the Output log to say the follow started', (log) => followsStarted(log) === 1, LIVE_WAIT_MS);
    assert.equal(followsEnded(), 0, 'following while shown');
    await openFile(page, 'demo.c');
    await frame.locator('#rs-follow').first().waitFor({ state: 'detached' });
    await outputLogUntil(scenario, 'the host to stop following the hidden panel', (log) => followsEnded(log) === 1, LIVE_WAIT_MS);
    const stoppedLine = scenario.outputLog().match(/timeline: live follow ended: .*/)![0];
    await scenario.screenshot('hidden');
    assert.equal(followsStarted(), 1, 'no follow starts while the panel is hidden');
    await page.locator('.tabs-container .tab[aria-label^="Ringside Timeline"]').first().click();
    const shown = await webviewFrame(page);
    assert.equal(await shown.locator('#rs-follow').first().isChecked(), true, "the page's box is kept in its view state");
    const again = await until(
      page,
      shown,
      'a new live capture after the panel was shown again',
      (facts) => facts.records > 0 && facts.snapshots === 1 && /live: demo/.test(facts.status),
    );
    await outputLogUntil(scenario, 'the Output log to say the follow started again', (log) => followsStarted(log) === 2, LIVE_WAIT_MS);
    assert.equal(followsEnded(), 1);
    process.stdout.write(`      hidden: "${stoppedLine}"; shown again: ${again.records} records\n`);

    // Unticked: the host stops following and the page says nothing of it any more; the capture stays as it was.
    await shown.locator('#rs-follow').first().click();
    await until(page, shown, 'live follow to stop', (facts) => !/live:/.test(facts.status));
    await outputLogUntil(scenario, 'the Output log to say the follow ended', (log) => followsEnded(log) === 2, LIVE_WAIT_MS);
    assert.deepEqual(await ringsideErrors(page), []);
  });
});
