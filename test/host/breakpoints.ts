// Whether this host delivers hardware breakpoint hits, decided by perf (the referee), and what the
// breakpoint tests assert where it does not. Some hypervisors accept perf breakpoint events but
// never pass the debug exceptions to the guest (Firecracker on AMD EPYC hosts does this): there
// `perf stat -e mem:ADDR:w` counts 0 for a variable written N times. On such a host a test that
// counts hits cannot compare anything; what it checks instead is what Ringside must do there — say
// so (the probe in native/perf/breakpoint-delivery.ts) and record nothing — and the full counting
// assertions run wherever perf sees the hits.

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '../../..');

export interface HostBreakpoints {
  /** perf counted every write of a watched variable. */
  readonly fire: boolean;
  readonly perfCounted: number;
  readonly writes: number;
}

/** What Ringside prints (CLI stderr, summary, the timeline's limitations) when breakpoints are silent. */
export const SILENT_BREAKPOINTS =
  /hardware breakpoints do not fire on this machine: the kernel accepted an execute breakpoint on getppid\(\) in Ringside's own process and it counted 0 of \d+ calls/;

let cached: HostBreakpoints | undefined;

/** perf stat of a write watchpoint on kernel_writer's `counter` (written `writes` times), once per test process. */
export function hostBreakpoints(): HostBreakpoints {
  if (cached) return cached;
  const writer = path.join(repoRoot, 'fixtures-bin', 'kernel_writer');
  if (!existsSync(writer)) throw new Error('fixture kernel_writer is not built: run node test/setup/prepare.mjs');
  const nm = spawnSync('nm', [writer], { encoding: 'utf8' });
  const address = /^([0-9a-f]+) [bBdD] counter$/m.exec(nm.stdout)?.[1];
  if (!address) throw new Error(`nm ${writer} lists no counter: ${nm.stderr}`);
  const writes = 50;
  const stat = spawnSync('perf', ['stat', '-x', ',', '-e', `mem:0x${address}:w:u`, '--', writer, String(writes)], { encoding: 'utf8', timeout: 30_000 });
  const line = stat.stderr.split('\n').find((row) => row.includes(`mem:0x`));
  const counted = line ? Number(line.split(',')[0]) : Number.NaN;
  if (stat.status !== 0 || !Number.isInteger(counted)) throw new Error(`perf stat of a write watchpoint failed (${stat.status}): ${stat.stderr}`);
  cached = { fire: counted === writes, perfCounted: counted, writes };
  return cached;
}

/** The verdict of the other kind of host: what a test injects to run the path this host does not take. */
export function otherHostVerdict(): 'fires' | 'silent' {
  return hostBreakpoints().fire ? 'silent' : 'fires';
}

/**
 * On a host whose breakpoints are silent: Ringside said so and recorded no hit (perf counts none
 * either). `said` is the CLI's stderr or the limitations a recording reports.
 */
export function assertSilentBreakpoints(said: string | readonly string[], hits: number): void {
  const host = hostBreakpoints();
  assert.equal(host.perfCounted, 0, `perf counted ${host.perfCounted} of ${host.writes} writes: this host delivers some hits`);
  const text = typeof said === 'string' ? said : said.join('\n');
  assert.match(text, SILENT_BREAKPOINTS, 'Ringside says that breakpoints do not fire here');
  assert.equal(hits, 0, 'no hit was recorded where the hardware delivers none');
}
