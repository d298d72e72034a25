// /proc/kallsyms: kernel symbols sorted by address, looked up by bisection. A symbol's extent is up to
// the next symbol's address (kallsyms has no sizes), which is what perf does for kernel maps too.

import { readFileSync } from 'node:fs';

export interface KernelSymbol {
  readonly address: bigint;
  readonly name: string;
  /** nm-style type letter (T, t, D, ...). */
  readonly type: string;
  /** Module name for symbols printed with `[module]`. */
  readonly module?: string;
}

export class Kallsyms {
  /** Code symbols sorted by address (stable: file order among aliases), as parallel columns. */
  private readonly high: Uint32Array;
  private readonly low: Uint32Array;
  private readonly names: string[];
  private readonly types: string[];
  private readonly modules: (string | undefined)[];
  private list: KernelSymbol[] | undefined;

  /**
   * Parses kallsyms text: about 200,000 lines, so each line is cut by index, its address read as two 32-bit halves
   * (no BigInt, no object per symbol) and the names kept as slices of the text.
   */
  constructor(text: string) {
    const high: number[] = [];
    const low: number[] = [];
    const names: string[] = [];
    const types: string[] = [];
    const modules: (string | undefined)[] = [];
    for (let at = 0; at < text.length;) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      const space = text.indexOf(' ', at);
      if (space > at && space + 3 < end) {
        const type = text[space + 1];
        // Only code symbols make sense for IPs; absolute symbols (a/A) are per-cpu offsets etc.
        if ((type === 'T' || type === 't' || type === 'W' || type === 'w') && text[space + 2] === ' ') {
          const digits = space - at;
          const hi = digits > 8 ? Number.parseInt(text.slice(at, space - 8), 16) : 0;
          const lo = Number.parseInt(text.slice(Math.max(at, space - 8), space), 16);
          // kptr_restrict hides addresses as zeros.
          if ((hi !== 0 || lo !== 0) && Number.isFinite(hi) && Number.isFinite(lo)) {
            // The rest of the line only: a search of the whole text for a module's tab made the parse quadratic.
            const rest = text.slice(space + 3, end);
            const tab = rest.indexOf('\t');
            const module = tab >= 0 ? /^\s*\[(.*)\]/.exec(rest.slice(tab + 1))?.[1] : undefined;
            high.push(hi);
            low.push(lo);
            names.push((tab >= 0 ? rest.slice(0, tab) : rest).trim());
            types.push(type);
            modules.push(module);
          }
        }
      }
      at = end + 1;
    }
    const order = Array.from(high, (_, i) => i).sort((a, b) => high[a] - high[b] || low[a] - low[b] || a - b);
    this.high = Uint32Array.from(order, (i) => high[i]);
    this.low = Uint32Array.from(order, (i) => low[i]);
    this.names = order.map((i) => names[i]);
    this.types = order.map((i) => types[i]);
    this.modules = order.map((i) => modules[i]);
  }

  /**
   * /proc/kallsyms, parsed once per process (per path): a capture's snapshots, the editor's sessions and every
   * Symbolizer share it. Modules loaded later are not seen, as perf record sees the kallsyms of its start.
   */
  static read(path = '/proc/kallsyms'): Kallsyms {
    let parsed = parsedByPath.get(path);
    if (!parsed) {
      parsed = new Kallsyms(readFileSync(path, 'utf8'));
      parsedByPath.set(path, parsed);
    }
    return parsed;
  }

  /** Text symbols sorted by address, as objects (built on first use: lookups do not need them). */
  get symbols(): readonly KernelSymbol[] {
    this.list ??= this.names.map((_, i) => this.symbolAt(i));
    return this.list;
  }

  /** True when addresses were readable (not all hidden by kptr_restrict). */
  get usable(): boolean {
    return this.names.length > 0;
  }

  private addressAt(i: number): bigint {
    return (BigInt(this.high[i]) << 32n) | BigInt(this.low[i]);
  }

  private symbolAt(i: number): KernelSymbol {
    return { address: this.addressAt(i), name: this.names[i], type: this.types[i], module: this.modules[i] };
  }

  /** The symbol containing `address`: the last one starting at or below it. */
  lookup(address: bigint): { symbol: KernelSymbol; offset: bigint } | undefined {
    const wantHigh = Number(address >> 32n);
    const wantLow = Number(address & 0xffffffffn);
    let lo = 0;
    let hi = this.names.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.high[mid] < wantHigh || (this.high[mid] === wantHigh && this.low[mid] <= wantLow)) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best < 0) return undefined;
    // Several names can share an address (memcpy, __memcpy, __pi_memcpy). perf gives each kallsyms symbol
    // the extent up to the next one, so all but the last alias in file order get zero length and lose to it
    // (symbols__fixup_end, then choose_best_symbol). The sort is stable and bisection lands on that last one.
    const chosen = this.symbolAt(best);
    return { symbol: chosen, offset: address - chosen.address };
  }

  byName(name: string): KernelSymbol | undefined {
    const i = this.names.indexOf(name);
    return i < 0 ? undefined : this.symbolAt(i);
  }
}

const parsedByPath = new Map<string, Kallsyms>();
