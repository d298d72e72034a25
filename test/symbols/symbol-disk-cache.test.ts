// The symbol cache on disk (native/symbols/symbol-cache.ts), across processes as a second CLI run meets it: a cached
// function table names every function as the one built from the symbol tables; an object rebuilt between two runs
// (same build-id: GNU ld's hash does not cover .symtab) is named by its new symbols; a damaged cache file is ignored
// and rewritten; kallsyms is served from the cache within this boot only. Each run is a real child process.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FunctionIndex, StoredFunctionIndex } from '../../native/symbols/function-index';
import { readElf } from '../../native/symbols/object-file';
import { evictOldest } from '../../native/symbols/symbol-cache';

const objectFileModule = path.resolve(__dirname, '../../native/symbols/object-file.js');
const kallsymsModule = path.resolve(__dirname, '../../native/symbols/kallsyms.js');

/** Builds a non-PIE program whose one function is `name`, at `out`; returns the function's address (nm). */
function build(dir: string, name: string, out: string): bigint {
  const source = path.join(dir, `${name}.c`);
  writeFileSync(source, `long ${name}(long x) { return x * 3 + 1; }\nint main(int argc, char **argv) { (void)argv; return (int)${name}(argc); }\n`);
  execFileSync('gcc', ['-O0', '-no-pie', '-o', out, source]);
  const line = execFileSync('nm', [out], { encoding: 'utf8' })
    .split('\n')
    .find((entry) => entry.endsWith(` T ${name}`));
  assert.ok(line, `nm lists ${name}`);
  return BigInt(`0x${line.split(' ')[0]}`);
}

interface ObjectRun {
  readonly name: string | undefined;
  readonly fromCache: boolean;
}

/** A new process (as a second `ringside decode` would be) names `address` in `file` with the cache at `cacheHome`. */
function nameInNewProcess(cacheHome: string, file: string, address: bigint): ObjectRun {
  const script = `const { ObjectFile } = require(${JSON.stringify(objectFileModule)});
const object = new ObjectFile(process.argv[1]);
const fn = object.functionAt(BigInt(process.argv[2]));
process.stdout.write(JSON.stringify({ name: fn && fn.name, fromCache: object.functionsFromCache }));`;
  const out = execFileSync(process.execPath, ['-e', script, file, `0x${address.toString(16)}`], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cacheHome, RINGSIDE_NO_SYMBOL_CACHE: '' },
  });
  return JSON.parse(out) as ObjectRun;
}

function cacheFiles(cacheHome: string, extension: string): string[] {
  const dir = path.join(cacheHome, 'ringside');
  return readdirSync(dir)
    .filter((name) => name.endsWith(extension))
    .map((name) => path.join(dir, name));
}

describe('symbol cache on disk: warm across processes, never stale', function () {
  this.timeout(120_000);
  let dir = '';
  let cacheHome = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-diskcache-'));
    cacheHome = path.join(dir, 'cache');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stored columns name every function of the node executable as the index built from its symbol tables', () => {
    const elf = readElf(process.execPath);
    const built = new FunctionIndex([{ columns: elf.symbolColumns() }, { symbols: elf.pltSymbols() }]);
    const columns = built.storedColumns();
    const stored = new StoredFunctionIndex(columns);
    assert.ok(built.size > 1000, `node has ${built.size} functions`);
    assert.equal(stored.size, built.size);
    // Every function's first byte and last byte, and the byte past it, through both.
    let compared = 0;
    for (let f = 0; f < columns.starts.length; f++) {
      for (const at of [columns.starts[f], columns.ends[f] - 1, columns.ends[f]]) {
        const address = columns.base + BigInt(at);
        const a = built.functionAt(address);
        const b = stored.functionAt(address);
        assert.deepEqual(b && { name: b.name, start: b.start, end: b.end }, a && { name: a.name, start: a.start, end: a.end }, `0x${address.toString(16)}`);
        compared++;
      }
    }
    assert.equal(compared, built.size * 3);
  });

  it('a second process loads the table from the cache; a rebuild with the same build-id is named by its new symbols', () => {
    const program = path.join(dir, 'prog');
    const alpha = build(dir, 'alpha_fn', program);
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: false });
    const [entry] = cacheFiles(cacheHome, '.fidx');
    assert.ok(entry, 'the first run wrote the table');
    assert.equal(statSync(entry).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(entry)).mode & 0o777, 0o700);
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: true });

    const oldBuildId = readElf(program).buildId();
    const next = path.join(dir, 'prog.new');
    const bravo = build(dir, 'bravo_fn', next);
    renameSync(next, program);
    assert.equal(readElf(program).buildId(), oldBuildId, 'the rebuild keeps the build-id: a key of the build-id alone would name it alpha_fn');
    assert.deepEqual(nameInNewProcess(cacheHome, program, bravo), { name: 'bravo_fn', fromCache: false });
    assert.deepEqual(nameInNewProcess(cacheHome, program, bravo), { name: 'bravo_fn', fromCache: true });
    // Touched in place (same inode, new mtime): read again too.
    const later = new Date(Date.now() + 5000);
    execFileSync('touch', ['-d', later.toISOString(), program]);
    assert.deepEqual(nameInNewProcess(cacheHome, program, bravo), { name: 'bravo_fn', fromCache: false });
  });

  it('a truncated or damaged cache file is ignored and rewritten', () => {
    const program = path.join(dir, 'prog');
    const alpha = build(dir, 'alpha_fn', program);
    nameInNewProcess(cacheHome, program, alpha);
    const [entry] = cacheFiles(cacheHome, '.fidx');
    const whole = readFileSync(entry);

    truncateSync(entry, Math.floor(whole.length / 2));
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: false }, 'truncated');
    assert.deepEqual(readFileSync(entry), whole, 'rewritten whole');

    // One byte of where the names lie changed (the program's path in the string tables' section, after the key's;
    // the length, version and key still agree): the checksum refuses it.
    const damaged = Buffer.from(whole);
    const at = damaged.lastIndexOf(Buffer.from(`"path":${JSON.stringify(program)}`));
    assert.ok(at > 0, 'the string tables are placed in the program');
    damaged[at + '"path":"'.length] = 'o'.charCodeAt(0);
    writeFileSync(entry, damaged);
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: false }, 'damaged');
    assert.deepEqual(readFileSync(entry), whole, 'rewritten whole');

    // Garbage of the right length.
    writeFileSync(entry, Buffer.alloc(whole.length, 0x5a));
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: false }, 'garbage');
    assert.deepEqual(nameInNewProcess(cacheHome, program, alpha), { name: 'alpha_fn', fromCache: true });
  });

  it('past its bound, the least recently used entries are removed first, and only entries', () => {
    const cache = path.join(cacheHome, 'ringside');
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    const entry = (n: number, extension: string) => path.join(cache, `${String(n).repeat(40).slice(0, 40)}${extension}`);
    const files = [entry(1, '.fidx'), entry(2, '.ksym'), entry(3, '.fidx'), entry(4, '.fidx')];
    files.forEach((file, i) => {
      writeFileSync(file, Buffer.alloc(1000));
      // Used in order: the first longest ago.
      utimesSync(file, new Date(Date.UTC(2020, 0, 1 + i)), new Date(Date.UTC(2020, 0, 1 + i)));
    });
    const stranger = path.join(cache, 'notes.txt');
    writeFileSync(stranger, Buffer.alloc(5000));
    utimesSync(stranger, new Date(0), new Date(0));
    evictOldest(cache, 2500);
    assert.deepEqual(readdirSync(cache).sort(), [path.basename(files[2]), path.basename(files[3]), 'notes.txt'].sort());
  });

  it('kallsyms is cached for this boot when its addresses are visible, and served only under this boot id', function () {
    const visible = /^0*[1-9a-f][0-9a-f]* /m.test(readFileSync('/proc/kallsyms', 'utf8').slice(0, 4096));
    if (!visible) this.skip(); // kptr_restrict hides addresses from this process: nothing may be cached (the nobody test covers that side)
    const script = `const { Kallsyms } = require(${JSON.stringify(kallsymsModule)});
const k = Kallsyms.read();
const hit = k.lookup(BigInt(process.argv[1]));
process.stdout.write(JSON.stringify({ name: hit && hit.symbol.name, count: k.symbols.length }));`;
    const first = readFileSync('/proc/kallsyms', 'utf8')
      .split('\n')
      .find((line) => / [Tt] /.test(line) && !/^0+ /.test(line))!;
    const address = `0x${first.split(' ')[0]}`;
    const run = () =>
      JSON.parse(execFileSync(process.execPath, ['-e', script, address], { encoding: 'utf8', env: { ...process.env, XDG_CACHE_HOME: cacheHome } })) as {
        name: string;
        count: number;
      };
    const cold = run();
    const [entry] = cacheFiles(cacheHome, '.ksym');
    assert.ok(entry, 'kallsyms was cached');
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    assert.ok(readFileSync(entry).includes(Buffer.from(bootId)), 'the entry carries the boot id it was read in');
    const written = statSync(entry).mtimeMs;
    assert.deepEqual(run(), cold);
    assert.ok(statSync(entry).mtimeMs >= written, 'used: its time moved forward (least recently used goes first)');

    // The same entry claiming another boot (its boot id replaced in the key): never served, replaced by this boot's.
    const other = readFileSync(entry);
    const at = other.indexOf(Buffer.from(bootId));
    other.write(
      bootId.replace(/[0-9a-f]$/, (c) => (c === '0' ? '1' : '0')),
      at,
      'latin1',
    );
    writeFileSync(entry, other);
    assert.deepEqual(run(), cold);
    assert.ok(readFileSync(entry).includes(Buffer.from(bootId)), 'rewritten for this boot');
  });
});
