// The one parser for perf's event syntax, shared by the CLI (`-e SPEC`) and the extension.
// Pure: no node, koffi or vscode imports, so the webview can validate specs as the user types.
//
// Grammar (a subset of perf's parse-events.y, the parts a flight recorder needs):
//   spec        := software | tracepoint | breakpoint | line | logpoint | uprobe | pmu
//   software    := SWNAME [ '/' terms '/' ] [ ':' mods ]          cpu-clock, cs:u, faults/period=10/
//   tracepoint  := SYS ':' NAME [ '/' terms '/' ] [ ':' mods ]      sched:sched_switch, syscalls:sys_enter_uname/aux-action=resume/
//                  SYS and NAME may be globs (* ? [a-z]), as perf's: syscalls:sys_enter_*, *:sched_switch;
//                  expandEventSpecs (resolve.ts) turns one into the tracepoints tracefs has that match.
//   breakpoint  := 'mem:' ADDR [ '/' LEN ] [ ':' ACCESS ] [ ':' mods ]
//                  ADDR = 0xHEX | DECIMAL | SYMBOL | FILE ':' LINE   ACCESS = [rwx]{1,3}
//   line        := 'line:' FILE ':' LINE                             line:loop.c:42  (a uprobe on every address of the line)
//   logpoint    := 'log:' FILE ':' LINE [ ':' NAME { ',' NAME } ]    log:loop.c:42, log:loop.c:42:i,total  (a uprobe on the line
//                  sampling registers and stack; the values of the variables in scope, or of the NAMEs, at each hit).
//                  The NAME list takes the rest of a comma list: give further events with their own -e.
//   uprobe      := 'uprobe:' BIN ':' SYMBOL [ '+' OFF ]             uprobe:/lib/x86_64-linux-gnu/libc.so.6:getppid, uprobe:app:main+0x10
//   pmu         := PMU '/' terms '/' [ [':'] mods ]                  msr/tsc/, msr/event=0x4/uk, persistent/mce_record/
//   terms       := term { ',' term }        term := KEY [ '=' VALUE ]
//   mods        := { u k h G H I p D e }    (perf's meanings; p up to 3 times)

/** A malformed spec. `position` is the 0-based column of the offending text; `term` names it. */
export class SpecError extends Error {
  override readonly name = 'SpecError';
  constructor(
    message: string,
    readonly spec: string,
    readonly position: number,
    readonly term?: string,
  ) {
    super(`bad event '${spec}' at column ${position + 1}: ${message}`);
  }

  /** Two lines to print under the message: the spec and a caret under the bad column. */
  caret(): string {
    return `  ${this.spec}\n  ${' '.repeat(Math.max(0, Math.min(this.position, this.spec.length)))}^`;
  }
}

export type TermValue = { readonly kind: 'number'; readonly value: bigint } | { readonly kind: 'string'; readonly value: string };

export interface SpecTerm {
  readonly key: string;
  /** Absent for flag terms (`aux-output`, a format bit, an event alias like `tsc`). */
  readonly value?: TermValue;
  /** Column of the key in the spec. */
  readonly position: number;
  /** The term as written, for messages. */
  readonly text: string;
}

export interface SpecModifiers {
  /** The modifier letters as written (without the colon). */
  readonly text: string;
  readonly position: number;
}

export const SOFTWARE_EVENTS: readonly { readonly name: string; readonly aliases: readonly string[]; readonly config: number }[] = [
  { name: 'cpu-clock', aliases: [], config: 0 },
  { name: 'task-clock', aliases: [], config: 1 },
  { name: 'page-faults', aliases: ['faults'], config: 2 },
  { name: 'context-switches', aliases: ['cs'], config: 3 },
  { name: 'cpu-migrations', aliases: ['migrations'], config: 4 },
  { name: 'minor-faults', aliases: [], config: 5 },
  { name: 'major-faults', aliases: [], config: 6 },
  { name: 'alignment-faults', aliases: [], config: 7 },
  { name: 'emulation-faults', aliases: [], config: 8 },
  { name: 'dummy', aliases: [], config: 9 },
  { name: 'bpf-output', aliases: [], config: 10 },
  { name: 'cgroup-switches', aliases: [], config: 11 },
];

const SOFTWARE_BY_NAME = new Map<string, { name: string; config: number }>();
for (const event of SOFTWARE_EVENTS) {
  for (const spelling of [event.name, ...event.aliases]) SOFTWARE_BY_NAME.set(spelling, { name: event.name, config: event.config });
}

/** perf's hardware event names: recognised only to say why they cannot be used here. */
const HARDWARE_EVENT_NAMES = new Set([
  'cycles',
  'cpu-cycles',
  'instructions',
  'cache-references',
  'cache-misses',
  'branches',
  'branch-instructions',
  'branch-misses',
  'bus-cycles',
  'stalled-cycles-frontend',
  'stalled-cycles-backend',
  'ref-cycles',
]);

export type BreakpointAddress =
  | { readonly kind: 'number'; readonly value: bigint; readonly position: number; readonly text: string }
  | { readonly kind: 'symbol'; readonly name: string; readonly position: number; readonly text: string }
  | { readonly kind: 'line'; readonly file: string; readonly line: number; readonly position: number; readonly text: string };

export type BreakpointAccess = 'r' | 'w' | 'rw' | 'x';

export type EventSpecAst =
  | {
      readonly kind: 'software';
      readonly spec: string;
      readonly name: string;
      readonly config: number;
      readonly terms: readonly SpecTerm[];
      readonly modifiers?: SpecModifiers;
    }
  | {
      readonly kind: 'tracepoint';
      readonly spec: string;
      readonly system: string;
      readonly event: string;
      readonly terms: readonly SpecTerm[];
      readonly modifiers?: SpecModifiers;
    }
  | {
      readonly kind: 'breakpoint';
      readonly spec: string;
      readonly address: BreakpointAddress;
      readonly length?: { readonly value: number; readonly position: number };
      readonly access?: { readonly value: BreakpointAccess; readonly position: number };
      readonly modifiers?: SpecModifiers;
    }
  | {
      /** `line:FILE:LINE`: one uprobe on each address the line table gives the line (all inlined copies). */
      readonly kind: 'line';
      readonly spec: string;
      readonly file: string;
      readonly line: number;
      /** Column of FILE; `text` is FILE:LINE as written. */
      readonly position: number;
      readonly text: string;
      readonly modifiers?: undefined;
    }
  | {
      /**
       * `log:FILE:LINE[:NAME,...]`: a logpoint. A uprobe where a debugger would break on the line (one
       * place per function holding it) that samples the user registers and stack; each hit's values of
       * the variables in scope there (or only of NAMEs) are read on the host through the DWARF.
       */
      readonly kind: 'logpoint';
      readonly spec: string;
      readonly file: string;
      readonly line: number;
      /** Column of FILE; `text` is FILE:LINE as written. */
      readonly position: number;
      readonly text: string;
      /** The names asked for, in order; undefined: every variable in scope. */
      readonly variables?: readonly string[];
      readonly modifiers?: undefined;
    }
  | {
      /** `uprobe:BIN:SYMBOL[+OFF]`: one uprobe at SYMBOL + OFF of the ELF file BIN (an executable or a shared library). */
      readonly kind: 'uprobe';
      readonly spec: string;
      readonly binary: string;
      readonly binaryPosition: number;
      readonly symbol: string;
      readonly symbolPosition: number;
      readonly offset: bigint;
      readonly modifiers?: undefined;
    }
  | {
      readonly kind: 'pmu';
      readonly spec: string;
      readonly pmu: string;
      readonly pmuPosition: number;
      readonly terms: readonly SpecTerm[];
      readonly modifiers?: SpecModifiers;
    };

const WORD = /^[A-Za-z_][A-Za-z0-9_.-]*/;
const TRACEPOINT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*/;
// A tracepoint system or name with glob characters: *, ?, and [...] classes of name characters.
const GLOB_CLASS = String.raw`\[[!^]?[A-Za-z0-9_.-]+\]`;
const TRACEPOINT_GLOB = new RegExp(String.raw`^(?:[A-Za-z0-9_.*?-]|${GLOB_CLASS})+`);
const GLOB_CHARACTERS = /[*?[]/;

/** Whether a tracepoint system or name is a glob (perf matches those against tracefs). */
export function isGlob(text: string): boolean {
  return GLOB_CHARACTERS.test(text);
}

/** A glob as perf's strglobmatch reads it (* any run, ? any one character, [a-z] [!x] classes), anchored. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) {
        source += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, close);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      source += `[${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = close;
    } else source += c.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
const TERM_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*/;
const NUMBER = /^(?:0[xX][0-9a-fA-F]+|[0-9]+)$/;
// A symbol of the target: C identifiers, gcc's `name.0` statics, versioned `name@@GLIBC`, C++ `ns::name`.
const SYMBOL = /^[A-Za-z_.$][A-Za-z0-9_.$@]*(?:::[A-Za-z_~][A-Za-z0-9_.$@]*)*/;
// `file.c:42`: a path without colons, a colon, a decimal line, then the end or the next separator.
const FILE_LINE = /^([^:\s]*[A-Za-z_/.][^:\s]*):([0-9]+)(?=$|[:/])/;

/** Parses one event spec into its AST, or throws SpecError naming the bad part. */
export function parseEventSpec(spec: string): EventSpecAst {
  if (spec.trim() === '') throw new SpecError('empty event spec', spec, 0);
  if (/\s/.test(spec)) {
    const at = spec.search(/\s/);
    throw new SpecError('white space is not allowed in an event spec', spec, at);
  }
  if (spec.startsWith('mem:')) return parseBreakpoint(spec);
  if (spec.startsWith(LINE_PREFIX)) return parseLine(spec);
  if (spec.startsWith(LOG_PREFIX)) return parseLogpoint(spec);
  if (spec.startsWith(UPROBE_PREFIX)) return parseUprobe(spec);
  const globHead = TRACEPOINT_GLOB.exec(spec);
  // `sys*:name`, `*:name`: a glob system is a tracepoint (perf globs no other kind of name).
  if (globHead && isGlob(globHead[0]) && spec[globHead[0].length] === ':') return parseTracepoint(spec, globHead[0]);
  const head = WORD.exec(spec);
  if (!head) throw new SpecError(`expected an event name, found '${spec[0]}'`, spec, 0);
  const word = head[0];
  const cursor = word.length;
  const next = spec[cursor];

  const software = SOFTWARE_BY_NAME.get(word);
  // `cs:u` is software + modifier; `cs:foo` could be a tracepoint system named cs, but perf's
  // software names with a dash (cpu-clock) are never tracepoint systems, so there it is a bad modifier.
  if (software && (next !== ':' || isModifierText(spec.slice(cursor + 1)) || word.includes('-'))) {
    const { terms, end } = next === '/' ? parseTerms(spec, cursor) : { terms: [], end: cursor };
    const modifiers = parseTrailingModifiers(spec, end, false);
    return { kind: 'software', spec, name: software.name, config: software.config, terms, modifiers };
  }
  if (next === '/') {
    const { terms, end } = parseTerms(spec, cursor);
    if (terms.length === 0) throw new SpecError(`PMU '${word}' needs at least one term or event name between the slashes`, spec, cursor + 1);
    const modifiers = parseTrailingModifiers(spec, end, true);
    return { kind: 'pmu', spec, pmu: word, pmuPosition: 0, terms, modifiers };
  }
  if (next === ':') return parseTracepoint(spec, word);
  if (next === undefined) {
    if (HARDWARE_EVENT_NAMES.has(word)) {
      throw new SpecError(`'${word}' is a hardware event (PERF_TYPE_HARDWARE), which ringside does not offer; use cpu-clock or task-clock`, spec, 0, word);
    }
    const suggestion = nearest(word, [...SOFTWARE_BY_NAME.keys()]);
    throw new SpecError(
      `unknown event '${word}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}; expected a software event, SYSTEM:TRACEPOINT, mem:ADDR, line:FILE:LINE, log:FILE:LINE, uprobe:BIN:SYMBOL or PMU/TERMS/ (see 'ringside events')`,
      spec,
      0,
      word,
    );
  }
  throw new SpecError(`unexpected '${next}' after '${word}'`, spec, cursor);
}

/** `SYSTEM:NAME[/terms/][:mods]` after SYSTEM (either may be a glob). */
function parseTracepoint(spec: string, system: string): EventSpecAst {
  let cursor = system.length + 1;
  const rest = spec.slice(cursor);
  const glob = TRACEPOINT_GLOB.exec(rest);
  const name = glob && isGlob(glob[0]) ? glob : TRACEPOINT_NAME.exec(rest);
  if (!name) throw new SpecError(`expected a tracepoint name after '${system}:'`, spec, cursor);
  cursor += name[0].length;
  const { terms, end } = spec[cursor] === '/' ? parseTerms(spec, cursor) : { terms: [], end: cursor };
  const modifiers = parseTrailingModifiers(spec, end, false);
  return { kind: 'tracepoint', spec, system, event: name[0], terms, modifiers };
}

/** Splits a perf-style comma list (`a,b/x=1,y=2/,c`) at the commas outside slashes and parses each. */
export function parseEventList(text: string): EventSpecAst[] {
  const specs: string[] = [];
  let depth = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    // A logpoint's NAME list (log:FILE:LINE:a,b) is comma-separated too: it takes the rest of the list.
    if (i === start && LOGPOINT_WITH_NAMES.test(text.slice(start))) break;
    // Addresses and paths (mem:, line:, uprobe:) hold slashes that open no terms.
    if (text[i] === '/' && !PATH_PREFIXES.some((prefix) => text.startsWith(prefix, start))) depth = !depth;
    else if (text[i] === ',' && !depth) {
      specs.push(text.slice(start, i));
      start = i + 1;
    }
  }
  specs.push(text.slice(start));
  return specs.map(parseEventSpec);
}

const LINE_PREFIX = 'line:';
const LOG_PREFIX = 'log:';
const UPROBE_PREFIX = 'uprobe:';
const PATH_PREFIXES = ['mem:', LINE_PREFIX, LOG_PREFIX, UPROBE_PREFIX];
const LOGPOINT_WITH_NAMES = /^log:[^:\s]*:[0-9]+:/;
/** A variable a logpoint may name: a C identifier. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether an event name is a logpoint's (its records carry values). */
export function isLogpointSpec(spec: string): boolean {
  return spec.startsWith(LOG_PREFIX);
}

/** `log:FILE:LINE[:NAME,...]`. */
function parseLogpoint(spec: string): EventSpecAst {
  const cursor = LOG_PREFIX.length;
  const rest = spec.slice(cursor);
  const fileLine = FILE_LINE.exec(rest);
  if (!fileLine) {
    const file = /^[^:]*/.exec(rest)?.[0] ?? '';
    if (file === '') throw new SpecError('log: needs a source line: log:FILE:LINE[:NAME,...], e.g. log:loop.c:42 or log:loop.c:42:i,total', spec, cursor);
    const lineText = /^:([^:]*)/.exec(rest.slice(file.length))?.[1];
    if (lineText === undefined || lineText === '') throw new SpecError(`log:${file} needs a line number: log:${file}:LINE`, spec, cursor + file.length, file);
    throw new SpecError(`'${lineText}' is not a line number (a decimal, from 1)`, spec, cursor + file.length + 1, lineText);
  }
  const [text, file, digits] = fileLine;
  const line = Number(digits);
  if (line < 1) throw new SpecError(`line numbers start at 1, got ${digits}`, spec, cursor + file.length + 1, text);
  let at = cursor + text.length;
  if (at === spec.length) return { kind: 'logpoint', spec, file, line, position: cursor, text };
  if (spec[at] !== ':') throw new SpecError(`unexpected '${spec.slice(at)}' after log:${text} (a logpoint takes :NAME,NAME...)`, spec, at, spec.slice(at));
  at++;
  const variables: string[] = [];
  for (const name of spec.slice(at).split(',')) {
    if (!VARIABLE_NAME.test(name)) {
      throw new SpecError(
        name === '' ? 'empty variable name (two commas in a row, or a trailing comma)' : `'${name}' is not a variable name (a C identifier)`,
        spec,
        at,
        name || undefined,
      );
    }
    variables.push(name);
    at += name.length + 1;
  }
  return { kind: 'logpoint', spec, file, line, position: cursor, text, variables };
}

/** `line:FILE:LINE`. A uprobe counts executions only, so there is no access, length or modifier to give. */
function parseLine(spec: string): EventSpecAst {
  const cursor = LINE_PREFIX.length;
  const rest = spec.slice(cursor);
  const fileLine = FILE_LINE.exec(rest);
  if (!fileLine) {
    const file = /^[^:]*/.exec(rest)?.[0] ?? '';
    if (file === '') throw new SpecError('line: needs a source line: line:FILE:LINE, e.g. line:loop.c:42', spec, cursor);
    const after = rest.slice(file.length);
    const lineText = /^:([^:]*)/.exec(after)?.[1];
    if (lineText === undefined || lineText === '') throw new SpecError(`line:${file} needs a line number: line:${file}:LINE`, spec, cursor + file.length, file);
    throw new SpecError(`'${lineText}' is not a line number (a decimal, from 1)`, spec, cursor + file.length + 1, lineText);
  }
  const [text, file, digits] = fileLine;
  const line = Number(digits);
  if (line < 1) throw new SpecError(`line numbers start at 1, got ${digits}`, spec, cursor + file.length + 1, text);
  const end = cursor + text.length;
  if (end < spec.length) {
    const extra = spec.slice(end);
    const why = /^:[rwx]+$/.test(extra)
      ? `line: counts executions with uprobes and takes no access; for a hardware breakpoint write mem:${text}${extra}`
      : `unexpected '${extra}' after line:${text} (line: takes no access, length, terms or modifiers)`;
    throw new SpecError(why, spec, end, extra);
  }
  return { kind: 'line', spec, file, line, position: cursor, text };
}

/** `uprobe:BIN:SYMBOL[+OFF]`: BIN is a path (no colons), SYMBOL a function of it, OFF bytes into it. */
function parseUprobe(spec: string): EventSpecAst {
  let cursor = UPROBE_PREFIX.length;
  const binary = /^[^:]*/.exec(spec.slice(cursor))?.[0] ?? '';
  if (binary === '') throw new SpecError('uprobe: needs the executable or shared library to probe: uprobe:BIN:SYMBOL[+OFF]', spec, cursor);
  const binaryPosition = cursor;
  cursor += binary.length;
  if (spec[cursor] !== ':') throw new SpecError(`uprobe:${binary} needs a function to probe: uprobe:${binary}:SYMBOL[+OFF]`, spec, cursor, binary);
  cursor++;
  const symbolPosition = cursor;
  const symbol = SYMBOL.exec(spec.slice(cursor))?.[0];
  if (!symbol) {
    const bad = /^[^+:]*/.exec(spec.slice(cursor))?.[0] ?? '';
    throw new SpecError(
      bad === '' ? `uprobe:${binary}: needs a function name after the colon` : `'${bad}' is not a symbol name`,
      spec,
      cursor,
      bad || undefined,
    );
  }
  cursor += symbol.length;
  let offset = 0n;
  if (spec[cursor] === '+') {
    cursor++;
    const digits = /^(?:0[xX][0-9a-fA-F]+|[0-9]+)/.exec(spec.slice(cursor))?.[0];
    if (!digits) throw new SpecError(`expected a byte offset (0xHEX or decimal) after '${symbol}+'`, spec, cursor);
    offset = BigInt(digits);
    cursor += digits.length;
  }
  if (cursor < spec.length) {
    const extra = spec.slice(cursor);
    throw new SpecError(
      `unexpected '${extra}' after uprobe:${binary}:${spec.slice(symbolPosition, cursor)} (a uprobe takes no access, terms or modifiers)`,
      spec,
      cursor,
      extra,
    );
  }
  return { kind: 'uprobe', spec, binary, binaryPosition, symbol, symbolPosition, offset };
}

function parseBreakpoint(spec: string): EventSpecAst {
  let cursor = 4;
  const rest = spec.slice(cursor);
  let address: BreakpointAddress;
  const fileLine = FILE_LINE.exec(rest);
  const numeric = /^(?:0[xX][0-9a-fA-F]+|[0-9]+)(?=$|[:/])/.exec(rest);
  if (numeric) {
    address = { kind: 'number', value: BigInt(numeric[0]), position: cursor, text: numeric[0] };
    cursor += numeric[0].length;
  } else if (fileLine) {
    address = { kind: 'line', file: fileLine[1], line: Number(fileLine[2]), position: cursor, text: fileLine[0] };
    if (address.line < 1) throw new SpecError(`line numbers start at 1, got ${fileLine[2]}`, spec, cursor + fileLine[1].length + 1, fileLine[0]);
    cursor += fileLine[0].length;
  } else {
    const symbol = SYMBOL.exec(rest);
    if (!symbol || !/^(?:$|[:/])/.test(rest.slice(symbol[0].length))) {
      const bad = /^[^:/]*/.exec(rest)?.[0] ?? '';
      throw new SpecError(
        bad === '' ? 'mem: needs an address: 0xHEX, a symbol name or FILE:LINE' : `'${bad}' is not an address, a symbol name or FILE:LINE`,
        spec,
        cursor,
        bad || undefined,
      );
    }
    address = { kind: 'symbol', name: symbol[0], position: cursor, text: symbol[0] };
    cursor += symbol[0].length;
  }

  let length: { value: number; position: number } | undefined;
  if (spec[cursor] === '/') {
    cursor++;
    const digits = /^(?:0[xX][0-9a-fA-F]+|[0-9]+)/.exec(spec.slice(cursor));
    if (!digits) throw new SpecError(`expected a breakpoint length (1, 2, 4 or 8) after '/'`, spec, cursor);
    const value = Number(digits[0]);
    if (![1, 2, 4, 8].includes(value)) throw new SpecError(`breakpoint length must be 1, 2, 4 or 8, got ${digits[0]}`, spec, cursor, digits[0]);
    length = { value, position: cursor };
    cursor += digits[0].length;
  }

  let access: { value: BreakpointAccess; position: number } | undefined;
  let modifiers: SpecModifiers | undefined;
  if (spec[cursor] === ':') {
    cursor++;
    const group = /^[^:]*/.exec(spec.slice(cursor))?.[0] ?? '';
    if (/^[rwx]+$/.test(group)) {
      access = { value: parseAccess(spec, group, cursor), position: cursor };
      cursor += group.length;
      if (spec[cursor] === ':') {
        cursor++;
        modifiers = parseModifierText(spec, cursor, spec.slice(cursor));
        cursor = spec.length;
      }
    } else {
      modifiers = parseModifierText(spec, cursor, spec.slice(cursor));
      cursor = spec.length;
    }
  }
  if (cursor < spec.length) throw new SpecError(`unexpected '${spec.slice(cursor)}' after the breakpoint address`, spec, cursor, spec.slice(cursor));
  return { kind: 'breakpoint', spec, address, length, access, modifiers };
}

function parseAccess(spec: string, group: string, position: number): BreakpointAccess {
  const letters = new Set(group);
  if (letters.size !== group.length) throw new SpecError(`breakpoint access '${group}' repeats a letter`, spec, position, group);
  if (letters.has('x') && letters.size > 1) {
    throw new SpecError(`breakpoint access '${group}' mixes x with r/w: an execute breakpoint cannot also watch data`, spec, position, group);
  }
  if (letters.has('x')) return 'x';
  return letters.has('r') && letters.has('w') ? 'rw' : letters.has('r') ? 'r' : 'w';
}

/** Parses `/key=value,.../` starting at the opening slash. */
function parseTerms(spec: string, openSlash: number): { terms: SpecTerm[]; end: number } {
  const close = spec.indexOf('/', openSlash + 1);
  if (close < 0) throw new SpecError(`missing closing '/' for the terms opened here`, spec, openSlash);
  const terms: SpecTerm[] = [];
  let cursor = openSlash + 1;
  if (close === cursor) return { terms, end: close + 1 };
  for (const raw of spec.slice(openSlash + 1, close).split(',')) {
    const position = cursor;
    cursor += raw.length + 1;
    if (raw === '') throw new SpecError('empty term (two commas in a row, or a trailing comma)', spec, position);
    const eq = raw.indexOf('=');
    const key = eq < 0 ? raw : raw.slice(0, eq);
    if (!TERM_KEY.test(key) || TERM_KEY.exec(key)?.[0] !== key) throw new SpecError(`bad term name '${key}'`, spec, position, key);
    if (eq < 0) {
      terms.push({ key, position, text: raw });
      continue;
    }
    const text = raw.slice(eq + 1);
    if (text === '') throw new SpecError(`term '${key}' has '=' but no value`, spec, position + eq + 1, key);
    const value: TermValue = NUMBER.test(text) ? { kind: 'number', value: BigInt(text) } : { kind: 'string', value: text };
    terms.push({ key, value, position, text: raw });
  }
  return { terms, end: close + 1 };
}

function parseTrailingModifiers(spec: string, cursor: number, bareAllowed: boolean): SpecModifiers | undefined {
  if (cursor >= spec.length) return undefined;
  if (spec[cursor] === ':') return parseModifierText(spec, cursor + 1, spec.slice(cursor + 1));
  if (bareAllowed) return parseModifierText(spec, cursor, spec.slice(cursor));
  throw new SpecError(`unexpected '${spec.slice(cursor)}': modifiers follow a colon, like ':u'`, spec, cursor, spec.slice(cursor));
}

const MODIFIER_LETTERS = 'ukhGHIpDe';

function isModifierText(text: string): boolean {
  return text.length > 0 && [...text].every((c) => MODIFIER_LETTERS.includes(c));
}

function parseModifierText(spec: string, position: number, text: string): SpecModifiers {
  if (text === '') throw new SpecError('empty modifier after the colon', spec, position);
  for (let i = 0; i < text.length; i++) {
    if (!MODIFIER_LETTERS.includes(text[i])) {
      throw new SpecError(
        `unknown modifier '${text[i]}' in '${text}' (known: u user, k kernel, h hypervisor, G guest, H host, I no idle, p precise, D pinned, e exclusive)`,
        spec,
        position + i,
        text[i],
      );
    }
  }
  const precise = [...text].filter((c) => c === 'p').length;
  if (precise > 3) throw new SpecError(`precise level 'p' given ${precise} times: at most 3 (ppp)`, spec, position + text.lastIndexOf('p'), 'p');
  return { text, position };
}

/** What modifiers do to a perf_event_attr: the exclude_* rules of perf's get_event_modifier. */
export interface ModifierEffect {
  excludeUser: boolean;
  excludeKernel: boolean;
  excludeHv: boolean;
  excludeGuest: boolean;
  excludeHost: boolean;
  excludeIdle: boolean;
  preciseIp: number;
  pinned: boolean;
  exclusive: boolean;
}

/**
 * perf's rules (get_event_modifier): the first of u/k/h excludes all three, then each letter
 * re-includes its level, so `:u` = user only, `:uk` = user + kernel. Likewise G/H. Guest samples:
 * an event without modifiers excludes them; with modifiers only `u` and `p` do (unless G/H are given),
 * which is exactly what perf 6.1 writes into its attrs (checked against `perf stat -vv` in tests).
 */
export function modifierEffect(modifiers: SpecModifiers | undefined): ModifierEffect {
  let excludeUser = false,
    excludeKernel = false,
    excludeHv = false,
    excludeAny = false;
  let excludeGuest = modifiers === undefined,
    excludeHost = false,
    excludeGuestHostGiven = false;
  let excludeIdle = false,
    preciseIp = 0,
    pinned = false,
    exclusive = false;
  for (const letter of modifiers?.text ?? '') {
    switch (letter) {
      case 'u':
      case 'k':
      case 'h':
        if (!excludeAny) {
          excludeAny = excludeUser = excludeKernel = excludeHv = true;
        }
        if (letter === 'u') {
          excludeUser = false;
          if (!excludeGuestHostGiven) excludeGuest = true;
        }
        if (letter === 'k') excludeKernel = false;
        if (letter === 'h') excludeHv = false;
        break;
      case 'G':
      case 'H':
        if (!excludeGuestHostGiven) {
          excludeGuestHostGiven = excludeGuest = excludeHost = true;
        }
        if (letter === 'G') excludeGuest = false;
        if (letter === 'H') excludeHost = false;
        break;
      case 'I':
        excludeIdle = true;
        break;
      case 'p':
        preciseIp++;
        if (!excludeGuestHostGiven) excludeGuest = true; // perf: precise sampling requires exclude_guest
        break;
      case 'D':
        pinned = true;
        break;
      case 'e':
        exclusive = true;
        break;
      default:
        break;
    }
  }
  return { excludeUser, excludeKernel, excludeHv, excludeGuest, excludeHost, excludeIdle, preciseIp, pinned, exclusive };
}

/** The closest spelling within edit distance 2, for "did you mean". */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
