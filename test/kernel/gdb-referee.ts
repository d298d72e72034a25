// gdb as the referee of logpoint values: the fixture test/fixtures/logpoint_values.c run under Debian's gdb
// in batch mode with a breakpoint on a marked line whose commands print `info args` and `info locals` and
// continue (test/kernel/logpoint-gdb.test.ts as root, test/unprivileged/logpoint-perfmon.test.ts as uid 65534).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers';

export const SOURCE = path.join(ROOT, 'test/fixtures/logpoint_values.c');
export const ROUNDS = '12';

export function markedLine(mark: string): number {
  const index = readFileSync(SOURCE, 'utf8')
    .split('\n')
    .findIndex((text) => text.includes(`// ${mark}`));
  assert.ok(index >= 0, `${mark} is marked in ${SOURCE}`);
  return index + 1;
}

export interface GdbRun {
  /** The breakpoint's addresses as gdb placed it (link-time, from "Breakpoint 1 at 0x..."). */
  readonly addresses: readonly bigint[];
  /** Per stop: name -> value, the first (innermost) of each name, as `print NAME` would show it. */
  readonly hits: readonly Map<string, string>[];
  /** Per stop: the names gdb says are below the stack pointer (asked only for `belowSp`). */
  readonly belowSp: readonly Set<string>[];
}

export function runGdb(dir: string, binary: string, line: number, belowSp: readonly string[]): GdbRun {
  const script = path.join(dir, 'stops.gdb');
  const checks = belowSp.map((name) => `printf "below-sp ${name} %d\\n", (unsigned long)&${name} < (unsigned long)$sp`);
  writeFileSync(
    script,
    [
      'set pagination off',
      'set confirm off',
      'set width 0',
      'set height 0',
      `break logpoint_values.c:${line}`,
      'commands',
      'silent',
      'echo <<<HIT\\n',
      'info args',
      'info locals',
      ...checks,
      'echo >>>\\n',
      'continue',
      'end',
      `run ${ROUNDS}`,
    ].join('\n') + '\n',
  );
  const output = execFileSync('gdb', ['-batch', '-nx', '-x', script, binary], { encoding: 'utf8', env: { ...process.env, LANG: 'C', LC_ALL: 'C' } });
  const placed = /^Breakpoint 1 at (0x[0-9a-f]+)/m.exec(output);
  const multiple = /^Breakpoint 1 at .*\((\d+) locations\)/m.exec(output);
  assert.ok(placed || multiple, `gdb placed the breakpoint:\n${output}`);
  const addresses = placed ? [BigInt(placed[1])] : [];
  const hits: Map<string, string>[] = [];
  const below: Set<string>[] = [];
  for (const block of output.split('<<<HIT\n').slice(1)) {
    const body = block.slice(0, block.indexOf('>>>'));
    const values = new Map<string, string>();
    const under = new Set<string>();
    for (const text of body.split('\n')) {
      const check = /^below-sp (\w+) (\d)$/.exec(text);
      if (check) {
        if (check[2] === '1') under.add(check[1]);
        continue;
      }
      const at = text.indexOf(' = ');
      if (at < 0) continue; // "No locals.", "No arguments."
      const name = text.slice(0, at);
      if (!values.has(name)) values.set(name, text.slice(at + 3));
    }
    hits.push(values);
    below.push(under);
  }
  return { addresses, hits, belowSp: below };
}
