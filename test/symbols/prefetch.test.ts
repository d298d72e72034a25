// Symbol tables read ahead on a worker thread (native/symbols/prefetch.ts): the worker hands over each object's
// function index and kallsyms exactly as this thread builds them, a file it cannot read is left to this thread, and
// `ringside decode` writes the same bytes with the worker as without it. The disk cache is off throughout, so every
// index is built (by the worker or here), and the user's cache is not touched.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Kallsyms } from '../../native/symbols/kallsyms';
import { ObjectFile, readElf } from '../../native/symbols/object-file';
import { FunctionIndex, StoredFunctionIndex } from '../../native/symbols/function-index';
import {
  prefetchedFunctions,
  prefetchedKallsyms,
  prefetchObjects,
  startSymbolPrefetch,
  stopSymbolPrefetch,
  waitForSymbolPrefetch,
} from '../../native/symbols/prefetch';
import { fixture, perfRecord, repoRoot, tempDir } from '../perfdata/perf-tools';

const cli = path.join(repoRoot, 'dist/cli.js');

describe('symbol tables read ahead on a worker thread', function () {
  this.timeout(120_000);
  let dir: string;
  const cacheSetting = process.env.RINGSIDE_NO_SYMBOL_CACHE;

  before(() => {
    dir = tempDir();
    process.env.RINGSIDE_NO_SYMBOL_CACHE = '1';
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    if (cacheSetting === undefined) delete process.env.RINGSIDE_NO_SYMBOL_CACHE;
    else process.env.RINGSIDE_NO_SYMBOL_CACHE = cacheSetting;
  });
  afterEach(() => stopSymbolPrefetch());

  it('hands over function indexes and kallsyms as this thread builds them, and leaves what it cannot read here', () => {
    // node's executable: the largest index a decode builds (181k symbols); /bin/sh: a small one.
    const objects = [realpathSync(process.execPath), realpathSync('/bin/sh')];
    const expected = objects.map((file) => new ObjectFile(file).functionColumns());
    const notElf = path.join(dir, 'not-elf');
    writeFileSync(notElf, 'plain text, not an ELF file\n');
    const missing = path.join(dir, 'missing');

    startSymbolPrefetch({ kallsyms: true, cacheEnabled: false });
    prefetchObjects([...objects, notElf, missing]);
    // Asked for at once, each would be claimed here before the worker reached it (and built here): the worker first.
    assert.ok(waitForSymbolPrefetch(60_000), 'the worker went through its work');
    objects.forEach((file, i) => {
      const got = prefetchedFunctions(file, expected[i].key);
      assert.ok(got, `${file}: the worker's index`);
      assert.deepEqual(got, expected[i].functions, `${file}: the same columns`);
    });
    assert.equal(prefetchedFunctions(notElf, 'any key'), undefined, 'a file that is no ELF is read here');
    assert.equal(prefetchedFunctions(missing, 'any key'), undefined, 'a missing file is read here');
    const kallsyms = prefetchedKallsyms();
    assert.ok(kallsyms, "the worker's kallsyms");
    assert.deepEqual(kallsyms, new Kallsyms(readFileSync('/proc/kallsyms', 'utf8')).compactColumns());
    stopSymbolPrefetch();
    assert.equal(prefetchedFunctions(objects[0], expected[0].key), undefined, 'nothing once stopped');
  });

  it('names read from the object file where a lookup finds them (the string tables not held) are the names of the tables held', () => {
    const file = realpathSync(process.execPath);
    const elf = readElf(file);
    const held = new FunctionIndex([{ columns: elf.symbolColumns() }, { symbols: elf.pltSymbols() }]);
    const object = new ObjectFile(file);
    // The columns handed to another thread place the names in node's file instead of copying them.
    const handed = object.functionColumns().functions;
    assert.ok(
      handed.nameTables?.some((table) => table.path === file),
      'names placed in the file',
    );
    const taken = new StoredFunctionIndex(handed, (path, offset, size) => (path === file ? elf.fileStringTable(offset, size) : undefined));
    const { base, starts } = held.storedColumns();
    assert.ok(starts.length > 50_000, `${starts.length} functions`);
    let compared = 0;
    for (let f = 0; f < starts.length; f += 37, compared++) {
      const vaddr = base + BigInt(starts[f]);
      const name = held.functionAt(vaddr)?.name;
      assert.ok(name !== undefined, `a function at 0x${vaddr.toString(16)}`);
      assert.equal(object.functionAt(vaddr)?.name, name, `built here: 0x${vaddr.toString(16)}`);
      assert.equal(taken.functionAt(vaddr)?.name, name, `taken from another thread: 0x${vaddr.toString(16)}`);
    }
    assert.ok(compared > 1000);
  });

  it('an index asked for with another key (a file replaced since) is built here', () => {
    const file = realpathSync('/bin/sh');
    startSymbolPrefetch({ kallsyms: false, cacheEnabled: false });
    prefetchObjects([file]);
    assert.ok(waitForSymbolPrefetch(60_000), 'the worker went through its work');
    assert.equal(prefetchedFunctions(file, 'the key of another file'), undefined);
  });

  it('ringside decode writes the same JSON Lines with the worker as without it', () => {
    const data = path.join(dir, 'g.data');
    // User frames in pd_work, libc and ld.so, and kernel frames: each kind of table the worker builds.
    perfRecord(data, ['-g', '-e', 'task-clock', '-c', '20000'], [fixture('pd_work'), '1', '3000000']);
    const decode = (prefetch: '0' | '1') => {
      const run = spawnSync(process.execPath, [cli, 'decode', data], {
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        env: { ...process.env, RINGSIDE_NO_SYMBOL_CACHE: '1', RINGSIDE_SYMBOL_PREFETCH: prefetch },
      });
      assert.equal(run.status, 0, run.stderr);
      return run.stdout;
    };
    const without = decode('0');
    assert.ok(without.split('\n').filter((line) => line.includes('"callchainSyms":["')).length > 50, 'named callchains to compare');
    assert.equal(decode('1'), without);
  });
});
