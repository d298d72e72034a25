// The pure-core half of the Backend: decoding, JSON Lines, perf.data import, and attaching to rings
// we did not open. backend.ts adds recording (our own Recorder) on top.

import { readFile } from 'node:fs/promises';
import { decodeSnapshot } from '../../native/decode/columns';
import { ColumnArena } from '../../native/decode/arena';
import { formatRecordJson } from '../../native/decode/jsonl';
import { readPerfData } from '../../native/perfdata/reader';
import { exportSnapshot } from '../../native/perfdata/index';
import { writeStandaloneHtml } from '../../host/html-file';
import type { DecodedSnapshot } from '../../native/decode/types';
import { borrowForeignRing } from '../../native/attach/foreign';
import { attachKeeperRings } from '../../native/keeper/attach';
import type { CopyBufferOptions } from '../../native/perf/borrowed';
import type { Backend } from './ports';

export type CoreBackend = Omit<Backend, 'record' | 'resolveEvents'>;

/** Column memory faulted in per event-loop turn while idle: a few ms, so the loop stays responsive. */
const COLUMN_WARM_SLICE_BYTES = 8 << 20;

/** `copyBuffers` is read at every attach, so a changed setting applies to the next one. */
export function createCoreBackend(copyBuffers: () => CopyBufferOptions = () => ({})): CoreBackend {
  // Snapshots decode into column memory faulted in while idle, as the copy buffers are. Decoded
  // snapshots stay with the session (and the panels reading them) and are never handed back, so
  // the arena only ever prepares fresh memory: one spare set of columns as large as the last snapshot's.
  const arena = new ColumnArena();
  let warming: ReturnType<typeof setImmediate> | undefined;
  const warmSlice = (): void => {
    warming = arena.warm(COLUMN_WARM_SLICE_BYTES) ? undefined : setImmediate(warmSlice);
  };
  return {
    decode: (raw) => {
      const decoded = decodeSnapshot(raw, { arena });
      warming ??= setImmediate(warmSlice);
      return decoded;
    },
    recordJson: (snapshot, row) => formatRecordJson(snapshot, row),
    async readPerfData(file: string): Promise<DecodedSnapshot> {
      const bytes = new Uint8Array(await readFile(file));
      const imported = readPerfData(bytes, file, { keepGoing: true });
      return decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: Date.now(), pauseWindowNs: [] });
    },
    async writePerfData(snapshot, file): Promise<void> {
      await exportSnapshot(file, snapshot);
    },
    async writeHtml(snapshot, file, symbols): Promise<void> {
      writeStandaloneHtml(file, snapshot, symbols);
    },
    async attachKeeper(state) {
      return attachKeeperRings(state, copyBuffers());
    },
    async borrowForeign(pid, fd, hint) {
      return borrowForeignRing(pid, fd, hint, copyBuffers()).source;
    },
  };
}
