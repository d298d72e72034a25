// DWARF unwinding on real stacks: a fixture built without frame pointers, recorded by the installed
// `perf record --call-graph dwarf`, imported with `ringside decode` (the CLI a user runs), and every
// sample's user callchain compared frame by frame with what `perf script` unwinds from the same file.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fixture, ourUserFrames, perfRecord, perfUserFrames, perfSampleKey, repoRoot, tempDir, type JsonCallchainSample } from './perf-tools';

const cli = path.join(repoRoot, 'dist/cli.js');

type JsonSample = JsonCallchainSample & { type: string };

/** JSON Lines of `ringside ARGS` on stdout, `time` kept as its exact digits. */
function ringsideJson(args: readonly string[]): JsonSample[] {
  const result = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as JsonSample);
}

describe('DWARF unwinding of perf.data recorded with --call-graph dwarf (perf script is the referee)', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    assert.ok(existsSync(cli), 'dist/cli.js is built (npm run build)');
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every sample unwinds to the same user frames as perf, through the executable and libc, without frame pointers', () => {
    const data = path.join(dir, 'dwarf.data');
    perfRecord(data, ['--call-graph', 'dwarf', '-e', 'task-clock', '-c', '250000'], [fixture('unwind_nofp'), '150', '150']);
    const perf = perfUserFrames(data);
    const ours = ringsideJson(['decode', data]).filter((record) => record.type === 'SAMPLE');
    assert.equal(ours.length, perf.size, 'the same samples');

    let compared = 0;
    const disagreements: string[] = [];
    let deepSpin = 0;
    let deepSort = 0;
    for (const sample of ours) {
      const theirs = perf.get(perfSampleKey(sample.tid, sample.time));
      assert.ok(theirs, `perf has the sample at ${sample.time}`);
      // Kernel-only samples (exec, before the program's own mappings) have no user frames in either.
      if (theirs.length > 0) compared++;
      const mine = ourUserFrames(sample);
      if (mine.join(' <- ') !== theirs.join(' <- ')) disagreements.push(`${sample.time}\n  ours: ${mine.join(' <- ')}\n  perf: ${theirs.join(' <- ')}`);
      const names = mine.map((frame) => frame.replace(/\+0x[0-9a-f]+$/, ''));
      if (names[0] === 'level_c' && names.slice(1, 5).join() === 'level_b,level_a,phase_spin,main') deepSpin++;
      if (names[0] === 'compare_keys' && names.includes('phase_sort') && names.includes('main')) deepSort++;
    }
    // Both phases are seen with their whole call chain: through the executable's own frames, and
    // through libc's qsort back into the executable.
    assert.ok(deepSpin >= 100, `${deepSpin} samples in level_c unwound to main`);
    assert.ok(deepSort >= 50, `${deepSort} samples in compare_keys unwound through qsort to main`);
    // Tolerance: perf's libunwind and this unwinder read the same CFI from the same stack copy, so
    // they agree on every frame of every sample here; at most 1% may differ, for a sample whose
    // 8 KiB stack copy ends mid-frame or that lands in ld.so while it maps libraries (either unwinder
    // may then stop one frame earlier).
    assert.ok(compared >= 200, `${compared} samples with user frames`);
    assert.ok(disagreements.length <= compared / 100, `${disagreements.length} of ${compared} samples differ:\n${disagreements.slice(0, 5).join('\n')}`);
  });
});
