// Stop Recording with several recordings offers all of them first (issue 37: a launched program, a kept recording
// and an attached event are usual together), under a stand-in `vscode` whose quick pick answers as a user would.
import * as assert from 'node:assert/strict';
import { standInVscode } from './helpers';
import type { pickRecordingsToStop } from '../../extension/ui/pickers';

describe('extension: Stop Recording picks one recording or all of them', () => {
  const offered: { title: string; labels: string[] }[] = [];
  let answer: string | undefined;
  let restore: () => void;
  let pick: typeof pickRecordingsToStop;

  before(async () => {
    restore = standInVscode({
      window: {
        showQuickPick: async (items: { label: string }[], options: { title?: string } = {}) => {
          offered.push({ title: options.title ?? '', labels: items.map((item) => item.label) });
          return answer === undefined ? undefined : items.find((item) => item.label.includes(answer!));
        },
      },
    });
    pick = (await import('../../extension/ui/pickers')).pickRecordingsToStop;
  });
  after(() => restore());
  beforeEach(() => {
    offered.length = 0;
    answer = undefined;
  });

  const live = [
    { id: 'a', label: 'demo (pid 10)', state: 'recording' },
    { id: 'b', label: 'kept: server (pid 20)', state: 'recording' },
    { id: 'c', label: 'attached: cpu-clock', state: 'paused' },
  ];

  it('one recording is stopped without asking; none, nothing', async () => {
    assert.deepEqual(await pick(live.slice(0, 1)), ['a']);
    assert.deepEqual(await pick([]), []);
    assert.equal(offered.length, 0);
  });

  it('several: "All 3 recordings" first, then each by name; the answer is what is stopped', async () => {
    answer = 'All';
    assert.deepEqual(await pick(live), ['a', 'b', 'c']);
    assert.deepEqual(offered[0], { title: 'Stop which recording?', labels: ['$(debug-stop) All 3 recordings', ...live.map((s) => s.label)] });
    answer = 'kept: server';
    assert.deepEqual(await pick(live), ['b']);
    answer = undefined; // dismissed
    assert.deepEqual(await pick(live), []);
  });
});
