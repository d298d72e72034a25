// Values kept by their bytes in logpoint columns (logpoint-columns.ts): each byte pattern one id, its text written
// only when asked and then once, from exactly those bytes; and the tally (logpoint-tally.ts) that counts them, which
// writes only the texts it shows and adds up ids of one text where a column's ids are not its texts one to one.
import { strict as assert } from 'node:assert';
import { LogpointColumns } from './logpoint-columns';
import { describeVariable, logpointInlineText, tallyLogpoints } from '../decode/logpoint-tally';
import { RecordType } from '../abi/uapi';
import type { DecodedSnapshot } from '../decode/types';

/** Little-endian bytes of a signed integer of `size` bytes. */
function le(value: bigint, size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = Number((BigInt.asUintN(size * 8, value) >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

/** A formatter that records what it was asked: a signed little-endian integer. */
function signedFormatter(asked: Uint8Array[]) {
  return (bytes: Uint8Array) => {
    asked.push(bytes.slice());
    let n = 0n;
    for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
    return BigInt.asIntN(bytes.length * 8, n).toString();
  };
}

/** One column `name` of `size`-byte values kept by their bytes, written with `format`; a row per value. */
function columnOf(values: readonly Uint8Array[], size: number, format: (bytes: Uint8Array) => string, name = 'v') {
  const columns = new LogpointColumns(1);
  const layout = columns.layoutOf({}, [name], [{ size, hasPointers: false, format }]);
  const keys = columns.layoutValues[layout][0]!;
  for (const bytes of values) {
    const row = columns.addHit();
    columns.setLayout(row, layout);
    // At an offset inside a larger buffer, as the evaluator reads a frame slot in place.
    const buffer = new Uint8Array(size + 5).fill(0xee);
    buffer.set(bytes, 3);
    columns.columns[0][row] = keys.idOf(buffer, 3);
  }
  return { columns, keys };
}

/** A snapshot of one logpoint whose hits `columns` holds (tallyLogpoints reads it through logpointColumns). */
function snapshotOf(columns: LogpointColumns): DecodedSnapshot {
  const length = columns.length;
  return {
    events: [{ index: 0, name: 'log:x.c:1' }],
    columns: { length, kind: new Uint8Array(length).fill(RecordType.SAMPLE), event: new Int32Array(length) },
    logpointColumns: () => columns,
  } as unknown as DecodedSnapshot;
}

describe('logpoint columns: values kept by their bytes', () => {
  for (const size of [1, 2, 3, 4, 6, 8, 12, 16])
    it(`${size}-byte values: one id per byte pattern, the text of exactly those bytes, written once and only when asked`, () => {
      const asked: Uint8Array[] = [];
      // Negative and positive, 5000 distinct (the table grows), each twice.
      const numbers = Array.from({ length: 5000 }, (_, k) => BigInt((k % 2 ? -1 : 1) * k * 7919));
      const distinct = [...new Set(numbers.map((n) => BigInt.asIntN(size * 8, n)))];
      const values = [...numbers, ...numbers].map((n) => le(n, size));
      const { columns, keys } = columnOf(values, size, signedFormatter(asked));
      assert.equal(keys.length, distinct.length);
      assert.equal(asked.length, 0, 'no text written before one is asked');
      const ids = columns.columns[0].subarray(0, columns.length);
      assert.equal(new Set(ids).size, distinct.length);
      for (let row = 0; row < numbers.length; row++) {
        assert.equal(ids[row], ids[row + numbers.length], `row ${row}: the same bytes, the same id`);
        assert.equal(columns.textAt(0, row), BigInt.asIntN(size * 8, numbers[row]).toString());
      }
      assert.equal(asked.length, distinct.length, 'each text written once');
      for (const bytes of asked) assert.equal(bytes.length, size);
    });

  it('tallies by bytes and writes only the texts it shows (the last value, the first distinct ones), as the text tally would', () => {
    const asked: Uint8Array[] = [];
    const counters = Array.from({ length: 1000 }, (_, k) => le(BigInt(k - 500), 4));
    const { columns } = columnOf(counters, 4, signedFormatter(asked), 'i');
    const [tally] = tallyLogpoints(snapshotOf(columns), () => true);
    const i = tally.variables.get('i')!;
    assert.equal(tally.hits, 1000);
    assert.equal(i.last, '499');
    assert.equal(i.distinctCount, 1000);
    assert.equal(describeVariable('i', i), 'i = 499 (1000 distinct: -500 ×1, -499 ×1, -498 ×1, -497 ×1, -496 ×1, 995 more)');
    assert.equal(logpointInlineText(tally), 'log: 1000 hits · i = 499 (1000 distinct)');
    assert.equal(asked.length, 6, 'the last value and the five distinct values shown');
  });

  it('adds up the ids of one text where values kept by their bytes meet other values in a column', () => {
    // Two layouts (two pcs of one logpoint) write `x`, one by its bytes, the other by its texts; bytes 1 and 3 both read "odd".
    const columns = new LogpointColumns(1);
    const parity = (bytes: Uint8Array) => (bytes[0] % 2 ? 'odd' : 'even');
    const byBytes = columns.layoutOf({}, ['x'], [{ size: 1, hasPointers: false, format: parity }]);
    const byText = columns.layoutOf({}, ['x']);
    const keys = columns.layoutValues[byBytes][0]!;
    const hit = (layout: number, id: number) => {
      const row = columns.addHit();
      columns.setLayout(row, layout);
      columns.columns[0][row] = id;
    };
    hit(byBytes, keys.idOf(Uint8Array.of(1), 0));
    hit(byBytes, keys.idOf(Uint8Array.of(3), 0));
    hit(byText, columns.intern('odd'));
    hit(byBytes, keys.idOf(Uint8Array.of(2), 0));
    hit(byText, columns.intern('<optimized out>'));
    assert.equal(columns.sameIdSameText(0), false);
    const x = tallyLogpoints(snapshotOf(columns), () => true)[0].variables.get('x')!;
    assert.equal(x.last, '<optimized out>');
    assert.equal(x.distinctCount, 3);
    assert.deepEqual(x.distinct(), [
      ['odd', 3],
      ['even', 1],
      ['<optimized out>', 1],
    ]);
  });

  it('a column read by one layout, by bytes or by text, counts its ids as its texts; one that reads a name twice does not', () => {
    const columns = new LogpointColumns(1);
    const format = (bytes: Uint8Array) => String(bytes[0]);
    columns.layoutOf({}, ['a', 'b'], [{ size: 1, hasPointers: false, format }, undefined]);
    columns.layoutOf(
      {},
      ['c', 'c'],
      [
        { size: 1, hasPointers: false, format },
        { size: 1, hasPointers: false, format },
      ],
    );
    assert.deepEqual(
      columns.names.map((_, column) => columns.sameIdSameText(column)),
      [true, true, false],
    );
  });

  it('values with pointers are kept by their bytes at one load address; at another, the column counts by text', () => {
    const columns = new LogpointColumns(1);
    const format = (bytes: Uint8Array, bias: bigint) => `0x${(BigInt(bytes[0]) + bias).toString(16)}`;
    const layout = columns.layoutOf(
      {},
      ['p', 'n'],
      [
        { size: 1, hasPointers: true, format },
        { size: 1, hasPointers: false, format },
      ],
    );
    const [pointers, numbers] = columns.layoutValues[layout];
    assert.equal(pointers!.biasOf(0x1000n, 0x1000), true);
    assert.equal(pointers!.biasOf(0x1000n, 0x1000), true);
    assert.equal(numbers!.biasOf(0x2000n, 0x2000), true, 'no pointer: any load address');
    assert.equal(columns.sameIdSameText(0), true);
    const id = pointers!.idOf(Uint8Array.of(5), 0);
    assert.equal(columns.textOf(id), '0x1005', 'written for the load address of its hit');
    assert.equal(pointers!.biasOf(0x2000n, 0x2000), false);
    assert.equal(columns.sameIdSameText(0), false);
    assert.equal(columns.sameIdSameText(1), true);
  });
});
