// The decoder's WebAssembly kernels (native/decode/kernels, AssemblyScript, compiled by `npm run
// build` into kernel-binaries.ts), instantiated over the memory they work in: a copy's room
// (copy-room.ts) or a snapshot memory (snapshot-memory.ts). One module per memory kind, compiled
// once per thread; one instance per memory object, made on first use.

import { RECORD_COLUMN_NAMES, type RecordColumnName } from '../column-schema';
import type { ColumnSet } from '../column-set';
import { PLAIN_KERNELS, SHARED_KERNELS } from './kernel-binaries';

/** The kind of memory a module imports: a module for a plain memory cannot take a shared one, nor the reverse. */
export type MemoryKind = 'plain' | 'shared';

/** Each kernel takes the byte address of its job record (job-layout.ts) and returns the records it took. */
export interface Kernels {
  /** The sample run (kernels/sample-run.ts): samples decoded. */
  sampleRun(job: number): number;
  /** The key run (kernels/key-run.ts): samples keyed. */
  keyRun(job: number): number;
  /** One slice of the merge (kernels/merge-scatter.ts): rows placed. */
  mergeScatter(job: number): number;
}

/** Row 0's byte address of every column of a set in the kernels' memory. */
export type ColumnAddresses = { readonly [K in RecordColumnName]: number };

/** Row 0's byte address of every column of `set`. */
export function columnAddresses(set: ColumnSet): ColumnAddresses {
  return Object.fromEntries(RECORD_COLUMN_NAMES.map((name) => [name, set[name].byteOffset])) as ColumnAddresses;
}

/**
 * Writes `columns` into the job whose first word `job` views, at byte `at` (job-layout.ts:
 * SAMPLE_COLUMNS, MERGE_COLUMNS): one u32 per record column in the schema's order, where the
 * kernels' generated loads read them (scripts/build-row-writers.mjs).
 */
export function writeColumnAddresses(job: Int32Array, at: number, columns: ColumnAddresses): void {
  for (let i = 0; i < RECORD_COLUMN_NAMES.length; i++) job[at / 4 + i] = columns[RECORD_COLUMN_NAMES[i]];
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Bytes of a base64 text (no line breaks; '=' padding at the end). Runs in Node and in the browser alike. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const digits = text.replace(/=+$/, '');
  const out = new Uint8Array((digits.length * 3) >> 2);
  let bits = 0;
  let held = 0;
  let at = 0;
  for (let i = 0; i < digits.length; i++) {
    const value = BASE64.indexOf(digits[i]);
    if (value < 0) throw new Error(`kernel-binaries.ts holds a character base64 has not (${JSON.stringify(digits[i])}): regenerate it with npm run build`);
    held = (held << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (held >> bits) & 0xff;
    }
  }
  return out;
}

const modules = new Map<MemoryKind, WebAssembly.Module>();
const instances = new WeakMap<WebAssembly.Memory, Kernels>();

function moduleFor(kind: MemoryKind): WebAssembly.Module {
  let module = modules.get(kind);
  if (!module) {
    module = new WebAssembly.Module(fromBase64(kind === 'shared' ? SHARED_KERNELS : PLAIN_KERNELS));
    modules.set(kind, module);
  }
  return module;
}

/** The kernels working in `memory` (of kind `kind`), on this thread. */
export function kernelsFor(memory: WebAssembly.Memory, kind: MemoryKind): Kernels {
  let kernels = instances.get(memory);
  if (!kernels) {
    const exports = new WebAssembly.Instance(moduleFor(kind), { env: { memory } }).exports;
    kernels = {
      sampleRun: exports.sampleRun as (job: number) => number,
      keyRun: exports.keyRun as (job: number) => number,
      mergeScatter: exports.mergeScatter as (job: number) => number,
    };
    instances.set(memory, kernels);
  }
  return kernels;
}
