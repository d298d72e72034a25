// Sampled call stacks as the host sends them and the page's call tree reads them: each distinct stack
// once, frames merged by function name (perf report's sym column), samples referring to stacks by id.

/** A source line as the host's line tables give it. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
}

/**
 * Distinct stacks of a capture: frames of stack s are frames[start[s] .. start[s+1]), leaf first, each an index into `names`.
 * Where the host knows source lines, two stacks with the same functions but a different leaf line are distinct, so samples
 * can be counted per line: `leafLocation[s]` is the line of stack s's leaf address and `nameLocation[n]` the line of
 * function n's entry, both indexes into `locations` (-1: unknown).
 */
export interface StackTable {
  readonly names: readonly string[];
  readonly start: Uint32Array;
  readonly frames: Int32Array;
  readonly locations?: readonly SourceLocation[];
  readonly leafLocation?: Int32Array;
  readonly nameLocation?: Int32Array;
  /** The objects (executables, shared libraries, `[kernel.kallsyms]`) the functions are in: `nameLibrary[n]` indexes it (-1: unknown). */
  readonly libraries?: readonly string[];
  readonly nameLibrary?: Int32Array;
}

// One home for these, shared with the native tables (pure: no node, no DOM).
export { functionName, KERNEL_FRAME, UNKNOWN_FRAME } from '../native/tables/symbol-name';

// The library perf names kernel frames by: one home with the symbolizer's (pure).
export { KERNEL_LIBRARY } from '../native/abi/object-names';
