// code-server (VS Code for the web) as the real VS Code that `npm start` and the end-to-end tests drive.
//
// Installs a pinned code-server into .cache/code-server/ (gitignored) so it works offline on these machines, starts it
// in its own process group with throw-away state, and installs .vsix files into an extensions folder.
// Facts this relies on: 4.100.3 is the newest release that runs on Node 20; its install
// needs chromium/ripgrep/libkrb5-dev, npm_config_yes (a postinstall uses npx), npm_config_nodedir=/usr (node-gyp
// headers), --unsafe-perm (its postinstall refuses root otherwise), and a seeded ripgrep tarball (offline).
//
// Usable as a module (ensureCodeServer, startCodeServer, installVsix) and as a CLI:
//   node scripts/code-server.mjs install     install if missing, print the entry path
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync, readFileSync, copyFileSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installDebianPackages } from './apt.mjs';
import { formatDuration } from './install-progress.mjs';
import { ScriptError, describeFailure } from './script-error.mjs';

export const CODE_SERVER_VERSION = '4.100.3';
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const installDir = path.join(repoRoot, '.cache', 'code-server');
export const codeServerEntry = path.join(installDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const installedMarker = path.join(installDir, `.installed-${CODE_SERVER_VERSION}`);
// What a first install can take, measured (README, "Two commands"): most of it is node-gyp compiling native modules.
const FIRST_INSTALL_HINT = 'a first install took 5 to 13 min on a shared, loaded 2-core VM';

// @vscode/ripgrep 1.15.11 (what code-server 4.100.3's VS Code pins) looks in $TMPDIR/vscode-ripgrep-cache-<its version>/
// for this asset before downloading it from GitHub; it runs `tar xvf` on it and expects `rg` at the top level.
const RIPGREP_PACKAGE_VERSION = '1.15.11';
const RIPGREP_ASSET = 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz';

export class CodeServerError extends ScriptError {
  constructor(message) {
    super(message);
    this.name = 'CodeServerError';
  }
}

function log(message) {
  process.stderr.write(`[code-server] ${message}\n`);
}

/** The Debian packages the install and the tests need, with the file that proves each is present. */
const systemPackages = [
  { pkg: 'chromium', present: () => existsSync('/usr/bin/chromium') },
  { pkg: 'ripgrep', present: () => existsSync('/usr/bin/rg') },
  // kerberos (a VS Code dependency) compiles against these headers.
  { pkg: 'libkrb5-dev', present: () => existsSync('/usr/include/krb5.h') && existsSync('/usr/include/gssapi/gssapi.h') },
];

function ensureSystemPackages() {
  const missing = systemPackages.filter((p) => !p.present()).map((p) => p.pkg);
  if (missing.length === 0) return;
  // Waits for apt's lock if another process holds it; as another user than root it says what to install.
  installDebianPackages(missing, { log });
}

/** Packs Debian's rg into the tarball @vscode/ripgrep would otherwise download, so its postinstall stays offline. */
function seedRipgrepCache(tmpDir) {
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${RIPGREP_PACKAGE_VERSION}`);
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(path.join(tmpDir, 'rg-staging-'));
  copyFileSync('/usr/bin/rg', path.join(staging, 'rg'));
  chmodSync(path.join(staging, 'rg'), 0o755);
  execFileSync('tar', ['czf', path.join(cacheDir, RIPGREP_ASSET), '-C', staging, 'rg']);
  rmSync(staging, { recursive: true, force: true });
}

/** True when the installed code-server actually starts far enough to print its version. */
function codeServerRuns() {
  if (!existsSync(codeServerEntry)) return false;
  // The postinstall (which installs VS Code's own dependencies) must have run, or the server cannot serve a workbench.
  const vscodeModules = path.join(installDir, 'node_modules', 'code-server', 'lib', 'vscode', 'node_modules');
  if (!existsSync(path.join(vscodeModules, '@vscode', 'ripgrep', 'bin', 'rg'))) return false;
  const result = spawnSync(process.execPath, [codeServerEntry, '--version'], { encoding: 'utf8', timeout: 60_000 });
  return result.status === 0 && result.stdout.includes(CODE_SERVER_VERSION);
}

/**
 * Milliseconds the newest recorded install took, from the `.installed-<version>` markers ("<ISO time> install took
 * 754.2 s"), or undefined when none recorded one (a first install, or a marker written for an install found working).
 */
export function lastInstallMs(dir = installDir) {
  let newest;
  let entries;
  try {
    entries = readdirSync(dir).filter((name) => name.startsWith('.installed-'));
  } catch {
    // not installed there yet: nothing installed
    return undefined;
  }
  for (const name of entries) {
    const match = /^(\S+) install took ([\d.]+) s/.exec(readFileSync(path.join(dir, name), 'utf8'));
    if (match && (!newest || match[1] > newest.at)) newest = { at: match[1], ms: Number(match[2]) * 1000 };
  }
  return newest?.ms;
}

/**
 * Starts the progress lines for an install begun at `started` (scripts/install-progress.mjs, on a worker thread: the
 * main thread is blocked in the synchronous `npm install`); returns the function that stops them.
 */
export function startInstallProgress(started, everyMs = 30_000) {
  const worker = new Worker(new URL('./install-progress.mjs', import.meta.url), {
    workerData: { role: 'install-progress', started, everyMs, lastMs: lastInstallMs(), installDir, rootPid: process.pid },
  });
  worker.unref();
  return () => void worker.terminate();
}

/** True when an install finished here (its marker is written last) and its entry script is present. */
export function codeServerInstalled() {
  return existsSync(installedMarker) && existsSync(codeServerEntry);
}

/**
 * Installs code-server into .cache/code-server/ unless a working install is already there.
 * Returns the path of its entry script (run it with `node`).
 */
export function ensureCodeServer() {
  if (codeServerInstalled()) return codeServerEntry;
  if (codeServerRuns()) {
    writeFileSync(installedMarker, `${new Date().toISOString()}\n`);
    return codeServerEntry;
  }
  ensureSystemPackages();
  const started = Date.now();
  mkdirSync(installDir, { recursive: true });
  // A private project so the install neither touches the repo's package.json nor inherits its policies.
  writeFileSync(
    path.join(installDir, 'package.json'),
    JSON.stringify(
      {
        name: 'ringside-code-server',
        private: true,
        description: 'code-server for Ringside e2e tests and npm start (generated)',
        dependencies: { 'code-server': CODE_SERVER_VERSION },
      },
      null,
      2,
    ) + '\n',
  );
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'ringside-cs-install-'));
  try {
    seedRipgrepCache(tmpDir);
    const env = {
      ...process.env,
      TMPDIR: tmpDir,
      npm_config_yes: 'true',
      npm_config_nodedir: '/usr',
      npm_config_unsafe_perm: 'true',
      // npm 11 skips dependency install scripts unless a project's allowScripts approves them. code-server's
      // postinstall runs nested `npm install`s inside its own lib/vscode and lib/vscode/extensions, whose native
      // modules (kerberos, node-pty, @parcel/watcher, spdlog, ripgrep...) need their scripts; there is no
      // package.json of ours to approve them in. The version is pinned, so allow the scripts of this install only
      // (the variable reaches the nested npm runs through the environment).
      npm_config_dangerously_allow_all_scripts: 'true',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      npm_config_update_notifier: 'false',
    };
    const lastMs = lastInstallMs();
    log(
      `installing code-server@${CODE_SERVER_VERSION} into ${path.relative(repoRoot, installDir)}: npm downloads it and compiles its ` +
        `native modules with node-gyp; ${lastMs === undefined ? FIRST_INSTALL_HINT : `the last install here took ${formatDuration(lastMs)}`}. ` +
        'A line every 30 s says what it is doing.',
    );
    const stopProgress = startInstallProgress(started);
    let result;
    try {
      result = spawnSync('npm', ['install', '--unsafe-perm', '--omit=dev', '--no-package-lock'], {
        cwd: installDir,
        env,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    } finally {
      stopProgress();
    }
    if (result.error) throw new CodeServerError(`npm could not run (${result.error.code ?? result.error.message})`);
    if (result.status !== 0) throw new CodeServerError(`npm install code-server@${CODE_SERVER_VERSION} failed (exit ${result.status}); see the output above`);
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  if (!codeServerRuns()) {
    throw new CodeServerError(`code-server@${CODE_SERVER_VERSION} installed but does not run (did its postinstall run? look for lib/vscode/node_modules)`);
  }
  writeFileSync(installedMarker, `${new Date().toISOString()} install took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  log(`installed in ${formatDuration(Date.now() - started)} (recorded in ${path.relative(repoRoot, installedMarker)} for next time)`);
  return codeServerEntry;
}

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The process listening on TCP `port` ("pid 1234: node …/entry.js"), from /proc; undefined when /proc does not say. */
export function portHolder(port) {
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      // no such table (no IPv6, say): nothing listens there
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the socket's inode.
      if (fields.length > 9 && fields[3] === '0A' && Number.parseInt(fields[1].split(':')[1], 16) === port) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fds;
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let target;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        // that fd closed since the listing: skip it
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) {
        let command = '';
        try {
          command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').replace(/\s+/g, ' ');
        } catch {
          /* gone */
        }
        return `pid ${pid}${command ? `: ${command.length > 100 ? `${command.slice(0, 97)}...` : command}` : ''}`;
      }
    }
  }
  return undefined;
}

/**
 * Throws a CodeServerError when 127.0.0.1:`port` cannot be listened on (another server has it), naming the port and
 * the process that holds it. Without this check a server already answering /healthz there would pass for ours.
 */
export function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => {
      if (error.code === 'EADDRINUSE') {
        const holder = portHolder(port);
        reject(
          new CodeServerError(
            `port ${port} on 127.0.0.1 is already in use${holder ? ` (by ${holder})` : ''}; ` +
              'choose another with PORT=<port> npm start, or stop that server',
          ),
        );
      } else if (error.code === 'EACCES') {
        reject(new CodeServerError(`port ${port} needs privileges to listen on (ports below 1024 are root's); choose another with PORT=<port>`));
      } else {
        reject(new CodeServerError(`cannot listen on 127.0.0.1:${port}: ${error.message}`));
      }
    });
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

async function waitForHealthz(url, child, timeoutMs, output) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new CodeServerError(`code-server exited (${child.exitCode ?? child.signalCode}) before answering /healthz:\n${output()}`);
    }
    try {
      const response = await fetch(new URL('healthz', url), { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new CodeServerError(`code-server did not answer ${url}healthz within ${timeoutMs / 1000} s:\n${output()}`);
}

// Servers started by this process. If the process exits without stopping them (a test runner killed mid-run, an
// uncaught error), their process groups are killed on the way out so no server or extension host is left behind.
const liveServers = new Map(); // child process → its private TMPDIR
process.on('exit', () => {
  for (const [child, runDir] of liveServers) {
    killGroup(child, 'SIGKILL');
    rmSync(runDir, { recursive: true, force: true });
  }
});

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}

/**
 * Starts code-server on 127.0.0.1 with `workspace` open. Each server gets its own process group (so extension hosts,
 * which outlive the browser, die with it), its own TMPDIR (it leaves sockets there) and a --config with `auth: none`
 * (without --config it writes a password config into the home folder).
 * @param {{ workspace: string, port?: number, extensionsDir: string, userDataDir: string, timeoutMs?: number,
 *           env?: Record<string, string>, stdio?: 'pipe' | 'inherit' }} options
 * @returns {Promise<{ url: string, port: number, pid: number, startMs: number, output: () => string, stop: () => Promise<void> }>}
 */
/**
 * A copy of the installed code-server in `dir`, owned by `uid`, for running it as an ordinary user: the checkout (and
 * so .cache/) may live in a directory that user cannot read. Returns the copy's entry point.
 */
export function copyCodeServerFor(uid, dir) {
  ensureCodeServer();
  mkdirSync(dir, { recursive: true });
  execFileSync('cp', ['-a', path.join(installDir, 'node_modules'), dir]);
  execFileSync('chown', ['-R', `${uid}:${uid}`, dir]);
  return path.join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

/**
 * `runAsUid`: start it as that user (uid = gid, no supplementary groups, no capabilities) with `entry` from
 * copyCodeServerFor; the run directory is handed to that user too. Needs root.
 */
export async function startCodeServer({
  workspace,
  port,
  extensionsDir,
  userDataDir,
  timeoutMs = 60_000,
  env = {},
  stdio = 'pipe',
  runAsUid,
  entry: givenEntry,
}) {
  const entry = givenEntry ?? ensureCodeServer();
  if (port !== undefined) await assertPortFree(port);
  const chosenPort = port ?? (await freePort());
  mkdirSync(extensionsDir, { recursive: true });
  mkdirSync(userDataDir, { recursive: true });
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'ringside-cs-run-'));
  const configFile = path.join(runDir, 'config.yaml');
  writeFileSync(configFile, `bind-addr: 127.0.0.1:${chosenPort}\nauth: none\ncert: false\n`);
  const args = [
    entry,
    '--config',
    configFile,
    '--bind-addr',
    `127.0.0.1:${chosenPort}`,
    '--auth',
    'none',
    '--user-data-dir',
    userDataDir,
    '--extensions-dir',
    extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    workspace,
  ];
  const started = Date.now();
  const asUser = runAsUid === undefined ? [] : ['setpriv', `--reuid=${runAsUid}`, `--regid=${runAsUid}`, '--clear-groups'];
  if (runAsUid !== undefined) execFileSync('chown', ['-R', `${runAsUid}:${runAsUid}`, runDir]);
  const [command, ...commandArgs] = [...asUser, process.execPath, ...args];
  const child = spawn(command, commandArgs, {
    detached: true, // own process group: stop() kills the server and every extension host it forked
    env: { ...process.env, TMPDIR: runDir, ...env },
    stdio: stdio === 'inherit' ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
  });
  liveServers.set(child, runDir);
  child.once('exit', () => liveServers.delete(child));
  let captured = '';
  const keep = (chunk) => {
    captured += chunk.toString();
    if (captured.length > 200_000) captured = captured.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${chosenPort}/`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      killGroup(child, 'SIGTERM');
      const timedOut = await Promise.race([exited.then(() => false), new Promise((r) => setTimeout(() => r(true), 5000))]);
      if (timedOut) killGroup(child, 'SIGKILL');
    }
    // Children of the group may outlive the leader by a moment; make sure none are left.
    killGroup(child, 'SIGKILL');
    liveServers.delete(child);
    rmSync(runDir, { recursive: true, force: true });
  };
  try {
    await waitForHealthz(url, child, timeoutMs, () => captured);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, port: chosenPort, pid: child.pid, startMs: Date.now() - started, output: () => captured, stop };
}

/**
 * Installs a .vsix into an extensions folder with code-server's own --install-extension (a folder path is refused;
 * a running server does not re-read an installed extension's package.json, so install before starting).
 */
export function installVsix(vsixPath, extensionsDir) {
  const entry = ensureCodeServer();
  if (!existsSync(vsixPath)) throw new CodeServerError(`no such .vsix: ${vsixPath}`);
  mkdirSync(extensionsDir, { recursive: true });
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'ringside-cs-vsix-'));
  const configFile = path.join(tmpDir, 'config.yaml');
  writeFileSync(configFile, 'auth: none\n');
  try {
    const result = spawnSync(
      process.execPath,
      [
        entry,
        '--config',
        configFile,
        '--user-data-dir',
        path.join(tmpDir, 'user-data'),
        '--extensions-dir',
        extensionsDir,
        '--install-extension',
        path.resolve(vsixPath),
        '--force',
      ],
      { encoding: 'utf8', env: { ...process.env, TMPDIR: tmpDir }, timeout: 120_000 },
    );
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    if (result.status !== 0 || (/failed|error/i.test(output) && !/successfully installed/i.test(output))) {
      throw new CodeServerError(`installing ${vsixPath} failed (exit ${result.status}):\n${output}`);
    }
    return output.trim();
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** The manifest of code-server's VS Code, for reporting which VS Code version tests ran against. */
export function vscodeVersion() {
  const product = path.join(installDir, 'node_modules', 'code-server', 'lib', 'vscode', 'package.json');
  return existsSync(product) ? JSON.parse(readFileSync(product, 'utf8')).version : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const command = process.argv[2] ?? 'install';
  try {
    if (command === 'install') {
      const started = Date.now();
      const entry = ensureCodeServer();
      console.log(`${entry} (VS Code ${vscodeVersion()}; ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } else {
      throw new CodeServerError(`unknown command ${command}; usage: node scripts/code-server.mjs install`);
    }
  } catch (error) {
    console.error(describeFailure(error));
    process.exit(1);
  }
}
