// One slice of the scatter merge (scatter.ts: MergeCursor over the rings' keys, scatterFastRuns'
// rows) as WebAssembly, for a snapshot whose flight-recorder copies, their keys and the output
// columns live in one WebAssembly memory (snapshot-memory.ts). It picks runs as MergeCursor does
// (the running maximum of time + shift inside each ring, ties to the lower ring number; the run
// goes on while its ring still beats the best other one) and writes each keyed record's row from
// the ring bytes, the same fields scatterFastRuns writes. Rows of rings decoded elsewhere (side-band
// rings: few rows, in memory of their own) are "holes": the call writes only where each goes, and
// the caller copies them there. A uniform ring's records (uniform.ts) are read in place: record
// `i` of the slice at a fixed stride below the oldest, its time from the record; each is checked as
// it is written (of the ring's size, a sample of the ring's id or another record whose trailer holds
// its time, that time no newer than the newest and no older than the one before it), and the first
// that is not stops the call, marked failed. Other records are listed, as a keyed ring's are.
//
// The slice's rings are entries of a job record the caller fills (MergeScatterJob); the output
// columns' addresses, the sample's field offsets and the event are constants the module is
// compiled with, as the sample run's are (sample-run.ts says why).

import { RecordType } from '../../abi/uapi';
import { RECORD_COLUMN_NAMES, type RecordColumnName } from '../column-schema';
import type { ColumnSet } from '../column-set';
import { uniformRecordTime } from '../uniform';
import {
  MERGE_SCATTER_ENTRY as ENTRY,
  MERGE_SCATTER_ENTRY_BYTES as ENTRY_BYTES,
  MERGE_SCATTER_HEADER as HEADER,
  MERGE_SCATTER_HEADER_BYTES as HEADER_BYTES,
  OTHER_BYTES,
  mergeScatterJobBytes,
} from './job-layout';
import { Body, F64, I32, I64, OP, compiledModule, oneFunctionModule, type ImportedMemory } from './encoder';

/**
 * What an entry's ring is: nothing left to merge, records to decode (keyed), keyed records among
 * which some are not plain samples (their position is OTHER_RECORD: the call lists where each goes
 * and the caller decodes it), rows the caller places (hole), or records read in place (uniform).
 */
export const ENTRY_NONE = 0;
export const ENTRY_KEYED = 1;
export const ENTRY_HOLE = 2;
export const ENTRY_KEYED_WITH_OTHERS = 3;
export const ENTRY_UNIFORM = 4;

/** A key's position when its record is not a plain sample (scatter.ts OTHER_RECORD). */
const OTHER_POSITION = 0xffff;

/** One ring of a slice as the caller describes it. */
export interface MergeScatterEntry {
  readonly kind: typeof ENTRY_NONE | typeof ENTRY_KEYED | typeof ENTRY_HOLE | typeof ENTRY_KEYED_WITH_OTHERS | typeof ENTRY_UNIFORM;
  readonly from: number;
  readonly to: number;
  /** Byte address of the time of row 0 (the ring's first key, or a hole's first copied time); uniform: of the oldest record. */
  readonly time: number;
  /** Keyed: byte address of the offset of row 0; hole: of where row 0 goes; uniform: the stride. */
  readonly aux: number;
  /** Keyed: byte address of the ring's copy. */
  readonly src: number;
  /** Keyed with others: byte address of the position of row 0. */
  readonly position: number;
  readonly shift: number;
  /** Uniform: the time base and the records' id, as u32 halves (0 when the records carry none). */
  readonly baseHi: number;
  readonly baseLo: number;
  readonly idHi: number;
  readonly idLo: number;
}

/**
 * What the module is compiled with: the output columns (row 0's byte address), the sample's field
 * offsets (the time and id: as uniform rings read them; id -1: none) and the event index.
 */
export interface MergeScatterConstants {
  readonly columns: { readonly [K in RecordColumnName]: number };
  readonly pidTid: number;
  readonly cpu: number;
  readonly ip: number;
  readonly time: number;
  readonly id: number;
  /** Bytes back from the end of a uniform ring's record that is not a sample to its trailer's time (-1: such records fail the merge). */
  readonly otherTimeFromEnd: number;
  readonly event: number;
}

/** Row 0's byte address of every column of `set`. */
export function columnAddresses(set: ColumnSet): { readonly [K in RecordColumnName]: number } {
  return Object.fromEntries(RECORD_COLUMN_NAMES.map((name) => [name, set[name].byteOffset])) as { readonly [K in RecordColumnName]: number };
}

function mergeScatterBody(k: MergeScatterConstants): Body {
  const b = new Body(['job']);
  const i32Locals = [
    'n',
    'at',
    'to',
    'r',
    'e',
    'best',
    'rival',
    'be',
    'i',
    'stop',
    'tAddr',
    'aux',
    'src',
    'o',
    'p',
    'tie',
    'pos',
    'withOthers',
    'others',
    'list',
  ];
  for (const name of [...i32Locals, 'kind', 'sm', 'failed', 'ty']) b.local(name, I32);
  for (const name of ['k', 'rivalKey', 'shift', 't', 'value']) b.local(name, F64);
  for (const name of ['base', 'id', 'd']) b.local(name, I64);
  const entry = (ring: string, into: string): void => {
    b.get('job').i32(HEADER_BYTES).op(OP.i32Add).get(ring).i32(ENTRY_BYTES).op(OP.i32Mul, OP.i32Add).set(into);
  };
  const keyOf = (entryLocal: string): void => {
    b.get(entryLocal).mem(OP.f64Load, 3, ENTRY.key);
  };

  b.get('job').mem(OP.i32Load, 2, HEADER.rings).set('n');
  b.get('job').mem(OP.i32Load, 2, HEADER.at).set('at');
  b.get('job').mem(OP.i32Load, 2, HEADER.list).set('list');
  b.i32(0).set('others');
  b.i32(0).set('failed');
  b.get('at').set('to');
  b.op(OP.block, OP.void, OP.loop, OP.void); // $done, $runs
  // The ring with the smallest (key, ring) holding rows, and the next smallest (its rival).
  b.i32(-1).set('best').i32(-1).set('rival').i32(0).set('r');
  b.op(OP.block, OP.void, OP.loop, OP.void); // $scanned, $scan
  b.get('r').get('n').op(OP.i32GeS, OP.brIf, 1);
  entry('r', 'e');
  b.get('e').mem(OP.i32Load, 2, ENTRY.next).get('e').mem(OP.i32Load, 2, ENTRY.stop).op(OP.i32LtS, OP.if, OP.void);
  b.get('best').i32(0).op(OP.i32LtS, OP.if, OP.void);
  b.get('r').set('best');
  b.op(OP.else);
  entry('best', 'be');
  keyOf('e');
  keyOf('be');
  b.op(OP.f64Lt, OP.if, OP.void);
  b.get('best').set('rival').get('r').set('best');
  b.op(OP.else);
  b.get('rival').i32(0).op(OP.i32LtS, OP.if, OP.void);
  b.get('r').set('rival');
  b.op(OP.else);
  entry('rival', 'be');
  keyOf('e');
  keyOf('be');
  b.op(OP.f64Lt, OP.if, OP.void).get('r').set('rival').op(OP.end);
  b.op(OP.end); // rival < 0
  b.op(OP.end); // key < best's
  b.op(OP.end); // best < 0
  b.op(OP.end); // holds rows
  b.get('r').i32(1).op(OP.i32Add).set('r');
  b.op(OP.br, 0, OP.end, OP.end); // $scan, $scanned
  b.get('best').i32(0).op(OP.i32LtS, OP.brIf, 1);

  // The run: rows of `best` while its key stays below the rival's (or equal, when best's number is lower).
  b.f64(Infinity).set('rivalKey');
  b.get('rival').i32(0).op(OP.i32GeS, OP.if, OP.void);
  entry('rival', 'e');
  keyOf('e');
  b.set('rivalKey');
  b.op(OP.end);
  b.get('best').get('rival').op(OP.i32LtS).set('tie');
  entry('best', 'be');
  b.get('be').mem(OP.i32Load, 2, ENTRY.next).set('i');
  b.get('be').mem(OP.i32Load, 2, ENTRY.stop).set('stop');
  b.get('be').mem(OP.i32Load, 2, ENTRY.time).set('tAddr');
  b.get('be').mem(OP.i32Load, 2, ENTRY.aux).set('aux');
  b.get('be').mem(OP.i32Load, 2, ENTRY.src).set('src');
  b.get('be').mem(OP.f64Load, 3, ENTRY.shift).set('shift');
  keyOf('be');
  b.set('k');
  b.get('be').mem(OP.i32Load, 2, ENTRY.kind).set('kind');
  /** After row i is written: i++, and on while i < stop and the ring still beats its rival. */
  const advance = (): void => {
    b.get('to').i32(1).op(OP.i32Add).set('to');
    b.get('i').i32(1).op(OP.i32Add).set('i');
    b.get('i').get('stop').op(OP.i32GeS, OP.brIf, 1);
    b.get('tAddr').get('i').i32(3).op(OP.i32Shl, OP.i32Add).mem(OP.f64Load, 3).set('t');
    b.get('t').get('shift').op(OP.f64Add).set('value');
    // A time below the running key (or none: NaN) keeps it.
    b.get('value').get('k').op(OP.f64Gt, OP.if, OP.void).get('value').set('k').op(OP.end);
    b.get('k').get('rivalKey').op(OP.f64Lt);
    b.get('k').get('rivalKey').op(OP.f64Eq).get('tie').op(OP.i32And);
    b.op(OP.i32Or, OP.brIf, 0);
  };
  b.get('kind').i32(ENTRY_UNIFORM).op(OP.i32Eq, OP.if, OP.void);
  uniformRun(b, k);
  b.op(OP.else);
  b.get('tAddr').get('i').i32(3).op(OP.i32Shl, OP.i32Add).mem(OP.f64Load, 3).set('t');
  b.get('be').mem(OP.i32Load, 2, ENTRY.position).set('pos');
  b.get('kind').i32(ENTRY_KEYED_WITH_OTHERS).op(OP.i32Eq).set('withOthers');
  b.get('kind').i32(ENTRY_HOLE).op(OP.i32Ne, OP.if, OP.void);
  b.op(OP.block, OP.void, OP.loop, OP.void);
  // A record that is not a plain sample: listed (row, ring, key) for the caller, which decodes it.
  // (Its position is read only in a ring that has such records.)
  b.get('withOthers').op(OP.if, I32);
  b.get('pos').get('i').i32(1).op(OP.i32Shl, OP.i32Add).mem(OP.i32Load16U, 1).i32(OTHER_POSITION).op(OP.i32Eq);
  b.op(OP.else).i32(0).op(OP.end);
  b.op(OP.if, OP.void);
  listOther(b);
  b.op(OP.else);
  b.get('aux').get('i').i32(2).op(OP.i32Shl, OP.i32Add).mem(OP.i32Load, 2).set('o');
  b.get('src').get('o').op(OP.i32Add).set('p');
  emitRow(b, k, () => b.get('t').get('shift').op(OP.f64Add));
  b.op(OP.end); // other record or sample
  advance();
  b.op(OP.end, OP.end);
  b.op(OP.else);
  b.op(OP.block, OP.void, OP.loop, OP.void);
  b.get('aux').get('i').i32(2).op(OP.i32Shl, OP.i32Add).get('to').mem(OP.i32Store, 2);
  advance();
  b.op(OP.end, OP.end);
  b.op(OP.end); // keyed or hole
  b.op(OP.end); // uniform or not
  b.get('be').get('i').mem(OP.i32Store, 2, ENTRY.next);
  b.get('be').get('k').mem(OP.f64Store, 3, ENTRY.key);
  b.op(OP.br, 0, OP.end, OP.end); // $runs, $done
  b.get('job').get('others').mem(OP.i32Store, 2, HEADER.others);
  b.get('job').get('failed').mem(OP.i32Store, 2, HEADER.failed);
  b.get('to').get('at').op(OP.i32Sub);
  return b;
}

/** Lists row `to` as ring `best`'s record `i`, one that is not a plain sample: the caller decodes it there. */
function listOther(b: Body): void {
  b.get('list').get('others').i32(OTHER_BYTES).op(OP.i32Mul, OP.i32Add).get('to').mem(OP.i32Store, 2, 0);
  b.get('list').get('others').i32(OTHER_BYTES).op(OP.i32Mul, OP.i32Add).get('best').mem(OP.i32Store, 2, 4);
  b.get('list').get('others').i32(OTHER_BYTES).op(OP.i32Mul, OP.i32Add).get('i').mem(OP.i32Store, 2, 8);
  b.get('others').i32(1).op(OP.i32Add).set('others');
}

/**
 * Row `to` of a plain sample at p (byte offset o in ring `best`): the time `time` pushes, and the
 * fields the scatter path writes for such a sample (scatterFastRuns).
 */
function emitRow(b: Body, k: MergeScatterConstants, time: () => void): void {
  const c = k.columns;
  /** column[to << shift] = value */
  const store = (column: RecordColumnName, shift: number, opcode: number, align: number, value: () => void): void => {
    b.get('to');
    if (shift > 0) b.i32(shift).op(OP.i32Shl);
    value();
    b.mem(opcode, align, c[column]);
  };
  const field = (at: number): void => {
    b.get('p').mem(OP.i32Load, 2, at);
  };
  store('time', 3, OP.f64Store, 3, time);
  store('kind', 0, OP.i32Store8, 0, () => b.i32(RecordType.SAMPLE));
  store('misc', 1, OP.i32Store16, 1, () => field(4));
  store('event', 1, OP.i32Store16, 1, () => b.i32(k.event));
  store('offset', 2, OP.i32Store, 2, () => b.get('o'));
  store('ring', 1, OP.i32Store16, 1, () => b.get('best'));
  store('pid', 2, OP.i32Store, 2, () => field(k.pidTid));
  store('tid', 2, OP.i32Store, 2, () => field(k.pidTid + 4));
  store('cpu', 2, OP.i32Store, 2, () => field(k.cpu));
  store('ipLo', 2, OP.i32Store, 2, () => field(k.ip));
  store('ipHi', 2, OP.i32Store, 2, () => field(k.ip + 4));
}

/**
 * A run of a uniform ring (inside `if` in the runs loop, so the call's outer block is 2 deep):
 * rows i.. of `best` from the records at tAddr - i * stride while its key stays below the rival's,
 * each record checked before its row is written and each time before it becomes the key. A record
 * that is not a sample is listed for the caller (its time from its trailer). A check that fails
 * sets `failed` and leaves the call.
 */
function uniformRun(b: Body, k: MergeScatterConstants): void {
  /** Leaves the call, failed, when the i32 on the stack is not 0; `depth`: how deep the call's outer block is here. */
  const failIf = (depth: number): void => {
    b.op(OP.if, OP.void)
      .i32(1)
      .set('failed')
      .op(OP.br, depth + 1, OP.end);
  };
  /**
   * ty = the type of the record at p; value = its time, shifted (a sample's from its time field,
   * another record's from its trailer); fails when it is newer than the ring's newest, or when the
   * record is not a sample and no trailer holds a time.
   */
  const keyAtP = (depth: number): void => {
    b.get('p').mem(OP.i32Load, 2, 0).set('ty');
    if (k.otherTimeFromEnd < 0) {
      b.get('ty').i32(RecordType.SAMPLE).op(OP.i32Ne);
      failIf(depth);
      b.get('p').mem(OP.i64Load, 3, k.time);
    } else {
      b.get('ty').i32(RecordType.SAMPLE).op(OP.i32Eq, OP.if, I64);
      b.get('p').mem(OP.i64Load, 3, k.time);
      b.op(OP.else);
      b.get('p').get('aux').op(OP.i32Add).i32(k.otherTimeFromEnd).op(OP.i32Sub).mem(OP.i64Load, 3);
      b.op(OP.end);
    }
    b.get('base').op(OP.i64Sub).set('d');
    b.get('d').op(OP.i64Const, 0, OP.i64GtS);
    failIf(depth);
    b.get('d').op(OP.f64ConvertI64S).get('shift').op(OP.f64Add).set('value');
  };
  b.get('be').mem(OP.i64Load, 3, ENTRY.base).set('base');
  b.get('be').mem(OP.i64Load, 3, ENTRY.id).set('id');
  b.get('tAddr').get('i').get('aux').op(OP.i32Mul, OP.i32Sub).set('p');
  keyAtP(2);
  b.op(OP.block, OP.void, OP.loop, OP.void); // $rowsDone, $rows: the call's outer block is 4 deep
  b.get('p').mem(OP.i32Load, 2, 4).set('sm');
  b.get('sm').i32(16).op(OP.i32ShrU).get('aux').op(OP.i32Ne);
  failIf(4);
  b.get('ty').i32(RecordType.SAMPLE).op(OP.i32Eq, OP.if, OP.void); // the call's outer block is 5 deep
  if (k.id >= 0) {
    b.get('p').mem(OP.i64Load, 3, k.id).get('id').op(OP.i64Ne);
    failIf(5);
  }
  b.get('p').get('src').op(OP.i32Sub).set('o');
  emitRow(b, k, () => b.get('value'));
  b.op(OP.else);
  listOther(b);
  b.op(OP.end);
  b.get('to').i32(1).op(OP.i32Add).set('to');
  b.get('i').i32(1).op(OP.i32Add).set('i');
  b.get('i').get('stop').op(OP.i32GeS, OP.brIf, 1);
  b.get('p').get('aux').op(OP.i32Sub).set('p');
  keyAtP(4);
  // Keys never decrease in a uniform ring: a time older than the one before is a ring to key.
  b.get('value').get('k').op(OP.f64Lt);
  failIf(4);
  b.get('value').set('k');
  b.get('k').get('rivalKey').op(OP.f64Lt);
  b.get('k').get('rivalKey').op(OP.f64Eq).get('tie').op(OP.i32And);
  b.op(OP.i32Or, OP.brIf, 0);
  b.op(OP.end, OP.end);
}

/** The merge-scatter of one memory and output layout, as seen from one thread: a compiled instance, and a job record per call. */
/** What a module is compiled from, as a key for the module and engine caches. */
export function mergeScatterKey(kind: ImportedMemory, constants: MergeScatterConstants): string {
  const c = constants.columns;
  const fields = `${constants.pidTid} ${constants.cpu} ${constants.ip} ${constants.time} ${constants.id} ${constants.otherTimeFromEnd} ${constants.event}`;
  return `merge-scatter ${kind} ${RECORD_COLUMN_NAMES.map((name) => c[name]).join(' ')} ${fields}`;
}

export class MergeScatterEngine {
  private readonly run: (job: number) => number;

  constructor(
    private readonly memory: WebAssembly.Memory,
    kind: ImportedMemory,
    private readonly constants: MergeScatterConstants,
  ) {
    const module = compiledModule(mergeScatterKey(kind, constants), () => oneFunctionModule('run', 1, mergeScatterBody(constants), kind));
    this.run = new WebAssembly.Instance(module, { env: { memory } }).exports.run as (job: number) => number;
  }

  /**
   * Writes the slice whose rings are `entries` (by ring number) from output row `at` on, with the
   * job record at `jobAddress` (mergeScatterJobBytes(entries.length) bytes) and the others list at
   * `listAddress`; returns the rows it placed (written, or for holes and others, located), how
   * many other records it listed, and whether a uniform ring's record was not one (then the rows
   * are not all written).
   */
  scatter(jobAddress: number, at: number, entries: readonly MergeScatterEntry[], listAddress: number): { rows: number; others: number; failed: boolean } {
    const buffer = this.memory.buffer;
    const i32 = new Int32Array(buffer, jobAddress, mergeScatterJobBytes(entries.length) / 4);
    const f64 = new Float64Array(buffer, jobAddress, mergeScatterJobBytes(entries.length) / 8);
    i32[HEADER.rings / 4] = entries.length;
    i32[HEADER.at / 4] = at;
    i32[HEADER.list / 4] = listAddress;
    const f64View = new Float64Array(buffer);
    const u32View = new Uint32Array(buffer);
    // A uniform record's time relative to its ring's base, as the call reads it.
    const { time: sampleTime, otherTimeFromEnd } = this.constants;
    const uniformTime = (entry: MergeScatterEntry, row: number): number =>
      uniformRecordTime(u32View, entry.time - row * entry.aux, entry.aux, sampleTime, otherTimeFromEnd, entry.baseHi, entry.baseLo);
    let failed = false;
    entries.forEach((entry, r) => {
      const base = (HEADER_BYTES + r * ENTRY_BYTES) / 4;
      const holds = entry.kind !== ENTRY_NONE && entry.from < entry.to;
      i32[base + ENTRY.kind / 4] = holds ? entry.kind : ENTRY_NONE;
      i32[base + ENTRY.next / 4] = holds ? entry.from : 0;
      i32[base + ENTRY.stop / 4] = holds ? entry.to : 0;
      i32[base + ENTRY.time / 4] = entry.time;
      i32[base + ENTRY.aux / 4] = entry.aux;
      i32[base + ENTRY.src / 4] = entry.src;
      i32[base + ENTRY.position / 4] = entry.position;
      i32[base + ENTRY.base / 4] = entry.baseLo;
      i32[base + ENTRY.base / 4 + 1] = entry.baseHi;
      i32[base + ENTRY.id / 4] = entry.idLo;
      i32[base + ENTRY.id / 4 + 1] = entry.idHi;
      f64[(HEADER_BYTES + r * ENTRY_BYTES + ENTRY.shift) / 8] = entry.shift;
      // MergeCursor's first key of a ring in a slice: its time there, or -Infinity when it has none.
      let first = -Infinity;
      if (holds && entry.kind === ENTRY_UNIFORM) {
        // The slice's first record of a uniform ring: no newer than the newest, no older than the
        // record before it (the slice before checked the rest of that ring up to there).
        const time = uniformTime(entry, entry.from);
        if (!(time <= 0) || (entry.from > 0 && uniformTime(entry, entry.from - 1) > time)) failed = true;
        first = time + entry.shift;
      } else if (holds) {
        first = f64View[(entry.time + entry.from * 8) / 8] + entry.shift;
      }
      f64[(HEADER_BYTES + r * ENTRY_BYTES + ENTRY.key) / 8] = first === first ? first : -Infinity;
    });
    if (failed) return { rows: 0, others: 0, failed };
    const rows = this.run(jobAddress);
    return { rows, others: i32[HEADER.others / 4], failed: i32[HEADER.failed / 4] !== 0 };
  }
}
