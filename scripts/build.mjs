// Writes the record columns into the decoder's row writers (build-row-writers.mjs), compiles the decoder's
// WebAssembly kernels (AssemblyScript, build-kernels.mjs), then bundles the three
// programs Ringside ships: the extension host entry, the CLI and the webview page.
// Type checking is tsc's job (npm run typecheck); esbuild only bundles, so builds stay fast.
import { build } from 'esbuild';
import { mkdirSync, copyFileSync, existsSync } from 'node:fs';
import { buildKernels } from './build-kernels.mjs';
import { buildRowWriters } from './build-row-writers.mjs';

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', target: 'es2022' };

// The row writers from the column schema first (the kernels are compiled from some of them), then the decoder's
// WebAssembly kernels: every bundle below includes them (native/decode/wasm/kernel-binaries.ts).
await buildRowWriters();
await buildKernels();
mkdirSync('dist/webview', { recursive: true });
const jobs = [];
if (existsSync('native/cli/main.ts')) {
  jobs.push(
    build({
      ...common,
      platform: 'node',
      format: 'cjs',
      entryPoints: ['native/cli/main.ts'],
      outfile: 'dist/cli.js',
      // koffi loads its prebuilt .node files relative to its own package: keep it external.
      external: ['koffi'],
      banner: { js: '#!/usr/bin/env node' },
    }),
  );
}
if (existsSync('native/decode-pool/decode-worker.ts')) {
  // The decode pool's worker thread: its own file, next to the cli and extension bundles that start it.
  jobs.push(
    build({
      ...common,
      platform: 'node',
      format: 'cjs',
      entryPoints: ['native/decode-pool/decode-worker.ts'],
      outfile: 'dist/decode-worker.js',
    }),
  );
}
if (existsSync('native/symbols/prefetch-worker.ts')) {
  // The worker that reads symbol tables ahead (native/symbols/prefetch.ts), next to the cli bundle that starts it.
  jobs.push(
    build({
      ...common,
      platform: 'node',
      format: 'cjs',
      entryPoints: ['native/symbols/prefetch-worker.ts'],
      outfile: 'dist/prefetch-worker.js',
    }),
  );
}
if (existsSync('extension/extension.ts')) {
  jobs.push(
    build({
      ...common,
      platform: 'node',
      format: 'cjs',
      entryPoints: ['extension/extension.ts'],
      outfile: 'dist/extension.js',
      external: ['vscode', 'koffi'],
    }),
  );
}
if (existsSync('webview/main.ts')) {
  // The call tree's aggregation worker is bundled first and inlined into the page's bundle as a string
  // (RINGSIDE_AGGREGATE_WORKER), which the page starts from a Blob URL: one file serves the panel and the offline export.
  const worker = await build({
    ...common,
    sourcemap: false,
    write: false,
    platform: 'browser',
    format: 'iife',
    entryPoints: ['webview/aggregate-worker.ts'],
    outfile: 'dist/webview/aggregate-worker.js',
  });
  const workerSource = worker.outputFiles[0].text;
  jobs.push(
    build({
      ...common,
      platform: 'browser',
      format: 'iife',
      entryPoints: ['webview/main.ts'],
      outfile: 'dist/webview/timeline.js',
      define: { RINGSIDE_AGGREGATE_WORKER: JSON.stringify(workerSource) },
    }),
  );
  if (existsSync('webview/timeline.css')) copyFileSync('webview/timeline.css', 'dist/webview/timeline.css');
}
await Promise.all(jobs);
if (watch) console.log('watch mode is not supported; re-run npm run build');
