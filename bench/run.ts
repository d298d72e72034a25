// `npm run bench`: Ringside against the physical limit (memcpy, a C walker) and against perf
// (`perf script`), on real rings filled by a tracepoint in a tight syscall loop. Prints a readable
// table, then ONE final line of JSON with the medians. A baseline that cannot run is an error.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPrerequisites, compileC } from './tools';
import { layouts, runKernelCase, type KernelCaseResult, type Tools } from './kernel';
import { BenchUnavailableError, mib, Table } from './stats';

const SOURCE_DIR = join(__dirname, '..', '..', 'bench');
const RING_SIZES = [1, 16, 64].map((m) => m * 1024 * 1024);

async function main(): Promise<number> {
  const quick = process.argv.includes('--quick');
  const { gcc, perf } = checkPrerequisites();
  const tempDir = mkdtempSync(join(tmpdir(), 'ringside-bench-'));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const walker = compileC(gcc, join(SOURCE_DIR, 'walker.c'), tempDir, 'walker', ['-O2']);
    const workload = compileC(gcc, join(SOURCE_DIR, 'getpid_loop.c'), tempDir, 'getpid_loop', ['-O1', '-g', '-fno-omit-frame-pointer']);
    const tools: Tools = { perf, walker, workload, tempDir };
    const results: KernelCaseResult[] = [];
    for (const layout of layouts()) {
      for (const size of quick ? [RING_SIZES[0]] : RING_SIZES) {
        results.push(await runKernelCase(tools, layout, size, { runs: 7, warmup: 2, perfScriptRuns: 3, log }));
      }
    }
    const table = new Table(['layout', 'ring', 'records', 'B/rec', 'pause ms', 'memcpy ms', 'pause/memcpy', 'decode Mrec/s', 'C Mrec/s', 'decode/C', 'snap->cols Mrec/s', 'perf script Mrec/s', 'ratio']);
    for (const r of results) {
      const decodeRate = r.records / r.decodeNs * 1e3;
      const cRate = r.records / r.cWalkerNs * 1e3;
      const e2eRate = r.sampleRecords / r.snapshotToColumnsNs * 1e3;
      const perfRate = r.perfScriptRecords / r.perfScriptNs * 1e3;
      table.add(r.layout, mib(r.ringBytes), r.records, r.recordBytes, r.pauseNs / 1e6, r.memcpyNs / 1e6, r.pauseNs / r.memcpyNs,
        decodeRate, cRate, decodeRate / cRate, e2eRate, perfRate, e2eRate / perfRate);
    }
    console.log(table.toString());
    return 0;
  } finally {
    rmSync(tempDir, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code), (error: unknown) => {
  if (error instanceof BenchUnavailableError) {
    console.error(`bench cannot run: ${error.message}`);
  } else {
    console.error(error instanceof Error ? error.stack ?? error.message : String(error));
  }
  process.exit(1);
});
