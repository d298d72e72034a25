// Whether the pool's next decode goes to its workers or stays on this thread. Workers pay only when
// cores are free: on the 2-vCPU bench VM with both cores busy the pool took 2–4× one thread's time
// (every slice waits for the worker the scheduler left out), where on a quiet machine it takes
// 0.52–0.73×. So two checks, both cheap:
//   - cores free now: /proc/stat's procs_running (runnable tasks this instant, this thread included)
//     against the online CPUs, read when the decode starts;
//   - never slower than one thread: the time per byte of both ways, as decodes of this pool took it,
//     and one thread is chosen while it is the faster. The parallel way is tried again every
//     REPROBE_EVERY eligible decodes, so a pool that lost under load picks its workers up again.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** 'cores-free' (the default): workers only when cores are free and they have not been slower. 'always': whenever the bytes are enough (tests of the parallel path). */
export type ParallelWhen = 'cores-free' | 'always';

export type DecodeWay = 'parallel' | 'one-thread';

/** Eligible decodes on one thread between two tries of the workers, once they have been slower. */
export const REPROBE_EVERY = 8;

/** Weight of the newest decode in a way's time per byte (an exponential moving average). */
const NEWEST_WEIGHT = 0.3;

/** Runnable tasks on the machine now, this thread included, or null where /proc/stat cannot be read. */
export function procsRunningNow(): number | null {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'latin1');
  } catch (error) {
    void error; // no /proc (a sandbox): the choice then rests on measured times alone
    return null;
  }
  const match = /^procs_running (\d+)$/m.exec(stat);
  return match ? Number(match[1]) : null;
}

/**
 * Whether a CPU besides this thread's is free now: `running` runnable tasks (this thread among them) on `cpus` CPUs.
 * Unknown (no /proc/stat) counts as free.
 */
export function secondCoreFree(running: number | null = procsRunningNow(), cpus: number = availableParallelism()): boolean {
  return cpus >= 2 && (running === null || running - 1 <= cpus - 2);
}

export interface ParallelChoiceProbes {
  /** Runnable tasks now (default: procsRunningNow). */
  readonly procsRunning?: () => number | null;
  /** Online CPUs (default: availableParallelism()). */
  readonly cpus?: number;
}

export class ParallelChoice {
  private readonly nsPerByte: Record<DecodeWay, number | null> = { parallel: null, 'one-thread': null };
  private sinceProbe = 0;
  private readonly procsRunning: () => number | null;
  private readonly cpus: number;

  constructor(
    readonly when: ParallelWhen,
    probes: ParallelChoiceProbes = {},
  ) {
    this.procsRunning = probes.procsRunning ?? procsRunningNow;
    this.cpus = probes.cpus ?? availableParallelism();
  }

  /** The way for a decode the pool could give its workers. */
  choose(): DecodeWay {
    if (this.when === 'always') return 'parallel';
    // This thread is one of the running tasks; a worker needs another CPU besides it.
    const running = this.procsRunning();
    if (running !== null && !secondCoreFree(running, this.cpus)) return 'one-thread';
    const parallel = this.nsPerByte.parallel;
    const one = this.nsPerByte['one-thread'];
    // Each way is timed once before they are compared: the workers first, then one thread.
    if (parallel === null) return 'parallel';
    if (one === null) return 'one-thread';
    if (parallel <= one) return 'parallel';
    this.sinceProbe++;
    if (this.sinceProbe < REPROBE_EVERY) return 'one-thread';
    this.sinceProbe = 0;
    return 'parallel';
  }

  /** What a decode of `bytes` ring bytes took the way it went. */
  record(way: DecodeWay, bytes: number, ns: number): void {
    if (bytes <= 0 || !(ns > 0)) return;
    const sample = ns / bytes;
    const before = this.nsPerByte[way];
    this.nsPerByte[way] = before === null ? sample : before + NEWEST_WEIGHT * (sample - before);
  }

  /** Each way's time per byte so far (for the bench and tests). */
  get measured(): Readonly<Record<DecodeWay, number | null>> {
    return this.nsPerByte;
  }
}
