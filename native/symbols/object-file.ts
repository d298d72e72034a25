// The reading layer: loads an ELF file from disk (node:fs), inflates compressed sections (node:zlib),
// finds its separate debug file (build-id directory, then .gnu_debuglink next to it, in .debug/, and
// under /usr/lib/debug), and builds the DWARF line table and variable list lazily from whichever file
// has the DWARF. The byte parsers it drives (elf.ts, dwarf-*.ts) stay free of node imports.

import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import * as path from 'node:path';
import { ElfFile, type ElfSymbol, crc32 } from './elf';
import { compareAliases, withoutEnclosedLabels } from './best-symbol';
import { DwarfInfo, type DwarfVariable } from './dwarf-info';
import { LineTable } from './dwarf-line';
import { CallFrameInfo, type CfiSection } from './cfi';

export const DEFAULT_DEBUG_ROOT = '/usr/lib/debug';

const inflate = (data: Uint8Array): Uint8Array => inflateSync(data);

export function readElf(filePath: string): ElfFile {
  return new ElfFile(readFileSync(filePath), inflate);
}

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
      } catch { /* not a readable ELF: keep looking */ }
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

function isFile(p: string): boolean {
  try { return existsSync(p) && statSync(p).isFile(); } catch { /* missing or unreadable: not a file we can use */ return false; }
}

export interface FunctionSymbol {
  readonly name: string;
  readonly start: bigint;
  /** Exclusive end: start+size, or the next symbol's start for zero-size symbols (as perf does). */
  readonly end: bigint;
}

/** One executable or shared object with everything symbols need, parsed on first use. */
export class ObjectFile {
  readonly elf: ElfFile;
  /** The file holding the DWARF: a separate debug file when found, else the object itself (if it has DWARF). */
  readonly dwarfElf: ElfFile | undefined;
  readonly debugFile: DebugFileMatch | undefined;
  private lines: LineTable | undefined;
  private info: DwarfInfo | undefined;
  private functions: FunctionSymbol[] | undefined;
  private frames: CallFrameInfo | null | undefined;

  /** `image`: the object's bytes when it is not a file (the vDSO), else read from `path`. */
  constructor(readonly path: string, debugRoot = DEFAULT_DEBUG_ROOT, image?: Uint8Array) {
    this.elf = image ? new ElfFile(image, inflate) : readElf(path);
    if (this.elf.hasDwarf() || image) {
      this.dwarfElf = this.elf;
    } else {
      this.debugFile = findDebugFile(path, this.elf, debugRoot);
      if (this.debugFile) {
        const debugElf = readElf(this.debugFile.path);
        if (debugElf.hasDwarf()) this.dwarfElf = debugElf;
      }
    }
  }

  get buildId(): string | undefined { return this.elf.buildId(); }

  dwarfInfo(): DwarfInfo | undefined {
    if (this.info || !this.dwarfElf) return this.info;
    const e = this.dwarfElf;
    const info = e.sectionData('.debug_info');
    const abbrev = e.sectionData('.debug_abbrev');
    if (!info || !abbrev) return undefined;
    this.info = new DwarfInfo({
      info, abbrev, str: e.sectionData('.debug_str'), lineStr: e.sectionData('.debug_line_str'),
      strOffsets: e.sectionData('.debug_str_offsets'), addr: e.sectionData('.debug_addr'), littleEndian: e.header.littleEndian,
    });
    return this.info;
  }

  lineTable(): LineTable | undefined {
    if (this.lines || !this.dwarfElf) return this.lines;
    const e = this.dwarfElf;
    const line = e.sectionData('.debug_line');
    if (!line) return undefined;
    let info: DwarfInfo | undefined;
    try {
      info = this.dwarfInfo();
    } catch {
      // .debug_info this reader cannot follow: the line programs still work, only without comp_dir for v2-4.
      info = undefined;
    }
    const units = info
      ? info.units.filter((u) => u.stmtList !== undefined).map((u) => ({
        stmtList: u.stmtList as number,
        compDir: u.compDir,
        name: u.name,
        addressSize: u.addressSize,
      }))
      : [];
    this.lines = new LineTable({ line, lineStr: e.sectionData('.debug_line_str'), str: e.sectionData('.debug_str'), littleEndian: e.header.littleEndian }, units);
    return this.lines;
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
    this.frames = ehFrame || debugFrame
      ? new CallFrameInfo({
        ehFrame, ehFrameHdr: ehFrame ? section(this.elf, '.eh_frame_hdr') : undefined, debugFrame,
        littleEndian: this.elf.header.littleEndian, addressSize: this.elf.header.is64 ? 8 : 4,
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

  /** Function symbols sorted by address, with perf's rule for zero-size symbols (they run to the next one). */
  functionSymbols(): readonly FunctionSymbol[] {
    if (this.functions) return this.functions;
    const byStart = new Map<bigint, ElfSymbol>();
    // PLT stubs last: a real symbol at the same address (rare) keeps its name.
    for (const s of [...this.symbols(), ...this.elf.pltSymbols()]) {
      if (s.kind !== 'function' || s.value === 0n) continue;
      if (s.name.endsWith('@plt') && byStart.has(s.value)) continue;
      const existing = byStart.get(s.value);
      // Aliases at one address: keep the name perf would show. Symbols come symtab first, so ties keep symtab's.
      if (!existing || compareAliases(s, existing) > 0) byStart.set(s.value, s);
    }
    const sorted = withoutEnclosedLabels([...byStart.values()].sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)));
    this.functions = sorted.map((s, i) => ({
      name: s.name,
      start: s.value,
      end: s.size > 0 ? s.value + BigInt(s.size) : i + 1 < sorted.length ? sorted[i + 1].value : s.value + 1n,
    }));
    return this.functions;
  }

  /** Function containing link-time address `vaddr`. */
  functionAt(vaddr: bigint): FunctionSymbol | undefined {
    const fns = this.functionSymbols();
    let lo = 0; let hi = fns.length - 1; let best: FunctionSymbol | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (fns[mid].start <= vaddr) { best = fns[mid]; lo = mid + 1; } else hi = mid - 1;
    }
    return best && vaddr < best.end ? best : undefined;
  }
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
    const line = readFileSync('/proc/self/maps', 'utf8').split('\n').find((entry) => entry.endsWith(' [vdso]'));
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
      vdso = new ObjectFile('[vdso]', DEFAULT_DEBUG_ROOT, image);
    }
  } catch {
    // no readable vDSO image (seccomp or a masked /proc/self/mem): vDSO frames stay unnamed
    vdso = null;
  }
  return vdso;
}

/** Shared cache: one ObjectFile per (path, size, mtime), so a rebuilt binary is re-read. */
const cache = new Map<string, ObjectFile>();

export function openObjectFile(filePath: string, debugRoot = DEFAULT_DEBUG_ROOT): ObjectFile {
  const st = statSync(filePath);
  const key = `${path.resolve(filePath)}\0${st.size}\0${st.mtimeMs}\0${debugRoot}`;
  let obj = cache.get(key);
  if (!obj) {
    obj = new ObjectFile(filePath, debugRoot);
    cache.set(key, obj);
  }
  return obj;
}
