// The timeline's debug-register meter and the editor's ENOSPC check count every open breakpoint of Ringside's
// sessions, not only those armed from the gutter or the panel: a recording started with a watchpoint among its events
// holds a register on its target's threads for as long as it is open (the kernel reserves it at open). On the real
// kernel, with the editor's breakpoint logic under a small stand-in for the `vscode` module.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionManager } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import { KeeperClient } from '../../extension/session/keeper-client';
import type { KeeperState } from '../../native/keeper/state';
import type { HostToWebview, WatchBudget, WatchSpec } from '../../shared/protocol';
import { fixture, ownPerfFds, repoRoot, standInVscode, waitFor } from './helpers';
import { editorVscode, type ShownMessages } from './editor-vscode';
import { assumeBreakpointDelivery } from '../../native/perf/breakpoint-delivery';
import { hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from '../host/breakpoints';

/** The messages the editor showed through the stand-in, by kind. */
const shown: ShownMessages = { information: [], warning: [] };

/**
 * `ringside keep -e mem:counter:w` on kernel_writer (it writes its global `counter` once, then sleeps 30 s), in a
 * runtime directory of its own with `env` added; `body` gets its state file and the launched writer's pid. The keeper
 * and the writer are ended, and the directory removed, however `body` ends.
 */
async function withWatchingKeeper(env: NodeJS.ProcessEnv, body: (state: KeeperState, workload: number | undefined) => Promise<void>): Promise<void> {
  const runtimeDir = mkdtempSync(path.join(tmpdir(), 'ringside-registers-'));
  const keeper = spawn(
    process.execPath,
    [path.join(repoRoot, 'dist', 'cli.js'), 'keep', '-e', 'mem:counter:w', '--pages', '8', '--', fixture('kernel_writer'), '1', '30000'],
    { env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  keeper.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  let workload: number | undefined;
  try {
    const client = new KeeperClient(path.join(runtimeDir, `ringside-${process.getuid!()}`));
    const state = (await waitFor(`the keeper's state file (${stderr})`, () => client.list().find((k) => k.state?.pid === keeper.pid && k.alive), 20_000))
      .state!;
    workload = state.target.kind === 'launch' ? state.target.childPid : undefined;
    await body(state, workload);
  } finally {
    const exited = new Promise((resolve) => keeper.once('exit', resolve));
    if (keeper.exitCode === null && keeper.signalCode === null) keeper.kill('SIGTERM');
    await exited;
    if (workload) {
      try {
        process.kill(workload, 'SIGKILL');
      } catch {
        /* ended with its keeper */
      }
    }
    rmSync(runtimeDir, { recursive: true, force: true });
  }
}

describe('extension: debug registers held by every open session', function () {
  this.timeout(60_000);
  let restoreVscode = () => {
    /* installed in before() */
  };
  before(() => {
    restoreVscode = standInVscode(editorVscode(shown));
  });
  after(() => restoreVscode());

  it("counts a recording's watchpoint in the meter and in the ENOSPC check, and names it when refusing", async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    const fdsBefore = ownPerfFds().length;
    const backend = createBackend();
    const manager = new SessionManager({ backend });
    let posted = 0;
    const breakpoints = new HardwareBreakpoints(
      manager,
      async () => undefined,
      () => undefined,
      () => {
        posted++;
      },
    );
    const budget = (): WatchBudget => {
      const message: HostToWebview = breakpoints.watchHandler.listMessage();
      assert.equal(message.type, 'watchList');
      return message.budget;
    };
    try {
      // kernel_writer writes its global `counter` once, then sleeps 30 s: a process to hold breakpoints on.
      const writer = fixture('kernel_writer');
      const events = await backend.resolveEvents(['task-clock', 'mem:counter:w'], { executable: writer });
      const recording = await manager.startRecording({ events, target: { kind: 'launch', argv: [writer, '1', '30000'] }, pages: 8 });
      const pid = recording.childPid!;
      assert.ok(pid > 0);
      assert.ok(posted >= 1, 'a recording that starts re-posts the meter');
      const held = [`mem:counter:w (kernel_writer 1 30000 (pid ${pid}): task-clock, mem:counter:w)`];
      assert.deepEqual(
        budget(),
        { used: 1, total: 4, cpuPinned: 0, maxTaskPinned: 1, flexible: 0, heldByRecordings: held },
        "the recording's watchpoint holds a register, and the panel names it (its list shows only what was armed there)",
      );
      assert.equal(breakpoints.slotsInUse, 1);

      const add = (spec: Partial<WatchSpec> = {}) =>
        breakpoints.watchHandler.handle({
          op: 'add',
          spec: {
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'w',
            length: 8,
            target: { kind: 'process', pid },
            pinned: false,
            ...spec,
          },
        });
      for (let i = 0; i < 3; i++) await add();
      const full = budget();
      assert.deepEqual(
        full,
        { used: 4, total: 4, cpuPinned: 0, maxTaskPinned: 4, flexible: 0, heldByRecordings: held },
        "three armed here plus the recording's, counted once each",
      );
      const listed = breakpoints.watchHandler.listMessage();
      assert.equal(listed.type === 'watchList' ? listed.watches.length : -1, 3, 'the list holds what was armed here');

      // A fourth from the panel would be the fifth on the process: refused before anything is opened, naming the holders.
      const fdsFull = ownPerfFds().length;
      await assert.rejects(add({ type: 'rw' }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'ENOSPC');
        assert.match(
          error.message,
          new RegExp(
            `^only 0 of 4 debug registers are free on pid ${pid}; held by: mem:counter:w \\(kernel_writer 1 30000 \\(pid ${pid}\\): task-clock, mem:counter:w\\), `,
          ),
        );
        assert.equal(error.message.match(/mem:counter\/8:w:u \(pid \d+ · breakpoints: /g)?.length, 3, error.message);
        return true;
      });
      assert.equal(ownPerfFds().length, fdsFull, 'nothing was opened for the refused breakpoint');

      // Stopping the recording closes its watchpoint: its register is free again, and the meter says so.
      const postedBeforeStop = posted;
      await manager.stop(recording.id);
      assert.ok(posted > postedBeforeStop, 'a recording that stops re-posts the meter');
      assert.deepEqual(budget(), { used: 3, total: 4, cpuPinned: 0, maxTaskPinned: 3, flexible: 0 });
    } finally {
      breakpoints.dispose();
      await manager.dispose();
    }
    await waitFor('perf fds closed', () => ownPerfFds().length === fdsBefore);
  });

  it('counts a line the compiler put in two places as two registers: each place is armed with its own', async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    const backend = createBackend();
    const manager = new SessionManager({ backend });
    const breakpoints = new HardwareBreakpoints(
      manager,
      async () => undefined,
      () => undefined,
      () => undefined,
    );
    try {
      const program = fixture('inline_sites');
      const line =
        readFileSync(path.join(repoRoot, 'test/fixtures/inline_sites.c'), 'utf8')
          .split('\n')
          .findIndex((text) => text.includes('/* INLINE_LINE */')) + 1;
      const events = await backend.resolveEvents([`mem:inline_sites.c:${line}:x`], { executable: program });
      assert.equal(events[0].extraSites?.length, 1, 'the line is in from_a and from_b');
      const recording = await manager.startRecording({ events, target: { kind: 'launch', argv: [program, '300', '500'] }, pages: 8 });
      const message = breakpoints.watchHandler.listMessage();
      assert.equal(message.type, 'watchList');
      const pid = recording.childPid!;
      assert.deepEqual(message.budget, {
        used: 2,
        total: 4,
        cpuPinned: 0,
        maxTaskPinned: 2,
        flexible: 0,
        heldByRecordings: [`mem:inline_sites.c:${line}:x (inline_sites 300 500 (pid ${pid}): mem:inline_sites.c:${line}:x)`],
      });
    } finally {
      breakpoints.dispose();
      await manager.dispose();
    }
  });

  it("counts a kept recording's watchpoint, attached through its state file, for the process it watches", async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    await withWatchingKeeper({}, async (state, workload) => {
      const backend = createBackend();
      const manager = new SessionManager({ backend });
      const breakpoints = new HardwareBreakpoints(
        manager,
        async () => undefined,
        () => undefined,
        () => undefined,
      );
      try {
        assert.ok(workload && workload > 0, JSON.stringify(state.target));
        const attached = await manager.attachKeeper(state);
        const message = breakpoints.watchHandler.listMessage();
        assert.equal(message.type, 'watchList');
        assert.deepEqual(
          message.budget,
          {
            used: 1,
            total: 4,
            cpuPinned: 0,
            maxTaskPinned: 1,
            flexible: 0,
            heldByRecordings: [`mem:counter:w (${attached.label})`],
          },
          'the kept watchpoint holds a register on the process it watches',
        );
        // Armed from the panel on the same process, it adds to that process's count.
        await breakpoints.watchHandler.handle({
          op: 'add',
          spec: {
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'w',
            length: 8,
            target: { kind: 'process', pid: workload! },
            pinned: false,
          },
        });
        const both = breakpoints.watchHandler.listMessage();
        assert.equal(both.type === 'watchList' ? both.budget.maxTaskPinned : -1, 2);
      } finally {
        breakpoints.dispose();
        await manager.dispose();
      }
    });
  });

  // Machines of this kind differ on delivery: arming from the editor warns exactly when the verdict is silent, checked
  // with this host's verdict and with the other kind's assumed (the hardware is unchanged; only what is said differs).
  it('arming a watchpoint from the editor warns that it will record nothing exactly when breakpoints are silent, on either kind of host', async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    for (const verdict of [hostBreakpoints().fire ? ('fires' as const) : ('silent' as const), otherHostVerdict()]) {
      const restore = assumeBreakpointDelivery(verdict);
      const backend = createBackend();
      const manager = new SessionManager({ backend });
      const breakpoints = new HardwareBreakpoints(
        manager,
        async () => undefined,
        () => undefined,
        () => undefined,
      );
      const writer = spawn(fixture('kernel_writer'), ['1', '30000'], { stdio: 'ignore' });
      shown.warning.length = 0;
      try {
        await breakpoints.watchHandler.handle({
          op: 'add',
          spec: {
            location: { kind: 'symbol', symbol: 'counter' },
            type: 'w',
            length: 8,
            target: { kind: 'process', pid: writer.pid! },
            pinned: false,
          },
        });
        const said = shown.warning.filter((message) => SILENT_BREAKPOINTS.test(message));
        assert.equal(said.length, verdict === 'silent' ? 1 : 0, `${verdict}: ${JSON.stringify(shown.warning)}`);
      } finally {
        breakpoints.dispose();
        await manager.dispose();
        writer.kill('SIGKILL');
        restore();
      }
    }
  });

  // A kept recording's keeper probes delivery in its own process and publishes the verdict: starting or attaching
  // to it warns as Start Recording does (the verdicts assumed through the keeper's environment, on any host).
  it('a kept recording with a watchpoint warns at start exactly when its keeper found breakpoints silent', async () => {
    const { noticeKeptSilentBreakpoints } = await import('../../extension/ui/breakpoint-notice');
    for (const verdict of ['silent', 'fires'] as const) {
      await withWatchingKeeper({ RINGSIDE_BREAKPOINT_DELIVERY: verdict }, async (state) => {
        shown.warning.length = 0;
        const logged: string[] = [];
        noticeKeptSilentBreakpoints(state.limitations, (line) => logged.push(line));
        const said = shown.warning.filter((message) => SILENT_BREAKPOINTS.test(message));
        assert.equal(said.length, verdict === 'silent' ? 1 : 0, `${verdict}: ${JSON.stringify(state.limitations)}`);
        assert.equal(logged.length, said.length, 'and the output channel has it');
      });
    }
  });
});
