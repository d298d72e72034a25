// A logpoint's values: at the pc of one hit, the variables in scope (or the ones named), read
// through their DWARF locations from what the kernel sampled there (PERF_SAMPLE_REGS_USER and
// PERF_SAMPLE_STACK_USER), and written as gdb prints them. Memory outside the stack copy is read
// from the object's file where it is read-only there (string literals, constant tables), else from
// the live process (globals, the heap) where that is allowed, which is memory as it is when the
// record is decoded, not at the hit: those names are listed in `readLater`.

import { PF_W, PT_GNU_RELRO, PT_LOAD } from './elf';
import type { ObjectFile } from './object-file';
import { AT, TAG, type Die } from './dwarf-info';
import { DwarfScopes, type ScopeAtPc, type ScopeVariable, type VariableLocation } from './dwarf-scopes';
import { evaluateFrameBase, evaluateLocation, LocationUnavailable, type ExpressionContext, type LocationPiece } from './dwarf-expression';
import { BYTE_NOT_CAPTURED, BYTE_OPTIMIZED_OUT, NOT_CAPTURED, OPTIMIZED_OUT, ValueFormatter, type PointerTargets, type ValueBytes } from './dwarf-values';
import { evaluateCfa, X86_64, AARCH64, unwindArchOf, type UnwindArch } from './unwind';

/** One hit: the registers by perf_regs bit and the valid stack bytes copied from the stack pointer up. */
export interface LogpointHit {
  readonly pid: number;
  readonly registers: Readonly<Record<number, bigint>>;
  readonly stack: Uint8Array;
}

export interface LogpointValues {
  /** Variable name -> its value as gdb prints it; parameters first, then locals innermost first, or the names asked for in their order. */
  readonly values: Readonly<Record<string, string>>;
  /** The function the pc is in (an inlined function's own name inside its inlined copy). */
  readonly function?: string;
  /** Names whose bytes (or the text they point at) were read from the live process after the hit. */
  readonly readLater?: readonly string[];
  /** Why no values could be read at all (no DWARF at the pc, registers not sampled). */
  readonly error?: string;
}

/** The object mapped at a runtime address and that address's link-time value in it. */
export type ObjectLocator = (pid: number, address: bigint) => { readonly object: ObjectFile; readonly vaddr: bigint } | undefined;
/** Live memory of a process (see native/sys/process-memory.ts); undefined where none can be read. */
export type ProcessMemoryReader = (pid: number, address: bigint, length: number) => Uint8Array | undefined;

interface ObjectState {
  readonly scopes: DwarfScopes;
  readonly formatter: ValueFormatter;
}

export class LogpointEvaluator {
  private readonly objects = new WeakMap<ObjectFile, ObjectState | null>();
  /** Fast plans by pc and names asked (see fastPlan). */
  private readonly plans = new WeakMap<ObjectFile, Map<string, FastPlan | null>>();

  constructor(
    private readonly locate: ObjectLocator,
    private readonly processMemory?: ProcessMemoryReader,
  ) {}

  private state(object: ObjectFile): ObjectState | null {
    let state = this.objects.get(object);
    if (state === undefined) {
      const info = object.dwarfInfo();
      state = info ? { scopes: new DwarfScopes(info), formatter: new ValueFormatter(info) } : null;
      this.objects.set(object, state);
    }
    return state;
  }

  /** The values at one hit: every variable in scope, or only `names` (a name not in scope is looked up as a global). */
  evaluate(hit: LogpointHit, names?: readonly string[]): LogpointValues {
    const arch = archOf(hit.registers, this.locate, hit.pid);
    if (!arch) return { values: {}, error: 'the sample holds no user registers of a known architecture' };
    const pc = hit.registers[arch.pcPerf];
    const sp = hit.registers[arch.stackPointerPerf];
    const located = this.locate(hit.pid, pc);
    if (!located) return { values: {}, error: `no mapped object with symbols at 0x${pc.toString(16)}` };
    const state = this.state(located.object);
    if (!state) return { values: {}, error: `${located.object.path} has no DWARF debug information (build with -g)` };
    const bias = pc - located.vaddr;
    let scope;
    try {
      scope = state.scopes.scopeAt(located.vaddr);
    } catch (error) {
      return { values: {}, error: `${located.object.path}: ${(error as Error).message}` };
    }
    if (!scope) return { values: {}, error: `the DWARF of ${located.object.path} describes no function at 0x${located.vaddr.toString(16)}` };
    const fast = this.fastPlan(located.object, state, located.vaddr, scope, names, arch);
    if (fast) {
      const values = readFast(fast, hit, sp);
      if (values) return { values, ...(scope.functionName ? { function: scope.functionName } : {}) };
    }

    const registers = new Map<number, bigint>();
    arch.perfRegOfDwarf.forEach((perf, dwarf) => {
      const value = hit.registers[perf];
      if (perf >= 0 && value !== undefined) registers.set(dwarf, value);
    });
    const stackEnd = sp + BigInt(hit.stack.length);
    const stackView = new DataView(hit.stack.buffer, hit.stack.byteOffset, hit.stack.byteLength);
    const readStack = (address: bigint): bigint => {
      if (address < sp || address + 8n > stackEnd) throw new LocationUnavailable('not-captured', `0x${address.toString(16)} is outside the stack copy`);
      return stackView.getBigUint64(Number(address - sp), true);
    };
    let cfa: bigint | undefined;
    const cfaOf = (): bigint => {
      if (cfa !== undefined) return cfa;
      const row = located.object.callFrameInfo()?.rowAt(located.vaddr);
      if (!row) throw new LocationUnavailable('not-captured', 'no call frame information at this pc');
      cfa = evaluateCfa(row.cfa, registers, readStack);
      return cfa;
    };
    const unit = scope.subprogram.unit;
    const info = located.object.dwarfInfo()!;
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
    const ctx: ExpressionContext = { ...base, frameBase: frameBaseOf };

    let readLater: Set<string> | undefined;
    let current = '';
    const memory = (address: bigint, length: number): Uint8Array | undefined => {
      if (address >= sp && address + BigInt(length) <= stackEnd) return hit.stack.subarray(Number(address - sp), Number(address - sp) + length);
      const fromFile = readOnlyFileBytes(located.object, address - bias, length, bias);
      if (fromFile) return fromFile;
      const live = this.processMemory?.(hit.pid, address, length);
      if (live && live.length > 0) {
        (readLater ??= new Set()).add(current);
        return live;
      }
      return undefined;
    };
    const targets: PointerTargets = {
      readBytes: (address, limit) => {
        // A string in the stack copy may run past its end: take what is there, then the rest from elsewhere.
        if (address >= sp && address < stackEnd) {
          const inStack = hit.stack.subarray(Number(address - sp), Math.min(hit.stack.length, Number(address - sp) + limit));
          if (inStack.includes(0) || inStack.length >= limit) return inStack;
        }
        return memory(address, limit) ?? shortestReadable(memory, address, limit);
      },
      symbolAt: (address) => symbolAt(located.object, address - bias),
    };

    const values: Record<string, string> = {};
    const variables = names ? names.map((name) => scope.variables.find((v) => v.name === name) ?? this.globalNamed(located.object, name)) : scope.variables;
    for (let i = 0; i < variables.length; i++) {
      const variable = variables[i];
      const name = names ? names[i] : variable!.name;
      current = name;
      values[name] = variable ? this.valueOf(variable, state.formatter, ctx, memory, targets) : '<no variable of that name in scope>';
    }
    return { values, ...(scope.functionName ? { function: scope.functionName } : {}), ...(readLater ? { readLater: [...readLater] } : {}) };
  }

  /**
   * The values' plan at a pc when every one is an integer in a register or in a stack slot at a fixed
   * distance from the CFA (the common case at -O0, and for many locals at -O2): read with plain
   * arithmetic instead of the expression machine. Null when some value needs the general path.
   */
  private fastPlan(
    object: ObjectFile,
    state: ObjectState,
    vaddr: bigint,
    scope: ScopeAtPc,
    names: readonly string[] | undefined,
    arch: UnwindArch,
  ): FastPlan | null {
    const key = `${vaddr}\0${names?.join(',') ?? ''}`;
    let plans = this.plans.get(object);
    if (!plans) this.plans.set(object, (plans = new Map()));
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = compileFastPlan(object, state.formatter, vaddr, scope, names, arch);
      if (plans.size >= 4096) plans.clear();
      plans.set(key, plan);
    }
    return plan;
  }

  private valueOf(
    variable: ScopeVariable,
    formatter: ValueFormatter,
    ctx: ExpressionContext,
    memory: (address: bigint, length: number) => Uint8Array | undefined,
    targets: PointerTargets,
  ): string {
    const size = formatter.size(variable.type);
    if (size === undefined) return '<incomplete type>';
    let value: ValueBytes;
    try {
      value = materialize(variable.location, size, ctx, memory);
    } catch (error) {
      if (error instanceof LocationUnavailable) {
        return error.reason === 'optimized-out' ? OPTIMIZED_OUT : error.reason === 'not-captured' ? NOT_CAPTURED : `<unsupported: ${error.message}>`;
      }
      return `<error: ${(error as Error).message}>`;
    }
    return formatter.format(variable.type, value, targets);
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

/** One integer read without the expression machine: from a sampled register, or from the stack copy at (CFA register + offset). */
interface FastValue {
  readonly name: string;
  readonly perfRegister: number;
  /** Undefined: the value is the register itself; else the stack slot at register + offset. */
  readonly offset?: number;
  readonly size: 1 | 2 | 4 | 8;
  readonly signed: boolean;
}

type FastPlan = readonly FastValue[];

const DW_OP_reg0 = 0x50;
const DW_OP_fbreg = 0x91;
const DW_OP_call_frame_cfa = 0x9c;
// DW_ATE_signed, DW_ATE_unsigned.
const ATE_SIGNED = 0x5;
const ATE_UNSIGNED = 0x7;

function compileFastPlan(
  object: ObjectFile,
  formatter: ValueFormatter,
  vaddr: bigint,
  scope: ScopeAtPc,
  names: readonly string[] | undefined,
  arch: UnwindArch,
): FastPlan | null {
  const variables = names ? names.map((name) => scope.variables.find((v) => v.name === name)) : scope.variables;
  const info = object.dwarfInfo()!;
  let cfa: { perfRegister: number; offset: number } | null | undefined;
  const cfaRule = () => {
    if (cfa !== undefined) return cfa;
    const row = object.callFrameInfo()?.rowAt(vaddr);
    const perf = row?.cfa.kind === 'register' ? arch.perfRegOfDwarf[row.cfa.register] : undefined;
    cfa = row && row.cfa.kind === 'register' && perf !== undefined && perf >= 0 ? { perfRegister: perf, offset: Number(row.cfa.offset) } : null;
    return cfa;
  };
  const plan: FastValue[] = [];
  for (const variable of variables) {
    if (!variable || variable.location.kind !== 'expression') return null;
    const type = formatter.strip(variable.type);
    const size = formatter.size(type);
    const encoding = type ? info.numberAttr(type, AT.encoding) : undefined;
    if (!type || type.tag !== TAG.base_type || (encoding !== ATE_SIGNED && encoding !== ATE_UNSIGNED) || (size !== 1 && size !== 2 && size !== 4 && size !== 8))
      return null;
    const expression = variable.location.expression;
    const signed = encoding === ATE_SIGNED;
    if (expression.length === 1 && expression[0] >= DW_OP_reg0 && expression[0] < DW_OP_reg0 + 32) {
      const perf = arch.perfRegOfDwarf[expression[0] - DW_OP_reg0];
      if (perf === undefined || perf < 0) return null;
      plan.push({ name: variable.name, perfRegister: perf, size, signed });
      continue;
    }
    const frameBase = scope.frameBase;
    if (
      expression[0] !== DW_OP_fbreg ||
      frameBase.kind !== 'expression' ||
      frameBase.expression.length !== 1 ||
      frameBase.expression[0] !== DW_OP_call_frame_cfa
    )
      return null;
    const offset = sleb128(expression, 1);
    const rule = cfaRule();
    if (!offset || !rule) return null;
    plan.push({ name: variable.name, perfRegister: rule.perfRegister, offset: rule.offset + offset.value, size, signed });
  }
  return plan;
}

/** A whole-expression SLEB128 operand at `at`, or undefined when the expression holds more than it. */
function sleb128(bytes: Uint8Array, at: number): { value: number } | undefined {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    if (at >= bytes.length || shift > 28) return undefined;
    byte = bytes[at++];
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (byte & 0x40 && shift < 32) value |= -1 << shift;
  return at === bytes.length ? { value } : undefined;
}

/** The plan's values from one hit, or undefined when a slot is outside the stack copy (the general path says why). */
function readFast(plan: FastPlan, hit: LogpointHit, sp: bigint): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  let view: DataView | undefined;
  for (const value of plan) {
    const register = hit.registers[value.perfRegister];
    if (register === undefined) return undefined;
    if (value.offset === undefined) {
      values[value.name] = (value.signed ? BigInt.asIntN(value.size * 8, register) : BigInt.asUintN(value.size * 8, register)).toString();
      continue;
    }
    const at = Number(register - sp) + value.offset;
    if (at < 0 || at + value.size > hit.stack.length) return undefined;
    view ??= new DataView(hit.stack.buffer, hit.stack.byteOffset, hit.stack.byteLength);
    switch (value.size) {
      case 1:
        values[value.name] = String(value.signed ? view.getInt8(at) : view.getUint8(at));
        break;
      case 2:
        values[value.name] = String(value.signed ? view.getInt16(at, true) : view.getUint16(at, true));
        break;
      case 4:
        values[value.name] = String(value.signed ? view.getInt32(at, true) : view.getUint32(at, true));
        break;
      case 8:
        values[value.name] = (value.signed ? view.getBigInt64(at, true) : view.getBigUint64(at, true)).toString();
        break;
    }
  }
  return values;
}

/** The architecture of the sampled pc's object (x86_64 or aarch64), as the unwinder picks it. */
function archOf(registers: Readonly<Record<number, bigint>>, locate: ObjectLocator, pid: number): UnwindArch | undefined {
  for (const arch of [X86_64, AARCH64]) {
    const pc = registers[arch.pcPerf];
    if (pc === undefined || registers[arch.stackPointerPerf] === undefined) continue;
    const located = locate(pid, pc);
    if (located && unwindArchOf(located.object.elf.header.machine) === arch) return arch;
  }
  return undefined;
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
