// The pure-core half of the Backend: decoding, JSON Lines, perf.data import, and attaching to rings
// we did not open. backend.ts adds recording (our own Recorder) on top.

import { decodeSnapshot } from '../../native/decode/columns';
import { ColumnArena } from '../../native/decode/arena';
import { DecodePool, type DecodePoolOptions } from '../../native/decode-pool/pool';
import { formatRecordJson } from '../../native/decode/jsonl';
import { exportSnapshot, joinBatches, readPerfDataFileInSteps, recordedUserBuildIds, type PerfDataBatch } from '../../native/perfdata/index';
import type { EventDescription } from '../../native/abi/snapshot';
import { writeStandaloneHtml } from '../../host/html-file';
import { borrowForeignRing } from '../../native/attach/foreign';
import { attachKeeperRings } from '../../native/keeper/attach';
import type { CopyBufferOptions } from '../../native/perf/borrowed';
import type { Backend, OpenedPerfData } from './ports';

export type CoreBackend = Omit<Backend, 'record' | 'resolveEvents'>;

/**
 * Records of an opened perf.data decoded together for the panel while the file is read: a part holds this much (a few
 * of perf's rounds, which are often a few KiB each), so the page gets a few dozen appends of a big file, not thousands.
 */
const OPEN_PART_BYTES = 512 << 10;

/** Column memory faulted in per event-loop turn while idle: a few ms, so the loop stays responsive. */
const COLUMN_WARM_SLICE_BYTES = 8 << 20;

/** `copyBuffers` is read at every attach, so a changed setting applies to the next one; `decodePool`: the pool's sizes (tests). */
export function createCoreBackend(copyBuffers: () => CopyBufferOptions = () => ({}), decodePool: DecodePoolOptions = {}): CoreBackend {
  // Snapshots decode into column memory faulted in while idle, as the copy buffers are. Decoded
  // snapshots stay with the session (and the panels reading them) and are never handed back, so
  // the arena only ever prepares fresh memory: one spare set of columns as large as the last snapshot's.
  // Per-CPU rings large enough to pay for it decode and merge on worker threads (DecodePool.usesWorkers),
  // so the arena is shared memory; the workers start with the first such snapshot and close() ends them.
  const pool = new DecodePool(decodePool);
  const arena = new ColumnArena({ shared: true });
  let warming: ReturnType<typeof setImmediate> | undefined;
  const warmSlice = (): void => {
    warming = arena.warm(COLUMN_WARM_SLICE_BYTES) ? undefined : setImmediate(warmSlice);
  };
  return {
    async decode(raw) {
      const decoded = await pool.decode(raw, { arena });
      warming ??= setImmediate(warmSlice);
      return decoded;
    },
    decodeIncrement: (raw) => pool.decode(raw),
    async close() {
      if (warming) clearImmediate(warming);
      warming = undefined;
      await pool.close();
    },
    recordJson: (snapshot, row) => formatRecordJson(snapshot, row),
    async readPerfData(file, between = async () => {}, onRecords): Promise<OpenedPerfData> {
      // Read a step at a time so the host's event loop (and so a Cancel) is served while a big file is read; the
      // records are decoded once, as one ring, so the capture is the one the whole file read at once gives. Meanwhile
      // the records perf's rounds let go are decoded a part at a time for the panel to paint while the rest is read.
      let part: PerfDataBatch[] = [];
      let partBytes = 0;
      let events: readonly EventDescription[] = [];
      const tell = () => {
        if (part.length === 0 || !onRecords) return;
        const ring = joinBatches(part, file);
        part = [];
        partBytes = 0;
        onRecords(decodeSnapshot({ events: [...events], rings: [ring], takenAtMs: Date.now(), pauseWindowNs: [] }));
      };
      const imported = await readPerfDataFileInSteps(file, between, {
        keepGoing: true,
        ...(onRecords
          ? {
              onRound: (batch: PerfDataBatch, described: readonly EventDescription[]) => {
                events = described;
                part.push(batch);
                partBytes += batch.ring.bytes.length;
                if (partBytes >= OPEN_PART_BYTES) tell();
              },
            }
          : {}),
      });
      tell();
      await between('decode');
      const decodeStarted = performance.now();
      const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: Date.now(), pauseWindowNs: [] });
      const { readMs, indexMs, orderMs, roundsInOrder } = imported;
      const buildIds = recordedUserBuildIds(imported.features.buildIds);
      return { decoded, readMs, indexMs, orderMs, decodeMs: performance.now() - decodeStarted, partsInOrder: roundsInOrder, buildIds };
    },
    async writePerfData(snapshot, file): Promise<void> {
      await exportSnapshot(file, snapshot);
    },
    async writeHtml(snapshot, file, symbols): Promise<void> {
      writeStandaloneHtml(file, snapshot, symbols);
    },
    async attachKeeper(state) {
      return attachKeeperRings(state, { ...copyBuffers(), neededSidebandOnly: true });
    },
    async borrowForeign(pid, fd, hint) {
      return borrowForeignRing(pid, fd, hint, copyBuffers()).source;
    },
  };
}
