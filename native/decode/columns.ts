// A snapshot's rings → one set of typed-array columns, oldest first, merged across rings by time,
// with each ring's coverage facts and the anomalies found. With two or more flight-recorder rings,
// they are keyed and each row is decoded once, straight into its merged place: the scatter plan
// (scatter-plan.ts), executed here on this thread; DecodePool executes the same plan on several.
// Otherwise, or with `scatter: false`, each ring is decoded on its own (decode-ring.ts), then the
// rings' rows are put on one time axis and merged (assemble.ts, merge.ts). Both give the same
// columns byte for byte.
//
// Times: each ring's rows hold times relative to that ring's own base. The origin is the smallest
// time seen; a ring whose base differs is shifted onto it while merging (or in one pass when it is
// the only ring with rows). Every value stays an exact integer while the snapshot spans less than
// 2^53 ns (104 days), so the columns do not depend on which base each ring chose.

import { FRESH_SETS, eventTables } from './decode-ring';
import { decodeRingByRing, type SnapshotInput } from './assemble';
import { decodeScattered } from './scatter-plan';
import type { SetSource } from './column-set';
import type { DecodedSnapshot } from './types';
import type { RawSnapshot } from '../abi/snapshot';
import type { ColumnArena } from './arena';

export interface DecodeOptions {
  /**
   * Take column memory from this arena (see arena.ts) instead of allocating it: the result's
   * columns then belong to the caller until it hands them back with arena.recycle().
   */
  readonly arena?: ColumnArena;
  /**
   * With two or more flight-recorder rings, key them and write each row once at its merged place
   * (scatter.ts; default true), or false: decode each ring into rows of its own, then merge them
   * (every row written twice; the path before, kept as a referee for tests and the bench).
   */
  readonly scatter?: boolean;
}

/** Decodes every ring of a snapshot into columns (oldest first), coverage facts and anomalies. */
export function decodeSnapshot(raw: RawSnapshot | SnapshotInput, options: DecodeOptions = {}): DecodedSnapshot {
  const arena = options.arena;
  arena?.beginSnapshot();
  const sets: SetSource = arena ?? FRESH_SETS;
  const tables = eventTables(raw.events);
  if (options.scatter !== false) {
    const scattered = decodeScattered(raw, tables, sets, arena);
    if (scattered) return scattered;
  }
  return decodeRingByRing(raw, tables, sets, arena);
}
