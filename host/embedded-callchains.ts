// The callchains of an HTML export's details as tables, each distinct callchain once (see EmbeddedCallchains).
// Pure: the CLI's HTML writer feeds it while it builds each record's details, and embedCallchains (standalone.ts)
// feeds it details that already hold their callchains.

import type { CallchainEntry } from '../shared/protocol';
import { IntTupleMap } from '../native/tables/int-tuple-map';
import type { FrameSymbol, FrameSymbols } from './frame-symbols';
import type { CallchainFrame } from '../native/decode/record';
import { KERNEL_OWNER, type ProfileTables } from '../native/tables/profile-tables';
import { StringTable } from '../native/abi/string-table';

/**
 * The callchains of an export's details, each distinct one once: a record's callchain repeats its callers' frames
 * in record after record (85 % of the details of a `perf record -a -g` capture), so frames are stored once in a
 * frame table and callchains as a stack table (a stack is a frame called from its prefix stack, -1: a root), as
 * Firefox Profiler's processed profile stores them. The stand-in rebuilds a record's `callchain` and `symbols`
 * from them exactly as the details had them (see detailsOf in STAND_IN).
 */
export interface EmbeddedCallchains {
  /** Per frame: its `ip` (hex text as the details show it). */
  readonly ip: string[];
  /** Per frame: its name's index in `names`, -1 without one. */
  readonly name: number[];
  /** Per frame: 1 for a kernel frame (`kernel: true` in the details), else 0. */
  readonly kernel: number[];
  /** Per frame: its source file's index in `files`, -1 without a source line. */
  readonly file: number[];
  readonly line: number[];
  readonly names: string[];
  readonly files: string[];
  readonly stackPrefix: number[];
  readonly stackFrame: number[];
  /** Per row with details: its callchain's leaf stack (-1: an empty callchain); rows without a callchain are absent. */
  readonly rowStack: Record<number, number>;
}

/** Builds EmbeddedCallchains frame by frame and chain by chain. */
export class CallchainEmbedder {
  // Before the tables: their string lists are the tables' names and files.
  private readonly nameTable = new StringTable();
  private readonly fileTable = new StringTable();
  readonly callchains: EmbeddedCallchains = {
    ip: [],
    name: [],
    kernel: [],
    file: [],
    line: [],
    names: this.nameTable.strings,
    files: this.fileTable.strings,
    stackPrefix: [],
    stackFrame: [],
    rowStack: {},
  };
  private readonly frameIndex = new Map<string, number>();
  private readonly stackIndex = new IntTupleMap(2);
  /**
   * A resolution is one object per (process, address) in FrameSymbols, so it stands for a frame without building
   * its key text: the text is made once per distinct resolution, where two processes' frames may still be one.
   * One object may answer for several addresses (the shared "no symbol" answer): a hit counts only for the same
   * address and context, checked against the frame's own.
   */
  private readonly byResolution = new Map<FrameSymbol, number>();
  private readonly frameIp: bigint[] = [];
  /** Frames without a name or line by address: [user, kernel]. */
  private readonly unnamedByIp = [new Map<bigint, number>(), new Map<bigint, number>()];
  /** Per stack of the snapshot's tables: its stack here (-2: not made yet); per frame of the tables: its frame here (-1). */
  private readonly stackOfTableStack: Int32Array;
  private readonly frameOfTableFrame: Int32Array;

  /**
   * `tables`: the snapshot's stack and frame tables, when built. A record's callchain is then taken from its row's
   * stack there, each distinct stack and frame of the tables made here once, instead of every frame of every record
   * being looked up again (a record's callers repeat in record after record).
   */
  constructor(private readonly tables?: ProfileTables) {
    this.stackOfTableStack = new Int32Array(tables?.stackCount ?? 0).fill(-2);
    this.frameOfTableFrame = new Int32Array(tables?.frameCount ?? 0).fill(-1);
  }

  /** The frame a details entry shows (every property it shows is in the key: two frames are one only when they show the same). */
  frameOfEntry(entry: CallchainEntry, symbols: readonly string[]): number {
    const name = entry.symbol === undefined ? undefined : symbols[entry.symbol];
    const source = entry.file !== undefined && entry.line !== undefined ? { file: entry.file, line: entry.line } : undefined;
    return this.frameOf(entry.ip, name, entry.kernel === true, source);
  }

  /**
   * The frame of `ip` as rowDetails shows it from `resolved` (FrameSymbols.resolve's answer; its name in `strings`).
   * A resolution without a symbol table (undefined) is keyed by its text.
   */
  frameOfResolved(ip: bigint, resolved: FrameSymbol | undefined, kernel: boolean, strings: readonly string[]): number {
    if (resolved === undefined || (resolved.name < 0 && resolved.file === undefined)) {
      // No name and no line (JIT code, say): the frame is its address alone.
      const unnamed = this.unnamedByIp[kernel ? 1 : 0];
      let frame = unnamed.get(ip);
      if (frame === undefined) {
        frame = this.frameOf('0x' + ip.toString(16), undefined, kernel, undefined);
        unnamed.set(ip, frame);
      }
      return frame;
    }
    const known = this.byResolution.get(resolved);
    if (known !== undefined && this.frameIp[known] === ip && this.callchains.kernel[known] === (kernel ? 1 : 0)) return known;
    const source = resolved.file !== undefined && resolved.line !== undefined ? { file: resolved.file, line: resolved.line } : undefined;
    const frame = this.frameOf('0x' + ip.toString(16), resolved.name >= 0 ? strings[resolved.name] : undefined, kernel, source);
    this.frameIp[frame] = ip;
    if (known === undefined) this.byResolution.set(resolved, frame);
    return frame;
  }

  /** Records `row`'s callchain, given leaf first as frames of this embedder. */
  addChain(row: number, leafFirst: readonly number[]): void {
    let stack = -1;
    // Callers first (the root at the end of the leaf-first chain), so records that share callers share stacks.
    for (let i = leafFirst.length - 1; i >= 0; i--) stack = this.stackOf(stack, leafFirst[i]);
    this.callchains.rowStack[row] = stack;
  }

  /**
   * Records `row`'s decoded callchain, its frames in `pid` (or the kernel) named through `symbols` as rowDetails shows
   * them. From the tables when its row's stack there holds the same frames in the same address spaces (it is read
   * from the same bytes; only a frame of no context marker, or a record without a pid, can be placed otherwise).
   */
  addRecordChain(row: number, callchain: readonly CallchainFrame[], pid: number, symbols: FrameSymbols | undefined): void {
    const tableStack = this.tables && pid !== KERNEL_OWNER && row < this.tables.sampleStack.length ? this.tables.sampleStack[row] : -1;
    if (tableStack >= 0 && this.tableStackHolds(tableStack, callchain, pid)) {
      this.callchains.rowStack[row] = this.stackOfTable(tableStack, pid, symbols);
      return;
    }
    const frames: number[] = [];
    for (const frame of callchain) {
      if (frame.isMarker) continue;
      const kernel = isKernelContext(frame);
      frames.push(this.frameOfResolved(frame.ip, symbols?.resolve(pid, frame.ip, kernel), kernel, symbols?.strings ?? []));
    }
    this.addChain(row, frames);
  }

  /** Whether table stack `tableStack` is `callchain`'s frames, each in the address space its context marker says. */
  private tableStackHolds(tableStack: number, callchain: readonly CallchainFrame[], pid: number): boolean {
    const tables = this.tables!;
    let stack = tableStack;
    for (const frame of callchain) {
      if (frame.isMarker) continue;
      if (stack < 0 || tables.frameOwner[tables.stackFrame[stack]] !== (isKernelContext(frame) ? KERNEL_OWNER : pid)) return false;
      stack = tables.stackPrefix[stack];
    }
    return stack < 0;
  }

  /**
   * The stack here of a table stack, made from its first caller made before: its new frames leaf first, then its
   * new stacks callers first, the order addChain's per-frame path makes them in (the export is the same either way).
   */
  private stackOfTable(tableStack: number, pid: number, symbols: FrameSymbols | undefined): number {
    const tables = this.tables!;
    const unmapped: number[] = [];
    for (let s = tableStack; s >= 0 && this.stackOfTableStack[s] === -2; s = tables.stackPrefix[s]) unmapped.push(s);
    const frames = unmapped.map((s) => this.frameOfTable(tables.stackFrame[s], pid, symbols));
    for (let i = unmapped.length - 1; i >= 0; i--) {
      const prefix = tables.stackPrefix[unmapped[i]];
      this.stackOfTableStack[unmapped[i]] = this.stackOf(prefix < 0 ? -1 : this.stackOfTableStack[prefix], frames[i]);
    }
    return this.stackOfTableStack[tableStack];
  }

  private frameOfTable(tableFrame: number, pid: number, symbols: FrameSymbols | undefined): number {
    let frame = this.frameOfTableFrame[tableFrame];
    if (frame < 0) {
      const tables = this.tables!;
      const kernel = tables.frameIsKernel(tableFrame);
      const ip = tables.frameIp(tableFrame);
      frame = this.frameOfTableFrame[tableFrame] = this.frameOfResolved(ip, symbols?.resolve(pid, ip, kernel), kernel, symbols?.strings ?? []);
    }
    return frame;
  }

  /** The stack of `frame` called from `prefix` (-1: a root), added when new. */
  private stackOf(prefix: number, frame: number): number {
    let stack = this.stackIndex.get(prefix, frame, 0);
    if (stack < 0) {
      stack = this.callchains.stackPrefix.length;
      this.callchains.stackPrefix.push(prefix);
      this.callchains.stackFrame.push(frame);
      this.stackIndex.add(prefix, frame, 0, stack);
    }
    return stack;
  }

  private frameOf(ip: string, name: string | undefined, kernel: boolean, source: { file: string; line: number } | undefined): number {
    const nameAt = name === undefined ? -1 : this.nameTable.indexOf(name);
    const fileAt = source === undefined ? -1 : this.fileTable.indexOf(source.file);
    const key = `${ip} ${nameAt} ${kernel ? 1 : 0} ${fileAt} ${source?.line ?? ''}`;
    let frame = this.frameIndex.get(key);
    if (frame === undefined) {
      const table = this.callchains;
      frame = table.ip.length;
      table.ip.push(ip);
      table.name.push(nameAt);
      table.kernel.push(kernel ? 1 : 0);
      table.file.push(fileAt);
      table.line.push(source === undefined ? 0 : source.line);
      this.frameIndex.set(key, frame);
    }
    return frame;
  }
}

/** A callchain entry in the kernel's address space, as rowDetails places it: after a kernel context marker. */
function isKernelContext(frame: CallchainFrame): boolean {
  return frame.context === 'kernel' || frame.context === 'guest-kernel';
}
