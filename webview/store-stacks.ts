// Every snapshot's sampled stacks, each distinct stack once, function names, source lines and libraries interned
// once across snapshots: a snapshot's stacks are mapped onto these ids as it begins. Stacks never change once
// interned. Pure (no DOM).

import type { SnapshotStart } from '../shared/protocol';
import type { SourceLocation, StackTable } from '../shared/stacks';

export class StackInterner {
  private readonly names: string[] = [];
  private readonly nameIds = new Map<string, number>();
  private readonly starts: number[] = [0];
  private readonly frames: number[] = [];
  /**
   * Stack ids by a hash of their frames and leaf line; a hash shared by several stacks holds them all (told apart
   * frame by frame). A string key per stack (its frames joined) made interning a capture's 4,096 20-frame stacks a
   * tenth of its first paint.
   */
  private readonly stacksByHash = new Map<number, number | number[]>();
  /** Source lines of the stacks (leaf line per stack, entry line per name), interned across snapshots; -1 unknown. */
  private readonly locations: SourceLocation[] = [];
  private readonly locationIds = new Map<string, number>();
  private readonly leafLocation: number[] = [];
  private readonly nameLocation: number[] = [];
  /** The object files of the functions (perf's dso), interned across snapshots; per name its library, -1 unknown. */
  private readonly libraries: string[] = [];
  private readonly libraryIds = new Map<string, number>();
  private readonly nameLibrary: number[] = [];
  private cache: StackTable | null = null;
  /** Per stack id, its function names (filled as the filter asks). */
  private readonly functionLists: (readonly string[] | undefined)[] = [];

  /** The function names of stack `id`, leaf first (empty: no such stack); one list per distinct stack. */
  functionsOf(id: number): readonly string[] {
    if (id < 0 || id + 1 >= this.starts.length) return [];
    const known = this.functionLists[id];
    if (known) return known;
    const names: string[] = [];
    for (let f = this.starts[id]; f < this.starts[id + 1]; f++) names.push(this.names[this.frames[f]]);
    this.functionLists[id] = names;
    return names;
  }

  /** All stacks interned so far, as the call tree reads them. */
  table(): StackTable {
    if (
      !this.cache ||
      this.cache.start.length !== this.starts.length ||
      (this.cache.libraries?.length ?? 0) !== this.libraries.length ||
      (this.cache.nameLibrary?.length ?? 0) !== (this.libraries.length ? this.names.length : 0)
    ) {
      this.cache = {
        names: this.names,
        start: Uint32Array.from(this.starts),
        frames: Int32Array.from(this.frames),
        ...(this.libraries.length
          ? {
              libraries: this.libraries,
              nameLibrary: Int32Array.from(this.names, (_, n) => this.nameLibrary[n] ?? -1),
            }
          : {}),
        ...(this.locations.length
          ? {
              locations: this.locations,
              leafLocation: Int32Array.from(this.leafLocation),
              nameLocation: Int32Array.from(this.names, (_, n) => this.nameLocation[n] ?? -1),
            }
          : {}),
      };
    }
    return this.cache;
  }

  /** A snapshot's stacks interned: its local stack id → store stack id. */
  intern(stacks: NonNullable<SnapshotStart['stacks']>): Int32Array {
    const nameMap = stacks.names.map((name) => {
      let id = this.nameIds.get(name);
      if (id === undefined) {
        id = this.names.length;
        this.names.push(name);
        this.nameIds.set(name, id);
      }
      return id;
    });
    const locationMap = (stacks.locations ?? []).map((l) => {
      const key = `${l.line}:${l.file}`;
      let id = this.locationIds.get(key);
      if (id === undefined) {
        id = this.locations.length;
        this.locations.push({ file: l.file, line: l.line });
        this.locationIds.set(key, id);
      }
      return id;
    });
    stacks.nameLibrary?.forEach((l, n) => {
      const library = stacks.libraries?.[l];
      if (library === undefined || (this.nameLibrary[nameMap[n]] ?? -1) >= 0) return;
      let id = this.libraryIds.get(library);
      if (id === undefined) {
        id = this.libraries.length;
        this.libraries.push(library);
        this.libraryIds.set(library, id);
      }
      this.nameLibrary[nameMap[n]] = id;
    });
    stacks.nameLocation?.forEach((l, n) => {
      if (l >= 0 && (this.nameLocation[nameMap[n]] ?? -1) < 0) this.nameLocation[nameMap[n]] = locationMap[l];
    });
    const map = new Int32Array(stacks.start.length - 1);
    const { start, frames } = stacks;
    for (let s = 0; s + 1 < start.length; s++) {
      const from = start[s];
      const to = start[s + 1];
      const leaf = stacks.leafLocation && stacks.leafLocation[s] >= 0 ? locationMap[stacks.leafLocation[s]] : -1;
      let hash = Math.imul(leaf + 1, 0x9e3779b1) ^ (to - from);
      for (let f = from; f < to; f++) hash = (Math.imul(hash ^ nameMap[frames[f]], 0x85ebca6b) + 0x1b873593) | 0;
      const bucket = this.stacksByHash.get(hash);
      let id = -1;
      if (typeof bucket === 'number') {
        if (this.isStack(bucket, nameMap, frames, from, to, leaf)) id = bucket;
      } else if (bucket !== undefined) {
        for (const candidate of bucket) if (this.isStack(candidate, nameMap, frames, from, to, leaf)) id = candidate;
      }
      if (id < 0) {
        id = this.starts.length - 1;
        for (let f = from; f < to; f++) this.frames.push(nameMap[frames[f]]);
        this.starts.push(this.frames.length);
        this.leafLocation.push(leaf);
        if (bucket === undefined) this.stacksByHash.set(hash, id);
        else if (typeof bucket === 'number') this.stacksByHash.set(hash, [bucket, id]);
        else bucket.push(id);
      }
      map[s] = id;
    }
    return map;
  }

  /** Whether interned stack `id` is the frames [from, to) of a snapshot's stacks (its names mapped by nameMap) with that leaf line. */
  private isStack(id: number, nameMap: readonly number[], frames: ArrayLike<number>, from: number, to: number, leaf: number): boolean {
    const at = this.starts[id];
    if (this.starts[id + 1] - at !== to - from || this.leafLocation[id] !== leaf) return false;
    for (let f = from; f < to; f++) if (this.frames[at + f - from] !== nameMap[frames[f]]) return false;
    return true;
  }
}
