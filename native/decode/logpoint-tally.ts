// What a snapshot's logpoint hits add up to, per logpoint and variable: the hit count, the last
// value, and each distinct value with how often it was seen. The CLI prints it after a snapshot and
// the editor shows it at the line. Pure: counts the text ids of the columns a host read the hits into
// (LogpointColumnsView), or, without such a host, the records whose values a host has filled in.

import { RecordType } from '../abi/uapi';
import { decodeRecordAt } from './record';
import type { DecodedSnapshot, LogpointColumnsView } from './types';

export interface VariableTally {
  /** The value at the newest hit. */
  last: string;
  /** Each distinct value and its number of hits, in order of first appearance. */
  readonly distinct: Map<string, number>;
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
    for (const [name, value] of Object.entries(values ?? {})) {
      let variable = tally.variables.get(name);
      if (!variable) tally.variables.set(name, (variable = { last: value, distinct: new Map() }));
      variable.last = value;
      variable.distinct.set(value, (variable.distinct.get(value) ?? 0) + 1);
    }
  }
  return [...tallies.values()];
}

/**
 * Adds hits read as columns to a tally, as the records would add them one by one: per variable the text of its
 * newest hit and its distinct texts in order of first appearance with their counts, counted by text id.
 */
function addColumns(tally: LogpointTally, hits: LogpointColumnsView): void {
  tally.hits += hits.length;
  for (const [, error] of hits.errors) tally.error = error; // the newest
  for (const [, why] of hits.notCaptured) for (const [name, reason] of Object.entries(why)) tally.notCaptured.set(name, reason);
  // Variables in the order the hits first name them (a column's first hit, then its place among that hit's names).
  const firstRow = hits.columns.map((ids) => ids.findIndex((id) => id >= 0));
  const order = hits.names.map((_, column) => column).filter((column) => firstRow[column] >= 0);
  order.sort((a, b) => firstRow[a] - firstRow[b] || a - b);
  const counts = new Int32Array(hits.texts.length);
  for (const column of order) {
    const ids = hits.columns[column];
    const seen: number[] = [];
    let last = -1;
    for (let row = 0; row < hits.length; row++) {
      const id = ids[row];
      if (id < 0) continue;
      if (counts[id]++ === 0) seen.push(id);
      last = id;
    }
    const name = hits.names[column];
    let variable = tally.variables.get(name);
    if (!variable) tally.variables.set(name, (variable = { last: hits.texts[last], distinct: new Map() }));
    variable.last = hits.texts[last];
    for (const id of seen) {
      const text = hits.texts[id];
      variable.distinct.set(text, (variable.distinct.get(text) ?? 0) + counts[id]);
      counts[id] = 0;
    }
  }
}

/** How many distinct values a summary names before it only counts them. */
export const DISTINCT_SHOWN = 5;

/** One variable in a line: `i = 7 (10 distinct: 0 ×1, 1 ×1, ...)` or `mode = RUN (always)`. */
export function describeVariable(name: string, variable: VariableTally): string {
  if (variable.distinct.size === 1) return `${name} = ${variable.last} (always)`;
  const shown = [...variable.distinct].slice(0, DISTINCT_SHOWN).map(([value, count]) => `${value} ×${count}`);
  const more = variable.distinct.size > DISTINCT_SHOWN ? `, ${variable.distinct.size - DISTINCT_SHOWN} more` : '';
  return `${name} = ${variable.last} (${variable.distinct.size} distinct: ${shown.join(', ')}${more})`;
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
    parts.push(`${name} = ${variable.last}${variable.distinct.size > 1 ? ` (${variable.distinct.size} distinct)` : ''}`);
  }
  if (tally.variables.size === 0 && tally.error) parts.push(`no values: ${tally.error}`);
  const text = `log: ${parts.join(' · ')}`;
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
