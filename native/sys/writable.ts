// Whether this process can write an output file or directory, checked before a recording starts: a
// capture that runs for minutes and then cannot write its result has lost it. The checks use the
// real uid (access(2)), the one the kernel checks when the file is created.

import { accessSync, constants, lstatSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { describeUid } from './access';
import { describeFileType } from './safe-file';

/** An output path this process cannot write; the message names the path, who owns it, and what to do. */
export class OutputPathError extends Error {
  readonly code = 'EOUTPUT';
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'OutputPathError';
  }
}

function statOrNull(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    // no such file, or a parent we cannot search: null is the answer the caller checks
    return null;
  }
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    // no such file, or a parent we cannot search: null is the answer the caller checks
    return null;
  }
}

function canWrite(file: string, mode: number): boolean {
  try {
    accessSync(file, mode);
    return true;
  } catch {
    // access refused: that is the answer
    return false;
  }
}

/** `owner uid 0 (root), mode 0755` */
function ownership(stats: Stats): string {
  return `owner ${describeUid(stats.uid)}, mode 0${(stats.mode & 0o7777).toString(8)}`;
}

function me(): string {
  return typeof process.getuid === 'function' ? describeUid(process.getuid()) : 'this user';
}

/** Whether an output path is a character device (/dev/null, a tty): written in place, as JSON Lines. */
export function isCharacterDevice(file: string): boolean {
  try {
    return statSync(file).isCharacterDevice();
  } catch {
    return false; // does not exist (yet): a file to create
  }
}

/** Throws an OutputPathError unless `file` can be created or overwritten by this process. */
export function checkWritableFile(file: string, what = 'output file'): void {
  const absolute = path.resolve(file);
  const existing = statOrNull(absolute);
  if (existing?.isDirectory()) {
    throw new OutputPathError(`${what} ${file} is a directory`, `name a file inside it, e.g. ${path.join(file, 'ringside' + path.extname(file))}`);
  }
  // A FIFO, block device or socket is refused before anything runs: outputs are whole regular files
  // renamed into place (native/sys/safe-file), and opening a FIFO nobody reads would block for good.
  // A character device (/dev/null, a tty) is written in place (native/cli/output).
  const entry = lstatOrNull(absolute);
  if (entry && !entry.isFile() && !entry.isSymbolicLink() && !entry.isCharacterDevice()) {
    throw new OutputPathError(
      `${what} ${file} is ${describeFileType(entry)}; Ringside writes a regular file there (written whole, then renamed into place)`,
      'name a regular file; to stream JSON Lines into a pipe, leave out -o (stdout)',
    );
  }
  if (existing) {
    if (!canWrite(absolute, constants.W_OK)) {
      throw new OutputPathError(`${what} ${file} exists and ${me()} may not overwrite it (${ownership(existing)})`, 'remove it, or write to another file');
    }
    return;
  }
  checkCreatableIn(path.dirname(absolute), `${what} ${file}`, false);
}

/** Throws an OutputPathError unless `dir` exists as a writable directory or can be created (mkdir -p) by this process. */
export function checkWritableDirectory(dir: string, what = 'output directory'): void {
  const absolute = path.resolve(dir);
  const existing = statOrNull(absolute);
  if (existing && !existing.isDirectory()) throw new OutputPathError(`${what} ${dir} is not a directory`, 'name a directory');
  if (existing) {
    if (!canWrite(absolute, constants.W_OK | constants.X_OK)) {
      throw new OutputPathError(`${me()} may not create files in ${what} ${dir} (${ownership(existing)})`, 'use a directory you own, e.g. under $HOME');
    }
    return;
  }
  checkCreatableIn(path.dirname(absolute), `${what} ${dir}`, true);
}

/** `subject` would be created in `parent`, or with `createParents` (mkdir -p) in its nearest existing ancestor. */
function checkCreatableIn(parent: string, subject: string, createParents: boolean): void {
  let ancestor = parent;
  while (!statOrNull(ancestor) && path.dirname(ancestor) !== ancestor) ancestor = path.dirname(ancestor);
  const stats = statOrNull(ancestor);
  if (!stats?.isDirectory()) throw new OutputPathError(`cannot create ${subject}: ${ancestor} is not a directory`, 'write to a directory');
  if (ancestor !== parent && !createParents) {
    throw new OutputPathError(`cannot create ${subject}: directory ${parent} does not exist`, `create it (mkdir -p ${parent}) or write elsewhere`);
  }
  if (!canWrite(ancestor, constants.W_OK | constants.X_OK)) {
    throw new OutputPathError(
      `cannot create ${subject}: ${me()} may not write in ${ancestor} (${ownership(stats)})`,
      'write to a directory you own, e.g. under $HOME',
    );
  }
}
