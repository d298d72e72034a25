// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package;
// the caller gzips it (profile.pb.gz).

import { emptyTableToken, Function as PprofFunction, Location, Mapping, Profile, Sample as PprofSample, StringTable, ValueType, Label } from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT, numberIfExact } from '../abi/u64';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';
import { IntTupleMap } from './int-tuple-map';

/** The largest bigint a number holds exactly (periods and addresses go to the encoder as numbers up to it). */
/**
 * Samples made and encoded at a time: a profile is the concatenation of its fields' encodings (protobuf merges
 * repeated fields), so samples go to the encoder a batch at a time and their objects die young, instead of every
 * sample of an -a -g profile (one per distinct stack, tens of thousands) living until the whole profile is encoded.
 */
const SAMPLES_PER_BATCH = 1024;
/** The encoded profile's first buffer: an -a -g profile of a few seconds is a few MB (doubled as needed). */
const ENCODE_START_BYTES = 1 << 20;

/** The profile's stacks as a trie (see PprofBuilder): per stack its leaf location and the stack it is called from. */
export interface StackTrie {
  readonly stackLocation: readonly number[];
  readonly stackCaller: readonly number[];
}

/**
 * A pprof sample written straight from the stack trie, without allocating: the encoder's own varint code splits each
 * number into a fresh [high, low] array, three times per location id (its length for the profile's size, again for
 * the field's length prefix, then its bytes), and an -a -g profile's samples hold a million location ids, which also
 * needed an array per sample. The bytes are the encoder's (profile.proto's packed varints, leaf first). A value that
 * is not a non-negative integer below 2^53 (a bigint period past that) leaves the sample to the encoder, its location
 * ids then listed as an array. The length is measured once (the encoder asks it twice: the profile's size, the
 * sample's length prefix).
 */
export class PackedSample extends PprofSample {
  private readonly packed: boolean;
  /** Bytes of the location ids' varints, and of the whole sample, once measured. */
  private locationBytes = -1;
  private measured = -1;

  constructor(
    private readonly trie: StackTrie,
    private readonly stack: number,
    value: (number | bigint)[],
    label: Label[],
  ) {
    super({ value, label });
    this.packed = value.every((v) => typeof v === 'number' && v >= 0 && v <= Number.MAX_SAFE_INTEGER);
    if (!this.packed) {
      const ids: number[] = [];
      for (let s = stack; s >= 0; s = trie.stackCaller[s]) ids.push(trie.stackLocation[s]);
      this.locationId = ids;
    }
  }

  override get length(): number {
    if (this.measured >= 0) return this.measured;
    if (!this.packed) return (this.measured = super.length);
    const { stackLocation, stackCaller } = this.trie;
    let payload = 0;
    for (let s = this.stack; s >= 0; s = stackCaller[s]) payload += varintLength(stackLocation[s]);
    this.locationBytes = payload;
    let total = payload === 0 ? 0 : 1 + varintLength(payload) + payload;
    total += packedFieldLength(this.value as number[]);
    for (const label of this.label) {
      const length = label.length;
      total += 1 + varintLength(length) + length;
    }
    return (this.measured = total);
  }

  override _encodeToBuffer(buffer: Uint8Array, offset = 0): number {
    if (!this.packed) return super._encodeToBuffer(buffer, offset);
    if (this.locationBytes < 0) void this.length;
    if (this.locationBytes > 0) {
      const { stackLocation, stackCaller } = this.trie;
      buffer[offset++] = SAMPLE_LOCATION_ID_TAG;
      offset = writeVarint(buffer, offset, this.locationBytes);
      for (let s = this.stack; s >= 0; s = stackCaller[s]) offset = writeVarint(buffer, offset, stackLocation[s]);
    }
    offset = writePackedField(buffer, offset, SAMPLE_VALUE_TAG, this.value as number[]);
    for (const label of this.label) {
      buffer[offset++] = SAMPLE_LABEL_TAG;
      offset = writeVarint(buffer, offset, label.length);
      offset = label._encodeToBuffer(buffer, offset);
    }
    return offset;
  }
}

/** profile.proto Sample's fields as the encoder writes them: (field << 3) | wire type (2: length-delimited). */
const SAMPLE_LOCATION_ID_TAG = (1 << 3) | 2;
const SAMPLE_VALUE_TAG = (2 << 3) | 2;
const SAMPLE_LABEL_TAG = (3 << 3) | 2;

/** profile.proto Location's and Line's fields as the encoder writes them (wire type 0: varint, 2: length-delimited). */
const LOCATION_ID_TAG = (1 << 3) | 0;
const LOCATION_MAPPING_TAG = (2 << 3) | 0;
const LOCATION_ADDRESS_TAG = (3 << 3) | 0;
const LOCATION_LINE_TAG = (4 << 3) | 2;
const LINE_FUNCTION_TAG = (1 << 3) | 0;

/** Bytes of the u64 `high`:`low` (u32 halves) as a varint. */
function varint64Length(high: number, low: number): number {
  if (high === 0) return varintLength(low);
  let length = 4; // the low 28 bits
  let rest = ((low >>> 28) | (high << 4)) >>> 0;
  let top = high >>> 28;
  for (; rest >= 0x80 || top > 0; length++) {
    rest = ((rest >>> 7) | (top << 25)) >>> 0;
    top >>>= 7;
  }
  return length + 1;
}

/** The u64 `high`:`low` as a varint, as the encoder writes it (7 bits at a time, low first). */
function writeVarint64(buffer: Uint8Array, offset: number, high: number, low: number): number {
  while (high) {
    buffer[offset++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  while (low > 0x7f) {
    buffer[offset++] = (low & 0x7f) | 0x80;
    low >>>= 7;
  }
  buffer[offset++] = low;
  return offset;
}

/** Bytes of `value` (a non-negative integer below 2^53) as a varint. */
function varintLength(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  let length = 4;
  for (value = Math.floor(value / 0x10000000); value >= 0x80; length++) value = Math.floor(value / 0x80);
  return value > 0 ? length + 1 : length;
}

function writeVarint(buffer: Uint8Array, offset: number, value: number): number {
  // Shifts while the value fits 31 bits (location ids, counts), divisions above.
  for (; value > 0x7fffffff; value = Math.floor(value / 0x80)) buffer[offset++] = (value % 0x80) | 0x80;
  for (; value >= 0x80; value >>>= 7) buffer[offset++] = (value & 0x7f) | 0x80;
  buffer[offset++] = value;
  return offset;
}

/** A packed repeated varint field: nothing when empty, else its tag, its payload's length and the payload. */
function packedFieldLength(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let payload = 0;
  for (const value of values) payload += varintLength(value);
  return 1 + varintLength(payload) + payload;
}

function writePackedField(buffer: Uint8Array, offset: number, tag: number, values: readonly number[]): number {
  if (values.length === 0) return offset;
  let payload = 0;
  for (const value of values) payload += varintLength(value);
  buffer[offset++] = tag;
  offset = writeVarint(buffer, offset, payload);
  for (const value of values) offset = writeVarint(buffer, offset, value);
  return offset;
}

/**
 * A location written without the encoder's garbage (see PackedSample): its id, mapping, address (from its u32 halves)
 * and one line naming its function, in the bytes the encoder's Location and Line write, measured once.
 */
export class PackedLocation extends Location {
  private measured = -1;
  private lineBytes = 0;

  constructor(
    id: number,
    mappingId: number,
    private readonly ipHigh: number,
    private readonly ipLow: number,
    private readonly functionId: number,
  ) {
    super({ id, mappingId });
  }

  override get length(): number {
    if (this.measured >= 0) return this.measured;
    this.lineBytes = this.functionId ? 1 + varintLength(this.functionId) : 0;
    let total = this.lineBytes ? 1 + varintLength(this.lineBytes) + this.lineBytes : 0;
    if (this.id) total += 1 + varintLength(this.id as number);
    if (this.mappingId) total += 1 + varintLength(this.mappingId as number);
    if (this.ipHigh || this.ipLow) total += 1 + varint64Length(this.ipHigh, this.ipLow);
    return (this.measured = total);
  }

  override _encodeToBuffer(buffer: Uint8Array, offset = 0): number {
    if (this.measured < 0) void this.length;
    if (this.id) {
      buffer[offset++] = LOCATION_ID_TAG;
      offset = writeVarint(buffer, offset, this.id as number);
    }
    if (this.mappingId) {
      buffer[offset++] = LOCATION_MAPPING_TAG;
      offset = writeVarint(buffer, offset, this.mappingId as number);
    }
    if (this.ipHigh || this.ipLow) {
      buffer[offset++] = LOCATION_ADDRESS_TAG;
      offset = writeVarint64(buffer, offset, this.ipHigh, this.ipLow);
    }
    // One line: its function (line 0, column 0 are not written).
    buffer[offset++] = LOCATION_LINE_TAG;
    offset = writeVarint(buffer, offset, this.lineBytes);
    if (this.functionId) {
      buffer[offset++] = LINE_FUNCTION_TAG;
      offset = writeVarint(buffer, offset, this.functionId);
    }
    return offset;
  }
}

/** One snapshot's tables (or one file's batches of them) → the profile's ids (-1: not mapped yet). */
interface SnapshotIds {
  /** Table frame → pprof location id. */
  readonly locationOfFrame: Int32Array;
  /** Table function → pprof function id. */
  readonly functionOfTableFunction: Int32Array;
}

/** The profile of one or more symbolized snapshots' tables (a capture's snapshots add up). */
export class PprofBuilder {
  private readonly strings = new StringTable();
  private readonly functions: PprofFunction[] = [];
  /**
   * The locations as columns, by id - 1: their function and address halves (the mapping is the function's). Made
   * into encoder objects only while encoded, a batch at a time: a Location, its Line and their arrays per location
   * (90k of an -a -g profile) lived until the end, and every full GC of the decode walked them.
   */
  private readonly locationFunction: number[] = [];
  private readonly locationIpLow: number[] = [];
  private readonly mappings: Mapping[] = [];
  private readonly mappingOf = new Map<string, number>();
  private readonly functionOf = new Map<string, number>();
  /** (owner, address low half, function id) → location id; locationIpHigh (by id - 1) tells addresses 4 GiB apart. */
  private readonly locationIndex = new IntTupleMap(3);
  private readonly locationIpHigh: number[] = [];
  /** The rare location whose (owner, low half, function) another location already holds, by its full key. */
  private readonly locationOf = new Map<string, number>();
  /** Per function (by id - 1): its DSO's mapping id. */
  private readonly functionMapping: number[] = [];
  /**
   * The profile's stacks as a trie across snapshots: stack id → its leaf location and the stack it is called from (-1:
   * a root), so a stack is one number however deep, and samples add up by (stack, event) without a string per row.
   */
  private readonly stackIndex = new IntTupleMap(2);
  private readonly stackLocation: number[] = [];
  private readonly stackCaller: number[] = [];
  private readonly eventIndex = new Map<string, number>();
  private readonly eventNames: string[] = [];
  /** (stack id, event index) → total, numbered in the order first seen; per total its stack, event, samples and period sum. */
  private readonly totalIndex = new IntTupleMap(2);
  private readonly totalStack: number[] = [];
  private readonly totalEvent: number[] = [];
  private readonly totalSamples: number[] = [];
  /** The period sum while a number holds it exactly (-1: past that, in largePeriod): a bigint add per sample cost more than the rest of a row. */
  private readonly totalPeriod: number[] = [];
  private readonly largePeriod = new Map<number, bigint>();
  private earliestNs: bigint | undefined;
  private latestNs: bigint | undefined;
  /** Reused by stackOfTable for a stack's table stacks not mapped yet (an array per sample was most of add's garbage). */
  private unmapped: Int32Array = new Int32Array(256);
  /** The tables added last (by their frame table) and their ids: the next batch's tables continue them. */
  private lastTables:
    | {
        readonly frameOwner: readonly number[];
        readonly frameCount: number;
        readonly stackCount: number;
        readonly ids: SnapshotIds;
        readonly stackOfTableStack: Int32Array;
      }
    | undefined;

  /** Adds every sample of `tables` (symbolized) whose row `keep(row)` accepts. */
  add(tables: ProfileTables, keep: (row: number) => boolean = () => true): void {
    const { snapshot } = tables;
    const { kind, event, length, time, ring, offset } = snapshot.columns;
    const readers = sampleReaders(snapshot);
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    const { ids, stackOfTableStack, newFrames, newStacks } = this.idsOf(tables);
    // At most one new profile stack per new table stack or sampled IP, one new location per new frame.
    this.stackIndex.reserve(this.stackIndex.size + newStacks + newFrames);
    this.locationIndex.reserve(this.locationIndex.size + newFrames);
    // At most one new total per new profile stack and event, and never more than the snapshot has samples.
    this.totalIndex.reserve(this.totalIndex.size + Math.min(length, newStacks + newFrames));
    const eventOf = new Map<number, number>();
    // The snapshot's earliest and latest sample times as numbers (relative ns, exact), made absolute once at the end.
    let earliest = Infinity;
    let latest = -Infinity;
    for (let row = 0; row < length; row++) {
      if (kind[row] !== RecordType.SAMPLE || !keep(row)) continue;
      const reader = readers.get(event[row]);
      if (!reader) continue;
      let stack: number;
      const tableStack = tables.sampleStack[row];
      if (tableStack >= 0) stack = this.stackOfTable(tables, tableStack, ids, stackOfTableStack);
      else if (tables.sampleIpFrame[row] >= 0) stack = this.stackOf(-1, this.location(tables, tables.sampleIpFrame[row], ids));
      else continue;
      let eventId = eventOf.get(event[row]);
      if (eventId === undefined) {
        const name = reader.event.name;
        eventId = this.eventIndex.get(name);
        if (eventId === undefined) {
          eventId = this.eventNames.length;
          this.eventNames.push(name);
          this.eventIndex.set(name, eventId);
        }
        eventOf.set(event[row], eventId);
      }
      let total = this.totalIndex.get(stack, eventId, 0);
      if (total < 0) {
        total = this.totalStack.length;
        this.totalStack.push(stack);
        this.totalEvent.push(eventId);
        this.totalSamples.push(0);
        this.totalPeriod.push(0);
        this.totalIndex.add(stack, eventId, 0, total);
      }
      this.totalSamples[total]++;
      this.addPeriod(
        total,
        this.periodOf(
          tables,
          row,
          reader.info.sample.period,
          views[ring[row]],
          offset[row],
          (reader.info.sampleType & Sample.PERIOD) !== 0,
          reader.inPlace,
          reader.event.attr.samplePeriod,
          reader.event.attr.flags.freq === true,
        ),
      );
      const at = time[row];
      if (at < earliest) earliest = at;
      if (at > latest) latest = at;
    }
    if (earliest <= latest) {
      const earliestNs = snapshot.columns.timeOriginNs + BigInt(earliest);
      const latestNs = snapshot.columns.timeOriginNs + BigInt(latest);
      if (this.earliestNs === undefined || earliestNs < this.earliestNs) this.earliestNs = earliestNs;
      if (this.latestNs === undefined || latestNs > this.latestNs) this.latestNs = latestNs;
    }
  }

  /**
   * The ids of `tables`' frames, functions and stacks in this profile (-1: not mapped yet). Tables that continue the
   * ones added last (the next batch of one file, see ProfileTables' `previous`) share their frames, stacks and
   * functions, so they continue those ids too, and a batch maps only what it added; other tables start afresh.
   */
  private idsOf(tables: ProfileTables): { ids: SnapshotIds; stackOfTableStack: Int32Array; newFrames: number; newStacks: number } {
    const last = this.lastTables;
    const continued = last !== undefined && last.frameOwner === tables.frameOwner;
    const frames = continued ? last.frameCount : 0;
    const stacks = continued ? last.stackCount : 0;
    const ids: SnapshotIds = {
      locationOfFrame: widened(continued ? last.ids.locationOfFrame : undefined, tables.frameCount),
      functionOfTableFunction: widened(continued ? last.ids.functionOfTableFunction : undefined, tables.functionName.length),
    };
    const stackOfTableStack = widened(continued ? last.stackOfTableStack : undefined, tables.stackCount);
    this.lastTables = { frameOwner: tables.frameOwner, frameCount: tables.frameCount, stackCount: tables.stackCount, ids, stackOfTableStack };
    return { ids, stackOfTableStack, newFrames: tables.frameCount - frames, newStacks: tables.stackCount - stacks };
  }

  /** Adds `period` to total `total`'s sum: as a number while the sum stays exact, else as a bigint. */
  private addPeriod(total: number, period: number | bigint): void {
    const sum = this.totalPeriod[total];
    if (sum >= 0 && typeof period === 'number' && sum + period <= Number.MAX_SAFE_INTEGER) {
      this.totalPeriod[total] = sum + period;
      return;
    }
    const large = this.largePeriod.get(total) ?? BigInt(sum);
    this.largePeriod.set(total, large + BigInt(period));
    this.totalPeriod[total] = -1;
  }

  /** The profile stack of `location` called from profile stack `caller` (-1: a root), added when new. */
  private stackOf(caller: number, location: number): number {
    const stack = this.stackIndex.get(caller, location, 0);
    return stack >= 0 ? stack : this.newStack(caller, location);
  }

  /** A profile stack known not to exist yet (its caller was made just now: nothing is called from it yet). */
  private newStack(caller: number, location: number): number {
    const stack = this.stackLocation.length;
    this.stackLocation.push(location);
    this.stackCaller.push(caller);
    this.stackIndex.add(caller, location, 0, stack);
    return stack;
  }

  /** The profile stack of a table stack; its locations are made leaf first (the ids the profile numbers them by). */
  private stackOfTable(tables: ProfileTables, tableStack: number, ids: SnapshotIds, stackOfTableStack: Int32Array): number {
    if (stackOfTableStack[tableStack] >= 0) return stackOfTableStack[tableStack];
    let count = 0;
    for (let s = tableStack; s >= 0 && stackOfTableStack[s] < 0; s = tables.stackPrefix[s]) {
      if (count === this.unmapped.length) this.unmapped = widened(this.unmapped, count * 2);
      this.unmapped[count++] = s;
    }
    const unmapped = this.unmapped;
    for (let i = 0; i < count; i++) this.location(tables, tables.stackFrame[unmapped[i]], ids);
    // Callers first: once one is new, every stack below it is new too, and is not looked up.
    let fresh = false;
    for (let i = count - 1; i >= 0; i--) {
      const s = unmapped[i];
      const prefix = tables.stackPrefix[s];
      const caller = prefix < 0 ? -1 : stackOfTableStack[prefix];
      const location = ids.locationOfFrame[tables.stackFrame[s]];
      const known = fresh ? -1 : this.stackIndex.get(caller, location, 0);
      if (known >= 0) stackOfTableStack[s] = known;
      else {
        stackOfTableStack[s] = this.newStack(caller, location);
        fresh = true;
      }
    }
    return stackOfTableStack[tableStack];
  }

  /**
   * The profile, encoded: sample types `samples/count` and `period/count`, `samples` the default (what pprof -top
   * shows). Its fields are encoded in the order one Profile's encode() writes them (sample types, samples, mappings,
   * locations, functions, strings, the rest), the samples and the locations a batch at a time: the bytes are those of
   * the whole Profile.
   */
  encode(): Uint8Array {
    const s = (text: string) => this.strings.dedup(text);
    // Strings numbered in the order they always were: the labels', then the sample types'.
    const eventLabels = this.eventNames.map((name) => new Label({ key: s('event'), str: s(name) }));
    const sampleType = [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('period'), unit: s('count') })];
    const defaultSampleType = s('samples');
    const trie: StackTrie = { stackLocation: this.stackLocation, stackCaller: this.stackCaller };
    // Parts without strings of their own: an empty table, not the one with '' that a Profile starts with. Each is
    // encoded where it goes in one buffer grown as needed (no copy of each part, then of them all).
    const out = { bytes: new Uint8Array(0), length: 0 };
    const encodeInto = (profile: Profile) => {
      const size = profile.length;
      if (out.length + size > out.bytes.length) {
        const grown = new Uint8Array(Math.max(out.bytes.length * 2, out.length + size, ENCODE_START_BYTES));
        grown.set(out.bytes.subarray(0, out.length));
        out.bytes = grown;
      }
      out.length = profile._encodeToBuffer(out.bytes, out.length);
    };
    const part = (fields: ConstructorParameters<typeof Profile>[0]) => encodeInto(new Profile({ ...fields, stringTable: new StringTable(emptyTableToken) }));
    part({ sampleType });
    for (let first = 0; first < this.totalStack.length; first += SAMPLES_PER_BATCH) {
      const samples: PprofSample[] = [];
      for (let total = first; total < Math.min(first + SAMPLES_PER_BATCH, this.totalStack.length); total++) {
        // The period as a number where it is exact: the encoder writes numbers faster than bigints.
        const large = this.totalPeriod[total] < 0 ? this.largePeriod.get(total)! : undefined;
        const period = large === undefined ? this.totalPeriod[total] : numberIfExact(large);
        samples.push(new PackedSample(trie, this.totalStack[total], [this.totalSamples[total], period], [eventLabels[this.totalEvent[total]]]));
      }
      part({ sample: samples });
    }
    part({ mapping: this.mappings });
    for (let first = 0; first < this.locationFunction.length; first += SAMPLES_PER_BATCH) {
      const locations: Location[] = [];
      for (let id = first + 1; id <= Math.min(first + SAMPLES_PER_BATCH, this.locationFunction.length); id++) {
        const fn = this.locationFunction[id - 1];
        locations.push(new PackedLocation(id, this.functionMapping[fn - 1], this.locationIpHigh[id - 1], this.locationIpLow[id - 1], fn));
      }
      part({ location: locations });
    }
    encodeInto(
      new Profile({
        function: this.functions,
        stringTable: this.strings,
        defaultSampleType,
        timeNanos: this.earliestNs ?? 0n,
        durationNanos: this.earliestNs !== undefined && this.latestNs !== undefined ? this.latestNs - this.earliestNs : 0n,
      }),
    );
    return out.bytes.subarray(0, out.length);
  }

  /** The pprof location of a table frame: one per (owner, address, function), shared across snapshots. */
  private location(tables: ProfileTables, frame: number, ids: SnapshotIds): number {
    if (ids.locationOfFrame[frame] >= 0) return ids.locationOfFrame[frame];
    const tableFunction = tables.frameFunction[frame];
    let fn = ids.functionOfTableFunction[tableFunction];
    if (fn < 0) fn = ids.functionOfTableFunction[tableFunction] = this.function(tables.functionName[tableFunction], tables.functionDso[tableFunction] ?? '');
    const owner = tables.frameOwner[frame];
    const high = tables.frameIpHigh[frame];
    const low = tables.frameIpLow[frame];
    // Found by numbers, not by a text key per frame (that key and its bigint were most of this method's cost). The
    // high half is checked, not hashed: the same function at addresses 4 GiB apart in one owner goes to the text key.
    let id = this.locationIndex.get(owner, low | 0, fn);
    if (id >= 0 && this.locationIpHigh[id - 1] !== high) {
      const key = `${owner}\0${high}\0${low}\0${fn}`;
      id = this.locationOf.get(key) ?? this.newLocation(high, low, fn);
      this.locationOf.set(key, id);
    } else if (id < 0) {
      id = this.newLocation(high, low, fn);
      this.locationIndex.add(owner, low | 0, fn, id);
    }
    ids.locationOfFrame[frame] = id;
    return id;
  }

  private newLocation(high: number, low: number, fn: number): number {
    const id = this.locationFunction.length + 1;
    this.locationFunction.push(fn);
    this.locationIpLow.push(low);
    this.locationIpHigh.push(high);
    return id;
  }

  private function(name: string, dso: string): number {
    const key = `${name}\0${dso}`;
    let id = this.functionOf.get(key);
    if (id === undefined) {
      id = this.functions.length + 1;
      const mapping = this.mapping(dso);
      const text = this.strings.dedup(name);
      this.functions.push(new PprofFunction({ id, name: text, systemName: text, filename: this.strings.dedup('') }));
      this.functionMapping.push(mapping);
      this.functionOf.set(key, id);
    }
    return id;
  }

  /** One mapping per DSO (its file name; addresses are not placed in it: locations carry their functions). */
  private mapping(dso: string): number {
    let id = this.mappingOf.get(dso);
    if (id === undefined) {
      id = this.mappings.length + 1;
      // Marked fully symbolized: a reader (go tool pprof) would otherwise symbolize the addresses again from the file,
      // as file offsets, and rename frames it cannot place.
      this.mappings.push(
        new Mapping({ id, filename: this.strings.dedup(dso), hasFunctions: true, hasFilenames: true, hasLineNumbers: true, hasInlineFrames: true }),
      );
      this.mappingOf.set(dso, id);
    }
    return id;
  }

  /** A sample's period: read in place, decoded, or the event's fixed period (perf's rule when the sample has none). */
  private periodOf(
    tables: ProfileTables,
    row: number,
    at: number,
    view: DataView,
    offset: number,
    sampled: boolean,
    inPlace: boolean,
    fixed: bigint,
    freq: boolean,
  ): number | bigint {
    if (!sampled) return freq ? 0 : numberIfExact(fixed);
    if (inPlace) {
      // Two halves, a number where it is exact: no bigint per sample.
      const high = view.getUint32(offset + at + 4, true);
      const low = view.getUint32(offset + at, true);
      return high < EXACT_HIGH_HALF_LIMIT ? high * 2 ** 32 + low : view.getBigUint64(offset + at, true);
    }
    try {
      const period = (decodeRecordAt(tables.snapshot, row).fields as { period?: unknown }).period;
      return typeof period === 'bigint' ? numberIfExact(period) : 0;
    } catch {
      // A damaged record: the decode already counted it; it weighs nothing in the profile.
      return 0;
    }
  }
}

/**
 * Ids for `length` table rows, -1 where not mapped yet: `ids` itself when it has room, else a copy with room to spare
 * (batches add rows a few thousand at a time).
 */
function widened(ids: Int32Array | undefined, length: number): Int32Array {
  if (ids && ids.length >= length) return ids;
  const wider = new Int32Array(ids ? Math.max(length, ids.length * 2) : length).fill(-1);
  if (ids) wider.set(ids);
  return wider;
}
