// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package;
// the caller gzips it (profile.pb.gz).

import {
  emptyTableToken,
  Function as PprofFunction,
  Line,
  Location,
  Mapping,
  Profile,
  Sample as PprofSample,
  StringTable,
  ValueType,
  Label,
} from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';
import { IntTupleMap } from './int-tuple-map';

/** The largest bigint a number holds exactly (periods and addresses go to the encoder as numbers up to it). */
const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * Samples made and encoded at a time: a profile is the concatenation of its fields' encodings (protobuf merges
 * repeated fields), so samples go to the encoder a batch at a time and their objects die young, instead of every
 * sample of an -a -g profile (one per distinct stack, tens of thousands) living until the whole profile is encoded.
 */
const SAMPLES_PER_BATCH = 1024;

/**
 * A pprof sample whose encoded length is measured once: the encoder asks every sample its length twice (to size
 * the profile's buffer, then for the sample's length prefix), and each ask walks its location ids again — with one
 * sample per distinct stack of an -a -g profile, those walks were the encoder's largest cost.
 */
class MeasuredOnceSample extends PprofSample {
  private measured: number | undefined;

  override get length(): number {
    return (this.measured ??= super.length);
  }
}

/** A location whose encoded length is measured once: the encoder asks it twice (the profile's size, its length prefix). */
class MeasuredOnceLocation extends Location {
  private measured: number | undefined;

  override get length(): number {
    return (this.measured ??= super.length);
  }
}

/** One snapshot's tables → the profile's ids (-1: not mapped yet). */
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
  private readonly locations: Location[] = [];
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

  /** Adds every sample of `tables` (symbolized) whose row `keep(row)` accepts. */
  add(tables: ProfileTables, keep: (row: number) => boolean = () => true): void {
    const { snapshot } = tables;
    const { kind, event, length, time, ring, offset } = snapshot.columns;
    const readers = sampleReaders(snapshot);
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    // Table stack → profile stack id (-1: not mapped yet), per snapshot like the ids.
    const ids: SnapshotIds = {
      locationOfFrame: new Int32Array(tables.frameCount).fill(-1),
      functionOfTableFunction: new Int32Array(tables.functionName.length).fill(-1),
    };
    const stackOfTableStack = new Int32Array(tables.stackCount).fill(-1);
    // At most one new profile stack per table stack or sampled IP, one new location per frame.
    this.stackIndex.reserve(this.stackIndex.size + tables.stackCount + tables.frameCount);
    this.locationIndex.reserve(this.locationIndex.size + tables.frameCount);
    // At most one new total per new profile stack and event, and never more than the snapshot has samples.
    this.totalIndex.reserve(this.totalIndex.size + Math.min(length, tables.stackCount + tables.frameCount));
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
    let stack = this.stackIndex.get(caller, location, 0);
    if (stack < 0) {
      stack = this.stackLocation.length;
      this.stackLocation.push(location);
      this.stackCaller.push(caller);
      this.stackIndex.add(caller, location, 0, stack);
    }
    return stack;
  }

  /** The profile stack of a table stack; its locations are made leaf first (the ids the profile numbers them by). */
  private stackOfTable(tables: ProfileTables, tableStack: number, ids: SnapshotIds, stackOfTableStack: Int32Array): number {
    if (stackOfTableStack[tableStack] >= 0) return stackOfTableStack[tableStack];
    const unmapped: number[] = [];
    for (let s = tableStack; s >= 0 && stackOfTableStack[s] < 0; s = tables.stackPrefix[s]) unmapped.push(s);
    for (const s of unmapped) this.location(tables, tables.stackFrame[s], ids);
    for (let i = unmapped.length - 1; i >= 0; i--) {
      const s = unmapped[i];
      const prefix = tables.stackPrefix[s];
      stackOfTableStack[s] = this.stackOf(prefix < 0 ? -1 : stackOfTableStack[prefix], ids.locationOfFrame[tables.stackFrame[s]]);
    }
    return stackOfTableStack[tableStack];
  }

  /** A stack's location ids, leaf first. */
  private locationsOf(stack: number): number[] {
    const ids: number[] = [];
    for (let s = stack; s >= 0; s = this.stackCaller[s]) ids.push(this.stackLocation[s]);
    return ids;
  }

  /**
   * The profile, encoded: sample types `samples/count` and `period/count`, `samples` the default (what pprof -top
   * shows). Its fields are encoded in the order one Profile's encode() writes them (sample types, samples, mappings,
   * locations, functions, strings, the rest), the samples a batch at a time: the bytes are those of the whole Profile.
   */
  encode(): Uint8Array {
    const s = (text: string) => this.strings.dedup(text);
    // Strings numbered in the order they always were: the labels', then the sample types'.
    const eventLabels = this.eventNames.map((name) => new Label({ key: s('event'), str: s(name) }));
    const sampleType = [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('period'), unit: s('count') })];
    const defaultSampleType = s('samples');
    // Parts without strings of their own: an empty table, not the one with '' that a Profile starts with.
    const part = (fields: ConstructorParameters<typeof Profile>[0]) => new Profile({ ...fields, stringTable: new StringTable(emptyTableToken) }).encode();
    const parts = [part({ sampleType })];
    for (let first = 0; first < this.totalStack.length; first += SAMPLES_PER_BATCH) {
      const samples: PprofSample[] = [];
      for (let total = first; total < Math.min(first + SAMPLES_PER_BATCH, this.totalStack.length); total++) {
        // The period as a number where it is exact: the encoder writes numbers faster than bigints.
        const large = this.totalPeriod[total] < 0 ? this.largePeriod.get(total)! : undefined;
        samples.push(
          new MeasuredOnceSample({
            locationId: this.locationsOf(this.totalStack[total]),
            value: [this.totalSamples[total], large === undefined ? this.totalPeriod[total] : large <= MAX_SAFE_BIGINT ? Number(large) : large],
            label: [eventLabels[this.totalEvent[total]]],
          }),
        );
      }
      parts.push(part({ sample: samples }));
    }
    parts.push(
      new Profile({
        mapping: this.mappings,
        location: this.locations,
        function: this.functions,
        stringTable: this.strings,
        defaultSampleType,
        timeNanos: this.earliestNs ?? 0n,
        durationNanos: this.earliestNs !== undefined && this.latestNs !== undefined ? this.latestNs - this.earliestNs : 0n,
      }).encode(),
    );
    const bytes = new Uint8Array(parts.reduce((size, encoded) => size + encoded.length, 0));
    let offset = 0;
    for (const encoded of parts) {
      bytes.set(encoded, offset);
      offset += encoded.length;
    }
    return bytes;
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
    const id = this.locations.length + 1;
    // A user-space address as a number (exact below 2^53): the encoder splits a bigint with bigint arithmetic.
    const address = high < 0x200000 ? high * 2 ** 32 + low : (BigInt(high) << 32n) | BigInt(low);
    this.locations.push(new MeasuredOnceLocation({ id, mappingId: this.functionMapping[fn - 1], address, line: [new Line({ functionId: fn, line: 0 })] }));
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
    if (!sampled) return freq ? 0 : exactNumber(fixed);
    if (inPlace) {
      // Two halves, a number where it is exact: no bigint per sample.
      const high = view.getUint32(offset + at + 4, true);
      const low = view.getUint32(offset + at, true);
      return high < 0x200000 ? high * 2 ** 32 + low : view.getBigUint64(offset + at, true);
    }
    try {
      const period = (decodeRecordAt(tables.snapshot, row).fields as { period?: unknown }).period;
      return typeof period === 'bigint' ? exactNumber(period) : 0;
    } catch {
      // A damaged record: the decode already counted it; it weighs nothing in the profile.
      return 0;
    }
  }
}

/** A bigint as a number where the number is exact. */
function exactNumber(value: bigint): number | bigint {
  return value <= MAX_SAFE_BIGINT ? Number(value) : value;
}
