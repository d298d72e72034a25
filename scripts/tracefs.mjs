// tracefs as setup sees it: readable, not mounted, or mounted but closed to this user (often mode 0700 for root).
// The same diagnosis and wording as the CLI's (probeTracefs in native/sys/access.ts, tracefsDeniedError in
// native/specs/tracefs.ts); those are TypeScript and setup runs before anything is built, hence this plain copy.
// test/setup/tracefs-probe.test.ts holds the two to the same answer, as root and as an ordinary user.
// Only node built-ins: setup.mjs uses this before node_modules exists.
import { accessSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';

export const TRACEFS_PRIMARY = '/sys/kernel/tracing';
export const TRACEFS_MOUNT_COMMAND = `mount -t tracefs nodev ${TRACEFS_PRIMARY}`;

function describeMode(path) {
  try {
    const stat = statSync(path);
    const bits = stat.mode & 0o777;
    const rwx = (shift) => ['r', 'w', 'x'].map((letter, i) => ((bits >> (shift + 2 - i)) & 1 ? letter : '-')).join('');
    return `mode ${bits.toString(8).padStart(4, '0')} (d${rwx(6)}${rwx(3)}${rwx(0)}), owner uid ${stat.uid} gid ${stat.gid}`;
  } catch {
    // the path cannot be stat'ed: no mode to describe
    return undefined;
  }
}

/** { path, state: 'ok' | 'unmounted' | 'denied', modeText? } from /proc/mounts and an access check of events/. */
export function probeTracefs(mountsText = readMounts()) {
  const mounted = mountsText
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'tracefs')
    .map((fields) => fields[1]);
  const path = mounted.includes(TRACEFS_PRIMARY) ? TRACEFS_PRIMARY : (mounted[0] ?? TRACEFS_PRIMARY);
  if (mounted.length === 0) {
    // Old kernels expose it under debugfs without a mount of its own.
    try {
      accessSync('/sys/kernel/debug/tracing/events', fsConstants.R_OK | fsConstants.X_OK);
      return { path: '/sys/kernel/debug/tracing', state: 'ok' };
    } catch {
      // neither tracefs mount point is there
      return { path, state: 'unmounted' };
    }
  }
  try {
    accessSync(`${path}/events`, fsConstants.R_OK | fsConstants.X_OK);
    return { path, state: 'ok' };
  } catch {
    // mounted but closed to us: the mode says to whom it is open
    return { path, state: 'denied', modeText: describeMode(path) };
  }
}

function readMounts() {
  try {
    return readFileSync('/proc/mounts', 'utf8');
  } catch {
    // no /proc/mounts to read: nothing is known to be mounted
    return '';
  }
}

function describeUid(uid) {
  let name;
  try {
    name = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => Number(fields[2]) === uid)?.[0];
    if (name === undefined && uid === process.geteuid?.()) name = userInfo().username;
  } catch {
    // no readable /etc/passwd: the uid alone names the user
    name = undefined;
  }
  return name ? `uid ${uid} (${name})` : `uid ${uid}`;
}

/** Whether the kernel lets this process record kernel events (CAP_PERFMON/CAP_SYS_ADMIN or paranoid ≤ 1), and the sysctl's text. */
function kernelEventsAllowed() {
  let paranoid = null;
  try {
    paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
  } catch {
    /* unreadable: the kernel's default, 2 */
  }
  let caps = 0n;
  try {
    caps = BigInt(`0x${/^CapEff:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0'}`);
  } catch {
    /* no /proc: no capabilities known */
  }
  const capable = ((caps >> 38n) & 1n) === 1n || ((caps >> 21n) & 1n) === 1n;
  const text = paranoid === null ? 'kernel.perf_event_paranoid could not be read' : `kernel.perf_event_paranoid = ${paranoid}`;
  return { allowed: capable || (paranoid ?? 2) <= 1, text };
}

/** What is wrong with tracefs for this user and the smallest fix, or undefined when tracepoints can be read. */
export function tracefsProblem(probe = probeTracefs()) {
  if (probe.state === 'ok') return undefined;
  if (probe.state === 'unmounted') return `tracefs is not mounted, so tracepoints cannot be used (as root run: ${TRACEFS_MOUNT_COMMAND})`;
  const euid = process.geteuid?.() ?? -1;
  const gid = process.getegid?.() ?? 0;
  const kernel = kernelEventsAllowed();
  const paranoid = kernel.allowed
    ? ''
    : `; recording tracepoints then also needs kernel.perf_event_paranoid <= 1 (syscall tracepoints of your own programs) or -1 (any, or -a), ` +
      `or CAP_PERFMON (${kernel.text})`;
  return (
    `tracefs is mounted at ${probe.path} but ${describeUid(euid)} may not read it${probe.modeText ? ` (${probe.modeText})` : ''}, ` +
    'so tracepoint ids and formats cannot be read ' +
    `(let this user's group in with \`sudo mount -o remount,gid=${gid},mode=750 ${probe.path}\` (its files are readable by their group only, ` +
    `so a wider mode alone is not enough), or run as root${paranoid})`
  );
}
