// DWARF unwinding of a sampled user stack: from the registers the kernel captured
// (PERF_SAMPLE_REGS_USER, perf_regs order) and the stack bytes it copied from the stack pointer up
// (PERF_SAMPLE_STACK_USER), walks frame by frame with each object's CFI (cfi.ts), as perf does with
// libunwind/libdw. Pure: the caller says which object covers a pc and where the stack is.

import type { CallFrameInfo, CfaRule, RegisterRule, UnwindRow } from './cfi';
import { evaluateValue } from './dwarf-expression';

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

/** The canonical frame address a row's rule computes from the registers (DWARF numbers) and memory. */
export function evaluateCfa(rule: CfaRule, registers: ReadonlyMap<number, bigint>, read: (address: bigint) => bigint): bigint {
  if (rule.kind === 'expression') return evaluateExpression(rule.expression, registers, read, []);
  const base = registers.get(rule.register);
  if (base === undefined) throw new Error(`CFA register ${rule.register} is unknown`);
  return BigInt.asUintN(64, base + rule.offset);
}

function applyRule(
  rule: RegisterRule,
  register: number,
  cfa: bigint,
  registers: ReadonlyMap<number, bigint>,
  read: (address: bigint) => bigint,
): bigint | undefined {
  switch (rule.kind) {
    case 'undefined':
      return undefined;
    case 'same':
      return registers.get(register);
    case 'offset':
      return read(BigInt.asUintN(64, cfa + rule.offset));
    case 'val-offset':
      return BigInt.asUintN(64, cfa + rule.offset);
    case 'register':
      return registers.get(rule.register);
    case 'expression':
      return read(evaluateExpression(rule.expression, registers, read, [cfa]));
    case 'val-expression':
      return evaluateExpression(rule.expression, registers, read, [cfa]);
  }
}

/** Evaluates a DWARF expression on 64-bit values; `initial` is pushed first (the CFA for register rules). */
export function evaluateExpression(
  expression: Uint8Array,
  registers: ReadonlyMap<number, bigint>,
  read: (address: bigint) => bigint,
  initial: readonly bigint[],
): bigint {
  return evaluateValue(expression, { registers, read, initial });
}
