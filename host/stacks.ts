// The stack table of a snapshot: every SAMPLE's callchain as function names (through the capture's
// FrameSymbols, each address resolved once; callchains read from the native stack and frame tables), each distinct stack stored once, and per row its stack id.
// Where the symbolizer knows source lines, each stack carries the line of its leaf address (the sample's
// own IP, so samples count per line) and each function the line of its entry (where "reveal" goes).

import type { DecodedSnapshot } from '../native/decode/types';
import { ProfileTables } from '../native/tables/profile-tables';
import { RecordType, Sample } from '../native/abi/uapi';
import { functionName, KERNEL_FRAME, UNKNOWN_FRAME, type StackTable } from '../shared/stacks';
import type { FrameSymbols } from './frame-symbols';
import { StringTable } from '../native/abi/string-table';
import { IntTupleMap } from '../native/tables/int-tuple-map';

export interface SnapshotStacks {
  readonly table: StackTable;
  /** Per row: its stack id, -1 for rows without a callchain. */
  readonly stackOf: Int32Array;
}

/**
 * `tables` (built from the snapshot when not given): its stack table is walked once per distinct callchain, not per
 * record, and each frame named once.
 */
export function snapshotStacks(snapshot: DecodedSnapshot, symbols: FrameSymbols, tables = new ProfileTables(snapshot)): SnapshotStacks {
  const steps = snapshotStacksInSteps(snapshot, symbols, tables);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Rows walked between two steps of snapshotStacksInSteps (each names a few new frames at most, once warm). */
const ROWS_PER_STEP = 2048;

/**
 * snapshotStacks in steps: each `yield` (after the tables are built, then every ROWS_PER_STEP rows) is a point where
 * the caller may let other work run; the stacks are the return value.
 */
export function* snapshotStacksInSteps(snapshot: DecodedSnapshot, symbols: FrameSymbols, given?: ProfileTables): Generator<void, SnapshotStacks> {
  const tables = given ?? new ProfileTables(snapshot);
  if (!given) yield;
  const { kind, length, event } = snapshot.columns;
  const nameTable = new StringTable();
  const names = nameTable.strings;
  const intern = (name: string) => nameTable.indexOf(name);
  // A stack's identity is its names leaf to root and its leaf's line. The names go into a trie, callers first (a node
  // is a name called from its parent node, -1: a root), so a stack is one node however deep and found by numbers:
  // a text key per stack joining its names was this walk's largest cost on an -a -g capture's thousands of stacks.
  const nameNodeIndex = new IntTupleMap(2);
  const nodeName: number[] = [];
  const nodeParent: number[] = [];
  /** (name node, leaf line) → stack id. */
  const stackIds = new IntTupleMap(2);
  const start: number[] = [0];
  const frames: number[] = [];
  const stackOf = new Int32Array(length).fill(-1);
  const locations: { file: string; line: number }[] = [];
  const locationIndex = new Map<string, number>();
  const locate = (file: string | undefined, line: number | undefined) => {
    if (file === undefined || line === undefined) return -1;
    const key = `${line}:${file}`;
    let index = locationIndex.get(key);
    if (index === undefined) {
      index = locations.length;
      locations.push({ file, line });
      locationIndex.set(key, index);
    }
    return index;
  };
  const leafLocation: number[] = [];
  // Per interned name: the object file it is in (the first frame that named it tells), for collapsing a library.
  const libraries: string[] = [];
  const libraryIndex = new Map<string, number>();
  const nameLibrary: number[] = [];
  /** Per interned name: its entry's line (-1 unknown, undefined not tried yet). */
  const nameLocation: (number | undefined)[] = [];
  // Per frame of the tables: its name's index and its own line (-2: not resolved yet).
  const frameName = new Int32Array(tables.frameCount).fill(-2);
  const frameLine = new Int32Array(tables.frameCount).fill(-2);
  /** A leaf frame's own line (only leaves have theirs placed: the page counts lines of leaves). */
  const leafLine = (frame: number): number => {
    if (frameLine[frame] === -2) {
      const resolved = symbols.resolve(tables.frameOwner[frame], tables.frameIp(frame), tables.frameIsKernel(frame));
      frameLine[frame] = locate(resolved.file, resolved.line);
    }
    return frameLine[frame];
  };
  const nameFrame = (frame: number): number => {
    if (frameName[frame] !== -2) return frameName[frame];
    const kernel = tables.frameIsKernel(frame);
    const pid = tables.frameOwner[frame];
    const ip = tables.frameIp(frame);
    const resolved = symbols.nameAndLibrary(pid, ip, kernel);
    const symbol = resolved.name < 0 ? undefined : symbols.strings[resolved.name];
    const name = intern(symbol === undefined ? (kernel ? KERNEL_FRAME : UNKNOWN_FRAME) : functionName(symbol));
    if (nameLocation[name] === undefined && symbol !== undefined && !kernel) nameLocation[name] = entryLocation(symbols, pid, ip, symbol);
    if (nameLibrary[name] === undefined && resolved.library !== undefined) {
      let at = libraryIndex.get(resolved.library);
      if (at === undefined) {
        at = libraries.length;
        libraries.push(resolved.library);
        libraryIndex.set(resolved.library, at);
      }
      nameLibrary[name] = at;
    }
    frameName[frame] = name;
    return name;
  };
  // Per stack of the tables: its id here (-2: not made yet). Two table stacks (distinct addresses) can be one here.
  const idOfTableStack = new Int32Array(tables.stackCount).fill(-2);
  // Per stack of the tables: its names' trie node (-2: not named yet); a stack's node is its leaf's name under its
  // prefix's node, so a stack is named from the first of its callers named before.
  const nodeOfTableStack = new Int32Array(tables.stackCount).fill(-2);
  const unnamed: number[] = [];
  const nameNodeOf = (tableStack: number): number => {
    unnamed.length = 0;
    for (let s = tableStack; s >= 0 && nodeOfTableStack[s] === -2; s = tables.stackPrefix[s]) unnamed.push(s);
    // Leaf first, as the names were interned when each stack named all its frames leaf first.
    const named = unnamed.map((s) => nameFrame(tables.stackFrame[s]));
    for (let i = unnamed.length - 1; i >= 0; i--) {
      const prefix = tables.stackPrefix[unnamed[i]];
      const parent = prefix < 0 ? -1 : nodeOfTableStack[prefix];
      let node = nameNodeIndex.get(parent, named[i], 0);
      if (node < 0) {
        node = nodeName.length;
        nodeName.push(named[i]);
        nodeParent.push(parent);
        nameNodeIndex.add(parent, named[i], 0, node);
      }
      nodeOfTableStack[unnamed[i]] = node;
    }
    return nodeOfTableStack[tableStack];
  };
  // Only events that sample callchains are counted (the event column indexes snapshot.events).
  const withCallchain = snapshot.events.map((e) => (e.attr.sampleType & Sample.CALLCHAIN) !== 0);
  for (let row = 0; row < length; row++) {
    if (row % ROWS_PER_STEP === ROWS_PER_STEP - 1) yield;
    const tableStack = tables.sampleStack[row];
    if (tableStack < 0 || kind[row] !== RecordType.SAMPLE || withCallchain[event[row]] === false) continue;
    let id = idOfTableStack[tableStack];
    if (id === -2) {
      // The leaf's line first, then the names: locations get their indexes in the order the per-record walk gave them.
      const leaf = leafLine(tables.stackFrame[tableStack]);
      const node = nameNodeOf(tableStack);
      // The leaf's line is part of the stack's identity: the same functions at another line count apart.
      id = stackIds.get(node, leaf, 0);
      if (id < 0) {
        id = start.length - 1;
        stackIds.add(node, leaf, 0, id);
        for (let n = node; n >= 0; n = nodeParent[n]) frames.push(nodeName[n]);
        start.push(frames.length);
        leafLocation.push(leaf);
      }
      idOfTableStack[tableStack] = id;
    }
    stackOf[row] = id;
  }
  const table = {
    names,
    start: Uint32Array.from(start),
    frames: Int32Array.from(frames),
    ...(libraries.length > 0 ? { libraries, nameLibrary: Int32Array.from(names, (_, n) => nameLibrary[n] ?? -1) } : {}),
  };
  if (locations.length === 0) return { table, stackOf };
  return {
    table: {
      ...table,
      locations,
      leafLocation: Int32Array.from(leafLocation),
      nameLocation: Int32Array.from(names, (_, n) => nameLocation[n] ?? -1),
    },
    stackOf,
  };

  /** The line of the entry of the function `symbol` (`name+0xoff`) that `ip` is in: its start is ip − off. */
  function entryLocation(frameSymbols: FrameSymbols, pid: number, ip: bigint, symbol: string): number {
    const offset = /\+0x([0-9a-f]+)$/.exec(symbol);
    const entry = frameSymbols.lineOf(pid, offset ? ip - BigInt('0x' + offset[1]) : ip);
    return locate(entry?.file, entry?.line);
  }
}
