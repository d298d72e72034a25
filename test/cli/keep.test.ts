// `ringside keep` read without VS Code: `ringside list` shows a running keeper and its rings, and
// `ringside snapshot PID -o FILE.data` writes a perf.data of its rings that perf script reads, with
// every event it holds.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onlineCpus } from '../../native/perf/procfs';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');

describe('ringside keep, list and snapshot (real kernel, perf script as referee)', function () {
  this.timeout(60000);
  let dir: string;
  let keeper: ChildProcess | undefined;
  const env = () => ({ ...process.env, XDG_RUNTIME_DIR: dir });
  const ringside = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: env() });

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-keep-'));
  });
  afterEach(() => {
    if (keeper && keeper.exitCode === null) keeper.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keep -a holds three events; list shows them; snapshot -o .data holds all three for perf script', async () => {
    // Rings of 4 MiB: at cpu-clock's 4000 Hz they keep tens of seconds, so the getppid calls below are still there when
    // a snapshot's node has started on a busy machine (the default 256 KiB kept about one).
    keeper = spawn(process.execPath, [cli, 'keep', '-a', '--pages', '1024', '-e', 'cpu-clock', '-e', 'syscalls:sys_enter_getppid', '-e', 'page-faults'], {
      env: env(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const listed = async () => {
      for (const deadline = Date.now() + 20000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const run = ringside(['list', '--json']);
        const keepers = run.status === 0 ? (JSON.parse(run.stdout) as { pid: number; events: string[]; rings: { direction: string }[] }[]) : [];
        const mine = keepers.find((k) => k.pid === keeper!.pid);
        if (mine) return mine;
      }
      throw new Error(`the keeper never listed itself: ${stderr}`);
    };
    const mine = await listed();
    assert.deepEqual(mine.events, ['cpu-clock', 'syscalls:sys_enter_getppid', 'page-faults', 'sideband']);
    const cpus = onlineCpus().length;
    assert.equal(mine.rings.filter((ring) => ring.direction === 'backward').length, cpus, 'the three events share one ring per CPU');
    assert.equal(mine.rings.filter((ring) => ring.direction === 'forward').length, cpus, 'one side-band ring per CPU');
    // What the keeper really maps: one backward and one side-band ring per CPU, nothing per event.
    const perfMappings = readFileSync(`/proc/${keeper.pid}/maps`, 'utf8')
      .split('\n')
      .filter((line) => line.includes('[perf_event]'));
    assert.equal(perfMappings.length, 2 * cpus, perfMappings.join('\n'));
    assert.match(ringside(['list']).stdout, new RegExp(`keeper ${keeper.pid}: cpu-clock, syscalls:sys_enter_getppid, page-faults, sideband on every CPU`));

    // 7 getppid calls by a process the keeper never heard of, then a snapshot from the CLI.
    const calls = 7;
    const perl = spawnSync('perl', ['-e', `getppid() for 1..${calls}`]);
    assert.equal(perl.status, 0);
    const data = path.join(dir, 's.data');
    const snap = ringside(['snapshot', String(keeper.pid), '-o', data]);
    assert.equal(snap.status, 0, snap.stderr);
    assert.match(snap.stderr, new RegExp(`snapshot 1 \\(keeper ${keeper.pid}\\)`));
    const script = execFileSync('perf', ['script', '-i', data, '-F', 'comm,pid,event'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 << 20,
    });
    const lines = script.split('\n').filter((line) => line.trim());
    assert.equal(lines.filter((line) => line.includes(` ${perl.pid} `) && line.includes('sys_enter_getppid')).length, calls, 'every getppid of that process');
    for (const event of ['cpu-clock', 'page-faults'])
      assert.ok(
        lines.some((line) => line.includes(event)),
        `${event} in the snapshot`,
      );
    // The summary tells the events of a shared ring apart.
    assert.match(snap.stderr, /samples .*cpu-clock \d+/);

    const unknown = ringside(['snapshot', '1', '-o', path.join(dir, 'x.data')]);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, new RegExp(`no running keeper with pid 1 .*running: ${keeper.pid}`));

    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.match(ringside(['list']).stdout, /no keeper is running/);
  });

  it('--snapshot-on-exit-signal: a command that dies of SIGSEGV leaves a perf.data of the moments before, with every getpid it made', () => {
    const snapshots = path.join(dir, 'crashes');
    const calls = 300;
    const crasher = fixture('kernel_crash');
    const run = spawnSync(
      process.execPath,
      [
        cli,
        'capture',
        '-e',
        'syscalls:sys_enter_getpid',
        '-e',
        'page-faults',
        '--snapshot-on-exit-signal',
        '--snapshot-dir',
        snapshots,
        '-o',
        path.join(dir, 'final.jsonl'),
        '--',
        crasher,
        String(calls),
      ],
      { encoding: 'utf8', env: env() },
    );
    assert.equal(run.status, 128 + 11, `the capture reports the command's SIGSEGV as a shell would: ${run.stderr}`);
    assert.match(run.stderr, /command killed by SIGSEGV: wrote .*ringside-001-.*\.data/);
    const files = readdirSync(snapshots);
    assert.equal(files.length, 1, files.join(', '));
    const lines = execFileSync('perf', ['script', '-i', path.join(snapshots, files[0]), '-F', 'comm,event'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    })
      .split('\n')
      .filter((line) => line.includes('kernel_crash'));
    assert.equal(lines.filter((line) => line.includes('sys_enter_getpid')).length, calls, 'every getpid before the crash');
    assert.ok(
      lines.some((line) => line.includes('page-faults')),
      'and the crashing fault itself is among the page faults',
    );
    // A command that exits normally writes no crash snapshot.
    const clean = spawnSync(
      process.execPath,
      [
        cli,
        'capture',
        '-q',
        '-e',
        'syscalls:sys_enter_getpid',
        '--snapshot-on-exit-signal',
        '--snapshot-dir',
        snapshots,
        '-o',
        path.join(dir, 'clean.jsonl'),
        '--',
        fixture('kernel_getpid'),
        '5',
      ],
      { encoding: 'utf8', env: env() },
    );
    assert.equal(clean.status, 0, clean.stderr);
    assert.equal(readdirSync(snapshots).length, 1);
  });

  it('keep --snapshot-on-exit-signal: a launched command dying of SIGSEGV or SIGABRT leaves a perf.data (perf script reads it)', async () => {
    const snapshots = path.join(dir, 'kept-crashes');
    const calls = 250;
    /** Runs a keeper over `command` until its stderr matches `pattern`, then stops it; returns its stderr. */
    const keepUntil = async (command: string[], pattern: RegExp): Promise<string> => {
      keeper = spawn(
        process.execPath,
        [cli, 'keep', '-e', 'syscalls:sys_enter_getpid', '-e', 'page-faults', '--snapshot-on-exit-signal', '--snapshot-dir', snapshots, '--', ...command],
        { env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      keeper.stderr!.on('data', (chunk) => {
        stderr += String(chunk);
      });
      for (const deadline = Date.now() + 20000; !pattern.test(stderr); await new Promise((resolve) => setTimeout(resolve, 100))) {
        assert.ok(Date.now() < deadline, `expected ${pattern}: ${stderr}`);
      }
      const exited = new Promise((resolve) => keeper!.once('exit', resolve));
      keeper.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      return stderr;
    };
    const segv = await keepUntil([fixture('kernel_crash'), String(calls)], /command killed by SIGSEGV: wrote .*ringside-001-.*\.data/);
    const files = readdirSync(snapshots);
    assert.equal(files.length, 1, `${files.join(', ')} ${segv}`);
    const script = execFileSync('perf', ['script', '-i', path.join(snapshots, files[0]), '-F', 'comm,event'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    });
    const lines = script.split('\n').filter((line) => line.includes('kernel_crash'));
    assert.equal(lines.filter((line) => line.includes('sys_enter_getpid')).length, calls, 'every getpid before the crash');
    assert.ok(
      lines.some((line) => line.includes('page-faults')),
      'and the crashing fault itself is among the page faults',
    );
    // SIGABRT from the command itself: a second keeper numbers its snapshot from 1 again, in the same directory.
    await keepUntil(['/bin/sh', '-c', 'kill -ABRT $$'], /command killed by SIGABRT: wrote .*ringside-001-.*\.data/);
    assert.equal(readdirSync(snapshots).length, 2);
    for (const file of readdirSync(snapshots)) {
      const read = spawnSync('perf', ['script', '-i', path.join(snapshots, file)], { encoding: 'utf8', maxBuffer: 64 << 20 });
      assert.equal(read.status, 0, `perf script reads ${file}: ${read.stderr}`);
    }
  });

  it('a stop the moment the launched command runs (the rings still being set up) ends the keeper cleanly: status 0, nothing left published, the command ended', async () => {
    // The command stops the keeper (its parent) as its first act; 30017 ms marks it among this machine's spinners.
    keeper = spawn(process.execPath, [cli, 'keep', '-e', 'task-clock', '--', 'sh', '-c', `kill -TERM $PPID; exec ${fixture('kernel_busy')} 30017`], {
      env: env(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const code = await new Promise((resolve) => keeper!.once('exit', (exitCode, signal) => resolve(exitCode ?? signal)));
    assert.equal(code, 0, stderr);
    const left = spawnSync('pgrep', ['-f', 'kernel_busy 30017'], { encoding: 'utf8' }).stdout.trim();
    assert.equal(left, '', 'no launched command outlives the keeper');
    const listed = ringside(['list', '--json']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), [], 'no keeper is published any more');
  });

  it('keep --snapshot-on writes a perf.data each time the trigger fires, with nobody attached, and the trigger records are in it', async () => {
    const snapshots = path.join(dir, 'triggered');
    // kernel_getpid 3 4000: three getpid() calls at once, then 4 s asleep while the keeper holds on.
    keeper = spawn(
      process.execPath,
      [cli, 'keep', '-e', 'task-clock', '--snapshot-on', 'syscalls:sys_enter_getpid', '--snapshot-dir', snapshots, '--', fixture('kernel_getpid'), '3', '4000'],
      { env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const written = (): string[] => {
      try {
        return readdirSync(snapshots);
      } catch {
        /* no snapshot directory yet: nothing written */ return [];
      }
    };
    for (const deadline = Date.now() + 20000; !/wrote .*ringside-001-/.test(stderr); await new Promise((resolve) => setTimeout(resolve, 100))) {
      assert.ok(Date.now() < deadline, `no triggered snapshot: ${stderr}`);
    }
    assert.equal(written().length, 1, written().join(', '));
    const lines = execFileSync('perf', ['script', '-i', path.join(snapshots, written()[0]), '-F', 'comm,event'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter((line) => line.includes('kernel_getpid'));
    assert.equal(lines.filter((line) => line.includes('sys_enter_getpid')).length, 3, 'the three trigger records');
    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.equal(written().length, 1, 'nothing fired again');
  });

  it('a keeper drains its side-band: 1000 execs of /bin/true keep all 1000 COMM records in a later snapshot, nothing lost', async function () {
    // 1000 execs take seconds on a loaded 2-CPU host; a 16-page side-band ring holds about 90 of them.
    this.timeout(180000);
    const execs = 1000;
    // The loop ends in a sleep only this test process names (another run's sleep must not count), exec'd
    // so that it is the command the keeper launched, and ends with the keeper.
    const done = `600.${process.pid}`;
    keeper = spawn(
      process.execPath,
      [cli, 'keep', '-e', 'task-clock', '--', '/bin/sh', '-c', `i=0; while [ $i -lt ${execs} ]; do /bin/true; i=$((i+1)); done; exec sleep ${done}`],
      { env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const running = async (): Promise<{ rings: { direction: string; bytesWritten: string }[] }> => {
      for (const deadline = Date.now() + 20000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const run = ringside(['list', '--json']);
        const mine =
          run.status === 0
            ? (JSON.parse(run.stdout) as { pid: number; rings: { direction: string; bytesWritten: string }[] }[]).find((k) => k.pid === keeper!.pid)
            : undefined;
        if (mine) return mine;
      }
      throw new Error(`the keeper never listed itself: ${stderr}`);
    };
    await running();
    // The loop is done once the load sits in `sleep`.
    for (const deadline = Date.now() + 150000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
      const sleeping = spawnSync('pgrep', ['-f', `^sleep ${done.replace('.', '\\.')}$`], { encoding: 'utf8' }).stdout.trim();
      if (sleeping) break;
      assert.ok(Date.now() < deadline, 'the exec loop finished');
    }
    const output = path.join(dir, 'k.jsonl');
    // Every record the spool holds: the side-band before the oldest task-clock sample is drained too.
    const snap = ringside(['snapshot', String(keeper.pid), '--all-sideband', '-o', output]);
    assert.equal(snap.status, 0, snap.stderr);
    const records = readFileSync(output, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as { type: string; comm?: string });
    assert.equal(records.filter((record) => record.type === 'COMM' && record.comm === 'true').length, execs, 'one COMM (exec) record per /bin/true');
    assert.equal(records.filter((record) => record.type === 'LOST').length, 0);
    const sideband = snap.stderr.split('\n').filter((line) => line.includes('sideband'));
    assert.ok(sideband.length > 0 && sideband.every((line) => / lost 0 since the ring opened/.test(line)), snap.stderr);
    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    assert.deepEqual(readdirSync(path.join(dir, `ringside-${process.getuid!()}`)), [], 'state file and side-band spools removed');
  });

  it('--snapshot-on: a tracepoint trigger writes a perf.data holding the trigger record and the records before it, then re-arms', () => {
    const snapshots = path.join(dir, 'snapshots');
    // getpid 40 times, getppid once, sleep; then getpid 10 times and getppid again: two triggers.
    const program = 'syscall(39) for 1..40; getppid(); select(undef, undef, undef, 1.5); syscall(39) for 1..10; getppid(); select(undef, undef, undef, 0.5)';
    const run = spawnSync(
      process.execPath,
      [
        cli,
        'capture',
        '-q',
        '-e',
        'syscalls:sys_enter_getpid',
        '--snapshot-on',
        'syscalls:sys_enter_getppid',
        '--snapshot-dir',
        snapshots,
        '--min-interval',
        '0.5',
        '-o',
        path.join(dir, 'final.jsonl'),
        '--',
        'perl',
        '-e',
        program,
      ],
      { encoding: 'utf8', env: env() },
    );
    assert.equal(run.status, 0, run.stderr);
    const files = readdirSync(snapshots).sort();
    assert.equal(files.length, 2, files.join(', '));
    assert.match(files[0], /^ringside-001-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z\.data$/);
    const events = (file: string) =>
      execFileSync('perf', ['script', '-i', path.join(snapshots, file), '-F', 'comm,event'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split('\n')
        .filter((line) => line.includes('perl'));
    const first = events(files[0]);
    assert.equal(first.filter((line) => line.includes('sys_enter_getppid')).length, 1, 'the trigger record is in the snapshot');
    assert.equal(first.filter((line) => line.includes('sys_enter_getpid')).length, 40, 'and the records before it');
    // Re-armed: the second file holds the second trigger; its rings still hold the first records too.
    const second = events(files[1]);
    assert.ok(second.filter((line) => line.includes('sys_enter_getppid')).length >= 1);
    assert.ok(second.filter((line) => line.includes('sys_enter_getpid')).length >= 10);
  });
});
