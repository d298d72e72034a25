// One snapshot's flight-recorder copies, their merge keys and the merged columns in ONE WebAssembly
// memory, so that the scatter path (scatter.ts) can run as WebAssembly on every thread of a decode
// pool: a WebAssembly function reads one memory only (node 20's V8 has no multi-memory), and the
// merge reads every ring's keys and bytes and writes the output columns.
//
// A recorder's rings are a group (CopyGroup): the first ring of the group that asks for its next
// copy makes a memory with a slot for every ring of the group, and the others take theirs from it,
// until a ring asks again (its copy went to a snapshot): then a new memory is made. A snapshot's
// copies are therefore in one memory whenever the recorder took every ring's spare together.
//
// Layout: job records (a key job, a merge job and a list of other records per thread), then per ring its copy
// (64 bytes into its slot), key arrays (time f64, offset u32, position u16) and sample-run job, then the side-band area (times of the
// rows of rings decoded elsewhere, and where each goes), then the output column set, for as many
// rows as every ring's keys plus the side-band area. Each ring's `whole` (what its owner faults in
// while idle) runs from its slot to the next one; the last ring's runs to the end of the memory.
//
// A ring alone in its snapshot (one busy CPU) is decoded into the output set by the sample run,
// as into a copy's room (copy-room.ts): the output set holds more rows than any one ring needs.

import type { CopyBuffer, CopyGroup } from '../../abi/snapshot';
import { ColumnSet, columnSetBytes } from '../column-set';
import { backwardCapacity } from '../row-capacity';
import type { MemoryKind } from './kernels';
import type { KeyArrays, KeyArraysInMemory } from './key-run';
import { KEY_RUN_JOB_BYTES, MERGE_ENTRY_BYTES, MERGE_HEADER_BYTES, OTHER_BYTES, SAMPLE_RUN_JOB_BYTES } from './job-layout';

const PAGE_BYTES = 65536;
const MAX_MEMORY_BYTES = 65536 * PAGE_BYTES;
/** The record size a ring's keys are sized by before any copy of it has shown its records (as copy-room.ts sizes a first room). */
const FIRST_COPY_RECORD_BYTES = 48;
/** Rows of side-band rings (decoded into memory of their own) a WebAssembly merge can place; more, and the JavaScript merge runs. */
export const SIDE_BAND_ROWS = 1 << 16;
/** Records that are not plain samples (throttle, LOST, ...) a WebAssembly merge can list per thread; more, and the JavaScript merge runs. */
export const OTHER_RECORDS = 1 << 12;

const align = (n: number, to: number): number => Math.ceil(n / to) * to;

/** Bytes a merge job of `rings` entries takes (job-layout.ts: the header, then an entry per ring). */
export function mergeScatterJobBytes(rings: number): number {
  return MERGE_HEADER_BYTES + rings * MERGE_ENTRY_BYTES;
}

/** One ring's place in a snapshot memory. */
export interface MemorySlot {
  readonly member: object;
  /** Where the slot starts: what its owner faults in runs from here to the next slot's start. */
  readonly start: number;
  /** Where this ring's sample run keeps its job record (after the key arrays: copy-room.ts says why not before the copy). */
  readonly sampleJobAddress: number;
  readonly copyAddress: number;
  readonly copyBytes: number;
  /** The ring's key arrays (addresses in the memory). */
  readonly keys: KeyArrays;
  /** True once the slot's copy was handed to its ring. */
  given: boolean;
}

export class SnapshotMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  readonly kind: MemoryKind;
  /** Threads that can key and merge in this memory at once, each with job records of its own (lanes 0 ... lanes - 1). */
  readonly lanes: number;
  /** Bytes of one thread's job records: the key job, the merge job and the list of other records. */
  readonly laneBytes: number;
  /** Ring entries a merge job holds (the group's rings and side-band rings beside them). */
  readonly entries: number;
  /** Byte addresses of the side-band area's times (f64) and destinations (u32), SIDE_BAND_ROWS each. */
  readonly sideBandTime: number;
  readonly sideBandDestination: number;
  /** The merged columns: every slot's keys and the side-band rows fit. */
  readonly set: ColumnSet;
  /** True while the set is out: taken by a decode, or holding a snapshot's columns. */
  lent = false;
  private readonly bySlotAddress = new Map<number, MemorySlot>();

  constructor(
    readonly memory: WebAssembly.Memory,
    shared: boolean,
    readonly slots: readonly MemorySlot[],
    layout: MemoryLayout,
  ) {
    this.buffer = memory.buffer;
    this.kind = shared ? 'shared' : 'plain';
    this.lanes = layout.lanes;
    this.laneBytes = layout.laneBytes;
    this.entries = layout.entries;
    this.sideBandTime = layout.sideBandTime;
    this.sideBandDestination = layout.sideBandDestination;
    this.set = new ColumnSet(layout.outRows, this.buffer, layout.outAddress);
    for (const slot of slots) this.bySlotAddress.set(slot.copyAddress, slot);
  }

  /** The slot whose copy `bytes` is (seen from its start), when it is one of this memory's. */
  slotOf(bytes: Uint8Array): MemorySlot | undefined {
    return bytes.buffer === this.buffer ? this.bySlotAddress.get(bytes.byteOffset) : undefined;
  }

  /** Where thread `lane` keys the ring whose copy is `bytes`, when it is one of this memory's. */
  keyPlaceOf(bytes: Uint8Array, lane: number): KeyArraysInMemory | null {
    const slot = this.slotOf(bytes);
    return slot ? this.keyPlace(slot, lane) : null;
  }

  /** Byte address of thread `lane`'s key job. */
  keyJobAddress(lane: number): number {
    return lane * this.laneBytes;
  }

  /** Byte address of thread `lane`'s merge job. */
  mergeJobAddress(lane: number): number {
    return lane * this.laneBytes + align(KEY_RUN_JOB_BYTES, 64);
  }

  /** Byte address of thread `lane`'s list of other records (OTHER_RECORDS entries of OTHER_BYTES). */
  othersAddress(lane: number): number {
    return (lane + 1) * this.laneBytes - OTHER_RECORDS * OTHER_BYTES;
  }

  /** Where thread `lane` keys `slot`'s ring: this memory, the lane's key job and the slot's arrays. */
  keyPlace(slot: MemorySlot, lane: number): KeyArraysInMemory {
    return { memory: this.memory, kind: this.kind, jobAddress: this.keyJobAddress(lane), arrays: slot.keys };
  }
}

interface MemoryLayout {
  readonly lanes: number;
  readonly laneBytes: number;
  readonly entries: number;
  readonly sideBandTime: number;
  readonly sideBandDestination: number;
  readonly outAddress: number;
  readonly outRows: number;
  readonly total: number;
}

const memories = new WeakMap<ArrayBufferLike, SnapshotMemory>();
/** Each group's newest memory: its free slots go to the group's rings that ask next. */
const newest = new WeakMap<object, SnapshotMemory>();

/** The snapshot memory `bytes` lives in, when it lives in one. */
export function snapshotMemoryOf(bytes: Uint8Array): SnapshotMemory | undefined {
  return memories.get(bytes.buffer);
}

/** The snapshot memory whose output set `set` is. */
export function snapshotMemoryOfSet(set: ColumnSet): SnapshotMemory | undefined {
  const memory = memories.get(set.buffer);
  return memory && memory.set === set ? memory : undefined;
}

/** Rows a ring's keys are sized for: by the newest record of its last copy, the rows kept while that geometry still fits. */
function keyRowsFor(copyBytes: number, newestSize: number, prior: MemorySlot | undefined): number {
  const needed = backwardCapacity(copyBytes, newestSize >= 8 ? newestSize : FIRST_COPY_RECORD_BYTES);
  const kept = prior && prior.copyBytes === copyBytes ? prior.keys.capacity : 0;
  return kept >= needed && kept <= 2 * needed ? kept : needed;
}

/** The newest record's size in a copy (0 when it holds no header): what the ring's next keys are sized by. */
function newestRecordSize(buffer: ArrayBufferLike, address: number, bytes: number): number {
  if (bytes < 8) return 0;
  const view = new Uint8Array(buffer, address + 6, 2);
  return view[0] | (view[1] << 8);
}

/**
 * The next copy of `group.member` in its group's snapshot memory, or null when it gets none there
 * (its group has fewer than two rings, or the engine will not give a memory that big).
 */
export function allocateInSnapshotMemory(copyBytes: number, shared: boolean, previous: Uint8Array | null, group: CopyGroup): CopyBuffer | null {
  const members = group.members();
  if (members.length < 2) return null;
  let memory = newest.get(group.key);
  let slot = memory?.slots.find((s) => s.member === group.member);
  if (!memory || !slot || slot.given || slot.copyBytes !== copyBytes || memory.kind !== (shared ? 'shared' : 'plain')) {
    const made = makeMemory(members, shared, group.member, previous, memory, group.threads);
    if (!made) return null;
    memory = made;
    newest.set(group.key, memory);
    slot = memory.slots.find((s) => s.member === group.member);
    if (!slot) return null;
  }
  slot.given = true;
  const index = memory.slots.indexOf(slot);
  const start = index === 0 ? 0 : slot.start;
  const end = index + 1 < memory.slots.length ? memory.slots[index + 1].start : memory.buffer.byteLength;
  return { bytes: new Uint8Array(memory.buffer, slot.copyAddress, copyBytes), whole: new Uint8Array(memory.buffer, start, end - start) };
}

function makeMemory(
  members: readonly { readonly member: object; readonly copyBytes: number }[],
  shared: boolean,
  asking: object,
  previous: Uint8Array | null,
  prior: SnapshotMemory | undefined,
  threads: number,
): SnapshotMemory | null {
  const entries = 2 * members.length + 16;
  const laneBytes = align(align(KEY_RUN_JOB_BYTES, 64) + mergeScatterJobBytes(entries), 64) + OTHER_RECORDS * OTHER_BYTES;
  // Each thread that may key and merge a snapshot at once gets job records (about 50 KiB) of its own.
  const lanes = Math.max(1, Math.floor(threads));
  let at = lanes * laneBytes;
  const slots: MemorySlot[] = [];
  let keyRows = 0;
  for (const { member, copyBytes } of members) {
    const before = prior?.slots.find((s) => s.member === member);
    const newestSize =
      member === asking
        ? previous
          ? newestRecordSize(previous.buffer, previous.byteOffset, previous.length)
          : 0
        : before?.given
          ? newestRecordSize(prior!.buffer, before.copyAddress, before.copyBytes)
          : 0;
    const capacity = keyRowsFor(copyBytes, newestSize, before);
    const start = align(at, 64);
    const copyAddress = start + 64;
    const time = align(copyAddress + copyBytes, 64);
    const offset = align(time + capacity * 8, 64);
    const position = align(offset + capacity * 4, 64);
    const sampleJobAddress = align(position + capacity * 2, 64);
    at = sampleJobAddress + SAMPLE_RUN_JOB_BYTES;
    slots.push({ member, start, sampleJobAddress, copyAddress, copyBytes, keys: { ringAddress: copyAddress, time, offset, position, capacity }, given: false });
    keyRows += capacity;
  }
  const sideBandTime = align(at, 64);
  const sideBandDestination = sideBandTime + SIDE_BAND_ROWS * 8;
  const outAddress = align(sideBandDestination + SIDE_BAND_ROWS * 4, 4096);
  const outRows = keyRows + SIDE_BAND_ROWS;
  const total = outAddress + columnSetBytes(outRows);
  if (total > MAX_MEMORY_BYTES) return null;
  const pages = Math.ceil(total / PAGE_BYTES);
  let memory: WebAssembly.Memory;
  try {
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared });
  } catch {
    // the runtime refuses this memory (too large, or no shared memory): the caller decodes without it
    return null;
  }
  const made = new SnapshotMemory(memory, shared, slots, { lanes, laneBytes, entries, sideBandTime, sideBandDestination, outAddress, outRows, total });
  memories.set(memory.buffer, made);
  return made;
}

/** The snapshot memory every ring of `ringNumbers` has its copy in, each at a slot of its own; null when they are not all in one. */
export function commonSnapshotMemory(rings: readonly { readonly bytes: Uint8Array }[], ringNumbers: readonly number[]): SnapshotMemory | null {
  if (ringNumbers.length === 0) return null;
  const memory = snapshotMemoryOf(rings[ringNumbers[0]].bytes);
  if (!memory) return null;
  const seen = new Set<MemorySlot>();
  for (const r of ringNumbers) {
    const slot = memory.slotOf(rings[r].bytes);
    if (!slot || seen.has(slot)) return null;
    seen.add(slot);
  }
  return memory;
}

/** `memory`'s output set for a merge of `rows` rows, lent until handed back (returnRoom, or `lent = false` on failure); null when it is out or too small. */
export function takeMergedSet(memory: SnapshotMemory | null, rows: number): ColumnSet | null {
  if (!memory || memory.lent || rows > memory.set.length) return null;
  memory.lent = true;
  return memory.set;
}
