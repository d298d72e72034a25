// One symbol table per capture on the host: every distinct address (per process for user space, one
// kernel for kernel space) is symbolized once and its source line looked up once, however many
// records and callchains repeat it; names are interned in a string table that messages refer to by
// index. Pure: the symbolizer comes in as callbacks (the CLI's and the extension's SnapshotSymbols).

import { StringTable } from '../native/abi/string-table';
export type SymbolizeFn = (pid: number, ip: bigint, kernel: boolean) => string | undefined;
export type SourceLineFn = (pid: number, ip: bigint) => { file: string; line: number } | undefined;
/** The comm of a thread as the capture's side-band and /proc synthesis name it (undefined: unknown). */
export type ThreadNameFn = (pid: number, tid: number) => string | undefined;

/** The object file an address is in (perf's dso), `[kernel.kallsyms]` for the kernel. */
export type LibraryFn = (pid: number, ip: bigint, kernel: boolean) => string | undefined;

/** What one address resolved to: `name` indexes the table's strings (-1: no symbol). */
export interface FrameSymbol {
  readonly name: number;
  readonly file?: string;
  readonly line?: number;
  /** The object file it is in, where the symbolizer knows it. */
  readonly library?: string;
}

const NONE: FrameSymbol = { name: -1 };

export class FrameSymbols {
  /** Interned names; an index stays valid for the life of the table. */
  private readonly names = new StringTable();
  readonly strings: readonly string[] = this.names.strings;
  /** (kernel ? -1 : pid) → ip → resolution. */
  private readonly byOwner = new Map<number, Map<bigint, FrameSymbol>>();
  /**
   * (kernel ? -1 : pid) → ip → interned name (-1: none), for addresses only named so far: JSON Lines
   * needs no source line, and the first one of an object parses its whole DWARF line table (about
   * 1.4 s for libc with its debug info, most of a `ringside snapshot -o x.jsonl`).
   */
  private readonly namedOnly = new Map<number, Map<bigint, number>>();
  /** pid → user ip → source line (null: none), for addresses only placed so far (lineOf). */
  private readonly placedOnly = new Map<number, Map<bigint, { readonly file: string; readonly line: number } | null>>();

  /**
   * `threadName`: what the capture knows of its threads' names, beside its addresses (the timeline names a thread no
   * COMM record of a snapshot names by it: one that ran before the recording started); `library`: the object file of an
   * address (perf's dso), so the call tree can collapse a library.
   */
  constructor(
    private readonly symbolize: SymbolizeFn,
    private readonly sourceLine?: SourceLineFn,
    private readonly threadName?: ThreadNameFn,
    private readonly library?: LibraryFn,
  ) {}

  /** The comm of thread `tid` of `pid`, when the capture knows it. */
  commOf(pid: number, tid: number): string | undefined {
    return this.threadName?.(pid, tid);
  }

  /** The symbol and source line of `ip` in `pid` (or in the kernel), resolved on the first ask only. */
  resolve(pid: number, ip: bigint, kernel: boolean): FrameSymbol {
    const owner = kernel ? -1 : pid;
    let known = this.byOwner.get(owner);
    if (!known) {
      known = new Map();
      this.byOwner.set(owner, known);
    }
    let hit = known.get(ip);
    if (hit === undefined) {
      const name = this.namedOnly.get(owner)?.get(ip) ?? this.nameIndex(pid, ip, kernel);
      // Kernel addresses have no line table Ringside reads (no vmlinux with DWARF).
      const position = kernel ? undefined : this.sourceLine?.(pid, ip);
      const library = this.library?.(pid, ip, kernel);
      hit =
        name < 0 && !position && library === undefined
          ? NONE
          : { name, ...(position ? { file: position.file, line: position.line } : {}), ...(library !== undefined ? { library } : {}) };
      known.set(ip, hit);
    }
    return hit;
  }

  /** The name of `ip`, or undefined where perf would print [unknown]; its source line is looked up only when resolve() asks. */
  nameOf(pid: number, ip: bigint, kernel: boolean): string | undefined {
    const name = this.nameNumber(pid, ip, kernel);
    return name < 0 ? undefined : this.strings[name];
  }

  /** nameOf's answer as its index in `strings` (-1: none). */
  private nameNumber(pid: number, ip: bigint, kernel: boolean): number {
    const owner = kernel ? -1 : pid;
    let name = this.byOwner.get(owner)?.get(ip)?.name;
    if (name === undefined) {
      let named = this.namedOnly.get(owner);
      if (!named) {
        named = new Map();
        this.namedOnly.set(owner, named);
      }
      name = named.get(ip);
      if (name === undefined) {
        name = this.nameIndex(pid, ip, kernel);
        named.set(ip, name);
      }
    }
    return name;
  }

  /**
   * What resolve() says of `ip` but its source line: the name's index (-1: none) and the object file. A stack's inner
   * frames need no line (only leaves and function entries are placed), and looking one up runs DWARF line programs.
   */
  nameAndLibrary(pid: number, ip: bigint, kernel: boolean): { readonly name: number; readonly library: string | undefined } {
    const resolved = this.byOwner.get(kernel ? -1 : pid)?.get(ip);
    if (resolved) return { name: resolved.name, library: resolved.library };
    return { name: this.nameNumber(pid, ip, kernel), library: this.library?.(pid, ip, kernel) };
  }

  /**
   * The source line of user address `ip` in `pid`, without naming it: what resolve() would place it at. A function's
   * entry is placed for "reveal", and naming that address too cost a symbol lookup per function for a name never shown.
   */
  lineOf(pid: number, ip: bigint): { readonly file: string; readonly line: number } | undefined {
    const resolved = this.byOwner.get(pid)?.get(ip);
    if (resolved) return resolved.file !== undefined && resolved.line !== undefined ? { file: resolved.file, line: resolved.line } : undefined;
    let placed = this.placedOnly.get(pid);
    if (!placed) {
      placed = new Map();
      this.placedOnly.set(pid, placed);
    }
    let position = placed.get(ip);
    if (position === undefined) {
      position = this.sourceLine?.(pid, ip) ?? null;
      placed.set(ip, position);
    }
    return position ?? undefined;
  }

  private nameIndex(pid: number, ip: bigint, kernel: boolean): number {
    const name = this.symbolize(pid, ip, kernel);
    return name === undefined ? -1 : this.intern(name);
  }

  /** How many distinct addresses were resolved (named, or named and placed) so far. */
  get addressCount(): number {
    let count = 0;
    for (const known of this.byOwner.values()) count += known.size;
    for (const [owner, named] of this.namedOnly) for (const ip of named.keys()) if (!this.byOwner.get(owner)?.has(ip)) count++;
    return count;
  }

  /** Drops what addresses resolved to (new mappings were learnt); interned names and their indexes stay. */
  forgetAddresses(): void {
    this.byOwner.clear();
    this.namedOnly.clear();
    this.placedOnly.clear();
  }

  intern(name: string): number {
    return this.names.indexOf(name);
  }
}
