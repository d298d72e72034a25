// The numeric DWARF machine against the BigInt one (dwarf-expression.ts), which is the reference:
// where the numeric one gives an answer it must be the same location, value or reason; where it gives
// up, the BigInt one runs. The expressions gcc emits for the logpoint fixture's locals (-O2: location
// list entries with computed addresses, stack values and pieces) must not make it give up, or every
// hit would take the slow path. Values against gdb: test/kernel/logpoint-gdb.test.ts.

import assert from 'node:assert/strict';
import { evaluateLocation, LocationUnavailable, type ExpressionContext, type LocationPiece } from './dwarf-expression';
import {
  compileNumeric,
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
  numericRunner,
  runNumeric,
  type NumericFrame,
} from './dwarf-expression-numeric';

const SP = 0x7ffffffde000n;
const CFA = SP + 0x90n;
const BIAS = 0x555555554000n;

interface Machine {
  readonly registers: Map<number, bigint>;
  /** 8-byte words of the stack copy by address. */
  readonly stack: Map<bigint, bigint>;
}

function bigintContext(machine: Machine): ExpressionContext {
  return {
    registers: machine.registers,
    read: (address) => {
      const word = machine.stack.get(address);
      if (word === undefined) throw new LocationUnavailable('not-captured', 'outside the stack copy');
      return word;
    },
    cfa: () => CFA,
    frameBase: () => CFA,
    addressBias: BIAS,
  };
}

function exact(value: bigint): number {
  const signed = BigInt.asIntN(64, value);
  return signed <= BigInt(Number.MAX_SAFE_INTEGER) && signed >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(signed) : NaN;
}

function numericFrame(machine: Machine): NumericFrame {
  return {
    register: (dwarf) => {
      const value = machine.registers.get(dwarf);
      return value === undefined ? REGISTER_MISSING : exact(value);
    },
    read: (address, size) => {
      const word = machine.stack.get(BigInt(address));
      if (word === undefined) return REGISTER_MISSING;
      return exact(size >= 8 ? word : word & ((1n << BigInt(size * 8)) - 1n));
    },
    cfa: () => Number(CFA),
    frameBase: () => Number(CFA),
    addressBias: Number(BIAS),
  };
}

type Outcome = { kind: 'pieces'; pieces: string[] } | { kind: 'unavailable'; reason: string } | { kind: 'error' };

function describePiece(piece: LocationPiece): string {
  const part = piece.part;
  const where =
    part.kind === 'memory'
      ? `memory 0x${part.address.toString(16)}`
      : part.kind === 'register'
        ? `register ${part.register}`
        : part.kind === 'value'
          ? `value ${BigInt.asUintN(64, part.value)}`
          : part.kind === 'implicit'
            ? `implicit ${[...part.bytes].join(',')}`
            : 'optimized-out';
  return `${where}${piece.size === undefined ? '' : ` size ${piece.size}`}`;
}

function reference(expression: Uint8Array, machine: Machine): Outcome {
  try {
    return { kind: 'pieces', pieces: evaluateLocation(expression, bigintContext(machine)).map(describePiece) };
  } catch (error) {
    return error instanceof LocationUnavailable ? { kind: 'unavailable', reason: error.reason } : { kind: 'error' };
  }
}

/**
 * The numeric machine's outcome, or 'bail'; its compiled runner (numericRunner, what a logpoint runs at every hit)
 * must give the same outcome and the same pieces.
 */
function numeric(expression: Uint8Array, machine: Machine): Outcome | 'bail' | 'not compiled' {
  const program = compileNumeric(expression);
  if (!program) return 'not compiled';
  const out = new NumericLocation();
  const outcome = runNumeric(program, numericFrame(machine), out);
  const compiled = new NumericLocation();
  const hex = Buffer.from(expression).toString('hex');
  assert.equal(numericRunner(program)(numericFrame(machine), compiled), outcome, `the runner's outcome of ${hex}`);
  if (outcome === NUMERIC_DONE) {
    assert.equal(compiled.count, out.count, `the runner's pieces of ${hex}`);
    for (let n = 0; n < out.count; n++) {
      assert.deepEqual([compiled.kind[n], compiled.value[n], compiled.size[n]], [out.kind[n], out.value[n], out.size[n]], `piece ${n} of ${hex}`);
    }
  }
  if (outcome === NUMERIC_BAIL) return 'bail';
  if (outcome === NUMERIC_OPTIMIZED_OUT) return { kind: 'unavailable', reason: 'optimized-out' };
  if (outcome === NUMERIC_NOT_CAPTURED) return { kind: 'unavailable', reason: 'not-captured' };
  assert.equal(outcome, NUMERIC_DONE);
  const pieces: string[] = [];
  for (let n = 0; n < out.count; n++) {
    const value = out.value[n];
    const size = out.size[n] < 0 ? '' : ` size ${out.size[n]}`;
    const kind = out.kind[n];
    const where =
      kind === PIECE_MEMORY
        ? `memory 0x${value.toString(16)}`
        : kind === PIECE_REGISTER
          ? `register ${value}`
          : kind === PIECE_VALUE
            ? `value ${BigInt.asUintN(64, BigInt(value))}`
            : kind === PIECE_IMPLICIT
              ? `implicit ${[...program.implicit[value]].join(',')}`
              : kind === PIECE_OPTIMIZED_OUT
                ? 'optimized-out'
                : `unknown kind ${kind}`;
    pieces.push(`${where}${size}`);
  }
  return { kind: 'pieces', pieces };
}

const bytes = (...values: number[]) => Uint8Array.from(values);
const sleb = (value: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) return [...out, byte];
    out.push(byte | 0x80);
  }
};
const u64 = (value: bigint) => Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(8 * i)) & 0xffn));

function machine(overrides: Partial<Record<number, bigint>> = {}): Machine {
  const registers = new Map<number, bigint>([
    [0, 7n],
    [1, 0xfffffffffffffffen], // -2
    [3, 42n],
    [4, 5n],
    [6, SP + 0x40n],
    [7, SP],
    [13, 6n],
    [15, 0x8000000000000000n], // not exact as a number
  ]);
  for (const [register, value] of Object.entries(overrides)) registers.set(Number(register), value!);
  const stack = new Map<bigint, bigint>();
  // slot at CFA - 144 holds a 32-bit -3 (sign-extension idiom below), others small words.
  stack.set(CFA - 144n, 0x00000000fffffffdn);
  stack.set(CFA - 24n, 0x1234n);
  stack.set(SP + 8n, 0xfffffffffffffff0n);
  return { registers, stack };
}

describe('numeric DWARF expressions: the BigInt machine decides, numbers only go faster', () => {
  // What gcc -O2 emits for test/fixtures/logpoint_values.c's loop: none of these may give up.
  const fixtureExpressions: [string, Uint8Array][] = [
    ['fbreg -144 (a spilled local)', bytes(0x91, ...sleb(-144))],
    ['breg6 -1; stack_value (i)', bytes(0x76, ...sleb(-1), 0x9f)],
    ['reg12 (mode)', bytes(0x5c)],
    [
      'labels[slot]: fbreg -144; deref_size 4; 32 shl; 32 shra; lit3 shl; addr; plus',
      bytes(0x91, ...sleb(-144), 0x94, 4, 0x08, 32, 0x24, 0x08, 32, 0x26, 0x33, 0x24, 0x03, ...u64(0x3dc0n), 0x22),
    ],
    [
      'span: breg13 -1; stack_value; piece 4; fbreg -144; deref_size 4; lit3; mul; stack_value; piece 4',
      bytes(0x7d, ...sleb(-1), 0x9f, 0x93, 4, 0x91, ...sleb(-144), 0x94, 4, 0x33, 0x1e, 0x9f, 0x93, 4),
    ],
    ['reg3; piece 4; breg4 0; lit3; mul; stack_value; piece 4', bytes(0x53, 0x93, 4, 0x74, 0, 0x33, 0x1e, 0x9f, 0x93, 4)],
    ['call_frame_cfa', bytes(0x9c)],
    ['implicit_value 4', bytes(0x9e, 4, 1, 2, 3, 4)],
    ['empty', bytes()],
  ];
  for (const [name, expression] of fixtureExpressions) {
    it(`${name}: the same as the BigInt machine, without giving up`, () => {
      const m = machine();
      const got = numeric(expression, m);
      assert.notEqual(got, 'not compiled');
      assert.notEqual(got, 'bail');
      assert.deepEqual(got, reference(expression, m));
    });
  }

  it('gives the BigInt machine the values numbers cannot hold (a register at 2^63, a negative word shifted right)', () => {
    const m = machine();
    assert.equal(numeric(bytes(0x7f, 0, 0x9f), m), 'bail', 'breg15: 2^63 is not an exact number');
    assert.equal(numeric(bytes(0x77, 8, 0x06, 0x31, 0x25, 0x9f), m), 'bail', 'a negative word shifted right (unsigned) is 2^63 - 8');
    assert.equal(reference(bytes(0x77, 8, 0x06, 0x31, 0x25, 0x9f), m).kind, 'pieces');
  });

  it('sign and zero extension of the low bits (`k shl k shra`, `k shl k shr`) at every width, as the BigInt machine', () => {
    // Widths up to 32 run on int32 operations, wider ones on a floating-point modulus: both against the reference.
    const values = [0n, 1n, -1n, 3n, -3n, 0x7fn, 0x80n, 0xffn, 0x7fffffffn, 0x80000000n, 0xfffffffdn, -0x80000000n, 0x123456789abcdn, -0x123456789abcdn];
    values.push(BigInt(Number.MAX_SAFE_INTEGER), -BigInt(Number.MAX_SAFE_INTEGER), 0x1fffff00000000n);
    let answered = 0;
    for (let k = 11; k <= 63; k++)
      for (const value of values)
        for (const shift of [0x26, 0x25]) {
          // const8s VALUE; const1u k; shl; const1u k; shra|shr; stack_value
          const expression = bytes(0x0f, ...u64(BigInt.asUintN(64, value)), 0x08, k, 0x24, 0x08, k, shift, 0x9f);
          const m = machine();
          const got = numeric(expression, m);
          assert.notEqual(got, 'not compiled');
          if (got === 'bail') continue;
          assert.deepEqual(got, reference(expression, m), `${value} ${k} ${shift === 0x26 ? 'shra' : 'shr'}`);
          answered++;
        }
    assert.ok(answered > 53 * values.length, `the numeric machine answered ${answered}`);
  });

  it('says optimized out and not captured exactly where the BigInt machine does', () => {
    const m = machine();
    for (const expression of [
      bytes(0xa3, 1, 0x55, 0x9f), // entry_value(reg5); stack_value
      bytes(0x77, 0x80, 0x01, 0x06, 0x9f), // deref outside the stack copy
      bytes(0x72, 0, 0x9f), // breg2: a register the sample lacks
    ]) {
      const got = numeric(expression, m);
      assert.notEqual(got, 'bail');
      assert.deepEqual(got, reference(expression, m));
    }
  });

  it('random expressions: every answer the numeric machine gives equals the BigInt machine', () => {
    // A small deterministic generator over the operations gcc uses in locations.
    let seed = 12345;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const operations: (() => number[])[] = [
      () => [0x30 + next(32)], // lit
      () => [0x70 + [0, 1, 3, 4, 6, 7, 13][next(7)], ...sleb(next(400) - 200)], // breg
      () => [0x91, ...sleb(-8 * next(20))], // fbreg
      () => [0x9c], // call_frame_cfa
      () => [0x11, ...sleb(next(1 << 20) - (1 << 19))], // consts
      () => [0x0e, ...u64(BigInt(next(1 << 30)) << BigInt(next(34)))], // const8u
      () => [[0x12, 0x14, 0x16, 0x17][next(4)]], // dup over swap rot
      () => [[0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27][next(14)]], // arithmetic
      () => [[0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e][next(6)]], // comparisons
      () => [0x23, next(100)], // plus_uconst
      () => [0x10, next(128)], // constu
      () => [0x15, next(3)], // pick
      () => [0x94, [1, 2, 4, 8][next(4)]], // deref_size
      () => [0x06], // deref
    ];
    let answered = 0;
    for (let round = 0; round < 4000; round++) {
      const ops: number[] = [];
      const length = 1 + next(7);
      for (let i = 0; i < length; i++) ops.push(...operations[next(operations.length)]());
      if (next(2)) ops.push(0x9f);
      const expression = Uint8Array.from(ops);
      const m = machine();
      // Words the derefs may land on: every 8-byte slot near the stack pointer and the CFA.
      for (let k = -32n; k < 64n; k++) if (!m.stack.has(SP + 8n * k)) m.stack.set(SP + 8n * k, BigInt(next(1 << 30)) * BigInt(1 + next(3)));
      const got = numeric(expression, m);
      if (got === 'bail' || got === 'not compiled') continue;
      const expected = reference(expression, m);
      assert.deepEqual(got, expected, `expression ${Buffer.from(expression).toString('hex')}`);
      answered++;
    }
    assert.ok(answered > 1000, `the numeric machine answered ${answered} of 4000`);
  });

  it('random locations of pieces (registers, stack values, memory, implicit values, empty pieces): the same, compiled or run', () => {
    let seed = 777;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const value: (() => number[])[] = [
      () => [0x70 + [0, 1, 3, 4, 6, 7, 13][next(7)], ...sleb(next(400) - 200)], // breg
      () => [0x91, ...sleb(-8 * next(20)), 0x94, [1, 2, 4, 8][next(4)]], // a slot's value
      () => [0x30 + next(32), 0x30 + next(32), [0x1e, 0x22, 0x1c, 0x24, 0x26, 0x1a][next(6)]], // arithmetic of two literals
      () => [0x9c, 0x23, next(64)], // cfa + n
    ];
    const location: (() => number[])[] = [
      () => [...value[next(value.length)](), 0x9f], // stack_value
      () => [0x50 + [0, 1, 3, 7, 13, 2][next(6)]], // reg (2 is not sampled)
      () => value[next(value.length)](), // memory at the value
      () => [0x9e, 2, next(256), next(256)], // implicit_value
      () => [], // an empty piece: optimized out
    ];
    let answered = 0;
    for (let round = 0; round < 3000; round++) {
      const ops: number[] = [];
      const pieces = 1 + next(4);
      for (let p = 0; p < pieces; p++) ops.push(...location[next(location.length)](), 0x93, [1, 2, 4, 8][next(4)]);
      if (next(4) === 0) ops.splice(0, ops.length, ...location[next(3)]()); // sometimes a location that is not split
      const expression = Uint8Array.from(ops);
      const m = machine();
      for (let k = -32n; k < 64n; k++) if (!m.stack.has(SP + 8n * k)) m.stack.set(SP + 8n * k, BigInt(next(1 << 30)));
      const got = numeric(expression, m);
      if (got === 'bail' || got === 'not compiled') continue;
      assert.deepEqual(got, reference(expression, m), `expression ${Buffer.from(expression).toString('hex')}`);
      answered++;
    }
    assert.ok(answered > 1500, `the numeric machine answered ${answered} of 3000`);
  });
});
