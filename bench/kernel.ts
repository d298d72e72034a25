// The kernel-side cases, on real rings filled by a real tracepoint: pause window against memcpy,
// decoder against the C walker over the same bytes, and "capture requested -> columns" against
// `perf script` over a perf.data holding the same records.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Recorder } from '../native/perf/recorder';
import { onlineCpus } from '../native/perf/procfs';
import { MmapPage, RecordType, Sample } from '../native/abi/uapi';
import { decodeSnapshot } from '../native/decode/columns';
import { ColumnArena } from '../native/decode/arena';
import { allocateDecodableCopy, decodableCopyOf } from '../native/decode/wasm/copy-room';
import type { DecodedSnapshot, RecordColumns } from '../native/decode/types';
import type { ResolvedEvent, RingCopy } from '../native/abi/snapshot';
import { resolveEventSpec } from '../native/specs/resolve';
import { exportSnapshot } from '../native/perfdata';
import { BenchUnavailableError, median, nowNs, repeat } from './stats';
import { columnChecksum, type SideMeasurement } from './checksum';
import { DecoderProcess, writeRingBytes } from './decoder-process';
import { ServeProcess } from './serve';

export const TRACEPOINT = 'syscalls:sys_enter_getpid';

export type LayoutName = 'basic' | 'callchain+raw';

export interface Layout {
  readonly name: LayoutName;
  /** What the records carry, for the table. */
  readonly description: string;
  readonly event: ResolvedEvent;
}

/** IDENTIFIER|IP|TID|TIME|CPU|PERIOD (the recorder always adds IDENTIFIER), and the same plus CALLCHAIN|RAW. */
export function layouts(): Layout[] {
  const plain = resolveEventSpec(TRACEPOINT);
  const basic: ResolvedEvent = { ...plain, attr: { ...plain.attr, sampleType: plain.attr.sampleType & ~Sample.RAW } };
  const full = resolveEventSpec(TRACEPOINT, { callchain: true });
  return [
    { name: 'basic', description: 'IDENTIFIER|IP|TID|TIME|CPU|PERIOD', event: basic },
    { name: 'callchain+raw', description: 'IDENTIFIER|IP|TID|TIME|CPU|PERIOD|CALLCHAIN|RAW', event: full },
  ];
}

export interface Tools {
  readonly perf: string;
  readonly walker: string;
  /** bench/pause_copy.c: the pause window in C on the same ring. */
  readonly pauseCopy: string;
  readonly workload: string;
  readonly tempDir: string;
}

export interface KernelCaseResult {
  readonly layout: LayoutName;
  readonly ringBytes: number;
  readonly records: number;
  readonly sampleRecords: number;
  readonly recordBytes: number;
  /** Median pause window (pause ioctl -> copy -> resume returned), default copy mode, into the warmed spare. */
  readonly pauseNs: number;
  /** The same window copying into a fresh buffer (no spare): page faults inside the pause. */
  readonly pauseFreshNs: number;
  readonly pauseMemcpyModeNs: number;
  /** Median libc memcpy of the data-area size from the same mapping into a freshly allocated buffer. */
  readonly memcpyNs: number;
  /** The same memcpy into a buffer already written once (no page faults). */
  readonly memcpyWarmNs: number;
  /** Median over interleaved pairs of pause window (warm spare) / memcpy into an already-written buffer. */
  readonly pauseVsMemcpy: number;
  /** Median pause window of bench/pause_copy.c on the same ring (pause, copy into a warm buffer, resume). */
  readonly pauseCNs: number;
  /** Median over rounds of (Ringside's pause window) / (C's), measured back to back. */
  readonly pauseVsC: number;
  readonly copyMode: string;
  readonly decodeNs: number;
  /** The decoder writing into fresh columns (no arena): its page-fault cost, beside the C walker's. */
  readonly decodeFreshNs: number;
  /** The decoder on warm columns inside the bench's own process (decodeNs is in a fresh process, as the C walker). */
  readonly decodeInBenchProcessNs: number;
  /** The C walker over columns reused warm across runs (the baseline of decode_vs_c). */
  readonly cWalkerNs: number;
  /** The C walker allocating and first-touching its columns inside the timed run: its page-fault cost. */
  readonly cWalkerFreshNs: number;
  /** Median over alternating rounds of (decoder rec/s) / (C walker rec/s). */
  readonly decodeVsC: number;
  /** The decoder's fast loop as WebAssembly (wasm-walker.ts) in the decoder's process, warm columns. */
  readonly wasmWalkerNs: number;
  /** Median over the same rounds of (WebAssembly walker rec/s) / (C walker rec/s). */
  readonly wasmVsC: number;
  readonly snapshotToColumnsNs: number;
  /**
   * The stages of snapshot -> columns, medians of the same runs: Recorder.snapshot() (pause, copy, resume of every
   * ring), of which the pause window, and decodeSnapshot.
   */
  readonly snapshotNs: number;
  readonly snapshotPauseNs: number;
  readonly snapshotDecodeNs: number;
  readonly perfScriptNs: number;
  readonly perfScriptRecords: number;
  readonly perfDataSource: string;
  readonly decoded: DecodedSnapshot;
  /** The backward ring's decoded columns alone (what transport and render move). */
  readonly ringColumns: RecordColumns;
}

/** Starts the getpid loop; it keeps the tracepoint firing until killed. */
/**
 * The CPU the workload is pinned to. Each case records that one CPU, so it fills exactly one
 * flight-recorder ring (an attached process would get a ring per CPU, and the workload could move).
 */
const WORKLOAD_CPU = onlineCpus()[onlineCpus().length - 1];
/** How long each side's decoder is warmed before decode_vs_c's rounds (runKernelCase says why). */
const SETTLE_NS = 1e9;
/** Rings up to this size are measured in at least SMALL_RING_ROUNDS rounds. */
const SMALL_RING_BYTES = 16 * 1024 * 1024;
const SMALL_RING_ROUNDS = 15;

function startWorkload(workload: string): ChildProcess {
  // taskset execs the workload in the same process, pinned.
  const child = spawn('taskset', ['-c', String(WORKLOAD_CPU), workload], { stdio: 'ignore' });
  return child;
}

async function stopWorkload(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

async function waitForSpawn(child: ChildProcess): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new BenchUnavailableError(`cannot start the workload: ${error.message}`)));
  });
  return child.pid!;
}

/** Waits until the kernel has written the ring over at least twice: every byte of the copy is a real record. */
async function waitUntilWrapped(recorder: Recorder, ringBytes: number): Promise<void> {
  // 30 s per 64 MiB: a loaded machine fills a 256 MiB ring twice slowly.
  const seconds = 30 * Math.max(1, ringBytes / (64 << 20));
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const stats = recorder.ringStats().find((s) => s.direction === 'backward');
    if (!stats) throw new Error('the recorder opened no backward ring');
    if (stats.bytesWritten >= BigInt(ringBytes * 2)) return;
    if (Date.now() > deadline) {
      throw new BenchUnavailableError(`the ring was written ${stats.bytesWritten} bytes in ${seconds} s, not 2 x ${ringBytes}: is ${TRACEPOINT} firing?`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The C walker (one long-lived process per case, see serve.ts) over one ring copy's bytes, read from a file. */
export class WalkerProcess {
  private readonly server: ServeProcess;

  /** `file`: the copy's bytes, as writeRingBytes wrote them. */
  constructor(tools: Tools, file: string, copy: RingCopy, decoded: DecodedSnapshot) {
    const event = decoded.events[copy.defaultEvent];
    const ids = decoded.events.flatMap((e) => e.ids.map((id) => `${id}:${e.index}`));
    this.server = new ServeProcess('the C walker', tools.walker, [file, String(event.attr.sampleType), String(copy.cpu), 'serve', '0', ...ids]);
  }

  /** `fresh`: allocate and first-touch the columns inside each timed run (the page-fault cost), instead of reusing warm ones. */
  measure(runs: number, warmup: number, fresh = false): Promise<SideMeasurement> {
    return this.server.ask<SideMeasurement>(`${runs} ${warmup} ${fresh ? 1 : 0}`);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/** Times `perf script` over `file` (output discarded), and counts the samples it prints once. */
function runPerfScript(perf: string, file: string, runs: number, warmup: number): { ns: number; records: number } {
  const once = (): number => {
    const started = nowNs();
    const result = spawnSync(perf, ['script', '-i', file], { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
    const elapsed = nowNs() - started;
    if (result.status !== 0) throw new BenchUnavailableError(`perf script failed on ${file}: ${result.stderr.toString().slice(0, 2000)}`);
    return elapsed;
  };
  for (let i = 0; i < warmup; i++) once();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(once());
  // One line per sample: ask only for the time field (callchains would add lines).
  const counted = spawnSync('sh', ['-c', `"$0" script -i "$1" -F time 2>/dev/null | wc -l`, perf, file], { encoding: 'utf8' });
  if (counted.status !== 0) throw new BenchUnavailableError(`perf script -F time failed on ${file}`);
  return { ns: median(times), records: Number(counted.stdout.trim()) };
}

export interface KernelCaseOptions {
  readonly runs: number;
  readonly warmup: number;
  readonly perfScriptRuns: number;
  readonly log: (line: string) => void;
}

/** One ring size and layout: fill a real ring, then measure every kernel-side case on it. */
export async function runKernelCase(tools: Tools, layout: Layout, ringBytes: number, options: KernelCaseOptions): Promise<KernelCaseResult> {
  const { runs, warmup, log } = options;
  const pages = ringBytes / 4096;
  const child = startWorkload(tools.workload);
  let recorder: Recorder | undefined;
  try {
    await waitForSpawn(child);
    recorder = await Recorder.open({ events: [layout.event], target: { kind: 'cpus', cpus: [WORKLOAD_CPU] }, pages, allocateCopy: allocateDecodableCopy });
    await waitUntilWrapped(recorder, ringBytes);
    const ring = recorder.backwardRings[0];
    const mapping = ring.mapping;
    const dataOffset = Number(mapping.readU64(MmapPage.DATA_OFFSET));
    const dataSize = ring.dataSize;

    // Pause window vs memcpy, interleaved so both see the same machine state. The product copies
    // into a spare buffer the recorder faulted in while idle (SpareCopyBuffer), so the key compares
    // that window with a memcpy into an already-written buffer: like with like. The window with no
    // spare (a fresh buffer, page faults inside the pause) and a memcpy into fresh pages are kept
    // beside it so the reader sees what warming buys.
    //
    // Each window is timed as the product meets it: after the recorder's own warmer has faulted the
    // spare in while this process waited (recorder.copyBuffersWarm), as the C side's window starts
    // after its process waited on its pipe. Faulting the spare in on this thread right before the
    // pause (as this case did) left the process a CPU hog at the pause: on this loaded 2-vCPU VM the
    // scheduler then preempts it inside a window of a few ms where it lets a process just woken run
    // on (16 MiB: 3.4 ms medians against C's 3.1 after a wait, 21 ms after warming here).
    log(`  ${layout.name} ${ringBytes >> 20} MiB: pause window vs memcpy`);
    const pause: number[] = [];
    const pauseFresh: number[] = [];
    const pauseMemcpyMode: number[] = [];
    const memcpyFresh: number[] = [];
    const memcpyWarm: number[] = [];
    const pauseRatios: number[] = [];
    // The baseline the issue sets: C pausing, copying and resuming the same ring (fd 3 of its process).
    const pauseC: number[] = [];
    const pauseVsCRatios: number[] = [];
    const cPause = new ServeProcess('the C pause-copy', tools.pauseCopy, [String(dataSize / 4096), 'serve'], [ring.event.fd]);
    const warmBuffer = new Uint8Array(dataSize);
    mapping.copyOut(dataOffset, warmBuffer, 0, dataSize);
    try {
      for (let i = -warmup; i < runs; i++) {
        await recorder.copyBuffersWarm(); // untimed: what the recorder does between snapshots
        const snap = ring.snapshot();
        await recorder.copyBuffersWarm();
        const snapMemcpy = ring.snapshot('memcpy');
        ring.spare.release();
        const snapFresh = ring.snapshot();
        const fresh = new Uint8Array(dataSize);
        let started = nowNs();
        mapping.copyOut(dataOffset, fresh, 0, dataSize);
        const freshNs = nowNs() - started;
        started = nowNs();
        mapping.copyOut(dataOffset, warmBuffer, 0, dataSize);
        const warmNs = nowNs() - started;
        await recorder.copyBuffersWarm();
        const cSnap = ring.snapshot();
        const c = await cPause.ask<{ median_ns: number }>('1 0');
        if (i < 0) continue;
        pauseC.push(c.median_ns);
        pauseVsCRatios.push(cSnap.pauseWindowNs / c.median_ns);
        pause.push(snap.pauseWindowNs);
        pauseFresh.push(snapFresh.pauseWindowNs);
        pauseMemcpyMode.push(snapMemcpy.pauseWindowNs);
        memcpyFresh.push(freshNs);
        memcpyWarm.push(warmNs);
        pauseRatios.push(snap.pauseWindowNs / warmNs);
      }
    } finally {
      await cPause.close();
    }

    // Capture requested -> decoded columns (the whole snapshot: flight-recorder ring and side-band).
    log(`  ${layout.name} ${ringBytes >> 20} MiB: snapshot -> columns`);
    let last: DecodedSnapshot | undefined;
    // Columns come from an arena, as in the product: the previous snapshot's are handed back (the
    // bench keeps none) and the arena is warmed while idle, as the copy buffers are.
    const arena = new ColumnArena();
    const stageSnapshot: number[] = [];
    const stagePause: number[] = [];
    const stageDecode: number[] = [];
    // Warm up on ~2M records and at least 4 snapshots first, as the decoder case below does: a live
    // session has taken a few snapshots before the one that matters (1 MiB rings would otherwise
    // time V8's tiers, 64 MiB ones the first faults of the process's column memory).
    const perSnapshot = decodeSnapshot(recorder.snapshot()).columns.length;
    const endToEndWarmup = Math.max(warmup, 4, Math.ceil(2_000_000 / Math.max(1, perSnapshot)));
    const endToEnd = await repeat(endToEndWarmup, runs, async () => {
      if (last) arena.recycle(last.columns);
      arena.warm();
      // Last, so the snapshot starts after a wait, as above. Untimed: the recorder idles between captures.
      await recorder!.copyBuffersWarm();
      const started = nowNs();
      const raw = recorder!.snapshot();
      const copied = nowNs();
      const decoded = decodeSnapshot(raw, { arena });
      const ended = nowNs();
      last = decoded;
      stageSnapshot.push(copied - started);
      stagePause.push(raw.pauseWindowNs.reduce((sum, ns) => sum + ns, 0));
      stageDecode.push(ended - copied);
      return ended - started;
    });
    const measured = (values: number[]) => median(values.slice(-runs));
    const decoded = last!;
    const copy = decoded.rings.find((r) => r.direction === 'backward')!;

    // perf script over a perf.data holding the same records (Ringside's own export of this
    // snapshot), while the workload still runs, as the capture above did.
    log(`  ${layout.name} ${ringBytes >> 20} MiB: perf script`);
    const perfData = join(tools.tempDir, `snapshot-${layout.name.replace(/\W/g, '-')}-${ringBytes >> 20}.data`);
    await exportSnapshot(perfData, decoded);
    const script = runPerfScript(tools.perf, perfData, options.perfScriptRuns, 1);
    let samples = 0;
    for (let i = 0; i < decoded.columns.length; i++) if (decoded.columns.kind[i] === RecordType.SAMPLE) samples++;
    if (script.records !== samples) {
      throw new Error(`perf script printed ${script.records} samples, the snapshot holds ${samples}`);
    }

    // The decoder against the C walker over the same bytes, each in a process of its own that
    // reads them from a file (decoder-process.ts says why not in this one), in alternating rounds
    // (the ratio is taken per round, so load from elsewhere hits both sides alike). The workload is
    // stopped first: both sides work on a copy. The decoder is also timed here, in the bench's own
    // process, for its own figure and for the columns the later cases use.
    await stopWorkload(child);
    log(`  ${layout.name} ${ringBytes >> 20} MiB: decoder vs C walker`);
    // The copy in a memory of its own with a free room (the snapshot's copy has its room holding
    // that snapshot's columns, which the later cases read).
    const ringOnly = { events: decoded.events, rings: [{ ...copy, bytes: decodableCopyOf(copy.bytes) }] };
    let ringDecoded: DecodedSnapshot | undefined;
    // Columns reused across runs through the arena (handed back and re-touched untimed, as the
    // product does while idle): like the C walker's warm columns.
    const ringArena = new ColumnArena();
    const decodeHere = () => {
      if (ringDecoded) ringArena.recycle(ringDecoded.columns);
      ringArena.warm();
      const started = nowNs();
      ringDecoded = decodeSnapshot(ringOnly, { arena: ringArena });
      return nowNs() - started;
    };
    // Warm the JIT on at least ~2M records, as a live session would after a few snapshots.
    const warmRuns = Math.max(warmup, Math.ceil(2_000_000 / Math.max(1, copy.validBytes / 56)));
    const decodeTimes: number[] = [];
    const decodeHereTimes: number[] = [];
    const walkerTimes: number[] = [];
    const walkerFreshTimes: number[] = [];
    const decodeFreshTimes: number[] = [];
    const wasmTimes: number[] = [];
    const ratios: number[] = [];
    const wasmRatios: number[] = [];
    let walker: SideMeasurement | undefined;
    let ours: SideMeasurement | undefined;
    let wasm: SideMeasurement | undefined;
    // Both sides warm up the same way inside each round: a few untimed passes over the same bytes,
    // then three timed ones.
    const warmInRound = Math.min(warmRuns, 5);
    const bytesFile = writeRingBytes(tools.tempDir, copy);
    const walkerProcess = new WalkerProcess(tools, bytesFile, copy, decoded);
    const decoderProcess = new DecoderProcess(tools.tempDir, decoded.events, copy, bytesFile);
    try {
      // Both spawns (forks of this process) are behind us before anything is timed.
      await walkerProcess.measure(1, 0);
      // Warm until V8 has settled, not for a number of records: a decode's fixed part (some forty
      // small functions) and the WebAssembly loop (baseline code first, optimised code once it has
      // run enough) tier up by calls as much as by rows, and at 1 MiB the decoder took 1-3k decodes
      // (0.1-0.3 s) to reach its steady time, 2x slower before. At 64 MiB 2M records is already more.
      const settle = async (measure: (runs: number, warmup: number) => Promise<SideMeasurement>): Promise<void> => {
        const first = await measure(1, warmRuns);
        const more = Math.ceil(SETTLE_NS / Math.max(1, first.median_ns)) - warmRuns;
        if (more > 0) await measure(1, more);
      };
      await settle((r, w) => decoderProcess.measure(r, w));
      // The WebAssembly walker's glue (each pass's setup, the records its loop leaves to
      // TypeScript) is JIT-compiled too: warmed as long as the decoder, or its first rounds at
      // 1 MiB measured that glue unoptimised (150 µs a pass where a warm one takes 45).
      await settle((r, w) => decoderProcess.measureWasm(r, w));
      for (let i = 0; i < warmRuns; i++) decodeHere();
      // A small ring's round takes a millisecond or two, and on a VM the speed both sides get moves
      // by 2x from one tens of milliseconds to the next: at 1 MiB three to five rounds gave 0.39 to
      // 0.54 for the same code. More rounds there cost little and narrow it.
      const rounds = ringBytes <= SMALL_RING_BYTES ? Math.max(runs, SMALL_RING_ROUNDS) : runs;
      for (let round = 0; round < rounds; round++) {
        walker = await walkerProcess.measure(3, warmInRound);
        ours = await decoderProcess.measure(3, warmInRound);
        decodeTimes.push(ours.median_ns);
        walkerTimes.push(walker.median_ns);
        ratios.push(walker.median_ns / ours.median_ns);
        wasm = await decoderProcess.measureWasm(3, warmInRound);
        wasmTimes.push(wasm.median_ns);
        wasmRatios.push(walker.median_ns / wasm.median_ns);
        walkerFreshTimes.push((await walkerProcess.measure(3, 1, true)).median_ns);
        decodeFreshTimes.push((await decoderProcess.measure(3, 1, true)).median_ns);
        for (let i = 0; i < warmInRound; i++) decodeHere();
        decodeHereTimes.push(median([decodeHere(), decodeHere(), decodeHere()]));
      }
    } finally {
      await walkerProcess.close();
      await decoderProcess.close();
    }
    const ringColumns = ringDecoded!.columns;
    const here = columnChecksum(ringColumns);
    const sides = [
      ['the decoder process', ours!.records, ours!.checksum],
      ['the decoder in this process', ringColumns.length, here],
      ['the WebAssembly walker', wasm!.records, wasm!.checksum],
    ] as const;
    for (const [side, records, checksum] of sides) {
      if (walker!.records !== records) throw new Error(`the C walker found ${walker!.records} records where ${side} found ${records}`);
      for (const [key, value] of Object.entries(checksum)) {
        if (walker!.checksum[key] !== value) throw new Error(`C walker and ${side} disagree on ${key}: ${walker!.checksum[key]} vs ${value}`);
      }
    }

    return {
      layout: layout.name,
      ringBytes: dataSize,
      records: ringColumns.length,
      sampleRecords: samples,
      recordBytes: copy.validBytes / Math.max(1, ringColumns.length),
      pauseNs: median(pause),
      pauseFreshNs: median(pauseFresh),
      pauseMemcpyModeNs: median(pauseMemcpyMode),
      memcpyNs: median(memcpyFresh),
      memcpyWarmNs: median(memcpyWarm),
      pauseVsMemcpy: median(pauseRatios),
      pauseCNs: median(pauseC),
      pauseVsC: median(pauseVsCRatios),
      copyMode: ring.mode,
      decodeNs: median(decodeTimes),
      decodeFreshNs: median(decodeFreshTimes),
      decodeInBenchProcessNs: median(decodeHereTimes),
      cWalkerNs: median(walkerTimes),
      cWalkerFreshNs: median(walkerFreshTimes),
      decodeVsC: median(ratios),
      wasmWalkerNs: median(wasmTimes),
      wasmVsC: median(wasmRatios),
      snapshotToColumnsNs: median(endToEnd),
      snapshotNs: measured(stageSnapshot),
      snapshotPauseNs: measured(stagePause),
      snapshotDecodeNs: measured(stageDecode),
      perfScriptNs: script.ns,
      perfScriptRecords: script.records,
      perfDataSource: 'Ringside export (exportSnapshot) of the same snapshot',
      decoded,
      ringColumns,
    };
  } finally {
    recorder?.dispose();
    await stopWorkload(child);
  }
}

export interface RingForCounts {
  readonly decoded: DecodedSnapshot;
  /** The snapshot's flight-recorder ring. */
  readonly copy: RingCopy;
  readonly records: number;
  /** The C walker over the ring's bytes, warm columns: median over `runs` rounds of the median of 3 passes. */
  readonly cWalkerNs: number;
}

/**
 * What the ring-count case needs and nothing else (no pause, perf script or fresh-column cases):
 * a real ring of `ringBytes` filled twice over, its snapshot decoded, and the C walker over its
 * bytes, measured as runKernelCase measures it.
 */
export async function captureRingForCounts(tools: Tools, layout: Layout, ringBytes: number, runs: number): Promise<RingForCounts> {
  const child = startWorkload(tools.workload);
  let recorder: Recorder | undefined;
  let decoded: DecodedSnapshot;
  try {
    await waitForSpawn(child);
    recorder = await Recorder.open({ events: [layout.event], target: { kind: 'cpus', cpus: [WORKLOAD_CPU] }, pages: ringBytes / 4096 });
    await waitUntilWrapped(recorder, ringBytes);
    decoded = decodeSnapshot(recorder.snapshot());
  } finally {
    recorder?.dispose();
    await stopWorkload(child);
  }
  const copy = decoded.rings.find((r) => r.direction === 'backward')!;
  const records = decodeSnapshot({ events: decoded.events, rings: [copy] }).columns.length;
  const walkerProcess = new WalkerProcess(tools, writeRingBytes(tools.tempDir, copy), copy, decoded);
  const times: number[] = [];
  try {
    for (let round = 0; round < runs; round++) {
      const walker = await walkerProcess.measure(3, 5);
      if (walker.records !== records) throw new Error(`the C walker found ${walker.records} records where the decoder found ${records}`);
      times.push(walker.median_ns);
    }
  } finally {
    await walkerProcess.close();
  }
  return { decoded, copy, records, cWalkerNs: median(times) };
}
