// The one place that talks to libc through koffi. Everything above this file sees plain numbers,
// bigints, Uint8Arrays and a `Mapping` object; nothing else in the project may import koffi, so a
// runtime without koffi (a browser, the webview) never pulls it in by accident.
//
// Every wrapper checks the return value and throws a typed PerfError (errors.ts) with the errno
// the call left behind, so callers never see a raw -1.

import koffi from 'koffi';
import { PerfError, type ErrorContext } from './errors';

const lib = koffi.load('libc.so.6');

/** Opaque pointer value as koffi hands it back (an External). Never dereferenced outside this file. */
export type NativePointer = { readonly __nativePointer: unique symbol };

// `syscall` is variadic: argument types are given at each call.
const syscallVariadic = lib.func('long syscall(long number, ...)') as (...args: unknown[]) => number;
const ioctlPtr = lib.func('int ioctl(int fd, unsigned long request, void *arg)') as (fd: number, request: number, arg: Uint8Array | null) => number;
const ioctlLong = lib.func('ioctl', 'int', ['int', 'unsigned long', 'unsigned long']) as (fd: number, request: number, arg: number) => number;
const mmapRaw = lib.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)') as (
  addr: null,
  length: number,
  prot: number,
  flags: number,
  fd: number,
  offset: number,
) => NativePointer;
const munmapRaw = lib.func('int munmap(void *addr, size_t length)') as (addr: NativePointer, length: number) => number;
const closeRaw = lib.func('int close(int fd)') as (fd: number) => number;
const malloptRaw = lib.func('int mallopt(int param, int value)') as (param: number, value: number) => number;
const readRaw = lib.func('long read(int fd, void *buf, size_t count)') as (fd: number, buf: Uint8Array, count: number) => number;
const pollRaw = lib.func('int poll(void *fds, unsigned long nfds, int timeout)') as (fds: Uint8Array, nfds: number, timeoutMs: number) => number;
// Two memcpy shapes: mapping -> JS buffer (the copying snapshot path) and JS buffer -> mapping (data_tail).
const memcpyToBuffer = lib.func('memcpy', 'void *', ['void *', 'uintptr_t', 'size_t']) as (dst: Uint8Array, src: bigint, n: number) => unknown;
const memcpyFromBuffer = lib.func('memcpy', 'void *', ['uintptr_t', 'void *', 'size_t']) as (dst: bigint, src: Uint8Array, n: number) => unknown;
const personalityRaw = lib.func('int personality(unsigned long persona)') as (persona: number) => number;
const sysconfRaw = lib.func('long sysconf(int name)') as (name: number) => number;
const getpidRaw = lib.func('int getpid(void)') as () => number;
const gettidRaw = lib.func('int gettid(void)') as () => number;
const getppidRaw = lib.func('int getppid(void)') as () => number;
const dlsymRaw = lib.func('void *dlsym(void *handle, const char *symbol)') as (handle: null, symbol: string) => NativePointer | null;
type Madvise = ((address: bigint, length: number, advice: number) => number) & {
  async: (address: bigint, length: number, advice: number, done: (error: unknown, result: number) => void) => void;
};
const madviseRaw = lib.func('int madvise(uintptr_t addr, size_t length, int advice)') as Madvise;

const SC_PAGESIZE = 30;
/** madvise(2): fault the range in as if written (Linux 5.14+; older kernels answer EINVAL). */
const MADV_POPULATE_WRITE = 23;
const MAP_SHARED = 0x01;
const MAP_FAILED = (1n << 64n) - 1n;
export const PROT_READ = 0x1;
export const PROT_WRITE = 0x2;
/** personality(2) flag: what GDB sets to run the inferior without address-space randomisation. */
export const ADDR_NO_RANDOMIZE = 0x0040000;
export const POLLIN = 0x001;

/** Syscall numbers that glibc has no wrapper for (or that we call raw on purpose). */
const SYSCALLS: Readonly<Record<string, { perfEventOpen: number; pidfdOpen: number; pidfdGetfd: number }>> = {
  x64: { perfEventOpen: 298, pidfdOpen: 434, pidfdGetfd: 438 },
  arm64: { perfEventOpen: 241, pidfdOpen: 434, pidfdGetfd: 438 },
};

function syscallNumbers() {
  const numbers = SYSCALLS[process.arch];
  if (!numbers) throw new PerfError('perf_event_open', 38 /* ENOSYS */, { note: `architecture ${process.arch} is not supported (x64 and arm64 are)` });
  return numbers;
}

function check(result: number, syscall: string, context?: ErrorContext): number {
  if (result < 0) throw new PerfError(syscall, koffi.errno(), context);
  return result;
}

export function pageSize(): number {
  return sysconfRaw(SC_PAGESIZE);
}

/** perf_event_open(2). `attrBytes` is the encoded attr; on E2BIG the kernel writes its size back into it. */
export function perfEventOpen(attrBytes: Uint8Array, pid: number, cpu: number, groupFd: number, flags: number, context?: ErrorContext): number {
  const nr = syscallNumbers().perfEventOpen;
  const fd = syscallVariadic(nr, 'void *', attrBytes, 'int', pid, 'int', cpu, 'int', groupFd, 'unsigned long', flags);
  return check(fd, 'perf_event_open', context);
}

export function pidfdOpen(pid: number): number {
  return check(syscallVariadic(syscallNumbers().pidfdOpen, 'int', pid, 'unsigned int', 0), 'pidfd_open', { pid });
}

export function pidfdGetfd(pidfd: number, targetFd: number): number {
  return check(syscallVariadic(syscallNumbers().pidfdGetfd, 'int', pidfd, 'int', targetFd, 'unsigned int', 0), 'pidfd_getfd');
}

/** ioctl with an integer argument (ENABLE, DISABLE, RESET, PAUSE_OUTPUT, SET_OUTPUT). */
export function ioctlValue(fd: number, request: number, arg: number, context?: ErrorContext): number {
  return check(ioctlLong(fd, request, arg), 'ioctl', context);
}

/** ioctl with a pointer argument (ID reads a u64 into it, MODIFY_ATTRIBUTES reads an attr from it). */
export function ioctlBuffer(fd: number, request: number, arg: Uint8Array, context?: ErrorContext): number {
  return check(ioctlPtr(fd, request, arg), 'ioctl', context);
}

export function close(fd: number): void {
  check(closeRaw(fd), 'close');
}

export function read(fd: number, into: Uint8Array): number {
  return check(readRaw(fd, into, into.length), 'read');
}

/** poll(2) on one fd; returns the revents bits (0 on timeout). */
export function pollOne(fd: number, events: number, timeoutMs: number): number {
  const pollfd = new Uint8Array(8);
  const view = new DataView(pollfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, events, true);
  const ready = check(pollRaw(pollfd, 1, timeoutMs), 'poll');
  return ready === 0 ? 0 : view.getInt16(6, true);
}

/** personality(2): pass 0xffffffff to query without changing. */
export function personality(persona: number): number {
  return check(personalityRaw(persona), 'personality');
}

export function getpid(): number {
  return getpidRaw();
}

export function gettid(): number {
  return gettidRaw();
}

/** getppid(2) through libc's own entry point, the code `functionAddress('getppid')` names. */
export function getppid(): number {
  return getppidRaw();
}

/** Where libc's function `name` starts in this process (dlsym with RTLD_DEFAULT); null when it has none. */
export function functionAddress(name: string): bigint | null {
  const pointer = dlsymRaw(null, name);
  return pointer === null ? null : BigInt(koffi.address(pointer));
}

/**
 * Runs `use` with the address of a NUL-terminated copy of `text` in native memory, freed when it
 * returns. For attr fields that are user pointers (the uprobe PMU's config1 is the probed file's
 * path): the kernel copies the string during the call, so it need live no longer than `use`.
 */
export function withCString<T>(text: string, use: (address: bigint) => T): T {
  const bytes = Buffer.from(`${text}\0`, 'utf8');
  const pointer = koffi.alloc('uint8_t', bytes.length) as NativePointer;
  try {
    koffi.encode(pointer, 'uint8_t', [...bytes], bytes.length);
    return use(BigInt(koffi.address(pointer)));
  } finally {
    koffi.free(pointer);
  }
}

/** Whether this kernel knows MADV_POPULATE_WRITE: asked once, with an empty range (the advice is checked before the length). */
let populateWriteKnown: boolean | undefined;

function populateWriteSupported(pageAlignedAddress: bigint): boolean {
  populateWriteKnown ??= madviseRaw(pageAlignedAddress, 0, MADV_POPULATE_WRITE) === 0;
  return populateWriteKnown;
}

/**
 * Faults in every whole page inside `bytes` for writing, on a thread of libuv's pool (madvise
 * MADV_POPULATE_WRITE): the page faults, and the kernel zeroing each page, are taken there, not on
 * the caller's thread. The pages `bytes` only partly covers (at most one at each end) are left to
 * the caller. Resolves false when the kernel has no MADV_POPULATE_WRITE (before 5.14) or the call
 * failed (out of memory, say): the caller then writes a byte per page itself. `bytes` is held until
 * the call returns, so its memory cannot be freed under it.
 */
export function populateForWrite(bytes: Uint8Array): Promise<boolean> {
  const page = BigInt(pageSize());
  const start = koffi.address(bytes);
  const first = ((start + page - 1n) / page) * page;
  const end = ((start + BigInt(bytes.byteLength)) / page) * page;
  if (end <= first) return Promise.resolve(true);
  if (!populateWriteSupported(first)) return Promise.resolve(false);
  return new Promise((resolve) => {
    madviseRaw.async(first, Number(end - first), MADV_POPULATE_WRITE, (error, result) => {
      // `bytes` is referenced here, so it lives until the kernel is done with its pages.
      resolve(!error && result === 0 && bytes.byteLength > 0);
    });
  });
}

/** True when this runtime can hand out ArrayBuffers over foreign memory (Electron's sandbox cannot). */
export function zeroCopySupported(): boolean {
  return process.versions.electron === undefined;
}

/**
 * A shared mapping of a perf fd (or anything else). Reads go either through a zero-copy
 * ArrayBuffer over the mapping (`koffi.view`) or through memcpy into caller buffers; the same
 * Mapping supports both, so tests can compare them on identical bytes.
 */
export class Mapping {
  readonly address: bigint;
  private pointer: NativePointer | null;
  private zeroCopyView: ArrayBuffer | null = null;
  private readonly scratch = new Uint8Array(8);
  private readonly scratchView = new DataView(this.scratch.buffer);

  private constructor(
    pointer: NativePointer,
    readonly length: number,
    readonly writable: boolean,
  ) {
    this.pointer = pointer;
    this.address = koffi.address(pointer);
  }

  static map(fd: number, length: number, prot: number, context?: ErrorContext): Mapping {
    const pointer = mmapRaw(null, length, prot, MAP_SHARED, fd, 0);
    const address = koffi.address(pointer);
    if (address === MAP_FAILED) throw new PerfError('mmap', koffi.errno(), { ...context, mmapBytes: length });
    return new Mapping(pointer, length, (prot & PROT_WRITE) !== 0);
  }

  get mapped(): boolean {
    return this.pointer !== null;
  }

  private live(): NativePointer {
    if (!this.pointer) throw new Error('mapping used after unmap');
    return this.pointer;
  }

  /** Zero-copy ArrayBuffer over the whole mapping. Valid until unmap(); throws where the runtime forbids it. */
  view(): ArrayBuffer {
    if (!this.zeroCopyView) this.zeroCopyView = koffi.view(this.live(), this.length);
    return this.zeroCopyView;
  }

  /** memcpy `length` bytes at `offset` of the mapping into `into` at `intoOffset` (no ArrayBuffer over foreign memory). */
  copyOut(offset: number, into: Uint8Array, intoOffset: number, length: number): void {
    this.live();
    if (offset < 0 || length < 0 || offset + length > this.length) throw new RangeError(`copyOut [${offset}, +${length}) outside mapping of ${this.length}`);
    if (intoOffset < 0 || intoOffset + length > into.length)
      throw new RangeError(`copyOut target [${intoOffset}, +${length}) outside buffer of ${into.length}`);
    if (length === 0) return;
    memcpyToBuffer(into.subarray(intoOffset, intoOffset + length), this.address + BigInt(offset), length);
  }

  /** Reads a native-endian u64 through memcpy (works without a zero-copy view). */
  readU64(offset: number): bigint {
    this.copyOut(offset, this.scratch, 0, 8);
    return this.scratchView.getBigUint64(0, true);
  }

  writeU64(offset: number, value: bigint): void {
    this.live();
    if (!this.writable) throw new Error('writeU64 on a read-only mapping');
    if (offset < 0 || offset + 8 > this.length) throw new RangeError(`writeU64 at ${offset} outside mapping of ${this.length}`);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
    memcpyFromBuffer(this.address + BigInt(offset), bytes, 8);
  }

  /** Idempotent. Any zero-copy view is dropped first (it must not outlive the mapping). */
  unmap(): void {
    if (!this.pointer) return;
    const pointer = this.pointer;
    this.pointer = null;
    this.zeroCopyView = null;
    check(munmapRaw(pointer, this.length), 'munmap');
  }
}

/** M_MMAP_THRESHOLD (glibc malloc.h). */
const M_MMAP_THRESHOLD = -3;

/**
 * Pins glibc's mmap threshold at `bytes`, which also turns off its dynamic adjustment: by default, once a block
 * mapped on its own (an ArrayBuffer of a few MB: a symbol table, a decode batch) is freed, the threshold rises to
 * that size, and every later buffer up to it comes from the brk heap, whose freed middle is never given back. Pinned,
 * a freed large buffer is unmapped. False when glibc refused the value.
 */
export function pinMmapThreshold(bytes: number): boolean {
  return malloptRaw(M_MMAP_THRESHOLD, bytes) === 1;
}
