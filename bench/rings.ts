// Scaling with the number of rings: a machine with N CPUs gives a recording N flight-recorder
// rings, and this 2-vCPU VM cannot fill 16 or 64 real ones. So the records of one real ring are
// dealt out to `count` simulated per-CPU rings in bursts (as CPUs interleave in time), each a
// linearised backward copy of its share, newest first, and the whole set is decoded and merged by
// time. Same bytes, same record count, only the ring count changes: what grows is the merge.
// Each count is decoded on one thread and by a DecodePool (worker threads + this one); the
// simulated rings live in shared memory, as a recorder with sharedCopyBuffers copies them.

import { availableParallelism } from 'node:os';
import { RecordType } from '../native/abi/uapi';
import { powerOfTwoAtLeast } from '../native/abi/units';
import { ColumnArena } from '../native/decode/arena';
import { decodeSnapshot } from '../native/decode/columns';
import type { EventDescription, RingCopy } from '../native/abi/snapshot';
import { median, nowNs } from './stats';
import { allocateDecodableCopy } from '../native/decode/wasm/copy-room';
import { RECORD_COLUMN_NAMES } from '../native/decode/column-schema';
import type { RecordColumns } from '../native/decode/types';
import { measureParallel } from './parallel';
import type { DecodePool } from '../native/decode-pool/pool';

/** Records a simulated CPU writes before the next one does: bursts, as a scheduler hands out time slices. */
const BURST_RECORDS = 8;

/** `copy`'s records (a backward copy: newest first) dealt out to `count` backward rings of the same total size. */
export function splitIntoRings(copy: RingCopy, count: number): RingCopy[] {
  const words = new Uint32Array(copy.bytes.buffer, copy.bytes.byteOffset, copy.validBytes >>> 2);
  const sizes = new Array<number>(count).fill(0);
  const targets: number[] = [];
  let at = 0;
  let afterLost = false;
  for (let record = 0; at + 8 <= copy.validBytes; record++) {
    const size = words[(at >>> 2) + 1] >>> 16;
    if (size < 8 || at + size > copy.validBytes) break;
    // A LOST record and the record after it in memory were written in one reservation (see
    // placeLostBeforePartner): a real ring always holds both, so they go to the same simulated one.
    const ring = afterLost ? targets[targets.length - 1] : Math.floor(record / BURST_RECORDS) % count;
    afterLost = words[at >>> 2] === RecordType.LOST;
    targets.push(ring);
    sizes[ring] += size;
    at += size;
  }
  // Where a recorder with sharedCopyBuffers and the decoder's allocator copies its rings: every
  // ring's copy in one snapshot memory (native/decode/wasm/snapshot-memory.ts), faulted in before
  // the copy as the recorder's idle warming does.
  const group = { key: {}, members: () => sizes.map((size, ring) => ({ member: members[ring], copyBytes: size })), threads: availableParallelism() };
  const members = sizes.map(() => ({}));
  const bytes = sizes.map((size, ring) => {
    const { bytes: copy, whole } = allocateDecodableCopy(size, true, null, { ...group, member: members[ring] });
    for (let at = 0; at < whole.length; at += 4096) whole[at] = 0;
    return copy;
  });
  const filled = new Array<number>(count).fill(0);
  at = 0;
  for (const ring of targets) {
    const size = words[(at >>> 2) + 1] >>> 16;
    bytes[ring].set(copy.bytes.subarray(at, at + size), filled[ring]);
    filled[ring] += size;
    at += size;
  }
  return bytes.map((b, ring) => ({
    ...copy,
    ringId: ring,
    label: `cpu${ring}`,
    cpu: ring,
    bytes: b,
    validBytes: b.length,
    // Not wrapped: every record is whole, none is the cut oldest one.
    dataSize: powerOfTwoAtLeast(Math.max(8, b.length + 8)),
    bytesWritten: BigInt(b.length),
  }));
}

/** Bytes the columns span in their buffer (the buffer may hold more: a snapshot memory holds the copies too). */
function columnSpanBytes(columns: RecordColumns): number {
  const views = RECORD_COLUMN_NAMES.map((name) => columns[name]);
  return Math.max(...views.map((v) => v.byteOffset + v.byteLength)) - Math.min(...views.map((v) => v.byteOffset));
}

export interface RingCountResult {
  readonly rings: number;
  readonly records: number;
  /** Decode + merge into columns from a warm arena, median ms. */
  readonly decodeMs: number;
  /** The same into fresh columns (page faults included). */
  readonly decodeFreshMs: number;
  /** Column memory of one decoded snapshot, bytes (the span of its columns; the arena may keep as much again for per-ring sets). */
  readonly columnBytes: number;
  /** What the arena holds besides the result between snapshots: the per-ring sets the merge read from. */
  readonly arenaBytes: number;
  /** Threads that decoded in the parallel runs (1: the pool kept the snapshot on this thread). */
  readonly parallelThreads: number;
  /** Decode on every thread + merge from a warm shared arena, median ms; and one thread in the same alternating runs. */
  readonly parallelMs: number;
  readonly pairedSingleMs: number;
}

/** Decodes the records of `copy` split into `count` rings, `runs` times after `warmup`; `fresh`: false skips the fresh-columns runs (NaN). */
export async function measureRingCount(
  events: readonly EventDescription[],
  copy: RingCopy,
  count: number,
  runs: number,
  warmup: number,
  pool: DecodePool,
  fresh = true,
): Promise<RingCountResult> {
  const input = { events, rings: splitIntoRings(copy, count) };
  // Fresh columns are timed on plain copies of the same rings: no snapshot memory, every page faulted in by the decode.
  const plainInput = { events, rings: input.rings.map((ring) => ({ ...ring, bytes: ring.bytes.slice() })) };
  const arena = new ColumnArena();
  let previous: ReturnType<typeof decodeSnapshot> | undefined;
  const warm: number[] = [];
  const freshRuns: number[] = [];
  for (let i = -warmup; i < runs; i++) {
    arena.warm();
    let started = nowNs();
    previous = decodeSnapshot(input, { arena });
    const warmNs = nowNs() - started;
    // Handed back before the next decode, as a consumer done with a snapshot does: their memory
    // (the arena's set, or the snapshot memory's) serves the next one.
    if (i < runs - 1) arena.recycle(previous.columns);
    started = nowNs();
    if (fresh) decodeSnapshot(plainInput);
    const freshNs = nowNs() - started;
    if (i < 0) continue;
    warm.push(warmNs);
    freshRuns.push(fresh ? freshNs : NaN);
  }
  const columns = previous!.columns;
  const columnBytes = columnSpanBytes(columns);
  arena.recycle(columns);
  const arenaBytes = arena.pooledBytes;
  arena.release();
  const parallel = await measureParallel(input, runs, warmup, pool);
  return {
    rings: count,
    records: columns.length,
    decodeMs: median(warm) / 1e6,
    decodeFreshMs: fresh ? median(freshRuns) / 1e6 : NaN,
    columnBytes,
    arenaBytes,
    parallelThreads: parallel.threads,
    parallelMs: parallel.parallelNs / 1e6,
    pairedSingleMs: parallel.singleNs / 1e6,
  };
}
