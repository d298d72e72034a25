// Shared helpers of the kernel tests: fixture paths, symbol addresses from `nm`, attrs for the
// three kinds of events, and a minimal record walker. The walker is deliberately independent of
// native/decode (another layer), so these tests check the kernel side on its own.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { PerfEventAttr } from '../../native/abi/attr';
import { BreakpointType, PerfType, RecordType, Sample, SoftwareConfig } from '../../native/abi/uapi';
import type { ResolvedEvent, RingCopy } from '../../native/abi/snapshot';

function findRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'ringside') return dir;
  }
  return process.cwd();
}

export const ROOT = findRoot();

export function fixture(name: string): string {
  const file = path.join(ROOT, 'fixtures-bin', name);
  if (!existsSync(file)) throw new Error(`fixture ${file} missing: run node test/setup/prepare.mjs`);
  return file;
}

/** Address and size of a symbol from `nm -S` (binutils is the reference here). */
export function nmSymbol(binary: string, symbol: string): { address: bigint; size: bigint } {
  const output = execFileSync('nm', ['-S', binary], { encoding: 'utf8' });
  for (const line of output.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length === 4 && parts[3] === symbol) return { address: BigInt(`0x${parts[0]}`), size: BigInt(`0x${parts[1]}`) };
  }
  throw new Error(`${symbol} not in nm output of ${binary}`);
}

/** The sample layout every test event uses: IDENTIFIER, IP, TID, TIME, CPU, PERIOD (48 bytes + header). */
export const TEST_SAMPLE_TYPE = Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD;
export const TEST_SAMPLE_SIZE = 8 + 48;

export function breakpointEvent(address: bigint, length: number, name = 'mem:counter:w:u'): ResolvedEvent {
  const attr: PerfEventAttr = {
    type: PerfType.BREAKPOINT,
    config: 0n,
    samplePeriod: 1n,
    sampleType: TEST_SAMPLE_TYPE,
    readFormat: 0,
    // exclude_kernel: the ELF loader's clear_user of the .bss tail during exec also hits the watchpoint.
    flags: { excludeKernel: true },
    bpType: BreakpointType.W,
    config1: address,
    config2: BigInt(length),
  };
  return { name, attr, isBreakpoint: true };
}

export function tracepointId(system: string, name: string): number {
  return Number(readFileSync(`/sys/kernel/tracing/events/${system}/${name}/id`, 'utf8').trim());
}

export function tracepointEvent(system: string, name: string): ResolvedEvent {
  const attr: PerfEventAttr = {
    type: PerfType.TRACEPOINT,
    config: BigInt(tracepointId(system, name)),
    samplePeriod: 1n,
    sampleType: TEST_SAMPLE_TYPE,
    readFormat: 0,
    flags: {},
  };
  return { name: `${system}:${name}`, attr, isBreakpoint: false };
}

export function softwareEvent(config: number, periodNs: bigint, name: string): ResolvedEvent {
  const attr: PerfEventAttr = {
    type: PerfType.SOFTWARE,
    config: BigInt(config),
    samplePeriod: periodNs,
    sampleType: TEST_SAMPLE_TYPE,
    readFormat: 0,
    flags: {},
  };
  return { name, attr, isBreakpoint: false };
}

export { SoftwareConfig, RecordType };

export interface WalkedRecord {
  readonly type: number;
  readonly misc: number;
  readonly size: number;
  readonly offset: number;
}

/** Walks a linearised ring copy from offset 0 (newest first for backward rings, oldest first for forward). */
export function walk(copy: RingCopy): { records: WalkedRecord[]; stoppedAt: number } {
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength);
  const records: WalkedRecord[] = [];
  let offset = 0;
  while (offset + 8 <= copy.validBytes) {
    const size = view.getUint16(offset + 6, true);
    if (size < 8 || offset + size > copy.validBytes) break;
    records.push({ type: view.getUint32(offset, true), misc: view.getUint16(offset + 4, true), size, offset });
    offset += size;
  }
  return { records, stoppedAt: offset };
}

export interface TestSample {
  readonly id: bigint;
  readonly ip: bigint;
  readonly pid: number;
  readonly tid: number;
  readonly time: bigint;
  readonly cpu: number;
  readonly period: bigint;
}

/** Reads a SAMPLE record in the TEST_SAMPLE_TYPE layout. */
export function readSample(copy: RingCopy, record: WalkedRecord): TestSample {
  const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset + record.offset + 8, record.size - 8);
  return {
    id: view.getBigUint64(0, true),
    ip: view.getBigUint64(8, true),
    pid: view.getUint32(16, true),
    tid: view.getUint32(20, true),
    time: view.getBigUint64(24, true),
    cpu: view.getUint32(32, true),
    period: view.getBigUint64(40, true),
  };
}

export function samplesOf(copy: RingCopy): TestSample[] {
  return walk(copy)
    .records.filter((r) => r.type === RecordType.SAMPLE)
    .map((r) => readSample(copy, r));
}

/** Perf fds and perf mappings of this process, for leak checks. */
export function perfResources(): { fds: number; mappings: number } {
  let fds = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:[perf_event]') fds++;
    } catch {
      // fd closed while listing
    }
  }
  const mappings = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes('anon_inode:[perf_event]')).length;
  return { fds, mappings };
}
