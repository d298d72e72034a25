// The stack table of a snapshot: every SAMPLE's callchain as function names (through the capture's
// FrameSymbols, each address resolved once), each distinct stack stored once, and per row its stack id.

import type { DecodedSnapshot } from '../native/decode/types';
import { decodeRecordAt, type CallchainFrame } from '../native/decode/record';
import { RecordType, Sample } from '../native/abi/uapi';
import { functionName, KERNEL_FRAME, UNKNOWN_FRAME, type StackTable } from '../shared/stacks';
import type { FrameSymbols } from './frame-symbols';

export interface SnapshotStacks {
  readonly table: StackTable;
  /** Per row: its stack id, -1 for rows without a callchain. */
  readonly stackOf: Int32Array;
}

export function snapshotStacks(snapshot: DecodedSnapshot, symbols: FrameSymbols): SnapshotStacks {
  const { kind, length } = snapshot.columns;
  const names: string[] = [];
  const nameIndex = new Map<string, number>();
  const intern = (name: string) => {
    let index = nameIndex.get(name);
    if (index === undefined) { index = names.length; names.push(name); nameIndex.set(name, index); }
    return index;
  };
  const stackIds = new Map<string, number>();
  const start: number[] = [0];
  const frames: number[] = [];
  const stackOf = new Int32Array(length).fill(-1);
  const current: number[] = [];
  // Only events that sample callchains are decoded (the event column indexes snapshot.events).
  const withCallchain = snapshot.events.map((e) => (e.attr.sampleType & Sample.CALLCHAIN) !== 0);
  const { event } = snapshot.columns;
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE || withCallchain[event[row]] === false) continue;
    let callchain: unknown;
    let pid = -1;
    try {
      const record = decodeRecordAt(snapshot, row);
      callchain = (record.fields as { callchain?: unknown }).callchain;
      pid = record.pid ?? -1;
    } catch {
      continue; // a damaged record has no stack; the walk already counted it
    }
    if (!Array.isArray(callchain)) continue;
    current.length = 0;
    for (const frame of callchain as CallchainFrame[]) {
      if (frame.isMarker) continue;
      const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel';
      const name = symbols.nameOf(pid, frame.ip, kernel);
      current.push(intern(name === undefined ? (kernel ? KERNEL_FRAME : UNKNOWN_FRAME) : functionName(name)));
    }
    if (current.length === 0) continue;
    const key = current.join(',');
    let id = stackIds.get(key);
    if (id === undefined) {
      id = start.length - 1;
      stackIds.set(key, id);
      frames.push(...current);
      start.push(frames.length);
    }
    stackOf[row] = id;
  }
  return { table: { names, start: Uint32Array.from(start), frames: Int32Array.from(frames) }, stackOf };
}
