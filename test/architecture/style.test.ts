// The repository's style (scripts/style.mjs, the same rules .editorconfig gives editors): every tracked source
// file passes the check, and the fixer breaks a long line without changing a token of the program.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const script = path.join(root, 'scripts/style.mjs');

function style(args: readonly string[]): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: 'utf8' });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describe('style', () => {
  it('every tracked source file passes scripts/style.mjs', function () {
    this.timeout(60_000);
    const { status, out } = style([]);
    assert.equal(status, 0, `node scripts/style.mjs --fix fixes most of these:\n${out}`);
  });

  describe('on a file written to break every rule', () => {
    let dir = '';
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'ringside-style-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('names each problem: length, trailing space, tab, any, file name, final newline', () => {
      const file = path.join(dir, 'badName.ts');
      const long = `export const values = [${Array.from({ length: 40 }, (_, i) => `'item${i}'`).join(', ')}];`;
      writeFileSync(file, `${long}\nexport let loose: any = 1; \n\texport const tabbed = 2;`);
      const { status, out } = style([file]);
      assert.equal(status, 1);
      assert.match(out, /badName\.ts:1: \d+ characters \(at most 160\)/);
      assert.match(out, /badName\.ts:2: trailing whitespace/);
      assert.match(out, /badName\.ts:2: `any`/);
      assert.match(out, /badName\.ts:3: indented with a tab/);
      assert.match(out, /badName\.ts:3: no newline at the end of the file/);
      assert.match(out, /badName\.ts:1: file name is not kebab-case/);
    });

    it('--fix breaks long lines at their outermost list and keeps every token', () => {
      const file = path.join(dir, 'long-lines.ts');
      const items = Array.from({ length: 30 }, (_, i) => `'item${i}'`).join(', ');
      const original = [
        `export function pick(first: string, second: number, third: boolean, fourth: readonly string[], fifth: Map<string, number>): string {`,
        `  return first.length > 0 && second > 0 && third && fourth.length > 0 && fifth.size > 0 ? [${items}].join(',') : 'none';`,
        `}`,
        '',
      ].join('\n');
      writeFileSync(file, original);
      const { status, out } = style(['--fix', file]);
      assert.equal(status, 0, out);
      const fixed = readFileSync(file, 'utf8');
      assert.ok(fixed.split('\n').every((line) => line.length <= 160), fixed);
      assert.ok(fixed.split('\n').length > original.split('\n').length, 'the long lines were broken');
      const squash = (text: string) => text.replace(/\s+/g, '').replace(/,([)\]}])/g, '$1');
      assert.equal(squash(fixed), squash(original));
    });
  });
});
