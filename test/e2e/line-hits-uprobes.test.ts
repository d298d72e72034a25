// Record Hits on This Line on a host whose breakpoints never fire, as this project's other CI hosts are (the verdict
// injected with RINGSIDE_BREAKPOINT_DELIVERY=silent into code-server, so the path is the same on every host): the
// gutter → auto → launch the demo → Capture Snapshot. The line is counted with uprobes, and the hits the editor shows
// on the line and in its hover equal perf's count of the same addresses (perf probe demo.c:LINE + perf stat -a) over
// the same run, which is also the demo's loop count.
import assert from 'node:assert/strict';
import {
  armDemoLineFromGutter,
  demo,
  E2E_TIMEOUT_MS,
  hoverOnDemoLine,
  ringsideErrors,
  scenarioLifecycle,
  snapshotAfterDemoExits,
  waitForNotification,
  waitForTextOnDemoLine,
} from './harness';
import { perfProbeCountWhile } from '../host/perf-probes';

const ROUNDS = 3;

describe('e2e: Record Hits on This Line counts with uprobes where breakpoints are silent, as perf probe counts', function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it("gutter → auto → launch → snapshot: the line's hits equal perf's uprobe count of the same run", async () => {
    const scenario = await lifecycle.open('line-hits-uprobes', {
      launchArgs: [String(ROUNDS)],
      userSettings: { 'ringside.bufferPages': 256 },
      env: { RINGSIDE_BREAKPOINT_DELIVERY: 'silent' },
    });
    const { page, workspace } = scenario;
    // The workspace's demo is a fresh build: every execution of its line on this machine is this scenario's.
    const { perf, value: painted } = await perfProbeCountWhile(workspace.program, [`demo.c:${workspace.counterLine}`], async () => {
      await armDemoLineFromGutter(page, workspace.counterLine, 'Record Hits on This Line', { probe: 'auto' });
      // Said at once: why the line is counted with uprobes (the probe's verdict), not that it will record nothing.
      await waitForNotification(
        page,
        new RegExp(
          `hardware breakpoints do not fire on this machine \\(the probe counted 0 of \\d+ calls\\), so this line is counted with uprobes instead, as line:demo\\.c:${workspace.counterLine} counts it`,
        ),
      );
      await scenario.screenshot('armed');
      // Snapshot once the demo has run all its rounds (a process that ended has no /proc/PID/exe).
      await snapshotAfterDemoExits(page, workspace.program);
      await scenario.screenshot('timeline');
      assert.deepEqual(await ringsideErrors(page), []);
      return waitForTextOnDemoLine(page, workspace.counterLine, 'hits in the last snapshot');
    });
    await scenario.screenshot('editor-hit-count');
    assert.equal(perf, demo().demoIncrements(ROUNDS), "perf counts the demo's loop on its line");
    const shown = painted.filter((text) => text.includes('hits in the last snapshot'));
    assert.deepEqual(shown, [`${perf.toLocaleString('en-US')} hits in the last snapshot`], painted.join(' | '));

    const hoverText = await hoverOnDemoLine(page, 'ringside-demo: counter-increment', 'demo_counter', 'hits in the last snapshot');
    await scenario.screenshot('editor-hover');
    assert.ok(hoverText.includes(`uprobe line:demo.c:${workspace.counterLine}: ${perf.toLocaleString('en-US')} hits in the last snapshot`), hoverText);
  });
});
