// A snapshot's samples as a pprof profile (profile.proto, what Parca, Pyroscope, Google Cloud Profiler and
// `go tool pprof` read), built from the tables: a location per frame, a function per function of the function
// table, a mapping per DSO, and one pprof sample per distinct (stack, event) with its sample count and period sum —
// the profile's size follows the tables, not the record count. Encoded by the maintained `pprof-format` package;
// the caller gzips it (profile.pb.gz).

import { Function as PprofFunction, Line, Location, Mapping, Profile, Sample as PprofSample, StringTable, ValueType, Label } from 'pprof-format';
import { RecordType, Sample } from '../abi/uapi';
import { decodeRecordAt } from '../decode/record';
import { sampleReaders, type ProfileTables } from './profile-tables';

/** The profile of one or more symbolized snapshots' tables (a capture's snapshots add up). */
export class PprofBuilder {
  private readonly strings = new StringTable();
  private readonly functions: PprofFunction[] = [];
  private readonly locations: Location[] = [];
  private readonly mappings: Mapping[] = [];
  private readonly mappingOf = new Map<string, number>();
  private readonly functionOf = new Map<string, number>();
  private readonly locationOf = new Map<string, number>();
  /** (location ids joined, event) → [samples, period]. */
  private readonly totals = new Map<string, { locations: number[]; event: string; samples: number; period: bigint }>();
  private earliestNs: bigint | undefined;
  private latestNs: bigint | undefined;

  /** Adds every sample of `tables` (symbolized) whose row `keep(row)` accepts. */
  add(tables: ProfileTables, keep: (row: number) => boolean = () => true): void {
    const { snapshot } = tables;
    const { kind, event, length, time, ring, offset } = snapshot.columns;
    const readers = sampleReaders(snapshot);
    const views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
    // Per snapshot: table frame → pprof location id; per stack, its location ids leaf first.
    const locationOfFrame = new Int32Array(tables.frameCount).fill(-1);
    const stackKey: (string | undefined)[] = [];
    const stackLocations: (number[] | undefined)[] = [];
    for (let row = 0; row < length; row++) {
      if (kind[row] !== RecordType.SAMPLE || !keep(row)) continue;
      const reader = readers.get(event[row]);
      if (!reader) continue;
      let locations: number[];
      let key: string;
      const stack = tables.sampleStack[row];
      if (stack >= 0) {
        if (stackLocations[stack] === undefined) {
          const ids = tables.framesOf(stack).map((frame) => this.location(tables, frame, locationOfFrame));
          stackLocations[stack] = ids;
          stackKey[stack] = ids.join(',');
        }
        locations = stackLocations[stack] as number[];
        key = stackKey[stack] as string;
      } else if (tables.sampleIpFrame[row] >= 0) {
        locations = [this.location(tables, tables.sampleIpFrame[row], locationOfFrame)];
        key = String(locations[0]);
      } else {
        continue;
      }
      const name = reader.event.name;
      const totalKey = `${name}\0${key}`;
      let total = this.totals.get(totalKey);
      if (!total) this.totals.set(totalKey, (total = { locations, event: name, samples: 0, period: 0n }));
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

  /** The profile: sample types `samples/count` and `period/count`, `samples` the default (what pprof -top shows). */
  profile(): Profile {
    const s = (text: string) => this.strings.dedup(text);
    const samples = [...this.totals.values()].map(
      (total) =>
        new PprofSample({
          locationId: total.locations,
          value: [total.samples, total.period],
          label: [new Label({ key: s('event'), str: s(total.event) })],
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

  /** The pprof location of a table frame: one per (DSO, address, function), shared across snapshots. */
  private location(tables: ProfileTables, frame: number, cache: Int32Array): number {
    if (cache[frame] >= 0) return cache[frame];
    const fn = tables.frameFunction[frame];
    const name = tables.functionName[fn];
    const dso = tables.functionDso[fn] ?? '';
    const ip = tables.frameIp(frame);
    const key = `${tables.frameOwner[frame]}\0${ip}\0${name}\0${dso}`;
    let id = this.locationOf.get(key);
    if (id === undefined) {
      id = this.locations.length + 1;
      this.locations.push(new Location({ id, mappingId: this.mapping(dso), address: ip, line: [new Line({ functionId: this.function(name, dso), line: 0 })] }));
      this.locationOf.set(key, id);
    }
    cache[frame] = id;
    return id;
  }

  private function(name: string, dso: string): number {
    const key = `${name}\0${dso}`;
    let id = this.functionOf.get(key);
    if (id === undefined) {
      id = this.functions.length + 1;
      const text = this.strings.dedup(name);
      this.functions.push(new PprofFunction({ id, name: text, systemName: text, filename: this.strings.dedup('') }));
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
