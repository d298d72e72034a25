// `-o FILE.html`: a self-contained timeline page (the same webview bundle, data embedded) that
// opens offline in any browser, for attaching a snapshot to a bug report.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DecodedSnapshot } from '../native/decode/types';
import { writeFileAtomic } from '../native/sys/safe-file';
import type { RecordDetails } from '../shared/protocol';
import { renderStandaloneHtml } from './standalone';
import { snapshotToWire, rowDetails } from './wire';
import type { FrameSymbols } from './frame-symbols';
import { CallchainEmbedder } from './embedded-callchains';
import { ProfileTables } from '../native/tables/profile-tables';
import { Sample } from '../native/abi/uapi';

/** Details embedded per row up to this many rows; past it the page shows the columns only. */
const MAX_EMBEDDED_DETAILS = 20000;

function webviewAssets(): { script: string; css: string } {
  // dist/cli.js sits beside dist/webview; compiled tests run from out/host.
  const candidates = [path.join(__dirname, 'webview'), path.resolve(__dirname, '../../dist/webview')];
  for (const dir of candidates) {
    const script = path.join(dir, 'timeline.js');
    if (existsSync(script)) return { script: readFileSync(script, 'utf8'), css: readFileSync(path.join(dir, 'timeline.css'), 'utf8') };
  }
  throw new Error(`the timeline page is not built (looked in ${candidates.join(', ')}); run npm run build`);
}

/** Writes the page to `file`: mode 0600 (it holds comms, addresses, command lines), whole or not at all. */
export function writeStandaloneHtml(file: string, snapshot: DecodedSnapshot, symbols?: FrameSymbols, limitations: readonly string[] = []): void {
  const takenAtMs = Date.now();
  // One stack and frame table for the page's stacks and its details' callchains, built only when a sample has a callchain.
  const tables = snapshot.events.some((e) => (e.attr.sampleType & Sample.CALLCHAIN) !== 0) ? new ProfileTables(snapshot) : undefined;
  const { start, threadStates, batches } = snapshotToWire(snapshot, { snapshotId: 's1', name: path.basename(file), takenAtMs, symbols, limitations, tables });
  const details: Record<number, RecordDetails> = {};
  const embedder = new CallchainEmbedder(tables);
  const rows = Math.min(snapshot.columns.length, MAX_EMBEDDED_DETAILS);
  for (let row = 0; row < rows; row++) {
    try {
      details[row] = rowDetails(snapshot, row, symbols, embedder);
    } catch {
      // a record that does not decode is still on the timeline; its pane says it has no details
    }
  }
  const { script, css } = webviewAssets();
  writeFileAtomic(
    file,
    renderStandaloneHtml({
      script,
      css,
      data: {
        title: `Ringside — ${path.basename(file)}`,
        snapshots: [{ start, ...(threadStates ? { threadStates } : {}), batches, details, callchains: embedder.callchains }],
      },
    }),
  );
}
