// Sequential reader over a DWARF section: LEB128, fixed-size words, initial lengths (32/64-bit DWARF),
// strings, and attribute form values. Shared by dwarf-line.ts and dwarf-info.ts. Pure: bytes only.

export class DwarfFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DwarfFormatError';
  }
}

const utf8 = new TextDecoder('utf-8');

// DW_FORM_* (DWARF 2-5)
export const DW_FORM = {
  addr: 0x01,
  block2: 0x03,
  block4: 0x04,
  data2: 0x05,
  data4: 0x06,
  data8: 0x07,
  string: 0x08,
  block: 0x09,
  block1: 0x0a,
  data1: 0x0b,
  flag: 0x0c,
  sdata: 0x0d,
  strp: 0x0e,
  udata: 0x0f,
  ref_addr: 0x10,
  ref1: 0x11,
  ref2: 0x12,
  ref4: 0x13,
  ref8: 0x14,
  ref_udata: 0x15,
  indirect: 0x16,
  sec_offset: 0x17,
  exprloc: 0x18,
  flag_present: 0x19,
  strx: 0x1a,
  addrx: 0x1b,
  ref_sup4: 0x1c,
  strp_sup: 0x1d,
  data16: 0x1e,
  line_strp: 0x1f,
  ref_sig8: 0x20,
  implicit_const: 0x21,
  loclistx: 0x22,
  rnglistx: 0x23,
  ref_sup8: 0x24,
  strx1: 0x25,
  strx2: 0x26,
  strx3: 0x27,
  strx4: 0x28,
  addrx1: 0x29,
  addrx2: 0x2a,
  addrx3: 0x2b,
  addrx4: 0x2c,
  GNU_addr_index: 0x1f01,
  GNU_str_index: 0x1f02,
  GNU_ref_alt: 0x1f20,
  GNU_strp_alt: 0x1f21,
} as const;

/** A decoded attribute value before interpretation: numbers, strings (resolved), blocks, or indexes to resolve later. */
export type FormValue =
  | { readonly kind: 'uint'; readonly value: bigint }
  | { readonly kind: 'sint'; readonly value: bigint }
  | { readonly kind: 'addr'; readonly value: bigint }
  | { readonly kind: 'addrx'; readonly index: number }
  | { readonly kind: 'strx'; readonly index: number }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'ref'; readonly offset: number } // relative to the unit start
  | { readonly kind: 'ref_addr'; readonly offset: number } // relative to .debug_info start
  | { readonly kind: 'block'; readonly bytes: Uint8Array }
  | { readonly kind: 'flag'; readonly value: boolean }
  | { readonly kind: 'sec_offset'; readonly value: number }
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  | { readonly kind: 'unsupported'; readonly form: number };

export interface FormContext {
  readonly addressSize: number;
  /** 4 for 32-bit DWARF, 8 for 64-bit DWARF. */
  readonly offsetSize: number;
  readonly version: number;
  /** Resolve string offsets into .debug_str / .debug_line_str. */
  readonly debugStr?: Uint8Array;
  readonly debugLineStr?: Uint8Array;
}

export class DwarfCursor {
  private readonly view: DataView;
  constructor(
    readonly bytes: Uint8Array,
    public offset = 0,
    readonly littleEndian = true,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get atEnd(): boolean {
    return this.offset >= this.bytes.length;
  }
  private need(size: number): void {
    if (this.offset + size > this.bytes.length || this.offset < 0) {
      throw new DwarfFormatError(
        `read of ${size} bytes at offset 0x${this.offset.toString(16)} runs past the section end (0x${this.bytes.length.toString(16)})`,
      );
    }
  }
  u8(): number {
    this.need(1);
    return this.bytes[this.offset++];
  }
  i8(): number {
    this.need(1);
    return this.view.getInt8(this.offset++);
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.offset, this.littleEndian);
    this.offset += 2;
    return v;
  }
  u24(): number {
    this.need(3);
    const b0 = this.bytes[this.offset],
      b1 = this.bytes[this.offset + 1],
      b2 = this.bytes[this.offset + 2];
    this.offset += 3;
    return this.littleEndian ? b0 | (b1 << 8) | (b2 << 16) : (b0 << 16) | (b1 << 8) | b2;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.offset, this.littleEndian);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.offset, this.littleEndian);
    this.offset += 8;
    return v;
  }
  uint(size: number): bigint {
    switch (size) {
      case 1:
        return BigInt(this.u8());
      case 2:
        return BigInt(this.u16());
      case 4:
        return BigInt(this.u32());
      case 8:
        return this.u64();
      default:
        throw new DwarfFormatError(`unsupported word size ${size}`);
    }
  }
  /** Offset-sized word as a number (sections are far below 2^53). */
  offsetWord(offsetSize: number): number {
    return Number(this.uint(offsetSize));
  }
  uleb(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return result;
    }
  }
  ulebNumber(): number {
    return Number(this.uleb());
  }
  sleb(): bigint {
    let result = 0n;
    let shift = 0n;
    let b: number;
    do {
      b = this.u8();
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    if (b & 0x40) result -= 1n << shift;
    return result;
  }
  cstring(): string {
    const start = this.offset;
    while (this.offset < this.bytes.length && this.bytes[this.offset] !== 0) this.offset++;
    if (this.offset >= this.bytes.length) throw new DwarfFormatError(`unterminated string at 0x${start.toString(16)}`);
    const s = utf8.decode(this.bytes.subarray(start, this.offset));
    this.offset++;
    return s;
  }
  take(size: number): Uint8Array {
    this.need(size);
    const out = this.bytes.subarray(this.offset, this.offset + size);
    this.offset += size;
    return out;
  }
  /** unit_length: returns the unit's length, the offset size, and where the unit ends. */
  initialLength(): { length: number; offsetSize: number; end: number } {
    const first = this.u32();
    if (first === 0xffffffff) {
      const length = Number(this.u64());
      return { length, offsetSize: 8, end: this.offset + length };
    }
    if (first >= 0xfffffff0) throw new DwarfFormatError(`reserved unit length 0x${first.toString(16)}`);
    return { length: first, offsetSize: 4, end: this.offset + first };
  }

  /** Reads one attribute value of `form`. `implicitConst` is the abbreviation's constant for DW_FORM_implicit_const. */
  form(form: number, ctx: FormContext, implicitConst?: bigint): FormValue {
    switch (form) {
      case DW_FORM.addr:
        return { kind: 'addr', value: this.uint(ctx.addressSize) };
      case DW_FORM.data1:
        return { kind: 'uint', value: BigInt(this.u8()) };
      case DW_FORM.data2:
        return { kind: 'uint', value: BigInt(this.u16()) };
      case DW_FORM.data4:
        return { kind: 'uint', value: BigInt(this.u32()) };
      case DW_FORM.data8:
        return { kind: 'uint', value: this.u64() };
      case DW_FORM.data16:
        return { kind: 'bytes', bytes: this.take(16) };
      case DW_FORM.sdata:
        return { kind: 'sint', value: this.sleb() };
      case DW_FORM.udata:
        return { kind: 'uint', value: this.uleb() };
      case DW_FORM.implicit_const:
        return { kind: 'sint', value: implicitConst ?? 0n };
      case DW_FORM.string:
        return { kind: 'string', value: this.cstring() };
      case DW_FORM.strp:
        return { kind: 'string', value: stringAt(ctx.debugStr, this.offsetWord(ctx.offsetSize), '.debug_str') };
      case DW_FORM.line_strp:
        return { kind: 'string', value: stringAt(ctx.debugLineStr, this.offsetWord(ctx.offsetSize), '.debug_line_str') };
      case DW_FORM.strp_sup:
      case DW_FORM.GNU_strp_alt:
        this.offsetWord(ctx.offsetSize);
        return { kind: 'unsupported', form };
      case DW_FORM.strx:
      case DW_FORM.GNU_str_index:
        return { kind: 'strx', index: this.ulebNumber() };
      case DW_FORM.strx1:
        return { kind: 'strx', index: this.u8() };
      case DW_FORM.strx2:
        return { kind: 'strx', index: this.u16() };
      case DW_FORM.strx3:
        return { kind: 'strx', index: this.u24() };
      case DW_FORM.strx4:
        return { kind: 'strx', index: this.u32() };
      case DW_FORM.addrx:
      case DW_FORM.GNU_addr_index:
        return { kind: 'addrx', index: this.ulebNumber() };
      case DW_FORM.addrx1:
        return { kind: 'addrx', index: this.u8() };
      case DW_FORM.addrx2:
        return { kind: 'addrx', index: this.u16() };
      case DW_FORM.addrx3:
        return { kind: 'addrx', index: this.u24() };
      case DW_FORM.addrx4:
        return { kind: 'addrx', index: this.u32() };
      case DW_FORM.ref1:
        return { kind: 'ref', offset: this.u8() };
      case DW_FORM.ref2:
        return { kind: 'ref', offset: this.u16() };
      case DW_FORM.ref4:
        return { kind: 'ref', offset: this.u32() };
      case DW_FORM.ref8:
        return { kind: 'ref', offset: Number(this.u64()) };
      case DW_FORM.ref_udata:
        return { kind: 'ref', offset: this.ulebNumber() };
      // DWARF 2 used an address-sized ref_addr; later versions are offset-sized.
      case DW_FORM.ref_addr:
        return { kind: 'ref_addr', offset: this.offsetWord(ctx.version <= 2 ? ctx.addressSize : ctx.offsetSize) };
      case DW_FORM.ref_sig8:
        this.u64();
        return { kind: 'unsupported', form };
      case DW_FORM.ref_sup4:
        this.u32();
        return { kind: 'unsupported', form };
      case DW_FORM.ref_sup8:
        this.u64();
        return { kind: 'unsupported', form };
      case DW_FORM.GNU_ref_alt:
        this.offsetWord(ctx.offsetSize);
        return { kind: 'unsupported', form };
      case DW_FORM.sec_offset:
        return { kind: 'sec_offset', value: this.offsetWord(ctx.offsetSize) };
      case DW_FORM.loclistx:
      case DW_FORM.rnglistx:
        return { kind: 'uint', value: this.uleb() };
      case DW_FORM.exprloc:
      case DW_FORM.block:
        return { kind: 'block', bytes: this.take(this.ulebNumber()) };
      case DW_FORM.block1:
        return { kind: 'block', bytes: this.take(this.u8()) };
      case DW_FORM.block2:
        return { kind: 'block', bytes: this.take(this.u16()) };
      case DW_FORM.block4:
        return { kind: 'block', bytes: this.take(this.u32()) };
      case DW_FORM.flag:
        return { kind: 'flag', value: this.u8() !== 0 };
      case DW_FORM.flag_present:
        return { kind: 'flag', value: true };
      case DW_FORM.indirect:
        return this.form(this.ulebNumber(), ctx, implicitConst);
      default:
        throw new DwarfFormatError(`unknown attribute form 0x${form.toString(16)} at 0x${this.offset.toString(16)}`);
    }
  }
}

export function stringAt(section: Uint8Array | undefined, offset: number, name: string): string {
  if (!section) throw new DwarfFormatError(`string form refers to ${name}, which the file does not have`);
  if (offset >= section.length) throw new DwarfFormatError(`${name} offset 0x${offset.toString(16)} is past its end`);
  let end = offset;
  while (end < section.length && section[end] !== 0) end++;
  return utf8.decode(section.subarray(offset, end));
}

/** Joins DWARF directory and file names the way the tools do: absolute names win, no normalisation beyond that. */
export function joinPath(dir: string | undefined, name: string): string {
  if (name.startsWith('/') || !dir) return name;
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

export function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}
