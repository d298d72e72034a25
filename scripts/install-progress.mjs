// The progress lines of a code-server install, on a worker thread of scripts/code-server.mjs while its main thread is
// blocked in the synchronous `npm install` (ensureCodeServer is synchronous for its callers). Every `everyMs` it
// writes one line straight to fd 2 (a worker's process.stderr would go through the blocked main thread): how long
// it has been, how long the last install here took, and the newest process of the install (node-gyp compiling
// kerberos, node-pty...), so a build that takes many minutes on a loaded machine is visibly alive.
// Also the home of formatDuration, which code-server.mjs shares.
import { readdirSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { isMainThread, workerData } from 'node:worker_threads';

/** "13 min 2 s", "45 s". */
export function formatDuration(ms) {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** pid → { ppid, start } of every process, from /proc/PID/stat (start: clock ticks after boot). */
function processTable() {
  const table = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces and parentheses): state ppid ... starttime is the 20th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), { ppid: Number(fields[1]), start: Number(fields[19]) });
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/** "; now: node-gyp rebuild in lib/vscode/node_modules/kerberos", or '' when the install has no child right now. */
function newestStep({ installDir, rootPid }) {
  const table = processTable();
  const underUs = (pid) => {
    for (let p = table.get(pid)?.ppid, hops = 0; p && hops < 64; p = table.get(p)?.ppid, hops++) if (p === rootPid) return true;
    return false;
  };
  let newest;
  for (const [pid, info] of table) if (underUs(pid) && (!newest || info.start >= newest.start)) newest = { pid, start: info.start };
  if (!newest) return '';
  try {
    const argv = readFileSync(`/proc/${newest.pid}/cmdline`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((arg) => (arg.startsWith('/') ? path.basename(arg) : arg));
    const command = argv.join(' ').replace(/\s+/g, ' ');
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${newest.pid}/cwd`);
    } catch {
      // exited meanwhile
    }
    // Where it works, from its package on: "@vscode/spdlog/build", "code-server/lib/vscode".
    const inPackage = cwd.split('/node_modules/').slice(1).pop() ?? (cwd.startsWith(installDir) ? path.relative(installDir, cwd) : '');
    return `; now: ${command.length > 50 ? `${command.slice(0, 47)}...` : command}${inPackage ? ` in ${inPackage}` : ''}`;
  } catch {
    // the child exited between listing and reading: say nothing of it
    return '';
  }
}

if (!isMainThread && workerData?.role === 'install-progress') {
  const { started, everyMs, lastMs } = workerData;
  setInterval(() => {
    const last = lastMs === undefined ? 'no earlier install here to compare with' : `the last install here took ${formatDuration(lastMs)}`;
    writeSync(
      2,
      `[code-server] still installing: npm builds code-server and its native modules (${formatDuration(Date.now() - started)} so far; ${last})` +
        `${newestStep(workerData)}\n`,
    );
  }, everyMs);
}
