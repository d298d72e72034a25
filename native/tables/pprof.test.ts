// ProfileWriter writes the bytes pprof-format's own Profile writes for its samples and locations, for every width of
// varint up to 64 bits (location ids, counts, periods, user and kernel addresses), without its per-number garbage.
// PprofBuilder's stacks are the tables' own: table stacks whose frames are the same locations add up as one.

import assert from 'node:assert/strict';
import { emptyTableToken, Label, Line, Location, Profile, Sample, StringTable } from 'pprof-format';
import { Sample as SampleType } from '../abi/uapi';
import { decodeSnapshot } from '../decode/columns';
import { attrOf, ByteWriter, eventOf, ringFromRecords, sampleRecord } from '../decode/test-records';
import { PprofBuilder, ProfileStrings, ProfileWriter, type StackTrie } from './pprof';
import { ProfileTables } from './profile-tables';

/** 0, and each power of two from 2^0 to 2^63 with its neighbours, as u32 halves. */
function widths(): [number, number][] {
  const values: bigint[] = [0n];
  for (let bit = 0n; bit < 64n; bit++) for (const delta of [-1n, 0n, 1n]) values.push((1n << bit) + delta);
  values.push(0xffffffff81000000n, 0xffffffffffffffffn, 0x7ffff7a12345n);
  return values.filter((v) => v >= 0n && v < 1n << 64n).map((v) => [Number(v >> 32n), Number(v & 0xffffffffn)]);
}

/** What pprof-format writes for a profile of these samples or locations alone. */
const encoded = (fields: { sample?: Sample[]; location?: Location[] }): Uint8Array =>
  new Profile({ ...fields, stringTable: new StringTable(emptyTableToken) }).encode();

describe('pprof encoding without garbage: the bytes of pprof-format', () => {
  it('locations: id, mapping, address of every varint width, one line naming its function', () => {
    const writer = new ProfileWriter({ stackPrefix: [], stackFrame: [], locationOfFrame: [] }, 0);
    const expected: Location[] = [];
    for (const [high, low] of widths()) {
      for (const [id, mappingId, functionId] of [
        [1, 1, 1],
        [127, 128, 16384],
        [2 ** 31 - 1, 0, 2 ** 21],
      ]) {
        const address = (BigInt(high) << 32n) | BigInt(low);
        expected.push(new Location({ id, mappingId, address, line: [new Line({ functionId, line: 0 })] }));
        writer.location(id, mappingId, high, low, functionId);
      }
    }
    assert.deepEqual(writer.bytes(), encoded({ location: expected }));
  });

  it('samples: location ids from the stack table, leaf first; counts and periods up to 2^53, and a bigint period past it', () => {
    // Stack 3 is frame 0 (location 300000) called from frame 3 (2^21) called from frame 1 (127) called from frame 2
    // (location 1: stack 0, the root); stack 4 is frame 4 (location 5) called from stack 2, stack 5 frame 3 called
    // from stack 4. Each stack is written after one of its callers was, and before.
    const trie: StackTrie = { stackPrefix: [-1, 0, 1, 2, 2, 4], stackFrame: [2, 1, 3, 0, 4, 3], locationOfFrame: [300_000, 127, 1, 2 ** 21, 5] };
    const label = new Label({ key: 1, str: 2 });
    const periods: (number | bigint)[] = [0, 1, 127, 128, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, 2n ** 60n, 2n ** 64n - 1n];
    const writer = new ProfileWriter(trie, 6);
    const expected: Sample[] = [];
    for (const stack of [-1, 3, 0, 5, 4, 2]) {
      for (const period of periods) {
        for (const count of [1, 200, 2 ** 31]) {
          const locationId: number[] = [];
          for (let s = stack; s >= 0; s = trie.stackPrefix[s]) locationId.push(trie.locationOfFrame[trie.stackFrame[s]]);
          expected.push(new Sample({ locationId, value: [count, period], label: [label] }));
          writer.sample(stack, count, period, label.encode());
        }
      }
    }
    assert.deepEqual(writer.bytes(), encoded({ sample: expected }));
  });

  it('the string table: empty, ASCII, 2-, 3- and 4-byte UTF-8, lone surrogates, lengths past one varint byte', () => {
    const texts = ['', 'main', 'caf\u00e9', '\u20ac', 'x\u{1f600}y', '\ud800', 'a\udc00', '\ud83d', 'n'.repeat(200), 'main'];
    const ours = new ProfileStrings();
    const theirs = new StringTable();
    for (const text of texts) assert.equal(ours.dedup(text), theirs.dedup(text), JSON.stringify(text));
    const writer = new ProfileWriter({ stackPrefix: [], stackFrame: [], locationOfFrame: [] }, 0);
    writer.strings(ours);
    assert.deepEqual(writer.bytes(), new Profile({ stringTable: theirs }).encode());
  });
});

describe('PprofBuilder: the tables stacks are the profile stacks', () => {
  const USER_MARK = 0xfffffffffffffe00n;
  // Two events in one ring, told apart by their ids.
  const withChain = SampleType.IDENTIFIER | SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.PERIOD | SampleType.CALLCHAIN;
  const ipOnly = SampleType.IDENTIFIER | SampleType.IP | SampleType.TID | SampleType.TIME | SampleType.PERIOD;
  const events = [eventOf(0, attrOf(withChain), [1n], 'cycles'), eventOf(1, attrOf(ipOnly), [2n], 'ip-only')];
  const [A, B, C, D] = [0x401000n, 0x402000n, 0x403000n, 0x404000n];
  let time = 1000n;
  /** A sample of process 50: a callchain (leaf first) of event 0, or the IP alone of event 1. */
  const sample = (chain: readonly bigint[] | bigint, period: bigint): Uint8Array => {
    time += 10n;
    if (typeof chain === 'bigint') return sampleRecord(ipOnly, { id: 2n, ip: chain, pid: 50, tid: 50, time, period }, 2);
    const tail = new ByteWriter().u64(BigInt(chain.length + 1)).u64(USER_MARK);
    for (const ip of chain) tail.u64(ip);
    return sampleRecord(withChain, { id: 1n, ip: chain[0], pid: 50, tid: 50, time, period, tail: tail.toBytes() }, 2);
  };
  const snapshot = (records: readonly Uint8Array[]) => decodeSnapshot({ events, rings: [ringFromRecords(records, 1 << 14, 'forward')] });
  /** Every address is a function of its own, named the same before and after a remap. */
  const name = (tables: ProfileTables) => tables.symbolize((_pid, ip) => ({ symbol: `f${ip.toString(16)}+0x0`, dso: '/bin/prog' }));
  /** The profile's samples as `leaf;...;root event count period`, in its order. */
  const samplesOf = (bytes: Uint8Array): string[] => {
    const profile = Profile.decode(bytes);
    const text = (index: number | bigint) => profile.stringTable.strings[Number(index)];
    const functionName = new Map(profile.function.map((f) => [Number(f.id), text(f.name)]));
    const locationName = new Map(profile.location.map((l) => [Number(l.id), functionName.get(Number(l.line[0].functionId))]));
    return profile.sample.map((s) => `${s.locationId.map((id) => locationName.get(Number(id))).join(';')} ${text(s.label[0].str)} ${s.value[0]} ${s.value[1]}`);
  };

  it("a process's frames named again after its mappings changed: the same stacks add up, as in the whole file's profile", () => {
    const first = [sample([A, B, C], 1n), sample(C, 2n), sample([B, C], 3n)];
    // After a remap every address of process 50 is a new frame: the same stack, a stack under one seen before through
    // those frames (twice), and an IP alone that was never a root stack before. After the next, those two again, each
    // now through a third set of frames.
    const second = [sample([A, B, C], 4n), sample([D, B, C], 5n), sample([D, B, C], 6n), sample(B, 7n), sample(C, 8n), sample([B, C], 9n)];
    const third = [sample([D, B, C], 10n), sample(B, 11n)];
    const batched = new PprofBuilder();
    let previous: ProfileTables | undefined;
    for (const records of [first, second, third]) {
      previous?.remapOwner(50);
      const tables = new ProfileTables(snapshot(records), previous);
      name(tables);
      batched.add(tables);
      previous = tables;
    }
    const whole = new ProfileTables(snapshot([...first, ...second, ...third]));
    name(whole);
    const wholeProfile = new PprofBuilder();
    wholeProfile.add(whole);
    assert.equal(previous!.frameCount, 3 + 4 + 3, 'A, B, C, then A, B, C and D as new frames, then D, B and C');
    assert.equal(whole.frameCount, 4);
    assert.deepEqual(samplesOf(batched.encode()), [
      'f401000;f402000;f403000 cycles 2 5',
      'f403000 ip-only 2 10',
      'f402000;f403000 cycles 2 12',
      'f404000;f402000;f403000 cycles 3 21',
      'f402000 ip-only 2 18',
    ]);
    assert.deepEqual(batched.encode(), wholeProfile.encode());
  });

  it('tables of another recording are refused, not numbered as the first', () => {
    const builder = new PprofBuilder();
    const tables = new ProfileTables(snapshot([sample([A, B], 1n)]));
    name(tables);
    builder.add(tables);
    const other = new ProfileTables(snapshot([sample([A, B], 1n)]));
    name(other);
    assert.throws(() => builder.add(other), /do not continue the ones added before/);
  });
});
