// `ringside capture` and the trigger loop around a Recorder: snapshot when the launched command
// exits (before its events are closed), on SIGUSR2 (repeatable), after --duration, on Ctrl-C, or
// when an attached pid exits, so a target that dies mid-capture loses nothing.

import { readFileSync, existsSync } from 'node:fs';
import type { CaptureOptions } from './args';
import { UsageError } from './args';
import type { ResolvedEvent, DecodedSnapshot } from '../decode/types';
import { resolveEventSpec } from '../specs/resolve';
import { Recorder, type RecorderTarget } from '../perf/recorder';
import { decodeSnapshot } from '../decode/columns';
import { lazyTargetSymbols, resolveExecutable } from '../symbols/target';
import { SnapshotWriter, summarizeSnapshot } from './output';

export interface PreparedCapture {
  readonly events: ResolvedEvent[];
  readonly executable?: string;
  readonly expectedLoadBase?: bigint;
}

export function prepareEvents(options: CaptureOptions): PreparedCapture {
  const target = options.target;
  if (target.kind === 'pid' && !existsSync(`/proc/${target.pid}`)) throw new UsageError(`-p ${target.pid}: no such process`);
  const executable = target.kind === 'launch' ? resolveExecutable(target.argv[0]) : undefined;
  const lazy = target.kind === 'launch' ? lazyTargetSymbols({ executable }) : target.kind === 'pid' ? lazyTargetSymbols({ pid: target.pid }) : undefined;
  const specs = options.events.length > 0 ? options.events : [target.kind === 'cpus' ? 'cpu-clock' : 'task-clock'];
  const events = specs.map((spec) => resolveEventSpec(spec, { symbols: lazy?.symbols, period: options.period, freq: options.freq, callchain: options.callchain }));
  // Set only when a spec placed symbols at the predicted base: then the launch must verify it.
  const expectedLoadBase = target.kind === 'launch' ? lazy?.loadBase() : undefined;
  return { events, executable, expectedLoadBase };
}

export async function runCapture(options: CaptureOptions): Promise<number> {
  const prepared = prepareEvents(options);
  const recorder = await Recorder.open({
    events: prepared.events,
    target: recorderTarget(options, prepared),
    pages: options.pages,
    gapFree: options.gapFree,
    sideband: options.sideband,
    warmCopyBuffers: options.warmCopy,
  });
  const writer = new SnapshotWriter(options);
  let snapshots = 0;
  try {
    const take = async (reason: string) => {
      const raw = recorder.snapshot();
      const decoded: DecodedSnapshot = decodeSnapshot(raw);
      snapshots++;
      await writer.write(decoded, raw.processes, raw.limitations);
      if (!options.quiet) process.stderr.write(summarizeSnapshot(snapshots, reason, raw, decoded));
    };
    await waitForTriggers(options, recorder, take, prepared);
  } finally {
    recorder.dispose();
    await writer.close();
  }
  return 0;
}

/** JSON Lines on stdout must stay parseable: a launched command's stdout then goes to our stderr. */
export function recorderTarget(options: CaptureOptions, prepared: PreparedCapture): RecorderTarget {
  const target = options.target;
  if (target.kind === 'pid') return { kind: 'pid', pid: target.pid };
  if (target.kind === 'cpus') return { kind: 'cpus' };
  const stdoutIsData = options.command === 'capture' && options.format === 'jsonl' && (!options.output || options.output === '-');
  return {
    kind: 'launch',
    argv: [prepared.executable ?? target.argv[0], ...target.argv.slice(1)],
    stdio: options.command === 'keep' ? 'ignore' : stdoutIsData ? ['inherit', 2, 'inherit'] : 'inherit',
  };
}

type Trigger = { kind: 'done'; reason: string } | { kind: 'snapshot'; reason: string };

async function waitForTriggers(
  options: CaptureOptions,
  recorder: Recorder,
  take: (reason: string) => Promise<void>,
  prepared: PreparedCapture,
): Promise<void> {
  const queue: Trigger[] = [];
  let wake: (() => void) | undefined;
  const push = (trigger: Trigger) => { queue.push(trigger); wake?.(); };
  const onUsr2 = () => push({ kind: 'snapshot', reason: 'SIGUSR2' });
  const onInt = () => push({ kind: 'done', reason: 'interrupted' });
  process.on('SIGUSR2', onUsr2);
  const target = options.target;
  // A launched command gets Ctrl-C from the terminal itself; we snapshot when it exits.
  if (target.kind !== 'launch') {
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onInt);
  } else {
    process.on('SIGINT', () => undefined);
  }
  const timers: NodeJS.Timeout[] = [];
  if (options.durationSec !== undefined) timers.push(setTimeout(() => push({ kind: 'done', reason: `${options.durationSec}s elapsed` }), options.durationSec * 1000));
  if (target.kind === 'launch') {
    void recorder.exited?.then((code) => push({ kind: 'done', reason: `command exited (${code ?? 'signal'})` }));
    // Symbol addresses were computed before exec from the predicted load base: if the kernel put the
    // binary elsewhere the breakpoints watch the wrong bytes, so say it loudly and stop.
    // A non-PIE executable (load bias 0) cannot move; only a PIE's base depends on ASLR being off.
    if (prepared.expectedLoadBase !== undefined && prepared.expectedLoadBase !== 0n && prepared.executable) {
      try {
        recorder.verifyLoadBase(prepared.executable, prepared.expectedLoadBase);
      } catch (error) {
        // A command that already exited has no maps left to check; anything else is a real mismatch.
        const maps = `/proc/${recorder.childPid}/maps`;
        if (existsSync(maps) && readFileSync(maps, 'utf8').length > 0) throw error;
      }
    }
  } else if (target.kind === 'pid') {
    // Poll rather than wait on a pidfd: the rings stay readable after the target exits, so a late
    // detection only delays the snapshot, it never loses records.
    const pid = target.pid;
    timers.push(setInterval(() => { if (!existsSync(`/proc/${pid}`)) push({ kind: 'done', reason: `pid ${pid} exited` }); }, 200));
  }
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((resolve) => { wake = resolve; });
      const trigger = queue.shift()!;
      await take(trigger.reason);
      if (trigger.kind === 'done') return;
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
    process.off('SIGUSR2', onUsr2);
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onInt);
  }
}
