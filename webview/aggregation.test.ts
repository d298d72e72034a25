import * as assert from 'node:assert/strict';
import { Aggregation, type AggregationSource } from './aggregation';
import type { Aggregate } from './call-tree';

describe('aggregation without a worker (no Worker global, as in node)', () => {
  // Stacks: 0 = f ← main, 1 = g ← main (leaf first). Rows at t = 0..9, stack r % 2, row 9 without a stack.
  const source: AggregationSource = {
    version: 1,
    length: 10,
    time: Float64Array.from({ length: 10 }, (_, r) => r),
    stack: Int32Array.from({ length: 10 }, (_, r) => (r === 9 ? -1 : r % 2)),
    stackTable: () => ({ names: ['main', 'f', 'g'], start: Uint32Array.from([0, 2, 4]), frames: Int32Array.from([1, 0, 2, 0]) }),
  };

  it('counts on the page with the same pure code: whole capture, a range, a range the filter narrows', () => {
    const aggregation = new Aggregation();
    const answers: (Aggregate | null)[] = [];
    aggregation.query(source, { range: null, shown: null }, (a) => answers.push(a));
    aggregation.query(source, { range: [2, 5], shown: null }, (a) => answers.push(a));
    const odd = Uint8Array.from({ length: 10 }, (_, r) => r % 2);
    aggregation.query(source, { range: [2, 5], shown: { version: 'odd', mask: () => odd } }, (a) => answers.push(a));
    assert.deepEqual(
      answers.map((a) => a?.topDown.total[0]),
      [9, 4, 2],
    );
    assert.deepEqual(
      answers[1]!.functions.map((f) => [f.name, f.self, f.total]),
      [
        [1, 2, 2],
        [2, 2, 2],
        [0, 0, 4],
      ],
    );
    assert.deepEqual(answers[2]!.bottomUp.total.slice(0, 2), Float64Array.from([2, 2]));
    const stats = aggregation.stats();
    assert.deepEqual({ worker: stats.worker, onPage: stats.computedOnPage, inWorker: stats.computedInWorker }, { worker: false, onPage: 3, inWorker: 0 });
  });
});
