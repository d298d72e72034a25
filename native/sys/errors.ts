// Typed errors for failed system calls, with a hint that tells a person what to change. The perf
// interface answers almost every mistake with a bare errno; the hint turns it back into the reason
// (paranoid level, locked-memory limit, debug registers, tracefs...) using what the call was about.

import { readFileSync } from 'node:fs';
import {
  Capability,
  describeUid,
  grantAdvice,
  hasCap,
  MLOCK_SYSCTL,
  PARANOID_SYSCTL,
  paranoidText,
  readPerfAccess,
  TRACEFS_MOUNT_COMMAND,
  TRACEFS_PRIMARY,
  uprobeRefusal,
} from './access';

/** Linux errno numbers (asm-generic/errno-base.h + errno.h; identical on x86_64 and aarch64). */
export const ERRNO_NAMES: Readonly<Record<number, string>> = {
  1: 'EPERM',
  2: 'ENOENT',
  3: 'ESRCH',
  4: 'EINTR',
  5: 'EIO',
  6: 'ENXIO',
  7: 'E2BIG',
  8: 'ENOEXEC',
  9: 'EBADF',
  10: 'ECHILD',
  11: 'EAGAIN',
  12: 'ENOMEM',
  13: 'EACCES',
  14: 'EFAULT',
  15: 'ENOTBLK',
  16: 'EBUSY',
  17: 'EEXIST',
  18: 'EXDEV',
  19: 'ENODEV',
  20: 'ENOTDIR',
  21: 'EISDIR',
  22: 'EINVAL',
  23: 'ENFILE',
  24: 'EMFILE',
  25: 'ENOTTY',
  26: 'ETXTBSY',
  27: 'EFBIG',
  28: 'ENOSPC',
  29: 'ESPIPE',
  30: 'EROFS',
  31: 'EMLINK',
  32: 'EPIPE',
  33: 'EDOM',
  34: 'ERANGE',
  35: 'EDEADLK',
  36: 'ENAMETOOLONG',
  37: 'ENOLCK',
  38: 'ENOSYS',
  39: 'ENOTEMPTY',
  40: 'ELOOP',
  42: 'ENOMSG',
  43: 'EIDRM',
  61: 'ENODATA',
  62: 'ETIME',
  71: 'EPROTO',
  75: 'EOVERFLOW',
  84: 'EILSEQ',
  95: 'EOPNOTSUPP',
  110: 'ETIMEDOUT',
  114: 'EALREADY',
  115: 'EINPROGRESS',
  125: 'ECANCELED',
  524: 'ENOTSUPP',
};

export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `E${errno}`;
}

/** What the failing call was about; every field optional, used only to sharpen the hint. */
export interface ErrorContext {
  /** perf_event_attr.type / config of the event being opened. */
  readonly attrType?: number;
  readonly attrConfig?: bigint;
  readonly eventName?: string;
  readonly pid?: number;
  readonly cpu?: number;
  readonly excludeKernel?: boolean;
  /** Bytes asked of mmap. */
  readonly mmapBytes?: number;
  /** ioctl request name (PAUSE_OUTPUT...). */
  readonly request?: string;
  /** Extra sentence appended verbatim. */
  readonly note?: string;
  /** Attr fields worth naming when the kernel says EINVAL. */
  readonly suspiciousFields?: readonly string[];
  /** A uprobe PMU event: the ELF file it probes. */
  readonly uprobePath?: string;
}

const PERF_TYPE_TRACEPOINT = 2;
const PERF_TYPE_BREAKPOINT = 5;

function readProcValue(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    // no such proc file on this kernel, or not readable: the hint leaves it out
    return null;
  }
}

/** Real uid of a process (what ptrace_may_access() compares), or null when it cannot be read. */
function processOwner(pid: number): number | null {
  const uid = /^Uid:\s*(\d+)/m.exec(readProcValue(`/proc/${pid}/status`) ?? '')?.[1];
  return uid === undefined ? null : Number(uid);
}

function paranoidHint(code: string, context: ErrorContext): string {
  const access = readPerfAccess();
  // Another user's process is refused by ptrace_may_access(), whatever the paranoid level.
  if (context.pid !== undefined && context.pid > 0) {
    const owner = processOwner(context.pid);
    if (owner !== null && owner !== access.euid && !access.perfmonCapable) {
      return (
        `process ${context.pid} belongs to ${describeUid(owner)}, and you are ${describeUid(access.euid)}: perf may watch another user's process ` +
        `only with CAP_SYS_PTRACE (or as root), whatever ${PARANOID_SYSCTL} is; run Ringside as ${describeUid(owner)}, or with sudo.`
      );
    }
  }
  // paranoid and capability checks answer EACCES; a seccomp filter (Docker's default profile
  // blocks perf_event_open) answers EPERM before the kernel looks at the attr at all.
  if (code === 'EPERM' && access.seccompMode === 2) {
    return (
      'perf_event_open was refused with EPERM and this process runs under a seccomp filter (Seccomp: 2 in /proc/self/status), ' +
      "as containers do by default (Docker's profile blocks perf_event_open): run the container with `--security-opt seccomp=unconfined` " +
      'or a profile that allows perf_event_open (plus `--cap-add PERFMON` for kernel samples).'
    );
  }
  const uprobe = context.uprobePath !== undefined ? uprobeRefusal(access) : null;
  if (uprobe) return `${uprobe.reason}; ${uprobe.hint}.`;
  if (context.uprobePath !== undefined && code === 'EACCES' && !hasCap(access.effectiveCaps, Capability.SYS_ADMIN)) {
    // perf_uprobe_event_init() checks perfmon_capable() since 5.8; a kernel that still answers EACCES wants CAP_SYS_ADMIN (seen on 6.18 Firecracker guests).
    const release = readProcValue('/proc/sys/kernel/osrelease') ?? 'this kernel';
    return (
      `${describeUid(access.euid)} has CAP_PERFMON, yet the kernel (${release}) answered EACCES to a uprobe: it allows the uprobe PMU only with CAP_SYS_ADMIN ` +
      `(as kernels before 5.8 did), or a Linux Security Module denies it (\`journalctl -k | grep -i denied\`); give the copy of node CAP_SYS_ADMIN instead ` +
      `(\`sudo setcap cap_sys_admin,cap_ipc_lock+ep ~/.local/bin/node-perf\`), or run as root.`
    );
  }
  const level = access.paranoid;
  const cpuWide = context.pid === -1;
  const tracepoint = context.attrType === PERF_TYPE_TRACEPOINT;
  const needsKernel = context.excludeKernel === false;
  // Documented levels: >=2 no kernel profiling, >=1 no CPU-wide events, >=0 no raw tracepoint
  // data; -1 no restriction. Ask for the highest level that still allows this event.
  const needed = tracepoint ? -1 : cpuWide ? 0 : needsKernel ? 1 : 2;
  const lsm = 'a Linux Security Module (SELinux, AppArmor, lockdown) may be denying perf_event_open: see the audit log (`journalctl -k | grep -i denied`)';
  if (access.perfmonCapable) return `${describeUid(access.euid)} has CAP_PERFMON, so ${PARANOID_SYSCTL} does not apply; ${lsm}.`;
  const fix = level === null || level > needed ? grantAdvice(needed) : `that level allows this event, so ${lsm}`;
  return `${paranoidText(access)} and ${describeUid(access.euid)} has no CAP_PERFMON; ${fix}.`;
}

function mlockHint(code: string, context: ErrorContext): string {
  const access = readPerfAccess();
  const asked = context.mmapBytes !== undefined ? ` (this ring asked for ${Math.ceil(context.mmapBytes / 1024)} KiB)` : '';
  if (code === 'ENOMEM' && access.lockedPagesBudget === null) {
    // No locked-memory limit applies to this process (CAP_IPC_LOCK or paranoid -1): the kernel
    // could not allocate the ring itself.
    return `the kernel could not allocate the ring buffer${asked}: no locked-memory limit applies to this process, so this is the kernel running out of memory for one ring; use fewer --pages.`;
  }
  return (
    `ring buffers are charged to locked memory${asked}: ${MLOCK_SYSCTL} is ${access.perfMlockKb ?? 'unknown'} KiB per CPU for your user ` +
    `and RLIMIT_MEMLOCK (ulimit -l) is ${access.memlockLimitBytes === null ? 'unlimited' : `${access.memlockLimitBytes / 1024} KiB`}; ` +
    `use fewer --pages, raise it with \`sudo sysctl ${MLOCK_SYSCTL}=N\` or \`ulimit -l\`, or grant CAP_IPC_LOCK.`
  );
}

function tracepointHint(context: ErrorContext): string {
  const mounted = readProcValue(`${TRACEFS_PRIMARY}/events/header_page`) !== null;
  return mounted
    ? `no tracepoint with id ${context.attrConfig ?? '?'}: check the event exists under ${TRACEFS_PRIMARY}/events/<system>/<name>/id (ids change across boots).`
    : `tracefs is not mounted at ${TRACEFS_PRIMARY}: run \`sudo ${TRACEFS_MOUNT_COMMAND}\`.`;
}

function hintFor(syscall: string, code: string, context: ErrorContext): string {
  const name = context.eventName ? `event ${context.eventName}` : 'the event';
  if (syscall === 'perf_event_open') {
    switch (code) {
      case 'EACCES':
      case 'EPERM':
        return `permission denied opening ${name}: ${paranoidHint(code, context)}`;
      case 'ENOSPC':
        if (context.attrType === PERF_TYPE_BREAKPOINT) {
          return (
            'no free hardware debug register: x86 has 4 (DR0-DR3) per CPU, shared by every pinned and flexible breakpoint of the task and CPU ' +
            '(including debuggers and other perf sessions); remove a breakpoint/watchpoint or close other tools using them.'
          );
        }
        return `the kernel has no room for ${name} (ENOSPC).`;
      case 'ENOENT':
        if (context.attrType === PERF_TYPE_TRACEPOINT) return tracepointHint(context);
        return `this machine has no such event (type ${context.attrType ?? '?'}, config ${context.attrConfig ?? '?'}); \`ringside events\` lists what it offers (no hardware counters in most VMs).`;
      case 'E2BIG':
        return 'perf_event_attr size negotiation failed: the attr sets fields this kernel does not know (non-zero bytes beyond the size it accepts); drop the newer feature or upgrade the kernel.';
      case 'EINVAL': {
        // Linux answers an unknown tracepoint id with EINVAL (older kernels: ENOENT).
        if (context.attrType === PERF_TYPE_TRACEPOINT) {
          return `${tracepointHint(context)} If it does exist, the attr itself is invalid for a tracepoint (sample_type, exclude bits).`;
        }
        const fields = context.suspiciousFields?.length ? ` Suspicious fields: ${context.suspiciousFields.join(', ')}.` : '';
        return `the kernel rejected the attr of ${name} as invalid (unsupported flag combination, sample_type bit, period 0 with sampling, bad bp_addr/bp_len, or a PMU that lacks the feature).${fields}`;
      }
      case 'ESRCH':
        return `process/thread ${context.pid ?? '?'} does not exist (it may have exited).`;
      case 'EMFILE':
      case 'ENFILE':
        return 'too many open files: raise `ulimit -n` or use fewer CPUs/threads/events.';
      case 'ENODEV':
      case 'EOPNOTSUPP':
        return `the PMU does not support this for ${name} (e.g. sampling or exclude bits on a counting-only PMU).`;
      case 'EBUSY':
        return 'the PMU is exclusively used by another event (exclusive/pinned).';
      default:
        return `perf_event_open failed for ${name}.`;
    }
  }
  if (syscall === 'mmap') {
    if (code === 'EPERM' || code === 'ENOMEM') return mlockHint(code, context);
    if (code === 'EINVAL')
      return 'the ring size must be 1 + 2^n pages, an event that already has a ring can only be mapped with the same size, and an inherited per-task event (inherit with cpu -1) cannot be mapped at all (open it per CPU).';
    return 'mapping the perf ring buffer failed.';
  }
  if (syscall === 'ioctl') {
    if (code === 'ENOTTY') return `this kernel does not know ioctl ${context.request ?? ''} (too old?).`;
    if (code === 'EINVAL')
      return `ioctl ${context.request ?? ''} was rejected (PAUSE_OUTPUT needs a mapped ring; SET_OUTPUT needs the same CPU/task and the same ring direction).`;
    return `ioctl ${context.request ?? ''} failed.`;
  }
  if (syscall === 'pidfd_getfd' || syscall === 'pidfd_open') {
    if (code === 'EPERM') return "borrowing another process's fd needs ptrace access to it (same user and kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE).";
    if (code === 'ESRCH') return `process ${context.pid ?? '?'} has exited.`;
    if (code === 'EBADF') return 'the target process has no such fd.';
  }
  return `${syscall} failed.`;
}

/** A failed system call: syscall name, errno, its symbolic code and a human hint. */
export class PerfError extends Error {
  readonly syscall: string;
  readonly errno: number;
  readonly code: string;
  readonly hint: string;

  constructor(syscall: string, errno: number, context: ErrorContext = {}) {
    const code = errnoName(errno);
    const hint = [hintFor(syscall, code, context), context.note].filter(Boolean).join(' ');
    super(`${syscall}${context.eventName ? ` (${context.eventName})` : ''}: ${code} (errno ${errno}): ${hint}`);
    this.name = 'PerfError';
    this.syscall = syscall;
    this.errno = errno;
    this.code = code;
    this.hint = hint;
  }
}
