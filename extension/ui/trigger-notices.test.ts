import * as assert from 'node:assert/strict';
import { TriggerNotices, type Notice } from './trigger-notices';

/** Notices as the user would see them: their titles and texts, and whether they are open. */
function recorder() {
  const shown: { title: string; texts: string[]; open: boolean; closed: boolean }[] = [];
  const open = (title: string): Notice => {
    const entry = { title, texts: [] as string[], open: true, closed: false };
    shown.push(entry);
    return {
      update: (message) => {
        entry.texts.push(message);
      },
      close: () => {
        entry.open = false;
      },
      get closed() {
        return entry.closed;
      },
    };
  };
  return { shown, open };
}

describe('triggered snapshot notices', () => {
  it('coalesce a trigger firing every second into one notice with a count, per session', () => {
    const { shown, open } = recorder();
    const notices = new TriggerNotices(open);
    for (let i = 1; i <= 5; i++) notices.triggered('s1', 'snapshot when getpid', `snapshot #${i} (10 records)`);
    notices.triggered('s2', 'snapshot when write', 'snapshot #1 (3 records)');
    assert.equal(shown.length, 2, 'one notice per session, not one per snapshot');
    assert.deepEqual(shown[0].texts.at(-1), '5 snapshots taken; the last: snapshot #5 (10 records)');
    assert.equal(shown[0].texts[0], 'snapshot #1 (10 records)');
    assert.equal(shown[0].title, 'Ringside: snapshot when getpid');
    assert.equal(notices.count('s1'), 5);
  });

  it('stay quiet once the user closed the notice, until the session ends; then a new recording gets one again', () => {
    const { shown, open } = recorder();
    const notices = new TriggerNotices(open);
    notices.triggered('s1', 'a', 'first');
    shown[0].closed = true; // the user dismissed it
    notices.triggered('s1', 'a', 'second');
    notices.triggered('s1', 'a', 'third');
    assert.equal(shown.length, 1, 'no new toast after a dismissal');
    assert.equal(notices.count('s1'), 3, 'still counted');
    notices.ended('s1');
    notices.triggered('s1', 'a', 'again');
    assert.equal(shown.length, 2);
    assert.deepEqual(shown[1].texts, ['again']);
  });

  it('close their notice when the session ends', () => {
    const { shown, open } = recorder();
    const notices = new TriggerNotices(open);
    notices.triggered('s1', 'a', 'first');
    notices.ended('s1');
    assert.equal(shown[0].open, false);
  });
});
