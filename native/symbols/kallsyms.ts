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
  /** Text symbols sorted by address. */
  readonly symbols: readonly KernelSymbol[];

  constructor(text: string) {
    const list: KernelSymbol[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const parts = line.split(/\s+/);
      if (parts.length < 3) continue;
      const type = parts[1];
      // Only code symbols make sense for IPs; absolute symbols (a/A) are per-cpu offsets etc.
      if (!'TtWw'.includes(type)) continue;
      const address = BigInt('0x' + parts[0]);
      if (address === 0n) continue; // kptr_restrict hides addresses as zeros
      const module = parts[3]?.startsWith('[') ? parts[3].slice(1, -1) : undefined;
      list.push({ address, name: parts[2], type, module });
    }
    list.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    this.symbols = list;
  }

  static read(path = '/proc/kallsyms'): Kallsyms {
    return new Kallsyms(readFileSync(path, 'utf8'));
  }

  /** True when addresses were readable (not all hidden by kptr_restrict). */
  get usable(): boolean { return this.symbols.length > 0; }

  /** The symbol containing `address`: the last one starting at or below it. */
  lookup(address: bigint): { symbol: KernelSymbol; offset: bigint } | undefined {
    const s = this.symbols;
    let lo = 0; let hi = s.length - 1; let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (s[mid].address <= address) { best = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (best < 0) return undefined;
    // Several names can share an address (memcpy, __memcpy, __pi_memcpy). perf gives each kallsyms symbol
    // the extent up to the next one, so all but the last alias in file order get zero length and lose to it
    // (symbols__fixup_end, then choose_best_symbol). The sort is stable and bisection lands on that last one.
    const chosen = s[best];
    return { symbol: chosen, offset: address - chosen.address };
  }

  byName(name: string): KernelSymbol | undefined {
    return this.symbols.find((s) => s.name === name);
  }
}

