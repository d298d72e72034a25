// Thread states' cost per sched_switch record (not part of `npm run bench`):
//   node out/bench/thread-states.js [records] [perf.data]
// times reading the five fields thread states need from the RAW payload in place (rawFieldsReader, what
// snapshotSwitches in host/thread-states.ts does per record) against the full decode of the same records
// (decodeRecordAt, what the details pane uses), and snapshotSwitches as a whole, per record, on synthetic sched_switch
// records in the tracefs layout of 6.x kernels (default 200000) and, when given, on the records of a perf.data file
// (e.g. `ringside capture -e sched:sched_switch -a --duration 1 -o sw.data`).
//
//   node out/bench/thread-states.js --pairs [--before OTHER/out] [--rounds N] [--rows 1000000] [--switch-every 10]
// times what the host does with a snapshot's sched_switch records before the panel's first batch, on the first call
// (a fresh process: V8 runs it cold) and on later ones: threadStatesAndComms (host/thread-states.ts), and snapshotToWire
// as the panel's streamer calls it (names following: its threads, losses and thread states). The snapshot: `rows`
// records of two CPUs' rings, merged by time, each CPU's samples (cpu-clock, IP) broken every `switch-every` rows by a
// sched_switch among 16 threads, the way `-e sched:sched_switch -e cpu-clock -a` records them. Each round runs each
// build in processes of its own (one per function, both builds taking turns going first), with --before another
// checkout's build (e.g. /work/main/out) in the same rounds; both builds' thread states must be the same bytes.

import { decodeSnapshot } from '../native/decode/columns';
import { decodeRecordAt } from '../native/decode/record';
import { importPerfDataFile } from '../native/perfdata/index';
import { rawFieldsReader } from '../native/decode/raw-fields';
import type { TracepointValue } from '../native/decode/tracepoint';
import { SCHED_SWITCH, schedSwitchRing, type SwitchSample } from '../native/decode/test-records';
import { RecordType } from '../native/abi/uapi';
import type { DecodedSnapshot } from '../native/decode/types';
import { snapshotSwitches } from '../host/thread-states';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { PerfType, Sample } from '../native/abi/uapi';
import type { EventDescription, RingCopy } from '../native/abi/snapshot';
import type { ThreadStates } from '../shared/protocol';
import type * as ThreadStatesModule from '../host/thread-states';
import type * as WireModule from '../host/wire';
import { BenchUnavailableError, cpuNs, median, nowNs, round } from './stats';

/** n switches on two CPUs among eight threads, 1 µs apart, in one ring. */
function synthetic(n: number): DecodedSnapshot {
  const switches = Array.from({ length: n }, (_, i): SwitchSample => {
    const prev = 100 + (i % 8);
    const next = 100 + ((i + 1) % 8);
    return { time: 1_000_000 + i * 1000, cpu: i & 1, prev: [`worker-${prev}`, prev, i % 3 === 0 ? 1 : 0x100], next: [`worker-${next}`, next] };
  });
  return decodeSnapshot({ events: [SCHED_SWITCH], rings: [schedSwitchRing(switches)], takenAtMs: 0, pauseWindowNs: [0] });
}

/** Median ns per sched_switch record of `body` over `runs` runs after one warm-up. */
function perRecord(records: number, runs: number, body: () => void): number {
  body();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowNs();
    body();
    times.push(nowNs() - t0);
  }
  return median(times) / records;
}

function measure(label: string, snapshot: DecodedSnapshot): void {
  const switchEvent = new Set(snapshot.events.filter((e) => e.name === 'sched:sched_switch').map((e) => e.index));
  const rows: number[] = [];
  for (let row = 0; row < snapshot.columns.length; row++) {
    if (snapshot.columns.kind[row] === RecordType.SAMPLE && switchEvent.has(snapshot.columns.event[row])) rows.push(row);
  }
  if (rows.length === 0) {
    console.log(`${label}: no sched_switch records`);
    return;
  }
  const runs = Math.max(5, Math.min(51, Math.round(2_000_000 / rows.length)));
  const full = perRecord(rows.length, runs, () => {
    for (const row of rows) decodeRecordAt(snapshot, row);
  });
  const values: (TracepointValue | undefined)[] = [];
  const fields = perRecord(rows.length, runs, () => {
    const read = rawFieldsReader(snapshot, ['prev_pid', 'next_pid', 'prev_state', 'next_comm', 'prev_comm']);
    for (const row of rows) read(row, values);
  });
  let found = 0;
  const whole = perRecord(rows.length, runs, () => {
    found = snapshotSwitches(snapshot)?.switches.count ?? 0;
  });
  console.log(`${label}: ${rows.length} sched_switch records (${found} switches), median of ${runs} runs`);
  console.log(`  decodeRecordAt (full decode)     ${round(full / 1000, 3)} µs/record`);
  console.log(`  rawFieldsReader (five fields)    ${round(fields / 1000, 3)} µs/record`);
  console.log(`  snapshotSwitches (all of it)     ${round(whole / 1000, 3)} µs/record`);
}

/** The mixed snapshot's events: sched_switch and cpu-clock, told apart by IDENTIFIER (ids 1 and 2). */
const MIXED_SWITCH: EventDescription = {
  ...SCHED_SWITCH,
  ids: [1n],
  attr: { ...SCHED_SWITCH.attr, sampleType: Sample.IDENTIFIER | Sample.TID | Sample.TIME | Sample.CPU | Sample.RAW },
};
const CPU_CLOCK: EventDescription = {
  index: 1,
  name: 'cpu-clock',
  ids: [2n],
  attr: {
    type: PerfType.SOFTWARE,
    config: 0n,
    samplePeriod: 10000n,
    sampleType: Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD,
    readFormat: 0,
    flags: {},
  },
};
const SWITCH_BYTES = 8 + 8 + 8 + 8 + 8 + 4 + 68;
const SAMPLE_BYTES = 8 + 8 + 8 + 8 + 8 + 8 + 8;
const THREADS = 16;

/** One CPU's ring of `rows` records: cpu-clock samples of the thread on CPU, a sched_switch every `switchEvery` rows. */
function mixedRing(cpu: number, rows: number, switchEvery: number): RingCopy {
  const switches = Math.floor(rows / switchEvery);
  const bytes = new Uint8Array(switches * SWITCH_BYTES + (rows - switches) * SAMPLE_BYTES);
  const view = new DataView(bytes.buffer);
  const comm = (at: number, tid: number) => {
    const name = `worker-${tid}`;
    for (let i = 0; i < name.length; i++) bytes[at + i] = name.charCodeAt(i);
  };
  let at = 0;
  // Threads 100.. on CPU 0, 200.. on CPU 1: each CPU rotates among its own (and tid 0, the idle task, now and then).
  let current = 100 * (cpu + 1);
  for (let row = 0; row < rows; row++) {
    // The CPUs' clocks are 1 µs a row apart, CPU 1 half a row later: the merge alternates between the rings.
    const time = 1_000_000_000n + BigInt(row * 1000 + cpu * 500);
    const pid = current === 0 ? 0 : current - (current % 4);
    if (row % switchEvery === switchEvery - 1) {
      const step = row / switchEvery;
      const next = step % 7 === 3 ? 0 : 100 * (cpu + 1) + ((step * 5) % THREADS);
      view.setUint32(at, RecordType.SAMPLE, true);
      view.setUint16(at + 4, 1, true);
      view.setUint16(at + 6, SWITCH_BYTES, true);
      view.setBigUint64(at + 8, 1n, true);
      view.setInt32(at + 16, pid, true);
      view.setInt32(at + 20, current, true);
      view.setBigUint64(at + 24, time, true);
      view.setUint32(at + 32, cpu, true);
      view.setUint32(at + 40, 68, true);
      const raw = at + 44;
      view.setUint16(raw, 372, true);
      view.setInt32(raw + 4, current, true);
      comm(raw + 8, current);
      view.setInt32(raw + 24, current, true);
      view.setInt32(raw + 28, 120, true);
      view.setBigInt64(raw + 32, BigInt(step % 3 === 0 ? 1 : step % 3 === 1 ? 0x100 : 2), true);
      comm(raw + 40, next);
      view.setInt32(raw + 56, next, true);
      view.setInt32(raw + 60, 120, true);
      at += SWITCH_BYTES;
      current = next;
    } else {
      view.setUint32(at, RecordType.SAMPLE, true);
      view.setUint16(at + 4, current === 0 ? 1 : 2, true);
      view.setUint16(at + 6, SAMPLE_BYTES, true);
      view.setBigUint64(at + 8, 2n, true);
      view.setBigUint64(at + 16, 0x401000n + BigInt((row * 7) % 4096), true);
      view.setInt32(at + 24, pid, true);
      view.setInt32(at + 28, current, true);
      view.setBigUint64(at + 32, time, true);
      view.setUint32(at + 40, cpu, true);
      view.setBigUint64(at + 48, 10000n, true);
      at += SAMPLE_BYTES;
    }
  }
  return {
    ringId: cpu,
    label: `cpu${cpu}`,
    cpu,
    tid: -1,
    direction: 'forward',
    defaultEvent: 1,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'paused',
  };
}

/** The mixed snapshot of `rows` records (two CPUs). */
export function mixedSnapshot(rows: number, switchEvery: number): DecodedSnapshot {
  const perCpu = Math.floor(rows / 2);
  return decodeSnapshot({
    events: [MIXED_SWITCH, CPU_CLOCK],
    rings: [mixedRing(0, perCpu, switchEvery), mixedRing(1, rows - perCpu, switchEvery)],
    takenAtMs: 0,
    pauseWindowNs: [0, 0],
  });
}

/** What one build's child process reports: the first call's ms, the later calls' ms, a digest of what it gave. */
interface ChildReport {
  readonly firstMs: number;
  readonly laterMs: number[];
  /** The same calls' CPU time (every thread of the process: V8's compiler and GC helpers too), ms. */
  readonly firstCpuMs: number;
  readonly laterCpuMs: number[];
  readonly digest: string;
}

function digestOf(message: ThreadStates | undefined, comms: ReadonlyMap<number, string>): string {
  const hash = createHash('sha256');
  if (message) {
    hash.update(JSON.stringify({ count: message.count, comms: message.comms }));
    for (const [name, buffer] of Object.entries(message.columns)) hash.update(name).update(new Uint8Array(buffer));
  }
  hash.update(JSON.stringify([...comms]));
  return hash.digest('hex').slice(0, 16);
}

const LATER_CALLS = 6;

/**
 * In a fresh process: `what` of the build in `outDir` on two snapshots of the same records, alternating (a panel's
 * snapshots are different objects), first call then LATER_CALLS more.
 */
async function child(outDir: string, what: string, rows: number, switchEvery: number): Promise<ChildReport> {
  const snapshots = [mixedSnapshot(rows, switchEvery), mixedSnapshot(rows, switchEvery)];
  const times: number[] = [];
  const cpu: number[] = [];
  let digest = '';
  if (what === 'states') {
    const { threadStatesAndComms } = (await import(join(outDir, 'host', 'thread-states.js'))) as typeof ThreadStatesModule;
    for (let i = 0; i <= LATER_CALLS; i++) {
      const t0 = nowNs();
      const c0 = cpuNs();
      const { threadStates, comms } = threadStatesAndComms(snapshots[i % 2], 'bench');
      times.push((nowNs() - t0) / 1e6);
      cpu.push((cpuNs() - c0) / 1e6);
      if (i === 0) digest = digestOf(threadStates, comms);
    }
  } else if (what === 'wire') {
    const { snapshotToWire } = (await import(join(outDir, 'host', 'wire.js'))) as typeof WireModule;
    for (let i = 0; i <= LATER_CALLS; i++) {
      const t0 = nowNs();
      const c0 = cpuNs();
      const wire = snapshotToWire(snapshots[i % 2], { snapshotId: 'bench', name: 'bench', takenAtMs: 0, namesFollow: true });
      times.push((nowNs() - t0) / 1e6);
      cpu.push((cpuNs() - c0) / 1e6);
      if (i === 0)
        digest = digestOf(wire.threadStates, new Map()) + '/' + createHash('sha256').update(JSON.stringify(wire.start.threads)).digest('hex').slice(0, 16);
    }
  } else throw new BenchUnavailableError(`--child takes states or wire, not ${what}`);
  return { firstMs: times[0], laterMs: times.slice(1), firstCpuMs: cpu[0], laterCpuMs: cpu.slice(1), digest };
}

function argValue(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}

function pairs(args: readonly string[]): void {
  const rounds = Number(argValue(args, '--rounds') ?? 7);
  const rows = Number(argValue(args, '--rows') ?? 1_000_000);
  const switchEvery = Number(argValue(args, '--switch-every') ?? 10);
  if (!Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(rows) || rows < 2 || !Number.isInteger(switchEvery) || switchEvery < 1)
    throw new BenchUnavailableError('--rounds, --rows and --switch-every take positive integers (rows at least 2)');
  const before = argValue(args, '--before');
  const builds = [...(before ? [{ name: 'before', outDir: resolve(before) }] : []), { name: 'after', outDir: resolve(__dirname, '..') }];
  const loadBefore = loadavg();
  const results = new Map<string, number[]>();
  const add = (key: string, value: number) => results.set(key, [...(results.get(key) ?? []), value]);
  const digests = new Map<string, Set<string>>();
  for (let r = 0; r < rounds; r++) {
    const line: string[] = [];
    for (const what of ['states', 'wire']) {
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      const ofRound = new Map<string, ChildReport>();
      for (const { name, outDir } of order) {
        const output = execFileSync(process.execPath, [__filename, '--child', outDir, what, String(rows), String(switchEvery)], {
          encoding: 'utf8',
          maxBuffer: 1 << 20,
        });
        const report = JSON.parse(output.trim().split('\n').pop()!) as ChildReport;
        ofRound.set(name, report);
        const warm = median(report.laterMs);
        add(`${what} ${name} first`, report.firstMs);
        add(`${what} ${name} later`, warm);
        add(`${what} ${name} first cpu`, report.firstCpuMs);
        add(`${what} ${name} later cpu`, median(report.laterCpuMs));
        line.push(
          `${what} ${name} first ${report.firstMs.toFixed(1)} (cpu ${report.firstCpuMs.toFixed(1)}) later ${warm.toFixed(1)} (${report.laterMs.map((m) => m.toFixed(1)).join(' ')}; cpu ${median(report.laterCpuMs).toFixed(1)})`,
        );
        digests.set(what, (digests.get(what) ?? new Set()).add(report.digest));
      }
      if (before) {
        add(`${what} after/before first`, ofRound.get('after')!.firstMs / ofRound.get('before')!.firstMs);
        add(`${what} after/before later`, median(ofRound.get('after')!.laterMs) / median(ofRound.get('before')!.laterMs));
        add(`${what} after/before first cpu`, ofRound.get('after')!.firstCpuMs / ofRound.get('before')!.firstCpuMs);
        add(`${what} after/before later cpu`, median(ofRound.get('after')!.laterCpuMs) / median(ofRound.get('before')!.laterCpuMs));
      }
    }
    process.stderr.write(`round ${r + 1}: ${line.join(', ')}\n`);
  }
  for (const [what, set] of digests) if (set.size !== 1) throw new Error(`${what}: the builds gave different results (${[...set].join(', ')})`);
  const result: Record<string, unknown> = { rows, switchEvery, rounds };
  for (const [key, values] of results) result[key.includes('/') ? key : `${key} ms`] = round(median(values), 3);
  result.load_before = loadBefore.map((v) => round(v, 3));
  result.load_after = loadavg().map((v) => round(v, 3));
  for (const [key, value] of Object.entries(result)) console.log(`${key.padEnd(32)} ${JSON.stringify(value)}`);
  console.log(JSON.stringify(result));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    console.log(JSON.stringify(await child(args[1], args[2], Number(args[3]), Number(args[4]))));
    return;
  }
  if (args[0] === '--pairs') {
    pairs(args.slice(1));
    return;
  }
  const [records = '200000', file] = args;
  measure(`synthetic (${records})`, synthetic(Number(records)));
  if (file) {
    const imported = importPerfDataFile(file);
    measure(file, decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] }));
  }
}

// Run, unless imported (for mixedSnapshot).
if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof BenchUnavailableError ? error.message : ((error as Error).stack ?? String(error))}\n`);
    process.exitCode = 1;
  });
