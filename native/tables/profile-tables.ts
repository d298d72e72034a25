// A snapshot's samples as Firefox Profiler's processed profile holds them: every distinct callchain address once
// in a frame table (its owner — a process, or the kernel — and address), every distinct callchain once in a stack
// table (prefix + frame, callers first), each sample row carrying its stack's index, and after symbolization a
// function table (name, DSO) the frames point into. Every output that prints names (JSON Lines, pprof, the
// call tree) works per frame, stack and function, never per record: a capture repeats a few thousand addresses
// across hundreds of thousands of callchain entries.
//
// Pure (no node, no DOM): the decoded columns and the ring bytes in, tables out; symbols come in as a callback.

import { CallchainContext, Misc, RecordType } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT } from '../abi/u64';
import { decodeRecordAt, type CallchainFrame } from '../decode/record';
import { sampleReaders, type SampleReader } from '../decode/sample-readers';
import type { DecodedSnapshot } from '../decode/types';
import { IntTupleMap } from './int-tuple-map';
import { functionName, KERNEL_FRAME, UNKNOWN_FRAME } from './symbol-name';

/** The owner of a kernel frame in the frame table: one kernel, whatever process was running. */
export const KERNEL_OWNER = -1;

/** What a frame's address resolved to, from the host's symbolizer. */
export interface FrameResolution {
  /** `function+0xoff` as perf script prints it; undefined where perf prints [unknown]. */
  readonly symbol: string | undefined;
  /** The object the address is in (perf's dso column), when known. */
  readonly dso?: string;
}

/** (owner pid or KERNEL_OWNER, address, kernel?) → what it is. Called once per distinct frame. */
export type FrameResolver = (pid: number, ip: bigint, kernel: boolean) => FrameResolution;

/** earlierFramesAt of most frames (asked once per frame: no array made for it). */
const NO_FRAMES: readonly number[] = [];

/** A callchain entry at or above PERF_CONTEXT_MAX ((u64)-4095) is a context marker, not an address. */
const MARKER_HIGH = 0xffffffff;
/** Addresses from here up are the kernel's (x86-64 and arm64 canonical upper half), for entries of no known context. */
const KERNEL_HALF_HIGH = 0xffff8000;

export class ProfileTables {
  // The frame table.
  readonly frameOwner: number[];
  readonly frameIpHigh: number[];
  readonly frameIpLow: number[];
  /** Per frame: the function it is in (index into the function table), -1 until symbolized. */
  readonly frameFunction: number[];
  /** Per frame: `function+0xoff`, undefined where perf prints [unknown]; filled by symbolize(). */
  readonly frameSymbol: (string | undefined)[];
  // The stack table: stack s is frame stackFrame[s] called from stack stackPrefix[s] (-1: a root).
  readonly stackPrefix: number[];
  readonly stackFrame: number[];
  // The function table.
  readonly functionName: string[];
  readonly functionDso: (string | undefined)[];
  /** Per row of the snapshot: its stack, -1 for rows without a callchain (not a sample, no callchain, damaged). */
  readonly sampleStack: Int32Array;
  /** Per row: the frame of the sample's own IP, -1 for rows without one. */
  readonly sampleIpFrame: Int32Array;

  private readonly frameIndex: IntTupleMap;
  private readonly stackIndex: IntTupleMap;
  private readonly functionIndex: Map<string, number>;
  /**
   * Per DSO (undefined: none), per symbol as the resolver gave it (or the name of an unnamed frame): its function.
   * A symbol is its function's name, an offset maybe, so symbol and DSO decide the function.
   */
  private readonly functionBySymbol: Map<string | undefined, Map<string, number>>;
  /**
   * The key a process's frames are found by in frameIndex: its pid, or a fresh one once its mappings changed after
   * frames of it were named (remapOwner), so that an address named before the change is named again after it.
   */
  private readonly ownerKeys: {
    readonly byPid: Map<number, number>;
    /**
     * Per process remapped: every key its frames were found by, its pid first, and from which frame on each was
     * (frames are added in order, and a key replaces the one before it for every frame added after it).
     */
    readonly eras: Map<number, { readonly keys: number[]; readonly firstFrames: number[] }>;
    next: number;
  };
  private symbolizedFrames: number;
  /**
   * Reused for one callchain's frames, leaf first, grown to the longest callchain met. (An array emptied with
   * `length = 0` dropped its storage, and pushing grew it back: a fifth of a -g decode's allocations.)
   */
  private chain = new Int32Array(256);

  /**
   * `previous`: the tables of the batch before this one of the same recording (a file decoded a batch at a time): its
   * frames, stacks and functions are this one's too, and only what is new is added (and named).
   */
  constructor(
    readonly snapshot: DecodedSnapshot,
    previous?: ProfileTables,
  ) {
    this.frameOwner = previous?.frameOwner ?? [];
    this.frameIpHigh = previous?.frameIpHigh ?? [];
    this.frameIpLow = previous?.frameIpLow ?? [];
    this.frameFunction = previous?.frameFunction ?? [];
    this.frameSymbol = previous?.frameSymbol ?? [];
    this.stackPrefix = previous?.stackPrefix ?? [];
    this.stackFrame = previous?.stackFrame ?? [];
    this.functionName = previous?.functionName ?? [];
    this.functionDso = previous?.functionDso ?? [];
    this.frameIndex = previous?.frameIndex ?? new IntTupleMap(3);
    this.stackIndex = previous?.stackIndex ?? new IntTupleMap(2);
    this.functionIndex = previous?.functionIndex ?? new Map();
    this.functionBySymbol = previous?.functionBySymbol ?? new Map();
    // Keys below KERNEL_OWNER are never a pid.
    this.ownerKeys = previous?.ownerKeys ?? { byPid: new Map(), eras: new Map(), next: KERNEL_OWNER - 1 };
    this.symbolizedFrames = previous?.symbolizedFrames ?? 0;
    const { length } = snapshot.columns;
    this.sampleStack = new Int32Array(length).fill(-1);
    this.sampleIpFrame = new Int32Array(length).fill(-1);
    const readers = sampleReaders(snapshot);
    const { kind, event, ring, offset, pid, misc } = snapshot.columns;
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    for (let row = 0; row < length; row++) {
      if (kind[row] !== RecordType.SAMPLE) continue;
      const reader = readers.get(event[row]);
      if (!reader) continue;
      if (reader.inPlace) this.readInPlace(row, reader, views[ring[row]], offset[row], pid[row], misc[row]);
      else this.readDecoded(row, reader);
    }
  }

  /**
   * The mappings of process `pid` changed (a batch after this one learnt its MMAPs): its addresses from the next
   * tables on are new frames, named afresh; frames named before keep their names (their rows are written).
   */
  remapOwner(pid: number): void {
    if (pid === KERNEL_OWNER) return;
    const key = this.ownerKeys.next--;
    this.ownerKeys.byPid.set(pid, key);
    const eras = this.ownerKeys.eras.get(pid);
    if (eras) {
      eras.keys.push(key);
      eras.firstFrames.push(this.frameCount);
    } else this.ownerKeys.eras.set(pid, { keys: [pid, key], firstFrames: [0, this.frameCount] });
  }

  /**
   * The frames of frame `frame`'s process at its address found before it, under the keys of the process's mappings
   * before the ones it was found under (see remapOwner); none for a frame of a process's first mappings, or the kernel.
   */
  earlierFramesAt(frame: number): readonly number[] {
    const eras = this.ownerKeys.eras.get(this.frameOwner[frame]);
    if (eras === undefined) return NO_FRAMES;
    const { keys, firstFrames } = eras;
    const high = this.frameIpHigh[frame] | 0;
    const low = this.frameIpLow[frame] | 0;
    let frames: number[] | undefined;
    // The keys of the eras before the frame's own: the frame was added after the next one began.
    for (let era = 0; era + 1 < keys.length && firstFrames[era + 1] <= frame; era++) {
      const other = this.frameIndex.get(keys[era], high, low);
      if (other >= 0) (frames ??= []).push(other);
    }
    return frames ?? NO_FRAMES;
  }

  get frameCount(): number {
    return this.frameOwner.length;
  }

  get stackCount(): number {
    return this.stackPrefix.length;
  }

  /** The frame of `ip` (as two u32 halves) in `owner`'s address space, added when new. */
  frameOf(owner: number, high: number, low: number): number {
    return this.frameIn(owner, this.ownerKey(owner), high, low);
  }

  /** The key `owner`'s frames are found by (see ownerKeys). */
  private ownerKey(owner: number): number {
    const keys = this.ownerKeys.byPid;
    return keys.size === 0 ? owner : (keys.get(owner) ?? owner);
  }

  /** frameOf with `owner`'s key already found: a callchain's entries share two owners, looked up once per sample. */
  private frameIn(owner: number, key: number, high: number, low: number): number {
    let frame = this.frameIndex.get(key, high | 0, low | 0);
    if (frame < 0) {
      frame = this.frameOwner.length;
      this.frameOwner.push(owner);
      this.frameIpHigh.push(high >>> 0);
      this.frameIpLow.push(low >>> 0);
      this.frameFunction.push(-1);
      this.frameSymbol.push(undefined);
      this.frameIndex.add(key, high | 0, low | 0, frame);
    }
    return frame;
  }

  /** The stack of `frame` called from `prefix` (-1: a root), added when new. */
  stackOf(prefix: number, frame: number): number {
    let stack = this.stackIndex.get(prefix, frame, 0);
    if (stack < 0) {
      stack = this.stackPrefix.length;
      this.stackPrefix.push(prefix);
      this.stackFrame.push(frame);
      this.stackIndex.add(prefix, frame, 0, stack);
    }
    return stack;
  }

  /** The stack of `frame` called from `prefix` (-1: a root) if the table has it, else -1 (nothing is added). */
  knownStack(prefix: number, frame: number): number {
    return this.stackIndex.get(prefix, frame, 0);
  }

  /** The address of frame `frame`. */
  frameIp(frame: number): bigint {
    const high = this.frameIpHigh[frame];
    // One bigint, not four, where the address is exact as a double (every user-space one: named once per frame).
    if (high < EXACT_HIGH_HALF_LIMIT) return BigInt(high * 0x100000000 + this.frameIpLow[frame]);
    return (BigInt(high) << 32n) | BigInt(this.frameIpLow[frame]);
  }

  frameIsKernel(frame: number): boolean {
    return this.frameOwner[frame] === KERNEL_OWNER;
  }

  /** A stack's frames, leaf first. */
  framesOf(stack: number): number[] {
    const frames: number[] = [];
    for (let s = stack; s >= 0; s = this.stackPrefix[s]) frames.push(this.stackFrame[s]);
    return frames;
  }

  /**
   * Names every frame not named yet, each distinct (owner, address) once, and fills the function table (one
   * function per name and DSO). `pidOf(frame)` is the process to resolve a kernel frame in (any: the kernel is one).
   */
  symbolize(resolve: FrameResolver): void {
    for (let frame = this.symbolizedFrames; frame < this.frameOwner.length; frame++) {
      const kernel = this.frameOwner[frame] === KERNEL_OWNER;
      const resolution = resolve(kernel ? -1 : this.frameOwner[frame], this.frameIp(frame), kernel);
      const { symbol, dso } = resolution;
      this.frameSymbol[frame] = symbol;
      // Most frames repeat a `function+0xoff` of their object already met (other processes running it, other
      // batches): its function is found by the symbol itself, without taking its name apart again.
      let bySymbol = this.functionBySymbol.get(dso);
      if (!bySymbol) this.functionBySymbol.set(dso, (bySymbol = new Map()));
      const symbolKey = symbol ?? (kernel ? KERNEL_FRAME : UNKNOWN_FRAME);
      let fn = bySymbol.get(symbolKey);
      if (fn === undefined) {
        fn = this.functionOf(symbol === undefined ? symbolKey : functionName(symbol), dso);
        bySymbol.set(symbolKey, fn);
      }
      this.frameFunction[frame] = fn;
    }
    this.symbolizedFrames = this.frameOwner.length;
  }

  /** The function `name` in `dso`, added when new. */
  private functionOf(name: string, dso: string | undefined): number {
    const key = `${name}\0${dso ?? ''}`;
    let fn = this.functionIndex.get(key);
    if (fn === undefined) {
      fn = this.functionName.length;
      this.functionName.push(name);
      this.functionDso.push(dso);
      this.functionIndex.set(key, fn);
    }
    return fn;
  }

  /** A sample of an event whose every field the reader knows: its IP and callchain read straight from the ring. */
  private readInPlace(row: number, reader: SampleReader, view: DataView, at: number, pid: number, misc: number): void {
    const { info } = reader;
    const size = view.getUint16(at + 6, true);
    const end = at + size;
    if (info.sample.ip >= 0) {
      const low = view.getUint32(at + info.sample.ip, true);
      const high = view.getUint32(at + info.sample.ip + 4, true);
      const cpumode = misc & Misc.CPUMODE_MASK;
      const kernel = cpumode === Misc.CPUMODE_UNKNOWN ? high >= KERNEL_HALF_HIGH : cpumode === Misc.KERNEL || cpumode === Misc.GUEST_KERNEL;
      this.sampleIpFrame[row] = this.frameOf(kernel ? KERNEL_OWNER : pid, high, low);
    }
    if (!reader.hasCallchain) return;
    const countAt = at + info.sample.fixedEnd;
    if (countAt + 8 > end || view.getUint32(countAt + 4, true) !== 0) return; // damaged: no stack
    const count = view.getUint32(countAt, true);
    if (countAt + 8 + count * 8 > end) return;
    const chain = this.chainRoom(count);
    let length = 0;
    let context: 'kernel' | 'user' | 'unknown' = 'unknown';
    const kernelKey = this.ownerKey(KERNEL_OWNER);
    const userKey = this.ownerKey(pid);
    for (let i = 0, entry = countAt + 8; i < count; i++, entry += 8) {
      const low = view.getUint32(entry, true);
      const high = view.getUint32(entry + 4, true);
      if (high === MARKER_HIGH && low >= CallchainContext.MAX_LOW) {
        context = low === CallchainContext.KERNEL || low === CallchainContext.GUEST_KERNEL ? 'kernel' : KNOWN_CONTEXTS.has(low) ? 'user' : 'unknown';
        continue;
      }
      const kernel = context === 'kernel' || (context === 'unknown' && high >= KERNEL_HALF_HIGH);
      chain[length++] = kernel ? this.frameIn(KERNEL_OWNER, kernelKey, high, low) : this.frameIn(pid, userKey, high, low);
    }
    this.sampleStack[row] = this.stackOfChain(chain, length);
  }

  /** A sample with fields the in-place reader does not know (read groups, user stacks to unwind): decoded whole. */
  private readDecoded(row: number, reader: SampleReader): void {
    let record;
    try {
      record = decodeRecordAt(this.snapshot, row);
    } catch {
      return; // a damaged record has no stack; the walk already counted it
    }
    const pid = record.pid ?? -1;
    const fields = record.fields as { ip?: unknown; callchain?: unknown };
    if (typeof fields.ip === 'bigint') {
      const cpumode = record.misc & Misc.CPUMODE_MASK;
      const kernel = cpumode === Misc.CPUMODE_UNKNOWN ? isKernelAddress(fields.ip) : cpumode === Misc.KERNEL || cpumode === Misc.GUEST_KERNEL;
      this.sampleIpFrame[row] = this.frameOf(kernel ? KERNEL_OWNER : pid, Number(fields.ip >> 32n), Number(fields.ip & 0xffffffffn));
    }
    if (!reader.hasCallchain && !Array.isArray(fields.callchain)) return;
    if (!Array.isArray(fields.callchain)) return;
    const chain = this.chainRoom(fields.callchain.length);
    let length = 0;
    for (const frame of fields.callchain as CallchainFrame[]) {
      if (frame.isMarker) continue;
      const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel' || (frame.context === 'unknown' && isKernelAddress(frame.ip));
      chain[length++] = this.frameOf(kernel ? KERNEL_OWNER : pid, Number(frame.ip >> 32n), Number(frame.ip & 0xffffffffn));
    }
    this.sampleStack[row] = this.stackOfChain(chain, length);
  }

  /** Room for a callchain of `count` frames in the reused chain. */
  private chainRoom(count: number): Int32Array {
    if (this.chain.length < count) this.chain = new Int32Array(Math.max(count, this.chain.length * 2));
    return this.chain;
  }

  /** The stack of the first `length` frames of `chain`, given leaf first; -1 for an empty one. */
  private stackOfChain(chain: Int32Array, length: number): number {
    let stack = -1;
    for (let i = length - 1; i >= 0; i--) stack = this.stackOf(stack, chain[i]);
    return stack;
  }
}

/** Context markers the record decoder names other than kernel: their entries are user-side addresses. */
const KNOWN_CONTEXTS: ReadonlySet<number> = new Set([
  CallchainContext.HV,
  CallchainContext.USER,
  CallchainContext.GUEST,
  CallchainContext.GUEST_USER,
  0xfffffd80 /* PERF_CONTEXT_USER_DEFERRED */,
]);

function isKernelAddress(ip: bigint): boolean {
  return ip >= 0xffff800000000000n;
}
