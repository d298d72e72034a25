// The program a recording is about: the executable a command line will run, where a running
// process has it loaded, and its symbols placed at that address, opened only when an event spec
// names a symbol or a source line (most recordings never do). The CLI and the extension both use it.

import { accessSync, constants as fsConstants, readlinkSync, statSync } from 'node:fs';
import path from 'node:path';
import { mappedBase, readProcMaps } from '../sys/procmaps';
import { openTargetSymbols, predictedLoadBase, type TargetSymbols } from './resolve';

/** The target cannot be found or placed: not executable, not mapped. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

/** Finds `command` the way execvp would (relative paths against `cwd`), so symbols come from the binary that will really run. */
export function resolveExecutable(command: string, cwd: string = process.cwd()): string {
  const candidates = command.includes('/')
    ? [path.resolve(cwd, command)]
    : (process.env.PATH ?? '/usr/bin:/bin').split(':').map((dir) => path.join(dir || '.', command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, fsConstants.X_OK);
      if (statSync(candidate).isFile()) return path.resolve(candidate);
    } catch {
      // not here; keep looking along PATH
    }
  }
  throw new TargetError(`${command}: command not found or not executable`);
}

/** Where `exe` is loaded in a running process: the start of its mapping at file offset 0. */
export function runningLoadBase(pid: number, exe: string): bigint {
  const base = mappedBase(readProcMaps(pid), exe);
  if (base === undefined) throw new TargetError(`pid ${pid}: ${exe} is not mapped; cannot place its symbols`);
  return base;
}

export interface LazyTarget {
  readonly symbols: TargetSymbols;
  /** The load base the symbols were placed at, once a spec needed them (undefined before). */
  loadBase(): bigint | undefined;
}

/**
 * The target's symbols, opened on first use: a running process (`pid`) at the base it is loaded
 * at, or a program about to be launched (`executable`) at the base the kernel gives it with
 * address-space randomisation off. Undefined when there is no single program (whole system).
 */
export function lazyTargetSymbols(context: { readonly pid?: number; readonly executable?: string }): LazyTarget | undefined {
  if (context.executable === undefined && context.pid === undefined) return undefined;
  let opened: TargetSymbols | undefined;
  let base: bigint | undefined;
  const get = (): TargetSymbols => {
    if (!opened) {
      const exe = context.executable ?? readlinkSync(`/proc/${context.pid}/exe`);
      base = context.pid !== undefined ? runningLoadBase(context.pid, exe) : predictedLoadBase(exe);
      opened = openTargetSymbols(exe, base);
    }
    return opened;
  };
  return {
    symbols: {
      resolveSymbol: (name) => get().resolveSymbol(name),
      resolveLine: (file, line) => get().resolveLine(file, line),
      get path() {
        return get().path;
      },
      fileOffset: (address) => get().fileOffset(address),
    },
    loadBase: () => base,
  };
}
