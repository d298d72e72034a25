// Record Hits on This Line chooses how the kernel counts the line by the CLI's rule (native/specs/line-probe.ts):
// auto is a hardware breakpoint where breakpoints fire and a debug register is free, uprobes where they are silent
// or the registers are taken; the user may pick either. Machines of this project's kind differ on delivery, so each
// case runs with this host's verdict and the other kind's injected (the hardware is unchanged: uprobes count every
// hit on both, a breakpoint only where the host delivers). As uid 65534 the kernel refuses uprobes: the editor says
// so, with the fix, and falls back to the breakpoint. On the real kernel, with the stand-in `vscode`.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assumeBreakpointDelivery } from '../../native/perf/breakpoint-delivery';
import { SessionManager } from '../../extension/session/session-manager';
import { createBackend } from '../../extension/session/backend';
import type { LineProbeMode } from '../../native/specs/line-probe';
import { hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from '../host/breakpoints';
import { prepareNobodyDir, type NobodyDir } from '../unprivileged/nobody';
import { editorVscode, type ShownMessages } from './editor-vscode';
import { fixture, repoRoot, standInVscode } from './helpers';
import { recordLineHits, type LineHitsResult } from './record-line-hits';

const LOOPS = 1000;
const source = path.join(repoRoot, 'test/fixtures/ext_loops.c');
/** `ext_counter += step;` in ext_bump(): runs exactly LOOPS times. */
const writeLine =
  readFileSync(source, 'utf8')
    .split('\n')
    .findIndex((text) => text.includes('/* EXT_WRITE_LINE */')) + 1;
const UPROBE_REFUSAL =
  /the kernel allows uprobes only to a process with CAP_PERFMON \(or CAP_SYS_ADMIN\), at every kernel\.perf_event_paranoid, and uid 65534 \(nobody\) has neither \(perf_event_open answers EACCES\); .*setcap cap_perfmon/;

const shown: ShownMessages = { information: [], warning: [] };
const thisHost = (): 'fires' | 'silent' => (hostBreakpoints().fire ? 'fires' : 'silent');

async function recordWith(verdict: 'fires' | 'silent', mode: LineProbeMode): Promise<LineHitsResult> {
  const restore = assumeBreakpointDelivery(verdict);
  shown.information.length = 0;
  shown.warning.length = 0;
  try {
    return await recordLineHits({ program: fixture('ext_loops'), args: [String(LOOPS), '0'], sourceFile: source, line: writeLine, mode }, shown);
  } finally {
    restore();
  }
}

describe("extension: Record Hits on This Line counts with a breakpoint or uprobes, as the CLI's rule says", function () {
  this.timeout(120_000);
  let restoreVscode = () => {
    /* installed in before() */
  };
  before(() => {
    restoreVscode = standInVscode(editorVscode(shown));
  });
  after(() => restoreVscode());

  it('auto: uprobes where breakpoints are silent (every hit counted, no register held), a breakpoint where they fire', async () => {
    for (const verdict of [thisHost(), otherHostVerdict()]) {
      const result = await recordWith(verdict, 'auto');
      const said = JSON.stringify({ verdict, result });
      if (verdict === 'silent') {
        assert.equal(result.watch.probe, 'uprobe', said);
        assert.equal(result.watch.hits, LOOPS, `uprobes count every execution on any host: ${said}`);
        assert.equal(result.watch.unseen, undefined, said);
        assert.ok(
          result.hover?.startsWith(`**Ringside** uprobe line:ext_loops.c:${writeLine}: ${LOOPS.toLocaleString('en-US')} hits in the last snapshot`),
          said,
        );
        assert.equal(result.budgetWhileOpen.used, 0, `a uprobe holds no debug register: ${said}`);
        assert.ok(
          result.shown.information.some((text) =>
            text.includes(
              `hardware breakpoints do not fire on this machine (the probe counted 0 of 4 calls), so this line is counted with uprobes instead, as line:ext_loops.c:${writeLine} counts it`,
            ),
          ),
          said,
        );
        assert.ok(!result.shown.warning.some((text) => SILENT_BREAKPOINTS.test(text)), `nothing records nothing here: ${said}`);
      } else {
        assert.equal(result.watch.probe, undefined, said);
        assert.equal(result.budgetWhileOpen.used, 1, said);
        assert.equal(result.shown.information.filter((text) => text.includes('uprobe')).length, 0, said);
        // The verdict is injected; the hardware decides what arrives: all of them where this host delivers.
        if (hostBreakpoints().fire) assert.equal(result.watch.hits, LOOPS, said);
      }
    }
  });

  it('picked: uprobe counts with uprobes on either host; hardware breakpoint stays one, and on a silent host says no hit can be seen', async () => {
    for (const verdict of [thisHost(), otherHostVerdict()]) {
      const uprobe = await recordWith(verdict, 'uprobe');
      assert.equal(uprobe.watch.probe, 'uprobe', JSON.stringify(uprobe));
      assert.equal(uprobe.watch.hits, LOOPS, JSON.stringify(uprobe));
      assert.ok(
        uprobe.shown.information.some((text) => text.includes(`counted with uprobes as asked, as line:ext_loops.c:${writeLine} counts it`)),
        JSON.stringify(uprobe),
      );

      const breakpoint = await recordWith(verdict, 'breakpoint');
      const said = JSON.stringify({ verdict, breakpoint });
      assert.equal(breakpoint.watch.probe, undefined, said);
      if (verdict === 'silent') {
        assert.ok(
          breakpoint.shown.warning.some((text) => SILENT_BREAKPOINTS.test(text)),
          `warned at arming: ${said}`,
        );
        assert.match(breakpoint.watch.unseen ?? '', SILENT_BREAKPOINTS, said);
        assert.match(breakpoint.watch.unseen ?? '', /Uprobes count a line here: record it again with auto or uprobe\.$/, said);
      } else {
        assert.equal(breakpoint.watch.unseen, undefined, said);
      }
    }
  });

  it("auto: a line is counted with uprobes when its target's four debug registers are taken", async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    const restore = assumeBreakpointDelivery('fires');
    const manager = new SessionManager({ backend: createBackend() });
    const writer = spawn(fixture('kernel_writer'), ['1', '60000'], { stdio: 'ignore' });
    const breakpoints = new HardwareBreakpoints(
      manager,
      async () => ({ target: { kind: 'pid', pid: writer.pid! }, executable: fixture('kernel_writer') }),
      () => undefined,
      () => undefined,
      () => 8,
    );
    shown.information.length = 0;
    try {
      for (let i = 0; i < 4; i++) {
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
      }
      const line =
        readFileSync(path.join(repoRoot, 'test/fixtures/kernel_writer.c'), 'utf8')
          .split('\n')
          .findIndex((text) => text.includes('counter = i + 1')) + 1;
      await breakpoints.recordHitsOnLine({ fsPath: path.join(repoRoot, 'test/fixtures/kernel_writer.c') } as never, line, 'auto');
      const message = breakpoints.watchHandler.listMessage();
      assert.equal(message.type, 'watchList');
      const said = JSON.stringify({ message, shown });
      assert.deepEqual(
        message.watches.map((watch) => watch.probe ?? 'breakpoint'),
        ['breakpoint', 'breakpoint', 'breakpoint', 'breakpoint', 'uprobe'],
        said,
      );
      assert.equal(message.budget.used, 4, `the uprobe is not in the meter: ${said}`);
      assert.ok(
        shown.information.some((text) =>
          text.includes('the debug register this line needs is not free (x86 has 4; 0 left), so this line is counted with uprobes instead, which take none'),
        ),
        said,
      );
    } finally {
      breakpoints.dispose();
      await manager.dispose();
      writer.kill('SIGKILL');
      restore();
    }
  });

  it('auto on a running process (-p): the uprobes count the threads it starts after the attach', async () => {
    const { HardwareBreakpoints } = await import('../../extension/editor/editor-integration');
    const [threads, iterations] = [3, 200];
    const restore = assumeBreakpointDelivery('silent');
    const manager = new SessionManager({ backend: createBackend() });
    // threads_late starts its threads on SIGUSR1, sent once the line is armed: every hit is in a thread born after it.
    const target = spawn(fixture('threads_late'), ['signal', String(threads), String(iterations)], { stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => target.once('exit', (code) => resolve(code)));
    const breakpoints = new HardwareBreakpoints(
      manager,
      async () => ({ target: { kind: 'pid', pid: target.pid! }, executable: fixture('threads_late') }),
      () => undefined,
      () => undefined,
      () => 64,
    );
    try {
      const sourceFile = path.join(repoRoot, 'test/fixtures/threads_late.c');
      const line =
        readFileSync(sourceFile, 'utf8')
          .split('\n')
          .findIndex((text) => text.includes('late_counter++;')) + 1;
      await breakpoints.recordHitsOnLine({ fsPath: sourceFile } as never, line, 'auto');
      const session = manager.list().at(-1)!;
      target.kill('SIGUSR1');
      assert.equal(await exited, 0, 'threads_late ran its threads to the end');
      await manager.snapshot(session.id);
      const message = breakpoints.watchHandler.listMessage();
      assert.equal(message.type, 'watchList');
      const said = JSON.stringify(message.watches);
      assert.equal(message.watches[0].probe, 'uprobe', said);
      assert.deepEqual(message.watches[0].target, { kind: 'process', pid: target.pid }, said);
      assert.equal(message.watches[0].hits, threads * iterations, said);
    } finally {
      breakpoints.dispose();
      await manager.dispose();
      target.kill('SIGKILL');
      restore();
    }
  });

  describe('as uid 65534 (no CAP_PERFMON: the kernel refuses uprobes)', () => {
    let nobody: NobodyDir;
    before(() => {
      nobody = prepareNobodyDir();
      nobody.withCompiledModules();
    });
    after(() => nobody.dispose());

    const runAsNobody = (verdict: 'fires' | 'silent', mode: LineProbeMode, loops = LOOPS): LineHitsResult => {
      const run = { program: nobody.fixture('ext_loops'), args: [String(loops), '0'], sourceFile: source, line: writeLine, mode };
      const result = nobody.run([process.execPath, path.join(nobody.dir, 'out/test/extension/record-line-hits.js'), JSON.stringify(run)], {
        env: { RINGSIDE_BREAKPOINT_DELIVERY: verdict },
      });
      assert.equal(result.status, 0, result.stderr);
      return JSON.parse(result.stdout) as LineHitsResult;
    };

    it('uprobe picked: says the kernel refuses it and the fix, and counts with the breakpoint where they fire', () => {
      const result = runAsNobody('fires', 'uprobe');
      const said = JSON.stringify(result);
      const refusal = result.shown.warning.find((text) => UPROBE_REFUSAL.test(text));
      assert.ok(refusal !== undefined, said);
      assert.ok(refusal.includes(`uprobes, which would count this line (line:ext_loops.c:${writeLine}), are refused`), said);
      assert.ok(refusal.includes('counted with a hardware breakpoint instead (they fire on this machine)'), said);
      assert.equal(result.watch.probe, undefined, said);
      assert.equal(result.budgetWhileOpen.used, 1, said);
      if (hostBreakpoints().fire) assert.equal(result.watch.hits, LOOPS, said);
    });

    it('where breakpoints are silent too: the refusal at arming, and the row says no hit can be seen here, with the evidence and both fixes', () => {
      // The line never runs (0 loops), so on either host the breakpoint counts none: what the editor says for 0 is checked.
      const result = runAsNobody('silent', 'auto', 0);
      const said = JSON.stringify(result);
      assert.ok(
        result.shown.warning.some((text) => UPROBE_REFUSAL.test(text) && text.includes('breakpoints do not fire on this machine, and uprobes')),
        said,
      );
      assert.ok(
        result.shown.warning.some((text) => SILENT_BREAKPOINTS.test(text)),
        said,
      );
      assert.equal(result.watch.probe, undefined, said);
      assert.match(result.watch.unseen ?? '', SILENT_BREAKPOINTS, said);
      assert.match(
        result.watch.unseen ?? '',
        /Uprobes, which count a line without debug registers, are refused too: the kernel allows uprobes only to a process with CAP_PERFMON.*setcap cap_perfmon/,
        said,
      );
      // The hover never says "0 hits": it says why none can be seen, the probe's evidence, and the fixes.
      assert.equal(result.watch.hits, 0, said);
      const hover = result.hover ?? '';
      assert.ok(hover.startsWith(`**Ringside** hardware breakpoint mem:ext_loops.c:${writeLine}:x: no hits can be seen on this machine`), said);
      assert.ok(hover.includes(result.watch.unseen ?? '(no reason)'), said);
      assert.doesNotMatch(hover, /\b0 hits\b/, said);
    });
  });
});
