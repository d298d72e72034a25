// Root's keeper against another local user (uid 65534) who prepared traps where it keeps its state,
// in a sticky world-writable directory like /tmp (XDG_RUNTIME_DIR unset): a `ringside-0` symlink
// to a directory of root's with keeper-temp-file symlinks to a root-only file inside, and a
// `ringside-0` directory pre-made by that user. The keeper must start (in a fallback directory it
// names), `ringside list` and the extension's KeeperClient must find it there, and no file outside
// its state directory may change. Also: what a keeper killed with SIGKILL leaves is removed by
// `ringside list` and by the next keeper start.

import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KeeperClient } from '../../extension/session/keeper-client';
import { takePauseLease } from '../../native/keeper/state';
import { NOBODY_UID, repoRoot, SETPRIV } from './nobody';

const cli = path.join(repoRoot, 'dist/cli.js');

/** Runs a shell script as uid 65534 (the attacker preparing a trap). */
function asNobody(script: string): void {
  const run = spawnSync(SETPRIV[0], [...SETPRIV.slice(1), 'sh', '-ec', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, `uid ${NOBODY_UID} could not prepare the trap: ${run.stderr}`);
}

/** What an attack could change about a path: its type, owner, mode, link target and content. */
function fingerprint(file: string): string {
  if (!existsSync(file) && !isLink(file)) return 'missing';
  const stats = lstatSync(file);
  const what = stats.isSymbolicLink()
    ? `-> ${readlinkSync(file)}`
    : stats.isFile()
      ? readFileSync(file, 'utf8')
      : stats.isDirectory()
        ? readdirSync(file).sort().join(',')
        : '';
  return `${stats.uid}:${(stats.mode & 0o7777).toString(8)}:${what}`;
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    // no such file: not a link
    return false;
  }
}

function fingerprints(files: readonly string[]): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file, fingerprint(file)]));
}

describe("keeper state directory against another user's traps (root keeper, uid 65534 attacker)", function () {
  this.timeout(90_000);
  let base: string;
  const keepers: ChildProcess[] = [];
  const env = () => ({ ...process.env, XDG_RUNTIME_DIR: base });
  const ringside = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: env() });

  before(function () {
    if (process.getuid?.() !== 0) throw new Error('these tests switch to uid 65534 with setpriv, which needs root (CI runs as root)');
  });
  beforeEach(() => {
    // Like /tmp: world-writable and sticky, so uid 65534 can plant names in it.
    base = mkdtempSync('/tmp/ringside-attack-');
    chmodSync(base, 0o1777);
  });
  afterEach(() => {
    for (const keeper of keepers.splice(0)) if (keeper.exitCode === null && keeper.signalCode === null) keeper.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });

  /**
   * Starts `ringside keep -a` held at a shell that execs it on a line of stdin, so the keeper's pid
   * (the shell's) is known before it runs: the trap can name it, as an attacker guessing pids would.
   */
  function heldKeeper(): { keeper: ChildProcess; release: () => void; stderr: () => string } {
    const keeper = spawn('sh', ['-c', `read go && exec "${process.execPath}" "${cli}" keep -a -e cpu-clock`], {
      env: env(),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    keepers.push(keeper);
    let stderr = '';
    keeper.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    return { keeper, release: () => keeper.stdin!.end('go\n'), stderr: () => stderr };
  }

  /** Waits for the keeper's line saying it holds its rings (it comes after its notes on the state directory). */
  async function waitHolding(pid: number, stderr: () => string): Promise<void> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      if (stderr().includes(`ringside keep: pid ${pid} holds`)) return;
      assert.ok(!stderr().includes('ringside: '), `the keeper failed: ${stderr()}`);
    }
    throw new Error(`keeper ${pid} never said it holds its rings: ${stderr()}`);
  }

  async function waitListed(pid: number, stderr: () => string): Promise<void> {
    await waitHolding(pid, stderr);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const listed = ringside(['list', '--json']);
      if (listed.status === 0 && (JSON.parse(listed.stdout) as { pid: number }[]).some((keeper) => keeper.pid === pid)) return;
      assert.ok(!stderr().includes('ringside: '), `the keeper failed: ${stderr()}`);
    }
    throw new Error(`ringside list never showed keeper ${pid}: ${stderr()}`);
  }

  /** The extension's view: a KeeperClient with the default directories under this environment. */
  function clientSees(pid: number): boolean {
    const saved = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = base;
    try {
      return new KeeperClient().list().some((listed) => listed.alive && listed.state?.pid === pid);
    } finally {
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = saved;
    }
  }

  async function stop(keeper: ChildProcess, stderr: () => string): Promise<void> {
    const exited = new Promise<number | null>((resolve) => keeper.once('exit', (code) => resolve(code)));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr());
  }

  it('a ringside-0 symlink to a root directory holding temp-file symlinks to a root-only file: nothing is written or chmodded through them', async () => {
    const victim = path.join(base, 'victim');
    writeFileSync(victim, 'root only\n', { mode: 0o600 });
    const linkedDir = path.join(base, 'shared');
    mkdirSync(linkedDir);
    chmodSync(linkedDir, 0o1777);
    const { keeper, release, stderr } = heldKeeper();
    const pid = keeper.pid!;
    const preferred = path.join(base, 'ringside-0');
    // The names the keeper used to write (and those it writes for good) point at the victim.
    asNobody(
      [
        `ln -s ${linkedDir} ${preferred}`,
        `ln -s ${victim} ${linkedDir}/keeper-${pid}.json.${pid}.tmp`,
        `ln -s ${victim} ${linkedDir}/keeper-${pid}.json`,
        `ln -s ${victim} ${linkedDir}/keeper-${pid}.sideband-0.1`,
      ].join('\n'),
    );
    const outside = [victim, linkedDir, preferred, ...readdirSync(linkedDir).map((name) => path.join(linkedDir, name))];
    const before = fingerprints(outside);
    release();
    await waitListed(pid, stderr);

    assert.deepEqual(fingerprints(outside), before, "no file outside the keeper's own directory changed (content, mode, owner, link)");
    assert.match(
      stderr(),
      new RegExp(
        `${preferred} is not a private directory of uid 0 \\(it is a symbolic link \\(to ${linkedDir}\\) owned by uid ${NOBODY_UID}.*state goes to ${base}/ringside-0-\\w{6} instead`,
      ),
    );
    const fallback = readdirSync(base).filter((name) => /^ringside-0-\w{6}$/.test(name));
    assert.equal(fallback.length, 1, readdirSync(base).join(' '));
    const fallbackStats = statSync(path.join(base, fallback[0]));
    assert.equal(fallbackStats.uid, 0);
    assert.equal(fallbackStats.mode & 0o777, 0o700);
    assert.ok(existsSync(path.join(base, fallback[0], `keeper-${pid}.json`)));
    assert.ok(clientSees(pid), "the extension's KeeperClient finds the keeper in the fallback directory");

    // A snapshot is written beside the trap, and is private.
    const out = path.join(base, 'out.data');
    const snap = ringside(['snapshot', String(pid), '-o', out]);
    assert.equal(snap.status, 0, snap.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600, 'a snapshot holds kernel addresses and command lines: mode 0600');
    await stop(keeper, stderr);
    assert.deepEqual(fingerprints(outside), before);
    assert.deepEqual(readdirSync(path.join(base, fallback[0])), [], 'the keeper removed its files on SIGTERM');
  });

  it('a ringside-0 directory pre-made (mode 0777) by another user does not stop the keeper; a fallback look-alike of that user is not used', async () => {
    const preferred = path.join(base, 'ringside-0');
    const lookAlike = path.join(base, 'ringside-0-AAAAAA');
    asNobody(`mkdir -m777 ${preferred}\nmkdir -m700 ${lookAlike}`);
    const outside = [preferred, lookAlike];
    const before = fingerprints(outside);
    const { keeper, release, stderr } = heldKeeper();
    release();
    await waitListed(keeper.pid!, stderr);
    assert.match(
      stderr(),
      new RegExp(
        `${preferred} is not a private directory of uid 0 \\(it is owned by uid ${NOBODY_UID}.*state goes to ${base}/ringside-0-(?!AAAAAA)\\w{6} instead`,
      ),
    );
    assert.deepEqual(fingerprints(outside), before, "the other user's directories are untouched (not chmodded, nothing written in them)");
    assert.ok(clientSees(keeper.pid!));
    // A second keeper while the first runs publishes in the same fallback and both are listed.
    const second = heldKeeper();
    second.release();
    await waitListed(second.keeper.pid!, second.stderr);
    assert.equal(readdirSync(base).filter((name) => name.startsWith('ringside-0-') && name !== 'ringside-0-AAAAAA').length, 1, 'one fallback, reused');
    await waitListed(keeper.pid!, stderr);
    await stop(second.keeper, second.stderr);
    await stop(keeper, stderr);
  });

  it('what a keeper killed with SIGKILL leaves (state, log, spools, pause lease) is removed by ringside list and by the next keeper start', async () => {
    const keeperFiles = (pid: number) => {
      const dir = path.join(base, 'ringside-0');
      return existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(`keeper-${pid}.`)) : [];
    };
    const killed = async (pid: number) => {
      process.kill(pid, 'SIGKILL');
      for (const deadline = Date.now() + 10_000; existsSync(`/proc/${pid}`) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    // A spool holds side-band the keeper drained: a process started on the machine (its COMM, MMAP2, EXIT) makes some.
    const spooled = async (pid: number) => {
      // A spool is keeper-PID.sideband-RING.GENERATION (keeper-PID.sideband-tasks.json, the start's task list, is not one).
      for (const deadline = Date.now() + 60_000; !keeperFiles(pid).some((name) => /\.sideband-\d+\.\d+$/.test(name));) {
        assert.ok(Date.now() < deadline, `keeper ${pid} spooled no side-band: ${keeperFiles(pid).join(' ')}`);
        spawnSync('/bin/true');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    // Started the way the editor starts one: its log is a file beside its state.
    const saved = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = base;
    let first: number;
    try {
      first = (await new KeeperClient().start({ cliPath: cli, events: ['cpu-clock'], target: { kind: 'cpus' }, env: { XDG_RUNTIME_DIR: base } })).pid;
    } finally {
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = saved;
    }
    takePauseLease(first, process.pid, path.join(base, 'ringside-0'));
    await spooled(first);
    await killed(first);
    const left = keeperFiles(first);
    for (const kind of [/\.json$/, /\.log$/, /\.sideband-\d+\.\d+$/, /\.paused-by-\d+$/])
      assert.ok(
        left.some((name) => kind.test(name)),
        `${kind} among ${left.join(' ')}`,
      );
    const listed = ringside(['list']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /no keeper is running/);
    assert.deepEqual(keeperFiles(first), [], '`ringside list` removed what the dead keeper left');

    const second = heldKeeper();
    second.release();
    await waitListed(second.keeper.pid!, second.stderr);
    await spooled(second.keeper.pid!);
    await killed(second.keeper.pid!);
    assert.ok(keeperFiles(second.keeper.pid!).length > 0);
    const third = heldKeeper();
    third.release();
    // Not through `ringside list`, which would clean up first.
    await waitHolding(third.keeper.pid!, third.stderr);
    assert.deepEqual(keeperFiles(second.keeper.pid!), [], 'the next keeper start removed what the dead keeper left');
    assert.match(third.stderr(), new RegExp(`removed the state files, leases and spools that dead keeper\\(s\\) ${second.keeper.pid} left`));
    await stop(third.keeper, third.stderr);
  });
});
