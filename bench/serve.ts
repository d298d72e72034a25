// A measuring process the bench starts once per case and asks one question per round over a pipe:
// a line in, a line of JSON out. Spawning one per round would fork the bench right before the
// decoder's timed passes, and a fork write-protects every page of the bench: the decoder's first
// writes after it fault (measured here: 1 MiB decodes 40% slower right after a spawnSync).

import { spawn, type ChildProcess } from 'node:child_process';
import { BenchUnavailableError } from './stats';

export class ServeProcess {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  private buffered = '';
  private stderr = '';
  private exited: string | null = null;

  /** `name`: what the process is, for errors ("the C walker"). `inheritedFds`: descriptors of this process the child gets as fd 3, 4, … */
  constructor(
    private readonly name: string,
    command: string,
    args: readonly string[],
    inheritedFds: readonly number[] = [],
  ) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe', ...inheritedFds] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffered += chunk;
      for (let at = this.buffered.indexOf('\n'); at >= 0; at = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, at);
        this.buffered = this.buffered.slice(at + 1);
        if (this.waiting) {
          const resolve = this.waiting;
          this.waiting = null;
          resolve(line);
        } else {
          this.lines.push(line);
        }
      }
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.child.on('exit', (code, signal) => {
      this.exited = `${name} exited (${signal ?? code}): ${this.stderr}`;
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = null;
        resolve('');
      }
    });
  }

  /** Sends `question` (one line) and parses the line that answers it. */
  async ask<T>(question: string): Promise<T> {
    this.child.stdin!.write(`${question}\n`);
    const line =
      this.lines.shift() ??
      (await new Promise<string>((resolve) => {
        this.waiting = resolve;
      }));
    if (!line) throw new BenchUnavailableError(this.exited ?? `${this.name} gave no answer`);
    return JSON.parse(line) as T;
  }

  /** Ends its input and waits for it to exit. */
  async close(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.end();
    await gone;
  }
}
