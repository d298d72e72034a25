// A harness for driving the built timeline webview in Debian Chromium: a local server on
// 127.0.0.1 serving the real HTML shell (renderWebviewHtml + CSP header), VS Code's theme
// variables, and a test page that stands in for the VS Code webview API and can probe what the
// canvas drew. Used by the browser tests (openTimelinePage: build, serve, launch and open a page whose console errors
// are collected, in one call); the benchmarks can use it too.

import * as http from 'node:http';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import * as assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { contentSecurityPolicy, makeNonce, renderWebviewHtml } from '../../host/html';
import { DEFAULT_THEME_CSS } from '../../host/standalone';

/** The repository root: the nearest folder above this file with a package.json and scripts/build.mjs. */
export function findRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'scripts/build.mjs'))) return dir;
  }
  throw new Error(`no repository root above ${from}`);
}
export const ROOT = findRoot(__dirname);
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');
export const HELPER_DIR = path.join(ARTIFACTS, 'webview-test');
const CHROMIUM = '/usr/bin/chromium';

/** Test-page stand-in for acquireVsCodeApi plus probes that read what the canvas drew. */
export const STAND_IN = `
window.__posted = [];
window.__hooks = [];
document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' at ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber + ' ' + e.sample);
});
window.__onPost = function (fn) { window.__hooks.push(fn); };
var __state;
window.acquireVsCodeApi = function () {
  return {
    postMessage: function (m) { window.__posted.push(m); window.__hooks.forEach(function (h) { h(m); }); },
    getState: function () { return __state; },
    setState: function (s) { __state = s; return s; },
  };
};
window.__getState = function () { return __state; };
window.__send = function (m) { setTimeout(function () { window.dispatchEvent(new MessageEvent('message', { data: m })); }, 0); };
window.__domain = function () {
  var a = document.querySelector('.rs-axis');
  return [Number(a.dataset.domainStart), Number(a.dataset.domainEnd)];
};
window.__lane = function (key) {
  var l = document.querySelector('.rs-lane-label[data-lane="' + CSS.escape(key) + '"]');
  return l ? { top: parseFloat(l.style.top), height: parseFloat(l.style.height) } : null;
};
/* Painted pixels of a lane between two times, within a vertical band (fractions of lane height). */
window.__ink = function (key, t0, t1, yFrom, yTo) {
  var lane = window.__lane(key); if (!lane) return -1;
  var canvas = document.querySelector('.rs-canvas');
  var dpr = canvas.width / parseFloat(canvas.style.width);
  var d = window.__domain();
  var scroll = document.querySelector('.rs-scroll').scrollTop;
  var x0 = Math.max(0, Math.floor((t0 - d[0]) / (d[1] - d[0]) * canvas.width));
  var x1 = Math.min(canvas.width, Math.ceil((t1 - d[0]) / (d[1] - d[0]) * canvas.width));
  var y0 = Math.round((lane.top - scroll + lane.height * (yFrom == null ? 0.15 : yFrom)) * dpr);
  var y1 = Math.round((lane.top - scroll + lane.height * (yTo == null ? 0.85 : yTo)) * dpr);
  if (x1 <= x0 || y1 <= y0) return 0;
  var data = canvas.getContext('2d').getImageData(x0, y0, x1 - x0, y1 - y0).data, n = 0;
  for (var i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
  return n;
};
/* Columns (device px) of a lane with any paint, over the whole width. */
window.__inkColumns = function (key) {
  var lane = window.__lane(key);
  var canvas = document.querySelector('.rs-canvas');
  var dpr = canvas.width / parseFloat(canvas.style.width);
  var scroll = document.querySelector('.rs-scroll').scrollTop;
  var y = Math.round((lane.top - scroll + lane.height / 2) * dpr);
  var data = canvas.getContext('2d').getImageData(0, y, canvas.width, 1).data, n = 0;
  for (var i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
  return { painted: n, width: canvas.width };
};
/* Client coordinates of time t in the middle of a lane. */
window.__point = function (key, t) {
  var lane = window.__lane(key);
  var r = document.querySelector('.rs-overlay').getBoundingClientRect();
  var d = window.__domain();
  var scroll = document.querySelector('.rs-scroll').scrollTop;
  return { x: r.left + (t - d[0]) / (d[1] - d[0]) * r.width, y: r.top + lane.top - scroll + lane.height / 2 };
};
window.__stream = function (which, n) {
  var snaps = which === 'big' || which === 'bigStacks' || which === 'bigWithStray' ? [RingsideSynthetic[which](n)] : [RingsideSynthetic[which]()];
  window.__streamStarted = performance.now();
  return RingsideSynthetic.stream(window.__send, snaps, window.__onPost);
};
`;

export interface Served {
  url: string;
  close(): Promise<void>;
  csp: string;
}

export function serve(dir: string, helperDir: string, extraPages: Record<string, string>): Promise<Served> {
  const nonce = makeNonce();
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const csp = contentSecurityPolicy(origin, nonce);
    if (url.pathname === '/theme.css') {
      // What VS Code's own page provides: the --vscode-* theme variables.
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end(DEFAULT_THEME_CSS);
      return;
    }
    if (url.pathname === '/' || url.pathname === '/restored') {
      const initialState =
        url.pathname === '/restored'
          ? { grouping: 'event', collapsed: ['event:cpu-clock'], filter: '-event:sched', followLatest: false, drawerHeight: 200 }
          : undefined;
      const html = renderWebviewHtml({ scriptUri: `${origin}/timeline.js`, styleUri: `${origin}/timeline.css`, cspSource: origin, nonce, initialState })
        .replace('<link rel="stylesheet"', `<link rel="stylesheet" href="${origin}/theme.css">\n<link rel="stylesheet"`)
        .replace('<body>', '<body class="vscode-dark">')
        .replace(
          `<script nonce="${nonce}" src=`,
          `<script nonce="${nonce}">${STAND_IN}</script>\n<script nonce="${nonce}" src="${origin}/synthetic.js"></script>\n<script nonce="${nonce}" src=`,
        );
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp });
      res.end(html);
      return;
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (extraPages[url.pathname]) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(extraPages[url.pathname]);
      return;
    }
    const file = url.pathname === '/synthetic.js' ? path.join(helperDir, 'synthetic.js') : path.join(dir, path.basename(url.pathname));
    if (!fs.existsSync(file)) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': file.endsWith('.css') ? 'text/css' : 'text/javascript' });
    res.end(fs.readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ url: origin, csp: contentSecurityPolicy(origin, nonce), close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** What `chromiumAndTempDir` holds for the tests of one describe block. */
export interface BrowserAndDir {
  readonly browser: Browser;
  readonly dir: string;
}

/**
 * Registers the describe block's mocha hooks: a private temporary directory (mkdtemp, mode 0700) and one Chromium,
 * both there before its first test and gone after its last, whichever way the tests ended.
 */
export function chromiumAndTempDir(prefix: string): BrowserAndDir {
  let browser: Browser | undefined;
  let dir: string | undefined;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get browser(): Browser {
      return browser ?? assert.fail('Chromium is started in the before hook');
    },
    get dir(): string {
      return dir ?? assert.fail('the temporary directory is made in the before hook');
    },
  };
}

/**
 * Build the product bundle (scripts/build.mjs) and the synthetic-data helper. Other programs in
 * the tree may fail to bundle while being written, so only the webview output is checked.
 */
export function buildWebview(): Promise<{ bundle: string; css: string }> {
  // Once per test process: the tree does not change while mocha runs, and a whole product build per describe block
  // took over a minute of a before hook at load 15-20 (two browser suites' hooks timed out that way).
  built ??= buildWebviewNow();
  return built;
}
let built: Promise<{ bundle: string; css: string }> | undefined;

async function buildWebviewNow(): Promise<{ bundle: string; css: string }> {
  fs.mkdirSync(HELPER_DIR, { recursive: true });
  const started = Date.now();
  const run = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  const bundle = path.join(ROOT, 'dist/webview/timeline.js');
  const css = path.join(ROOT, 'dist/webview/timeline.css');
  if (!fs.existsSync(bundle) || fs.statSync(bundle).mtimeMs < started - 1000 || !fs.existsSync(css)) {
    // The product build stopped on another program first: bundle the webview alone, with the
    // options scripts/build.mjs uses for it, so these tests still test the current webview.
    console.warn(
      `scripts/build.mjs did not produce the webview bundle (${run.stderr.split('\n').find((l) => l.includes('ERROR')) ?? run.status}); bundling webview/main.ts alone`,
    );
    await build({
      bundle: true,
      sourcemap: true,
      logLevel: 'warning',
      target: 'es2022',
      platform: 'browser',
      format: 'iife',
      entryPoints: [path.join(ROOT, 'webview/main.ts')],
      outfile: bundle,
    });
    fs.copyFileSync(path.join(ROOT, 'webview/timeline.css'), css);
  }
  await build({
    entryPoints: [path.join(ROOT, 'test/webview/synthetic.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'RingsideSynthetic',
    platform: 'browser',
    target: 'es2022',
    outfile: path.join(HELPER_DIR, 'synthetic.js'),
    logLevel: 'error',
  });
  return { bundle, css };
}

/** How a page of the served timeline is opened (newPage, openTimelinePage). */
export interface TimelinePageOptions {
  /**
   * The server path to open: '/' (the default) is the page with the stand-in host, waited for until it says ready;
   * another path is waited for until the status line starts with `status` when that is given. null: left blank.
   */
  readonly path?: string | null;
  /** Wait, after opening, until the status line starts with this. */
  readonly status?: string;
  /** 1400 × 900 unless given. */
  readonly viewport?: { readonly width: number; readonly height: number };
  /** Where its console errors and uncaught exceptions go (default: the session's `errors`). */
  readonly errors?: string[];
  /** Collect console warnings too. */
  readonly warnings?: boolean;
  /** Run before the page's own scripts (page.addInitScript). */
  readonly initScript?: string;
  /** Lanes grouped this way once the page is ready (the page starts grouped by thread). */
  readonly grouping?: 'cpu' | 'thread' | 'event';
}

/** Resolves after two animation frames of `page`: whatever the data that arrived before asked to draw is drawn (lanes laid out, axis domain set). */
export function afterFrames(page: Page): Promise<void> {
  return page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/** What a call tree row shows: its depth, function, total samples (its count, exact) and self samples. */
export interface CallTreeRowFacts {
  readonly depth: number;
  readonly fn: string;
  readonly total: number;
  readonly self: number;
}

/**
 * Every row of the call tree's shown list, in order: the list holds only the rows near its view
 * (webview/virtual-rows.ts), so it is scrolled from the top to the bottom, each step waiting for the rows the scroll
 * brings, and the rows are gathered by their data-index.
 */
export async function allCallTreeRows(page: Page): Promise<CallTreeRowFacts[]> {
  const body = '#rs-calltree .rs-calltree-body';
  const count = Number(await page.getAttribute('#rs-calltree table.rs-virtual-rows', 'aria-rowcount')) - 1;
  const rows = new Map<number, CallTreeRowFacts>();
  await page.$eval(body, (el) => (el.scrollTop = 0));
  for (let next = 0; next < count;) {
    await page.waitForSelector(`#rs-calltree tr.rs-calltree-node[data-index="${next}"]`, { state: 'attached' });
    const shown = await page.$$eval('#rs-calltree tr.rs-calltree-node', (trs) =>
      trs.map((tr) => ({
        index: Number((tr as HTMLElement).dataset.index),
        depth: Number((tr as HTMLElement).dataset.depth),
        fn: tr.querySelector('.rs-calltree-fn')?.textContent ?? '',
        total: Number((tr.querySelector('.rs-calltree-total') as HTMLElement).dataset.count),
        self: Number(tr.querySelector('.rs-calltree-self')?.textContent),
      })),
    );
    for (const { index, ...facts } of shown) rows.set(index, facts);
    while (rows.has(next)) next++;
    // The first row not gathered yet is brought into the page by scrolling the last gathered one to the top.
    if (next < count) await page.$eval(body, (el, top) => (el.scrollTop = top), (next - 1) * 18);
  }
  return Array.from({ length: count }, (_, i) => rows.get(i)!);
}

/** Groups the page's lanes by CPU, thread or event, as a user does from the toolbar's dropdown. */
export async function groupLanes(page: Page, grouping: 'cpu' | 'thread' | 'event'): Promise<void> {
  await page.click('#rs-grouping');
  await page.click(`vscode-option[value="${grouping}"]`);
  await page.waitForFunction((value) => (document.querySelector('#rs-grouping') as HTMLSelectElement | null)?.value === value, grouping);
}

/** Chromium on the served timeline (openTimelinePage): a page of it, and more on demand. */
export interface TimelineSession {
  readonly browser: Browser;
  readonly served: Served;
  /** The page openTimelinePage opened. */
  readonly page: Page;
  /** Console errors and uncaught exceptions of the pages opened without an `errors` of their own. */
  readonly errors: string[];
  newPage(options?: TimelinePageOptions): Promise<Page>;
  /** Closes the browser and the server. */
  close(): Promise<void>;
}

/**
 * Builds the webview, serves it (with the extra pages `pages` makes from the built bundle, e.g. standalone exports),
 * launches Chromium and opens one page of it as `options` say.
 */
export async function openTimelinePage(
  options: TimelinePageOptions & {
    readonly pages?: (built: { readonly script: string; readonly css: string }) => Record<string, string>;
  } = {},
): Promise<TimelineSession> {
  const { bundle, css } = await buildWebview();
  const pages = options.pages?.({ script: fs.readFileSync(bundle, 'utf8'), css: fs.readFileSync(css, 'utf8') }) ?? {};
  const served = await serve(path.join(ROOT, 'dist/webview'), HELPER_DIR, pages);
  const browser = await launchChromium().catch(async (error: unknown) => {
    await served.close();
    throw error;
  });
  const close = async () => {
    await browser.close();
    await served.close();
  };
  const errors = options.errors ?? [];
  const newPage = async (opts: TimelinePageOptions = {}): Promise<Page> => {
    const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
    const sink = opts.errors ?? errors;
    page.on('console', (m) => {
      if (m.type() === 'error' || (opts.warnings === true && m.type() === 'warning')) sink.push(m.text());
    });
    page.on('pageerror', (e) => sink.push(String(e)));
    if (opts.initScript !== undefined) await page.addInitScript(opts.initScript);
    const where = opts.path === undefined ? '/' : opts.path;
    if (where === null) return page;
    await page.goto(served.url + where);
    if (where === '/') await page.waitForFunction(() => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'));
    if (opts.grouping !== undefined) await groupLanes(page, opts.grouping);
    if (opts.status !== undefined) {
      await page.waitForFunction((text) => document.querySelector('.rs-status')?.textContent?.startsWith(text) === true, opts.status);
    }
    return page;
  };
  const page = await newPage({ ...options, errors }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  return { browser, served, page, errors, newPage, close };
}

export interface PaintMeasurement {
  readonly records: number;
  /** From the first message sent to the lanes showing all records (streaming, ingest, lanes, first paint). */
  readonly firstPaintMs: number;
  /** Slowest of several synchronous zoom renders. */
  readonly maxZoomFrameMs: number;
  /** Fraction of device-pixel columns painted in the first lane (density at full zoom). */
  readonly paintedFraction: number;
}

/** Stream n synthetic records into a fresh page of the harness and time first paint and zoom frames. */
export async function measurePaint(browser: Browser, url: string, n: number): Promise<PaintMeasurement> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.goto(url + '/');
    await page.waitForFunction(() => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'));
    // Grouped by CPU before any record arrives: the synthetic records alternate between two CPUs, one lane each.
    await groupLanes(page, 'cpu');
    await page.evaluate((count) => (window as unknown as { __stream(w: string, n: number): Promise<number> }).__stream('big', count), n);
    const half = (n / 2).toLocaleString('en-US');
    await page.waitForFunction((h) => document.querySelector('.rs-lane-label[data-lane="cpu:0"] .rs-lane-count')?.textContent === h, half);
    return await page.evaluate(async (records) => {
      const w = window as unknown as {
        __streamStarted: number;
        __inkColumns(k: string): { painted: number; width: number };
        ringside: { timeline: { zoomBy(f: number): void; lastRenderMs: number; render(): void } };
      };
      await new Promise<void>((r) => requestAnimationFrame(() => r()));
      const firstPaintMs = performance.now() - w.__streamStarted;
      const ink = w.__inkColumns('cpu:0');
      const times: number[] = [];
      for (let i = 0; i < 6; i++) {
        w.ringside.timeline.zoomBy(i < 3 ? 2 : 0.5);
        w.ringside.timeline.render();
        times.push(w.ringside.timeline.lastRenderMs);
      }
      return { records, firstPaintMs, maxZoomFrameMs: Math.max(...times), paintedFraction: ink.painted / ink.width };
    }, n);
  } finally {
    await page.close();
  }
}
