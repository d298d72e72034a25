import * as assert from 'node:assert/strict';
import { ColumnSet } from './column-set';
import type { RingRows } from './decode-ring';
import { mergeRuns, mergeSliceInto, mergeSlices, mergedCopy, mergedInPlace, type MergeSlice } from './merge';
import { columnByteDifferences, prng } from './test-records';

/**
 * One ring's rows as the decoder leaves them: `times` (NaN: no time) at rows [first, first + n) of
 * a set with `first` rows of room below, every other column naming the ring and row so a misplaced
 * row shows in the bytes.
 */
function ringRows(ring: number, times: readonly number[], first = 0): RingRows {
  const set = new ColumnSet(first + times.length);
  times.forEach((time, i) => {
    const row = first + i;
    set.time[row] = time;
    set.kind[row] = 9;
    set.misc[row] = ring;
    set.event[row] = i & 0xffff;
    set.pid[row] = ring;
    set.tid[row] = i;
    set.cpu[row] = ring;
    set.ipHi[row] = ring * 7;
    set.ipLo[row] = i * 3;
    set.ring[row] = ring;
    set.offset[row] = i * 8;
  });
  return { set, first, count: times.length };
}

const sum = (values: ArrayLike<number>): number => Array.from(values).reduce((a, b) => a + b, 0);

/** The merge cut into `parts` slices, each slice merged into its rows of one fresh set. */
function slicedMerge(sources: readonly RingRows[], shift: Float64Array, parts: number): { set: ColumnSet; slices: MergeSlice[] } {
  const total = sum(sources.map((rows) => rows.count));
  const set = new ColumnSet(total);
  const slices = mergeSlices(sources, shift, parts);
  // Backwards: a slice writing outside its rows would be overwritten by no later slice and show.
  for (const slice of [...slices].reverse()) mergeSliceInto(set, sources, shift, slice);
  return { set, slices };
}

/** The merge written the plain way: every row's key (running maximum, NaN keeps the previous), sorted by (key, ring, row). */
function sortedMerge(sources: readonly RingRows[], shift: Float64Array): ColumnSet {
  const rows: { key: number; ring: number; row: number }[] = [];
  sources.forEach(({ set, first, count }, ring) => {
    let key = -Infinity;
    for (let row = 0; row < count; row++) {
      const value = set.time[first + row] + shift[ring];
      if (value === value && value > key) key = value;
      rows.push({ key, ring, row });
    }
  });
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.ring - b.ring || a.row - b.row));
  const out = new ColumnSet(rows.length);
  rows.forEach(({ ring, row }, i) => {
    const { set, first } = sources[ring];
    out.copyRows(set, first + row, 1, i);
    out.time[i] = set.time[first + row] + shift[ring];
  });
  return out;
}

/** Asserts that every cut of the merge gives the plain sorted merge's bytes, and that the slices tile the output. */
function assertSlicedIsWhole(sources: readonly RingRows[], shift: Float64Array, label: string, maxParts = 9): void {
  const total = sum(sources.map((rows) => rows.count));
  const whole = sortedMerge(sources, shift);
  const copied = mergedCopy(sources, shift, total, { take: (rows) => new ColumnSet(rows), give: () => undefined });
  assert.deepEqual(columnByteDifferences(copied.toColumns(0n), whole.toColumns(0n)), [], `${label}: mergedCopy`);
  for (let parts = 1; parts <= maxParts; parts++) {
    const { set, slices } = slicedMerge(sources, shift, parts);
    assert.equal(slices.length, parts, `${label}, ${parts} parts`);
    let at = 0;
    for (const slice of slices) {
      assert.equal(slice.at, at, `${label}, ${parts} parts: slices tile the output`);
      for (let r = 0; r < sources.length; r++) assert.ok(slice.from[r] <= slice.to[r], `${label}: ring ${r} cut in order`);
      at += sum(Array.from(slice.to, (to, r) => to - slice.from[r]));
    }
    assert.equal(at, total, `${label}, ${parts} parts`);
    assert.deepEqual(columnByteDifferences(set.toColumns(0n), whole.toColumns(0n)), [], `${label}, ${parts} parts`);
  }
}

describe('decode/merge: the merge by time, whole, in place and cut into slices', () => {
  it('gives the single merge byte for byte when equal times straddle every cut (ties in ring order)', () => {
    // Every row of every ring at the same time: the cuts fall inside one run of ties.
    const same = [0, 1, 2, 3].map((r) => ringRows(r, Array(50 + r).fill(7)));
    assertSlicedIsWhole(same, new Float64Array(4), 'all equal');
    // Plateaus of equal times shared by all rings, with the rings' shifts making them equal.
    const plateaus = [0, 1, 2].map((r) =>
      ringRows(
        r,
        Array.from({ length: 120 }, (_, i) => 10 * Math.floor(i / 30) - r),
      ),
    );
    assertSlicedIsWhole(plateaus, Float64Array.from([0, 1, 2]), 'shifted plateaus');
  });

  it('keeps the single merge with empty rings, one ring, and rows above room in the set', () => {
    assertSlicedIsWhole([ringRows(0, []), ringRows(1, [1, 2, 3], 5), ringRows(2, [])], new Float64Array(3), 'one ring with rows');
    assertSlicedIsWhole(
      [
        ringRows(
          0,
          Array.from({ length: 40 }, (_, i) => i),
          3,
        ),
      ],
      new Float64Array(1),
      'a single ring',
    );
    assertSlicedIsWhole([ringRows(0, []), ringRows(1, [])], new Float64Array(2), 'no rows');
    assertSlicedIsWhole([ringRows(0, [4]), ringRows(1, []), ringRows(2, [4])], new Float64Array(3), 'two rows, equal');
  });

  it('keeps the single merge for many short runs: 64 rings dealt rows in bursts', () => {
    const rings = 64;
    const times: number[][] = Array.from({ length: rings }, () => []);
    for (let i = 0; i < 64 * 8 * 6; i++) times[Math.floor(i / 8) % rings].push(i);
    assertSlicedIsWhole(
      times.map((t, r) => ringRows(r, t)),
      new Float64Array(rings),
      'bursts of 8',
      5,
    );
    // Bursts of one record: every run is a single row.
    const single: number[][] = Array.from({ length: 7 }, (_, r) => Array.from({ length: 300 }, (_, i) => 7 * i + r));
    assertSlicedIsWhole(
      single.map((t, r) => ringRows(r, t)),
      new Float64Array(7),
      'bursts of 1',
    );
  });

  it('cuts between rows without a time and times that step back, each still next to its ring neighbours', () => {
    // NaN rows (no time) follow the row before them; a ring starting with NaN sorts first; a
    // clock step back keeps the ring's running maximum. Cuts land on and around all of them.
    const odd = [
      ringRows(0, [NaN, NaN, 3, NaN, 5, 5, 2, 2, 9, NaN, NaN, 9, 14]),
      ringRows(1, [1, 3, 3, NaN, 5, 9, 9, 9, 1, 20]),
      ringRows(2, [NaN, 3, 5, 4, 9, NaN, 13, 14, 14, 14]),
    ];
    assertSlicedIsWhole(odd, Float64Array.from([0, 0, 0]), 'NaN and steps back', 12);
    assertSlicedIsWhole(odd, Float64Array.from([2, 0, -1]), 'NaN and steps back, shifted', 12);
  });

  it('keeps the single merge on seeded random rings (ties, NaN, steps back, empty rings, shifts)', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = prng(seed);
      const ringCount = 1 + Math.floor(random() * 9);
      const sources = Array.from({ length: ringCount }, (_, r) => {
        const count = random() < 0.15 ? 0 : Math.floor(random() * 400);
        let time = Math.floor(random() * 20);
        const times = Array.from({ length: count }, () => {
          const roll = random();
          if (roll < 0.05) return NaN;
          if (roll < 0.08) return time - Math.floor(random() * 10); // a step back
          time += Math.floor(random() * 3); // many ties within and across rings
          return time;
        });
        return ringRows(r, times, Math.floor(random() * 4));
      });
      const shift = Float64Array.from({ length: ringCount }, () => Math.floor(random() * 5) - 2);
      assertSlicedIsWhole(sources, shift, `seed ${seed}`, 6);
      // The in-place merge (into the largest ring's room) orders rows the same way.
      const total = sum(sources.map((rows) => rows.count));
      const copy = sources.map((rows) => ({ ...rows, set: new ColumnSet(rows.set.length, rows.set.buffer.slice(0)) }));
      const inPlace = mergedInPlace(copy, shift, total);
      if (inPlace) {
        const whole = sortedMerge(sources, shift);
        assert.deepEqual(columnByteDifferences(inPlace.set.toColumns(0n, inPlace.first, inPlace.count), whole.toColumns(0n)), [], `seed ${seed}`);
      }
    }
  });

  it('balances the slices by rows within a few percent of a share', () => {
    // Two rings interleaved in bursts of 8, as CPUs interleave; and one ring ten times the other.
    const bursts = [0, 1].map((r) =>
      ringRows(
        r,
        Array.from({ length: 40_000 }, (_, i) => 16 * Math.floor(i / 8) + 8 * r + (i % 8)),
      ),
    );
    const skewed = [
      ringRows(
        0,
        Array.from({ length: 50_000 }, (_, i) => i),
      ),
      ringRows(
        1,
        Array.from({ length: 5000 }, (_, i) => 10 * i),
      ),
    ];
    for (const [label, sources] of [
      ['bursts', bursts],
      ['skewed', skewed],
    ] as const) {
      const total = sum(sources.map((rows) => rows.count));
      for (const parts of [2, 3, 4, 8]) {
        const sizes = mergeSlices(sources, new Float64Array(2), parts).map((slice) => sum(Array.from(slice.to, (to, r) => to - slice.from[r])));
        for (const size of sizes) assert.ok(Math.abs(size - total / parts) <= 0.05 * (total / parts), `${label} ${parts}: ${sizes.join(', ')}`);
      }
    }
  });

  it("merges a slice as mergeRuns would: the slice's runs are the whole merge's runs cut at the slice", () => {
    const times = [Float64Array.from([0, 2, 4, 6, 8, 10]), Float64Array.from([1, 3, 5, 7, 9, 11])];
    const slice: MergeSlice = { from: [2, 1], to: [4, 4], at: 3 };
    const runs = mergeRuns(times, [6, 6], new Float64Array(2), slice);
    assert.equal(runs.count, 5);
    assert.deepEqual(Array.from(runs.ring.subarray(0, 5)), [1, 0, 1, 0, 1]);
    assert.deepEqual(Array.from(runs.from.subarray(0, 5)), [1, 2, 2, 3, 3]);
  });
});
