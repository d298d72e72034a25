// The stack table of a snapshot: every SAMPLE's callchain as function names (through the capture's
// FrameSymbols, each address resolved once), each distinct stack stored once, and per row its stack id.
// Where the symbolizer knows source lines, each stack carries the line of its leaf address (the sample's
// own IP, so samples count per line) and each function the line of its entry (where "reveal" goes).

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
  const locations: { file: string; line: number }[] = [];
  const locationIndex = new Map<string, number>();
  const locate = (file: string | undefined, line: number | undefined) => {
    if (file === undefined || line === undefined) return -1;
    const key = `${line}:${file}`;
    let index = locationIndex.get(key);
    if (index === undefined) { index = locations.length; locations.push({ file, line }); locationIndex.set(key, index); }
    return index;
  };
  const leafLocation: number[] = [];
  /** Per interned name: its entry's line (-1 unknown, undefined not tried yet). */
  const nameLocation: (number | undefined)[] = [];
  // Only events that sample callchains are decoded (the event column indexes snapshot.events).
  const withCallchain = snapshot.events.map((e) => (e.attr.sampleType & Sample.CALLCHAIN) !== 0);
  const { event } = snapshot.columns;
  for (let row = 0; row < length; row++) {
    if (kind[row] !== RecordType.SAMPLE || withCallchain[event[row]] === false) continue;
    let callchain: unknown;
    let pid: number;
    try {
      const record = decodeRecordAt(snapshot, row);
      callchain = (record.fields as { callchain?: unknown }).callchain;
      pid = record.pid ?? -1;
    } catch {
      continue; // a damaged record has no stack; the walk already counted it
    }
    if (!Array.isArray(callchain)) continue;
    current.length = 0;
    let leaf = -1;
    for (const frame of callchain as CallchainFrame[]) {
      if (frame.isMarker) continue;
      const kernel = frame.context === 'kernel' || frame.context === 'guest-kernel';
      const resolved = symbols.resolve(pid, frame.ip, kernel);
      const symbol = resolved.name < 0 ? undefined : symbols.strings[resolved.name];
      const name = intern(symbol === undefined ? (kernel ? KERNEL_FRAME : UNKNOWN_FRAME) : functionName(symbol));
      if (current.length === 0) leaf = locate(resolved.file, resolved.line);
      if (nameLocation[name] === undefined && symbol !== undefined && !kernel) {
        nameLocation[name] = entryLocation(symbols, pid, frame.ip, symbol);
      }
      current.push(name);
    }
    if (current.length === 0) continue;
    // The leaf's line is part of the stack's identity: the same functions at another line count apart.
    const key = `${leaf}|${current.join(',')}`;
    let id = stackIds.get(key);
    if (id === undefined) {
      id = start.length - 1;
      stackIds.set(key, id);
      frames.push(...current);
      start.push(frames.length);
      leafLocation.push(leaf);
    }
    stackOf[row] = id;
  }
  const table = { names, start: Uint32Array.from(start), frames: Int32Array.from(frames) };
  if (locations.length === 0) return { table, stackOf };
  return {
    table: {
      ...table, locations, leafLocation: Int32Array.from(leafLocation),
      nameLocation: Int32Array.from(names, (_, n) => nameLocation[n] ?? -1),
    },
    stackOf,
  };

  /** The line of the entry of the function `symbol` (`name+0xoff`) that `ip` is in: its start is ip − off. */
  function entryLocation(frameSymbols: FrameSymbols, pid: number, ip: bigint, symbol: string): number {
    const offset = /\+0x([0-9a-f]+)$/.exec(symbol);
    const entry = frameSymbols.resolve(pid, offset ? ip - BigInt('0x' + offset[1]) : ip, false);
    return locate(entry.file, entry.line);
  }
}
