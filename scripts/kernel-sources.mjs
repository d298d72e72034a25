// Which sources the decoder's WebAssembly kernels are compiled from, and their hash: what
// build-kernels.mjs records in native/decode/wasm/kernel-binaries.ts and what kernels.test.ts
// checks it against. No dependencies, so the test reads it without the compiler.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The kernels' AssemblyScript entry, relative to the repository's root. */
export const KERNEL_ENTRY = 'native/decode/kernels/index.ts';

/** Every file a kernel is compiled from: the AssemblyScript sources and the job layouts they share with the engines. */
export function kernelSources(root) {
  const kernels = readdirSync(join(root, 'native/decode/kernels'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `native/decode/kernels/${name}`);
  return [...kernels, 'native/decode/wasm/job-layout.ts'].sort();
}

/** sha256 over the sources' paths and bytes. */
export function kernelSourceHash(root) {
  const hash = createHash('sha256');
  for (const file of kernelSources(root)) hash.update(`${file}\n`).update(readFileSync(join(root, file)));
  return hash.digest('hex');
}
