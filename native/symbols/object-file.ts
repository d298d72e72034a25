// The reading layer: loads an ELF file from disk (node:fs), inflates compressed sections (node:zlib),
// finds its separate debug file (build-id directory, then .gnu_debuglink next to it, in .debug/, and
// under /usr/lib/debug), and builds the DWARF line table and variable list lazily from whichever file
// has the DWARF. The byte parsers it drives (elf.ts, dwarf-*.ts) stay free of node imports.

import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import * as path from 'node:path';
import { ElfFile, ElfFormatError, type ElfSymbol, type SymbolColumns, crc32 } from './elf';
import {
  FunctionIndex,
  StoredFunctionIndex,
  type FunctionLookup,
  type FunctionSource,
  type FunctionSymbol,
  type StoredFunctionColumns,
} from './function-index';
import { loadFunctionColumns, storeFunctionColumns } from './symbol-cache';
import { prefetchedFunctions } from './prefetch';
import { DwarfInfo, codeUnitOffsets, type DwarfSections, type DwarfVariable } from './dwarf-info';
import { LineTable, type LineSections, type LineUnit } from './dwarf-line';
import { AddressRanges } from './dwarf-aranges';
import { CallFrameInfo, type CfiSection } from './cfi';
import { VDSO_NAME } from '../abi/object-names';

export const DEFAULT_DEBUG_ROOT = '/usr/lib/debug';

const inflate = (data: Uint8Array): Uint8Array => inflateSync(data);

/**
 * An ELF file read lazily: an image of the file's size (untouched pages cost no memory) filled page run by page run
 * as the parser asks for ranges — the headers, then only the sections used (symbol tables, notes, the DWARF a line
 * lookup needs). A 100 MB executable whose symbols are asked for costs its .symtab and .strtab, not 100 MB read.
 * Each fill opens the file again and checks it is the file first opened (same size and mtime): one replaced on disk
 * meanwhile is an ElfFormatError, never a mix of two files' bytes.
 */
export function readElf(filePath: string): ElfFile {
  return readElfWithIdentity(filePath).elf;
}

/** readElf, and the identity (size, mtime, inode) of the file it reads: what its bytes are checked against. */
export function readElfWithIdentity(filePath: string): { elf: ElfFile; identity: string } {
  const fd = openSync(filePath, 'r');
  let identity: string;
  let image: Uint8Array;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ElfFormatError(`${filePath} is not a regular file`);
    identity = `${st.size}\0${st.mtimeMs}\0${st.ino}`;
    image = new Uint8Array(st.size);
  } finally {
    closeSync(fd);
  }
  /**
   * Runs `read` on the file opened again, after checking it is still the file first read (size, mtime, inode). The
   * descriptor is kept for the reads that follow until this thread next yields (then closed): names read one by one
   * as lookups find them (stringTableReader) cost a read each, not an open, a stat and a close each.
   */
  let kept = -1;
  const fromSameFile = (read: (fd: number) => void): void => {
    if (kept < 0) {
      const again = openSync(filePath, 'r');
      try {
        const st = fstatSync(again);
        if (`${st.size}\0${st.mtimeMs}\0${st.ino}` !== identity) throw new ElfFormatError(`${filePath} changed on disk while it was read`);
      } catch (error) {
        closeSync(again);
        throw error;
      }
      kept = again;
      setImmediate(() => {
        closeSync(kept);
        kept = -1;
      }).unref();
    }
    read(kept);
  };
  const readInto = (fd: number, into: Uint8Array, from: number, to: number, fileOffset: number): void => {
    for (let at = from; at < to;) {
      const got = readSync(fd, into, at, to - at, fileOffset + at - from);
      if (got === 0) throw new ElfFormatError(`${filePath} ended at ${fileOffset + at - from} bytes while it was read`);
      at += got;
    }
  };
  const pages = new Uint8Array(Math.ceil(image.length / LOAD_PAGE));
  const load = (offset: number, size: number): void => {
    const first = Math.max(0, Math.floor(offset / LOAD_PAGE));
    const last = Math.min(pages.length, Math.ceil(Math.min(image.length, offset + size) / LOAD_PAGE));
    let page = first;
    while (page < last && pages[page]) page++;
    if (page >= last) return;
    fromSameFile((fd) => {
      while (page < last) {
        if (pages[page]) {
          page++;
          continue;
        }
        let end = page;
        while (end < last && !pages[end]) end++;
        const from = page * LOAD_PAGE;
        readInto(fd, image, from, Math.min(image.length, end * LOAD_PAGE), from);
        pages.fill(1, page, end);
        page = end;
      }
    });
  };
  // Symbol and string tables in buffers of their own (see ElfFile): bytes the image already holds are copied from it.
  const readApart = (offset: number, size: number): Uint8Array => {
    const apart = new Uint8Array(size);
    if (size === 0) return apart;
    const first = Math.floor(offset / LOAD_PAGE);
    const last = Math.ceil((offset + size) / LOAD_PAGE);
    if (pages.subarray(first, last).every((loaded) => loaded === 1)) apart.set(image.subarray(offset, offset + size));
    else fromSameFile((fd) => readInto(fd, apart, 0, size, offset));
    return apart;
  };
  return { elf: new ElfFile(image, inflate, load, readApart), identity };
}

/** Lazily read ELF images are filled in runs of whole 64 KiB pages. */
const LOAD_PAGE = 64 * 1024;

/** Where a separate debug file was found and why it was accepted. */
export interface DebugFileMatch {
  readonly path: string;
  readonly via: 'build-id' | 'debuglink';
}

/**
 * Looks for the separate debug file of `elf` (read from `filePath`), in gdb's order: the build-id tree
 * `<root>/.build-id/ab/cdef....debug`, then the .gnu_debuglink name in the file's directory, its `.debug/`
 * subdirectory and `<root>/<directory>/`. A debuglink candidate must match the link's CRC32.
 */
export function findDebugFile(filePath: string, elf: ElfFile, debugRoot = DEFAULT_DEBUG_ROOT): DebugFileMatch | undefined {
  const buildId = elf.buildId();
  if (buildId && buildId.length > 2) {
    const candidate = path.join(debugRoot, '.build-id', buildId.slice(0, 2), `${buildId.slice(2)}.debug`);
    if (isFile(candidate)) {
      try {
        if (readElf(candidate).buildId() === buildId) return { path: candidate, via: 'build-id' };
      } catch {
        /* not a readable ELF: keep looking */
      }
    }
  }
  const link = elf.debugLink();
  if (link) {
    const dir = path.dirname(path.resolve(filePath));
    for (const candidate of [path.join(dir, link.file), path.join(dir, '.debug', link.file), path.join(debugRoot, dir, link.file)]) {
      if (candidate === path.resolve(filePath) || !isFile(candidate)) continue;
      if (crc32(readFileSync(candidate)) === link.crc) return { path: candidate, via: 'debuglink' };
    }
  }
  return undefined;
}

/** The sections every read of an object's DWARF units needs (both dwarfInfo and the units-only read); undefined without .debug_info or .debug_abbrev. */
function unitSections(e: ElfFile): DwarfSections | undefined {
  const info = e.sectionData('.debug_info');
  const abbrev = e.sectionData('.debug_abbrev');
  if (!info || !abbrev) return undefined;
  return {
    info,
    abbrev,
    str: e.sectionData('.debug_str'),
    lineStr: e.sectionData('.debug_line_str'),
    strOffsets: e.sectionData('.debug_str_offsets'),
    addr: e.sectionData('.debug_addr'),
    littleEndian: e.header.littleEndian,
  };
}

/** path.resolve, for where a parameter named `path` hides the module. */
const absolute = (file: string): string => path.resolve(file);

function isFile(p: string): boolean {
  try {
    return existsSync(p) && statSync(p).isFile();
  } catch {
    /* missing or unreadable: not a file we can use */ return false;
  }
}

export type { FunctionSymbol } from './function-index';

/** One executable or shared object with everything symbols need, parsed on first use. */
export class ObjectFile {
  readonly elf: ElfFile;
  /** The file holding the DWARF: a separate debug file when found, else the object itself (if it has DWARF). */
  readonly dwarfElf: ElfFile | undefined;
  readonly debugFile: DebugFileMatch | undefined;
  private lines: LineTable | undefined;
  /** .debug_aranges once read (null: none or unreadable), and the line tables of single units read through it. */
  private aranges: { ranges: AddressRanges; complete: boolean } | null | undefined;
  private readonly unitLines = new Map<number, LineTable | undefined>();
  private info: DwarfInfo | undefined;
  private functions: FunctionLookup | undefined;
  /** Whether `functions` was loaded from the disk cache. */
  private functionsFromDisk = false;
  /**
   * What the on-disk function cache is keyed by (undefined for an image that is no file: the vDSO): the build-id, and
   * the identity of every file the index is built from. Not the build-id alone: GNU ld's hash does not cover .symtab,
   * so two builds that differ only in a function's name share one (test/symbols/symbol-cache.test.ts rebuilds that).
   */
  private readonly functionCacheKey: string | undefined;
  private frames: CallFrameInfo | null | undefined;

  /** `image`: the object's bytes when it is not a file (the vDSO), else read from `path`. */
  constructor(
    readonly path: string,
    debugRoot = DEFAULT_DEBUG_ROOT,
    image?: Uint8Array,
  ) {
    let identity: string | undefined;
    if (image) this.elf = new ElfFile(image, inflate);
    else {
      const read = readElfWithIdentity(path);
      this.elf = read.elf;
      identity = read.identity;
    }
    let debugIdentity = '';
    if (this.elf.hasDwarf() || image) {
      this.dwarfElf = this.elf;
    } else {
      this.debugFile = findDebugFile(path, this.elf, debugRoot);
      if (this.debugFile) {
        const debugRead = readElfWithIdentity(this.debugFile.path);
        debugIdentity = `${absolute(this.debugFile.path)}\0${debugRead.identity}`;
        if (debugRead.elf.hasDwarf()) this.dwarfElf = debugRead.elf;
      }
    }
    // A file read through /proc (a mapped file unlinked since, see Symbolizer.locateReplaced) is one process's, for as
    // long as it runs: not worth an entry in the disk cache, which would keep one per pid.
    if (identity !== undefined && !absolute(path).startsWith('/proc/'))
      this.functionCacheKey = `functions\0${this.elf.buildId() ?? ''}\0${absolute(path)}\0${identity}\0${debugIdentity}`;
  }

  get buildId(): string | undefined {
    return this.elf.buildId();
  }

  dwarfInfo(): DwarfInfo | undefined {
    if (this.info || !this.dwarfElf) return this.info;
    const e = this.dwarfElf;
    const units = unitSections(e);
    if (!units) return undefined;
    this.info = new DwarfInfo({
      ...units,
      loclists: e.sectionData('.debug_loclists'),
      loc: e.sectionData('.debug_loc'),
      rnglists: e.sectionData('.debug_rnglists'),
      ranges: e.sectionData('.debug_ranges'),
    });
    return this.info;
  }

  /** The compile units' own DIEs only (what the line tables need), when the whole tree was not read already. */
  private dwarfUnits(unitOffsets?: readonly number[]): DwarfInfo | undefined {
    const units = this.dwarfElf && unitSections(this.dwarfElf);
    return units && new DwarfInfo(units, true, unitOffsets);
  }

  private lineSections(): LineSections | undefined {
    const e = this.dwarfElf;
    const line = e?.sectionData('.debug_line');
    return e && line ? { line, lineStr: e.sectionData('.debug_line_str'), str: e.sectionData('.debug_str'), littleEndian: e.header.littleEndian } : undefined;
  }

  /** Every unit's line program, run once. */
  lineTable(): LineTable | undefined {
    if (this.lines || !this.dwarfElf) return this.lines;
    const sections = this.lineSections();
    if (!sections) return undefined;
    let info: DwarfInfo | undefined;
    try {
      info = this.info ?? this.dwarfUnits();
    } catch {
      // .debug_info this reader cannot follow: the line programs still work, only without comp_dir for v2-4.
      info = undefined;
    }
    this.lines = new LineTable(sections, info ? lineUnitsOf(info) : []);
    return this.lines;
  }

  /**
   * Source position of link-time address `vaddr`, as addr2line finds it: the line program of the unit .debug_aranges
   * places the address in, run alone (libc's debug file has 2,063 programs; a profile's frames need a few dozen).
   * Where that cannot answer — no .debug_aranges, units with code it does not name, an address two units claim — the
   * whole table (every program, lineTable()) does.
   */
  lineForAddress(vaddr: bigint): ReturnType<LineTable['lineForAddress']> {
    const ranges = this.lines ? undefined : this.addressRanges();
    if (ranges) {
      const unit = ranges.ranges.unitAt(vaddr);
      // The unit whose ranges hold the address; else (padding after a unit's last function, which its program covers
      // and its ranges do not) the unit of the range before it. Final when the ranges name every unit with code.
      const owner = unit === undefined && ranges.complete ? ranges.ranges.unitBefore(vaddr) : unit;
      if (owner === undefined && ranges.complete) return undefined;
      if (typeof owner === 'number') {
        const table = this.unitLineTable(owner);
        if (table) {
          const hit = table.lineForAddress(vaddr);
          if (hit || ranges.complete) return hit;
        }
      }
    }
    return this.lineTable()?.lineForAddress(vaddr);
  }

  /** .debug_aranges, and whether it names every unit with code (then an address it does not hold has no line). */
  private addressRanges(): { ranges: AddressRanges; complete: boolean } | undefined {
    if (this.aranges === undefined) {
      const e = this.dwarfElf;
      const section = e?.sectionData('.debug_aranges');
      const info = e?.sectionData('.debug_info');
      const abbrev = e?.sectionData('.debug_abbrev');
      try {
        if (e && section && info && abbrev) {
          const ranges = new AddressRanges(section, e.header.littleEndian);
          const complete = codeUnitOffsets(info, abbrev, e.header.littleEndian).every((unit) => ranges.unitOffsets.has(unit));
          this.aranges = { ranges, complete };
        } else this.aranges = null;
      } catch {
        // ranges or units this reader cannot follow: every lookup runs the whole table, as without the section
        this.aranges = null;
      }
    }
    return this.aranges ?? undefined;
  }

  /** The line table of the one unit at .debug_info offset `unitOffset` (undefined when it cannot be read alone). */
  private unitLineTable(unitOffset: number): LineTable | undefined {
    if (!this.unitLines.has(unitOffset)) {
      let table: LineTable | undefined;
      try {
        const sections = this.lineSections();
        const units = this.dwarfUnits([unitOffset]);
        const lineUnits = units ? lineUnitsOf(units) : [];
        // An empty list would make LineTable run every program: only a unit with its own program is run alone.
        table = sections && lineUnits.length === 1 ? new LineTable(sections, lineUnits) : undefined;
      } catch {
        // a unit this reader cannot follow on its own: the whole table answers for it
        table = undefined;
      }
      this.unitLines.set(unitOffset, table);
    }
    return this.unitLines.get(unitOffset);
  }

  variables(): readonly DwarfVariable[] {
    return this.dwarfInfo()?.variables() ?? [];
  }

  /** Source file path of a variable's DW_AT_decl_file, through its unit's line program file list. */
  declFilePath(variable: DwarfVariable): string | undefined {
    if (variable.declFile === undefined || variable.unit.stmtList === undefined) return undefined;
    const program = this.lineTable()?.programs.find((p) => p.offset === variable.unit.stmtList);
    return program?.fileNames[variable.declFile]?.path;
  }

  /**
   * Call frame information for unwinding: the object's own `.eh_frame` (with its `.eh_frame_hdr`
   * search table) and `.debug_frame` from the object or its debug file. Null when it has neither.
   */
  callFrameInfo(): CallFrameInfo | null {
    if (this.frames !== undefined) return this.frames;
    const section = (elf: ElfFile | undefined, name: string): CfiSection | undefined => {
      const header = elf?.section(name);
      const bytes = header ? elf?.sectionData(name) : undefined;
      return header && bytes && bytes.length > 0 ? { bytes, address: header.addr } : undefined;
    };
    const ehFrame = section(this.elf, '.eh_frame');
    const debugFrame = section(this.elf, '.debug_frame') ?? section(this.dwarfElf, '.debug_frame');
    this.frames =
      ehFrame || debugFrame
        ? new CallFrameInfo({
            ehFrame,
            ehFrameHdr: ehFrame ? section(this.elf, '.eh_frame_hdr') : undefined,
            debugFrame,
            littleEndian: this.elf.header.littleEndian,
            addressSize: this.elf.header.is64 ? 8 : 4,
          })
        : null;
    return this.frames;
  }

  /** ELF symbols of the object, with the debug file's symtab added when the object itself was stripped of it. */
  symbols(): readonly ElfSymbol[] {
    const own = this.elf.symbols();
    if (this.dwarfElf && this.dwarfElf !== this.elf && !own.some((s) => s.table === 'symtab')) {
      return [...own, ...this.dwarfElf.symbols().filter((s) => s.table === 'symtab')];
    }
    return own;
  }

  /**
   * The functions by address as perf names them (see function-index.ts), built on first use from the symbol tables'
   * columns: the object's own, then its debug file's .symtab when the object was stripped of its own, then PLT stubs.
   */
  /** Whether the function table has been read (a symbolizer's warm-up reads it before the first lookup). */
  get functionsRead(): boolean {
    return this.functions !== undefined;
  }

  /** Whether the function table was loaded from the disk cache (symbol-cache.ts) rather than built from the symbol tables. */
  get functionsFromCache(): boolean {
    return this.functionsFromDisk;
  }

  /**
   * The function index as the disk cache holds it, with the key it is cached by (prefetch-worker.ts hands both to the
   * thread that names frames), except that names still in the object's files are placed there (nameTables), not read
   * again: the thread that takes the columns reads them from there. Throws for an image that is no file (the vDSO: no key).
   */
  functionColumns(): { key: string; functions: StoredFunctionColumns } {
    const key = this.functionCacheKey;
    if (key === undefined) throw new ElfFormatError(`${this.path} is not a file: its function index has no cache key`);
    const index = this.functionIndex();
    return { key, functions: index instanceof FunctionIndex ? index.storedColumns(true) : (index as StoredFunctionIndex).stored };
  }

  private functionIndex(): FunctionLookup {
    if (this.functions) return this.functions;
    const key = this.functionCacheKey;
    const prefetched = key === undefined ? undefined : prefetchedFunctions(absolute(this.path), key);
    const stored = prefetched ?? (key === undefined ? undefined : loadFunctionColumns(key));
    let taken: StoredFunctionIndex | undefined;
    try {
      taken = stored && new StoredFunctionIndex(stored, (file, offset, size) => this.elfOf(file)?.fileStringTable(offset, size));
    } catch (error) {
      // Names placed in a file this object does not read (or past its end): built here instead.
      if (!(error instanceof ElfFormatError)) throw error;
    }
    if (taken) {
      this.functions = taken;
      this.functionsFromDisk = prefetched === undefined;
      return taken;
    }
    const own = this.elf.symbolColumns();
    const sources: FunctionSource[] = [{ columns: own }];
    if (this.dwarfElf && this.dwarfElf !== this.elf && !hasSymtabRow(own)) sources.push({ columns: this.dwarfElf.symbolColumns(), symtabOnly: true });
    sources.push({ symbols: this.elf.pltSymbols() });
    const built = new FunctionIndex(sources);
    // Names read from the file as lookups find them: the string tables (13 MB of node's) are not held for the run,
    // nor copied into the disk cache, whose entry places them in the file (its key holds the file's identity).
    built.readNamesFrom((table) => {
      const own = this.elf.stringTableReader(table);
      if (own) return Object.assign(own, { path: absolute(this.path) });
      const debug = this.debugFile && this.dwarfElf !== this.elf ? this.dwarfElf?.stringTableReader(table) : undefined;
      return debug && Object.assign(debug, { path: absolute(this.debugFile!.path) });
    });
    if (this.functionCacheKey !== undefined) storeFunctionColumns(this.functionCacheKey, () => built.storedColumns(true));
    this.functions = built;
    return built;
  }

  /** The ELF this object reads from `file`: its own, or its separate debug file's (undefined: neither). */
  private elfOf(file: string): ElfFile | undefined {
    if (absolute(file) === absolute(this.path)) return this.elf;
    if (this.debugFile && this.dwarfElf !== this.elf && absolute(file) === absolute(this.debugFile.path)) return this.dwarfElf;
    return undefined;
  }

  /** Function containing link-time address `vaddr`. */
  functionAt(vaddr: bigint): FunctionSymbol | undefined {
    return this.functionIndex().functionAt(vaddr);
  }
}

/** The units of `info` that have a line program, as LineTable runs them. */
function lineUnitsOf(info: DwarfInfo): LineUnit[] {
  return info.units
    .filter((u) => u.stmtList !== undefined)
    .map((u) => ({ stmtList: u.stmtList as number, compDir: u.compDir, name: u.name, addressSize: u.addressSize }));
}

function hasSymtabRow(columns: SymbolColumns): boolean {
  return columns.symtab.subarray(0, columns.count).includes(1);
}

/**
 * The vDSO the kernel maps into every process, read from this process's own mapping: one kernel
 * maps the same image into all of its processes, so it names the vDSO frames (clock_gettime,
 * gettimeofday) of any process recorded on this machine, as perf does with its own copy. Null when
 * this process has no vDSO or /proc/self/mem cannot be read.
 */
let vdso: ObjectFile | null | undefined;

export function openVdsoObject(): ObjectFile | null {
  if (vdso !== undefined) return vdso;
  vdso = null;
  try {
    const line = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .find((entry) => entry.endsWith(` ${VDSO_NAME}`));
    const match = line && /^([0-9a-f]+)-([0-9a-f]+)/.exec(line);
    if (match) {
      const start = Number.parseInt(match[1], 16);
      const image = Buffer.alloc(Number.parseInt(match[2], 16) - start);
      const fd = openSync('/proc/self/mem', 'r');
      try {
        readSync(fd, image, 0, image.length, start);
      } finally {
        closeSync(fd);
      }
      vdso = new ObjectFile(VDSO_NAME, DEFAULT_DEBUG_ROOT, image);
    }
  } catch {
    // no readable vDSO image (seccomp or a masked /proc/self/mem): vDSO frames stay unnamed
    vdso = null;
  }
  return vdso;
}

/**
 * Shared cache for the life of the process (every snapshot of a capture, every session of the editor): one
 * ObjectFile per (path, size, mtime, inode), so a binary rebuilt or replaced on disk is read again. Not per build-id:
 * GNU ld's build-id does not cover .symtab, so two builds that differ only in a function's name share one (the
 * symbol cache test rebuilds exactly that), and an object found by build-id would name the new build by the old.
 */
const cache = new Map<string, ObjectFile>();

export function openObjectFile(filePath: string, debugRoot = DEFAULT_DEBUG_ROOT): ObjectFile {
  const st = statSync(filePath);
  const key = `${path.resolve(filePath)}\0${st.size}\0${st.mtimeMs}\0${st.ino}\0${debugRoot}`;
  let obj = cache.get(key);
  if (!obj) {
    obj = new ObjectFile(filePath, debugRoot);
    cache.set(key, obj);
  }
  return obj;
}
