// Opening perf events and the ioctls on them. An event is a file descriptor; PerfEventFd owns it
// and closes it exactly once. Attr size is negotiated like perf does: when the kernel is older than
// our attr layout and we set a field it does not know, it answers E2BIG and writes the size it
// accepts back into the attr, and we retry at that size (recording what had to be dropped).

import { encodeAttr, PERF_ATTR_SIZE_LATEST, type PerfEventAttr } from '../abi/attr';
import { arch, release } from 'node:os';
import { BreakpointType, Ioctl, PerfFlag, PerfType, ReadFormat, Sample } from '../abi/uapi';
import * as libc from '../sys/libc';
import { PerfError, type ErrorContext } from '../sys/errors';

const E2BIG = 7;
const EINVAL = 22;

export interface OpenOptions {
  /** Human name for errors (`mem:counter:w`). */
  readonly name?: string;
  /** Encode the attr at this size instead of PERF_ATTR_SIZE_LATEST (tests, older layouts). */
  readonly attrSize?: number;
  /** Bytes appended after the encoded attr, as a newer uapi would (tests of the E2BIG path). */
  readonly trailingBytes?: Uint8Array;
  /** Retry at the kernel's size on E2BIG (default true). */
  readonly negotiateSize?: boolean;
  /**
   * A uprobe PMU event: the path of the probed ELF file, passed to the kernel as config1 (a user
   * pointer to the string, which the attr as plain data cannot hold). attr.config2 is the file offset.
   */
  readonly uprobePath?: string;
}

export class PerfEventFd {
  private open = true;
  private sampleId: bigint | undefined;

  constructor(
    readonly fd: number,
    readonly attr: PerfEventAttr,
    readonly pid: number,
    readonly cpu: number,
    readonly name: string,
    /** Size of the attr the kernel finally accepted. */
    readonly attrSize: number,
    /** Non-zero attr bytes beyond the kernel's size that had to be dropped (E2BIG negotiation). */
    readonly droppedNonZeroBytes: number = 0,
  ) {}

  get disposed(): boolean {
    return !this.open;
  }

  private context(request: string): ErrorContext {
    return { eventName: this.name, request, pid: this.pid, cpu: this.cpu, attrType: this.attr.type };
  }

  private liveFd(): number {
    if (!this.open) throw new Error(`perf event ${this.name} used after dispose`);
    return this.fd;
  }

  enable(): void {
    libc.ioctlValue(this.liveFd(), Ioctl.ENABLE, 0, this.context('ENABLE'));
  }

  disable(): void {
    libc.ioctlValue(this.liveFd(), Ioctl.DISABLE, 0, this.context('DISABLE'));
  }

  reset(): void {
    libc.ioctlValue(this.liveFd(), Ioctl.RESET, 0, this.context('RESET'));
  }

  /**
   * The kernel's sample id (what PERF_SAMPLE_ID/IDENTIFIER carry for this fd). It is fixed for the
   * event's life, so it is asked once: every snapshot lists the ids of every fd.
   */
  id(): bigint {
    const fd = this.liveFd();
    if (this.sampleId === undefined) {
      const out = new Uint8Array(8);
      libc.ioctlBuffer(fd, Ioctl.ID, out, this.context('ID'));
      this.sampleId = new DataView(out.buffer).getBigUint64(0, true);
    }
    return this.sampleId;
  }

  /**
   * How many records of this event the kernel could not write into its ring since it was opened
   * (ring paused or full): the PERF_FORMAT_LOST value of read(). Output of inherited events goes to
   * the parent's ring and their losses are counted on the parent, so this fd covers them. Null when
   * the event was opened without PERF_FORMAT_LOST (kernels before 6.0).
   */
  lostSamples(): bigint | null {
    if (!(this.attr.readFormat & ReadFormat.LOST) || this.attr.readFormat & ReadFormat.GROUP) return null;
    return this.readCounts().lost;
  }

  /**
   * read() of a non-group event: `value` is the event's count (with inherit, its exited children's
   * counts too), `lost` the PERF_FORMAT_LOST count or null when the event was opened without it.
   */
  readCounts(): { value: bigint; lost: bigint | null } {
    const format = this.attr.readFormat;
    if (format & ReadFormat.GROUP) throw new Error(`readCounts reads one event, not a group (${this.name})`);
    const withLost = (format & ReadFormat.LOST) !== 0;
    // value, then time enabled / time running / id when asked for, then lost.
    const words =
      1 +
      (format & ReadFormat.TOTAL_TIME_ENABLED ? 1 : 0) +
      (format & ReadFormat.TOTAL_TIME_RUNNING ? 1 : 0) +
      (format & ReadFormat.ID ? 1 : 0) +
      (withLost ? 1 : 0);
    const out = new Uint8Array(words * 8);
    const got = libc.read(this.liveFd(), out);
    if (got !== out.length)
      throw new PerfError('read', EINVAL, { ...this.context('read'), note: `(read ${got} of ${out.length} bytes of read_format 0x${format.toString(16)})` });
    const view = new DataView(out.buffer);
    return { value: view.getBigUint64(0, true), lost: withLost ? view.getBigUint64((words - 1) * 8, true) : null };
  }

  /** PERF_EVENT_IOC_PAUSE_OUTPUT: stop (true) or restart (false) writes into this event's ring. */
  pauseOutput(paused: boolean): void {
    libc.ioctlValue(this.liveFd(), Ioctl.PAUSE_OUTPUT, paused ? 1 : 0, this.context('PAUSE_OUTPUT'));
  }

  /** PERF_EVENT_IOC_MODIFY_ATTRIBUTES: the kernel supports it for breakpoints (move bp_addr/bp_len/bp_type). */
  modifyAttributes(attr: PerfEventAttr): void {
    const bytes = encodeAttr(attr, this.attrSize);
    libc.ioctlBuffer(this.liveFd(), Ioctl.MODIFY_ATTRIBUTES, bytes, this.context('MODIFY_ATTRIBUTES'));
  }

  /** PERF_EVENT_IOC_SET_OUTPUT: send this event's records into `target`'s ring (null: undo). */
  setOutput(target: PerfEventFd | null): void {
    libc.ioctlValue(this.liveFd(), Ioctl.SET_OUTPUT, target ? target.liveFd() : -1, this.context('SET_OUTPUT'));
  }

  /** Idempotent close. */
  dispose(): void {
    if (!this.open) return;
    this.open = false;
    libc.close(this.fd);
  }
}

/**
 * PERF_FORMAT_LOST when this kernel has it (Linux 6.0+), else 0: a read() of an event opened with
 * it counts the records the kernel could not write into the ring, exactly, whether or not a
 * PERF_RECORD_LOST ever reached the ring.
 */
export function lostReadFormat(): number {
  return kernelOlderThan(6, 0) ? 0 : ReadFormat.LOST;
}

function kernelOlderThan(major: number, minor: number): boolean {
  const [have, haveMinor] = release()
    .split('.')
    .map((part) => Number.parseInt(part, 10));
  return have < major || (have === major && haveMinor < minor);
}

/** Attr fields worth naming when the kernel answers EINVAL. */
function suspiciousFields(attr: PerfEventAttr): string[] {
  const fields: string[] = [];
  if (attr.flags.writeBackward && kernelOlderThan(4, 7)) fields.push(`write_backward (needs Linux 4.7; this is ${release()})`);
  if (attr.flags.inherit && attr.readFormat & 8 /* GROUP */) fields.push('inherit with read_format GROUP');
  if (attr.flags.sigtrap && !attr.flags.removeOnExec) fields.push('sigtrap without remove_on_exec');
  if (attr.flags.freq && attr.samplePeriod === 0n) fields.push('freq with sample_freq 0');
  if (attr.sampleType & ~((Sample.WEIGHT_STRUCT << 1) - 1)) fields.push('sample_type has unknown bits');
  if (attr.type === PerfType.BREAKPOINT) {
    // arch/x86/kernel/hw_breakpoint.c: the debug registers trigger on execute, write, or read+write.
    if (attr.bpType === BreakpointType.R && arch() === 'x64')
      fields.push('bp_type R: x86 debug registers cannot watch reads alone (use :rw for reads and writes, or :w)');
    if (![1, 2, 4, 8].includes(Number(attr.config2 ?? 0n)) && attr.bpType !== 4) fields.push(`bp_len ${attr.config2} (1, 2, 4 or 8)`);
    if ((attr.config1 ?? 0n) % BigInt(Number(attr.config2 ?? 1n) || 1) !== 0n) fields.push('bp_addr not aligned to bp_len');
    if (attr.samplePeriod === 0n) fields.push('sample_period 0 on a breakpoint');
  }
  if (attr.auxAction && Object.values(attr.auxAction).some(Boolean)) fields.push('aux_action bits (need a group led by an AUX event, e.g. Intel PT)');
  if (attr.flags.useClockid) fields.push(`clockid ${attr.clockid ?? 0}`);
  return fields;
}

/**
 * perf_event_open with size negotiation. pid/cpu follow perf_event_open(2): (pid, -1) one task on
 * any CPU, (-1, cpu) every task on one CPU, (0, -1) the calling thread.
 */
export function openEvent(
  attr: PerfEventAttr,
  pid: number,
  cpu: number,
  groupFd: number = -1,
  flags: number = PerfFlag.FD_CLOEXEC,
  options: OpenOptions = {},
): PerfEventFd {
  const path = options.uprobePath;
  if (path === undefined) return openEncoded(attr, attr, pid, cpu, groupFd, flags, options);
  return libc.withCString(path, (pointer) => openEncoded(attr, { ...attr, config1: pointer }, pid, cpu, groupFd, flags, options));
}

/** `encoded` is what the kernel is given; `attr` what the fd keeps (a uprobe's path pointer is valid only during the call). */
function openEncoded(attr: PerfEventAttr, encoded: PerfEventAttr, pid: number, cpu: number, groupFd: number, flags: number, options: OpenOptions): PerfEventFd {
  const name = options.name ?? `type ${attr.type} config ${attr.config}`;
  const context: ErrorContext = {
    eventName: name,
    pid,
    cpu,
    attrType: attr.type,
    attrConfig: attr.config,
    excludeKernel: attr.flags.excludeKernel ?? false,
    ...(options.uprobePath !== undefined ? { uprobePath: options.uprobePath } : {}),
  };
  const size = options.attrSize ?? PERF_ATTR_SIZE_LATEST;
  const trailing = options.trailingBytes ?? new Uint8Array(0);
  const attrBytes = encodeAttr(encoded, size);
  const bytes = new Uint8Array(attrBytes.length + trailing.length);
  bytes.set(attrBytes);
  bytes.set(trailing, attrBytes.length);
  new DataView(bytes.buffer).setUint32(4, bytes.length, true);
  try {
    const fd = libc.perfEventOpen(bytes, pid, cpu, groupFd, flags, context);
    return new PerfEventFd(fd, attr, pid, cpu, name, bytes.length);
  } catch (error) {
    if (!(error instanceof PerfError)) throw error;
    if (error.errno === EINVAL) throw new PerfError('perf_event_open', EINVAL, { ...context, suspiciousFields: suspiciousFields(attr) });
    if (error.errno !== E2BIG || options.negotiateSize === false) throw error;
    // The kernel wrote the size it accepts into attr.size; anything non-zero beyond it is a feature it lacks.
    const kernelSize = new DataView(bytes.buffer).getUint32(4, true);
    if (kernelSize < 64 || kernelSize >= bytes.length) throw error;
    const dropped = bytes.subarray(kernelSize).reduce((count, byte) => count + (byte !== 0 ? 1 : 0), 0);
    return openAtSize(attr, encoded, kernelSize, pid, cpu, groupFd, flags, name, context, dropped);
  }
}

function openAtSize(
  attr: PerfEventAttr,
  encoded: PerfEventAttr,
  size: number,
  pid: number,
  cpu: number,
  groupFd: number,
  flags: number,
  name: string,
  context: ErrorContext,
  dropped: number,
): PerfEventFd {
  const bytes = encodeAttr(encoded, size);
  try {
    const fd = libc.perfEventOpen(bytes, pid, cpu, groupFd, flags, context);
    return new PerfEventFd(fd, attr, pid, cpu, name, size, dropped);
  } catch (error) {
    if (error instanceof PerfError && error.errno === EINVAL) {
      throw new PerfError('perf_event_open', EINVAL, { ...context, suspiciousFields: suspiciousFields(attr) });
    }
    throw error;
  }
}

/** Wraps an fd we did not open (borrowed with pidfd_getfd) so it gets the same ioctls and disposal. */
export function adoptEventFd(fd: number, attr: PerfEventAttr, name: string = `adopted fd ${fd}`): PerfEventFd {
  return new PerfEventFd(fd, attr, -1, -1, name, attr.size ?? PERF_ATTR_SIZE_LATEST);
}
