// `ringside decode FILE.data`: perf.data written by `perf record` to the same JSON Lines as capture.
import type { DecodeOptions } from './args';
import { importPerfDataFile } from '../perfdata/index';
import { decodeSnapshot } from '../decode/columns';
import { SnapshotWriter } from './output';

export async function runDecode(options: DecodeOptions): Promise<number> {
  const imported = importPerfDataFile(options.input, { keepGoing: options.keepGoing });
  for (const warning of imported.warnings) process.stderr.write(`ringside: ${options.input}: ${warning}\n`);
  const decoded = decodeSnapshot(imported.raw);
  const writer = new SnapshotWriter({ format: 'jsonl', output: options.output });
  try {
    await writer.write(decoded);
  } finally {
    await writer.close();
  }
  process.stderr.write(`ringside: ${options.input}: ${decoded.columns.length} records${decoded.anomalies.length ? `, ${decoded.anomalies.length} anomalies` : ''}\n`);
  return 0;
}
