// Which name to show for an address. Several symbols at the same address: perf's rule (tools/perf/util/
// symbol.c choose_best_symbol), so our `sym+off` matches `perf script`: a sized symbol over a zero-size
// one, non-weak over weak, global over local, fewer leading underscores, then the longer name.

export interface AliasCandidate {
  readonly name: string;
  readonly size: number;
  readonly binding: 'local' | 'global' | 'weak';
}

function leadingUnderscores(name: string): number {
  let n = 0;
  while (n < name.length && name[n] === '_') n++;
  return n;
}

/** Positive when `a` should be shown over `b`, negative for `b`, 0 on a full tie (perf keeps the first seen). */
export function compareAliases(a: AliasCandidate, b: AliasCandidate): number {
  if (a.size > 0 !== b.size > 0) return a.size > 0 ? 1 : -1;
  if ((a.binding === 'weak') !== (b.binding === 'weak')) return b.binding === 'weak' ? 1 : -1;
  if ((a.binding === 'global') !== (b.binding === 'global')) return a.binding === 'global' ? 1 : -1;
  const ua = leadingUnderscores(a.name);
  const ub = leadingUnderscores(b.name);
  if (ua !== ub) return ua < ub ? 1 : -1;
  return a.name.length - b.name.length;
}

export interface AddressedSymbol {
  readonly value: bigint;
  readonly size: number;
  /** An untyped (STT_NOTYPE) label, as hand-written or generated assembly leaves inside functions. */
  readonly label: boolean;
}

/**
 * Drops the labels that lie inside a sized function (`start < label < start + size`), so the samples after
 * such a label keep the function's name: V8's builtins have local labels like `construct_stub_create_deopt_addr`
 * inside `Builtins_JSConstructStubGeneric`, and perf names those samples `Builtins_JSConstructStubGeneric+0x102`.
 * Labels outside every sized function (ld.so's `_start`) stay: nothing else names that code. `sorted` is by address.
 */
export function withoutEnclosedLabels<T extends AddressedSymbol>(sorted: readonly T[]): T[] {
  const kept: T[] = [];
  let enclosingEnd = 0n;
  for (const symbol of sorted) {
    if (symbol.label && symbol.value < enclosingEnd) continue;
    if (!symbol.label && symbol.size > 0) {
      const end = symbol.value + BigInt(symbol.size);
      if (end > enclosingEnd) enclosingEnd = end;
    }
    kept.push(symbol);
  }
  return kept;
}
