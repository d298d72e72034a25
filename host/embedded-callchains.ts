// The callchains of an HTML export's details as tables, each distinct callchain once (see EmbeddedCallchains).
// Pure: the CLI's HTML writer feeds it while it builds each record's details, and embedCallchains (standalone.ts)
// feeds it details that already hold their callchains.

import type { CallchainEntry } from '../shared/protocol';
import { IntTupleMap } from '../native/tables/int-tuple-map';
import type { FrameSymbol } from './frame-symbols';
import { StringTable } from '../shared/string-table';

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
    for (let i = leafFirst.length - 1; i >= 0; i--) {
      const frame = leafFirst[i];
      let next = this.stackIndex.get(stack, frame, 0);
      if (next < 0) {
        next = this.callchains.stackPrefix.length;
        this.callchains.stackPrefix.push(stack);
        this.callchains.stackFrame.push(frame);
        this.stackIndex.add(stack, frame, 0, next);
      }
      stack = next;
    }
    this.callchains.rowStack[row] = stack;
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
