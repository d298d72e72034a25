// Event spec -> full perf_event_attr, ready for the recorder to open as a flight-recorder event.
// The recorder still decides disabled / enable_on_exec / inherit; everything the spec says is here.

import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, resolve as resolvePath } from 'node:path';
import type { ResolvedEvent, UprobeTarget } from '../abi/snapshot';
import type { AttrFlags, PerfEventAttr } from '../abi/attr';
import { BreakpointType, PerfType, Sample } from '../abi/uapi';
import { globToRegExp, isGlob, modifierEffect, nearest, parseEventSpec, SpecError, type EventSpecAst, type SpecTerm } from './parse';
import { applyFormatTerm, listPmuNames, readPmu, DEFAULT_SYSFS_ROOT, PmuError, type PmuInfo } from './pmu';
import { findTracefs, listSystemEvents, listSystems, readTracepointFormat, TracefsError, tracepointExists } from './tracefs';
import { openTargetSymbols, type TargetSymbols } from '../symbols/resolve';
import { unwindArchOfNode } from '../symbols/unwind';

/**
 * How callers are recorded. `fp`: the kernel walks frame pointers (`-g`). `dwarf`: the kernel records
 * the kernel callers and copies the user registers and `stackBytes` of user stack from the stack
 * pointer up, which are unwound afterwards with the objects' DWARF CFI (perf's `--call-graph dwarf`):
 * callers of code built without frame pointers.
 */
export type CallGraph = { readonly mode: 'fp' } | { readonly mode: 'dwarf'; readonly stackBytes: number };

/** perf's default stack copy for --call-graph dwarf. */
export const DEFAULT_DWARF_STACK_BYTES = 8192;
/** sample_stack_user is a u16 in the sample record's size and must be a multiple of 8 (perf's limit too). */
export const MAX_DWARF_STACK_BYTES = 65528;

export interface ResolveContext {
  symbols?: TargetSymbols;
  /** -c PERIOD: sample every PERIOD events (spec terms `period=`/`freq=` win over it). */
  period?: bigint;
  /** -F FREQ: samples per second, validated against kernel.perf_event_max_sample_rate. */
  freq?: number;
  /** -g: record callchains; `true` is frame pointers. */
  callchain?: boolean | CallGraph;
  /** Root of sysfs (default `/sys`); PMUs are read from ROOT/bus/event_source/devices. */
  sysfsRoot?: string;
  /** tracefs directory (default: found in /proc/mounts, mounted if missing and root). */
  tracefsRoot?: string;
}

/** ResolvedEvent plus human notes about choices made (length clamped, access defaulted...). */
export interface ResolvedSpec extends ResolvedEvent {
  readonly notes: readonly string[];
}

/** What every flight-recorder sample carries; tracepoints add RAW, data breakpoints ADDR, -g CALLCHAIN. */
export const BASE_SAMPLE_TYPE = Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD | Sample.IDENTIFIER;
/**
 * Timer events sample at this rate unless -c/-F or a term says otherwise: perf record's default
 * (4000 Hz), so a recording compares with perf's. Lowered to kernel.perf_event_max_sample_rate,
 * with a note, where that is less (as perf does).
 */
export const DEFAULT_CLOCK_FREQ = 4000;
export const MAX_SAMPLE_RATE_PATH = '/proc/sys/kernel/perf_event_max_sample_rate';
/** sizeof(long): the only length an execute breakpoint may have. */
export const EXECUTE_BREAKPOINT_LENGTH = 8;
export const DEFAULT_DATA_BREAKPOINT_LENGTH = 4;

/**
 * The specs with each tracepoint glob (`syscalls:sys_enter_*`, `*:sched_switch`) replaced by the
 * tracepoints tracefs has that match it, as perf record opens them (terms and modifiers carried
 * to each), sorted per system; other specs as given. A spec named twice is kept once, first place.
 * A glob matching nothing is a SpecError naming it; tracefs problems are TracefsErrors.
 */
export function expandEventSpecs(specs: readonly string[], ctx: Pick<ResolveContext, 'tracefsRoot'> = {}): string[] {
  const expanded = new Set<string>();
  for (const spec of specs) for (const one of expandEventSpec(spec, ctx)) expanded.add(one);
  return [...expanded];
}

function expandEventSpec(spec: string, ctx: Pick<ResolveContext, 'tracefsRoot'>): string[] {
  const ast = parseEventSpec(spec);
  if (ast.kind !== 'tracepoint' || (!isGlob(ast.system) && !isGlob(ast.event))) return [spec];
  const root = findTracefs({ root: ctx.tracefsRoot });
  const glob = `${ast.system}:${ast.event}`;
  const suffix = spec.slice(glob.length);
  const systemPattern = globToRegExp(ast.system);
  const eventPattern = globToRegExp(ast.event);
  const matches: string[] = [];
  const systems = listSystems(root).filter((system) => systemPattern.test(system));
  for (const system of systems) {
    for (const event of listSystemEvents(root, system)) if (eventPattern.test(event)) matches.push(`${system}:${event}${suffix}`);
  }
  if (matches.length === 0) {
    const where =
      systems.length === 0
        ? `no tracepoint system matches '${ast.system}'`
        : `no tracepoint of ${systems.length === 1 ? `system '${systems[0]}'` : `the ${systems.length} systems matching '${ast.system}'`} matches '${ast.event}'`;
    throw new SpecError(`the glob '${glob}' matches no tracepoint in ${root}/events (${where}; see 'ringside events')`, spec, 0, glob);
  }
  return matches;
}

/** Parses and resolves one spec. Throws SpecError (bad spec), TracefsError or PmuError (system state). */
export function resolveEventSpec(spec: string, ctx: ResolveContext = {}): ResolvedSpec {
  return resolveEventAst(parseEventSpec(spec), ctx);
}

export function resolveEventAst(ast: EventSpecAst, ctx: ResolveContext = {}): ResolvedSpec {
  const resolved = resolveByKind(ast, ctx);
  return ast.modifiers === undefined ? resolved : { ...resolved, explicitModifiers: true };
}

function resolveByKind(ast: EventSpecAst, ctx: ResolveContext): ResolvedSpec {
  const notes: string[] = [];
  const effect = modifierEffect(ast.modifiers);
  const flags: AttrFlags = {
    sampleIdAll: true,
    writeBackward: true,
    excludeUser: effect.excludeUser || undefined,
    excludeKernel: effect.excludeKernel || undefined,
    excludeHv: effect.excludeHv || undefined,
    excludeGuest: effect.excludeGuest || undefined,
    excludeHost: effect.excludeHost || undefined,
    excludeIdle: effect.excludeIdle || undefined,
    pinned: effect.pinned || undefined,
    exclusive: effect.exclusive || undefined,
  };
  for (const key of Object.keys(flags) as (keyof AttrFlags)[]) if (flags[key] === undefined) delete flags[key];
  let attr: PerfEventAttr = {
    type: 0,
    config: 0n,
    samplePeriod: 1n,
    sampleType: BASE_SAMPLE_TYPE | (ctx.callchain ? Sample.CALLCHAIN : 0),
    readFormat: 0,
    flags,
  };
  if (typeof ctx.callchain === 'object' && ctx.callchain.mode === 'dwarf') applyDwarfCallGraph(attr, ctx.callchain.stackBytes, ast.spec);
  if (effect.preciseIp > 0) attr.preciseIp = effect.preciseIp;
  applySamplingDefaults(attr, ast, ctx, notes);

  switch (ast.kind) {
    case 'software': {
      attr.type = PerfType.SOFTWARE;
      attr.config = BigInt(ast.config);
      const applied = applyGenericTerms(attr, ast.terms, ast.spec, false);
      return { name: applied.name ?? ast.spec, attr: applied.attr, isBreakpoint: false, notes };
    }
    case 'tracepoint': {
      if (isGlob(ast.system) || isGlob(ast.event)) {
        throw new SpecError(`'${ast.system}:${ast.event}' is a glob naming several tracepoints: expand it first (expandEventSpecs)`, ast.spec, 0, ast.spec);
      }
      const root = findTracefs({ root: ctx.tracefsRoot });
      checkTracepoint(root, ast);
      const tracepoint = readTracepointFormat(root, ast.system, ast.event);
      attr.type = PerfType.TRACEPOINT;
      attr.config = BigInt(tracepoint.id);
      attr.sampleType |= Sample.RAW;
      const applied = applyGenericTerms(attr, ast.terms, ast.spec, false);
      return { name: applied.name ?? ast.spec, attr: applied.attr, tracepoint, isBreakpoint: false, notes };
    }
    case 'breakpoint':
      return resolveBreakpoint(ast, attr, ctx, notes);
    case 'line':
      return resolveLineUprobes(ast, attr, ctx, notes);
    case 'logpoint':
      return resolveLogpoint(ast, attr, ctx, notes);
    case 'uprobe':
      return resolveUprobe(ast, attr, ctx, notes);
    case 'pmu': {
      const sysfsRoot = ctx.sysfsRoot ?? DEFAULT_SYSFS_ROOT;
      const pmu = readPmu(ast.pmu, sysfsRoot);
      if (!pmu) {
        const known = listPmuNames(sysfsRoot);
        const guess = nearest(ast.pmu, known);
        throw new SpecError(
          `no PMU '${ast.pmu}' on this machine${guess ? ` (did you mean '${guess}'?)` : ''}; PMUs here: ${known.join(', ') || 'none'}`,
          ast.spec,
          ast.pmuPosition,
          ast.pmu,
        );
      }
      attr.type = pmu.type;
      const applied = applyPmuTerms(attr, pmu, ast.terms, ast.spec);
      attr = applied.attr;
      return { name: applied.name ?? ast.spec, attr, isBreakpoint: pmu.type === PerfType.BREAKPOINT, notes };
    }
  }
}

/**
 * What perf record --call-graph dwarf asks of the kernel: the user registers the unwinder needs
 * (perf's PERF_REGS_MASK), the user stack copy, and no frame-pointer walk of user space, which the
 * DWARF unwind replaces (exclude_callchain_user). Kernel callers still come from the kernel.
 */
function applyDwarfCallGraph(attr: PerfEventAttr, stackBytes: number, spec: string): void {
  const arch = unwindArchOfNode(process.arch);
  if (!arch)
    throw new SpecError(`-g dwarf: DWARF unwinding is implemented for x86_64 and aarch64, not ${process.arch}; use -g (frame pointers)`, spec, 0, '-g');
  if (!Number.isInteger(stackBytes) || stackBytes <= 0 || stackBytes % 8 !== 0 || stackBytes > MAX_DWARF_STACK_BYTES) {
    throw new SpecError(`-g dwarf,${stackBytes}: the stack copy must be a multiple of 8 bytes up to ${MAX_DWARF_STACK_BYTES}`, spec, 0, '-g');
  }
  attr.sampleType |= Sample.REGS_USER | Sample.STACK_USER;
  attr.sampleRegsUser = arch.sampleRegsMask;
  attr.sampleStackUser = stackBytes;
  attr.flags.excludeCallchainUser = true;
}

/** period 1 (every event) by default; the timer events at DEFAULT_CLOCK_FREQ; -c / -F override. */
function applySamplingDefaults(attr: PerfEventAttr, ast: EventSpecAst, ctx: ResolveContext, notes: string[]): void {
  if (ctx.period !== undefined && ctx.freq !== undefined) throw new SpecError('-c PERIOD and -F FREQ cannot be used together', ast.spec, 0, '-c/-F');
  if (ctx.period !== undefined) {
    if (ctx.period <= 0n) throw new SpecError(`-c ${ctx.period}: the sample period must be at least 1`, ast.spec, 0, '-c');
    attr.samplePeriod = ctx.period;
    return;
  }
  if (ctx.freq !== undefined) {
    setFrequency(attr, ctx.freq, ast.spec, 0, '-F');
    return;
  }
  const isClock = ast.kind === 'software' && (ast.name === 'cpu-clock' || ast.name === 'task-clock');
  if (isClock) {
    const max = readMaxSampleRate();
    const freq = max !== undefined && max >= 1 && max < DEFAULT_CLOCK_FREQ ? max : DEFAULT_CLOCK_FREQ;
    if (freq < DEFAULT_CLOCK_FREQ) {
      notes.push(
        `sampling at ${freq} Hz, not the default ${DEFAULT_CLOCK_FREQ} Hz: kernel.perf_event_max_sample_rate is ${max} (raise it with sysctl, or give -F)`,
      );
    }
    attr.samplePeriod = BigInt(freq);
    attr.flags.freq = true;
  }
}

function setFrequency(attr: PerfEventAttr, freq: number | bigint, spec: string, position: number, term: string): void {
  const value = BigInt(freq);
  if (value <= 0n) throw new SpecError(`${term} ${freq}: the sample frequency must be at least 1 Hz`, spec, position, term);
  const max = readMaxSampleRate();
  if (max !== undefined && value > BigInt(max)) {
    throw new SpecError(
      `${term} ${freq} Hz exceeds kernel.perf_event_max_sample_rate (${max}); lower it or raise the limit: sysctl -w kernel.perf_event_max_sample_rate=${freq}`,
      spec,
      position,
      term,
    );
  }
  attr.samplePeriod = value;
  attr.flags.freq = true;
}

/** kernel.perf_event_max_sample_rate, or undefined when /proc does not say. */
export function readMaxSampleRate(): number | undefined {
  try {
    const text = readFileSync(MAX_SAMPLE_RATE_PATH, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    // sysctl not readable here: no limit known, the caller uses perf's default
    return undefined;
  }
}

const AUX_ACTIONS = { 'start-paused': 'auxStartPaused', pause: 'auxPause', resume: 'auxResume' } as const;

/**
 * Terms every kind of event takes (perf's names): period=, freq=, name=, aux-action=,
 * aux-output, aux-sample-size=, and for PMUs the raw config=, config1=, config2=, config3=.
 * Returns false when the term is not one of them.
 */
function applyGenericTerm(attr: PerfEventAttr, term: SpecTerm, spec: string, rawConfigAllowed: boolean, state: { name?: string }): boolean {
  const number = (): bigint => {
    if (term.value?.kind !== 'number') throw new SpecError(`term '${term.key}' needs a numeric value (${term.key}=N)`, spec, term.position, term.key);
    return term.value.value;
  };
  switch (term.key) {
    case 'period': {
      const period = number();
      if (period <= 0n) throw new SpecError(`period must be at least 1, got ${period}`, spec, term.position, term.key);
      attr.samplePeriod = period;
      delete attr.flags.freq;
      return true;
    }
    case 'freq':
      setFrequency(attr, number(), spec, term.position, 'freq');
      return true;
    case 'name':
      if (term.value === undefined) throw new SpecError(`term 'name' needs a value (name=LABEL)`, spec, term.position, term.key);
      state.name = term.value.kind === 'string' ? term.value.value : term.value.value.toString();
      return true;
    case 'aux-action': {
      const action = term.value?.kind === 'string' ? term.value.value : undefined;
      const bit = action !== undefined && Object.hasOwn(AUX_ACTIONS, action) ? AUX_ACTIONS[action as keyof typeof AUX_ACTIONS] : undefined;
      if (bit === undefined) {
        throw new SpecError(`aux-action must be start-paused, pause or resume, got '${term.value?.value ?? ''}'`, spec, term.position, term.key);
      }
      const auxAction = { ...attr.auxAction, [bit]: true };
      if (auxAction.auxPause && auxAction.auxResume) {
        throw new SpecError('aux-action=pause and aux-action=resume cannot both be set on one event (the kernel refuses it)', spec, term.position, term.key);
      }
      attr.auxAction = auxAction;
      return true;
    }
    case 'aux-output': {
      const on = term.value === undefined ? true : number() !== 0n;
      if (on) attr.flags.auxOutput = true;
      else delete attr.flags.auxOutput;
      return true;
    }
    case 'aux-sample-size': {
      const size = number();
      if (size > 0xffffffffn) throw new SpecError(`aux-sample-size ${size} does not fit 32 bits`, spec, term.position, term.key);
      attr.auxSampleSize = Number(size);
      return true;
    }
    case 'config':
    case 'config1':
    case 'config2':
    case 'config3': {
      if (!rawConfigAllowed) return false;
      const value = number();
      if (value >= 1n << 64n) throw new SpecError(`${term.key} value does not fit 64 bits`, spec, term.position, term.key);
      if (term.key === 'config') attr.config = value;
      else if (term.key === 'config1') attr.config1 = value;
      else if (term.key === 'config2') attr.config2 = value;
      else attr.config3 = value;
      return true;
    }
    default:
      return false;
  }
}

const GENERIC_TERMS = ['period', 'freq', 'name', 'aux-action', 'aux-output', 'aux-sample-size'];

function applyGenericTerms(attr: PerfEventAttr, terms: readonly SpecTerm[], spec: string, rawConfigAllowed: boolean): { attr: PerfEventAttr; name?: string } {
  const state: { name?: string } = {};
  for (const term of terms) {
    if (!applyGenericTerm(attr, term, spec, rawConfigAllowed, state)) {
      const guess = nearest(term.key, GENERIC_TERMS);
      throw new SpecError(
        `unknown term '${term.key}'${guess ? ` (did you mean '${guess}'?)` : ''}; terms here: ${GENERIC_TERMS.join(', ')}`,
        spec,
        term.position,
        term.key,
      );
    }
  }
  return { attr, name: state.name };
}

/** Alias terms first (so the user's own terms override them, like perf), then the user's terms in order. */
function applyPmuTerms(base: PerfEventAttr, pmu: PmuInfo, terms: readonly SpecTerm[], spec: string): { attr: PerfEventAttr; name?: string } {
  let attr = base;
  const state: { name?: string } = {};
  const formats = new Map(pmu.formats.map((format) => [format.name, format]));
  const aliases = new Map(pmu.events.map((event) => [event.name, event]));
  const userKeys = new Set(terms.map((term) => term.key));

  const applyFormat = (term: SpecTerm, key: string, value: bigint, from: string) => {
    const format = formats.get(key);
    if (!format) return false;
    try {
      attr = applyFormatTerm(attr, format, value);
    } catch (error) {
      throw new SpecError(`${from}: ${(error as Error).message}`, spec, term.position, term.key);
    }
    return true;
  };

  for (const term of terms) {
    const alias = term.value === undefined && !formats.has(term.key) ? aliases.get(term.key) : undefined;
    if (!alias) continue;
    for (const aliasTerm of alias.terms) {
      if (aliasTerm.value === '?') {
        if (!userKeys.has(aliasTerm.key)) {
          throw new SpecError(
            `event '${alias.name}' of PMU ${pmu.name} needs ${aliasTerm.key}=VALUE (sysfs says '${alias.text}')`,
            spec,
            term.position,
            term.key,
          );
        }
        continue;
      }
      const value = aliasTerm.value ?? 1n;
      if (applyFormat(term, aliasTerm.key, value, `event '${alias.name}' (${alias.text})`)) continue;
      const synthetic: SpecTerm = { key: aliasTerm.key, value: { kind: 'number', value }, position: term.position, text: term.text };
      if (!applyGenericTerm(attr, synthetic, spec, true, state)) {
        throw new SpecError(`event '${alias.name}' of PMU ${pmu.name} uses term '${aliasTerm.key}', which has no format file`, spec, term.position, term.key);
      }
    }
  }

  for (const term of terms) {
    if (term.value === undefined && !formats.has(term.key) && aliases.has(term.key)) continue;
    if (formats.has(term.key)) {
      if (term.value !== undefined && term.value.kind !== 'number') {
        throw new SpecError(`term '${term.key}' needs a number, got '${term.value.value}'`, spec, term.position, term.key);
      }
      applyFormat(term, term.key, term.value?.value ?? 1n, `term '${term.text}'`);
      continue;
    }
    if (applyGenericTerm(attr, term, spec, true, state)) continue;
    const known = [...formats.keys(), ...aliases.keys(), ...GENERIC_TERMS, 'config', 'config1', 'config2', 'config3'];
    const guess = nearest(term.key, known);
    throw new SpecError(
      `unknown term '${term.key}' for PMU ${pmu.name}${guess ? ` (did you mean '${guess}'?)` : ''}; formats: ${[...formats.keys()].join(', ') || 'none'}; events: ${[...aliases.keys()].join(', ') || 'none'}`,
      spec,
      term.position,
      term.key,
    );
  }
  return { attr, name: state.name };
}

function checkTracepoint(root: string, ast: Extract<EventSpecAst, { kind: 'tracepoint' }>): void {
  if (tracepointExists(root, ast.system, ast.event)) return;
  const systems = listSystems(root);
  if (!systems.includes(ast.system)) {
    const guess = nearest(ast.system, systems);
    throw new SpecError(`no tracepoint system '${ast.system}' in ${root}/events${guess ? ` (did you mean '${guess}'?)` : ''}`, ast.spec, 0, ast.system);
  }
  const guess = nearest(ast.event, listSystemEvents(root, ast.system));
  throw new SpecError(
    `no tracepoint '${ast.system}:${ast.event}'${guess ? ` (did you mean '${ast.system}:${guess}'?)` : ''}`,
    ast.spec,
    ast.system.length + 1,
    ast.event,
  );
}

function resolveBreakpoint(ast: Extract<EventSpecAst, { kind: 'breakpoint' }>, attr: PerfEventAttr, ctx: ResolveContext, notes: string[]): ResolvedSpec {
  const address = ast.address;
  let bpAddress: bigint;
  let knownSize: number | undefined;
  let defaultAccess: 'rw' | 'x' = 'rw';
  let location: ResolvedEvent['location'];
  let extraSites: ResolvedEvent['extraSites'];
  const needSymbols = (what: string): TargetSymbols => {
    if (!ctx.symbols)
      throw new SpecError(
        `${what} needs a target executable to look it up in (launch one with -- COMMAND, or attach with -p PID)`,
        ast.spec,
        address.position,
        address.text,
      );
    return ctx.symbols;
  };

  switch (address.kind) {
    case 'number':
      bpAddress = address.value;
      break;
    case 'symbol': {
      const symbols = needSymbols(`symbol '${address.name}'`);
      let symbol;
      try {
        symbol = symbols.resolveSymbol(address.name);
      } catch (error) {
        throw new SpecError(`cannot resolve symbol '${address.name}': ${(error as Error).message}`, ast.spec, address.position, address.name);
      }
      if (!symbol) throw new SpecError(`no symbol '${address.name}' in the target`, ast.spec, address.position, address.name);
      bpAddress = symbol.address;
      knownSize = symbol.size;
      if (symbol.kind === 'function') {
        defaultAccess = 'x';
        if (!ast.access) notes.push(`'${address.name}' is a function: execute breakpoint at its entry (add :rw to watch its bytes instead)`);
      }
      location = { symbol: address.name, file: symbol.file, line: symbol.line, address: bpAddress, length: 0 };
      break;
    }
    case 'line': {
      const symbols = needSymbols(`source line ${address.file}:${address.line}`);
      let line;
      try {
        line = symbols.resolveLine(address.file, address.line);
      } catch (error) {
        throw new SpecError(`cannot resolve ${address.file}:${address.line}: ${(error as Error).message}`, ast.spec, address.position, address.text);
      }
      if (!line) throw new SpecError(`no code at ${address.file}:${address.line}`, ast.spec, address.position, address.text);
      if (ast.access && ast.access.value !== 'x') {
        throw new SpecError(
          `a source line breakpoint executes: use :x (or no access), not :${ast.access.value}`,
          ast.spec,
          ast.access.position,
          ast.access.value,
        );
      }
      bpAddress = line.address;
      defaultAccess = 'x';
      location = { file: line.file, line: line.line, address: bpAddress, length: 0 };
      if (line.sites.length > 1) {
        extraSites = line.sites.slice(1);
        notes.push(
          `${basename(line.file)}:${line.line} is in ${line.sites.length} places (${line.sites.map((site) => site.function ?? `0x${site.address.toString(16)}`).join(', ')}): all are armed, one debug register each`,
        );
      }
      if (line.line !== address.line) notes.push(`${address.file}:${address.line} has no code; breaking at line ${line.line}, the next line that does`);
      break;
    }
  }

  const access = ast.access?.value ?? defaultAccess;
  let length: number;
  if (access === 'x') {
    if (ast.length && ast.length.value !== EXECUTE_BREAKPOINT_LENGTH) {
      throw new SpecError(
        `an execute breakpoint has length ${EXECUTE_BREAKPOINT_LENGTH} (sizeof(long)), not ${ast.length.value}`,
        ast.spec,
        ast.length.position,
        String(ast.length.value),
      );
    }
    length = EXECUTE_BREAKPOINT_LENGTH;
  } else if (ast.length) {
    length = ast.length.value;
  } else if (knownSize !== undefined && knownSize > 0) {
    length = [8, 4, 2, 1].find((candidate) => candidate <= knownSize! && bpAddress % BigInt(candidate) === 0n) ?? 1;
    if (length < knownSize) {
      notes.push(
        `'${location?.symbol}' is ${knownSize} bytes; a hardware watchpoint covers at most ${length} aligned bytes here, so only its first ${length} bytes are watched`,
      );
    }
  } else {
    length = DEFAULT_DATA_BREAKPOINT_LENGTH;
  }
  if (access !== 'x' && bpAddress % BigInt(length) !== 0n) {
    throw new SpecError(
      `address 0x${bpAddress.toString(16)} is not aligned to the watch length ${length} (hardware needs address % length == 0)`,
      ast.spec,
      ast.length?.position ?? address.position,
      address.text,
    );
  }

  attr.type = PerfType.BREAKPOINT;
  attr.config = 0n;
  attr.bpType = access === 'x' ? BreakpointType.X : access === 'r' ? BreakpointType.R : access === 'w' ? BreakpointType.W : BreakpointType.RW;
  attr.config1 = bpAddress; // bp_addr
  attr.config2 = BigInt(length); // bp_len
  if (access !== 'x') attr.sampleType |= Sample.ADDR;
  // A symbol or line of the target is a question about the program: its own accesses. Without this
  // the kernel's exec-time zeroing of .bss (elf_load) shows up as writes before main() runs. An
  // explicit modifier (:k, :uk) keeps whatever the user asked for.
  if (location && ast.modifiers === undefined) {
    attr.flags.excludeKernel = true;
    notes.push(`user-space accesses only (add :uk to include the kernel's accesses, e.g. exec zeroing .bss or copy_to_user)`);
  }
  if (location) location = { ...location, length };
  return { name: ast.spec, attr, isBreakpoint: true, location, notes, ...(extraSites ? { extraSites } : {}) };
}

/** The kernel's uprobe PMU: its dynamic type number from sysfs (perf_uprobe; CONFIG_UPROBE_EVENTS). */
export const UPROBE_PMU = 'uprobe';

/**
 * A uprobe event's attr: the uprobe PMU's type, config 0 (bit 0 is `retprobe`: entry, not return),
 * config2 the first site's file offset; config1, the path pointer, is set when the fd is opened.
 * Every execution is one sample (period 1), like a tracepoint. A uprobe fires only in user space, so
 * the attr says user space only: no access plan narrows it, and its count is the same either way.
 */
function uprobeAttr(attr: PerfEventAttr, target: UprobeTarget, ctx: ResolveContext, spec: string, position: number): PerfEventAttr {
  const sysfsRoot = ctx.sysfsRoot ?? DEFAULT_SYSFS_ROOT;
  const pmu = readPmu(UPROBE_PMU, sysfsRoot);
  if (!pmu) {
    throw new SpecError(
      `this kernel has no uprobe PMU (${sysfsRoot}/bus/event_source/devices/uprobe): it was built without CONFIG_UPROBE_EVENTS; ` +
        'count a source line with a hardware breakpoint instead (mem:FILE:LINE:x)',
      spec,
      position,
    );
  }
  return {
    ...attr,
    type: pmu.type,
    config: 0n,
    config1: 0n,
    config2: target.sites[0].offset,
    flags: { ...attr.flags, excludeKernel: true, excludeHv: true },
  };
}

/** line:FILE:LINE: a uprobe on every is_stmt address of the line in the target executable (perf probe's choice of addresses). */
function resolveLineUprobes(
  ast: Extract<EventSpecAst, { kind: 'line' | 'logpoint' }>,
  attr: PerfEventAttr,
  ctx: ResolveContext,
  notes: string[],
  places: 'statements' | 'sites' = 'statements',
): ResolvedSpec {
  const symbols = ctx.symbols;
  if (!symbols) {
    throw new SpecError(
      `source line ${ast.text} needs a target executable to look it up in (launch one with -- COMMAND, or attach with -p PID)`,
      ast.spec,
      ast.position,
      ast.text,
    );
  }
  let line;
  try {
    line = symbols.resolveLine(ast.file, ast.line);
  } catch (error) {
    throw new SpecError(`cannot resolve ${ast.text}: ${(error as Error).message}`, ast.spec, ast.position, ast.text);
  }
  if (!line) throw new SpecError(`no code at ${ast.text}`, ast.spec, ast.position, ast.text);
  let target: UprobeTarget;
  try {
    target = { path: symbols.path, sites: line[places].map((site) => ({ ...site, offset: symbols.fileOffset(site.address) })) };
  } catch (error) {
    throw new SpecError(`cannot place ${ast.text} in ${symbols.path}: ${(error as Error).message}`, ast.spec, ast.position, ast.text);
  }
  if (line.line !== ast.line) notes.push(`${ast.file}:${ast.line} has no code; counting line ${line.line}, the next line that does`);
  if (target.sites.length > 1) {
    const addresses = target.sites.map((site) => `${site.function ? `${site.function} ` : ''}0x${site.address.toString(16)}`).join(', ');
    notes.push(
      `${basename(line.file)}:${line.line} ${places === 'sites' ? 'is in' : 'begins at'} ${target.sites.length} ${places === 'sites' ? 'functions' : 'addresses'} (${addresses}): one uprobe on each, hits are their sum`,
    );
  }
  return {
    name: ast.spec,
    attr: uprobeAttr(attr, target, ctx, ast.spec, ast.position),
    isBreakpoint: false,
    location: { file: line.file, line: line.line, address: target.sites[0].address, length: 0 },
    notes,
    uprobe: target,
  };
}

/** Registers and user stack a logpoint samples at each hit: what the values are read from (perf's default stack copy). */
export const LOGPOINT_STACK_BYTES = DEFAULT_DWARF_STACK_BYTES;

/**
 * log:FILE:LINE[:NAME,...]: a uprobe where a debugger breaks on the line (one place per function
 * holding it, its first statement there: gdb's `break FILE:LINE`, so hit k is gdb's stop k), sampling
 * the user registers and 8 KiB of user stack, from which the host reads the variables' values.
 */
function resolveLogpoint(ast: Extract<EventSpecAst, { kind: 'logpoint' }>, attr: PerfEventAttr, ctx: ResolveContext, notes: string[]): ResolvedSpec {
  const arch = unwindArchOfNode(process.arch);
  if (!arch) throw new SpecError(`log: reads values through the DWARF registers of x86_64 and aarch64, not ${process.arch}`, ast.spec, ast.position, ast.text);
  const resolved = resolveLineUprobes(ast, attr, ctx, notes, 'sites');
  const sampled: PerfEventAttr = {
    ...resolved.attr,
    sampleType: resolved.attr.sampleType | Sample.REGS_USER | Sample.STACK_USER,
    sampleRegsUser: arch.sampleRegsMask,
    sampleStackUser: LOGPOINT_STACK_BYTES,
  };
  const { file, line } = resolved.location!;
  return { ...resolved, attr: sampled, logpoint: { file: file!, line: line!, ...(ast.variables ? { variables: ast.variables } : {}) } };
}

/** uprobe:BIN:SYMBOL[+OFF]: one uprobe at the function's address plus OFF, in BIN (the target, or a library it maps). */
function resolveUprobe(ast: Extract<EventSpecAst, { kind: 'uprobe' }>, attr: PerfEventAttr, ctx: ResolveContext, notes: string[]): ResolvedSpec {
  const path = uprobeBinary(ast, ctx);
  let symbols: TargetSymbols;
  let symbol;
  try {
    // The target's own symbols are placed where it runs; any other file at its link-time addresses.
    symbols = ctx.symbols && sameFile(ctx.symbols.path, path) ? ctx.symbols : openTargetSymbols(path, 0n);
    symbol = symbols.resolveSymbol(ast.symbol);
  } catch (error) {
    throw new SpecError(`cannot resolve '${ast.symbol}' in ${path}: ${(error as Error).message}`, ast.spec, ast.symbolPosition, ast.symbol);
  }
  if (symbol.kind !== 'function') {
    throw new SpecError(
      `'${ast.symbol}' in ${path} is a variable, not code: a uprobe runs on an instruction (to watch a variable, use mem:${ast.symbol}:rw)`,
      ast.spec,
      ast.symbolPosition,
      ast.symbol,
    );
  }
  if (symbol.size > 0 && ast.offset >= BigInt(symbol.size)) {
    throw new SpecError(
      `offset ${ast.offset} is past the end of '${ast.symbol}' (${symbol.size} bytes)`,
      ast.spec,
      ast.symbolPosition + ast.symbol.length + 1,
      String(ast.offset),
    );
  }
  const address = symbol.address + ast.offset;
  let offset: bigint;
  try {
    offset = symbols.fileOffset(address);
  } catch (error) {
    throw new SpecError(`cannot place '${ast.symbol}' in ${path}: ${(error as Error).message}`, ast.spec, ast.symbolPosition, ast.symbol);
  }
  if (ast.offset !== 0n) notes.push(`the uprobe is ${ast.offset} bytes into ${ast.symbol}: that must be the start of an instruction (as perf probe requires)`);
  const target: UprobeTarget = { path, sites: [{ offset, address, function: ast.symbol }] };
  return {
    name: ast.spec,
    attr: uprobeAttr(attr, target, ctx, ast.spec, ast.binaryPosition),
    isBreakpoint: false,
    location: { symbol: ast.symbol, file: symbol.file, line: symbol.line, address, length: 0 },
    notes,
    uprobe: target,
  };
}

/** BIN as a file: a path (relative to the working directory), or the target executable's own name. */
function uprobeBinary(ast: Extract<EventSpecAst, { kind: 'uprobe' }>, ctx: ResolveContext): string {
  const asPath = resolvePath(ast.binary);
  if (existsSync(asPath)) {
    if (!statSync(asPath).isFile())
      throw new SpecError(`${asPath} is not a file: uprobe: needs an executable or shared library`, ast.spec, ast.binaryPosition, ast.binary);
    return realpathSync(asPath);
  }
  if (!ast.binary.includes('/') && ctx.symbols && basename(ctx.symbols.path) === ast.binary) return ctx.symbols.path;
  throw new SpecError(
    `no file '${ast.binary}' (from ${process.cwd()}): uprobe: needs the path of an executable or shared library, ` +
      "e.g. uprobe:/lib/x86_64-linux-gnu/libc.so.6:getppid, or the launched program's own name",
    ast.spec,
    ast.binaryPosition,
    ast.binary,
  );
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // one of them does not exist: not the same file
    return false;
  }
}

export { SpecError, TracefsError, PmuError };
