// Log Values at This Line, as a user does it in code-server: right-click the line number of the demo's round-done line
// (in main, after each round) → "Log Values at This Line" → launch the demo for a few rounds → Capture Snapshot once it
// has run them. Each hit records the user registers and 8 KiB of stack, and the line shows inline its hit count and
// each variable's last value and number of distinct values; its hover every distinct value with its count. gdb, on the
// same binary with a breakpoint on the same line, is the referee: as many stops, and for every variable whose value
// does not depend on the process's environment (argv and thread ids are addresses that do), the same last value and the
// same distinct values in the same order.
// (The counter-increment line is in a leaf function: at -O0 its `i` lives in the red zone below the stack pointer, which
// the kernel's stack copy does not hold, so a logpoint there says <not captured>, as README's Logpoints section says.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  armDemoLineFromGutter,
  E2E_TIMEOUT_MS,
  hoverOnDemoLine,
  ringsideErrors,
  scenarioLifecycle,
  snapshotAfterDemoExits,
  waitForTextOnDemoLine,
} from './harness';
import { describeVariable } from '../../native/decode/logpoint-tally';

const ROUNDS = 3;
const MARK = 'ringside-demo: round-done';
/** main's variables at the line whose values are the same in every run of `demo 3`. */
const COMPARED = ['argc', 'round', 'rounds', 'started', 'workers'];

/** Per stop of gdb at `line` over a run of `program ROUNDS`: name -> value, as `info args` and `info locals` print them. */
function gdbStops(program: string, line: number): Map<string, string>[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-e2e-gdb-'));
  let output: string;
  try {
    const script = path.join(dir, 'stops.gdb');
    writeFileSync(
      script,
      [
        'set pagination off',
        'set width 0',
        `break demo.c:${line}`,
        'commands',
        'silent',
        'echo <<<HIT\\n',
        'info args',
        'info locals',
        'echo >>>\\n',
        'continue',
        'end',
        `run ${ROUNDS}`,
      ].join('\n') + '\n',
      { mode: 0o600 },
    );
    output = execFileSync('gdb', ['-batch', '-nx', '-x', script, program], {
      encoding: 'utf8',
      env: { ...process.env, LANG: 'C', LC_ALL: 'C' },
      timeout: E2E_TIMEOUT_MS,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return output
    .split('<<<HIT\n')
    .slice(1)
    .map((block) => {
      const values = new Map<string, string>();
      for (const text of block.slice(0, block.indexOf('>>>')).split('\n')) {
        const at = text.indexOf(' = ');
        if (at > 0 && !values.has(text.slice(0, at))) values.set(text.slice(0, at), text.slice(at + 3));
      }
      return values;
    });
}

describe('e2e: Log Values at This Line shows the hits and the values of the line inline', function () {
  this.timeout(5 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it("gutter → Log Values at This Line → launch → snapshot: the line's hits, last and distinct values equal gdb's", async () => {
    const scenario = await lifecycle.open('logpoint-values', { launchArgs: [String(ROUNDS)] });
    const { page, workspace } = scenario;
    const line =
      readFileSync(workspace.source, 'utf8')
        .split('\n')
        .findIndex((text) => text.includes(MARK)) + 1;
    assert.ok(line > 0, `demo.c marks a line with "${MARK}"`);
    const commandLine = await armDemoLineFromGutter(page, line, 'Log Values at This Line');
    assert.equal(commandLine, `${workspace.program} ${ROUNDS}`);
    await scenario.screenshot('armed');
    await snapshotAfterDemoExits(page, workspace.program);
    await scenario.screenshot('timeline');
    assert.deepEqual(await ringsideErrors(page), []);
    const painted = await waitForTextOnDemoLine(page, line, 'hits ·');
    await scenario.screenshot('editor-values');

    const stops = gdbStops(workspace.program, line);
    assert.equal(stops.length, ROUNDS, 'gdb stops at the line once per round');
    // What gdb saw, as the editor sums it up: the last value, then each distinct value with its count.
    const expected = COMPARED.map((name) => {
      const values = stops.map((stop) => stop.get(name));
      assert.ok(
        values.every((value) => value !== undefined),
        `gdb prints ${name} at every stop: ${JSON.stringify(values)}`,
      );
      const distinct = new Map<string, number>();
      for (const value of values as string[]) distinct.set(value, (distinct.get(value) ?? 0) + 1);
      return { name, last: values[values.length - 1]!, distinct };
    });
    assert.equal(expected.find((v) => v.name === 'round')?.last, String(ROUNDS - 1), 'the last round gdb saw is the last one');

    // Inline: the hit count, then each variable's last value and (where it changed) how many values it took, cut to
    // 160 characters; `round` comes right after main's parameters.
    const shown = painted.filter((text) => text.startsWith('log: '));
    assert.equal(shown.length, 1, painted.join(' | '));
    assert.ok(shown[0].startsWith(`log: ${stops.length} hits · argc = ${expected[0].last} · argv = 0x`), shown[0]);
    assert.ok(shown[0].includes(` · round = ${ROUNDS - 1} (${ROUNDS} distinct) · rounds = ${ROUNDS} · `), shown[0]);

    // The hover has every variable: the compared ones exactly as gdb's stops sum up.
    const hoverText = await hoverOnDemoLine(page, MARK, 'demo_rounds', 'hits in the last snapshot');
    await scenario.screenshot('editor-hover');
    assert.ok(hoverText.includes(`log:demo.c:${line}: ${stops.length} hits in the last snapshot`), hoverText);
    for (const { name, last, distinct } of expected)
      assert.ok(
        hoverText.includes(describeVariable(name, { last, distinctCount: distinct.size, distinct: (limit) => [...distinct].slice(0, limit) })),
        `${name}: ${hoverText}`,
      );
  });
});
