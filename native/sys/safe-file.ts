// Files written the way another local user cannot subvert, whatever directory they go to (/tmp
// included): created afresh (O_EXCL|O_NOFOLLOW, mode 0600) under a temporary name in the target's
// directory, reached through an fd of that directory (/proc/self/fd/N: node has no openat), and
// renamed over the target only once complete. So a symlink or FIFO planted at the target or at the
// temporary name is never opened, a reader never sees half a file, and a failure (a full disk)
// leaves nothing behind and names the file. Every output of Ringside (-o, triggered snapshots, the
// extension's exports, a keeper's state file) goes through here.

import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describeUid } from './access';

/** A file that could not be written: names the file, the cause (errno) and what to do. */
export class FileWriteError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly hint: string,
    readonly errno?: string,
  ) {
    super(`cannot write ${file}: ${reason}`);
    this.name = 'FileWriteError';
  }
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** `no space left on device (ENOSPC)` from node's `ENOSPC: no space left on device, write`. */
function causeOf(error: unknown): string {
  const code = errnoOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const text = /^[A-Z0-9]+: (.*?), [a-z]+(?: '.*')?$/s.exec(message)?.[1] ?? message;
  return code ? `${text} (${code})` : text;
}

function hintFor(code: string | undefined, dir: string): string {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `free space on the file system of ${dir}, or write elsewhere`;
    case 'EACCES':
    case 'EPERM':
      return 'write to a directory you own, e.g. under $HOME';
    case 'EROFS':
      return `${dir} is on a read-only file system; write elsewhere`;
    default:
      return 'write elsewhere';
  }
}

function wrap(file: string, error: unknown): FileWriteError {
  if (error instanceof FileWriteError) return error;
  return new FileWriteError(file, causeOf(error), hintFor(errnoOf(error), path.dirname(file)), errnoOf(error));
}

/** `a FIFO`, `a directory`...: what a path that is not a regular file is. */
export function describeFileType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function effectiveUid(): number {
  return typeof process.geteuid === 'function' ? process.geteuid() : 0;
}

/** The path of `name` inside the directory open as `dirFd`, resolved by the kernel without looking the directory up again. */
export function pathInDirectoryFd(dirFd: number, name: string): string {
  return `/proc/self/fd/${dirFd}/${name}`;
}

/**
 * Opens `dir` as a private directory of this user: not through a symbolic link (O_NOFOLLOW), owned
 * by this uid, mode without group/other bits. Throws a FileWriteError saying which check failed. The
 * fd is what later opens go through, so the directory checked is the directory written.
 */
export function openPrivateDirectory(dir: string): number {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new FileWriteError(dir, `${notADirectory(dir)}`, 'remove it, or use a directory only you can write');
    throw wrap(dir, error);
  }
  try {
    const problem = privateDirectoryProblem(fstatSync(fd));
    if (problem) throw new FileWriteError(dir, problem, 'remove it, or use a directory only you can write');
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `it is a symbolic link (to /etc) owned by uid 65534 (nobody)`: why O_DIRECTORY|O_NOFOLLOW refused `dir`. */
function notADirectory(dir: string): string {
  try {
    const stats = lstatSync(dir);
    const target = stats.isSymbolicLink() ? ` (to ${readlinkSync(dir)})` : '';
    return `it is ${describeFileType(stats)}${target} owned by ${describeUid(stats.uid)}, not a directory`;
  } catch (error) {
    return causeOf(error);
  }
}

/** Why a directory is not one this user alone controls (null when it is). */
export function privateDirectoryProblem(stats: Stats): string | null {
  if (stats.isSymbolicLink()) return 'it is a symbolic link, not a directory of ours';
  if (!stats.isDirectory()) return `it is ${describeFileType(stats)}, not a directory`;
  if (stats.uid !== effectiveUid()) return `it is owned by ${describeUid(stats.uid)}, not by ${describeUid(effectiveUid())}`;
  if ((stats.mode & 0o077) !== 0) return `its mode 0${(stats.mode & 0o777).toString(8)} lets other users in`;
  return null;
}

/**
 * A private directory of this user at `dir`, created (mode 0700) when missing; a directory of ours
 * with a wider mode is narrowed through its fd, never through a path that could be a link. Says why
 * not when `dir` is someone else's, a link, or not a directory: it is then left alone.
 */
export function ensurePrivateDirectory(dir: string): { ok: true } | { ok: false; reason: string } {
  try {
    // recursive: the parents too (an XDG_RUNTIME_DIR not made yet). An existing entry is not an error here: it is checked below.
    mkdirParents(dir);
  } catch (error) {
    return { ok: false, reason: causeOf(error) };
  }
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = errnoOf(error);
    return { ok: false, reason: code === 'ELOOP' || code === 'ENOTDIR' ? notADirectory(dir) : causeOf(error) };
  }
  try {
    const stats = fstatSync(fd);
    if (stats.uid !== effectiveUid()) return { ok: false, reason: `it is owned by ${describeUid(stats.uid)}, not by ${describeUid(effectiveUid())}` };
    if ((stats.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: causeOf(error) };
  } finally {
    closeSync(fd);
  }
}

function mkdirParents(dir: string): void {
  const parent = path.dirname(dir);
  if (parent !== dir) {
    try {
      lstatSync(parent);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw error;
      mkdirParents(parent);
    }
  }
  try {
    // mkdir(2) never follows a symbolic link at `dir`: one there is EEXIST, and the caller's check finds it.
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw error;
  }
}

/** Names in `dir` that start with `prefix` and are private directories of this user (lstat: links are not followed). */
export function privateDirectoriesBeside(dir: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // no such directory: no candidates
    return [];
  }
  return names
    .filter((name) => name.startsWith(prefix))
    .sort()
    .map((name) => path.join(dir, name))
    .filter((candidate) => {
      try {
        return privateDirectoryProblem(lstatSync(candidate)) === null;
      } catch {
        // it vanished or cannot be stat'ed: not a private directory we can use
        return false;
      }
    });
}

export interface AtomicFileOptions {
  /** The directory must be a private one of this user (keeper state): opened with O_NOFOLLOW and checked, never narrowed. */
  readonly privateDirectory?: boolean;
  /** fsync before the rename (default true: a crash then leaves the old file or the whole new one). */
  readonly durable?: boolean;
}

/**
 * One file being written: a temporary file beside the target until commit() renames it into place;
 * abort() (and any failed write) removes it. Errors are FileWriteErrors naming the target.
 */
export class AtomicFile {
  private dirFd: number;
  private fd: number;
  private readonly tempName: string;
  private readonly name: string;
  private written = 0;
  /** Bytes up to the last checkpoint(): what a failure keeps when `keepCheckpoint` is asked for. */
  private checkpointBytes = 0;
  private done = false;

  constructor(
    readonly file: string,
    private readonly options: AtomicFileOptions = {},
  ) {
    const dir = path.dirname(path.resolve(file));
    this.name = path.basename(file);
    if (this.name === '' || this.name === '.' || this.name === '..') throw new FileWriteError(file, 'it names a directory, not a file', 'name a file');
    this.dirFd = options.privateDirectory ? openPrivateDirectory(dir) : openDirectory(dir, file);
    try {
      refuseNonRegularTarget(file, pathInDirectoryFd(this.dirFd, this.name));
      // Hidden, unique per process and attempt; a long name is shortened so the temporary one still fits NAME_MAX.
      this.tempName = `.${this.name.slice(0, 200)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      this.fd = openSync(pathInDirectoryFd(this.dirFd, this.tempName), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      closeSync(this.dirFd);
      throw wrap(file, error);
    }
  }

  /** Appends all of `data` (a full disk ends it with a FileWriteError; the temporary file is then removed). */
  write(data: string | Uint8Array): void {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset, bytes.length - offset, this.written + offset);
      this.written += bytes.length;
    } catch (error) {
      const failure = wrap(this.file, error);
      this.fail();
      if (this.checkpointBytes === 0) throw failure;
      throw new FileWriteError(
        this.file,
        `${failure.reason}; it keeps only what was whole before (${this.checkpointBytes} bytes)`,
        failure.hint,
        failure.errno,
      );
    }
  }

  /** Marks what was written so far as whole (a JSON Lines snapshot): a later failure keeps it (see fail). */
  checkpoint(): void {
    this.checkpointBytes = this.written;
  }

  /** Drops what was written after the last checkpoint (a snapshot that failed part way for another reason than the disk). */
  rollback(): void {
    if (this.done || this.written === this.checkpointBytes) return;
    try {
      ftruncateSync(this.fd, this.checkpointBytes);
      this.written = this.checkpointBytes;
    } catch (error) {
      const failure = wrap(this.file, error);
      this.abort();
      throw failure;
    }
  }

  /** Renames the finished file over the target. */
  commit(): void {
    if (this.done) return;
    try {
      if (this.options.durable !== false) fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      renameSync(pathInDirectoryFd(this.dirFd, this.tempName), pathInDirectoryFd(this.dirFd, this.name));
    } catch (error) {
      const failure = wrap(this.file, error);
      this.abort();
      throw failure;
    }
    this.finish();
  }

  /** Removes the temporary file; the target is untouched. Idempotent. */
  abort(): void {
    if (this.done) return;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    try {
      unlinkSync(pathInDirectoryFd(this.dirFd, this.tempName));
    } catch {
      // already gone
    }
    this.finish();
  }

  /**
   * After a failed write: the whole part before the last checkpoint is kept (cut there and renamed
   * into place) when there is one, else the file is removed. Never a cut line.
   */
  private fail(): void {
    if (this.checkpointBytes === 0) {
      this.abort();
      return;
    }
    try {
      ftruncateSync(this.fd, this.checkpointBytes);
      this.commit();
    } catch {
      // cutting at the checkpoint failed as well: remove the file rather than leave a cut line
      this.abort();
    }
  }

  private finish(): void {
    this.done = true;
    closeSync(this.dirFd);
    this.dirFd = -1;
  }
}

/** Opens the directory a user named for an output (following its links: the user chose that path). */
function openDirectory(dir: string, file: string): number {
  try {
    return openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw wrap(file, error);
  }
}

/**
 * A target that exists as a FIFO, device, socket or directory is refused: the rename would replace
 * a FIFO some reader waits on, and a device is never what "write the capture here" meant. A symbolic
 * link at the target is replaced, not followed.
 */
function refuseNonRegularTarget(file: string, viaFd: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(viaFd);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  if (stats.isFile() || stats.isSymbolicLink()) return;
  throw new FileWriteError(
    file,
    `it is ${describeFileType(stats)}; Ringside writes outputs as regular files (written whole, then renamed into place)`,
    'name a regular file; for a pipe, write JSON Lines to stdout (no -o) instead',
  );
}

/** Writes `data` to `file` whole (mode 0600) or not at all. */
export function writeFileAtomic(file: string, data: string | Uint8Array, options: AtomicFileOptions = {}): void {
  const out = new AtomicFile(file, options);
  try {
    out.write(data);
    out.commit();
  } finally {
    out.abort();
  }
}
