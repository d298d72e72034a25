// A DWARF location expression decoded once and run on JS numbers, for logpoints: every hit of a
// probe runs the same expression (its location-list entry already picked for the probe's pc) on new
// registers and stack, and the BigInt machine of dwarf-expression.ts, which allocates at every step,
// is too slow for that. A number here stands for the 64-bit value it equals modulo 2^64 and is always
// an exact integer below 2^53 in magnitude; a step whose result would not be (a register holding a
// large 64-bit value, a shift out of range, an unsigned operation on a negative number) gives up
// (BAIL) and the caller runs the BigInt machine, which stays the reference for every result.

/** What a run found. */
export const NUMERIC_DONE = 0;
/** Not computable with exact numbers here: run the BigInt machine (evaluateLocation). */
export const NUMERIC_BAIL = 1;
/** The whole value does not exist at this pc (DW_OP_entry_value, DW_OP_implicit_pointer), as evaluateLocation says. */
export const NUMERIC_OPTIMIZED_OUT = 2;
/** The value needs a register or stack bytes the sample does not hold, as evaluateLocation says. */
export const NUMERIC_NOT_CAPTURED = 3;

/** Piece kinds of a NumericLocation (LocationPart of dwarf-expression.ts). */
export const PIECE_MEMORY = 0;
export const PIECE_REGISTER = 1;
export const PIECE_VALUE = 2;
export const PIECE_IMPLICIT = 3;
export const PIECE_OPTIMIZED_OUT = 4;

/** A register a frame does not hold (the sample has no such register): the value is not captured. */
export const REGISTER_MISSING = -Infinity;

/** What an expression reads, per hit. Numbers are exact; NaN means "not exact" (BAIL). */
export interface NumericFrame {
  /** The register (DWARF number) as its signed 64-bit value, NaN when that is not exact, REGISTER_MISSING when not sampled. */
  register(dwarf: number): number;
  /** `size` (1-8) bytes at `address`, unsigned little-endian; NaN when not exact, REGISTER_MISSING when outside the stack copy. */
  read(address: number, size: number): number;
  /** The canonical frame address; NaN when it cannot be computed with numbers. */
  cfa(): number;
  /** The function's frame base; NaN when it cannot be computed with numbers. */
  frameBase(): number;
  /** runtime - link-time address of the object. */
  readonly addressBias: number;
}

/** The pieces a run named (reused from run to run: read them before the next run). */
export class NumericLocation {
  count = 0;
  readonly kind = new Int8Array(MAX_PIECES);
  /** PIECE_MEMORY: the address; PIECE_REGISTER: the DWARF register; PIECE_VALUE: the value; PIECE_IMPLICIT: the index in `implicit`. */
  readonly value = new Float64Array(MAX_PIECES);
  /** Bytes, -1 for a location that is not split. */
  readonly size = new Int32Array(MAX_PIECES);
}

const MAX_PIECES = 16;
const MAX_STACK = 64;
const MAX_STEPS = 10000;
const TWO_32 = 4294967296;

// Our own operations (decoded once from DW_OP_*): one per step, operands in a and b.
const enum Op {
  Push, // a
  PushBiased, // a + addressBias (DW_OP_addr)
  Breg, // register a + b
  Fbreg, // frame base + a
  Cfa,
  Reg, // names register a
  Deref, // size a
  Dup,
  Drop,
  Over,
  Pick, // a
  Swap,
  Rot,
  Abs,
  And,
  Or,
  Xor,
  Plus,
  Mul,
  Minus,
  Div,
  Mod,
  Neg,
  Not,
  PlusConst, // a
  Shl,
  Shr,
  Shra,
  SignExtend, // low a bits (the `k shl k shra` idiom)
  ZeroExtend, // low a bits (the `k shl k shr` idiom)
  Eq,
  Ge,
  Gt,
  Le,
  Lt,
  Ne,
  Skip, // to step a
  Bra, // to step a
  StackValue,
  ImplicitValue, // bytes implicit[a]
  Piece, // size a
  OptimizedOut, // the value does not exist here
  Nop,
}

export interface CompiledExpression {
  readonly ops: Uint8Array;
  readonly a: Float64Array;
  readonly b: Float64Array;
  readonly implicit: readonly Uint8Array[];
}

/**
 * Decodes an expression for runNumeric, or undefined where it uses what the numeric machine does not
 * do (a constant beyond 2^53, DW_OP_bit_piece, typed operations, TLS...): the BigInt machine then runs it
 * every time. `addressIndex` resolves DW_OP_addrx/constx once.
 */
export function compileNumeric(expression: Uint8Array, addressIndex?: (index: number) => bigint): CompiledExpression | undefined {
  const ops: number[] = [];
  const a: number[] = [];
  const b: number[] = [];
  const implicit: Uint8Array[] = [];
  /** Step index of each byte offset that starts an operation, for branches. */
  const stepAt = new Map<number, number>();
  const branches: { step: number; target: number }[] = [];
  const view = new DataView(expression.buffer, expression.byteOffset, expression.byteLength);
  let at = 0;
  const fail = (): never => {
    throw new NotNumeric();
  };
  const need = (n: number) => {
    if (at + n > expression.length) fail();
  };
  const uleb = (): number => {
    let result = 0;
    let scale = 1;
    let byte: number;
    do {
      need(1);
      byte = expression[at++];
      result += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    if (!Number.isSafeInteger(result)) fail();
    return result;
  };
  const sleb = (): number => {
    let result = 0;
    let scale = 1;
    let byte: number;
    do {
      need(1);
      byte = expression[at++];
      result += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte & 0x80);
    if (byte & 0x40) result -= scale;
    if (!Number.isSafeInteger(result)) fail();
    return result;
  };
  const fixed = (size: 1 | 2 | 4 | 8, signed: boolean): number => {
    need(size);
    let value: number;
    if (size === 1) value = signed ? view.getInt8(at) : view.getUint8(at);
    else if (size === 2) value = signed ? view.getInt16(at, true) : view.getUint16(at, true);
    else if (size === 4) value = signed ? view.getInt32(at, true) : view.getUint32(at, true);
    else {
      const big = signed ? view.getBigInt64(at, true) : view.getBigUint64(at, true);
      if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < -BigInt(Number.MAX_SAFE_INTEGER)) fail();
      value = Number(big);
    }
    at += size;
    return value;
  };
  const emit = (op: Op, x = 0, y = 0) => {
    ops.push(op);
    a.push(x);
    b.push(y);
  };
  const index = (n: number): number => {
    if (!addressIndex) return fail();
    const value = addressIndex(n);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail();
    return Number(value);
  };
  try {
    while (at < expression.length) {
      stepAt.set(at, ops.length);
      const op = expression[at++];
      const simple = SIMPLE_OPS.get(op);
      const constant = CONSTANT_OPS.get(op);
      if (simple !== undefined) emit(simple);
      else if (constant) emit(Op.Push, fixed(constant.size, constant.signed));
      else if (op >= 0x30 && op <= 0x4f) emit(Op.Push, op - 0x30);
      else if (op >= 0x50 && op <= 0x6f) emit(Op.Reg, op - 0x50);
      else if (op >= 0x70 && op <= 0x8f) emit(Op.Breg, op - 0x70, sleb());
      else
        switch (op) {
          case 0x03: // addr
            emit(Op.PushBiased, fixed(8, false));
            break;
          case 0xa1: // addrx
          case 0xfb: // GNU_addr_index
            emit(Op.PushBiased, index(uleb()));
            break;
          case 0xa2: // constx
          case 0xfc: // GNU_const_index
            emit(Op.Push, index(uleb()));
            break;
          case 0x06: // deref
            emit(Op.Deref, 8);
            break;
          case 0x94: {
            // deref_size
            need(1);
            const size = expression[at++];
            if (size < 1 || size > 8) fail();
            emit(Op.Deref, size);
            break;
          }
          case 0x10: // constu
            emit(Op.Push, uleb());
            break;
          case 0x11: // consts
            emit(Op.Push, sleb());
            break;
          case 0x15: // pick
            need(1);
            emit(Op.Pick, expression[at++]);
            break;
          case 0x23: // plus_uconst
            emit(Op.PlusConst, uleb());
            break;
          case 0x28: // bra
          case 0x2f: {
            // skip
            const offset = fixed(2, true);
            branches.push({ step: ops.length, target: at + offset });
            emit(op === 0x28 ? Op.Bra : Op.Skip);
            break;
          }
          case 0x90: // regx
            emit(Op.Reg, uleb());
            break;
          case 0x91: // fbreg
            emit(Op.Fbreg, sleb());
            break;
          case 0x92: {
            // bregx
            const register = uleb();
            emit(Op.Breg, register, sleb());
            break;
          }
          case 0x93: // piece
            emit(Op.Piece, uleb());
            break;
          case 0x9e: {
            // implicit_value
            const size = uleb();
            need(size);
            implicit.push(expression.slice(at, at + size));
            at += size;
            emit(Op.ImplicitValue, implicit.length - 1);
            break;
          }
          // entry_value (its operand block is never run: the caller's frame is not sampled), parameter_ref, implicit_pointer.
          case 0xa3:
          case 0xf3:
          case 0xfa:
          case 0xa0:
          case 0xf2:
            emit(Op.OptimizedOut);
            at = expression.length; // what follows belongs to an operation the machine never gets past
            break;
          default:
            fail();
        }
    }
  } catch (error) {
    if (error instanceof NotNumeric) return undefined;
    throw error;
  }
  stepAt.set(expression.length, ops.length);
  for (const { step, target } of branches) {
    const to = stepAt.get(target);
    if (to === undefined) return undefined; // into the middle of an operation: the BigInt machine says what that means
    a[step] = to;
  }
  // `k shl k shra` / `k shl k shr` (k >= 11): sign or zero extension of the low 64-k bits, which the
  // numbers cannot do as two shifts (the intermediate passes 2^53). Only without branches, which could land inside.
  if (branches.length === 0) {
    for (let i = 0; i + 3 < ops.length; i++) {
      if (ops[i] !== Op.Push || ops[i + 1] !== Op.Shl || ops[i + 2] !== Op.Push || (ops[i + 3] !== Op.Shra && ops[i + 3] !== Op.Shr)) continue;
      const k = a[i];
      if (a[i + 2] !== k || k < 11 || k > 63) continue;
      const extend = ops[i + 3] === Op.Shra ? Op.SignExtend : Op.ZeroExtend;
      ops.splice(i, 4, extend);
      a.splice(i, 4, 64 - k);
      b.splice(i, 4, 2 ** (64 - k));
    }
  }
  return { ops: Uint8Array.from(ops), a: Float64Array.from(a), b: Float64Array.from(b), implicit };
}

class NotNumeric extends Error {}

/** DW_OP_* without operands and what each becomes. */
const SIMPLE_OPS = new Map<number, Op>([
  [0x12, Op.Dup],
  [0x13, Op.Drop],
  [0x14, Op.Over],
  [0x16, Op.Swap],
  [0x17, Op.Rot],
  [0x19, Op.Abs],
  [0x1a, Op.And],
  [0x1b, Op.Div],
  [0x1c, Op.Minus],
  [0x1d, Op.Mod],
  [0x1e, Op.Mul],
  [0x1f, Op.Neg],
  [0x20, Op.Not],
  [0x21, Op.Or],
  [0x22, Op.Plus],
  [0x24, Op.Shl],
  [0x25, Op.Shr],
  [0x26, Op.Shra],
  [0x27, Op.Xor],
  [0x29, Op.Eq],
  [0x2a, Op.Ge],
  [0x2b, Op.Gt],
  [0x2c, Op.Le],
  [0x2d, Op.Lt],
  [0x2e, Op.Ne],
  [0x96, Op.Nop],
  [0x9c, Op.Cfa],
  [0x9f, Op.StackValue],
]);

/** DW_OP_const1u .. DW_OP_const8s: the operand's size and sign. */
const CONSTANT_OPS = new Map<number, { size: 1 | 2 | 4 | 8; signed: boolean }>([
  [0x08, { size: 1, signed: false }],
  [0x09, { size: 1, signed: true }],
  [0x0a, { size: 2, signed: false }],
  [0x0b, { size: 2, signed: true }],
  [0x0c, { size: 4, signed: false }],
  [0x0d, { size: 4, signed: true }],
  [0x0e, { size: 8, signed: false }],
  [0x0f, { size: 8, signed: true }],
]);

const stack = new Float64Array(MAX_STACK);
const POWERS_OF_TWO = Float64Array.from({ length: 64 }, (_, i) => 2 ** i);
const exact = (value: number) => value <= Number.MAX_SAFE_INTEGER && value >= -Number.MAX_SAFE_INTEGER;

/**
 * Runs a compiled expression as a location description into `out`: NUMERIC_DONE with its pieces, or
 * why not. Not reentrant: the frame's callbacks must not run another expression.
 */
export function runNumeric(program: CompiledExpression, frame: NumericFrame, out: NumericLocation): number {
  const { ops, a, b } = program;
  out.count = 0;
  if (ops.length === 0) {
    // An empty expression: a value that does not exist here (evaluateLocation's reading).
    out.kind[0] = PIECE_OPTIMIZED_OUT;
    out.size[0] = -1;
    out.count = 1;
    return NUMERIC_DONE;
  }
  let top = 0;
  let namedKind = -1;
  let namedValue = 0;
  let steps = 0;
  for (let pc = 0; pc < ops.length; pc++) {
    if (++steps > MAX_STEPS || top >= MAX_STACK - 2) return NUMERIC_BAIL;
    let x: number;
    let y: number;
    switch (ops[pc] as Op) {
      case Op.Push:
        stack[top++] = a[pc];
        continue;
      case Op.PushBiased:
        x = a[pc] + frame.addressBias;
        break;
      case Op.Breg:
        x = frame.register(a[pc]);
        if (x === REGISTER_MISSING) return NUMERIC_NOT_CAPTURED;
        x += b[pc];
        break;
      case Op.Fbreg:
        x = frame.frameBase() + a[pc];
        break;
      case Op.Cfa:
        x = frame.cfa();
        break;
      case Op.Reg:
        namedKind = PIECE_REGISTER;
        namedValue = a[pc];
        continue;
      case Op.Deref:
        if (top < 1) return NUMERIC_BAIL;
        x = stack[--top];
        if (x < 0) return NUMERIC_BAIL;
        x = frame.read(x, a[pc]);
        if (x === REGISTER_MISSING) return NUMERIC_NOT_CAPTURED;
        break;
      case Op.Dup:
        if (top < 1) return NUMERIC_BAIL;
        x = stack[top - 1];
        break;
      case Op.Drop:
        if (top < 1) return NUMERIC_BAIL;
        top--;
        continue;
      case Op.Over:
        if (top < 2) return NUMERIC_BAIL;
        x = stack[top - 2];
        break;
      case Op.Pick:
        if (a[pc] >= top) return NUMERIC_BAIL;
        x = stack[top - 1 - a[pc]];
        break;
      case Op.Swap:
        if (top < 2) return NUMERIC_BAIL;
        x = stack[top - 1];
        stack[top - 1] = stack[top - 2];
        stack[top - 2] = x;
        continue;
      case Op.Rot:
        if (top < 3) return NUMERIC_BAIL;
        x = stack[top - 1];
        stack[top - 1] = stack[top - 2];
        stack[top - 2] = stack[top - 3];
        stack[top - 3] = x;
        continue;
      case Op.Abs:
      case Op.Neg:
      case Op.Not:
      case Op.PlusConst:
      case Op.SignExtend:
      case Op.ZeroExtend: {
        if (top < 1) return NUMERIC_BAIL;
        const v = stack[--top];
        const op = ops[pc] as Op;
        if (op === Op.Abs) x = Math.abs(v);
        else if (op === Op.Neg) x = -v;
        else if (op === Op.Not) x = -v - 1;
        else if (op === Op.PlusConst) x = v + a[pc];
        else if (a[pc] <= 32) {
          // Up to 32 bits (an int read into a 64-bit word, the common case) with the int32 operations, which take
          // an exact number modulo 2^32 as the word's low half: the floating-point modulus below is a call, not an instruction.
          const shift = 32 - a[pc];
          x = op === Op.SignExtend ? (v << shift) >> shift : (v << shift) >>> shift;
        } else {
          const modulus = b[pc]; // 2 ** a[pc]
          // Not ((v % m) + m) % m: at 53 bits a small positive v plus m rounds to m (and gives 0).
          x = v % modulus;
          if (x < 0) x += modulus;
          if (op === Op.SignExtend && x >= modulus / 2) x -= modulus;
        }
        break;
      }
      case Op.StackValue:
        if (top < 1) return NUMERIC_BAIL;
        namedKind = PIECE_VALUE;
        namedValue = stack[--top];
        continue;
      case Op.ImplicitValue:
        namedKind = PIECE_IMPLICIT;
        namedValue = a[pc];
        continue;
      case Op.Piece: {
        if (out.count >= MAX_PIECES) return NUMERIC_BAIL;
        const n = out.count++;
        out.size[n] = a[pc];
        if (namedKind >= 0) {
          out.kind[n] = namedKind;
          out.value[n] = namedValue;
        } else if (top > 0) {
          out.kind[n] = PIECE_MEMORY;
          out.value[n] = stack[--top];
          if (out.value[n] < 0) return NUMERIC_BAIL;
        } else {
          out.kind[n] = PIECE_OPTIMIZED_OUT;
          out.value[n] = 0;
        }
        namedKind = -1;
        continue;
      }
      case Op.OptimizedOut:
        return NUMERIC_OPTIMIZED_OUT;
      case Op.Nop:
        continue;
      case Op.Skip:
        pc = a[pc] - 1;
        continue;
      case Op.Bra:
        if (top < 1) return NUMERIC_BAIL;
        if (stack[--top] !== 0) pc = a[pc] - 1;
        continue;
      default: {
        // Binary operations: y is the top, x the one below (DWARF's second and first operands).
        if (top < 2) return NUMERIC_BAIL;
        y = stack[--top];
        const v = stack[--top];
        switch (ops[pc] as Op) {
          case Op.Plus:
            x = v + y;
            break;
          case Op.Minus:
            x = v - y;
            break;
          case Op.Mul:
            x = v * y;
            break;
          case Op.Div:
            // Signed, truncating; exact with numbers below 2^31 only.
            if (y === 0 || Math.abs(v) >= 2 ** 31 || Math.abs(y) >= 2 ** 31) return NUMERIC_BAIL;
            x = Math.trunc(v / y);
            break;
          case Op.Mod:
            // Unsigned.
            if (y <= 0 || v < 0) return NUMERIC_BAIL;
            x = v % y;
            break;
          case Op.And:
          case Op.Or:
          case Op.Xor: {
            // As two halves: the high ones lie within 22 signed bits, which int32 operations keep exact.
            const vh = Math.floor(v / TWO_32);
            const yh = Math.floor(y / TWO_32);
            const op = ops[pc] as Op;
            const high = op === Op.And ? vh & yh : op === Op.Or ? vh | yh : vh ^ yh;
            const low = (op === Op.And ? v & y : op === Op.Or ? v | y : v ^ y) >>> 0;
            x = high * TWO_32 + low;
            break;
          }
          case Op.Shl:
            if (y < 0) return NUMERIC_BAIL;
            x = y >= 64 ? 0 : v * POWERS_OF_TWO[y];
            break;
          case Op.Shr:
            if (y < 0 || v < 0) return NUMERIC_BAIL;
            x = y >= 64 ? 0 : Math.floor(v / POWERS_OF_TWO[y]);
            break;
          case Op.Shra:
            if (y < 0) return NUMERIC_BAIL;
            x = Math.floor(v / POWERS_OF_TWO[Math.min(y, 63)]);
            break;
          case Op.Eq:
            x = v === y ? 1 : 0;
            break;
          case Op.Ge:
            x = v >= y ? 1 : 0;
            break;
          case Op.Gt:
            x = v > y ? 1 : 0;
            break;
          case Op.Le:
            x = v <= y ? 1 : 0;
            break;
          case Op.Lt:
            x = v < y ? 1 : 0;
            break;
          case Op.Ne:
            x = v !== y ? 1 : 0;
            break;
          default:
            return NUMERIC_BAIL;
        }
      }
    }
    // NaN (a value that is not exact) fails this too.
    if (!exact(x)) return NUMERIC_BAIL;
    stack[top++] = x;
  }
  if (out.count === 0) {
    out.size[0] = -1;
    if (namedKind >= 0) {
      out.kind[0] = namedKind;
      out.value[0] = namedValue;
    } else {
      if (top < 1 || stack[top - 1] < 0) return NUMERIC_BAIL;
      out.kind[0] = PIECE_MEMORY;
      out.value[0] = stack[top - 1];
    }
    out.count = 1;
  }
  return NUMERIC_DONE;
}

/** N of an expression that is only `DW_OP_fbreg N` (a local in a frame slot), else undefined. */
export function frameBaseOffsetOf(program: CompiledExpression): number | undefined {
  return program.ops.length === 1 && program.ops[0] === Op.Fbreg ? program.a[0] : undefined;
}

/**
 * The DWARF register and addend of an expression that is only `DW_OP_bregN OFFSET; DW_OP_stack_value` (a value that is
 * a register plus a constant, as -O2 keeps loop counters), else undefined.
 */
export function registerValueOf(program: CompiledExpression): { readonly register: number; readonly offset: number } | undefined {
  return program.ops.length === 2 && program.ops[0] === Op.Breg && program.ops[1] === Op.StackValue
    ? { register: program.a[0], offset: program.b[0] }
    : undefined;
}

/** Whether an expression is only `DW_OP_call_frame_cfa` (gcc's frame base on x86_64 and aarch64). */
export function isCallFrameCfa(program: CompiledExpression): boolean {
  return program.ops.length === 1 && program.ops[0] === Op.Cfa;
}

/** The DWARF register of an expression that is only `DW_OP_regN` or `DW_OP_regx` (a value in a register), else undefined. */
export function registerOf(program: CompiledExpression): number | undefined {
  return program.ops.length === 1 && program.ops[0] === Op.Reg ? program.a[0] : undefined;
}

/** A compiled expression as a function of the frame: runNumeric's contract (see numericRunner). */
export type NumericRunner = (frame: NumericFrame, out: NumericLocation) => number;

/**
 * `program` as a function that does what runNumeric does with it, step for step, for a logpoint's plan to run at
 * every hit: without branches an expression's stack depth at each step is known before it runs, so each step
 * becomes a statement on locals and what runNumeric checks of the depth (and of pieces and named locations) is
 * decided here once; V8 then compiles the few statements of each location to machine code instead of running
 * the dispatch loop over the decoded operations. A program with branches runs in runNumeric.
 */
export function numericRunner(program: CompiledExpression): NumericRunner {
  const body = branchFreeBody(program);
  if (body === undefined) return (frame, out) => runNumeric(program, frame, out);
  return new Function(
    'DONE',
    'BAIL',
    'OPTIMIZED_OUT',
    'NOT_CAPTURED',
    'MISSING',
    'SAFE',
    'TWO_32',
    'POWERS',
    `"use strict";\nreturn function numericRunner(frame, out) {\n${body}\n};`,
  )(NUMERIC_DONE, NUMERIC_BAIL, NUMERIC_OPTIMIZED_OUT, NUMERIC_NOT_CAPTURED, REGISTER_MISSING, Number.MAX_SAFE_INTEGER, TWO_32, POWERS_OF_TWO) as NumericRunner;
}

/** The statements numericRunner runs for a program without branches, undefined for one with. */
function branchFreeBody(program: CompiledExpression): string | undefined {
  const { ops, a, b } = program;
  if (ops.some((op) => op === Op.Skip || op === Op.Bra)) return undefined;
  const lines: string[] = ['out.count = 0;'];
  if (ops.length === 0) {
    lines.push('out.kind[0] = ' + PIECE_OPTIMIZED_OUT + '; out.size[0] = -1; out.count = 1; return DONE;');
    return lines.join('\n');
  }
  const literal = (value: number) => (Object.is(value, -0) ? '-0' : String(value));
  let top = 0;
  let deepest = 0;
  /** The named location so far (runNumeric's namedKind), known here; its value in `named` where it is one. */
  let namedKind = -1;
  let pieces = 0;
  const s = (depth: number) => `s${depth}`;
  /** Pushes x after runNumeric's exactness check. */
  const push = () => {
    lines.push(`if (!(x <= SAFE && x >= -SAFE)) return BAIL;`, `${s(top)} = x;`);
    top++;
    deepest = Math.max(deepest, top);
  };
  let ended = false;
  for (let pc = 0; pc < ops.length && !ended; pc++) {
    if (pc + 1 > MAX_STEPS || top >= MAX_STACK - 2) {
      lines.push('return BAIL;');
      ended = true;
      break;
    }
    const op = ops[pc] as Op;
    const bail = () => {
      lines.push('return BAIL;');
      ended = true;
    };
    switch (op) {
      case Op.Push:
        lines.push(`${s(top)} = ${literal(a[pc])};`);
        top++;
        deepest = Math.max(deepest, top);
        break;
      case Op.PushBiased:
        lines.push(`x = ${literal(a[pc])} + frame.addressBias;`);
        push();
        break;
      case Op.Breg:
        lines.push(`x = frame.register(${a[pc]});`, 'if (x === MISSING) return NOT_CAPTURED;', `x += ${literal(b[pc])};`);
        push();
        break;
      case Op.Fbreg:
        lines.push(`x = frame.frameBase() + ${literal(a[pc])};`);
        push();
        break;
      case Op.Cfa:
        lines.push('x = frame.cfa();');
        push();
        break;
      case Op.Reg:
        namedKind = PIECE_REGISTER;
        lines.push(`named = ${literal(a[pc])};`);
        break;
      case Op.Deref:
        if (top < 1) {
          bail();
          break;
        }
        top--;
        lines.push(`x = ${s(top)};`, 'if (x < 0) return BAIL;', `x = frame.read(x, ${a[pc]});`, 'if (x === MISSING) return NOT_CAPTURED;');
        push();
        break;
      case Op.Dup:
        if (top < 1) bail();
        else {
          lines.push(`x = ${s(top - 1)};`);
          push();
        }
        break;
      case Op.Drop:
        if (top < 1) bail();
        else top--;
        break;
      case Op.Over:
        if (top < 2) bail();
        else {
          lines.push(`x = ${s(top - 2)};`);
          push();
        }
        break;
      case Op.Pick:
        if (a[pc] >= top) bail();
        else {
          lines.push(`x = ${s(top - 1 - a[pc])};`);
          push();
        }
        break;
      case Op.Swap:
        if (top < 2) bail();
        else lines.push(`x = ${s(top - 1)}; ${s(top - 1)} = ${s(top - 2)}; ${s(top - 2)} = x;`);
        break;
      case Op.Rot:
        if (top < 3) bail();
        else lines.push(`x = ${s(top - 1)}; ${s(top - 1)} = ${s(top - 2)}; ${s(top - 2)} = ${s(top - 3)}; ${s(top - 3)} = x;`);
        break;
      case Op.Abs:
      case Op.Neg:
      case Op.Not:
      case Op.PlusConst:
      case Op.SignExtend:
      case Op.ZeroExtend: {
        if (top < 1) {
          bail();
          break;
        }
        top--;
        const v = s(top);
        if (op === Op.Abs) lines.push(`x = Math.abs(${v});`);
        else if (op === Op.Neg) lines.push(`x = -${v};`);
        else if (op === Op.Not) lines.push(`x = -${v} - 1;`);
        else if (op === Op.PlusConst) lines.push(`x = ${v} + ${literal(a[pc])};`);
        else if (a[pc] <= 32) {
          const shift = 32 - a[pc];
          lines.push(op === Op.SignExtend ? `x = (${v} << ${shift}) >> ${shift};` : `x = (${v} << ${shift}) >>> ${shift};`);
        } else {
          const modulus = literal(b[pc]);
          lines.push(`x = ${v} % ${modulus};`, `if (x < 0) x += ${modulus};`);
          if (op === Op.SignExtend) lines.push(`if (x >= ${modulus} / 2) x -= ${modulus};`);
        }
        push();
        break;
      }
      case Op.StackValue:
        if (top < 1) {
          bail();
          break;
        }
        top--;
        namedKind = PIECE_VALUE;
        lines.push(`named = ${s(top)};`);
        break;
      case Op.ImplicitValue:
        namedKind = PIECE_IMPLICIT;
        lines.push(`named = ${literal(a[pc])};`);
        break;
      case Op.Piece: {
        if (pieces >= MAX_PIECES) {
          bail();
          break;
        }
        const n = pieces++;
        lines.push(`out.count = ${pieces};`, `out.size[${n}] = ${literal(a[pc])};`);
        if (namedKind >= 0) lines.push(`out.kind[${n}] = ${namedKind};`, `out.value[${n}] = named;`);
        else if (top > 0) {
          top--;
          lines.push(`out.kind[${n}] = ${PIECE_MEMORY};`, `out.value[${n}] = ${s(top)};`, `if (out.value[${n}] < 0) return BAIL;`);
        } else lines.push(`out.kind[${n}] = ${PIECE_OPTIMIZED_OUT};`, `out.value[${n}] = 0;`);
        namedKind = -1;
        break;
      }
      case Op.OptimizedOut:
        lines.push('return OPTIMIZED_OUT;');
        ended = true;
        break;
      case Op.Nop:
        break;
      default: {
        if (top < 2) {
          bail();
          break;
        }
        const y = s(--top);
        const v = s(--top);
        const binary = BINARY_STATEMENTS[op];
        if (binary === undefined) {
          bail();
          break;
        }
        lines.push(binary.replace(/\bv\b/g, v).replace(/\by\b/g, y));
        push();
      }
    }
  }
  if (!ended) {
    if (pieces === 0) {
      lines.push('out.size[0] = -1;');
      if (namedKind >= 0) lines.push(`out.kind[0] = ${namedKind};`, 'out.value[0] = named;');
      else if (top < 1) lines.push('return BAIL;');
      else lines.push(`if (${s(top - 1)} < 0) return BAIL;`, `out.kind[0] = ${PIECE_MEMORY};`, `out.value[0] = ${s(top - 1)};`);
      lines.push('out.count = 1;');
    }
    lines.push('return DONE;');
  }
  const locals = ['x = 0', 'named = 0', ...Array.from({ length: deepest }, (_, i) => `${s(i)} = 0`)];
  return `let ${locals.join(', ')};\n${lines.join('\n')}`;
}

/**
 * runNumeric's binary operations as statements of `v` (DWARF's first operand) and `y` (the top) into `x`, with
 * its reasons to give up (`return BAIL`): the same expressions, for numericRunner.
 */
const BINARY_STATEMENTS: Partial<Record<Op, string>> = {
  [Op.Plus]: 'x = v + y;',
  [Op.Minus]: 'x = v - y;',
  [Op.Mul]: 'x = v * y;',
  [Op.Div]: 'if (y === 0 || Math.abs(v) >= 2147483648 || Math.abs(y) >= 2147483648) return BAIL; x = Math.trunc(v / y);',
  [Op.Mod]: 'if (y <= 0 || v < 0) return BAIL; x = v % y;',
  [Op.And]: 'x = (Math.floor(v / TWO_32) & Math.floor(y / TWO_32)) * TWO_32 + ((v & y) >>> 0);',
  [Op.Or]: 'x = (Math.floor(v / TWO_32) | Math.floor(y / TWO_32)) * TWO_32 + ((v | y) >>> 0);',
  [Op.Xor]: 'x = (Math.floor(v / TWO_32) ^ Math.floor(y / TWO_32)) * TWO_32 + ((v ^ y) >>> 0);',
  [Op.Shl]: 'if (y < 0) return BAIL; x = y >= 64 ? 0 : v * POWERS[y];',
  [Op.Shr]: 'if (y < 0 || v < 0) return BAIL; x = y >= 64 ? 0 : Math.floor(v / POWERS[y]);',
  [Op.Shra]: 'if (y < 0) return BAIL; x = Math.floor(v / POWERS[Math.min(y, 63)]);',
  [Op.Eq]: 'x = v === y ? 1 : 0;',
  [Op.Ge]: 'x = v >= y ? 1 : 0;',
  [Op.Gt]: 'x = v > y ? 1 : 0;',
  [Op.Le]: 'x = v <= y ? 1 : 0;',
  [Op.Lt]: 'x = v < y ? 1 : 0;',
  [Op.Ne]: 'x = v !== y ? 1 : 0;',
};
