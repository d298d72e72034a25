// File names: kebab-case for TypeScript, JavaScript, CSS and HTML, so a module's name reads the same in an import,
// a path and a stack trace (C fixtures keep C's snake_case: the name of the program each one builds). The rest of
// the old hand-written style check is the standard tools' now: Prettier lays out the code (npm run format:check),
// ESLint checks it (npm run lint), .editorconfig tells editors the same.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const NAMED = /\.(ts|mts|cts|mjs|cjs|js|css|html)$/;
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+)*$/;

export function misnamed(files: readonly string[]): string[] {
  return files.filter((file) => NAMED.test(file) && !KEBAB.test(path.posix.basename(file)));
}

describe('architecture: file names', () => {
  it('every tracked TypeScript, JavaScript, CSS and HTML file has a kebab-case name', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    assert.ok(tracked.filter((file) => NAMED.test(file)).length > 300, `${tracked.length} tracked files`);
    assert.deepEqual(misnamed(tracked), []);
  });

  it('names what breaks the rule, and passes C fixtures and dotted kebab names', () => {
    assert.deepEqual(misnamed(['webview/badName.ts', 'native/x_y.mjs', 'test/fixtures/sym_cpp.cc', 'a/ok-name.browser.test.ts', 'b/Timeline.css']), [
      'webview/badName.ts',
      'native/x_y.mjs',
      'b/Timeline.css',
    ]);
  });
});
