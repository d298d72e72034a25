// Pure parsing of the breakpoint form (kept apart from the DOM so node tests can load it).

import type { WatchLocation, WatchTarget } from '../shared/protocol';

/** Parse the location box: `0x…`/decimal address, `file.c:42`, or a symbol. */
export function parseWatchLocation(text: string): WatchLocation | string {
  const t = text.trim();
  if (t === '') return 'Enter an address (0x…), a symbol, or file:line.';
  if (/^0x[0-9a-f]{1,16}$/i.test(t)) return { kind: 'address', address: t.toLowerCase() };
  const line = /^(.+):(\d+)$/.exec(t);
  if (line) {
    const n = Number(line[2]);
    if (n < 1) return 'Line numbers start at 1.';
    return { kind: 'line', file: line[1], line: n };
  }
  if (/^\d+$/.test(t)) return { kind: 'address', address: t };
  if (/\s/.test(t)) return `"${t}" is not an address, a symbol or file:line.`;
  return { kind: 'symbol', symbol: t };
}

export function parseWatchTarget(kind: string, value: string): WatchTarget | string {
  if (kind === 'all-cpus') return { kind: 'all-cpus' };
  if (!/^\d+$/.test(value.trim())) return kind === 'process' ? 'Enter the pid to watch.' : 'Enter the CPU number.';
  const n = Number(value.trim());
  if (kind === 'process') return n >= 1 ? { kind: 'process', pid: n } : 'A pid is at least 1.';
  return { kind: 'cpu', cpu: n };
}

export function describeLocation(l: WatchLocation): string {
  switch (l.kind) {
    case 'address':
      return l.address;
    case 'symbol':
      return l.symbol;
    case 'line':
      return `${l.file}:${l.line}`;
  }
}

export function describeTarget(t: WatchTarget): string {
  switch (t.kind) {
    case 'process':
      return `pid ${t.pid}`;
    case 'cpu':
      return `cpu ${t.cpu}`;
    case 'all-cpus':
      return 'all CPUs';
  }
}
