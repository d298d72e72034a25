// /proc/kallsyms: kernel symbols sorted by address, looked up by bisection. A symbol's extent is up to
// the next symbol's address (kallsyms has no sizes), which is what perf does for kernel maps too.

import { grown } from '../abi/grown';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { release } from 'node:os';
import { prefetchedKallsyms } from './prefetch';
import { loadKallsymsColumns, storeKallsymsColumns, symbolCacheEnabled, type KallsymsColumns } from './symbol-cache';

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
  /**
   * Where each symbol's line starts in `lines`: the code symbols' lines of kallsyms in address order without their
   * addresses (`TYPE NAME[\tMODULE]`), the type, name and module read from there on demand. The whole text (5.4 MB,
   * 17 bytes a line of addresses the columns hold) is not kept.
   */
  private readonly lineStart: Int32Array;
  private readonly lines: string;
  private list: KernelSymbol[] | undefined;

  /**
   * Parses kallsyms text: about 200,000 lines, of which a decode names a few thousand addresses. So one pass over
   * the characters reads each code symbol's address as two 32-bit halves and keeps where its line starts: no slice,
   * parseInt, string or object per line; a name and module are cut from the text when a lookup finds them.
   */
  constructor(text: string, columns?: KallsymsColumns) {
    if (columns) {
      // Columns parsed by an earlier process of this boot (the disk cache): nothing to parse.
      this.high = columns.high;
      this.low = columns.low;
      this.lineStart = columns.lineStart;
      this.lines = columns.text;
      return;
    }
    let high = new Uint32Array(1 << 16);
    let low = new Uint32Array(1 << 16);
    let lineStart = new Int32Array(1 << 16);
    let count = 0;
    let sorted = true;
    const length = text.length;
    for (let at = 0; at < length;) {
      // The address: hex digits up to the first space.
      let hi = 0;
      let lo = 0;
      let digits = 0;
      let c = at;
      for (; c < length; c++) {
        const code = text.charCodeAt(c);
        const nibble = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : code >= 65 && code <= 70 ? code - 55 : -1;
        if (nibble < 0) break;
        // Shift the 64-bit (hi, lo) left by four: the top nibble of lo moves into hi.
        hi = ((hi << 4) | (lo >>> 28)) >>> 0;
        lo = ((lo << 4) | nibble) >>> 0;
        digits++;
      }
      let end = text.indexOf('\n', c);
      if (end < 0) end = length;
      // `ADDRESS TYPE NAME`: only code symbols make sense for IPs; absolute symbols (a/A) are per-cpu offsets etc.
      if (digits > 0 && digits <= 16 && text.charCodeAt(c) === 32 && c + 3 < end && text.charCodeAt(c + 2) === 32) {
        const type = text.charCodeAt(c + 1);
        // T t W w; kptr_restrict hides addresses as zeros.
        if ((type === 84 || type === 116 || type === 87 || type === 119) && (hi !== 0 || lo !== 0)) {
          if (count === high.length) {
            high = grown(high, high.length * 2);
            low = grown(low, low.length * 2);
            lineStart = grown(lineStart, lineStart.length * 2);
          }
          if (count > 0 && (hi < high[count - 1] || (hi === high[count - 1] && lo < low[count - 1]))) sorted = false;
          high[count] = hi;
          low[count] = lo;
          lineStart[count] = c + 1;
          count++;
        }
      }
      at = end + 1;
    }
    const order = sorted ? undefined : Array.from({ length: count }, (_, i) => i).sort((a, b) => high[a] - high[b] || low[a] - low[b] || a - b);
    this.high = new Uint32Array(count);
    this.low = new Uint32Array(count);
    this.lineStart = new Int32Array(count);
    // The kept lines from their type letter on, in address order, each ending with a newline.
    const kept: string[] = new Array<string>(count);
    let start = 0;
    for (let i = 0; i < count; i++) {
      const from = order ? order[i] : i;
      this.high[i] = high[from];
      this.low[i] = low[from];
      const lineAt = lineStart[from];
      let end = text.indexOf('\n', lineAt);
      if (end < 0) end = text.length;
      kept[i] = text.slice(lineAt, end);
      this.lineStart[i] = start;
      start += end - lineAt + 1;
    }
    this.lines = count === 0 ? '' : kept.join('\n') + '\n';
  }

  /**
   * /proc/kallsyms, parsed once per process (per path): a capture's snapshots, the editor's sessions and every
   * Symbolizer share it. Modules loaded later are not seen, as perf record sees the kallsyms of its start.
   */
  static read(path = PROC_KALLSYMS): Kallsyms {
    let parsed = parsedByPath.get(path);
    if (!parsed) {
      const prefetched = path === PROC_KALLSYMS ? prefetchedKallsyms() : undefined;
      if (prefetched) parsed = new Kallsyms(prefetched.text, prefetched);
      else parsed = path === PROC_KALLSYMS ? readThroughDiskCache() : new Kallsyms(readFileSync(path, 'utf8'));
      parsedByPath.set(path, parsed);
    }
    return parsed;
  }

  /** The code symbols as columns: their lines without addresses, in address order (what the disk cache keeps). */
  compactColumns(): KallsymsColumns {
    return { text: this.lines, high: this.high, low: this.low, lineStart: this.lineStart };
  }

  /** Text symbols sorted by address, as objects (built on first use: lookups do not need them). */
  get symbols(): readonly KernelSymbol[] {
    this.list ??= Array.from(this.lineStart, (_, i) => this.symbolAt(i));
    return this.list;
  }

  /** True when addresses were readable (not all hidden by kptr_restrict). */
  get usable(): boolean {
    return this.lineStart.length > 0;
  }

  private addressAt(i: number): bigint {
    return (BigInt(this.high[i]) << 32n) | BigInt(this.low[i]);
  }

  /** Symbol `i` as its kept line says: `TYPE NAME[\t[MODULE]]`. */
  private symbolAt(i: number): KernelSymbol {
    const start = this.lineStart[i];
    let end = this.lines.indexOf('\n', start);
    if (end < 0) end = this.lines.length;
    const rest = this.lines.slice(start + 2, end);
    const tab = rest.indexOf('\t');
    const module = tab >= 0 ? /^\s*\[(.*)\]/.exec(rest.slice(tab + 1))?.[1] : undefined;
    return { address: this.addressAt(i), name: (tab >= 0 ? rest.slice(0, tab) : rest).trim(), type: this.lines[start], module };
  }

  /** The symbol containing `address`: the last one starting at or below it. */
  lookup(address: bigint): { symbol: KernelSymbol; offset: bigint } | undefined {
    const wantHigh = Number(address >> 32n);
    const wantLow = Number(address & 0xffffffffn);
    let lo = 0;
    let hi = this.lineStart.length - 1;
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
    return this.symbols.find((symbol) => symbol.name === name);
  }
}

const parsedByPath = new Map<string, Kallsyms>();

const PROC_KALLSYMS = '/proc/kallsyms';

/**
 * /proc/kallsyms through the disk cache: served from it only while this process sees real addresses (kptr_restrict,
 * read from the file's first line now, so a reader that may no longer see them is not handed them), and only for
 * this boot, kernel release and set of loaded modules (the key); written only when the addresses read were real.
 */
function readThroughDiskCache(): Kallsyms {
  const key = symbolCacheEnabled() ? kallsymsCacheKey() : undefined;
  const cached = key === undefined ? undefined : loadKallsymsColumns(key);
  if (cached) return new Kallsyms(cached.text, cached);
  const parsed = new Kallsyms(readFileSync(PROC_KALLSYMS, 'utf8'));
  if (key !== undefined && parsed.usable) storeKallsymsColumns(key, () => parsed.compactColumns());
  return parsed;
}

/** boot id, kernel release and the loaded modules with their addresses; undefined when addresses read as zeros here. */
function kallsymsCacheKey(): string | undefined {
  try {
    if (!firstAddressVisible()) return undefined;
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    // Name, size and load address of each module: its refcount and users change without moving a symbol.
    const modules = readModuleList()
      .split('\n')
      .map((line) => line.split(' '))
      .map((fields) => `${fields[0]} ${fields[1]} ${fields[5] ?? ''}`)
      .join('\n');
    return `kallsyms\0${bootId}\0${release()}\0${modules}`;
  } catch {
    // no boot id or module list (not Linux's /proc): no cache
    return undefined;
  }
}

/** /proc/modules, or nothing for a kernel built without modules (no such file). */
function readModuleList(): string {
  try {
    return readFileSync('/proc/modules', 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/**
 * Whether the first lines of /proc/kallsyms show a nonzero address: kptr_restrict prints every address as zeros to
 * who may not see them (the first line alone can be a zero absolute symbol, such as fixed_percpu_data).
 */
function firstAddressVisible(): boolean {
  const fd = openSync(PROC_KALLSYMS, 'r');
  try {
    const head = Buffer.alloc(4096);
    const got = readSync(fd, head, 0, head.length, 0);
    return /^0*[1-9a-fA-F][0-9a-fA-F]* /m.test(head.toString('latin1', 0, got));
  } finally {
    closeSync(fd);
  }
}
