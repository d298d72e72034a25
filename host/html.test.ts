import * as assert from 'node:assert/strict';
import { makeNonce, renderWebviewHtml } from './html';
import { base64Decode, base64Encode, renderStandaloneHtml } from './standalone';
import { columnsToBatches } from '../shared/batches';
import type { SnapshotStart } from '../shared/protocol';

describe('webview HTML', () => {
  it('renders a CSP with the nonce, cspSource and no inline script other than data', () => {
    const nonce = makeNonce();
    assert.match(nonce, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(nonce, makeNonce());
    const html = renderWebviewHtml({
      scriptUri: 'https://x/timeline.js',
      styleUri: 'https://x/timeline.css',
      cspSource: 'https://x',
      nonce,
      initialState: { filter: '</script><script>alert(1)</script>' },
    });
    // Attribute-escaped quotes: the browser decodes &#39; back to ' when it reads the policy.
    assert.ok(
      html.includes(
        `content="default-src &#39;none&#39;; script-src &#39;nonce-${nonce}&#39;; style-src https://x &#39;nonce-${nonce}&#39;; font-src https://x; img-src https://x data:; worker-src blob:"`,
      ),
    );
    // The toolkit (FAST) reads the nonce for its <style> probe from this meta, which must come before the bundle.
    assert.ok(html.indexOf(`<meta property="csp-nonce" content="${nonce}">`) > 0);
    assert.ok(html.indexOf('csp-nonce') < html.indexOf('<script nonce'));
    assert.ok(html.includes(`<script nonce="${nonce}" src="https://x/timeline.js"></script>`));
    assert.ok(!html.includes('</script><script>alert'), 'state cannot close the data block');
    assert.ok(html.includes('\\u003c/script\\u003e'));
    assert.throws(() => renderWebviewHtml({ scriptUri: 'a', styleUri: 'b', cspSource: "x; script-src 'unsafe-inline'", nonce }), /cspSource/);
    // What webview.cspSource really is in VS Code 1.100 (desktop and code-server).
    assert.match(
      renderWebviewHtml({ scriptUri: 'a', styleUri: 'b', cspSource: "'self' https://*.vscode-cdn.net", nonce }),
      /style-src &#39;self&#39; https:\/\/\*\.vscode-cdn\.net &#39;nonce-/,
    );
    assert.throws(() => renderWebviewHtml({ scriptUri: 'a', styleUri: 'b', cspSource: 'x', nonce: 'short' }), /nonce/);
  });

  it('base64 round-trips every length', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 255);
      const text = base64Encode(bytes.buffer);
      assert.equal(text, Buffer.from(bytes).toString('base64'));
      assert.deepEqual(new Uint8Array(base64Decode(text)), bytes);
    }
  });

  it('renders a standalone page with the bundle, data and stand-in inlined under a nonce', () => {
    const start: SnapshotStart = {
      type: 'snapshotStart',
      snapshotId: 's',
      name: 'n',
      timeOriginNs: '0',
      totalRows: 0,
      batchCount: 1,
      takenAtMs: 0,
      events: [],
      threads: [{ pid: 1, tid: 1, comm: '</script><img src=x onerror=alert(1)>' }],
      coverage: [],
    };
    const cols = {
      length: 0,
      timeOriginNs: 0n,
      time: new Float64Array(0),
      kind: new Uint8Array(0),
      misc: new Uint16Array(0),
      event: new Uint16Array(0),
      pid: new Int32Array(0),
      tid: new Int32Array(0),
      cpu: new Int32Array(0),
      ipHi: new Uint32Array(0),
      ipLo: new Uint32Array(0),
      ring: new Uint16Array(0),
      offset: new Uint32Array(0),
    };
    const html = renderStandaloneHtml({
      script: 'var s = "</script>";',
      css: 'body{}',
      nonce: 'abcdefghijklmnopqrstuvwxyz012345',
      data: { snapshots: [{ start, batches: columnsToBatches(cols, { snapshotId: 's' }) }] },
    });
    assert.equal(html.match(/<script nonce="abcdefghijklmnopqrstuvwxyz012345">/g)?.length, 2);
    assert.ok(html.includes('var s = "<\\/script>";'));
    assert.ok(!html.includes('</script><img'));
    assert.ok(
      html.includes('script-src &#39;nonce-abcdefghijklmnopqrstuvwxyz012345&#39;; style-src &#39;nonce-abcdefghijklmnopqrstuvwxyz012345&#39;; img-src data:'),
    );
    assert.ok(!html.includes('unsafe-inline'));
    assert.ok(html.includes('<style nonce="abcdefghijklmnopqrstuvwxyz012345">'));
    assert.ok(html.includes('<meta property="csp-nonce" content="abcdefghijklmnopqrstuvwxyz012345">'));
    assert.throws(() => renderStandaloneHtml({ script: '', css: '', nonce: '"><script>', data: { snapshots: [] } }), /nonce/);
    assert.ok(html.includes('--vscode-charts-blue'), 'defines the theme variables VS Code would');
  });
});
