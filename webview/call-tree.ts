// Call trees of sampled callchains, as pure code over typed arrays: top-down (callers first, as perf
// report --children -G shows it), inverted (bottom-up: leaf functions at the root) and the self count
// per function (perf report --no-children) and per source line of the sampled address. Frames are merged by
// function name, so `pd_inner+0x20` and `pd_inner+0x24` are one node. The flame graph layout (zoomed into any
// node) and its hit-testing are pure passes over the tree too.

import type { StackTable } from '../shared/stacks';

export type TreeDirection = 'top-down' | 'bottom-up';

/** Nodes as struct-of-arrays; node 0 is the root (all samples, no function). Children in first-seen order. */
export interface CallTree {
  readonly size: number;
  /** Index into the StackTable's names (-1 for the root). */
  readonly name: Int32Array;
  readonly parent: Int32Array;
  readonly depth: Int32Array;
  /** Samples whose stack ends here (top-down: the leaf; bottom-up: the root-most caller). */
  readonly self: Float64Array;
  /** Samples whose stack passes through here. */
  readonly total: Float64Array;
  readonly firstChild: Int32Array;
  readonly nextSibling: Int32Array;
}

class Builder {
  size = 1;
  name = new Int32Array(64).fill(-1);
  parent = new Int32Array(64).fill(-1);
  depth = new Int32Array(64);
  self = new Float64Array(64);
  total = new Float64Array(64);
  firstChild = new Int32Array(64).fill(-1);
  nextSibling = new Int32Array(64).fill(-1);
  /** (parent, name) → child, for O(1) descent. */
  private readonly children = new Map<number, number>();
  private readonly nameCount: number;

  constructor(nameCount: number) {
    this.nameCount = nameCount + 1;
  }

  child(parent: number, name: number): number {
    const key = parent * this.nameCount + (name + 1);
    const known = this.children.get(key);
    if (known !== undefined) return known;
    if (this.size === this.name.length) this.grow();
    const node = this.size++;
    this.name[node] = name;
    this.parent[node] = parent;
    this.depth[node] = this.depth[parent] + 1;
    // Append after the last child so siblings keep first-seen order.
    let last = this.firstChild[parent];
    if (last < 0) this.firstChild[parent] = node;
    else {
      while (this.nextSibling[last] >= 0) last = this.nextSibling[last];
      this.nextSibling[last] = node;
    }
    this.children.set(key, node);
    return node;
  }

  private grow(): void {
    const n = this.name.length * 2;
    const i32 = (a: Int32Array, fill: number) => {
      const b = new Int32Array(n).fill(fill);
      b.set(a);
      return b;
    };
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    this.name = i32(this.name, -1);
    this.parent = i32(this.parent, -1);
    this.depth = i32(this.depth, 0);
    this.firstChild = i32(this.firstChild, -1);
    this.nextSibling = i32(this.nextSibling, -1);
    this.self = f64(this.self);
    this.total = f64(this.total);
  }

  done(): CallTree {
    const n = this.size;
    return {
      size: n,
      name: this.name.subarray(0, n),
      parent: this.parent.subarray(0, n),
      depth: this.depth.subarray(0, n),
      self: this.self.subarray(0, n),
      total: this.total.subarray(0, n),
      firstChild: this.firstChild.subarray(0, n),
      nextSibling: this.nextSibling.subarray(0, n),
    };
  }
}

/**
 * The tree of the samples whose stacks are `sampleStacks` (stack ids into `stacks`; negative: no
 * callchain, skipped). Counts are sample counts. Top-down starts at the outermost caller; bottom-up at the leaf.
 */
export function buildCallTree(stacks: StackTable, sampleStacks: ArrayLike<number>, direction: TreeDirection): CallTree {
  // Stacks repeat: count each distinct stack once, then walk it once with its weight.
  return callTreeOfWeights(stacks, stackWeights(stacks, sampleStacks), direction);
}

/** The tree of samples counted per distinct stack (`weight[s]`: samples of stack s, as stackWeights gives them). */
export function callTreeOfWeights(stacks: StackTable, weight: Float64Array, direction: TreeDirection): CallTree {
  const tree = new Builder(stacks.names.length);
  const { start, frames } = stacks;
  for (let s = 0; s < weight.length; s++) {
    const w = weight[s];
    if (w === 0 || start[s + 1] === start[s]) continue;
    let node = 0;
    tree.total[0] += w;
    if (direction === 'top-down')
      for (let f = start[s + 1] - 1; f >= start[s]; f--) {
        node = tree.child(node, frames[f]);
        tree.total[node] += w;
      }
    else
      for (let f = start[s]; f < start[s + 1]; f++) {
        node = tree.child(node, frames[f]);
        tree.total[node] += w;
      }
    tree.self[node] += w;
  }
  return tree.done();
}

/** Samples per distinct stack: the count of each stack id among `sampleStacks` (ids out of range are skipped). */
export function stackWeights(stacks: StackTable, sampleStacks: ArrayLike<number>): Float64Array {
  const weight = new Float64Array(stacks.start.length > 0 ? stacks.start.length - 1 : 0);
  for (let i = 0; i < sampleStacks.length; i++) {
    const s = sampleStacks[i];
    if (s >= 0 && s < weight.length) weight[s]++;
  }
  return weight;
}

/** One function's samples: `self` where it is the leaf (perf report --no-children), `total` where it is anywhere on the stack. */
export interface FunctionCount {
  readonly name: number;
  readonly self: number;
  readonly total: number;
}

/** Samples per function, most self samples first (then most total, then by name index); a recursive function counts once per sample. */
export function functionCounts(stacks: StackTable, sampleStacks: ArrayLike<number>): FunctionCount[] {
  return functionCountsOfWeights(stacks, stackWeights(stacks, sampleStacks));
}

/** functionCounts of samples counted per distinct stack. */
export function functionCountsOfWeights(stacks: StackTable, weight: Float64Array): FunctionCount[] {
  const self = new Float64Array(stacks.names.length);
  const total = new Float64Array(stacks.names.length);
  const seenIn = new Int32Array(stacks.names.length).fill(-1);
  for (let s = 0; s < weight.length; s++) {
    const w = weight[s];
    if (w === 0 || stacks.start[s] === stacks.start[s + 1]) continue;
    self[stacks.frames[stacks.start[s]]] += w;
    for (let f = stacks.start[s]; f < stacks.start[s + 1]; f++) {
      const name = stacks.frames[f];
      if (seenIn[name] === s) continue;
      seenIn[name] = s;
      total[name] += w;
    }
  }
  const out: FunctionCount[] = [];
  for (let n = 0; n < total.length; n++) if (total[n] > 0) out.push({ name: n, self: self[n], total: total[n] });
  return out.sort((a, b) => b.self - a.self || b.total - a.total || a.name - b.name);
}

/** Self samples of one source line: `location` indexes the table's locations, `name` the function the line was sampled in. */
export interface LineCount {
  readonly location: number;
  readonly name: number;
  readonly self: number;
}

/** Samples per leaf source line, most first (then by location index); stacks whose leaf line is unknown are left out. */
export function lineCounts(stacks: StackTable, sampleStacks: ArrayLike<number>): LineCount[] {
  return lineCountsOfWeights(stacks, stackWeights(stacks, sampleStacks));
}

/** lineCounts of samples counted per distinct stack. */
export function lineCountsOfWeights(stacks: StackTable, weight: Float64Array): LineCount[] {
  const { leafLocation } = stacks;
  if (!leafLocation) return [];
  // Keyed by (location, leaf function): an inlined line can be sampled inside two functions.
  const byKey = new Map<string, { location: number; name: number; self: number }>();
  for (let s = 0; s < weight.length; s++) {
    const w = weight[s];
    const location = leafLocation[s];
    if (w === 0 || location < 0 || stacks.start[s] === stacks.start[s + 1]) continue;
    const name = stacks.frames[stacks.start[s]];
    const key = `${location},${name}`;
    const known = byKey.get(key);
    if (known) known.self += w;
    else byKey.set(key, { location, name, self: w });
  }
  return [...byKey.values()].sort((a, b) => b.self - a.self || a.location - b.location || a.name - b.name);
}

/** Everything the call tree pane shows of one selection: both trees, the counts per function and per line. */
export interface Aggregate {
  /** The names the trees and counts refer to: the stack table's, and a collapsed library's after them. */
  readonly names: readonly string[];
  readonly topDown: CallTree;
  readonly bottomUp: CallTree;
  readonly functions: readonly FunctionCount[];
  readonly lines: readonly LineCount[];
}

/** The samples' stack weights, one typed pass over the rows: every row (`range` null), or rows timed in [t0, t1] that `shown` marks. */
export function selectionWeights(
  stacks: StackTable,
  time: Float64Array,
  stack: Int32Array,
  range: readonly [number, number] | null,
  shown: Uint8Array | null,
): Float64Array {
  const weight = new Float64Array(stacks.start.length > 0 ? stacks.start.length - 1 : 0);
  const n = Math.min(time.length, stack.length);
  if (range === null) {
    for (let r = 0; r < n; r++) {
      if (shown !== null && shown[r] === 0) continue;
      const s = stack[r];
      if (s >= 0 && s < weight.length) weight[s]++;
    }
    return weight;
  }
  const [t0, t1] = range;
  for (let r = 0; r < n; r++) {
    const t = time[r];
    if (!(t >= t0 && t <= t1) || (shown !== null && shown[r] === 0)) continue;
    const s = stack[r];
    if (s >= 0 && s < weight.length) weight[s]++;
  }
  return weight;
}

/** The pane's whole answer for samples counted per distinct stack. */
export function aggregateWeights(stacks: StackTable, weight: Float64Array): Aggregate {
  return {
    names: stacks.names,
    topDown: callTreeOfWeights(stacks, weight, 'top-down'),
    bottomUp: callTreeOfWeights(stacks, weight, 'bottom-up'),
    functions: functionCountsOfWeights(stacks, weight),
    lines: lineCountsOfWeights(stacks, weight),
  };
}

/** Samples per leaf function (perf report --no-children): name index → count. */
export function selfByFunction(stacks: StackTable, sampleStacks: ArrayLike<number>): Map<number, number> {
  const out = new Map<number, number>();
  for (let i = 0; i < sampleStacks.length; i++) {
    const s = sampleStacks[i];
    if (s < 0 || s + 1 >= stacks.start.length || stacks.start[s] === stacks.start[s + 1]) continue;
    const leaf = stacks.frames[stacks.start[s]];
    out.set(leaf, (out.get(leaf) ?? 0) + 1);
  }
  return out;
}

/** Children of `node`, heaviest first (ties by first seen), for a list or a flame graph. */
export function childrenByTotal(tree: CallTree, node: number): number[] {
  const out: number[] = [];
  for (let c = tree.firstChild[node]; c >= 0; c = tree.nextSibling[c]) out.push(c);
  return out.sort((a, b) => tree.total[b] - tree.total[a] || a - b);
}

/** One flame graph box: x and width as fractions of the root's total, depth 0 for the root's children. */
export interface FlameBox {
  readonly node: number;
  readonly x: number;
  readonly width: number;
  readonly depth: number;
}

/** The nodes from the root's child down to `node` (empty for the root): a flame graph's breadcrumb. */
export function pathTo(tree: CallTree, node: number): number[] {
  const path: number[] = [];
  for (let n = node; n > 0; n = tree.parent[n]) path.push(n);
  return path.reverse();
}

/**
 * Boxes of the flame graph (top-down tree), children heaviest first; boxes narrower than `minWidth` (fraction) are dropped
 * with their subtrees. Zoomed into `focus` (a node other than the root), the focus and each of its callers span the whole
 * width and the focus's subtree is scaled to it; the rest of the tree is left out.
 */
export function flameLayout(tree: CallTree, minWidth = 0, focus = 0): FlameBox[] {
  const boxes: FlameBox[] = [];
  const scale = tree.total[focus];
  if (!(scale > 0)) return boxes;
  for (const caller of pathTo(tree, focus)) boxes.push({ node: caller, x: 0, width: 1, depth: tree.depth[caller] - 1 });
  const visit = (node: number, x: number, depth: number) => {
    let at = x;
    for (const child of childrenByTotal(tree, node)) {
      const width = tree.total[child] / scale;
      if (width >= minWidth) {
        boxes.push({ node: child, x: at, width, depth });
        visit(child, at, depth + 1);
      }
      at += width;
    }
  };
  visit(focus, 0, focus === 0 ? 0 : tree.depth[focus]);
  return boxes;
}

/** The box under fraction `x` of the width at `depth` (0: the outermost callers), or undefined. */
export function flameBoxAt(boxes: readonly FlameBox[], x: number, depth: number): FlameBox | undefined {
  return boxes.find((b) => b.depth === depth && x >= b.x && x < b.x + b.width);
}
