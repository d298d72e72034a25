// The object cache across snapshots: an executable rebuilt (replaced on disk) between two snapshots of one capture
// is named by its new symbols in the second, while an unchanged one is parsed once for the life of the process. The
// rebuild keeps its build-id (GNU ld's hash does not cover .symtab), which is why the cache is keyed by the file.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DecodedSnapshot } from '../../native/decode';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import { openObjectFile } from '../../native/symbols/object-file';
import { synthesizeSideband } from '../../native/perf/procfs';
import type { ProcessSideband } from '../../native/perf/sideband-types';

/** A snapshot with no records: what learn() reads of one when the /proc state carries the mappings. */
const NO_RECORDS = { events: [], rings: [], coverage: [], anomalies: [], columns: { length: 0, kind: new Uint8Array(0) } } as unknown as DecodedSnapshot;

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

describe('symbol cache: objects read once, and again when they change on disk', function () {
  this.timeout(60_000);
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-symcache-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a binary replaced between two snapshots is named by its new symbols, though its build-id is the same; an unchanged one is parsed once', () => {
    const program = path.join(dir, 'prog');
    const alpha = build(dir, 'alpha_fn', program);
    // Mapped as the loader maps a non-PIE executable: file offset 0 at 0x400000.
    const procState: ProcessSideband[] = [
      {
        pid: 4242,
        tid: 4242,
        comm: 'prog',
        maps: [{ start: 0x400000n, end: 0x500000n, pgoff: 0n, path: program, perms: 'r-xp' }],
      },
    ] as unknown as ProcessSideband[];
    const symbols = new SnapshotSymbols();
    symbols.learn(NO_RECORDS, procState);
    assert.equal(symbols.resolveFrame(4242, alpha, false).symbol, 'alpha_fn+0x0');
    assert.equal(symbols.resolveFrame(4242, alpha, false).dso, program);
    const first = openObjectFile(program);
    assert.equal(openObjectFile(program), first, 'an unchanged file is parsed once');
    const oldBuildId = first.buildId;
    assert.ok(oldBuildId, 'gcc gave the program a build-id');

    // Rebuilt in place (a new file renamed over the old, as compilers and package managers replace binaries).
    const next = path.join(dir, 'prog.new');
    const bravo = build(dir, 'bravo_fn', next);
    renameSync(next, program);
    symbols.learn(NO_RECORDS, procState); // the next snapshot of the same capture
    assert.equal(symbols.resolveFrame(4242, bravo, false).symbol, 'bravo_fn+0x0');
    assert.notEqual(openObjectFile(program), first, 'the replaced file is read again');
    assert.equal(openObjectFile(program).buildId, oldBuildId, 'the rebuild has the same build-id: a cache by build-id alone would keep alpha_fn');
    assert.doesNotMatch(symbols.resolveFrame(4242, alpha, false).symbol ?? '', /alpha_fn/, 'no name of the old build is left');
  });

  it("a recording's warm-up reads the function table of every object its target maps, before any snapshot", async () => {
    // This process as the target: its real mappings (node, libc, ...), as the recorder reads them from /proc.
    const [self] = synthesizeSideband([process.pid]);
    const objects = [...new Set(self.maps.map((map) => map.path).filter((file) => file.startsWith('/')))];
    assert.ok(objects.length >= 2, `node maps its executable and libc: ${objects.join(', ')}`);
    const symbols = new SnapshotSymbols();
    await symbols.prewarm([self]);
    for (const file of objects) {
      let object;
      try {
        object = openObjectFile(file);
      } catch (error) {
        void error; // not an ELF file this process can read (a deleted or special mapping): nothing to warm
        continue;
      }
      assert.ok(object.functionsRead, `${file}: function table read ahead`);
    }
    // Cancelled before its first step, it reads nothing.
    const program = path.join(dir, 'cold');
    build(dir, 'cold_fn', program);
    const cold: ProcessSideband[] = [
      { ...self, pid: 4343, tid: 4343, maps: [{ start: 0x400000n, end: 0x500000n, pgoff: 0n, path: program, perms: 'r-xp' }] },
    ] as unknown as ProcessSideband[];
    await new SnapshotSymbols().prewarm(cold, () => true);
    assert.equal(openObjectFile(program).functionsRead, false, 'a cancelled warm-up stops');
  });
});
