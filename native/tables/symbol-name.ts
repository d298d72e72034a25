// How a frame is named where it has no symbol, and the function of a perf-style `name+0xoff`: one home for the
// tables (native), the host and the page (shared/stacks.ts re-exports these).

/** The function of a perf-style `name+0xoff`: the name without its offset. */
export function functionName(symbol: string): string {
  const at = symbol.lastIndexOf('+0x');
  return at > 0 && /^\+0x[0-9a-f]+$/.test(symbol.slice(at)) ? symbol.slice(0, at) : symbol;
}

/** What a frame without a name is called: a kernel address where kallsyms is unreadable, or anything perf calls [unknown]. */
export const KERNEL_FRAME = '[kernel]';
export const UNKNOWN_FRAME = '[unknown]';
