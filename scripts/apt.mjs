// Debian packages for the scripts: which are missing, and installing them with apt-get so that a busy apt does not
// end the run. When another process (unattended-upgrades, a second `npm start`, a CI job) holds one of apt's locks,
// apt-get refuses at once: `E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)`.
// apt ≥ 1.9 can wait for the dpkg locks (-o DPkg::Lock::Timeout=N), but `apt-get update` ignores that for the
// lists lock (apt 2.6 here), and under -qq it waits without a word. So we run apt-get, and while it is refused for a
// lock we say who holds it, wait and try again, up to a limit.
// Only node built-ins: setup.mjs uses this before node_modules exists.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { ScriptError } from './script-error.mjs';

/** How long to wait for another process's apt run before giving up (a large unattended upgrade takes minutes). */
export const APT_LOCK_TIMEOUT_S = 600;
const RETRY_EVERY_MS = 2000;
const SAY_EVERY_MS = 15_000;

const isRoot = () => process.getuid?.() === 0;

/** Blocks the thread (the scripts that install are synchronous): a sleep between two apt attempts. */
function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Installed means dpkg's status is "installed" (`dpkg -s` also succeeds for removed packages whose config is kept). */
export function isInstalled(pkg) {
  const query = spawnSync('dpkg-query', ['-W', '-f=${db:Status-Status}', pkg], { encoding: 'utf8' });
  return query.status === 0 && query.stdout.trim() === 'installed';
}

export function missingPackages(packages) {
  return packages.filter((pkg) => !isInstalled(pkg));
}

/** apt-get's refusal because another process holds a lock: its `E:` line (which names the holder), else undefined. */
export function lockRefusal(stderr) {
  if (!/Could not get lock|Unable to lock|Unable to acquire the dpkg frontend lock/.test(stderr)) return undefined;
  return (stderr.split('\n').find((line) => /Could not get lock/.test(line)) ?? stderr.split('\n').find((line) => line.startsWith('E:')) ?? stderr)
    .replace(/^E:\s*/, '')
    .trim();
}

/**
 * Runs `apt-get ARGS`, waiting while another process holds apt's lock (saying so every 15 s). Returns apt-get's exit
 * status and stderr (already shown); throws a ScriptError when apt-get cannot run or stays locked for `lockTimeoutS`.
 */
export function aptGet(args, { lockTimeoutS = APT_LOCK_TIMEOUT_S, log = (line) => process.stdout.write(`${line}\n`) } = {}) {
  const started = Date.now();
  let lastSaid = 0;
  for (;;) {
    const result = spawnSync('apt-get', args, {
      stdio: ['ignore', 'inherit', 'pipe'],
      encoding: 'utf8',
      // C messages: the lock refusal is recognised by its English text.
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' },
    });
    if (result.error) {
      throw new ScriptError(
        `apt-get could not run (${result.error.code ?? result.error.message}); is this Debian or Ubuntu? ` +
          `Install the packages with your package manager instead: apt-get ${args.join(' ')}`,
      );
    }
    const refusal = result.status === 0 ? undefined : lockRefusal(result.stderr);
    if (!refusal) {
      process.stderr.write(result.stderr);
      return { status: result.status, stderr: result.stderr };
    }
    const waited = Date.now() - started;
    if (waited >= lockTimeoutS * 1000) {
      throw new ScriptError(
        `apt is still busy after ${Math.round(waited / 1000)} s (${refusal}); ` + `let that process finish (or stop it), then run this again`,
      );
    }
    if (lastSaid === 0 || Date.now() - lastSaid >= SAY_EVERY_MS) {
      log(`ringside: waiting for apt: ${refusal} (${Math.round(waited / 1000)} s so far; giving up after ${lockTimeoutS} s)`);
      lastSaid = Date.now();
    }
    sleepSync(RETRY_EVERY_MS);
  }
}

function aptGetOrFail(args, options) {
  const { status } = aptGet(args, options);
  if (status !== 0) throw new ScriptError(`apt-get ${args.join(' ')} failed (exit ${status}); its messages are above`);
}

/** True when apt has package lists to install from (a fresh container often has none until `apt-get update`). */
function havePackageLists() {
  try {
    return readdirSync('/var/lib/apt/lists').some((name) => /_Packages(\.\w+)?$/.test(name));
  } catch {
    // no lists directory: no package lists
    return false;
  }
}

/**
 * Installs the packages of `packages` that are not installed (none missing: apt is not run at all). Needs root; as
 * another user it throws a ScriptError with the command to run. Returns the packages it installed.
 */
export function installDebianPackages(packages, options = {}) {
  const log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
  const missing = missingPackages(packages);
  if (missing.length === 0) return [];
  if (!isRoot()) {
    throw new ScriptError(`missing Debian packages: ${missing.join(' ')}; install them with: sudo apt-get install -y ${missing.join(' ')}`);
  }
  log(`ringside: installing Debian packages: ${missing.join(' ')}`);
  const install = ['install', '-y', '-qq', '--no-install-recommends', ...missing];
  // The lists already on the machine usually know these packages: no `apt-get update` (and its lock) unless needed.
  if (havePackageLists()) {
    if (aptGet(install, options).status === 0) return missing;
    log('ringside: apt-get install failed with the package lists on this machine; updating them and trying again');
  }
  aptGetOrFail(['update', '-qq'], options);
  aptGetOrFail(install, options);
  return missing;
}
