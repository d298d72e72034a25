// Target symbols for breakpoint specs: a variable or function name -> runtime address and size, and a
// source line -> its first is_stmt address, for one executable at a given load base. Errors are typed
// (SymbolError.code) and carry candidates: close names, nearest lines with code, or candidate files.

import { ElfFormatError, ET_DYN, ET_EXEC, PT_INTERP, PT_LOAD, type ElfFile, fileOffsetOfVaddr } from './elf';
import { DwarfFormatError, basename } from './dwarf-reader';
import type { DwarfVariable } from './dwarf-info';
import { type ObjectFile, openObjectFile } from './object-file';

export type SymbolErrorCode =
  | 'NO_SUCH_SYMBOL'
  | 'NO_CODE_AT_LINE'
  | 'AMBIGUOUS_FILE'
  | 'NO_DEBUG_INFO'
  | 'BAD_ELF'
  // Additions beyond the first contract: a name defined in several places, a file the line table does not know.
  | 'AMBIGUOUS_SYMBOL'
  | 'NO_SUCH_FILE';

export class SymbolError extends Error {
  constructor(
    readonly code: SymbolErrorCode,
    message: string,
    readonly candidates?: string[],
  ) {
    super(message);
    this.name = 'SymbolError';
  }
}

export interface ResolvedTargetSymbol {
  readonly address: bigint;
  readonly size: number;
  readonly kind: 'function' | 'object';
  readonly file?: string;
  readonly line?: number;
}

export interface ResolvedTargetLine {
  /** The first site: the lowest is_stmt address of the line. */
  readonly address: bigint;
  readonly file: string;
  readonly line: number;
  /**
   * Every place the compiler put the line, lowest first (`address` is the first): one per function
   * holding its code, such as each function a static function was inlined into, or a function's
   * split-off cold part. Each is that function's lowest is_stmt address of the line.
   */
  readonly sites: readonly { readonly address: bigint; readonly function?: string }[];
  /**
   * Every distinct is_stmt address of the line, lowest first: each place a statement of the line
   * begins (a loop header's init, condition and increment; each inlined copy). What perf probe puts a
   * probe on for FILE:LINE, and so what line: puts a uprobe on.
   */
  readonly statements: readonly { readonly address: bigint; readonly function?: string }[];
}

export interface TargetSymbols {
  /** Runtime address of a global/static variable or function `name` in `executable` given the load base (0 for non-PIE). */
  resolveSymbol(name: string): ResolvedTargetSymbol;
  /** First is_stmt address of `file:line` (file may be a basename when unambiguous). Errors list nearest lines with code or candidate files. */
  resolveLine(file: string, line: number): ResolvedTargetLine;
  /** The ELF file the symbols are of. */
  readonly path: string;
  /** Where the code at runtime `address` is in that file (what a uprobe is placed by). SymbolError when no segment holds it. */
  fileOffset(address: bigint): bigint;
}

function openChecked(executable: string, debugRoot?: string): ObjectFile {
  try {
    return openObjectFile(executable, debugRoot);
  } catch (error) {
    if (error instanceof ElfFormatError || error instanceof DwarfFormatError) {
      throw new SymbolError('BAD_ELF', `${executable}: ${error.message}`);
    }
    const e = error as NodeJS.ErrnoException;
    throw new SymbolError('BAD_ELF', `${executable}: cannot read (${e.code ?? e.message})`);
  }
}

/** Wraps parser failures met lazily (DWARF is parsed on first use) into SymbolError BAD_ELF. */
function guarded<T>(executable: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof ElfFormatError || error instanceof DwarfFormatError) {
      throw new SymbolError('BAD_ELF', `${executable}: malformed debug information: ${error.message}`);
    }
    throw error;
  }
}

/**
 * Symbols of `executable` placed at `loadBase`. For ET_DYN (PIE, shared objects) `loadBase` is the load
 * bias: the runtime address of link-time address 0, which for the usual PIE (first PT_LOAD at vaddr 0)
 * is where its file-offset-0 mapping starts in /proc/PID/maps. ET_EXEC files are never relocated, so
 * `loadBase` is ignored for them (0 and the 0x400000 mapping start both give link-time addresses).
 */
export function openTargetSymbols(executable: string, loadBase: bigint, options: { debugRoot?: string } = {}): TargetSymbols {
  const object = openChecked(executable, options.debugRoot);
  const bias = object.elf.header.type === ET_EXEC ? 0n : loadBase;
  return new ObjectTargetSymbols(executable, object, bias);
}

class ObjectTargetSymbols implements TargetSymbols {
  constructor(
    private readonly executable: string,
    private readonly object: ObjectFile,
    private readonly bias: bigint,
  ) {}

  get path(): string {
    return this.executable;
  }

  fileOffset(address: bigint): bigint {
    const offset = fileOffsetOfVaddr(this.object.elf.programHeaders, address - this.bias);
    if (offset === undefined) {
      throw new SymbolError('BAD_ELF', `${this.executable}: no loadable segment holds address 0x${(address - this.bias).toString(16)} in the file`);
    }
    return offset;
  }

  resolveSymbol(name: string): ResolvedTargetSymbol {
    return guarded(this.executable, () => this.resolveSymbolUnguarded(name));
  }

  resolveLine(file: string, line: number): ResolvedTargetLine {
    return guarded(this.executable, () => this.resolveLineUnguarded(file, line));
  }

  private resolveSymbolUnguarded(name: string): ResolvedTargetSymbol {
    const wanted = name.trim();
    const variables = this.object.variables().filter((v) => variableMatches(v, wanted));
    const elfSymbols = this.object.symbols().filter((s) => s.name === wanted);
    const byAddress = new Map<bigint, ResolvedTargetSymbol & { external: boolean; describe: string }>();

    for (const v of variables) {
      if (byAddress.has(v.address)) continue;
      const elfSize = this.object.symbols().find((s) => s.value === v.address && s.kind === 'object')?.size;
      const size = v.size ?? elfSize;
      if (size === undefined) continue;
      const file = this.object.declFilePath(v);
      byAddress.set(v.address, {
        address: v.address,
        size,
        kind: 'object',
        file,
        line: v.declLine,
        external: v.external,
        describe: `${v.enclosingFunction ? `${v.enclosingFunction}::` : ''}${v.qualifiedName}${file ? ` (${basename(file)}:${v.declLine ?? '?'})` : ''}`,
      });
    }
    for (const s of elfSymbols) {
      if (byAddress.has(s.value)) continue;
      const where = s.kind === 'function' ? this.object.lineTable()?.lineForAddress(s.value) : undefined;
      byAddress.set(s.value, {
        address: s.value,
        size: s.size,
        kind: s.kind,
        file: where?.file,
        line: where?.line,
        external: s.binding !== 'local',
        describe: `${s.name} (${s.kind}${where ? ` at ${basename(where.file)}:${where.line}` : ''})`,
      });
    }

    let found = [...byAddress.values()];
    if (found.length > 1) {
      // A global and file statics of the same name: the global is what an unqualified name means.
      const external = found.filter((f) => f.external);
      if (external.length === 1) found = external;
    }
    if (found.length === 0) {
      const known = [
        ...this.object.variables().flatMap((v) => [v.qualifiedName, ...(v.enclosingFunction ? [`${v.enclosingFunction}::${v.name}`] : [])]),
        ...this.object.symbols().map((s) => s.name),
      ];
      const candidates = closeNames(wanted, known);
      const hint = candidates.length ? `; did you mean ${candidates.join(', ')}?` : '';
      const debugNote = this.object.dwarfElf ? '' : ' (no DWARF found, only the ELF symbol table was searched)';
      throw new SymbolError('NO_SUCH_SYMBOL', `no variable or function named '${wanted}' in ${this.executable}${debugNote}${hint}`, candidates);
    }
    if (found.length > 1) {
      const candidates = found.map((f) => f.describe);
      throw new SymbolError(
        'AMBIGUOUS_SYMBOL',
        `'${wanted}' names ${found.length} different objects in ${this.executable}: ${candidates.join(', ')}; qualify it as function::name`,
        candidates,
      );
    }
    const { address, size, kind, file, line } = found[0];
    return { address: address + this.bias, size, kind, file, line };
  }

  private resolveLineUnguarded(file: string, line: number): ResolvedTargetLine {
    const table = this.object.lineTable();
    if (!table || table.sequences.length === 0) {
      const link = this.object.elf.debugLink();
      const buildId = this.object.buildId;
      const looked = [
        buildId ? `/usr/lib/debug/.build-id/${buildId.slice(0, 2)}/${buildId.slice(2)}.debug` : undefined,
        link ? `debuglink ${link.file}` : undefined,
      ].filter(Boolean);
      throw new SymbolError(
        'NO_DEBUG_INFO',
        `${this.executable} has no DWARF line table (build with -g${looked.length ? `; also looked for ${looked.join(' and ')}` : ''})`,
      );
    }
    const wanted = normalizePath(file.trim());
    const paths = table.filesWithRows();
    const matches = [
      ...new Set(
        paths.filter((p) => {
          const n = normalizePath(p);
          return n === wanted || n.endsWith('/' + wanted.replace(/^\.\//, ''));
        }),
      ),
    ];
    if (matches.length === 0) {
      const sameBase = paths.filter((p) => basename(p) === basename(wanted));
      const candidates = sameBase.length ? sameBase : paths.filter((p) => !p.startsWith('/usr/'));
      throw new SymbolError(
        'NO_SUCH_FILE',
        `no code from '${file}' in ${this.executable}; source files with code: ${candidates.map((p) => basename(p)).join(', ')}`,
        candidates,
      );
    }
    if (matches.length > 1) {
      throw new SymbolError(
        'AMBIGUOUS_FILE',
        `'${file}' matches ${matches.length} source files in ${this.executable}: ${matches.join(', ')}; give more of the path`,
        matches,
      );
    }
    const path = matches[0];
    const first = table.firstStatementAddress(path, line);
    if (first === undefined) {
      const lines = table.linesWithCode(path);
      const before = lines.filter((l) => l < line).pop();
      const after = lines.find((l) => l > line);
      const nearest = [before, after].filter((l): l is number => l !== undefined);
      const candidates = nearest.map((l) => `${basename(path)}:${l}`);
      throw new SymbolError(
        'NO_CODE_AT_LINE',
        `${basename(path)}:${line} has no code${nearest.length ? `; nearest lines with code: ${nearest.join(' and ')}` : ''}`,
        candidates,
      );
    }
    // One site per function holding the line's code: its first is_stmt row there. Rows of one
    // function (a loop's condition and increment at -O0) stay one site, as debuggers do.
    const byFunction = new Map<string, { address: bigint; function?: string }>();
    for (const range of table.addressesForLine(path, line)) {
      const fn = this.object.functionAt(range.start);
      const key = fn ? `${fn.name}@${fn.start}` : `@${range.start}`;
      if (!byFunction.has(key)) byFunction.set(key, { address: range.start + this.bias, ...(fn ? { function: fn.name } : {}) });
    }
    const byAddress = (a: { address: bigint }, b: { address: bigint }) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0);
    const sites = [...byFunction.values()].sort(byAddress);
    const statements = new Map<bigint, { address: bigint; function?: string }>();
    for (const range of table.addressesForLine(path, line)) {
      if (statements.has(range.start)) continue;
      const fn = this.object.functionAt(range.start);
      statements.set(range.start, { address: range.start + this.bias, ...(fn ? { function: fn.name } : {}) });
    }
    return { address: first + this.bias, file: path, line, sites, statements: [...statements.values()].sort(byAddress) };
  }
}

function variableMatches(v: DwarfVariable, name: string): boolean {
  return (
    v.qualifiedName === name ||
    v.linkageName === name ||
    (v.name === name && !name.includes('::')) ||
    (v.enclosingFunction !== undefined && `${v.enclosingFunction}::${v.name}` === name)
  );
}

/** Up to 5 known names close to `wanted`: same name ignoring case, containing it, or within edit distance 2. */
function closeNames(wanted: string, known: readonly string[]): string[] {
  const lower = wanted.toLowerCase();
  const scored: [number, string][] = [];
  for (const name of new Set(known)) {
    const l = name.toLowerCase();
    let score: number | undefined;
    if (l === lower) score = 0;
    else if (lower.length >= 3 && l.includes(lower)) score = 1;
    else {
      const d = editDistance(l, lower, 2);
      if (d <= 2) score = 1 + d;
    }
    if (score !== undefined) scored.push([score, name]);
  }
  return scored
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
    .slice(0, 5)
    .map(([, n]) => n);
}

function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** Collapses `.` and `..` and duplicate slashes (purely lexical). */
function normalizePath(p: string): string {
  const absolute = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length && out[out.length - 1] !== '..') out.pop();
    else if (part === '..' && absolute) continue;
    else out.push(part);
  }
  return (absolute ? '/' : '') + out.join('/');
}

// x86_64: ELF_ET_DYN_BASE = DEFAULT_MAP_WINDOW / 3 * 2 with DEFAULT_MAP_WINDOW = 2^47 - 4096.
const X86_64_ELF_ET_DYN_BASE = (((1n << 47n) - 4096n) / 3n) * 2n;
const PAGE_SIZE = 4096n;
const EM_X86_64 = 62;

/**
 * Load bias the kernel picks for `executable` when ASLR is off (`setarch -R`, personality
 * ADDR_NO_RANDOMIZE), following fs/binfmt_elf.c load_elf_binary on x86_64:
 * - ET_EXEC: mapped at its link addresses: 0.
 * - ET_DYN with PT_INTERP (a PIE): start from ELF_ET_DYN_BASE (0x555555554aaa), round down to the
 *   largest power-of-two PT_LOAD p_align (at least a page), subtract the first PT_LOAD's vaddr and
 *   round down to a page: 0x555555554000 for gcc's usual PIE (first vaddr 0, 4 KiB alignment).
 * - ET_DYN without PT_INTERP (static-pie, ld.so run directly) goes wherever mmap puts it: not predictable
 *   from the file alone, so a SymbolError.
 * Verified against /proc/PID/maps of a fixture run under `setarch -R` (test/symbols/resolve.test.ts).
 */
export function predictedLoadBase(executable: string): bigint {
  const elf: ElfFile = openChecked(executable).elf;
  if (elf.header.type === ET_EXEC) return 0n;
  if (elf.header.type !== ET_DYN) throw new SymbolError('BAD_ELF', `${executable} is not an executable (e_type ${elf.header.type})`);
  if (!elf.header.is64 || elf.header.machine !== EM_X86_64) {
    throw new SymbolError('BAD_ELF', `${executable}: load base prediction is implemented for x86_64 only (e_machine ${elf.header.machine})`);
  }
  if (!elf.programHeaders.some((p) => p.type === PT_INTERP)) {
    throw new SymbolError(
      'BAD_ELF',
      `${executable} is position-independent without an interpreter (static-pie): the kernel places it with mmap, so its load base cannot be predicted; attach to the running process instead`,
    );
  }
  let alignment = 0n;
  for (const p of elf.programHeaders) {
    if (p.type === PT_LOAD && p.align > 0n && (p.align & (p.align - 1n)) === 0n && p.align > alignment) alignment = p.align;
  }
  if (alignment < PAGE_SIZE) alignment = PAGE_SIZE;
  const base = X86_64_ELF_ET_DYN_BASE & ~(alignment - 1n);
  const firstVaddr = elf.programHeaders.find((p) => p.type === PT_LOAD)?.vaddr ?? 0n;
  return (base - firstVaddr) & ~(PAGE_SIZE - 1n);
}
