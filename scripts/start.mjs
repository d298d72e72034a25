// `npm start`: Ringside in a real VS Code on a demo, in one command.
// Builds, installs code-server if missing (.cache/code-server), packages the extension and installs it into
// .cache/e2e/extensions, creates the demo workspace in .cache/demo-workspace, starts code-server on 127.0.0.1:$PORT
// (default 8080) and prints the URL. Runs until Ctrl-C, then kills the server's whole process group.
//   npm start [-- --no-build]      --no-build: package what dist/ already holds (quick restarts)
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertPortFree, ensureCodeServer, installVsix, repoRoot, startCodeServer, CodeServerError } from './code-server.mjs';
import { packageVsix, PackageVsixError } from './package-vsix.mjs';
import { createDemoWorkspace, demoUserSettings } from './demo/create.mjs';
import { runMain } from './script-error.mjs';

const cache = path.join(repoRoot, '.cache');
const port = Number(process.env.PORT ?? 8080);

function step(label, action) {
  const started = Date.now();
  process.stdout.write(`ringside: ${label}… `);
  const result = action();
  process.stdout.write(`done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  return result;
}

/** A new profile gets the demo's user settings; an existing one keeps what its user made of it. */
function writeSettingsOnce(userDataDir) {
  mkdirSync(path.join(userDataDir, 'User'), { recursive: true, mode: 0o700 });
  try {
    // 'wx': never over an existing file (or a symlink planted in its place).
    writeFileSync(path.join(userDataDir, 'User', 'settings.json'), `${JSON.stringify(demoUserSettings, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
}

async function main() {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new CodeServerError(`PORT=${process.env.PORT} is not a TCP port (1-65535)`);
  // Before the build and a possibly long code-server install, not after them.
  await assertPortFree(port);
  if (!process.argv.includes('--no-build'))
    step('building', () => {
      const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });
      if (built.status !== 0) throw new PackageVsixError(`npm run build failed (exit ${built.status}); its messages are above`);
    });
  // Installed: returns at once. Not yet (the first start): it says what it does every 30 s and how long the last took.
  ensureCodeServer();
  const { vsixPath, bytes } = step('packaging the extension', () => packageVsix({ build: false }));
  const extensionsDir = path.join(cache, 'e2e', 'extensions');
  // A running server never re-reads an installed extension's manifest: start from a clean folder each time.
  rmSync(extensionsDir, { recursive: true, force: true });
  step(`installing ${path.basename(vsixPath)} (${(bytes / 1024).toFixed(0)} KB)`, () => installVsix(vsixPath, extensionsDir));
  const demo = step('creating the demo workspace', () => createDemoWorkspace(path.join(cache, 'demo-workspace')));

  const userDataDir = path.join(cache, 'e2e', 'user-data');
  writeSettingsOnce(userDataDir);
  const server = await startCodeServer({
    workspace: demo.folder,
    port,
    extensionsDir,
    userDataDir,
    stdio: 'inherit',
  });
  let stopping = false;
  const shutdown = async (signal) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\nringside: ${signal}, stopping code-server\n`);
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  console.log(`
  Ringside is running in code-server (${server.startMs} ms to start) with the demo workspace:

      ${server.url}?folder=${encodeURIComponent(demo.folder)}

  It opens on demo.c with the Ringside view and a short walkthrough beside it ("Ringside: a first recording"):
  "Start Recording…", then "Capture Snapshot" (also in the command palette, F1).
  Ctrl-C stops the server.
`);
  // Keep running until a signal arrives; notice if the server dies on its own.
  const watchdog = setInterval(() => {
    try {
      process.kill(server.pid, 0);
    } catch {
      // kill(pid, 0) failing means the process is gone
      clearInterval(watchdog);
      console.error('ringside: code-server exited');
      void server.stop().then(() => process.exit(1));
    }
  }, 1000);
}

runMain(main);
