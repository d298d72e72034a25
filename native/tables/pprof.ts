// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package;
// the caller gzips it (profile.pb.gz).

import { Function as PprofFunction, Line, Location, Mapping, Profile, Sample as PprofSample, StringTable, ValueType, Label } from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';
import { IntTupleMap } from './int-tuple-map';

/** (stack, event) keys: stack * EVENT_SLOTS + event, exact as a double for any count a profile reaches. */
const EVENT_SLOTS = 1 << 16;
/** The largest bigint a number holds exactly (periods and addresses go to the encoder as numbers up to it). */
const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);

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
  /** (stack id, event index) → samples and period sum, in the order first seen. */
  private readonly totals = new Map<number, { stack: number; event: number; samples: number; period: bigint }>();
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
    const eventOf = new Map<number, number>();
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
      const key = stack * EVENT_SLOTS + eventId;
      let total = this.totals.get(key);
      if (!total) this.totals.set(key, (total = { stack, event: eventId, samples: 0, period: 0n }));
      total.samples++;
      total.period += this.periodOf(
        tables,
        row,
        reader.info.sample.period,
        views[ring[row]],
        offset[row],
        (reader.info.sampleType & Sample.PERIOD) !== 0,
        reader.inPlace,
        reader.event.attr.samplePeriod,
        reader.event.attr.flags.freq === true,
      );
      if (!Number.isNaN(time[row])) {
        const ns = snapshot.columns.timeOriginNs + BigInt(time[row]);
        if (this.earliestNs === undefined || ns < this.earliestNs) this.earliestNs = ns;
        if (this.latestNs === undefined || ns > this.latestNs) this.latestNs = ns;
      }
    }
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

  /** The profile: sample types `samples/count` and `period/count`, `samples` the default (what pprof -top shows). */
  profile(): Profile {
    const s = (text: string) => this.strings.dedup(text);
    const eventLabels = this.eventNames.map((name) => new Label({ key: s('event'), str: s(name) }));
    const samples = [...this.totals.values()].map(
      (total) =>
        new MeasuredOnceSample({
          locationId: this.locationsOf(total.stack),
          // The period as a number where it is exact: the encoder writes numbers faster than bigints.
          value: [total.samples, total.period <= MAX_SAFE_BIGINT ? Number(total.period) : total.period],
          label: [eventLabels[total.event]],
        }),
    );
    return new Profile({
      sampleType: [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('period'), unit: s('count') })],
      sample: samples,
      mapping: this.mappings,
      location: this.locations,
      function: this.functions,
      stringTable: this.strings,
      defaultSampleType: s('samples'),
      timeNanos: this.earliestNs ?? 0n,
      durationNanos: this.earliestNs !== undefined && this.latestNs !== undefined ? this.latestNs - this.earliestNs : 0n,
    });
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
    this.locations.push(new Location({ id, mappingId: this.functionMapping[fn - 1], address, line: [new Line({ functionId: fn, line: 0 })] }));
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
  ): bigint {
    if (!sampled) return freq ? 0n : fixed;
    if (inPlace) return view.getBigUint64(offset + at, true);
    try {
      const period = (decodeRecordAt(tables.snapshot, row).fields as { period?: unknown }).period;
      return typeof period === 'bigint' ? period : 0n;
    } catch {
      // A damaged record: the decode already counted it; it weighs nothing in the profile.
      return 0n;
    }
  }
}
