// A logpoint's values: at the pc of one hit, the variables in scope (or the ones named), read
// through their DWARF locations from what the kernel sampled there (PERF_SAMPLE_REGS_USER and
// PERF_SAMPLE_STACK_USER), and written as gdb prints them. Memory outside the stack copy is read
// from the object's file where it is read-only there (string literals, constant tables), else from
// the live process (globals, the heap) where that is allowed, which is memory as it is when the
// record is decoded, not at the hit: those names are listed in `readLater`.
// A logpoint's hits come at a handful of pcs: what reading there takes is worked out once per
// (object, pc, names) as a ProbePlan, a hit only runs it on its registers and stack (numbers, not
// BigInts, see dwarf-expression-numeric.ts), and takes each value's text from those its variable kept
// by their bytes, writing only texts not seen before. A hit allocates nothing then: it goes into
// columns of text ids (LogpointColumns, what a tally of many hits reads) or, for one record, into an
// object of its texts.

import { PF_W, PT_GNU_RELRO, PT_LOAD } from './elf';
import { RED_ZONE_BYTES, RED_ZONE_RAW_OFFSET } from '../abi/uapi';
import type { ObjectFile } from './object-file';
import { AT, TAG, type Die } from './dwarf-info';
import { DwarfScopes, type ScopeAtPc, type ScopeVariable, type VariableLocation } from './dwarf-scopes';
import { evaluateFrameBase, evaluateLocation, LocationUnavailable, type ExpressionContext, type LocationPiece } from './dwarf-expression';
import { FNV_OFFSET, NOT_FOUND, partialWord, wordsOf, type ByBytes, type LogpointColumns, type ValueKeys } from './logpoint-columns';
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
  registerValueOf,
  numericRunner,
  runNumeric,
  type CompiledExpression,
  type NumericFrame,
  type NumericRunner,
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
  /** `numeric` as the function a hit runs (see numericRunner), made at the first hit that runs the expression. */
  run: NumericRunner | undefined;
  /** The shapes most locals have, read without running the expression: a slot at CFA + this (DW_OP_fbreg with the CFA as frame base)... */
  readonly cfaSlot: number | undefined;
  /** ...or this DWARF register (DW_OP_regN), for a value of at most 8 bytes. */
  readonly register: number | undefined;
  /** Bytes read from the object's file (they cannot change) by runtime address, made at the first such read. */
  fileBytes?: FileBytesCache;
}

/**
 * How read() takes one variable of a plan, chosen once when the plan is made: its location at that pc as the
 * smallest reader that does it, so that a hit runs the DWARF expression machine only where nothing simpler reads it.
 */
const enum VariableRead {
  /** No bytes to read: a name neither in scope nor a global, or a type without a size; the plan's fixed text. */
  Text,
  /** A slot at CFA + offset in the stack copy (DW_OP_fbreg with the CFA as frame base), read in place. */
  Slot,
  /** A whole register (DW_OP_regN) of at most 8 bytes. */
  Register,
  /** A register plus a constant (DW_OP_bregN OFFSET; DW_OP_stack_value), the value itself. */
  RegisterValue,
  /** No location at this pc (a location list without an entry here): every byte optimized out. */
  OptimizedOut,
  /** DW_AT_const_value. */
  Constant,
  /** Anything else: the numeric machine runs the decoded expression (the BigInt one where it gives up). */
  Expression,
}

/**
 * Texts of one variable by its bytes and their states, read in place (from the stack copy where the value is
 * a frame slot, so a hit whose text is known copies nothing): TEXT_CACHE_SIZE slots, a text in the first
 * free of the TEXT_CACHE_PROBES slots from the one its key's hash picks, else in that one (replacing what
 * was there). A key is the value's bytes then their states, as little-endian 32-bit words: a lookup is a
 * hash over a few words and a compare, and the table never grows. A slot's numbers (whether it is used, the
 * hash, the text's id in some columns, the key) lie together in one typed array, so a lookup that finds its
 * value touches one or two cache lines, and the text itself only where the caller needs the string.
 */
class TextTable {
  /** 32-bit words of a key: the bytes, then their states. */
  readonly words: number;
  private readonly valueWords: number;
  /** Numbers of a slot: ENTRY_* then the key's words. */
  private readonly stride: number;
  private readonly entries: Int32Array;
  private readonly texts = new Array<string | undefined>(TEXT_CACHE_SIZE).fill(undefined);
  /** The key of the last lookup (and its hash), for store() after a miss. */
  private readonly key: Int32Array;
  private hash = 0;
  /** Set by lookupKnown(), which leaves the key in `low` and `high` (a hit needs no key words): store() writes them. */
  private knownKey = false;
  private low = 0;
  private high = 0;

  constructor(size: number) {
    this.valueWords = (size + 3) >>> 2;
    this.words = this.valueWords * 2;
    this.stride = ENTRY_KEY + this.words;
    this.entries = new Int32Array(TEXT_CACHE_SIZE * this.stride);
    this.key = new Int32Array(this.words);
  }

  /**
   * The slot of the text kept for the `size` bytes at `at` of `bytes` whose states are `size` bytes at `statesAt` of
   * `states` (undefined: all known), -1 where none is.
   */
  lookup(bytes: Uint8Array, at: number, size: number, states: Uint8Array | undefined, statesAt: number): number {
    if (states === undefined && size <= 8) return this.lookupKnown(bytes, at, size);
    const key = this.key;
    const valueWords = this.valueWords;
    // The hash is of the bytes only: a value whose bytes are known rarely has the bytes of one that is not, and the compare sees both.
    const hash = wordsOf(bytes, at, size, key, 0, FNV_OFFSET);
    if (states === undefined)
      for (let w = valueWords; w < key.length; w++) key[w] = 0; // (fill() is a builtin call, dearer for a few words)
    else wordsOf(states, statesAt, size, key, valueWords, 0);
    this.hash = hash;
    this.knownKey = false;
    const slot = textSlot(hash);
    const { words, stride, entries } = this;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const at = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      const e = at * stride;
      if (entries[e + ENTRY_USED] === 0) return -1;
      if (entries[e + ENTRY_HASH] !== hash) continue;
      let same = true;
      for (let w = 0, k = e + ENTRY_KEY; w < words; w++, k++) {
        if (entries[k] !== key[w]) {
          same = false;
          break;
        }
      }
      if (same) return at;
    }
    return -1;
  }

  /** lookup() of a value of at most 8 known bytes (most are: integers, pointers, enums, doubles): two words without loops. */
  lookupKnown(bytes: Uint8Array, at: number, size: number): number {
    // Kept small (the odd sizes and a miss's bookkeeping in functions of their own): V8 inlines it where it is small enough.
    const low = size >= 4 ? bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24) : partialWord(bytes, at, size);
    const high =
      size === 8 ? bytes[at + 4] | (bytes[at + 5] << 8) | (bytes[at + 6] << 16) | (bytes[at + 7] << 24) : size > 4 ? partialWord(bytes, at + 4, size - 4) : 0;
    let hash = Math.imul((0x811c9dc5 | 0) ^ low, 0x01000193);
    if (size > 4) hash = Math.imul(hash ^ high, 0x01000193);
    const slot = textSlot(hash);
    const { words, stride, entries } = this;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const to = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      const e = to * stride;
      if (entries[e + ENTRY_USED] === 0) break;
      const k = e + ENTRY_KEY;
      // The states' words of a stored key are zero where it was stored from known bytes.
      if (
        entries[e + ENTRY_HASH] === hash &&
        entries[k] === low &&
        (size <= 4 || entries[k + 1] === high) &&
        entries[k + words - 1] === 0 &&
        entries[k + (words >>> 1)] === 0
      )
        return to;
    }
    return this.missKnown(hash, low, high);
  }

  /** Not kept: the key of lookupKnown() for store(), which a found value does not need; -1. */
  private missKnown(hash: number, low: number, high: number): number {
    this.hash = hash;
    this.low = low;
    this.high = high;
    this.knownKey = true;
    return -1;
  }

  /** The text in a slot lookup() or store() gave. */
  textAt(slot: number): string {
    return this.texts[slot]!;
  }

  /** Whether a slot holds its text (not one kept for columns that keep the value by its bytes, see read()). */
  hasText(slot: number): boolean {
    return this.texts[slot] !== undefined;
  }

  /** Gives a slot kept without its text that text: the slot. */
  setText(slot: number, text: string): number {
    this.texts[slot] = text;
    return slot;
  }

  /** The id of a slot's text in the columns of `generation` (see LogpointColumns), -1 where it has none there yet. */
  idIn(slot: number, generation: number): number {
    const e = slot * this.stride;
    return this.entries[e + ENTRY_ID_SET] === generation ? this.entries[e + ENTRY_ID] : -1;
  }

  /** Keeps the id a slot's text has in the columns of `generation`. */
  setId(slot: number, generation: number, id: number): void {
    const e = slot * this.stride;
    this.entries[e + ENTRY_ID_SET] = generation;
    this.entries[e + ENTRY_ID] = id;
  }

  /**
   * Keeps `text` for the key of the last lookup: its slot. Undefined: the slot only holds the value's id in columns
   * that keep it by its bytes (see setId), until a record's values need its text (setText).
   */
  store(text: string | undefined): number {
    const { stride, entries, texts, key, hash } = this;
    if (this.knownKey) {
      // lookupKnown's key: its one or two words of bytes, every state known (zero).
      key.fill(0);
      key[0] = this.low;
      if (this.valueWords > 1) key[1] = this.high;
    }
    const slot = textSlot(hash);
    let to = slot;
    for (let probe = 0; probe < TEXT_CACHE_PROBES; probe++) {
      const at = (slot + probe) & (TEXT_CACHE_SIZE - 1);
      if (entries[at * stride + ENTRY_USED] === 0) {
        to = at;
        break;
      }
    }
    const e = to * stride;
    entries[e + ENTRY_USED] = 1;
    entries[e + ENTRY_HASH] = hash;
    entries[e + ENTRY_ID_SET] = 0; // no columns have its id yet (generations start at 1)
    entries.set(key, e + ENTRY_KEY);
    texts[to] = text;
    return to;
  }
}

/** A TextTable slot's numbers: used (1) or free (0), the key's hash, the columns generation its id is for, that id; then the key. */
const ENTRY_USED = 0;
const ENTRY_HASH = 1;
const ENTRY_ID_SET = 2;
const ENTRY_ID = 3;
const ENTRY_KEY = 4;

const TEXT_CACHE_BITS = 8;
const TEXT_CACHE_SIZE = 1 << TEXT_CACHE_BITS;
const TEXT_CACHE_PROBES = 4;
/** The slot of a hash: its top bits after a multiply (Fibonacci hashing), which every bit of the hash moves. */
const textSlot = (hash: number) => Math.imul(hash, 0x9e3779b1) >>> (32 - TEXT_CACHE_BITS);

/**
 * What reading the values at one (object, pc, names) takes, worked out once: the scope, each variable's
 * location at that pc (a location list's entry already picked) decoded for the numeric machine, the
 * CFA rule of the call frame information, and where each value's bytes go in a hit's buffer. A hit then
 * only runs the decoded expressions on its registers and stack, looks each value's text up by its bytes
 * and writes the ones not seen before.
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
  /** The frame base is the CFA (DW_OP_call_frame_cfa, as gcc writes it): read as the CFA, without running it. */
  readonly frameBaseIsCfa: boolean;
  /** The variables' names, in their order. */
  readonly names: readonly string[];
  /** Per variable, in their order: how read() takes it (VariableRead), its size (0 where none), where its bytes go, its CFA offset (Slot). */
  readonly reads: Uint8Array;
  readonly sizes: Int32Array;
  readonly offsets: Int32Array;
  readonly slotOffsets: Int32Array;
  /** Per variable read as VariableRead.RegisterValue: the DWARF register and the constant added to it. */
  readonly valueRegisters: Int32Array;
  readonly valueOffsets: Float64Array;
  /** Per variable read as VariableRead.Text: that text. */
  readonly fixedTexts: readonly (string | undefined)[];
  /**
   * Per variable read as VariableRead.OptimizedOut or Constant (the same bytes at every hit): the slot of its text in
   * its TextTable once written and kept, -1 before (and for every other variable). A table holding one key never moves it.
   */
  readonly fixedSlots: Int32Array;
  /**
   * Per variable, the texts written for it by its bytes and byte states (for `textsBias`), undefined where the
   * evaluator keeps none: a hit with the same bytes has the same text, unless writing it read memory that can change
   * (the stack copy, the live process), which is then not kept. A logpoint's variables take few distinct values at
   * most lines (a loop's bounds, its strings, modes, small counters), and the UI and the export write every hit's.
   */
  readonly tables: (TextTable | undefined)[];
  /**
   * Per variable: how its text is written from its bytes, where that text tells every two byte patterns apart
   * (ValueFormatter.oneToOneText) and texts are kept: columns then keep its values by their bytes (see ValueKeys),
   * and write a text only when it is shown. Where its C string pointers point at memory that can change (not the
   * object's read-only bytes), a value is kept by its text, written at its hit.
   */
  readonly byBytes: readonly (ByBytesPlan | undefined)[];
  /** Runtime [start, end) pairs of the object's bytes that cannot change (see stringsStay), for load bias `rangesBias`. */
  readOnlyRanges?: Float64Array;
  rangesBias?: bigint;
  /** Each hit's values object from its texts in variable order (see valuesMaker). */
  makeValues?: (texts: readonly string[]) => Record<string, string>;
  /** The text id of the function's name in the columns of generation functionIdSet (see evaluateInto). */
  functionId: number;
  functionIdSet: number;
  /** What pointers of this plan pointed at in the object's read-only bytes (C strings), by address, for load bias `fileTargetsBias`. */
  fileTargets?: Map<bigint, Uint8Array>;
  fileTargetsBias?: bigint;
  /** The load bias the variables' kept texts are for (see VariablePlan.texts). */
  textsBias?: bigint;
}

const FBREG = 0x91;
/** readSlots of a value kept by its bytes in columns (see read()). */
const SLOT_BY_BYTES = -2;
/** How a variable is kept by its bytes: as columns keep it, and where its C string pointers are (see OneToOneText). */
interface ByBytesPlan extends ByBytes {
  readonly stringPointers: Int32Array;
}

/** What a text written from bytes that hold no pointer reads of memory: nothing (see ValueFormatter.oneToOneText). */
const NO_TARGETS: PointerTargets = { readBytes: () => undefined };
const NO_VARIABLE = '<no variable of that name in scope>';
const INCOMPLETE_TYPE = '<incomplete type>';

/** Per name read in the red zone, why it is <not captured>. */
function notCapturedOf(belowStack: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries([...belowStack].map((name) => [name, RED_ZONE_NOT_CAPTURED]));
}

export class LogpointEvaluator {
  private readonly objects = new WeakMap<ObjectFile, ObjectState | null>();
  private readonly frame = new HitFrame();
  private readonly pieces = new NumericLocation();
  private last: { vaddr: bigint; names: readonly string[] | undefined; state: ObjectState; plan: ProbePlan | string } | undefined;
  /** The load bias (runtime - link-time pc) of the hit planOf() located last. */
  private planBias = 0n;
  /** planBias as an exact number (NaN where none is), what the numeric machine adds to DW_OP_addr. */
  private planAddressBias = 0;
  private biasPc = -1n;
  private biasVaddr = -1n;
  /**
   * The pid, pc and names array of the last hit planOf() found a plan for, and that plan: a logpoint's next hit
   * (same process, same pc) takes it without asking the locator again, whose answer for the same address does not
   * change until forgetLocations().
   */
  private memoPid = -1;
  private memoPc = -1n;
  private memoNames: readonly string[] | undefined;
  private memoPlan: ProbePlan | undefined;
  /** The state of the object located last (before the WeakMap). */
  private lastObject: ObjectFile | undefined;
  private lastState: ObjectState | null = null;
  /** What read() found, per variable of its plan: the text, and its slot in the variable's TextTable (-1: not kept). */
  private readonly readTexts: string[] = [];
  private readSlots = new Int32Array(16);
  /** Per variable read() kept by its bytes (readSlots SLOT_BY_BYTES): its id in the columns. */
  private readIds = new Int32Array(16);
  private readonly readState: CaptureState = { readLater: undefined, belowStack: undefined };
  /** One hit's value bytes, then their states (see ValueBytes): reused from hit to hit, as the texts are written in read(). */
  private buffer = new Uint8Array(256);

  constructor(
    private readonly locate: ObjectLocator,
    private readonly processMemory?: ProcessMemoryReader,
    /** False: every location through the BigInt machine, the reference the numeric one is compared with (tests). */
    private readonly numeric = true,
    /** False: every value's text written at every hit, none kept by its bytes (see VariablePlan.texts): the reference, and a benchmark's cold case. */
    private readonly cacheTexts = true,
  ) {}

  private state(object: ObjectFile): ObjectState | null {
    if (object === this.lastObject) return this.lastState;
    let state = this.objects.get(object);
    if (state === undefined) {
      const info = object.dwarfInfo();
      state = info
        ? { scopes: new DwarfScopes(info), formatter: new ValueFormatter(info), arch: unwindArchOf(object.elf.header.machine), plans: new Map() }
        : null;
      this.objects.set(object, state);
    }
    this.lastObject = object;
    this.lastState = state;
    return state;
  }

  /**
   * The values at one hit (one record's details, an export's line): every variable in scope, or only `names` (a
   * name not in scope is looked up as a global), each as gdb prints it. A `names` array is read once and its plan
   * kept by identity: pass a new array rather than changing one. Hits read in bulk go to evaluateInto.
   */
  evaluate(hit: LogpointHit, names?: readonly string[]): LogpointValues {
    const plan = this.planOf(hit, names);
    if (typeof plan === 'string') return { values: {}, error: plan };
    this.read(plan, hit, this.planBias, this.planAddressBias);
    const texts = this.readTexts;
    const slots = this.readSlots;
    for (let i = 0; i < plan.variables.length; i++) if (slots[i] >= 0) texts[i] = plan.tables[i]!.textAt(slots[i]);
    const state = this.readState;
    return {
      values: (plan.makeValues ??= valuesMaker(plan.names))(this.readTexts),
      function: plan.scope.functionName,
      readLater: state.readLater ? [...state.readLater] : undefined,
      notCaptured: state.belowStack ? notCapturedOf(state.belowStack) : undefined,
    };
  }

  /**
   * The values at one hit as evaluate() reads them, appended to `columns` as a row of text ids (a value whose text
   * was kept for its bytes adds no text and makes no object): what reads many hits (a tally, a summary) and counts
   * them. Returns the hit's row.
   */
  evaluateInto(hit: LogpointHit, names: readonly string[] | undefined, columns: LogpointColumns): number {
    const plan = this.planOf(hit, names);
    if (typeof plan === 'string') return columns.addHitWithoutValues(plan);
    const row = columns.addHit();
    const layout = columns.layoutOf(plan, plan.names, plan.byBytes);
    this.read(plan, hit, this.planBias, this.planAddressBias, columns.layoutValues[layout], columns.generation);
    columns.setLayout(row, layout);
    const targets = columns.layoutColumns[layout];
    const count = plan.variables.length;
    const slots = this.readSlots;
    const ids = this.readIds;
    for (let i = 0; i < count; i++) {
      const slot = slots[i];
      columns.columns[targets[i]][row] = slot === SLOT_BY_BYTES ? ids[i] : this.textIdOf(plan, i, slot, columns);
    }
    const generation = columns.generation;
    if (plan.functionIdSet === generation) columns.functions[row] = plan.functionId;
    else this.functionInto(plan, row, columns);
    const state = this.readState;
    if (state.readLater || state.belowStack) this.captureInto(row, columns);
    return row;
  }

  /** The id in `columns` of the text read() gave variable i (in its TextTable's `slot`, or in readTexts where -1). */
  private textIdOf(plan: ProbePlan, i: number, slot: number, columns: LogpointColumns): number {
    if (slot < 0) return columns.intern(this.readTexts[i]);
    // A kept text has its id in these columns from the first hit that had it: the string is not even touched.
    const table = plan.tables[i]!;
    const generation = columns.generation;
    let id = table.idIn(slot, generation);
    if (id < 0) table.setId(slot, generation, (id = columns.intern(table.textAt(slot))));
    return id;
  }

  /** The function's name of a plan's hit `row`, at the plan's first hit in `columns`. */
  private functionInto(plan: ProbePlan, row: number, columns: LogpointColumns): void {
    if (plan.scope.functionName === undefined) return;
    plan.functionId = columns.intern(plan.scope.functionName);
    plan.functionIdSet = columns.generation;
    columns.functions[row] = plan.functionId;
  }

  /** What read() noted of hit `row` beyond its values: names read later, names in the red zone. */
  private captureInto(row: number, columns: LogpointColumns): void {
    const state = this.readState;
    if (state.readLater) columns.readLater.set(row, [...state.readLater]);
    if (state.belowStack) columns.notCaptured.set(row, notCapturedOf(state.belowStack));
  }

  /**
   * Forgets where the hits' addresses were found (see planOf): the locator's answers change, e.g. after new
   * mappings were learnt. Plans stay, per object and pc.
   */
  forgetLocations(): void {
    this.memoPlan = undefined;
    this.memoPid = -1;
  }

  /** The plan at the hit's pc for `names`, with its load bias in planBias, or why the hit has no values. */
  private planOf(hit: LogpointHit, names: readonly string[] | undefined): ProbePlan | string {
    const memo = this.memoPlan;
    // Only for the first architecture tried, which the search below would take again for the same answer of the locator.
    if (memo !== undefined && hit.pid === this.memoPid && names === this.memoNames) {
      if (hit.registers[X86_64.pcPerf] === this.memoPc && hit.registers[X86_64.stackPointerPerf] !== undefined) return memo;
    }
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
      if (anyLocated || pc === undefined) return 'the sample holds no user registers of a known architecture';
      return `no mapped object with symbols at 0x${pc.toString(16)}`;
    }
    if (!state) return `${located.object.path} has no DWARF debug information (build with -g)`;
    const plan = this.plan(located.object, state, located.vaddr, arch, names);
    if (typeof plan === 'string') return plan;
    // A logpoint's hits come at one pc of one mapping: the bias of the last, without a BigInt made per hit.
    const pc = hit.registers[arch.pcPerf];
    if (pc !== this.biasPc || located.vaddr !== this.biasVaddr) {
      this.biasPc = pc;
      this.biasVaddr = located.vaddr;
      this.planBias = pc - located.vaddr;
      this.planAddressBias = exactNumber(this.planBias);
    }
    if (arch === ARCHES[0]) {
      this.memoPlan = plan;
      this.memoPid = hit.pid;
      this.memoPc = pc;
      this.memoNames = names;
    } else this.memoPlan = undefined;
    return plan;
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
        run: undefined,
        cfaSlot: slot,
        register,
        fileBytes: undefined,
      };
      offset += size ?? 0;
      return plan;
    });
    const reads = Uint8Array.from(variables, (variable): VariableRead => {
      const location = variable.location;
      if (!location || variable.size === undefined) return VariableRead.Text;
      if (location.kind === 'none') return VariableRead.OptimizedOut;
      if (location.kind === 'constant') return VariableRead.Constant;
      if (this.numeric && variable.cfaSlot !== undefined) return VariableRead.Slot;
      if (this.numeric && variable.register !== undefined) return VariableRead.Register;
      if (this.numeric && variable.numeric && registerValueOf(variable.numeric)) return VariableRead.RegisterValue;
      return VariableRead.Expression;
    });
    const registerValues = variables.map((variable) => (variable.numeric ? registerValueOf(variable.numeric) : undefined));
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
      frameBaseIsCfa,
      names: variables.map((variable) => variable.name),
      reads,
      sizes: Int32Array.from(variables, (variable) => variable.size ?? 0),
      offsets: Int32Array.from(variables, (variable) => variable.offset),
      slotOffsets: Int32Array.from(variables, (variable) => variable.cfaSlot ?? 0),
      valueRegisters: Int32Array.from(registerValues, (value) => value?.register ?? 0),
      valueOffsets: Float64Array.from(registerValues, (value) => value?.offset ?? 0),
      fixedTexts: variables.map((variable) => (!variable.location ? NO_VARIABLE : variable.size === undefined ? INCOMPLETE_TYPE : undefined)),
      fixedSlots: new Int32Array(variables.length).fill(-1),
      tables: variables.map((variable) => (this.cacheTexts && variable.location && variable.size !== undefined ? new TextTable(variable.size) : undefined)),
      byBytes: variables.map((variable): ByBytesPlan | undefined => {
        const { type, size } = variable;
        const oneToOne = this.cacheTexts && variable.location && size !== undefined ? state.formatter.oneToOneText(type) : undefined;
        if (!oneToOne || size === undefined) return undefined;
        const states = new Uint8Array(size); // every byte known
        // Pointers kept by their bytes point at the object's read-only bytes (see stringsStay): read from its file, as at the hit.
        const targets = (bias: bigint): PointerTargets => ({
          readBytes: (address, limit) => readOnlyFileBytes(object, address - bias, limit, bias),
          symbolAt: (address) => symbolAt(object, address - bias),
        });
        return {
          size,
          hasPointers: oneToOne.hasPointers,
          stringPointers: Int32Array.from(oneToOne.stringPointers),
          format: (bytes, bias) => state.formatter.format(type, { bytes, state: states }, oneToOne.hasPointers ? targets(bias) : NO_TARGETS, 0),
        };
      }),
      makeValues: undefined,
      functionId: -1,
      functionIdSet: 0,
      fileTargets: undefined,
      fileTargetsBias: undefined,
      textsBias: undefined,
    };
  }

  /**
   * Reads every value of one hit (the numeric machine, or the BigInt one where it gives up): into readSlots the slot
   * of its text in its variable's TextTable where the text is kept there, else -1 and the text into readTexts. A value whose text is
   * kept for its bytes takes that text, and a frame slot's bytes are then not even copied: a logpoint's values mostly
   * repeat. Allocates nothing for such a hit. Each variable is read as its plan's `reads` says (see VariableRead).
   * With `byBytes` (columns' ValueKeys per variable), a value whose bytes are all known is kept there by them instead:
   * readSlots SLOT_BY_BYTES, and its id in readIds; no text is looked up or written.
   */
  private read(plan: ProbePlan, hit: LogpointHit, bias: bigint, addressBias: number, byBytes?: readonly (ValueKeys | undefined)[], generation = 0): void {
    const { totalSize, variables, reads, sizes, offsets, slotOffsets, tables, valueRegisters, valueOffsets, fixedSlots } = plan;
    const count = variables.length;
    if (this.buffer.length < totalSize * 2) this.buffer = new Uint8Array(Math.max(totalSize * 2, this.buffer.length * 2));
    const buffer = this.buffer;
    if (this.readSlots.length < count) {
      this.readSlots = new Int32Array(Math.max(count, this.readSlots.length * 2));
      this.readIds = new Int32Array(this.readSlots.length);
    }
    const ids = this.readIds;
    const texts = this.readTexts;
    while (texts.length < count) texts.push('');
    const slots = this.readSlots;
    const frame = this.frame;
    frame.reset(plan, hit, bias, addressBias);
    const out = this.pieces;
    if (plan.textsBias !== bias) {
      // Texts of pointers name what they point at, which moves with the load address.
      for (let i = 0; i < count; i++) if (tables[i] !== undefined) tables[i] = new TextTable(sizes[i]);
      fixedSlots.fill(-1);
      plan.textsBias = bias;
    }
    const state = this.readState;
    state.readLater = undefined;
    state.belowStack = undefined;
    const stack = hit.stack;
    /** Where the CFA is in the stack copy (worked out at the first frame slot; NaN: unknown, no slot reads from it). */
    let cfaAt = NaN;
    let registerValue: number;
    let general: GeneralReader | undefined;
    let writer: ValueWriter | undefined;
    for (let i = 0; i < count; i++) {
      slots[i] = -1;
      const how = reads[i];
      if (how === VariableRead.Text) {
        texts[i] = plan.fixedTexts[i]!;
        continue;
      }
      let keys = byBytes === undefined ? undefined : byBytes[i];
      // Pointers' texts name what is where the object is loaded: kept by their bytes at one load address.
      if (keys !== undefined && !keys.biasOf(bias, addressBias)) keys = undefined;
      // A value that reads nothing of the hit (no location here, a constant) has one text, kept at its first hit
      // (in columns that keep it by its bytes, it is kept there: one value, one id).
      if (fixedSlots[i] >= 0 && keys === undefined) {
        slots[i] = fixedSlots[i];
        continue;
      }
      const size = sizes[i];
      const offset = offsets[i];
      const states = totalSize + offset;
      const table = tables[i];
      /** The table's slot of this value where it holds no text yet (kept for columns by its bytes): the text goes there. */
      let textless: number;
      read: {
        if (how === VariableRead.Slot) {
          if (cfaAt !== cfaAt) cfaAt = frame.stackOffset(frame.cfa());
          const from = cfaAt + slotOffsets[i];
          if (from >= 0 && from + size <= stack.length) {
            const slot = table === undefined ? -1 : size <= 8 ? table.lookupKnown(stack, from, size) : table.lookup(stack, from, size, undefined, 0);
            if (keys !== undefined) {
              // In columns that keep it by its bytes, its table's slot holds its id there (as SLOT_BY_BYTES - id) from its
              // first hit: most hits end here.
              const kept = slot >= 0 ? table!.idIn(slot, generation) : -1;
              const id = kept <= SLOT_BY_BYTES ? SLOT_BY_BYTES - kept : this.byBytesId(plan, i, keys, table, slot, generation, stack, from, bias);
              if (id !== NOT_FOUND) {
                ids[i] = id;
                slots[i] = SLOT_BY_BYTES;
                continue;
              }
            } else if (slot >= 0 && table!.hasText(slot)) {
              slots[i] = slot;
              continue;
            }
            textless = slot;
            for (let b = 0; b < size; b++) buffer[offset + b] = stack[from + b];
            clearStates(buffer, states, size);
            // The table holds this value's key from its lookup: written below, the text is kept under it.
            break read;
          }
          // Outside the stack copy: the expression says what then (the live process, or not captured).
        }
        // Only this value's own bytes and states: every byte known and zero until read (a piece may leave bytes
        // unwritten, which its states then name). Each value is written from its own bytes alone.
        clearValue(buffer, offset, states, size);
        /** Whether every byte of the value is known (no state written): a table's two-word lookup then takes it. */
        let known = true;
        const variable = variables[i];
        const location = variable.location!;
        if (how === VariableRead.OptimizedOut) {
          for (let at = states; at < states + size; at++) buffer[at] = BYTE_OPTIMIZED_OUT;
          known = false;
        } else if (how === VariableRead.Constant) {
          const bytes = (location as { bytes: Uint8Array }).bytes;
          buffer.set(bytes.subarray(0, size), offset);
          if (bytes.length < size) {
            buffer.fill(BYTE_OPTIMIZED_OUT, states + bytes.length, states + size);
            known = false;
          }
        } else if (how === VariableRead.Register) {
          known = frame.copyRegister(variable.register!, size, buffer, offset);
        } else if (
          how === VariableRead.RegisterValue &&
          (registerValue = frame.registerValueInto(valueRegisters[i], valueOffsets[i], size, buffer, offset)) !== REGISTER_VALUE_INEXACT
        ) {
          if (registerValue === REGISTER_VALUE_MISSING) {
            texts[i] = NOT_CAPTURED;
            continue;
          }
        } else {
          const outcome = variable.numeric && this.numeric ? (variable.run ??= numericRunner(variable.numeric))(frame, out) : NUMERIC_BAIL;
          if (outcome === NUMERIC_OPTIMIZED_OUT || outcome === NUMERIC_NOT_CAPTURED) {
            texts[i] = outcome === NUMERIC_OPTIMIZED_OUT ? OPTIMIZED_OUT : NOT_CAPTURED;
            continue;
          }
          if (outcome === NUMERIC_DONE) known = frame.materialize(variable, out, buffer, this.processMemory, state);
          else {
            general ??= new GeneralReader(plan, hit, bias, this.processMemory, state);
            general.current = variable.name;
            const text = general.materializeInto(location, size, buffer, offset, totalSize);
            if (text !== undefined) {
              texts[i] = text;
              continue;
            }
            for (let b = 0; known && b < size; b++) known = buffer[states + b] === 0;
          }
        }
        // Most values are of at most 8 bytes, every one known: the table's two-word lookup.
        const slot =
          table === undefined ? -1 : known && size <= 8 ? table.lookupKnown(buffer, offset, size) : table.lookup(buffer, offset, size, buffer, states);
        if (keys !== undefined && known) {
          const kept = slot >= 0 ? table!.idIn(slot, generation) : -1;
          const id = kept <= SLOT_BY_BYTES ? SLOT_BY_BYTES - kept : this.byBytesId(plan, i, keys, table, slot, generation, buffer, offset, bias);
          if (id !== NOT_FOUND) {
            ids[i] = id;
            slots[i] = SLOT_BY_BYTES;
            continue;
          }
        } else if (slot >= 0 && table!.hasText(slot)) {
          slots[i] = slot;
          continue;
        }
        textless = slot;
      }
      // A value not seen before (or no texts kept): written now, and kept for its bytes unless it read memory that changes.
      writer ??= new ValueWriter(plan, hit, bias, buffer, this.processMemory, (name) => (state.readLater ??= new Set()).add(name));
      const written = writer.write(variables[i]);
      texts[i] = written;
      if (table !== undefined && !writer.changeable) {
        slots[i] = textless >= 0 ? table.setText(textless, written) : table.store(written);
        if (how === VariableRead.OptimizedOut || how === VariableRead.Constant) fixedSlots[i] = slots[i];
      }
    }
  }

  /**
   * The id in `keys` of variable i's bytes (at `at` of `bytes`) where its table (`slot`: its lookup there) did not hold
   * it for these columns, added when new and then kept in the table's slot too; NOT_FOUND where they are new and a C
   * string pointer among them points at memory that can change: its text is then written at this hit and kept by it.
   */
  private byBytesId(
    plan: ProbePlan,
    i: number,
    keys: ValueKeys,
    table: TextTable | undefined,
    slot: number,
    generation: number,
    bytes: Uint8Array,
    at: number,
    bias: bigint,
  ): number {
    let id = keys.find(bytes, at);
    if (id === NOT_FOUND) {
      const strings = plan.byBytes[i]!.stringPointers;
      if (strings.length > 0 && !stringsStay(plan, strings, bytes, at, bias)) return NOT_FOUND;
      id = keys.addFound();
    }
    // The table's lookup left its key for store(): a slot without text, until a record's values need it.
    // Kept there as SLOT_BY_BYTES - id, apart from the text ids (>= 0) of the values kept by their text.
    if (table !== undefined) table.setId(slot >= 0 ? slot : table.store(undefined), generation, SLOT_BY_BYTES - id);
    return id;
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
 * Whether every C string pointer of a value (at `strings` from `at` of `bytes`) is null or points at bytes of the
 * plan's object that cannot change: in a read-only segment's file bytes (outside RELRO, whose pointers ld.so writes),
 * where its text reads the same from the file at any later time. Memory anywhere else (the stack, the heap, writable
 * data) may hold another string at the next hit, or when the text is written.
 */
function stringsStay(plan: ProbePlan, strings: Int32Array, bytes: Uint8Array, at: number, bias: bigint): boolean {
  if (plan.rangesBias !== bias || !plan.readOnlyRanges) {
    const headers = plan.object.elf.programHeaders;
    const relro = headers.filter((p) => p.type === PT_GNU_RELRO);
    const ranges: number[] = [];
    for (const segment of headers) {
      if (segment.type !== PT_LOAD || (segment.flags & PF_W) !== 0) continue;
      if (relro.some((p) => p.vaddr < segment.vaddr + segment.fileSize && segment.vaddr < p.vaddr + p.memSize)) continue;
      const start = exactNumber(segment.vaddr + bias);
      const end = exactNumber(segment.vaddr + segment.fileSize + bias);
      if (start === start && end === end) ranges.push(start, end);
    }
    plan.readOnlyRanges = Float64Array.from(ranges);
    plan.rangesBias = bias;
  }
  const ranges = plan.readOnlyRanges;
  for (let s = 0; s < strings.length; s++) {
    const p = at + strings[s];
    const low = (bytes[p] | (bytes[p + 1] << 8) | (bytes[p + 2] << 16) | (bytes[p + 3] << 24)) >>> 0;
    const high = (bytes[p + 4] | (bytes[p + 5] << 8) | (bytes[p + 6] << 16) | (bytes[p + 7] << 24)) >>> 0;
    if (low === 0 && high === 0) continue;
    if (high >= 0x200000) return false;
    const address = high * 0x100000000 + low;
    let inside = false;
    for (let r = 0; r < ranges.length && !inside; r += 2) inside = address >= ranges[r] && address < ranges[r + 1];
    if (!inside) return false;
  }
  return true;
}

/**
 * A 64-bit register value as the exact signed number it stands for, NaN where no number is exact. Through a
 * BigInt64Array's halves: Number() of a BigInt is a call into the runtime that cost more than reading a frame slot
 * (a hit converts its stack pointer and the CFA's register).
 */
export function exactNumber(value: bigint): number {
  WORD64[0] = value; // modulo 2^64, as a register holds it
  const number = HALVES_SIGNED[HIGH_HALF] * 0x100000000 + HALVES[LOW_HALF];
  // Exact wherever it lands within 2^53 (the high half is then within 2^21 and the sum needs no rounding).
  return number <= Number.MAX_SAFE_INTEGER && number >= -Number.MAX_SAFE_INTEGER ? number : NaN;
}
const WORD64 = new BigInt64Array(1);
const HALVES = new Uint32Array(WORD64.buffer);
const HALVES_SIGNED = new Int32Array(WORD64.buffer);
/** Which 32-bit half of WORD64 is the low one on this machine. */
const LOW_HALF = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH_HALF = 1 - LOW_HALF;

/** The low `length` (1-8) bytes of an exact number's 64-bit two's complement, little-endian, at `at`. */
function writeNumber(buffer: Uint8Array, at: number, length: number, value: number): void {
  // A Uint8Array store keeps the low 8 bits of what it is given: no masks.
  const low = value >>> 0;
  buffer[at] = low;
  if (length === 1) return;
  buffer[at + 1] = low >>> 8;
  if (length === 2) return;
  buffer[at + 2] = low >>> 16;
  if (length === 3) return;
  buffer[at + 3] = low >>> 24;
  if (length === 4) return;
  // value - low is a multiple of 2^32 below 2^53 + 2^32 in magnitude: exact, and so is its quotient (|high| <= 2^21).
  const high = ((value - low) / 0x100000000) | 0;
  for (let i = 4, shift = 0; i < length; i++, shift += 8) buffer[at + i] = high >> shift;
}

/**
 * Zeroes (every byte known) the states of a value of `size` bytes at `states`: a loop for the few bytes most values
 * have, where fill() is a call into the runtime that costs more than the value's whole read.
 */
function clearStates(buffer: Uint8Array, states: number, size: number): void {
  if (size > 32) buffer.fill(0, states, states + size);
  else for (let b = states; b < states + size; b++) buffer[b] = 0;
}

/** Zeroes a value's bytes at `offset` and their states at `states` (see clearStates). */
function clearValue(buffer: Uint8Array, offset: number, states: number, size: number): void {
  if (size > 32) {
    buffer.fill(0, offset, offset + size);
    buffer.fill(0, states, states + size);
  } else
    for (let b = 0; b < size; b++) {
      buffer[offset + b] = 0;
      buffer[states + b] = 0;
    }
}

/** What HitFrame.registerValueInto did. */
const REGISTER_VALUE_WRITTEN = 0;
const REGISTER_VALUE_MISSING = 1;
const REGISTER_VALUE_INEXACT = 2;

interface CaptureState {
  /** Names whose bytes came from the live process. */
  readLater: Set<string> | undefined;
  /** Names whose bytes are in the red zone below the stack copy (see RED_ZONE_NOT_CAPTURED). */
  belowStack: Set<string> | undefined;
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
  /** The CFA once worked out this hit (cfaKnown): a field that only ever holds numbers, which V8 keeps unboxed. */
  private cfaValue = NaN;
  private cfaKnown = false;
  private frameBaseValue = NaN;
  private readonly scratch = new DataView(new ArrayBuffer(8));
  private readonly framePieces = new NumericLocation();
  /** Registers converted this hit (generation), by perf_regs number. */
  private readonly numbers = new Float64Array(64);
  private readonly converted = new Int32Array(64).fill(-1);
  private generation = 0;

  /** `addressBias`: `bias` as an exact number (NaN where none is), worked out once per plan's location (see planOf). */
  reset(plan: ProbePlan, hit: LogpointHit, bias: bigint, addressBias: number): void {
    this.plan = plan;
    this.hit = hit;
    this.stack = hit.stack;
    this.generation = (this.generation + 1) | 0;
    const sp = this.registerByPerf(plan.arch.stackPointerPerf);
    this.sp = hit.stackStart === undefined ? sp : exactNumber(hit.stackStart);
    this.redZoneEnd = plan.arch === X86_64 ? sp : NaN;
    this.bias = bias;
    this.addressBias = addressBias;
    this.cfaKnown = false;
    // Worked out before any variable runs: the machine is not reentrant.
    // (The CFA needs no run of the machine: cfa() works it out when first asked.)
    this.frameBaseValue = plan.usesFrameBase && plan.frameBase && !plan.frameBaseIsCfa ? this.computeFrameBase(plan.frameBase) : NaN;
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
    if (this.cfaKnown) return this.cfaValue;
    const register = this.plan.cfaRegister;
    const value = register === undefined ? NaN : this.register(register);
    this.cfaValue = value === REGISTER_MISSING ? NaN : value + this.plan.cfaOffset;
    this.cfaKnown = true;
    return this.cfaValue;
  }

  frameBase(): number {
    return this.plan.frameBaseIsCfa ? this.cfa() : this.frameBaseValue;
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

  /**
   * A value that is a register plus a constant, as the numeric machine and materialize() write it: the low bytes
   * (at most 8; any more are zeros, known) at `to`; REGISTER_VALUE_MISSING where the sample lacks the register,
   * REGISTER_VALUE_INEXACT (nothing written) where the sum is not an exact number (the BigInt machine reads it).
   */
  registerValueInto(dwarf: number, add: number, size: number, buffer: Uint8Array, to: number): number {
    const x = this.register(dwarf);
    if (x === REGISTER_MISSING) return REGISTER_VALUE_MISSING;
    const value = x + add;
    if (!(value <= Number.MAX_SAFE_INTEGER && value >= -Number.MAX_SAFE_INTEGER)) return REGISTER_VALUE_INEXACT;
    writeNumber(buffer, to, size < 8 ? size : 8, value);
    return REGISTER_VALUE_WRITTEN;
  }

  /** A value of at most 8 bytes that is a whole register, as materialize() writes a register piece; false where the sample lacks it (not captured). */
  copyRegister(dwarf: number, size: number, buffer: Uint8Array, to: number): boolean {
    const perf = this.plan.arch.perfRegOfDwarf[dwarf];
    const value = perf === undefined || perf < 0 ? undefined : this.hit.registers[perf];
    if (value === undefined) {
      buffer.fill(BYTE_NOT_CAPTURED, this.plan.totalSize + to, this.plan.totalSize + to + size);
      return false;
    }
    const exact = exactNumber(value);
    if (exact === exact) writeNumber(buffer, to, size, exact);
    else {
      this.scratch.setBigUint64(0, BigInt.asUintN(64, value), true);
      for (let i = 0; i < size; i++) buffer[to + i] = this.scratch.getUint8(i);
    }
    return true;
  }

  /**
   * A variable's bytes from the pieces the numeric machine named, as materialize() writes them (into bytes and states
   * the caller zeroed); whether every byte is known (no state written), which spares the caller a look at the states.
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
    let known = true;
    for (let n = 0; n < out.count && at < size; n++) {
      const pieceSize = out.size[n];
      if (pieceSize >= 0) split = true;
      const length = Math.min(pieceSize < 0 ? size : pieceSize, size - at);
      switch (out.kind[n]) {
        case PIECE_OPTIMIZED_OUT:
          buffer.fill(BYTE_OPTIMIZED_OUT, states + at, states + at + length);
          known = false;
          break;
        case PIECE_IMPLICIT: {
          const bytes = variable.numeric!.implicit[out.value[n]];
          buffer.set(bytes.subarray(0, length), base + at);
          if (bytes.length < length) {
            buffer.fill(BYTE_OPTIMIZED_OUT, states + at + bytes.length, states + at + length);
            known = false;
          }
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
            known = false;
            break;
          }
          const exact = exactNumber(value);
          if (exact === exact) writeNumber(buffer, base + at, Math.min(length, 8), exact);
          else {
            this.scratch.setBigUint64(0, BigInt.asUintN(64, value), true);
            for (let i = 0; i < Math.min(length, 8); i++) buffer[base + at + i] = this.scratch.getUint8(i);
          }
          // A register holds 8 bytes: vector registers are not sampled.
          if (length > 8) {
            buffer.fill(BYTE_NOT_CAPTURED, states + at + 8, states + at + length);
            known = false;
          }
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
            known = false;
            (capture.belowStack ??= new Set()).add(variable.name);
            break;
          }
          const fromFile = this.fileBytes(variable, address, length);
          if (fromFile) {
            // As materialize(): bytes the file holds but too few (the read crosses the segment's end) are not captured.
            if (fromFile.length >= length) for (let i = 0; i < length; i++) buffer[base + at + i] = fromFile[i];
            else {
              buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
              known = false;
            }
            break;
          }
          const live = processMemory?.(this.hit.pid, BigInt(address), length);
          if (live && live.length > 0) (capture.readLater ??= new Set()).add(variable.name);
          if (live && live.length >= length) buffer.set(live.subarray(0, length), base + at);
          else {
            buffer.fill(BYTE_NOT_CAPTURED, states + at, states + at + length);
            known = false;
          }
          break;
        }
      }
      at += length;
    }
    if (at < size && split) {
      buffer.fill(BYTE_OPTIMIZED_OUT, states + at, states + size);
      known = false;
    }
    return known;
  }

  /** Bytes at a runtime address that the object's file holds unchangeably, read once per address and length. */
  private fileBytes(variable: VariablePlan, address: number, length: number): Uint8Array | undefined {
    const cache = (variable.fileBytes ??= new FileBytesCache());
    if (cache.bias !== this.addressBias) cache.clear(this.addressBias);
    const entry = cache.find(address, length);
    if (entry >= 0) return cache.bytes[entry] ?? undefined;
    const bytes = readOnlyFileBytes(this.plan.object, BigInt(address) - this.bias, length, this.bias);
    cache.keep(address, length, bytes ?? null);
    return bytes;
  }
}

/**
 * What a variable's pointers read of the object's file, by runtime address and length (-O2's `labels[slot]`
 * reads a table of string pointers at every hit): FILE_BYTES_CACHE_SIZE entries, an address in the one its
 * hash picks (replacing what was there). Numbers in typed arrays, not a Map: a Map's key that is not a small
 * integer (an address is not) is a new heap number at every lookup.
 */
class FileBytesCache {
  /** The load bias (runtime - link-time) the entries are for. */
  bias = NaN;
  private readonly addresses = new Float64Array(FILE_BYTES_CACHE_SIZE);
  /** 0: no entry. */
  private readonly lengths = new Int32Array(FILE_BYTES_CACHE_SIZE);
  /** The file's bytes at an entry's address, null where the file holds none unchangeably. */
  readonly bytes = new Array<Uint8Array | null>(FILE_BYTES_CACHE_SIZE).fill(null);

  clear(bias: number): void {
    this.lengths.fill(0);
    this.bytes.fill(null);
    this.bias = bias;
  }

  /** The entry of `address` read for `length` bytes, -1 where none is. */
  find(address: number, length: number): number {
    const entry = fileBytesEntry(address);
    return this.lengths[entry] === length && this.addresses[entry] === address ? entry : -1;
  }

  keep(address: number, length: number, bytes: Uint8Array | null): void {
    const entry = fileBytesEntry(address);
    this.addresses[entry] = address;
    this.lengths[entry] = length;
    this.bytes[entry] = bytes;
  }
}

const FILE_BYTES_CACHE_BITS = 8;
const FILE_BYTES_CACHE_SIZE = 1 << FILE_BYTES_CACHE_BITS;
/** The entry of an address: its low 32 bits (the ones that differ between a table's slots) hashed (Fibonacci hashing). */
const fileBytesEntry = (address: number) => Math.imul(address >>> 0, 0x9e3779b1) >>> (32 - FILE_BYTES_CACHE_BITS);

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

/** Where withRedZone puts a hit's red zone and stack together, reused from hit to hit (see withRedZone). */
export interface RedZoneRoom {
  bytes: Uint8Array;
  /** bytes.subarray(0, view.length), kept while hits have that length (most of a logpoint's have one). */
  view?: Uint8Array;
  /** The hit returned last, whose fields the next one overwrites. */
  hit?: { pid: number; registers: Readonly<Record<number, bigint>>; stack: Uint8Array; stackStart: bigint };
}

/**
 * A logpoint hit whose uprobe fetched the x86-64 red zone (the raw data, see tracefs-uprobes.ts): its stack
 * copy starts with those bytes, 128 below the stack pointer, so the locals of a function that calls none read
 * as any other stack slot. With `room`, that copy is made in room.bytes (grown when short), and the hit returned is
 * room's, instead of new ones per hit, for a caller that reads each hit's values before the next (the evaluator keeps
 * neither the hit nor its stack bytes).
 */
export function withRedZone(hit: LogpointHit, raw: Uint8Array | undefined, room?: RedZoneRoom): LogpointHit {
  const sp = hit.registers[X86_64.stackPointerPerf];
  if (!raw || raw.length < RED_ZONE_RAW_OFFSET + RED_ZONE_BYTES || sp === undefined) return hit;
  const length = RED_ZONE_BYTES + hit.stack.length;
  if (!room) {
    const stack = new Uint8Array(length);
    stack.set(raw.subarray(RED_ZONE_RAW_OFFSET, RED_ZONE_RAW_OFFSET + RED_ZONE_BYTES));
    stack.set(hit.stack, RED_ZONE_BYTES);
    return { ...hit, stack, stackStart: sp - BigInt(RED_ZONE_BYTES) };
  }
  if (room.bytes.length < length) {
    room.bytes = new Uint8Array(Math.max(length, room.bytes.length * 2));
    room.view = undefined;
  }
  if (room.view?.length !== length) room.view = room.bytes.subarray(0, length);
  const stack = room.view;
  stack.set(raw.subarray(RED_ZONE_RAW_OFFSET, RED_ZONE_RAW_OFFSET + RED_ZONE_BYTES));
  stack.set(hit.stack, RED_ZONE_BYTES);
  const stackStart = sp - RED_ZONE_BIGINT;
  const reused = room.hit;
  if (!reused) return (room.hit = { pid: hit.pid, registers: hit.registers, stack, stackStart });
  reused.pid = hit.pid;
  reused.registers = hit.registers;
  reused.stack = stack;
  reused.stackStart = stackStart;
  return reused;
}
const RED_ZONE_BIGINT = BigInt(RED_ZONE_BYTES);
