// End-to-end harness: Ringside inside a real VS Code (code-server 4.100.3 = VS Code 1.100.3 for the web), driven through
// the real UI by Debian's Chromium via playwright-core. Every scenario gets a fresh server (fresh user data, extensions
// folder, TMPDIR, demo workspace), because extension hosts linger after the browser leaves.
//
// Scenarios (one file each): record-snapshot (1), line-hits (2), watch-controls (3), export-perfdata (4),
// kept-reload (5), live-follow (the timeline of a running recording growing by itself); plus smoke and package. Screenshots of every step and the server/browser logs land in
// test-artifacts/e2e/<scenario>/. Environment knobs:
//   RINGSIDE_E2E_NO_BUILD=1      package what dist/ holds instead of rebuilding first
//   RINGSIDE_E2E_VSIX=path       test that .vsix instead of packaging the repo
//   RINGSIDE_E2E_UPDATE_DOCS=1   scenario 1 refreshes the README screenshot docs/timeline.png
// Tests compiled outside out/ (tsc --outDir /tmp/x) need NODE_PATH=<repo>/node_modules to find playwright-core.
import { chromium, type BrowserContext, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SILENT_BREAKPOINTS } from '../host/breakpoints';

/** Default for every wait: the machine is shared and sometimes slow. */
export const E2E_TIMEOUT_MS = 60_000;

export const chromiumPath = '/usr/bin/chromium';
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export class E2eError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'E2eError';
  }
}

/** The repository root, found from wherever this file was compiled to (out/test/e2e or test/e2e). */
/** The repository root: above this compiled file (out/test/e2e), else above the working directory (tests compiled elsewhere). */
export const repoRoot: string = (() => {
  for (const start of [__dirname, process.cwd()]) {
    for (let dir = start; dir !== path.dirname(dir); dir = path.dirname(dir)) {
      const manifest = path.join(dir, 'package.json');
      if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'ringside') return dir;
    }
  }
  throw new E2eError(`cannot find the ringside repository above ${__dirname} or ${process.cwd()}`);
})();

export const artifactsRoot = path.join(repoRoot, 'test-artifacts', 'e2e');

// The scripts are plain ES modules shared with `npm start`; Node 20.19+ can require() them. Their shapes:
interface RunningCodeServer {
  url: string;
  port: number;
  pid: number;
  startMs: number;
  output(): string;
  stop(): Promise<void>;
}
interface CodeServerScript {
  ensureCodeServer(): string;
  startCodeServer(options: {
    workspace: string;
    port?: number;
    extensionsDir: string;
    userDataDir: string;
    timeoutMs?: number;
    runAsUid?: number;
    entry?: string;
    env?: Record<string, string>;
  }): Promise<RunningCodeServer>;
  copyCodeServerFor(uid: number, dir: string): string;
  installVsix(vsixPath: string, extensionsDir: string): string;
}
interface PackageVsixScript {
  packageVsix(options?: { out?: string; build?: boolean }): { vsixPath: string; bytes: number; files: number };
}
export interface DemoWorkspace {
  folder: string;
  program: string;
  source: string;
  /** 1-based line of `demo_counter++` in demo.c. */
  counterLine: number;
}
interface DemoScript {
  createDemoWorkspace(target: string, options?: { launchArgs?: string[]; firstScreen?: boolean }): DemoWorkspace;
  demoIncrements(rounds: number): number;
  demoUserSettings: Readonly<Record<string, unknown>>;
}

function script<T>(relative: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(path.join(repoRoot, relative)) as T;
}
export const codeServer = (): CodeServerScript => script<CodeServerScript>('scripts/code-server.mjs');
export const demo = (): DemoScript => script<DemoScript>('scripts/demo/create.mjs');

let packagedVsix: string | undefined;
/**
 * The .vsix under test: the repo's extension, built and packaged once per test process. RINGSIDE_E2E_VSIX overrides it
 * (for developing the harness against another extension).
 */
export function extensionVsix(): string {
  if (packagedVsix) return packagedVsix;
  const override = process.env.RINGSIDE_E2E_VSIX;
  if (override) {
    if (!existsSync(override)) throw new E2eError(`RINGSIDE_E2E_VSIX=${override} does not exist`);
    packagedVsix = override;
  } else {
    // A private folder per test process: several test runs may share the checkout.
    const folder = mkdtempSync(path.join(os.tmpdir(), 'ringside-e2e-vsix-'));
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    const packaged = script<PackageVsixScript>('scripts/package-vsix.mjs').packageVsix({
      out: path.join(folder, 'ringside-under-test.vsix'),
      build: process.env.RINGSIDE_E2E_NO_BUILD !== '1',
    });
    packagedVsix = packaged.vsixPath;
  }
  return packagedVsix;
}

/** User settings that keep the workbench quiet and deterministic (no welcome page, tips or trust prompts). */
const quietUserSettings = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.ignoreRecommendations': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'window.restoreWindows': 'none',
  'chat.commandCenter.enabled': false,
};

export interface Scenario {
  readonly name: string;
  readonly page: Page;
  readonly context: BrowserContext;
  readonly server: RunningCodeServer;
  readonly workspace: DemoWorkspace;
  readonly artifactsDir: string;
  /** Milliseconds from spawning code-server to /healthz answering. */
  readonly serverStartMs: number;
  /** What the extension has written to its Output channel ("Ringside") so far, as the workbench's log files hold it. */
  outputLog(): string;
  /** Saves a full-page screenshot as test-artifacts/e2e/<scenario>/<NN>-<label>.png and returns its path. */
  screenshot(label: string): Promise<string>;
  /** Closes the browser, kills the server's process group and removes the temp folders. Safe to call twice. */
  close(options?: { failed?: boolean }): Promise<void>;
}

export interface ScenarioOptions {
  /** `ringside.launch.args` for the demo (e.g. a round count so hit counts are known). */
  launchArgs?: string[];
  /** Extra user settings. */
  userSettings?: Record<string, unknown>;
  /**
   * Keep the demo's first screen (demo.c, the Ringside view and its walkthrough, as `npm start` shows): off by default,
   * so scenarios start from a plain workbench whose editors and webviews are only their own.
   */
  firstScreen?: boolean;
  /**
   * Run code-server (and so the extension host and everything Ringside launches) as this uid instead of root, from
   * copies that uid can read: the way desktop VS Code runs, as an ordinary user.
   */
  asUid?: number;
  /**
   * Extra environment of code-server and so of the extension host, e.g. `RINGSIDE_BREAKPOINT_DELIVERY=silent` to run the
   * path of a host whose breakpoints never fire on any host.
   */
  env?: Record<string, string>;
}

function safeName(text: string): string {
  return (
    text
      .replace(/[^\w.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'step'
  );
}

/**
 * A fresh code-server with the extension installed and the demo workspace open in headless Chromium, the workbench
 * loaded. Always call close() (in `finally`/`after`), also when this throws: it cleans up what it started itself.
 */
/**
 * Registers the hooks every scenario needs (call inside `describe`): remember whether a test failed,
 * and close the scenario afterwards, saving its logs and a failure screenshot. `open` starts it.
 */
export function scenarioLifecycle(): { open(name: string, options?: ScenarioOptions): Promise<Scenario> } {
  let scenario: Scenario | undefined;
  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async () => {
    await scenario?.close({ failed });
  });
  return { open: async (name, options) => (scenario = await openScenario(name, options)) };
}

export async function openScenario(name: string, options: ScenarioOptions = {}): Promise<Scenario> {
  const base = mkdtempSync(path.join(os.tmpdir(), `ringside-e2e-${safeName(name)}-`));
  const artifactsDir = path.join(artifactsRoot, safeName(name));
  rmSync(artifactsDir, { recursive: true, force: true });
  mkdirSync(artifactsDir, { recursive: true });
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(base, { recursive: true, force: true })];
  const runCleanups = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        process.stderr.write(`e2e cleanup of ${name}: ${String(error)}\n`);
      }
    }
  };
  try {
    const vsix = extensionVsix();
    const workspace = demo().createDemoWorkspace(path.join(base, 'workspace'), { launchArgs: options.launchArgs, firstScreen: options.firstScreen ?? false });
    const extensionsDir = path.join(base, 'extensions');
    const userDataDir = path.join(base, 'user-data');
    mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
    writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify({ ...quietUserSettings, ...options.userSettings }, null, 2));
    codeServer().installVsix(vsix, extensionsDir);
    const asUser =
      options.asUid === undefined
        ? {}
        : {
            runAsUid: options.asUid,
            entry: codeServer().copyCodeServerFor(options.asUid, path.join(base, 'code-server')),
            env: { HOME: base, USER: 'nobody', LOGNAME: 'nobody' },
          };
    if (options.asUid !== undefined) {
      execFileSync('chown', ['-R', `${options.asUid}:${options.asUid}`, base]);
      chmodSync(base, 0o755);
    }

    const env = { ...asUser.env, ...options.env };
    const server = await codeServer().startCodeServer({ workspace: workspace.folder, extensionsDir, userDataDir, timeoutMs: E2E_TIMEOUT_MS, ...asUser, env });
    cleanups.push(async () => {
      writeFileSync(path.join(artifactsDir, 'code-server.log'), server.output());
      await server.stop();
    });
    // The Ringside output channel (what the extension logged: sessions, targets and how they ended).
    const outputLog = (): string => {
      const found = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
          const full = path.join(dir, entry.name);
          return entry.isDirectory() ? found(full) : /Ringside\.log$/.test(entry.name) ? [full] : [];
        });
      const logs = existsSync(path.join(userDataDir, 'logs')) ? found(path.join(userDataDir, 'logs')) : [];
      return logs.map((file) => readFileSync(file, 'utf8')).join('\n');
    };
    cleanups.push(() => writeFileSync(path.join(artifactsDir, 'ringside-output.log'), outputLog()));

    const context = await chromium.launchPersistentContext(path.join(base, 'chromium-profile'), {
      executablePath: chromiumPath,
      headless: true,
      args: chromiumArgs,
      viewport: { width: 1600, height: 1000 },
      timeout: E2E_TIMEOUT_MS,
    });
    cleanups.push(() => context.close());
    context.setDefaultTimeout(E2E_TIMEOUT_MS);
    const page = context.pages()[0] ?? (await context.newPage());
    const consoleLines: string[] = [];
    page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => consoleLines.push(`[pageerror] ${error.message}`));
    cleanups.push(() => writeFileSync(path.join(artifactsDir, 'browser-console.log'), consoleLines.join('\n')));

    await page.goto(`${server.url}?folder=${encodeURIComponent(workspace.folder)}`, { timeout: E2E_TIMEOUT_MS });
    await waitForWorkbench(page);

    let step = 0;
    let closed = false;
    const scenario: Scenario = {
      name,
      page,
      context,
      server,
      workspace,
      artifactsDir,
      serverStartMs: server.startMs,
      outputLog,
      async screenshot(label: string): Promise<string> {
        step += 1;
        const file = path.join(artifactsDir, `${String(step).padStart(2, '0')}-${safeName(label)}.png`);
        await page.screenshot({ path: file, timeout: E2E_TIMEOUT_MS });
        return file;
      },
      async close({ failed = false } = {}): Promise<void> {
        if (closed) return;
        closed = true;
        if (failed) {
          try {
            await page.screenshot({ path: path.join(artifactsDir, 'failure.png'), timeout: 10_000 });
          } catch {
            // the page may be gone; the logs below still get written
          }
        }
        await runCleanups();
      },
    };
    return scenario;
  } catch (error) {
    await runCleanups();
    throw error;
  }
}

/** Waits until the workbench shows the explorer with the demo folder, i.e. VS Code finished loading the window. */
export async function waitForWorkbench(page: Page, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: timeoutMs });
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Whether a UI step (a wait, a fill, a click) succeeded. */
function succeeded(step: Promise<unknown>): Promise<boolean> {
  return step.then(
    () => true,
    () => {
      // a failed step is the answer, not an error: the caller tries another way or again, and says what never happened
      return false;
    },
  );
}

/**
 * Runs a command through the command palette like a user: F1, type the title, wait for its row, Enter.
 * Extension commands only appear a few seconds after the workbench looks ready, so the palette is closed and reopened
 * until the row shows. Returns when (Date.now()) its row was clicked: where a user's wait for the command begins.
 */
export async function runCommand(page: Page, title: string, timeoutMs = E2E_TIMEOUT_MS): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const input = page.locator('.quick-input-widget input[type="text"], .quick-input-widget input').first();
  while (Date.now() < deadline) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const opened = await succeeded(input.waitFor({ state: 'visible', timeout: 3000 }));
    if (!opened) {
      // Keys typed while a webview holds the focus (e.g. a timeline panel restored after a reload) may never reach the
      // workbench; the title bar's command center opens the same quick input with a click.
      await page
        .locator('.command-center .command-center-center, .command-center')
        .first()
        .click({ timeout: 5000 })
        .catch(() => {
          // no command center in this layout: the palette keys are tried again
        });
      if (!(await succeeded(input.waitFor({ state: 'visible', timeout: 3000 })))) continue;
    }
    // The palette can close again right after opening when a webview restored after a reload takes
    // the focus (seen under load): then open it again rather than wait on a hidden input.
    if (!(await succeeded(input.fill(`>${title}`, { timeout: 3000 })))) continue;
    const row = commandRow(page, title);
    try {
      await row.waitFor({ state: 'visible', timeout: Math.min(4000, Math.max(500, deadline - Date.now())) });
    } catch {
      continue; // not registered yet: reopen the palette
    }
    // The palette can also close between the row appearing and the click (the first screen's walkthrough editor
    // taking the focus as it loads, seen once on a quiet machine): then open it again, not wait a minute on a hidden row.
    const clickedAt = Date.now();
    if (!(await succeeded(row.click({ timeout: 5000 })))) continue;
    await input.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {
      // the palette closes as the command runs; the caller waits on what the command does
    });
    return clickedAt;
  }
  await page.keyboard.press('Escape');
  throw new E2eError(`command "${title}" never appeared in the command palette within ${timeoutMs / 1000} s`);
}

/** The palette row whose label is exactly the title (not merely containing it). */
function commandRow(page: Page, title: string): Locator {
  return page
    .locator('.quick-input-list .monaco-list-row')
    .filter({
      has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRegExp(title)}\\s*$`) }),
    })
    .first();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The content of the visible webview panel: VS Code hosts it in two nested iframes, `iframe.webview.ready` (the host)
 * and `iframe#active-frame` (the page). Waits until the inner frame's body exists.
 */
export async function webviewFrame(page: Page, timeoutMs = E2E_TIMEOUT_MS): Promise<FrameLocator> {
  const host = page.locator('iframe.webview.ready').last();
  await host.waitFor({ state: 'attached', timeout: timeoutMs });
  const outer = page.frameLocator('iframe.webview.ready').last();
  await outer.locator('iframe#active-frame').waitFor({ state: 'attached', timeout: timeoutMs });
  const inner = outer.frameLocator('iframe#active-frame');
  await inner.locator('body').waitFor({ state: 'attached', timeout: timeoutMs });
  return inner;
}

/** Texts of the notification toasts currently shown (errors from the extension surface here). */
export async function notificationTexts(page: Page): Promise<string[]> {
  return page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts();
}

/** Opens a workspace file through Quick Open (Ctrl+P), like a user, and waits for its editor tab. */
export async function openFile(page: Page, relativePath: string, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(relativePath);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: path.basename(relativePath) }).first();
  await row.waitFor({ state: 'visible', timeout: timeoutMs });
  await page.keyboard.press('Enter');
  await page
    .locator(`.tabs-container .tab[aria-label^="${path.basename(relativePath)}"]`)
    .first()
    .waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Moves the cursor of the active editor to a 1-based line with Go to Line (Ctrl+G), which also scrolls it into view. */
export async function goToLine(page: Page, line: number, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  await page
    .locator('.editor-instance .monaco-editor')
    .first()
    .click({ position: { x: 200, y: 10 } });
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: timeoutMs });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: timeoutMs });
}

/**
 * Right-clicks the line number of a 1-based line in the active editor and picks `item` from the gutter context menu
 * (the `editor/lineNumber/context` menu, where "Record Hits on This Line" lives).
 */
export async function lineNumberMenu(page: Page, line: number, item: string, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  await goToLine(page, line, timeoutMs);
  const lineNumber = page
    .locator('.editor-instance .margin-view-overlays .line-numbers', {
      hasText: new RegExp(`^\\s*${line}\\s*$`),
    })
    .first();
  await lineNumber.waitFor({ state: 'visible', timeout: timeoutMs });
  await lineNumber.click({ button: 'right' });
  await clickContextMenuItem(page, item, timeoutMs);
}

/** Picks an item of the open context menu (VS Code renders it inside a shadow root; Playwright's CSS pierces it). */
export async function clickContextMenuItem(page: Page, item: string, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  const entry = page.locator('.monaco-menu .action-item .action-label', { hasText: new RegExp(`^\\s*${escapeRegExp(item)}\\s*$`) }).first();
  try {
    await entry.waitFor({ state: 'visible', timeout: timeoutMs });
  } catch {
    // the menu lacks the item: the error below names what it offers instead
    const offered = await page.locator('.monaco-menu .action-item .action-label').allInnerTexts();
    await page.keyboard.press('Escape');
    throw new E2eError(`context menu has no "${item}"; it offers: ${offered.filter(Boolean).join(' | ')}`);
  }
  await entry.click();
  // A click that lands while the menu is still settling only highlights the item; the menu then stays open with the
  // item focused, and Enter runs it (what a user would do next).
  const menu = page.locator('.monaco-menu').first();
  const closed = await succeeded(menu.waitFor({ state: 'hidden', timeout: 1500 }));
  if (!closed) {
    await entry.hover();
    await page.keyboard.press('Enter');
    await menu.waitFor({ state: 'hidden', timeout: timeoutMs });
  }
}

/** Opens a view container from the activity bar (e.g. "Ringside") and returns the pane of the named view. */
export async function openViewPane(page: Page, container: string, view: string, timeoutMs = E2E_TIMEOUT_MS): Promise<Locator> {
  const item = page.locator('.activitybar .action-item', { has: page.locator(`a.action-label[aria-label^="${container}"]`) }).first();
  const pane = page.locator('.pane', { has: page.locator(`.pane-header[aria-label^="${view}"]`) }).first();
  const sideBar = page.locator('.monaco-workbench .part.sidebar').first();
  const deadline = Date.now() + timeoutMs;
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  // Clicking the selected container collapses the side bar, and right after a window reload the container can be
  // selected (its side bar restored, "Drag a view here to display.") before the extension has registered the view: a
  // click then hid the side bar for good (the loaded CI run's scenario 5). So the container is clicked only while it is
  // not selected or the side bar is hidden, and looked at again until the pane shows.
  for (;;) {
    if (await pane.isVisible()) return pane;
    const selected = (await item.getAttribute('class'))?.split(/\s+/).includes('checked') ?? false;
    if (!selected || !(await sideBar.isVisible())) await item.click();
    try {
      await pane.waitFor({ state: 'visible', timeout: Math.min(5000, Math.max(1, deadline - Date.now())) });
      return pane;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
    }
  }
}

/**
 * Expands the tree row at `level` whose whole text is `name`. A live view refreshes its rows every few seconds and a
 * click that lands while a row is re-rendered is lost, so this clicks again until the row says it is expanded.
 */
export async function expandTreeRow(pane: Locator, level: number, name: string, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const exact = new RegExp(`^\\s*${escaped}\\s*$`);
  const row = pane.locator(`.monaco-list-row[aria-level="${level}"]`, { hasText: exact }).first();
  const expanded = pane.locator(`.monaco-list-row[aria-level="${level}"][aria-expanded="true"]`, { hasText: exact }).first();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await row.waitFor({ state: 'visible', timeout: Math.max(1, deadline - Date.now()) });
    if ((await row.getAttribute('aria-expanded')) !== 'true') await row.locator('.monaco-tl-twistie').first().click();
    try {
      await expanded.waitFor({ state: 'visible', timeout: Math.min(5000, Math.max(1, deadline - Date.now())) });
      return;
    } catch (error) {
      // Not expanded yet: the click met a re-render. Try again until the deadline, then report the wait's own error.
      if (Date.now() >= deadline) throw error;
    }
  }
}

/** Visible row texts of a tree view pane (e.g. the Sessions view). */
export async function treeRowTexts(pane: Locator): Promise<string[]> {
  return pane.locator('.monaco-list-row').allInnerTexts();
}

// ---------------------------------------------------------------------------------------------------------------
// Quick inputs (quick picks and input boxes the extension opens) and the Ringside surfaces the scenarios read.

/** Waits until the quick input widget shows a prompt whose title contains `title`. */
export async function waitForQuickInput(page: Page, title: string | RegExp, timeoutMs = E2E_TIMEOUT_MS): Promise<Locator> {
  const widget = page
    .locator('.quick-input-widget')
    .filter({ has: page.locator('.quick-input-title', { hasText: title }) })
    .first();
  await widget.waitFor({ state: 'visible', timeout: timeoutMs });
  return widget;
}

/**
 * Answers the quick pick titled `title` like a user: types `typed` (narrowing the list), waits for a row containing
 * `row` (default: the typed text) and presses Enter, which accepts the first (highlighted) row.
 */
export async function answerQuickPick(
  page: Page,
  title: string | RegExp,
  typed: string,
  row: string | RegExp = typed,
  timeoutMs = E2E_TIMEOUT_MS,
): Promise<void> {
  const widget = await waitForQuickInput(page, title, timeoutMs);
  const input = widget.locator('.quick-input-box input').first();
  await input.fill(typed);
  await widget.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor({ state: 'visible', timeout: timeoutMs });
  await input.press('Enter');
  await widget
    .locator('.quick-input-title', { hasText: title })
    .waitFor({ state: 'hidden', timeout: timeoutMs })
    .catch(() => {
      // the title may already be gone; the caller checks what the pick did
    });
}

/**
 * Runs `command` from the palette and answers the quick pick it opens (answerQuickPick). A webview restored after a
 * window reload can take the focus back a moment after the pick opens, which closes it before it is answered (the
 * palette itself does the same, see runCommand); then the command is run again, until `timeoutMs`. Nothing is picked
 * twice: a pick is retried only when it closed before Enter.
 */
export async function runCommandAndPick(
  page: Page,
  command: string,
  title: string | RegExp,
  typed: string,
  row: string | RegExp = typed,
  timeoutMs = E2E_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await runCommand(page, command, Math.max(1000, deadline - Date.now()));
    try {
      await answerQuickPick(page, title, typed, row, Math.min(15000, Math.max(1000, deadline - Date.now())));
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
    }
  }
}

/** Accepts the input box or multi-select quick pick titled `title` as it is (its defaults) with Enter; returns the value it showed. */
export async function acceptQuickInput(page: Page, title: string | RegExp, timeoutMs = E2E_TIMEOUT_MS): Promise<string> {
  const widget = await waitForQuickInput(page, title, timeoutMs);
  const input = widget.locator('.quick-input-box input').first();
  const value = await input.inputValue();
  await input.press('Enter');
  await widget
    .locator('.quick-input-title', { hasText: title })
    .waitFor({ state: 'hidden', timeout: timeoutMs })
    .catch(() => {
      // the title may already be gone; the caller checks what the input did
    });
  return value;
}

/** Waits for a notification toast whose message matches, and returns its text. */
export async function waitForNotification(page: Page, text: RegExp, timeoutMs = E2E_TIMEOUT_MS): Promise<string> {
  const toast = page.locator('.notifications-toasts .notification-list-item-message', { hasText: text }).first();
  await toast.waitFor({ state: 'visible', timeout: timeoutMs });
  return toast.innerText();
}

/**
 * Polls the scenario's Output log until `condition` holds for it (the workbench writes it to its log file a little
 * after the extension logs), or throws after `timeoutMs`; the extension's error toasts fail it at once.
 */
export async function outputLogUntil(scenario: Scenario, what: string, condition: (log: string) => boolean, timeoutMs = E2E_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition(scenario.outputLog())) {
    if (Date.now() > deadline) throw new E2eError(`${what} did not happen within ${timeoutMs} ms`);
    const errors = await ringsideErrors(scenario.page);
    if (errors.length) throw new E2eError(`the extension reported: ${errors.join(' | ')}`);
    await scenario.page.waitForTimeout(100);
  }
}

/** Error toasts from Ringside, to fail a step with the extension's own explanation instead of a timeout. */
export async function ringsideErrors(page: Page): Promise<string[]> {
  // The warning that this machine delivers no breakpoint hits is what a silent host must show, not an error.
  return (await notificationTexts(page)).filter(
    (text) => /^Ringside:/.test(text) && /error|failed|cannot|not |no /i.test(text) && !SILENT_BREAKPOINTS.test(text),
  );
}

export interface TimelineLane {
  readonly label: string;
  readonly count: number;
  readonly watch: boolean;
  /** A process's header lane (grouped by thread): it holds the records of the thread lanes under it. */
  readonly process: boolean;
  /** Device pixels with a visible mark (alpha ≥ 48) in the lane's band of the canvas. */
  readonly inkPixels: number;
}

export interface TimelineFacts {
  /** The toolbar's "N records · M snapshots" line. */
  readonly status: string;
  readonly records: number;
  readonly snapshots: number;
  readonly loading: boolean;
  readonly lanes: readonly TimelineLane[];
  /** The canvas's accessible summary ("Timeline: N records in L lanes"). */
  readonly canvasLabel: string;
}

/**
 * What the timeline page shows: the status line, every lane label with its count, and, read back from the rendered
 * canvas, how many pixels each lane's band actually has painted.
 */
export async function timelineFacts(frame: FrameLocator): Promise<TimelineFacts> {
  const status = (await frame.locator('.rs-status').first().innerText()).trim();
  const match = /^([\d,]+) records · (\d+) snapshots?/.exec(status);
  const lanes = await frame
    .locator('canvas.rs-canvas')
    .first()
    .evaluate((canvas: HTMLCanvasElement) => {
      const ratio = canvas.height / Math.max(1, canvas.clientHeight);
      const context = canvas.getContext('2d');
      const pixels = context ? context.getImageData(0, 0, canvas.width, canvas.height).data : new Uint8ClampedArray();
      const labels = [...document.querySelectorAll<HTMLElement>('.rs-lane-label')];
      return labels.map((label) => {
        const top = Math.max(0, Math.round(parseFloat(label.style.top) * ratio));
        const bottom = Math.min(canvas.height, Math.round((parseFloat(label.style.top) + parseFloat(label.style.height)) * ratio));
        let ink = 0;
        // The hairline under each lane sits at its bottom edge: stop one row short of it.
        for (let y = top; y < bottom - 1; y++) {
          for (let x = 0; x < canvas.width; x++) if (pixels[(y * canvas.width + x) * 4 + 3] >= 48) ink++;
        }
        return {
          label: label.querySelector('.rs-lane-name')?.textContent ?? '',
          count: Number((label.querySelector('.rs-lane-count')?.textContent ?? '').replace(/,/g, '')),
          watch: label.classList.contains('rs-watch-lane'),
          process: label.classList.contains('rs-process-lane'),
          inkPixels: ink,
        };
      });
    });
  return {
    status,
    records: match ? Number(match[1].replace(/,/g, '')) : NaN,
    snapshots: match ? Number(match[2]) : NaN,
    loading: /loading/.test(status),
    lanes,
    canvasLabel: (await frame.locator('canvas.rs-canvas').first().getAttribute('aria-label')) ?? '',
  };
}

/**
 * Waits until the timeline has received `snapshots` snapshots completely and drawn the lanes of the one it shows (the
 * newest), then returns its facts. `mayBeEmpty`: that capture may hold no records (a recording of breakpoints that never
 * fire here), so complete is enough.
 */
export async function waitForTimeline(
  page: Page,
  snapshots: number,
  timeoutMs = E2E_TIMEOUT_MS,
  mayBeEmpty = false,
): Promise<{ frame: FrameLocator; facts: TimelineFacts }> {
  const deadline = Date.now() + timeoutMs;
  let last: TimelineFacts | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const frame = await webviewFrame(page, Math.max(1000, deadline - Date.now()));
      last = await timelineFacts(frame);
      if (last.snapshots >= snapshots && !last.loading && (mayBeEmpty || (last.records > 0 && last.lanes.length > 0))) {
        await page.waitForTimeout(300); // one more frame so the canvas holds the final render
        return { frame, facts: await timelineFacts(frame) };
      }
    } catch (error) {
      lastError = error;
    }
    const errors = await ringsideErrors(page);
    if (errors.length) throw new E2eError(`the extension reported: ${errors.join(' | ')}`);
    await page.waitForTimeout(250);
  }
  throw new E2eError(
    `the timeline never showed ${snapshots} complete snapshot(s): last status ${JSON.stringify(last?.status)}${lastError ? `; ${String(lastError)}` : ''}`,
  );
}

/** Changes the lane grouping of the timeline page like a user: opens the dropdown and clicks the option. */
export async function groupLanesBy(frame: FrameLocator, grouping: 'cpu' | 'thread' | 'event'): Promise<void> {
  const label = { cpu: 'By CPU', thread: 'By thread', event: 'By event' }[grouping];
  const dropdown = frame.locator('#rs-grouping').first();
  await dropdown.click();
  await dropdown.locator('vscode-option', { hasText: label }).first().click();
  await frame.locator('.rs-lane-label').first().waitFor({ state: 'attached' });
}

/** The pids of running processes whose executable is `program` (a launched demo), read from /proc. */
export function pidsRunning(program: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/exe`) === program) pids.push(Number(name));
    } catch {
      // gone, or a kernel thread
    }
  }
  return pids;
}

/**
 * "Ringside: Start Recording…" (or "Start Kept Recording…") on the demo through its quick picks: the preselected
 * default event plus `tracepoints` ticked after typing each, target "Launch a program", the prefilled command line.
 */
export async function startRecordingDemo(page: Page, options: { tracepoints?: readonly string[]; kept?: boolean } = {}): Promise<void> {
  await runCommand(page, options.kept ? 'Ringside: Start Kept Recording…' : 'Ringside: Start Recording…');
  const events = await waitForQuickInput(page, 'Ringside: events to record');
  for (const tracepoint of options.tracepoints ?? []) {
    await events.locator('.quick-input-box input').first().fill(tracepoint);
    const row = events.locator('.quick-input-list .monaco-list-row', { hasText: tracepoint }).first();
    await row.waitFor({ state: 'visible' });
    await row.locator('input[type="checkbox"], .quick-input-list-checkbox, .monaco-custom-toggle').first().click();
  }
  await acceptQuickInput(page, 'Ringside: events to record');
  await answerQuickPick(page, 'Ringside: record what?', 'Launch', 'Launch a program');
  await acceptQuickInput(page, 'Ringside: program and arguments');
  await page.locator('.statusbar-item', { hasText: 'recording' }).first().waitFor({ state: 'visible' });
}

/**
 * Generated texts (decoration `before`/`after` content, which VS Code paints as CSS generated content) on one 1-based
 * line of the active editor: the view line at the same height as that line's number in the gutter.
 */
export async function textsPaintedOnLine(page: Page, line: number): Promise<string[]> {
  return page
    .locator('.editor-instance .monaco-editor')
    .first()
    .evaluate((editor: HTMLElement, wanted: number) => {
      const number = Array.from(editor.querySelectorAll<HTMLElement>('.margin-view-overlays .line-numbers')).find(
        (element) => element.textContent?.trim() === String(wanted),
      );
      if (!number) return [];
      const top = number.getBoundingClientRect().top;
      const view = Array.from(editor.querySelectorAll<HTMLElement>('.view-lines .view-line')).find(
        (element) => Math.abs(element.getBoundingClientRect().top - top) < 2,
      );
      if (!view) return [];
      const found: string[] = [];
      for (const span of Array.from(view.querySelectorAll<HTMLElement>('span'))) {
        for (const pseudo of ['::before', '::after']) {
          const content = getComputedStyle(span, pseudo).content;
          if (content && content !== 'none' && content !== 'normal') found.push(content.replace(/^"|"$/g, ''));
        }
      }
      return found;
    }, line);
}

/** The title of the question Record Hits on This Line asks first (extension/ui/line-probe-pick.ts): auto, hardware breakpoint or uprobe. */
export const LINE_PROBE_PICK = /count this line's hits with/;

/**
 * The gutter scenarios' start: in demo.c, right-click the line number of `line` → `item` ("Record Hits on This Line",
 * "Log Values at This Line"), answer how to count the line when `probe` is given (LINE_PROBE_PICK), pick "Launch a
 * program" and accept its prefilled command line; resolves with that command line once the session records.
 */
export async function armDemoLineFromGutter(page: Page, line: number, item: string, options: { probe?: string } = {}): Promise<string> {
  await openFile(page, 'demo.c');
  await lineNumberMenu(page, line, item);
  if (options.probe) await answerQuickPick(page, LINE_PROBE_PICK, options.probe);
  await answerQuickPick(page, 'Ringside: record what?', 'Launch', 'Launch a program');
  const commandLine = await acceptQuickInput(page, 'Ringside: program and arguments');
  await page.locator('.statusbar-item', { hasText: 'recording' }).first().waitFor({ state: 'visible' });
  return commandLine;
}

/**
 * Once the launched demo has run all its rounds (no process runs `program` any more), "Capture Snapshot" and the
 * timeline with its first capture. Ringside snapshots a launched program's rings before closing them, so every hit is in.
 */
export async function snapshotAfterDemoExits(page: Page, program: string): Promise<{ frame: FrameLocator; facts: TimelineFacts }> {
  for (const deadline = Date.now() + E2E_TIMEOUT_MS; pidsRunning(program).length > 0; await page.waitForTimeout(100)) {
    if (Date.now() > deadline) throw new E2eError(`the demo (${program}) still runs after ${E2E_TIMEOUT_MS} ms`);
  }
  await runCommand(page, 'Ringside: Capture Snapshot');
  return waitForTimeline(page, 1);
}

/** Back in demo.c: the texts painted on `line` once one of them includes `wanted` (all of them, whatever they are, at the timeout). */
export async function waitForTextOnDemoLine(page: Page, line: number, wanted: string): Promise<string[]> {
  await page.locator('.tabs-container .tab[aria-label^="demo.c"]').first().click();
  let texts: string[] = [];
  for (const deadline = Date.now() + E2E_TIMEOUT_MS; Date.now() < deadline; await page.waitForTimeout(250)) {
    texts = await textsPaintedOnLine(page, line);
    if (texts.some((text) => text.includes(wanted))) break;
  }
  return texts;
}

/** Hovers `word` on the demo.c line holding `lineText`; the hover's text (whitespace folded) once it shows `wanted`. */
export async function hoverOnDemoLine(page: Page, lineText: string, word: string, wanted: string): Promise<string> {
  await page.locator('.editor-instance .view-lines .view-line', { hasText: lineText }).first().locator('span', { hasText: word }).first().hover();
  const hover = page.locator('.monaco-hover', { hasText: wanted }).first();
  await hover.waitFor({ state: 'visible' });
  return (await hover.innerText()).replace(/\s+/g, ' ');
}
