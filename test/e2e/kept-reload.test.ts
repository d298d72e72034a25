// Scenario 5: a kept (persistent) recording survives a window reload. "Ringside: Start Kept Recording…" on
// the demo hands the rings to a detached keeper; snapshot; "Developer: Reload Window" (the extension host restarts and
// forgets every session); "Ringside: Attach to Event…" → the keeper; snapshot again: the timeline shows records that
// the demo produced after the reload, from the same rings.
import assert from 'node:assert/strict';
import {
  E2E_TIMEOUT_MS,
  openViewPane,
  outputLogUntil,
  scenarioLifecycle,
  pidsRunning,
  ringsideErrors,
  runCommand,
  runCommandAndPick,
  startRecordingDemo,
  timelineFacts,
  waitForNotification,
  waitForTimeline,
} from './harness';

const SYSCALL_EVENT = 'syscalls:sys_enter_clock_nanosleep';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // kill(pid, 0) failing means the process is gone
    return false;
  }
}

describe('e2e scenario 5: reload the window with a kept recording running, re-attach, snapshot again', function () {
  this.timeout(6 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();
  /** Processes this test caused outside code-server's process group (the keeper is detached): killed by pid at the end. */
  const strays: number[] = [];
  after(() => {
    for (const pid of strays) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone (stopped from the UI)
      }
    }
  });

  it('keeps recording through "Developer: Reload Window", comes back in the Sessions view by itself, and is not attached twice', async () => {
    const scenario = await lifecycle.open('5-kept-reload');
    const { page, workspace } = scenario;
    await startRecordingDemo(page, { tracepoints: [SYSCALL_EVENT], kept: true });
    // What resolving the events decided is said as for a plain recording: the demo's watchpoint sees user space only.
    await outputLogUntil(scenario, 'the note of resolving the watchpoint', (log) => /mem:demo_rounds:w: user-space accesses only/.test(log));

    // The session row names the keeper: "keeper <pid>: <events>".
    const pane = await openViewPane(page, 'Ringside', 'Sessions');
    const sessionRow = pane.locator('.monaco-list-row[aria-level="1"]', { hasText: /keeper \d+:/ }).first();
    await sessionRow.waitFor({ state: 'visible' });
    const keeperPid = Number(/keeper (\d+):/.exec(await sessionRow.innerText())![1]);
    strays.push(keeperPid, ...pidsRunning(workspace.program));
    assert.ok(alive(keeperPid), `keeper ${keeperPid} is not running`);
    await page.waitForTimeout(500);
    await runCommand(page, 'Ringside: Capture Snapshot');
    const before = (await waitForTimeline(page, 1)).facts;
    assert.ok(before.records > 0, before.status);
    await scenario.screenshot('kept-snapshot-before-reload');

    const reloaded = page.waitForEvent('load', { timeout: E2E_TIMEOUT_MS });
    await runCommand(page, 'Developer: Reload Window');
    await reloaded;
    // The window comes back with the Ringside side bar it had, not the explorer.
    await page.locator('.monaco-workbench .part.activitybar').first().waitFor({ state: 'visible' });
    await scenario.screenshot('after-reload');
    assert.ok(alive(keeperPid), 'the keeper outlives the window reload');
    await page.waitForTimeout(1000); // the demo keeps running into the keeper's rings while no window is attached

    // The keeper an editor started comes back in the Sessions view by itself (issue 37: never "No recording yet."
    // while it runs); attaching to it again by hand keeps that one session instead of making a twin.
    const reattached = pane.locator('.monaco-list-row[aria-level="1"]', { hasText: `keeper ${keeperPid}:` }).first();
    await openViewPane(page, 'Ringside', 'Sessions');
    await reattached.waitFor({ state: 'visible' });
    await runCommandAndPick(page, 'Ringside: Attach to Event…', 'Ringside: attach to', `keeper ${keeperPid}`);
    await waitForNotification(page, new RegExp(`keeper ${keeperPid}: .* is attached already`));
    assert.equal(await pane.locator('.monaco-list-row[aria-level="1"]', { hasText: `keeper ${keeperPid}:` }).count(), 1, 'one session for the keeper');
    await runCommand(page, 'Ringside: Capture Snapshot');
    // The restored panel may bring back nothing (snapshots lived in the old extension host) — the new one is all it shows.
    const { frame } = await waitForTimeline(page, 1);
    const after = await timelineFacts(frame);
    await scenario.screenshot('snapshot-after-reattach');
    assert.deepEqual(await ringsideErrors(page), []);
    assert.ok(after.records > 0, after.status);
    const snapshotNames = await frame.locator('.rs-snapshot-name').allInnerTexts();
    assert.ok(snapshotNames.length >= 1, 'the page lists the new snapshot');
    // The same rings, still filling: the re-attached snapshot holds more records than before
    // (the demo made ~100 more per second since), up to what the ring retains.
    assert.ok(after.records > before.records, `after re-attach ${after.records} records, before the reload ${before.records}`);

    // Stop the keeper from the UI; it removes its state file and the demo it launched goes with it.
    // The panel restored after the reload can take the focus back and close the pick (the CI's run saw that once).
    await runCommandAndPick(page, 'Ringside: Stop Keeper', 'Stop which keeper?', `keeper ${keeperPid}`);
    const deadline = Date.now() + E2E_TIMEOUT_MS / 2;
    while (alive(keeperPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(!alive(keeperPid), `keeper ${keeperPid} still runs after Stop Keeper`);
  });
});
