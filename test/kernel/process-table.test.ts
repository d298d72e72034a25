// A CPU-wide recording reads /proc once per process and again only where the side-band says the process
// changed (native/perf/process-table.ts). A real program dlopens, renames itself, starts a thread and execs
// while the recording runs; after each step every snapshot's /proc state of it must equal a fresh read of
// /proc, and between steps it must not have been read again. Once with the recording on every CPU, once
// with it on another CPU than the program's, whose side-band only the recorder's watch rings see.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Recorder } from '../../native/perf/recorder';
import { onlineCpus, synthesizeSideband, type ProcessSideband } from '../../native/perf/procfs';
import { fixture, perfResources, softwareEvent, SoftwareConfig } from './helpers';

/** Polls until `file` exists (the fixture creates it when a step is done); the deadline only bounds a broken fixture. */
async function waitForFile(file: string, child: ChildProcess): Promise<void> {
  for (const deadline = Date.now() + 30000; !existsSync(file);) {
    if (child.exitCode !== null) throw new Error(`proc_changes exited (${child.exitCode}) before ${path.basename(file)}`);
    if (Date.now() > deadline) throw new Error(`proc_changes never created ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function tasksOf(processes: readonly ProcessSideband[], pid: number): ProcessSideband[] {
  return processes.filter((task) => task.pid === pid);
}

const LIBRARY = 'libm.so.6';
const hasLibrary = (tasks: readonly ProcessSideband[]) => tasks[0].maps.some((map) => map.path.endsWith(`/${LIBRARY}`));

describe('kernel: a CPU-wide recording keeps /proc state from the side-band', function () {
  this.timeout(60000);
  const cpus = onlineCpus();
  const programCpu = cpus[cpus.length - 1];

  for (const recorded of ['every CPU', 'another CPU than the program']) {
    it(`follows a program that dlopens, renames, starts a thread and execs (recording ${recorded})`, async function () {
      // One CPU cannot be another CPU than the program's: that case has nothing to run on.
      if (recorded !== 'every CPU' && cpus.length < 2) this.skip();
      const dir = mkdtempSync(path.join(tmpdir(), 'ringside-proc-changes-'));
      const exe = fixture('proc_changes');
      // taskset execs the program in the same process, pinned.
      const child = spawn('taskset', ['-c', String(programCpu), exe, dir, LIBRARY], { stdio: 'ignore' });
      const before = perfResources();
      let recorder: Recorder | undefined;
      try {
        await waitForFile(path.join(dir, 'ready'), child);
        const pid = child.pid!;
        recorder = await Recorder.open({
          events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 10_000_000n, 'cpu-clock')],
          target: { kind: 'cpus', ...(recorded === 'every CPU' ? {} : { cpus: [cpus[0]] }) },
          pages: 4,
        });
        const r = recorder;
        // The referee: /proc read now, whole, as every snapshot did before the table.
        const snapshotMatchesProc = (): ProcessSideband[] => {
          const tasks = tasksOf(r.snapshot().processes, pid);
          assert.deepEqual(tasks, synthesizeSideband([pid]));
          return tasks;
        };
        const step = async (go: string, done: string) => {
          writeFileSync(path.join(dir, go), '');
          await waitForFile(path.join(dir, done), child);
        };

        const started = snapshotMatchesProc();
        assert.deepEqual(
          started.map((task) => task.comm),
          ['proc_changes'],
        );
        assert.ok(!hasLibrary(started), `${LIBRARY} is mapped before the program opens it`);
        // Nothing changed: the process was not read again.
        assert.equal(tasksOf(r.snapshot().processes, pid)[0].maps, started[0].maps);

        await step('dlopen', 'opened');
        const opened = snapshotMatchesProc();
        assert.ok(hasLibrary(opened), `${LIBRARY} mapped after dlopen`);

        await step('rename', 'renamed');
        const renamed = snapshotMatchesProc();
        assert.deepEqual(renamed.map((task) => task.comm).sort(), ['renamed', 'worker']);
        // A rename and a new thread change no mapping.
        assert.equal(renamed[0].maps, opened[0].maps);

        await step('exec', 'execed');
        const execed = snapshotMatchesProc();
        assert.deepEqual(
          execed.map((task) => task.comm),
          ['proc_changes'],
        );
        assert.ok(!hasLibrary(execed), 'the exec left the dlopened library behind');
        assert.ok(execed[0].maps.some((map) => map.path === exe));
        assert.deepEqual(tasksOf(r.processesNow(), pid), execed);

        // A process born under the recording is known from its FORK, and gone once it has exited and been reaped.
        const late = spawn('sleep', ['1000'], { stdio: 'ignore' });
        await new Promise((resolve) => late.once('spawn', resolve));
        try {
          assert.deepEqual(tasksOf(r.snapshot().processes, late.pid!), synthesizeSideband([late.pid!]));
          assert.equal(tasksOf(r.snapshot().processes, late.pid!)[0]?.comm, 'sleep');
        } finally {
          const reaped = new Promise((resolve) => late.once('exit', resolve));
          late.kill('SIGKILL');
          await reaped;
        }
        assert.deepEqual(tasksOf(r.snapshot().processes, late.pid!), []);
      } finally {
        recorder?.dispose();
        // A step that failed leaves the program waiting for a file that never comes.
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      }
      assert.deepEqual(perfResources(), before, 'every perf fd and mapping, watch rings included, closed');
    });
  }
});
