// Profiling aid for the decoder (not part of `npm run bench`): fills a real 64 MiB flight-recorder
// ring with the bench workload, takes one snapshot and decodes it repeatedly, so that
//   node --cpu-prof --cpu-prof-dir=/tmp/prof out/bench/profile-decode.js [basic|callchain+raw] [MiB] [decodes] [e2e]
// shows where decodeSnapshot spends its time (open the .cpuprofile in Chrome DevTools or VS Code).
// With `e2e` each iteration is a whole capture (Recorder.snapshot + decodeSnapshot, workload running);
// with `live` the same copy is decoded while the workload keeps running (to see its interference);
// with `arena` the same copy is decoded into columns reused through a ColumnArena (as the bench does).

import { mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Recorder } from '../native/perf/recorder';
import { decodeSnapshot } from '../native/decode/columns';
import { ColumnArena } from '../native/decode/arena';
import { allocateDecodableCopy } from '../native/decode/wasm/copy-room';
import { layouts } from './kernel';
import { checkPrerequisites, compileC } from './tools';
import { median, nowNs } from './stats';

async function main(): Promise<void> {
  const [layoutName = 'basic', sizeMib = '64', decodes = '30', mode = 'decode'] = process.argv.slice(2);
  const endToEnd = mode === 'e2e';
  const layout = layouts().find((l) => l.name === layoutName);
  if (!layout) throw new Error(`unknown layout ${layoutName} (basic, callchain+raw)`);
  const { gcc } = checkPrerequisites();
  const tempDir = mkdtempSync(join(tmpdir(), 'ringside-profile-'));
  const workload = compileC(gcc, join(__dirname, '..', '..', 'bench', 'getpid_loop.c'), tempDir, 'getpid_loop', ['-O1', '-g', '-fno-omit-frame-pointer']);
  const child = spawn(workload, [], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const bytes = Number(sizeMib) * 1024 * 1024;
  // Copies made as the CLI and the extension make them: decodable, with a room for their columns.
  const recorder = await Recorder.open({
    events: [layout.event],
    target: { kind: 'pid', pid: child.pid! },
    pages: bytes / 4096,
    sideband: false,
    allocateCopy: allocateDecodableCopy,
  });
  try {
    // The flight-recorder ring (the first ring listed may be another: rings are listed per ring group).
    const written = () =>
      recorder
        .ringStats()
        .filter((ring) => ring.direction === 'backward')
        .reduce((most, ring) => (ring.bytesWritten > most ? ring.bytesWritten : most), 0n);
    while (written() < BigInt(bytes * 2)) await new Promise((resolve) => setTimeout(resolve, 20));
    const snapshot = recorder.snapshot();
    if (!endToEnd && mode !== 'live') child.kill('SIGKILL');
    const times: number[] = [];
    let rows = 0;
    const arena = mode === 'arena' ? new ColumnArena() : undefined;
    for (let i = 0; i < Number(decodes); i++) {
      arena?.warm();
      const started = nowNs();
      const columns = decodeSnapshot(endToEnd ? recorder.snapshot() : snapshot, { arena }).columns;
      times.push(nowNs() - started);
      rows = columns.length;
      arena?.recycle(columns);
    }
    console.log(
      `${layout.name} ${sizeMib} MiB: ${rows} records, median ${endToEnd ? 'snapshot + decode' : 'decode'} ${(median(times) / 1e6).toFixed(2)} ms = ${((rows / median(times)) * 1e3).toFixed(2)} Mrec/s`,
    );
  } finally {
    recorder.dispose();
    child.kill('SIGKILL');
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
