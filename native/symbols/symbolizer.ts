// IP -> `function+0xoff` (what `perf script -F ip,sym,symoff` prints) and IP -> source file:line, for
// user-space IPs through each process's mappings (/proc/PID/maps or MMAP2 records) and for kernel IPs
// through /proc/kallsyms. ELF/DWARF files are parsed once per path (+size+mtime) and shared.

import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { mapRange } from '../abi/mappings';
import { DELETED_SUFFIX, KERNEL_LIBRARY, VDSO_NAME } from '../abi/object-names';
import { numberIfExact } from '../abi/u64';
import { Kallsyms } from './kallsyms';
import { type MapEntry, parseProcMaps } from '../sys/procmaps';
import { type FunctionSymbol, type ObjectFile, openObjectFile, openVdsoObject } from './object-file';
import { ElfFormatError } from './elf';
import { demangle } from './demangle';
import { AARCH64, X86_64, unwindArchOf, unwindStack } from './unwind';

export interface SymbolizerOptions {
  /** Load /proc/kallsyms (lazily, on the first kernel IP). */
  readonly kallsyms?: boolean;
  /** Use this kallsyms text instead of reading /proc/kallsyms (tests, saved snapshots). */
  readonly kallsymsText?: string;
  /** Root of separate debug files (default /usr/lib/debug). */
  readonly debugRoot?: string;
}

interface Mapping {
  readonly start: bigint;
  readonly end: bigint;
  readonly pgoff: bigint;
  readonly path: string;
  /** Set when the mapped file was unlinked after it was mapped (see ReplacedFile). */
  readonly replaced?: ReplacedFile;
}

/**
 * A mapping of a file unlinked since it was mapped, as the kernel marks it (` (deleted)` in /proc/PID/maps and in MMAP
 * records): a program rebuilt or a library upgraded while the process runs. The file at its path now is another one,
 * whose symbols would name the old code wrongly (perf names it [unknown]); the mapped file is read through /proc.
 */
export interface ReplacedFile {
  /** The mapped file's inode (/proc/PID/maps, MMAP2), 0 where unknown (MMAP). */
  readonly inode: number;
}

export interface SourcePosition {
  readonly file: string;
  readonly line: number;
}

export class Symbolizer {
  private readonly processes = new Map<number, Mapping[]>();
  private kernel: Kallsyms | undefined | null;
  /** Files that failed to open or parse: not retried for every IP. */
  private readonly unreadable = new Set<string>();
  /**
   * Objects whose tables failed to parse (or whose file was replaced while its sections were still being read):
   * [unknown] from now on for that object, while a new file at the same path is opened afresh.
   */
  private readonly broken = new WeakSet<ObjectFile>();
  /** The object of each mapping once opened: unwinding looks up several pcs per sample. */
  private readonly opened = new WeakMap<Mapping, ObjectFile>();
  /** Per path, the build-id a recording found there (perf.data's build-id table): another build there now is not it. */
  private readonly recordedBuildIds = new Map<string, string>();
  /** The paths changedSinceRecording() has checked already. */
  private readonly checkedBuilds = new Set<string>();
  /** Files rebuilt or upgraded since the recording, whose recorded build was found nowhere: their frames are unnamed. */
  private readonly changed = new Map<string, { readonly recorded: string; readonly now: string }>();
  /** Mappings of unlinked files that /proc did not give (see locateReplaced): not asked again for every IP. */
  private readonly unopenable = new WeakSet<Mapping>();
  /** What symbolize() named each link-time address of an object (null: nothing), for as long as the object is current. */
  private readonly namedIn = new WeakMap<ObjectFile, Map<bigint | number, string | null>>();
  /** Each function's shown name (displayName), for as long as its object's index holds it. */
  private readonly shownNames = new WeakMap<FunctionSymbol, string>();

  constructor(private readonly options: SymbolizerOptions = {}) {}

  /** Replaces what is known of `pid`'s address space with its /proc/PID/maps (text or parsed). */
  addProcessMaps(pid: number, maps: string | readonly MapEntry[]): void {
    const entries = typeof maps === 'string' ? parseProcMaps(maps) : maps;
    const list: Mapping[] = [];
    for (const m of entries) {
      if (!hasSymbols(m.path)) continue;
      list.push({ start: m.start, end: m.end, pgoff: m.offset, path: m.path, ...(m.deleted ? { replaced: { inode: m.inode } } : {}) });
    }
    list.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.processes.set(pid, list);
  }

  /**
   * One mapping learnt from a PERF_RECORD_MMAP/MMAP2 record; it replaces whatever overlapped it. The
   * list stays sorted and disjoint, so only the overlapped run is touched: a process that maps tens of
   * thousands of regions cost a filter and a sort of its whole list per record (20,000 took 4 s).
   */
  addMmap(pid: number, start: bigint, length: bigint, pgoff: bigint, path: string, replaced?: ReplacedFile): void {
    let list = this.processes.get(pid);
    if (!list) this.processes.set(pid, (list = []));
    const end = start + length;
    const cut = (m: Mapping, from: bigint, to: bigint): Mapping => ({ ...m, start: from, end: to, pgoff: m.pgoff + (from - m.start) });
    const mapping = hasSymbols(path) ? { start, end, pgoff, path, ...(replaced ? { replaced } : {}) } : null;
    mapRange(list, start, end, mapping, cut);
  }

  /**
   * The build-ids a recording found at its objects' paths (perf.data's build-id table, user-space entries). A file
   * whose build-id differs now was rebuilt or upgraded since: its addresses are named from the recorded build's copy
   * in perf's build-id cache (perf record keeps one, as perf script finds it), or not at all, never from the new build.
   */
  expectBuildIds(entries: readonly { readonly path: string; readonly buildId: string }[]): void {
    for (const entry of entries) this.recordedBuildIds.set(entry.path, entry.buildId);
  }

  /**
   * The objects expectBuildIds() named that were rebuilt with no copy of the recorded build found: path → recorded and
   * current build-id. Each is checked (its ELF headers read) whether or not a frame has asked yet, so a caller can say
   * so before the names are needed.
   */
  changedSinceRecording(): ReadonlyMap<string, { readonly recorded: string; readonly now: string }> {
    for (const file of this.recordedBuildIds.keys()) {
      if (this.checkedBuilds.has(file)) continue;
      this.checkedBuilds.add(file);
      try {
        this.openRecorded(file);
      } catch {
        // rebuilt (openRecorded noted it), or gone or unreadable: its frames say so when they are named
      }
    }
    return this.changed;
  }

  /**
   * The files of `pids` that were replaced on disk after the process mapped them and that /proc does not give here
   * (map_files needs CAP_SYS_ADMIN; the process may be gone): their frames stay unnamed. One entry per pid and path.
   */
  unreadableReplacedFiles(pids: Iterable<number>): { readonly pid: number; readonly path: string }[] {
    const found: { pid: number; path: string }[] = [];
    for (const pid of new Set(pids)) {
      const paths = new Set<string>();
      for (const mapping of this.processes.get(pid) ?? []) {
        if (!mapping.replaced || paths.has(mapping.path)) continue;
        if (!this.opened.has(mapping) && !this.unopenable.has(mapping)) this.locateReplaced(pid, mapping, mapping.replaced, mapping.start);
        if (this.unopenable.has(mapping)) paths.add(mapping.path);
      }
      for (const path of paths) found.push({ pid, path });
    }
    return found;
  }

  /** A forked child starts with its parent's mappings (PERF_RECORD_FORK). */
  forkProcess(parentPid: number, childPid: number): void {
    const parent = this.processes.get(parentPid);
    if (parent) this.processes.set(childPid, [...parent]);
  }

  forgetProcess(pid: number): void {
    this.processes.delete(pid);
  }

  /**
   * Reads, ahead of the first snapshot, what naming its addresses will need: kallsyms (when kernel frames are named)
   * and the function table of each object mapped by `pid`s known so far, one step per next(), so a caller can run the
   * steps between other work. Objects are cached per file (object-file.ts), so
   * a later snapshot finds them parsed.
   */
  *prewarmSteps(pids: readonly number[]): Generator<void, void> {
    const paths = new Set<string>();
    for (const pid of pids) for (const m of this.processes.get(pid) ?? []) if (m.path !== VDSO_NAME) paths.add(m.path);
    this.kallsyms(); // nothing to read where kernel frames are not named (kallsyms() knows)
    yield;
    for (const file of paths) {
      if (this.unreadable.has(file)) continue;
      try {
        openObjectFile(file, this.options.debugRoot).functionAt(0n);
      } catch (error) {
        void error; // a file that cannot be read now is found unreadable again when a frame needs it, and said there
      }
      yield;
    }
  }

  /** `name+0xoff` like perf script's sym+symoff, or undefined where perf would print [unknown]. */
  symbolize(pid: number, ip: bigint, kernel: boolean): string | undefined {
    if (kernel) return this.kernelSymbol(ip);
    return this.userSymbol(pid, ip, this.mappingAt(pid, ip));
  }

  /**
   * symbolize() and dsoOf() together, the mapping found once: what the frame tables ask of every distinct address
   * (`symbol` undefined where perf prints [unknown]).
   */
  resolve(pid: number, ip: bigint, kernel: boolean): { symbol: string | undefined; dso: string | undefined } {
    if (kernel) return { symbol: this.kernelSymbol(ip), dso: KERNEL_LIBRARY };
    const mapping = this.mappingAt(pid, ip);
    return { symbol: this.userSymbol(pid, ip, mapping), dso: mapping && dsoName(mapping) };
  }

  private kernelSymbol(ip: bigint): string | undefined {
    const hit = this.kallsyms()?.lookup(ip);
    return hit ? `${hit.symbol.name}+0x${hit.offset.toString(16)}` : undefined;
  }

  private userSymbol(pid: number, ip: bigint, mapping: Mapping | undefined): string | undefined {
    const located = this.locateIn(pid, mapping, ip);
    if (!located) return undefined;
    // Processes running the same object (every node, every chromium of a -a recording) share its addresses' names.
    let named = this.namedIn.get(located.object);
    if (!named) this.namedIn.set(located.object, (named = new Map()));
    // Keyed by the address as a number where that is exact (every user-space one): a Map finds numbers far faster
    // than bigints, and it is asked once per distinct frame.
    const key = numberIfExact(located.vaddr);
    let name = named.get(key);
    if (name === undefined) {
      try {
        const fn = located.object.functionAt(located.vaddr);
        name = fn ? `${this.displayName(fn)}+0x${(located.vaddr - fn.start).toString(16)}` : null;
      } catch {
        this.broken.add(located.object); // malformed symbol table: [unknown] from now on
        return undefined;
      }
      named.set(key, name);
    }
    return name ?? undefined;
  }

  /**
   * C++ names demangled without parameters, as perf shows them (`ns::Class::method`), remembered per function: its
   * addresses are named one by one, and demangle()'s own memory is keyed by the whole mangled name.
   */
  private displayName(fn: FunctionSymbol): string {
    let shown = this.shownNames.get(fn);
    if (shown === undefined) {
      shown = demangle(fn.name) ?? fn.name;
      this.shownNames.set(fn, shown);
    }
    return shown;
  }

  /** Source file and line of a user-space IP from the DWARF line table. */
  sourceLine(pid: number, ip: bigint): SourcePosition | undefined {
    const located = this.locate(pid, ip);
    if (!located) return undefined;
    try {
      const hit = located.object.lineForAddress(located.vaddr);
      return hit ? { file: hit.file, line: hit.line } : undefined;
    } catch {
      // a line table we cannot parse: remembered as broken, the frame keeps its symbol without a line
      this.broken.add(located.object);
      return undefined;
    }
  }

  /**
   * The user-space frames of a sample recorded with PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER:
   * the sampled pc, then each caller's call site (return address - 1, as perf lists them), unwound
   * with the CFI of the object mapped at each pc. `registers` are keyed by perf_regs bit; `stack` holds the dyn_size bytes copied from the
   * stack pointer up. The architecture is the one of the object at the sampled pc. Empty when no known
   * object is mapped there (as perf shows no user frames then); the frames found before the first one
   * without CFI otherwise.
   */
  unwindUserStack(pid: number, registers: Readonly<Record<number, bigint>>, stack: Uint8Array): readonly bigint[] {
    for (const arch of [X86_64, AARCH64]) {
      const pc = registers[arch.pcPerf];
      const located = pc === undefined ? undefined : this.locate(pid, pc);
      if (!located || unwindArchOf(located.object.elf.header.machine) !== arch) continue;
      return unwindStack({
        arch,
        registers,
        stack,
        findCfi: (address) => {
          const at = this.locate(pid, address);
          const cfi = at?.object.callFrameInfo();
          return at && cfi ? { cfi, bias: address - at.vaddr } : undefined;
        },
      }).frames;
    }
    return [];
  }

  /** The mapped file with symbols at a user-space address of `pid`, parsed, and that address's link-time value in it. */
  objectAt(pid: number, ip: bigint): { object: ObjectFile; vaddr: bigint } | undefined {
    return this.locate(pid, ip);
  }

  /** The object `ip` is in, as perf's dso column names it: the mapped file's path, or the kernel's. */
  dsoOf(pid: number, ip: bigint, kernel: boolean): string | undefined {
    if (kernel) return KERNEL_LIBRARY;
    const mapping = this.mappingAt(pid, ip);
    return mapping && dsoName(mapping);
  }

  private mappingAt(pid: number, ip: bigint): Mapping | undefined {
    const maps = this.processes.get(pid);
    if (!maps) return undefined;
    let lo = 0;
    let hi = maps.length - 1;
    let found: Mapping | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (maps[mid].start <= ip) {
        found = maps[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found && ip < found.end ? found : undefined;
  }

  /** The mapped file, parsed, and the link-time address of `ip` in it. */
  private locate(pid: number, ip: bigint): { object: ObjectFile; vaddr: bigint } | undefined {
    return this.locateIn(pid, this.mappingAt(pid, ip), ip);
  }

  /** locate() in the mapping already found at `ip` (none: not in a file with symbols). */
  private locateIn(pid: number, found: Mapping | undefined, ip: bigint): { object: ObjectFile; vaddr: bigint } | undefined {
    if (!found) return undefined;
    if (found.replaced) return this.locateReplaced(pid, found, found.replaced, ip);
    if (this.unreadable.has(found.path)) return undefined;
    let object = this.opened.get(found);
    if (!object) {
      try {
        const vdso = found.path === VDSO_NAME ? openVdsoObject() : undefined;
        if (vdso === null) {
          this.unreadable.add(found.path);
          return undefined;
        }
        object = vdso ?? this.openRecorded(found.path);
      } catch {
        // an object we cannot read or parse: remembered as unreadable, its frames stay unnamed
        this.unreadable.add(found.path);
        return undefined;
      }
      this.opened.set(found, object);
    }
    return this.linkTimeAddress(object, found, ip);
  }

  /** `ip` of `found` as a link-time address in `object`, the object's own file. */
  private linkTimeAddress(object: ObjectFile, found: Mapping, ip: bigint): { object: ObjectFile; vaddr: bigint } | undefined {
    if (this.broken.has(object)) return undefined;
    const fileOffset = ip - found.start + found.pgoff;
    const vaddr = object.elf.fileOffsetToVaddr(fileOffset);
    return vaddr === undefined ? undefined : { object, vaddr };
  }

  /** The object at `file`, or the recorded build's copy where the file was rebuilt since the recording (expectBuildIds). */
  private openRecorded(file: string): ObjectFile {
    const object = openObjectFile(file, this.options.debugRoot);
    const recorded = this.recordedBuildIds.get(file);
    const now = object.buildId;
    if (recorded === undefined || now === undefined || sameBuildId(recorded, now)) return object;
    for (const copy of perfBuildIdCopies(recorded)) {
      try {
        const kept = openObjectFile(copy, this.options.debugRoot);
        if (kept.buildId !== undefined && sameBuildId(recorded, kept.buildId)) return kept;
      } catch {
        // no copy there (or not an object): the next place, if any
      }
    }
    this.changed.set(file, { recorded, now });
    throw new ElfFormatError(`${file} is build ${now}, the recording's was ${recorded}`);
  }

  /**
   * locateIn() for a mapping whose file was unlinked since it was mapped: the object is read through /proc, never from
   * the file at its path now; none (its frames unnamed, as perf leaves them) where /proc does not give it.
   */
  private locateReplaced(pid: number, found: Mapping, replaced: ReplacedFile, ip: bigint): { object: ObjectFile; vaddr: bigint } | undefined {
    let object = this.opened.get(found);
    if (!object) {
      if (this.unopenable.has(found)) return undefined;
      object = this.openReplaced(pid, replaced.inode, ip);
      if (!object) {
        this.unopenable.add(found);
        return undefined;
      }
      this.opened.set(found, object);
    }
    return this.linkTimeAddress(object, found, ip);
  }

  /**
   * The file mapped at `ip` of `pid`, unlinked since: its /proc/PID/map_files entry (root or CAP_SYS_ADMIN may open it)
   * or, for the executable, /proc/PID/exe (the process's owner may). Undefined once the process is gone.
   */
  private openReplaced(pid: number, inode: number, ip: bigint): ObjectFile | undefined {
    const candidates: string[] = [];
    try {
      for (const range of readdirSync(`/proc/${pid}/map_files`)) {
        const dash = range.indexOf('-');
        if (BigInt(`0x${range.slice(0, dash)}`) <= ip && ip < BigInt(`0x${range.slice(dash + 1)}`)) candidates.push(`/proc/${pid}/map_files/${range}`);
      }
    } catch {
      // the process is gone, or its map_files are not ours to list: /proc/PID/exe may still do
    }
    try {
      if (inode !== 0 && statSync(`/proc/${pid}/exe`).ino === inode) candidates.push(`/proc/${pid}/exe`);
    } catch {
      // gone, or not ours to follow
    }
    for (const candidate of candidates) {
      try {
        return openObjectFile(candidate, this.options.debugRoot);
      } catch {
        // not permitted (map_files without CAP_SYS_ADMIN), or not an object: the next one, if any
      }
    }
    return undefined;
  }

  private kallsyms(): Kallsyms | undefined {
    if (this.kernel === undefined) {
      if (this.options.kallsymsText !== undefined) this.kernel = new Kallsyms(this.options.kallsymsText);
      else if (this.options.kallsyms) {
        try {
          this.kernel = Kallsyms.read();
        } catch {
          /* kallsyms not readable here: kernel frames stay unnamed */ this.kernel = null;
        }
      } else this.kernel = null;
      if (this.kernel && !this.kernel.usable) this.kernel = null;
    }
    return this.kernel ?? undefined;
  }
}

/** Build-ids as hex, the same when one is the other padded with zero bytes (perf.data's older 20-byte entries). */
function sameBuildId(a: string, b: string): boolean {
  const [long, short] = a.length >= b.length ? [a, b] : [b, a];
  return long.startsWith(short) && /^0*$/.test(long.slice(short.length));
}

/**
 * Where perf record keeps a copy of each object it recorded samples in: `$PERF_BUILDID_DIR` or `~/.debug`, under
 * .build-id/XX/REST/elf (perf 4.x on; before, .build-id/XX/REST was the file itself).
 */
function perfBuildIdCopies(buildId: string): string[] {
  // An entry padded with zero bytes is kept under its id without them (which may end in a real zero byte: both).
  const ids = [...new Set([buildId, buildId.replace(/(00)+$/, '')])];
  const roots = [process.env.PERF_BUILDID_DIR, path.join(process.env.HOME || homedir(), '.debug')].filter((root): root is string => !!root);
  return roots.flatMap((root) =>
    ids.flatMap((id) => {
      const entry = path.join(root, '.build-id', id.slice(0, 2), id.slice(2));
      return [path.join(entry, 'elf'), entry];
    }),
  );
}

/** A mapping's object as perf's dso column names it: its path, marked as the kernel marks an unlinked file. */
function dsoName(mapping: Mapping): string {
  return mapping.replaced ? mapping.path + DELETED_SUFFIX : mapping.path;
}

/** Real files and the vDSO: not `[heap]`/`[stack]`, not perf's `//anon` or anonymous memory. */
function hasSymbols(path: string): boolean {
  return path === VDSO_NAME || (path.startsWith('/') && !path.startsWith('//'));
}
