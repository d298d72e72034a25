// Synthetic-bytes checks of the CFI parser and the unwinder: hand-assembled .eh_frame (with and
// without its .eh_frame_hdr table) and .debug_frame, CFA programs with every kind of rule, the x86_64
// PLT's CFA expression, and a three-frame stack walked to its outermost frame. The real stacks are
// compared with perf in test/perfdata/unwind.test.ts and test/cli/unwind.test.ts.

import assert from 'node:assert/strict';
import { CallFrameInfo, type UnwindRow } from './cfi';
import { AARCH64, evaluateExpression, unwindStack, X86_64 } from './unwind';

/** Little-endian byte assembler. */
class Bytes {
  readonly out: number[] = [];
  get length(): number {
    return this.out.length;
  }
  u8(...values: number[]): this {
    this.out.push(...values.map((v) => v & 0xff));
    return this;
  }
  u32(value: number): this {
    for (let i = 0; i < 4; i++) this.out.push((value >>> (8 * i)) & 0xff);
    return this;
  }
  u64(value: bigint): this {
    for (let i = 0n; i < 8n; i++) this.out.push(Number((value >> (8n * i)) & 0xffn));
    return this;
  }
  uleb(value: number): this {
    do {
      let b = value & 0x7f;
      value >>>= 7;
      if (value) b |= 0x80;
      this.out.push(b);
    } while (value);
    return this;
  }
  sleb(value: number): this {
    for (;;) {
      const b = value & 0x7f;
      value >>= 7;
      if ((value === 0 && !(b & 0x40)) || (value === -1 && b & 0x40)) {
        this.out.push(b);
        return this;
      }
      this.out.push(b | 0x80);
    }
  }
  cstring(text: string): this {
    for (const c of text) this.out.push(c.charCodeAt(0));
    this.out.push(0);
    return this;
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

const R = { rbp: 6, rsp: 7, ra: 16 } as const;
// DW_CFA_* and DW_OP_* as bytes.
const defCfa = (reg: number, offset: number) => [0x0c, reg, offset];
const defCfaOffset = (offset: number) => [0x0e, offset];
const defCfaRegister = (reg: number) => [0x0d, reg];
const offset = (reg: number, factored: number) => [0x80 | reg, factored];
const advance = (delta: number) => [0x40 | delta];
const rememberState = [0x0a];
const restoreState = [0x0b];
const undefinedRule = (reg: number) => [0x07, reg];
/** The x86_64 .plt CFA: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0) (pushes in the lazy-binding stub). */
const PLT_CFA_EXPRESSION = [0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22];

interface FdeSpec {
  start: number;
  size: number;
  program: number[];
}
interface CieSpec {
  codeAlignment: number;
  dataAlignment: number;
  returnAddress: number;
  initial: number[];
}
/** What gcc emits on x86_64: CFA = rsp+8 at entry, the return address at CFA-8. */
const X86_64_CIE: CieSpec = { codeAlignment: 1, dataAlignment: -8, returnAddress: R.ra, initial: [...defCfa(R.rsp, 8), ...offset(R.ra, 1)] };

/** A .eh_frame at link address `address`: one zR CIE (pcrel|sdata4 FDE pointers, x86_64 entry rules), then the FDEs, then the terminator. */
function ehFrame(address: number, fdes: readonly FdeSpec[], augmentation = 'zR', cie: CieSpec = X86_64_CIE): { bytes: Uint8Array; fdeOffsets: number[] } {
  const b = new Bytes();
  const cieBody = new Bytes()
    .u32(0)
    .u8(1)
    .cstring(augmentation)
    .uleb(cie.codeAlignment)
    .sleb(cie.dataAlignment)
    .u8(cie.returnAddress)
    .uleb(1)
    .u8(0x1b)
    .u8(...cie.initial);
  while ((cieBody.length + 4) % 8) cieBody.u8(0);
  b.u32(cieBody.length).u8(...cieBody.out);
  const fdeOffsets: number[] = [];
  for (const fde of fdes) {
    const at = b.length;
    fdeOffsets.push(at);
    const body = new Bytes();
    body.u32(at + 4); // CIE pointer: back from this field to the CIE at 0
    const pcBeginAt = at + 4 + body.length;
    body
      .u32(fde.start - (address + pcBeginAt))
      .u32(fde.size)
      .uleb(0)
      .u8(...fde.program);
    while ((body.length + 4) % 8) body.u8(0);
    b.u32(body.length).u8(...body.out);
  }
  b.u32(0);
  return { bytes: b.bytes(), fdeOffsets };
}

/** The .eh_frame_hdr for it: datarel|sdata4 table sorted by start. */
function ehFrameHdr(address: number, frameAddress: number, fdes: readonly FdeSpec[], fdeOffsets: readonly number[]): Uint8Array {
  const b = new Bytes()
    .u8(1, 0x1b, 0x03, 0x3b)
    .u32(frameAddress - (address + 4))
    .u32(fdes.length);
  const entries = fdes.map((fde, i) => [fde.start, frameAddress + fdeOffsets[i]]).sort((x, y) => x[0] - y[0]);
  for (const [start, fde] of entries) b.u32(start - address).u32(fde - address);
  return b.bytes();
}

/** The same FDEs as a DWARF 3 .debug_frame (absolute addresses, CIE id 0xffffffff). */
function debugFrame(fdes: readonly FdeSpec[]): Uint8Array {
  const b = new Bytes();
  const cieBody = new Bytes()
    .u32(0xffffffff)
    .u8(3)
    .cstring('')
    .uleb(1)
    .sleb(-8)
    .uleb(R.ra)
    .u8(...defCfa(R.rsp, 8), ...offset(R.ra, 1));
  b.u32(cieBody.length).u8(...cieBody.out);
  for (const fde of fdes) {
    const body = new Bytes()
      .u32(0)
      .u64(BigInt(fde.start))
      .u64(BigInt(fde.size))
      .u8(...fde.program);
    b.u32(body.length).u8(...body.out);
  }
  return b.bytes();
}

// A: sub $8,%rsp at +0 (4 bytes), add $8,%rsp at +0x14. B: push %rbp; mov %rsp,%rbp; ... with a
// remembered state around an epilogue. D: the outermost frame (return address undefined). P: a PLT.
const FDES: FdeSpec[] = [
  { start: 0x1000, size: 0x20, program: [...advance(4), ...defCfaOffset(16), ...advance(0x10), ...defCfaOffset(8)] },
  {
    start: 0x2000,
    size: 0x40,
    program: [
      ...advance(1),
      ...defCfaOffset(16),
      ...offset(R.rbp, 2),
      ...advance(3),
      ...defCfaRegister(R.rbp),
      ...advance(0x20),
      ...rememberState,
      ...defCfa(R.rsp, 8),
      ...advance(1),
      ...restoreState,
    ],
  },
  { start: 0x4000, size: 0x10, program: [...undefinedRule(R.ra)] },
  { start: 0x5000, size: 0x30, program: [0x0f, PLT_CFA_EXPRESSION.length, ...PLT_CFA_EXPRESSION] },
];
const FRAME_ADDRESS = 0x6000;
const HDR_ADDRESS = 0x5f00;

function cfiVariants(): [string, CallFrameInfo][] {
  const frame = ehFrame(FRAME_ADDRESS, FDES);
  const hdr = ehFrameHdr(HDR_ADDRESS, FRAME_ADDRESS, FDES, frame.fdeOffsets);
  const base = { littleEndian: true, addressSize: 8 };
  return [
    [
      '.eh_frame with .eh_frame_hdr',
      new CallFrameInfo({ ...base, ehFrame: { bytes: frame.bytes, address: BigInt(FRAME_ADDRESS) }, ehFrameHdr: { bytes: hdr, address: BigInt(HDR_ADDRESS) } }),
    ],
    ['.eh_frame scanned', new CallFrameInfo({ ...base, ehFrame: { bytes: frame.bytes, address: BigInt(FRAME_ADDRESS) } })],
    ['.debug_frame', new CallFrameInfo({ ...base, debugFrame: { bytes: debugFrame(FDES), address: 0n } })],
  ];
}

const cfaOf = (row: UnwindRow | undefined) => (row?.cfa.kind === 'register' ? `r${row.cfa.register}+${row.cfa.offset}` : row?.cfa.kind);

describe('CFI parser (synthetic .eh_frame, .eh_frame_hdr, .debug_frame)', () => {
  for (const [name, cfi] of cfiVariants()) {
    it(`${name}: the rules at each instruction`, () => {
      assert.equal(cfaOf(cfi.rowAt(0x1000n)), 'r7+8');
      assert.equal(cfaOf(cfi.rowAt(0x1003n)), 'r7+8');
      assert.equal(cfaOf(cfi.rowAt(0x1004n)), 'r7+16', 'advance_loc moves to the next row');
      assert.equal(cfaOf(cfi.rowAt(0x1013n)), 'r7+16');
      assert.equal(cfaOf(cfi.rowAt(0x1014n)), 'r7+8');
      assert.equal(cfaOf(cfi.rowAt(0x101fn)), 'r7+8');
      assert.equal(cfi.rowAt(0x1020n), undefined, 'past the FDE');
      assert.equal(cfi.rowAt(0xfffn), undefined, 'before the first FDE');
      assert.equal(cfi.rowAt(0x3000n), undefined, 'in a gap between FDEs');
      const entry = cfi.rowAt(0x1000n)!;
      assert.deepEqual(entry.registers.get(R.ra), { kind: 'offset', offset: -8n }, 'the CIE saves the return address at CFA-8');
      assert.equal(entry.returnAddressRegister, R.ra);

      assert.equal(cfaOf(cfi.rowAt(0x2000n)), 'r7+8');
      assert.equal(cfaOf(cfi.rowAt(0x2001n)), 'r7+16');
      assert.deepEqual(cfi.rowAt(0x2001n)!.registers.get(R.rbp), { kind: 'offset', offset: -16n });
      assert.equal(cfaOf(cfi.rowAt(0x2004n)), 'r6+16', 'def_cfa_register keeps the offset');
      assert.equal(cfaOf(cfi.rowAt(0x2024n)), 'r7+8', 'inside the remembered state');
      assert.equal(cfaOf(cfi.rowAt(0x2025n)), 'r6+16', 'restore_state brings back the CFA rule');
      assert.deepEqual(cfi.rowAt(0x2030n)!.registers.get(R.rbp), { kind: 'offset', offset: -16n });

      assert.deepEqual(cfi.rowAt(0x4008n)!.registers.get(R.ra), { kind: 'undefined' });
      assert.equal(cfi.rowAt(0x5000n)!.cfa.kind, 'expression');
    });
  }

  it('reads the signal-frame augmentation', () => {
    const frame = ehFrame(FRAME_ADDRESS, FDES, 'zRS');
    const cfi = new CallFrameInfo({ littleEndian: true, addressSize: 8, ehFrame: { bytes: frame.bytes, address: BigInt(FRAME_ADDRESS) } });
    assert.equal(cfi.rowAt(0x1000n)!.signalFrame, true);
    assert.equal(cfiVariants()[0][1].rowAt(0x1000n)!.signalFrame, false);
  });

  it('names the damage in a malformed program', () => {
    const broken = ehFrame(FRAME_ADDRESS, [{ start: 0x1000, size: 0x10, program: [0x3f] }]);
    const cfi = new CallFrameInfo({ littleEndian: true, addressSize: 8, ehFrame: { bytes: broken.bytes, address: BigInt(FRAME_ADDRESS) } });
    assert.throws(() => cfi.rowAt(0x1000n), /unknown call frame instruction 0x3f/);
    const unbalanced = ehFrame(FRAME_ADDRESS, [{ start: 0x1000, size: 0x10, program: restoreState }]);
    const cfi2 = new CallFrameInfo({ littleEndian: true, addressSize: 8, ehFrame: { bytes: unbalanced.bytes, address: BigInt(FRAME_ADDRESS) } });
    assert.throws(() => cfi2.rowAt(0x1000n), /restore_state without a remembered state/);
  });
});

describe('DWARF expressions', () => {
  const noMemory = (): bigint => {
    throw new Error('no memory');
  };
  it('computes the PLT CFA: 8 more bytes once the stub has pushed', () => {
    const expression = Uint8Array.from(PLT_CFA_EXPRESSION);
    const at = (rip: bigint) =>
      evaluateExpression(
        expression,
        new Map([
          [R.rsp, 0x7ff000n],
          [R.ra, rip],
        ]),
        noMemory,
        [],
      );
    assert.equal(at(0x5016n), 0x7ff008n);
    assert.equal(at(0x501an), 0x7ff008n);
    assert.equal(at(0x501bn), 0x7ff010n);
    assert.equal(at(0x501fn), 0x7ff010n);
  });

  it('dereferences, branches and compares as DWARF says', () => {
    const memory = (address: bigint) => (address === 0x1000n ? 0xabcdn : 0n);
    const run = (...bytes: number[]) => evaluateExpression(Uint8Array.from(bytes), new Map([[3, 0x0ff8n]]), memory, []);
    assert.equal(run(0x73, 8, 0x06), 0xabcdn, 'breg3+8; deref');
    assert.equal(run(0x35, 0x33, 0x1c), 2n, 'lit5 lit3 minus');
    assert.equal(run(0x31, 0x28, 4, 0, 0x3a, 0x2f, 1, 0, 0x3b), 11n, 'bra taken jumps over lit10 and the skip to lit11');
    assert.equal(run(0x30, 0x28, 4, 0, 0x3a, 0x2f, 1, 0, 0x3b), 10n, 'bra not taken: lit10, then skip jumps over lit11');
    assert.equal(run(0x11, 0x7f, 0x30, 0x2d), 1n, 'consts -1 < 0 is signed');
    assert.equal(evaluateExpression(Uint8Array.from([0x23, 0x10]), new Map(), memory, [0x20n]), 0x30n, 'the initial value (CFA) is on the stack');
    assert.throws(() => run(0x1c), /underflow/);
    assert.throws(() => run(0xe0), /not supported/);
  });
});

describe('unwinder (synthetic stack)', () => {
  const BIAS = 0x7f0000000000n;
  const SP = 0x7ffc0000n;
  /** The sampled stack: B (leaf, rbp frame) called from A, called from D (outermost). */
  function sample(stackBytes = 0x38) {
    const words = new Map<bigint, bigint>([
      [SP + 0x10n, 0x1111n], // B's saved rbp
      [SP + 0x18n, BIAS + 0x100an], // return into A
      [SP + 0x28n, BIAS + 0x4005n], // return into D
    ]);
    const stack = new Uint8Array(stackBytes);
    const view = new DataView(stack.buffer);
    for (const [address, value] of words) if (address - SP + 8n <= BigInt(stackBytes)) view.setBigUint64(Number(address - SP), value, true);
    const registers: Record<number, bigint> = { 8: BIAS + 0x2010n, 7: SP, 6: SP + 0x10n, 0: 1n };
    return { registers, stack };
  }
  const cfi = cfiVariants()[0][1];
  const findCfi = (pc: bigint) => (pc >= BIAS && pc < BIAS + 0x10000n ? { cfi, bias: BIAS } : undefined);

  it('walks every frame to the outermost one, callers as return address minus one (as perf lists them)', () => {
    const { registers, stack } = sample();
    const result = unwindStack({ arch: X86_64, registers, stack, findCfi });
    assert.deepEqual(result.frames, [BIAS + 0x2010n, BIAS + 0x1009n, BIAS + 0x4004n]);
    assert.equal(result.end, 'outermost');
  });

  it('stops where the copied stack ends, and where no object is known', () => {
    const short = sample(0x20);
    const cut = unwindStack({ arch: X86_64, registers: short.registers, stack: short.stack, findCfi });
    assert.deepEqual(cut.frames, [BIAS + 0x2010n, BIAS + 0x1009n]);
    assert.equal(cut.end, 'stack-end');
    const { registers, stack } = sample();
    const unknown = unwindStack({ arch: X86_64, registers: { ...registers, 8: 0x1234n }, stack, findCfi });
    assert.deepEqual(unknown.frames, [0x1234n]);
    assert.equal(unknown.end, 'no-cfi');
    assert.equal(unwindStack({ arch: X86_64, registers, stack, findCfi, maxFrames: 2 }).frames.length, 2);
    const damaged = unwindStack({
      arch: X86_64,
      registers,
      stack,
      findCfi: () => {
        throw new Error('bad .eh_frame_hdr');
      },
    });
    assert.deepEqual(damaged.frames, [BIAS + 0x2010n]);
    assert.equal(damaged.end, 'bad-cfi');
  });
});

describe('unwinder (an epilogue: a saved register below the stack pointer)', () => {
  const BIAS = 0x7f0000000000n;
  const SP = 0x7ffc0000n;
  // E, after its pops: CFA = rsp + 8 again, but its CFI still has rbx saved at CFA - 48, below the stack pointer, where
  // no copied stack reaches. D (outermost) called it.
  const RBX_DWARF = 3;
  const RBX_PERF = 1;
  const epilogue: FdeSpec = { start: 0x3000, size: 0x10, program: [...offset(RBX_DWARF, 6)] };
  const frame = ehFrame(FRAME_ADDRESS, [...FDES, epilogue]);
  const cfi = new CallFrameInfo({ littleEndian: true, addressSize: 8, ehFrame: { bytes: frame.bytes, address: BigInt(FRAME_ADDRESS) } });
  const findCfi = (pc: bigint) => (pc >= BIAS && pc < BIAS + 0x10000n ? { cfi, bias: BIAS } : undefined);

  it('makes that register unknown in the caller and goes on to the outermost frame, as perf (libdw) does', () => {
    const stack = new Uint8Array(0x10);
    new DataView(stack.buffer).setBigUint64(0, BIAS + 0x4005n, true); // the return address into D, at the CFA - 8
    const result = unwindStack({ arch: X86_64, registers: { 8: BIAS + 0x3004n, 7: SP, 6: 0x1111n, [RBX_PERF]: 0x2222n }, stack, findCfi });
    assert.deepEqual(result.frames, [BIAS + 0x3004n, BIAS + 0x4004n]);
    assert.equal(result.end, 'outermost');
  });

  it('still ends where the return address itself is outside the copied stack', () => {
    const result = unwindStack({ arch: X86_64, registers: { 8: BIAS + 0x3004n, 7: SP, 6: 0x1111n, [RBX_PERF]: 0x2222n }, stack: new Uint8Array(4), findCfi });
    assert.deepEqual(result.frames, [BIAS + 0x3004n]);
    assert.equal(result.end, 'stack-end');
  });
});

describe('unwinder (synthetic aarch64 stack)', () => {
  // aarch64: CFA = sp at entry, the return address in x30 (link register) until a frame saves it.
  const SP_A64 = 31;
  const LR = 30;
  const cie: CieSpec = { codeAlignment: 4, dataAlignment: -8, returnAddress: LR, initial: defCfa(SP_A64, 0) };
  const fdes: FdeSpec[] = [
    { start: 0x1000, size: 0x20, program: [] }, // a leaf: never touches sp or x30
    { start: 0x2000, size: 0x40, program: [...advance(1), ...defCfaOffset(16), ...offset(29, 2), ...offset(LR, 1)] }, // stp x29, x30, [sp, #-16]!
    { start: 0x3000, size: 0x10, program: undefinedRule(LR) },
  ];
  const frame = ehFrame(FRAME_ADDRESS, fdes, 'zR', cie);
  const cfi = new CallFrameInfo({ littleEndian: true, addressSize: 8, ehFrame: { bytes: frame.bytes, address: BigInt(FRAME_ADDRESS) } });

  it('follows the link register out of a leaf, then the saved one, to the outermost frame', () => {
    const sp = 0x7ffff000n;
    const stack = new Uint8Array(16);
    new DataView(stack.buffer).setBigUint64(8, 0x3008n, true); // G saved x30 at CFA-8
    const registers: Record<number, bigint> = { 32: 0x1008n, 31: sp, 30: 0x2010n, 29: 0n };
    const result = unwindStack({ arch: AARCH64, registers, stack, findCfi: () => ({ cfi, bias: 0n }) });
    assert.deepEqual(result.frames, [0x1008n, 0x200fn, 0x3007n], 'callers one byte before the return address, as perf lists them on every architecture');
    assert.equal(result.end, 'outermost');
  });
});
