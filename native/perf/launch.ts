// Launching the command a recording follows: spawned without address-space randomisation behind a
// wrapper shell that waits for a go byte, so the recording's events are open (enable_on_exec)
// before the command's first instruction; how it ended; ending it and everything it started.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import * as libc from '../sys/libc';
import { processGroupMembers } from './procfs';
import type { RecorderTarget } from './recorder-options';

/** How a launched command ended: its exit code, or the signal that killed it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What a shell reports for a command that ended this way: its exit code, or 128 + the signal number. */
export function shellStatus(exit: ChildExit): number {
  if (exit.signal) return 128 + (osConstants.signals[exit.signal] ?? 0);
  return exit.code ?? 0;
}

export function describeExit(exit: ChildExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exited with status ${exit.code}`;
}

/** The launch wrapper: wait for the go byte on fd 3, drop fd 3, become the command (same pid). */
const LAUNCH_WRAPPER = 'read _ <&3 || exit 125; exec 3<&-; exec "$@"';
const WRAPPER_MARKER = 'read _ <&3';
/**
 * The guardian: a shell outside the command's group (so perf, which follows the command's children,
 * never records it), reading a pipe only this process holds open. When this process dies, by any
 * signal, SIGKILL included, the read returns and the guardian ends the command's group as end() does;
 * while this process lives nothing is ever written, and it disarms the guardian by killing it.
 */
const GUARDIAN = 'read _; kill -TERM "-$1" 2>/dev/null || exit 0; sleep 2; kill -KILL "-$1" 2>/dev/null; exit 0';
/** How long end() waits for the group to go after SIGKILL (an orphan nobody reaps stays a zombie, which is not counted). */
const KILL_WAIT_MS = 2000;
/** How often end() looks for the group's processes in /proc. */
const GROUP_POLL_MS = 20;

async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
  }
  return true;
}

/**
 * A command started by a recording: held at the wrapper's `read` until released. It runs in a
 * session and process group of its own (its pid is the group id), so ending it reaches every
 * process it forked too, and a terminal's Ctrl-C reaches Ringside, which ends the group.
 */
export class LaunchedCommand {
  private released = false;
  /** The exit code once the command exited (null when a signal ended it); undefined while it runs. */
  private exitCode: number | null | undefined;
  /** Resolves with how the command ended. */
  readonly exitStatus: Promise<ChildExit>;
  /** Resolves with the command's exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly pid: number,
    private guardian: ChildProcess | null,
  ) {
    this.exitStatus = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        // Nothing left to guard once the command and all it forked are gone.
        if (this.gone()) this.disarm();
        resolve({ code, signal });
      });
    });
    this.exited = this.exitStatus.then((exit) => exit.code);
  }

  /** Spawns the wrapper with `target.argv`; it waits for release() before it becomes the command. */
  static async spawn(target: Extract<RecorderTarget, { kind: 'launch' }>): Promise<LaunchedCommand> {
    if (target.argv.length === 0) throw new Error('nothing to launch: empty command');
    // Like GDB: no address-space randomisation for the inferior, so symbol addresses are known in
    // advance. personality() is per task and inherited across fork and exec: set it around spawn only.
    const previous = libc.personality(0xffffffff);
    libc.personality(previous | libc.ADDR_NO_RANDOMIZE);
    let child: ChildProcess;
    try {
      const stdio = target.stdio ?? 'inherit';
      const [stdin, stdout, stderr] = typeof stdio === 'string' ? [stdio, stdio, stdio] : stdio;
      child = spawn('/bin/sh', ['-c', LAUNCH_WRAPPER, 'ringside-launch', ...target.argv], {
        cwd: target.cwd,
        env: target.env ? { ...target.env } : process.env,
        stdio: [stdin, stdout, stderr, 'pipe'],
        // setsid(): the wrapper, then the command, leads a new process group that its children join.
        detached: true,
      });
    } finally {
      libc.personality(previous);
    }
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (error) => reject(new Error(`cannot launch ${target.argv[0]}: ${error.message}`)));
      });
    } catch (error) {
      destroyGoPipe(child);
      throw error;
    }
    return new LaunchedCommand(child, child.pid!, target.outlive ? null : startGuardian(child.pid!));
  }

  /** Lets the command outlive this process from now on (`--leave-running`): the guardian stands down. */
  leaveRunning(): void {
    this.disarm();
  }

  private disarm(): void {
    const guardian = this.guardian;
    if (!guardian) return;
    this.guardian = null;
    // Killed before its pipe closes: a closed pipe is what tells it to end the group.
    if (guardian.exitCode === null && guardian.signalCode === null) guardian.kill('SIGKILL');
    guardian.stdin?.destroy();
  }

  /** True while the command (or the wrapper before it) has not exited. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Lets the wrapper exec the command. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const go = this.child.stdio[3];
    if (go && 'end' in go) {
      (go as NodeJS.WritableStream).end('\n');
    }
  }

  /** Waits until the wrapper has exec'd COMMAND (its cmdline changes) or exited, so maps are those of COMMAND. */
  async waitForExec(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && this.exitCode === undefined) {
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${this.pid}/cmdline`, 'latin1');
      } catch {
        // the process is gone (exited before exec): nothing left to wait for, and exitCode says why
        return;
      }
      if (cmdline.length > 0 && !cmdline.includes(WRAPPER_MARKER)) {
        // exec has replaced the image; the ELF loader maps the executable in the same syscall, and
        // the cmdline is only readable from the new stack once that is done.
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** True once the command has exited and nothing it forked is left in its group. */
  private gone(): boolean {
    return !this.running && this.groupMembers().length === 0;
  }

  /** Live processes of the command's group: the command and whatever it forked that did not leave the group. */
  groupMembers(): number[] {
    return processGroupMembers(this.pid);
  }

  /**
   * Ends the command and every process of its group: SIGTERM to the group, then SIGKILL once
   * `graceMs` has passed; resolves with how the command ended once the group is gone. Processes the
   * command left behind when it exited by itself are ended the same way.
   */
  async end(graceMs = 2000): Promise<ChildExit> {
    if (this.gone()) {
      this.disarm();
      return this.exitStatus;
    }
    this.signalGroup('SIGTERM');
    if (!(await waitUntil(() => this.gone(), graceMs))) {
      this.signalGroup('SIGKILL');
      await waitUntil(() => this.gone(), KILL_WAIT_MS);
    }
    if (this.gone()) this.disarm();
    return this.exitStatus;
  }

  /**
   * Kills a command that was never released (only the wrapper runs then), and closes the go pipe. A
   * released command that still runs stays guarded: it ends when this process does, unless left running.
   */
  dispose(): void {
    if (!this.released && this.running) this.signalGroup('SIGKILL');
    if (this.gone()) this.disarm();
    destroyGoPipe(this.child);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      // ESRCH: nothing is left in the group.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** Starts the guardian of group `pid`; it holds neither this process's event loop nor any of its stdio. */
function startGuardian(pid: number): ChildProcess {
  const guardian = spawn('/bin/sh', ['-c', GUARDIAN, 'ringside-guardian', String(pid)], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  guardian.on('error', () => {
    /* no shell to guard with: the command then ends only by end() */
  });
  guardian.unref();
  (guardian.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return guardian;
}

function destroyGoPipe(child: ChildProcess): void {
  const go = child.stdio[3];
  if (go && 'destroy' in go) (go as { destroy(): void }).destroy();
}
