// The shared safe writer and private-directory checks on a real file system: what is created, its
// mode, what is left after a failure, and that no check chmods or writes through a symbolic link.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AtomicFile, ensurePrivateDirectory, FileWriteError, openPrivateDirectory, writeFileAtomic } from './safe-file';

describe('safe-file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-safe-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writeFileAtomic: mode 0600 whatever the umask, the old file replaced whole, no temporary file left', () => {
    const file = path.join(dir, 'out.data');
    writeFileSync(file, 'old', { mode: 0o644 });
    writeFileAtomic(file, 'new');
    assert.equal(readFileSync(file, 'utf8'), 'new');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['out.data']);
  });

  it('abort leaves the target as it was and removes the temporary file', () => {
    const file = path.join(dir, 'out.jsonl');
    writeFileSync(file, 'before');
    const out = new AtomicFile(file);
    out.write('half a li');
    out.abort();
    assert.equal(readFileSync(file, 'utf8'), 'before');
    assert.deepEqual(readdirSync(dir), ['out.jsonl']);
  });

  it('rollback drops what was written after the last checkpoint: the file holds whole snapshots only', () => {
    const file = path.join(dir, 'out.jsonl');
    const out = new AtomicFile(file);
    out.write('{"snapshot":1}\n');
    out.checkpoint();
    out.write('{"snapshot":2,"cut');
    out.rollback();
    out.write('{"snapshot":3}\n');
    out.commit();
    assert.equal(readFileSync(file, 'utf8'), '{"snapshot":1}\n{"snapshot":3}\n');
  });

  it('refuses a FIFO at the target (nothing opens it) and a missing directory, naming the file', () => {
    const fifo = path.join(dir, 'pipe.html');
    execFileSync('mkfifo', [fifo]);
    assert.throws(
      () => new AtomicFile(fifo),
      (error: unknown) =>
        error instanceof FileWriteError &&
        error.message ===
          `cannot write ${fifo}: it is a FIFO (named pipe); ` + 'Ringside writes outputs as regular files (written whole, then renamed into place)',
    );
    const missing = path.join(dir, 'no/such/x.data');
    assert.throws(() => writeFileAtomic(missing, 'x'), new RegExp(`^FileWriteError: cannot write ${missing}: no such file or directory \\(ENOENT\\)`));
  });

  it('a private directory: made 0700, an own wider one narrowed, a link or a shared one refused without touching what it points at', () => {
    const made = path.join(dir, 'run/ringside-0');
    assert.deepEqual(ensurePrivateDirectory(made), { ok: true });
    assert.equal(statSync(made).mode & 0o777, 0o700);
    chmodSync(made, 0o755);
    assert.deepEqual(ensurePrivateDirectory(made), { ok: true });
    assert.equal(statSync(made).mode & 0o777, 0o700);

    const shared = path.join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const link = path.join(dir, 'ringside-link');
    symlinkSync(shared, link);
    const refused = ensurePrivateDirectory(link);
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.reason : '', new RegExp(`it is a symbolic link \\(to ${shared}\\)`));
    assert.equal(statSync(shared).mode & 0o7777, 0o1777, 'the linked directory was not chmodded');
    assert.throws(() => openPrivateDirectory(link), /symbolic link/);
    assert.throws(() => openPrivateDirectory(shared), /its mode 0777 lets other users in/);
    closeSync(openPrivateDirectory(made));
  });
});
