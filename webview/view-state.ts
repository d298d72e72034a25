// What the page remembers across reloads (vscode.setState, or the initial state a host embeds): the
// visible window, lane grouping, collapsed lanes, filter, follow mode, the time base and the details drawer's height. Page-only: the host passes it
// through as opaque JSON.

export type LaneGrouping = 'cpu' | 'thread' | 'event';

export interface PersistedViewState {
  /** Visible window in ns relative to `originNs`. */
  readonly window?: { readonly originNs: string; readonly start: number; readonly end: number };
  readonly grouping: LaneGrouping;
  readonly collapsed: readonly string[];
  readonly filter: string;
  readonly followLatest: boolean;
  /** Height of the details drawer, CSS pixels; absent: the default. */
  readonly drawerHeight?: number;
  /** Times shown as the perf clock instead of time since the capture's start; absent: off. */
  readonly perfClock?: boolean;
}

export function isViewState(v: unknown): v is PersistedViewState {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return (
    (s.grouping === 'cpu' || s.grouping === 'thread' || s.grouping === 'event') &&
    Array.isArray(s.collapsed) &&
    s.collapsed.every((k) => typeof k === 'string') &&
    typeof s.filter === 'string' &&
    typeof s.followLatest === 'boolean' &&
    (s.drawerHeight === undefined || (typeof s.drawerHeight === 'number' && Number.isFinite(s.drawerHeight))) &&
    (s.perfClock === undefined || typeof s.perfClock === 'boolean')
  );
}
