// Scenario 6: from a capture to the source through the flame graph. Record the demo (its workspace records callchains),
// capture a snapshot, Shift+drag a range (the call tree follows it), open the range's flame graph, click the demo's
// parser thread entry `parser_main`: the graph zooms into it, the tracks are filtered to the samples through it, and
// the editor opens demo.c at the line binutils' addr2line gives for its entry address. The parser thread, not `main`,
// because it works about 3 ms of every 23 ms (hundreds of task-clock samples in two seconds), while main's thousand
// increments a round take microseconds between 10 ms sleeps: most two-second captures hold no sample of main at all.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { E2E_TIMEOUT_MS, ringsideErrors, runCommand, scenarioLifecycle, startRecordingDemo, waitForTimeline } from './harness';
import type { DrawnFlameBox } from '../../webview/call-tree-view';

/** The source line of `symbol`'s entry in `program`, from nm and addr2line (the referee for Ringside's DWARF reader). */
function entryLine(program: string, symbol: string): number {
  const address = execFileSync('nm', [program], { encoding: 'utf8' })
    .split('\n')
    .find((line) => line.endsWith(` ${symbol}`))
    ?.split(' ')[0];
  assert.ok(address, `${symbol} is not in ${program}`);
  const where = execFileSync('addr2line', ['-e', program, address], { encoding: 'utf8' }).trim();
  const line = Number(/:(\d+)/.exec(where)?.[1]);
  assert.ok(line > 0, where);
  return line;
}

describe('e2e scenario 6: select a range → flame graph → click a frame → the editor opens its line', function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('the flame graph of a selected range zooms into parser_main, filters the tracks to it and reveals it in demo.c', async () => {
    const scenario = await lifecycle.open('6-flame-reveal');
    const { page, workspace } = scenario;
    await startRecordingDemo(page);
    await page.waitForTimeout(2000);
    await runCommand(page, 'Ringside: Capture Snapshot');
    const { frame } = await waitForTimeline(page, 1);
    // A capture with callchains opens with its call tree.
    await frame.locator('#rs-calltree .rs-calltree-node').first().waitFor({ state: 'visible' });
    // Counted by the aggregation worker: VS Code's webview starts it from its Blob URL under the panel's policy.
    const where = await frame
      .locator('#rs-calltree')
      .evaluate(() =>
        (
          window as unknown as { ringside: { callTree: { aggregation: { stats(): { worker: boolean; computedOnPage: number } } } } }
        ).ringside.callTree.aggregation.stats(),
      );
    assert.deepEqual({ worker: where.worker, computedOnPage: where.computedOnPage }, { worker: true, computedOnPage: 0 });
    const summary = frame.locator('#rs-calltree .rs-calltree-summary');
    const samplesIn = async () => Number(/^([\d,]+) samples/.exec(await summary.innerText())?.[1].replace(/,/g, '') ?? NaN);
    const whole = await samplesIn();
    assert.match(await summary.innerText(), / · whole capture$/);
    // Shift+drag over the middle half of the capture, across the parser thread's lane: the call tree follows the range.
    const plot = (await frame.locator('.rs-overlay').first().boundingBox())!;
    const parserLane = (await frame
      .locator('.rs-lane-label .rs-lane-name', { hasText: /^parser \d+$/ })
      .first()
      .boundingBox())!;
    const y = parserLane.y + parserLane.height / 2;
    await page.keyboard.down('Shift');
    await page.mouse.move(plot.x + plot.width * 0.25, y);
    await page.mouse.down();
    await page.mouse.move(plot.x + plot.width * 0.5, y, { steps: 4 });
    await page.mouse.move(plot.x + plot.width * 0.75, y, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await frame.locator('#rs-calltree .rs-calltree-summary', { hasText: / · selected range$/ }).waitFor({ state: 'visible' });
    await frame.locator('#rs-calltree:not([data-pending])').waitFor({ state: 'attached' });
    const ranged = await samplesIn();
    assert.ok(ranged > 0 && ranged < whole, `the range holds ${ranged} of the capture's ${whole} samples`);
    await frame.locator('#rs-calltree button[data-mode="flame"]').click();
    const canvas = frame.locator('#rs-calltree canvas.rs-flame');
    await canvas.waitFor({ state: 'visible' });
    const boxes = () =>
      canvas.evaluate(() => (window as unknown as { ringside: { callTree: { flameBoxes(): DrawnFlameBox[] } } }).ringside.callTree.flameBoxes());
    const entry = 'parser_main';
    const box = (await boxes()).filter((b) => b.name === entry).sort((a, b) => b.width - a.width)[0];
    assert.ok(box, `no ${entry} in the flame graph: ${(await boxes()).map((b) => b.name).join(', ')}`);
    await scenario.screenshot('flame-graph');

    await canvas.click({ position: { x: box.x + box.width / 2, y: box.y + box.height / 2 } });
    assert.equal(await canvas.getAttribute('data-focus'), entry, `the graph zoomed into ${entry}`);
    assert.equal(await frame.locator('#rs-filter').evaluate((field) => (field as HTMLInputElement).value), `stack:=${entry}`);
    // The editor opens demo.c with the cursor on the function's first line.
    const line = entryLine(workspace.program, entry);
    await page.locator('.tabs-container .tab[aria-label^="demo.c"]').first().waitFor({ state: 'visible' });
    const cursor = page.locator('.statusbar-item', { hasText: new RegExp(`^\\s*Ln ${line}, Col 1\\s*$`) }).first();
    await cursor.waitFor({ state: 'visible' });
    await scenario.screenshot('revealed-parser-main');
    assert.deepEqual(await ringsideErrors(page), []);
  });
});
