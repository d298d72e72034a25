// How a snapshot's samples are read, per event: in place from the ring bytes (the fixed fields and the callchain, at
// offsets the event's layout gives) when the event samples nothing else, else by the record decoder. One home for
// the tables (native/tables), the JSON Lines and pprof writers and perf.data's damage check.

import type { EventDescription } from '../abi/snapshot';
import { Sample } from '../abi/uapi';
import { parseInfoFor, type ParseInfo } from './parse-info';
import type { DecodedSnapshot } from './types';

/** Sample fields the fast reader handles in place; a sample with any other field is read by the record decoder. */
const IN_PLACE_FIELDS =
  Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.ADDR | Sample.ID | Sample.STREAM_ID | Sample.CPU | Sample.PERIOD | Sample.CALLCHAIN;

/** An event's layout as the in-place reader uses it; `inPlace` false sends its samples through decodeRecordAt. */
export interface SampleReader {
  readonly event: EventDescription;
  readonly info: ParseInfo;
  readonly inPlace: boolean;
  readonly hasCallchain: boolean;
}

/** Per event index of the columns: how its samples are read. */
export function sampleReaders(snapshot: DecodedSnapshot): Map<number, SampleReader> {
  const readers = new Map<number, SampleReader>();
  for (const event of snapshot.events) {
    const info = parseInfoFor(event);
    const sampleType = info.sampleType;
    readers.set(event.index, {
      event,
      info,
      inPlace: (sampleType & ~IN_PLACE_FIELDS) === 0,
      hasCallchain: (sampleType & Sample.CALLCHAIN) !== 0,
    });
  }
  return readers;
}
