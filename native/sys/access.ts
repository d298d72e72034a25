// What this process may record, decided once from the same facts the kernel checks
// (kernel/events/core.c): the perf_event_paranoid level, the capabilities perfmon_capable() and
// perf_mmap() look at, the locked-memory budget perf_mmap() charges rings to, tracefs access, and a
// seccomp filter. perf falls back to user space only when kernel samples are refused; a Recorder does
// the same from this model, and names what it cannot see and why.

import { accessSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';

/** Capability bits (linux/capability.h). */
export const Capability = {
  DAC_OVERRIDE: 1,
  DAC_READ_SEARCH: 2,
  IPC_LOCK: 14,
  SYS_PTRACE: 19,
  SYS_ADMIN: 21,
  PERFMON: 38,
} as const;

export const PARANOID_SYSCTL = 'kernel.perf_event_paranoid';
export const MLOCK_SYSCTL = 'kernel.perf_event_mlock_kb';

/** Where tracefs lives: its own mount point, or (old kernels) under debugfs. */
export const TRACEFS_PRIMARY = '/sys/kernel/tracing';
export const TRACEFS_DEBUGFS = '/sys/kernel/debug/tracing';
export const TRACEFS_MOUNT_COMMAND = `mount -t tracefs nodev ${TRACEFS_PRIMARY}`;

/** The raw facts, each as the kernel exposes it; pure input to `perfAccessFrom`. */
export interface AccessFacts {
  readonly euid: number;
  /** /proc/sys/kernel/perf_event_paranoid; null when unreadable. */
  readonly paranoid: number | null;
  /** CapEff of /proc/self/status. */
  readonly effectiveCaps: bigint;
  /** /proc/sys/kernel/perf_event_mlock_kb; null when unreadable. */
  readonly perfMlockKb: number | null;
  /** Soft RLIMIT_MEMLOCK in bytes; null for unlimited. */
  readonly memlockLimitBytes: number | null;
  readonly onlineCpus: number;
  readonly pageSize: number;
  /** `Seccomp:` of /proc/self/status: 0 none, 1 strict, 2 filter. */
  readonly seccompMode: number;
  readonly tracefs: TracefsAccess;
}

export interface TracefsAccess {
  readonly path: string;
  /** 'ok': events/ is readable; 'unmounted': no tracefs there; 'denied': mounted but this user may not read it. */
  readonly state: 'ok' | 'unmounted' | 'denied';
  /** `drwx------ root:root` style description when denied. */
  readonly modeText?: string;
}

export interface PerfAccess extends AccessFacts {
  /** CAP_PERFMON or CAP_SYS_ADMIN: every paranoid check passes. */
  readonly perfmonCapable: boolean;
  /** perf_allow_kernel(): events without exclude_kernel. */
  readonly mayRecordKernel: boolean;
  /** perf_allow_cpu(): CPU-wide events (pid -1, -a). */
  readonly mayRecordCpuWide: boolean;
  /** perf_allow_tracepoint(): raw tracepoint data beyond the per-task syscall tracepoints. */
  readonly mayRecordRawTracepoints: boolean;
  /**
   * Locked-memory pages rings may use, as perf_mmap() counts them: perf_event_mlock_kb per online
   * CPU for the user, plus RLIMIT_MEMLOCK for the process. Null when unlimited (CAP_IPC_LOCK, or
   * paranoid -1, where perf_mmap() does not enforce the limit).
   */
  readonly lockedPagesBudget: number | null;
}

/** Whether the capability `bit` (see Capability) is in `caps`. */
export function hasCap(caps: bigint, bit: number): boolean {
  return ((caps >> BigInt(bit)) & 1n) === 1n;
}

export function perfAccessFrom(facts: AccessFacts): PerfAccess {
  const perfmonCapable = hasCap(facts.effectiveCaps, Capability.PERFMON) || hasCap(facts.effectiveCaps, Capability.SYS_ADMIN);
  // An unreadable sysctl is treated as the kernel's default level, 2.
  const paranoid = facts.paranoid ?? 2;
  const unlimitedLock = hasCap(facts.effectiveCaps, Capability.IPC_LOCK) || paranoid <= -1 || facts.memlockLimitBytes === null;
  const userPages = Math.floor(((facts.perfMlockKb ?? 516) * 1024) / facts.pageSize) * facts.onlineCpus;
  const processPages = Math.floor((facts.memlockLimitBytes ?? 0) / facts.pageSize);
  return {
    ...facts,
    perfmonCapable,
    mayRecordKernel: perfmonCapable || paranoid <= 1,
    mayRecordCpuWide: perfmonCapable || paranoid <= 0,
    mayRecordRawTracepoints: perfmonCapable || paranoid <= -1,
    lockedPagesBudget: unlimitedLock ? null : userPages + processPages,
  };
}

function readNumber(path: string): number | null {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    // no such sysctl on this kernel, or not readable: unknown
    return null;
  }
}

function statusField(status: string, field: string): string | undefined {
  return new RegExp(`^${field}:\\s*(\\S+)`, 'm').exec(status)?.[1];
}

/** Soft RLIMIT_MEMLOCK from /proc/self/limits (null: unlimited). */
export function parseMemlockLimit(limitsText: string): number | null {
  const match = /^Max locked memory\s+(\S+)/m.exec(limitsText);
  if (!match || match[1] === 'unlimited') return null;
  return Number(match[1]);
}

/** `mode 0700 (drwx------), owner uid 0 gid 0` for a directory, undefined where it cannot be stat'ed. */
export function describeMode(path: string): string | undefined {
  try {
    const stat = statSync(path);
    const bits = stat.mode & 0o777;
    const rwx = (shift: number) => ['r', 'w', 'x'].map((letter, i) => ((bits >> (shift + 2 - i)) & 1 ? letter : '-')).join('');
    return `mode ${bits.toString(8).padStart(4, '0')} (d${rwx(6)}${rwx(3)}${rwx(0)}), owner uid ${stat.uid} gid ${stat.gid}`;
  } catch {
    // the path cannot be stat'ed: no mode to describe
    return undefined;
  }
}

/** tracefs as this user sees it: readable, not mounted, or mounted but closed to this user. */
export function probeTracefs(mountsText: string): TracefsAccess {
  const mounted = mountsText
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'tracefs')
    .map((fields) => fields[1]);
  const path = mounted.includes(TRACEFS_PRIMARY) ? TRACEFS_PRIMARY : (mounted[0] ?? TRACEFS_PRIMARY);
  if (mounted.length === 0) {
    // Old kernels expose it under debugfs without a mount of its own.
    try {
      accessSync(`${TRACEFS_DEBUGFS}/events`, fsConstants.R_OK | fsConstants.X_OK);
      return { path: TRACEFS_DEBUGFS, state: 'ok' };
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

/** Reads the facts from /proc and /sys. Cheap (a few small files); call once per recording. */
export function readAccessFacts(): AccessFacts {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    /* no /proc: no caps known */
  }
  let limits = '';
  try {
    limits = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    /* no /proc */
  }
  let mounts = '';
  try {
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    /* no /proc */
  }
  let onlineCpus = 1;
  try {
    onlineCpus = readFileSync('/sys/devices/system/cpu/online', 'utf8')
      .trim()
      .split(',')
      .reduce((count, range) => {
        const [lo, hi] = range.split('-').map(Number);
        return count + (hi === undefined ? 1 : hi - lo + 1);
      }, 0);
  } catch {
    /* keep 1 */
  }
  const capText = statusField(status, 'CapEff');
  return {
    euid: typeof process.geteuid === 'function' ? process.geteuid() : -1,
    paranoid: readNumber('/proc/sys/kernel/perf_event_paranoid'),
    effectiveCaps: capText ? BigInt(`0x${capText}`) : 0n,
    perfMlockKb: readNumber('/proc/sys/kernel/perf_event_mlock_kb'),
    memlockLimitBytes: limits ? parseMemlockLimit(limits) : null,
    onlineCpus,
    pageSize: 4096,
    seccompMode: Number(statusField(status, 'Seccomp') ?? 0),
    tracefs: probeTracefs(mounts),
  };
}

export function readPerfAccess(): PerfAccess {
  return perfAccessFrom(readAccessFacts());
}

/** `uid 65534 (nobody)` */
export function describeUid(uid: number): string {
  // /etc/passwd names local users; userInfo() (getpwuid) also knows directory-service users.
  let name: string | undefined;
  try {
    name = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .find((fields) => Number(fields[2]) === uid)?.[0];
    if (name === undefined && typeof process.geteuid === 'function' && uid === process.geteuid()) name = userInfo().username;
  } catch {
    // no readable /etc/passwd: the uid alone names the user
    name = undefined;
  }
  return name ? `uid ${uid} (${name})` : `uid ${uid}`;
}

/** The paranoid value as the sentence a user reads. */
export function paranoidText(access: Pick<AccessFacts, 'paranoid'>): string {
  return access.paranoid === null ? `${PARANOID_SYSCTL} could not be read` : `${PARANOID_SYSCTL} = ${access.paranoid}`;
}

/**
 * The smallest change that lets an unprivileged user reach `level`: the sysctl, or CAP_PERFMON on a
 * copy of node kept for that purpose (so the system's node binary is not changed for every user).
 */
export function grantAdvice(level: number): string {
  return `run \`sudo sysctl ${PARANOID_SYSCTL}=${level}\` (add it to /etc/sysctl.d/ to keep it), or ${PERFMON_COPY_ADVICE}`;
}

/** The commands that make a copy of node with CAP_PERFMON (one home for them: both pieces of advice below quote it). */
const PERFMON_COPY_COMMANDS =
  '`cp "$(readlink -f "$(command -v node)")" ~/.local/bin/node-perf && sudo setcap cap_perfmon,cap_ipc_lock+ep ~/.local/bin/node-perf`';

const PERFMON_COPY_ADVICE = `give CAP_PERFMON to a copy of node used only for Ringside (${PERFMON_COPY_COMMANDS}), or run as root`;

/**
 * The copy of node for uprobes: CAP_PERFMON where the kernel's uprobe PMU takes it, CAP_SYS_ADMIN where it does not (a
 * 6.18 Firecracker guest answered EACCES to CAP_PERFMON and opened the uprobe with CAP_SYS_ADMIN; errors.ts says so
 * when it happens).
 */
const UPROBE_COPY_ADVICE =
  `give CAP_PERFMON to a copy of node used only for Ringside (${PERFMON_COPY_COMMANDS}; ` +
  'where the kernel still refuses uprobes with it, cap_sys_admin instead of cap_perfmon), or run as root';

/**
 * Why the kernel refuses this process a uprobe, or null when it allows one. perf_uprobe_event_init()
 * answers EACCES to anyone without CAP_PERFMON (or CAP_SYS_ADMIN), whatever the paranoid level, so
 * no sysctl helps: the capability on a copy of node does.
 */
export function uprobeRefusal(access: PerfAccess): { readonly reason: string; readonly hint: string } | null {
  if (access.perfmonCapable) return null;
  return {
    reason:
      `the kernel allows uprobes only to a process with CAP_PERFMON (or CAP_SYS_ADMIN), at every ${PARANOID_SYSCTL}, ` +
      `and ${describeUid(access.euid)} has neither (perf_event_open answers EACCES)`,
    hint: UPROBE_COPY_ADVICE,
  };
}

/** One line for summaries, status bars and the timeline, or null when nothing is held back. */
export function accessLimitation(access: PerfAccess): string | null {
  if (access.mayRecordKernel) return null;
  return `user space only: ${paranoidText(access)} (${describeUid(access.euid)}, no CAP_PERFMON): kernel samples, kernel callchains, tracepoints and -a are not recorded`;
}

/** A recording this user may not make, with the real cause and the smallest fix. */
export class AccessError extends Error {
  override readonly name = 'AccessError';
  constructor(
    readonly reason: string,
    readonly hint: string,
  ) {
    super(`${reason}; ${hint}`);
  }
}
