// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package,
// its samples and locations in its bytes by ProfileWriter; the caller gzips it (profile.pb.gz).

import { grown } from '../abi/grown';
import { emptyTableToken, Function as PprofFunction, Mapping, Profile, StringTable, ValueType, Label } from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT, numberIfExact } from '../abi/u64';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders, type SampleReader } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';
import { IntTupleMap } from './int-tuple-map';

/** The encoded profile's first buffer: an -a -g profile of a few seconds is a few MB (doubled as needed). */
const ENCODE_START_BYTES = 1 << 20;

/**
 * The profile's stacks: the tables' stack table (per stack the stack it is called from, -1 for a root, and its frame)
 * and each frame's location id (see PprofBuilder).
 */
export interface StackTrie {
  readonly stackPrefix: ArrayLike<number>;
  readonly stackFrame: ArrayLike<number>;
  readonly locationOfFrame: ArrayLike<number>;
}

/** profile.proto Profile's sample and location fields: (field << 3) | wire type (2: length-delimited). */
const PROFILE_SAMPLE_TAG = (2 << 3) | 2;
const PROFILE_LOCATION_TAG = (4 << 3) | 2;
const PROFILE_STRING_TAG = (6 << 3) | 2;

const UTF8 = new TextEncoder();

/** The bytes of `text` in UTF-8 as TextEncoder (and Node's Buffer) write it: a lone surrogate as U+FFFD, 3 bytes. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * At most the bytes of a sample but its location ids and its label, and of a location: tags, varints of lengths and
 * ids below 2^35, counts below 2^35, periods and addresses of 64 bits.
 */
const SAMPLE_BOUND = 1 + 5 + (1 + 5) + (1 + 1 + 5 + 10) + (1 + 1);
const LOCATION_BOUND = 1 + 5 + (1 + 5) + (1 + 5) + (1 + 10) + (1 + 1 + 1 + 5);

/** profile.proto Sample's fields as the encoder writes them. */
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

/**
 * The profile's string table: each distinct string's index, '' first. Written by ProfileWriter.strings in
 * pprof-format's bytes, straight into the profile's buffer: pprof-format's StringTable encodes each string into arrays
 * of its own as it is added (three allocations for each of an -a -g profile's 6k function names).
 */
export class ProfileStrings {
  readonly strings: string[] = [];
  private readonly index = new Map<string, number>();

  constructor() {
    this.dedup('');
  }

  dedup(text: string): number {
    let at = this.index.get(text);
    if (at === undefined) {
      at = this.strings.push(text) - 1;
      this.index.set(text, at);
    }
    return at;
  }
}

/**
 * The encoded profile, written into one buffer grown as needed (no copy of each part, then of them all): the parts
 * pprof-format encodes (sample types, mappings, functions, strings and the rest) as it encodes them, and the samples
 * and locations (tens of thousands of each in an -a -g profile, a million location ids) straight from the builder's
 * columns and the stack table, in the bytes pprof-format writes for them: profile.proto's fields in its order, packed
 * varints, tag and length before each. pprof-format would need an object per sample and location, and its varint code
 * makes a [high, low] array per number three times over (measured for the profile, for the field's length, then
 * written): those were most of the encoding's time and garbage. The tests hold these bytes to pprof-format's.
 */
export class ProfileWriter {
  private buffer = new Uint8Array(0);
  private length = 0;
  /** Per table stack: the bytes its location ids take as varints (see stackLocationBytes). */
  private readonly stackBytes: Int32Array;
  /**
   * Per table stack: where its location ids were written last (-1: not yet). A stack's ids are its own then its
   * prefix's, so a sample's are written only down to the first stack written before, and that stack's ids are copied
   * from there: a stack's callers are written once, not once per sample under them (a million ids in all for the -a -g
   * file's 257k stacks).
   */
  private readonly stackAt: Float64Array;

  /** A profile whose samples' stacks are those of `trie`'s first `stacks` stacks. */
  constructor(
    private readonly trie: StackTrie,
    stacks: number,
  ) {
    this.stackBytes = stackLocationBytes(trie, stacks);
    this.stackAt = new Float64Array(stacks).fill(-1);
  }

  /**
   * A part as pprof-format encodes it: a Profile of some of the fields (an empty string table unless the profile's),
   * `length` its length when measured already.
   */
  part(profile: Profile, length = profile.length): void {
    const buffer = this.room(length);
    this.length = profile._encodeToBuffer(buffer, this.length);
  }

  /** Room for `count` more bytes now, instead of the buffer doubled as it fills. */
  reserve(count: number): void {
    this.room(count);
  }

  /** At most the bytes of the samples of stacks `stacks[0, count)`, with labels of at most `labelBytes`. */
  samplesBound(stacks: ArrayLike<number>, count: number, labelBytes: number): number {
    let bytes = count * (SAMPLE_BOUND + labelBytes);
    for (let i = 0; i < count; i++) bytes += stacks[i] < 0 ? 0 : this.stackBytes[stacks[i]];
    return bytes;
  }

  /** A Profile.sample: the location ids of table stack `stack` (-1: none), leaf first; its two values; its label (one, encoded). */
  sample(stack: number, count: number, period: number | bigint, label: Uint8Array): void {
    const locationBytes = stack < 0 ? 0 : this.stackBytes[stack];
    // A period past 2^53 (a bigint) is written from its u32 halves.
    const large = typeof period === 'bigint';
    const periodHigh = large ? Number(period >> 32n) : 0;
    const periodLow = large ? Number(period & 0xffffffffn) : 0;
    const valueBytes = varintLength(count) + (large ? varint64Length(periodHigh, periodLow) : varintLength(period));
    const sampleBytes =
      (locationBytes ? 1 + varintLength(locationBytes) + locationBytes : 0) +
      1 +
      varintLength(valueBytes) +
      valueBytes +
      1 +
      varintLength(label.length) +
      label.length;
    const buffer = this.room(1 + varintLength(sampleBytes) + sampleBytes);
    let at = this.length;
    buffer[at++] = PROFILE_SAMPLE_TAG;
    at = writeVarint(buffer, at, sampleBytes);
    if (locationBytes) {
      const { stackPrefix, stackFrame, locationOfFrame } = this.trie;
      const stackAt = this.stackAt;
      buffer[at++] = SAMPLE_LOCATION_ID_TAG;
      at = writeVarint(buffer, at, locationBytes);
      let s = stack;
      for (; s >= 0 && stackAt[s] < 0; s = stackPrefix[s]) {
        stackAt[s] = at;
        // Location ids are below 2^31: shifts.
        let id = locationOfFrame[stackFrame[s]];
        for (; id >= 0x80; id >>>= 7) buffer[at++] = (id & 0x7f) | 0x80;
        buffer[at++] = id;
      }
      if (s >= 0) {
        const from = stackAt[s];
        buffer.copyWithin(at, from, from + this.stackBytes[s]);
        at += this.stackBytes[s];
      }
    }
    buffer[at++] = SAMPLE_VALUE_TAG;
    at = writeVarint(buffer, at, valueBytes);
    at = writeVarint(buffer, at, count);
    at = large ? writeVarint64(buffer, at, periodHigh, periodLow) : writeVarint(buffer, at, period);
    buffer[at++] = SAMPLE_LABEL_TAG;
    at = writeVarint(buffer, at, label.length);
    for (let i = 0; i < label.length; i++) buffer[at++] = label[i];
    this.length = at;
  }

  /** A Profile.location: its id, mapping, address (u32 halves) and one line naming its function (line 0 not written). */
  location(id: number, mappingId: number, high: number, low: number, functionId: number): void {
    const lineBytes = functionId ? 1 + varintLength(functionId) : 0;
    let locationBytes = 1 + varintLength(lineBytes) + lineBytes;
    if (id) locationBytes += 1 + varintLength(id);
    if (mappingId) locationBytes += 1 + varintLength(mappingId);
    if (high || low) locationBytes += 1 + varint64Length(high, low);
    const buffer = this.room(1 + varintLength(locationBytes) + locationBytes);
    let at = this.length;
    buffer[at++] = PROFILE_LOCATION_TAG;
    at = writeVarint(buffer, at, locationBytes);
    if (id) {
      buffer[at++] = LOCATION_ID_TAG;
      at = writeVarint(buffer, at, id);
    }
    if (mappingId) {
      buffer[at++] = LOCATION_MAPPING_TAG;
      at = writeVarint(buffer, at, mappingId);
    }
    if (high || low) {
      buffer[at++] = LOCATION_ADDRESS_TAG;
      at = writeVarint64(buffer, at, high, low);
    }
    buffer[at++] = LOCATION_LINE_TAG;
    at = writeVarint(buffer, at, lineBytes);
    if (functionId) {
      buffer[at++] = LINE_FUNCTION_TAG;
      at = writeVarint(buffer, at, functionId);
    }
    this.length = at;
  }

  /** A string table: each string as a Profile.string_table field (tag, length, UTF-8), in its order. */
  strings(table: ProfileStrings): void {
    let bytes = 0;
    const lengths = table.strings.map((text) => utf8Length(text));
    for (const length of lengths) bytes += 1 + varintLength(length) + length;
    const buffer = this.room(bytes);
    let at = this.length;
    for (let i = 0; i < lengths.length; i++) {
      buffer[at++] = PROFILE_STRING_TAG;
      at = writeVarint(buffer, at, lengths[i]);
      if (lengths[i] > 0) at += UTF8.encodeInto(table.strings[i], buffer.subarray(at, at + lengths[i])).written;
    }
    this.length = at;
  }

  /** What was written. */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** The buffer, with room for `count` more bytes. */
  private room(count: number): Uint8Array {
    if (this.length + count > this.buffer.length) {
      const wider = new Uint8Array(Math.max(this.buffer.length * 2, this.length + count, ENCODE_START_BYTES));
      wider.set(this.buffer.subarray(0, this.length));
      this.buffer = wider;
    }
    return this.buffer;
  }
}

/**
 * Per table stack: the bytes its location ids take as varints, in one pass over the stack table (a stack comes after
 * its prefix), instead of a walk of each sample's stack before the walk that writes it. Stacks with a frame not met
 * (never sampled) get a figure that is never read.
 */
function stackLocationBytes(trie: StackTrie, stacks: number): Int32Array {
  const { stackPrefix, stackFrame, locationOfFrame } = trie;
  const bytes = new Int32Array(stacks);
  for (let s = 0; s < stacks; s++) {
    const prefix = stackPrefix[s];
    bytes[s] = varintLength(locationOfFrame[stackFrame[s]]) + (prefix < 0 ? 0 : bytes[prefix]);
  }
  return bytes;
}

/** Room for the first locations, totals and functions of a profile (columns doubled as needed). */
const FIRST_ROWS = 1024;

/**
 * The profile of one recording's symbolized tables: one snapshot's, or the batches of one file (ProfileTables that
 * continue each other, see their `previous`), added in order; a capture writes a profile per snapshot.
 *
 * Its stacks are the tables' own. A pprof sample lists its stack's location ids leaf first, and the tables' stack table
 * already holds every callchain as (prefix, frame), so the profile keeps per table stack only the table stack that
 * stands for its profile stack, instead of a trie of its own as large as the stack table (and a hash lookup per stack
 * to build it). A table stack stands for itself unless frames the tables tell apart are one location in the profile
 * (an address of a process named again after its mappings changed, to the same function): two table stacks whose
 * frames make the same locations are one profile stack, so their samples add up in one pprof sample, as perf's would.
 */
export class PprofBuilder {
  private readonly strings = new ProfileStrings();
  private readonly functions: PprofFunction[] = [];
  private readonly mappings: Mapping[] = [];
  private readonly mappingOf = new Map<string, number>();
  /** Per function (by id - 1): its DSO's mapping id. */
  private functionMapping = new Int32Array(FIRST_ROWS);
  /**
   * The locations as columns, by id - 1: their function, address halves (the mapping is the function's), and the frame
   * that made each (the first of the tables' frames found to be it). Made into encoder objects only while encoded, a
   * batch at a time: an object per location (90k of an -a -g profile) lived until the end, and every full GC walked it.
   */
  private locationCount = 0;
  private locationFunction = new Int32Array(FIRST_ROWS);
  private locationIpHigh = new Uint32Array(FIRST_ROWS);
  private locationIpLow = new Uint32Array(FIRST_ROWS);
  private locationFrame = new Int32Array(FIRST_ROWS);
  /** The recording's tables (their columns, shared by every batch) once one is added. */
  private tables: ProfileTables | undefined;
  /** Per table frame: its location id; per table function: its function id (-1: not met yet). */
  private locationOfFrame = new Int32Array(0);
  private functionOfTableFunction = new Int32Array(0);
  /** Per table stack: the table stack that stands for its profile stack (-1: not met yet). */
  private profileStackOf = new Int32Array(0);
  /** Per table stack standing for a profile stack (and for the roots): 1 when a stack called from it is in mergedStacks. */
  private hasMergedCallee = new Uint8Array(0);
  private rootHasMergedCallee = false;
  /**
   * (profile stack or -1, location id) → the table stack standing for that profile stack, where the stack table has no
   * stack of that caller and the frame that made the location (a stack seen only through merged frames).
   */
  private readonly mergedStacks = new IntTupleMap(2);
  private readonly eventIndex = new Map<string, number>();
  private readonly eventNames: string[] = [];
  /** Per event, per table stack standing for a profile stack: its total (-1: none yet). */
  private readonly totalOfStack: Int32Array[] = [];
  /** The totals, numbered in the order first seen: per total its profile stack, event, samples and period sum. */
  private totalCount = 0;
  private totalStack = new Int32Array(FIRST_ROWS);
  private totalEvent = new Int32Array(FIRST_ROWS);
  private totalSamples = new Float64Array(FIRST_ROWS);
  /** The period sum while a number holds it exactly (-1: past that, in largePeriod): a bigint add per sample cost more than the rest of a row. */
  private totalPeriod = new Float64Array(FIRST_ROWS);
  private readonly largePeriod = new Map<number, bigint>();
  private earliestNs: bigint | undefined;
  private latestNs: bigint | undefined;
  /** Reused by profileStack for a stack's table stacks not met yet (an array per sample was most of add's garbage). */
  private unmapped: Int32Array = new Int32Array(256);

  /** Adds every sample of `tables` (symbolized) whose row `keep(row)` accepts (every one without `keep`). */
  add(tables: ProfileTables, keep?: (row: number) => boolean): void {
    this.follow(tables);
    const { snapshot, sampleStack } = tables;
    const { kind, event, length, time, ring, offset } = snapshot.columns;
    const readers = sampleReaders(snapshot);
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    // Per event index of the columns: its profile event and how its periods are read (null: not a sample event here);
    // the last one found kept at hand (a file's samples are of one event, or a few).
    const sides = new Map<number, EventSide | null>();
    let lastEvent = NaN;
    let lastSide: EventSide | null = null;
    // The snapshot's earliest and latest sample times as numbers (relative ns, exact), made absolute once at the end.
    let earliest = Infinity;
    let latest = -Infinity;
    for (let row = 0; row < length; row++) {
      if (kind[row] !== RecordType.SAMPLE || (keep !== undefined && !keep(row))) continue;
      if (event[row] !== lastEvent) {
        lastEvent = event[row];
        let found = sides.get(lastEvent);
        if (found === undefined) sides.set(lastEvent, (found = this.eventSide(readers.get(lastEvent))));
        lastSide = found;
      }
      const side = lastSide;
      if (side === null) continue;
      let tableStack = sampleStack[row];
      if (tableStack < 0) {
        // A sample without a callchain is its IP's frame alone: a root stack of the table, added where it has none.
        const ipFrame = tables.sampleIpFrame[row];
        if (ipFrame < 0) continue;
        tableStack = tables.stackOf(-1, ipFrame);
        if (tableStack >= this.profileStackOf.length) this.widenStacks(tableStack + 1);
      }
      const stack = this.profileStackOf[tableStack] >= 0 ? this.profileStackOf[tableStack] : this.profileStack(tables, tableStack);
      // Events are numbered as their first sample in the profile is met.
      if (side.id < 0) side.id = this.eventId(side.name);
      let totals = this.totalOfStack[side.id];
      if (stack >= totals.length) totals = this.totalOfStack[side.id] = grown(totals, Math.max(stack + 1, tables.stackCount), -1);
      let total = totals[stack];
      if (total < 0) total = totals[stack] = this.newTotal(stack, side.id);
      this.totalSamples[total]++;
      let period: number | bigint;
      if (side.periodAt >= 0) {
        // Read in place as two halves, a number where it is exact: no bigint per sample.
        const view = views[ring[row]];
        const at = offset[row] + side.periodAt;
        const high = view.getUint32(at + 4, true);
        period = high < EXACT_HIGH_HALF_LIMIT ? high * 2 ** 32 + view.getUint32(at, true) : view.getBigUint64(at, true);
      } else period = side.fixedPeriod ?? decodedPeriod(tables, row);
      this.addPeriod(total, period);
      const at = time[row];
      if (at < earliest) earliest = at;
      if (at > latest) latest = at;
    }
    if (earliest <= latest) this.spans(snapshot.columns.timeOriginNs, earliest, latest);
  }

  /** The profile spans the relative times `earliest` to `latest` of a snapshot whose times start at `originNs`. */
  private spans(originNs: bigint, earliest: number, latest: number): void {
    const earliestNs = originNs + BigInt(earliest);
    const latestNs = originNs + BigInt(latest);
    if (this.earliestNs === undefined || earliestNs < this.earliestNs) this.earliestNs = earliestNs;
    if (this.latestNs === undefined || latestNs > this.latestNs) this.latestNs = latestNs;
  }

  /** How a sample event's periods are read: in place, decoded, or the event's fixed period (perf's rule when the sample has none). Null without a reader. */
  private eventSide(reader: SampleReader | undefined): EventSide | null {
    if (reader === undefined) return null;
    const { name } = reader.event;
    if ((reader.info.sampleType & Sample.PERIOD) === 0) {
      return { name, id: -1, periodAt: -1, fixedPeriod: reader.event.attr.flags.freq === true ? 0 : numberIfExact(reader.event.attr.samplePeriod) };
    }
    return { name, id: -1, periodAt: reader.inPlace ? reader.info.sample.period : -1, fixedPeriod: undefined };
  }

  /** The profile's event `name` (by name: the batches' events add up), added when new. */
  private eventId(name: string): number {
    let id = this.eventIndex.get(name);
    if (id === undefined) {
      id = this.eventNames.length;
      this.eventNames.push(name);
      this.eventIndex.set(name, id);
      this.totalOfStack.push(new Int32Array(0));
    }
    return id;
  }

  /**
   * Takes `tables` as the recording's (the first added) or as its next batch, and makes room for their frames,
   * functions and stacks. Tables of another recording are refused: their frames
   * and stacks are numbered afresh, and the ids kept per frame and stack would name others'.
   */
  private follow(tables: ProfileTables): void {
    if (this.tables !== undefined && this.tables.frameOwner !== tables.frameOwner) {
      throw new Error('PprofBuilder.add: these tables do not continue the ones added before (a profile adds the batches of one recording)');
    }
    this.tables = tables;
    if (this.locationOfFrame.length < tables.frameCount) this.locationOfFrame = grown(this.locationOfFrame, tables.frameCount, -1);
    if (this.functionOfTableFunction.length < tables.functionName.length) {
      this.functionOfTableFunction = grown(this.functionOfTableFunction, tables.functionName.length, -1);
    }
    if (this.profileStackOf.length < tables.stackCount) this.widenStacks(tables.stackCount);
  }

  private widenStacks(length: number): void {
    this.profileStackOf = grown(this.profileStackOf, length, -1);
    this.hasMergedCallee = grown(this.hasMergedCallee, length, 0);
  }

  private newTotal(stack: number, eventId: number): number {
    const total = this.totalCount++;
    if (total === this.totalStack.length) {
      this.totalStack = grown(this.totalStack, total + 1, 0);
      this.totalEvent = grown(this.totalEvent, total + 1, 0);
      this.totalSamples = grown(this.totalSamples, total + 1, 0);
      this.totalPeriod = grown(this.totalPeriod, total + 1, 0);
    }
    this.totalStack[total] = stack;
    this.totalEvent[total] = eventId;
    return total;
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

  /**
   * The table stack standing for table stack `tableStack`'s profile stack. Its frames not met before get their
   * locations leaf first (the order the profile numbers them in) as its table stacks not met before are gathered, then
   * those their stand-ins, callers first.
   */
  private profileStack(tables: ProfileTables, tableStack: number): number {
    const profileStackOf = this.profileStackOf;
    if (profileStackOf[tableStack] >= 0) return profileStackOf[tableStack];
    const { stackPrefix, stackFrame } = tables;
    const locationOfFrame = this.locationOfFrame;
    let count = 0;
    for (let s = tableStack; s >= 0 && profileStackOf[s] < 0; s = stackPrefix[s]) {
      if (count === this.unmapped.length) this.unmapped = grown(this.unmapped, count * 2, 0);
      this.unmapped[count++] = s;
      if (locationOfFrame[stackFrame[s]] < 0) this.location(tables, stackFrame[s]);
    }
    const unmapped = this.unmapped;
    for (let i = count - 1; i >= 0; i--) {
      const s = unmapped[i];
      const prefix = stackPrefix[s];
      profileStackOf[s] = this.standIn(tables, s, prefix, prefix < 0 ? -1 : profileStackOf[prefix], stackFrame[s]);
    }
    return profileStackOf[tableStack];
  }

  /**
   * The stand-in of table stack `s` (frame `frame` called from table stack `prefix`), whose caller's stand-in is
   * `caller`. It is `s` itself when `caller` is its prefix and `frame` made its location, as every stack of a recording
   * whose processes kept their mappings is: no lookup. Else the stack (caller, the frame that made the location) of
   * the table, where there is one, or the stand-in kept for (caller, location) in mergedStacks, or `s`, kept there.
   * One profile stack gets one stand-in whichever of its table stacks comes first: mergedStacks is asked first (a
   * stack the table adds in a later batch finds the stand-in given before it existed), and is given a stand-in only
   * while the table has no such stack.
   */
  private standIn(tables: ProfileTables, s: number, prefix: number, caller: number, frame: number): number {
    const location = this.locationOfFrame[frame];
    if (caller < 0 ? this.rootHasMergedCallee : this.hasMergedCallee[caller] === 1) {
      const merged = this.mergedStacks.get(caller, location, 0);
      if (merged >= 0) return merged;
    }
    const maker = this.locationFrame[location - 1];
    if (caller === prefix && frame === maker) return s;
    const known = tables.knownStack(caller, maker);
    if (known >= 0) return known;
    this.mergedStacks.add(caller, location, 0, s);
    if (caller < 0) this.rootHasMergedCallee = true;
    else this.hasMergedCallee[caller] = 1;
    return s;
  }

  /**
   * The profile, encoded: sample types `samples/count` and `period/count`, `samples` the default (what pprof -top
   * shows). Its fields are written in the order one Profile's encode() writes them (sample types, samples, mappings,
   * locations, functions, strings, the rest), the samples and the locations by ProfileWriter: the bytes are those of
   * the whole Profile.
   */
  encode(): Uint8Array {
    const s = (text: string) => this.strings.dedup(text);
    // Strings numbered in the order they always were: the labels', then the sample types'.
    const eventLabels = this.eventNames.map((name) => new Label({ key: s('event'), str: s(name) }).encode());
    const sampleType = [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('period'), unit: s('count') })];
    const defaultSampleType = s('samples');
    const trie: StackTrie = {
      stackPrefix: this.tables?.stackPrefix ?? [],
      stackFrame: this.tables?.stackFrame ?? [],
      locationOfFrame: this.locationOfFrame,
    };
    // Parts as pprof-format encodes them, without its string table (the profile's is written by ProfileWriter).
    const head = new Profile({ sampleType, stringTable: new StringTable(emptyTableToken) });
    const mappings = new Profile({ mapping: this.mappings, stringTable: new StringTable(emptyTableToken) });
    const functions = new Profile({ function: this.functions, stringTable: new StringTable(emptyTableToken) });
    const rest = new Profile({
      stringTable: new StringTable(emptyTableToken),
      defaultSampleType,
      timeNanos: this.earliestNs ?? 0n,
      durationNanos: this.earliestNs !== undefined && this.latestNs !== undefined ? this.latestNs - this.earliestNs : 0n,
    });
    const out = new ProfileWriter(trie, this.tables?.stackCount ?? 0);
    const [headBytes, mappingBytes, functionBytes, restBytes] = [head.length, mappings.length, functions.length, rest.length];
    // Room for all but the strings at once (a bound: the buffer doubled from a megabyte copied 7 MB to hold a 6 MB
    // profile).
    out.reserve(
      headBytes +
        out.samplesBound(this.totalStack, this.totalCount, Math.max(0, ...eventLabels.map((label) => label.length))) +
        mappingBytes +
        this.locationCount * LOCATION_BOUND +
        functionBytes +
        restBytes,
    );
    out.part(head, headBytes);
    this.writeSamples(out, eventLabels);
    out.part(mappings, mappingBytes);
    this.writeLocations(out);
    out.part(functions, functionBytes);
    out.strings(this.strings);
    out.part(rest, restBytes);
    return out.bytes();
  }

  /** The samples, one per total. (A loop of its own: compiled alone, not with what follows it in encode.) */
  private writeSamples(out: ProfileWriter, eventLabels: readonly Uint8Array[]): void {
    for (let total = 0; total < this.totalCount; total++) {
      // The period as a number where it is exact.
      const large = this.totalPeriod[total] < 0 ? this.largePeriod.get(total)! : undefined;
      const period = large === undefined ? this.totalPeriod[total] : numberIfExact(large);
      out.sample(this.totalStack[total], this.totalSamples[total], period, eventLabels[this.totalEvent[total]]);
    }
  }

  /** The locations, by id. */
  private writeLocations(out: ProfileWriter): void {
    for (let id = 1; id <= this.locationCount; id++) {
      const fn = this.locationFunction[id - 1];
      out.location(id, this.functionMapping[fn - 1], this.locationIpHigh[id - 1], this.locationIpLow[id - 1], fn);
    }
  }

  /**
   * The pprof location of a table frame: one per (owner, address, function). The tables have one frame per owner and
   * address, but for a process whose mappings changed (a frame per address and mappings): such a frame shares the
   * location of an earlier one named to the same function. (An earlier one has its location already when it is ever
   * sampled: its samples are in the batches before, added before.)
   */
  private location(tables: ProfileTables, frame: number): number {
    if (this.locationOfFrame[frame] >= 0) return this.locationOfFrame[frame];
    const tableFunction = tables.frameFunction[frame];
    let fn = this.functionOfTableFunction[tableFunction];
    if (fn < 0) fn = this.functionOfTableFunction[tableFunction] = this.function(tables.functionName[tableFunction], tables.functionDso[tableFunction] ?? '');
    let id = -1;
    for (const other of tables.earlierFramesAt(frame)) {
      const location = this.locationOfFrame[other];
      if (location > 0 && this.locationFunction[location - 1] === fn) {
        id = location;
        break;
      }
    }
    if (id < 0) id = this.newLocation(tables.frameIpHigh[frame], tables.frameIpLow[frame], fn, frame);
    this.locationOfFrame[frame] = id;
    return id;
  }

  private newLocation(high: number, low: number, fn: number, frame: number): number {
    const index = this.locationCount++;
    if (index === this.locationFunction.length) {
      this.locationFunction = grown(this.locationFunction, index + 1, 0);
      this.locationIpHigh = grown(this.locationIpHigh, index + 1, 0);
      this.locationIpLow = grown(this.locationIpLow, index + 1, 0);
      this.locationFrame = grown(this.locationFrame, index + 1, 0);
    }
    this.locationFunction[index] = fn;
    this.locationIpHigh[index] = high;
    this.locationIpLow[index] = low;
    this.locationFrame[index] = frame;
    return index + 1;
  }

  /** The pprof function of a table function (one per name and DSO, as the table's). */
  private function(name: string, dso: string): number {
    const id = this.functions.length + 1;
    const mapping = this.mapping(dso);
    const text = this.strings.dedup(name);
    this.functions.push(new PprofFunction({ id, name: text, systemName: text, filename: this.strings.dedup('') }));
    if (id > this.functionMapping.length) this.functionMapping = grown(this.functionMapping, id, 0);
    this.functionMapping[id - 1] = mapping;
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
}

/** How the samples of one event go into the profile (see PprofBuilder.eventSide). */
interface EventSide {
  readonly name: string;
  /** The profile's event (-1: until a sample of it is added). */
  id: number;
  /** Where in a sample its period is read in place (-1: not). */
  readonly periodAt: number;
  /** The period of every sample of an event whose samples carry none; undefined where they are decoded for it. */
  readonly fixedPeriod: number | bigint | undefined;
}

/** The period of a sample the in-place reader does not know: decoded whole. */
function decodedPeriod(tables: ProfileTables, row: number): number | bigint {
  try {
    const period = (decodeRecordAt(tables.snapshot, row).fields as { period?: unknown }).period;
    return typeof period === 'bigint' ? numberIfExact(period) : 0;
  } catch {
    // A damaged record: the decode already counted it; it weighs nothing in the profile.
    return 0;
  }
}
