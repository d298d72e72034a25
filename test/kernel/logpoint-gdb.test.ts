// Logpoint values with gdb as the referee: the same deterministic program (test/fixtures/
// logpoint_values.c, built at -O0 and -O2) runs once under `ringside capture -e log:FILE:LINE` and
// once under Debian's gdb in batch mode with a breakpoint on the same line whose commands print
// `info args` and `info locals` and continue. Hit k of one is hit k of the other: the same number
// of hits at the same addresses, and every variable gdb prints has the value Ringside recorded,
// `<optimized out>` included. Locals in registers, on the stack and in location lists, a struct, a
// struct split into DW_OP_pieces, an array, an enum, C strings, a double and an inlined function's own
// locals are among them. Ringside reads them with its numeric machine (dwarf-expression-numeric.ts),
// falling back to the BigInt one where numbers are not exact: both are compared here.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fixture, ROOT } from './helpers';
import { markedLine, ROUNDS, runGdb } from './gdb-referee';

const CLI = path.join(ROOT, 'dist/cli.js');

interface RingsideHit {
  ip: bigint;
  values: Record<string, string>;
  function?: string;
  notCaptured?: Record<string, string>;
}

function runRingside(dir: string, binary: string, line: number, names?: readonly string[]): { hits: RingsideHit[]; stderr: string } {
  const output = path.join(dir, 'values.jsonl');
  const spec = `log:logpoint_values.c:${line}${names ? `:${names.join(',')}` : ''}`;
  const run = spawnSync(process.execPath, [CLI, 'capture', '-e', spec, '-o', output, '--', binary, ROUNDS], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const hits = readFileSync(output, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (text) =>
        JSON.parse(text) as {
          type: string;
          ip?: string;
          values?: Record<string, string>;
          function?: string;
          notCaptured?: Record<string, string>;
          time: number;
        },
    )
    .filter((record) => record.type === 'SAMPLE')
    .sort((a, b) => a.time - b.time)
    .map((record) => ({ ip: BigInt(record.ip!), values: record.values ?? {}, function: record.function, notCaptured: record.notCaptured }));
  return { hits, stderr: run.stderr };
}

/** Where the kernel loaded the PIE: Ringside and gdb both run it with ASLR off, at the base the kernel then picks. */
function loadBias(binary: string): bigint {
  const type = execFileSync('readelf', ['-h', binary], { encoding: 'utf8' });
  return /Type:\s+DYN/.test(type) ? 0x555555554000n : 0n;
}

describe("logpoints: values equal gdb's at the same line (-O0 and -O2)", function () {
  this.timeout(180_000);
  let dir: string;

  before(function () {
    assert.equal(process.getuid?.(), 0, 'uprobes need CAP_PERFMON; the refusal is tested as uid 65534 (test/unprivileged)');
    assert.ok(existsSync(CLI), 'dist/cli.js is built (npm run build)');
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-logpoint-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const cases = [
    { optimization: 'O0', mark: 'LOG-LOOP', belowSp: [] as string[] },
    { optimization: 'O2', mark: 'LOG-LOOP', belowSp: [] as string[] },
    // At -O0 mix() is a leaf function whose locals live in the red zone below the stack pointer, which the kernel's stack
    // copy (from the stack pointer up) does not hold: as root the uprobe, defined in tracefs, fetches the red zone at each
    // hit (tracefs-uprobes.ts), and exactly the locals gdb says are below $sp are read from it, with gdb's values.
    { optimization: 'O0', mark: 'LOG-INLINE', belowSp: ['a', 'b', 'product', 'folded'] },
    // At -O2 mix() is inlined into work(): its own locals, in registers and location lists.
    { optimization: 'O2', mark: 'LOG-INLINE', belowSp: [] as string[] },
  ];
  for (const { optimization, mark, belowSp } of cases) {
    it(`-${optimization}, ${mark}: the same hits at the same address, every variable gdb prints with gdb's value`, () => {
      const binary = fixture(`logpoint_values_${optimization}`);
      const line = markedLine(mark);
      const gdb = runGdb(dir, binary, line, belowSp);
      const ringside = runRingside(dir, binary, line);
      assert.ok(gdb.hits.length >= Number(ROUNDS), `gdb stopped at every round (${gdb.hits.length})`);
      assert.equal(ringside.hits.length, gdb.hits.length, `hits: Ringside ${ringside.hits.length}, gdb ${gdb.hits.length}\n${ringside.stderr}`);
      const bias = loadBias(binary);
      assert.deepEqual([...new Set(ringside.hits.map((hit) => hit.ip - bias))], gdb.addresses, 'the uprobe is where gdb breaks');
      let compared = 0;
      let inRedZone = 0;
      gdb.hits.forEach((expected, k) => {
        const got = ringside.hits[k].values;
        assert.ok(expected.size > 0, `gdb printed variables at hit ${k}`);
        for (const [name, value] of expected) {
          assert.equal(got[name], value, `hit ${k}: ${name} (gdb: ${value}; Ringside: ${got[name]}) in ${JSON.stringify(got)}`);
          if (gdb.belowSp[k].has(name)) inRedZone++;
          compared++;
        }
        assert.deepEqual(Object.keys(got).sort(), [...expected.keys()].sort(), `hit ${k}: the same variables in scope`);
      });
      assert.equal(inRedZone, belowSp.length * gdb.hits.length, 'every local gdb says is below the stack pointer was compared, at every hit');
      assert.ok(
        ringside.hits.every((hit) => hit.notCaptured === undefined),
        'no value is <not captured> for want of the red zone',
      );
      if (belowSp.length === 0) assert.ok(compared >= gdb.hits.length * 4, `compared ${compared} values`);
    });
  }

  for (const optimization of ['O0', 'O2']) {
    it(`-${optimization}, LOG-LOOP with names: the integers named equal gdb's, in the order asked`, () => {
      const binary = fixture(`logpoint_values_${optimization}`);
      const line = markedLine('LOG-LOOP');
      const names = ['i', 'slot', 'rounds', 'total'];
      const gdb = runGdb(dir, binary, line, []);
      const ringside = runRingside(dir, binary, line, names);
      assert.equal(ringside.hits.length, gdb.hits.length);
      gdb.hits.forEach((expected, k) => {
        assert.deepEqual(Object.keys(ringside.hits[k].values), names, `hit ${k}: the names asked, in order`);
        for (const name of names) assert.equal(ringside.hits[k].values[name], expected.get(name), `hit ${k}: ${name}`);
      });
    });
  }

  it('the -O2 build holds what the comparison is about: location lists, pieces, an inlined copy, a local dropped before the line', () => {
    const binary = fixture('logpoint_values_O2');
    const info = execFileSync('objdump', ['--dwarf=info', binary], { encoding: 'utf8' });
    assert.match(info, /DW_AT_location\s+: 0x[0-9a-f]+ \(location list\)/, 'locals in location lists');
    const lists = execFileSync('objdump', ['--dwarf=loc', binary], { encoding: 'utf8' });
    assert.match(lists, /DW_OP_stack_value; DW_OP_piece: 4/, 'span split into computed pieces');
    assert.match(info, /DW_TAG_inlined_subroutine/, 'mix() inlined');
    const gdb = runGdb(dir, binary, markedLine('LOG-LOOP'), []);
    assert.ok(
      gdb.hits.every((hit) => hit.get('before') === '<optimized out>'),
      'gdb says `before` is optimized out at the loop line (compared with Ringside above)',
    );
  });
});
