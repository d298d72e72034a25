// The DWARF expression stack machine (DWARF 5, 2.5 and 2.6): the values call frame information
// computes (unwind.ts) and the locations of variables (dwarf-scopes.ts, logpoint-values.ts):
// in memory, in a register, a computed value (DW_OP_stack_value), literal bytes
// (DW_OP_implicit_value), or several pieces of these. Pure: registers and memory come from the caller.

/** Why a location cannot be computed: the compiler dropped the value, or the sample does not hold what it needs. */
export class LocationUnavailable extends Error {
  override readonly name = 'LocationUnavailable';
  constructor(
    readonly reason: 'optimized-out' | 'not-captured' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}

/** Where (part of) a value is. Registers are DWARF register numbers. */
export type LocationPart =
  | { readonly kind: 'memory'; readonly address: bigint }
  | { readonly kind: 'register'; readonly register: number }
  | { readonly kind: 'value'; readonly value: bigint }
  | { readonly kind: 'implicit'; readonly bytes: Uint8Array }
  /** An empty piece: that part of the value does not exist at this pc. */
  | { readonly kind: 'optimized-out' };

/** One piece of a composite location; `size` (bytes) is absent for a location that is not split. */
export interface LocationPiece {
  readonly part: LocationPart;
  readonly size?: number;
}

export interface ExpressionContext {
  /** Register values by DWARF number; a missing one is not in the sample. */
  readonly registers: ReadonlyMap<number, bigint>;
  /** 8 bytes of memory at an address (little-endian); throws when they are not available. */
  readonly read: (address: bigint) => bigint;
  /** Pushed before the expression runs (the CFA, for register rules of call frame information). */
  readonly initial?: readonly bigint[];
  /** DW_AT_frame_base of the enclosing function, for DW_OP_fbreg. */
  readonly frameBase?: () => bigint;
  /** The canonical frame address, for DW_OP_call_frame_cfa. */
  readonly cfa?: () => bigint;
  /** runtime - link-time address of the object: DW_OP_addr names link-time addresses. */
  readonly addressBias?: bigint;
  /** DW_OP_addrx / DW_OP_constx: an entry of the unit's .debug_addr. */
  readonly addressIndex?: (index: number) => bigint;
}

// DW_OP_*
const OP = {
  addr: 0x03,
  deref: 0x06,
  const1u: 0x08,
  const1s: 0x09,
  const2u: 0x0a,
  const2s: 0x0b,
  const4u: 0x0c,
  const4s: 0x0d,
  const8u: 0x0e,
  const8s: 0x0f,
  constu: 0x10,
  consts: 0x11,
  dup: 0x12,
  drop: 0x13,
  over: 0x14,
  pick: 0x15,
  swap: 0x16,
  rot: 0x17,
  xderef: 0x18,
  abs: 0x19,
  and: 0x1a,
  div: 0x1b,
  minus: 0x1c,
  mod: 0x1d,
  mul: 0x1e,
  neg: 0x1f,
  not: 0x20,
  or: 0x21,
  plus: 0x22,
  plusUconst: 0x23,
  shl: 0x24,
  shr: 0x25,
  shra: 0x26,
  xor: 0x27,
  bra: 0x28,
  eq: 0x29,
  ge: 0x2a,
  gt: 0x2b,
  le: 0x2c,
  lt: 0x2d,
  ne: 0x2e,
  skip: 0x2f,
  lit0: 0x30,
  lit31: 0x4f,
  reg0: 0x50,
  reg31: 0x6f,
  breg0: 0x70,
  breg31: 0x8f,
  regx: 0x90,
  fbreg: 0x91,
  bregx: 0x92,
  piece: 0x93,
  derefSize: 0x94,
  nop: 0x96,
  callFrameCfa: 0x9c,
  bitPiece: 0x9d,
  implicitValue: 0x9e,
  stackValue: 0x9f,
  implicitPointer: 0xa0,
  addrx: 0xa1,
  constx: 0xa2,
  entryValue: 0xa3,
  GNU_implicitPointer: 0xf2,
  GNU_entryValue: 0xf3,
  GNU_parameterRef: 0xfa,
  GNU_addrIndex: 0xfb,
  GNU_constIndex: 0xfc,
} as const;

const UNSUPPORTED_NAMES: Readonly<Record<number, string>> = {
  0x18: 'DW_OP_xderef',
  0x95: 'DW_OP_xderef_size',
  0x98: 'DW_OP_call2',
  0x99: 'DW_OP_call4',
  0x9a: 'DW_OP_call_ref',
  0x9b: 'DW_OP_form_tls_address',
  0xe0: 'DW_OP_GNU_push_tls_address',
  0xa4: 'DW_OP_const_type',
  0xa5: 'DW_OP_regval_type',
  0xa6: 'DW_OP_deref_type',
  0xa7: 'DW_OP_xderef_type',
  0xa8: 'DW_OP_convert',
  0xa9: 'DW_OP_reinterpret',
  0xf4: 'DW_OP_GNU_const_type',
  0xf5: 'DW_OP_GNU_regval_type',
  0xf6: 'DW_OP_GNU_deref_type',
  0xf7: 'DW_OP_GNU_convert',
  0xf9: 'DW_OP_GNU_reinterpret',
};

const MAX_EXPRESSION_STEPS = 10000;

/** A register the expression needs but the sample does not hold. */
export class MissingRegister extends LocationUnavailable {
  constructor(readonly register: number) {
    super('not-captured', `expression reads register ${register}, which is unknown`);
  }
}

/**
 * Runs an expression as a location description: the pieces it names (one piece without a size
 * when the location is not split). An empty expression is a value that does not exist here.
 */
export function evaluateLocation(expression: Uint8Array, ctx: ExpressionContext): LocationPiece[] {
  if (expression.length === 0) return [{ part: { kind: 'optimized-out' } }];
  return run(expression, ctx, true).pieces;
}

/** Runs an expression as a value computation (call frame information, frame bases): the top of the stack. */
export function evaluateValue(expression: Uint8Array, ctx: ExpressionContext): bigint {
  const { stack, pieces } = run(expression, ctx, false);
  if (pieces.length > 0) throw new LocationUnavailable('unsupported', 'a value expression names pieces');
  const result = stack.pop();
  if (result === undefined) throw new Error('expression leaves an empty stack');
  return result;
}

/** The location an expression names, with the frame base as a memory address (DW_AT_frame_base is a location whose address is the base). */
export function evaluateFrameBase(expression: Uint8Array, ctx: ExpressionContext): bigint {
  const pieces = evaluateLocation(expression, ctx);
  const part = pieces[0]?.part;
  if (pieces.length === 1 && part.kind === 'memory') return part.address;
  // gcc's -O0 frame base on some targets is a register (DW_OP_reg6): its value is the base.
  if (pieces.length === 1 && part.kind === 'register') {
    const value = ctx.registers.get(part.register);
    if (value === undefined) throw new MissingRegister(part.register);
    return value;
  }
  throw new LocationUnavailable('unsupported', 'the frame base is not an address');
}

function run(expression: Uint8Array, ctx: ExpressionContext, locationMode: boolean): { stack: bigint[]; pieces: LocationPiece[] } {
  const view = new DataView(expression.buffer, expression.byteOffset, expression.byteLength);
  const stack: bigint[] = [...(ctx.initial ?? [])];
  const pieces: LocationPiece[] = [];
  /** The location named since the last piece by DW_OP_reg*, stack_value or implicit_value. */
  let named: LocationPart | undefined;
  let at = 0;
  const u8 = () => {
    if (at >= expression.length) throw new Error('expression ends inside an operand');
    return expression[at++];
  };
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
    let result = 0n;
    let shift = 0n;
    let byte: number;
    do {
      byte = u8();
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80);
    return result;
  };
  const sleb = (): bigint => {
    let result = 0n;
    let shift = 0n;
    let byte: number;
    do {
      byte = u8();
      result |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80);
    return byte & 0x40 ? result - (1n << shift) : result;
  };
  const pop = (): bigint => {
    const value = stack.pop();
    if (value === undefined) throw new Error('expression stack underflow');
    return value;
  };
  const push = (value: bigint) => stack.push(BigInt.asUintN(64, value));
  const register = (number: number): bigint => {
    const value = ctx.registers.get(number);
    if (value === undefined) throw new MissingRegister(number);
    return value;
  };
  const nameRegister = (number: number) => {
    if (!locationMode) {
      push(register(number));
      return;
    }
    named = { kind: 'register', register: number };
  };
  const addressIndex = (index: number): bigint => {
    if (!ctx.addressIndex) throw new LocationUnavailable('unsupported', 'DW_OP_addrx outside a unit');
    return ctx.addressIndex(index);
  };
  const signed = (value: bigint) => BigInt.asIntN(64, value);
  for (let steps = 0; at < expression.length; steps++) {
    if (steps > MAX_EXPRESSION_STEPS) throw new Error('expression does not terminate');
    const op = u8();
    if (op >= OP.lit0 && op <= OP.lit31) {
      push(BigInt(op - OP.lit0));
      continue;
    }
    if (op >= OP.breg0 && op <= OP.breg31) {
      push(register(op - OP.breg0) + sleb());
      continue;
    }
    if (op >= OP.reg0 && op <= OP.reg31) {
      nameRegister(op - OP.reg0);
      continue;
    }
    switch (op) {
      case OP.addr:
        push(fixed(8, false) + (ctx.addressBias ?? 0n));
        break;
      case OP.addrx:
      case OP.GNU_addrIndex:
        push(addressIndex(Number(uleb())) + (ctx.addressBias ?? 0n));
        break;
      case OP.constx:
      case OP.GNU_constIndex:
        push(addressIndex(Number(uleb())));
        break;
      case OP.deref:
        push(ctx.read(pop()));
        break;
      case OP.derefSize: {
        const size = u8();
        const word = ctx.read(pop());
        push(size >= 8 ? word : word & ((1n << BigInt(size * 8)) - 1n));
        break;
      }
      case OP.const1u:
        push(fixed(1, false));
        break;
      case OP.const1s:
        push(fixed(1, true));
        break;
      case OP.const2u:
        push(fixed(2, false));
        break;
      case OP.const2s:
        push(fixed(2, true));
        break;
      case OP.const4u:
        push(fixed(4, false));
        break;
      case OP.const4s:
        push(fixed(4, true));
        break;
      case OP.const8u:
        push(fixed(8, false));
        break;
      case OP.const8s:
        push(fixed(8, true));
        break;
      case OP.constu:
        push(uleb());
        break;
      case OP.consts:
        push(sleb());
        break;
      case OP.dup: {
        const v = pop();
        push(v);
        push(v);
        break;
      }
      case OP.drop:
        pop();
        break;
      case OP.over: {
        const a = pop();
        const b = pop();
        push(b);
        push(a);
        push(b);
        break;
      }
      case OP.pick: {
        const index = u8();
        const value = stack[stack.length - 1 - index];
        if (value === undefined) throw new Error('DW_OP_pick past the stack');
        push(value);
        break;
      }
      case OP.swap: {
        const a = pop();
        const b = pop();
        push(a);
        push(b);
        break;
      }
      case OP.rot: {
        const a = pop();
        const b = pop();
        const c = pop();
        push(a);
        push(c);
        push(b);
        break;
      }
      case OP.abs: {
        const v = signed(pop());
        push(v < 0n ? -v : v);
        break;
      }
      case OP.and:
        push(pop() & pop());
        break;
      case OP.or:
        push(pop() | pop());
        break;
      case OP.xor:
        push(pop() ^ pop());
        break;
      case OP.plus:
        push(pop() + pop());
        break;
      case OP.mul:
        push(pop() * pop());
        break;
      case OP.minus: {
        const a = pop();
        const b = pop();
        push(b - a);
        break;
      }
      case OP.div: {
        const a = signed(pop());
        const b = signed(pop());
        if (a === 0n) throw new Error('DW_OP_div by zero');
        push(b / a);
        break;
      }
      case OP.mod: {
        const a = pop();
        const b = pop();
        if (a === 0n) throw new Error('DW_OP_mod by zero');
        push(b % a);
        break;
      }
      case OP.neg:
        push(-signed(pop()));
        break;
      case OP.not:
        push(~pop());
        break;
      case OP.plusUconst:
        push(pop() + uleb());
        break;
      case OP.shl: {
        const a = pop();
        const b = pop();
        push(a >= 64n ? 0n : b << a);
        break;
      }
      case OP.shr: {
        const a = pop();
        const b = pop();
        push(a >= 64n ? 0n : b >> a);
        break;
      }
      case OP.shra: {
        const a = pop();
        const b = signed(pop());
        push(b >> (a >= 64n ? 63n : a));
        break;
      }
      case OP.eq:
      case OP.ge:
      case OP.gt:
      case OP.le:
      case OP.lt:
      case OP.ne: {
        const a = signed(pop());
        const b = signed(pop());
        const truth = op === OP.eq ? b === a : op === OP.ge ? b >= a : op === OP.gt ? b > a : op === OP.le ? b <= a : op === OP.lt ? b < a : b !== a;
        push(truth ? 1n : 0n);
        break;
      }
      case OP.skip: {
        const offset = Number(fixed(2, true));
        at += offset;
        break;
      }
      case OP.bra: {
        const offset = Number(fixed(2, true));
        if (pop() !== 0n) at += offset;
        break;
      }
      case OP.regx:
        nameRegister(Number(uleb()));
        break;
      case OP.bregx: {
        const r = Number(uleb());
        push(register(r) + sleb());
        break;
      }
      case OP.fbreg: {
        if (!ctx.frameBase) throw new LocationUnavailable('unsupported', 'DW_OP_fbreg outside a function with a frame base');
        push(ctx.frameBase() + sleb());
        break;
      }
      case OP.callFrameCfa: {
        if (!ctx.cfa) throw new LocationUnavailable('not-captured', 'DW_OP_call_frame_cfa without call frame information for this pc');
        push(ctx.cfa());
        break;
      }
      case OP.nop:
        break;
      case OP.stackValue:
        named = { kind: 'value', value: pop() };
        break;
      case OP.implicitValue: {
        const size = Number(uleb());
        if (at + size > expression.length) throw new Error('expression ends inside an operand');
        named = { kind: 'implicit', bytes: expression.slice(at, at + size) };
        at += size;
        break;
      }
      case OP.piece: {
        const size = Number(uleb());
        const part: LocationPart = named ?? (stack.length > 0 ? { kind: 'memory', address: pop() } : { kind: 'optimized-out' });
        pieces.push({ part, size });
        named = undefined;
        break;
      }
      // The value the variable had on entry to the function: only the caller's frame could tell, which a sample does not hold.
      case OP.entryValue:
      case OP.GNU_entryValue:
      case OP.GNU_parameterRef:
        throw new LocationUnavailable('optimized-out', 'the value on entry to the function (DW_OP_entry_value) is not in this frame');
      case OP.implicitPointer:
      case OP.GNU_implicitPointer:
        throw new LocationUnavailable('optimized-out', 'a pointer the compiler removed (DW_OP_implicit_pointer)');
      case OP.bitPiece:
        throw new LocationUnavailable('unsupported', 'DW_OP_bit_piece');
      default:
        throw new LocationUnavailable('unsupported', `${UNSUPPORTED_NAMES[op] ?? `DW_OP 0x${op.toString(16)}`} is not supported`);
    }
    if (at < 0 || at > expression.length) throw new Error('expression branches outside itself');
  }
  if (locationMode && pieces.length === 0) {
    if (named) return { stack, pieces: [{ part: named }] };
    const address = stack.pop();
    if (address === undefined) throw new Error('expression leaves an empty stack');
    return { stack, pieces: [{ part: { kind: 'memory', address } }] };
  }
  if (named && !locationMode) throw new Error('a value expression names a location');
  return { stack, pieces };
}
