// The value lane of a logpoint (issue 38): its hits on the timeline with the values they recorded, as a step plot of each
// numeric variable (scaled to its own range over the hits read) and, for the others, a tick labelled with the value.
// The values are the host's: a logpoint hit's details carry them (`fields.values`, name -> the value as gdb prints it),
// the same reply the details drawer shows, asked for per hit (the offline page answers from the details it embeds).
// Hover names the hit's values. Pure parts (parsing, series) are kept apart from the drawing and the requests.

import type { RecordDetails } from '../shared/protocol';

/** Whether an event is a logpoint (`log:FILE:LINE[:NAME,...]`, as `ringside capture -e` and the gutter name them). */
export function isLogpointEvent(name: string): boolean {
  return name.startsWith('log:');
}

/** At most this many hits of one lane have their values asked for (each is one request to the host). */
export const VALUE_HITS_MAX = 2000;

/** One hit's values: name -> value text (as gdb prints it), in the order the host gave them. */
export type HitValues = ReadonlyMap<string, string>;

/** The values a hit's details carry (empty: none, e.g. `<not captured>` everywhere still counts as values). */
export function valuesOfDetails(details: RecordDetails): HitValues {
  const out = new Map<string, string>();
  const values = details.fields.values;
  if (values !== null && typeof values === 'object' && !Array.isArray(values)) {
    for (const [name, value] of Object.entries(values)) out.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return out;
}

/**
 * A value as a number when gdb prints it as one: an integer, a float, a hex pointer or integer, a char (`97 'a'`), a bool;
 * null for anything else (a string, a struct, an enumerator, `<optimized out>`).
 */
export function numericValue(text: string): number | null {
  const t = text.trim();
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return Number(t);
  if (/^0x[0-9a-f]+$/i.test(t)) return Number.parseInt(t.slice(2), 16);
  const char = /^(-?\d+) '(?:[^'\\]|\\.+)'$/.exec(t);
  if (char) return Number(char[1]);
  if (t === 'true') return 1;
  if (t === 'false') return 0;
  return null;
}

/** The hits of a value lane with their values as read so far, sorted by time. */
export interface ValueSeries {
  /** The variables in the order first seen; `numeric` ones draw as step plots, the others as labelled ticks. */
  readonly names: readonly string[];
  readonly numeric: readonly boolean[];
  /** Per numeric variable: its smallest and largest value over the hits. */
  readonly min: readonly number[];
  readonly max: readonly number[];
  /** Per hit (lane row order): its time and values (undefined: not read yet, or past VALUE_HITS_MAX). */
  readonly time: Float64Array;
  readonly values: readonly (HitValues | undefined)[];
  /** Hits whose values are known. */
  readonly known: number;
  /** The variable whose values label the ticks: the first non-numeric one that changes (else the first non-numeric); -1: none. */
  readonly labelled: number;
}

/** A value as its label shows it: a char pointer's string rather than its address (`0x4006f4 "beta"` → `"beta"`). */
export function labelText(text: string): string {
  const pointed = /^0x[0-9a-f]+ (".*")$/i.exec(text);
  return pointed ? pointed[1] : text;
}

/** The series of a lane's hits (`times` sorted) from the values read: a variable is numeric when every known value of it is. */
export function valueSeries(times: Float64Array, values: readonly (HitValues | undefined)[]): ValueSeries {
  const names: string[] = [];
  const index = new Map<string, number>();
  const numeric: boolean[] = [];
  const min: number[] = [];
  const max: number[] = [];
  const first: (string | undefined)[] = [];
  const changes: boolean[] = [];
  let known = 0;
  for (const hit of values) {
    if (!hit) continue;
    known++;
    for (const [name, text] of hit) {
      let i = index.get(name);
      if (i === undefined) {
        i = names.length;
        index.set(name, i);
        names.push(name);
        numeric.push(true);
        min.push(Infinity);
        max.push(-Infinity);
        first.push(text);
        changes.push(false);
      }
      if (text !== first[i]) changes[i] = true;
      const v = numericValue(text);
      if (v === null) numeric[i] = false;
      else {
        if (v < min[i]) min[i] = v;
        if (v > max[i]) max[i] = v;
      }
    }
  }
  let labelled = names.findIndex((_, i) => !numeric[i] && changes[i]);
  if (labelled < 0) labelled = numeric.indexOf(false);
  return { names, numeric, min, max, time: times, values, known, labelled };
}

/** The lines a hovered hit shows: each variable as `name = value` (the host's error when it read none). */
export function describeHitValues(values: HitValues | undefined, error?: string): string[] {
  if (error) return [`values: ${error}`];
  if (!values) return ['values: asking the host…'];
  if (values.size === 0) return ['no values recorded'];
  return [...values].map(([name, value]) => `${name} = ${value}`);
}

export interface ValueLaneStyle {
  readonly palette: readonly string[];
  readonly foreground: string;
}

/**
 * A value lane on `ctx` (device pixels) over [t0, t1]: each numeric variable as a step line (its value holds until the
 * next hit) in a palette colour, scaled to its own range within [y, y + height); every hit a short tick at the bottom,
 * and where there is room, the first non-numeric variable's value as a label after it.
 */
export function drawValueLane(
  ctx: CanvasRenderingContext2D,
  series: ValueSeries,
  first: number,
  end: number,
  t0: number,
  t1: number,
  width: number,
  y: number,
  height: number,
  dpr: number,
  style: ValueLaneStyle,
): void {
  const pxPerNs = width / (t1 - t0);
  const xOf = (t: number) => (t - t0) * pxPerNs;
  const top = y + 2 * dpr;
  const plot = Math.max(1, height - 6 * dpr);
  ctx.lineWidth = Math.max(1, Math.round(1.5 * dpr));
  // The step lines start at the hit before the window (its value holds into it) and end at the one after.
  const from = Math.max(0, first - 1);
  const to = Math.min(series.values.length, end + 1);
  series.names.forEach((name, v) => {
    if (!series.numeric[v] || !(series.max[v] >= series.min[v])) return;
    const range = series.max[v] - series.min[v];
    const yOf = (value: number) => top + plot - (range > 0 ? ((value - series.min[v]) / range) * plot : plot / 2);
    ctx.strokeStyle = style.palette[v % style.palette.length];
    ctx.beginPath();
    let open = false;
    let lastY = 0;
    for (let i = from; i < to; i++) {
      const text = series.values[i]?.get(name);
      const value = text === undefined ? null : numericValue(text);
      const x = Math.min(width, Math.max(0, xOf(series.time[i])));
      if (value === null) {
        // Unknown here: the line stops (it is not drawn through a hit whose value was not read).
        open = false;
        continue;
      }
      const yv = yOf(value);
      if (!open) ctx.moveTo(x, yv);
      else {
        ctx.lineTo(x, lastY);
        ctx.lineTo(x, yv);
      }
      open = true;
      lastY = yv;
    }
    if (open && to === series.values.length) ctx.lineTo(Math.min(width, xOf(series.time[to - 1]) + 4 * dpr), lastY);
    ctx.stroke();
  });
  // Ticks, and labels for the first non-numeric variable where they fit.
  const labelled = series.labelled;
  ctx.fillStyle = style.foreground;
  ctx.font = `${Math.round(10 * dpr)}px sans-serif`;
  ctx.textBaseline = 'middle';
  const charWidth = 6 * dpr;
  let lastPx = -Infinity;
  let labelEnd = -Infinity;
  for (let i = first; i < end; i++) {
    const x = Math.floor(xOf(series.time[i]));
    if (x !== lastPx) ctx.fillRect(x, y + height - 4 * dpr, Math.max(1, Math.round(dpr)), 4 * dpr);
    lastPx = x;
    if (labelled < 0 || x < labelEnd) continue;
    const value = series.values[i]?.get(series.names[labelled]);
    if (value === undefined) continue;
    const text = labelText(value);
    const next = i + 1 < end ? xOf(series.time[i + 1]) : width;
    const chars = Math.floor((next - x - 4 * dpr) / charWidth);
    if (chars < 3) continue;
    const shown = text.length <= chars ? text : `${text.slice(0, chars - 1)}…`;
    ctx.fillText(shown, x + 2 * dpr, top + plot / 2);
    labelEnd = x + (shown.length + 1) * charWidth;
  }
}

/**
 * The values of the logpoint hits shown: asked of the host per hit (detailsRequest, the drawer's own request) the first
 * time a value lane of them is drawn, at most VALUE_HITS_MAX per lane, kept per snapshot and row.
 */
export class HitValueStore {
  private readonly values = new Map<string, HitValues>();
  private readonly errors = new Map<string, string>();
  private readonly pending = new Map<number, string>();
  /** The store rows already asked for (or answered). */
  private readonly asked = new Set<string>();
  /** Counts the answers: what was drawn from fewer answers is stale. */
  version = 0;

  constructor(
    private readonly request: (snapshotId: string, localRow: number) => number,
    private readonly changed: () => void,
  ) {}

  private static key(snapshotId: string, localRow: number): string {
    return `${snapshotId}:${localRow}`;
  }

  /** A hit's values (undefined: not read yet), asking the host for them the first time. */
  valuesOf(snapshotId: string, localRow: number, ask = true): HitValues | undefined {
    const key = HitValueStore.key(snapshotId, localRow);
    const known = this.values.get(key);
    if (known || !ask || this.asked.has(key)) return known;
    this.asked.add(key);
    this.pending.set(this.request(snapshotId, localRow), key);
    return undefined;
  }

  /** Why a hit has no values (the host's error), or undefined. */
  errorOf(snapshotId: string, localRow: number): string | undefined {
    return this.errors.get(HitValueStore.key(snapshotId, localRow));
  }

  /** True when `replyTo` answers one of this store's requests. */
  owns(replyTo: number): boolean {
    return this.pending.has(replyTo);
  }

  /** The host's answer to one of this store's requests. */
  reply(replyTo: number, details: RecordDetails | undefined, error: string | undefined): void {
    const key = this.pending.get(replyTo);
    if (key === undefined) return;
    this.pending.delete(replyTo);
    if (details) this.values.set(key, valuesOfDetails(details));
    else this.errors.set(key, error ?? 'no details');
    this.version++;
    // One redraw for a burst of answers: the caller schedules a frame (the scheduler merges them).
    this.changed();
  }
}
