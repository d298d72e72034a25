// A kept recording as an ordinary user: `ringside keep` (uid 65534) holds the rings of a program it
// launched; a second process of the same user (what an editor window is after a reload) finds it by
// its state file, borrows its fds with pidfd_getfd, snapshots and sees the program's samples; the
// keeper stops on SIGTERM and removes its state file.

import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { kernelParanoid, NOBODY_UID, parseJsonLines, perfScriptAsNobody, prepareNobodyDir, type NobodyDir } from './nobody';

/** Attaches to the only keeper, snapshots, and prints what it found (run as uid 65534 from out/). */
const ATTACH_SCRIPT = `
  const { SessionManager } = require('./out/extension/session/session-manager');
  const { createBackend } = require('./out/extension/session/backend');
  const { listKeeperStates } = require('./out/native/keeper/state');
  const { RecordType } = require('./out/native/abi/uapi');
  (async () => {
    const keepers = listKeeperStates().filter((k) => k.state && k.alive);
    const manager = new SessionManager({ backend: createBackend(), retention: 3 });
    const session = await manager.attachKeeper(keepers[0].state);
    const snapshot = await manager.snapshot(session.id);
    const { columns } = snapshot.decoded;
    const child = keepers[0].state.target.childPid;
    let samples = 0, kernel = 0;
    for (let row = 0; row < columns.length; row++) {
      if (columns.kind[row] !== RecordType.SAMPLE || columns.pid[row] !== child) continue;
      samples++;
      if (columns.ipHi[row] >= 0x8000) kernel++; // ip >= 0x800000000000: the kernel half
    }
    await manager.dispose();
    console.log(JSON.stringify({ keepers: keepers.length, samples, kernel }));
  })().catch((error) => { console.error(error.stack); process.exit(1); });`;

describe('kept recording as an ordinary user (uid 65534)', function () {
  this.timeout(120_000);
  let nobody: NobodyDir;
  let keeper: ChildProcess | undefined;
  let runtimeDir: string;

  before(() => {
    nobody = prepareNobodyDir();
    nobody.withCompiledModules();
    runtimeDir = path.join(nobody.dir, 'run');
    mkdirSync(runtimeDir, { mode: 0o700 });
    execFileSync('chown', [`${NOBODY_UID}:${NOBODY_UID}`, runtimeDir]);
  });
  after(() => {
    if (keeper?.pid)
      try {
        process.kill(-keeper.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    // The program the keeper launched, if the keeper left it behind.
    try {
      execFileSync('pkill', ['-KILL', '-f', path.join(nobody.dir, 'fixtures-bin/ext_loops')]);
    } catch {
      /* none left */
    }
    nobody?.dispose();
  });

  it('keeps, is found and borrowed by another process of the same user, snapshots its program, and stops cleanly', async () => {
    keeper = nobody.start([process.execPath, nobody.cli, 'keep', '-e', 'task-clock', '--', nobody.fixture('ext_loops'), '0', '20000'], {
      XDG_RUNTIME_DIR: runtimeDir,
    });
    let stderr = '';
    keeper.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const stateDir = path.join(runtimeDir, `ringside-${NOBODY_UID}`);
    const deadline = Date.now() + 30_000;
    while (!(existsSync(stateDir) && readdirSync(stateDir).some((name) => name.startsWith('keeper-'))) && Date.now() < deadline) {
      assert.equal(keeper.exitCode, null, `the keeper exited: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(
      readdirSync(stateDir).some((name) => name.startsWith('keeper-')),
      `no state file: ${stderr}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // let the program spin into the rings

    const attached = nobody.run([process.execPath, '-e', ATTACH_SCRIPT], { env: { XDG_RUNTIME_DIR: runtimeDir } });
    assert.equal(attached.status, 0, attached.stderr);
    const found = JSON.parse(attached.stdout.trim().split('\n').pop()!) as { keepers: number; samples: number; kernel: number };
    assert.equal(found.keepers, 1);
    assert.ok(found.samples > 50, `${found.samples} task-clock samples of the kept program`);
    if (kernelParanoid() >= 2) assert.equal(found.kernel, 0, 'user space only');

    const exited = new Promise<number | null>((resolve) => keeper!.once('exit', (code) => resolve(code)));
    process.kill(keeper.pid!, 'SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.deepEqual(
      readdirSync(stateDir).filter((name) => name.startsWith('keeper-')),
      [],
      'the state file is gone',
    );
  });

  it('keep -p of its own process with --pages 1 --window 2 grows as far as the locked-memory budget lets it, and says so', async () => {
    const spinner = nobody.start([nobody.fixture('ext_loops'), '0', '30000']);
    let keeperErr = '';
    try {
      // ulimit -l 64: the budget is perf_event_mlock_kb per CPU plus 64 KiB, far less than 2 s of task-clock samples every 10 us.
      keeper = nobody.start(
        ['sh', '-c', `ulimit -l 64 && exec ${process.execPath} ${nobody.cli} keep -p ${spinner.pid} -e task-clock -c 10000 --pages 1 --window 2`],
        { XDG_RUNTIME_DIR: runtimeDir },
      );
      keeper.stderr?.on('data', (chunk: Buffer) => {
        keeperErr += chunk.toString();
      });
      const ringside = (args: string[]) => nobody.run([process.execPath, nobody.cli, ...args], { env: { XDG_RUNTIME_DIR: runtimeDir }, timeoutMs: 20_000 });
      type Listed = { pid: number; generation: number; limitations: string[]; rings: { direction: string; dataSize: number; retired?: object }[] };
      let mine: Listed | undefined;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 200))) {
        assert.equal(keeper.exitCode, null, `the keeper exited: ${keeperErr}`);
        const listed = ringside(['list', '--json']);
        const found = listed.status === 0 ? (JSON.parse(listed.stdout) as Listed[]).find((entry) => entry.pid === keeper!.pid) : undefined;
        if (found?.limitations.some((line) => /locked-memory budget|charged to locked memory/.test(line))) {
          mine = found;
          break;
        }
      }
      assert.ok(mine, `the keeper never said the budget stopped its growth: ${keeperErr} ${ringside(['list']).stdout}`);
      const notes = mine.limitations.join('\n');
      // The budget Ringside computes is this user's whole allowance; when the kernel still charges the
      // user for rings of a process that just ended (the test before this one), it refuses the mmap
      // first, and the note names that limit instead. Either way growth stops at the budget and says so.
      assert.match(
        notes,
        new RegExp(
          [
            String.raw`rings resized from 1 to \d+ pages .*the locked-memory budget stopped growth at \d+ pages \(the window needs \d+\)`,
            String.raw`rings stay at \d+ pages .*the locked-memory budget .* leaves no room`,
            String.raw`rings stay at 1 pages .*opening \d+-page rings failed: mmap .*EPERM.*charged to locked memory`,
          ].join('|'),
        ),
      );
      assert.ok(mine.generation >= 1, 'the note is published as a new generation of the state file');

      const data = 'window.data';
      const snap = ringside(['snapshot', String(keeper.pid), '-o', data]);
      assert.equal(snap.status, 0, snap.stderr);
      assert.match(snap.stderr, /locked-memory budget|charged to locked memory/);
      const samples = perfScriptAsNobody(nobody, data, 'event').filter((line) => line.includes('task-clock')).length;
      assert.ok(samples > 10, `${samples} task-clock samples of its own process`);
      const decoded = nobody.ringside(['decode', data]);
      assert.equal(decoded.status, 0, decoded.stderr);
      assert.equal(
        parseJsonLines(decoded.stdout).filter((record) => record.type === 'SAMPLE' && record.event === 'task-clock').length,
        samples,
        'perf script and our JSON Lines agree on the snapshot',
      );

      const exited = new Promise<number | null>((resolve) => keeper!.once('exit', (code) => resolve(code)));
      process.kill(keeper.pid!, 'SIGTERM');
      assert.equal(await exited, 0, keeperErr);
    } finally {
      if (spinner.pid)
        try {
          process.kill(-spinner.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
    }
  });
});
