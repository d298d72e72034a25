// Webview entry (bundled as an IIFE into dist/webview/timeline.js). Inside VS Code it talks to the
// host through acquireVsCodeApi(); a test page or the standalone export provides a stand-in with
// the same shape. Without either it still renders (empty) so the page never dies on load.

import { App, type VsCodeApi } from './app';

declare const acquireVsCodeApi: (() => VsCodeApi) | undefined;

function hostApi(): VsCodeApi {
  if (typeof acquireVsCodeApi === 'function') return acquireVsCodeApi();
  let state: unknown;
  return { postMessage: () => undefined, getState: () => state, setState: (s) => (state = s) };
}

function initialState(): unknown {
  const block = document.getElementById('ringside-initial-state');
  if (!block?.textContent) return undefined;
  try {
    return JSON.parse(block.textContent);
  } catch {
    /* no initial state, or one we cannot parse: the page starts empty */ return undefined;
  }
}

const api = hostApi();
const root = document.getElementById('ringside-root') ?? document.body;
const app = new App(root, api, initialState());
window.addEventListener('message', (event: MessageEvent) => app.receive(event.data));
window.addEventListener('error', (event) => {
  api.postMessage({ type: 'webviewError', message: String(event.message).slice(0, 2000) });
});
(window as unknown as { ringside?: App }).ringside = app;
app.start();
