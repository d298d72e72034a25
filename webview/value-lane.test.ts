import * as assert from 'node:assert/strict';
import { describeHitValues, isLogpointEvent, labelText, numericValue, valueSeries, valuesOfDetails } from './value-lane';

describe('logpoint value lanes (pure)', () => {
  it('reads as numbers what gdb prints as numbers, and nothing else', () => {
    assert.deepEqual(['42', '-7', '3.5', '1e-3', '0x1f', "97 'a'", "10 '\\n'", 'true', 'false'].map(numericValue), [42, -7, 3.5, 0.001, 31, 97, 10, 1, 0]);
    for (const text of ['"hello"', '{x = 1, y = 2}', 'RED', '<optimized out>', '<not captured>', '{1, 2, 3}', '']) assert.equal(numericValue(text), null, text);
  });

  it("takes a hit's values from its details, and makes a variable numeric only when every hit's value of it is", () => {
    const hit = valuesOfDetails({ type: 'SAMPLE', misc: 2, fields: { values: { i: '3', name: '"abc"' }, function: 'work' } });
    assert.deepEqual(
      [...hit],
      [
        ['i', '3'],
        ['name', '"abc"'],
      ],
    );
    const series = valueSeries(Float64Array.from([1, 2, 3]), [
      new Map([
        ['i', '3'],
        ['p', '0x10'],
      ]),
      undefined,
      new Map([
        ['i', '-1'],
        ['p', '<optimized out>'],
      ]),
    ]);
    assert.deepEqual(series.names, ['i', 'p']);
    assert.deepEqual(series.numeric, [true, false]);
    assert.deepEqual([series.min[0], series.max[0]], [-1, 3]);
    assert.equal(series.known, 2);
    assert.equal(series.labelled, 1, 'p labels the ticks: not numeric, and it changes');
    assert.equal(labelText('0x4006f4 "beta"'), '"beta"');
    assert.deepEqual(describeHitValues(series.values[0]), ['i = 3', 'p = 0x10']);
    assert.deepEqual(describeHitValues(undefined, 'no DWARF'), ['values: no DWARF']);
    assert.equal(isLogpointEvent('log:loop.c:42:i,total'), true);
    assert.equal(isLogpointEvent('line:loop.c:42'), false);
  });
});
