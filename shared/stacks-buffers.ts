// A capture's stacks as bytes and back (protocol.ts BinaryStacks): how they travel after its records. Pure.

import type { BinaryStacks, WireStacks } from './protocol';
import type { StackTable } from './stacks';

/** The exact bytes of a typed array, in a buffer of their own (what a message carries). */
function bytesOf(array: Uint32Array | Int32Array): ArrayBuffer {
  return array.byteOffset === 0 && array.buffer instanceof ArrayBuffer && array.buffer.byteLength === array.byteLength
    ? array.buffer
    : (array.slice().buffer as ArrayBuffer);
}

/** A StackTable (the host's) as BinaryStacks. */
export function stacksToBuffers(table: StackTable): BinaryStacks {
  const { names, start, frames, locations, leafLocation, nameLocation, libraries, nameLibrary } = table;
  return {
    names,
    start: bytesOf(start),
    frames: bytesOf(frames),
    ...(libraries && nameLibrary ? { libraries, nameLibrary: bytesOf(nameLibrary) } : {}),
    ...(locations && leafLocation && nameLocation ? { locations, leafLocation: bytesOf(leafLocation), nameLocation: bytesOf(nameLocation) } : {}),
  };
}

/**
 * BinaryStacks as the WireStacks a snapshotStart carries (what validation and the store read); a buffer whose length
 * is not a whole number of entries is a RangeError.
 */
export function stacksFromBuffers(stacks: BinaryStacks): WireStacks {
  const ints = (buffer: ArrayBuffer, unsigned = false) => Array.from(unsigned ? new Uint32Array(buffer) : new Int32Array(buffer));
  return {
    names: stacks.names,
    start: ints(stacks.start, true),
    frames: ints(stacks.frames),
    ...(stacks.libraries !== undefined || stacks.nameLibrary !== undefined
      ? { libraries: stacks.libraries ?? [], nameLibrary: stacks.nameLibrary ? ints(stacks.nameLibrary) : [] }
      : {}),
    ...(stacks.locations !== undefined || stacks.leafLocation !== undefined || stacks.nameLocation !== undefined
      ? {
          locations: stacks.locations ?? [],
          leafLocation: stacks.leafLocation ? ints(stacks.leafLocation) : [],
          nameLocation: stacks.nameLocation ? ints(stacks.nameLocation) : [],
        }
      : {}),
  };
}
