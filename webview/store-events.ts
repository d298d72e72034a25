// The events of every snapshot, each (kind, name) once, and the mapping of a batch's snapshot-local event indexes
// onto them. Pure (no DOM).

import type { EventInfo, EventKind } from '../shared/protocol';

export interface StoreEvent {
  readonly name: string;
  readonly kind: EventKind;
}

/** What mapping a snapshot's events needs of it: its local → store table (grown for events it did not announce) and counts. */
export interface EventMapping {
  /** Snapshot-local event index → store event index. */
  readonly eventMap: Map<number, number>;
  /** The same mapping as a typed table indexed by the local event index (-1: not announced), read per row. */
  eventTable: Int32Array;
  /** Rows received per store event index (missing: none). */
  readonly eventRows: number[];
}

/** The rows of a batch per local event index (every 16-bit one), all zero between two batches (StoreEvents.map). */
const EVENT_COUNTS = new Uint32Array(65536);

export class StoreEvents {
  readonly events: StoreEvent[] = [];
  private readonly ids = new Map<string, number>();

  intern(e: EventInfo): number {
    const key = `${e.kind}\u0000${e.name}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.events.length;
      this.events.push({ name: e.name, kind: e.kind });
      this.ids.set(key, id);
    }
    return id;
  }

  /** A snapshot's announced events: local index → store index, as a map and as a typed table. */
  announce(events: readonly EventInfo[]): { eventMap: Map<number, number>; eventTable: Int32Array } {
    const eventMap = new Map<number, number>();
    for (const e of events) eventMap.set(e.index, this.intern(e));
    let eventTableSize = 0;
    for (const local of eventMap.keys()) eventTableSize = Math.max(eventTableSize, local + 1);
    const eventTable = new Int32Array(eventTableSize).fill(-1);
    for (const [local, id] of eventMap) eventTable[local] = id;
    return { eventMap, eventTable };
  }

  /**
   * Snapshot-local event indexes → store event indexes into `event` at `base` (a block copy when they are the same
   * numbers), and the snapshot's rows per event: counted per local index in one pass, then added per event, not per row.
   */
  map(snap: EventMapping, localEvent: Uint16Array, event: Uint16Array, base: number): void {
    // Counted into a table of every 16-bit index (no bounds check a row: this loop runs cold on a big capture's batches),
    // zeroed again up to the highest index seen once they are added up below.
    const localCounts = EVENT_COUNTS;
    const maxLocal = countEvents(localEvent, localCounts);
    try {
      let table = snap.eventTable;
      let identity = maxLocal < table.length;
      for (let e = 0; identity && e <= maxLocal; e++) if (localCounts[e] > 0 && table[e] !== e) identity = false;
      if (identity) {
        event.set(localEvent, base);
      } else {
        if (maxLocal >= table.length) {
          const grown = new Int32Array(maxLocal + 1).fill(-1);
          grown.set(table);
          table = snap.eventTable = grown;
        }
        for (let local = 0; local <= maxLocal; local++) {
          if (localCounts[local] === 0 || table[local] >= 0) continue;
          // An event the snapshot did not announce: intern a placeholder name once and remember it.
          table[local] = this.intern({ index: local, name: `event ${local}`, kind: 'other' });
          snap.eventMap.set(local, table[local]);
        }
        mapEvents(localEvent, table, event, base);
      }
      const counts = snap.eventRows;
      for (let local = 0; local <= maxLocal; local++) {
        if (localCounts[local] > 0) counts[table[local]] = (counts[table[local]] ?? 0) + localCounts[local];
      }
    } finally {
      localCounts.fill(0, 0, maxLocal + 1);
    }
  }
}

// The per-row loops of map, each alone in a function: V8 compiles a long loop on its first run (on-stack replacement)
// before the code after it has run, and each later batch re-entering that compiled loop fell back to the interpreter at
// the first property read after it (map did so on 15 of a million-row capture's 16 batches).

/**
 * Adds each row's event to `counts` (by local index); returns the highest index seen. Rows of one event come in runs:
 * a run is added once it ends, so the loop's work per row is a comparison (a count written per row made each row
 * wait for the previous row's write: 4.4 against 2.3 ns a row on the bench's VM).
 */
function countEvents(localEvent: Uint16Array, counts: Uint32Array): number {
  const n = localEvent.length;
  if (n === 0) return 0;
  let maxLocal = 0;
  let current = localEvent[0];
  let runStart = 0;
  for (let i = 1; i < n; i++) {
    const e = localEvent[i];
    if (e === current) continue;
    counts[current] += i - runStart;
    if (current > maxLocal) maxLocal = current;
    current = e;
    runStart = i;
  }
  counts[current] += n - runStart;
  return current > maxLocal ? current : maxLocal;
}

/** event[base + i] = table[localEvent[i]] for every row. */
function mapEvents(localEvent: Uint16Array, table: Int32Array, event: Uint16Array, base: number): void {
  for (let i = 0; i < localEvent.length; i++) event[base + i] = table[localEvent[i]];
}
