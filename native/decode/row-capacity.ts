// How many rows a backward ring's decode first asks for: the ring's bytes over its newest record's
// size, with slack. One rule for the decoder (decode-ring.ts) and for the room a copy's memory
// keeps for its columns (wasm/copy-room.ts), so a room sized by it is never too small for a copy
// whose newest record is no smaller than the one it was sized by.

/** Some room over an estimated row count, so that slightly smaller records than estimated need no regrowth. */
export function withSlack(rows: number): number {
  return Math.ceil(rows * 1.0625) + 16;
}

/** Rows for `bytes` of backward ring whose newest record is `newestSize` bytes (0 when it has no whole record). */
export function backwardCapacity(bytes: number, newestSize: number): number {
  return newestSize >= 8 ? withSlack(Math.floor(bytes / newestSize)) : 0;
}
