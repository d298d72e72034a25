// The search/filter box: space-separated terms, all of which must match (AND).
//   event:NAME  comm:NAME  sym:NAME  kind:NAME   substring, case-insensitive
//   stack:NAME  stack:=NAME                       a function of the sampled callchain contains (is) NAME, case-insensitive
//   pid:N  tid:N  cpu:N  misc:N                  exact number
//   ip:0xADDR                                    exact address (hex or decimal)
//   field.NAME=VALUE                              decoded field equals (numbers numerically, 0x-hex too)
//   field.NAME~TEXT                               decoded field contains, case-insensitive
//   WORD                                          substring of event, comm or symbol (a WORD with a colon is an error)
// Field terms are answered by the host (only it decodes records); see App.
// A leading '-' negates a term; "quoted values" may contain spaces.

import type { FieldFilterOp } from '../shared/protocol';

export type FilterKey = 'event' | 'comm' | 'sym' | 'stack' | 'kind' | 'pid' | 'tid' | 'cpu' | 'misc' | 'ip' | 'field' | 'any';

export interface FilterTerm {
  readonly key: FilterKey;
  readonly negate: boolean;
  /** Lower-cased text for substring keys; decimal digits for numbers; hex digits (no 0x) for ip. */
  readonly value: string;
  /** For key 'field': the decoded field's name and comparison; `value` is then kept as typed. */
  readonly field?: string;
  readonly op?: FieldFilterOp;
  /** For key 'stack': the whole function name must equal `value` (stack:=NAME), not only contain it. */
  readonly exact?: boolean;
}

/** A field term's identity (name, op, value), e.g. to cache the host's answer per snapshot. */
export function fieldTermKey(term: FilterTerm): string {
  return `${term.field ?? ''}${term.op ?? ''}${term.value}`;
}

export type ParsedFilter = { readonly ok: true; readonly terms: readonly FilterTerm[] } | { readonly ok: false; readonly error: string };

const TEXT_KEYS: ReadonlySet<string> = new Set(['event', 'comm', 'sym', 'symbol', 'stack', 'kind']);
const NUMBER_KEYS: ReadonlySet<string> = new Set(['pid', 'tid', 'cpu', 'misc']);
/** The keys a filter error offers: `event:, comm:, …, ip:` (`symbol:` is another name for `sym:`). */
const KNOWN_KEYS = [...TEXT_KEYS, ...NUMBER_KEYS, 'ip']
  .filter((k) => k !== 'symbol')
  .map((k) => `${k}:`)
  .join(', ');

function tokenize(text: string): string[] | string {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (i >= text.length) break;
    let token = '';
    while (i < text.length && !/\s/.test(text[i])) {
      if (text[i] === '"') {
        const close = text.indexOf('"', i + 1);
        if (close < 0) return `unterminated quote at column ${i + 1}`;
        token += text.slice(i + 1, close);
        i = close + 1;
      } else {
        token += text[i++];
      }
    }
    tokens.push(token);
  }
  return tokens;
}

export function parseFilter(text: string): ParsedFilter {
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return { ok: false, error: tokens };
  const terms: FilterTerm[] = [];
  for (const raw of tokens) {
    const negate = raw.startsWith('-') && raw.length > 1;
    const token = negate ? raw.slice(1) : raw;
    if (/^field\./i.test(token)) {
      const m = /^field\.([A-Za-z_][A-Za-z0-9_]*)([=~])([\s\S]*)$/i.exec(token);
      if (!m) return { ok: false, error: `field.NAME=VALUE or field.NAME~TEXT expected, got "${token}"` };
      if (m[3] === '') return { ok: false, error: `field.${m[1]}${m[2]} needs a value` };
      terms.push({ key: 'field', negate, value: m[3], field: m[1], op: m[2] as FieldFilterOp });
      continue;
    }
    const colon = token.indexOf(':');
    const maybeKey = colon > 0 ? token.slice(0, colon).toLowerCase() : '';
    if (colon > 0 && (TEXT_KEYS.has(maybeKey) || NUMBER_KEYS.has(maybeKey) || maybeKey === 'ip')) {
      const value = token.slice(colon + 1);
      if (value === '') return { ok: false, error: `${maybeKey}: needs a value` };
      if (NUMBER_KEYS.has(maybeKey)) {
        if (!/^-?\d+$/.test(value)) return { ok: false, error: `${maybeKey}: expects a number, got "${value}"` };
        terms.push({ key: maybeKey as FilterKey, negate, value: String(Number(value)) });
      } else if (maybeKey === 'ip') {
        let hex: string;
        if (/^0x[0-9a-f]+$/i.test(value)) hex = BigInt(value).toString(16);
        else if (/^\d+$/.test(value)) hex = BigInt(value).toString(16);
        else return { ok: false, error: `ip: expects 0xHEX or a decimal address, got "${value}"` };
        terms.push({ key: 'ip', negate, value: hex });
      } else if (maybeKey === 'stack' && value.startsWith('=')) {
        if (value === '=') return { ok: false, error: 'stack:= needs a function name' };
        terms.push({ key: 'stack', negate, value: value.slice(1).toLowerCase(), exact: true });
      } else {
        terms.push({ key: maybeKey === 'symbol' ? 'sym' : (maybeKey as FilterKey), negate, value: value.toLowerCase() });
      }
    } else if (colon > 0) {
      // A word with a colon is a key:value term; an unknown key would match nothing and hide every record.
      return {
        ok: false,
        error:
          `unknown key "${token.slice(0, colon)}:" in "${token}": use ${KNOWN_KEYS} or field.NAME= ` + `(an event name goes after event:, as event:${token})`,
      };
    } else {
      terms.push({ key: 'any', negate, value: token.toLowerCase() });
    }
  }
  return { ok: true, terms };
}

/** What a predicate needs to know about a row. */
export interface FilterSubject {
  eventName(row: number): string;
  comm(row: number): string;
  symbol(row: number): string | null;
  kindName(row: number): string;
  pid(row: number): number;
  tid(row: number): number;
  cpu(row: number): number;
  misc(row: number): number;
  /** Address as lower-case hex without 0x. */
  ipHex(row: number): string;
  /** Function names of the row's sampled callchain (none: no callchain); absent: stack terms match nothing. */
  stackFunctions?(row: number): readonly string[];
  /** Whether the row matches a field term (the host's answer); absent: field terms match nothing. */
  fieldMatches?(term: FilterTerm, row: number): boolean;
}

function matches(term: FilterTerm, s: FilterSubject, row: number): boolean {
  switch (term.key) {
    case 'event':
      return s.eventName(row).toLowerCase().includes(term.value);
    case 'comm':
      return s.comm(row).toLowerCase().includes(term.value);
    case 'sym':
      return (s.symbol(row) ?? '').toLowerCase().includes(term.value);
    case 'stack': {
      const wanted = (name: string) => (term.exact ? name.toLowerCase() === term.value : name.toLowerCase().includes(term.value));
      return (s.stackFunctions?.(row) ?? []).some(wanted);
    }
    case 'kind':
      return s.kindName(row).toLowerCase().includes(term.value);
    case 'pid':
      return String(s.pid(row)) === term.value;
    case 'tid':
      return String(s.tid(row)) === term.value;
    case 'cpu':
      return String(s.cpu(row)) === term.value;
    case 'misc':
      return String(s.misc(row)) === term.value;
    case 'ip':
      return s.ipHex(row) === term.value;
    case 'field':
      return s.fieldMatches?.(term, row) ?? false;
    case 'any':
      return (
        s.eventName(row).toLowerCase().includes(term.value) ||
        s.comm(row).toLowerCase().includes(term.value) ||
        (s.symbol(row) ?? '').toLowerCase().includes(term.value)
      );
  }
}

/** A row predicate for parsed terms (every term must hold). */
export function compileFilter(terms: readonly FilterTerm[], subject: FilterSubject): (row: number) => boolean {
  if (terms.length === 0) return () => true;
  return (row) => terms.every((t) => matches(t, subject, row) !== t.negate);
}
