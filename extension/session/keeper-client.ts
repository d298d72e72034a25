// The extension's side of "events that outlive the editor": start a detached `ringside keep`
// process, list the keepers of this user (their state files), re-attach to one after a reload or
// from another window, and stop one cleanly (SIGTERM; the keeper removes its state file).

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  isKeeperAlive,
  keeperLogPath,
  keeperStateDir,
  keeperStateDirs,
  keeperStatePath,
  listKeeperStates,
  prepareKeeperStateDir,
  readKeeperState,
  removeKeeperState,
  type KeeperState,
  type ListedKeeper,
} from '../../native/keeper/state';
import { ensurePrivateDirectory } from '../../native/sys/safe-file';
import type { AllCpusTarget } from '../../native/perf/recorder-options';

export class KeeperError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeeperError';
  }
}

export interface KeeperLaunch {
  /** Path of the built CLI (dist/cli.js). */
  readonly cliPath: string;
  /** Event specs (-e). */
  readonly events: readonly string[];
  readonly target: AllCpusTarget;
  readonly pages?: number;
  /** Seconds of history wanted: the keeper grows its rings until they keep it (--window; ringside.window). */
  readonly windowSec?: number;
  /**
   * How the events sample, as Start Recording resolves them (ringside.samplePeriod, sampleFrequency, callchains): -c,
   * -F and -g, so a kept recording records what a plain one would.
   */
  readonly period?: bigint;
  readonly freq?: number;
  readonly callchain?: boolean;
  readonly cwd?: string;
  /** Node binary to run the CLI with (default: this process's, with ELECTRON_RUN_AS_NODE for VS Code). */
  readonly nodePath?: string;
  /** Extra environment (e.g. XDG_RUNTIME_DIR, which decides where the state file goes). */
  readonly env?: Readonly<Record<string, string>>;
}

export function keeperArguments(launch: KeeperLaunch): string[] {
  const args = [launch.cliPath, 'keep'];
  for (const spec of launch.events) args.push('-e', spec);
  if (launch.pages !== undefined) args.push('--pages', String(launch.pages));
  if (launch.windowSec !== undefined) args.push('--window', String(launch.windowSec));
  if (launch.period !== undefined) args.push('-c', String(launch.period));
  if (launch.freq !== undefined) args.push('-F', String(launch.freq));
  if (launch.callchain) args.push('--call-graph=fp');
  switch (launch.target.kind) {
    case 'pid':
      args.push('-p', String(launch.target.pid));
      break;
    case 'cpus':
      args.push('-a');
      break;
    case 'launch':
      args.push('--', ...launch.target.argv);
      break;
  }
  return args;
}

export class KeeperClient {
  /**
   * `dir`: one state directory to use (tests); by default every state directory of this user
   * (keeperStateDirs: the preferred one and the fallbacks a keeper used when another user had
   * taken its name).
   */
  constructor(private readonly dir?: string) {}

  /** Live keepers of this user; what dead keepers left (killed with SIGKILL) is pruned. */
  list(): ListedKeeper[] {
    return listKeeperStates({ ...(this.dir !== undefined ? { dir: this.dir } : {}), pruneDead: true });
  }

  /**
   * The live keepers an editor started (start() leaves each its log beside its state file; `ringside keep` in a shell
   * writes none): the kept recordings a window reloaded shows again.
   */
  startedFromEditor(): KeeperState[] {
    return this.list().flatMap((listed) => {
      const state = listed.state;
      if (!state || !listed.alive) return [];
      return existsSync(keeperLogPath(state.pid, state.stateDir ?? this.dir ?? keeperStateDir())) ? [state] : [];
    });
  }

  /**
   * Spawns a detached keeper (its own session, no stdio tied to the editor) and waits until it
   * has published its state file. Its stderr is a file beside its state (keeperLogPath), removed
   * with it. It was a pipe the client closed once the state was there; the keeper writes its first
   * line just after publishing, and when the client was quicker that write failed with EPIPE and
   * ended the keeper (seen in the e2e reload scenario, 1 run of 2).
   */
  async start(launch: KeeperLaunch, timeoutMs = 15000): Promise<KeeperState> {
    if (!existsSync(launch.cliPath)) throw new KeeperError(`the Ringside CLI is missing at ${launch.cliPath} (build with npm run build)`);
    // The keeper decides where it publishes (prepareKeeperStateDir, under the environment it runs with); its
    // start log goes to this directory, private and ours like its, and beside its state file once it published.
    const env = { ...process.env, ...launch.env };
    const logDir = this.dir ?? prepareKeeperStateDir(env).dir;
    if (this.dir !== undefined) {
      const made = ensurePrivateDirectory(this.dir);
      if (!made.ok) throw new KeeperError(`${this.dir} is not usable as a state directory: ${made.reason}`);
    }
    const startLog = path.join(logDir, `keeper-starting-${process.pid}-${Date.now()}.log`);
    const logFd = openSync(startLog, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    let child: ChildProcess;
    try {
      child = spawn(launch.nodePath ?? process.execPath, keeperArguments(launch), {
        detached: true,
        stdio: ['ignore', 'ignore', logFd],
        cwd: launch.cwd,
        env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
      });
    } finally {
      closeSync(logFd);
    }
    const messages = (): string => {
      try {
        return readFileSync(startLog, 'utf8').trim() || 'no message';
      } catch {
        // no log yet (the keeper died before writing one): the caller's message says so
        return 'no message';
      }
    };
    let exitCode: number | null | undefined;
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
    });
    const pid = child.pid;
    if (pid === undefined) {
      rmSync(startLog, { force: true });
      throw new KeeperError('could not start the keeper process');
    }
    // Wherever the keeper published: the fallback it may have made does not exist before it starts.
    const candidates = () => (this.dir !== undefined ? [this.dir] : keeperStateDirs(env)).map((dir) => keeperStatePath(pid, dir));
    const deadline = Date.now() + timeoutMs;
    let published: KeeperState | undefined;
    try {
      for (;;) {
        for (const file of candidates()) {
          if (!existsSync(file)) continue;
          try {
            published = readKeeperState(file);
            return published;
          } catch {
            // being renamed into place; retry
          }
        }
        if (exitCode !== undefined) throw new KeeperError(`the keeper exited (${exitCode}) before publishing its state: ${messages()}`);
        if (Date.now() > deadline) {
          child.kill('SIGTERM');
          throw new KeeperError(`the keeper did not publish ${keeperStatePath(pid, this.dir ?? keeperStateDir(env))} within ${timeoutMs} ms: ${messages()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      // Let it outlive us: no pipe or handle keeps the editor tied to it.
      child.unref();
      if (published) renameSync(startLog, keeperLogPath(pid, published.stateDir ?? logDir));
      else rmSync(startLog, { force: true });
    }
  }

  /**
   * SIGTERM, then wait for it to go away. A keeper that ignores SIGTERM past the timeout is killed
   * (its rings die with it, which is what stopping means); `forced` says so.
   */
  async stop(state: Pick<KeeperState, 'pid' | 'procStartTicks' | 'stateDir'>, timeoutMs = 5000): Promise<{ forced: boolean }> {
    const dir = state.stateDir ?? this.dir ?? keeperStateDir();
    if (!isKeeperAlive(state)) {
      removeKeeperState(state.pid, dir);
      return { forced: false };
    }
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(state.pid, name);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw new KeeperError(`cannot signal keeper ${state.pid}: ${(error as Error).message}`);
      }
    };
    const gone = async (deadline: number) => {
      while (isKeeperAlive(state)) {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return true;
    };
    signal('SIGTERM');
    let forced = false;
    if (!(await gone(Date.now() + timeoutMs))) {
      forced = true;
      signal('SIGKILL');
      if (!(await gone(Date.now() + 2000))) throw new KeeperError(`keeper ${state.pid} survived SIGKILL`);
    }
    removeKeeperState(state.pid, dir);
    return { forced };
  }
}
