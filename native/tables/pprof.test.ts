// PackedSample and PackedLocation write the bytes pprof-format's own Sample and Location write, for every width of
// varint up to 64 bits (location ids, counts, periods, user and kernel addresses), without its per-number garbage.

import assert from 'node:assert/strict';
import { Label, Line, Location, Sample } from 'pprof-format';
import { PackedLocation, PackedSample, type StackTrie } from './pprof';

/** 0, and each power of two from 2^0 to 2^63 with its neighbours, as u32 halves. */
function widths(): [number, number][] {
  const values: bigint[] = [0n];
  for (let bit = 0n; bit < 64n; bit++) for (const delta of [-1n, 0n, 1n]) values.push((1n << bit) + delta);
  values.push(0xffffffff81000000n, 0xffffffffffffffffn, 0x7ffff7a12345n);
  return values.filter((v) => v >= 0n && v < 1n << 64n).map((v) => [Number(v >> 32n), Number(v & 0xffffffffn)]);
}

const encoded = (message: { length: number; _encodeToBuffer(buffer: Uint8Array, offset: number): number }): Uint8Array => {
  const bytes = new Uint8Array(message.length);
  assert.equal(message._encodeToBuffer(bytes, 0), bytes.length, 'as long as it measured');
  return bytes;
};

describe('pprof encoding without garbage: the bytes of pprof-format', () => {
  it('a location: id, mapping, address of every varint width, one line naming its function', () => {
    for (const [high, low] of widths()) {
      for (const [id, mappingId, functionId] of [
        [1, 1, 1],
        [127, 128, 16384],
        [2 ** 31 - 1, 0, 2 ** 21],
      ]) {
        const address = (BigInt(high) << 32n) | BigInt(low);
        const expected = new Location({ id, mappingId, address, line: [new Line({ functionId, line: 0 })] });
        assert.deepEqual(encoded(new PackedLocation(id, mappingId, high, low, functionId)), encoded(expected), `0x${address.toString(16)}`);
      }
    }
  });

  it('a sample: location ids from the stack trie, leaf first; counts and periods up to 2^53, and a bigint period past it', () => {
    // Stack 3 is location 300000 called from 2^21 called from 127 called from 1 (stack 0, the root).
    const trie: StackTrie = { stackLocation: [1, 127, 2 ** 21, 300_000], stackCaller: [-1, 0, 1, 2] };
    const label = new Label({ key: 1, str: 2 });
    const periods: (number | bigint)[] = [0, 1, 127, 128, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, 2n ** 60n];
    for (const stack of [-1, 0, 3]) {
      for (const period of periods) {
        const locationId: number[] = [];
        for (let s = stack; s >= 0; s = trie.stackCaller[s]) locationId.push(trie.stackLocation[s]);
        const expected = new Sample({ locationId, value: [3, period], label: [label] });
        assert.deepEqual(encoded(new PackedSample(trie, stack, [3, period], [label])), encoded(expected), `stack ${stack}, period ${period}`);
      }
    }
  });
});
