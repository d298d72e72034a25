import * as assert from 'node:assert/strict';
import { formatBytes, isPowerOfTwo, powerOfTwoAtLeast } from './units';

describe('abi/units', () => {
  it('takes exactly the powers of two as ring sizes, up to 2^40 and not only 32-bit ones', () => {
    assert.deepEqual([1, 2, 4, 64, 2 ** 31, 2 ** 32, 2 ** 40].map(isPowerOfTwo), [true, true, true, true, true, true, true]);
    assert.deepEqual([0, -4, 3, 6, 65, 2.5, NaN, Infinity, 2 ** 32 + 2 ** 31].map(isPowerOfTwo), Array(9).fill(false));
  });

  it('rounds up to the next power of two', () => {
    assert.deepEqual([0, 1, 2, 3, 64, 65, 1000].map(powerOfTwoAtLeast), [1, 1, 2, 4, 64, 128, 1024]);
  });

  it('shows byte counts in binary units, one decimal below 10 of a unit', () => {
    assert.deepEqual([0, 512, 1536, 64 * 1024, 1 << 20, 12n, 5n * 2n ** 30n].map(formatBytes), [
      '0 B',
      '512 B',
      '1.5 KiB',
      '64 KiB',
      '1.0 MiB',
      '12 B',
      '5.0 GiB',
    ]);
  });
});
