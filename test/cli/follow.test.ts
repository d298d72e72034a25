// `ringside capture --follow`: JSON Lines of what the rings gain, while the command runs. The fixture
// works in bursts that the test releases only after it has read the previous burst's records from the
// follower's stdout, so these tests cannot pass unless records arrive live (a capture that wrote at the
// end would hang on burst 1, and fail on the mocha timeout). Records are numbered (close(100000 + i)),
// so a lost, repeated or reordered record shows.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../kernel/helpers';
import { prepareNobodyDir, SETPRIV, type NobodyDir } from '../unprivileged/nobody';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const FIRST_FD = 100000;

interface FollowedLine {
  type: string;
  event?: string;
  pid?: number;
  time?: string;
  fields?: { fd?: number };
}

/** Captures still running: a test that failed part way ends its own (SIGTERM ends the command it launched too). */
const running = new Set<Follower>();

async function endRunning(): Promise<void> {
  for (const follower of [...running]) {
    follower.child.kill('SIGTERM');
    await follower.exited;
  }
}

/** A running `capture --follow`: its parsed stdout lines as they arrive, its stderr, and its end. */
class Follower {
  readonly lines: FollowedLine[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private partial = '';
  private wake: (() => void) | undefined;

  constructor(readonly child: ChildProcess) {
    running.add(this);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      const parts = (this.partial + text).split('\n');
      this.partial = parts.pop()!;
      // Times are exact integers beyond 2^53: kept as strings.
      for (const line of parts) if (line) this.lines.push(JSON.parse(line.replace(/"time":(\d+)/g, '"time":"$1"')) as FollowedLine);
      this.wake?.();
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      this.stderr += text;
    });
    this.exited = new Promise((resolve) =>
      child.on('close', (code) => {
        running.delete(this);
        this.wake?.();
        resolve(code);
      }),
    );
  }

  /** Resolves once `condition` holds for the lines read so far; fails if the capture ends first. */
  async until(what: string, condition: () => boolean): Promise<void> {
    while (!condition()) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`capture ended before ${what}: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}

const numbered = (lines: readonly FollowedLine[]) =>
  lines
    .filter((line) => line.type === 'SAMPLE' && line.event === 'syscalls:sys_enter_close' && (line.fields?.fd ?? 0) >= FIRST_FD)
    .map((line) => line.fields!.fd! - FIRST_FD);

describe('capture --follow streams what the rings gain while the command runs (real kernel)', function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-follow-'));
  });
  afterEach(async () => {
    await endRunning();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every numbered record once, in order, each burst read before the next one runs', async () => {
    const bursts = 5;
    const per = 300;
    const follower = new Follower(
      spawn(
        process.execPath,
        [cli, 'capture', '--follow=100', '-e', 'syscalls:sys_enter_close', '--', fixture('follow_bursts'), 'close', String(bursts), String(per), dir],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    for (let burst = 0; burst < bursts; burst++) {
      writeFileSync(path.join(dir, `go.${burst}`), '');
      await follower.until(`burst ${burst} was read`, () => numbered(follower.lines).length >= (burst + 1) * per);
    }
    assert.equal(await follower.exited, 0, follower.stderr);
    assert.deepEqual(
      numbered(follower.lines),
      Array.from({ length: bursts * per }, (_, i) => i),
      'each call once, in the order made',
    );
    const times = follower.lines.filter((line) => line.time !== undefined).map((line) => BigInt(line.time!));
    assert.ok(
      times.every((time, k) => k === 0 || time >= times[k - 1]),
      'lines in time order across reads',
    );
    const summary = /followed ([\d,]+) records in (\d+) reads, one every 100 ms, until command exited with status 0/.exec(follower.stderr);
    assert.ok(summary, follower.stderr);
    assert.equal(Number(summary[1].replace(/,/g, '')), follower.lines.length, 'the summary counts the lines written');
    assert.ok(Number(summary[2]) >= bursts, 'one read at least per burst');
    assert.doesNotMatch(follower.stderr, /overwritten before they could be read/);
    // The side-band came along: the command's exec and exit.
    assert.ok(
      follower.lines.some((line) => line.type === 'COMM'),
      'COMM of the command',
    );
    assert.ok(
      follower.lines.some((line) => line.type === 'EXIT'),
      'EXIT of the command',
    );
  });

  it('a ring that fills between two reads keeps the newest records, whole, and the summary counts what was overwritten', async () => {
    const per = 5000;
    // One 4 KiB ring and one read at the end: 5,000 close records do not fit. Pinned to one CPU, so one ring holds the
    // sequence (a busy machine moved the program between CPUs mid-burst, and each CPU's ring kept its own newest part).
    const follower = new Follower(
      spawn(
        process.execPath,
        [
          cli,
          'capture',
          '--follow=600000',
          '--pages',
          '1',
          '--no-gap-free',
          '-e',
          'syscalls:sys_enter_close',
          '--',
          'taskset',
          '-c',
          '0',
          fixture('follow_bursts'),
          'close',
          '1',
          String(per),
          dir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    writeFileSync(path.join(dir, 'go.0'), '');
    assert.equal(await follower.exited, 0, follower.stderr);
    const seqs = numbered(follower.lines);
    assert.ok(seqs.length > 0 && seqs.length < per, `some were kept, not all (${seqs.length})`);
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => per - seqs.length + i),
      'the newest, contiguous, ending with the last call',
    );
    const overwritten =
      /ringside: ([\d.]+ [KM]?i?B) were overwritten before they could be read \(in 1 of 1 reads\): .*give --pages more, or a shorter interval/.exec(
        follower.stderr,
      );
    assert.ok(overwritten, follower.stderr);
  });

  it('rings that grow (--window) are followed across the swap: no record twice, none out of order, none lost once they keep up', async () => {
    const calls = 16000;
    // Pinned to one CPU so one ring holds the sequence; a 1-page ring overflows between reads until it has grown.
    const follower = new Follower(
      spawn(
        process.execPath,
        [
          cli,
          'capture',
          '--follow=50',
          '-e',
          'syscalls:sys_enter_close',
          '--pages',
          '1',
          '--window',
          '2',
          '--',
          'taskset',
          '-c',
          '0',
          fixture('kernel_paced'),
          String(calls),
          '4000',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    );
    assert.equal(await follower.exited, 0, follower.stderr);
    assert.match(follower.stderr, /rings resized from 1 to \d+ pages/);
    const seqs = numbered(follower.lines);
    assert.ok(
      seqs.every((seq, k) => k === 0 || seq > seqs[k - 1]),
      'each call once, in the order made, across the resize',
    );
    assert.equal(seqs[seqs.length - 1], calls - 1, 'the last call is there');
    // The grown ring holds 2 s of calls: once it has grown (0.8 s in on a quiet machine, later when loaded), nothing is
    // overwritten between two reads, so the sequence ends with an unbroken run: at least its last second (a quarter).
    let lastGap = seqs.length - 1;
    while (lastGap > 0 && seqs[lastGap - 1] === seqs[lastGap] - 1) lastGap--;
    assert.ok(calls - seqs[lastGap] >= calls / 4, `every call from #${seqs[lastGap]} on, the last ${calls - seqs[lastGap]} of ${calls}: ${follower.stderr}`);
  });

  it('a reader that goes away (| head) ends the capture quietly, as SIGPIPE ends a filter, and the command with it', async () => {
    const child = spawn(
      process.execPath,
      [cli, 'capture', '--follow=50', '-e', 'syscalls:sys_enter_close', '--', fixture('follow_bursts'), 'close', '3', '100', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const follower = new Follower(child);
    writeFileSync(path.join(dir, 'go.0'), '');
    await follower.until('the first burst', () => numbered(follower.lines).length >= 100);
    const pid = follower.lines.find((line) => line.type === 'COMM')!.pid!;
    child.stdout!.destroy();
    // As with tail -f, the next write finds the reader gone: the next burst makes one. The command then waits for
    // go.2, which never comes: only the capture's end can stop it.
    writeFileSync(path.join(dir, 'go.1'), '');
    assert.equal(await follower.exited, 141, follower.stderr);
    assert.equal(follower.stderr, '', 'no error for a reader that left');
    assert.ok(!existsSync(`/proc/${pid}`), `the launched command (pid ${pid}) was ended`);
  });

  it('SIGINT ends a follow whatever it is doing: the last records are written and the command is ended', async () => {
    const follower = new Follower(
      spawn(process.execPath, [cli, 'capture', '--follow', '-e', 'syscalls:sys_enter_close', '--', fixture('follow_bursts'), 'close', '2', '100', dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    writeFileSync(path.join(dir, 'go.0'), '');
    await follower.until('burst 0 was read', () => numbered(follower.lines).length >= 100);
    follower.child.kill('SIGINT');
    assert.equal(await follower.exited, 130, follower.stderr);
    assert.match(follower.stderr, /followed [\d,]+ records in \d+ reads, one every 250 ms, until SIGINT/);
    assert.match(follower.stderr, /ended the launched command/);
  });
});

describe('capture --follow as an ordinary user (uid 65534)', function () {
  this.timeout(180_000);
  let nobody: NobodyDir;
  before(() => {
    nobody = prepareNobodyDir();
  });
  after(async () => {
    await endRunning();
    nobody?.dispose();
  });

  it("follows its own program's task-clock samples live", async () => {
    const bursts = 3;
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: nobody.dir };
    const child = spawn(
      SETPRIV[0],
      [
        ...SETPRIV.slice(1),
        process.execPath,
        nobody.cli,
        'capture',
        '--follow=100',
        '-e',
        'task-clock',
        '--',
        nobody.fixture('follow_bursts'),
        'spin',
        String(bursts),
        nobody.dir,
      ],
      { cwd: nobody.dir, stdio: ['ignore', 'pipe', 'pipe'], env },
    );
    const follower = new Follower(child);
    const samples = () => follower.lines.filter((line) => line.type === 'SAMPLE' && line.event === 'task-clock').length;
    // go.* files made by root in a directory uid 65534 owns: it only stats them.
    writeFileSync(path.join(nobody.dir, 'go.0'), '');
    for (let burst = 1; burst <= bursts; burst++) {
      const seen = samples();
      await follower.until(`samples of burst ${burst - 1}`, () => samples() >= seen + 10);
      writeFileSync(path.join(nobody.dir, `go.${burst}`), '');
    }
    assert.equal(await follower.exited, 0, follower.stderr);
    assert.match(follower.stderr, /followed [\d,]+ records in \d+ reads, one every 100 ms/);
  });
});
