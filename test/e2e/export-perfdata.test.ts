// Scenario 4: export a snapshot as perf.data from the UI (the Sessions view's snapshot row → "Export
// Snapshot…" → perf.data → the save dialog) and check that `perf script -i` reads it back with the same samples, event
// by event, as the timeline shows.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  answerQuickPick,
  E2E_TIMEOUT_MS,
  groupLanesBy,
  scenarioLifecycle,
  openViewPane,
  ringsideErrors,
  runCommand,
  startRecordingDemo,
  timelineFacts,
  waitForNotification,
  waitForTimeline,
} from './harness';

const SYSCALL_EVENT = 'syscalls:sys_enter_clock_nanosleep';

describe('e2e scenario 4: export the snapshot as perf.data from the UI', function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('Sessions view → Export Snapshot… → perf.data; perf script reads the same samples per event', async () => {
    const scenario = await lifecycle.open('4-export-perfdata');
    const { page, workspace } = scenario;
    await startRecordingDemo(page, { tracepoints: [SYSCALL_EVENT] });
    await page.waitForTimeout(1000);
    await runCommand(page, 'Ringside: Capture Snapshot');
    const { frame } = await waitForTimeline(page, 1);
    await groupLanesBy(frame, 'event');
    await frame.locator('.rs-lane-label', { hasText: SYSCALL_EVENT }).first().waitFor({ state: 'visible' });
    const shown = await timelineFacts(frame);
    // Samples per event as the timeline shows them (the side-band lane holds COMM/MMAP/EXIT, which perf script does not list);
    // the demo's watchpoint (mem:demo_rounds:w, preselected) has its lane named `◆ event`.
    const samplesShown = new Map(
      shown.lanes.filter((lane) => lane.label !== 'sideband').map((lane) => [lane.watch ? lane.label.replace(/^◆ /, '') : lane.label, lane.count]),
    );
    assert.ok((samplesShown.get(SYSCALL_EVENT) ?? 0) >= 50, JSON.stringify(shown.lanes));

    // The snapshot row's inline action, shown on hover.
    const pane = await openViewPane(page, 'Ringside', 'Sessions');
    const snapshotRow = pane.locator('.monaco-list-row', { hasText: /records · .* · pause/ }).first();
    await snapshotRow.hover();
    await snapshotRow.locator('.action-label[aria-label^="Export Snapshot"]').first().click();
    await answerQuickPick(page, /Export snapshot/, 'perf.data');
    const exported = path.join(workspace.folder, 'exported-from-ui.perf.data');
    // code-server's save dialog is VS Code's simple file dialog: a quick input holding the proposed path.
    const pathBox = page.locator('.quick-input-widget .quick-input-box input').first();
    await pathBox.waitFor({ state: 'visible' });
    const deadline = Date.now() + E2E_TIMEOUT_MS;
    while (!(await pathBox.inputValue()).startsWith(workspace.folder) && Date.now() < deadline) await page.waitForTimeout(100);
    assert.match(await pathBox.inputValue(), /\/ringside-\d+\.data$/, 'the dialog proposes ringside-<time>.data in the workspace');
    await scenario.screenshot('save-dialog');
    await pathBox.fill(exported);
    await pathBox.press('Enter');
    const message = await waitForNotification(page, /Ringside: exported \d+ records to /);
    await scenario.screenshot('exported');
    assert.deepEqual(await ringsideErrors(page), []);
    assert.ok(message.includes(exported), message);
    assert.ok(existsSync(exported) && statSync(exported).size > 0, `${exported} was not written`);

    const script = spawnSync('perf', ['script', '-i', exported, '-F', 'event'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(script.status, 0, script.stderr);
    const perScript = new Map<string, number>();
    for (const line of script.stdout.split('\n')) {
      const name = line.trim().replace(/:$/, '');
      if (name) perScript.set(name, (perScript.get(name) ?? 0) + 1);
    }
    assert.deepEqual(
      Object.fromEntries([...perScript].sort()),
      Object.fromEntries([...samplesShown].sort()),
      `perf script: ${JSON.stringify([...perScript])}; timeline: ${JSON.stringify([...samplesShown])}`,
    );
  });
});
