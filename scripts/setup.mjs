// Makes a fresh clone runnable: npm packages, the Debian packages the tests and the demo need,
// and tracefs. Used by `npm start` and `npm test` (pretest), so both work right after cloning.
// Only node built-ins (and the plain helpers beside it): this runs before node_modules exists.
// Failures it expects (apt or npm failing, apt busy for too long) end it with one `ringside: …` line, no stack trace.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { installDebianPackages, missingPackages } from './apt.mjs';
import { runMain, ScriptError } from './script-error.mjs';
import { probeTracefs, tracefsProblem, TRACEFS_MOUNT_COMMAND, TRACEFS_PRIMARY } from './tracefs.mjs';

const root = new URL('..', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;

// perf is the referee for the decoder and perf.data tests, chromium drives the browser and VS Code
// tests, binutils checks the ELF/DWARF reader, ripgrep + libkrb5-dev let code-server install offline, golang-go's
// go tool pprof reads the pprof output back, gdb referees logpoint values, libcap2-bin's setcap gives a copy of node
// the capability for uprobes in the unprivileged logpoint test.
const debianPackages = [
  'linux-perf',
  'chromium',
  'binutils',
  'gcc',
  'g++',
  'ripgrep',
  'libkrb5-dev',
  'util-linux',
  'golang-go',
  'libc6-dbg',
  'gdb',
  'libcap2-bin',
];

function main() {
  if (!process.argv.includes('--no-apt')) {
    if (isRoot) {
      // Waits (saying for whom) while another process holds apt's lock; runs no apt at all when nothing is missing.
      installDebianPackages(debianPackages);
    } else {
      const missing = missingPackages(debianPackages);
      if (missing.length)
        console.error(`ringside: missing Debian packages: ${missing.join(' ')}\n          install them with: sudo apt-get install -y ${missing.join(' ')}`);
    }
  }

  if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
    console.log('ringside: npm ci');
    const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'], cwd: root });
    if (npm.error)
      throw new ScriptError(npm.error.code === 'ENOENT' ? 'npm is not on PATH (it comes with Node.js)' : `npm could not run (${npm.error.message})`);
    if (npm.status !== 0) throw new ScriptError(`npm ci failed (exit ${npm.status}); its messages are above`);
  }

  // Only tracepoints need tracefs (the demo's default recording does not), so a problem is said, not fatal.
  const tracefs = probeTracefs();
  if (tracefs.state === 'unmounted' && isRoot) {
    const mount = spawnSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS_PRIMARY], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (mount.status !== 0)
      console.error(
        `ringside: tracefs is not mounted and '${TRACEFS_MOUNT_COMMAND}' failed: ${mount.stderr?.trim() || `exit ${mount.status}`}; tracepoints will not work`,
      );
  } else {
    const problem = tracefsProblem(tracefs);
    if (problem) console.error(`ringside: ${problem}`);
  }
}

runMain(main);
