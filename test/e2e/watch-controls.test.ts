// Scenario 3: the watch controls of the timeline panel. The demo's recording holds one debug register from the start
// (its default events include a write watchpoint on demo_rounds), and the panel counts and names it. Add a write
// watchpoint on the demo's global demo_counter from the panel, snapshot and see its hits, disable it (its register
// stays reserved, as the kernel does), fill the four debug registers and try one more: the panel explains the ENOSPC
// and names who holds them; remove one and see the count drop.
import assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import {
  acceptQuickInput,
  answerQuickPick,
  E2E_TIMEOUT_MS,
  scenarioLifecycle,
  pidsRunning,
  ringsideErrors,
  runCommand,
  timelineFacts,
  waitForNotification,
  waitForTimeline,
} from './harness';
import { hostBreakpoints, SILENT_BREAKPOINTS } from '../host/breakpoints';

/** Picks an option of one of the panel's toolkit dropdowns by clicking, like a user. */
async function choose(frame: FrameLocator, dropdownId: string, option: string): Promise<void> {
  const dropdown = frame.locator(`#${dropdownId}`).first();
  await dropdown.click();
  await dropdown.locator('vscode-option', { hasText: option }).first().click();
}

/** Fills the panel's breakpoint form and presses Add; returns the status line once the host answered. */
async function addBreakpoint(frame: FrameLocator, location: string, type: string, length: string, pid: number): Promise<string> {
  await frame.locator('#rs-watch-location input').first().fill(location);
  await choose(frame, 'rs-watch-type', type);
  await choose(frame, 'rs-watch-length', length);
  await choose(frame, 'rs-watch-target-kind', 'process');
  await frame.locator('#rs-watch-target input').first().fill(String(pid));
  await frame.locator('#rs-watch-submit').first().click();
  return waitForWatchStatus(frame, new RegExp(`^Add ${location.replace(/[.]/g, '\\.')}(: done\\.| failed)`));
}

async function waitForWatchStatus(frame: FrameLocator, text: RegExp): Promise<string> {
  const status = frame.locator('#rs-watch-status').first();
  await status.locator('div', { hasText: text }).first().waitFor({ state: 'visible' });
  return (await status.innerText()).trim();
}

async function budgetUsed(frame: FrameLocator, used: number): Promise<string> {
  const budget = frame.locator('.rs-budget-text', { hasText: `Debug registers: ${used}/4 used` }).first();
  await budget.waitFor({ state: 'visible' });
  return budget.innerText();
}

/**
 * Capture Snapshot; with more than one recording running it asks which, and `recording` answers (typed, then picked):
 * a recording the editor made for breakpoints is named `<target> · breakpoints: <specs>`. The timeline then shows the
 * new capture, which `mayBeEmpty` allows to hold no records.
 */
async function snapshot(page: Page, snapshots: number, recording?: string, mayBeEmpty = false): Promise<FrameLocator> {
  await runCommand(page, 'Ringside: Capture Snapshot');
  if (recording) await answerQuickPick(page, 'Ringside: capture a snapshot of which recording?', recording, new RegExp(`· ${recording}:`));
  return (await waitForTimeline(page, snapshots, undefined, mayBeEmpty)).frame;
}

describe('e2e scenario 3: watch controls in the timeline panel', function () {
  this.timeout(6 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it("adds a write watchpoint on demo_counter, shows its hits, disables it, and explains ENOSPC beside the recording's own", async () => {
    const scenario = await lifecycle.open('3-watch-controls');
    const { page, workspace } = scenario;

    await runCommand(page, 'Ringside: Start Recording…');
    await acceptQuickInput(page, 'Ringside: events to record');
    await answerQuickPick(page, 'Ringside: record what?', 'Launch', 'Launch a program');
    await acceptQuickInput(page, 'Ringside: program and arguments');
    await page.locator('.statusbar-item', { hasText: 'recording' }).first().waitFor({ state: 'visible' });
    let frame = await snapshot(page, 1);
    const pids = pidsRunning(workspace.program);
    assert.equal(pids.length, 1, `demo processes: ${pids.join(', ')}`);
    const demoPid = pids[0];
    // The recording's own watchpoint (mem:demo_rounds:w) is bound to the demo's threads: one register, named since no row shows it.
    const recording = `demo \\(pid ${demoPid}\\): task-clock, mem:demo_rounds:w`;
    const recordingHolds = new RegExp(`; also held by recordings: mem:demo_rounds:w \\(${recording}\\)$`);
    assert.match(await budgetUsed(frame, 1), recordingHolds);
    assert.match(await budgetUsed(frame, 1), /\(0 pinned per-CPU, 1 pinned by the busiest task, 0 flexible\)/);

    // 1. A write watchpoint on the demo's global, from the panel.
    const added = await addBreakpoint(frame, 'demo_counter', 'write (w)', '8 bytes', demoPid);
    assert.match(added, /^Add demo_counter: done\./, added);
    await budgetUsed(frame, 2);
    const row = frame.locator('.rs-watch-table tbody tr', { hasText: 'demo_counter' }).first();
    assert.match((await row.innerText()).replace(/\s+/g, ' '), new RegExp(`demo_counter w 8 pid ${demoPid}`));
    await scenario.screenshot('watch-added');

    // 2. Its hits: the demo writes demo_counter 1000 times per 10 ms round. Where this host delivers
    // no breakpoint hits (perf counts none), the user was told so when it was armed, the snapshot says
    // why it is empty, and the Hits column says no hit can be seen here (never 0, as if the code never ran); everything
    // below (registers held, ENOSPC) is the same.
    const fire = hostBreakpoints().fire;
    if (!fire) await waitForNotification(page, SILENT_BREAKPOINTS);
    await page.waitForTimeout(500);
    // The panel's watchpoints are a recording of their own beside the demo's: take theirs (the timeline shows it; without
    // hits it may hold no record at all).
    frame = await snapshot(page, 2, 'breakpoints', !fire);
    const facts = await timelineFacts(frame);
    const watchLane = facts.lanes.find((lane) => lane.watch);
    let hits = 0;
    if (fire) {
      assert.ok(watchLane && /demo_counter/.test(watchLane.label), JSON.stringify(facts.lanes));
      assert.ok(watchLane.count >= 1000 && watchLane.inkPixels > 0, JSON.stringify(watchLane));
      hits = watchLane.count;
    } else {
      assert.ok(!watchLane || watchLane.count === 0, JSON.stringify(facts.lanes));
      await frame
        .locator('.rs-snapshot-limit', { hasText: 'no hits can be seen on this machine: hardware breakpoints do not fire here' })
        .first()
        .waitFor({ state: 'visible' });
    }
    // The list's Hits column says the same as the lane, as soon as the snapshot is in.
    const hitsText = fire ? hits.toLocaleString('en-US') : 'not seen here';
    const hitsCell = row.locator('td').nth(5);
    await hitsCell
      .filter({ hasText: hitsText })
      .waitFor({ state: 'visible' })
      .catch(async () =>
        /* the wait timed out: fail with what the cell shows instead */ assert.fail(
          `Hits column shows ${await hitsCell.innerText()}, the timeline lane ${hits}`,
        ),
      );
    await scenario.screenshot('watch-hits');

    // 3. Disable it: it records nothing more, but the kernel keeps its debug register reserved until
    // the breakpoint is closed (registers are taken at open), so the count stays and the row says why.
    await row.locator('vscode-checkbox.rs-watch-enable').first().click();
    await waitForWatchStatus(frame, /^Disable demo_counter: done\./);
    await budgetUsed(frame, 2);
    assert.match(
      (await frame
        .locator('.rs-watch-table tbody tr', { hasText: 'demo_counter' })
        .first()
        .locator('vscode-checkbox.rs-watch-enable')
        .first()
        .getAttribute('title')) ?? '',
      /still holds its debug register until removed/,
    );
    const cells = await frame.locator('.rs-watch-table tbody tr', { hasText: 'demo_counter' }).first().locator('td').allInnerTexts();
    assert.equal(cells[5], hitsText, `Hits column ${cells[5]} vs the timeline lane ${hits}`);
    await scenario.screenshot('watch-disabled');
    await frame.locator('.rs-watch-table tbody tr', { hasText: 'demo_counter' }).first().locator('vscode-checkbox.rs-watch-enable').first().click();
    await waitForWatchStatus(frame, /^Enable demo_counter: done\./);
    await budgetUsed(frame, 2);

    // 4. Two more fill the four debug registers (the recording holds the fourth); one more is refused before anything is
    // opened, naming the holders, with the kernel's rule explained.
    for (const [location, type] of [
      ['demo_rounds', 'write (w)'],
      ['demo_counter', 'read/write (rw)'],
    ] as const) {
      const status = await addBreakpoint(frame, location, type, '8 bytes', demoPid);
      assert.match(status, /: done\./, status);
    }
    await budgetUsed(frame, 4);
    const refused = await addBreakpoint(frame, 'demo_counter', 'write (w)', '8 bytes', demoPid);
    await scenario.screenshot('fifth-refused');
    assert.match(
      refused,
      new RegExp(
        `^Add demo_counter failed: ENOSPC: only 0 of 4 debug registers are free on pid ${demoPid}; ` +
          `held by: mem:demo_rounds:w \\(${recording}\\), mem:demo_counter/8:w:u \\(`,
      ),
      refused,
    );
    const explanation = await frame.locator('#rs-watch-status .rs-enospc').first().innerText();
    // All four are on the demo's task: the page says so, and that none is left, not that one would be free.
    assert.match(
      explanation,
      /^No debug register free \(ENOSPC\): 0 pinned per-CPU \+ 4 pinned by the busiest task already use all 4 debug registers/,
      explanation,
    );
    await budgetUsed(frame, 4);

    // 5. Removing one closes it and frees its register: the count drops and the fifth now fits.
    await frame.locator('.rs-watch-table tbody tr', { hasText: 'demo_rounds' }).first().locator('vscode-button.rs-watch-remove').first().click();
    await waitForWatchStatus(frame, /^Remove demo_rounds: done\./);
    await budgetUsed(frame, 3);
    const fifth = await addBreakpoint(frame, 'demo_counter', 'write (w)', '8 bytes', demoPid);
    assert.match(fifth, /: done\./, fifth);
    await budgetUsed(frame, 4);
    assert.deepEqual(await ringsideErrors(page), []);
  });
});
