// `ringside decode FILE.data`: perf.data written by `perf record` to the same outputs as capture
// (JSON Lines, perf.data, HTML). Every record is decoded in full before anything is written
// (perfdata/damage.ts): a damaged one stops the decode naming its file offset, or with
// --keep-going is left out of the output and counted, on stderr and in the output's notes.
import type { DecodeOptions } from './args';
import { decodeChecked, describeSkipped, importPerfDataFile } from '../perfdata/index';
import { SnapshotWriter } from './output';

export async function runDecode(options: DecodeOptions): Promise<number> {
  const imported = importPerfDataFile(options.input, { keepGoing: options.keepGoing });
  for (const warning of imported.warnings) process.stderr.write(`ringside: ${options.input}: ${warning}\n`);
  const { decoded, skipped } = decodeChecked(imported, options.input, {
    keepGoing: options.keepGoing,
    hint: 'ringside decode --keep-going leaves damaged records out and counts them',
  });
  const skippedText = skipped ? describeSkipped(skipped) : undefined;
  // What the file could not give, shown on the timeline page as a recording's limitations are.
  const notes = [...imported.warnings, ...(skippedText ? [skippedText] : [])];
  const writer = new SnapshotWriter({ format: options.format, output: options.output, fromFile: true });
  try {
    await writer.write(decoded, [], notes);
  } finally {
    await writer.close();
  }
  const anomalies = decoded.anomalies.length ? `, ${decoded.anomalies.length} anomalies` : '';
  process.stderr.write(`ringside: ${options.input}: ${decoded.columns.length} records${anomalies}${skipped ? `, ${skippedText}` : ''}\n`);
  return 0;
}
