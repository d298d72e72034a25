// Makes a fresh clone runnable: npm packages, the Debian packages the tests and the demo need,
// and tracefs. Used by `npm start` and `npm test` (pretest), so both work right after cloning.
// Only node built-ins here: this runs before node_modules exists.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;
const run = (cmd) => execSync(cmd, { stdio: 'inherit', cwd: root, shell: '/bin/bash' });
const quiet = (cmd) => { try { execSync(cmd, { stdio: 'ignore', shell: '/bin/bash' }); return true; } catch { return false; } };

// perf is the referee for the decoder and perf.data tests, chromium drives the browser and VS Code
// tests, binutils checks the ELF/DWARF reader, ripgrep + libkrb5-dev let code-server install offline.
const debianPackages = ['linux-perf', 'chromium', 'binutils', 'gcc', 'g++', 'ripgrep', 'libkrb5-dev', 'util-linux'];
const want = process.argv.includes('--no-apt') ? [] : debianPackages.filter((p) => !quiet(`dpkg -s ${p}`));
if (want.length) {
  if (!isRoot) {
    console.error(`setup: missing Debian packages: ${want.join(' ')}\n       install them with: sudo apt-get install -y ${want.join(' ')}`);
  } else {
    console.log(`setup: installing ${want.join(' ')}`);
    run('apt-get update -qq');
    run(`DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${want.join(' ')} </dev/null`);
  }
}

if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
  console.log('setup: npm ci');
  run('npm ci --no-audit --no-fund');
}

const tracefs = '/sys/kernel/tracing';
if (!existsSync(`${tracefs}/events`)) {
  if (isRoot) run(`mount -t tracefs nodev ${tracefs}`);
  else console.error(`setup: tracefs is not mounted; tracepoints need it: sudo mount -t tracefs nodev ${tracefs}`);
}
