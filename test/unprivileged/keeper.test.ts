// A kept recording as an ordinary user: `ringside keep` (uid 65534) holds the rings of a program it
// launched; a second process of the same user (what an editor window is after a reload) finds it by
// its state file, borrows its fds with pidfd_getfd, snapshots and sees the program's samples; the
// keeper stops on SIGTERM and removes its state file.

import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { kernelParanoid, NOBODY_UID, prepareNobodyDir, type NobodyDir } from './nobody';

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
    if (keeper?.pid) try { process.kill(-keeper.pid, 'SIGKILL'); } catch { /* gone */ }
    // The program the keeper launched, if the keeper left it behind.
    try { execFileSync('pkill', ['-KILL', '-f', path.join(nobody.dir, 'fixtures-bin/ext_loops')]); } catch { /* none left */ }
    nobody?.dispose();
  });

  it('keeps, is found and borrowed by another process of the same user, snapshots its program, and stops cleanly', async () => {
    keeper = nobody.start([process.execPath, nobody.cli, 'keep', '-e', 'task-clock', '--', nobody.fixture('ext_loops'), '0', '20000'], { XDG_RUNTIME_DIR: runtimeDir });
    let stderr = '';
    keeper.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const stateDir = path.join(runtimeDir, `ringside-${NOBODY_UID}`);
    const deadline = Date.now() + 30_000;
    while (!(existsSync(stateDir) && readdirSync(stateDir).some((name) => name.startsWith('keeper-'))) && Date.now() < deadline) {
      assert.equal(keeper.exitCode, null, `the keeper exited: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(readdirSync(stateDir).some((name) => name.startsWith('keeper-')), `no state file: ${stderr}`);
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
    assert.deepEqual(readdirSync(stateDir).filter((name) => name.startsWith('keeper-')), [], 'the state file is gone');
  });
});
