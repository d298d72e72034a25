// The symbol cache of an ordinary user (uid 65534) whose cache home lies where another user (root here) can plant
// things, as in a shared, sticky, world-writable directory: a `ringside` symbolic link to a directory of the user's
// choosing elsewhere, or a `ringside` directory of the other user's, is refused — said once on stderr, the decode goes
// on uncached and names the same frames — and nothing is written through it. In a cache home of its own the cache is
// made 0700 with 0600 entries of that uid, and the next run loads from it. kallsyms, whose addresses kptr_restrict hides
// from that user, is never cached for it.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { NOBODY_UID, parseJsonLines, perfRecordAsNobody, prepareNobodyDir, type NobodyDir } from './nobody';

describe('symbol cache as uid 65534: private, and never through what another user planted', function () {
  this.timeout(180_000);
  let nobody: NobodyDir;
  let reference = '';

  /** `ringside decode pf.data` as uid 65534 with the cache home `cacheHome`: its status, stderr and samples' names. */
  const decode = (cacheHome: string, extra: readonly string[] = []) => {
    const run = nobody.run([process.execPath, nobody.cli, 'decode', 'pf.data', '-o', 'pf.jsonl', ...extra], { env: { XDG_CACHE_HOME: cacheHome } });
    assert.equal(run.status, 0, run.stderr);
    const names = parseJsonLines(readFileSync(path.join(nobody.dir, 'pf.jsonl'), 'utf8'))
      .filter((record) => record.type === 'SAMPLE')
      .map((record) => record.sym ?? '')
      .join('\n');
    return { stderr: run.stderr, names };
  };

  before(() => {
    nobody = prepareNobodyDir();
    perfRecordAsNobody(nobody, 'pf.data', ['-e', 'page-faults', '-c', '1', '--', nobody.fixture('kernel_writer'), '10']);
    // The names with no cache at all: what every run below must print.
    reference = decode(path.join(nobody.dir, 'unused'), ['--no-symbol-cache']).names;
    assert.match(reference, /\S/, 'the samples are named');
  });
  after(() => nobody?.dispose());

  /** A sticky world-writable directory, as /tmp is, for the cache home. */
  const sharedHome = (name: string): string => {
    const home = path.join(nobody.dir, name);
    mkdirSync(home);
    chmodSync(home, 0o1777);
    return home;
  };

  it('refuses a planted symbolic link at the cache directory, writes nothing through it, and decodes the same', () => {
    const home = sharedHome('shared-link');
    // The directory the link leads to is the victim's own (writable by it): following the link would succeed.
    const elsewhere = path.join(nobody.dir, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    execFileSync('chown', [`${NOBODY_UID}:${NOBODY_UID}`, elsewhere]);
    symlinkSync(elsewhere, path.join(home, 'ringside'));
    assert.equal(lstatSync(path.join(home, 'ringside')).uid, 0, 'planted by another user (root)');

    const run = decode(home);
    assert.equal(run.names, reference);
    assert.match(run.stderr, /symbol cache off: .*ringside: it is a symbolic link \(to .*elsewhere\) owned by uid 0/);
    assert.equal(run.stderr.match(/symbol cache off/g)?.length, 1, 'said once');
    assert.deepEqual(readdirSync(elsewhere), [], 'nothing written through the link');
    assert.ok(lstatSync(path.join(home, 'ringside')).isSymbolicLink(), 'the link is left alone');
  });

  it('refuses a cache directory another user made (even one open to all), and writes nothing into it', () => {
    const home = sharedHome('shared-dir');
    const planted = path.join(home, 'ringside');
    mkdirSync(planted);
    chmodSync(planted, 0o777);
    const run = decode(home);
    assert.equal(run.names, reference);
    assert.match(run.stderr, /symbol cache off: .*ringside: it is owned by uid 0 \(root\), not by uid 65534/);
    assert.deepEqual(readdirSync(planted), []);
  });

  it('in a cache home of its own: a 0700 directory of 0600 entries of that uid, and the next run names the same', () => {
    const home = path.join(nobody.dir, 'own-cache');
    const first = decode(home);
    assert.equal(first.names, reference);
    assert.doesNotMatch(first.stderr, /symbol cache/);
    const dir = path.join(home, 'ringside');
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(dir).uid, NOBODY_UID);
    const entries = readdirSync(dir);
    assert.ok(
      entries.some((name) => name.endsWith('.fidx')),
      `function tables cached: ${entries.join(', ')}`,
    );
    for (const name of entries) {
      const stats = lstatSync(path.join(dir, name));
      assert.ok(stats.isFile(), name);
      assert.equal(stats.mode & 0o777, 0o600, name);
      assert.equal(stats.uid, NOBODY_UID, name);
    }
    assert.equal(decode(home).names, reference, 'warm');
  });

  it('kallsyms read with its addresses hidden from that user (kptr_restrict) is not cached', function () {
    const head = nobody.run(['head', '-c', '4096', '/proc/kallsyms']);
    assert.equal(head.status, 0, head.stderr);
    if (/^0*[1-9a-f][0-9a-f]* /m.test(head.stdout)) this.skip(); // this host shows that user real addresses: the root test covers caching them
    nobody.withCompiledModules();
    const home = path.join(nobody.dir, 'kallsyms-cache');
    const script = `const { Kallsyms } = require('./out/native/symbols/kallsyms.js'); process.stdout.write(String(Kallsyms.read().usable));`;
    const run = nobody.run([process.execPath, '-e', script], { env: { XDG_CACHE_HOME: home } });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'false', 'the addresses read as zeros');
    let entries: string[];
    try {
      entries = readdirSync(path.join(home, 'ringside'));
    } catch {
      // no cache directory made at all: nothing cached either
      entries = [];
    }
    assert.deepEqual(
      entries.filter((name) => name.endsWith('.ksym')),
      [],
    );
  });
});
