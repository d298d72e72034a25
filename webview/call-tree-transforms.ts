// Transforms of the sampled stacks before the call tree and flame graph are built, as Firefox Profiler's: focus on a
// function (every call of it becomes a root, its callers dropped), focus on a subtree (one call path), merge a
// function into its callers (its frames removed, its self samples given to the caller), collapse a library into one
// frame per run of its functions. They rewrite the stack table and carry each stack's weight to its rewritten stack,
// so every view (trees, functions, lines, flame graph) reads the transformed samples. Pure; applied in order.

import type { StackTable } from '../shared/stacks';
import { aggregateWeights, type Aggregate } from './call-tree';

export type CallTreeTransform =
  /** Samples through `name`, each cut at its outermost call of it: `name` is the root; samples without it are dropped. */
  | { readonly kind: 'focus-function'; readonly name: string }
  /** Samples whose outermost callers are `path` (root first): `path`'s last function is the root; others are dropped. */
  | { readonly kind: 'focus-subtree'; readonly path: readonly string[] }
  /** `name`'s frames removed: its callees hang from its caller and its self samples count as the caller's. */
  | { readonly kind: 'merge-function'; readonly name: string }
  /** Each run of consecutive frames of `library` becomes one frame named by the library. */
  | { readonly kind: 'collapse-library'; readonly library: string };

/** The breadcrumb of a transform. */
export function transformLabel(t: CallTreeTransform): string {
  switch (t.kind) {
    case 'focus-function':
      return `Focus: ${t.name}`;
    case 'focus-subtree':
      return `Focus: ${t.path.join(' › ')}`;
    case 'merge-function':
      return `Merge: ${t.name}`;
    case 'collapse-library':
      return `Collapse: ${t.library}`;
  }
}

/** The frame name a collapsed library's run gets (a library is named by its file; the brackets tell it from a function). */
export function libraryFrameName(library: string): string {
  return `[${library.slice(library.lastIndexOf('/') + 1)}]`;
}

export interface TransformedStacks {
  readonly table: StackTable;
  /** Samples per stack of `table`. */
  readonly weight: Float64Array;
  /** Per stack of the input table: the stack of `table` its samples went to, or -1 (dropped, or of no weight). */
  readonly map: Int32Array;
}

/**
 * `transforms` applied in order to the samples counted per stack (`weight[s]`: samples of stack s). The result's names
 * start with `table.names` unchanged (indexes stay valid; a collapsed library's name is appended), so a name chosen in
 * the transformed tree names the same function in the store. No transform: the input, as it is.
 */
export function transformStacks(table: StackTable, weight: Float64Array, transforms: readonly CallTreeTransform[]): TransformedStacks {
  const stacks = Math.max(0, table.start.length - 1);
  let out: TransformedStacks = { table, weight, map: Int32Array.from({ length: stacks }, (_, s) => ((weight[s] ?? 0) === 0 ? -1 : s)) };
  for (const t of transforms) {
    const next = applyOne(out.table, out.weight, t);
    // Composed: each input stack through every transform so far.
    const map = out.map.map((s) => (s < 0 ? -1 : next.map[s]));
    out = { ...next, map };
  }
  return out;
}

/**
 * The stacks as the stack chart draws them through `transforms`: the rewritten table and, per stack of `table`, its
 * rewritten stack (-1: the transforms drop its samples, as focus does for samples not through the function). The same
 * rewrite as the call tree's and flame graph's (every stack counted once), so the chart's boxes are the transformed
 * callchains of its samples.
 */
export function transformStackView(table: StackTable, transforms: readonly CallTreeTransform[]): { table: StackTable; map: Int32Array } {
  const out = transformStacks(table, new Float64Array(Math.max(0, table.start.length - 1)).fill(1), transforms);
  return { table: out.table, map: out.map };
}

/** The pane's answer for samples counted per stack, after the transforms: what the worker and the page both run. */
export function aggregateTransformed(table: StackTable, weight: Float64Array, transforms: readonly CallTreeTransform[]): Aggregate {
  const out = transformStacks(table, weight, transforms);
  return aggregateWeights(out.table, out.weight);
}

function applyOne(table: StackTable, weight: Float64Array, t: CallTreeTransform): TransformedStacks {
  const names = [...table.names];
  const nameIndex = (name: string): number => {
    const at = names.indexOf(name);
    if (at >= 0) return at;
    names.push(name);
    return names.length - 1;
  };
  const { start, frames } = table;
  const rewrite = makeRewriter(table);
  const target = t.kind === 'focus-function' || t.kind === 'merge-function' ? table.names.indexOf(t.name) : -1;
  const path = t.kind === 'focus-subtree' ? t.path.map((n) => table.names.indexOf(n)) : [];
  const libraryName = t.kind === 'collapse-library' ? nameIndex(libraryFrameName(t.library)) : -1;
  const inLibrary = t.kind === 'collapse-library' ? libraryMembers(table, t.library) : null;
  const kept: number[] = [];
  const map = new Int32Array(Math.max(0, start.length - 1)).fill(-1);
  for (let s = 0; s + 1 < start.length; s++) {
    const w = weight[s] ?? 0;
    if (w === 0) continue;
    const from = start[s];
    const to = start[s + 1];
    kept.length = 0;
    switch (t.kind) {
      case 'focus-function': {
        let outermost = -1;
        for (let f = to - 1; f >= from; f--)
          if (frames[f] === target) {
            outermost = f;
            break;
          }
        if (outermost < 0) continue;
        for (let f = from; f <= outermost; f++) kept.push(frames[f]);
        break;
      }
      case 'focus-subtree': {
        if (path.length === 0 || path.includes(-1) || to - from < path.length) continue;
        let matches = true;
        for (let i = 0; i < path.length && matches; i++) matches = frames[to - 1 - i] === path[i];
        if (!matches) continue;
        for (let f = from; f <= to - path.length; f++) kept.push(frames[f]);
        break;
      }
      case 'merge-function':
        for (let f = from; f < to; f++) if (frames[f] !== target) kept.push(frames[f]);
        break;
      case 'collapse-library':
        for (let f = from; f < to; f++) {
          if (inLibrary!.has(frames[f])) {
            if (kept[kept.length - 1] !== libraryName) kept.push(libraryName);
          } else kept.push(frames[f]);
        }
        break;
    }
    // A leaf that stays the leaf keeps its sampled line; a new leaf (its callee merged or collapsed away) has none known.
    const sameLeaf = kept.length > 0 && kept[0] === frames[from] && !(t.kind === 'collapse-library' && kept[0] === libraryName);
    map[s] = rewrite.add(kept, w, sameLeaf ? (table.leafLocation?.[s] ?? -1) : -1);
  }
  return rewrite.done(names, map);
}

/** The names of `table` whose library is `library` (none when the table knows no libraries). */
function libraryMembers(table: StackTable, library: string): Set<number> {
  const members = new Set<number>();
  const libraryIndex = table.libraries?.indexOf(library) ?? -1;
  if (libraryIndex < 0 || !table.nameLibrary) return members;
  table.nameLibrary.forEach((l, n) => {
    if (l === libraryIndex) members.add(n);
  });
  return members;
}

/** Collects rewritten stacks, each distinct (frames and leaf line) once, summing their weights. */
function makeRewriter(table: StackTable) {
  const ids = new Map<string, number>();
  const start: number[] = [0];
  const frames: number[] = [];
  const weights: number[] = [];
  const leafLocation: number[] = [];
  return {
    /** The rewritten stack's id, or -1 when nothing is left of it. */
    add(kept: readonly number[], w: number, leaf: number): number {
      if (kept.length === 0) return -1; // nothing left of the stack: its samples leave the tree
      const key = `${leaf}|${kept.join(',')}`;
      let id = ids.get(key);
      if (id === undefined) {
        id = weights.length;
        ids.set(key, id);
        frames.push(...kept);
        start.push(frames.length);
        weights.push(0);
        leafLocation.push(leaf);
      }
      weights[id] += w;
      return id;
    },
    done(names: string[], map: Int32Array): TransformedStacks {
      const nameLocation = table.nameLocation ? Int32Array.from(names, (_, n) => (n < table.nameLocation!.length ? table.nameLocation![n] : -1)) : undefined;
      const nameLibrary = table.nameLibrary ? Int32Array.from(names, (_, n) => (n < table.nameLibrary!.length ? table.nameLibrary![n] : -1)) : undefined;
      return {
        table: {
          names,
          start: Uint32Array.from(start),
          frames: Int32Array.from(frames),
          ...(table.locations ? { locations: table.locations, leafLocation: Int32Array.from(leafLocation) } : {}),
          ...(nameLocation ? { nameLocation } : {}),
          ...(table.libraries && nameLibrary ? { libraries: table.libraries, nameLibrary } : {}),
        },
        weight: Float64Array.from(weights),
        map,
      };
    },
  };
}
