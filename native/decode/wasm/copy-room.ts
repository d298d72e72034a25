// A flight-recorder ring's copy and the room its columns are decoded into, in one WebAssembly
// memory, so that the decoder's sample loop can run as WebAssembly (sample-run.ts) over the copy
// where the pause put it, writing the rows where the snapshot keeps them. Nothing is copied in or
// out: copying 64 MiB into a separate memory would cost about 3.6 ms on the bench machine, most of
// the 5.5 ms the WebAssembly loop saves.
//
// Layout of one memory: the copy (64 bytes in), then the room, then the engine's job record. The room: a
// column set of backwardCapacity(copy size, newest record size of the ring's previous copy) rows.
// The owner of the copy buffer (SpareCopyBuffer) faults all of it in while idle, as the column
// arena does for its sets, so the decode takes no page faults.
//
// Lifetime: each copy is its own memory, freed by the GC like any buffer once nothing holds the
// copy or the columns decoded into its room. A memory's size is fixed at allocation (never grown:
// growing would detach a plain memory's buffer under the views the snapshot holds).
//
// Where a WebAssembly memory cannot be had (RLIMIT_AS too small for the engine's reservation of a
// 32-bit memory with guard pages, or more than 4 GiB needed), the copy goes into a plain buffer
// and the JavaScript loop decodes it: the same columns, slower.

import { plainCopyBuffer, type CopyAllocator, type CopyBuffer } from '../../abi/snapshot';
import { ColumnSet, columnSetBytes, type SetSource } from '../column-set';
import { backwardCapacity, withSlack } from '../row-capacity';
import { isWholeRecord, u32View } from '../walk';
import type { RecordColumns } from '../types';
import { SampleRunEngine } from './sample-run';
import { columnAddresses } from './kernels';
import { SAMPLE_RUN_JOB_BYTES } from './job-layout';
import { allocateInSnapshotMemory, snapshotMemoryOf, snapshotMemoryOfSet, type MemorySlot, type SnapshotMemory } from './snapshot-memory';

const PAGE_BYTES = 65536;
/** A 32-bit memory's limit: 65536 pages of 64 KiB. */
const MAX_MEMORY_BYTES = 65536 * PAGE_BYTES;
/**
 * Record size a ring's first room is sized by, before any copy has shown its records: a sample
 * with ip, tid, time, cpu and id (the smallest Ringside's own events write is 56 bytes, with period).
 */
const FIRST_COPY_RECORD_BYTES = 48;

/** A copy's memory: where the copy is, its room, and the engine that decodes into it (made on first use). */
interface Room {
  readonly memory: WebAssembly.Memory;
  readonly shared: boolean;
  /** Where the engine keeps its job record. */
  readonly jobAddress: number;
  /** Where the copy starts in the memory: the engine decodes only a copy seen from there. */
  readonly copyAddress: number;
  readonly copyBytes: number;
  readonly set: ColumnSet;
  /** True while the room's set is out: taken by a decode, or holding a snapshot's columns. */
  lent: boolean;
  /** True once a decode took the room: the ring is decoded on its own, so its next copy gets a room too. */
  used: boolean;
  /** Rows the last decode of this copy found (0: not decoded yet): what the ring's next room is sized by. */
  rowsDecoded: number;
  engine: SampleRunEngine | null;
}

/**
 * A ring's slot in a snapshot memory seen as a room: the memory's output set, lent once for the
 * whole memory (every ring's copy there shares it).
 */
class SlotRoom implements Room {
  readonly shared: boolean;
  readonly jobAddress: number;
  readonly copyAddress: number;
  readonly copyBytes: number;
  used = false;
  rowsDecoded = 0;
  engine: SampleRunEngine | null = null;

  constructor(
    private readonly snapshot: SnapshotMemory,
    slot: MemorySlot,
  ) {
    this.shared = snapshot.kind === 'shared';
    this.jobAddress = slot.sampleJobAddress;
    this.copyAddress = slot.copyAddress;
    this.copyBytes = slot.copyBytes;
  }

  get memory(): WebAssembly.Memory {
    return this.snapshot.memory;
  }

  get set(): ColumnSet {
    return this.snapshot.set;
  }

  get lent(): boolean {
    return this.snapshot.lent;
  }

  set lent(value: boolean) {
    this.snapshot.lent = value;
  }
}

const slotRooms = new WeakMap<MemorySlot, SlotRoom>();

const rooms = new WeakMap<ArrayBufferLike, Room>();

const align64 = (n: number): number => Math.ceil(n / 64) * 64;

/** The engine's memory of `bytes`, or null when the engine will not give one (address-space limit). */
function memoryOf(bytes: number, shared: boolean): WebAssembly.Memory | null {
  const pages = Math.ceil(bytes / PAGE_BYTES);
  try {
    return new WebAssembly.Memory({ initial: pages, maximum: pages, shared });
  } catch {
    // the runtime refuses this memory (too large, or no shared memory): the caller copies into an ArrayBuffer instead
    return null;
  }
}

/**
 * CopyAllocator for copies this decoder decodes: a WebAssembly memory with room for the ring's
 * columns. A ring whose previous copy had a room no decode took (its snapshots have several
 * flight-recorder rings, merged into one set on the scatter path) gets a plain buffer instead:
 * its owner would fault the room in while idle for nothing.
 */
export const allocateDecodableCopy: CopyAllocator = (copyBytes, shared, previous, group) => {
  // A ring of a recorder's group: every ring's next copy in one memory, with their keys and merged columns.
  const inSnapshotMemory = group ? allocateInSnapshotMemory(copyBytes, shared, previous, group) : null;
  if (inSnapshotMemory) return inSnapshotMemory;
  const prior = previous ? rooms.get(previous.buffer) : undefined;
  if (prior && !prior.used) return plainCopyBuffer(copyBytes, shared, null);
  // The rows the previous copy held, scaled to this one's size: a ring's newest record alone misjudged
  // rings of samples with callchains, whose sizes vary with their depth (a 1 MiB copy whose newest sample
  // had 424 bytes got a room of 2,644 rows for 7,701 records, and every decode of it ran the JavaScript loop).
  const previousRows = prior && prior.rowsDecoded > 0 ? withSlack(Math.ceil((prior.rowsDecoded * copyBytes) / prior.copyBytes)) : 0;
  return allocateWithRoom(copyBytes, shared, previous, prior, previousRows);
};

/** A copy of `copyBytes` with a room of at least `leastRows` rows (and of what its previous copy's newest record asks). */
function allocateWithRoom(copyBytes: number, shared: boolean, previous: Uint8Array | null, prior: Room | undefined, leastRows: number): CopyBuffer {
  const newestSize = previous && previous.length >= 8 ? previous[6] | (previous[7] << 8) : 0;
  const needed = Math.max(leastRows, backwardCapacity(copyBytes, newestSize >= 8 ? newestSize : FIRST_COPY_RECORD_BYTES));
  // The previous room's rows while they hold what is needed and not twice that: a ring's copies then
  // keep one geometry (where the copy and each column start) as their newest records' sizes vary,
  // and the sample run one module compiled for it (sample-run.ts).
  const kept = prior?.set.length ?? 0;
  const rows = prior && prior.copyBytes === copyBytes && kept >= needed && kept <= 2 * needed ? kept : needed;
  // The copy 64 bytes in and the room right after it, the job record after the room: the copy's and
  // the columns' places modulo a page are what they were with a 64-byte job before the copy, and
  // moving them 128 bytes on (a job of 136 bytes first) made the sample run 10% slower at 1 MiB.
  const copyAddress = 64;
  const roomAddress = align64(copyAddress + copyBytes);
  const jobAddress = align64(roomAddress + columnSetBytes(rows));
  const total = jobAddress + SAMPLE_RUN_JOB_BYTES;
  const memory = total <= MAX_MEMORY_BYTES ? memoryOf(total, shared) : null;
  if (!memory) return plainCopyBuffer(copyBytes, shared, null);
  const buffer = memory.buffer;
  rooms.set(buffer, {
    memory,
    shared,
    jobAddress,
    copyAddress,
    copyBytes,
    set: new ColumnSet(rows, buffer, roomAddress),
    lent: false,
    used: false,
    rowsDecoded: 0,
    engine: null,
  });
  return { bytes: new Uint8Array(buffer, copyAddress, copyBytes), whole: new Uint8Array(buffer, 0, total) };
}

/** Notes the rows a decode found in the copy `bytes` (a backward ring's), when it has a room of its own: its ring's next room is sized by them. */
export function noteRowsDecoded(bytes: Uint8Array, rows: number): void {
  const room = rooms.get(bytes.buffer);
  if (room) room.rowsDecoded = rows;
}

/**
 * `source` (a backward ring's copy) copied into a decodable copy's memory, as if a pause had copied it there
 * (for tests and the bench): with the room a recording's next copy has once it has decoded a copy like it
 * (allocateDecodableCopy sizes it by the rows the previous copy held), here the rows `source` holds.
 */
export function decodableCopyOf(source: Uint8Array, shared = false): Uint8Array {
  const aligned = source.byteOffset % 4 === 0 ? source : source.slice();
  const words = u32View(aligned);
  let records = 0;
  for (let at = 0; isWholeRecord(words, at, aligned.length); at += words[(at >>> 2) + 1] >>> 16) records++;
  const { bytes, whole } = allocateWithRoom(source.length, shared, source, undefined, withSlack(records));
  bytes.set(source);
  // Fault the room in, as the copy's owner does while idle: a write per page (a read would map the shared zero page).
  for (let at = 0; at < whole.length; at += 4096) whole[at] |= 0;
  return bytes;
}

/** True when `bytes` is a copy with a room (allocateDecodableCopy found a WebAssembly memory for it). */
export function hasRoom(bytes: Uint8Array): boolean {
  return roomOf(bytes) !== undefined;
}

/** The room of the copy `bytes`, when it has one: its own, or its slot's in a snapshot memory. */
export function roomOf(bytes: Uint8Array): Room | undefined {
  const own = rooms.get(bytes.buffer);
  if (own) return own;
  const snapshot = snapshotMemoryOf(bytes);
  const slot = snapshot?.slotOf(bytes);
  if (!snapshot || !slot) return undefined;
  let room = slotRooms.get(slot);
  if (!room) {
    room = new SlotRoom(snapshot, slot);
    slotRooms.set(slot, room);
  }
  return room;
}

/** A set source that gives the room's set first (when it is free and holds `rows`), else takes from `sets`. */
export function roomFirst(room: Room, sets: SetSource): SetSource {
  return {
    take(rows: number): ColumnSet {
      if (room.lent || rows > room.set.length) return sets.take(rows);
      room.lent = true;
      room.used = true;
      return room.set;
    },
    give(set: ColumnSet): void {
      if (set === room.set) room.lent = false;
      else sets.give(set);
    },
  };
}

/**
 * Frees the room decoded `columns` live in, when they live in one: a later decode of the same copy
 * writes there again (the bench decodes one copy many times). The caller must not read those
 * columns afterwards. False when they are not in a room.
 */
export function returnRoom(columns: RecordColumns): boolean {
  const room = rooms.get(columns.time.buffer) ?? snapshotMemoryOf(new Uint8Array(columns.time.buffer, 0, 0));
  if (!room || !room.lent) return false;
  room.lent = false;
  return true;
}

/**
 * Frees `set` when it is a room's (its own copy's, or a snapshot memory's output set) that a
 * decode took and then gave back (the ring's rows were merged into another set); false when it is
 * not a room's set. Every SetSource's give() calls this first, so a room is never left lent by a
 * merge that did not keep it.
 */
export function releaseRoomSet(set: ColumnSet): boolean {
  const own = rooms.get(set.buffer);
  const room = own && own.set === set ? own : snapshotMemoryOfSet(set);
  if (!room) return false;
  room.lent = false;
  return true;
}

/** The engine that decodes the copy `bytes` (seen from its start) into `out`, when `out` is that copy's room; null otherwise. */
export function engineFor(bytes: Uint8Array, out: ColumnSet): SampleRunEngine | null {
  const room = roomOf(bytes);
  if (!room || out !== room.set || bytes.byteOffset !== room.copyAddress) return null;
  room.engine ??= new SampleRunEngine(room.memory, room.shared, room.jobAddress, room.copyAddress, columnAddresses(room.set));
  return room.engine;
}
