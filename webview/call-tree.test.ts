import * as assert from 'node:assert/strict';
import {
  buildCallTree,
  childrenByTotal,
  flameBoxAt,
  flameLayout,
  functionCounts,
  lineCounts,
  pathTo,
  selectionWeights,
  selfByFunction,
  type CallTree,
} from './call-tree';
import { functionName, type StackTable } from '../shared/stacks';
import { stackTerm, withStackTerm } from './call-tree-view';

/** Stacks given leaf first as names. */
function table(stacks: string[][]): StackTable {
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
  return { names, start: Uint32Array.from(start), frames: Int32Array.from(frames) };
}

/** The tree as indented `name self/total` lines, children heaviest first. */
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

describe('call tree (pure)', () => {
  // 0: inner ← outer ← main, 1: outer ← main, 2: write ← main, 3: inner ← inner ← main (recursion)
  const stacks = table([
    ['inner', 'outer', 'main'],
    ['outer', 'main'],
    ['write', 'main'],
    ['inner', 'inner', 'main'],
  ]);
  const samples = Int32Array.from([0, 0, 0, 1, 2, 2, 3, -1, 0]);

  it('top-down: totals include callees, self counts the leaf; samples without a stack are left out', () => {
    const tree = buildCallTree(stacks, samples, 'top-down');
    assert.equal(tree.total[0], 8);
    assert.deepEqual(render(tree, stacks.names), ['main 0/8', '  outer 1/5', '    inner 4/4', '  write 2/2', '  inner 0/1', '    inner 1/1']);
  });

  it('selection weights: a range and the shown rows both narrow the samples; the shown rows apply without a range too', () => {
    const time = Float64Array.from(samples, (_, r) => r * 10);
    assert.deepEqual([...selectionWeights(stacks, time, samples, null, null)], [4, 1, 2, 1]);
    assert.deepEqual([...selectionWeights(stacks, time, samples, [0, 35], null)], [3, 1, 0, 0]);
    // Rows 0-3 only (another capture holds the rest), with and without a range.
    const shown = Uint8Array.from(samples, (_, r) => (r < 4 ? 1 : 0));
    assert.deepEqual([...selectionWeights(stacks, time, samples, null, shown)], [3, 1, 0, 0]);
    assert.deepEqual([...selectionWeights(stacks, time, samples, [10, 80], shown)], [2, 1, 0, 0]);
  });

  it('bottom-up: leaf functions at the root, their callers below', () => {
    const tree = buildCallTree(stacks, samples, 'bottom-up');
    assert.deepEqual(render(tree, stacks.names), [
      'inner 0/5',
      '  outer 0/4',
      '    main 4/4',
      '  inner 0/1',
      '    main 1/1',
      'write 0/2',
      '  main 2/2',
      'outer 0/1',
      '  main 1/1',
    ]);
  });

  it('self per function is the sum of top-down self over every node of that function', () => {
    const self = selfByFunction(stacks, samples);
    const named = Object.fromEntries([...self].map(([n, c]) => [stacks.names[n], c]));
    assert.deepEqual(named, { inner: 5, outer: 1, write: 2 });
    const tree = buildCallTree(stacks, samples, 'top-down');
    const fromTree = new Map<string, number>();
    for (let n = 1; n < tree.size; n++)
      if (tree.self[n]) fromTree.set(stacks.names[tree.name[n]], (fromTree.get(stacks.names[tree.name[n]]) ?? 0) + tree.self[n]);
    assert.deepEqual(Object.fromEntries(fromTree), named);
  });

  it('flame graph boxes: widths are fractions of all samples, children side by side, heaviest first', () => {
    const tree = buildCallTree(stacks, samples, 'top-down');
    const boxes = flameLayout(tree).map((b) => `${stacks.names[tree.name[b.node]]}@${b.depth} ${b.x.toFixed(3)}+${b.width.toFixed(3)}`);
    assert.deepEqual(boxes, [
      'main@0 0.000+1.000',
      'outer@1 0.000+0.625',
      'inner@2 0.000+0.500',
      'write@1 0.625+0.250',
      'inner@1 0.875+0.125',
      'inner@2 0.875+0.125',
    ]);
    assert.equal(flameLayout(tree, 0.2).length, 4, 'boxes narrower than 20 % go, with their subtrees');
    assert.deepEqual(flameLayout(buildCallTree(stacks, [], 'top-down')), []);
  });

  it('flame graph zoomed into a node: it and its callers span the width, its subtree scaled to it; hit-testing', () => {
    const tree = buildCallTree(stacks, samples, 'top-down');
    const nameOf = (node: number) => stacks.names[tree.name[node]];
    const full = flameLayout(tree);
    const outer = full.find((b) => nameOf(b.node) === 'outer')!.node;
    assert.deepEqual(pathTo(tree, outer).map(nameOf), ['main', 'outer']);
    assert.deepEqual(pathTo(tree, 0), []);
    const zoomed = flameLayout(tree, 0, outer).map((b) => `${nameOf(b.node)}@${b.depth} ${b.x.toFixed(3)}+${b.width.toFixed(3)}`);
    assert.deepEqual(zoomed, ['main@0 0.000+1.000', 'outer@1 0.000+1.000', 'inner@2 0.000+0.800']);
    assert.deepEqual(flameLayout(tree, 0, 0), full, 'focus on the root is the whole graph');
    assert.equal(nameOf(flameBoxAt(full, 0.7, 1)!.node), 'write');
    assert.equal(nameOf(flameBoxAt(full, 0.9, 2)!.node), 'inner');
    assert.equal(tree.parent[flameBoxAt(full, 0.9, 2)!.node], flameBoxAt(full, 0.9, 1)!.node, 'the recursive inner sits on inner');
    assert.equal(flameBoxAt(full, 0.6, 2), undefined, 'nothing above write');
    assert.equal(flameBoxAt(full, 0.5, 4), undefined);
  });

  it('functions: self where the leaf, total where anywhere on the stack (once per sample under recursion), most self first', () => {
    const rows = functionCounts(stacks, samples).map((f) => `${stacks.names[f.name]} ${f.self}/${f.total}`);
    assert.deepEqual(rows, ['inner 5/5', 'write 2/2', 'outer 1/5', 'main 0/8']);
    assert.deepEqual(functionCounts(stacks, []), []);
  });

  it('lines: self samples per leaf source line and function, most first; unknown lines left out', () => {
    const lines = table([
      ['inner', 'outer', 'main'],
      ['outer', 'main'],
      ['write', 'main'],
      ['inner', 'inner', 'main'],
      ['inner', 'outer', 'main'],
    ]);
    const withLines = {
      ...lines,
      locations: [10, 20, 11].map((line) => ({ file: '/src/a.c', line })),
      leafLocation: Int32Array.from([0, 1, -1, 0, 2]),
      nameLocation: Int32Array.from([-1, -1, -1, -1]),
    };
    const rows = lineCounts(withLines, Int32Array.from([0, 0, 0, 1, 2, 4, 4, 3, -1])).map(
      (l) => `${withLines.names[l.name]} ${withLines.locations[l.location].file}:${withLines.locations[l.location].line} ${l.self}`,
    );
    assert.deepEqual(rows, ['inner /src/a.c:10 4', 'inner /src/a.c:11 2', 'outer /src/a.c:20 1']);
    assert.deepEqual(lineCounts(lines, [0, 1]), [], 'a table without lines has no line counts');
  });

  it('functionName drops only a perf-style +0xoff', () => {
    assert.equal(functionName('pd_inner+0x20'), 'pd_inner');
    assert.equal(functionName('operator+'), 'operator+');
    assert.equal(functionName('ns::f+0x0'), 'ns::f');
    assert.equal(functionName('[kernel]'), '[kernel]');
  });
});

describe('call tree → filter box', () => {
  it('a chosen function replaces only the stack:= term of the filter; clearing removes it and keeps the rest', () => {
    assert.equal(stackTerm('pd_inner'), 'stack:=pd_inner');
    assert.equal(stackTerm('operator new(unsigned long)'), 'stack:="operator new(unsigned long)"');
    assert.equal(withStackTerm('', 'stack:=main'), 'stack:=main');
    assert.equal(withStackTerm('comm:demo stack:=main -event:sched', 'stack:=f'), 'comm:demo -event:sched stack:=f');
    assert.equal(withStackTerm('stack:="a b" stack:part', 'stack:=g'), 'stack:part stack:=g', "a typed stack:NAME is the user's own term");
    assert.equal(withStackTerm('comm:demo stack:=main', null), 'comm:demo');
    assert.equal(withStackTerm('field.filename="/a  b" stack:=main', null), 'field.filename="/a  b"', 'other terms kept as typed');
  });
});
