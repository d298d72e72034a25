// The installed `perf` as referee: record fixtures with it, and turn `perf script` output and
// Ringside's decode of the same file into comparable lines.

import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeRecordAt, decodeSnapshot, type DecodedSnapshot } from '../../native/decode';
import { RecordType } from '../../native/abi/uapi';
import { readPerfData, type PerfDataImport } from '../../native/perfdata';
import { ElfFile } from '../../native/symbols/elf';
import { Symbolizer } from '../../native/symbols/symbolizer';
import { SnapshotSymbols } from '../../host/snapshot-symbols';

export const repoRoot = path.resolve(__dirname, '../../..');
export const fixture = (name: string) => {
  const candidates = [path.join(repoRoot, 'fixtures-bin', name), path.join(process.cwd(), 'fixtures-bin', name)];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`fixture ${name} is not built: run node test/setup/prepare.mjs`);
  return found;
};

/** The perf binary; tests fail (not skip) without it, since CI installs it. */
export function perfBinary(): string {
  for (const candidate of ['/usr/bin/perf', '/usr/local/bin/perf']) if (existsSync(candidate)) return candidate;
  throw new Error('perf is not installed (apt-get install linux-perf); the perf.data tests need it as the referee');
}

export function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'ringside-perfdata-'));
}

/** `perf record -o OUT ARGS -- COMMAND...`; throws with perf's stderr on failure. */
export function perfRecord(out: string, args: readonly string[], command: readonly string[]): void {
  const result = spawnSync(perfBinary(), ['record', '-q', '-o', out, ...args, '--', ...command], { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0 || !existsSync(out)) throw new Error(`perf record ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
}

/** stdout lines of `perf script -i FILE ARGS` (stderr is returned separately). */
export function perfScript(file: string, args: readonly string[]): { lines: string[]; stderr: string } {
  const result = spawnSync(perfBinary(), ['script', '-i', file, ...args], { encoding: 'utf8', timeout: 60_000, maxBuffer: 256 << 20 });
  if (result.status !== 0) throw new Error(`perf script -i ${file} ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return { lines: result.stdout.split('\n').filter((line) => line.trim() !== ''), stderr: result.stderr };
}

export function perfOutput(args: readonly string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(perfBinary(), args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 256 << 20 });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

/** Address of a symbol in a non-PIE fixture, from binutils' nm. */
export function nmAddress(binary: string, symbol: string): string {
  const line = execFileSync('nm', [binary], { encoding: 'utf8' })
    .split('\n')
    .find((l) => l.endsWith(` ${symbol}`));
  if (!line) throw new Error(`${symbol} not found in ${binary}`);
  return '0x' + line.split(' ')[0].replace(/^0+/, '');
}

export interface ComparableSample {
  pid: number;
  tid: number;
  cpu: number;
  /** "sec.nsec" as perf prints it with --ns. */
  time: string;
  period: string;
  event: string;
  ip: string;
  /** Tracepoint fields, values normalised to decimal strings (numbers) or text. */
  fields?: Record<string, string>;
}

/**
 * Parses `perf script --ns -F pid,tid,cpu,time,period,event,ip[,trace]` output lines:
 * `16785/16785 [000]  3162.173355771:          1  syscalls:sys_enter_write: fd: 0x3, ... 7fec5cb09350`.
 */
export function parsePerfScriptLine(line: string, withTrace: boolean): ComparableSample {
  const match = /^\s*(-?\d+)\/(-?\d+)\s+\[(\d+)\]\s+(\d+\.\d{9}):\s+(\d+)\s+(\S+):\s?(.*?)\s*$/.exec(line);
  if (!match) throw new Error(`unexpected perf script line: ${line}`);
  const [, pid, tid, cpu, time, period, event, rest] = match;
  let ip = rest;
  let fields: Record<string, string> | undefined;
  if (withTrace) {
    const ipMatch = /(?:^|\s+)([0-9a-f]+)$/.exec(rest);
    ip = ipMatch ? ipMatch[1] : '';
    const trace = ipMatch ? rest.slice(0, ipMatch.index) : rest;
    fields = {};
    // libtraceevent prints the print fmt: "fd: 0x00000003, buf: ..." or "comm=pd_work pid=12".
    for (const pair of trace.matchAll(/(\w+)(?:: |=)(\S+?)(?:,|\s|$)/g)) fields[pair[1]] = normaliseValue(pair[2]);
    if (Object.keys(fields).length === 0) fields = undefined;
  }
  return { pid: Number(pid), tid: Number(tid), cpu: Number(cpu), time, period, event, ip: ip.trim(), ...(fields ? { fields } : {}) };
}

function normaliseValue(text: string): string {
  if (/^0x[0-9a-f]+$/i.test(text)) return BigInt(text).toString();
  if (/^-?\d+$/.test(text)) return BigInt(text).toString();
  return text;
}

export function formatNs(ns: bigint): string {
  return `${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;
}

export function importFile(file: string): { imported: PerfDataImport; decoded: DecodedSnapshot } {
  const imported = readPerfData(readFileSync(file), file);
  return { imported, decoded: decodeSnapshot({ events: imported.events, rings: imported.rings }) };
}

/**
 * A perf.data file as the panel's session opens it: read past damage (keepGoing), decoded, and named from the file's
 * own MMAP2/COMM/FORK records.
 */
export function openNamed(file: string): { imported: PerfDataImport; decoded: DecodedSnapshot; symbols: SnapshotSymbols } {
  const imported = readPerfData(new Uint8Array(readFileSync(file)), file, { keepGoing: true });
  const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
  const symbols = new SnapshotSymbols();
  symbols.learn(decoded);
  return { imported, decoded, symbols };
}

/** Ringside's samples of a decoded file in the same shape as parsePerfScriptLine's. */
export function ourSamples(decoded: DecodedSnapshot): ComparableSample[] {
  const out: ComparableSample[] = [];
  for (let row = 0; row < decoded.columns.length; row++) {
    if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
    const record = decodeRecordAt(decoded, row);
    const event = decoded.events[decoded.columns.event[row]];
    const f = record.fields;
    // perf prints the attr's fixed period when the sample does not carry one.
    const period = typeof f.period === 'bigint' ? f.period : event.attr.flags.freq ? 0n : event.attr.samplePeriod;
    let fields: Record<string, string> | undefined;
    if (f.tracepoint && typeof f.tracepoint === 'object') {
      fields = {};
      const labels = event.tracepoint ? printLabels(event.tracepoint.printFormat) : new Map<string, string>();
      for (const [name, value] of Object.entries(f.tracepoint as Record<string, unknown>)) fields[labels.get(name) ?? name] = normaliseValue(String(value));
    }
    out.push({
      pid: record.pid ?? -1,
      tid: record.tid ?? -1,
      cpu: record.cpu ?? -1,
      time: formatNs(record.timeNs ?? 0n),
      period: period.toString(),
      event: record.event ?? '',
      ip: typeof f.ip === 'bigint' ? f.ip.toString(16) : '',
      ...(fields ? { fields } : {}),
    });
  }
  return out;
}

/** A symbolizer fed with the file's own MMAP/MMAP2/FORK records, like perf script builds its maps. */
export function symbolizerFor(decoded: DecodedSnapshot): Symbolizer {
  const symbolizer = new Symbolizer({ kallsyms: true });
  for (let row = 0; row < decoded.columns.length; row++) {
    const kind = decoded.columns.kind[row];
    if (kind !== RecordType.MMAP && kind !== RecordType.MMAP2 && kind !== RecordType.FORK) continue;
    const f = decodeRecordAt(decoded, row).fields;
    if (kind === RecordType.FORK) {
      if (typeof f.ppid === 'number' && typeof f.pid === 'number' && f.pid !== f.ppid) symbolizer.forkProcess(f.ppid, f.pid);
      continue;
    }
    const start = f.addr ?? f.start;
    const length = f.len ?? f.length;
    if (typeof f.pid === 'number' && typeof start === 'bigint' && typeof length === 'bigint' && typeof f.pgoff === 'bigint' && typeof f.filename === 'string') {
      symbolizer.addMmap(f.pid, start, length, f.pgoff, f.filename);
    }
  }
  return symbolizer;
}

/**
 * perf prints tracepoint fields through the print fmt, whose labels need not be the field names
 * ("comm=%s", __get_str(parent_comm)). Pairs each label with the field its argument reads.
 */
export function printLabels(printFormat: string): Map<string, string> {
  const labels = new Map<string, string>();
  const quoted = /^"((?:[^"\\]|\\.)*)"\s*,?(.*)$/s.exec(printFormat.trim());
  if (!quoted) return labels;
  const names = [...quoted[1].matchAll(/(\w+)(?:: |=)%/g)].map((m) => m[1]);
  const args: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of quoted[2]) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      args.push(current);
      current = '';
    } else current += ch;
  }
  if (current.trim()) args.push(current);
  if (args.length !== names.length) return labels;
  args.forEach((arg, i) => {
    const field = /REC->(\w+)|__get_str\((\w+)\)/.exec(arg);
    const name = field?.[1] ?? field?.[2];
    if (name) labels.set(name, names[i]);
  });
  return labels;
}

/** A SAMPLE line of Ringside's JSON Lines with its callchain (`time` kept as its exact digits). */
export interface JsonCallchainSample {
  readonly time: string;
  readonly tid?: number;
  readonly callchain?: string[];
  readonly callchainSyms?: (string | null)[];
}

const isKernelAddress = (ip: string) => BigInt(ip) >= 0xffff800000000000n;

/** Our user frames of one sample as `sym+0xoff` (perf's `[unknown]` where we have no symbol). */
export function ourUserFrames(sample: JsonCallchainSample): string[] {
  const ips = sample.callchain ?? [];
  const syms = sample.callchainSyms ?? [];
  return ips.flatMap((ip, i) => (isKernelAddress(ip) ? [] : [syms[i] ?? '[unknown]']));
}

/** One frame as perf script prints it: `sym+0xoff` and its object. */
export interface PerfFrame {
  readonly name: string;
  readonly dso: string;
}

/**
 * `perf script --no-inline --ns -F tid,time,ip,sym,symoff,dso`: per sample (keyed by perfSampleKey), every
 * frame, kernel ones included. --no-inline: perf otherwise adds the functions inlined at each address
 * (from DWARF) as extra frames, which are not machine frames and not in a callchain of addresses.
 */
/**
 * A sample's key: its thread and exact time. The time alone is not one sample's: two CPUs' clocks can fire in the
 * same nanosecond (a capture -a -g saw it), and a Map keyed by time then keeps one of the two.
 */
export function perfSampleKey(tid: number | undefined, time: string): string {
  return `${tid ?? -1}@${time}`;
}

export function perfFrames(file: string): Map<string, PerfFrame[]> {
  const out = new Map<string, PerfFrame[]>();
  let current: PerfFrame[] | undefined;
  for (const line of perfScript(file, ['--no-inline', '--ns', '-F', 'tid,time,ip,sym,symoff,dso']).lines) {
    const header = /^\s*(-?\d+)\s+(\d+)\.(\d{9}):\s*$/.exec(line);
    if (header) {
      current = [];
      const key = perfSampleKey(Number(header[1]), (BigInt(header[2]) * 1_000_000_000n + BigInt(header[3])).toString());
      if (out.has(key)) throw new Error(`perf script printed two samples of thread ${header[1]} at ${header[2]}.${header[3]}`);
      out.set(key, current);
      continue;
    }
    // The dso is the parenthesized path or [name] at the end, which may itself end in " (deleted)": the name ends at
    // the first " (/" or " ([" (C++ names hold "(anonymous namespace)", never a path).
    const frame = /^\s+[0-9a-f]+ (.+?) \(([/[].*)\)$/.exec(line);
    if (!frame || !current) throw new Error(`unexpected perf script line: ${line}`);
    current.push({ name: frame[1], dso: frame[2] });
  }
  return out;
}

/**
 * perfFrames' user frames as `sym+0xoff`. Unnamed PLT slots are `[unknown]`, as Ringside names them: a PLT slot
 * resolved by an IRELATIVE relocation has no symbol, and perf prints it with an empty name (`@plt+0x0`).
 */
export function perfUserFrames(file: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [time, frames] of perfFrames(file)) {
    out.set(
      time,
      frames.filter((frame) => !frame.dso.startsWith('[kernel')).map((frame) => (frame.name.startsWith('@plt+') ? '[unknown]' : frame.name)),
    );
  }
  return out;
}

/**
 * perf 6.1 prints the first stub of a non-PIE binary's lazy-binding .plt as `_init+0x30..` (its
 * zero-size _init reaches over it), where objdump and Ringside say `<name>@plt`; plt-symbols.test.ts
 * pins both answers at every address. Moves that stub's count to `_init` so per-function counts of
 * `binary` compare with perf report's; every other name is left as it is.
 */
export function withFirstPltStubAsInit(counts: ReadonlyMap<string, number>, binary: string): Map<string, number> {
  const stubs = [...new ElfFile(readFileSync(binary)).pltSymbols()].sort((a, b) => (a.value < b.value ? -1 : 1));
  const out = new Map(counts);
  const first = stubs[0]?.name;
  const count = first ? out.get(first) : undefined;
  if (first && count !== undefined) {
    out.delete(first);
    out.set('_init', (out.get('_init') ?? 0) + count);
  }
  return out;
}

/**
 * `Samples  [x] symbol` lines of perf report --no-children -n: symbol → samples; unresolved addresses summed apart.
 * `pltStubsOfLibrariesAsUnresolved`: a shared library's `x@plt` counts as unresolved (see perfNamesPltSlotByPosition).
 * `byDso`: every named line's count per DSO (perf's short name, e.g. `libc.so.6`) and symbol, so a comparison that
 * sets some PLT stubs apart can do it per binary: the same `x@plt` name is a different stub in each binary.
 */
export function perfSelfCounts(
  file: string,
  options: { pltStubsOfLibrariesAsUnresolved?: boolean } = {},
): { named: Map<string, number>; unresolved: number; total: number; byDso: Map<string, Map<string, number>> } {
  const report = perfOutput(['report', '-i', file, '--no-children', '-n', '--stdio', '-F', 'sample,dso,sym', '-g', 'none', '--percent-limit', '0']);
  if (report.status !== 0) throw new Error(`perf report -i ${file} failed (${report.status}): ${report.stderr}`);
  const named = new Map<string, number>();
  const byDso = new Map<string, Map<string, number>>();
  let unresolved = 0;
  let total = 0;
  for (const line of report.stdout.split('\n')) {
    const match = /^\s+(\d+)\s+(.+?)\s+\[(.)\]\s+(.+?)\s*$/.exec(line); // a DSO may have spaces: `[JIT] tid 23552`
    if (!match) continue;
    const count = Number(match[1]);
    const [, , dso, , symbol] = match;
    total += count;
    if (/^0x[0-9a-f]+$/.test(symbol)) {
      unresolved += count;
      continue;
    }
    const ofDso = byDso.get(dso) ?? new Map<string, number>();
    byDso.set(dso, ofDso.set(symbol, (ofDso.get(symbol) ?? 0) + count));
    if (options.pltStubsOfLibrariesAsUnresolved && perfNamesPltSlotByPosition({ name: `${symbol}+0x0`, dso })) unresolved += count;
    else named.set(symbol, (named.get(symbol) ?? 0) + count);
  }
  return { named, unresolved, total, byDso };
}

/** `ringside capture -a -g` for a second into `file` (perf.data), with pd_work spinning meanwhile so there is a known workload. */
export function captureAllCpus(file: string): SpawnSyncReturns<string> {
  const workload = spawn(fixture('pd_work'), ['3', '4000000000'], { stdio: 'ignore' });
  try {
    const args = ['capture', '-q', '-a', '-e', 'cpu-clock', '-c', '200000', '-g', '--pages', '128', '--duration', '1', '-o', file];
    return spawnSync(process.execPath, [path.join(repoRoot, 'dist/cli.js'), ...args], { encoding: 'utf8' });
  } finally {
    workload.kill('SIGKILL');
  }
}

/**
 * A frame perf names as a PLT stub of a shared library (`x@plt+0x0`, or the empty `@plt+0x0`): perf 6.1 names a
 * library's stubs by position, which in a .plt with interleaved IRELATIVE slots (libc's) gives unnamed slots their
 * neighbours' names; Ringside matches stubs by GOT slot as objdump does and leaves IRELATIVE slots [unknown].
 */
export function perfNamesPltSlotByPosition(frame: PerfFrame): boolean {
  return /@plt\+0x[0-9a-f]+$/.test(frame.name) && /\.so(\.[0-9]+)*$/.test(frame.dso);
}
