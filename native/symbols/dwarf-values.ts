// A variable's bytes as text, typed by its DWARF type and written the way gdb prints it (so a
// logpoint's value reads like the debugger's, and tests compare them as they are): integers in
// decimal, chars as `65 'A'`, bools, enumerator names, pointers in hex (C strings with their text,
// functions and data with `<symbol>`), floats with gdb's %g precision, arrays and structs in braces
// with gdb's `<repeats N times>`. Bytes that are not there read `<optimized out>` or `<not captured>`.
// Pure: the caller supplies the bytes and how to read memory a pointer points at.

import { AT, TAG, type Die, type DwarfInfo } from './dwarf-info';
import { DwarfCursor } from './dwarf-reader';

/** Per byte of a value: whether it is known, or why not. */
export const BYTE_KNOWN = 0;
export const BYTE_OPTIMIZED_OUT = 1;
export const BYTE_NOT_CAPTURED = 2;

export const OPTIMIZED_OUT = '<optimized out>';
export const NOT_CAPTURED = '<not captured>';

export interface ValueBytes {
  readonly bytes: Uint8Array;
  /** BYTE_KNOWN, BYTE_OPTIMIZED_OUT or BYTE_NOT_CAPTURED for each byte. */
  readonly state: Uint8Array;
}

export interface PointerTargets {
  /** Up to `limit` bytes at `address` in the process at the hit (fewer where readable memory ends), or undefined when none can be read. */
  readBytes(address: bigint, limit: number): Uint8Array | undefined;
  /** The symbol gdb names after a pointer into code or static data (`main`, `table+8`), if any. */
  symbolAt?(address: bigint): string | undefined;
}

// DW_ATE_*
const ATE = { address: 0x1, boolean: 0x2, float: 0x4, signed: 0x5, signedChar: 0x6, unsigned: 0x7, unsignedChar: 0x8, utf: 0x10 } as const;

/** gdb's `set print elements` (200) and `set print repeats` (10) defaults. */
export const PRINT_ELEMENTS = 200;
const REPEAT_THRESHOLD = 10;
const MAX_DEPTH = 16;

/** What the text of a type's values depends on, where it tells every two byte patterns apart (see ValueFormatter.oneToOneText). */
export interface OneToOneText {
  /** Some byte is a pointer's: the text names the symbol at that address where the object is loaded. */
  readonly hasPointers: boolean;
  /** Where the value's C string pointers are (the text shows the memory they point at), in bytes from its start. */
  readonly stringPointers: readonly number[];
}

/** What formatting an array type needs (see ValueFormatter.arrayShape). */
interface ArrayShape {
  readonly element: Die | undefined;
  readonly elementSize: number;
  readonly dimensions: readonly number[];
}

export class ValueFormatter {
  // What a type's DIE says, looked up once: a logpoint formats the same few types at every hit.
  private readonly stripped = new Map<Die, Die | undefined>();
  private readonly sizes = new Map<Die, number | undefined>();
  private readonly encodings = new Map<Die, number | undefined>();
  private readonly members = new Map<Die, readonly Member[]>();
  private readonly shapes = new Map<Die, Shape>();
  private readonly arrays = new Map<Die, ArrayShape | undefined>();
  /** Per enumeration type: enumerator name by value, for values that are exact numbers. */
  private readonly enumerators = new Map<Die, Map<number, string>>();
  /** Per type: see oneToOneText. */
  private readonly oneToOne = new Map<Die, OneToOneText | undefined>();

  constructor(private readonly info: DwarfInfo) {}

  /** Typedefs, const, volatile, restrict, atomic peeled off. */
  strip(type: Die | undefined): Die | undefined {
    if (!type) return undefined;
    if (this.stripped.has(type)) return this.stripped.get(type);
    const stripped = this.stripUncached(type);
    this.stripped.set(type, stripped);
    return stripped;
  }

  private stripUncached(type: Die | undefined): Die | undefined {
    for (let depth = 0; type && depth < 32; depth++) {
      if (
        type.tag !== TAG.typedef &&
        type.tag !== TAG.const_type &&
        type.tag !== TAG.volatile_type &&
        type.tag !== TAG.restrict_type &&
        type.tag !== TAG.atomic_type &&
        type.tag !== TAG.immutable_type
      )
        return type;
      type = this.info.refAttr(type, AT.type);
    }
    return type;
  }

  size(type: Die | undefined): number | undefined {
    if (!type) return undefined;
    if (this.sizes.has(type)) return this.sizes.get(type);
    const size = this.info.typeSize(type);
    this.sizes.set(type, size);
    return size;
  }

  /** What formatting needs of a type, looked up once per type: the type stripped, its size and tag, a base type's encoding. */
  private shape(type: Die): Shape {
    let shape = this.shapes.get(type);
    if (!shape) {
      const t = this.strip(type);
      const size = this.size(t);
      const tag = t ? t.tag : -1;
      const composite = tag === TAG.structure_type || tag === TAG.class_type || tag === TAG.union_type || tag === TAG.array_type;
      shape = { type: t, size, tag, composite, encoding: t && tag === TAG.base_type ? this.encoding(t) : undefined };
      this.shapes.set(type, shape);
    }
    return shape;
  }

  /**
   * Whether the text format() writes of a value of `type` whose bytes are all known tells every two byte patterns apart
   * (integers, bools, chars, floats and doubles, enums, pointers, and arrays and structs of those that print every
   * byte: no padding, no bitfield, no union, at most PRINT_ELEMENTS elements), and what else it depends on: undefined
   * where it does not tell them apart. Hits can then be counted by their bytes, and a text written only for the values
   * that are shown (see LogpointColumns).
   */
  oneToOneText(type: Die | undefined): OneToOneText | undefined {
    if (!type) return undefined;
    if (this.oneToOne.has(type)) return this.oneToOne.get(type);
    const pointers = { any: false, strings: [] as number[] };
    const known = this.oneToOneUncached(type, 0, 0, pointers) ? { hasPointers: pointers.any, stringPointers: pointers.strings } : undefined;
    this.oneToOne.set(type, known);
    return known;
  }

  private oneToOneUncached(type: Die | undefined, depth: number, offset: number, pointers: { any: boolean; strings: number[] }): boolean {
    if (!type || depth >= 8) return false;
    const { type: t, size, tag, encoding } = this.shape(type);
    if (!t || size === undefined || size <= 0) return false;
    switch (tag) {
      case TAG.base_type:
        // A float of another size than 4 or 8 prints `<N-bit float>`.
        return encoding !== ATE.float || size === 4 || size === 8;
      case TAG.enumeration_type:
        return true;
      case TAG.pointer_type: {
        // Its address in hex, then a symbol (where the object is loaded) or, for a C string, the text it points at.
        if (size !== 8) return false;
        pointers.any = true;
        if (this.isCharType(this.strip(this.info.refAttr(t, AT.type)))) pointers.strings.push(offset);
        return true;
      }
      case TAG.array_type: {
        const shape = this.arrayShape(t);
        if (!shape || shape.dimensions.some((count) => count > PRINT_ELEMENTS)) return false;
        if (shape.dimensions.length === 1 && this.isCharType(shape.element)) return true;
        const count = shape.dimensions.reduce((product, d) => product * d, 1);
        if (shape.elementSize <= 0 || this.size(shape.element) !== shape.elementSize) return false;
        for (let i = 0; i < count; i++) if (!this.oneToOneUncached(shape.element, depth + 1, offset + i * shape.elementSize, pointers)) return false;
        return true;
      }
      case TAG.structure_type:
      case TAG.class_type: {
        // Every byte in exactly one member, in order: no padding a text would not show.
        let covered = 0;
        for (const member of this.membersOf(t)) {
          if (member.bitSize !== undefined || member.offset !== covered) return false;
          const memberSize = this.size(member.type);
          if (memberSize === undefined || !this.oneToOneUncached(member.type, depth + 1, offset + covered, pointers)) return false;
          covered += memberSize;
        }
        return covered === size && covered > 0;
      }
      default:
        return false;
    }
  }

  /** The text of a value of `type` whose bytes start at `offset` of `value`. */
  format(type: Die | undefined, value: ValueBytes, targets: PointerTargets, offset = 0, depth = 0): string {
    if (!type) return '<void>';
    const { type: t, size, tag, composite, encoding } = this.shape(type);
    if (!t) return '<void>';
    if (size !== undefined && !composite) {
      const missing = unknownReason(value, offset, size);
      if (missing) return missing;
    } else if (size !== undefined) {
      // A composite wholly absent is said once, as gdb does; one partly absent shows which members are.
      const whole = wholeReason(value, offset, size);
      if (whole) return whole;
    }
    switch (tag) {
      case TAG.base_type:
        return formatBase(encoding, value.bytes, offset, size ?? 0);
      case TAG.enumeration_type:
        return this.formatEnum(t, value, offset, size ?? 0);
      case TAG.pointer_type:
      case TAG.reference_type:
      case TAG.rvalue_reference_type:
        return this.formatPointer(t, value, offset, size ?? 8, targets);
      case TAG.array_type:
        return this.formatArray(t, value, targets, offset, depth);
      case TAG.structure_type:
      case TAG.class_type:
      case TAG.union_type:
        return this.formatStruct(t, value, targets, offset, depth);
      case TAG.subroutine_type:
        return '{<text variable, no debug info>}';
      default:
        return `<unsupported type tag 0x${t.tag.toString(16)}>`;
    }
  }

  private encoding(type: Die): number | undefined {
    if (this.encodings.has(type)) return this.encodings.get(type);
    const encoding = this.info.numberAttr(type, AT.encoding);
    this.encodings.set(type, encoding);
    return encoding;
  }

  private isCharType(type: Die | undefined): boolean {
    const t = this.strip(type);
    if (!t || t.tag !== TAG.base_type || this.size(t) !== 1) return false;
    const encoding = this.encoding(t);
    return encoding === ATE.signedChar || encoding === ATE.unsignedChar;
  }

  private formatEnum(type: Die, value: ValueBytes, offset: number, size: number): string {
    const underlying = this.strip(this.info.refAttr(type, AT.type));
    const signed = underlying ? this.encoding(underlying) === ATE.signed : false;
    if (size <= 4 && size > 0) {
      const n = smallInteger(value.bytes, offset, size, signed);
      return this.enumeratorsOf(type, size, signed).get(n) ?? String(n);
    }
    const raw = littleEndian(value.bytes.subarray(offset, offset + size));
    const n = signed ? BigInt.asIntN(size * 8, raw) : raw;
    for (const enumerator of type.children ?? []) {
      if (enumerator.tag !== TAG.enumerator) continue;
      const constant = this.info.attribute(enumerator, AT.const_value);
      if (!constant || (constant.kind !== 'uint' && constant.kind !== 'sint')) continue;
      const c = constant.kind === 'sint' ? constant.value : signed ? BigInt.asIntN(size * 8, constant.value) : constant.value;
      if (c === n) return this.info.stringAttr(enumerator, AT.name) ?? n.toString();
    }
    return n.toString();
  }

  /** An enumeration of at most 4 bytes: its enumerators by value (the first of a value wins, as the scan above). */
  private enumeratorsOf(type: Die, size: number, signed: boolean): Map<number, string> {
    let names = this.enumerators.get(type);
    if (!names) {
      names = new Map();
      for (const enumerator of type.children ?? []) {
        if (enumerator.tag !== TAG.enumerator) continue;
        const constant = this.info.attribute(enumerator, AT.const_value);
        if (!constant || (constant.kind !== 'uint' && constant.kind !== 'sint')) continue;
        const c = Number(constant.kind === 'sint' ? constant.value : signed ? BigInt.asIntN(size * 8, constant.value) : constant.value);
        const name = this.info.stringAttr(enumerator, AT.name);
        if (name !== undefined && !names.has(c)) names.set(c, name);
      }
      this.enumerators.set(type, names);
    }
    return names;
  }

  private formatPointer(type: Die, value: ValueBytes, offset: number, size: number, targets: PointerTargets): string {
    const bytes = value.bytes;
    let text: string;
    if (size === 8) {
      const low = smallInteger(bytes, offset, 4, false);
      const high = smallInteger(bytes, offset + 4, 4, false);
      if (high === 0 && low === 0) return '0x0';
      text = high === 0 ? `0x${low.toString(16)}` : `0x${high.toString(16)}${low.toString(16).padStart(8, '0')}`;
    } else {
      text = `0x${littleEndian(bytes.subarray(offset, offset + size)).toString(16)}`;
      if (text === '0x0') return text;
    }
    const address = BigInt(text);
    const pointee = this.strip(this.info.refAttr(type, AT.type));
    if (pointee && this.isCharType(pointee)) {
      const bytes = targets.readBytes(address, PRINT_ELEMENTS + 1);
      if (!bytes || bytes.length === 0) return `${text} ${NOT_CAPTURED}`;
      const end = bytes.indexOf(0);
      if (end < 0 && bytes.length <= PRINT_ELEMENTS) return `${text} ${NOT_CAPTURED}`; // the text runs past what could be read
      const shown = bytes.subarray(0, end < 0 ? PRINT_ELEMENTS : end);
      return `${text} ${formatCharacters(shown)}${end < 0 || end > PRINT_ELEMENTS ? '...' : ''}`;
    }
    const symbol = targets.symbolAt?.(address);
    return symbol ? `${text} <${symbol}>` : text;
  }

  private formatArray(type: Die, value: ValueBytes, targets: PointerTargets, offset: number, depth: number): string {
    const shape = this.arrayShape(type);
    if (!shape) return '<array of unknown size>';
    return this.formatDimensions(shape.element, shape.elementSize, shape.dimensions, value, targets, offset, depth);
  }

  /** An array type's element, its size and the dimensions, looked up once per type (a logpoint writes the same arrays at every hit); undefined where a size is unknown. */
  private arrayShape(type: Die): ArrayShape | undefined {
    if (this.arrays.has(type)) return this.arrays.get(type);
    const element = this.info.refAttr(type, AT.type);
    const elementSize = this.size(element);
    const dimensions = (type.children ?? [])
      .filter((d) => d.tag === TAG.subrange_type)
      .map((range) => {
        const count = this.info.numberAttr(range, AT.count);
        if (count !== undefined) return count;
        const upper = this.info.numberAttr(range, AT.upper_bound);
        return upper === undefined ? undefined : upper - (this.info.numberAttr(range, AT.lower_bound) ?? 0) + 1;
      });
    const shape =
      elementSize === undefined || dimensions.length === 0 || dimensions.some((d) => d === undefined)
        ? undefined
        : { element, elementSize, dimensions: dimensions as number[] };
    this.arrays.set(type, shape);
    return shape;
  }

  private formatDimensions(
    element: Die | undefined,
    elementSize: number,
    dimensions: readonly number[],
    value: ValueBytes,
    targets: PointerTargets,
    offset: number,
    depth: number,
  ): string {
    const [count, ...inner] = dimensions;
    const stride = inner.reduce((product, d) => product * d, elementSize);
    if (inner.length === 0 && this.isCharType(element)) {
      const missing = unknownReason(value, offset, count);
      if (missing) return missing;
      let bytes = value.bytes.subarray(offset, offset + Math.min(count, PRINT_ELEMENTS));
      // gdb leaves out the one NUL that ends a fully printed char array.
      const truncated = count > PRINT_ELEMENTS;
      if (!truncated && bytes.length > 0 && bytes[bytes.length - 1] === 0) bytes = bytes.subarray(0, bytes.length - 1);
      return `${formatCharacters(bytes, true)}${truncated ? '...' : ''}`;
    }
    const items: string[] = [];
    const shown = Math.min(count, PRINT_ELEMENTS);
    for (let i = 0; i < shown; i++) {
      const at = offset + i * stride;
      items.push(
        inner.length > 0
          ? this.formatDimensions(element, elementSize, inner, value, targets, at, depth + 1)
          : depth >= MAX_DEPTH
            ? '...'
            : this.format(element, value, targets, at, depth + 1),
      );
    }
    const parts: string[] = [];
    for (let i = 0; i < items.length;) {
      let run = 1;
      while (i + run < items.length && items[i + run] === items[i]) run++;
      if (run > REPEAT_THRESHOLD) parts.push(`${items[i]} <repeats ${run} times>`);
      else for (let k = 0; k < run; k++) parts.push(items[i]);
      i += run;
    }
    return `{${parts.join(', ')}${count > PRINT_ELEMENTS ? '...' : ''}}`;
  }

  private formatStruct(type: Die, value: ValueBytes, targets: PointerTargets, offset: number, depth: number): string {
    if (depth >= MAX_DEPTH) return '{...}';
    const members = this.membersOf(type);
    if (members.length === 0) return '{<No data fields>}';
    let text = '{';
    for (let i = 0; i < members.length; i++) {
      const { name, type: memberType, bitSize, bitOffset, offset: memberOffset } = members[i];
      const shown =
        bitSize !== undefined
          ? this.formatBitfield(memberType, value, offset, bitOffset, bitSize)
          : this.format(memberType, value, targets, offset + memberOffset, depth + 1);
      text += `${i > 0 ? ', ' : ''}${name === undefined ? shown : `${name} = ${shown}`}`;
    }
    return `${text}}`;
  }

  private membersOf(type: Die): readonly Member[] {
    let members = this.members.get(type);
    if (!members) {
      members = (type.children ?? [])
        .filter((d) => d.tag === TAG.member)
        .map((member) => {
          const offset = this.memberOffset(member);
          return {
            name: this.info.stringAttr(member, AT.name),
            type: this.info.refAttr(member, AT.type),
            bitSize: this.info.numberAttr(member, AT.bit_size),
            bitOffset: this.info.numberAttr(member, AT.data_bit_offset) ?? offset * 8,
            offset,
          };
        });
      this.members.set(type, members);
    }
    return members;
  }

  private memberOffset(member: Die): number {
    const location = this.info.attribute(member, AT.data_member_location);
    if (!location) return 0;
    if (location.kind === 'uint' || location.kind === 'sint') return Number(location.value);
    if (location.kind === 'block') {
      // DWARF 2-3: DW_OP_plus_uconst N.
      const c = new DwarfCursor(location.bytes, 0, true);
      if (c.u8() === 0x23) return c.ulebNumber();
    }
    return 0;
  }

  private formatBitfield(type: Die | undefined, value: ValueBytes, offset: number, bitOffset: number, bitSize: number): string {
    const first = offset + Math.floor(bitOffset / 8);
    const last = offset + Math.floor((bitOffset + bitSize - 1) / 8);
    const missing = unknownReason(value, first, last - first + 1);
    if (missing) return missing;
    const word = littleEndian(value.bytes.subarray(first, last + 1));
    const raw = (word >> BigInt(bitOffset % 8)) & ((1n << BigInt(bitSize)) - 1n);
    const t = this.strip(type);
    const signed = t !== undefined && t.tag === TAG.base_type && (this.encoding(t) === ATE.signed || this.encoding(t) === ATE.signedChar);
    const n = signed ? BigInt.asIntN(bitSize, raw) : raw;
    if (t && t.tag === TAG.base_type && this.encoding(t) === ATE.boolean) return n === 0n ? 'false' : n === 1n ? 'true' : n.toString();
    if (t && t.tag === TAG.enumeration_type) {
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, n), true);
      return this.formatEnum(t, { bytes, state: new Uint8Array(8) }, 0, this.size(t) ?? 4);
    }
    return n.toString();
  }
}

/** A struct or union member as formatting needs it. */
interface Member {
  readonly name: string | undefined;
  readonly type: Die | undefined;
  /** Set for a bitfield, whose bits start at bitOffset. */
  readonly bitSize: number | undefined;
  readonly bitOffset: number;
  /** Bytes from the start of the struct. */
  readonly offset: number;
}

/** A little-endian integer of 1-4 bytes at `offset` as a number. */
function smallInteger(bytes: Uint8Array, offset: number, size: number, signed: boolean): number {
  let n = 0;
  for (let i = offset + size - 1; i >= offset; i--) n = n * 256 + bytes[i];
  if (signed && size > 0 && bytes[offset + size - 1] & 0x80) n -= 2 ** (8 * size);
  return n;
}

/** A base type's value as gdb prints it: integers in decimal, chars with their literal, bools, floats with %g. */
function formatBase(encoding: number | undefined, bytes: Uint8Array, offset: number, size: number): string {
  switch (encoding) {
    case ATE.float:
      return formatFloatAt(bytes, offset, size);
    case ATE.boolean: {
      const n = littleEndian(bytes.subarray(offset, offset + size));
      return n === 0n ? 'false' : n === 1n ? 'true' : n.toString();
    }
    case ATE.signedChar:
    case ATE.unsignedChar: {
      if (size === 1) return `${encoding === ATE.signedChar ? (bytes[offset] << 24) >> 24 : bytes[offset]} ${charLiteral(bytes[offset])}`;
      const n = littleEndian(bytes.subarray(offset, offset + size));
      return (encoding === ATE.signedChar ? BigInt.asIntN(size * 8, n) : n).toString();
    }
    case ATE.signed:
    default: {
      const signed = encoding === ATE.signed;
      // Up to 4 bytes, and 8 whose value is an exact number: no BigInt for the common int and long.
      if (size <= 4 && size > 0) return String(smallInteger(bytes, offset, size, signed));
      if (size === 8) {
        const low = smallInteger(bytes, offset, 4, false);
        const high = smallInteger(bytes, offset + 4, 4, signed);
        if (high >= -0x200000 && high < 0x200000) return String(high * 0x100000000 + low);
      }
      const n = littleEndian(bytes.subarray(offset, offset + size));
      return (signed ? BigInt.asIntN(size * 8, n) : n).toString();
    }
  }
}

/** What ValueFormatter needs of a type at every value of it. */
interface Shape {
  /** Typedefs and qualifiers peeled off. */
  readonly type: Die | undefined;
  readonly size: number | undefined;
  readonly tag: number;
  /** A struct, class, union or array: absent as a whole or member by member. */
  readonly composite: boolean;
  /** A base type's DW_ATE_*. */
  readonly encoding: number | undefined;
}

/** Why some byte of [offset, offset + size) is not known (optimized out wins), or undefined when all are. */
function unknownReason(value: ValueBytes, offset: number, size: number): string | undefined {
  if (offset + size > value.bytes.length) return NOT_CAPTURED;
  let reason: string | undefined;
  for (let i = offset; i < offset + size; i++) {
    const state = value.state[i];
    if (state === BYTE_OPTIMIZED_OUT) return OPTIMIZED_OUT;
    if (state === BYTE_NOT_CAPTURED) reason = NOT_CAPTURED;
  }
  return reason;
}

/** The reason when no byte of [offset, offset + size) is known and all for one reason. */
function wholeReason(value: ValueBytes, offset: number, size: number): string | undefined {
  if (size === 0 || offset + size > value.bytes.length) return size === 0 ? undefined : NOT_CAPTURED;
  const first = value.state[offset];
  if (first === BYTE_KNOWN) return undefined;
  for (let i = offset + 1; i < offset + size; i++) if (value.state[i] !== first) return undefined;
  return first === BYTE_OPTIMIZED_OUT ? OPTIMIZED_OUT : NOT_CAPTURED;
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

/** gdb's escape of one character inside quotes; `quote` is the quote being written. */
function escapeCharacter(code: number, quote: string): string {
  switch (code) {
    case 7:
      return '\\a';
    case 8:
      return '\\b';
    case 9:
      return '\\t';
    case 10:
      return '\\n';
    case 11:
      return '\\v';
    case 12:
      return '\\f';
    case 13:
      return '\\r';
    case 27:
      return '\\033';
    case 0x5c:
      return '\\\\';
    default:
      if (String.fromCharCode(code) === quote) return `\\${quote}`;
      return code >= 0x20 && code < 0x7f ? String.fromCharCode(code) : `\\${code.toString(8).padStart(3, '0')}`;
  }
}

export function charLiteral(code: number): string {
  return `'${escapeCharacter(code, "'")}'`;
}

/** A run of characters as gdb prints a string: quoted segments, and runs of more than 10 as `'c' <repeats N times>`. */
export function formatCharacters(bytes: Uint8Array, emptyQuoted = true): string {
  const parts: string[] = [];
  let segment = '';
  for (let i = 0; i < bytes.length;) {
    let run = 1;
    while (i + run < bytes.length && bytes[i + run] === bytes[i]) run++;
    if (run > REPEAT_THRESHOLD) {
      if (segment) {
        parts.push(`"${segment}"`);
        segment = '';
      }
      parts.push(`${charLiteral(bytes[i])} <repeats ${run} times>`);
    } else {
      for (let k = 0; k < run; k++) segment += escapeCharacter(bytes[i], '"');
    }
    i += run;
  }
  if (segment || (parts.length === 0 && emptyQuoted)) parts.push(`"${segment}"`);
  return parts.join(', ');
}

const floatScratch = new DataView(new ArrayBuffer(8));

/** A float or double as gdb prints it: %.9g / %.17g, inf, and nan(0xMANTISSA). */
export function formatFloat(bytes: Uint8Array): string {
  return formatFloatAt(bytes, 0, bytes.length);
}

function formatFloatAt(bytes: Uint8Array, offset: number, size: number): string {
  const view = floatScratch;
  if (size === 4) {
    for (let i = 0; i < 4; i++) view.setUint8(i, bytes[offset + i]);
    const value = view.getFloat32(0, true);
    if (Number.isNaN(value)) {
      const bits = view.getUint32(0, true);
      return `${bits >>> 31 ? '-' : ''}nan(0x${(bits & 0x7fffff).toString(16)})`;
    }
    return formatG(value, 9);
  }
  if (size === 8) {
    for (let i = 0; i < 8; i++) view.setUint8(i, bytes[offset + i]);
    const value = view.getFloat64(0, true);
    if (Number.isNaN(value)) {
      const bits = view.getBigUint64(0, true);
      return `${bits >> 63n ? '-' : ''}nan(0x${(bits & ((1n << 52n) - 1n)).toString(16)})`;
    }
    return formatG(value, 17);
  }
  return `<${size * 8}-bit float>`;
}

/** 10^p for the precisions formatG is asked (an integer below both it and 2^53 is written as itself). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, p) => 10 ** p);

/**
 * C's %.{precision}g as glibc writes it. Integers that fit in `precision` digits are their own text (most
 * counters a float holds); a short binary fraction (M / 2^k, whose exact expansion is the digits of M * 5^k)
 * whose exact expansion fits is written from those digits, with no rounding to do. Other values take their
 * significant digits from `toExponential`, which rounds the exact binary value correctly but, exactly
 * halfway between two roundings, away from zero where glibc keeps the even digit (-1402977.125 at 9 digits
 * is -1402977.12).
 */
export function formatG(value: number, precision: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (value !== value) return value.toString(); // NaN: formatFloat writes it from its bits, as gdb does
  const negative = value < 0;
  const magnitude = negative ? -value : value;
  if (Number.isInteger(magnitude) && magnitude < POWERS_OF_TEN[precision] && magnitude <= 9007199254740992) return String(value);
  // M and k with magnitude = M / 2^k (M odd), for k up to 26: 5^26 alone has more digits than any precision asked.
  let scaled = magnitude;
  let k = 0;
  while (!Number.isInteger(scaled) && k <= 26) {
    scaled *= 2; // exact: a value with a fraction is below 2^52
    k++;
  }
  const fractionBits = Number.isInteger(scaled) ? k : -1;
  if (fractionBits > 0) {
    const exact = scaled * 5 ** fractionBits; // exact below 2^53
    if (exact < 1e15) {
      const digits = String(exact);
      if (digits.length <= precision) return writeG(negative, digits, digits.length - 1 - fractionBits, precision);
    }
  }
  let text = value.toExponential(precision - 1); // [-]d[.ddd]e±N
  const e = text.indexOf('e');
  // Halfway: toExponential rounded away from zero, making the last kept digit k+1; glibc keeps k where k is even.
  if (precision > 1 && fractionBits >= 0 && halfway(scaled, fractionBits, precision)) {
    const last = text.charCodeAt(e - 1) - 48;
    if (last % 2 === 1) text = `${text.slice(0, e - 1)}${last - 1}${text.slice(e)}`;
  }
  const start = negative ? 1 : 0;
  // The digits without the trailing zeros %g does not print.
  let end = e;
  while (end > start + 2 && text.charCodeAt(end - 1) === 48) end--;
  const digits = end > start + 2 ? `${text[start]}${text.slice(start + 2, end)}` : text[start];
  return writeG(negative, digits, Number(text.slice(e + 1)), precision);
}

/** %g's text of digits d.ddd × 10^exponent (no trailing zeros): fixed notation for exponents -4 to precision - 1. */
function writeG(negative: boolean, digits: string, exponent: number, precision: number): string {
  const sign = negative ? '-' : '';
  if (exponent < -4 || exponent >= precision) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const power = exponent < 0 ? (exponent > -10 ? `-0${-exponent}` : `-${-exponent}`) : exponent < 10 ? `+0${exponent}` : `+${exponent}`;
    return `${sign}${mantissa}e${power}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return `${sign}${digits}${'0'.repeat(exponent + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/**
 * Whether M / 2^k (M odd, or an integer when k is 0) lies exactly halfway between two `precision`-digit
 * decimals: its exact expansion has precision + 1 significant digits, the last a 5. For k > 0 those are the
 * digits of M * 5^k, estimated in doubles and counted exactly only near precision + 1.
 */
function halfway(scaled: number, k: number, precision: number): boolean {
  if (k === 0) {
    // An integer of more digits than precision (the only ones that get here): halfway where its digits are d..d5 and then zeros.
    const digits = (scaled <= 9007199254740992 ? String(scaled) : BigInt(scaled).toString()).replace(/0+$/, '');
    return digits.length === precision + 1 && digits.endsWith('5');
  }
  const estimate = scaled * 5 ** k;
  if (estimate < POWERS_OF_TEN[precision] * 0.999 || estimate >= POWERS_OF_TEN[precision + 1] * 1.001) return false;
  return (BigInt(scaled) * 5n ** BigInt(k)).toString().length === precision + 1;
}
