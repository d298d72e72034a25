// Where `capture -o` writes, as root: private files (0600, like perf record's), never through a
// symbolic link planted at the output's name, nothing half-written on a full disk (a 64 KiB tmpfs
// filled up) with an error naming the file, and a FIFO at -o refused before anything runs.

import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture } from '../kernel/helpers';
import { AtomicFile, FileWriteError } from '../../native/sys/safe-file';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const CALLS = 200;

/** `capture` of CALLS getpid syscalls of a launched program, under umask 022 (what made outputs 0644 before). */
function capture(output: string): { status: number | null; signal: NodeJS.Signals | null; stderr: string } {
  const run = spawnSync(
    'sh',
    [
      '-c',
      'umask 022 && exec "$@"',
      'sh',
      process.execPath,
      cli,
      'capture',
      '-q',
      '-e',
      'syscalls:sys_enter_getpid',
      '-o',
      output,
      '--',
      fixture('kernel_getpid'),
      String(CALLS),
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: run.status, signal: run.signal, stderr: run.stderr };
}

describe('capture -o: private, whole or absent, never through a link or into a FIFO (real kernel)', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-out-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const ext of ['jsonl', 'data', 'html']) {
    it(`.${ext} is created 0600, replaces an existing 0644 file with a 0600 one, and replaces a symlink instead of writing through it`, () => {
      const fresh = path.join(dir, `fresh.${ext}`);
      const made = capture(fresh);
      assert.equal(made.status, 0, made.stderr);
      assert.equal(statSync(fresh).mode & 0o777, 0o600);
      if (ext === 'jsonl') {
        const lines = readFileSync(fresh, 'utf8').split('\n').filter(Boolean);
        assert.equal(lines.filter((line) => line.includes('sys_enter_getpid')).length, CALLS, 'every getpid, each line whole');
      }

      const old = path.join(dir, `old.${ext}`);
      writeFileSync(old, 'old\n', { mode: 0o644 });
      assert.equal(capture(old).status, 0);
      assert.equal(statSync(old).mode & 0o777, 0o600);
      assert.notEqual(readFileSync(old, 'utf8'), 'old\n');

      const victim = path.join(dir, 'victim');
      writeFileSync(victim, 'root only\n', { mode: 0o600 });
      const linked = path.join(dir, `linked.${ext}`);
      symlinkSync(victim, linked);
      assert.equal(capture(linked).status, 0);
      assert.equal(readFileSync(victim, 'utf8'), 'root only\n', 'the file the link pointed at is untouched');
      assert.ok(lstatSync(linked).isFile(), 'the link was replaced by the output');
      assert.deepEqual(
        readdirSync(dir).filter((name) => name.endsWith('.tmp')),
        [],
        'no temporary file left',
      );
    });
  }

  it('a FIFO at -o is refused before the program is launched, with the reason', () => {
    const fifo = path.join(dir, 'x.html');
    execFileSync('mkfifo', [fifo]);
    const run = capture(fifo);
    assert.equal(run.signal, null, 'it did not hang in open()');
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`-o ${fifo} is a FIFO \\(named pipe\\); Ringside writes a regular file there`));
    assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO is left as it was');
  });

  describe('on a full disk (a 64 KiB tmpfs, filled)', () => {
    let mount: string;
    before(() => {
      mount = mkdtempSync(path.join(tmpdir(), 'ringside-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0755', 'tmpfs', mount]);
      // Fill it: every later write gets ENOSPC, whatever the size of the output.
      const fd = openSync(path.join(mount, 'filler'), 'w');
      try {
        const block = Buffer.alloc(4096, 1);
        for (;;) writeSync(fd, block);
      } catch (error) {
        assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
      } finally {
        closeSync(fd);
      }
    });
    after(() => {
      if (!mount) return;
      execFileSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    });

    for (const ext of ['jsonl', 'data', 'html']) {
      it(`.${ext}: exit 1, the error names the file and ENOSPC, and no partial or temporary file is left`, () => {
        const out = path.join(mount, `x.${ext}`);
        const run = capture(out);
        assert.equal(run.status, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`ringside: cannot write ${out}: no space left on device \\(ENOSPC\\)`));
        assert.deepEqual(readdirSync(mount), ['filler']);
      });
    }

    it('a JSON Lines file that fills the disk in a later snapshot keeps the whole snapshots before it, never a cut line', () => {
      // Two pages freed: the first snapshot fits, the second does not.
      const filler = path.join(mount, 'filler');
      truncateSync(filler, statSync(filler).size - 8192);
      const out = path.join(mount, 'kept.jsonl');
      const file = new AtomicFile(out);
      const first = '{"snapshot":1}\n'.repeat(256);
      file.write(first);
      file.checkpoint();
      assert.throws(
        () => file.write('{"snapshot":2}\n'.repeat(65536)),
        (error: unknown) =>
          error instanceof FileWriteError &&
          new RegExp(`^cannot write ${out}: no space left on device \\(ENOSPC\\); it keeps only what was whole before \\(${first.length} bytes\\)$`).test(
            error.message,
          ),
      );
      assert.equal(readFileSync(out, 'utf8'), first);
      assert.equal(statSync(out).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(mount).sort(), ['filler', 'kept.jsonl']);
      file.commit(); // already done: a no-op, as SnapshotWriter.close() calls it
    });
  });
});
