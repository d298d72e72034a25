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
  private readonly stackIds = new Map<string, number>();
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
    for (let s = 0; s + 1 < stacks.start.length; s++) {
      const frames = stacks.frames.slice(stacks.start[s], stacks.start[s + 1]).map((f) => nameMap[f]);
      const leaf = stacks.leafLocation && stacks.leafLocation[s] >= 0 ? locationMap[stacks.leafLocation[s]] : -1;
      const key = `${leaf}|${frames.join(',')}`;
      let id = this.stackIds.get(key);
      if (id === undefined) {
        id = this.starts.length - 1;
        this.stackIds.set(key, id);
        this.frames.push(...frames);
        this.starts.push(this.frames.length);
        this.leafLocation.push(leaf);
      }
      map[s] = id;
    }
    return map;
  }
}
