// The layering rules (README, How it works), checked on every import of every source file, so a shortcut
// that breaks them fails the build instead of waiting for a reviewer:
// - only native/sys/libc.ts imports koffi;
// - nothing outside extension/ imports vscode, and extension/session (the logic tested in node)
//   imports only types from it;
// - native/decode is pure (no node:, koffi or vscode): it also runs in the browser;
// - the webview imports neither koffi, vscode nor node built-ins;
// - @vscode/webview-ui-toolkit (deprecated upstream) is imported by exactly one module;
// - native/ never imports extension/, and native/perf never imports native/keeper.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) out.push(rel);
  }
  return out;
}

interface Import { file: string; specifier: string; typeOnly: boolean }

function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const found: Import[] = [];
  const patterns = [
    /^\s*import\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm,
    /^\s*import\s+['"]([^'"]+)['"]/gm,
    /^\s*export\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const [index, pattern] of patterns.entries()) {
    for (const match of text.matchAll(pattern)) {
      const specifier = index === 0 || index === 2 ? match[2] : match[1];
      found.push({ file, specifier, typeOnly: (index === 0 || index === 2) && Boolean(match[1]) });
    }
  }
  return found;
}

const all = ['native', 'extension', 'webview', 'test', 'bench'].flatMap((dir) => {
  try { return sources(dir); } catch { return []; }
}).flatMap(importsOf);
const product = all.filter((i) => !/\.test\.ts$/.test(i.file) && !i.file.startsWith('test/') && !i.file.startsWith('bench/'));
const isNodeBuiltin = (s: string) => s.startsWith('node:') || ['fs', 'path', 'os', 'child_process', 'crypto', 'zlib', 'worker_threads', 'http', 'net', 'util', 'events', 'module'].includes(s);

describe('architecture: who may import what', () => {
  it('sees the source tree', () => {
    assert.ok(product.length > 100, `${product.length} imports found`);
  });

  it('only native/sys/libc.ts imports koffi', () => {
    const offenders = all.filter((i) => i.specifier === 'koffi' && i.file !== 'native/sys/libc.ts');
    assert.deepEqual(offenders.map((i) => i.file), []);
  });

  it('only extension/ imports vscode, and extension/session only its types', () => {
    const outside = product.filter((i) => i.specifier === 'vscode' && !i.file.startsWith('extension/'));
    assert.deepEqual(outside.map((i) => i.file), []);
    const sessionValues = product.filter((i) => i.specifier === 'vscode' && i.file.startsWith('extension/session/') && !i.typeOnly);
    assert.deepEqual(sessionValues.map((i) => i.file), []);
  });

  it('native/decode is pure: no node built-ins, koffi or vscode', () => {
    const offenders = product.filter((i) => i.file.startsWith('native/decode/') && (isNodeBuiltin(i.specifier) || i.specifier === 'koffi' || i.specifier === 'vscode'));
    assert.deepEqual(offenders.map((i) => `${i.file} -> ${i.specifier}`), []);
  });

  it('the webview imports no koffi, vscode or node built-ins, directly or through native/', () => {
    const offenders = product.filter((i) => i.file.startsWith('webview/') && (isNodeBuiltin(i.specifier) || i.specifier === 'koffi' || i.specifier === 'vscode'));
    assert.deepEqual(offenders.map((i) => `${i.file} -> ${i.specifier}`), []);
    // What the webview reaches into native/ must be the pure parts only.
    const reach = product.filter((i) => i.file.startsWith('webview/') && i.specifier.includes('native/') && !i.typeOnly);
    for (const i of reach) assert.match(i.specifier, /native\/(decode|perf\/(uapi|attr))\b/, `${i.file} imports ${i.specifier}`);
  });

  it('@vscode/webview-ui-toolkit is imported by exactly one module, so it can be swapped', () => {
    const users = new Set(all.filter((i) => i.specifier.startsWith('@vscode/webview-ui-toolkit') && !i.file.endsWith('.test.ts')).map((i) => i.file));
    assert.equal(users.size, 1, [...users].join(', '));
  });

  it('native/ never imports extension/, and native/perf never imports native/keeper (arrows point down)', () => {
    const resolved = (i: Import) => path.normalize(path.join(path.dirname(i.file), i.specifier));
    const upward = product.filter((i) => i.specifier.startsWith('.') && i.file.startsWith('native/') && resolved(i).startsWith('extension'));
    assert.deepEqual(upward.map((i) => `${i.file} -> ${i.specifier}`), []);
    const perfToKeeper = product.filter((i) => i.specifier.startsWith('.') && i.file.startsWith('native/perf/') && resolved(i).startsWith('native/keeper'));
    assert.deepEqual(perfToKeeper.map((i) => `${i.file} -> ${i.specifier}`), []);
  });
});
