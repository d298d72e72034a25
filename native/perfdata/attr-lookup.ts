// Which event a sample id belongs to, from the attrs section of a perf.data file, read without the
// rest of the file: perf record writes its header and attrs (with every fd's sample id) before it
// starts recording, so the output file of a running perf record names the events of the fds it
// holds while its data section is still being written.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { decodeAttr, PERF_ATTR_SIZE_VER0, type PerfEventAttr } from '../abi/attr';
import { FILE_HEADER_SIZE, PERF_MAGIC2 } from './format';
import { MAX_ATTR_SIZE } from './reader';

/** The largest section this reads (an attrs section or one event's ids). */
const MAX_SECTION = 1 << 24;

/**
 * The attr whose ids include `sampleId`, from the perf.data file at `file` (a path or
 * /proc/PID/fd/N); undefined when the file is not a (little-endian) perf.data file, is damaged
 * where this looks, or has no such id.
 */
export function findAttrBySampleId(file: string, sampleId: bigint): PerfEventAttr | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    // no such file or not readable: the caller asks the user which event this is instead
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    const read = (offset: number, length: number): DataView | undefined => {
      if (length < 0 || length > MAX_SECTION) return undefined;
      const bytes = new Uint8Array(length);
      return readSync(fd, bytes, 0, length, offset) === length ? new DataView(bytes.buffer) : undefined;
    };
    const header = read(0, FILE_HEADER_SIZE);
    if (!header || header.getBigUint64(0, true) !== PERF_MAGIC2) return undefined;
    // struct perf_file_header: magic, size, attr_size, then the attrs section (offset, size).
    const entrySize = Number(header.getBigUint64(16, true));
    const attrsOffset = Number(header.getBigUint64(24, true));
    const attrsSize = Number(header.getBigUint64(32, true));
    // Each entry is an attr followed by the file section (offset, size) of its ids.
    if (entrySize < PERF_ATTR_SIZE_VER0 + 16 || entrySize > MAX_ATTR_SIZE || attrsSize % entrySize !== 0) return undefined;
    const attrs = read(attrsOffset, attrsSize);
    if (!attrs) return undefined;
    for (let at = 0; at < attrsSize; at += entrySize) {
      const idsAt = at + entrySize - 16;
      const ids = read(Number(attrs.getBigUint64(idsAt, true)), Number(attrs.getBigUint64(idsAt + 8, true)));
      if (!ids) continue;
      for (let i = 0; i + 8 <= ids.byteLength; i += 8) {
        if (ids.getBigUint64(i, true) === sampleId) return decodeAttr(new Uint8Array(attrs.buffer, at, entrySize - 16));
      }
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
