// A logpoint's values: at the pc of one hit, the variables in scope (or the ones named), read
// through their DWARF locations from what the kernel sampled there (PERF_SAMPLE_REGS_USER and
// PERF_SAMPLE_STACK_USER), and written as gdb prints them. Memory outside the stack copy is read
// from the object's file where it is read-only there (string literals, constant tables), else from
// the live process (globals, the heap) where that is allowed, which is memory as it is when the
// record is decoded, not at the hit: those names are listed in `readLater`.
// A logpoint's hits come at a handful of pcs: what reading there takes is worked out once per
// (object, pc, names) as a ProbePlan, a hit only runs it on its registers and stack (numbers, not
// BigInts, see dwarf-expression-numeric.ts), and the text is written when the values are first asked for.

import { PF_W, PT_GNU_RELRO, PT_LOAD } from './elf';
import { RED_ZONE_BYTES, RED_ZONE_RAW_OFFSET } from '../abi/uapi';
import type { ObjectFile } from './object-file';
import { AT, TAG, type Die } from './dwarf-info';
import { DwarfScopes, type ScopeAtPc, type ScopeVariable, type VariableLocation } from './dwarf-scopes';
import { evaluateFrameBase, evaluateLocation, LocationUnavailable, type ExpressionContext, type LocationPiece } from './dwarf-expression';
import {
  BYTE_NOT_CAPTURED,
  BYTE_OPTIMIZED_OUT,
  NOT_CAPTURED,
  OPTIMIZED_OUT,
  PRINT_ELEMENTS,
  ValueFormatter,
  type PointerTargets,
  type ValueBytes,
} from './dwarf-values';
import { evaluateCfa, X86_64, AARCH64, unwindArchOf, type UnwindArch } from './unwind';
import {
  compileNumeric,
  frameBaseOffsetOf,
  isCallFrameCfa,
  NumericLocation,
  NUMERIC_BAIL,
  NUMERIC_DONE,
  NUMERIC_NOT_CAPTURED,
  NUMERIC_OPTIMIZED_OUT,
  PIECE_IMPLICIT,
  PIECE_MEMORY,
  PIECE_OPTIMIZED_OUT,
  PIECE_REGISTER,
  PIECE_VALUE,
  REGISTER_MISSING,
  registerOf,
  runNumeric,
  type CompiledExpression,
  type NumericFrame,
} from './dwarf-expression-numeric';

/** One hit: the registers by perf_regs bit and the valid stack bytes copied from the stack pointer up. */
export interface LogpointHit {
  readonly pid: number;
  readonly registers: Readonly<Record<number, bigint>>;
  readonly stack: Uint8Array;
  /**
   * The address of stack[0] where it is not the stack pointer: the stack copy then starts with bytes below
   * it that the kernel fetched at the hit (the x86-64 red zone, through a tracefs uprobe's fetch arguments).
   */
  readonly stackStart?: bigint;
}

/**
 * Why a value in the x86-64 red zone (the 128 bytes below the stack pointer where a function that calls
 * none keeps its locals, as gcc -O0 does) reads <not captured> when the kernel did not fetch them.
 */
export const RED_ZONE_NOT_CAPTURED =
  'below the stack pointer (the x86-64 red zone, where a function that calls none keeps locals), and the stack sample starts at the stack pointer: ' +
  'the kernel fetches those bytes at the hit only through a uprobe defined in tracefs with fetch arguments, which needs root (write access to uprobe_events)';

/** The x86-64 ABI's red zone: bytes below the stack pointer a leaf function may use (the stack sample does not hold them). */
const X86_64_RED_ZONE = RED_ZONE_BYTES;

export interface LogpointValues {
  /** Variable name -> its value as gdb prints it; parameters first, then locals innermost first, or the names asked for in their order. */
  readonly values: Readonly<Record<string, string>>;
  /** The function the pc is in (an inlined function's own name inside its inlined copy). */
  readonly function?: string;
  /** Names whose bytes (or the text they point at) were read from the live process after the hit. */
  readonly readLater?: readonly string[];
  /** Why no values could be read at all (no DWARF at the pc, registers not sampled). */
  readonly error?: string;
  /** Per name shown as <not captured> for a reason the text cannot say (the red zone): the reason. */
  readonly notCaptured?: Readonly<Record<string, string>>;
}

/** The object mapped at a runtime address and that address's link-time value in it. */
export type ObjectLocator = (pid: number, address: bigint) => { readonly object: ObjectFile; readonly vaddr: bigint } | undefined;
/** Live memory of a process (see native/sys/process-memory.ts); undefined where none can be read. */
export type ProcessMemoryReader = (pid: number, address: bigint, length: number) => Uint8Array | undefined;

interface ObjectState {
  readonly scopes: DwarfScopes;
  readonly formatter: ValueFormatter;
  readonly arch: UnwindArch | undefined;
  /** Plans by link-time pc (see ProbePlan). */
  readonly plans: Map<bigint, PlansAtPc>;
}

/** The plans at one pc: for every variable in scope, and per list of names asked. */
interface PlansAtPc {
  all?: ProbePlan | string;
  /** The last names array asked (a logpoint asks with the same array every hit) and its plan. */
  lastNames?: readonly string[];
  lastNamed?: ProbePlan | string;
  readonly named: Map<string, ProbePlan | string>;
}

/** How one variable of a plan is read at its pc. */
interface VariablePlan {
  readonly name: string;
  readonly type: Die | undefined;
  /** Undefined: the type has no size (`<incomplete type>`). */
  readonly size: number | undefined;
  /** Where its bytes go in a hit's buffer (and its byte states at totalSize + offset). */
  readonly offset: number;
  /** Undefined: a name asked that is neither in scope nor a global. */
  readonly location: VariableLocation | undefined;
  /** The location expression decoded for the numeric machine; undefined where only the BigInt machine can run it. */
  readonly numeric: CompiledExpression | undefined;
  /** The shapes most locals have, read without running the expression: a slot at CFA + this (DW_OP_fbreg with the CFA as frame base)... */
  readonly cfaSlot: number | undefined;
  /** ...or this DWARF register (DW_OP_regN), for a value of at most 8 bytes. */
  readonly register: number | undefined;
  /** Link-time address -> bytes read from the object's file (they cannot change), for the bias in `fileBias`. */
  fileBytes?: Map<number, Uint8Array | null>;
  fileBias?: bigint;
  /**
   * Texts written for this variable by its bytes and byte states (for the plan's `textsBias`): a hit with the
   * same bytes has the same text, unless writing it read memory that can change (the stack copy, the live
   * process), which is then not kept. A logpoint's variables take few distinct values at most lines (a loop's
   * bounds, its strings, modes, small counters), and the UI and the export write the text of every hit.
   */
  texts?: TextTable;
}

/**
 * Texts of one variable by its bytes and their states, read in place (from the stack copy where the value is
 * a frame slot, so a hit whose text is known copies nothing): TEXT_CACHE_SIZE slots, a text in the first
 * free of the TEXT_CACHE_PROBES slots from the one its key's hash picks, else in that one (replacing what
 * was there). A key is the value's bytes then their states, as little-endian 32-bit words: a lookup is a
 * hash over a few words and a compare, and the table never grows.
 */
class TextTable {
  /** 32-bit words of a key: the bytes, then their states. */
  readonly words: number;
  private readonly valueWords: number;
  private readonly keys: Int32Array;
  private readonly hashes = new Int32Array(TEXT_CACHE_SIZE);
  private readonly texts = new Array<string | undefined>(TEXT_CACHE_SIZE).fill(undefined);
  /** The key of the last lookup (and its hash), for store() after a miss. */
  private readonly key: Int32Array;
  private hash = 0;

  constructor(size: number) {
    this.valueWords = (size + 3) >>> 2;
    this.words = this.valueWords * 2;
    this.keys = new Int32Array(TEXT_CACHE_SIZE * this.words);
    this.key = new Int32Array(this.words);
  }

  /** The text kept for the `size` bytes at `at` of `bytes` whose states are `size` bytes at `statesAt` of `states` (undefined: all known). */
  lookup(bytes: Uint8Array, at: number, size: number, states: Uint8Array | undefined, statesAt: number): string | undefined {
    if (states === undefined && size <= 8) return this.lookupSmall(bytes, at, size);
    const key = this.key;
    const valueWords = this.valueWords;
    // The hash is of the bytes only: a value whose bytes are known rarely has the bytes of one that is not, and the compare sees both.
    const hash = wordsOf(bytes, at, size, key, 0, 0x811c9dc5 | 0);
    if (states === undefined)
      for (let w = valueWords; w < key.length; w++) key[w] = 0; // (fill() is a builtin call, dearer for a few words)
    else wordsOf(states, statesAt, size, key, valueWords, 0);
    this.hash = hash;
    const slot = textSlot(hash);
    const { words, keys, hashes, texts } = this;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const at = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      const text = texts[at];
      if (text === undefined) return undefined;
      if (hashes[at] !== hash) continue;
      let same = true;
      for (let w = 0, k = at * words; w < words; w++, k++) {
        if (keys[k] !== key[w]) {
          same = false;
          break;
        }
      }
      if (same) return text;
    }
    return undefined;
  }

  /** lookup() of a value of at most 8 known bytes (most are: integers, pointers, enums, doubles): two words without loops. */
  private lookupSmall(bytes: Uint8Array, at: number, size: number): string | undefined {
    let low: number;
    let high = 0;
    if (size >= 4) {
      low = bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24);
      if (size === 8) high = bytes[at + 4] | (bytes[at + 5] << 8) | (bytes[at + 6] << 16) | (bytes[at + 7] << 24);
      else for (let b = 4, shift = 0; b < size; b++, shift += 8) high |= bytes[at + b] << shift;
    } else {
      low = 0;
      for (let b = 0, shift = 0; b < size; b++, shift += 8) low |= bytes[at + b] << shift;
    }
    const key = this.key;
    key[0] = low;
    let hash = Math.imul((0x811c9dc5 | 0) ^ low, 0x01000193);
    if (size > 4) {
      key[1] = high;
      hash = Math.imul(hash ^ high, 0x01000193);
    }
    for (let w = this.valueWords; w < key.length; w++) key[w] = 0;
    this.hash = hash;
    const slot = textSlot(hash);
    const { words, keys, hashes, texts } = this;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const to = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      const text = texts[to];
      if (text === undefined) return undefined;
      const k = to * words;
      // The states' words of a stored key are zero where it was stored from known bytes.
      if (hashes[to] === hash && keys[k] === low && (size <= 4 || keys[k + 1] === high) && keys[k + words - 1] === 0 && keys[k + (words >>> 1)] === 0)
        return text;
    }
    return undefined;
  }

  /** Keeps `text` for the key of the last lookup. */
  store(text: string): void {
    const { words, keys, hashes, texts, key, hash } = this;
    const slot = textSlot(hash);
    let to = slot;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const at = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      if (texts[at] === undefined) {
        to = at;
        break;
      }
    }
    keys.set(key, to * words);
    hashes[to] = hash;
    texts[to] = text;
  }
}

/**
 * `size` bytes at `at` as little-endian 32-bit words into `key` from `to` (the last one zero-padded), and
 * FNV-1a over them continued from `hash`.
 */
function wordsOf(bytes: Uint8Array, at: number, size: number, key: Int32Array, to: number, hash: number): number {
  let b = at;
  const end = at + size;
  for (; b + 4 <= end; b += 4, to++) {
    const word = bytes[b] | (bytes[b + 1] << 8) | (bytes[b + 2] << 16) | (bytes[b + 3] << 24);
    key[to] = word;
    hash = Math.imul(hash ^ word, 0x01000193);
  }
  if (b < end) {
    let word = 0;
    for (let shift = 0; b < end; b++, shift += 8) word |= bytes[b] << shift;
    key[to] = word;
    hash = Math.imul(hash ^ word, 0x01000193);
  }
  return hash;
}

const TEXT_CACHE_BITS = 8;
const TEXT_CACHE_SIZE = 1 << TEXT_CACHE_BITS;
const TEXT_CACHE_PROBES = 4;
/** The slot of a hash: its top bits after a multiply (Fibonacci hashing), which every bit of the hash moves. */
const textSlot = (hash: number) => Math.imul(hash, 0x9e3779b1) >>> (32 - TEXT_CACHE_BITS);

/**
 * What reading the values at one (object, pc, names) takes, worked out once: the scope, each variable's
 * location at that pc (a location list's entry already picked) decoded for the numeric machine, the
 * CFA rule of the call frame information, and where each value's bytes go in a hit's buffer. A hit then
 * only runs the decoded expressions on its registers and stack and copies bytes; the text is written
 * when the values are first asked for.
 */
interface ProbePlan {
  readonly object: ObjectFile;
  readonly state: ObjectState;
  readonly arch: UnwindArch;
  readonly vaddr: bigint;
  readonly scope: ScopeAtPc;
  readonly variables: readonly VariablePlan[];
  /** Bytes of all values (a hit's buffer holds twice that: the bytes, then their states). */
  readonly totalSize: number;
  /** CFA = DWARF register + offset at this pc; undefined where the rule is another (the BigInt path computes it). */
  readonly cfaRegister: number | undefined;
  readonly cfaOffset: number;
  /** The frame base expression decoded, when some variable uses DW_OP_fbreg and it decodes. */
  readonly frameBase: CompiledExpression | undefined;
  readonly usesFrameBase: boolean;
  /** Each hit's values object from its texts in variable order (see valuesMaker). */
  makeValues?: (texts: readonly string[]) => Record<string, string>;
  /** What pointers of this plan pointed at in the object's read-only bytes (C strings), by address, for load bias `fileTargetsBias`. */
  fileTargets?: Map<bigint, Uint8Array>;
  fileTargetsBias?: bigint;
  /** The load bias the variables' kept texts are for (see VariablePlan.texts). */
  textsBias?: bigint;
}

const FBREG = 0x91;

export class LogpointEvaluator {
  private readonly objects = new WeakMap<ObjectFile, ObjectState | null>();
  private readonly frame = new HitFrame();
  private readonly pieces = new NumericLocation();
  private last: { vaddr: bigint; names: readonly string[] | undefined; state: ObjectState; plan: ProbePlan | string } | undefined;

  constructor(
    private readonly locate: ObjectLocator,
    private readonly processMemory?: ProcessMemoryReader,
    /** False: every location through the BigInt machine, the reference the numeric one is compared with (tests). */
    private readonly numeric = true,
    /** False: every value's text written at every hit, none kept by its bytes (see VariablePlan.texts): the reference, and a benchmark's cold case. */
    private readonly cacheTexts = true,
  ) {}

  private state(object: ObjectFile): ObjectState | null {
    let state = this.objects.get(object);
    if (state === undefined) {
      const info = object.dwarfInfo();
      state = info
        ? { scopes: new DwarfScopes(info), formatter: new ValueFormatter(info), arch: unwindArchOf(object.elf.header.machine), plans: new Map() }
        : null;
      this.objects.set(object, state);
    }
    return state;
  }

  /**
   * The values at one hit: every variable in scope, or only `names` (a name not in scope is looked up as
   * a global). The bytes are read now; the text of `values` (and `readLater`) is written when first asked for.
   * A `names` array is read once and its plan kept by identity: pass a new array rather than changing one.
   */
  evaluate(hit: LogpointHit, names?: readonly string[]): LogpointValues {
    let located: ReturnType<ObjectLocator> | undefined;
    let state: ObjectState | null = null;
    let arch: UnwindArch | undefined;
    let anyLocated: ReturnType<ObjectLocator> | undefined;
    for (const candidate of ARCHES) {
      const pc = hit.registers[candidate.pcPerf];
      if (pc === undefined || hit.registers[candidate.stackPointerPerf] === undefined) continue;
      const at = this.locate(hit.pid, pc);
      if (!at) continue;
      anyLocated ??= at;
      const atState = this.state(at.object);
      const atArch = atState ? atState.arch : unwindArchOf(at.object.elf.header.machine);
      if (atArch !== candidate) continue;
      located = at;
      state = atState;
      arch = candidate;
      break;
    }
    if (!located || !arch) {
      const pc = hit.registers[X86_64.pcPerf] ?? hit.registers[AARCH64.pcPerf];
      if (anyLocated || pc === undefined) return { values: {}, error: 'the sample holds no user registers of a known architecture' };
      return { values: {}, error: `no mapped object with symbols at 0x${pc.toString(16)}` };
    }
    if (!state) return { values: {}, error: `${located.object.path} has no DWARF debug information (build with -g)` };
    const plan = this.plan(located.object, state, located.vaddr, arch, names);
    if (typeof plan === 'string') return { values: {}, error: plan };
    const pc = hit.registers[arch.pcPerf];
    return this.capture(plan, hit, pc - located.vaddr);
  }

  /** The plan at a link-time pc for `names` (all in scope when undefined), or why there is none. */
  private plan(object: ObjectFile, state: ObjectState, vaddr: bigint, arch: UnwindArch, names: readonly string[] | undefined): ProbePlan | string {
    // A logpoint's hits come at one pc, asking with one names array: the last plan, before any map.
    const last = this.last;
    if (last && last.vaddr === vaddr && last.names === names && last.state === state) return last.plan;
    const plan = this.planAt(object, state, vaddr, arch, names);
    this.last = { vaddr, names, state, plan };
    return plan;
  }

  private planAt(object: ObjectFile, state: ObjectState, vaddr: bigint, arch: UnwindArch, names: readonly string[] | undefined): ProbePlan | string {
    let atPc = state.plans.get(vaddr);
    if (!atPc) {
      if (state.plans.size >= 4096) state.plans.clear();
      state.plans.set(vaddr, (atPc = { named: new Map() }));
    }
    if (!names) return (atPc.all ??= this.compile(object, state, vaddr, arch, undefined));
    if (atPc.lastNames === names) return atPc.lastNamed!;
    const key = names.join(',');
    let plan = atPc.named.get(key);
    if (plan === undefined) atPc.named.set(key, (plan = this.compile(object, state, vaddr, arch, names)));
    atPc.lastNames = names;
    atPc.lastNamed = plan;
    return plan;
  }

  private compile(object: ObjectFile, state: ObjectState, vaddr: bigint, arch: UnwindArch, names: readonly string[] | undefined): ProbePlan | string {
    let scope: ScopeAtPc | undefined;
    try {
      scope = state.scopes.scopeAt(vaddr);
    } catch (error) {
      return `${object.path}: ${(error as Error).message}`;
    }
    if (!scope) return `the DWARF of ${object.path} describes no function at 0x${vaddr.toString(16)}`;
    const info = object.dwarfInfo()!;
    const unit = scope.subprogram.unit;
    const addressIndex = (index: number) => info.addressIndex(unit, index);
    const found = names ? names.map((name) => scope.variables.find((v) => v.name === name) ?? this.globalNamed(object, name)) : scope.variables;
    let offset = 0;
    let usesFrameBase = false;
    const frameBase = scope.frameBase.kind === 'expression' ? compileNumeric(scope.frameBase.expression, addressIndex) : undefined;
    const frameBaseIsCfa = frameBase !== undefined && isCallFrameCfa(frameBase);
    const variables: VariablePlan[] = found.map((variable, i) => {
      const name = names ? names[i] : variable!.name;
      const size = variable ? state.formatter.size(variable.type) : undefined;
      const location = variable?.location;
      let numeric: CompiledExpression | undefined;
      if (location?.kind === 'expression') {
        numeric = compileNumeric(location.expression, addressIndex);
        if (location.expression.includes(FBREG)) usesFrameBase = true; // a byte of an operand may look like it: then only a wasted frame base
      }
      const slot = numeric && frameBaseIsCfa ? frameBaseOffsetOf(numeric) : undefined;
      const register = numeric && size !== undefined && size <= 8 ? registerOf(numeric) : undefined;
      const plan: VariablePlan = {
        name,
        type: variable?.type,
        size,
        offset,
        location,
        numeric,
        cfaSlot: slot,
        register,
        fileBytes: undefined,
        fileBias: undefined,
        texts: undefined, // every field from the start: one object shape for every variable, as the hot loop reads them
      };
      offset += size ?? 0;
      return plan;
    });
    const row = object.callFrameInfo()?.rowAt(vaddr);
    const cfaRegister = row?.cfa.kind === 'register' ? row.cfa.register : undefined;
    const cfaOffset = row?.cfa.kind === 'register' ? Number(row.cfa.offset) : 0;
    return {
      object,
      state,
      arch,
      vaddr,
      scope,
      variables,
      totalSize: offset,
      cfaRegister,
      cfaOffset,
      frameBase,
      usesFrameBase,
      makeValues: undefined,
      fileTargets: undefined,
      fileTargetsBias: undefined,
      textsBias: undefined,
    };
  }

  /**
   * Reads every value's bytes of one hit into one buffer (the numeric machine, or the BigInt one where it gives
   * up). Where a value's text is kept for its bytes (see TextTable), the hit takes that text instead, and a
   * frame slot's bytes are then not even copied: a logpoint's values mostly repeat.
   */
  private capture(plan: ProbePlan, hit: LogpointHit, bias: bigint): LogpointValues {
    const { totalSize, variables } = plan;
    const buffer = hitBuffer(totalSize * 2);
    const frame = this.frame;
    frame.reset(plan, hit, bias);
    const out = this.pieces;
    const cacheTexts = this.cacheTexts;
    if (cacheTexts && plan.textsBias !== bias) {
      // Texts of pointers name what they point at, which moves with the load address.
      for (const variable of variables) variable.texts = undefined;
      plan.textsBias = bias;
    }
    const texts = new Array<string | undefined>(variables.length);
    let general: GeneralReader | undefined;
    const capture: CaptureState = { readLater: undefined };
    for (let i = 0; i < variables.length; i++) {
      const variable = variables[i];
      const { size, location, offset } = variable;
      if (size === undefined || !location) continue;
      if (location.kind === 'none') {
        for (let at = totalSize + offset; at < totalSize + offset + size; at++) buffer[at] = BYTE_OPTIMIZED_OUT;
      } else if (location.kind === 'constant') {
        buffer.set(location.bytes.subarray(0, size), offset);
        if (location.bytes.length < size) buffer.fill(BYTE_OPTIMIZED_OUT, totalSize + offset + location.bytes.length, totalSize + offset + size);
      } else if (this.numeric && variable.cfaSlot !== undefined && frame.stackHolds(frame.cfa() + variable.cfaSlot, size)) {
        const from = frame.stackOffset(frame.cfa() + variable.cfaSlot);
        if (cacheTexts) {
          const text = (variable.texts ??= new TextTable(size)).lookup(hit.stack, from, size, undefined, 0);
          if (text !== undefined) {
            texts[i] = text;
            continue;
          }
        }
        const stack = hit.stack;
        for (let b = 0; b < size; b++) buffer[offset + b] = stack[from + b];
        continue;
      } else if (this.numeric && variable.register !== undefined) {
        frame.copyRegister(variable.register, size, buffer, offset);
      } else {
        const outcome = variable.numeric && this.numeric ? runNumeric(variable.numeric, frame, out) : NUMERIC_BAIL;
        if (outcome === NUMERIC_OPTIMIZED_OUT || outcome === NUMERIC_NOT_CAPTURED) {
          texts[i] = outcome === NUMERIC_OPTIMIZED_OUT ? OPTIMIZED_OUT : NOT_CAPTURED;
          continue;
        }
        if (outcome !== NUMERIC_DONE || !frame.materialize(variable, out, buffer, this.processMemory, capture)) {
          general ??= new GeneralReader(plan, hit, bias, this.processMemory, capture);
          general.current = variable.name;
          const text = general.materializeInto(location, size, buffer, offset, totalSize);
          if (text !== undefined) {
            texts[i] = text;
            continue;
          }
        }
      }
      if (cacheTexts) texts[i] = (variable.texts ??= new TextTable(size)).lookup(buffer, offset, size, buffer, totalSize + offset);
    }
    return new CapturedValues(plan, hit, bias, buffer, texts, capture.readLater, this.processMemory, capture.belowStack, cacheTexts);
  }

  /** A global or file-static variable by name (the external one first), as a scope variable. */
  private globalNamed(object: ObjectFile, name: string): ScopeVariable | undefined {
    const info = object.dwarfInfo();
    if (!info) return undefined;
    const scopes = this.state(object)!.scopes;
    let best: Die | undefined;
    for (const die of info.diesOfTag(TAG.variable)) {
      if (die.parent?.tag === TAG.subprogram || die.parent?.tag === TAG.lexical_block) continue;
      if (!info.attribute(die, AT.location) || scopes.nameOf(die) !== name) continue;
      const external = info.flagAttr(die, AT.external) || info.refAttr(die, AT.specification) !== undefined;
      if (!best || external) best = die;
      if (external) break;
    }
    if (!best) return undefined;
    const location = info.attribute(best, AT.location)!;
    let type: Die | undefined;
    for (let d: Die | undefined = best; d && !type; d = info.refAttr(d, AT.specification) ?? info.refAttr(d, AT.abstract_origin))
      type = info.refAttr(d, AT.type);
    return { name, type, parameter: false, location: location.kind === 'block' ? { kind: 'expression', expression: location.bytes } : { kind: 'none' } };
  }
}

const ARCHES = [X86_64, AARCH64] as const;

/**
 * A zeroed buffer for one hit's bytes, cut from a shared slab: a typed array of its own above 64
 * bytes costs V8 an allocation outside its heap and a finalizer, more than reading the values does.
 * A slab lives as long as one of its hits' values does.
 */
function hitBuffer(length: number): Uint8Array {
  if (length > SLAB_BYTES / 8) return new Uint8Array(length);
  if (slabUsed + length > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const buffer = new Uint8Array(slab, slabUsed, length);
  slabUsed += (length + 7) & ~7;
  return buffer;
}
const SLAB_BYTES = 64 * 1024;
let slab = new ArrayBuffer(SLAB_BYTES);
let slabUsed = 0;
const TWO_53 = 2n ** 53n;
const TWO_64 = 2n ** 64n;

/** A 64-bit register value as the exact signed number it stands for, NaN where no number is exact. */
function exactNumber(value: bigint): number {
  // A conversion that lands within 2^53 was exact (the next value up, 2^53 + 1, rounds to 2^53): one BigInt operation.
  const rounded = Number(value);
  if (rounded <= Number.MAX_SAFE_INTEGER && rounded >= -Number.MAX_SAFE_INTEGER) return rounded;
  return value > TWO_64 - TWO_53 ? Number(value - TWO_64) : NaN;
}

/** The low `length` (1-8) bytes of an exact number's 64-bit two's complement, little-endian, at `at`. */
function writeNumber(buffer: Uint8Array, at: number, length: number, value: number): void {
  const low = value >>> 0;
  const high = Math.floor(value / 0x100000000) >>> 0;
  for (let i = 0; i < length; i++) buffer[at + i] = i < 4 ? (low >>> (8 * i)) & 0xff : (high >>> (8 * (i - 4))) & 0xff;
}

interface CaptureState {
  /** Names whose bytes came from the live process. */
  readLater: Set<string> | undefined;
  /** Names whose bytes are in the red zone below the stack copy (see RED_ZONE_NOT_CAPTURED). */
  belowStack?: Set<string>;
}

/** One hit as the numeric machine reads it (one instance per evaluator, reset per hit). */
class HitFrame implements NumericFrame {
  private plan!: ProbePlan;
  private hit!: LogpointHit;
  private stack!: Uint8Array;
  /** The address of the stack copy's first byte (the stack pointer unless the red zone was fetched too). */
  private sp = NaN;
  /** The stack pointer on x86-64 (the red zone is the 128 bytes below), NaN elsewhere. */
  private redZoneEnd = NaN;
  private bias = 0n;
  addressBias = NaN;
  private cfaValue: number | undefined;
  private frameBaseValue = NaN;
  private readonly scratch = new DataView(new ArrayBuffer(8));
  private readonly framePieces = new NumericLocation();
  /** Registers converted this hit (generation), by perf_regs number. */
  private readonly numbers = new Float64Array(64);
  private readonly converted = new Int32Array(64).fill(-1);
  private generation = 0;

  reset(plan: ProbePlan, hit: LogpointHit, bias: bigint): void {
    this.plan = plan;
    this.hit = hit;
    this.stack = hit.stack;
    this.generation = (this.generation + 1) | 0;
    const sp = this.registerByPerf(plan.arch.stackPointerPerf);
    this.sp = hit.stackStart === undefined ? sp : exactNumber(hit.stackStart);
    this.redZoneEnd = plan.arch === X86_64 ? sp : NaN;
    if (bias !== this.bias || this.addressBias !== this.addressBias) {
      this.bias = bias;
      this.addressBias = exactNumber(bias);
    }
    this.cfaValue = undefined;
    // Worked out before any variable runs: the machine is not reentrant.
    this.frameBaseValue = plan.usesFrameBase && plan.frameBase ? this.computeFrameBase(plan.frameBase) : NaN;
  }

  register(dwarf: number): number {
    const perf = this.plan.arch.perfRegOfDwarf[dwarf];
    if (perf === undefined || perf < 0) return REGISTER_MISSING;
    return this.registerByPerf(perf);
  }

  /** A sampled register (perf_regs number) as an exact number, converted once per hit (the stack pointer is also the CFA's). */
  registerByPerf(perf: number): number {
    if (perf < 64 && this.converted[perf] === this.generation) return this.numbers[perf];
    const value = this.hit.registers[perf];
    const number = value === undefined ? REGISTER_MISSING : exactNumber(value);
    if (perf < 64) {
      this.numbers[perf] = number;
      this.converted[perf] = this.generation;
    }
    return number;
  }

  read(address: number, size: number): number {
    const at = address - this.sp;
    // As the BigInt machine reads: 8 bytes from the stack copy, then the low `size` of them.
    if (!(at >= 0 && at + 8 <= this.stack.length)) return at === at ? REGISTER_MISSING : NaN;
    const stack = this.stack;
    const low = (stack[at] | (stack[at + 1] << 8) | (stack[at + 2] << 16) | (stack[at + 3] << 24)) >>> 0;
    if (size <= 4) return size === 4 ? low : low & ((1 << (size * 8)) - 1);
    const fullHigh = (stack[at + 4] | (stack[at + 5] << 8) | (stack[at + 6] << 16) | (stack[at + 7] << 24)) >>> 0;
    const high = size === 8 ? fullHigh : fullHigh & ((1 << ((size - 4) * 8)) - 1);
    if (high < 0x200000) return high * 0x100000000 + low;
    if (size === 8 && high >= 0xffe00000) return (high | 0) * 0x100000000 + low;
    return NaN;
  }

  cfa(): number {
    if (this.cfaValue !== undefined) return this.cfaValue;
    const register = this.plan.cfaRegister;
    const value = register === undefined ? NaN : this.register(register);
    this.cfaValue = value === REGISTER_MISSING ? NaN : value + this.plan.cfaOffset;
    return this.cfaValue;
  }

  frameBase(): number {
    return this.frameBaseValue;
  }

  private computeFrameBase(program: CompiledExpression): number {
    const out = this.framePieces;
    if (runNumeric(program, this, out) !== NUMERIC_DONE || out.count !== 1) return NaN;
    if (out.kind[0] === PIECE_MEMORY) return out.value[0];
    if (out.kind[0] === PIECE_REGISTER) {
      const value = this.register(out.value[0]);
      return value === REGISTER_MISSING ? NaN : value;
    }
    return NaN;
  }

  /** Whether the stack copy holds `size` bytes at `address` (false for NaN). */
  stackHolds(address: number, size: number): boolean {
    const from = address - this.sp;
    return from >= 0 && from + size <= this.stack.length;
  }

  /** Where `address` is in the stack copy (see stackHolds). */
  stackOffset(address: number): number {
    return address - this.sp;
  }

  /** A value of at most 8 bytes that is a whole register, as materialize() writes a register piece. */
  copyRegister(dwarf: number, size: number, buffer: Uint8Array, to: number): void {
    const perf = this.plan.arch.perfRegOfDwarf[dwarf];
    const value = perf === undefined || perf < 0 ? undefined : this.hit.registers[perf];
    if (value === undefined) {
      buffer.fill(BYTE_NOT_CAPTURED, this.plan.totalSize + to, this.plan.totalSize + to + size);
      return;
    }
    const exact = exactNumber(value);
    if (exact === exact) writeNumber(buffer, to, size, exact);
    else {
      this.scratch.setBigUint64(0, BigInt.asUintN(64, value), true);
      for (let i = 0; i < size; i++) buffer[to + i] = this.scratch.getUint8(i);
    }
  }

  /**
   * A variable's bytes from the pieces the numeric machine named, as materialize() writes them; false
   * where a piece needs what only the BigInt path says right (then nothing it wrote matters).
   */
  materialize(
    variable: VariablePlan,
    out: NumericLocation,
    buffer: Uint8Array,
    processMemory: ProcessMemoryReader | undefined,
    capture: CaptureState,
  ): boolean {
    const size = variable.size!;
    const base = variable.offset;
    const states = this.plan.totalSize + base;
    let at = 0;
    let split = false;
    for (let n = 0; n < out.count && at < size; n++) {
      const pieceSize = out.size[n];
      if (pieceSize >= 0) split = true;
      const length = Math.min(pieceSize < 0 ? size : pieceSize, size - at);
      switch (out.kind[n]) {
        case PIECE_OPTIMIZED_OUT:
          buffer.fill(BYTE_OPTIMIZED_OUT, states + at, states + at + length);
          break;
        case PIECE_IMPLICIT: {
          const bytes = variable.numeric!.implicit[out.value[n]];
          buffer.set(bytes.subarray(0, length), base + at);
          if (bytes.length < length) buffer.fill(BYTE_OPTIMIZED_OUT, states + at + bytes.length, states + at + length);
          break;
        }
        case PIECE_VALUE:
          writeNumber(buffer, base + at, Math.min(length, 8), out.value[n]);
          break; // bytes past 8 of a computed value are zeros, known
        case PIECE_REGISTER: {
          const perf = this.plan.arch.perfRegOfDwarf[out.value[n]];
          const value = perf === undefined || perf < 0 ? undefined : this.hit.registers[perf];
          if (value === undefined) {
            buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
            break;
          }
          const exact = exactNumber(value);
          if (exact === exact) writeNumber(buffer, base + at, Math.min(length, 8), exact);
          else {
            this.scratch.setBigUint64(0, BigInt.asUintN(64, value), true);
            for (let i = 0; i < Math.min(length, 8); i++) buffer[base + at + i] = this.scratch.getUint8(i);
          }
          // A register holds 8 bytes: vector registers are not sampled.
          if (length > 8) buffer.fill(BYTE_NOT_CAPTURED, states + at + 8, states + at + length);
          break;
        }
        case PIECE_MEMORY: {
          const address = out.value[n];
          const inStack = address - this.sp;
          if (inStack >= 0 && inStack + length <= this.stack.length) {
            const stack = this.stack;
            const to = base + at;
            for (let i = 0; i < length; i++) buffer[to + i] = stack[inStack + i];
            break;
          }
          if (address < this.sp && address + length > this.redZoneEnd - X86_64_RED_ZONE) {
            // Not in the process later either: the next call there overwrites it.
            buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
            (capture.belowStack ??= new Set()).add(variable.name);
            break;
          }
          const fromFile = this.fileBytes(variable, address, length);
          if (fromFile) {
            // As materialize(): bytes the file holds but too few (the read crosses the segment's end) are not captured.
            if (fromFile.length >= length) for (let i = 0; i < length; i++) buffer[base + at + i] = fromFile[i];
            else buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
            break;
          }
          const live = processMemory?.(this.hit.pid, BigInt(address), length);
          if (live && live.length > 0) (capture.readLater ??= new Set()).add(variable.name);
          if (live && live.length >= length) buffer.set(live.subarray(0, length), base + at);
          else buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
          break;
        }
      }
      at += length;
    }
    if (at < size && split) buffer.fill(BYTE_OPTIMIZED_OUT, states + at, states + size);
    return true;
  }

  /** Bytes at a runtime address that the object's file holds unchangeably, read once per address. */
  private fileBytes(variable: VariablePlan, address: number, length: number): Uint8Array | undefined {
    if (variable.fileBias !== this.bias || !variable.fileBytes) {
      variable.fileBytes = new Map();
      variable.fileBias = this.bias;
    }
    let bytes = variable.fileBytes.get(address);
    if (bytes === undefined) {
      bytes = readOnlyFileBytes(this.plan.object, BigInt(address) - this.bias, length, this.bias) ?? null;
      if (variable.fileBytes.size >= 1024) variable.fileBytes.clear();
      variable.fileBytes.set(address, bytes);
    }
    return bytes ?? undefined;
  }
}

/** The BigInt expression machine over one hit, for the locations the numeric one gives up on. */
class GeneralReader {
  current = '';
  private readonly ctx: ExpressionContext;
  /** The address of the stack copy's first byte. */
  private readonly sp: bigint;
  private readonly stackEnd: bigint;
  /** The stack pointer on x86-64 (the red zone is the 128 bytes below). */
  private readonly redZoneEnd: bigint | undefined;

  constructor(
    private readonly plan: ProbePlan,
    private readonly hit: LogpointHit,
    private readonly bias: bigint,
    private readonly processMemory: ProcessMemoryReader | undefined,
    private readonly capture: CaptureState,
  ) {
    const { arch, object, vaddr, scope } = plan;
    const registers = new Map<number, bigint>();
    arch.perfRegOfDwarf.forEach((perf, dwarf) => {
      const value = hit.registers[perf];
      if (perf >= 0 && value !== undefined) registers.set(dwarf, value);
    });
    const sp = (this.sp = hit.stackStart ?? hit.registers[arch.stackPointerPerf]);
    const stackEnd = (this.stackEnd = sp + BigInt(hit.stack.length));
    this.redZoneEnd = arch === X86_64 ? hit.registers[arch.stackPointerPerf] : undefined;
    const stackView = new DataView(hit.stack.buffer, hit.stack.byteOffset, hit.stack.byteLength);
    const readStack = (address: bigint): bigint => {
      if (address < sp || address + 8n > stackEnd) throw new LocationUnavailable('not-captured', `0x${address.toString(16)} is outside the stack copy`);
      return stackView.getBigUint64(Number(address - sp), true);
    };
    let cfa: bigint | undefined;
    const cfaOf = (): bigint => {
      if (cfa !== undefined) return cfa;
      const row = object.callFrameInfo()?.rowAt(vaddr);
      if (!row) throw new LocationUnavailable('not-captured', 'no call frame information at this pc');
      cfa = evaluateCfa(row.cfa, registers, readStack);
      return cfa;
    };
    const unit = scope.subprogram.unit;
    const info = object.dwarfInfo()!;
    const base: ExpressionContext = {
      registers,
      read: readStack,
      cfa: cfaOf,
      addressBias: bias,
      addressIndex: (index) => info.addressIndex(unit, index),
    };
    let frameBase: bigint | undefined;
    const frameBaseOf = (): bigint => {
      if (frameBase !== undefined) return frameBase;
      if (scope.frameBase.kind !== 'expression') throw new LocationUnavailable('optimized-out', 'the function has no frame base at this pc');
      frameBase = evaluateFrameBase(scope.frameBase.expression, base);
      return frameBase;
    };
    this.ctx = { ...base, frameBase: frameBaseOf };
  }

  /** Memory at the hit: the stack copy, else the object's read-only bytes, else the live process (read later). */
  readonly memory = (address: bigint, length: number): Uint8Array | undefined => {
    const { hit, sp, stackEnd } = this;
    if (address >= sp && address + BigInt(length) <= stackEnd) return hit.stack.subarray(Number(address - sp), Number(address - sp) + length);
    if (this.redZoneEnd !== undefined && address < sp && address + BigInt(length) > this.redZoneEnd - BigInt(X86_64_RED_ZONE)) {
      (this.capture.belowStack ??= new Set()).add(this.current);
      return undefined;
    }
    const fromFile = readOnlyFileBytes(this.plan.object, address - this.bias, length, this.bias);
    if (fromFile) return fromFile;
    const live = this.processMemory?.(hit.pid, address, length);
    if (live && live.length > 0) {
      (this.capture.readLater ??= new Set()).add(this.current);
      return live;
    }
    return undefined;
  };

  /** The value's bytes into `buffer` at `offset` (states at totalSize + offset), or the text that says why there are none. */
  materializeInto(location: VariableLocation, size: number, buffer: Uint8Array, offset: number, totalSize: number): string | undefined {
    let value: ValueBytes;
    try {
      value = materialize(location, size, this.ctx, this.memory);
    } catch (error) {
      if (error instanceof LocationUnavailable) {
        return error.reason === 'optimized-out' ? OPTIMIZED_OUT : error.reason === 'not-captured' ? NOT_CAPTURED : `<unsupported: ${error.message}>`;
      }
      return `<error: ${(error as Error).message}>`;
    }
    buffer.set(value.bytes, offset);
    buffer.set(value.state, totalSize + offset);
    return undefined;
  }
}

/** One hit's values: bytes read at the hit, text written on first use (a summary or an export asks; a benchmark of reading need not). */
class CapturedValues implements LogpointValues {
  readonly function: string | undefined;
  readonly notCaptured: Readonly<Record<string, string>> | undefined;
  // Private (#) so that neither a spread nor JSON sees them: the values are what a record carries.
  readonly #plan: ProbePlan;
  readonly #hit: LogpointHit;
  readonly #bias: bigint;
  readonly #buffer: Uint8Array;
  /** Per variable, its text where capture() found it: kept for its bytes, or where its bytes say nothing (optimized out, not captured, an error). */
  readonly #texts: (string | undefined)[];
  readonly #processMemory: ProcessMemoryReader | undefined;
  #values: Record<string, string> | undefined;
  #readLater: Set<string> | undefined;
  readonly #cacheTexts: boolean;

  constructor(
    plan: ProbePlan,
    hit: LogpointHit,
    bias: bigint,
    buffer: Uint8Array,
    texts: (string | undefined)[],
    readLater: Set<string> | undefined,
    processMemory: ProcessMemoryReader | undefined,
    belowStack: Set<string> | undefined,
    cacheTexts: boolean,
  ) {
    this.function = plan.scope.functionName;
    this.#cacheTexts = cacheTexts;
    if (belowStack) this.notCaptured = Object.fromEntries([...belowStack].map((name) => [name, RED_ZONE_NOT_CAPTURED]));
    this.#plan = plan;
    this.#hit = hit;
    this.#bias = bias;
    this.#buffer = buffer;
    this.#texts = texts;
    this.#readLater = readLater;
    this.#processMemory = processMemory;
  }

  get values(): Readonly<Record<string, string>> {
    return (this.#values ??= this.#format());
  }

  get readLater(): readonly string[] | undefined {
    void this.values; // the text a pointer points at may come from the live process too
    return this.#readLater ? [...this.#readLater] : undefined;
  }

  #format(): Record<string, string> {
    const plan = this.#plan;
    const buffer = this.#buffer;
    const { totalSize, variables } = plan;
    // The texts capture() found (kept ones, and those its bytes cannot say), the rest written here.
    const out = this.#texts;
    let writer: ValueWriter | undefined;
    for (let i = 0; i < variables.length; i++) {
      if (out[i] !== undefined) continue;
      const variable = variables[i];
      if (!variable.location) out[i] = '<no variable of that name in scope>';
      else if (variable.size === undefined) out[i] = '<incomplete type>';
      else {
        writer ??= new ValueWriter(plan, this.#hit, this.#bias, buffer, this.#processMemory, (name) => (this.#readLater ??= new Set()).add(name));
        const written = writer.write(variable);
        out[i] = written;
        // Kept for its bytes unless it read memory that changes; the table still holds this hit's key from capture()'s lookup.
        if (this.#cacheTexts && !writer.changeable && plan.textsBias === this.#bias) {
          const table = variable.texts;
          if (table && table.lookup(buffer, variable.offset, variable.size, buffer, totalSize + variable.offset) === undefined) table.store(written);
        }
      }
    }
    return (plan.makeValues ??= valuesMaker(variables.map((variable) => variable.name)))(out as string[]);
  }
}

/** Writes the text of one hit's values whose text is not known already (see VariablePlan.texts). */
class ValueWriter {
  /** Set when the last value written read memory that another hit with the same bytes may find different. */
  changeable = false;
  private current = '';
  private readonly value: ValueBytes;
  private readonly targets: PointerTargets;

  constructor(
    private readonly plan: ProbePlan,
    hit: LogpointHit,
    bias: bigint,
    buffer: Uint8Array,
    processMemory: ProcessMemoryReader | undefined,
    readLater: (name: string) => void,
  ) {
    const { totalSize, object } = plan;
    this.value = { bytes: buffer.subarray(0, totalSize), state: buffer.subarray(totalSize) };
    const sp = hit.stackStart ?? hit.registers[plan.arch.stackPointerPerf];
    const stackEnd = sp + BigInt(hit.stack.length);
    const memory = (address: bigint, length: number): Uint8Array | undefined => {
      if (address >= sp && address + BigInt(length) <= stackEnd) {
        this.changeable = true;
        return hit.stack.subarray(Number(address - sp), Number(address - sp) + length);
      }
      const fromFile = readOnlyFileBytes(object, address - bias, length, bias);
      if (fromFile) return fromFile;
      this.changeable = true;
      const live = processMemory?.(hit.pid, address, length);
      if (live && live.length > 0) {
        readLater(this.current);
        return live;
      }
      return undefined;
    };
    if (plan.fileTargetsBias !== bias || !plan.fileTargets) {
      plan.fileTargets = new Map();
      plan.fileTargetsBias = bias;
    }
    const fileTargets = plan.fileTargets;
    this.targets = {
      readBytes: (address, limit) => {
        // A string in the stack copy may run past its end: take what is there, then the rest from elsewhere.
        if (address >= sp && address < stackEnd) {
          this.changeable = true;
          const inStack = hit.stack.subarray(Number(address - sp), Math.min(hit.stack.length, Number(address - sp) + limit));
          if (inStack.includes(0) || inStack.length >= limit) return inStack;
        }
        // The object's read-only bytes cannot change: read once per address (the few strings a logpoint's pointers point at).
        const known = fileTargets.get(address);
        if (known !== undefined && known.length >= limit) return known;
        const wasChangeable = this.changeable;
        this.changeable = false;
        const bytes = memory(address, limit) ?? shortestReadable(memory, address, limit);
        if (!this.changeable && bytes && limit === PRINT_ELEMENTS + 1) {
          if (fileTargets.size >= 1024) fileTargets.clear();
          fileTargets.set(address, bytes);
        }
        this.changeable ||= wasChangeable;
        return bytes;
      },
      symbolAt: (address) => symbolAt(object, address - bias),
    };
  }

  write(variable: VariablePlan): string {
    this.current = variable.name;
    this.changeable = false;
    return this.plan.state.formatter.format(variable.type, this.value, this.targets, variable.offset);
  }
}

/**
 * A function that makes the values object of a plan's names from their texts: an object literal of those
 * names, which V8 creates from one template, where storing 13 names one by one into an object goes through
 * its slowest property path (every hit of every logpoint writes one). A name appears once, at its first
 * place, with the text of its last (as assigning in order would); `__proto__` is a computed key, an own property.
 */
function valuesMaker(names: readonly string[]): (texts: readonly string[]) => Record<string, string> {
  const last = new Map(names.map((name, i) => [name, i]));
  const properties = [...last].map(([name, i]) => `${name === '__proto__' ? `[${JSON.stringify(name)}]` : JSON.stringify(name)}: texts[${i}]`);
  return new Function('texts', `return { ${properties.join(', ')} };`) as (texts: readonly string[]) => Record<string, string>;
}

/** A variable's bytes from its location at this pc: each piece from its register, memory, value or constant. */
function materialize(
  location: VariableLocation,
  size: number,
  ctx: ExpressionContext,
  memory: (address: bigint, length: number) => Uint8Array | undefined,
): ValueBytes {
  const bytes = new Uint8Array(size);
  const state = new Uint8Array(size);
  if (location.kind === 'none') {
    state.fill(BYTE_OPTIMIZED_OUT);
    return { bytes, state };
  }
  if (location.kind === 'constant') {
    bytes.set(location.bytes.subarray(0, size));
    if (location.bytes.length < size) state.fill(BYTE_OPTIMIZED_OUT, location.bytes.length);
    return { bytes, state };
  }
  const pieces: LocationPiece[] = evaluateLocation(location.expression, ctx);
  let at = 0;
  for (const piece of pieces) {
    if (at >= size) break;
    const length = Math.min(piece.size ?? size, size - at);
    const part = piece.part;
    switch (part.kind) {
      case 'optimized-out':
        state.fill(BYTE_OPTIMIZED_OUT, at, at + length);
        break;
      case 'implicit': {
        bytes.set(part.bytes.subarray(0, length), at);
        if (part.bytes.length < length) state.fill(BYTE_OPTIMIZED_OUT, at + part.bytes.length, at + length);
        break;
      }
      case 'value':
      case 'register': {
        const value = part.kind === 'value' ? part.value : ctx.registers.get(part.register);
        if (value === undefined) {
          state.fill(BYTE_NOT_CAPTURED, at, at + length);
          break;
        }
        for (let i = 0; i < Math.min(length, 8); i++) bytes[at + i] = Number((value >> BigInt(8 * i)) & 0xffn);
        // A register holds 8 bytes: a longer value in one register is one the sample cannot hold (vector registers are not sampled).
        if (length > 8) state.fill(part.kind === 'value' ? 0 : BYTE_NOT_CAPTURED, at + 8, at + length);
        break;
      }
      case 'memory': {
        const read = memory(part.address, length);
        if (read && read.length >= length) bytes.set(read.subarray(0, length), at);
        else state.fill(BYTE_NOT_CAPTURED, at, at + length);
        break;
      }
    }
    at += length;
  }
  if (at < size && pieces.some((piece) => piece.size !== undefined)) state.fill(BYTE_OPTIMIZED_OUT, at, size);
  return { bytes, state };
}

/**
 * Bytes at link-time `vaddr` that cannot differ from the object's file: a read-only segment's (string
 * literals, constant tables), or a RELRO page's with ld.so's relative relocations applied (tables of
 * pointers in a PIE). Undefined elsewhere, and where another object's address would be written.
 */
function readOnlyFileBytes(object: ObjectFile, vaddr: bigint, length: number, bias: bigint): Uint8Array | undefined {
  const headers = object.elf.programHeaders;
  const relro = headers.find((p) => p.type === PT_GNU_RELRO && vaddr >= p.vaddr && vaddr + BigInt(length) <= p.vaddr + p.memSize);
  for (const segment of headers) {
    if (segment.type !== PT_LOAD || ((segment.flags & PF_W) !== 0 && !relro)) continue;
    if (vaddr < segment.vaddr || vaddr >= segment.vaddr + segment.fileSize) continue;
    const start = Number(segment.offset + (vaddr - segment.vaddr));
    const end = Math.min(start + length, Number(segment.offset + segment.fileSize));
    if (!relro) return object.elf.bytes.subarray(start, end);
    // A copy (the file's bytes may be a Buffer, whose slice() would share them).
    const bytes = new Uint8Array(object.elf.bytes.subarray(start, end));
    const view = new DataView(bytes.buffer);
    const relocations = object.elf.dynamicRelocations();
    // Every 8-byte slot the read touches that a relocation writes (slots are 8-byte aligned).
    for (let slot = vaddr & ~7n; slot < vaddr + BigInt(bytes.length); slot += 8n) {
      if (!relocations.has(slot)) continue;
      const addend = relocations.get(slot);
      if (addend === undefined) return undefined;
      const word = new Uint8Array(8);
      new DataView(word.buffer).setBigUint64(0, BigInt.asUintN(64, addend + bias), true);
      for (let i = 0; i < 8; i++) {
        const at = Number(slot - vaddr) + i;
        if (at >= 0 && at < bytes.length) view.setUint8(at, word[i]);
      }
    }
    return bytes;
  }
  return undefined;
}

/** For a C string near the end of readable memory: the longest prefix that reads, halving the length. */
function shortestReadable(memory: (address: bigint, length: number) => Uint8Array | undefined, address: bigint, limit: number): Uint8Array | undefined {
  for (let length = limit >> 1; length >= 1; length >>= 1) {
    const bytes = memory(address, length);
    if (bytes) return bytes;
  }
  return undefined;
}

/** `name` or `name+off` for a link-time address inside a function or data symbol of the object, as gdb shows after a pointer. */
function symbolAt(object: ObjectFile, vaddr: bigint): string | undefined {
  const fn = object.functionAt(vaddr);
  if (fn) return vaddr === fn.start ? fn.name : `${fn.name}+${vaddr - fn.start}`;
  for (const symbol of object.symbols()) {
    if (symbol.kind !== 'object' || symbol.value === 0n) continue;
    if (vaddr === symbol.value) return symbol.name;
    if (vaddr > symbol.value && vaddr < symbol.value + BigInt(symbol.size)) return `${symbol.name}+${vaddr - symbol.value}`;
  }
  return undefined;
}

/**
 * A logpoint hit whose uprobe fetched the x86-64 red zone (the raw data, see tracefs-uprobes.ts): its stack
 * copy starts with those bytes, 128 below the stack pointer, so the locals of a function that calls none read
 * as any other stack slot.
 */
export function withRedZone(hit: LogpointHit, raw: Uint8Array | undefined): LogpointHit {
  const sp = hit.registers[X86_64.stackPointerPerf];
  if (!raw || raw.length < RED_ZONE_RAW_OFFSET + RED_ZONE_BYTES || sp === undefined) return hit;
  const stack = new Uint8Array(RED_ZONE_BYTES + hit.stack.length);
  stack.set(raw.subarray(RED_ZONE_RAW_OFFSET, RED_ZONE_RAW_OFFSET + RED_ZONE_BYTES));
  stack.set(hit.stack, RED_ZONE_BYTES);
  return { ...hit, stack, stackStart: sp - BigInt(RED_ZONE_BYTES) };
}
