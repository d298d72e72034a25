// PMUs as sysfs describes them: /sys/bus/event_source/devices/<pmu>/{type,format/*,events/*}.
//
// format/<term> files say where a term's value goes in perf_event_attr:
//   config:0-7,32-35   bits of attr.config (value bits fill the ranges low to high, like perf)
//   config1:0          one bit of attr.config1 (also config2, config3)
//   attr5:23           the persistent-events syntax proposed for Linux in 2013 (PERF_TYPE_PERSISTENT): bits of the N-th u64 of the attr
//                      as the kernel lays it out, N counted from 0:
//     attr0  = type (bits 0-31) | size (32-63)      attr9  = branch_sample_type
//     attr1  = config                               attr10 = sample_regs_user
//     attr2  = sample_period / sample_freq          attr11 = sample_stack_user | clockid << 32
//     attr3  = sample_type                          attr12 = sample_regs_intr
//     attr4  = read_format                          attr13 = aux_watermark | sample_max_stack << 32
//     attr5  = the flag bitfield (disabled=0 ... mmap2=23 ... sigtrap=37, precise_ip=15-16)
//     attr6  = wakeup_events | bp_type << 32        attr14 = aux_sample_size | aux_action << 32
//     attr7  = config1 / bp_addr                    attr15 = sig_data
//     attr8  = config2 / bp_len                     attr16 = config3
//   so `attr5:23` sets mmap2 (the 2013 patches put their `persistent` flag there).
// events/<name> files are aliases: `event=0x04` or `config=0x1,umask=?` (`?`: the user must give it).

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeAttr, encodeAttr, PERF_ATTR_SIZE_LATEST, type PerfEventAttr } from '../abi/attr';

export const DEFAULT_SYSFS_ROOT = '/sys';
export const ATTR_U64_COUNT = PERF_ATTR_SIZE_LATEST / 8;

export class PmuError extends Error {
  override readonly name = 'PmuError';
  constructor(
    message: string,
    readonly path?: string,
  ) {
    super(path ? `${path}: ${message}` : message);
  }
}

export interface BitRange {
  readonly lo: number;
  readonly hi: number;
}

/** Which u64 of the attr a format term writes. configN are named words of the same array. */
export type FormatTarget = { readonly kind: 'config'; readonly index: 0 | 1 | 2 | 3 } | { readonly kind: 'attr'; readonly index: number };

export interface PmuFormatTerm {
  readonly name: string;
  readonly target: FormatTarget;
  /** In file order; a value's low bits fill the first range. */
  readonly ranges: readonly BitRange[];
  /** The file content, e.g. `config:0-7,32-35`. */
  readonly text: string;
}

export interface PmuAliasTerm {
  readonly key: string;
  /** A number, `'?'` for a parameter the user must supply, or undefined for a flag term. */
  readonly value?: bigint | '?';
}

export interface PmuEventAlias {
  readonly name: string;
  readonly text: string;
  readonly terms: readonly PmuAliasTerm[];
}

export interface PmuInfo {
  readonly name: string;
  readonly type: number;
  readonly formats: readonly PmuFormatTerm[];
  readonly events: readonly PmuEventAlias[];
  /** True when a format term uses the `attrN:` syntax (persistent-event PMUs). */
  readonly persistent: boolean;
}

/** Offset (in u64 words) of attr.configN: config=1, config1=7, config2=8, config3=16. */
export const CONFIG_WORD_INDEX = { 0: 1, 1: 7, 2: 8, 3: 16 } as const;

/** Parses one format file's text (`config1:0-7,32`, `attr5:23`). */
export function parseFormatTerm(name: string, text: string, path?: string): PmuFormatTerm {
  const trimmed = text.trim();
  const match = /^(config([123])?|attr(\d+)):(.+)$/.exec(trimmed);
  if (!match) throw new PmuError(`format '${trimmed}' is not configN:BITS or attrN:BITS`, path);
  let target: FormatTarget;
  if (match[3] !== undefined) {
    const index = Number(match[3]);
    if (index >= ATTR_U64_COUNT) throw new PmuError(`attr${index} is past the end of perf_event_attr (attr0..attr${ATTR_U64_COUNT - 1})`, path);
    target = { kind: 'attr', index };
  } else {
    target = { kind: 'config', index: (match[2] === undefined ? 0 : Number(match[2])) as 0 | 1 | 2 | 3 };
  }
  const ranges: BitRange[] = [];
  for (const part of match[4].split(',')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!range) throw new PmuError(`bit range '${part}' is not N or LO-HI`, path);
    const lo = Number(range[1]);
    const hi = range[2] === undefined ? lo : Number(range[2]);
    if (hi < lo || hi > 63) throw new PmuError(`bit range '${part}' must be within 0-63 with LO <= HI`, path);
    ranges.push({ lo, hi });
  }
  return { name, target, ranges, text: trimmed };
}

/** Width in bits of a format term (sum of its ranges). */
export function formatWidth(term: PmuFormatTerm): number {
  return term.ranges.reduce((sum, range) => sum + range.hi - range.lo + 1, 0);
}

/** Scatters `value` into the term's bit ranges: returns the word mask and the bits to set. */
export function packFormatValue(term: PmuFormatTerm, value: bigint): { mask: bigint; bits: bigint } {
  const width = formatWidth(term);
  if (value < 0n || (width < 64 && value >> BigInt(width) !== 0n)) {
    throw new RangeError(
      `value 0x${value.toString(16)} does not fit format '${term.name}' (${term.text}, ${width} bits, max 0x${((1n << BigInt(width)) - 1n).toString(16)})`,
    );
  }
  let mask = 0n;
  let bits = 0n;
  let source = 0n;
  for (const range of term.ranges) {
    for (let bit = range.lo; bit <= range.hi; bit++, source++) {
      mask |= 1n << BigInt(bit);
      if ((value >> source) & 1n) bits |= 1n << BigInt(bit);
    }
  }
  return { mask, bits };
}

/** Index of the attr u64 word a format term writes. */
export function formatWordIndex(term: PmuFormatTerm): number {
  return term.target.kind === 'attr' ? term.target.index : CONFIG_WORD_INDEX[term.target.index];
}

/**
 * Sets `bits` under `mask` in u64 word `index` of the attr (clearing the rest of the mask first),
 * by encoding the attr, editing the word, and decoding it back. Throws when a bit lands where
 * PerfEventAttr has no field (reserved bits), since the kernel would refuse it with EINVAL anyway.
 */
export function applyAttrWord(attr: PerfEventAttr, index: number, mask: bigint, bits: bigint): PerfEventAttr {
  if (!Number.isInteger(index) || index < 0 || index >= ATTR_U64_COUNT)
    throw new RangeError(`attr${index} is outside perf_event_attr (attr0..attr${ATTR_U64_COUNT - 1})`);
  if (index === 0 && mask >> 32n !== 0n) throw new RangeError('attr0 bits 32-63 are attr.size, which the opener negotiates with the kernel: not settable');
  const bytes = encodeAttr(attr);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const word = (view.getBigUint64(index * 8, littleEndian) & ~mask) | (bits & mask);
  view.setBigUint64(index * 8, word, littleEndian);
  const decoded = decodeAttr(bytes, littleEndian);
  const check = encodeAttr(decoded);
  const kept = new DataView(check.buffer, check.byteOffset, check.byteLength).getBigUint64(index * 8, littleEndian);
  if (kept !== word) {
    const lost = word ^ kept;
    const firstLost = lost.toString(2).length - 1;
    throw new RangeError(`attr${index} bit ${firstLost} is a reserved bit of perf_event_attr (no field there)`);
  }
  // Keep the caller's size choice (usually unset: the opener negotiates it with the kernel).
  const result: PerfEventAttr = { ...attr, ...decoded };
  if (attr.size === undefined) delete result.size;
  else result.size = attr.size;
  return result;
}

/** Applies one format term with a value to the attr (configN directly, attrN through the encoded layout). */
export function applyFormatTerm(attr: PerfEventAttr, term: PmuFormatTerm, value: bigint): PerfEventAttr {
  const { mask, bits } = packFormatValue(term, value);
  if (term.target.kind === 'attr') {
    return applyAttrWord(attr, term.target.index, mask, bits);
  }
  const set = (old: bigint | undefined) => ((old ?? 0n) & ~mask) | bits;
  switch (term.target.index) {
    case 0:
      return { ...attr, config: set(attr.config) };
    case 1:
      return { ...attr, config1: set(attr.config1) };
    case 2:
      return { ...attr, config2: set(attr.config2) };
    case 3:
      return { ...attr, config3: set(attr.config3) };
  }
}

/** Parses an events/<name> alias text (`event=0x3c,umask=?`). */
export function parseEventAlias(name: string, text: string, path?: string): PmuEventAlias {
  const trimmed = text.trim();
  const terms: PmuAliasTerm[] = [];
  for (const part of trimmed.split(',')) {
    const piece = part.trim();
    if (piece === '') continue;
    const match = /^([A-Za-z_][A-Za-z0-9_.-]*)(?:=(.*))?$/.exec(piece);
    if (!match) throw new PmuError(`event term '${piece}' is not KEY or KEY=VALUE`, path);
    const raw = match[2]?.trim();
    if (raw === undefined) terms.push({ key: match[1] });
    else if (raw === '?') terms.push({ key: match[1], value: '?' });
    else if (/^(?:0[xX][0-9a-fA-F]+|[0-9]+)$/.test(raw)) terms.push({ key: match[1], value: BigInt(raw) });
    else throw new PmuError(`event term '${piece}' has a value that is not a number`, path);
  }
  return { name, text: trimmed, terms };
}

export function pmuDevicesDir(sysfsRoot: string = DEFAULT_SYSFS_ROOT): string {
  return join(sysfsRoot, 'bus', 'event_source', 'devices');
}

/** Names of the PMUs under sysfs, sorted. */
export function listPmuNames(sysfsRoot: string = DEFAULT_SYSFS_ROOT): string[] {
  try {
    return readdirSync(pmuDevicesDir(sysfsRoot))
      .filter((name) => isFile(join(pmuDevicesDir(sysfsRoot), name, 'type')))
      .sort();
  } catch {
    // no sysfs PMU directory (a container without /sys): there are no PMUs to list
    return [];
  }
}

/** Reads one PMU, or returns undefined when sysfs has no such PMU. Malformed files throw PmuError. */
export function readPmu(name: string, sysfsRoot: string = DEFAULT_SYSFS_ROOT): PmuInfo | undefined {
  if (name.includes('/') || name === '.' || name === '..') return undefined;
  const dir = join(pmuDevicesDir(sysfsRoot), name);
  const typePath = join(dir, 'type');
  let typeText: string;
  try {
    typeText = readFileSync(typePath, 'utf8').trim();
  } catch {
    /* not a PMU (no readable type file) */ return undefined;
  }
  if (!/^\d+$/.test(typeText)) throw new PmuError(`type '${typeText}' is not a number`, typePath);
  const formats = readDirFiles(join(dir, 'format')).map(([file, text, path]) => parseFormatTerm(file, text, path));
  // events/ also holds NAME.unit, NAME.scale, NAME.per-pkg, NAME.snapshot: metadata, not events.
  const events = readDirFiles(join(dir, 'events'))
    .filter(([file]) => !file.includes('.'))
    .map(([file, text, path]) => parseEventAlias(file, text, path));
  return { name, type: Number(typeText), formats, events, persistent: formats.some((format) => format.target.kind === 'attr') };
}

/**
 * Every PMU under sysfs. A PMU with malformed files is left out and reported to `onError`
 * (default: ignored), so one odd driver does not hide the rest from `ringside events`.
 */
export function listPmus(sysfsRoot: string = DEFAULT_SYSFS_ROOT, onError?: (error: PmuError) => void): PmuInfo[] {
  const result: PmuInfo[] = [];
  for (const name of listPmuNames(sysfsRoot)) {
    try {
      const pmu = readPmu(name, sysfsRoot);
      if (pmu) result.push(pmu);
    } catch (error) {
      if (!(error instanceof PmuError)) throw error;
      onError?.(error);
    }
  }
  return result;
}

function readDirFiles(dir: string): [string, string, string][] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    /* the PMU has no such directory (no formats, no events): nothing to read */ return [];
  }
  const files: [string, string, string][] = [];
  for (const file of names) {
    const path = join(dir, file);
    if (!isFile(path)) continue;
    try {
      files.push([file, readFileSync(path, 'utf8'), path]);
    } catch {
      /* unreadable (permissions): skip */
    }
  }
  return files;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    /* missing or unreadable: not a file we can use */ return false;
  }
}
