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
