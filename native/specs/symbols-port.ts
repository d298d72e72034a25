// The slice of the symbol resolver (native/symbols/resolve.ts, another layer) that breakpoint
// specs need. Declared here so specs compile on their own; the real TargetSymbols has the same
// shape, so structural typing makes either acceptable. Both methods throw when nothing matches.

export interface ResolvedSymbol {
  readonly address: bigint;
  readonly size: number;
  readonly kind: 'function' | 'object';
  readonly file?: string;
  readonly line?: number;
}

export interface ResolvedLine {
  readonly address: bigint;
  readonly file: string;
  readonly line: number;
}

export interface TargetSymbols {
  resolveSymbol(name: string): ResolvedSymbol;
  resolveLine(file: string, line: number): ResolvedLine;
}
