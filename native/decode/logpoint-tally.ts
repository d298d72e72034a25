// What a snapshot's logpoint hits add up to, per logpoint and variable: the hit count, the last
// value, and each distinct value with how often it was seen. The CLI prints it after a snapshot and
// the editor shows it at the line. Pure: counts the value ids of the columns a host read the hits into
// (LogpointColumnsView), or, without such a host, the records whose values a host has filled in. From
// columns, a value's text is written only where it is shown: the last value, and the distinct values a
// summary lists (values kept by their bytes are counted by their bytes, see LogpointColumns).

import { RecordType } from '../abi/uapi';
import { decodeRecordAt } from './record';
import { NO_VALUE, type DecodedSnapshot, type LogpointColumnsView } from './types';

export interface VariableTally {
  /** The value at the newest hit. */
  readonly last: string;
  /** How many distinct values (texts) it took. */
  readonly distinctCount: number;
  /** The first `limit` (all by default) distinct values with their number of hits, in order of first appearance. */
  distinct(limit?: number): Array<[value: string, hits: number]>;
}

export interface LogpointTally {
  /** The event (log:FILE:LINE[:NAME,...]). */
  readonly event: string;
  readonly eventIndex: number;
  hits: number;
  readonly variables: Map<string, VariableTally>;
  /** The last reason a hit had no values (no DWARF at the pc...), if any hit had one. */
  error?: string;
  /** Per variable some hit read as <not captured> for a reason the value cannot say (the red zone): the reason. */
  readonly notCaptured: Map<string, string>;
}

/** The tallies of every event `isLogpoint` accepts, in event order; rows oldest first, so `last` is the newest hit. */
export function tallyLogpoints(snapshot: DecodedSnapshot, isLogpoint: (eventName: string) => boolean): LogpointTally[] {
  const tallies = new Map<number, LogpointTally>();
  for (const event of snapshot.events)
    if (isLogpoint(event.name)) tallies.set(event.index, { event: event.name, eventIndex: event.index, hits: 0, variables: new Map(), notCaptured: new Map() });
  if (tallies.size === 0) return [];
  const { kind, event, length } = snapshot.columns;
  const read = snapshot.logpointColumns;
  if (read) {
    const rows = new Map<number, number[]>([...tallies.keys()].map((index) => [index, []]));
    for (let row = 0; row < length; row++) if (kind[row] === RecordType.SAMPLE) rows.get(event[row])?.push(row);
    for (const description of snapshot.events) {
      const tally = tallies.get(description.index);
      if (tally) addColumns(tally, read(snapshot, description, rows.get(description.index)!));
    }
    return [...tallies.values()];
  }
  // Per event, per variable: its last text and its distinct texts with their counts.
  const seenByEvent = new Map<number, Map<string, { last: string; distinct: Map<string, number> }>>();
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE) continue;
    const tally = tallies.get(event[row]);
    if (!tally) continue;
    tally.hits++;
    let fields: Readonly<Record<string, unknown>>;
    try {
      fields = decodeRecordAt(snapshot, row).fields;
    } catch (error) {
      tally.error = (error as Error).message;
      continue;
    }
    if (typeof fields.error === 'string') tally.error = fields.error;
    const why = fields.notCaptured as Readonly<Record<string, string>> | undefined;
    for (const [name, reason] of Object.entries(why ?? {})) tally.notCaptured.set(name, reason);
    const values = fields.values as Readonly<Record<string, string>> | undefined;
    let seen = seenByEvent.get(event[row]);
    if (!seen) seenByEvent.set(event[row], (seen = new Map()));
    for (const [name, value] of Object.entries(values ?? {})) {
      let variable = seen.get(name);
      if (!variable) seen.set(name, (variable = { last: value, distinct: new Map() }));
      variable.last = value;
      variable.distinct.set(value, (variable.distinct.get(value) ?? 0) + 1);
    }
  }
  for (const [index, seen] of seenByEvent) for (const [name, { last, distinct }] of seen) tallies.get(index)!.variables.set(name, tallyOfTexts(last, distinct));
  return [...tallies.values()];
}

/** A variable's tally from its last text and its distinct texts with their counts, in order of first appearance. */
function tallyOfTexts(last: string, distinct: ReadonlyMap<string, number>): VariableTally {
  return { last, distinctCount: distinct.size, distinct: (limit = Infinity) => [...distinct].slice(0, limit) };
}

/**
 * Adds hits read as columns to a tally, as the records would add them one by one: per variable the text of its
 * newest hit and its distinct values in order of first appearance with their counts, counted by value id. Where a
 * column's ids are its texts one to one (LogpointColumnsView.sameIdSameText), only the texts shown are written;
 * elsewhere every distinct id's text is, and ids of one text add up.
 */
function addColumns(tally: LogpointTally, hits: LogpointColumnsView): void {
  tally.hits += hits.length;
  for (const [, error] of hits.errors) tally.error = error; // the newest
  for (const [, why] of hits.notCaptured) for (const [name, reason] of Object.entries(why)) tally.notCaptured.set(name, reason);
  // Variables in the order the hits first name them (a column's first hit, then its place among that hit's names).
  const firstRow = hits.columns.map((ids) => ids.findIndex((id) => id !== NO_VALUE));
  const order = hits.names.map((_, column) => column).filter((column) => firstRow[column] >= 0);
  order.sort((a, b) => firstRow[a] - firstRow[b] || a - b);
  const counts = new Int32Array(hits.idCount);
  for (const column of order) {
    const ids = hits.columns[column];
    const seen: number[] = [];
    let last = NO_VALUE;
    for (let row = 0; row < hits.length; row++) {
      const id = ids[row];
      if (id === NO_VALUE) continue;
      if (counts[id]++ === 0) seen.push(id);
      last = id;
    }
    const seenCounts = Int32Array.from(seen, (id) => counts[id]);
    for (const id of seen) counts[id] = 0;
    const lastText = hits.textOf(last);
    if (hits.sameIdSameText(column)) {
      tally.variables.set(hits.names[column], {
        last: lastText,
        distinctCount: seen.length,
        distinct: (limit = Infinity) => seen.slice(0, limit).map((id, i) => [hits.textOf(id), seenCounts[i]]),
      });
    } else {
      const distinct = new Map<string, number>();
      seen.forEach((id, i) => {
        const text = hits.textOf(id);
        distinct.set(text, (distinct.get(text) ?? 0) + seenCounts[i]);
      });
      tally.variables.set(hits.names[column], tallyOfTexts(lastText, distinct));
    }
  }
}

/** How many distinct values a summary names before it only counts them. */
export const DISTINCT_SHOWN = 5;

/** One variable in a line: `i = 7 (10 distinct: 0 ×1, 1 ×1, ...)` or `mode = RUN (always)`. */
export function describeVariable(name: string, variable: VariableTally): string {
  const count = variable.distinctCount;
  if (count === 1) return `${name} = ${variable.last} (always)`;
  const shown = variable.distinct(DISTINCT_SHOWN).map(([value, hits]) => `${value} ×${hits}`);
  const more = count > DISTINCT_SHOWN ? `, ${count - DISTINCT_SHOWN} more` : '';
  return `${name} = ${variable.last} (${count} distinct: ${shown.join(', ')}${more})`;
}

/** The lines a summary prints for one logpoint. */
export function describeLogpointTally(tally: LogpointTally): string[] {
  const lines = [`${tally.event}: ${tally.hits} hit${tally.hits === 1 ? '' : 's'}${tally.hits > 0 ? '; last value, then distinct values' : ''}`];
  for (const [name, variable] of tally.variables) lines.push(`  ${describeVariable(name, variable)}`);
  if (tally.error) lines.push(`  no values: ${tally.error}`);
  lines.push(...notCapturedLines(tally).map((line) => `  ${line}`));
  return lines;
}

/** `NAME <not captured>: why`, per variable a hit could not read for a reason its value does not say. */
export function notCapturedLines(tally: LogpointTally): string[] {
  return [...tally.notCaptured].map(([name, reason]) => `${name} <not captured>: ${reason}`);
}

/**
 * What the editor writes after a logged line: the hit count, then each variable's last value and how
 * many distinct values it took, cut to `maxLength` characters (the hover has the rest).
 */
export function logpointInlineText(tally: LogpointTally, maxLength = 160): string {
  if (tally.hits === 0) return 'log: no hits in the last snapshot';
  const parts = [`${tally.hits} hit${tally.hits === 1 ? '' : 's'}`];
  for (const [name, variable] of tally.variables) {
    parts.push(`${name} = ${variable.last}${variable.distinctCount > 1 ? ` (${variable.distinctCount} distinct)` : ''}`);
  }
  if (tally.variables.size === 0 && tally.error) parts.push(`no values: ${tally.error}`);
  const text = `log: ${parts.join(' · ')}`;
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
