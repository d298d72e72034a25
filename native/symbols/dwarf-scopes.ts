// The variables in scope at a pc, as a debugger lists them (gdb's `info args` and `info locals`):
// the innermost function there (an inlined copy's own, when the pc is inside one) with the lexical
// blocks around the pc, each variable with where it lives at that pc: a location expression, a
// location list's entry (DWARF 5 .debug_loclists, DWARF 2-4 .debug_loc), a constant, or nowhere.
// Address ranges come from low_pc/high_pc or DW_AT_ranges (.debug_rnglists, .debug_ranges).
// Pure: works on the parsed DwarfInfo and its section bytes; pcs are link-time addresses.

import { AT, TAG, type Die, type DwarfInfo } from './dwarf-info';
import { DwarfCursor, DwarfFormatError, type FormValue } from './dwarf-reader';

export interface AddressRange {
  readonly start: bigint;
  /** Exclusive. */
  readonly end: bigint;
}

export type VariableLocation =
  | { readonly kind: 'expression'; readonly expression: Uint8Array }
  /** DW_AT_const_value: the value itself, little-endian bytes (or a string's bytes). */
  | { readonly kind: 'constant'; readonly bytes: Uint8Array }
  /** No location at this pc (outside every entry of its list, or none given): optimized out. */
  | { readonly kind: 'none' };

export interface ScopeVariable {
  readonly name: string;
  /** The DW_TAG_*_type DIE, undefined for `void`. */
  readonly type: Die | undefined;
  readonly parameter: boolean;
  readonly location: VariableLocation;
}

export interface ScopeAtPc {
  /** Name of the innermost function at the pc: an inlined function's own name inside its inlined copy. */
  readonly functionName: string | undefined;
  /** The out-of-line function whose frame the pc runs in. */
  readonly subprogram: Die;
  /** DW_AT_frame_base of that function (DW_OP_fbreg is relative to it). */
  readonly frameBase: VariableLocation;
  /** Parameters first (declaration order), then locals, innermost block first; a shadowed name appears once (the innermost). */
  readonly variables: readonly ScopeVariable[];
}

interface IndexedRange extends AddressRange {
  readonly die: Die;
}

// DW_RLE_* and DW_LLE_* (DWARF 5, 2.17.3 and 2.6.2).
const RLE = { end: 0, baseAddressx: 1, startxEndx: 2, startxLength: 3, offsetPair: 4, baseAddress: 5, startEnd: 6, startLength: 7 } as const;
const LLE = {
  end: 0,
  baseAddressx: 1,
  startxEndx: 2,
  startxLength: 3,
  offsetPair: 4,
  defaultLocation: 5,
  baseAddress: 6,
  startEnd: 7,
  startLength: 8,
} as const;

export class DwarfScopes {
  private index: IndexedRange[] | undefined;
  private readonly littleEndian: boolean;
  /** Scopes already found: a logpoint's hits share a handful of pcs. */
  private readonly scopes = new Map<bigint, ScopeAtPc | undefined>();

  constructor(private readonly info: DwarfInfo) {
    this.littleEndian = info.sections.littleEndian;
  }

  /** The out-of-line function containing `pc`, or undefined where no subprogram DIE covers it. */
  subprogramAt(pc: bigint): Die | undefined {
    const index = this.subprogramIndex();
    let lo = 0;
    let hi = index.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (index[mid].start <= pc) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Ranges may nest (a nested function, a cold part inside another's range): the latest start that still covers pc.
    for (let i = found; i >= 0 && i > found - 64; i--) if (pc >= index[i].start && pc < index[i].end) return index[i].die;
    return undefined;
  }

  /** The scope at a link-time pc, or undefined where the DWARF describes no function there. */
  scopeAt(pc: bigint): ScopeAtPc | undefined {
    if (this.scopes.has(pc)) return this.scopes.get(pc);
    const scope = this.findScope(pc);
    if (this.scopes.size >= 4096) this.scopes.clear();
    this.scopes.set(pc, scope);
    return scope;
  }

  private findScope(pc: bigint): ScopeAtPc | undefined {
    const subprogram = this.subprogramAt(pc);
    if (!subprogram) return undefined;
    // The chain of scopes containing pc, outermost first; a new function scope starts at each inlined copy.
    const chain: Die[] = [subprogram];
    for (let scope: Die | undefined = subprogram; scope;) {
      scope = (scope.children ?? []).find(
        (child) =>
          (child.tag === TAG.lexical_block || child.tag === TAG.inlined_subroutine) &&
          this.rangesOf(child).some((range) => pc >= range.start && pc < range.end),
      );
      if (scope) chain.push(scope);
    }
    let functionStart = 0;
    for (let i = chain.length - 1; i > 0; i--)
      if (chain[i].tag === TAG.inlined_subroutine) {
        functionStart = i;
        break;
      }
    const scopes = chain.slice(functionStart);
    const parameters: ScopeVariable[] = [];
    const locals: ScopeVariable[] = [];
    const seen = new Set<string>();
    for (let i = scopes.length - 1; i >= 0; i--) {
      for (const variable of this.variablesOf(scopes[i], pc, i === 0)) {
        if (seen.has(variable.name)) continue;
        seen.add(variable.name);
        (variable.parameter ? parameters : locals).push(variable);
      }
    }
    const frameBaseValue = this.info.attribute(subprogram, AT.frame_base);
    return {
      functionName: this.nameOf(scopes[0]),
      subprogram,
      frameBase: frameBaseValue ? this.locationOf(subprogram, frameBaseValue, pc) : { kind: 'none' },
      variables: [...parameters, ...locals],
    };
  }

  /** DW_AT_name, through DW_AT_abstract_origin / DW_AT_specification. */
  nameOf(die: Die): string | undefined {
    for (let d: Die | undefined = die, depth = 0; d && depth < 8; depth++) {
      const name = this.info.stringAttr(d, AT.name);
      if (name !== undefined) return name;
      d = this.info.refAttr(d, AT.abstract_origin) ?? this.info.refAttr(d, AT.specification);
    }
    return undefined;
  }

  private typeOf(die: Die): Die | undefined {
    for (let d: Die | undefined = die, depth = 0; d && depth < 8; depth++) {
      const type = this.info.refAttr(d, AT.type);
      if (type) return type;
      d = this.info.refAttr(d, AT.abstract_origin);
    }
    return undefined;
  }

  /**
   * The variables and parameters declared directly in a scope. A concrete scope (an inlined copy,
   * or an out-of-line copy of an inline function) lists only what the compiler kept; what its
   * abstract origin declares beyond that is there but optimized out, as gdb lists it.
   */
  private variablesOf(scope: Die, pc: bigint, functionScope: boolean): ScopeVariable[] {
    const out: ScopeVariable[] = [];
    const referenced = new Set<number>();
    for (const child of scope.children ?? []) {
      if (child.tag !== TAG.variable && child.tag !== TAG.formal_parameter) continue;
      const origin = this.info.refAttr(child, AT.abstract_origin);
      if (origin) referenced.add(origin.offset);
      if (this.info.flagAttr(child, AT.declaration)) continue; // `extern int x;` inside a function: a global's declaration
      const name = this.nameOf(child);
      if (name === undefined) continue;
      const location = this.info.attribute(child, AT.location);
      const constant = this.info.attribute(child, AT.const_value) ?? (origin ? this.info.attribute(origin, AT.const_value) : undefined);
      out.push({
        name,
        type: this.typeOf(child),
        parameter: child.tag === TAG.formal_parameter && functionScope,
        location: location ? this.locationOf(child, location, pc) : constant ? { kind: 'constant', bytes: constantBytes(constant) } : { kind: 'none' },
      });
    }
    const abstract = this.info.refAttr(scope, AT.abstract_origin);
    for (const child of abstract?.children ?? []) {
      if ((child.tag !== TAG.variable && child.tag !== TAG.formal_parameter) || referenced.has(child.offset)) continue;
      if (this.info.flagAttr(child, AT.declaration)) continue;
      const name = this.nameOf(child);
      if (name === undefined) continue;
      const constant = this.info.attribute(child, AT.const_value);
      out.push({
        name,
        type: this.typeOf(child),
        parameter: child.tag === TAG.formal_parameter && functionScope,
        location: constant ? { kind: 'constant', bytes: constantBytes(constant) } : { kind: 'none' },
      });
    }
    return out;
  }

  /** A DW_AT_location / DW_AT_frame_base at `pc`: the expression, or the location list's entry covering pc. */
  private locationOf(die: Die, value: FormValue, pc: bigint): VariableLocation {
    if (value.kind === 'block') return { kind: 'expression', expression: value.bytes };
    const unit = die.unit;
    let offset: number;
    if (value.kind === 'sec_offset') offset = value.value;
    // DW_FORM_loclistx in DWARF 5; in DWARF 2-3 a data4/data8 location is an offset into .debug_loc.
    else if (value.kind === 'uint')
      offset =
        unit.version >= 5
          ? this.listIndex(this.info.sections.loclists, unit.loclistsBase, unit.ctx.offsetSize, Number(value.value), '.debug_loclists')
          : Number(value.value);
    else return { kind: 'none' };
    const expression = unit.version >= 5 ? this.loclistEntry(die, offset, pc) : this.locEntry(die, offset, pc);
    return expression ? { kind: 'expression', expression } : { kind: 'none' };
  }

  /** The offset an rnglistx/loclistx index names: the unit's offsets table starts at its base (DWARF 5, 7.28/7.29). */
  private listIndex(section: Uint8Array | undefined, base: number | undefined, offsetSize: number, index: number, name: string): number {
    if (!section) throw new DwarfFormatError(`an index into ${name}, which the file does not have`);
    const start = base ?? 12; // just past a 32-bit list table header
    return start + new DwarfCursor(section, start + index * offsetSize, this.littleEndian).offsetWord(offsetSize);
  }

  private unitBase(die: Die): bigint {
    return die.unit.info?.lowPc ?? 0n;
  }

  private loclistEntry(die: Die, offset: number, pc: bigint): Uint8Array | undefined {
    const section = this.info.sections.loclists;
    if (!section) throw new DwarfFormatError('a location list in .debug_loclists, which the file does not have');
    const c = new DwarfCursor(section, offset, this.littleEndian);
    const size = die.unit.addressSize;
    let base = this.unitBase(die);
    const index = (i: number) => this.info.addressIndex(die.unit, i);
    const counted = () => c.take(c.ulebNumber());
    let fallback: Uint8Array | undefined;
    for (;;) {
      const kind = c.u8();
      let start: bigint;
      let end: bigint;
      switch (kind) {
        case LLE.end:
          return fallback;
        case LLE.baseAddressx:
          base = index(c.ulebNumber());
          continue;
        case LLE.baseAddress:
          base = c.uint(size);
          continue;
        case LLE.defaultLocation:
          fallback = counted();
          continue;
        case LLE.startxEndx:
          start = index(c.ulebNumber());
          end = index(c.ulebNumber());
          break;
        case LLE.startxLength:
          start = index(c.ulebNumber());
          end = start + c.uleb();
          break;
        case LLE.offsetPair:
          start = base + c.uleb();
          end = base + c.uleb();
          break;
        case LLE.startEnd:
          start = c.uint(size);
          end = c.uint(size);
          break;
        case LLE.startLength:
          start = c.uint(size);
          end = start + c.uleb();
          break;
        default:
          throw new DwarfFormatError(`unknown location list entry kind ${kind} at .debug_loclists+0x${(c.offset - 1).toString(16)}`);
      }
      const expression = counted();
      if (pc >= start && pc < end) return expression;
    }
  }

  private locEntry(die: Die, offset: number, pc: bigint): Uint8Array | undefined {
    const section = this.info.sections.loc;
    if (!section) throw new DwarfFormatError('a location list in .debug_loc, which the file does not have');
    const c = new DwarfCursor(section, offset, this.littleEndian);
    const size = die.unit.addressSize;
    const selection = size === 8 ? 0xffffffffffffffffn : 0xffffffffn;
    let base = this.unitBase(die);
    for (;;) {
      const begin = c.uint(size);
      const end = c.uint(size);
      if (begin === 0n && end === 0n) return undefined;
      if (begin === selection) {
        base = end;
        continue;
      }
      const expression = c.take(c.u16());
      if (pc >= base + begin && pc < base + end) return expression;
    }
  }

  /** The address ranges a DIE covers: low_pc/high_pc, or DW_AT_ranges. */
  rangesOf(die: Die): AddressRange[] {
    const low = this.info.addressAttr(die, AT.low_pc);
    const high = this.info.attribute(die, AT.high_pc);
    if (low !== undefined && high) {
      // DWARF 4+: a constant high_pc is the length; an address form is the end itself.
      const end =
        high.kind === 'addr'
          ? high.value
          : high.kind === 'addrx'
            ? this.info.addressIndex(die.unit, high.index)
            : high.kind === 'uint' || high.kind === 'sint'
              ? low + high.value
              : undefined;
      return end === undefined ? [] : [{ start: low, end }];
    }
    const ranges = this.info.attribute(die, AT.ranges);
    if (!ranges) return low !== undefined ? [{ start: low, end: low + 1n }] : [];
    const unit = die.unit;
    if (unit.version >= 5) {
      const offset =
        ranges.kind === 'sec_offset'
          ? ranges.value
          : ranges.kind === 'uint'
            ? this.listIndex(this.info.sections.rnglists, unit.rnglistsBase, unit.ctx.offsetSize, Number(ranges.value), '.debug_rnglists')
            : undefined;
      return offset === undefined ? [] : this.rnglist(die, offset);
    }
    const offset = ranges.kind === 'sec_offset' || ranges.kind === 'uint' ? Number(ranges.value) : undefined;
    return offset === undefined ? [] : this.debugRanges(die, offset);
  }

  private rnglist(die: Die, offset: number): AddressRange[] {
    const section = this.info.sections.rnglists;
    if (!section) throw new DwarfFormatError('DW_AT_ranges into .debug_rnglists, which the file does not have');
    const c = new DwarfCursor(section, offset, this.littleEndian);
    const size = die.unit.addressSize;
    let base = this.unitBase(die);
    const index = (i: number) => this.info.addressIndex(die.unit, i);
    const out: AddressRange[] = [];
    for (;;) {
      const kind = c.u8();
      switch (kind) {
        case RLE.end:
          return out;
        case RLE.baseAddressx:
          base = index(c.ulebNumber());
          break;
        case RLE.baseAddress:
          base = c.uint(size);
          break;
        case RLE.startxEndx:
          out.push({ start: index(c.ulebNumber()), end: index(c.ulebNumber()) });
          break;
        case RLE.startxLength: {
          const start = index(c.ulebNumber());
          out.push({ start, end: start + c.uleb() });
          break;
        }
        case RLE.offsetPair: {
          const start = base + c.uleb();
          out.push({ start, end: base + c.uleb() });
          break;
        }
        case RLE.startEnd:
          out.push({ start: c.uint(size), end: c.uint(size) });
          break;
        case RLE.startLength: {
          const start = c.uint(size);
          out.push({ start, end: start + c.uleb() });
          break;
        }
        default:
          throw new DwarfFormatError(`unknown range list entry kind ${kind} at .debug_rnglists+0x${(c.offset - 1).toString(16)}`);
      }
    }
  }

  private debugRanges(die: Die, offset: number): AddressRange[] {
    const section = this.info.sections.ranges;
    if (!section) throw new DwarfFormatError('DW_AT_ranges into .debug_ranges, which the file does not have');
    const c = new DwarfCursor(section, offset, this.littleEndian);
    const size = die.unit.addressSize;
    const selection = size === 8 ? 0xffffffffffffffffn : 0xffffffffn;
    let base = this.unitBase(die);
    const out: AddressRange[] = [];
    for (;;) {
      const begin = c.uint(size);
      const end = c.uint(size);
      if (begin === 0n && end === 0n) return out;
      if (begin === selection) {
        base = end;
        continue;
      }
      out.push({ start: base + begin, end: base + end });
    }
  }

  private subprogramIndex(): IndexedRange[] {
    if (this.index) return this.index;
    const index: IndexedRange[] = [];
    for (const die of this.info.diesOfTag(TAG.subprogram)) {
      for (const range of this.rangesOf(die)) if (range.end > range.start) index.push({ ...range, die });
    }
    index.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.index = index;
    return index;
  }
}

/** DW_AT_const_value as little-endian bytes: a constant form is 8 bytes (the type's size picks the low ones), a block or string is itself. */
function constantBytes(value: FormValue): Uint8Array {
  if (value.kind === 'block' || value.kind === 'bytes') return value.bytes;
  if (value.kind === 'string') return new TextEncoder().encode(`${value.value}\0`);
  const bytes = new Uint8Array(8);
  if (value.kind === 'uint' || value.kind === 'sint') new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, value.value), true);
  return bytes;
}
