// The difference of two captures' samples, B − A, as Firefox Profiler's compare and `perf diff` show it: per function,
// the change in its share of each capture's samples (perf diff's "Delta": B's percentage minus A's, in percentage
// points) and the change in its sample count; and a merged top-down tree (the same call path in both is one node)
// whose flame graph has B's shape, coloured red where a path holds a larger share in B and blue where a smaller one,
// as Brendan Gregg's differential flame graphs are. Pure, over the two captures' samples counted per stack.

import type { StackTable } from '../shared/stacks';

/** One function in both captures: samples where it is the leaf (self) and anywhere on the stack (total). */
export interface FunctionDiff {
  readonly name: string;
  readonly selfA: number;
  readonly selfB: number;
  readonly totalA: number;
  readonly totalB: number;
  /** Self share in B minus self share in A, in percentage points (perf diff's Delta, --no-children). */
  readonly selfDelta: number;
  /** Total share in B minus total share in A, in percentage points. */
  readonly totalDelta: number;
  /** Change of the self sample count, as a percentage of A's (selfB = 2 × selfA: +100); Infinity where A had none. */
  readonly selfChange: number;
}

export interface DiffTree {
  readonly size: number;
  /** Function names of the nodes (node 0 is the root, '' ). */
  readonly name: readonly string[];
  readonly parent: Int32Array;
  readonly depth: Int32Array;
  readonly firstChild: Int32Array;
  readonly nextSibling: Int32Array;
  readonly totalA: Float64Array;
  readonly totalB: Float64Array;
  readonly selfA: Float64Array;
  readonly selfB: Float64Array;
}

export interface CaptureDiff {
  /** Samples with a callchain in A and in B. */
  readonly samplesA: number;
  readonly samplesB: number;
  readonly functions: readonly FunctionDiff[];
  readonly tree: DiffTree;
}

/** One side of a diff: a stack table and its samples per stack (the two may be different tables; names are matched by text). */
export interface DiffSide {
  readonly table: StackTable;
  readonly weight: Float64Array;
}

export type DiffSort = 'self-delta' | 'total-delta' | 'self-change' | 'name';

const share = (n: number, all: number) => (all > 0 ? (100 * n) / all : 0);

/** B − A per function and as a merged call tree. */
export function diffCaptures(a: DiffSide, b: DiffSide): CaptureDiff {
  const fnIndex = new Map<string, number>();
  const fnNames: string[] = [];
  const counts: number[][] = []; // per function: [selfA, selfB, totalA, totalB]
  const fn = (name: string) => {
    let at = fnIndex.get(name);
    if (at === undefined) {
      at = fnNames.length;
      fnIndex.set(name, at);
      fnNames.push(name);
      counts.push([0, 0, 0, 0]);
    }
    return at;
  };
  const tree = new DiffTreeBuilder();
  const sides = [a, b];
  const all = [0, 0];
  for (let side = 0; side < 2; side++) {
    const { table, weight } = sides[side];
    const { start, frames, names } = table;
    const seen = new Set<number>();
    for (let s = 0; s + 1 < start.length; s++) {
      const w = weight[s] ?? 0;
      if (w === 0 || start[s] === start[s + 1]) continue;
      all[side] += w;
      counts[fn(names[frames[start[s]]])][side] += w;
      seen.clear();
      for (let f = start[s]; f < start[s + 1]; f++) {
        const i = fn(names[frames[f]]);
        if (seen.has(i)) continue; // a recursive function counts once per sample
        seen.add(i);
        counts[i][2 + side] += w;
      }
      // Top-down: from the outermost caller to the leaf.
      let node = 0;
      tree.add(node, side, w, false);
      for (let f = start[s + 1] - 1; f >= start[s]; f--) {
        node = tree.child(node, names[frames[f]]);
        tree.add(node, side, w, f === start[s]);
      }
    }
  }
  const functions = fnNames.map((name, i): FunctionDiff => {
    const [selfA, selfB, totalA, totalB] = counts[i];
    return {
      name,
      selfA,
      selfB,
      totalA,
      totalB,
      selfDelta: share(selfB, all[1]) - share(selfA, all[0]),
      totalDelta: share(totalB, all[1]) - share(totalA, all[0]),
      selfChange: selfA > 0 ? (100 * (selfB - selfA)) / selfA : selfB > 0 ? Infinity : 0,
    };
  });
  return { samplesA: all[0], samplesB: all[1], functions: sortFunctionDiffs(functions, 'self-delta'), tree: tree.done() };
}

/** The functions in the order a column sorts them: the largest change either way first (then by name). */
export function sortFunctionDiffs(functions: readonly FunctionDiff[], by: DiffSort): FunctionDiff[] {
  const key = (f: FunctionDiff) => (by === 'self-delta' ? f.selfDelta : by === 'total-delta' ? f.totalDelta : by === 'self-change' ? f.selfChange : 0);
  return [...functions].sort((x, y) => {
    if (by === 'name') return x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
    const d = magnitude(key(y)) - magnitude(key(x));
    return d !== 0 && !Number.isNaN(d) ? d : x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
  });
}

const magnitude = (v: number) => (v === Infinity ? Number.MAX_VALUE : Math.abs(v));

/** A node's change of total share, B − A, in percentage points of each capture's samples. */
export function nodeDelta(diff: CaptureDiff, node: number): number {
  return share(diff.tree.totalB[node], diff.samplesB) - share(diff.tree.totalA[node], diff.samplesA);
}

/**
 * The colour of a change of share (percentage points): red for more in B, blue for less, white for none, saturating at
 * `full` points. As RGB, so the label colour can be chosen from it.
 */
export function diffColor(delta: number, full = 10): [number, number, number] {
  const t = Math.min(1, Math.abs(delta) / full);
  const fade = Math.round(255 - 175 * t); // 255 (no change) … 80 (full change)
  return delta > 0 ? [255, fade, fade] : delta < 0 ? [fade, fade, 255] : [255, 255, 255];
}

/** One box of the differential flame graph: B's shape (x and width as fractions of B's samples). */
export interface DiffFlameBox {
  readonly node: number;
  readonly x: number;
  readonly width: number;
  readonly depth: number;
}

/** The boxes of the differential flame graph: widths are B's samples, children heaviest first; narrower than `minWidth` left out. */
export function diffFlameLayout(tree: DiffTree, minWidth = 0): DiffFlameBox[] {
  const boxes: DiffFlameBox[] = [];
  const all = tree.totalB[0];
  if (!(all > 0)) return boxes;
  const visit = (node: number, x: number, depth: number) => {
    const children: number[] = [];
    for (let c = tree.firstChild[node]; c >= 0; c = tree.nextSibling[c]) if (tree.totalB[c] > 0) children.push(c);
    children.sort((p, q) => tree.totalB[q] - tree.totalB[p] || p - q);
    let at = x;
    for (const c of children) {
      const width = tree.totalB[c] / all;
      if (width >= minWidth) {
        boxes.push({ node: c, x: at, width, depth });
        visit(c, at, depth + 1);
      }
      at += width;
    }
  };
  visit(0, 0, 0);
  return boxes;
}

class DiffTreeBuilder {
  private readonly name: string[] = [''];
  private readonly parent: number[] = [-1];
  private readonly depth: number[] = [0];
  private readonly firstChild: number[] = [-1];
  private readonly nextSibling: number[] = [-1];
  private readonly lastChild: number[] = [-1];
  private readonly counts: number[][] = [[0, 0, 0, 0]]; // totalA, totalB, selfA, selfB
  private readonly children = new Map<string, number>();

  child(parent: number, name: string): number {
    const key = `${parent}\u0000${name}`;
    const known = this.children.get(key);
    if (known !== undefined) return known;
    const node = this.name.length;
    this.name.push(name);
    this.parent.push(parent);
    this.depth.push(this.depth[parent] + 1);
    this.firstChild.push(-1);
    this.nextSibling.push(-1);
    this.lastChild.push(-1);
    this.counts.push([0, 0, 0, 0]);
    if (this.lastChild[parent] < 0) this.firstChild[parent] = node;
    else this.nextSibling[this.lastChild[parent]] = node;
    this.lastChild[parent] = node;
    this.children.set(key, node);
    return node;
  }

  add(node: number, side: number, w: number, leaf: boolean): void {
    this.counts[node][side] += w;
    if (leaf) this.counts[node][2 + side] += w;
  }

  done(): DiffTree {
    const column = (i: number) => Float64Array.from(this.counts, (c) => c[i]);
    return {
      size: this.name.length,
      name: this.name,
      parent: Int32Array.from(this.parent),
      depth: Int32Array.from(this.depth),
      firstChild: Int32Array.from(this.firstChild),
      nextSibling: Int32Array.from(this.nextSibling),
      totalA: column(0),
      totalB: column(1),
      selfA: column(2),
      selfB: column(3),
    };
  }
}
