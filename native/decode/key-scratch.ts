// The arrays a ring's records are keyed into before they are merged (scatter.ts keyRing in
// JavaScript, wasm/key-run.ts in WebAssembly): a leaf, so both build on it without importing each
// other.

/** Scratch for one ring's keys: times, byte offsets and event positions, filled from the top down (reused across snapshots when big enough). */
export interface KeyScratch {
  readonly time: Float64Array;
  readonly offset: Uint32Array;
  readonly position: Uint16Array;
}

/** Scratch arrays of `rows` entries in shared memory (what crosses threads without a copy). */
export function sharedKeyScratch(rows: number): KeyScratch {
  return {
    time: new Float64Array(new SharedArrayBuffer(rows * 8)),
    offset: new Uint32Array(new SharedArrayBuffer(rows * 4)),
    position: new Uint16Array(new SharedArrayBuffer(rows * 2)),
  };
}
