// Just enough .debug_info to find global and static variables: names (qualified through namespaces and
// classes, through DW_AT_specification for C++ out-of-class definitions), DW_OP_addr addresses (also
// DW_OP_addrx through .debug_addr), byte sizes through DW_AT_type chains, and declaration file/line.
// Also the per-unit facts the line table needs (comp_dir, stmt_list). DWARF 2-5, 32- and 64-bit DWARF.
// Pure: works on section bytes.

import { DwarfCursor, DwarfFormatError, type FormValue, type FormContext, stringAt } from './dwarf-reader';

export interface DwarfSections {
  readonly info: Uint8Array;
  readonly abbrev: Uint8Array;
  readonly str?: Uint8Array;
  readonly lineStr?: Uint8Array;
  readonly strOffsets?: Uint8Array;
  readonly addr?: Uint8Array;
  /** Location lists (DWARF 5, DWARF 2-4) and address ranges (DWARF 5, DWARF 2-4): where locals live at each pc. */
  readonly loclists?: Uint8Array;
  readonly loc?: Uint8Array;
  readonly rnglists?: Uint8Array;
  readonly ranges?: Uint8Array;
  readonly littleEndian: boolean;
}

export interface CompileUnit {
  readonly offset: number;
  readonly version: number;
  readonly addressSize: number;
  readonly name?: string;
  readonly compDir?: string;
  /** Offset of this unit's line program in .debug_line. */
  readonly stmtList?: number;
  readonly lowPc?: bigint;
}

export interface DwarfVariable {
  /** Name as written (`readings`), and qualified through namespaces/classes (`ringside::Meter::readings`). */
  readonly name: string;
  readonly qualifiedName: string;
  readonly linkageName?: string;
  /** Link-time address (add the load bias for a PIE). */
  readonly address: bigint;
  /** Byte size from the type, undefined when the type has no known size (e.g. `extern int a[];`). */
  readonly size?: number;
  readonly external: boolean;
  /** Function name when the variable is a function-local static. */
  readonly enclosingFunction?: string;
  readonly unit: CompileUnit;
  /** Index into the unit's line-table file list (DW_AT_decl_file) and line. */
  readonly declFile?: number;
  readonly declLine?: number;
}

// DW_TAG_*
export const TAG = {
  array_type: 0x01,
  class_type: 0x02,
  enumeration_type: 0x04,
  lexical_block: 0x0b,
  member: 0x0d,
  pointer_type: 0x0f,
  reference_type: 0x10,
  compile_unit: 0x11,
  structure_type: 0x13,
  subroutine_type: 0x15,
  typedef: 0x16,
  union_type: 0x17,
  inlined_subroutine: 0x1d,
  ptr_to_member_type: 0x1f,
  subrange_type: 0x21,
  base_type: 0x24,
  const_type: 0x26,
  subprogram: 0x2e,
  variable: 0x34,
  volatile_type: 0x35,
  restrict_type: 0x37,
  namespace: 0x39,
  unspecified_type: 0x3b,
  partial_unit: 0x3c,
  rvalue_reference_type: 0x42,
  atomic_type: 0x47,
  immutable_type: 0x4b,
  skeleton_unit: 0x4a,
  formal_parameter: 0x05,
  enumerator: 0x28,
} as const;

// DW_AT_*: the names, addresses and sizes of globals; scopes, locations and types of locals (dwarf-scopes.ts).
export const AT = {
  location: 0x02,
  name: 0x03,
  byte_size: 0x0b,
  stmt_list: 0x10,
  low_pc: 0x11,
  comp_dir: 0x1b,
  upper_bound: 0x2f,
  abstract_origin: 0x31,
  count: 0x37,
  decl_file: 0x3a,
  decl_line: 0x3b,
  declaration: 0x3c,
  external: 0x3f,
  specification: 0x47,
  type: 0x49,
  lower_bound: 0x22,
  str_offsets_base: 0x72,
  addr_base: 0x73,
  linkage_name: 0x6e,
  MIPS_linkage_name: 0x2007,
  GNU_addr_base: 0x2133,
  high_pc: 0x12,
  const_value: 0x1c,
  artificial: 0x34,
  data_member_location: 0x38,
  encoding: 0x3e,
  frame_base: 0x40,
  ranges: 0x55,
  bit_size: 0x0d,
  data_bit_offset: 0x6b,
  rnglists_base: 0x74,
  loclists_base: 0x8c,
} as const;

const KEPT_ATTRIBUTES = new Set<number>(Object.values(AT));
const DW_OP_addr = 0x03;
const DW_OP_addrx = 0xa1;
const DW_OP_GNU_addr_index = 0xfb;

interface AbbrevAttribute {
  readonly name: number;
  readonly form: number;
  readonly implicitConst?: bigint;
}
interface Abbrev {
  readonly tag: number;
  readonly hasChildren: boolean;
  readonly attributes: readonly AbbrevAttribute[];
}

/** One debugging information entry with the attributes this reader keeps. */
export interface Die {
  readonly offset: number;
  readonly tag: number;
  readonly parent?: Die;
  readonly unit: UnitState;
  readonly attrs: Map<number, FormValue>;
  children?: Die[];
}

export interface UnitState {
  readonly offset: number;
  readonly version: number;
  readonly addressSize: number;
  readonly ctx: FormContext;
  strOffsetsBase?: number;
  addrBase?: number;
  /** DWARF 5: where the unit's offsets into .debug_rnglists / .debug_loclists begin (for DW_FORM_rnglistx / loclistx). */
  rnglistsBase?: number;
  loclistsBase?: number;
  info?: CompileUnit;
}

export class DwarfInfo {
  readonly units: CompileUnit[] = [];
  private readonly dies = new Map<number, Die>();
  private variableCache: DwarfVariable[] | undefined;

  /**
   * `unitsOnly`: read each unit's own DIE (name, comp_dir, stmt_list: what the line tables need) and skip the rest
   * of its tree. A source line lookup used to parse every DIE of the object first, most of a cold lookup's cost.
   */
  constructor(
    readonly sections: DwarfSections,
    private readonly unitsOnly = false,
    /** With unitsOnly: read only the units that start at these .debug_info offsets (one a source line lookup needs). */
    private readonly unitOffsets?: readonly number[],
  ) {
    this.parse();
  }

  private parseAbbrevs(offset: number): Map<number, Abbrev> {
    const table = new Map<number, Abbrev>();
    const c = new DwarfCursor(this.sections.abbrev, offset, this.sections.littleEndian);
    for (;;) {
      const code = c.ulebNumber();
      if (code === 0) break;
      const tag = c.ulebNumber();
      const hasChildren = c.u8() !== 0;
      const attributes: AbbrevAttribute[] = [];
      for (;;) {
        const name = c.ulebNumber();
        const form = c.ulebNumber();
        if (name === 0 && form === 0) break;
        attributes.push(form === 0x21 ? { name, form, implicitConst: c.sleb() } : { name, form });
      }
      table.set(code, { tag, hasChildren, attributes });
    }
    return table;
  }

  private parse(): void {
    const { info, littleEndian } = this.sections;
    const c = new DwarfCursor(info, 0, littleEndian);
    const abbrevCache = new Map<number, Map<number, Abbrev>>();
    const chosen = this.unitsOnly && this.unitOffsets ? [...this.unitOffsets] : undefined;
    while (chosen ? chosen.length > 0 : !c.atEnd) {
      if (chosen) c.offset = chosen.shift() as number;
      const unitOffset = c.offset;
      const { offsetSize, end } = c.initialLength();
      if (end > info.length) throw new DwarfFormatError(`.debug_info unit at 0x${unitOffset.toString(16)} runs past the section end`);
      const version = c.u16();
      if (version < 2 || version > 5) throw new DwarfFormatError(`.debug_info unit at 0x${unitOffset.toString(16)} has unsupported version ${version}`);
      let addressSize: number;
      let abbrevOffset: number;
      if (version >= 5) {
        const unitType = c.u8();
        addressSize = c.u8();
        abbrevOffset = c.offsetWord(offsetSize);
        if (unitType === 4 || unitType === 5) c.u64(); // skeleton / split_compile: dwo_id
        if (unitType === 2 || unitType === 6) {
          c.u64();
          c.offsetWord(offsetSize);
        } // type units: signature, type_offset
      } else {
        abbrevOffset = c.offsetWord(offsetSize);
        addressSize = c.u8();
      }
      let abbrevs = abbrevCache.get(abbrevOffset);
      if (!abbrevs) {
        abbrevs = this.parseAbbrevs(abbrevOffset);
        abbrevCache.set(abbrevOffset, abbrevs);
      }
      const unit: UnitState = {
        offset: unitOffset,
        version,
        addressSize,
        ctx: { addressSize, offsetSize, version, debugStr: this.sections.str, debugLineStr: this.sections.lineStr },
      };
      this.parseDies(c, end, abbrevs, unit);
      c.offset = end;
    }
  }

  private parseDies(c: DwarfCursor, end: number, abbrevs: Map<number, Abbrev>, unit: UnitState): void {
    const parents: Die[] = [];
    let unitDie: Die | undefined;
    while (c.offset < end) {
      const offset = c.offset;
      const code = c.ulebNumber();
      if (code === 0) {
        parents.pop();
        continue;
      }
      const abbrev = abbrevs.get(code);
      if (!abbrev) throw new DwarfFormatError(`DIE at 0x${offset.toString(16)} uses unknown abbreviation ${code}`);
      const attrs = new Map<number, FormValue>();
      for (const a of abbrev.attributes) {
        const value = c.form(a.form, unit.ctx, a.implicitConst);
        if (KEPT_ATTRIBUTES.has(a.name)) attrs.set(a.name, value);
      }
      const parent = parents[parents.length - 1];
      const die: Die = { offset, tag: abbrev.tag, parent, unit, attrs };
      this.dies.set(offset, die);
      if (parent) (parent.children ??= []).push(die);
      if (!unitDie) {
        unitDie = die;
        this.initUnit(unit, die);
        if (this.unitsOnly) return;
      }
      if (abbrev.hasChildren) parents.push(die);
    }
  }

  private initUnit(unit: UnitState, die: Die): void {
    const strOffsetsBase = die.attrs.get(AT.str_offsets_base);
    if (strOffsetsBase && (strOffsetsBase.kind === 'sec_offset' || strOffsetsBase.kind === 'uint'))
      unit.strOffsetsBase = Number(strOffsetsBase.kind === 'uint' ? strOffsetsBase.value : strOffsetsBase.value);
    const addrBase = die.attrs.get(AT.addr_base) ?? die.attrs.get(AT.GNU_addr_base);
    if (addrBase && (addrBase.kind === 'sec_offset' || addrBase.kind === 'uint'))
      unit.addrBase = Number(addrBase.kind === 'uint' ? addrBase.value : addrBase.value);
    const sectionOffset = (name: number): number | undefined => {
      const value = die.attrs.get(name);
      return value && (value.kind === 'sec_offset' || value.kind === 'uint') ? Number(value.value) : undefined;
    };
    unit.rnglistsBase = sectionOffset(AT.rnglists_base);
    unit.loclistsBase = sectionOffset(AT.loclists_base);
    const stmt = die.attrs.get(AT.stmt_list);
    const info: CompileUnit = {
      offset: unit.offset,
      version: unit.version,
      addressSize: unit.addressSize,
      name: this.stringAttr(die, AT.name),
      compDir: this.stringAttr(die, AT.comp_dir),
      stmtList: stmt && (stmt.kind === 'sec_offset' || stmt.kind === 'uint') ? Number(stmt.value) : undefined,
      lowPc: this.addressAttr(die, AT.low_pc),
    };
    unit.info = info;
    if (die.tag === TAG.compile_unit || die.tag === TAG.partial_unit || die.tag === TAG.skeleton_unit) this.units.push(info);
  }

  stringAttr(die: Die, name: number): string | undefined {
    const v = die.attrs.get(name);
    if (!v) return undefined;
    if (v.kind === 'string') return v.value;
    if (v.kind === 'strx') {
      const base = die.unit.strOffsetsBase ?? 8; // DWARF 5 default: just past the .debug_str_offsets header
      const table = this.sections.strOffsets;
      if (!table) throw new DwarfFormatError('DW_FORM_strx used but the file has no .debug_str_offsets');
      const size = die.unit.ctx.offsetSize;
      const c = new DwarfCursor(table, base + v.index * size, this.sections.littleEndian);
      return stringAt(this.sections.str, c.offsetWord(size), '.debug_str');
    }
    return undefined;
  }

  addressIndex(unit: UnitState, index: number): bigint {
    const table = this.sections.addr;
    if (!table) throw new DwarfFormatError('DW_FORM_addrx/DW_OP_addrx used but the file has no .debug_addr');
    const base = unit.addrBase ?? 8;
    return new DwarfCursor(table, base + index * unit.addressSize, this.sections.littleEndian).uint(unit.addressSize);
  }

  addressAttr(die: Die, name: number): bigint | undefined {
    const v = die.attrs.get(name);
    if (!v) return undefined;
    if (v.kind === 'addr') return v.value;
    if (v.kind === 'addrx') return this.addressIndex(die.unit, v.index);
    return undefined;
  }

  numberAttr(die: Die, name: number): number | undefined {
    const v = die.attrs.get(name);
    if (!v) return undefined;
    if (v.kind === 'uint' || v.kind === 'sint') return Number(v.value);
    return undefined;
  }

  flagAttr(die: Die, name: number): boolean {
    const v = die.attrs.get(name);
    return v !== undefined && v.kind === 'flag' && v.value;
  }

  refAttr(die: Die, name: number): Die | undefined {
    const v = die.attrs.get(name);
    if (!v) return undefined;
    if (v.kind === 'ref') return this.dies.get(die.unit.offset + v.offset);
    if (v.kind === 'ref_addr') return this.dies.get(v.offset);
    return undefined;
  }

  /** The DIE at a .debug_info offset. */
  dieAt(offset: number): Die | undefined {
    return this.dies.get(offset);
  }

  /** Every DIE of a tag, in .debug_info order. */
  diesOfTag(tag: number): Die[] {
    const out: Die[] = [];
    for (const die of this.dies.values()) if (die.tag === tag) out.push(die);
    return out;
  }

  /** An attribute as read (for location lists and ranges, whose forms say which section they index). */
  attribute(die: Die, name: number): FormValue | undefined {
    return die.attrs.get(name);
  }

  /** Byte size of the type a DIE refers to, following typedef/cv chains; undefined when unknown. */
  typeSize(type: Die | undefined, depth = 0): number | undefined {
    if (!type || depth > 64) return undefined;
    const byteSize = this.numberAttr(type, AT.byte_size);
    switch (type.tag) {
      case TAG.base_type:
      case TAG.structure_type:
      case TAG.class_type:
      case TAG.union_type:
      case TAG.enumeration_type:
      case TAG.unspecified_type:
        if (byteSize !== undefined) return byteSize;
        return type.tag === TAG.enumeration_type ? this.typeSize(this.refAttr(type, AT.type), depth + 1) : undefined;
      case TAG.typedef:
      case TAG.const_type:
      case TAG.volatile_type:
      case TAG.restrict_type:
      case TAG.atomic_type:
      case TAG.immutable_type:
        return byteSize ?? this.typeSize(this.refAttr(type, AT.type), depth + 1);
      case TAG.pointer_type:
      case TAG.reference_type:
      case TAG.rvalue_reference_type:
      case TAG.ptr_to_member_type:
        return byteSize ?? type.unit.addressSize;
      case TAG.array_type: {
        if (byteSize !== undefined) return byteSize;
        const element = this.typeSize(this.refAttr(type, AT.type), depth + 1);
        if (element === undefined) return undefined;
        let total = element;
        const ranges = (type.children ?? []).filter((d) => d.tag === TAG.subrange_type);
        if (ranges.length === 0) return undefined;
        for (const range of ranges) {
          let count = this.numberAttr(range, AT.count);
          if (count === undefined) {
            const upper = this.numberAttr(range, AT.upper_bound);
            if (upper === undefined) return undefined; // flexible or extern array of unknown bound
            count = upper - (this.numberAttr(range, AT.lower_bound) ?? 0) + 1;
          }
          total *= count;
        }
        return total;
      }
      case TAG.subroutine_type:
        return undefined;
      default:
        return byteSize;
    }
  }

  /** Static address of a DW_AT_location that is exactly DW_OP_addr / DW_OP_addrx (TLS and computed locations are skipped). */
  private staticAddress(die: Die): bigint | undefined {
    const loc = die.attrs.get(AT.location);
    if (!loc || loc.kind !== 'block' || loc.bytes.length === 0) return undefined;
    const c = new DwarfCursor(loc.bytes, 0, this.sections.littleEndian);
    const op = c.u8();
    let address: bigint;
    if (op === DW_OP_addr) address = c.uint(die.unit.addressSize);
    else if (op === DW_OP_addrx || op === DW_OP_GNU_addr_index) address = this.addressIndex(die.unit, c.ulebNumber());
    else return undefined;
    return c.atEnd ? address : undefined;
  }

  /** Qualified scope of a DIE: namespaces, classes, structs, unions (not functions). */
  private scopeName(die: Die | undefined): string[] {
    const parts: string[] = [];
    for (let d = die; d; d = d.parent) {
      if (d.tag === TAG.namespace || d.tag === TAG.class_type || d.tag === TAG.structure_type || d.tag === TAG.union_type) {
        parts.unshift(this.stringAttr(d, AT.name) ?? '(anonymous namespace)');
      }
    }
    return parts;
  }

  private enclosingFunction(die: Die): string | undefined {
    for (let d = die.parent; d; d = d.parent) {
      if (d.tag === TAG.subprogram) {
        const spec = this.refAttr(d, AT.specification) ?? this.refAttr(d, AT.abstract_origin);
        return this.stringAttr(d, AT.name) ?? (spec && this.stringAttr(spec, AT.name));
      }
    }
    return undefined;
  }

  /** Every variable with a static address (globals, file statics, function statics, class statics). */
  variables(): readonly DwarfVariable[] {
    if (this.variableCache) return this.variableCache;
    const out: DwarfVariable[] = [];
    for (const die of this.dies.values()) {
      if (die.tag !== TAG.variable) continue;
      const address = this.staticAddress(die);
      if (address === undefined) continue;
      // Out-of-class C++ definitions and concrete instances carry only the location; the rest is on the declaration.
      const chain: Die[] = [die];
      for (let d: Die | undefined = die; d && chain.length < 8;) {
        d = this.refAttr(d, AT.specification) ?? this.refAttr(d, AT.abstract_origin);
        if (d) chain.push(d);
      }
      const first = <T>(get: (d: Die) => T | undefined): T | undefined => {
        for (const d of chain) {
          const v = get(d);
          if (v !== undefined) return v;
        }
        return undefined;
      };
      const name = first((d) => this.stringAttr(d, AT.name));
      if (name === undefined) continue;
      const declaration = chain[chain.length - 1];
      const scope = this.scopeName(declaration.parent);
      const unit = die.unit.info;
      if (!unit) continue;
      out.push({
        name,
        qualifiedName: [...scope, name].join('::'),
        linkageName: first((d) => this.stringAttr(d, AT.linkage_name) ?? this.stringAttr(d, AT.MIPS_linkage_name)),
        address,
        size: this.typeSize(first((d) => this.refAttr(d, AT.type))),
        external: chain.some((d) => this.flagAttr(d, AT.external)),
        enclosingFunction: this.enclosingFunction(die),
        unit,
        declFile: first((d) => this.numberAttr(d, AT.decl_file)),
        declLine: first((d) => this.numberAttr(d, AT.decl_line)),
      });
    }
    this.variableCache = out;
    return out;
  }
}

/**
 * The .debug_info offsets of the units that hold code of their own: DW_TAG_compile_unit or DW_TAG_skeleton_unit with
 * DW_AT_low_pc or DW_AT_ranges (not a unit of data only, dwz's partial units or type units). Read from each unit's
 * header and its first DIE's abbreviation alone: the cheap way to learn whether .debug_aranges names every unit with
 * code (dwarf-aranges.ts).
 */
export function codeUnitOffsets(info: Uint8Array, abbrev: Uint8Array, littleEndian: boolean): number[] {
  const out: number[] = [];
  const c = new DwarfCursor(info, 0, littleEndian);
  while (!c.atEnd) {
    const unitOffset = c.offset;
    const { offsetSize, end } = c.initialLength();
    if (end > info.length || end <= unitOffset) throw new DwarfFormatError(`.debug_info unit at 0x${unitOffset.toString(16)} runs past the section end`);
    const version = c.u16();
    if (version < 2 || version > 5) throw new DwarfFormatError(`.debug_info unit at 0x${unitOffset.toString(16)} has unsupported version ${version}`);
    let abbrevOffset: number;
    if (version >= 5) {
      const unitType = c.u8();
      c.u8(); // address_size
      abbrevOffset = c.offsetWord(offsetSize);
      if (unitType !== 1 && unitType !== 4) {
        c.offset = end; // DW_UT_compile and DW_UT_skeleton only
        continue;
      }
      if (unitType === 4) c.u64(); // dwo_id
    } else {
      abbrevOffset = c.offsetWord(offsetSize);
      c.u8(); // address_size
    }
    if (firstDieHoldsCode(abbrev, abbrevOffset, c.ulebNumber(), littleEndian, unitOffset)) out.push(unitOffset);
    c.offset = end;
  }
  return out;
}

/** Whether abbreviation `code` of the table at `offset` is a compile or skeleton unit with low_pc or ranges. */
function firstDieHoldsCode(abbrev: Uint8Array, offset: number, code: number, littleEndian: boolean, unitOffset: number): boolean {
  const a = new DwarfCursor(abbrev, offset, littleEndian);
  for (;;) {
    const entry = a.ulebNumber();
    if (entry === 0) throw new DwarfFormatError(`.debug_info unit at 0x${unitOffset.toString(16)} uses unknown abbreviation ${code}`);
    const tag = a.ulebNumber();
    a.u8(); // children
    let holdsCode = false;
    for (;;) {
      const name = a.ulebNumber();
      const form = a.ulebNumber();
      if (name === 0 && form === 0) break;
      if (form === 0x21) a.sleb(); // DW_FORM_implicit_const
      if (name === AT.low_pc || name === AT.ranges) holdsCode = true;
    }
    if (entry === code) return (tag === TAG.compile_unit || tag === TAG.skeleton_unit) && holdsCode;
  }
}
