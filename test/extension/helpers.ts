// Shared by the extension's integration tests: fixture paths, leak probes on /proc/self, waiting.

import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';

/** The checkout: three levels above this compiled file (out/test/extension), or the cwd when compiled elsewhere. */
export const repoRoot =
  [path.resolve(__dirname, '../../..'), process.cwd()].find((dir) => existsSync(path.join(dir, 'test/setup/prepare.mjs'))) ?? process.cwd();
export const fixturesBin = path.join(repoRoot, 'fixtures-bin');

export function fixture(name: string): string {
  const file = path.join(fixturesBin, name);
  if (!existsSync(file)) throw new Error(`${file} missing: run \`node test/setup/prepare.mjs\``);
  return file;
}

/** Open perf fds of this process. */
export function ownPerfFds(): number[] {
  const fds: number[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:[perf_event]') fds.push(Number(fd));
    } catch {
      // the fd used by readdir itself is gone by now
    }
  }
  return fds;
}

/** perf ring mappings of this process. */
export function ownPerfMappings(): number {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes('anon_inode:[perf_event]')).length;
}

export function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Children of a process (from /proc/PID/task/TID/children). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) children.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // exited
  }
  return children;
}

/**
 * Serves `api` as the `vscode` module until the returned function is called. The extension's modules loaded
 * meanwhile are then dropped from the require cache, so a later test that stands in its own `vscode` loads them afresh.
 */
export function standInVscode(api: object): () => void {
  const resolver = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = resolver._resolveFilename;
  const stubId = path.join(repoRoot, '__vscode_stub__.js');
  const extensionDir = path.join(repoRoot, 'out', 'extension') + path.sep;
  const loadedBefore = new Set(Object.keys(require.cache));
  resolver._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? stubId : original.call(this, request, ...rest);
  };
  require.cache[stubId] = { id: stubId, filename: stubId, loaded: true, exports: api } as unknown as NodeJS.Module;
  return () => {
    resolver._resolveFilename = original;
    delete require.cache[stubId];
    for (const id of Object.keys(require.cache)) if (id.startsWith(extensionDir) && !loadedBefore.has(id)) delete require.cache[id];
  };
}
