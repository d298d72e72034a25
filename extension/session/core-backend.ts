// The pure-core half of the Backend: decoding, JSON Lines, perf.data import, and attaching to rings
// we did not open. backend.ts adds recording (our own Recorder) on top.

import { readFile } from 'node:fs/promises';
import { decodeSnapshot } from '../../native/decode/columns';
import { formatRecordJson } from '../../native/decode/jsonl';
import { readPerfData } from '../../native/perfdata/reader';
import { exportSnapshot } from '../../native/perfdata/index';
import { writeStandaloneHtml } from '../../host/html-file';
import type { DecodedSnapshot } from '../../native/decode/types';
import { attachKeeperRings, borrowForeignRing, type CopyBufferOptions } from './attached-source';
import type { Backend } from './ports';

export type CoreBackend = Omit<Backend, 'record' | 'resolveEvents'>;

/** `copyBuffers` is read at every attach, so a changed setting applies to the next one. */
export function createCoreBackend(copyBuffers: () => CopyBufferOptions = () => ({})): CoreBackend {
  return {
    decode: (raw) => decodeSnapshot(raw),
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
