// Running Ringside and perf as an ordinary user (uid 65534, no capabilities), the way a desktop
// VS Code runs. A checkout may live in a directory that uid cannot read (/root, a private home), so
// what runs is copied into a fresh directory under /tmp that it can read and write.

import { execFileSync, spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const NOBODY_UID = 65534;
export const repoRoot = path.resolve(__dirname, '../../..');

/** Changing every uid from 0 to 65534 clears the capability sets (capabilities(7)): an ordinary user. */
export const SETPRIV = ['setpriv', `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups'];

export function kernelParanoid(): number {
  return Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
}

export interface NobodyDir {
  readonly dir: string;
  readonly cli: string;
  fixture(name: string): string;
  /** Runs argv as uid 65534 in `dir`, with HOME there (perf keeps its build-id cache under HOME). */
  run(argv: readonly string[], options?: { timeoutMs?: number; env?: Record<string, string> }): SpawnSyncReturns<string>;
  ringside(args: readonly string[], options?: { timeoutMs?: number }): SpawnSyncReturns<string>;
  /** Starts argv as uid 65534 in `dir` without waiting for it (its own process group). */
  start(argv: readonly string[], env?: Record<string, string>): ChildProcess;
  /** Copies the compiled modules (out/) in too, for scripts that use the core without the bundle. */
  withCompiledModules(): void;
  dispose(): void;
}

/** Copies dist/, koffi and the fixtures into a directory uid 65534 can read, write and execute. */
export function prepareNobodyDir(): NobodyDir {
  if (process.getuid?.() !== 0) throw new Error('these tests switch to uid 65534 with setpriv, which needs root (CI runs as root)');
  execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-nobody-'));
  cpSync(path.join(repoRoot, 'dist'), path.join(dir, 'dist'), { recursive: true });
  cpSync(path.join(repoRoot, 'node_modules/koffi'), path.join(dir, 'node_modules/koffi'), { recursive: true, dereference: true });
  cpSync(path.join(repoRoot, 'fixtures-bin'), path.join(dir, 'fixtures-bin'), { recursive: true });
  cpSync(path.join(repoRoot, 'test/fixtures'), path.join(dir, 'fixtures-src'), { recursive: true });
  execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, dir]);
  chmodSync(dir, 0o755);
  const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C' };
  const run = (
    argv: readonly string[],
    options: {
      timeoutMs?: number;
      env?: Record<string, string>;
    } = {},
  ) =>
    spawnSync(SETPRIV[0], [...SETPRIV.slice(1), ...argv], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      timeout: options.timeoutMs ?? 120_000,
      env: { ...baseEnv, ...options.env },
    });
  return {
    dir,
    cli: path.join(dir, 'dist/cli.js'),
    fixture: (name) => path.join(dir, 'fixtures-bin', name),
    run,
    ringside: (args, options) => run([process.execPath, path.join(dir, 'dist/cli.js'), ...args], options),
    start: (argv, env = {}) =>
      spawn(SETPRIV[0], [...SETPRIV.slice(1), ...argv], { cwd: dir, env: { ...baseEnv, ...env }, stdio: ['ignore', 'ignore', 'pipe'], detached: true }),
    withCompiledModules: () => {
      cpSync(path.join(repoRoot, 'out'), path.join(dir, 'out'), { recursive: true });
      execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, path.join(dir, 'out')]);
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

interface JsonRecord {
  type: string;
  event?: string;
  ip?: string;
  sym?: string;
  addr?: string;
  tid?: number;
  comm?: string;
  filename?: string;
  len?: number;
}

export function parseJsonLines(text: string): JsonRecord[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as JsonRecord);
}

/** Lines of `perf script -F FIELDS` on a file, run as uid 65534 like the recording. */
export function perfScriptAsNobody(nobody: NobodyDir, data: string, fields: string): string[] {
  const script = nobody.run(['perf', 'script', '-i', data, '-F', fields]);
  if (script.status !== 0) throw new Error(`perf script as uid ${NOBODY_UID} failed: ${script.stderr}`);
  return script.stdout.split('\n').filter((line) => line.trim() !== '');
}

/** `perf record` as uid 65534 (its build-id cache, where perf keeps the vDSO it names frames with, goes under HOME). */
export function perfRecordAsNobody(nobody: NobodyDir, data: string, args: readonly string[]): SpawnSyncReturns<string> {
  const result = nobody.run(['perf', 'record', '-q', '-o', data, ...args]);
  if (result.status !== 0) throw new Error(`perf record ${args.join(' ')} as uid ${NOBODY_UID} failed: ${result.stderr}`);
  return result;
}
