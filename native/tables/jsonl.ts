// JSON Lines from the tables: the README's Output contract, byte for byte what formatRecordJson writes, with the
// expensive parts of a sample line — its address, symbol, callchain and callchain symbols — formatted once per
// frame and once per stack instead of once per record. Samples of an event whose fields the tables read in place
// are written from the ring bytes; every other record (side-band, tracepoints, read groups, user stacks) goes
// through the record decoder as before.

import { RecordType, Sample } from '../abi/uapi';
import { formatRecordJson, type Symbolizer } from '../decode/jsonl';
import type { DecodedSnapshot } from '../decode/types';
import { sampleReaders, type SampleReader } from '../decode/sample-readers';
import type { ProfileTables } from './profile-tables';

export class TableJsonl {
  /** Per frame: its address as a JSON string, and its symbol as JSON (`null` when unnamed). */
  private readonly frameIpJson: string[];
  private readonly frameSymJson: string[];
  /** Per stack: the inside of its "callchain" and "callchainSyms" arrays, leaf first (built on the prefix's). */
  private readonly stackIpsJson: (string | undefined)[];
  private readonly stackSymsJson: (string | undefined)[];
  private readonly readers: Map<number, SampleReader>;
  private readonly eventJson = new Map<number, string>();
  private readonly views: DataView[];

  /**
   * `symbolize` names what the tables do not hold (records formatted by the record decoder); the tables must be
   * symbolized. `previous`: the lines of the batch before (its tables the ones `tables` continues), whose formatted
   * frames and stacks this one reuses.
   */
  constructor(
    private readonly snapshot: DecodedSnapshot,
    readonly tables: ProfileTables,
    private readonly symbolize: Symbolizer,
    previous?: TableJsonl,
  ) {
    this.frameIpJson = previous?.frameIpJson ?? [];
    this.frameSymJson = previous?.frameSymJson ?? [];
    this.stackIpsJson = previous?.stackIpsJson ?? [];
    this.stackSymsJson = previous?.stackSymsJson ?? [];
    this.readers = sampleReaders(snapshot);
    for (const [index, reader] of this.readers) this.eventJson.set(index, JSON.stringify(reader.event.name));
    this.views = snapshot.rings.map((copy) => new DataView(copy.bytes.buffer, copy.bytes.byteOffset, copy.bytes.byteLength));
  }

  /** One JSON line (without the newline) for `row`. */
  line(row: number): string {
    const { kind, event, ring, offset } = this.snapshot.columns;
    if (kind[row] === RecordType.SAMPLE) {
      const reader = this.readers.get(event[row]);
      if (reader?.inPlace) {
        const line = this.sampleLine(row, reader, this.views[ring[row]], offset[row]);
        if (line !== undefined) return line;
      }
    }
    return formatRecordJson(this.snapshot, row, this.symbolize);
  }

  /** A sample read in place; undefined when its bytes are not what the layout says (the record decoder then says why). */
  private sampleLine(row: number, reader: SampleReader, view: DataView, at: number): string | undefined {
    const { info } = reader;
    const layout = info.sample;
    const st = info.sampleType;
    const size = view.getUint16(at + 6, true);
    let end = layout.fixedEnd;
    let stack = -1;
    if (reader.hasCallchain) {
      if (end + 8 > size || view.getUint32(at + end + 4, true) !== 0) return undefined;
      const count = view.getUint32(at + end, true);
      end += 8 + count * 8;
      stack = this.tables.sampleStack[row];
      if (count > 0 && stack < 0 && !this.onlyMarkers(view, at + layout.fixedEnd + 8, count)) return undefined;
    }
    // Bytes after the last field are shown by the record decoder (trailingBytes): leave such a record to it.
    if (end !== size) return undefined;
    let text = `{"type":"SAMPLE","event":${this.eventJson.get(reader.event.index)}`;
    if (st & Sample.TIME) text += `,"time":${view.getBigUint64(at + layout.time, true)}`;
    if (st & Sample.TID) text += `,"pid":${view.getInt32(at + layout.pidTid, true)},"tid":${view.getInt32(at + layout.pidTid + 4, true)}`;
    if (st & Sample.CPU) text += `,"cpu":${view.getInt32(at + layout.cpu, true)}`;
    else {
      const cpu = this.snapshot.rings[this.snapshot.columns.ring[row]].cpu;
      if (cpu >= 0) text += `,"cpu":${cpu}`;
    }
    if (st & Sample.IP) {
      const frame = this.tables.sampleIpFrame[row];
      text += `,"ip":${this.ipJson(frame)}`;
      const sym = this.symJson(frame);
      if (sym !== 'null') text += `,"sym":${sym}`;
    }
    if (st & Sample.PERIOD) text += `,"period":${view.getBigUint64(at + layout.period, true)}`;
    if (st & Sample.ADDR) text += `,"addr":"0x${view.getBigUint64(at + layout.addr, true).toString(16)}"`;
    if (reader.hasCallchain) {
      text += stack < 0 ? ',"callchain":[],"callchainSyms":[]' : `,"callchain":[${this.stackIps(stack)}],"callchainSyms":[${this.stackSyms(stack)}]`;
    }
    if (st & Sample.IDENTIFIER) text += `,"identifier":${view.getBigUint64(at + layout.identifier, true)}`;
    if (st & Sample.ID) text += `,"id":${view.getBigUint64(at + layout.id, true)}`;
    if (st & Sample.STREAM_ID) text += `,"streamId":${view.getBigUint64(at + layout.streamId, true)}`;
    return text + '}';
  }

  /** True when every entry of a callchain is a context marker (an empty stack, not a damaged one). */
  private onlyMarkers(view: DataView, entries: number, count: number): boolean {
    for (let i = 0; i < count; i++)
      if (view.getUint32(entries + i * 8 + 4, true) !== 0xffffffff || view.getUint32(entries + i * 8, true) < 0xfffff001) return false;
    return true;
  }

  private ipJson(frame: number): string {
    let json = this.frameIpJson[frame];
    if (json === undefined) {
      json = `"0x${this.tables.frameIp(frame).toString(16)}"`;
      this.frameIpJson[frame] = json;
    }
    return json;
  }

  private symJson(frame: number): string {
    let json = this.frameSymJson[frame];
    if (json === undefined) {
      const symbol = this.tables.frameSymbol[frame];
      json = symbol === undefined ? 'null' : JSON.stringify(symbol);
      this.frameSymJson[frame] = json;
    }
    return json;
  }

  private stackIps(stack: number): string {
    let json = this.stackIpsJson[stack];
    if (json === undefined) {
      const prefix = this.tables.stackPrefix[stack];
      json = this.ipJson(this.tables.stackFrame[stack]) + (prefix < 0 ? '' : ',' + this.stackIps(prefix));
      this.stackIpsJson[stack] = json;
    }
    return json;
  }

  private stackSyms(stack: number): string {
    let json = this.stackSymsJson[stack];
    if (json === undefined) {
      const prefix = this.tables.stackPrefix[stack];
      json = this.symJson(this.tables.stackFrame[stack]) + (prefix < 0 ? '' : ',' + this.stackSyms(prefix));
      this.stackSymsJson[stack] = json;
    }
    return json;
  }
}
