// Prerequisites of the benchmark baselines (gcc, perf, Chromium, perf_event_open as root) and the
// bench-time compilation of the C sources in bench/. A missing baseline is an error, never a skip.

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';
import { BenchUnavailableError } from './stats';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function which(tool: string): string | null {
  const result = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** Checks every baseline the bench compares against; throws naming each one that cannot run. `chromium`: false when no browser case runs. */
export function checkPrerequisites(chromium = true): { gcc: string; perf: string } {
  const missing: string[] = [];
  const gcc = which('gcc');
  if (!gcc) missing.push('gcc is not installed (needed to compile the C walker and the workload): apt-get install gcc');
  const perf = which('perf');
  if (!perf) missing.push('perf is not installed (the perf script baseline): apt-get install linux-perf');
  else {
    const version = spawnSync(perf, ['--version'], { encoding: 'utf8' });
    if (version.status !== 0) missing.push(`perf does not run: ${(version.stderr || version.stdout).trim()}`);
  }
  if (!which('taskset')) missing.push('taskset is not installed (pins the workload to the CPU the bench records): apt-get install util-linux');
  try {
    if (chromium) accessSync(CHROMIUM, constants.X_OK);
  } catch {
    // missing or not executable: the bench says which package provides it
    missing.push(`Chromium is not at ${CHROMIUM} (the render baseline): apt-get install chromium`);
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    missing.push('the bench must run as root: 64 MiB rings exceed the default perf_event_mlock_kb');
  }
  if (!existsSync('/proc/sys/kernel/perf_event_paranoid')) missing.push('this kernel has no perf_event_open (no /proc/sys/kernel/perf_event_paranoid)');
  if (missing.length) throw new BenchUnavailableError(missing.join('\n'));
  return { gcc: gcc!, perf: perf! };
}

/** Compiles one C source of bench/ into `outDir`; returns the binary's path. */
export function compileC(gcc: string, source: string, outDir: string, name: string, flags: readonly string[]): string {
  const out = join(outDir, name);
  const result = spawnSync(gcc, [...flags, '-o', out, source], { encoding: 'utf8' });
  if (result.status !== 0) throw new BenchUnavailableError(`gcc failed on ${source}:\n${result.stderr}`);
  return out;
}
