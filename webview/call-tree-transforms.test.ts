import * as assert from 'node:assert/strict';
import { transformLabel, transformStacks, type CallTreeTransform } from './call-tree-transforms';
import { childrenByTotal, callTreeOfWeights, type CallTree } from './call-tree';
import type { StackTable } from '../shared/stacks';

/** Stacks given leaf first as names, with each function's library. */
function table(stacks: string[][], libraryOf: Record<string, string> = {}): StackTable {
  const names: string[] = [];
  const index = (n: string) => {
    let i = names.indexOf(n);
    if (i < 0) {
      i = names.length;
      names.push(n);
    }
    return i;
  };
  const start = [0];
  const frames: number[] = [];
  for (const s of stacks) {
    frames.push(...s.map(index));
    start.push(frames.length);
  }
  const libraries = [...new Set(Object.values(libraryOf))];
  return {
    names,
    start: Uint32Array.from(start),
    frames: Int32Array.from(frames),
    libraries,
    nameLibrary: Int32Array.from(names, (n) => libraries.indexOf(libraryOf[n] ?? '')),
  };
}

/** The top-down tree as indented `name self/total` lines, children heaviest first. */
function render(tree: CallTree, names: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (node: number) => {
    for (const c of childrenByTotal(tree, node)) {
      out.push(`${'  '.repeat(tree.depth[c] - 1)}${names[tree.name[c]]} ${tree.self[c]}/${tree.total[c]}`);
      visit(c);
    }
  };
  visit(0);
  return out;
}

function treeAfter(t: StackTable, weight: number[], transforms: CallTreeTransform[]): string[] {
  const out = transformStacks(t, Float64Array.from(weight), transforms);
  return render(callTreeOfWeights(out.table, out.weight, 'top-down'), out.table.names);
}

describe('call tree transforms (pure)', () => {
  // Leaf first. main calls parse (which calls hash via memcpy in libc, and hash directly) and write (libc).
  const stacks = table(
    [
      ['hash', 'parse', 'main'], // 4
      ['memcpy', 'hash', 'parse', 'main'], // 2
      ['hash', 'memcpy', 'parse', 'main'], // 1: a callback from libc into the program
      ['write', '__libc_write', 'main'], // 3
      ['main'], // 1
      ['hash', 'hash', 'run'], // 2: recursion under another root
    ],
    { memcpy: 'libc.so.6', write: 'libc.so.6', __libc_write: 'libc.so.6' },
  );
  const weight = [4, 2, 1, 3, 1, 2];

  it('without transforms the tree is the plain one', () => {
    assert.deepEqual(treeAfter(stacks, weight, []), [
      'main 1/11',
      '  parse 0/7',
      '    hash 4/6',
      '      memcpy 2/2',
      '    memcpy 0/1',
      '      hash 1/1',
      '  __libc_write 0/3',
      '    write 3/3',
      'run 0/2',
      '  hash 0/2',
      '    hash 2/2',
    ]);
  });

  it('focus on a function: every call of it is a root (cut at its outermost call), samples without it are dropped', () => {
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'focus-function', name: 'hash' }]), ['hash 5/9', '  memcpy 2/2', '  hash 2/2']);
  });

  it('focus on a subtree: only the samples under that call path, rooted at its last function', () => {
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'focus-subtree', path: ['main', 'parse'] }]), [
      'parse 0/7',
      '  hash 4/6',
      '    memcpy 2/2',
      '  memcpy 0/1',
      '    hash 1/1',
    ]);
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'focus-subtree', path: ['main', 'nothing'] }]), []);
  });

  it("merge a function into its callers: its callees hang from its caller, its self samples count as the caller's", () => {
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'merge-function', name: 'parse' }]), [
      'main 1/11',
      '  hash 4/6',
      '    memcpy 2/2',
      '  __libc_write 0/3',
      '    write 3/3',
      '  memcpy 0/1',
      '    hash 1/1',
      'run 0/2',
      '  hash 0/2',
      '    hash 2/2',
    ]);
    // Merging the leaf moves its self samples to the caller.
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'merge-function', name: 'write' }]), [
      'main 1/11',
      '  parse 0/7',
      '    hash 4/6',
      '      memcpy 2/2',
      '    memcpy 0/1',
      '      hash 1/1',
      '  __libc_write 3/3',
      'run 0/2',
      '  hash 0/2',
      '    hash 2/2',
    ]);
  });

  it('collapse a library: each run of its frames is one node named by the library', () => {
    assert.deepEqual(treeAfter(stacks, weight, [{ kind: 'collapse-library', library: 'libc.so.6' }]), [
      'main 1/11',
      '  parse 0/7',
      '    hash 4/6',
      '      [libc.so.6] 2/2',
      '    [libc.so.6] 0/1',
      '      hash 1/1',
      '  [libc.so.6] 3/3',
      'run 0/2',
      '  hash 0/2',
      '    hash 2/2',
    ]);
  });

  it("applies transforms in order, keeps the store's name indexes and the leaf line only where the leaf stays", () => {
    const lines = { ...stacks, locations: [{ file: 'a.c', line: 1 }], leafLocation: Int32Array.from([0, 0, 0, 0, 0, 0]) };
    const out = transformStacks(lines, Float64Array.from(weight), [
      { kind: 'collapse-library', library: 'libc.so.6' },
      { kind: 'focus-function', name: 'parse' },
      { kind: 'merge-function', name: 'hash' },
    ]);
    assert.deepEqual(out.table.names.slice(0, stacks.names.length), stacks.names);
    assert.deepEqual(render(callTreeOfWeights(out.table, out.weight, 'top-down'), out.table.names), ['parse 4/7', '  [libc.so.6] 3/3']);
    // parse ← main (hash merged): parse is a new leaf, its line unknown; [libc.so.6] is a new leaf too.
    assert.deepEqual([...out.table.leafLocation!], [-1, -1]);
    assert.equal(
      Array.from(out.weight).reduce((x, y) => x + y, 0),
      7,
    );
  });

  it('names each transform for its breadcrumb', () => {
    assert.deepEqual(
      [
        { kind: 'focus-function', name: 'f' },
        { kind: 'focus-subtree', path: ['main', 'f'] },
        { kind: 'merge-function', name: 'g' },
        { kind: 'collapse-library', library: '/usr/lib/libc.so.6' },
      ].map((t) => transformLabel(t as CallTreeTransform)),
      ['Focus: f', 'Focus: main › f', 'Merge: g', 'Collapse: /usr/lib/libc.so.6'],
    );
  });
});
