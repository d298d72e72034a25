// A typed array with room for more entries, grown by doubling: one home for the growth of the column builders (kallsyms,
// the pprof builder, the host's thread-state columns). Pure.

/** A typed array of any element type. */
type TypedColumn = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/**
 * `array` with room for `length` entries: itself when it has it, else a copy at least twice as long, the new entries
 * `fill` (doubling copies each entry a few times at most).
 */
export function grown<T extends TypedColumn>(array: T, length: number, fill = 0): T {
  if (array.length >= length) return array;
  const wider = new (array.constructor as new (length: number) => T)(Math.max(length, array.length * 2));
  wider.set(array);
  if (fill !== 0) wider.fill(fill, array.length);
  return wider;
}
