// A logpoint's value lane from a real capture, in a real browser: `ringside capture -e log:logpoint_values.c:LINE` on
// the logpoint fixture (the program test/kernel/logpoint-gdb.test.ts checks against gdb) to a self-contained page, opened
// offline in Debian's Chromium. The lane holds every hit; the values it draws and names on hover are those the page asked
// for per hit (answered from the details the page embeds) and equal the values of a JSON Lines capture of the same
// deterministic run; its numeric variables are drawn as step lines.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../webview/harness';

const root = path.resolve(__dirname, '../../..');
const SOURCE = path.join(root, 'test/fixtures/logpoint_values.c');
const ROUNDS = '12';

interface PageApi {
  ringside: {
    timeline: {
      lanes: { key: string; rows: Uint32Array }[];
      valueSeries(lane: number): { known: number; names: string[]; numeric: boolean[]; values: (Map<string, string> | undefined)[] } | undefined;
    };
    store: { time: Float64Array };
  };
}

describe('logpoint value lane in Chromium (real capture)', function () {
  this.timeout(180000);
  let browser: Browser;
  let dir: string;
  before(async function () {
    assert.equal(process.getuid?.(), 0, 'logpoints are uprobes, which need CAP_PERFMON; the refusal is tested as uid 65534 (test/unprivileged)');
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-logpoint-lane-'));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function capture(spec: string, file: string): void {
    const binary = path.join(root, 'fixtures-bin', 'logpoint_values_O0');
    const run = spawnSync(process.execPath, [path.join(root, 'dist/cli.js'), 'capture', '-e', spec, '-o', file, '--', binary, ROUNDS], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  }

  it("draws every hit of a logpoint with its values, names them on hover, and they are the capture's values", async () => {
    const line =
      readFileSync(SOURCE, 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('// LOG-LOOP')) + 1;
    assert.ok(line > 0, 'LOG-LOOP is marked in the fixture');
    const spec = `log:logpoint_values.c:${line}`;
    const html = path.join(dir, 'values.html');
    const jsonl = path.join(dir, 'values.jsonl');
    capture(spec, html);
    capture(spec, jsonl);
    const expected = readFileSync(jsonl, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text) as { type: string; time: number; values?: Record<string, string> })
      .filter((record) => record.type === 'SAMPLE')
      .sort((a, b) => a.time - b.time)
      .map((record) => record.values ?? {});
    assert.equal(expected.length, Number(ROUNDS), 'one hit per round');

    const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    await page.goto('file://' + html);
    const key = `values:${spec}`;
    const label = page.locator(`.rs-lane-label[data-lane="${key}"]`);
    await label.waitFor({ timeout: 30000 });
    assert.equal(await label.locator('.rs-lane-count').textContent(), ROUNDS);
    // Every hit's values asked for and answered (from the details the page embeds).
    await page.waitForFunction(
      ([k, n]) => {
        const t = (window as unknown as PageApi).ringside.timeline;
        const lane = t.lanes.findIndex((l) => l.key === k);
        return lane >= 0 && t.valueSeries(lane)?.known === n;
      },
      [key, Number(ROUNDS)] as const,
    );
    const shown = await page.evaluate((k) => {
      const t = (window as unknown as PageApi).ringside.timeline;
      const series = t.valueSeries(t.lanes.findIndex((l) => l.key === k))!;
      return {
        values: series.values.map((v) => Object.fromEntries(v ?? [])),
        numeric: Object.fromEntries(series.names.map((name, i) => [name, series.numeric[i]])),
      };
    }, key);
    assert.deepEqual(shown.values, expected, 'the lane holds each hit with the values the capture recorded');
    assert.equal(shown.numeric.i, true, 'i (an int) is drawn as a step line');
    assert.equal(shown.numeric.total, true, 'total (a long) is drawn as a step line');
    assert.equal(shown.numeric.label, false, 'label (a C string) is a labelled tick');

    // Pixels: the lane's band of the canvas holds the step lines (more than the ticks at its bottom).
    const box = (await label.boundingBox())!;
    const ink = await page.evaluate(
      ([top, height]) => {
        const canvas = document.querySelector('canvas.rs-canvas') as HTMLCanvasElement;
        const rect = canvas.getBoundingClientRect();
        const scale = canvas.width / rect.width;
        const y0 = Math.round((top - rect.top) * scale);
        const rows = Math.round(height * 0.6 * scale); // the upper part: lines, not the ticks at the bottom
        const data = canvas.getContext('2d')!.getImageData(0, y0, canvas.width, rows).data;
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
        return painted;
      },
      [box.y, box.height] as const,
    );
    assert.ok(ink > 50, `the step lines are drawn (${ink} painted pixels)`);

    // Hover the middle hit: the tooltip names its values.
    const k = Math.floor(Number(ROUNDS) / 2);
    const point = await page.evaluate(
      ([laneKey, hit]) => {
        const w = window as unknown as PageApi;
        const lane = w.ringside.timeline.lanes.find((l) => l.key === laneKey)!;
        const time = w.ringside.store.time[lane.rows[hit]];
        const axis = document.querySelector('.rs-axis') as HTMLElement;
        const d0 = Number(axis.dataset.domainStart);
        const d1 = Number(axis.dataset.domainEnd);
        const r = document.querySelector('.rs-overlay')!.getBoundingClientRect();
        return { x: r.left + ((time - d0) / (d1 - d0)) * r.width };
      },
      [key, k] as const,
    );
    await page.mouse.move(point.x, box.y + box.height / 2);
    const tooltip = page.locator('.rs-tooltip');
    await page.waitForFunction(() => (document.querySelector('.rs-tooltip')?.textContent ?? '').includes(' = '));
    const text = (await tooltip.textContent()) ?? '';
    for (const [name, value] of Object.entries(expected[k])) assert.ok(text.includes(`${name} = ${value}`), `hover names ${name} = ${value}: ${text}`);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
