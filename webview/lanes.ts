// Lane grouping: which lane each record belongs to (by CPU, by thread, or by event), plus one
// extra lane per hardware watchpoint/breakpoint event whatever the grouping. Each lane holds its
// row ids sorted by time so the renderer can cull and hit-test by bisection.

import type { EventKind, LaneGrouping } from './protocol';

export interface LaneSource {
  readonly length: number;
  readonly time: Float64Array;
  readonly event: Uint16Array;
  readonly pid: Int32Array;
  readonly tid: Int32Array;
  readonly cpu: Int32Array;
  readonly events: readonly { readonly name: string; readonly kind: EventKind }[];
  commOf(row: number): string;
}

export interface Lane {
  /** Stable key (for collapse state): `cpu:3`, `thread:1234`, `event:sched:sched_switch`, `watch:...`. */
  readonly key: string;
  readonly label: string;
  readonly kind: 'group' | 'watch';
  readonly rows: Uint32Array;
  collapsed: boolean;
}

/** Sort row ids by time, cheaply when they already are (the common case: rows arrive oldest first). */
export function sortRowsByTime(time: Float64Array, rows: Uint32Array): Uint32Array {
  for (let i = 1; i < rows.length; i++) {
    if (time[rows[i]] < time[rows[i - 1]]) return rows.sort((a, b) => time[a] - time[b] || a - b);
  }
  return rows;
}

interface Group { key: string; label: string; order: number; watch: boolean; count: number; rows?: Uint32Array; fill: number }

/**
 * Group rows into lanes. `include(row)` is the active filter; rows without a time are left out
 * (they cannot be placed). Lanes are ordered: watchpoints first, then by CPU number / pid,tid /
 * event index.
 */
export function buildLanes(src: LaneSource, grouping: LaneGrouping, include: (row: number) => boolean,
  collapsed: ReadonlySet<string>): Lane[] {
  const groupOf = new Int32Array(src.length).fill(-1);
  const watchOf = new Int32Array(src.length).fill(-1);
  const groups: Group[] = [];
  const byKey = new Map<string, number>();
  const intern = (key: string, label: string, order: number, watch = false): number => {
    let g = byKey.get(key);
    if (g === undefined) { g = groups.length; groups.push({ key, label, order, watch, count: 0, fill: 0 }); byKey.set(key, g); }
    return g;
  };
  for (let row = 0; row < src.length; row++) {
    if (Number.isNaN(src.time[row]) || !include(row)) continue;
    let g: number;
    switch (grouping) {
      case 'cpu': {
        const cpu = src.cpu[row];
        g = intern(`cpu:${cpu}`, cpu < 0 ? 'CPU ?' : `CPU ${cpu}`, cpu);
        break;
      }
      case 'thread': {
        const tid = src.tid[row];
        const comm = src.commOf(row);
        g = intern(`thread:${tid}`, `${comm === '' ? '?' : comm} ${tid}` + (src.pid[row] !== tid ? ` (pid ${src.pid[row]})` : ''),
          src.pid[row] * 4294967296 + tid);
        break;
      }
      case 'event': {
        const e = src.event[row];
        const isBreakpoint = src.events[e]?.kind === 'breakpoint';
        const name = src.events[e]?.name ?? `event ${e}`;
        g = intern(isBreakpoint ? `watch:${name}` : `event:${name}`, isBreakpoint ? `◆ ${name}` : name,
          isBreakpoint ? -1e18 + e : e, isBreakpoint);
        break;
      }
    }
    groupOf[row] = g;
    groups[g].count++;
    const ev = src.events[src.event[row]];
    if (ev && ev.kind === 'breakpoint' && grouping !== 'event') {
      const w = intern(`watch:${ev.name}`, `◆ ${ev.name}`, -1e18 + src.event[row], true);
      watchOf[row] = w;
      groups[w].count++;
    }
  }
  for (const g of groups) g.rows = new Uint32Array(g.count);
  for (let row = 0; row < src.length; row++) {
    const g = groupOf[row];
    if (g >= 0) { const group = groups[g]; group.rows![group.fill++] = row; }
    const w = watchOf[row];
    if (w >= 0) { const group = groups[w]; group.rows![group.fill++] = row; }
  }
  return groups
    .sort((a, b) => a.order - b.order || a.key.localeCompare(b.key))
    .map((g) => ({
      key: g.key,
      label: g.label,
      kind: g.watch ? 'watch' as const : 'group' as const,
      rows: sortRowsByTime(src.time, g.rows!),
      collapsed: collapsed.has(g.key),
    }));
}
