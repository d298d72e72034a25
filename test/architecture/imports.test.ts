// Who may import what, as one allow-list per folder (each folder's README says the same in words). Every import of
// every source file is checked against the rule of the folder it lives in, so a shortcut that breaks the layering
// fails the build instead of waiting for a reviewer.
//
// A rule's key is a folder or a single file; a file follows the longest key that contains it. Test code (`*.test.ts`
// anywhere, and `test/`) follows the `test` rule, benchmarks the `bench` rule. An entry is a folder or file of this
// repository (importing anything inside it), a package name, or `node` for Node's built-ins; `type:` before an entry
// allows type-only imports of it (erased by tsc, so nothing of it runs). Imports inside a file's own rule folder are
// always allowed. An app (APPS) is imported by nothing outside itself, whatever a rule allows of the folder it sits in.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

const RULES: Readonly<Record<string, readonly string[]>> = {
  // The kernel side, bottom to top. native/abi is the ground floor: the kernel's ABI and the
  // snapshot shapes perf produces and decode reads; it imports nothing.
  'native/abi': [],
  // native/sys reads what the kernel writes (/proc's formats), whose marks are the ABI's facts.
  'native/sys': ['node', 'native/abi'],
  'native/sys/libc.ts': ['node', 'koffi'],
  'native/decode': ['native/abi'],
  'native/perf': ['node', 'native/sys', 'native/abi'],
  'native/symbols': ['node', 'native/sys', 'native/abi'],
  'native/specs': ['node', 'native/sys', 'native/abi', 'native/perf', 'native/decode', 'native/symbols'],
  'native/perfdata': ['node', 'native/sys', 'native/abi', 'native/perf', 'native/decode', 'native/specs', 'native/symbols'],
  'native/decode-pool': ['node', 'native/abi', 'native/decode'],
  // Stack, frame and function tables built from the decoded columns, and the outputs built from them; pure.
  'native/tables': ['native/abi', 'native/decode', 'pprof-format'],
  'native/keeper': ['node', 'native/sys', 'native/abi', 'native/perf', 'native/decode'],
  'native/attach': ['node', 'native/sys', 'native/abi', 'native/perf', 'native/perfdata', 'native/specs', 'native/decode'],
  // The `ringside` command: an app beside the extension, on top of the core and the page's host side (APPS).
  'native/cli': ['node', 'native', 'host'],
  // The timeline page and its two hosts.
  shared: ['type:native/decode/types', 'native/decode/column-schema', 'native/abi/uapi', 'native/abi/object-names', 'native/tables/symbol-name'],
  // The page goes to disk through the one safe writer (0600, temp file + rename), as every output does.
  host: ['node', 'shared', 'native/decode', 'native/tables', 'native/abi', 'native/sys/safe-file.ts'],
  // The symbol cache of one capture, which the CLI and the extension's sessions both keep: it learns from the
  // side-band and names addresses through the symbolizer, so it alone on the host side reaches the system code.
  'host/snapshot-symbols.ts': [
    'native/abi',
    'native/decode',
    'native/tables',
    'native/symbols',
    'native/specs',
    'native/sys/process-memory.ts',
    'type:native/perf/sideband-types',
    'type:native/perfdata',
  ],
  // The ring's units (byte counts as people read them) and the table that numbers names (which the logpoint columns
  // below use too) have one home below both hosts and the page.
  webview: ['shared', 'd3', 'native/abi/units.ts', 'native/abi/string-table.ts'],
  'webview/toolkit.ts': ['@vscode/webview-ui-toolkit'],
  // The VS Code extension; its session logic is tested in plain Node, so it sees vscode's types only.
  extension: ['node', 'vscode', 'native', 'shared', 'host'],
  'extension/session': ['node', 'type:vscode', 'native', 'shared', 'host'],
  // Tests and benchmarks reach everything but the native boundary and the editor's runtime.
  test: ['node', 'native', 'shared', 'host', 'webview', 'extension', 'test', 'bench', 'playwright-core', 'esbuild', 'eslint', 'pprof-format'],
  // The panel's live follow and its snapshot streamer (the transport case's host side) are measured on their session
  // logic and host loop, which never load the editor's runtime.
  bench: [
    'node',
    'native',
    'shared',
    'host',
    'webview',
    'bench',
    'playwright-core',
    'esbuild',
    'extension/session',
    'extension/panel/live-follow.ts',
    'extension/panel/streamer.ts',
  ],
};

/** The runtime-neutral core, run by Node and the browser alike (tsconfig.neutral.json builds exactly these). */
const NEUTRAL = ['shared', 'native/abi', 'native/decode', 'native/tables'];

/** Apps: the top of the arrows. Each imports what its rule allows; nothing outside it imports it (tests included). */
const APPS = ['native/cli'];

/** Top-level folders that hold no source of ours. */
const NOT_SOURCE = new Set(['node_modules', 'out', 'dist', 'fixtures-bin', 'test-artifacts', 'scripts', 'docs']);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = path.posix.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) out.push(rel);
  }
  return out;
}

interface Import {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

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

const topLevel = readdirSync(root).filter((name) => !name.startsWith('.') && !NOT_SOURCE.has(name) && statSync(path.join(root, name)).isDirectory());
const files = topLevel.flatMap(sources);
const all = files.flatMap(importsOf);

const contains = (key: string, target: string) => target === key || target === key.replace(/\.ts$/, '') || target.startsWith(`${key}/`);

/** The rule a file follows: test code → test, benchmarks → bench, else the longest key containing the file. */
function ruleOf(file: string): string | undefined {
  if (/\.test\.ts$/.test(file) || file.startsWith('test/')) return 'test';
  if (file.startsWith('bench/')) return 'bench';
  return Object.keys(RULES)
    .filter((key) => contains(key, file))
    .sort((a, b) => b.length - a.length)[0];
}

/** What an import names: a repository path without extension, a package name, or `node`. */
function targetOf(i: Import): string {
  if (i.specifier.startsWith('.')) return path.posix.normalize(path.posix.join(path.posix.dirname(i.file), i.specifier));
  if (i.specifier.startsWith('node:') || builtinModules.includes(i.specifier)) return 'node';
  const parts = i.specifier.split('/');
  return i.specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The app an import reaches into from outside it, if any. */
const appEnteredBy = (i: Import) => APPS.find((app) => contains(app, targetOf(i)) && !contains(app, i.file));

function allowed(i: Import): boolean {
  const rule = ruleOf(i.file);
  if (rule === undefined) return false;
  const target = targetOf(i);
  if (appEnteredBy(i) !== undefined) return false;
  const ownFolder = rule.endsWith('.ts') ? path.posix.dirname(rule) : rule;
  if (contains(ownFolder, target)) return true;
  return RULES[rule].some((entry) => {
    const typeOnly = entry.startsWith('type:');
    const name = typeOnly ? entry.slice('type:'.length) : entry;
    return contains(name, target) && (!typeOnly || i.typeOnly);
  });
}

const importers = (pkg: string) => new Set(all.filter((i) => targetOf(i) === pkg).map((i) => i.file));
const rulesAllowing = (entry: string) => Object.keys(RULES).filter((key) => RULES[key].includes(entry));

describe('architecture: who may import what', () => {
  it('sees the source tree', () => {
    assert.ok(all.filter((i) => ruleOf(i.file) !== 'test' && ruleOf(i.file) !== 'bench').length > 100, `${all.length} imports found`);
  });

  it('every source file falls under a rule', () => {
    assert.deepEqual(
      files.filter((file) => ruleOf(file) === undefined),
      [],
    );
  });

  for (const rule of Object.keys(RULES)) {
    it(`${rule} imports only ${RULES[rule].join(', ') || 'nothing outside itself'}`, () => {
      const offenders = all.filter((i) => ruleOf(i.file) === rule && !allowed(i));
      assert.deepEqual(
        offenders.map((i) => `${i.file} -> ${i.specifier}${i.typeOnly ? ' (type)' : ''}`),
        [],
      );
    });
  }

  // What the list above must keep saying, checked on the list itself so that widening a rule is a visible decision.
  it('nothing imports the CLI app (native/cli) from outside it, and no rule of the core names it', () => {
    assert.deepEqual(
      all.filter((i) => appEnteredBy(i) !== undefined).map((i) => `${i.file} -> ${i.specifier}`),
      [],
    );
    // The core folders below the app may not even be allowed to: none lists native/cli, or the whole of native/.
    const core = Object.keys(RULES).filter((key) => key.startsWith('native/') && !APPS.some((app) => contains(app, key)));
    assert.deepEqual(
      core.filter((key) => RULES[key].some((entry) => APPS.some((app) => contains(entry.replace(/^type:/, ''), app)))),
      [],
    );
  });

  it('only native/sys/libc.ts may import koffi', () => {
    assert.deepEqual(rulesAllowing('koffi'), ['native/sys/libc.ts']);
  });

  it('only extension/ may import vscode, and extension/session only its types', () => {
    assert.deepEqual(rulesAllowing('vscode'), ['extension']);
    assert.deepEqual(rulesAllowing('type:vscode'), ['extension/session']);
  });

  it('the runtime-neutral core and the webview are pure: they reach only pure modules and browser packages', () => {
    const pure = [...NEUTRAL, 'd3', '@vscode/webview-ui-toolkit', 'pprof-format'];
    for (const key of [...NEUTRAL, 'webview', 'webview/toolkit.ts']) {
      const impure = RULES[key].filter((entry) => !pure.some((p) => contains(p, entry.replace(/^type:/, ''))));
      assert.deepEqual(impure, [], `${key} may import ${impure.join(', ')}`);
    }
  });

  it('tsconfig.neutral.json builds the runtime-neutral core, and tsconfig.node.json leaves it to it', () => {
    const config = (name: string) =>
      JSON.parse(readFileSync(path.join(root, name), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[]; exclude?: string[] };
    const folders = (globs: readonly string[]) => globs.flatMap((glob) => /^(.+)\/\*\*(?:\/\*\.ts)?$/.exec(glob)?.[1] ?? []).sort();
    assert.deepEqual(folders(config('tsconfig.neutral.json').include), [...NEUTRAL].sort());
    // Node's program takes native/** but not the neutral folders in it, so their code never sees Node's types.
    const node = config('tsconfig.node.json');
    assert.deepEqual(folders(node.exclude ?? []), NEUTRAL.filter((folder) => folder.startsWith('native/')).sort());
    assert.ok(!node.include.some((glob) => glob.startsWith('shared/')));
  });

  it('@vscode/webview-ui-toolkit (deprecated upstream) is imported by exactly one module, so it can be swapped', () => {
    assert.deepEqual(rulesAllowing('@vscode/webview-ui-toolkit'), ['webview/toolkit.ts']);
    assert.deepEqual([...importers('@vscode/webview-ui-toolkit')], ['webview/toolkit.ts']);
  });
});

// ---- import cycles -------------------------------------------------------------------------------------------

/** The repository file an import of ours names (`x` → x.ts or x/index.ts), or undefined for a package. */
function fileOf(i: Import): string | undefined {
  if (!i.specifier.startsWith('.')) return undefined;
  const target = targetOf(i);
  return [`${target}.ts`, `${target}/index.ts`, target].find((candidate) => fileSet.has(candidate));
}

const fileSet = new Set(files);

/** Who imports whom among our own files (type-only imports too: a cycle of types is still one of meaning). */
const edges = new Map<string, Set<string>>(files.map((file) => [file, new Set<string>()]));
for (const i of all) {
  const to = fileOf(i);
  if (to !== undefined && to !== i.file) edges.get(i.file)!.add(to);
}

/** The strongly connected components with more than one file (Tarjan): every import cycle lies inside one. */
function cyclicComponents(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file)!) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const file of [...edges.keys()].sort()) if (!index.has(file)) visit(file);
  return components;
}

describe('architecture: no import cycles', () => {
  const components = cyclicComponents(edges);
  const onCycles = components.flatMap((component) => {
    const members = new Set(component);
    return component.flatMap((file) => [...edges.get(file)!].filter((to) => members.has(to)).map((to) => `${file} -> ${to}`));
  });

  it('sees the imports between our files', () => {
    assert.ok([...edges.values()].reduce((sum, targets) => sum + targets.size, 0) > 300);
  });

  it('finds a cycle however long, and only the files on it', () => {
    const graph = (pairs: string[]) => {
      const out = new Map<string, Set<string>>();
      for (const pair of pairs) {
        const [from, to] = pair.split('>');
        out.set(from, (out.get(from) ?? new Set()).add(to));
        if (!out.has(to)) out.set(to, new Set());
      }
      return out;
    };
    assert.deepEqual(cyclicComponents(graph(['a>b', 'b>c', 'c>d', 'd>b', 'a>e'])), [['b', 'c', 'd']]);
    assert.deepEqual(cyclicComponents(graph(['a>b', 'b>c', 'a>c'])), []);
  });

  it('no import lies on a cycle', () => {
    assert.deepEqual(onCycles, [], `import cycles, among: ${components.map((c) => c.join(', ')).join(' | ')}`);
  });
});
