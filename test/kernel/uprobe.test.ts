// Uprobes through the Recorder where they go through the kernel's uprobe PMU (config1 = a pointer to
// the file's path, config2 = the file offset) rather than tracefs definitions: CPU-wide recordings, and
// recordings whose tracefs is not writable. An inherited uprobe PMU event makes the target's clone()
// fail (the kernel reads the path pointer again in the target), so the PMU path never inherits: the
// target keeps running, and the recording says which threads it does not watch.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Recorder } from '../../native/perf/recorder';
import { resolveEventSpec } from '../../native/specs/resolve';
import { readPerfAccess } from '../../native/sys/access';
import { lazyTargetSymbols } from '../../native/symbols/target';
import { fixture, nmSymbol, samplesOf } from './helpers';

/** libc.so.6 as the fixture's dynamic linker finds it (ldd), the file its uprobe is placed in. */
function libcOf(binary: string): string {
  const path = /libc\.so\.6 => (\S+)/.exec(execFileSync('ldd', [binary], { encoding: 'utf8' }))?.[1];
  assert.ok(path, `ldd ${binary} names libc.so.6`);
  return path;
}

describe('kernel: uprobes through the uprobe PMU', function () {
  this.timeout(60000);

  before(() => assert.equal(process.getuid?.(), 0, 'uprobes need CAP_PERFMON; the refusal is tested as uid 65534'));

  it('a CPU-wide uprobe on a shared library function counts every call of a process run while it records', async () => {
    const exe = fixture('libc_calls');
    const event = resolveEventSpec(`uprobe:${libcOf(exe)}:getppid`);
    assert.equal(event.attr.type, Number(readFileSync('/sys/bus/event_source/devices/uprobe/type', 'utf8').trim()));
    const recorder = await Recorder.open({ events: [event], target: { kind: 'cpus' }, pages: 64, sideband: false });
    try {
      const n = 250;
      const run = spawnSync(exe, [String(n)]);
      assert.equal(run.status, 0);
      const samples = recorder
        .snapshot()
        .rings.flatMap(samplesOf)
        .filter((sample) => sample.pid === run.pid);
      assert.equal(samples.length, n);
      assert.equal(new Set(samples.map((sample) => sample.ip)).size, 1, 'every hit at the one probed instruction');
    } finally {
      recorder.dispose();
    }
  });

  it("where tracefs cannot define uprobes, a launched program's threads are not followed, and its clone() still works", async () => {
    const exe = fixture('threads_late');
    const symbols = lazyTargetSymbols({ executable: exe })!.symbols;
    const events = ['main', 'work'].map((name) => resolveEventSpec(`uprobe:${exe}:${name}`, { symbols }));
    const access = { ...readPerfAccess(), tracefs: { path: '/nonexistent-tracefs', state: 'unmounted' as const } };
    const recorder = await Recorder.open({
      events,
      target: { kind: 'launch', argv: [exe, '0', '2', '10'], stdio: 'ignore' },
      pages: 16,
      sideband: false,
      access,
    });
    try {
      assert.equal(await recorder.exited, 0, 'the threads were created and ran: late_counter = 2 x 10');
      assert.ok(
        recorder.limitations.some(
          (line) =>
            line.includes(`uprobe:${exe}:main, uprobe:${exe}:work: uprobes watch only the threads there are when the recording starts`) &&
            line.includes('/nonexistent-tracefs/uprobe_events does not exist'),
        ),
        recorder.limitations.join('\n'),
      );
      const snapshot = recorder.snapshot();
      const samples = snapshot.rings.flatMap(samplesOf);
      const of = (name: string) =>
        samples.filter((sample) => snapshot.events[events.findIndex((event) => event.name.endsWith(`:${name}`))].ids.includes(sample.id));
      assert.deepEqual(
        of('main').map((sample) => sample.ip),
        [nmSymbol(exe, 'main').address],
        'main, in the thread that was there, once',
      );
      assert.equal(of('work').length, 0, 'work() runs only in threads created later, which are not watched');
    } finally {
      recorder.dispose();
    }
  });
});
