// The keeper's published state: what a `ringside keep` process holds (its perf fds, their attrs and
// ring sizes), written as JSON to a file only its owner can read. The keeper writes it with
// writeKeeperState; the extension (after a reload, in a new window, over Remote) reads it with
// listKeeperStates and borrows the fds with pidfd_getfd. Same code on both sides so the schema
// cannot drift. Pure node: no vscode, no koffi.

import { closeSync, constants, lstatSync, mkdtempSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { TracepointFormat, EventDescription } from '../abi/snapshot';
import { decodeAttr, encodeAttr, type PerfEventAttr } from '../abi/attr';
import { processAlive } from '../perf/borrowed';
import { readProcessStat } from '../perf/procfs';
import type { RecordingTarget } from '../perf/recorder-options';
import { isPowerOfTwo } from '../abi/units';
import { ensurePrivateDirectory, privateDirectoriesBeside, writeFileAtomic } from '../sys/safe-file';

export const KEEPER_STATE_VERSION = 1;

export type KeeperTarget = RecordingTarget<{ readonly childPid?: number }>;

export interface KeeperEventState {
  readonly name: string;
  /** encodeAttr(attr) as lowercase hex: the exact attr the keeper opened, byte for byte. */
  readonly attrHex: string;
  /** PERF_EVENT_IOC_ID of every fd of this event, as decimal strings (u64 does not fit JSON numbers). */
  readonly ids: readonly string[];
  readonly tracepoint?: TracepointFormat;
}

export interface KeeperRingState {
  /** The fd number in the keeper process (for pidfd_getfd). */
  readonly fd: number;
  readonly ringId: number;
  readonly label: string;
  readonly cpu: number;
  readonly tid: number;
  readonly direction: 'backward' | 'forward';
  /** Data pages (a power of two); the mapping is pages + 1 (the header page). */
  readonly pages: number;
  readonly defaultEvent: number;
  /**
   * Set on a ring a resize (--window) retired: nothing writes it any more, and the keeper closes it
   * once its successor holds the history by itself and no client's lease is out.
   */
  readonly retired?: KeeperRetiredRing;
}

/** The time range a retired ring covers, in perf clock ns as decimal strings (absent: unknown or empty). */
export interface KeeperRetiredRing {
  /** Its successor's oldest sample when it was retired: a client drops this ring's records from then on (the successor has them). */
  readonly cutAtNs?: string;
  readonly oldestNs?: string;
  readonly newestNs?: string;
}

export interface KeeperState {
  readonly version: typeof KEEPER_STATE_VERSION;
  readonly pid: number;
  readonly uid: number;
  /** ISO time the keeper started. */
  readonly startedAt: string;
  /**
   * Field 22 of /proc/PID/stat (start time in clock ticks since boot) when the keeper started:
   * together with pid it tells a live keeper from an unrelated process that reused its pid.
   */
  readonly procStartTicks?: string;
  /**
   * The directory the keeper keeps its state file and side-band spools in, and watches for pause
   * leases in. A client writes its lease there and reads the spools from there, not from its own
   * default directory: the two differ whenever the client's XDG_RUNTIME_DIR differs from the
   * keeper's (another shell, a test, a service manager).
   */
  readonly stateDir?: string;
  readonly target: KeeperTarget;
  readonly events: readonly KeeperEventState[];
  readonly rings: readonly KeeperRingState[];
  /**
   * Counts the keeper's publications of this file (0 first). It changes whenever the rings do (a
   * resize, a retired ring closed): a client that read one generation and finds another after
   * copying reads the file again and copies again.
   */
  readonly generation?: number;
  /**
   * Set while a resize swaps the rings: larger rings are about to record and the published ones to
   * be retired. A client waits for the next generation instead of copying (the swap takes milliseconds).
   */
  readonly resizing?: boolean;
  /** What the recording cannot see and why, and every resize so far (the recorder's limitations). */
  readonly limitations?: readonly string[];
  /**
   * Bytes that retired rings no longer published wrote (decimal; RawSnapshot.retiredBytesLeftOut): a snapshot's
   * overwrite note counts them as overwritten. Absent: none.
   */
  readonly retiredBytesLeftOut?: string;
}

export class KeeperStateError extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(file ? `${file}: ${message}` : message);
    this.name = 'KeeperStateError';
  }
}

/**
 * `${XDG_RUNTIME_DIR:-/tmp}/ringside-<uid>`: per-user, so one user's keepers are invisible to another.
 * The preferred place; when another user got there first (a directory of theirs, a symbolic link)
 * keepers use a fallback beside it instead (prepareKeeperStateDir) and readers look in both (keeperStateDirs).
 */
export function keeperStateDir(env: NodeJS.ProcessEnv = process.env, uid: number = currentUid()): string {
  const base = env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : '/tmp';
  return path.join(base, `ringside-${uid}`);
}

/** Fallbacks are `ringside-<uid>-XXXXXX` beside the preferred directory (mkdtemp: private, never one that existed). */
function fallbackPrefix(preferred: string): string {
  return `${path.basename(preferred)}-`;
}

/**
 * Every directory this user's keepers may publish in: the preferred one and the fallbacks beside it,
 * each only when it is a private directory of this uid (checked with lstat: a link is never one).
 */
export function keeperStateDirs(env: NodeJS.ProcessEnv = process.env, uid: number = currentUid()): string[] {
  const preferred = keeperStateDir(env, uid);
  const base = path.dirname(preferred);
  return privateDirectoriesBeside(base, path.basename(preferred)).filter((dir) => {
    const name = path.basename(dir);
    return (
      name === path.basename(preferred) || (name.startsWith(fallbackPrefix(preferred)) && /^[A-Za-z0-9]{6}$/.test(name.slice(fallbackPrefix(preferred).length)))
    );
  });
}

/**
 * The directory a keeper publishes in: the preferred one, made private (0700) when missing; or,
 * when another user made it first or left a symbolic link there, a fallback of ours beside it (an
 * existing one, else a fresh mkdtemp one) with a note saying so. Nothing is ever created, written or
 * chmodded through someone else's link, and the other user's directory does not stop the keeper.
 */
export function prepareKeeperStateDir(env: NodeJS.ProcessEnv = process.env, uid: number = currentUid()): { dir: string; note?: string } {
  const preferred = keeperStateDir(env, uid);
  const made = ensurePrivateDirectory(preferred);
  if (made.ok) return { dir: preferred };
  const fallback = keeperStateDirs(env, uid).find((dir) => dir !== preferred) ?? mkdtempSync(path.join(path.dirname(preferred), fallbackPrefix(preferred)));
  return {
    dir: fallback,
    note:
      `${preferred} is not a private directory of uid ${uid} (${made.reason}); state goes to ${fallback} instead, where \`ringside list\` ` +
      `and the editor look too (remove ${preferred} to use it again)`,
  };
}

export function keeperStatePath(pid: number, dir: string = keeperStateDir()): string {
  return path.join(dir, `keeper-${pid}.json`);
}

/** The keeper's stderr, when the editor started it (extension/session/keeper-client.ts); its launched program's output goes nowhere. */
export function keeperLogPath(pid: number, dir: string = keeperStateDir()): string {
  return path.join(dir, `keeper-${pid}.log`);
}

function currentUid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0;
}

/** Start time of a process in clock ticks since boot, or undefined when it does not exist. */
export function processStartTicks(pid: number): string | undefined {
  return readProcessStat(pid)?.startTicks;
}

/** True when `pid` exists (and, if known, is the same process: same start time). */
export function isKeeperAlive(state: Pick<KeeperState, 'pid' | 'procStartTicks'>): boolean {
  const ticks = processStartTicks(state.pid);
  if (ticks === undefined) return false;
  if (state.procStartTicks !== undefined && state.procStartTicks !== ticks) return false;
  // Zombies still have a /proc entry but hold no fds any more.
  return processAlive(state.pid);
}

export function attrToHex(attr: PerfEventAttr): string {
  return Buffer.from(encodeAttr(attr)).toString('hex');
}

export function attrFromHex(hex: string): PerfEventAttr {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) throw new KeeperStateError(`attrHex is not hex bytes`);
  return decodeAttr(new Uint8Array(Buffer.from(hex, 'hex')));
}

/** The keeper's events as the decoder wants them (EventDescription with bigint ids). */
export function keeperEventDescriptions(state: KeeperState): EventDescription[] {
  return state.events.map((event, index) => ({
    index,
    name: event.name,
    attr: attrFromHex(event.attrHex),
    ids: event.ids.map((id) => BigInt(id)),
    ...(event.tracepoint ? { tracepoint: event.tracepoint } : {}),
  }));
}

/** Builds the state a keeper publishes from what its Recorder opened. */
export function buildKeeperState(input: {
  pid?: number;
  target: KeeperTarget;
  events: readonly { name: string; attr: PerfEventAttr; ids: readonly bigint[]; tracepoint?: TracepointFormat }[];
  rings: readonly KeeperRingState[];
  startedAt?: Date;
  stateDir?: string;
  generation?: number;
  resizing?: boolean;
  limitations?: readonly string[];
  retiredBytesLeftOut?: bigint;
}): KeeperState {
  const pid = input.pid ?? process.pid;
  const ticks = processStartTicks(pid);
  return {
    version: KEEPER_STATE_VERSION,
    pid,
    uid: currentUid(),
    startedAt: (input.startedAt ?? new Date()).toISOString(),
    ...(ticks !== undefined ? { procStartTicks: ticks } : {}),
    ...(input.stateDir !== undefined ? { stateDir: input.stateDir } : {}),
    target: input.target,
    events: input.events.map((event) => ({
      name: event.name,
      attrHex: attrToHex(event.attr),
      ids: event.ids.map((id) => id.toString()),
      ...(event.tracepoint ? { tracepoint: event.tracepoint } : {}),
    })),
    rings: input.rings,
    generation: input.generation ?? 0,
    ...(input.resizing ? { resizing: true } : {}),
    ...(input.limitations?.length ? { limitations: input.limitations } : {}),
    ...(input.retiredBytesLeftOut ? { retiredBytesLeftOut: input.retiredBytesLeftOut.toString() } : {}),
  };
}

/**
 * Writes the state atomically (temp file + rename, see writeFileAtomic) with mode 0600 in a private
 * directory of ours (opened without following a link, owner and mode checked), so a reader never
 * sees half a file and no other user can read fd numbers or attrs. Returns the path.
 */
export function writeKeeperState(state: KeeperState, dir: string = keeperStateDir()): string {
  const finalPath = keeperStatePath(state.pid, dir);
  writeFileAtomic(finalPath, JSON.stringify(state, null, 2) + '\n', { privateDirectory: true });
  return finalPath;
}

/**
 * The pid a keeper file in the state directory belongs to: its state (`keeper-PID.json`), log,
 * spool segments, pause leases and temporary files (`.keeper-PID.json.*.tmp`); for a start log
 * (`keeper-starting-CLIENT-TIME.log`) the client writing it. Undefined for anything else.
 */
function keeperFileOwnerPid(name: string): { pid: number; client: boolean } | undefined {
  const starting = /^keeper-starting-(\d+)-\d+\.log$/.exec(name);
  if (starting) return { pid: Number(starting[1]), client: true };
  const match = /^\.?keeper-(\d+)\.(?:json|log|sideband-|paused-by-)/.exec(name);
  return match ? { pid: Number(match[1]), client: false } : undefined;
}

/** Removes a keeper's state file, log, side-band spools, pause leases and temporary files. */
export function removeKeeperState(pid: number, dir: string = keeperStateDir()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) {
    const owner = keeperFileOwnerPid(name);
    if (!owner || owner.client || owner.pid !== pid) continue;
    try {
      unlinkSync(path.join(dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/**
 * Removes what dead keepers left (a keeper killed with SIGKILL cannot clean up): every keeper's
 * files whose state file names a process that is gone (same pid, same start time: isKeeperAlive),
 * files of a pid without a state file when no such process runs, and start logs of dead clients.
 * Returns the pids cleaned up.
 */
export function pruneDeadKeeperFiles(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // no state directory yet: there are no keepers to prune
    return [];
  }
  const pruned: number[] = [];
  const pids = new Set<number>();
  for (const name of names) {
    const owner = keeperFileOwnerPid(name);
    if (!owner) continue;
    if (owner.client) {
      if (!processAlive(owner.pid)) unlinkQuietly(path.join(dir, name));
      continue;
    }
    pids.add(owner.pid);
  }
  for (const pid of pids) {
    if (pid === process.pid) continue;
    let alive: boolean;
    try {
      alive = isKeeperAlive(readKeeperState(keeperStatePath(pid, dir)));
    } catch {
      // No state file (or one we cannot use): only the pid is left to go by.
      alive = processStartTicks(pid) !== undefined && processAlive(pid);
    }
    if (alive) continue;
    removeKeeperState(pid, dir);
    pruned.push(pid);
  }
  return pruned;
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

// ------------------------------------------------------------------------------------------------
// Pause leases. PAUSE_OUTPUT is a property of the ring buffer, not of the fd: a client that dies
// while it has a keeper's rings paused (killed inside a snapshot's pause window, or while the user
// paused the session) leaves them paused for everyone. So a client first leaves a lease file
// naming itself, and removes it when it resumes; the keeper resumes its rings when it finds a
// lease whose client is gone and no live client's lease beside it.

/** The lease file of one client of one keeper. */
export function pauseLeasePath(keeperPid: number, clientPid: number, dir: string = keeperStateDir()): string {
  return path.join(dir, `keeper-${keeperPid}.paused-by-${clientPid}`);
}

/** Says "client `clientPid` is about to pause keeper `keeperPid`'s rings". Idempotent. */
export function takePauseLease(keeperPid: number, clientPid: number = process.pid, dir: string = keeperStateDir()): void {
  // Never through a link planted at the lease's name (the directory is the keeper's private one; this is belt and braces).
  const fd = openSync(pauseLeasePath(keeperPid, clientPid, dir), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${clientPid}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Says "client `clientPid` has resumed them". Idempotent. */
export function releasePauseLease(keeperPid: number, clientPid: number = process.pid, dir: string = keeperStateDir()): void {
  try {
    unlinkSync(pauseLeasePath(keeperPid, clientPid, dir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * For the keeper: the leases on its rings, split into clients still alive and clients gone (whose
 * lease files this removes). The rings should be resumed when `gone` is non-empty and `alive` empty.
 */
export function collectPauseLeases(keeperPid: number, dir: string = keeperStateDir()): { alive: number[]; gone: number[] } {
  const prefix = `keeper-${keeperPid}.paused-by-`;
  const alive: number[] = [];
  const gone: number[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // no state directory yet: no keepers, alive or gone
    return { alive, gone };
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const client = Number(name.slice(prefix.length));
    if (!Number.isInteger(client) || client <= 0) continue;
    if (processAlive(client)) {
      alive.push(client);
    } else {
      gone.push(client);
      releasePauseLease(keeperPid, client, dir);
    }
  }
  return { alive, gone };
}

/** Reads and validates one state file; every malformed field is a KeeperStateError naming it. */
export function readKeeperState(file: string): KeeperState {
  let text: string;
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) throw new KeeperStateError('not a regular file (a link or something else planted here)', file);
    if ((stat.mode & 0o077) !== 0) throw new KeeperStateError(`mode ${(stat.mode & 0o777).toString(8)} lets other users read it; expected 0600`, file);
    if (stat.uid !== currentUid()) throw new KeeperStateError(`owned by uid ${stat.uid}, not by us (uid ${currentUid()})`, file);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof KeeperStateError) throw error;
    throw new KeeperStateError(`cannot read: ${(error as Error).message}`, file);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new KeeperStateError(`not JSON: ${(error as Error).message}`, file);
  }
  return validateKeeperState(parsed, file);
}

export function validateKeeperState(value: unknown, file?: string): KeeperState {
  const fail = (what: string): never => {
    throw new KeeperStateError(what, file);
  };
  const obj = asObject(value) ?? fail('state is not an object');
  if (obj.version !== KEEPER_STATE_VERSION) fail(`unsupported version ${String(obj.version)} (this Ringside reads version ${KEEPER_STATE_VERSION})`);
  const pid = positiveInt(obj.pid) ?? fail('pid must be a positive integer');
  const uid = nonNegativeInt(obj.uid) ?? fail('uid must be a non-negative integer');
  if (typeof obj.startedAt !== 'string' || Number.isNaN(Date.parse(obj.startedAt))) fail('startedAt must be an ISO date');
  if (obj.procStartTicks !== undefined && (typeof obj.procStartTicks !== 'string' || !/^\d+$/.test(obj.procStartTicks)))
    fail('procStartTicks must be a decimal string');
  if (obj.stateDir !== undefined && (typeof obj.stateDir !== 'string' || !path.isAbsolute(obj.stateDir))) fail('stateDir must be an absolute path');
  const target = validateTarget(obj.target) ?? fail('target must be {kind:"pid",pid} | {kind:"cpus",cpus?} | {kind:"launch",argv}');
  if (!Array.isArray(obj.events) || obj.events.length === 0) fail('events must be a non-empty array');
  const events = (obj.events as unknown[]).map((raw, i): KeeperEventState => {
    const event = asObject(raw) ?? fail(`events[${i}] is not an object`);
    if (typeof event.name !== 'string' || !event.name) fail(`events[${i}].name must be a string`);
    if (typeof event.attrHex !== 'string') fail(`events[${i}].attrHex must be a hex string`);
    try {
      attrFromHex(event.attrHex as string);
    } catch (error) {
      fail(`events[${i}].attrHex: ${(error as Error).message}`);
    }
    if (!Array.isArray(event.ids) || !event.ids.every((id) => typeof id === 'string' && /^\d+$/.test(id))) fail(`events[${i}].ids must be decimal strings`);
    if (event.tracepoint !== undefined && asObject(event.tracepoint) === undefined) fail(`events[${i}].tracepoint must be an object`);
    return {
      name: event.name as string,
      attrHex: (event.attrHex as string).toLowerCase(),
      ids: event.ids as string[],
      ...(event.tracepoint !== undefined ? { tracepoint: event.tracepoint as TracepointFormat } : {}),
    };
  });
  if (!Array.isArray(obj.rings) || obj.rings.length === 0) fail('rings must be a non-empty array');
  const rings = (obj.rings as unknown[]).map((raw, i): KeeperRingState => {
    const ring = asObject(raw) ?? fail(`rings[${i}] is not an object`);
    const fd = nonNegativeInt(ring.fd) ?? fail(`rings[${i}].fd must be a non-negative integer`);
    const ringId = nonNegativeInt(ring.ringId) ?? fail(`rings[${i}].ringId must be a non-negative integer`);
    const pages = positiveInt(ring.pages) ?? fail(`rings[${i}].pages must be a positive integer`);
    if (!isPowerOfTwo(pages)) fail(`rings[${i}].pages must be a power of two, got ${pages}`);
    if (ring.direction !== 'backward' && ring.direction !== 'forward') fail(`rings[${i}].direction must be "backward" or "forward"`);
    if (typeof ring.label !== 'string') fail(`rings[${i}].label must be a string`);
    if (!Number.isInteger(ring.cpu) || !Number.isInteger(ring.tid)) fail(`rings[${i}].cpu and .tid must be integers (-1 for any)`);
    const defaultEvent = nonNegativeInt(ring.defaultEvent) ?? fail(`rings[${i}].defaultEvent must be an event index`);
    if (defaultEvent >= events.length) fail(`rings[${i}].defaultEvent ${defaultEvent} is past the ${events.length} events`);
    let retired: KeeperRetiredRing | undefined;
    if (ring.retired !== undefined) {
      const raw = asObject(ring.retired) ?? fail(`rings[${i}].retired must be an object`);
      if (ring.direction !== 'backward') fail(`rings[${i}] is retired but not a backward ring`);
      const times: Record<string, string> = {};
      for (const key of ['cutAtNs', 'oldestNs', 'newestNs'] as const) {
        const value = raw[key];
        if (value === undefined) continue;
        if (typeof value !== 'string' || !/^\d+$/.test(value)) fail(`rings[${i}].retired.${key} must be a decimal string`);
        times[key] = value as string;
      }
      retired = times;
    }
    return {
      fd,
      ringId,
      pages,
      defaultEvent,
      label: ring.label as string,
      cpu: ring.cpu as number,
      tid: ring.tid as number,
      direction: ring.direction as 'backward' | 'forward',
      ...(retired ? { retired } : {}),
    };
  });
  const generation = obj.generation === undefined ? 0 : (nonNegativeInt(obj.generation) ?? fail('generation must be a non-negative integer'));
  if (obj.resizing !== undefined && typeof obj.resizing !== 'boolean') fail('resizing must be a boolean');
  if (obj.limitations !== undefined && (!Array.isArray(obj.limitations) || !obj.limitations.every((line) => typeof line === 'string'))) {
    fail('limitations must be an array of strings');
  }
  if (obj.retiredBytesLeftOut !== undefined && (typeof obj.retiredBytesLeftOut !== 'string' || !/^\d+$/.test(obj.retiredBytesLeftOut))) {
    fail('retiredBytesLeftOut must be a decimal string');
  }
  return {
    version: KEEPER_STATE_VERSION,
    pid,
    uid,
    startedAt: obj.startedAt as string,
    ...(obj.procStartTicks !== undefined ? { procStartTicks: obj.procStartTicks as string } : {}),
    ...(obj.stateDir !== undefined ? { stateDir: obj.stateDir as string } : {}),
    target,
    events,
    rings,
    generation,
    ...(obj.resizing === true ? { resizing: true } : {}),
    ...(obj.limitations !== undefined ? { limitations: obj.limitations as string[] } : {}),
    ...(obj.retiredBytesLeftOut !== undefined ? { retiredBytesLeftOut: obj.retiredBytesLeftOut as string } : {}),
  };
}

function validateTarget(value: unknown): KeeperTarget | undefined {
  const target = asObject(value);
  if (!target) return undefined;
  switch (target.kind) {
    case 'pid': {
      const pid = positiveInt(target.pid);
      return pid === undefined ? undefined : { kind: 'pid', pid };
    }
    case 'cpus': {
      if (target.cpus === undefined) return { kind: 'cpus' };
      if (!Array.isArray(target.cpus) || !target.cpus.every((cpu) => nonNegativeInt(cpu) !== undefined)) return undefined;
      return { kind: 'cpus', cpus: target.cpus as number[] };
    }
    case 'launch': {
      if (!Array.isArray(target.argv) || target.argv.length === 0 || !target.argv.every((arg) => typeof arg === 'string')) return undefined;
      const childPid = target.childPid === undefined ? undefined : positiveInt(target.childPid);
      if (target.childPid !== undefined && childPid === undefined) return undefined;
      return { kind: 'launch', argv: target.argv as string[], ...(childPid !== undefined ? { childPid } : {}) };
    }
    default:
      return undefined;
  }
}

export interface ListedKeeper {
  readonly file: string;
  readonly state?: KeeperState;
  /** Why the file could not be used (malformed, wrong owner/mode). */
  readonly error?: KeeperStateError;
  readonly alive: boolean;
}

/**
 * Every keeper state file in `dir`, or by default in every state directory of this user
 * (keeperStateDirs: the fallbacks too). With `pruneDead`, what dead keepers left is removed
 * (pruneDeadKeeperFiles: a keeper killed with SIGKILL cannot clean up after itself).
 */
export function listKeeperStates(options: { dir?: string; pruneDead?: boolean } = {}): ListedKeeper[] {
  const dirs = options.dir !== undefined ? [options.dir] : keeperStateDirs();
  const listed: ListedKeeper[] = [];
  for (const dir of dirs) {
    if (options.pruneDead) pruneDeadKeeperFiles(dir);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    for (const name of names.sort()) {
      if (!/^keeper-\d+\.json$/.test(name)) continue;
      const file = path.join(dir, name);
      try {
        const state = readKeeperState(file);
        listed.push({ file, state, alive: isKeeperAlive(state) });
      } catch (error) {
        listed.push({ file, error: error instanceof KeeperStateError ? error : new KeeperStateError(String(error), file), alive: false });
      }
    }
  }
  return listed;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function positiveInt(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;
}

function nonNegativeInt(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}
