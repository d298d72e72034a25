import * as assert from 'node:assert/strict';
import { boxAt, buildStackChart, callNodes, stackBoxAt, StackChartBuilder } from './stack-chart';
import { buildActivityGraph, stacksHolding, writeActivityGraph, type ActivityPixels } from './activity-graph';
import type { StackTable } from '../shared/stacks';

// Stacks, leaf first: 0 main; 1 a ← main; 2 b ← a ← main; 3 a ← other (a different path to a function named a).
const TABLE: StackTable = {
  names: ['main', 'a', 'b', 'other'],
  start: Uint32Array.from([0, 1, 3, 6, 8]),
  frames: Int32Array.from([0, 1, 0, 2, 1, 0, 1, 3]),
};

function chartOf(stacks: number[], times: number[]) {
  const rows = Uint32Array.from(stacks, (_, i) => i);
  return buildStackChart(rows, Float64Array.from(times), Int32Array.from(stacks), TABLE);
}

/** Pixels standing for the activity graph's colours (the page finds them by painting CSS colours, which node cannot). */
const COLOURS: ActivityPixels = {
  palette: Uint32Array.from([1, 2, 3]),
  highlighted: Uint32Array.from([11, 12, 13]),
  plain: 20,
  dim: 21,
  filtered: 22,
};
const COLOUR_NAMES = new Map<number, string>([
  [1, 'palette 0'],
  [2, 'palette 1'],
  [3, 'palette 2'],
  [11, 'highlighted 0'],
  [12, 'highlighted 1'],
  [13, 'highlighted 2'],
  [20, 'plain'],
  [21, 'dim'],
  [22, 'filtered'],
]);

/** Column x of `pixels` (rows of `stride`) from the top, as runs of one colour: [colour, first row, end row]; empty pixels left out. */
function runsOf(pixels: Uint32Array, stride: number, x: number, height: number): [string, number, number][] {
  const runs: [string, number, number][] = [];
  for (let y = 0; y < height; y++) {
    const p = pixels[y * stride + x];
    if (p === 0) continue;
    const name = COLOUR_NAMES.get(p) ?? String(p);
    const last = runs[runs.length - 1];
    if (last && last[0] === name && last[2] === y) last[2] = y + 1;
    else runs.push([name, y, y + 1]);
  }
  return runs;
}

const boxesOf = (chart: ReturnType<typeof chartOf>) =>
  chart.levels.map((level) =>
    Array.from({ length: level.count }, (_, b) => `${TABLE.names[level.name[b]]} ${level.start[b]}-${level.end[b]} ×${level.samples[b]}`),
  );

describe('stack chart boxes', () => {
  it('merges consecutive samples with the same call path per depth; a sample lasts until the next, the last one interval', () => {
    const chart = chartOf([1, 2, 2, 1, 0], [0, 10, 20, 30, 40]);
    assert.equal(chart.interval, 10);
    assert.deepEqual(boxesOf(chart), [['main 0-50 ×5'], ['a 0-40 ×4'], ['b 10-30 ×2']]);
  });

  it('splits a function reached by another path: same name, different call node', () => {
    assert.deepEqual(boxesOf(chartOf([1, 3, 3], [0, 10, 20])), [
      ['main 0-10 ×1', 'other 10-30 ×2'],
      ['a 0-10 ×1', 'a 10-30 ×2'],
    ]);
    const nodes = callNodes(TABLE);
    assert.notEqual(nodes[0], nodes[7], 'main at the root and other at the root are different nodes');
    assert.equal(nodes[2], nodes[5], 'main under stacks 1 and 2 is the same node');
  });

  it('builds the same boxes in steps of any size as in one pass (idle time builds them a step at a time)', () => {
    // A walk over the four stacks with records without a callchain (-1) and a gap, so steps end inside boxes, at a
    // skipped record and at a gap.
    const stacks = [1, 2, 2, -1, 1, 0, 3, 3, -1, 2, 1, 1, 0, 2, 3, -1, 1];
    const times = stacks.map((_, i) => i * 10 + (i >= 9 ? 1000 : 0));
    const rows = Uint32Array.from(stacks, (_, i) => i);
    const whole = boxesOf(chartOf(stacks, times));
    for (const step of [1, 2, 3, 5, 16, 17, 18]) {
      const builder = new StackChartBuilder(rows, Float64Array.from(times), Int32Array.from(stacks), TABLE);
      let steps = 1;
      while (!builder.advance(step)) steps++;
      assert.ok(steps >= Math.ceil(stacks.length / step), `step ${step}: took ${steps} steps`);
      assert.deepEqual(boxesOf(builder.chart()), whole, `step ${step}`);
    }
    const unfinished = new StackChartBuilder(rows, Float64Array.from(times), Int32Array.from(stacks), TABLE);
    unfinished.advance(4);
    assert.throws(() => unfinished.chart(), /not built yet/);
  });

  it('passes over records without a callchain and ends every box at a gap of more than four intervals', () => {
    // Rows 2 has no stack (a tracepoint); the gap between 30 and 200 is 17 intervals.
    const chart = chartOf([1, 1, -1, 1, 1, 1], [0, 10, 15, 20, 30, 200]);
    assert.deepEqual(boxesOf(chart), [
      ['main 0-40 ×4', 'main 200-210 ×1'],
      ['a 0-40 ×4', 'a 200-210 ×1'],
    ]);
    assert.equal(boxAt(chart.levels[0], 100), -1, 'nothing drawn in the gap');
    assert.equal(boxAt(chart.levels[0], 205), 1);
  });

  it('is empty without callchains', () => {
    const chart = chartOf([-1, -1], [0, 10]);
    assert.equal(chart.depth, 0);
  });

  it("finds the box under a time from the samples alone: the whole chart's box there, for every time, depth and slack", function () {
    this.timeout(20000);
    // Random walks over the four stacks with records without a callchain (-1), gaps, and through a transforms' view that
    // drops two stacks (a dropped sample ends every box): stackBoxAt must give what boxAt finds in buildStackChart's levels.
    const view: StackTable = { names: TABLE.names, start: Uint32Array.from([0, 1, 3]), frames: Int32Array.from([0, 2, 0]) };
    const viewMap = Int32Array.from([-1, 0, 1, -1]);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    let compared = 0;
    for (let walk = 0; walk < 40; walk++) {
      const n = 5 + Math.floor(next() * 40);
      const stacks = Array.from({ length: n }, () => (next() < 0.15 ? -1 : Math.floor(next() * 4)));
      let at = 0;
      const times = stacks.map(() => (at += next() < 0.1 ? 100 : 10));
      const rows = Uint32Array.from(stacks, (_, i) => i);
      const time = Float64Array.from(times);
      const stack = Int32Array.from(stacks);
      for (const [table, map] of [
        [TABLE, undefined],
        [view, viewMap],
      ] as const) {
        const chart = buildStackChart(rows, time, stack, table, map);
        const input = { rows, time, stack, table, interval: chart.interval, ...(map ? { map } : {}) };
        for (let t = times[0] - 15; t <= at + 30; t += 2.5) {
          for (const slack of [0, 4, 30]) {
            for (let depth = 0; depth <= chart.depth; depth++) {
              const level = chart.levels[depth];
              const b = level ? boxAt(level, t, slack) : -1;
              const expected = b < 0 ? null : { depth, start: level.start[b], end: level.end[b], name: level.name[b], samples: level.samples[b] };
              const got = stackBoxAt(input, t, depth, slack);
              // (The message is made only for a difference: this runs some 100k times.)
              if (JSON.stringify(got) !== JSON.stringify(expected))
                assert.deepEqual(got, expected, `walk ${walk} ${JSON.stringify(stacks)} t ${t} depth ${depth} slack ${slack}`);
              compared += expected ? 1 : 0;
            }
          }
        }
      }
    }
    assert.ok(compared > 1000, `${compared} boxes compared`);
  });
});

describe('activity graph', () => {
  it("counts records per bucket exactly, names each bucket's top self function, and the highlighted function's share", () => {
    const stacks = Int32Array.from([1, 2, 2, 0, -1, 1]);
    const time = Float64Array.from([0, 1, 2, 5, 6, 9]);
    const rows = Uint32Array.from(stacks, (_, i) => i);
    const graph = buildActivityGraph(time, rows, 0, 10, 2, stacks, TABLE, stacksHolding(TABLE, 2), 0);
    assert.deepEqual(Array.from(graph.counts), [3, 3]);
    assert.deepEqual(
      Array.from(graph.top).map((n) => TABLE.names[n]),
      ['b', 'main'],
    );
    assert.deepEqual(Array.from(graph.highlighted!), [2, 0]);
    assert.equal(graph.scale, 3);
    // Drawn: each column the highlighted function's share (bright, at the bottom) under the rest (dim).
    const pixels = new Uint32Array(100 * 30);
    writeActivityGraph(pixels, 100, graph, 100, 0, 30, 2, COLOURS);
    assert.deepEqual(
      [0, 49, 50, 99].map((x) => runsOf(pixels, 100, x, 30)),
      [
        [
          ['dim', 0, 10],
          ['highlighted 2', 10, 30],
        ],
        [
          ['dim', 0, 10],
          ['highlighted 2', 10, 30],
        ],
        [['dim', 0, 30]],
        [['dim', 0, 30]],
      ],
    );
  });

  it("reads colours through the transforms' map and sets apart the samples it drops, drawn faint on top", () => {
    // The transforms' view of TABLE: stack 1 (a ← main) becomes main alone (a merged), stack 2 (b ← a ← main) b ← main,
    // stacks 0 and 3 dropped (a focus on something neither holds).
    const view: StackTable = { names: TABLE.names, start: Uint32Array.from([0, 1, 3]), frames: Int32Array.from([0, 2, 0]) };
    const map = Int32Array.from([-1, 0, 1, -1]);
    const stacks = Int32Array.from([1, 2, 2, 0, -1, 3]);
    const time = Float64Array.from([0, 1, 2, 5, 6, 9]);
    const rows = Uint32Array.from(stacks, (_, i) => i);
    const graph = buildActivityGraph(time, rows, 0, 10, 2, stacks, view, stacksHolding(view, 0), 0, map);
    assert.deepEqual(Array.from(graph.counts), [3, 3], 'counts are every record, dropped or not');
    assert.deepEqual(Array.from(graph.filtered!), [0, 2]);
    assert.deepEqual(
      Array.from(graph.top).map((n) => (n < 0 ? null : view.names[n])),
      ['b', null],
    );
    assert.deepEqual(Array.from(graph.highlighted!), [3, 0], 'main is in every kept stack of the view');
    const plain = buildActivityGraph(time, rows, 0, 10, 2, stacks, view, null, 0, map);
    const pixels = new Uint32Array(100 * 30);
    writeActivityGraph(pixels, 100, plain, 100, 0, 30, -1, COLOURS);
    // The second bucket: 2 of its 3 records dropped (the top 20 px, in the filtered colour), the third (no callchain) in the plain colour.
    assert.deepEqual(
      [0, 49, 50, 99].map((x) => runsOf(pixels, 100, x, 30)),
      [
        [['palette 2', 0, 30]],
        [['palette 2', 0, 30]],
        [
          ['filtered', 0, 20],
          ['plain', 20, 30],
        ],
        [
          ['filtered', 0, 20],
          ['plain', 20, 30],
        ],
      ],
    );
  });

  it('keeps a lone record visible next to a dense burst: a column is at least one pixel high', () => {
    const time = Float64Array.from({ length: 1001 }, (_, i) => (i < 1000 ? i / 1000 : 9));
    const rows = Uint32Array.from(time, (_, i) => i);
    const graph = buildActivityGraph(time, rows, 0, 10, 10, new Int32Array(0), TABLE, null, 0);
    assert.deepEqual([graph.counts[0], graph.counts[9], graph.scale], [1000, 1, 1000]);
    const pixels = new Uint32Array(100 * 20);
    writeActivityGraph(pixels, 100, graph, 100, 0, 20, -1, COLOURS);
    const drawn = [0, 90].map((x) => runsOf(pixels, 100, x, 20).reduce((h, [, from, to]) => h + to - from, 0));
    assert.deepEqual(drawn, [20, 1]);
  });
});
