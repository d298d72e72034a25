// DWARF call frame information: the CIEs and FDEs of `.eh_frame` (found through the binary-search
// table of `.eh_frame_hdr` when there is one) and `.debug_frame`, and the CFA programs that say, at
// any instruction, where the caller's registers are. Pure: section bytes and addresses in, rules out.
// Addresses are the object's link-time addresses; the unwinder (unwind.ts) applies the load bias.

import { DwarfCursor, DwarfFormatError } from './dwarf-reader';

/** How to compute the canonical frame address (the caller's stack pointer before the call). */
export type CfaRule =
  { readonly kind: 'register'; readonly register: number; readonly offset: bigint } | { readonly kind: 'expression'; readonly expression: Uint8Array };

/** Where a register of the caller is (DWARF 6.4.1 register rules). */
export type RegisterRule =
  | { readonly kind: 'undefined' }
  | { readonly kind: 'same' }
  /** Saved at CFA + offset. */
  | { readonly kind: 'offset'; readonly offset: bigint }
  /** Its value is CFA + offset. */
  | { readonly kind: 'val-offset'; readonly offset: bigint }
  /** Held in another register of the callee. */
  | { readonly kind: 'register'; readonly register: number }
  /** Saved at the address the expression computes (CFA pushed first). */
  | { readonly kind: 'expression'; readonly expression: Uint8Array }
  /** Its value is what the expression computes (CFA pushed first). */
  | { readonly kind: 'val-expression'; readonly expression: Uint8Array };

/** The unwind rules in effect at one instruction. */
export interface UnwindRow {
  readonly cfa: CfaRule;
  readonly registers: ReadonlyMap<number, RegisterRule>;
  /** The register column holding the return address. */
  readonly returnAddressRegister: number;
  /** The frame is a signal trampoline ('S' augmentation): its pc is not a return address, so it is looked up as is. */
  readonly signalFrame: boolean;
}

interface Cie {
  readonly codeAlignment: bigint;
  readonly dataAlignment: bigint;
  readonly returnAddressRegister: number;
  readonly initialInstructions: Uint8Array;
  /** DW_EH_PE_* of the FDEs' addresses (absptr for .debug_frame). */
  readonly fdeEncoding: number;
  readonly hasAugmentationData: boolean;
  readonly signalFrame: boolean;
  readonly addressSize: number;
  readonly littleEndian: boolean;
}

interface Fde {
  readonly cie: Cie;
  readonly start: bigint;
  readonly end: bigint;
  readonly instructions: Uint8Array;
}

/** One CFI section as the object maps it. */
export interface CfiSection {
  readonly bytes: Uint8Array;
  /** Link-time address of the section's first byte (sh_addr); pc-relative pointers are measured from it. */
  readonly address: bigint;
}

export interface CfiSources {
  readonly ehFrame?: CfiSection;
  readonly ehFrameHdr?: CfiSection;
  readonly debugFrame?: CfiSection;
  readonly littleEndian: boolean;
  /** 8 for 64-bit objects, 4 for 32-bit. */
  readonly addressSize: number;
}

// DW_EH_PE_*: pointer encodings of .eh_frame and .eh_frame_hdr.
const PE_OMIT = 0xff;
const PE_FORMAT = 0x0f;
const PE_APPLICATION = 0x70;
const PE_INDIRECT = 0x80;
const PE = { absptr: 0x00, uleb128: 0x01, udata2: 0x02, udata4: 0x03, udata8: 0x04, sleb128: 0x09, sdata2: 0x0a, sdata4: 0x0b, sdata8: 0x0c } as const;
const PE_PCREL = 0x10;
const PE_DATAREL = 0x30;

// DW_CFA_*
const CFA = {
  advanceLoc: 0x40,
  offset: 0x80,
  restore: 0xc0,
  nop: 0x00,
  setLoc: 0x01,
  advanceLoc1: 0x02,
  advanceLoc2: 0x03,
  advanceLoc4: 0x04,
  offsetExtended: 0x05,
  restoreExtended: 0x06,
  undefined: 0x07,
  sameValue: 0x08,
  register: 0x09,
  rememberState: 0x0a,
  restoreState: 0x0b,
  defCfa: 0x0c,
  defCfaRegister: 0x0d,
  defCfaOffset: 0x0e,
  defCfaExpression: 0x0f,
  expression: 0x10,
  offsetExtendedSf: 0x11,
  defCfaSf: 0x12,
  defCfaOffsetSf: 0x13,
  valOffset: 0x14,
  valOffsetSf: 0x15,
  valExpression: 0x16,
  /** DW_CFA_AARCH64_negate_ra_state on aarch64 (return-address signing), GNU_window_save on SPARC: no register rule to change here. */
  gnuWindowSave: 0x2d,
  gnuArgsSize: 0x2e,
  gnuNegativeOffsetExtended: 0x2f,
} as const;

/** Reads a DW_EH_PE-encoded pointer at the cursor; `base` is the link-time address of the section's first byte. */
function readEncoded(cursor: DwarfCursor, encoding: number, addressSize: number, sectionAddress: bigint, dataRelBase?: bigint): bigint {
  if (encoding === PE_OMIT) throw new DwarfFormatError('read of an omitted pointer');
  if (encoding & PE_INDIRECT) throw new DwarfFormatError(`indirect pointer encoding 0x${encoding.toString(16)} needs the process's memory`);
  const at = sectionAddress + BigInt(cursor.offset);
  let value: bigint;
  switch (encoding & PE_FORMAT) {
    case PE.absptr:
      value = cursor.uint(addressSize);
      break;
    case PE.uleb128:
      value = cursor.uleb();
      break;
    case PE.udata2:
      value = BigInt(cursor.u16());
      break;
    case PE.udata4:
      value = BigInt(cursor.u32());
      break;
    case PE.udata8:
      value = cursor.u64();
      break;
    case PE.sleb128:
      value = cursor.sleb();
      break;
    case PE.sdata2:
      value = BigInt.asIntN(16, BigInt(cursor.u16()));
      break;
    case PE.sdata4:
      value = BigInt.asIntN(32, BigInt(cursor.u32()));
      break;
    case PE.sdata8:
      value = BigInt.asIntN(64, cursor.u64());
      break;
    default:
      throw new DwarfFormatError(`unknown pointer format 0x${(encoding & PE_FORMAT).toString(16)}`);
  }
  switch (encoding & PE_APPLICATION) {
    case 0:
      break;
    case PE_PCREL:
      value += at;
      break;
    case PE_DATAREL:
      if (dataRelBase === undefined) throw new DwarfFormatError('data-relative pointer outside .eh_frame_hdr');
      value += dataRelBase;
      break;
    default:
      throw new DwarfFormatError(`pointer application 0x${(encoding & PE_APPLICATION).toString(16)} is not supported`);
  }
  return BigInt.asUintN(addressSize * 8, value);
}

/** A pc range without its pointer application: only the format counts. */
function readRange(cursor: DwarfCursor, encoding: number, addressSize: number): bigint {
  return readEncoded(cursor, encoding & PE_FORMAT, addressSize, 0n);
}

/** The CIEs and FDEs of one section. `.eh_frame` and `.debug_frame` differ in CIE ids, pointers and CIE references. */
class FrameSection {
  private readonly cies = new Map<number, Cie>();
  private sorted: Fde[] | undefined;

  constructor(
    readonly section: CfiSection,
    readonly isEhFrame: boolean,
    readonly littleEndian: boolean,
    readonly addressSize: number,
  ) {}

  /** The FDE whose entry starts at byte `offset` of the section (undefined for a CIE or the terminator). */
  fdeAt(offset: number): Fde | undefined {
    const cursor = new DwarfCursor(this.section.bytes, offset, this.littleEndian);
    const { length, offsetSize, end } = cursor.initialLength();
    if (length === 0) return undefined;
    const idAt = cursor.offset;
    const id = cursor.uint(offsetSize);
    if (this.isCieId(id, offsetSize)) return undefined;
    const cieOffset = this.isEhFrame ? idAt - Number(id) : Number(id);
    const cie = this.cieAt(cieOffset);
    const start = this.isEhFrame ? readEncoded(cursor, cie.fdeEncoding, cie.addressSize, this.section.address) : cursor.uint(cie.addressSize);
    const range = this.isEhFrame ? readRange(cursor, cie.fdeEncoding, cie.addressSize) : cursor.uint(cie.addressSize);
    if (cie.hasAugmentationData) cursor.offset += cursor.ulebNumber();
    if (cursor.offset > end || end > this.section.bytes.length) throw new DwarfFormatError(`FDE at 0x${offset.toString(16)} runs past its end`);
    return { cie, start, end: start + range, instructions: this.section.bytes.subarray(cursor.offset, end) };
  }

  /** Every FDE, sorted by start address (a section without a search table is scanned once). */
  all(): readonly Fde[] {
    if (this.sorted) return this.sorted;
    const out: Fde[] = [];
    const bytes = this.section.bytes;
    let offset = 0;
    while (offset + 4 <= bytes.length) {
      const cursor = new DwarfCursor(bytes, offset, this.littleEndian);
      const { length, end } = cursor.initialLength();
      if (length === 0) {
        if (this.isEhFrame) break; // the terminator
        offset = end;
        continue;
      }
      const fde = this.fdeAt(offset);
      // A zero-length FDE is what the linker leaves of a discarded function.
      if (fde && fde.end > fde.start) out.push(fde);
      offset = end;
    }
    out.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.sorted = out;
    return out;
  }

  find(pc: bigint): Fde | undefined {
    const fdes = this.all();
    let lo = 0;
    let hi = fdes.length - 1;
    let best: Fde | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (fdes[mid].start <= pc) {
        best = fdes[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best && pc < best.end ? best : undefined;
  }

  private isCieId(id: bigint, offsetSize: number): boolean {
    if (this.isEhFrame) return id === 0n;
    return offsetSize === 8 ? id === 0xffffffffffffffffn : id === 0xffffffffn;
  }

  private cieAt(offset: number): Cie {
    const known = this.cies.get(offset);
    if (known) return known;
    const cursor = new DwarfCursor(this.section.bytes, offset, this.littleEndian);
    const { offsetSize, end } = cursor.initialLength();
    const id = cursor.uint(offsetSize);
    if (!this.isCieId(id, offsetSize)) throw new DwarfFormatError(`FDE refers to 0x${offset.toString(16)}, which is not a CIE`);
    const version = cursor.u8();
    if (version !== 1 && version !== 3 && version !== 4) throw new DwarfFormatError(`CIE at 0x${offset.toString(16)} has version ${version}`);
    const augmentation = cursor.cstring();
    let addressSize = this.addressSize;
    if (version === 4) {
      addressSize = cursor.u8();
      cursor.u8(); // segment selector size
    }
    // "eh" (GCC 2.x): an address-sized pointer to exception data follows.
    if (augmentation.includes('eh')) cursor.uint(addressSize);
    const codeAlignment = cursor.uleb();
    const dataAlignment = cursor.sleb();
    const returnAddressRegister = version === 1 ? cursor.u8() : cursor.ulebNumber();
    let fdeEncoding: number = PE.absptr;
    let signalFrame = false;
    const hasAugmentationData = augmentation.startsWith('z');
    if (hasAugmentationData) {
      const dataLength = cursor.ulebNumber();
      const dataEnd = cursor.offset + dataLength;
      for (const letter of augmentation.slice(1)) {
        if (letter === 'R') fdeEncoding = cursor.u8();
        else if (letter === 'L') cursor.u8();
        else if (letter === 'P') {
          const encoding = cursor.u8();
          // The personality routine's address is not needed to unwind; skip it by its format.
          readEncoded(cursor, encoding & ~PE_INDIRECT & PE_FORMAT, addressSize, 0n);
        } else if (letter === 'S') signalFrame = true;
        else if (letter === 'B' || letter === 'G')
          continue; // aarch64 BTI / MTE tags: no data
        else break; // unknown letters: the length still tells where the data ends
      }
      cursor.offset = dataEnd;
    } else if (augmentation.includes('S')) {
      signalFrame = true;
    }
    const cie: Cie = {
      codeAlignment,
      dataAlignment,
      returnAddressRegister,
      fdeEncoding,
      hasAugmentationData,
      signalFrame,
      addressSize,
      littleEndian: this.littleEndian,
      initialInstructions: this.section.bytes.subarray(cursor.offset, end),
    };
    this.cies.set(offset, cie);
    return cie;
  }
}

/** The `.eh_frame_hdr` search table: sorted (initial location, FDE address) pairs. */
class SearchTable {
  private readonly count: number;
  private readonly tableOffset: number;
  private readonly entrySize: number;
  private readonly encoding: number;

  constructor(
    private readonly header: CfiSection,
    private readonly littleEndian: boolean,
    private readonly addressSize: number,
  ) {
    const cursor = new DwarfCursor(header.bytes, 0, littleEndian);
    const version = cursor.u8();
    const framePointerEncoding = cursor.u8();
    const countEncoding = cursor.u8();
    this.encoding = cursor.u8();
    if (version !== 1) throw new DwarfFormatError(`.eh_frame_hdr version ${version}`);
    readEncoded(cursor, framePointerEncoding, addressSize, header.address, header.address);
    const sizes: Record<number, number> = { [PE.udata2]: 2, [PE.sdata2]: 2, [PE.udata4]: 4, [PE.sdata4]: 4, [PE.udata8]: 8, [PE.sdata8]: 8 };
    const entry = sizes[this.encoding & PE_FORMAT];
    if (countEncoding === PE_OMIT || this.encoding === PE_OMIT || entry === undefined) {
      this.count = 0;
    } else {
      this.count = Number(readEncoded(cursor, countEncoding, addressSize, header.address, header.address));
    }
    this.entrySize = (entry ?? 0) * 2;
    this.tableOffset = cursor.offset;
    if (this.tableOffset + this.count * this.entrySize > header.bytes.length) throw new DwarfFormatError('.eh_frame_hdr table runs past its end');
  }

  get usable(): boolean {
    return this.count > 0;
  }

  private entry(index: number): { location: bigint; fde: bigint } {
    const cursor = new DwarfCursor(this.header.bytes, this.tableOffset + index * this.entrySize, this.littleEndian);
    const location = readEncoded(cursor, this.encoding, this.addressSize, this.header.address, this.header.address);
    const fde = readEncoded(cursor, this.encoding, this.addressSize, this.header.address, this.header.address);
    return { location, fde };
  }

  /** Link-time address of the FDE whose initial location is the last one at or before `pc`. */
  lookup(pc: bigint): bigint | undefined {
    let lo = 0;
    let hi = this.count - 1;
    let found: bigint | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const { location, fde } = this.entry(mid);
      if (location <= pc) {
        found = fde;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

const MAX_CACHED_ROWS = 1 << 16;

interface RuleState {
  cfa: CfaRule;
  registers: Map<number, RegisterRule>;
}

/** The call frame information of one object: which rules hold at a link-time pc. */
export class CallFrameInfo {
  private readonly ehFrame: FrameSection | undefined;
  private readonly debugFrame: FrameSection | undefined;
  private readonly table: SearchTable | undefined;
  /** Rows already computed: sampled pcs repeat (hot loops, the same call sites). */
  private readonly rows = new Map<bigint, UnwindRow | undefined>();

  constructor(sources: CfiSources) {
    const { littleEndian, addressSize } = sources;
    if (sources.ehFrame) this.ehFrame = new FrameSection(sources.ehFrame, true, littleEndian, addressSize);
    if (sources.debugFrame) this.debugFrame = new FrameSection(sources.debugFrame, false, littleEndian, addressSize);
    if (sources.ehFrame && sources.ehFrameHdr) {
      const table = new SearchTable(sources.ehFrameHdr, littleEndian, addressSize);
      if (table.usable) this.table = table;
    }
  }

  get empty(): boolean {
    return !this.ehFrame && !this.debugFrame;
  }

  /** The rules at `pc`, from .eh_frame first and .debug_frame second (as libdw and libunwind look), or undefined when no FDE covers it. */
  rowAt(pc: bigint): UnwindRow | undefined {
    if (this.rows.has(pc)) return this.rows.get(pc);
    const fde = this.findEhFrame(pc) ?? this.debugFrame?.find(pc);
    const row = fde ? runFde(fde, pc) : undefined;
    if (this.rows.size >= MAX_CACHED_ROWS) this.rows.clear();
    this.rows.set(pc, row);
    return row;
  }

  private findEhFrame(pc: bigint): Fde | undefined {
    if (!this.ehFrame) return undefined;
    if (this.table) {
      const address = this.table.lookup(pc);
      if (address === undefined) return undefined;
      const fde = this.ehFrame.fdeAt(Number(address - this.ehFrame.section.address));
      return fde && pc >= fde.start && pc < fde.end ? fde : undefined;
    }
    return this.ehFrame.find(pc);
  }
}

/** Runs the CIE's initial instructions, then the FDE's up to `pc`. */
function runFde(fde: Fde, pc: bigint): UnwindRow {
  const { cie } = fde;
  const state: RuleState = { cfa: { kind: 'register', register: 0, offset: 0n }, registers: new Map() };
  execute(cie.initialInstructions, cie, state, undefined, fde.start, undefined);
  const initial = new Map(state.registers);
  execute(fde.instructions, cie, state, initial, fde.start, pc);
  return { cfa: state.cfa, registers: state.registers, returnAddressRegister: cie.returnAddressRegister, signalFrame: cie.signalFrame };
}

/**
 * Executes CFA instructions into `state`. `initial` is the CIE's rules (for DW_CFA_restore*), undefined
 * while running the CIE itself. With `stopAt`, stops before the first location advance past it.
 */
function execute(
  program: Uint8Array,
  cie: Cie,
  state: RuleState,
  initial: ReadonlyMap<number, RegisterRule> | undefined,
  start: bigint,
  stopAt: bigint | undefined,
): void {
  // Multi-byte operands (advance_loc2/4, set_loc) are in the object's byte order.
  const cursor = new DwarfCursor(program, 0, cie.littleEndian);
  let location = start;
  const stack: RuleState[] = [];
  const advance = (delta: bigint): boolean => {
    const next = location + delta * cie.codeAlignment;
    if (stopAt !== undefined && next > stopAt) return false;
    location = next;
    return true;
  };
  const restore = (register: number) => {
    const rule = initial?.get(register);
    if (rule) state.registers.set(register, rule);
    else state.registers.delete(register);
  };
  const setCfaOffset = (offset: bigint) => {
    if (state.cfa.kind === 'register') state.cfa = { ...state.cfa, offset };
    else throw new DwarfFormatError('DW_CFA_def_cfa_offset after a CFA expression');
  };
  const setCfaRegister = (register: number) => {
    state.cfa = { kind: 'register', register, offset: state.cfa.kind === 'register' ? state.cfa.offset : 0n };
  };
  const block = () => cursor.take(cursor.ulebNumber());
  while (!cursor.atEnd) {
    const opcode = cursor.u8();
    const high = opcode & 0xc0;
    const low = opcode & 0x3f;
    if (high === CFA.advanceLoc) {
      if (!advance(BigInt(low))) return;
      continue;
    }
    if (high === CFA.offset) {
      state.registers.set(low, { kind: 'offset', offset: cursor.uleb() * cie.dataAlignment });
      continue;
    }
    if (high === CFA.restore) {
      restore(low);
      continue;
    }
    switch (opcode) {
      case CFA.nop:
        break;
      case CFA.setLoc: {
        const next = readEncoded(cursor, cie.fdeEncoding & ~PE_APPLICATION, cie.addressSize, 0n);
        if (stopAt !== undefined && next > stopAt) return;
        location = next;
        break;
      }
      case CFA.advanceLoc1:
        if (!advance(BigInt(cursor.u8()))) return;
        break;
      case CFA.advanceLoc2:
        if (!advance(BigInt(cursor.u16()))) return;
        break;
      case CFA.advanceLoc4:
        if (!advance(BigInt(cursor.u32()))) return;
        break;
      case CFA.offsetExtended: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'offset', offset: cursor.uleb() * cie.dataAlignment });
        break;
      }
      case CFA.offsetExtendedSf: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'offset', offset: cursor.sleb() * cie.dataAlignment });
        break;
      }
      case CFA.gnuNegativeOffsetExtended: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'offset', offset: -cursor.uleb() * cie.dataAlignment });
        break;
      }
      case CFA.valOffset: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'val-offset', offset: cursor.uleb() * cie.dataAlignment });
        break;
      }
      case CFA.valOffsetSf: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'val-offset', offset: cursor.sleb() * cie.dataAlignment });
        break;
      }
      case CFA.restoreExtended:
        restore(cursor.ulebNumber());
        break;
      case CFA.undefined:
        state.registers.set(cursor.ulebNumber(), { kind: 'undefined' });
        break;
      case CFA.sameValue:
        state.registers.set(cursor.ulebNumber(), { kind: 'same' });
        break;
      case CFA.register: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'register', register: cursor.ulebNumber() });
        break;
      }
      case CFA.rememberState:
        stack.push({ cfa: state.cfa, registers: new Map(state.registers) });
        break;
      case CFA.restoreState: {
        const saved = stack.pop();
        if (!saved) throw new DwarfFormatError('DW_CFA_restore_state without a remembered state');
        // The CFA rule is part of the remembered state too (DWARF 5, 6.4.2.4).
        state.cfa = saved.cfa;
        state.registers = saved.registers;
        break;
      }
      case CFA.defCfa: {
        const r = cursor.ulebNumber();
        state.cfa = { kind: 'register', register: r, offset: cursor.uleb() };
        break;
      }
      case CFA.defCfaSf: {
        const r = cursor.ulebNumber();
        state.cfa = { kind: 'register', register: r, offset: cursor.sleb() * cie.dataAlignment };
        break;
      }
      case CFA.defCfaRegister:
        setCfaRegister(cursor.ulebNumber());
        break;
      case CFA.defCfaOffset:
        setCfaOffset(cursor.uleb());
        break;
      case CFA.defCfaOffsetSf:
        setCfaOffset(cursor.sleb() * cie.dataAlignment);
        break;
      case CFA.defCfaExpression:
        state.cfa = { kind: 'expression', expression: block() };
        break;
      case CFA.expression: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'expression', expression: block() });
        break;
      }
      case CFA.valExpression: {
        const r = cursor.ulebNumber();
        state.registers.set(r, { kind: 'val-expression', expression: block() });
        break;
      }
      case CFA.gnuArgsSize:
        cursor.uleb();
        break;
      case CFA.gnuWindowSave:
        break;
      default:
        throw new DwarfFormatError(`unknown call frame instruction 0x${opcode.toString(16)}`);
    }
  }
}
