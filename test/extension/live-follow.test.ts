// The panel's live follow in node against the real kernel: SessionManager.follow reads what the rings of a running
// recording gained (no pause), LiveFollow posts it as liveAppend messages through the one protocol (validated as the
// page validates them) into the page's own store, which acknowledges each one as the page does. The fixture works in
// bursts the test releases only once the store holds the previous burst, so these cannot pass without live data.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionError, SessionManager } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import { LiveFollow } from '../../extension/panel/live-follow';
import { rowsMatchingField } from '../../host/field-filter';
import { validateHostToWebview } from '../../shared/validate';
import type { HostToWebview } from '../../shared/protocol';
import { RecordStore } from '../../webview/store';
import { RecordType } from '../../native/abi/uapi';
import { fixture, ownPerfFds, ownPerfMappings } from './helpers';

const FIRST_FD = 100000;

/** The page's side: every message validated, live appends held in a RecordStore and acknowledged at once. */
class Page {
  readonly store = new RecordStore();
  appends = 0;
  /** Rows of the first append. */
  firstRows = -1;
  private wake: (() => void) | undefined;
  follow: LiveFollow | undefined;

  readonly post = (message: HostToWebview): void => {
    // Through structured clone, as postMessage carries it (ArrayBuffers stay binary).
    const checked = validateHostToWebview(structuredClone(message));
    assert.ok(checked.ok, checked.ok ? '' : checked.reason);
    const m = checked.message;
    if (m.type !== 'liveAppend') return;
    this.store.appendLive(m, 0);
    if (this.appends === 0) this.firstRows = m.batch.rowCount;
    this.appends++;
    // Acknowledged after the turn it arrived in, as the page's message handler runs.
    setImmediate(() => this.follow?.onAck(m.snapshotId, m.seq));
    this.wake?.();
  };

  /** Resolves once `condition` holds for what arrived; the mocha timeout bounds the wait. */
  async until(condition: () => boolean): Promise<void> {
    while (!condition()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Rows of the live capture that are close() samples. */
  closeRows(): number[] {
    const s = this.store;
    const out: number[] = [];
    for (let row = 0; row < s.length; row++) {
      if (s.kind[row] === RecordType.SAMPLE && s.events[s.event[row]]?.name === 'syscalls:sys_enter_close') out.push(row);
    }
    return out;
  }
}

describe('timeline live follow: the host loop on a real recording', function () {
  this.timeout(120_000);
  const backend = createBackend();
  let dir: string;
  let manager: SessionManager;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-live-'));
    manager = new SessionManager({ backend });
  });
  afterEach(async () => {
    // Releases every burst a failed test left waiting, so the launched fixture ends; dispose ends it anyway.
    for (let b = 0; b < 20; b++) writeFileSync(path.join(dir, `go.${b}`), '');
    await manager.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('appends each burst while the command runs, every record once and in order, with its details from the held reads', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const bursts = 4;
    const per = 250;
    const events = await backend.resolveEvents(['syscalls:sys_enter_close'], {});
    const session = await manager.startRecording({
      events,
      target: { kind: 'launch', argv: [fixture('follow_bursts'), 'close', String(bursts), String(per), dir] },
      pages: 64,
    });
    const page = new Page();
    const follow = (page.follow = new LiveFollow(manager.follow(session.id), page.post, {
      snapshotId: 'live-1',
      name: 'live',
      windowNs: () => 60e9,
      intervalMs: 50,
    }));
    try {
      for (let burst = 0; burst < bursts; burst++) {
        writeFileSync(path.join(dir, `go.${burst}`), '');
        await page.until(() => page.closeRows().length >= (burst + 1) * per);
      }
      const live = page.store.getSnapshot('live-1')!;
      assert.ok(live.live, 'a live capture');
      assert.ok(page.appends >= bursts, `one append at least per burst (${page.appends})`);
      const rows = page.closeRows();
      assert.equal(rows.length, bursts * per);
      // Numbered by their fd: read back through the host's held reads, by the live row numbers the page holds.
      const fds = rows.map((row) => Number((follow.details(page.store.localRowOf(row)).tracepointFields as { fd?: string | number }).fd) - FIRST_FD);
      assert.deepEqual(
        fds,
        Array.from({ length: bursts * per }, (_, i) => i),
        'each call once, in the order made',
      );
      assert.equal(follow.skippedBytes, 0n, 'nothing was overwritten before it was read');
      assert.equal(page.store.commOf(rows[0]), 'follow_bursts', "the command's name, from the side-band or /proc");
    } finally {
      follow.stop();
    }
    await manager.stop(session.id);
    assert.equal(ownPerfFds().length, before.fds, 'the follower and the recording closed every fd');
    assert.equal(ownPerfMappings(), before.maps);
  });

  it('keeps a bounded window: reads older than it are forgotten by the host, rows older than it dropped by the page', async () => {
    const events = await backend.resolveEvents(['task-clock'], {});
    const session = await manager.startRecording({
      events,
      target: { kind: 'launch', argv: [fixture('follow_bursts'), 'spin', '1', dir] },
      pages: 64,
    });
    writeFileSync(path.join(dir, 'go.0'), '');
    const page = new Page();
    const windowNs = 300e6;
    const follow = (page.follow = new LiveFollow(manager.follow(session.id), page.post, {
      snapshotId: 'live-2',
      name: 'live',
      windowNs: () => windowNs,
      intervalMs: 50,
    }));
    try {
      // Until the window has moved on past all of the first append (then the host forgot its read too).
      await page.until(() => page.firstRows > 0 && (page.store.getSnapshot('live-2')?.live?.droppedRows ?? 0) > page.firstRows);
      const live = page.store.getSnapshot('live-2')!;
      const [from, to] = page.store.timeExtent(live.index)!;
      assert.ok(to - from <= windowNs, `the capture spans its window at most (${to - from} ns)`);
      for (const row of page.store.rowsOf(live.index)) assert.ok(page.store.time[row] >= live.live!.keepFrom, 'no row before the window');
      // The oldest row held is still answered by the host; one dropped is not.
      assert.equal(follow.details(live.live!.droppedRows).type, 'SAMPLE');
      assert.throws(() => follow.details(0), /fell out of its window/);
    } finally {
      follow.stop();
    }
  });

  it('reads nothing once stopped (the panel hidden) while the recording runs on, and a new follow reads what comes after', async () => {
    const per = 100;
    const events = await backend.resolveEvents(['syscalls:sys_enter_close'], {});
    const session = await manager.startRecording({
      events,
      target: { kind: 'launch', argv: [fixture('follow_bursts'), 'close', '3', String(per), dir] },
      pages: 64,
    });
    const page = new Page();
    const first = (page.follow = new LiveFollow(manager.follow(session.id), page.post, {
      snapshotId: 'live-a',
      name: 'live',
      windowNs: () => 60e9,
      intervalMs: 20,
    }));
    writeFileSync(path.join(dir, 'go.0'), '');
    await page.until(() => page.closeRows().length >= per);
    first.stop();
    const stopped = { reads: first.reads, appends: page.appends };
    // Burst 1 while nothing follows: the recording keeps it (Capture Snapshot shows it), the stopped follow reads nothing.
    writeFileSync(path.join(dir, 'go.1'), '');
    // Burst 1's last call, as a snapshot of the rings holds it.
    const holdsBurstOne = async () => rowsMatchingField((await manager.snapshot(session.id)).decoded, 'fd', '=', String(FIRST_FD + 2 * per - 1)).length === 1;
    while (!(await holdsBurstOne()));
    assert.deepEqual({ reads: first.reads, appends: page.appends }, stopped, 'no read after stop()');
    // Followed again (the panel shown): only what the rings gain from then on, burst 2, reaches the page.
    const again = new Page();
    const second = (again.follow = new LiveFollow(manager.follow(session.id), again.post, {
      snapshotId: 'live-b',
      name: 'live',
      windowNs: () => 60e9,
      intervalMs: 20,
    }));
    try {
      writeFileSync(path.join(dir, 'go.2'), '');
      await again.until(() => again.closeRows().length >= per);
      const fds = again
        .closeRows()
        .map((row) => Number((second.details(again.store.localRowOf(row)).tracepointFields as { fd?: string | number }).fd) - FIRST_FD);
      assert.deepEqual(
        fds,
        Array.from({ length: per }, (_, i) => 2 * per + i),
        'burst 2 alone, each call once',
      );
      assert.deepEqual({ reads: first.reads, appends: page.appends }, stopped, 'the stopped follow stayed stopped');
    } finally {
      second.stop();
    }
  });

  it('says why a stopped session cannot be followed', async () => {
    const events = await backend.resolveEvents(['task-clock'], {});
    const session = await manager.startRecording({ events, target: { kind: 'launch', argv: [fixture('follow_bursts'), 'spin', '1', dir] }, pages: 4 });
    await manager.stop(session.id);
    assert.throws(
      () => manager.follow(session.id),
      (error: unknown) => error instanceof SessionError && /is stopped: nothing to follow/.test(error.message),
    );
  });
});
