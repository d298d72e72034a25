// Scenario 2: right-click the gutter on the demo's counter-increment line → "Record Hits on This Line" → hardware
// breakpoint, run the demo for a known number of rounds, snapshot once it has run them: the hit count the editor shows next to the line and the timeline's
// breakpoint lane both equal the demo's loop count (demoIncrements(rounds)), exactly.
import assert from 'node:assert/strict';
import {
  armDemoLineFromGutter,
  demo,
  E2E_TIMEOUT_MS,
  hoverOnDemoLine,
  scenarioLifecycle,
  ringsideErrors,
  snapshotAfterDemoExits,
  waitForNotification,
  waitForTextOnDemoLine,
} from './harness';
import { hostBreakpoints, SILENT_BREAKPOINTS } from '../host/breakpoints';

const ROUNDS = 3;

describe("e2e scenario 2: Record Hits on This Line counts the demo's loop exactly", function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('gutter menu → launch → snapshot: editor hit count and timeline lane equal the loop count', async () => {
    // Every hit is one record: give the rings room for all of them so the count is exact, not the newest that fit.
    const scenario = await lifecycle.open('2-line-hits', { launchArgs: [String(ROUNDS)], userSettings: { 'ringside.bufferPages': 256 } });
    const { page, workspace } = scenario;
    const expected = demo().demoIncrements(ROUNDS);

    // The hardware breakpoint, picked: this scenario is the debug-register path (line-hits-uprobes.test.ts is auto's).
    const commandLine = await armDemoLineFromGutter(page, workspace.counterLine, 'Record Hits on This Line', { probe: 'hardware breakpoint' });
    assert.equal(commandLine, `${workspace.program} ${ROUNDS}`);
    await scenario.screenshot('armed');
    // Where this host delivers no breakpoint hits (perf counts none), the user is told so at once.
    const fire = hostBreakpoints().fire;
    if (!fire) await waitForNotification(page, SILENT_BREAKPOINTS);
    const { frame, facts } = await snapshotAfterDemoExits(page, workspace.program);
    await scenario.screenshot('timeline');
    assert.deepEqual(await ringsideErrors(page), []);
    const breakpointLanes = facts.lanes.filter((lane) => lane.watch);
    if (!fire) {
      assert.deepEqual(
        breakpointLanes.map((lane) => lane.count).filter((count) => count > 0),
        [],
        JSON.stringify(facts.lanes),
      );
      await frame
        .locator('.rs-snapshot-limit', { hasText: 'no hits can be seen on this machine: hardware breakpoints do not fire here' })
        .first()
        .waitFor({ state: 'visible' });
      // The line never reads "0 hits" as if it never ran: it says that no hit can be seen on this machine.
      const painted = await waitForTextOnDemoLine(page, workspace.counterLine, 'can be seen');
      await scenario.screenshot('editor-unseen-hits');
      assert.ok(painted.includes('no hits can be seen on this machine: hardware breakpoints do not fire here'), painted.join(' | '));
      assert.ok(!painted.some((text) => /\b0 hits\b/.test(text)), painted.join(' | '));
      return;
    }
    assert.equal(breakpointLanes.length, 1, JSON.stringify(facts.lanes));
    assert.match(breakpointLanes[0].label, new RegExp(`demo\\.c:${workspace.counterLine}`));
    assert.equal(breakpointLanes[0].count, expected, `timeline lane ${breakpointLanes[0].label}`);
    assert.ok(breakpointLanes[0].inkPixels > 0);

    // Back in the editor, the line says how often it ran.
    const hitText = `${expected.toLocaleString('en-US')} hits in the last snapshot`;
    const painted = await waitForTextOnDemoLine(page, workspace.counterLine, 'hits in the last snapshot');
    await scenario.screenshot('editor-hit-count');
    const shown = painted.filter((text) => text.includes('hits in the last snapshot'));
    assert.equal(shown.length, 1, `editor decorations: ${painted.join(' | ')}`);
    assert.equal(shown[0], hitText, `editor shows "${shown[0]}"`);
    assert.ok(painted.includes('◆'), `the armed line has its gutter mark: ${painted.join(' | ')}`);

    // Hovering the line gives the same count, with the last hits.
    const hoverText = await hoverOnDemoLine(page, 'ringside-demo: counter-increment', 'demo_counter', 'hits in the last snapshot');
    await scenario.screenshot('editor-hover');
    assert.ok(hoverText.includes(`${expected.toLocaleString('en-US')} hits in the last snapshot`), hoverText);
    assert.match(hoverText, /in hot_loop\(\)/, hoverText);
  });
});
