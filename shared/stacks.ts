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

/** The library perf names kernel frames by. */
export const KERNEL_LIBRARY = '[kernel.kallsyms]';

/** The function of a perf-style `name+0xoff`: the name without its offset. */
export function functionName(symbol: string): string {
  const at = symbol.lastIndexOf('+0x');
  return at > 0 && /^\+0x[0-9a-f]+$/.test(symbol.slice(at)) ? symbol.slice(0, at) : symbol;
}

/** What a frame without a name is called: a kernel address where kallsyms is unreadable, or anything perf calls [unknown]. */
export const KERNEL_FRAME = '[kernel]';
export const UNKNOWN_FRAME = '[unknown]';
