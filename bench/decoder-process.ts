// The decoder in a node process of its own, as the C walker is in its own: both sides start fresh
// and read the same ring bytes from the same file. Inside the bench's own process, after the
// earlier cases (several GiB of rings, copies, perf.data and columns allocated and dropped), the
// decoder ran 15-20% slower than here on the same bytes (72 against 86-88 M records/s at 64 MiB,
// basic layout) and the decode pool two to three times as slow; the C walker never paid any of
// that. The bench still times the decoder in its own process too, and reports that beside this.
//
// Child: `node decoder-process.js DESCRIPTION BYTES` (DESCRIPTION: v8-serialized events and the
// ring copy without its bytes; BYTES: the file writeRingBytes wrote, the one the C walker reads),
// then one question per line on stdin, one line of JSON per answer on stdout:
//   decode RUNS WARMUP FRESH  times decodeSnapshot over the ring (FRESH 0: columns from a warm
//                             ColumnArena, handed back and re-warmed untimed between runs, as the C
//                             walker reuses its columns; 1: fresh columns, page faults included)
//   counts COUNT RUNS WARMUP  the ring's records as COUNT simulated per-CPU rings (rings.ts),
//                             one thread and a DecodePool
//   parallel COUNT RUNS WARMUP
//                             the same COUNT rings every time (dealt out at the first ask), one
//                             thread and a DecodePool alternating: one round of a paired
//                             measurement against the C walker (ParallelMeasurement)
//   wasm RUNS WARMUP          times the decoder's fast loop as WebAssembly over the same bytes
//                             (wasm-walker.ts), on warm columns

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { deserialize, serialize } from 'node:v8';
import { ColumnArena } from '../native/decode/arena';
import { decodeSnapshot } from '../native/decode/columns';
import { decodableCopyOf } from '../native/decode/wasm/copy-room';
import { DecodePool } from '../native/decode-pool/pool';
import type { DecodedSnapshot } from '../native/decode/types';
import type { EventDescription, RingCopy } from '../native/abi/snapshot';
import { columnChecksum, type SideMeasurement } from './checksum';
import { measureRingCount, splitIntoRings, type RingCountResult } from './rings';
import { measureParallel } from './parallel';
import { ServeProcess } from './serve';
import { WasmWalker } from './wasm-walker';
import { median, nowNs } from './stats';

interface DecoderInput {
  readonly events: readonly EventDescription[];
  /** The ring copy, its bytes left out (they are in the bytes file). */
  readonly ring: RingCopy;
}

/** One round of `parallel`: medians of the round's runs, ns, and the rows decoded. */
export interface ParallelMeasurement {
  readonly records: number;
  readonly parallel_ns: number;
  readonly single_ns: number;
}

/** Writes a ring copy's valid bytes to `dir` for the measuring processes (the C walker and the decoder both read it); returns its path. */
export function writeRingBytes(dir: string, copy: RingCopy): string {
  const file = join(dir, `ring-${copy.ringId}.bin`);
  writeFileSync(file, copy.bytes.subarray(0, copy.validBytes));
  return file;
}

/** The parent's handle on one decoder process over one ring copy. */
export class DecoderProcess {
  private readonly server: ServeProcess;

  /**
   * `bytesFile`: where writeRingBytes put the copy's bytes. `script`: the decoder process to run, this
   * build's by default (decode-vs-c.ts runs another build's beside it).
   */
  constructor(tempDir: string, events: readonly EventDescription[], copy: RingCopy, bytesFile: string, script = __filename) {
    const description = join(tempDir, `ring-${copy.ringId}.v8`);
    const input: DecoderInput = { events, ring: { ...copy, bytes: new Uint8Array(0) } };
    writeFileSync(description, serialize(input));
    // Without --expose-gc (npm run bench gives it to the bench itself): under it, this process's
    // decodes of a 1 MiB ring took about 1 ms instead of 0.09 ms in bursts of several runs, and
    // without it they did not (measured here, alternating warm and fresh columns).
    // No --no-liftoff: the product's decoder runs its WebAssembly loop as V8 tiers it (baseline
    // code first, optimised code once it has run enough), and so does this process; the warm-up
    // runs before the timed ones cover that, for the decoder and the walker alike.
    this.server = new ServeProcess('the decoder process', process.execPath, [script, description, bytesFile]);
  }

  /** `fresh`: columns allocated inside each timed run (page faults), instead of reused warm ones. */
  measure(runs: number, warmup: number, fresh = false): Promise<SideMeasurement> {
    return this.server.ask<SideMeasurement>(`decode ${runs} ${warmup} ${fresh ? 1 : 0}`);
  }

  /** The decoder's fast loop as WebAssembly over the same bytes, warm columns (wasm-walker.ts). */
  measureWasm(runs: number, warmup: number): Promise<SideMeasurement> {
    return this.server.ask<SideMeasurement>(`wasm ${runs} ${warmup}`);
  }

  ringCount(count: number, runs: number, warmup: number): Promise<RingCountResult> {
    return this.server.ask<RingCountResult>(`counts ${count} ${runs} ${warmup}`);
  }

  /** One round of the pool over the ring's records as `count` simulated per-CPU rings, the same rings every round. */
  parallel(count: number, runs: number, warmup: number): Promise<ParallelMeasurement> {
    return this.server.ask<ParallelMeasurement>(`parallel ${count} ${runs} ${warmup}`);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

async function serve(descriptionFile: string, bytesFile: string): Promise<void> {
  const given = deserialize(readFileSync(descriptionFile)) as DecoderInput;
  const events = given.events;
  // Copied into memory of its own with room for its columns after it, as the recorder's copies are
  // (allocateCopy: allocateDecodableCopy, as the CLI and the extension open it): the decoder
  // decodes such a copy in place with its WebAssembly loop. Columns are handed back to the arena
  // after each run, which frees the room for the next. Fresh columns (page faults included) are
  // timed on a plain copy, the JavaScript loop, as before the room existed.
  const fileBytes = readFileSync(bytesFile);
  const ring: RingCopy = { ...given.ring, bytes: decodableCopyOf(fileBytes) };
  const input = { events, rings: [ring] };
  const plainInput = { events, rings: [{ ...ring, bytes: new Uint8Array(fileBytes) }] };
  const arena = new ColumnArena();
  let fromArena: DecodedSnapshot | undefined;
  let pool: DecodePool | undefined;
  let wasm: WasmWalker | undefined;
  // The simulated per-CPU rings of `parallel`, by count: dealt out once, so every round reads the same memory.
  const dealt = new Map<number, RingCopy[]>();
  try {
    for await (const line of createInterface({ input: process.stdin })) {
      const [verb, ...numbers] = line.trim().split(/\s+/);
      const [a, b, c] = numbers.map(Number);
      if (verb === 'decode') {
        const runs = a;
        const warmup = b;
        const fresh = c === 1;
        const times: number[] = [];
        let last: DecodedSnapshot | undefined;
        for (let i = -warmup; i < runs; i++) {
          let ns: number;
          if (fresh) {
            const started = nowNs();
            last = decodeSnapshot(plainInput);
            ns = nowNs() - started;
          } else {
            if (fromArena) arena.recycle(fromArena.columns);
            arena.warm();
            const started = nowNs();
            fromArena = decodeSnapshot(input, { arena });
            ns = nowNs() - started;
            last = fromArena;
          }
          if (i >= 0) times.push(ns);
        }
        const answer: SideMeasurement = {
          records: last?.columns.length ?? 0,
          median_ns: median(times),
          runs_ns: times,
          checksum: last ? columnChecksum(last.columns) : {},
        };
        process.stdout.write(`${JSON.stringify(answer)}\n`);
      } else if (verb === 'wasm') {
        wasm ??= new WasmWalker(events, ring);
        process.stdout.write(`${JSON.stringify(wasm.measure(a, b))}\n`);
      } else if (verb === 'parallel') {
        pool ??= new DecodePool({ minWorkerBytes: 0 });
        let rings = dealt.get(a);
        if (!rings) {
          rings = splitIntoRings(ring, a);
          dealt.set(a, rings);
        }
        const result = await measureParallel({ events, rings }, b, c, pool);
        const answer: ParallelMeasurement = { records: result.records, parallel_ns: result.parallelNs, single_ns: result.singleNs };
        process.stdout.write(`${JSON.stringify(answer)}\n`);
      } else if (verb === 'counts') {
        // Workers for every ring count of two or more rings, whatever their size (the product's
        // threshold would keep the 64-ring case's 1 MiB rings on one thread): this measures the pool.
        pool ??= new DecodePool({ minWorkerBytes: 0 });
        const result = await measureRingCount(events, ring, a, b, c, pool);
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } else {
        throw new Error(`decoder process: unknown question ${JSON.stringify(line)}`);
      }
    }
  } finally {
    await pool?.close();
  }
}

if (require.main === module) {
  serve(process.argv[2], process.argv[3]).catch((error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(1);
  });
}
