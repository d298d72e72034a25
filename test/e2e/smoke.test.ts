// The extension from this repository, packaged as a .vsix and installed into a real code-server, opens its timeline
// panel from the command palette. Proves install, activation, command registration and the webview round trip.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { E2E_TIMEOUT_MS, notificationTexts, scenarioLifecycle, runCommand, webviewFrame } from './harness';

describe('e2e: Ringside in code-server (smoke)', function () {
  this.timeout(4 * E2E_TIMEOUT_MS);
  const lifecycle = scenarioLifecycle();

  it('"Ringside: Show Timeline" from the palette opens the timeline webview', async () => {
    const scenario = await lifecycle.open('smoke');
    const { page } = scenario;
    console.log(`      code-server answered /healthz ${scenario.serverStartMs} ms after spawn`);
    await scenario.screenshot('workbench-with-demo');

    await runCommand(page, 'Ringside: Show Timeline');
    const frame = await webviewFrame(page);
    // The panel is the extension's own page: it must render something, not an empty document.
    await frame.locator('body *').first().waitFor({ state: 'visible', timeout: E2E_TIMEOUT_MS });
    const tab = page.locator('.tabs-container .tab', { hasText: /Ringside|Timeline/ }).first();
    await tab.waitFor({ state: 'visible', timeout: E2E_TIMEOUT_MS });
    const screenshot = await scenario.screenshot('timeline-panel');
    assert.ok(existsSync(screenshot));

    const errors = (await notificationTexts(page)).filter((text) => /error|failed|cannot|not found/i.test(text));
    assert.deepEqual(errors, [], `the extension reported errors: ${errors.join(' | ')}`);
  });
});
