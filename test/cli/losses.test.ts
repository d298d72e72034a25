// Losses said where the result is read (issue 35): a capture whose rings overwrote the start says so on its
// summary's first line and in the timeline page's notes, with an estimate perf record checks; a triggered
// snapshot on a crash leaves -o whole (perf script reads both files); a keeper whose spool hits ENOSPC counts
// the side-band it lost and every snapshot names it.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');

function ringside(args: string[], env: NodeJS.ProcessEnv = {}) {
  const run = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, input: '', env: { ...process.env, ...env } });
  return { code: run.status, stderr: run.stderr };
}

/** perf script's sample lines of `file` for `event`. */
function perfSamples(file: string, event: string, fields = 'comm,time,event,ip'): string[] {
  const script = execFileSync('perf', ['script', '-i', file, '-F', fields], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 << 20 });
  return script.split('\n').filter((line) => line.includes(event));
}

const waitFor = async (what: string, condition: () => boolean, timeoutMs = 60000) => {
  for (const deadline = Date.now() + timeoutMs; !condition(); await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
};

describe('losses said where the result is read (real kernel, perf as referee)', function () {
  this.timeout(180000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-losses-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('rings that overwrote the start say so on the first line and in the page, and the --pages named keeps it all', () => {
    // task-clock at 4000 Hz over 1.5 s of the fixture's own CPU time: the same number of samples however loaded the machine.
    const args = (pages: number, out: string) => [
      'capture',
      '-e',
      'task-clock',
      '-F',
      '4000',
      '-g',
      '--pages',
      String(pages),
      '-o',
      out,
      '--',
      fixture('kernel_busy'),
      '1500',
      'cpu',
    ];
    const page = path.join(dir, 'small.html');
    const small = ringside(args(8, page));
    assert.equal(small.code, 0, small.stderr);
    const first = small.stderr.split('\n').find((line) => line.startsWith('ringside: snapshot 1'))!;
    const said =
      /: (\d+) records from \d+ ring\(s\); (kept the last [\d.]+ m?s of [\d.]+ s: ([\d,]+) of about ([\d,]+) records; the rings overwrote the rest \(--pages (\d+) keeps it all[^)]*\))$/.exec(
        first,
      );
    assert.ok(said, `the first line names the overwrite: ${first}`);
    const [records, note, kept, about, pages] = [Number(said[1]), said[2], ...said.slice(3).map((n) => Number(n.replace(/,/g, '')))] as [
      number,
      string,
      number,
      number,
      number,
    ];
    assert.equal(kept, records, 'kept is what the snapshot holds');
    assert.ok(about > 2 * kept, `most was overwritten (${kept} of about ${about})`);
    // The estimate from bytes written against what perf record keeps of the same work.
    const perfData = path.join(dir, 'perf.data');
    execFileSync('perf', ['record', '-q', '-e', 'task-clock', '-F', '4000', '-g', '-o', perfData, '--', fixture('kernel_busy'), '1500', 'cpu'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const perfCount = perfSamples(perfData, 'task-clock').length;
    assert.ok(Math.abs(about - perfCount) < perfCount * 0.25, `about ${about} records, perf record kept ${perfCount}`);
    // The timeline page shows the same sentence among its notes.
    assert.ok(readFileSync(page, 'utf8').includes(note), 'the page names the overwrite');

    // The ring size the note names keeps every sample: no overwrite said, as many samples as perf's.
    const whole = ringside(args(pages, path.join(dir, 'whole.data')));
    assert.equal(whole.code, 0, whole.stderr);
    assert.doesNotMatch(whole.stderr, /overwrote/);
    const wholeCount = perfSamples(path.join(dir, 'whole.data'), 'task-clock').length;
    assert.ok(Math.abs(wholeCount - perfCount) < perfCount * 0.25, `--pages ${pages} kept ${wholeCount}, perf record ${perfCount}`);
  });

  it('--snapshot-on-exit-signal leaves -o whole: both files hold the moments before the crash, for perf script', () => {
    const main = path.join(dir, 'cap.data');
    const snapshots = path.join(dir, 'd');
    const run = ringside([
      'capture',
      '-e',
      'task-clock',
      '-g',
      '--snapshot-on-exit-signal',
      '--snapshot-dir',
      snapshots,
      '-o',
      main,
      '--',
      fixture('kernel_crash'),
      '2000000',
    ]);
    assert.equal(run.code, 128 + 11, run.stderr);
    assert.match(run.stderr, /command killed by SIGSEGV: wrote .*ringside-001-.*\.data \(\d+ records\)/);
    const summary = /snapshot 1 \(command killed by SIGSEGV\): (\d+) records/.exec(run.stderr);
    assert.ok(summary && Number(summary[1]) > 0, run.stderr);
    assert.match(run.stderr, /gap-free +[1-9]\d* records +written [1-9]/, 'the ring the crasher ran on says what was written');
    const [triggeredName] = readdirSync(snapshots);
    const times = (file: string) =>
      perfSamples(file, 'task-clock', 'comm,time,event')
        .filter((line) => line.includes('kernel_crash'))
        .map((line) => /(\d+\.\d+):/.exec(line)![1]);
    const inMain = times(main);
    const inTriggered = times(path.join(snapshots, triggeredName));
    assert.ok(inTriggered.length > 0, 'the triggered file holds the crasher');
    assert.ok(inMain.length >= inTriggered.length, `-o holds ${inMain.length} samples, the triggered file ${inTriggered.length}`);
    const mainTimes = new Set(inMain);
    assert.deepEqual(
      inTriggered.filter((time) => !mainTimes.has(time)),
      [],
      'every sample before the crash is in -o too',
    );
  });
});

describe('a keeper whose side-band spool hits ENOSPC names the loss in every snapshot (real kernel, tmpfs)', function () {
  this.timeout(120000);
  let runtime: string;
  let work: string;
  let keeper: ChildProcess | undefined;
  before(() => {
    runtime = mkdtempSync(path.join(tmpdir(), 'ringside-spool-enospc-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'ringside-enospc-test', runtime]);
    work = mkdtempSync(path.join(tmpdir(), 'ringside-spool-work-'));
  });
  after(async () => {
    if (keeper && keeper.exitCode === null) {
      const exited = new Promise((resolve) => keeper!.once('exit', resolve));
      keeper.kill('SIGKILL');
      await exited;
    }
    execFileSync('umount', [runtime]);
    rmSync(runtime, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('counts the records a failed spool write lost, and the summary and the page name them with the spool and the error', async () => {
    const env = { ...process.env, XDG_RUNTIME_DIR: runtime };
    const go = path.join(work, 'go');
    const done = path.join(work, 'done');
    // Short-lived processes (a fork, an exec and their mappings each) once told to: side-band the spool must take.
    const load = `while [ ! -e "$1" ]; do sleep 0.02; done; for i in $(seq 300); do /bin/true; done; : > "$2"; exec sleep 600`;
    keeper = spawn(process.execPath, [cli, 'keep', '-e', 'task-clock', '--', '/bin/sh', '-c', load, 'load', go, done], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
    await waitFor('the keeper to start', () => /holds \d+ ring/.test(stderr));
    // Everything the file system has left goes to a filler: the spool's writes fail with ENOSPC from here on.
    const filler = path.join(runtime, 'filler');
    const free = statfsSync(runtime);
    try {
      writeFileSync(filler, new Uint8Array(Number(free.bavail) * free.bsize));
    } catch (error) {
      // The keeper's spool took some of that space after statfs: ENOSPC here is the full file system this step makes.
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
    writeFileSync(go, '');
    await waitFor('the load', () => existsSync(done));
    await waitFor(`the keeper to say it cannot spool (${stderr})`, () =>
      /cannot write the side-band spool in .*: ENOSPC.*; [1-9]\d* side-band records lost so far/.test(stderr),
    );
    unlinkSync(filler);

    const page = path.join(work, 'snap.html');
    const snap = ringside(['snapshot', String(keeper.pid), '-o', page], env);
    assert.equal(snap.code, 0, snap.stderr);
    const note = /side-band (.+?): lost ([\d,]+) records \(([^)]+)\): the keeper could not write them to its spool (\S+) \(ENOSPC\)/.exec(snap.stderr);
    assert.ok(note, `the summary names the loss:\n${snap.stderr}`);
    const lost = Number(note[2].replace(/,/g, ''));
    assert.ok(lost > 0);
    assert.match(note[4], new RegExp(`^${runtime}/ringside-\\d+/keeper-${keeper.pid}\\.sideband-\\d+$`));
    // The ring's own line counts the same records, and the page carries the sentence.
    const ringLine = snap.stderr.split('\n').find((line) => line.includes(`${note[1]} `) && line.includes('not spooled'));
    assert.ok(ringLine?.includes(`${lost} not spooled (ENOSPC)`), `${ringLine}`);
    assert.ok(readFileSync(page, 'utf8').includes(`lost ${note[2]} records (${note[3]}): the keeper could not write them`), 'the page names the loss');

    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  });
});
