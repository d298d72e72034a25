// Ring growth (RecorderOptions.windowSec) against the locked-memory budget: the recorder grows its
// rings as far as the budget lets it while old and new rings are both mapped, says so, and stops.
import assert from 'node:assert/strict';
import { Recorder } from '../../native/perf/recorder';
import { pagesForWindow } from '../../native/perf/ring-growth';
import { DEFAULT_SIDEBAND_PAGES, ringSizesFor } from '../../native/perf/ring-sizing';
import { readPerfAccess } from '../../native/sys/access';
import { onlineCpus } from '../../native/perf/procfs';
import { fixture, perfResources, tracepointEvent } from './helpers';

describe('kernel: Recorder growth (--window)', function () {
  this.timeout(30000);

  it('sizes rings for the window: rate x window plus a quarter, a power of two, never smaller than asked', () => {
    assert.equal(pagesForWindow(100 * 4096, 2, 4096), 256);
    assert.equal(pagesForWindow(100 * 4096, 2, 4096, 512), 512);
    assert.equal(pagesForWindow(1, 1, 4096), 1);
  });

  it('a side-band ring asked larger than the default is taken only without a locked-memory budget', () => {
    const cpus = onlineCpus().length;
    const events = [tracepointEvent('syscalls', 'sys_enter_close')];
    const options = { events, target: { kind: 'cpus' as const }, pages: 16, sidebandPages: 128, gapFree: false };
    assert.deepEqual(ringSizesFor(options, events, { ...readPerfAccess(), lockedPagesBudget: null }), { pages: 16, sidebandPages: 128, note: null });
    // Room for it by the numbers, but the budget is shared with every process of the user: the default is kept.
    const roomy = ringSizesFor(options, events, { ...readPerfAccess(), lockedPagesBudget: cpus * (17 + 129) });
    assert.deepEqual(roomy, { pages: 16, sidebandPages: DEFAULT_SIDEBAND_PAGES, note: null });
    // And an explicit --pages is refused for what it needs itself, not for the slack.
    assert.throws(
      () => ringSizesFor(options, events, { ...readPerfAccess(), lockedPagesBudget: cpus * (17 + DEFAULT_SIDEBAND_PAGES) }),
      /flight-recorder ring\(s\) of 16 pages and \d+ side-band ring\(s\) of 16 pages need/,
    );
  });

  it('stops growing where the locked-memory budget ends, and says so', async () => {
    const cpus = onlineCpus().length;
    // Mapped at first: one 1-page flight ring and one 16-page side-band ring per CPU (each + a header
    // page). The budget leaves room for 16-page rings beside them, not for the 256 the window needs.
    const mapped = cpus * (2 + 17);
    const access = { ...readPerfAccess(), lockedPagesBudget: mapped + cpus * 17 };
    const before = perfResources();
    const recorder = await Recorder.open({
      events: [tracepointEvent('syscalls', 'sys_enter_close')],
      access,
      pages: 1,
      windowSec: 2,
      gapFree: false,
      target: { kind: 'launch', argv: ['taskset', '-c', '0', fixture('kernel_paced'), '6000', '1500'], stdio: 'ignore' },
    });
    try {
      assert.equal(await recorder.exited, 0);
      const notes = recorder.limitations.join('\n');
      assert.match(notes, /rings resized from 1 to 16 pages .*the locked-memory budget stopped growth at 16 pages \(the window needs \d+\)/);
      assert.equal(recorder.backwardRings[0].dataSize, 16 * access.pageSize);
      assert.equal(notes.match(/resized/g)?.length, 1, 'no further attempt once the budget is reached');
      // The retired rings are closed at the swap: one backward and one side-band mapping per CPU remain.
      assert.deepEqual(perfResources(), { fds: before.fds + 2 * cpus, mappings: before.mappings + 2 * cpus });
    } finally {
      recorder.dispose();
    }
    assert.deepEqual(perfResources(), before, 'nothing left after dispose');
  });
});
