import * as assert from 'node:assert/strict';
import { diffCaptures, diffColor, diffFlameLayout, nodeDelta, sortFunctionDiffs, type DiffSide } from './call-tree-diff';
import type { StackTable } from '../shared/stacks';

/** Stacks given leaf first as names, with their sample counts. */
function side(stacks: [string[], number][]): DiffSide {
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
  for (const [s] of stacks) {
    frames.push(...s.map(index));
    start.push(frames.length);
  }
  const table: StackTable = { names, start: Uint32Array.from(start), frames: Int32Array.from(frames) };
  return { table, weight: Float64Array.from(stacks.map(([, w]) => w)) };
}

describe('difference of two captures (pure)', () => {
  // A: 100 samples in fast, 100 in slow. B: slow's samples double (200), fast's stay; gone() only in A, fresh() only in B.
  const a = side([
    [['fast', 'main'], 100],
    [['slow', 'main'], 100],
    [['gone', 'main'], 50],
  ]);
  const b = side([
    [['slow', 'main'], 200],
    [['fresh', 'main'], 10],
    [['fast', 'main'], 100],
  ]);
  const diff = diffCaptures(a, b);
  const fn = (name: string) => diff.functions.find((f) => f.name === name)!;

  it('a function whose samples double shows +100 %, and its change of share in percentage points as perf diff does', () => {
    assert.deepEqual([diff.samplesA, diff.samplesB], [250, 310]);
    assert.equal(fn('slow').selfChange, 100);
    assert.equal(fn('fast').selfChange, 0);
    assert.equal(fn('gone').selfChange, -100);
    assert.equal(fn('fresh').selfChange, Infinity);
    // perf diff's Delta: new % − baseline %.
    assert.ok(Math.abs(fn('slow').selfDelta - ((100 * 200) / 310 - (100 * 100) / 250)) < 1e-9);
    assert.ok(Math.abs(fn('fast').selfDelta - ((100 * 100) / 310 - 40)) < 1e-9);
    assert.equal(fn('main').totalDelta, 0);
    assert.equal(fn('main').selfDelta, 0);
  });

  it('sorts by the size of the change either way', () => {
    assert.deepEqual(
      diff.functions.map((f) => f.name),
      ['slow', 'gone', 'fast', 'fresh', 'main'],
    );
    assert.deepEqual(
      sortFunctionDiffs(diff.functions, 'self-change').map((f) => f.name),
      ['fresh', 'gone', 'slow', 'fast', 'main'],
    );
    assert.deepEqual(
      sortFunctionDiffs(diff.functions, 'name').map((f) => f.name),
      ['fast', 'fresh', 'gone', 'main', 'slow'],
    );
  });

  it("merges the two call trees by path; the flame graph has B's shape, red where B has more, blue where less", () => {
    const { tree } = diff;
    const node = (path: string[]) => {
      let n = 0;
      for (const name of path) {
        let c = tree.firstChild[n];
        while (c >= 0 && tree.name[c] !== name) c = tree.nextSibling[c];
        n = c;
      }
      return n;
    };
    const slow = node(['main', 'slow']);
    assert.deepEqual([tree.totalA[slow], tree.totalB[slow], tree.selfA[slow], tree.selfB[slow]], [100, 200, 100, 200]);
    assert.deepEqual([tree.totalA[node(['main', 'gone'])], tree.totalB[node(['main', 'gone'])]], [50, 0]);
    assert.ok(nodeDelta(diff, slow) > 0 && nodeDelta(diff, node(['main', 'fast'])) < 0);
    const boxes = diffFlameLayout(tree);
    assert.deepEqual(
      boxes.map((box) => [tree.name[box.node], box.depth, Number(box.width.toFixed(4))]),
      [
        ['main', 0, 1],
        ['slow', 1, 0.6452],
        ['fast', 1, 0.3226],
        ['fresh', 1, 0.0323],
      ],
    );
    const [r, g, bl] = diffColor(nodeDelta(diff, slow));
    assert.ok(r === 255 && g < 255 && bl < 255, 'more in B: red');
    const less = diffColor(nodeDelta(diff, node(['main', 'fast'])));
    assert.ok(less[2] === 255 && less[0] < 255, 'less in B: blue');
    assert.deepEqual(diffColor(0), [255, 255, 255]);
  });
});
