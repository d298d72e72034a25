import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { KERNEL_SOURCE_HASH } from './kernel-binaries';
import { kernelsFor } from './kernels';
import { SAMPLE_MAX, SAMPLE_O, SAMPLE_RUN_JOB_BYTES, SAMPLE_STEP } from './job-layout';

// The kernels ship compiled (kernel-binaries.ts, written by `npm run build` from the AssemblyScript
// in native/decode/kernels): a change to those sources that was not built would leave every test
// running the old kernels, so this fails until the build has run.

/** tsc compiles import() to require(), which cannot load an ES module in Node 20: this keeps it an import. */
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ kernelSourceHash(root: string): string }>;

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('the WebAssembly kernels', () => {
  it('are compiled from the sources as they are now (else: npm run build)', async () => {
    const { kernelSourceHash } = await importModule(join(ROOT, 'scripts', 'kernel-sources.mjs'));
    assert.equal(KERNEL_SOURCE_HASH, kernelSourceHash(ROOT), 'native/decode/kernels changed since kernel-binaries.ts was built: run npm run build');
  });

  it('instantiate over a plain memory and over a shared one, each with its own module', () => {
    for (const shared of [false, true]) {
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared });
      const kernels = kernelsFor(memory, shared ? 'shared' : 'plain');
      // A sample run asked for no record decodes none and says where it stopped: where it started.
      const job = new Int32Array(memory.buffer, 0, SAMPLE_RUN_JOB_BYTES / 4);
      job[SAMPLE_O / 4] = 64;
      job[SAMPLE_MAX / 4] = 0;
      job[SAMPLE_STEP / 4] = -1;
      assert.equal(kernels.sampleRun(0), 0);
      assert.equal(job[SAMPLE_O / 4], 64);
      assert.equal(kernelsFor(memory, shared ? 'shared' : 'plain'), kernels, 'one instance per memory');
    }
  });
});
