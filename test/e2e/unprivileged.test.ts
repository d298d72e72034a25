// VS Code as an ordinary user: code-server, its extension host and the demo run as uid 65534 with no capabilities, the
// way a desktop VS Code runs. "Ringside: Capture Snapshot" is in the palette from the first start (with nothing
// recording it offers to start one), the recording says it sees user space only when the kernel's paranoid level says
// so, the timeline shows the demo's records with a lane of its preselected watchpoint (demo_rounds, written once per
// round: exactly ROUNDS hits), and the gutter's "Record Hits on This Line" counts the loop exactly.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  acceptQuickInput,
  answerQuickPick,
  demo,
  E2E_TIMEOUT_MS,
  LINE_PROBE_PICK,
  lineNumberMenu,
  openFile,
  ringsideErrors,
  runCommand,
  scenarioLifecycle,
  waitForNotification,
  waitForQuickInput,
  waitForTimeline,
} from './harness';
import { hostBreakpoints, SILENT_BREAKPOINTS } from '../host/breakpoints';

const NOBODY = 65534;
const ROUNDS = 3;

describe('e2e: Ringside in code-server run by an ordinary user (uid 65534)', function () {
  this.timeout(6 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('Capture Snapshot from the palette starts a recording, captures it, and the gutter counts line hits', async () => {
    const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
    // Every hit is one record: rings with room for all of them, so the count is exact (as in scenario 2).
    const scenario = await lifecycle.open('unprivileged', { asUid: NOBODY, launchArgs: [String(ROUNDS)], userSettings: { 'ringside.bufferPages': 256 } });
    const { page, workspace } = scenario;
    // Opened before the timeline exists: once its webview has the focus, quick open's key never reaches the workbench.
    await openFile(page, 'demo.c');

    // Nothing records yet: the command is there all the same and offers a way to start.
    await runCommand(page, 'Ringside: Capture Snapshot');
    await answerQuickPick(page, /nothing is recording yet/, 'Start Recording', 'Start Recording…');
    await waitForQuickInput(page, 'Ringside: events to record');
    await scenario.screenshot('events');
    await acceptQuickInput(page, 'Ringside: events to record');
    await answerQuickPick(page, 'Ringside: record what?', 'Launch', 'Launch a program');
    await acceptQuickInput(page, 'Ringside: program and arguments');
    const status = page.locator('.statusbar-item', { hasText: 'recording' }).first();
    await status.waitFor({ state: 'visible' });
    const statusText = await status.innerText();
    // An ordinary user sees the kernel only at paranoid <= 1; above that the status bar says what is left out.
    if (paranoid >= 2) assert.match(statusText, /user space only/, statusText);
    else assert.doesNotMatch(statusText, /user space only/, statusText);
    await scenario.screenshot('recording');
    // Where this host delivers no breakpoint hits (perf counts none), the user is told so as the recording starts.
    const fire = hostBreakpoints().fire;
    if (!fire) await waitForNotification(page, SILENT_BREAKPOINTS);
    await page.waitForTimeout(500);
    await runCommand(page, 'Ringside: Capture Snapshot');
    const { facts } = await waitForTimeline(page, 1);
    await scenario.screenshot('timeline');
    assert.deepEqual(await ringsideErrors(page), []);
    assert.ok(facts.records > 0, facts.status);
    if (paranoid >= 2) assert.match(facts.status, /user space only/, 'the timeline says what it cannot see');
    // The watchpoint on demo_rounds works for an ordinary user (a program's own accesses are user space): main wrote it
    // once per round.
    const roundsLanes = facts.lanes.filter((lane) => lane.watch);
    if (fire) {
      assert.deepEqual(
        roundsLanes.map((lane) => [lane.label, lane.count]),
        [['◆ mem:demo_rounds:w', ROUNDS]],
        JSON.stringify(facts.lanes),
      );
    } else {
      assert.deepEqual(
        roundsLanes.map((lane) => lane.count).filter((count) => count > 0),
        [],
        JSON.stringify(facts.lanes),
      );
    }

    await runCommand(page, 'Ringside: Stop Recording');
    await page.locator('.statusbar-item', { hasText: 'stopped' }).first().waitFor({ state: 'visible' });

    // The gutter: a hardware breakpoint on the demo's counter line, user space of its own program.
    await page.locator('.tabs-container .tab[aria-label^="demo.c"]').first().click();
    await lineNumberMenu(page, workspace.counterLine, 'Record Hits on This Line');
    // auto: uprobes are refused to this user, so the line is a hardware breakpoint whatever the host does.
    await answerQuickPick(page, LINE_PROBE_PICK, 'auto');
    await answerQuickPick(page, 'Ringside: record what?', 'Launch', 'Launch a program');
    await acceptQuickInput(page, 'Ringside: program and arguments');
    await page.locator('.statusbar-item', { hasText: 'recording' }).first().waitFor({ state: 'visible' });
    if (!fire) {
      await waitForNotification(page, SILENT_BREAKPOINTS);
      // Where uprobes would have counted the line, the user is told why they cannot, and the fix.
      await waitForNotification(page, /uprobes, which would count this line \(line:demo\.c:\d+\), are refused: .*CAP_PERFMON/);
    }
    await page.waitForTimeout(1000);
    await runCommand(page, 'Ringside: Capture Snapshot');
    // The first session is stopped, so one recording runs and Capture Snapshot takes it without asking; the
    // timeline keeps the first snapshot and shows the new one (which, without hits, may hold no record).
    const lines = await waitForTimeline(page, 2, E2E_TIMEOUT_MS, !fire);
    await scenario.screenshot('line-hits');
    assert.deepEqual(await ringsideErrors(page), []);
    const breakpointLanes = lines.facts.lanes.filter((lane) => lane.watch);
    if (!fire) {
      // No hit where the hardware delivers none; the second snapshot says why.
      assert.deepEqual(
        breakpointLanes.map((lane) => lane.count).filter((count) => count > 0),
        [],
        JSON.stringify(lines.facts.lanes),
      );
      await lines.frame
        .locator('.rs-snapshot-limit', { hasText: 'no hits can be seen on this machine: hardware breakpoints do not fire here' })
        .first()
        .waitFor({ state: 'visible' });
      return;
    }
    assert.equal(breakpointLanes.length, 1, JSON.stringify(lines.facts.lanes));
    assert.equal(breakpointLanes[0].count, demo().demoIncrements(ROUNDS), breakpointLanes[0].label);
  });
});
