// The stack chart and the activity graphs in Chromium, on a capture whose call paths are known (synthetic.ts callPaths):
// the boxes the page builds are the runs of equal call paths per depth worked out here from the fixture alone, the
// activity graph's counts per bucket are the records' times binned here, hover names the box, a click asks the host to
// reveal its function's entry line and highlights it, the filter's stack:= term highlights the same function, each
// thread lane switches between stack chart and ticks, and the lane area is as tall as its lanes with the drawer below.

import * as assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { afterFrames, groupLanes, openTimelinePage, type TimelineSession } from './harness';
import { CALL_PATH_SEQUENCE, CALL_PATH_STACKS, US } from './synthetic';

interface Box {
  depth: number;
  name: string;
  start: number;
  end: number;
  samples: number;
}

interface ChartApi {
  ringside: {
    timeline: {
      stackChartOf(key: string):
        | {
            depth: number;
            levels: { count: number; start: Float64Array; end: Float64Array; name: Int32Array; samples: Uint32Array }[];
          }
        | undefined;
      activityOf(
        key: string,
      ): { t0: number; t1: number; counts: Uint32Array; top: Int32Array; highlighted: Uint32Array | null; filtered: Uint32Array | null } | undefined;
      highlightedFunction(): string | null;
      setHighlightedFunction(name: string | null): void;
      setWindow(a: number, b: number): void;
      window(): [number, number];
      stackChartTable(): { names: string[] };
    };
    store: { stackTable(): { names: string[] } };
    callTree: { addTransform(t: unknown): void };
  };
  __posted: { type: string; [k: string]: unknown }[];
  __lane(key: string): { top: number; height: number } | null;
  __point(key: string, t: number): { x: number; y: number };
  __send(m: unknown): void;
  __stream(which: string): Promise<number>;
}

const FIRST = 1000 * US;
const STEP = 10 * US;
const sampleTime = (i: number) => FIRST + i * STEP;

/** The call path (root first) of each sample, from the fixture's stack table. */
function paths(): string[][] {
  return CALL_PATH_SEQUENCE.map((s) => {
    const frames = CALL_PATH_STACKS.frames.slice(CALL_PATH_STACKS.start[s], CALL_PATH_STACKS.start[s + 1]);
    return frames.map((f) => CALL_PATH_STACKS.names[f]).reverse();
  });
}

/** The transforms of the call tree, worked out here on each sample's path (root first) from their definitions alone. */
type Transform = { kind: 'focus-function'; name: string } | { kind: 'merge-function'; name: string } | { kind: 'collapse-library'; library: string };

function transformPath(path: string[], t: Transform): string[] {
  switch (t.kind) {
    case 'focus-function': {
      // Cut at the outermost call of the function, which becomes the root; a sample not through it is dropped.
      const at = path.indexOf(t.name);
      return at < 0 ? [] : path.slice(at);
    }
    case 'merge-function':
      return path.filter((name) => name !== t.name);
    case 'collapse-library': {
      // Each run of the library's functions is one frame named by the library's file.
      const members = new Set(CALL_PATH_STACKS.nameLibrary.flatMap((l, n) => (CALL_PATH_STACKS.libraries[l] === t.library ? [CALL_PATH_STACKS.names[n]] : [])));
      const frame = `[${t.library.slice(t.library.lastIndexOf('/') + 1)}]`;
      const out: string[] = [];
      for (const name of path) {
        const next = members.has(name) ? frame : name;
        if (!(next === frame && out[out.length - 1] === frame)) out.push(next);
      }
      return out;
    }
  }
}

/**
 * What a stack chart of the fixture holds: per depth, runs of consecutive samples with the same path down to it. `all`:
 * each sample's path (empty: a sample the transforms dropped, which ends every box).
 */
function expectedBoxes(all: string[][] = paths()): Box[] {
  const out: Box[] = [];
  const deepest = Math.max(...all.map((p) => p.length));
  for (let depth = 0; depth < deepest; depth++) {
    let run: { key: string; first: number } | null = null;
    const closeAt = (i: number) => {
      if (!run) return;
      // A sample lasts until the next one; the last one, one sampling interval.
      out.push({ depth, name: all[run.first][depth], start: sampleTime(run.first), end: sampleTime(i), samples: i - run.first });
      run = null;
    };
    all.forEach((p, i) => {
      const key = p.length > depth ? p.slice(0, depth + 1).join('/') : null;
      if (run && run.key !== key) closeAt(i);
      if (key !== null && !run) run = { key, first: i };
    });
    closeAt(all.length);
  }
  return out;
}

describe('stack chart and activity graphs (Chromium)', function () {
  this.timeout(120000);
  let session: TimelineSession;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    session = await openTimelinePage({ errors, viewport: { width: 1280, height: 800 } });
    page = session.page;
    await page.evaluate(() => (window as unknown as ChartApi).__send({ type: 'init', protocolVersion: 1, editor: true }));
    await page.evaluate(() => (window as unknown as ChartApi).__stream('callPaths'));
    await page.waitForFunction(() => document.querySelector('.rs-lane-label[data-lane="thread:300"] .rs-lane-count')?.textContent === '13');
    await afterFrames(page);
  });

  after(() => session?.close());

  const boxes = () =>
    page.evaluate(() => {
      const w = window as unknown as ChartApi;
      const chart = w.ringside.timeline.stackChartOf('thread:300');
      if (!chart) return null;
      // The charts' table: the store's names, and what the transforms added (a collapsed library's frame).
      const names = w.ringside.timeline.stackChartTable().names;
      return chart.levels.flatMap((level, depth) =>
        Array.from({ length: level.count }, (_, b) => ({
          depth,
          name: names[level.name[b]],
          start: level.start[b],
          end: level.end[b],
          samples: level.samples[b],
        })),
      );
    });

  it("draws each thread's callchains as boxes: merged runs of the same call path per depth, root at the top", async () => {
    const got = await boxes();
    assert.ok(got, 'thread 300 (callchains) is a stack chart by default');
    assert.deepEqual(got, expectedBoxes());
    // Spelled out for the reader: main spans every sample; parse, eval, parse under it; lex, add, lex under those.
    assert.deepEqual(
      got.filter((b) => b.depth === 1).map((b) => `${b.name}×${b.samples}`),
      ['parse×6', 'eval×4', 'parse×1'],
    );
    assert.deepEqual(
      got.filter((b) => b.depth === 2).map((b) => `${b.name}×${b.samples}`),
      ['lex×3', 'add×2', 'lex×1'],
    );
    // Its lane is as tall as the chart: the activity graph over three depths of boxes; the thread without callchains is one row.
    const lanes = await page.evaluate(() => {
      const w = window as unknown as ChartApi;
      return {
        chart: w.__lane('thread:300')!.height,
        ticks: w.__lane('thread:301')!.height,
        plain: w.ringside.timeline.stackChartOf('thread:301') === undefined,
      };
    });
    assert.equal(lanes.chart, 22 + 3 * 13);
    assert.equal(lanes.ticks, 22);
    assert.equal(lanes.plain, true, 'a thread without callchains has no stack chart');
    assert.equal(await page.locator('.rs-lane-label[data-lane="thread:301"] .rs-lane-mode').isHidden(), true);
  });

  it("draws through the call tree's transforms: the boxes are the transformed callchains (focus, merge, collapse library)", async () => {
    const transforms: Transform[] = [
      { kind: 'focus-function', name: 'parse' },
      { kind: 'merge-function', name: 'parse' },
      { kind: 'collapse-library', library: '/usr/lib/libparse.so' },
    ];
    for (const t of transforms) {
      await page.evaluate((transform) => (window as unknown as ChartApi).ringside.callTree.addTransform(transform), t);
      await page.waitForSelector('.rs-transform-remove');
      await afterFrames(page);
      const expected = expectedBoxes(paths().map((p) => transformPath(p, t)));
      assert.deepEqual(await boxes(), expected, `boxes through ${JSON.stringify(t)}`);
      // The lane is as tall as the transformed chart's deepest path.
      const depth = Math.max(...paths().map((p) => transformPath(p, t).length));
      assert.equal(await page.evaluate(() => (window as unknown as ChartApi).__lane('thread:300')!.height), 22 + depth * 13, `height through ${t.kind}`);
      // "Complete tree" removes it: the chart is the plain callchains' again.
      await page.click('.rs-transform-crumb');
      await page.waitForSelector('.rs-transform-remove', { state: 'detached' });
      await afterFrames(page);
      assert.deepEqual(await boxes(), expectedBoxes(), `back to the callchains after ${t.kind}`);
    }
    // Spelled out for the reader: merging parse leaves main with lex and eval under it; focusing on parse drops eval's samples.
    assert.deepEqual(
      expectedBoxes(paths().map((p) => transformPath(p, transforms[1])))
        .filter((b) => b.depth === 1)
        .map((b) => `${b.name}×${b.samples}`),
      ['lex×3', 'eval×4', 'lex×1'],
    );
    assert.deepEqual(
      expectedBoxes(paths().map((p) => transformPath(p, transforms[0])))
        .filter((b) => b.depth === 0)
        .map((b) => `${b.name}×${b.samples}`),
      ['parse×6', 'parse×1'],
    );
  });

  it('paints each depth exactly where a box covers it (the frame draws from the samples, not from the boxes)', async () => {
    const expected = expectedBoxes();
    // Middle of each sample's interval, and one past the last sample's end; per depth, painted or not, read off the canvas.
    const times = [...CALL_PATH_SEQUENCE.map((_, i) => sampleTime(i) + STEP / 2), sampleTime(CALL_PATH_SEQUENCE.length) + STEP * 2];
    // The capture fits to its last record: widen the window past the last sample's interval.
    await page.evaluate(([a, b]) => (window as unknown as ChartApi).ringside.timeline.setWindow(a, b), [FIRST - STEP, sampleTime(15)]);
    await afterFrames(page);
    const painted = await page.evaluate(
      ([ts, depths]) => {
        const w = window as unknown as ChartApi & { __domain(): number[] };
        const lane = w.__lane('thread:300')!;
        const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
        const dpr = canvas.width / parseFloat(canvas.style.width);
        const d = w.__domain();
        const scroll = (document.querySelector('.rs-scroll') as HTMLElement).scrollTop;
        const context = canvas.getContext('2d')!;
        return Array.from({ length: depths }, (_, depth) =>
          ts.map((t) => {
            const x = Math.floor(((t - d[0]) / (d[1] - d[0])) * canvas.width);
            const y = Math.round((lane.top - scroll + 22 + depth * 13 + 6) * dpr);
            return context.getImageData(x, y, 1, 1).data[3] > 0;
          }),
        );
      },
      [times, 3] as const,
    );
    const covered = [0, 1, 2].map((depth) => times.map((t) => expected.some((b) => b.depth === depth && b.start <= t && t < b.end)));
    assert.deepEqual(painted, covered);
    // Depth 2 is empty under parse's sixth sample and eval's first, and after add; depth 0 ends one interval after the last.
    assert.deepEqual(covered[2], [false, false, true, true, true, false, false, true, true, false, false, true, false]);
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
  });

  it('names a box on hover: function, source line, duration and samples', async () => {
    const p = await page.evaluate((t) => {
      const w = window as unknown as ChartApi;
      const lane = w.__lane('thread:300')!;
      const at = w.__point('thread:300', t);
      // Depth 2 (lex), in the middle of its row: below the 22 px activity graph and two rows of 13 px.
      return { x: at.x, y: at.y - lane.height / 2 + 22 + 2 * 13 + 6 };
    }, sampleTime(3));
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction(() => document.querySelector('.rs-tooltip:not([hidden])')?.textContent?.startsWith('lex'));
    const tip = await page.locator('.rs-tooltip').innerText();
    assert.deepEqual(tip.split('\n'), ['lex', '/src/interp.c:21', '30.00 µs · 3 samples · depth 2']);
  });

  it("reveals the box's function on click and highlights its boxes and its share of the activity graph", async () => {
    const before = await page.evaluate(() => (window as unknown as ChartApi).__posted.filter((m) => m.type === 'revealRequest').length);
    const p = await page.evaluate((t) => {
      const w = window as unknown as ChartApi;
      const lane = w.__lane('thread:300')!;
      const at = w.__point('thread:300', t);
      return { x: at.x, y: at.y - lane.height / 2 + 22 + 1 * 13 + 6 };
    }, sampleTime(7));
    await page.mouse.click(p.x, p.y);
    await page.waitForFunction((n) => (window as unknown as ChartApi).__posted.filter((m) => m.type === 'revealRequest').length > n, before);
    const reveal = await page.evaluate(() => (window as unknown as ChartApi).__posted.filter((m) => m.type === 'revealRequest').pop()!);
    assert.equal(reveal.file, '/src/interp.c');
    assert.equal(reveal.line, 31, "eval's entry line");
    await afterFrames(page);
    const highlighted = await page.evaluate(() => {
      const t = (window as unknown as ChartApi).ringside.timeline;
      const graph = t.activityOf('thread:300')!;
      return { name: t.highlightedFunction(), through: Array.from(graph.highlighted ?? []).reduce((a, b) => a + b, 0) };
    });
    assert.equal(highlighted.name, 'eval');
    // Samples 6..9 have eval on their stack.
    assert.equal(highlighted.through, 4);
  });

  it("highlights the function the filter's stack:= term chooses (the call tree and flame graph set it)", async () => {
    await page.fill('#rs-filter input', 'stack:=parse');
    await page.waitForFunction(() => (window as unknown as ChartApi).ringside.timeline.highlightedFunction() === 'parse');
    await afterFrames(page);
    const through = await page.evaluate(() =>
      Array.from((window as unknown as ChartApi).ringside.timeline.activityOf('thread:300')!.highlighted ?? []).reduce((a, b) => a + b, 0),
    );
    // The filter keeps the samples through parse (0-5 and 11): all of them are highlighted.
    assert.equal(through, 7);
    await page.fill('#rs-filter input', '');
    await page.waitForFunction(() => (window as unknown as ChartApi).ringside.timeline.highlightedFunction() === null);
  });

  it('counts the records per bucket in the activity graph, coloured by the top self function', async () => {
    // Its first 45 µs: five samples (stacks 1, 1, 2, 2, 2: leaves parse, parse, lex, lex, lex) and a sched_switch at 35 µs.
    await page.evaluate(([a, b]) => (window as unknown as ChartApi).ringside.timeline.setWindow(a, b), [FIRST - 5 * US, FIRST + 45 * US]);
    await afterFrames(page);
    const graph = await page.evaluate(() => {
      const g = (window as unknown as ChartApi).ringside.timeline.activityOf('thread:300')!;
      return { t0: g.t0, t1: g.t1, counts: Array.from(g.counts), top: Array.from(g.top) };
    });
    const times = [...CALL_PATH_SEQUENCE.map((_, i) => sampleTime(i)), FIRST + 35 * US];
    const n = graph.counts.length;
    const expected = new Array<number>(n).fill(0);
    for (const t of times) {
      if (t < graph.t0 || t > graph.t1) continue;
      expected[Math.min(n - 1, Math.floor(((t - graph.t0) * n) / (graph.t1 - graph.t0)))]++;
    }
    assert.deepEqual(graph.counts, expected);
    assert.equal(
      expected.reduce((a, b) => a + b, 0),
      6,
    );
    const names = await page.evaluate(() => (window as unknown as ChartApi).ringside.store.stackTable().names);
    const bucketOf = (t: number) => Math.floor(((t - graph.t0) * n) / (graph.t1 - graph.t0));
    assert.equal(names[graph.top[bucketOf(sampleTime(0))]], 'parse');
    assert.equal(names[graph.top[bucketOf(sampleTime(2))]], 'lex');
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
  });

  it("colours the activity graph through the call tree's transforms and sets apart the samples they drop", async () => {
    // The whole capture: each sample (and the sched_switch) in a bucket of its own.
    await page.evaluate(([a, b]) => (window as unknown as ChartApi).ringside.timeline.setWindow(a, b), [FIRST - 5 * US, sampleTime(12)]);
    await afterFrames(page);
    /** The graph of thread 300 as drawn, its top functions by name, and the pixel alpha and colour at each sample's column. */
    const drawn = () =>
      page.evaluate(
        (times) => {
          const w = window as unknown as ChartApi & { __domain(): number[] };
          const g = w.ringside.timeline.activityOf('thread:300')!;
          const names = w.ringside.timeline.stackChartTable().names;
          const n = g.counts.length;
          const bucket = (t: number) => Math.min(n - 1, Math.floor(((t - g.t0) * n) / (g.t1 - g.t0)));
          const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
          const dpr = canvas.width / parseFloat(canvas.style.width);
          const lane = w.__lane('thread:300')!;
          const scroll = (document.querySelector('.rs-scroll') as HTMLElement).scrollTop;
          const context = canvas.getContext('2d')!;
          // The middle of the 22 px graph over the chart's boxes, in the middle of each sample's column.
          const y = Math.round((lane.top - scroll + 11) * dpr);
          return times.map((t) => {
            const b = bucket(t);
            const px = context.getImageData(Math.floor(((b + 0.5) * canvas.width) / n), y, 1, 1).data;
            return {
              count: g.counts[b],
              filtered: g.filtered ? g.filtered[b] : 0,
              top: g.top[b] < 0 ? null : names[g.top[b]],
              pixel: Array.from(px).join(','),
              alpha: px[3],
            };
          });
        },
        CALL_PATH_SEQUENCE.map((_, i) => sampleTime(i)),
      );
    const plain = await drawn();
    // No transform: every sample kept, each bucket the colour of its leaf.
    assert.deepEqual(
      plain.map((b) => [b.count, b.filtered, b.top]),
      paths().map((p) => [1, 0, p[p.length - 1]]),
    );
    const transforms: Transform[] = [
      { kind: 'focus-function', name: 'parse' },
      { kind: 'merge-function', name: 'lex' },
      { kind: 'collapse-library', library: '/usr/lib/libparse.so' },
    ];
    for (const t of transforms) {
      await page.evaluate((transform) => (window as unknown as ChartApi).ringside.callTree.addTransform(transform), t);
      await page.waitForSelector('.rs-transform-remove');
      await afterFrames(page);
      const got = await drawn();
      // Worked out here from each sample's path: a sample the transform drops is counted and set apart; the rest are
      // coloured by their transformed leaf.
      const expected = paths().map((p) => {
        const out = transformPath(p, t);
        return [1, out.length === 0 ? 1 : 0, out.length === 0 ? null : out[out.length - 1]];
      });
      assert.deepEqual(
        got.map((b) => [b.count, b.filtered, b.top]),
        expected,
        `activity through ${JSON.stringify(t)}`,
      );
      // Drawn so: a column of one top function has the same pixel as any other of that function; a dropped one is faint.
      // (Sample 0's column also holds the grey hatch of the ring's overwritten part, which ends at it: left out.)
      for (let i = 1; i < got.length; i++) {
        const same = got.findIndex((b, k) => k > 0 && b.top !== null && b.top === got[i].top);
        if (got[i].top !== null) assert.equal(got[i].pixel, got[same].pixel, `sample ${i} (${got[i].top}) drawn as sample ${same} through ${t.kind}`);
        else
          assert.ok(
            got[i].alpha > 0 && got[i].alpha < plain[i].alpha / 2,
            `sample ${i} dropped by ${t.kind}: faint (alpha ${got[i].alpha} of ${plain[i].alpha})`,
          );
      }
      if (t.kind === 'collapse-library') {
        // The library's frame, which only the transform makes, can be highlighted: its share is the 7 samples through it.
        await page.evaluate(() => (window as unknown as ChartApi).ringside.timeline.setHighlightedFunction('[libparse.so]'));
        await afterFrames(page);
        const through = await page.evaluate(() =>
          Array.from((window as unknown as ChartApi).ringside.timeline.activityOf('thread:300')!.highlighted ?? []).reduce((a, b) => a + b, 0),
        );
        assert.equal(through, 7);
        await page.evaluate(() => (window as unknown as ChartApi).ringside.timeline.setHighlightedFunction(null));
      }
      await page.click('.rs-transform-crumb');
      await page.waitForSelector('.rs-transform-remove', { state: 'detached' });
      await afterFrames(page);
      assert.deepEqual(
        (await drawn()).map((b) => [b.count, b.filtered, b.top, b.pixel]),
        plain.map((b) => [b.count, b.filtered, b.top, b.pixel]),
        `back to the plain graph after ${t.kind}`,
      );
    }
    // Spelled out for the reader: merging lex colours its samples as parse's; focusing on parse sets apart eval's and main's.
    assert.deepEqual(
      paths().map((p) => transformPath(p, transforms[1]).pop()),
      ['parse', 'parse', 'parse', 'parse', 'parse', 'parse', 'eval', 'add', 'add', 'eval', 'main', 'parse'],
    );
    assert.deepEqual(
      paths().map((p) => transformPath(p, transforms[0]).length === 0),
      [false, false, false, false, false, false, true, true, true, true, true, false],
    );
    await page.click('#rs-zoom-reset');
    await afterFrames(page);
  });

  it('switches a thread lane between its stack chart and ticks', async () => {
    const mode = page.locator('.rs-lane-label[data-lane="thread:300"] .rs-lane-mode');
    assert.equal(await mode.getAttribute('aria-pressed'), 'true');
    await mode.click();
    await page.waitForFunction(() => (window as unknown as ChartApi).__lane('thread:300')?.height === 22);
    assert.equal(await boxes(), null);
    assert.equal(await mode.getAttribute('aria-pressed'), 'false');
    await mode.click();
    await page.waitForFunction(() => (window as unknown as ChartApi).__lane('thread:300')?.height === 22 + 3 * 13);
    assert.deepEqual(await boxes(), expectedBoxes());
  });

  it('sizes the lane area to its lanes and gives the drawer the rest of the page', async () => {
    const sizes = await page.evaluate(() => {
      const scroll = document.querySelector('.rs-scroll') as HTMLElement;
      const labels = [...document.querySelectorAll<HTMLElement>('.rs-lane-label')];
      const content = Math.max(...labels.map((l) => parseFloat(l.style.top) + parseFloat(l.style.height)));
      const drawer = document.querySelector('.rs-drawer')!.getBoundingClientRect();
      return { scroll: scroll.clientHeight, content, drawerBottom: drawer.bottom, page: window.innerHeight, drawerHeight: drawer.height };
    });
    // Three lanes (process header, thread 300's chart, thread 301), each followed by a 1 px rule.
    assert.ok(sizes.scroll >= sizes.content && sizes.scroll <= sizes.content + 4, `lane area ${sizes.scroll} px for ${sizes.content} px of lanes`);
    assert.ok(Math.abs(sizes.drawerBottom - sizes.page) <= 1, `the drawer reaches the bottom: ${sizes.drawerBottom} of ${sizes.page}`);
    assert.ok(sizes.drawerHeight > 400, `the drawer takes the rest: ${sizes.drawerHeight} px`);
  });

  it('draws an activity graph in process headers and CPU lanes too, with the same counts', async () => {
    const sum = (key: string) =>
      page.evaluate((k) => Array.from((window as unknown as ChartApi).ringside.timeline.activityOf(k)?.counts ?? []).reduce((a, b) => a + b, 0), key);
    await afterFrames(page);
    assert.equal(await sum('process:300'), 15, "the process header counts both threads' records");
    await groupLanes(page, 'cpu');
    await page.waitForFunction(() => document.querySelector('.rs-lane-label[data-lane="cpu:0"]') !== null);
    // A lane of a few records shows them as ticks; collapsed (or with more records than pixels) it is its activity graph.
    await page.click('.rs-lane-label[data-lane="cpu:0"] .rs-lane-toggle');
    await afterFrames(page);
    assert.equal(await sum('cpu:0'), 13, 'CPU 0 ran thread 300: its 12 samples and its sched_switch');
    // Through a focus on parse, a CPU lane sets apart the samples not through it as a thread lane does: the 5 of eval
    // and main (samples 6-10); its records without a callchain are not the transform's to drop.
    const filtered = () =>
      page.evaluate(() => Array.from((window as unknown as ChartApi).ringside.timeline.activityOf('cpu:0')?.filtered ?? []).reduce((a, b) => a + b, 0));
    assert.equal(await filtered(), 0);
    await page.evaluate(() => (window as unknown as ChartApi).ringside.callTree.addTransform({ kind: 'focus-function', name: 'parse' }));
    await page.waitForSelector('.rs-transform-remove');
    await afterFrames(page);
    assert.deepEqual([await sum('cpu:0'), await filtered()], [13, 5]);
    await page.click('.rs-transform-crumb');
    await page.waitForSelector('.rs-transform-remove', { state: 'detached' });
    await page.click('.rs-lane-label[data-lane="cpu:0"] .rs-lane-toggle');
    await groupLanes(page, 'thread');
    // The thread lane's row is made anew, its stack chart / ticks button with it: labelled in the frame that made it.
    const mode = page.locator('.rs-lane-label[data-lane="thread:300"] .rs-lane-mode');
    assert.deepEqual([await mode.textContent(), await mode.getAttribute('aria-pressed')], ['ticks', 'true']);
    assert.deepEqual(errors, []);
  });

  // Software-composited Chromium rasterises a canvas's rectangles at commit, one by one: a zoom frame of a million
  // samples' stack chart drew 8,600 of them (boxes and slivers), 4.5 ms of the frame. The boxes and the activity graph's
  // bars over them are one image, whatever their number: a frame's rectangles are its lane rules.
  it('draws the boxes of a zoom frame as one image, not as one rectangle each', async () => {
    const big = await session.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      const drawn = await big.evaluate(async () => {
        type Page = {
          ringside: { receive(m: unknown): void; timeline: { renderCount: number; zoomBy(f: number): void } };
          RingsideSynthetic: {
            bigStacks(n: number): { start: { threads: unknown[] }; batches: { columns: { tid: ArrayBuffer } }[] };
          };
        };
        const w = window as unknown as Page;
        // 16 leaves under main taken in turns: every pixel column of depth 1 starts a box of another function. One
        // thread: its process is one lane, a stack chart under its activity graph.
        const snapshot = w.RingsideSynthetic.bigStacks(200_000);
        snapshot.start.threads = snapshot.start.threads.slice(0, 1);
        for (const batch of snapshot.batches) new Int32Array(batch.columns.tid).fill(300);
        for (const message of [snapshot.start, ...snapshot.batches]) w.ringside.receive(message);
        const frame = async () => {
          const before = w.ringside.timeline.renderCount;
          while (w.ringside.timeline.renderCount === before) await new Promise((r) => requestAnimationFrame(r));
        };
        await frame();
        const proto = CanvasRenderingContext2D.prototype;
        const counts = { rects: 0, images: 0 };
        const rect = proto.rect;
        const fillRect = proto.fillRect;
        const drawImage = proto.drawImage;
        // The lanes' canvas only (the coverage strip has a canvas of its own).
        const onLanes = (context: CanvasRenderingContext2D) => context.canvas.classList.contains('rs-canvas');
        proto.rect = function (...args: Parameters<typeof rect>) {
          if (onLanes(this)) counts.rects++;
          return rect.apply(this, args);
        };
        proto.fillRect = function (...args: Parameters<typeof fillRect>) {
          if (onLanes(this)) counts.rects++;
          return fillRect.apply(this, args);
        };
        proto.drawImage = function (this: CanvasRenderingContext2D, ...args: unknown[]) {
          counts.images++;
          return (drawImage as (...a: unknown[]) => void).apply(this, args);
        } as typeof drawImage;
        try {
          w.ringside.timeline.zoomBy(1.25);
          await frame();
        } finally {
          Object.assign(proto, { rect, fillRect, drawImage });
        }
        const canvas = document.querySelector('.rs-canvas') as HTMLCanvasElement;
        const lanes = document.querySelectorAll('.rs-lane-label').length;
        const charts = document.querySelectorAll('.rs-lane-label.rs-stack-lane').length;
        return { ...counts, lanes, charts, buckets: Math.floor(canvas.width / (2 * (canvas.width / parseFloat(canvas.style.width)))) };
      });
      assert.deepEqual([drawn.lanes, drawn.charts, drawn.images], [1, 1, 1], 'one stack chart lane, its boxes and activity graph one image');
      // Each lane's rule under it; none of its activity graph's hundreds of bars is a rectangle of its own.
      assert.ok(drawn.buckets > 100, `${drawn.buckets} buckets`);
      assert.equal(drawn.rects, drawn.lanes, `${drawn.rects} rectangles for ${drawn.lanes} lanes`);
    } finally {
      await big.close();
    }
  });
});
