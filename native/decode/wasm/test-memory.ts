// Test support: a snapshot's flight-recorder copies placed in one snapshot memory as a recorder's
// group copies them, so the decode merges them as WebAssembly. Nothing in the product imports it;
// it imports no Node built-in, as everything under native/decode.

import type { CopyGroup, RingCopy } from '../../abi/snapshot';
import type { SnapshotInput } from '../assemble';
import type { DecodedSnapshot } from '../types';
import { allocateDecodableCopy } from './copy-room';
import { snapshotMemoryOf } from './snapshot-memory';

/** A group of `sizes.length` rings decoded by `threads` lanes, as a recorder describes them to the allocator. */
export function groupOf(sizes: readonly number[], threads: number): { members: object[]; askFor(member: number): CopyGroup } {
  const key = {};
  const members = sizes.map(() => ({}));
  const list = () => members.map((member, i) => ({ member, copyBytes: sizes[i] }));
  return { members, askFor: (member) => ({ key, member: members[member], members: list, threads }) };
}

/** The snapshot with every flight-recorder ring's copy in one snapshot memory (of a group of `threads` lanes). */
export function inSnapshotMemory(input: SnapshotInput, threads: number, shared = true): SnapshotInput {
  const backward = input.rings.filter((ring) => ring.direction === 'backward');
  const group = groupOf(
    backward.map((ring) => ring.bytes.length),
    threads,
  );
  const rings = input.rings.map((ring): RingCopy => {
    const member = backward.indexOf(ring);
    if (member < 0) return ring;
    const { bytes } = allocateDecodableCopy(ring.bytes.length, shared, null, group.askFor(member));
    bytes.set(ring.bytes);
    return { ...ring, bytes };
  });
  if (backward.length >= 2) {
    const memory = snapshotMemoryOf(rings.find((ring) => ring.direction === 'backward')!.bytes);
    if (!memory) throw new Error('the group got no snapshot memory');
    for (const ring of rings) {
      if (ring.direction === 'backward' && snapshotMemoryOf(ring.bytes) !== memory)
        throw new Error(`ring ${ring.ringId} is not in the group's snapshot memory`);
    }
  }
  return { ...input, rings };
}

/** True when the columns are the snapshot memory's output set. */
export function mergedInMemory(snapshot: DecodedSnapshot): boolean {
  return snapshot.rings.some((ring) => ring.direction === 'backward' && ring.bytes.buffer === snapshot.columns.time.buffer);
}
