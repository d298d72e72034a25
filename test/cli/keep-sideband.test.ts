// `ringside snapshot` of a keeper whose spool holds seconds of fork/exec side-band while its
// flight recorders hold the last moments: the snapshot keeps only the side-band its samples need,
// and perf script, the referee, prints every sample with the same comm, symbol and object as from
// a snapshot with the whole spool (--all-sideband), from a file a fraction of the size.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');

/**
 * The load: a perl started first that sleeps, then makes a burst of getpid calls and creates DONE;
 * meanwhile short-lived processes (a fork, an exec and their mappings each) fill the side-band. Three more run after
 * the burst, so the newest records of whichever ring the burst filled are theirs (on a busy machine the loop and perl
 * may share one CPU, and the burst overwrote every earlier one). It ends in a sleep only this test names. perl's mappings are seconds older than its samples, and
 * perl is gone when the snapshot is taken: only kept side-band names its code.
 */
const LOAD = `done=$1; getpid=$2; tag=$3
perl -e 'select(undef, undef, undef, 4); syscall(39) for 1..20000; open(my $f, ">", $ARGV[0])' "$done" &
while [ ! -e "$done" ]; do "$getpid" 50; done
wait
for i in 1 2 3; do "$getpid" 50; done
exec sleep "$tag"`;

describe('ringside snapshot of a keeper keeps the side-band its samples need (real kernel, perf script as referee)', function () {
  this.timeout(120000);
  let dir: string;
  let keeper: ChildProcess | undefined;
  const env = () => ({ ...process.env, XDG_RUNTIME_DIR: dir });
  const ringside = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: env() });

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-keep-sideband-'));
  });
  afterEach(() => {
    if (keeper && keeper.exitCode === null) keeper.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('perf script prints the same comm, symbol and object for every sample with the pruned side-band as with the whole spool', async () => {
    const tag = `700.${process.pid}`;
    keeper = spawn(
      process.execPath,
      [
        cli,
        'keep',
        '-e',
        'syscalls:sys_enter_getpid',
        '-e',
        'task-clock',
        '--pages',
        '16',
        '--',
        '/bin/sh',
        '-c',
        LOAD,
        'load',
        path.join(dir, 'done'),
        fixture('kernel_getpid'),
        tag,
      ],
      { env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    for (const deadline = Date.now() + 90000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
      if (spawnSync('pgrep', ['-f', `^sleep ${tag.replace('.', '\\.')}$`], { encoding: 'utf8' }).stdout.trim()) break;
      assert.ok(Date.now() < deadline && keeper.exitCode === null, `the load finished (${stderr})`);
    }

    const take = (name: string, extra: string[]) => {
      const file = path.join(dir, name);
      const run = ringside(['snapshot', String(keeper!.pid), ...extra, '-o', file]);
      assert.equal(run.status, 0, run.stderr);
      const script = execFileSync('perf', ['script', '-i', file, '-F', 'comm,pid,tid,time,event,ip,sym,dso'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 256 << 20,
      });
      const lost = run.stderr
        .split('\n')
        .filter((line) => / lost /.test(line))
        .map((line) => line.replace(/^.* lost /, ''));
      return { bytes: statSync(file).size, samples: script.split('\n').filter((line) => line.trim()), stderr: run.stderr, lost };
    };
    const whole = take('whole.data', ['--all-sideband']);
    const pruned = take('pruned.data', []);

    assert.match(pruned.stderr, /side-band before the oldest sample: kept \d+ of \d+ records/);
    assert.doesNotMatch(whole.stderr, /side-band before the oldest sample/);
    const perl = pruned.samples.filter((line) => /^\s*perl /.test(line) && line.includes('sys_enter_getpid'));
    assert.ok(perl.length > 100, `perl's getpid burst is in the rings (${pruned.samples.length} samples)`);
    assert.ok(
      perl.every((line) => !line.includes('[unknown]')),
      `perl's samples are named:\n${perl.slice(0, 3).join('\n')}`,
    );
    assert.ok(
      pruned.samples.some((line) => /^\s*kernel_getpid /.test(line)),
      'samples of the short-lived processes too',
    );
    assert.deepEqual(pruned.samples, whole.samples, 'every sample as perf script prints it from the whole spool');
    assert.deepEqual(pruned.lost, whole.lost, 'the same losses, ring by ring');
    // How much side-band the load made before the samples depends on how fast the machine ran its forks, so the sizes are
    // compared with what the pruning says it left out, not with a fixed ratio: every record left out is at least a
    // header and a pid (16 bytes) the pruned file does not hold.
    const [kept, older] = /kept (\d+) of (\d+) records/.exec(pruned.stderr)!.slice(1).map(Number);
    assert.ok(kept < older, pruned.stderr);
    assert.ok(
      whole.bytes - pruned.bytes >= (older - kept) * 16,
      `the pruned file (${pruned.bytes} bytes) is smaller than the whole one (${whole.bytes} bytes) by the ${older - kept} records left out`,
    );

    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  });
});
