// Runs binutils on fixtures and parses what they print, as the reference the symbol readers are held to.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';

/** The repository root: tests run from it (mocha), or from a compiled copy somewhere else. */
function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'test/setup/prepare.mjs'))) return dir;
  }
  return process.cwd();
}

export const ROOT = existsSync(path.join(process.cwd(), 'test/setup/prepare.mjs')) ? process.cwd() : repoRoot();
export const FIXTURES = path.join(ROOT, 'fixtures-bin');
export const SOURCES = path.join(ROOT, 'test/fixtures');

export function fixture(name: string): string {
  const p = path.join(FIXTURES, name);
  if (!existsSync(p)) throw new Error(`fixture ${p} is missing: run node test/setup/prepare.mjs`);
  return p;
}

export function run(tool: string, args: string[]): string {
  return execFileSync(tool, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

export interface ObjdumpRow {
  /** The full name objdump printed in the block header (`left/util.c`, `/usr/include/stdlib.h`, or a basename). */
  readonly header: string;
  readonly basename: string;
  /** undefined for end-of-sequence rows (printed as `-`). */
  readonly line: number | undefined;
  readonly address: bigint;
  readonly isStmt: boolean;
}

/** `objdump --dwarf=decodedline` rows in the order printed. */
export function objdumpDecodedLine(file: string): ObjdumpRow[] {
  const out: ObjdumpRow[] = [];
  let header = '';
  for (const line of run('objdump', ['--dwarf=decodedline', file]).split('\n')) {
    const row = /^(\S+)\s+(\d+|-)\s+(0x[0-9a-f]+)(?:\s+\d+)?\s*(x)?\s*$/.exec(line);
    if (row) {
      out.push({ header, basename: row[1], line: row[2] === '-' ? undefined : Number(row[2]), address: BigInt(row[3]), isStmt: row[4] === 'x' });
      continue;
    }
    const h = /^(\S.*):$/.exec(line);
    if (h && !line.startsWith('Contents of') && !line.includes('file format')) header = h[1];
  }
  return out;
}

/** addr2line for many addresses at once: `file:line` with any discriminator note removed. */
export function addr2line(file: string, addresses: readonly bigint[]): string[] {
  const out = run('addr2line', ['-e', file, ...addresses.map((a) => '0x' + a.toString(16))])
    .trim()
    .split('\n');
  return out.map((l) => l.replace(/ \(discriminator \d+\)$/, ''));
}

export interface NmSymbol {
  readonly address: bigint;
  readonly size?: number;
  readonly type: string;
  readonly name: string;
}

export function nm(file: string, extra: string[] = []): NmSymbol[] {
  const out: NmSymbol[] = [];
  for (const line of run('nm', ['-S', ...extra, file]).split('\n')) {
    const m = /^([0-9a-f]+)(?: ([0-9a-f]+))? (\S) (.+)$/.exec(line);
    if (m) out.push({ address: BigInt('0x' + m[1]), size: m[2] ? Number.parseInt(m[2], 16) : undefined, type: m[3], name: m[4] });
  }
  return out;
}

export function readelfBuildId(file: string): string | undefined {
  return /Build ID: ([0-9a-f]+)/.exec(run('readelf', ['-n', file]))?.[1];
}

/**
 * objdump's `<name@plt>` labels in `.plt` / `.plt.sec` (not `.plt.got`, which perf 6.1 does not name),
 * without the IRELATIVE ones (`*ABS*+0x…@plt`) that have no symbol.
 */
export function objdumpPlt(file: string): Map<bigint, string> {
  const section = execFileSync('readelf', ['-SW', file], { encoding: 'utf8' }).includes(' .plt.sec ') ? '.plt.sec' : '.plt';
  const out = execFileSync('objdump', ['-d', '--no-show-raw-insn', '-j', section, file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const labels = new Map<bigint, string>();
  for (const match of out.matchAll(/^([0-9a-f]+) <([^>]+@plt)>:$/gm)) if (!match[2].startsWith('*ABS*')) labels.set(BigInt('0x' + match[1]), match[2]);
  return labels;
}
