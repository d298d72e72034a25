// The symbol cache on disk: each object's function index (function-index.ts StoredFunctionColumns) and the parsed
// /proc/kallsyms, kept across processes so a second `ringside decode` or `capture` starts warm. Building node's index
// from its 181k symbols took 100-280 ms a run and parsing kallsyms 110-150 ms; loading either is one read of typed
// columns. A function index's names stay where they are, in the object's own string tables (the entry says where;
// its key holds the object's identity): node's entry is 2 MB, not 15, and a process holds the names it looks up,
// not all 150k of them. Files live in a private directory of this user (XDG_CACHE_HOME/ringside, else ~/.cache/ringside), opened
// and written through safe-file.ts (no links followed, 0700/0600, temporary file + rename). A file is trusted only
// when its magic, version, kind, length, key and checksum all agree: anything else is a miss, and the rebuilt
// entry replaces it. The total size is bounded; the least recently used files go first.

import { closeSync, constants, fstatSync, futimesSync, lstatSync, openSync, readdirSync, readSync, unlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import path from 'node:path';
import { AtomicFile, ensurePrivateDirectory, openPrivateDirectory, pathInDirectoryFd } from '../sys/safe-file';
import type { StoredFunctionColumns, StoredNameTable } from './function-index';

/** Set (to anything but `0` or empty) to neither read nor write the cache; `--no-symbol-cache` does the same. */
export const NO_SYMBOL_CACHE_ENV = 'RINGSIDE_NO_SYMBOL_CACHE';
/** The cache's bound: past it, the least recently used files are removed (node's index is about 2 MB, its names read from node itself). */
export const SYMBOL_CACHE_MAX_BYTES = 256 * 1024 * 1024;
/** No entry is larger than this: a bigger file in the directory is not ours to read whole. */
const MAX_ENTRY_BYTES = 128 * 1024 * 1024;

const MAGIC = Buffer.from('RSYMCACH', 'latin1');
/**
 * Raised whenever a layout or what a kind holds changes: older files then miss and are rewritten. 2: kallsyms lines
 * are kept without their addresses (the columns hold those). 3: a function index places names that are in the
 * object's files there (a seventh section lists its string tables) instead of holding them.
 */
const FORMAT_VERSION = 3;
/** magic, version, kind, key length, section count, file length (two u32 halves), checksum, reserved. */
const HEADER_BYTES = 40;

const CacheKind = { Functions: 1, Kallsyms: 2 } as const;
type CacheKind = (typeof CacheKind)[keyof typeof CacheKind];

const EXTENSION: Record<CacheKind, string> = { [CacheKind.Functions]: '.fidx', [CacheKind.Kallsyms]: '.ksym' };
const ENTRY_NAME = /^[0-9a-f]{40}\.(?:fidx|ksym)$/;

let disabled = false;
let reportProblem: (message: string) => void = () => undefined;
let reported = false;
/** The directory once checked in this process (null: refused, reported once). */
let checkedDir: string | null | undefined;

/** Turns the cache off for this process (`--no-symbol-cache`). */
export function disableSymbolCache(): void {
  disabled = true;
}

/** Where a refused cache directory is told (the CLI's stderr); silent by default. Reported once per process. */
export function onSymbolCacheProblem(report: (message: string) => void): void {
  reportProblem = report;
}

/** Whether this process reads and writes the cache (not turned off by --no-symbol-cache or the environment). */
export function symbolCacheEnabled(): boolean {
  const env = process.env[NO_SYMBOL_CACHE_ENV];
  return !disabled && (env === undefined || env === '' || env === '0');
}

/** XDG_CACHE_HOME/ringside when that is an absolute path (the XDG spec ignores relative ones), else ~/.cache/ringside. */
export function symbolCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(homedir(), '.cache'), 'ringside');
}

/** The cache directory, created private when missing; null (told once) when it is a link, someone else's, or cannot be made. */
function cacheDir(): string | null {
  if (!symbolCacheEnabled()) return null;
  const dir = symbolCacheDir();
  if (checkedDir !== undefined && (checkedDir === null || checkedDir === dir)) return checkedDir;
  const made = ensurePrivateDirectory(dir);
  checkedDir = made.ok ? dir : null;
  if (!made.ok && !reported) {
    reported = true;
    // "Remove it" is the fix only for a directory that is there (a link, someone else's); one that cannot be made
    // (a home that does not exist or is not writable, as for system users) needs another place.
    const there = pathIsThere(dir);
    reportProblem(
      `symbol cache off: ${dir}: ${made.reason} (${there ? 'remove it, or ' : ''}set XDG_CACHE_HOME to a directory only you can write, or --no-symbol-cache to be quiet)`,
    );
  }
  return checkedDir;
}

/** Whether `dir` exists as a name (a link counts); a parent this user cannot search says no. */
function pathIsThere(dir: string): boolean {
  try {
    return lstatSync(dir, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EACCES') return false;
    throw error;
  }
}

function entryName(kind: CacheKind, key: string): string {
  return createHash('sha1').update(key).digest('hex') + EXTENSION[kind];
}

const FNV_OFFSET = 0x811c9dc5 | 0;

/**
 * A 32-bit FNV-1a over the 32-bit words of `part` (a multiple of 4 bytes long), continuing from `hash`: a damaged
 * name table or column misses. A few milliseconds for a 13 MB entry, where a cryptographic hash took several times that.
 */
function checksumWords(hash: number, part: Uint8Array): number {
  const aligned = part.byteOffset % 4 === 0 ? part : part.slice();
  const words = new Int32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >>> 2);
  for (let i = 0; i < words.length; i++) hash = Math.imul(hash ^ words[i], 16777619);
  return hash;
}

const padded = (length: number): number => (length + 7) & ~7;

const bytesOf = (view: ArrayBufferView): Uint8Array => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/**
 * The file as the parts written one after another (no copy of the columns into one buffer: that held a second copy
 * of a 13 MB entry): header, key, the sections' byte lengths, then each section at an 8-byte boundary. The header's
 * checksum covers every part after it.
 */
function layout(kind: CacheKind, key: string, sections: readonly ArrayBufferView[]): Uint8Array[] {
  const keyBytes = Buffer.from(key, 'utf8');
  const keyPart = new Uint8Array(padded(keyBytes.length));
  keyPart.set(keyBytes);
  const table = Buffer.alloc(padded(sections.length * 4));
  sections.forEach((section, i) => table.writeUInt32LE(section.byteLength, i * 4));
  const body: Uint8Array[] = [keyPart, table];
  for (const section of sections) {
    const bytes = bytesOf(section);
    const whole = bytes.byteLength - (bytes.byteLength % 8);
    body.push(bytes.subarray(0, whole));
    if (whole < bytes.byteLength) {
      // The last bytes with the zeros that pad them to 8: every part then holds whole words.
      const tail = new Uint8Array(8);
      tail.set(bytes.subarray(whole));
      body.push(tail);
    }
  }
  let length = HEADER_BYTES;
  let hash = FNV_OFFSET;
  for (const part of body) {
    length += part.byteLength;
    hash = checksumWords(hash, part);
  }
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(FORMAT_VERSION, 8);
  header.writeUInt32LE(kind, 12);
  header.writeUInt32LE(keyBytes.length, 16);
  header.writeUInt32LE(sections.length, 20);
  header.writeUInt32LE(length % 2 ** 32, 24);
  header.writeUInt32LE(Math.floor(length / 2 ** 32), 28);
  header.writeUInt32LE(hash >>> 0, 32);
  return [header, ...body];
}

/** The sections of a file read whole, or undefined when anything about it is not what this version wrote for `key`. */
function decode(file: Buffer, kind: CacheKind, key: string, sectionCount: number): Uint8Array[] | undefined {
  if (file.length < HEADER_BYTES || file.length % 8 !== 0 || !file.subarray(0, 8).equals(MAGIC)) return undefined;
  if (file.readUInt32LE(8) !== FORMAT_VERSION || file.readUInt32LE(12) !== kind || file.readUInt32LE(20) !== sectionCount) return undefined;
  if (file.readUInt32LE(24) + file.readUInt32LE(28) * 2 ** 32 !== file.length) return undefined;
  const keyBytes = Buffer.from(key, 'utf8');
  const keyLength = file.readUInt32LE(16);
  let at = HEADER_BYTES;
  if (keyLength !== keyBytes.length || at + padded(keyLength) > file.length || !file.subarray(at, at + keyLength).equals(keyBytes)) return undefined;
  if (checksumWords(FNV_OFFSET, file.subarray(HEADER_BYTES)) >>> 0 !== file.readUInt32LE(32)) return undefined;
  at += padded(keyLength);
  const tableAt = at;
  at += padded(sectionCount * 4);
  const sections: Uint8Array[] = [];
  for (let i = 0; i < sectionCount; i++) {
    const length = file.readUInt32LE(tableAt + i * 4);
    if (at + padded(length) > file.length) return undefined;
    sections.push(new Uint8Array(file.buffer, file.byteOffset + at, length));
    at += padded(length);
  }
  return at === file.length ? sections : undefined;
}

/** Reads a cache entry whole, through the private directory's fd and without following a link; undefined on any miss. */
function readEntry(kind: CacheKind, key: string, sectionCount: number): Uint8Array[] | undefined {
  const dir = cacheDir();
  if (!dir) return undefined;
  let dirFd: number;
  try {
    dirFd = openPrivateDirectory(dir);
  } catch {
    // replaced since it was checked: no cache this time
    return undefined;
  }
  let fd = -1;
  try {
    fd = openSync(pathInDirectoryFd(dirFd, entryName(kind, key)), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.uid !== (process.geteuid?.() ?? 0) || stats.size > MAX_ENTRY_BYTES) return undefined;
    // Its own ArrayBuffer at offset 0: the typed columns are views of it, aligned as they were written.
    const file = Buffer.from(new ArrayBuffer(stats.size));
    for (let at = 0; at < file.length;) {
      const got = readSync(fd, file, at, file.length - at, at);
      if (got === 0) return undefined;
      at += got;
    }
    const sections = decode(file, kind, key, sectionCount);
    // Used now: the eviction removes the least recently used first.
    if (sections) futimesSync(fd, new Date(), new Date());
    return sections;
  } catch {
    // missing (ENOENT), a link (ELOOP) or unreadable: a miss; the entry rebuilt replaces it
    return undefined;
  } finally {
    if (fd >= 0) closeSync(fd);
    closeSync(dirFd);
  }
}

/**
 * Writes an entry (temporary file + rename in the private directory), then keeps the directory within its bound. The
 * sections are asked for only when the cache is on. Never throws.
 */
function writeEntry(kind: CacheKind, key: string, sections: () => readonly ArrayBufferView[]): void {
  const dir = cacheDir();
  if (!dir) return;
  try {
    const out = new AtomicFile(path.join(dir, entryName(kind, key)), { privateDirectory: true, durable: false });
    try {
      for (const part of layout(kind, key, sections())) out.write(part);
      out.commit();
    } finally {
      out.abort();
    }
    evictOldest(dir, SYMBOL_CACHE_MAX_BYTES);
  } catch {
    // a full disk or a directory replaced meanwhile: the cache is an optimisation, the names were built anyway
  }
}

/** Removes the least recently used entries until the directory holds at most `maxBytes` of them. */
export function evictOldest(dir: string, maxBytes: number): void {
  const dirFd = openPrivateDirectory(dir);
  try {
    const entries: { name: string; size: number; used: number }[] = [];
    let total = 0;
    for (const name of readdirSync(pathInDirectoryFd(dirFd, '.'))) {
      if (!ENTRY_NAME.test(name)) continue;
      try {
        const stats = lstatSync(pathInDirectoryFd(dirFd, name));
        if (!stats.isFile()) continue;
        entries.push({ name, size: stats.size, used: stats.mtimeMs });
        total += stats.size;
      } catch {
        // removed by another process meanwhile
      }
    }
    entries.sort((a, b) => a.used - b.used);
    for (const entry of entries) {
      if (total <= maxBytes) break;
      try {
        unlinkSync(pathInDirectoryFd(dirFd, entry.name));
      } catch {
        // removed by another process meanwhile
      }
      total -= entry.size;
    }
  } finally {
    closeSync(dirFd);
  }
}

// ---- what the entries hold ----

/** The stored function index of the object `key` names (see ObjectFile: build-id and the file's identity), when cached and whole. */
export function loadFunctionColumns(key: string): StoredFunctionColumns | undefined {
  const sections = readEntry(CacheKind.Functions, key, 7);
  if (!sections) return undefined;
  const [base, starts, ends, nameFirst, nameStart, nameBytes, tablesText] = sections;
  const nameTables = tablesText.byteLength
    ? storedNameTables(Buffer.from(tablesText.buffer, tablesText.byteOffset, tablesText.byteLength).toString('utf8'))
    : undefined;
  if (nameTables === null) return undefined;
  if (base.byteLength !== 8 || starts.byteLength % 8 !== 0 || starts.byteLength !== ends.byteLength) return undefined;
  const count = starts.byteLength / 8;
  if (nameFirst.byteLength !== (count + 1) * 4 || nameStart.byteLength % 4 !== 0) return undefined;
  const columns: StoredFunctionColumns = {
    base: (BigInt(new Uint32Array(base.buffer, base.byteOffset, 2)[1]) << 32n) | BigInt(new Uint32Array(base.buffer, base.byteOffset, 2)[0]),
    starts: new Float64Array(starts.buffer, starts.byteOffset, count),
    ends: new Float64Array(ends.buffer, ends.byteOffset, count),
    nameFirst: new Uint32Array(nameFirst.buffer, nameFirst.byteOffset, count + 1),
    nameStart: new Uint32Array(nameStart.buffer, nameStart.byteOffset, nameStart.byteLength / 4),
    nameBytes,
    ...(nameTables ? { nameTables } : {}),
  };
  return functionColumnsAgree(columns) ? columns : undefined;
}

/** The string tables a stored index's names lie in (StoredNameTable[] as JSON); null when they are not that. */
function storedNameTables(text: string): StoredNameTable[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (a damaged entry the checksum happened to pass): a miss, rebuilt
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return null;
  const count = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  const tables = parsed as StoredNameTable[];
  const whole = tables.every(
    (table, t) =>
      typeof table === 'object' &&
      table !== null &&
      count(table.at) &&
      count(table.size) &&
      (t === 0 ? table.at === 0 : table.at === tables[t - 1].at + tables[t - 1].size + 1) &&
      (typeof table.path === 'string' ? count(table.offset) && table.held === undefined : count(table.held) && table.path === undefined),
  );
  return whole ? tables : null;
}

/** Starts ascending with each end past its start, every function named, every name inside a NUL-ended table: what lookups rely on. */
function functionColumnsAgree({ starts, ends, nameFirst, nameStart, nameBytes, nameTables }: StoredFunctionColumns): boolean {
  const names = nameStart.length;
  if (nameFirst[0] !== 0 || nameFirst[starts.length] !== names || nameBytes.length === 0 || nameBytes[nameBytes.length - 1] !== 0) return false;
  for (let f = 0; f < starts.length; f++) {
    if (!(ends[f] > starts[f]) || (f > 0 && !(starts[f] > starts[f - 1])) || !(nameFirst[f + 1] > nameFirst[f])) return false;
  }
  const last = nameTables?.[nameTables.length - 1];
  const numbered = last ? last.at + last.size + 1 : nameBytes.length;
  if (nameTables?.some((table) => table.held !== undefined && table.held + table.size >= nameBytes.length)) return false;
  for (let n = 0; n < names; n++) if (nameStart[n] >= numbered) return false;
  return true;
}

/** Stores the function index `columns()` gives (asked for only when the cache is on: building them reads every name). */
export function storeFunctionColumns(key: string, columns: () => StoredFunctionColumns): void {
  writeEntry(CacheKind.Functions, key, () => {
    const { base, starts, ends, nameFirst, nameStart, nameBytes, nameTables } = columns();
    const tablesText = Buffer.from(nameTables ? JSON.stringify(nameTables) : '', 'utf8');
    return [new Uint32Array([Number(base & 0xffffffffn), Number(base >> 32n)]), starts, ends, nameFirst, nameStart, nameBytes, tablesText];
  });
}

/**
 * Kallsyms' code symbols as columns: addresses as halves, each symbol's line in `text` (only the kept lines, in
 * address order, without their addresses: `TYPE NAME[\tMODULE]`).
 */
export interface KallsymsColumns {
  readonly text: string;
  readonly high: Uint32Array;
  readonly low: Uint32Array;
  readonly lineStart: Int32Array;
}

export function loadKallsymsColumns(key: string): KallsymsColumns | undefined {
  const sections = readEntry(CacheKind.Kallsyms, key, 4);
  if (!sections) return undefined;
  const [high, low, lineStart, text] = sections;
  const count = high.byteLength / 4;
  if (high.byteLength % 4 !== 0 || low.byteLength !== high.byteLength || lineStart.byteLength !== high.byteLength) return undefined;
  const columns = {
    high: new Uint32Array(high.buffer, high.byteOffset, count),
    low: new Uint32Array(low.buffer, low.byteOffset, count),
    lineStart: new Int32Array(lineStart.buffer, lineStart.byteOffset, count),
    text: Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8'),
  };
  for (let i = 0; i < count; i++) {
    const sorted = i === 0 || columns.high[i] > columns.high[i - 1] || (columns.high[i] === columns.high[i - 1] && columns.low[i] >= columns.low[i - 1]);
    if (!sorted || columns.lineStart[i] < 0 || columns.lineStart[i] >= columns.text.length) return undefined;
  }
  return columns;
}

/** Stores kallsyms' compact columns (`columns()` asked for only when the cache is on). */
export function storeKallsymsColumns(key: string, columns: () => KallsymsColumns): void {
  writeEntry(CacheKind.Kallsyms, key, () => {
    const { high, low, lineStart, text } = columns();
    return [high, low, lineStart, Buffer.from(text, 'utf8')];
  });
}
