// Sampled call stacks as the host sends them and the page's call tree reads them: each distinct stack
// once, frames merged by function name (perf report's sym column), samples referring to stacks by id.

/** Distinct stacks of a capture: frames of stack s are frames[start[s] .. start[s+1]), leaf first, each an index into `names`. */
export interface StackTable {
  readonly names: readonly string[];
  readonly start: Uint32Array;
  readonly frames: Int32Array;
}

/** The function of a perf-style `name+0xoff`: the name without its offset. */
export function functionName(symbol: string): string {
  const at = symbol.lastIndexOf('+0x');
  return at > 0 && /^\+0x[0-9a-f]+$/.test(symbol.slice(at)) ? symbol.slice(0, at) : symbol;
}

/** What a frame without a name is called: a kernel address where kallsyms is unreadable, or anything perf calls [unknown]. */
export const KERNEL_FRAME = '[kernel]';
export const UNKNOWN_FRAME = '[unknown]';
