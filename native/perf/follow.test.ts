import * as assert from 'node:assert/strict';
import { FollowOrder } from './follow';

/** Items as a read hands them over: [time, name]; null: a record without a time. */
const items = (...entries: [bigint | null, string][]) => entries.map(([time, item]) => ({ time, item }));

describe("FollowOrder: a follower's overlapping reads written in time order", () => {
  it('holds back what a later read could still precede, and releases it after that read', () => {
    const order = new FollowOrder<string>();
    const margin = FollowOrder.MARGIN_NS;
    // Read 1: CPU 1's head was read last, after a record newer than one CPU 0 will still deliver.
    const first = order.take(items([1_000_000n, 'a'], [10n * margin, 'b0'], [10n * margin + 500n, 'c1']), 1000);
    assert.deepEqual(first, ['a'], 'the newest instants (within the cut spread and margin) wait');
    assert.equal(order.heldCount, 2);
    // Read 2 brings CPU 0's record written just before c1, then newer ones.
    const second = order.take(items([10n * margin + 400n, 'b1'], [30n * margin, 'd']), 1000);
    assert.deepEqual(second, ['b0', 'b1', 'c1'], 'held and late records merged in time order; the newest waits again');
    // A read that brings nothing releases everything held: nothing older can come any more.
    assert.deepEqual(order.take([], 1000), ['d']);
    assert.equal(order.heldCount, 0);
  });

  it('records without a time go out at once; the final read releases everything', () => {
    const order = new FollowOrder<string>();
    assert.deepEqual(order.take(items([5n * FollowOrder.MARGIN_NS, 'x'], [null, 'untimed']), 0), ['untimed']);
    assert.deepEqual(order.take(items([5n * FollowOrder.MARGIN_NS + 1n, 'y']), 0, true), ['x', 'y']);
  });

  it('a spread cut (a preempted reader) widens what is held: order holds however late a ring was read', () => {
    const order = new FollowOrder<string>();
    const ms = 1_000_000n;
    // The reader was preempted 50 ms between two heads: a record 40 ms older than the newest may still come.
    assert.deepEqual(order.take(items([100n * ms, 'early'], [200n * ms, 'newest']), 50_000_000), ['early']);
    assert.deepEqual(order.take(items([160n * ms, 'late'], [300n * ms, 'next']), 0), ['late', 'newest']);
  });
});
