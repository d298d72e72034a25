// What the bench compares between the decoder's columns and the C walker's: sums over the columns
// both produce, so the two sides are checked to have decoded the same values.

import type { RecordColumns } from '../native/decode/types';

/** Column sums; the integer ones wrap at 2^32, as walker.c's do (a 256 MiB ring's ipLo sum passes 2^53, where a double stops being exact). */
export function columnChecksum(columns: RecordColumns): Record<string, number> {
  let tid = 0,
    cpu = 0,
    event = 0,
    kind = 0,
    ipLo = 0,
    ipHi = 0,
    offset = 0,
    time = 0;
  for (let i = 0; i < columns.length; i++) {
    tid = (tid + columns.tid[i]) >>> 0;
    cpu = (cpu + columns.cpu[i]) >>> 0;
    event = (event + columns.event[i]) >>> 0;
    kind = (kind + columns.kind[i]) >>> 0;
    ipLo = (ipLo + columns.ipLo[i]) >>> 0;
    ipHi = (ipHi + columns.ipHi[i]) >>> 0;
    offset = (offset + columns.offset[i]) >>> 0;
    const t = columns.time[i];
    if (t === t) time += t;
  }
  return { tid, cpu, event, kind, ipLo, ipHi, offset, time };
}

/** One measurement of a side over a ring, as the C walker and the decoder process answer it. */
export interface SideMeasurement {
  readonly records: number;
  readonly median_ns: number;
  readonly runs_ns: number[];
  readonly checksum: Record<string, number>;
}
