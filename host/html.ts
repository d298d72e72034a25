// The HTML shell of the timeline panel inside VS Code. Pure string building (the host calls it
// with webview URIs); everything visible is built by the bundle with DOM APIs, never from HTML
// strings, so names from the system cannot inject markup.

export interface WebviewHtmlOptions {
  readonly scriptUri: string;
  readonly styleUri: string;
  /** `webview.cspSource` */
  readonly cspSource: string;
  /** A fresh random nonce per render (see makeNonce). */
  readonly nonce: string;
  /** Serialised into a JSON data block the page reads at start (e.g. a restored view state). */
  readonly initialState?: unknown;
  readonly title?: string;
}

/** Escape text for an HTML attribute value or text node. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside a <script> data block: no "</script", no HTML comment openers, no line separators. */
export function jsonForScript(value: unknown): string {
  // One pass: an export's data is tens of megabytes, and a pass per character copied it five times.
  return JSON.stringify(value ?? null).replace(/[<>&\u2028\u2029]/g, (c) => SCRIPT_SAFE[c]);
}

const SCRIPT_SAFE: Readonly<Record<string, string>> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** 32 random bytes as base64url, from the platform's crypto (node 20 and browsers both have it). */
export function makeNonce(): string {
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const NONCE_RE = /^[A-Za-z0-9+/_=-]{16,}$/;

/** A nonce goes into attributes and the policy unescaped by the browser: only long base64(url) text is accepted. */
export function assertNonce(nonce: string): void {
  if (!NONCE_RE.test(nonce)) throw new RangeError('nonce must be at least 16 base64 characters');
}

/**
 * The panel's policy. Styles: the stylesheet from cspSource, plus <style> elements carrying the
 * nonce: the webview-ui-toolkit (FAST) feature-tests `:focus-visible` by appending a <style>, and
 * it puts the nonce from `<meta property="csp-nonce">` on it (see cspNonceMeta). Inline style
 * attributes stay blocked (a nonce never allows them). Workers: see WORKER_SRC.
 */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return (
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src ${cspSource} 'nonce-${nonce}'; font-src ${cspSource}; img-src ${cspSource} data:; ` + WORKER_SRC
  );
}

/**
 * The call tree's aggregation worker starts from a Blob URL of its inlined bundle (webview/aggregation.ts): VS Code
 * cannot start a worker from a webview resource URL, and the offline export has none. Only blob: workers are allowed.
 */
export const WORKER_SRC = 'worker-src blob:';

/** Where FAST (fast-web-utilities getNonce) looks for the nonce of the <style> elements it creates. */
export function cspNonceMeta(nonce: string): string {
  return `<meta property="csp-nonce" content="${escapeHtml(nonce)}">`;
}

export function renderWebviewHtml(options: WebviewHtmlOptions): string {
  assertNonce(options.nonce);
  // VS Code's own value quotes a keyword (`'self' https://*.vscode-cdn.net`), so single quotes must pass; a `;` would
  // start a new directive and `"`/`<>` would leave the attribute.
  if (/[;"<>]/.test(options.cspSource)) throw new RangeError('cspSource must not contain ; double quotes or angle brackets');
  const csp = contentSecurityPolicy(options.cspSource, options.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
${cspNonceMeta(options.nonce)}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title ?? 'Ringside timeline')}</title>
<link rel="stylesheet" href="${escapeHtml(options.styleUri)}">
</head>
<body>
<div id="ringside-root"></div>
<script type="application/json" id="ringside-initial-state">${jsonForScript(options.initialState)}</script>
<script nonce="${escapeHtml(options.nonce)}" src="${escapeHtml(options.scriptUri)}"></script>
</body>
</html>
`;
}
