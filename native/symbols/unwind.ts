// DWARF unwinding of a sampled user stack: from the registers the kernel captured
// (PERF_SAMPLE_REGS_USER, perf_regs order) and the stack bytes it copied from the stack pointer up
// (PERF_SAMPLE_STACK_USER), walks frame by frame with each object's CFI (cfi.ts), as perf does with
// libunwind/libdw. Pure: the caller says which object covers a pc and where the stack is.

import type { CallFrameInfo, CfaRule, RegisterRule, UnwindRow } from './cfi';

/** One architecture's register numbering: DWARF columns to perf_regs bits, and the roles the walk needs. */
export interface UnwindArch {
  readonly name: 'x86_64' | 'aarch64';
  readonly addressSize: 8;
  /** perf_regs bit of each DWARF register number (the array index); -1 where perf samples no such register. */
  readonly perfRegOfDwarf: readonly number[];
  readonly stackPointerDwarf: number;
  readonly pcPerf: number;
  readonly stackPointerPerf: number;
  /** perf's PERF_REGS_MASK: the registers `perf record --call-graph dwarf` samples. */
  readonly sampleRegsMask: bigint;
}

// arch/x86/include/uapi/asm/perf_regs.h: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15.
const X86 = { ax: 0, bx: 1, cx: 2, dx: 3, si: 4, di: 5, bp: 6, sp: 7, ip: 8, r8: 16 } as const;

/**
 * x86_64 (System V psABI DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then the return
 * address column 16, which perf's IP stands for).
 */
export const X86_64: UnwindArch = {
  name: 'x86_64',
  addressSize: 8,
  perfRegOfDwarf: [X86.ax, X86.dx, X86.cx, X86.bx, X86.si, X86.di, X86.bp, X86.sp, ...Array.from({ length: 8 }, (_, i) => X86.r8 + i), X86.ip],
  stackPointerDwarf: 7,
  pcPerf: X86.ip,
  stackPointerPerf: X86.sp,
  // ((1 << PERF_REG_X86_64_MAX) - 1) without DS, ES, FS, GS, which the kernel does not sample on x86_64.
  sampleRegsMask: 0xff0fffn,
};

/** aarch64 (arch/arm64/include/uapi/asm/perf_regs.h: X0..X30, SP, PC; DWARF: x0..x30 = 0..30, sp = 31). */
export const AARCH64: UnwindArch = {
  name: 'aarch64',
  addressSize: 8,
  perfRegOfDwarf: Array.from({ length: 32 }, (_, i) => i),
  stackPointerDwarf: 31,
  pcPerf: 32,
  stackPointerPerf: 31,
  sampleRegsMask: (1n << 33n) - 1n,
};

const EM_X86_64 = 62;
const EM_AARCH64 = 183;

/** The unwinding description of a Node `process.arch` (`x64`, `arm64`), or undefined for the ones not implemented. */
export function unwindArchOfNode(nodeArch: string): UnwindArch | undefined {
  return nodeArch === 'x64' ? X86_64 : nodeArch === 'arm64' ? AARCH64 : undefined;
}

/** The unwinding description of an ELF e_machine, or undefined for the ones not implemented. */
export function unwindArchOf(machine: number): UnwindArch | undefined {
  return machine === EM_X86_64 ? X86_64 : machine === EM_AARCH64 ? AARCH64 : undefined;
}

/** Where a pc's CFI lives: the object's call frame information and how far it is loaded from its link-time addresses. */
export interface CfiLocation {
  readonly cfi: CallFrameInfo;
  /** runtime address - link-time address. */
  readonly bias: bigint;
}

export interface UnwindInput {
  readonly arch: UnwindArch;
  /** Register values keyed by perf_regs bit (PERF_SAMPLE_REGS_USER). */
  readonly registers: Readonly<Record<number, bigint>>;
  /** The copied stack: its first byte is at the sampled stack pointer (PERF_SAMPLE_STACK_USER, dyn_size bytes). */
  readonly stack: Uint8Array;
  /** The CFI covering a runtime pc, or undefined when no mapped object (or no FDE) is known there. */
  readonly findCfi: (pc: bigint) => CfiLocation | undefined;
  /** perf's default, kernel.perf_event_max_stack: 127. */
  readonly maxFrames?: number;
}

/** Why the walk ended, for tests and diagnostics. */
export type UnwindEnd = 'outermost' | 'no-cfi' | 'stack-end' | 'max-frames' | 'no-progress' | 'bad-cfi';

export interface UnwindResult {
  /**
   * The sampled pc, then for each caller its return address minus one (inside the call instruction,
   * so it names the calling function and line even when the call is a function's last instruction),
   * deepest first: what perf lists. A frame interrupted by a signal keeps its exact pc.
   */
  readonly frames: readonly bigint[];
  readonly end: UnwindEnd;
}

export const DEFAULT_MAX_FRAMES = 127;

class OutsideStack extends Error {}

/** Walks the sampled stack. Never throws: a frame it cannot unwind ends the list. */
export function unwindStack(input: UnwindInput): UnwindResult {
  const { arch } = input;
  const maxFrames = input.maxFrames ?? DEFAULT_MAX_FRAMES;
  const pcValue = input.registers[arch.pcPerf];
  const spValue = input.registers[arch.stackPointerPerf];
  if (pcValue === undefined) return { frames: [], end: 'bad-cfi' };
  const frames: bigint[] = [pcValue];
  if (spValue === undefined) return { frames, end: 'stack-end' };
  const stackStart = spValue;
  const stackView = new DataView(input.stack.buffer, input.stack.byteOffset, input.stack.byteLength);
  const read = (address: bigint): bigint => {
    const offset = address - stackStart;
    if (offset < 0n || offset + 8n > BigInt(input.stack.length)) throw new OutsideStack();
    return stackView.getBigUint64(Number(offset), true);
  };

  let registers = new Map<number, bigint>();
  arch.perfRegOfDwarf.forEach((perf, dwarf) => {
    const value = input.registers[perf];
    if (perf >= 0 && value !== undefined) registers.set(dwarf, value);
  });
  let pc = pcValue;
  let previousCfa: bigint | undefined;
  while (frames.length < maxFrames) {
    const lookup = frames[frames.length - 1];
    let location: CfiLocation | undefined;
    let row: UnwindRow | undefined;
    try {
      // Malformed CFI (a damaged .eh_frame_hdr, an unknown opcode) ends the walk, never the caller's output.
      location = input.findCfi(lookup);
      if (!location) return { frames, end: 'no-cfi' };
      row = location.cfi.rowAt(lookup - location.bias);
    } catch {
      // unparsable call frame information: the walk ends there and says so ('bad-cfi')
      return { frames, end: 'bad-cfi' };
    }
    if (!row) return { frames, end: 'no-cfi' };
    let next: Map<number, bigint>;
    let cfa: bigint;
    try {
      cfa = evaluateCfa(row.cfa, registers, read);
      next = new Map<number, bigint>();
      for (const [register, value] of registers) {
        const rule = row.registers.get(register);
        if (rule === undefined) next.set(register, value);
      }
      for (const [register, rule] of row.registers) {
        let value: bigint | undefined;
        try {
          value = applyRule(rule, register, cfa, registers, read);
        } catch (error) {
          // A saved register whose slot is outside the copied stack is unknown in the caller, and the walk goes on
          // (libdw does the same). In an epilogue after `pop %rbx` the CFI still places rbx below the stack pointer.
          if (!(error instanceof OutsideStack)) throw error;
          if (register === row.returnAddressRegister) return { frames, end: 'stack-end' };
        }
        if (value !== undefined) next.set(register, value);
      }
    } catch (error) {
      if (error instanceof OutsideStack) return { frames, end: 'stack-end' };
      return { frames, end: 'bad-cfi' };
    }
    const returnRule = row.registers.get(row.returnAddressRegister);
    if (returnRule?.kind === 'undefined') return { frames, end: 'outermost' };
    const returnAddress = next.get(row.returnAddressRegister);
    if (returnAddress === undefined || returnAddress === 0n) return { frames, end: 'outermost' };
    // The caller's stack pointer is the CFA, unless the rules restore it explicitly (signal frames).
    if (!row.registers.has(arch.stackPointerDwarf)) next.set(arch.stackPointerDwarf, cfa);
    if (previousCfa !== undefined && cfa === previousCfa && returnAddress === pc) return { frames, end: 'no-progress' };
    previousCfa = cfa;
    registers = next;
    pc = returnAddress;
    // A return address points after the call, maybe past the function's end: the call itself is one byte earlier.
    frames.push(row.signalFrame ? pc : pc - 1n);
  }
  return { frames, end: 'max-frames' };
}

function evaluateCfa(rule: CfaRule, registers: ReadonlyMap<number, bigint>, read: (address: bigint) => bigint): bigint {
  if (rule.kind === 'expression') return evaluateExpression(rule.expression, registers, read, []);
  const base = registers.get(rule.register);
  if (base === undefined) throw new Error(`CFA register ${rule.register} is unknown`);
  return BigInt.asUintN(64, base + rule.offset);
}

function applyRule(rule: RegisterRule, register: number, cfa: bigint, registers: ReadonlyMap<number, bigint>, read: (address: bigint) => bigint): bigint
  | undefined {
  switch (rule.kind) {
    case 'undefined': return undefined;
    case 'same': return registers.get(register);
    case 'offset': return read(BigInt.asUintN(64, cfa + rule.offset));
    case 'val-offset': return BigInt.asUintN(64, cfa + rule.offset);
    case 'register': return registers.get(rule.register);
    case 'expression': return read(evaluateExpression(rule.expression, registers, read, [cfa]));
    case 'val-expression': return evaluateExpression(rule.expression, registers, read, [cfa]);
  }
}

// DW_OP_* used by CFI expressions (PLT stubs, signal trampolines, realigned stacks).
const OP = {
  addr: 0x03, deref: 0x06, const1u: 0x08, const1s: 0x09, const2u: 0x0a, const2s: 0x0b, const4u: 0x0c, const4s: 0x0d,
  const8u: 0x0e, const8s: 0x0f, constu: 0x10, consts: 0x11, dup: 0x12, drop: 0x13, over: 0x14, pick: 0x15, swap: 0x16,
  rot: 0x17, abs: 0x19, and: 0x1a, div: 0x1b, minus: 0x1c, mod: 0x1d, mul: 0x1e, neg: 0x1f, not: 0x20, or: 0x21,
  plus: 0x22, plusUconst: 0x23, shl: 0x24, shr: 0x25, shra: 0x26, xor: 0x27, bra: 0x28, eq: 0x29, ge: 0x2a, gt: 0x2b,
  le: 0x2c, lt: 0x2d, ne: 0x2e, skip: 0x2f, lit0: 0x30, lit31: 0x4f, reg0: 0x50, reg31: 0x6f, breg0: 0x70, breg31: 0x8f,
  regx: 0x90, bregx: 0x92, derefSize: 0x94, nop: 0x96,
} as const;

const MAX_EXPRESSION_STEPS = 10000;

/** Evaluates a DWARF expression on 64-bit values; `initial` is pushed first (the CFA for register rules). */
export function evaluateExpression(expression: Uint8Array, registers: ReadonlyMap<number, bigint>, read: (
  address: bigint,
) => bigint, initial: readonly bigint[]): bigint {
  const view = new DataView(expression.buffer, expression.byteOffset, expression.byteLength);
  const stack: bigint[] = [...initial];
  let at = 0;
  const u8 = () => { if (at >= expression.length) throw new Error('expression ends inside an operand'); return expression[at++]; };
  const fixed = (size: 1 | 2 | 4 | 8, signed: boolean): bigint => {
    if (at + size > expression.length) throw new Error('expression ends inside an operand');
    let value: bigint;
    if (size === 1) value = BigInt(signed ? view.getInt8(at) : view.getUint8(at));
    else if (size === 2) value = BigInt(signed ? view.getInt16(at, true) : view.getUint16(at, true));
    else if (size === 4) value = BigInt(signed ? view.getInt32(at, true) : view.getUint32(at, true));
    else value = signed ? view.getBigInt64(at, true) : view.getBigUint64(at, true);
    at += size;
    return value;
  };
  const uleb = (): bigint => {
    let result = 0n; let shift = 0n; let byte: number;
    do { byte = u8(); result |= BigInt(byte & 0x7f) << shift; shift += 7n; } while (byte & 0x80);
    return result;
  };
  const sleb = (): bigint => {
    let result = 0n; let shift = 0n; let byte: number;
    do { byte = u8(); result |= BigInt(byte & 0x7f) << shift; shift += 7n; } while (byte & 0x80);
    return byte & 0x40 ? result - (1n << shift) : result;
  };
  const pop = (): bigint => {
    const value = stack.pop();
    if (value === undefined) throw new Error('expression stack underflow');
    return value;
  };
  const push = (value: bigint) => stack.push(BigInt.asUintN(64, value));
  const register = (number: number): bigint => {
    const value = registers.get(number);
    if (value === undefined) throw new Error(`expression reads register ${number}, which is unknown`);
    return value;
  };
  const signed = (value: bigint) => BigInt.asIntN(64, value);
  for (let steps = 0; at < expression.length; steps++) {
    if (steps > MAX_EXPRESSION_STEPS) throw new Error('expression does not terminate');
    const op = u8();
    if (op >= OP.lit0 && op <= OP.lit31) { push(BigInt(op - OP.lit0)); continue; }
    if (op >= OP.breg0 && op <= OP.breg31) { push(register(op - OP.breg0) + sleb()); continue; }
    if (op >= OP.reg0 && op <= OP.reg31) { push(register(op - OP.reg0)); continue; }
    switch (op) {
      case OP.addr: push(fixed(8, false)); break;
      case OP.deref: push(read(pop())); break;
      case OP.derefSize: {
        const size = u8();
        const address = pop();
        const word = read(address);
        push(size >= 8 ? word : word & ((1n << BigInt(size * 8)) - 1n));
        break;
      }
      case OP.const1u: push(fixed(1, false)); break;
      case OP.const1s: push(fixed(1, true)); break;
      case OP.const2u: push(fixed(2, false)); break;
      case OP.const2s: push(fixed(2, true)); break;
      case OP.const4u: push(fixed(4, false)); break;
      case OP.const4s: push(fixed(4, true)); break;
      case OP.const8u: push(fixed(8, false)); break;
      case OP.const8s: push(fixed(8, true)); break;
      case OP.constu: push(uleb()); break;
      case OP.consts: push(sleb()); break;
      case OP.dup: { const v = pop(); push(v); push(v); break; }
      case OP.drop: pop(); break;
      case OP.over: { const a = pop(); const b = pop(); push(b); push(a); push(b); break; }
      case OP.pick: {
        const index = u8();
        const value = stack[stack.length - 1 - index];
        if (value === undefined) throw new Error('DW_OP_pick past the stack');
        push(value);
        break;
      }
      case OP.swap: { const a = pop(); const b = pop(); push(a); push(b); break; }
      case OP.rot: { const a = pop(); const b = pop(); const c = pop(); push(a); push(c); push(b); break; }
      case OP.abs: { const v = signed(pop()); push(v < 0n ? -v : v); break; }
      case OP.and: push(pop() & pop()); break;
      case OP.or: push(pop() | pop()); break;
      case OP.xor: push(pop() ^ pop()); break;
      case OP.plus: push(pop() + pop()); break;
      case OP.mul: push(pop() * pop()); break;
      case OP.minus: { const a = pop(); const b = pop(); push(b - a); break; }
      case OP.div: {
        const a = signed(pop()); const b = signed(pop());
        if (a === 0n) throw new Error('DW_OP_div by zero');
        push(b / a);
        break;
      }
      case OP.mod: {
        const a = pop(); const b = pop();
        if (a === 0n) throw new Error('DW_OP_mod by zero');
        push(b % a);
        break;
      }
      case OP.neg: push(-signed(pop())); break;
      case OP.not: push(~pop()); break;
      case OP.plusUconst: push(pop() + uleb()); break;
      case OP.shl: { const a = pop(); const b = pop(); push(a >= 64n ? 0n : b << a); break; }
      case OP.shr: { const a = pop(); const b = pop(); push(a >= 64n ? 0n : b >> a); break; }
      case OP.shra: { const a = pop(); const b = signed(pop()); push(b >> (a >= 64n ? 63n : a)); break; }
      case OP.eq: case OP.ge: case OP.gt: case OP.le: case OP.lt: case OP.ne: {
        const a = signed(pop()); const b = signed(pop());
        const truth = op === OP.eq ? b === a : op === OP.ge ? b >= a : op === OP.gt ? b > a : op === OP.le ? b <= a : op === OP.lt ? b < a : b !== a;
        push(truth ? 1n : 0n);
        break;
      }
      case OP.skip: { const offset = Number(fixed(2, true)); at += offset; break; }
      case OP.bra: { const offset = Number(fixed(2, true)); if (pop() !== 0n) at += offset; break; }
      case OP.regx: push(register(Number(uleb()))); break;
      case OP.bregx: { const r = Number(uleb()); push(register(r) + sleb()); break; }
      case OP.nop: break;
      default: throw new Error(`DW_OP 0x${op.toString(16)} is not supported in call frame expressions`);
    }
    if (at < 0 || at > expression.length) throw new Error('expression branches outside itself');
  }
  const result = stack.pop();
  if (result === undefined) throw new Error('expression leaves an empty stack');
  return result;
}
