// A sampled register as the exact number the numeric DWARF machine computes with (native/symbols/logpoint-values.ts,
// exactNumber): its 64 bits as a signed value wherever that is within 2^53, NaN elsewhere, checked against the same
// reading done with BigInt arithmetic (which it stands in for, being cheaper per hit) at the edges and over a spread.
import assert from 'node:assert/strict';
import { exactNumber } from '../../native/symbols/logpoint-values';

const TWO_53 = 2n ** 53n;
const TWO_64 = 2n ** 64n;

/** The reading with BigInts: unsigned 64-bit in, the signed value if |value| < 2^53, else NaN. */
function reference(register: bigint): number {
  const signed = BigInt.asIntN(64, register);
  return signed < TWO_53 && signed > -TWO_53 ? Number(signed) : NaN;
}

describe('exactNumber: a 64-bit register as an exact number', () => {
  it('is exact up to 2^53 either side and NaN beyond, as the BigInt reading', () => {
    const edges = [
      0n,
      1n,
      0xffffffffn,
      0x100000000n,
      0x7ffe12345678n,
      TWO_53 - 1n,
      TWO_53,
      TWO_53 + 1n,
      TWO_64 - TWO_53,
      TWO_64 - TWO_53 + 1n,
      TWO_64 - 1n,
      2n ** 63n,
    ];
    for (const value of edges) assert.equal(exactNumber(value), reference(value), `0x${value.toString(16)}`);
    assert.equal(exactNumber(TWO_64 - 1n), -1);
    assert.ok(Number.isNaN(exactNumber(TWO_53)));
  });

  it('agrees with the BigInt reading over a deterministic spread of 64-bit values', () => {
    let state = 0x243f6a8885a308d3n;
    for (let k = 0; k < 20000; k++) {
      state = (state * 6364136223846793005n + 1442695040888963407n) % TWO_64;
      // Every magnitude: shift the value right by 0..63 bits, and as often its negation.
      const shifted = state >> BigInt(k % 64);
      const value = k % 2 === 0 ? shifted : (TWO_64 - shifted) % TWO_64;
      assert.equal(exactNumber(value), reference(value), `0x${value.toString(16)}`);
    }
  });
});
