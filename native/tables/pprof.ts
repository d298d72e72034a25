// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package,
// its samples and locations in its bytes by ProfileWriter; the caller gzips it (profile.pb.gz).

import { emptyTableToken, Function as PprofFunction, Mapping, Profile, StringTable, ValueType, Label } from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { EXACT_HIGH_HALF_LIMIT, numberIfExact } from '../abi/u64';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders } from '../decode/sample-readers';
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
 * The encoded profile, written into one buffer grown as needed (no copy of each part, then of them all): the parts
 * pprof-format encodes (sample types, mappings, functions, strings and the rest) as it encodes them, and the samples
 * and locations (tens of thousands of each in an -a -g profile, a million location ids) straight from the builder's
 * columns and the stack table, in the bytes pprof-format writes for them: profile.proto's fields in its order, packed
 * varints, tag and length before each. pprof-format would need an object per sample and location, and its varint code
 * makes a [high, low] array per number three times over (measured for the profile, for the field's length, then
 * written): those were most of the encoding's time and garbage. The tests hold these bytes to pprof-format's.
 */
export class ProfileWriter {
  private buffer = new Uint8Array(ENCODE_START_BYTES);
  private length = 0;

  /** A part as pprof-format encodes it: a Profile of some of the fields (an empty string table unless the profile's). */
  part(profile: Profile): void {
    const buffer = this.room(profile.length);
    this.length = profile._encodeToBuffer(buffer, this.length);
  }

  /**
   * A Profile.sample: the location ids of table stack `stack` (-1: none), leaf first, whose varints take
   * `locationBytes` (see stackLocationBytes); its two values; its label (one, encoded).
   */
  sample(trie: StackTrie, stack: number, locationBytes: number, count: number, period: number | bigint, label: Uint8Array): void {
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
      const { stackPrefix, stackFrame, locationOfFrame } = trie;
      buffer[at++] = SAMPLE_LOCATION_ID_TAG;
      at = writeVarint(buffer, at, locationBytes);
      for (let s = stack; s >= 0; s = stackPrefix[s]) at = writeVarint(buffer, at, locationOfFrame[stackFrame[s]]);
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

  /** What was written. */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** The buffer, with room for `count` more bytes. */
  private room(count: number): Uint8Array {
    if (this.length + count > this.buffer.length) {
      const wider = new Uint8Array(Math.max(this.buffer.length * 2, this.length + count));
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
export function stackLocationBytes(trie: StackTrie, stacks: number): Int32Array {
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
  private readonly strings = new StringTable();
  private readonly functions: PprofFunction[] = [];
  private readonly mappings: Mapping[] = [];
  private readonly mappingOf = new Map<string, number>();
  private readonly functionOf = new Map<string, number>();
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
  /** (owner, address low half, function id) → location id; locationIpHigh tells addresses 4 GiB apart. */
  private readonly locationIndex = new IntTupleMap(3);
  /** The rare location whose (owner, low half, function) another location already holds, by its full key. */
  private readonly locationOf = new Map<string, number>();
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

  /** Adds every sample of `tables` (symbolized) whose row `keep(row)` accepts. */
  add(tables: ProfileTables, keep: (row: number) => boolean = () => true): void {
    const newFrames = this.follow(tables);
    const { snapshot } = tables;
    const { kind, event, length, time, ring, offset } = snapshot.columns;
    const readers = sampleReaders(snapshot);
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    this.locationIndex.reserve(this.locationIndex.size + newFrames);
    const eventOf = new Map<number, number>();
    // The snapshot's earliest and latest sample times as numbers (relative ns, exact), made absolute once at the end.
    let earliest = Infinity;
    let latest = -Infinity;
    for (let row = 0; row < length; row++) {
      if (kind[row] !== RecordType.SAMPLE || !keep(row)) continue;
      const reader = readers.get(event[row]);
      if (!reader) continue;
      let tableStack = tables.sampleStack[row];
      if (tableStack < 0) {
        // A sample without a callchain is its IP's frame alone: a root stack of the table, added where it has none.
        const ipFrame = tables.sampleIpFrame[row];
        if (ipFrame < 0) continue;
        tableStack = tables.stackOf(-1, ipFrame);
        if (tableStack >= this.profileStackOf.length) this.widenStacks(tableStack + 1);
      }
      const stack = this.profileStack(tables, tableStack);
      let eventId = eventOf.get(event[row]);
      if (eventId === undefined) {
        const name = reader.event.name;
        eventId = this.eventIndex.get(name);
        if (eventId === undefined) {
          eventId = this.eventNames.length;
          this.eventNames.push(name);
          this.eventIndex.set(name, eventId);
          this.totalOfStack.push(new Int32Array(0));
        }
        eventOf.set(event[row], eventId);
      }
      let totals = this.totalOfStack[eventId];
      if (stack >= totals.length) totals = this.totalOfStack[eventId] = grown(totals, Math.max(stack + 1, tables.stackCount), -1);
      let total = totals[stack];
      if (total < 0) total = totals[stack] = this.newTotal(stack, eventId);
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
   * Takes `tables` as the recording's (the first added) or as its next batch, and makes room for their frames,
   * functions and stacks; the number of frames not met before. Tables of another recording are refused: their frames
   * and stacks are numbered afresh, and the ids kept per frame and stack would name others'.
   */
  private follow(tables: ProfileTables): number {
    if (this.tables !== undefined && this.tables.frameOwner !== tables.frameOwner) {
      throw new Error('PprofBuilder.add: these tables do not continue the ones added before (a profile adds the batches of one recording)');
    }
    const known = this.tables?.frameCount ?? 0;
    this.tables = tables;
    if (this.locationOfFrame.length < tables.frameCount) this.locationOfFrame = grown(this.locationOfFrame, tables.frameCount, -1);
    if (this.functionOfTableFunction.length < tables.functionName.length) {
      this.functionOfTableFunction = grown(this.functionOfTableFunction, tables.functionName.length, -1);
    }
    if (this.profileStackOf.length < tables.stackCount) this.widenStacks(tables.stackCount);
    return tables.frameCount - known;
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
   * locations leaf first (the order the profile numbers them in), then its table stacks not met before their stand-ins,
   * callers first.
   */
  private profileStack(tables: ProfileTables, tableStack: number): number {
    const profileStackOf = this.profileStackOf;
    if (profileStackOf[tableStack] >= 0) return profileStackOf[tableStack];
    const { stackPrefix, stackFrame } = tables;
    let count = 0;
    for (let s = tableStack; s >= 0 && profileStackOf[s] < 0; s = stackPrefix[s]) {
      if (count === this.unmapped.length) this.unmapped = grown(this.unmapped, count * 2, 0);
      this.unmapped[count++] = s;
    }
    const unmapped = this.unmapped;
    for (let i = 0; i < count; i++) this.location(tables, stackFrame[unmapped[i]]);
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
    const locationBytes = stackLocationBytes(trie, this.tables?.stackCount ?? 0);
    // Parts without strings of their own: an empty table, not the one with '' that a Profile starts with.
    const emptyStrings = () => new StringTable(emptyTableToken);
    const out = new ProfileWriter();
    out.part(new Profile({ sampleType, stringTable: emptyStrings() }));
    for (let total = 0; total < this.totalCount; total++) {
      const stack = this.totalStack[total];
      // The period as a number where it is exact.
      const large = this.totalPeriod[total] < 0 ? this.largePeriod.get(total)! : undefined;
      const period = large === undefined ? this.totalPeriod[total] : numberIfExact(large);
      out.sample(trie, stack, locationBytes[stack], this.totalSamples[total], period, eventLabels[this.totalEvent[total]]);
    }
    out.part(new Profile({ mapping: this.mappings, stringTable: emptyStrings() }));
    for (let id = 1; id <= this.locationCount; id++) {
      const fn = this.locationFunction[id - 1];
      out.location(id, this.functionMapping[fn - 1], this.locationIpHigh[id - 1], this.locationIpLow[id - 1], fn);
    }
    out.part(
      new Profile({
        function: this.functions,
        stringTable: this.strings,
        defaultSampleType,
        timeNanos: this.earliestNs ?? 0n,
        durationNanos: this.earliestNs !== undefined && this.latestNs !== undefined ? this.latestNs - this.earliestNs : 0n,
      }),
    );
    return out.bytes();
  }

  /** The pprof location of a table frame: one per (owner, address, function). */
  private location(tables: ProfileTables, frame: number): number {
    if (this.locationOfFrame[frame] >= 0) return this.locationOfFrame[frame];
    const tableFunction = tables.frameFunction[frame];
    let fn = this.functionOfTableFunction[tableFunction];
    if (fn < 0) fn = this.functionOfTableFunction[tableFunction] = this.function(tables.functionName[tableFunction], tables.functionDso[tableFunction] ?? '');
    const owner = tables.frameOwner[frame];
    const high = tables.frameIpHigh[frame];
    const low = tables.frameIpLow[frame];
    // Found by numbers, not by a text key per frame (that key and its bigint were most of this method's cost). The
    // high half is checked, not hashed: the same function at addresses 4 GiB apart in one owner goes to the text key.
    let id = this.locationIndex.get(owner, low | 0, fn);
    if (id >= 0 && this.locationIpHigh[id - 1] !== high) {
      const key = `${owner}\0${high}\0${low}\0${fn}`;
      id = this.locationOf.get(key) ?? this.newLocation(high, low, fn, frame);
      this.locationOf.set(key, id);
    } else if (id < 0) {
      id = this.newLocation(high, low, fn, frame);
      this.locationIndex.add(owner, low | 0, fn, id);
    }
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

  private function(name: string, dso: string): number {
    const key = `${name}\0${dso}`;
    let id = this.functionOf.get(key);
    if (id === undefined) {
      id = this.functions.length + 1;
      const mapping = this.mapping(dso);
      const text = this.strings.dedup(name);
      this.functions.push(new PprofFunction({ id, name: text, systemName: text, filename: this.strings.dedup('') }));
      if (id > this.functionMapping.length) this.functionMapping = grown(this.functionMapping, id, 0);
      this.functionMapping[id - 1] = mapping;
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
 * `array` with room for `length` entries: itself when it has it, else a copy at least twice as long, the new entries
 * `fill` (columns grow a batch at a time: doubling copies each entry a few times at most).
 */
function grown<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(array: T, length: number, fill: number): T {
  if (array.length >= length) return array;
  const wider = new (array.constructor as new (length: number) => T)(Math.max(length, array.length * 2));
  wider.set(array);
  if (fill !== 0) wider.fill(fill, array.length);
  return wider;
}
