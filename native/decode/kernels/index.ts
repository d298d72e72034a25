// The decoder's WebAssembly kernels, in AssemblyScript: the entry `npm run build` compiles
// (scripts/build-kernels.mjs) into one module per memory kind (plain and shared), which
// wasm/kernels.ts instantiates over a copy room's or a snapshot memory's memory.

export { sampleRun } from './sample-run';
export { keyRun } from './key-run';
export { mergeScatter } from './merge-scatter';
