// Pure ELF reader: ELF32/ELF64, little and big endian. Headers, program headers, section headers,
// symbol tables, build-id note and .gnu_debuglink. Works on bytes only (no node imports) so it can
// run anywhere; decompressing SHF_COMPRESSED sections needs an inflate function from the caller
// (the node reading layer passes zlib's inflateSync).

export class ElfFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ElfFormatError';
  }
}

export const ET_EXEC = 2;
export const ET_DYN = 3;
export const PT_LOAD = 1;
export const PT_INTERP = 3;
export const PT_NOTE = 4;
/** The part of a writable segment ld.so makes read-only once it has relocated it. */
export const PT_GNU_RELRO = 0x6474e552;
export const PF_W = 2;
const R_X86_64_RELATIVE = 8;
export const SHT_SYMTAB = 2;
export const SHT_NOTE = 7;
export const SHT_NOBITS = 8;
export const SHT_DYNSYM = 11;
export const SHF_COMPRESSED = 0x800;
export const SHT_RELA = 4;
export const SHT_REL = 9;
/** e_machine of x86_64: the only PLT layout synthesized (16-byte entries, 16-byte header). */
const EM_X86_64_MACHINE = 62;
const PLT_ENTRY_SIZE = 16;
const ELFCOMPRESS_ZLIB = 1;
const STT_NOTYPE = 0;
const STT_OBJECT = 1;
const STT_FUNC = 2;
const STT_GNU_IFUNC = 10;
const NT_GNU_BUILD_ID = 3;
const SHN_LORESERVE = 0xff00;
const STV_INTERNAL = 1;
const STV_HIDDEN = 2;

/** Bounds-checked little/big endian reads over a byte array; every read past the end is an ElfFormatError. */
export class ByteReader {
  readonly view: DataView;
  constructor(
    readonly bytes: Uint8Array,
    readonly littleEndian: boolean,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private check(offset: number, size: number): void {
    if (offset < 0 || offset + size > this.bytes.length) {
      throw new ElfFormatError(`read of ${size} bytes at offset ${offset} is past the end (${this.bytes.length} bytes)`);
    }
  }
  u8(offset: number): number {
    this.check(offset, 1);
    return this.bytes[offset];
  }
  u16(offset: number): number {
    this.check(offset, 2);
    return this.view.getUint16(offset, this.littleEndian);
  }
  u32(offset: number): number {
    this.check(offset, 4);
    return this.view.getUint32(offset, this.littleEndian);
  }
  u64(offset: number): bigint {
    this.check(offset, 8);
    return this.view.getBigUint64(offset, this.littleEndian);
  }
  /** A 32- or 64-bit word depending on the ELF class. */
  word(offset: number, is64: boolean): bigint {
    return is64 ? this.u64(offset) : BigInt(this.u32(offset));
  }
  cstring(offset: number): string {
    this.check(offset, 0);
    let end = offset;
    while (end < this.bytes.length && this.bytes[end] !== 0) end++;
    return utf8.decode(this.bytes.subarray(offset, end));
  }
}

const utf8 = new TextDecoder('utf-8');
/** Bytes read for a name read from its file (stringTableReader): longer than nearly every symbol name. */
const NAME_READ_BYTES = 256;

export interface ElfHeader {
  readonly is64: boolean;
  readonly littleEndian: boolean;
  readonly type: number;
  readonly machine: number;
  readonly entry: bigint;
}

export interface ProgramHeader {
  readonly type: number;
  readonly flags: number;
  readonly offset: bigint;
  readonly vaddr: bigint;
  readonly fileSize: bigint;
  readonly memSize: bigint;
  readonly align: bigint;
}

export interface SectionHeader {
  readonly index: number;
  readonly name: string;
  readonly type: number;
  readonly flags: bigint;
  readonly addr: bigint;
  readonly offset: number;
  readonly size: number;
  readonly link: number;
  readonly entSize: number;
}

export interface ElfSymbol {
  readonly name: string;
  readonly value: bigint;
  readonly size: number;
  readonly kind: 'function' | 'object';
  /** An untyped (STT_NOTYPE) code label rather than a declared function: loses to a function that encloses it. */
  readonly label: boolean;
  readonly binding: 'local' | 'global' | 'weak';
  readonly table: 'symtab' | 'dynsym';
}

/**
 * Where the byte at link-time address `vaddr` lies in the file: the PT_LOAD segment whose file-backed
 * part [p_vaddr, p_vaddr + p_filesz) holds it, at vaddr - p_vaddr + p_offset. This is what a uprobe is
 * placed by (the kernel keys it on the file's inode and this offset, wherever the file is mapped), as
 * perf probe computes it. Undefined when no segment holds the address in the file (.bss, unmapped).
 */
export function fileOffsetOfVaddr(programHeaders: readonly ProgramHeader[], vaddr: bigint): bigint | undefined {
  const segment = programHeaders.find((p) => p.type === PT_LOAD && vaddr >= p.vaddr && vaddr < p.vaddr + p.fileSize);
  return segment === undefined ? undefined : vaddr - segment.vaddr + segment.offset;
}

/**
 * The symbols of .symtab and .dynsym that ElfFile.symbols() lists, as columns (row i is symbols()[i]): the address
 * as two 32-bit halves, the size as a double (exact below 2^53), st_info, and the name and whole symbol on demand.
 */
export interface SymbolColumns {
  readonly count: number;
  readonly valueHigh: Uint32Array;
  readonly valueLow: Uint32Array;
  readonly size: Float64Array;
  /** st_info: type in the low nibble (STT_*), binding in the high one. */
  readonly info: Uint8Array;
  /** 1 for a row of .symtab, 0 for .dynsym. */
  readonly symtab: Uint8Array;
  nameAt(row: number): string;
  /**
   * The string table holding row's name, and where in it the name starts (it runs to a NUL or the table's end): for
   * copying names as bytes without decoding them or making a view per name.
   */
  nameTableOf(row: number): Uint8Array;
  nameOffsetOf(row: number): number;
  /** Makes nameAt read each string table whole once (then slice names out of it): for callers that name every row. */
  readNamesWhole(): void;
  /** nameAt(row).endsWith(suffix) (ASCII), read in the string table without making the name. */
  nameEndsWith(row: number, suffix: string): boolean;
  symbolAt(row: number): ElfSymbol;
}

/** STT_OBJECT: a data symbol, never a function's name. */
export const SYMBOL_TYPE_OBJECT = STT_OBJECT;
/** STT_NOTYPE: an untyped code label (what symbols() keeps of them). */
export const SYMBOL_TYPE_LABEL = STT_NOTYPE;

export type Inflate = (compressed: Uint8Array) => Uint8Array;

/**
 * A string table read a name at a time where it lies (the object file, see object-file.ts) instead of held whole:
 * node's .strtab and .dynstr are 13 MB, and a profile names a few thousand of their 150k functions.
 */
export interface StringTableReader {
  /** The name at `offset`: its bytes up to a NUL or the table's end, decoded. */
  nameAt(offset: number): string;
  /** The whole table, read again (for the disk cache's columns). */
  whole(): Uint8Array;
  /** Where the table lies in its file (the reading layer adds the file's path). */
  readonly offset: number;
  readonly size: number;
  path?: string;
}

export class ElfFile {
  readonly header: ElfHeader;
  readonly programHeaders: readonly ProgramHeader[];
  readonly sections: readonly SectionHeader[];
  private readonly sectionCache = new Map<string, Uint8Array | undefined>();
  private symbolCache: readonly ElfSymbol[] | undefined;
  /** Symbol and string tables read apart (symbolTableBytes) → where they lie in the file, to read a name there again. */
  private readonly apartAt = new WeakMap<Uint8Array, { readonly offset: number; readonly size: number }>();
  private relocationCache: ReadonlyMap<bigint, bigint | undefined> | undefined;

  /**
   * `bytes` is the whole file, or (with `load`) an image of the file's size whose ranges are filled on demand:
   * load(offset, size) must make those bytes present before they are read. The reading layer passes one that reads
   * only the headers and the sections asked for, so an object costs what its symbol tables cost, not its size.
   * `readApart(offset, size)`, when given, reads bytes of the file into a buffer of their own: the symbol and string
   * tables are read so (symbolTableBytes), not into `bytes`, which lives as long as the object does; they then go
   * once what was built from them (a function index) no longer needs them.
   */
  constructor(
    readonly bytes: Uint8Array,
    private readonly inflate?: Inflate,
    private readonly load?: (offset: number, size: number) => void,
    private readonly readApart?: (offset: number, size: number) => Uint8Array,
  ) {
    load?.(0, Math.min(bytes.length, 64));
    if (bytes.length < 16 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
      throw new ElfFormatError('not an ELF file (bad magic)');
    }
    const elfClass = bytes[4];
    const dataEncoding = bytes[5];
    if (elfClass !== 1 && elfClass !== 2) throw new ElfFormatError(`unknown ELF class ${elfClass}`);
    if (dataEncoding !== 1 && dataEncoding !== 2) throw new ElfFormatError(`unknown ELF data encoding ${dataEncoding}`);
    const is64 = elfClass === 2;
    const littleEndian = dataEncoding === 1;
    const r = new ByteReader(bytes, littleEndian);
    const type = r.u16(16);
    const machine = r.u16(18);
    const entry = r.word(24, is64);
    const phoff = Number(is64 ? r.u64(32) : BigInt(r.u32(28)));
    const shoff = Number(is64 ? r.u64(40) : BigInt(r.u32(32)));
    const base = is64 ? 52 : 40;
    const phentsize = r.u16(base + 2);
    let phnum = r.u16(base + 4);
    const shentsize = r.u16(base + 6);
    let shnum = r.u16(base + 8);
    let shstrndx = r.u16(base + 10);
    this.header = { is64, littleEndian, type, machine, entry };

    // Extended numbering: counts that do not fit 16 bits live in section header 0.
    if (shoff !== 0 && (shnum === 0 || shstrndx === 0xffff || phnum === 0xffff)) {
      const s0 = shoff;
      load?.(s0, 64);
      if (shnum === 0) shnum = Number(is64 ? r.u64(s0 + 32) : BigInt(r.u32(s0 + 20)));
      if (shstrndx === 0xffff) shstrndx = r.u32(s0 + (is64 ? 40 : 24));
      if (phnum === 0xffff) phnum = r.u32(s0 + (is64 ? 44 : 28));
    }

    load?.(phoff, phnum * phentsize);
    if (shoff !== 0) load?.(shoff, Math.max(1, shnum) * shentsize);
    const programHeaders: ProgramHeader[] = [];
    for (let i = 0; i < phnum; i++) {
      const o = phoff + i * phentsize;
      if (is64) {
        programHeaders.push({
          type: r.u32(o),
          flags: r.u32(o + 4),
          offset: r.u64(o + 8),
          vaddr: r.u64(o + 16),
          fileSize: r.u64(o + 32),
          memSize: r.u64(o + 40),
          align: r.u64(o + 48),
        });
      } else {
        programHeaders.push({
          type: r.u32(o),
          offset: BigInt(r.u32(o + 4)),
          vaddr: BigInt(r.u32(o + 8)),
          fileSize: BigInt(r.u32(o + 16)),
          memSize: BigInt(r.u32(o + 20)),
          flags: r.u32(o + 24),
          align: BigInt(r.u32(o + 28)),
        });
      }
    }
    this.programHeaders = programHeaders;

    const raw: Omit<SectionHeader, 'name'>[] = [];
    const nameOffsets: number[] = [];
    for (let i = 0; i < (shoff === 0 ? 0 : shnum); i++) {
      const o = shoff + i * shentsize;
      nameOffsets.push(r.u32(o));
      if (is64) {
        raw.push({
          index: i,
          type: r.u32(o + 4),
          flags: r.u64(o + 8),
          addr: r.u64(o + 16),
          offset: Number(r.u64(o + 24)),
          size: Number(r.u64(o + 32)),
          link: r.u32(o + 40),
          entSize: Number(r.u64(o + 56)),
        });
      } else {
        raw.push({
          index: i,
          type: r.u32(o + 4),
          flags: BigInt(r.u32(o + 8)),
          addr: BigInt(r.u32(o + 12)),
          offset: r.u32(o + 16),
          size: r.u32(o + 20),
          link: r.u32(o + 24),
          entSize: r.u32(o + 36),
        });
      }
    }
    const names = raw[shstrndx];
    if (names && names.type !== SHT_NOBITS) load?.(names.offset, names.size);
    this.sections = raw.map((s, i) => ({
      ...s,
      name: names && names.type !== SHT_NOBITS ? r.cstring(names.offset + nameOffsets[i]) : '',
    }));
  }

  get isPositionIndependent(): boolean {
    return this.header.type === ET_DYN;
  }

  /** Lowest PT_LOAD p_vaddr, page-truncated by its alignment: what a load bias is measured against. */
  get firstLoadVaddr(): bigint {
    const loads = this.programHeaders.filter((p) => p.type === PT_LOAD);
    if (loads.length === 0) return 0n;
    return loads.reduce((min, p) => (p.vaddr < min ? p.vaddr : min), loads[0].vaddr);
  }

  section(name: string): SectionHeader | undefined {
    return this.sections.find((s) => s.name === name);
  }

  /** Section contents, decompressed when SHF_COMPRESSED (or the legacy `.zdebug_*` form). Undefined when absent or NOBITS. */
  sectionData(name: string): Uint8Array | undefined {
    if (this.sectionCache.has(name)) return this.sectionCache.get(name);
    let data: Uint8Array | undefined;
    const header = this.section(name);
    if (header) {
      data = this.sectionBytes(header);
    } else if (name.startsWith('.debug_')) {
      const legacy = this.section('.z' + name.slice(1));
      if (legacy) data = this.legacyZdebug(legacy);
    }
    this.sectionCache.set(name, data);
    return data;
  }

  sectionBytes(header: SectionHeader): Uint8Array | undefined {
    if (header.type === SHT_NOBITS) return undefined;
    if (header.offset + header.size > this.bytes.length) {
      throw new ElfFormatError(`section ${header.name} (${header.size} bytes at ${header.offset}) is past the end of the file`);
    }
    this.load?.(header.offset, header.size);
    const raw = this.bytes.subarray(header.offset, header.offset + header.size);
    if ((header.flags & BigInt(SHF_COMPRESSED)) === 0n) return raw;
    // Elf{32,64}_Chdr: ch_type, (ch_reserved), ch_size, ch_addralign, then the zlib stream.
    const r = new ByteReader(raw, this.header.littleEndian);
    const compressionType = r.u32(0);
    const size = Number(this.header.is64 ? r.u64(8) : BigInt(r.u32(4)));
    const headerSize = this.header.is64 ? 24 : 12;
    if (compressionType !== ELFCOMPRESS_ZLIB) {
      throw new ElfFormatError(`section ${header.name} uses compression type ${compressionType}; only zlib (1) is supported`);
    }
    return this.decompress(header.name, raw.subarray(headerSize), size);
  }

  /** A symbol or string table's bytes: read apart from `bytes` when the reading layer can (and it is stored plain). */
  private symbolTableBytes(header: SectionHeader): Uint8Array | undefined {
    if (!this.readApart || header.type === SHT_NOBITS || (header.flags & BigInt(SHF_COMPRESSED)) !== 0n) return this.sectionBytes(header);
    if (header.offset + header.size > this.bytes.length) return this.sectionBytes(header); // its error
    const bytes = this.readApart(header.offset, header.size);
    this.apartAt.set(bytes, { offset: header.offset, size: header.size });
    return bytes;
  }

  /**
   * A reader of the string table `bytes` (as symbolColumns read it apart from this file) that reads each name from the
   * file when asked, so the table itself need not be held; undefined for bytes not read so.
   */
  stringTableReader(bytes: Uint8Array): StringTableReader | undefined {
    const at = this.apartAt.get(bytes);
    return at && this.fileStringTable(at.offset, at.size);
  }

  /** A reader of the string table at file offset `tableOffset` (`size` bytes), each name read from the file when asked. */
  fileStringTable(tableOffset: number, size: number): StringTableReader | undefined {
    const readApart = this.readApart;
    if (!readApart || tableOffset + size > this.bytes.length) return undefined;
    return {
      offset: tableOffset,
      size,
      nameAt: (offset) => {
        if (offset > size) throw new ElfFormatError(`string at offset ${offset} is past the end of its table (${size} bytes)`);
        // Most names are shorter than a first read; a longer one is read again, twice as far, until its NUL.
        for (let length = NAME_READ_BYTES; ; length *= 2) {
          const chunk = readApart(tableOffset + offset, Math.min(length, size - offset));
          const end = chunk.indexOf(0);
          if (end >= 0 || offset + chunk.length >= size) return utf8.decode(end >= 0 ? chunk.subarray(0, end) : chunk);
        }
      },
      whole: () => readApart(tableOffset, size),
    };
  }

  private legacyZdebug(header: SectionHeader): Uint8Array | undefined {
    const raw = this.sectionBytes(header);
    if (!raw) return undefined;
    // "ZLIB" then a big-endian u64 uncompressed size.
    if (raw.length < 12 || utf8.decode(raw.subarray(0, 4)) !== 'ZLIB') return raw;
    const size = Number(new DataView(raw.buffer, raw.byteOffset + 4, 8).getBigUint64(0, false));
    return this.decompress(header.name, raw.subarray(12), size);
  }

  private decompress(name: string, stream: Uint8Array, expectedSize: number): Uint8Array {
    if (!this.inflate) throw new ElfFormatError(`section ${name} is compressed and no inflate function was provided`);
    let out: Uint8Array;
    try {
      out = this.inflate(stream);
    } catch (error) {
      throw new ElfFormatError(`section ${name}: zlib data is corrupt (${(error as Error).message})`);
    }
    if (out.length !== expectedSize) {
      throw new ElfFormatError(`section ${name}: decompressed to ${out.length} bytes, header says ${expectedSize}`);
    }
    return out;
  }

  /**
   * Function and object symbols from .symtab and .dynsym (undefined and section symbols left out).
   * Untyped labels count as functions where perf counts them (symbol-elf.c, elf_sym__is_label):
   * named, defined in a text section, not absolute, not hidden or internal. Hand-written assembly
   * has such labels (ld.so's `_start`), and perf names the samples that land under them.
   */
  symbols(): readonly ElfSymbol[] {
    if (this.symbolCache) return this.symbolCache;
    const columns = this.symbolColumns();
    columns.readNamesWhole();
    const out: ElfSymbol[] = new Array<ElfSymbol>(columns.count);
    for (let i = 0; i < columns.count; i++) out[i] = columns.symbolAt(i);
    this.symbolCache = out;
    return out;
  }

  /**
   * The symbols symbols() lists, in the same order, as columns: no object, BigInt or name per symbol until one is
   * asked for (symbolAt, nameAt). A large executable's hundred thousand symbols as objects took most of its first
   * lookup; an address lookup needs only their addresses, sizes and kinds, and the names of the few it finds.
   * Built anew on each call and not kept: a function index keeps only what it built from them, so node's columns
   * (a few MB, and the tables read apart) go once its index is built.
   */
  symbolColumns(): SymbolColumns {
    const tables = this.sections.filter((s) => s.type === SHT_SYMTAB || s.type === SHT_DYNSYM);
    const sources: { data: Uint8Array; strings: Uint8Array; entSize: number; symtab: boolean }[] = [];
    let capacity = 0;
    for (const table of tables) {
      const data = this.symbolTableBytes(table);
      const strings = this.sections[table.link];
      if (!data || !strings) continue;
      const strData = this.symbolTableBytes(strings);
      if (!strData) continue;
      const entSize = table.entSize || (this.header.is64 ? 24 : 16);
      if (entSize < (this.header.is64 ? 24 : 16)) throw new ElfFormatError(`symbol table ${table.name} has entries of ${entSize} bytes`);
      sources.push({ data, strings: strData, entSize, symtab: table.type === SHT_SYMTAB });
      capacity += Math.floor(data.length / entSize);
    }
    // Per section: whether its name says text (where perf counts untyped labels as functions).
    const inText = this.sections.map((s) => s.name.includes('text'));
    const valueHigh = new Uint32Array(capacity);
    const valueLow = new Uint32Array(capacity);
    const size = new Float64Array(capacity);
    const info = new Uint8Array(capacity);
    const table = new Uint8Array(capacity);
    const symtab = new Uint8Array(capacity);
    const nameOffset = new Uint32Array(capacity);
    const { is64, littleEndian: le } = this.header;
    const rows = { valueHigh, valueLow, size, info, table, symtab, nameOffset };
    let count = 0;
    for (let t = 0; t < sources.length; t++) count = readSymbolRows(sources[t].data, sources[t].entSize, t, sources[t].symtab, is64, le, inText, rows, count);
    // Names are cut one by one while few are asked for (a lookup names a few thousand functions of a table of a
    // hundred thousand); symbols(), which names every row, reads each table whole once instead.
    const readers: ((offset: number) => string)[] = [];
    const nameAt = (i: number): string => {
      const t = table[i];
      const whole = readers[t];
      if (whole) return whole(nameOffset[i]);
      const strings = sources[t].strings;
      const offset = nameOffset[i];
      if (offset > strings.length) throw new ElfFormatError(`string at offset ${offset} is past the end of its table (${strings.length} bytes)`);
      let end = strings.indexOf(0, offset);
      if (end < 0) end = strings.length;
      return utf8.decode(strings.subarray(offset, end));
    };
    /** Per suffix asked, per table: 1 some name ends with it, -1 none does, 0 not looked yet. */
    const suffixPresent = new Map<string, Int8Array>();
    const readWhole = (): void => {
      for (let t = 0; t < sources.length; t++) readers[t] ??= stringTableReader(sources[t].strings, le);
    };
    const columns: SymbolColumns = {
      count,
      valueHigh,
      valueLow,
      size,
      info,
      symtab,
      readNamesWhole: readWhole,
      nameAt,
      nameTableOf: (i) => sources[table[i]].strings,
      nameOffsetOf: (i) => nameOffset[i],
      nameEndsWith: (i, suffix) => {
        // Most tables hold no name with the suffix at all (no `@plt` in a symbol table): found out once per table.
        let present = suffixPresent.get(suffix);
        if (!present) suffixPresent.set(suffix, (present = new Int8Array(sources.length)));
        const t = table[i];
        if (present[t] === 0) present[t] = holdsSuffix(sources[t].strings, suffix) ? 1 : -1;
        if (present[t] < 0) return false;
        const strings = sources[table[i]].strings;
        let end = strings.indexOf(0, nameOffset[i]);
        if (end < 0) end = strings.length;
        if (end - nameOffset[i] < suffix.length) return false;
        for (let k = 0; k < suffix.length; k++) if (strings[end - suffix.length + k] !== suffix.charCodeAt(k)) return false;
        return true;
      },
      symbolAt: (i) => {
        const symType = info[i] & 0xf;
        const bind = info[i] >> 4;
        return {
          name: nameAt(i),
          value: (BigInt(valueHigh[i]) << 32n) | BigInt(valueLow[i]),
          size: size[i],
          kind: symType === STT_OBJECT ? 'object' : 'function',
          label: symType === STT_NOTYPE,
          binding: bind === 0 ? 'local' : bind === 2 ? 'weak' : 'global',
          table: symtab[i] ? 'symtab' : 'dynsym',
        };
      },
    };
    return columns;
  }

  /**
   * The dynamic relocations of an x86_64 object (.rela.dyn), keyed by the link-time address they
   * write: R_X86_64_RELATIVE ones with the addend (the loaded value is load bias + addend), others as
   * undefined (their value depends on other objects). What a RELRO page holds once ld.so is done.
   */
  dynamicRelocations(): ReadonlyMap<bigint, bigint | undefined> {
    if (this.relocationCache) return this.relocationCache;
    const out = new Map<bigint, bigint | undefined>();
    const section = this.sections.find((s) => s.name === '.rela.dyn' && s.type === SHT_RELA);
    const data = section && this.header.is64 && this.header.machine === EM_X86_64_MACHINE ? this.sectionBytes(section) : undefined;
    if (section && data) {
      const r = new ByteReader(data, this.header.littleEndian);
      const size = section.entSize || 24;
      for (let o = 0; o + size <= data.length; o += size) {
        const type = Number(r.u64(o + 8) & 0xffffffffn);
        out.set(r.u64(o), type === R_X86_64_RELATIVE ? BigInt.asIntN(64, r.u64(o + 16)) : undefined);
      }
    }
    this.relocationCache = out;
    return out;
  }

  /**
   * `name@plt` entries for the PLT stubs, which have no symbols of their own (perf and objdump name
   * them the same way). Each 16-byte stub jumps through a GOT slot, `jmp *disp32(%rip)` (`ff 25`,
   * maybe after endbr64/bnd prefixes with IBT's `.plt.sec`); the `.rela.plt` relocation of that slot
   * names the function. Matching by GOT slot rather than by position keeps libc right, where
   * IRELATIVE relocations are interleaved. x86_64 only; IRELATIVE slots (no symbol) stay unnamed.
   */
  pltSymbols(): readonly ElfSymbol[] {
    const relocations = this.sections.find((s) => (s.name === '.rela.plt' && s.type === SHT_RELA) || (s.name === '.rel.plt' && s.type === SHT_REL));
    const secondary = this.sections.find((s) => s.name === '.plt.sec');
    const plt = secondary ?? this.sections.find((s) => s.name === '.plt');
    if (!relocations || !plt || this.header.machine !== EM_X86_64_MACHINE || !this.header.is64) return [];
    const dynsym = this.sections[relocations.link];
    const strings = dynsym ? this.sections[dynsym.link] : undefined;
    const relData = this.sectionBytes(relocations);
    const symData = dynsym ? this.symbolTableBytes(dynsym) : undefined;
    const strData = strings ? this.symbolTableBytes(strings) : undefined;
    const code = this.sectionBytes(plt);
    if (!relData || !symData || !strData || !code) return [];
    const le = this.header.littleEndian;
    const r = new ByteReader(relData, le);
    const symbols = new ByteReader(symData, le);
    const names = new ByteReader(strData, le);
    const symEntSize = dynsym.entSize || 24;
    const relEntSize = relocations.entSize || (relocations.type === SHT_RELA ? 24 : 16);
    const nameBySlot = new Map<bigint, string>();
    for (let o = 0; o + relEntSize <= relData.length; o += relEntSize) {
      const symIndex = Number(r.u64(o + 8) >> 32n);
      if (symIndex === 0 || (symIndex + 1) * symEntSize > symData.length) continue;
      const name = names.cstring(symbols.u32(symIndex * symEntSize));
      if (name) nameBySlot.set(r.u64(o), name);
    }
    const c = new ByteReader(code, le);
    const out: ElfSymbol[] = [];
    // .plt starts with a 16-byte header (push/jmp into the resolver); .plt.sec has none.
    for (let entry = secondary ? 0 : PLT_ENTRY_SIZE; entry + PLT_ENTRY_SIZE <= code.length; entry += PLT_ENTRY_SIZE) {
      for (let i = entry; i + 6 <= entry + PLT_ENTRY_SIZE; i++) {
        if (code[i] !== 0xff || code[i + 1] !== 0x25) continue;
        const displacement = BigInt(c.u32(i + 2) | 0);
        const name = nameBySlot.get(plt.addr + BigInt(i + 6) + displacement);
        if (name) {
          out.push({
            name: `${name}@plt`,
            value: plt.addr + BigInt(entry),
            size: PLT_ENTRY_SIZE,
            kind: 'function',
            label: false,
            binding: 'global',
            table: 'dynsym',
          });
        }
        break;
      }
    }
    return out;
  }

  /** Contents of the GNU build-id note as lowercase hex, or undefined. */
  buildId(): string | undefined {
    const noteBlobs: Uint8Array[] = [];
    for (const s of this.sections)
      if (s.type === SHT_NOTE) {
        const d = this.sectionBytes(s);
        if (d) noteBlobs.push(d);
      }
    if (noteBlobs.length === 0) {
      for (const p of this.programHeaders) {
        if (p.type !== PT_NOTE) continue;
        const start = Number(p.offset);
        this.load?.(start, Math.max(0, Math.min(this.bytes.length, start + Number(p.fileSize)) - start));
        noteBlobs.push(this.bytes.subarray(start, Math.min(this.bytes.length, start + Number(p.fileSize))));
      }
    }
    for (const blob of noteBlobs) {
      const r = new ByteReader(blob, this.header.littleEndian);
      let o = 0;
      while (o + 12 <= blob.length) {
        const nameSize = r.u32(o);
        const descSize = r.u32(o + 4);
        const type = r.u32(o + 8);
        const nameStart = o + 12;
        const descStart = nameStart + align4(nameSize);
        if (descStart + descSize > blob.length) break;
        const name = utf8.decode(blob.subarray(nameStart, nameStart + Math.max(0, nameSize - 1)));
        if (name === 'GNU' && type === NT_GNU_BUILD_ID) return toHex(blob.subarray(descStart, descStart + descSize));
        o = descStart + align4(descSize);
      }
    }
    return undefined;
  }

  /** `.gnu_debuglink`: the separate debug file's name and its CRC32. */
  debugLink(): { file: string; crc: number } | undefined {
    const data = this.sectionData('.gnu_debuglink');
    if (!data) return undefined;
    const r = new ByteReader(data, this.header.littleEndian);
    const file = r.cstring(0);
    const crcOffset = align4(utf8Encoder.encode(file).length + 1);
    return { file, crc: r.u32(crcOffset) };
  }

  /** True when the file carries DWARF line or info (possibly compressed). */
  hasDwarf(): boolean {
    return ['.debug_info', '.debug_line', '.zdebug_info', '.zdebug_line'].some((n) => {
      const s = this.section(n);
      return s !== undefined && s.type !== SHT_NOBITS;
    });
  }

  /** File offset → link-time virtual address through the PT_LOAD covering it. */
  fileOffsetToVaddr(offset: bigint): bigint | undefined {
    for (const p of this.programHeaders) {
      if (p.type === PT_LOAD && offset >= p.offset && offset < p.offset + p.fileSize) return offset - p.offset + p.vaddr;
    }
    return undefined;
  }
}

/** The columns symbolColumns fills. */
interface SymbolRows {
  readonly valueHigh: Uint32Array;
  readonly valueLow: Uint32Array;
  readonly size: Float64Array;
  readonly info: Uint8Array;
  readonly table: Uint8Array;
  readonly symtab: Uint8Array;
  readonly nameOffset: Uint32Array;
}

/**
 * Appends the rows of symbol table `t` (`data`, entries of `entSize` bytes) that symbols() lists to `rows` from row
 * `count` on; returns the new count. A function of its own: V8 optimizes a small hot loop early, and the loop inside
 * symbolColumns ran unoptimized for most of a large table.
 */
function readSymbolRows(
  data: Uint8Array,
  entSize: number,
  t: number,
  isSymtab: boolean,
  is64: boolean,
  le: boolean,
  inText: readonly boolean[],
  rows: SymbolRows,
  count: number,
): number {
  const { valueHigh, valueLow, size, info, table, symtab, nameOffset } = rows;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let o = entSize; o + entSize <= data.length; o += entSize) {
    let name: number;
    let high: number;
    let low: number;
    let bytes: number;
    let stInfo: number;
    let other: number;
    let shndx: number;
    if (is64) {
      name = view.getUint32(o, le);
      stInfo = data[o + 4];
      other = data[o + 5];
      shndx = view.getUint16(o + 6, le);
      low = view.getUint32(o + (le ? 8 : 12), le);
      high = view.getUint32(o + (le ? 12 : 8), le);
      bytes = view.getUint32(o + (le ? 20 : 16), le) * 4294967296 + view.getUint32(o + (le ? 16 : 20), le);
    } else {
      name = view.getUint32(o, le);
      high = 0;
      low = view.getUint32(o + 4, le);
      bytes = view.getUint32(o + 8, le);
      stInfo = data[o + 12];
      other = data[o + 13];
      shndx = view.getUint16(o + 14, le);
    }
    const symType = stInfo & 0xf;
    if (shndx === 0) continue; // undefined: lives in another object
    if (symType === STT_NOTYPE) {
      const visibility = other & 3;
      if (name === 0 || shndx >= SHN_LORESERVE || !inText[shndx] || visibility === STV_HIDDEN || visibility === STV_INTERNAL) continue;
    } else if (symType !== STT_FUNC && symType !== STT_OBJECT && symType !== STT_GNU_IFUNC) {
      continue;
    }
    valueHigh[count] = high;
    valueLow[count] = low;
    size[count] = bytes;
    info[count] = stInfo;
    table[count] = t;
    symtab[count] = isSymtab ? 1 : 0;
    nameOffset[count] = name;
    count++;
  }
  return count;
}

const utf8Encoder = new TextEncoder();

/**
 * Names out of a string table by offset. A table of plain ASCII (nearly every one) is decoded once into one string
 * and each name sliced out of it: decoding each of a large executable's hundred thousand names on its own took most
 * of a cold object's cost. Other tables are decoded name by name as UTF-8.
 */
function stringTableReader(table: Uint8Array, littleEndian: boolean): (offset: number) => string {
  let ascii = true;
  for (let i = 0; i < table.length; i++)
    if (table[i] >= 0x80) {
      ascii = false;
      break;
    }
  if (!ascii) {
    const reader = new ByteReader(table, littleEndian);
    return (offset) => reader.cstring(offset);
  }
  const text = latin1.decode(table);
  return (offset) => {
    if (offset < 0 || offset > text.length) throw new ElfFormatError(`string at offset ${offset} is past the end of its table (${text.length} bytes)`);
    const end = text.indexOf('\0', offset);
    return text.slice(offset, end < 0 ? text.length : end);
  };
}

const latin1 = new TextDecoder('latin1');

/** Whether some NUL-terminated string of `table` ends with ASCII `suffix`. */
function holdsSuffix(table: Uint8Array, suffix: string): boolean {
  const first = suffix.charCodeAt(0);
  for (let at = table.indexOf(first); at >= 0; at = table.indexOf(first, at + 1)) {
    let k = 1;
    while (k < suffix.length && table[at + k] === suffix.charCodeAt(k)) k++;
    if (k === suffix.length && (at + k === table.length || table[at + k] === 0)) return true;
  }
  return false;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** CRC32 (IEEE, as .gnu_debuglink uses) of a byte array. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) {
    crc ^= bytes[i];
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}
