// A self-contained HTML export of snapshots: the same webview bundle inlined (nonce'd script),
// the records embedded as base64 columnar batches, and a stand-in for acquireVsCodeApi that plays
// the host: it answers `ready`, streams the batches with the same ack flow control, and answers
// detail requests from embedded details when the export has them (each distinct callchain embedded once, as a
// stack table, and put back into a record's details on request) (and field-filter requests too,
// when every row's details are embedded; else it says the filter needs the live panel). Opens
// offline in any browser.
// Pure string building, no node imports (the CLI and the extension both call it).

import type { RecordBatch, RecordDetails, SnapshotStart, ThreadStates, WatchBudget, WatchInfo } from '../shared/protocol';
import { THREAD_STATE_COLUMN_NAMES } from '../shared/thread-states';
import { COLUMN_NAMES } from '../shared/columns';
import { CallchainEmbedder, type EmbeddedCallchains } from './embedded-callchains';
import { assertNonce, cspNonceMeta, escapeHtml, jsonForScript, makeNonce, WORKER_SRC } from './html';

export type { EmbeddedCallchains } from './embedded-callchains';

export interface StandaloneSnapshot {
  readonly start: SnapshotStart;
  /** Its thread states (sent right after the start), when it recorded sched_switch. */
  readonly threadStates?: ThreadStates;
  readonly batches: readonly RecordBatch[];
  /** Details by snapshot row, for the details pane (optional: without them the pane shows columns only). */
  readonly details?: Readonly<Record<number, RecordDetails>>;
  /** The details' callchains as tables, when the details were built without them (CallchainEmbedder). */
  readonly callchains?: EmbeddedCallchains;
}

export interface StandaloneData {
  readonly title?: string;
  readonly snapshots: readonly StandaloneSnapshot[];
  readonly watches?: { readonly watches: readonly WatchInfo[]; readonly budget: WatchBudget };
  readonly initialState?: unknown;
}

export interface StandaloneOptions {
  /** The built webview bundle (dist/webview/timeline.js). */
  readonly script: string;
  /** The built stylesheet (dist/webview/timeline.css). */
  readonly css: string;
  readonly data: StandaloneData;
  readonly nonce?: string;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function base64Encode(buffer: ArrayBuffer): string {
  const bytes = new Uint8Array(buffer);
  const parts: string[] = [];
  let chunk = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    chunk += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
    if (chunk.length >= 65536) {
      parts.push(chunk);
      chunk = '';
    }
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    chunk += B64[n >> 18] + B64[(n >> 12) & 63] + '==';
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    chunk += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + '=';
  }
  parts.push(chunk);
  return parts.join('');
}

export function base64Decode(text: string): ArrayBuffer {
  const clean = text.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (let i = 0; i < clean.length; i++) {
    const d = B64.indexOf(clean[i]);
    if (d < 0) throw new RangeError(`invalid base64 character at ${i}`);
    value = (value << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 255;
    }
  }
  return out.buffer.slice(0, o);
}

function encodeBatch(batch: RecordBatch): unknown {
  const columns: Record<string, string> = {};
  for (const name of COLUMN_NAMES) columns[name] = base64Encode(batch.columns[name]);
  return {
    ...batch,
    columns,
    ...(batch.symbolIndex ? { symbolIndex: base64Encode(batch.symbolIndex) } : {}),
    ...(batch.stackIndex ? { stackIndex: base64Encode(batch.stackIndex) } : {}),
  };
}

/** The details without their callchains, and the callchains as tables (see EmbeddedCallchains). */
export function embedCallchains(details: Readonly<Record<number, RecordDetails>>): { details: Record<number, RecordDetails>; callchains: EmbeddedCallchains } {
  const embedder = new CallchainEmbedder();
  const rest: Record<number, RecordDetails> = {};
  for (const key of Object.keys(details)) {
    const row = Number(key);
    const { callchain, symbols, ...others } = details[row];
    rest[row] = others;
    if (callchain === undefined) continue;
    embedder.addChain(
      row,
      callchain.map((entry) => embedder.frameOfEntry(entry, symbols ?? [])),
    );
  }
  return { details: rest, callchains: embedder.callchains };
}

function encodeThreadStates(states: ThreadStates): unknown {
  const columns: Record<string, string> = {};
  for (const name of THREAD_STATE_COLUMN_NAMES) columns[name] = base64Encode(states.columns[name]);
  return { ...states, columns };
}

/** Plays the extension host inside the exported page. Kept as plain ES2020 source text. */
const STAND_IN = String.raw`(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ringside-standalone-data').textContent);
  var columnNames = ${JSON.stringify(COLUMN_NAMES)};
  var stateColumnNames = ${JSON.stringify(THREAD_STATE_COLUMN_NAMES)};
  function decode(b64) {
    var s = atob(b64), bytes = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
    return bytes.buffer;
  }
  function send(message) {
    setTimeout(function () { window.dispatchEvent(new MessageEvent('message', { data: message })); }, 0);
  }
  function batchMessage(s, b) {
    var raw = data.snapshots[s].batches[b], columns = {};
    columnNames.forEach(function (n) { columns[n] = decode(raw.columns[n]); });
    var m = Object.assign({}, raw, { columns: columns });
    if (raw.symbolIndex) m.symbolIndex = decode(raw.symbolIndex);
    if (raw.stackIndex) m.stackIndex = decode(raw.stackIndex);
    return m;
  }
  var state = data.initialState || undefined;
  function integer(text) {
    var t = String(text).trim();
    if (/^-?\d+$/.test(t) || /^0x[0-9a-f]+$/i.test(t)) return BigInt(t);
    return null;
  }
  /* The same comparison as rowsMatchingField (wire.ts), over the details' JSON (bigints are decimal strings, ip/addr hex). */
  function fieldMatches(v, op, value) {
    if (v === undefined || v === null) return false;
    if (op === '~') return (typeof v === 'string' ? v : JSON.stringify(v)).toLowerCase().indexOf(value.toLowerCase()) >= 0;
    var want = integer(value);
    var have = typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'string' ? integer(v) : null;
    if (want !== null && have !== null) return want === have;
    return typeof v === 'string' ? v === value : JSON.stringify(v) === value;
  }
  function fieldFilter(m) {
    var snap = null;
    data.snapshots.forEach(function (x) { if (x.start.snapshotId === m.snapshotId) snap = x; });
    var total = snap ? snap.start.totalRows : 0;
    if (!snap || !snap.details || Object.keys(snap.details).length < total) {
      send({ type: 'fieldFilterReply', replyTo: m.requestId, snapshotId: m.snapshotId, error: { code: 'ENEEDSLIVE',
        message: 'filtering by field value needs the live panel: this export does not embed every record\'s details',
        hint: 'Open the capture in VS Code, or filter by event, pid, tid, comm or sym.' } });
      return;
    }
    var rows = [];
    for (var r = 0; r < total; r++) {
      var d = snap.details[r];
      if (!d || d.type !== 'SAMPLE') continue;
      var v = d.tracepointFields && Object.prototype.hasOwnProperty.call(d.tracepointFields, m.name) ? d.tracepointFields[m.name]
        : Object.prototype.hasOwnProperty.call(d.fields, m.name) ? d.fields[m.name] : undefined;
      if (fieldMatches(v, m.op, m.value)) rows.push(r);
    }
    send({ type: 'fieldFilterReply', replyTo: m.requestId, snapshotId: m.snapshotId, rows: new Uint32Array(rows).buffer });
  }
  /* A row's details as embedded, with its callchain and the names it refers to put back from the stack table
     (embedCallchains, standalone.ts): leaf first, names numbered in the order the chain first shows them. */
  function detailsOf(snap, row) {
    var rest = snap.details[row], cc = snap.callchains;
    var stack = cc && Object.prototype.hasOwnProperty.call(cc.rowStack, row) ? cc.rowStack[row] : undefined;
    if (stack === undefined) return rest;
    var chain = [], symbols = [], local = new Map();
    for (var s = stack; s >= 0; s = cc.stackPrefix[s]) {
      var f = cc.stackFrame[s], entry = { ip: cc.ip[f] }, name = cc.name[f];
      if (name >= 0) {
        var at = local.get(name);
        if (at === undefined) { at = symbols.length; symbols.push(cc.names[name]); local.set(name, at); }
        entry.symbol = at;
      }
      if (cc.kernel[f]) entry.kernel = true;
      if (cc.file[f] >= 0) { entry.file = cc.files[cc.file[f]]; entry.line = cc.line[f]; }
      chain.push(entry);
    }
    /* The details' own key order: the callchain and its names come before the source line. */
    var out = {}, placed = false;
    Object.keys(rest).forEach(function (key) {
      if (key === 'source' && !placed) { out.callchain = chain; out.symbols = symbols; placed = true; }
      out[key] = rest[key];
    });
    if (!placed) { out.callchain = chain; out.symbols = symbols; }
    return out;
  }
  function startSnapshot(s) {
    if (s >= data.snapshots.length) return;
    send(data.snapshots[s].start);
    var states = data.snapshots[s].threadStates;
    if (states) {
      var stateColumns = {};
      stateColumnNames.forEach(function (n) { stateColumns[n] = decode(states.columns[n]); });
      send(Object.assign({}, states, { columns: stateColumns }));
    }
    if (data.snapshots[s].batches.length > 0) send(batchMessage(s, 0)); else startSnapshot(s + 1);
  }
  function error(replyTo, type, code, message) {
    const hint = 'This is an offline export; open the capture in VS Code to change breakpoints.';
    send({ type: type, replyTo: replyTo, ok: false, error: { code: code, message: message, hint: hint } });
  }
  window.acquireVsCodeApi = function () {
    return {
      getState: function () { return state; },
      setState: function (s) { state = s; return s; },
      postMessage: function (m) {
        if (!m || typeof m !== 'object') return;
        switch (m.type) {
          case 'ready':
            send({ type: 'init', protocolVersion: m.protocolVersion, title: data.title || 'Ringside export' });
            if (data.watches) send({ type: 'watchList', watches: data.watches.watches, budget: data.watches.budget });
            startSnapshot(0);
            break;
          case 'batchAck':
            for (var s = 0; s < data.snapshots.length; s++) {
              if (data.snapshots[s].start.snapshotId !== m.snapshotId) continue;
              if (m.batchIndex + 1 < data.snapshots[s].batches.length) send(batchMessage(s, m.batchIndex + 1));
              else startSnapshot(s + 1);
            }
            break;
          case 'detailsRequest':
            var found = null;
            data.snapshots.forEach(function (snap) {
              if (snap.start.snapshotId === m.snapshotId && snap.details && snap.details[m.row]) found = detailsOf(snap, m.row);
            });
            if (found) send({ type: 'detailsReply', replyTo: m.requestId, snapshotId: m.snapshotId, row: m.row, details: found });
            else send({ type: 'detailsReply', replyTo: m.requestId, snapshotId: m.snapshotId, row: m.row,
              error: { code: 'ENODETAILS', message: 'Full record details were not embedded in this export.' } });
            break;
          case 'fieldFilterRequest': fieldFilter(m); break;
          case 'watchRequest': error(m.requestId, 'watchReply', 'EREADONLY', 'Breakpoints cannot be changed in an exported page.'); break;
          case 'revealRequest': error(m.requestId, 'revealReply', 'EREADONLY', 'There is no editor to reveal ' + m.file + ':' + m.line + ' in.'); break;
          case 'liveFollow': if (m.on) send({ type: 'liveState', state: 'unavailable', detail: 'an exported page has no recording to follow' }); break;
        }
      }
    };
  };
})();`;

/** Inline script text safely: "</script" would end the element early. */
function inlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** Default (dark) --vscode-* values: outside VS Code nobody defines them. */
export const DEFAULT_THEME_CSS = `:root{--vscode-font-family:system-ui,sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;
--vscode-foreground:#cccccc;--vscode-editor-background:#1e1e1e;--vscode-sideBar-background:#252526;--vscode-panel-border:#3c3c3c;
--vscode-focusBorder:#007fd4;--vscode-descriptionForeground:#9d9d9d;--vscode-errorForeground:#f48771;--vscode-charts-blue:#3794ff;
--vscode-charts-red:#f14c4c;--vscode-charts-green:#89d185;--vscode-charts-yellow:#cca700;--vscode-charts-orange:#d18616;
--vscode-charts-purple:#b180d7;--vscode-charts-foreground:#cccccc;--vscode-charts-lines:#80808059;--vscode-editorHoverWidget-background:#252526;
--vscode-editorHoverWidget-border:#454545;--vscode-list-hoverBackground:#2a2d2e;--vscode-list-activeSelectionBackground:#04395e;
--vscode-textLink-foreground:#3794ff;--vscode-input-background:#3c3c3c;--vscode-input-foreground:#cccccc;--vscode-button-background:#0e639c;
--vscode-button-foreground:#ffffff;--vscode-editorWarning-foreground:#cca700}`;

export function renderStandaloneHtml(options: StandaloneOptions): string {
  const nonce = options.nonce ?? makeNonce();
  assertNonce(nonce);
  const embedded = {
    title: options.data.title,
    watches: options.data.watches,
    initialState: options.data.initialState,
    snapshots: options.data.snapshots.map((s) => ({
      start: s.start,
      ...(s.threadStates ? { threadStates: encodeThreadStates(s.threadStates) } : {}),
      batches: s.batches.map(encodeBatch),
      ...(s.details ? (s.callchains ? { details: s.details, callchains: s.callchains } : embedCallchains(s.details)) : {}),
    })),
  };
  // Everything is inline, so both scripts and styles go by the nonce ('unsafe-inline' would also
  // allow injected style attributes); the toolkit reads it from the csp-nonce meta for its probe.
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; ${WORKER_SRC}`;
  const title = options.data.title ?? 'Ringside export';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
${cspNonceMeta(nonce)}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${DEFAULT_THEME_CSS}
${options.css.replace(/<\/(style)/gi, '<\\/$1')}</style>
</head>
<body class="vscode-dark ringside-standalone">
<div id="ringside-root"></div>
<script type="application/json" id="ringside-initial-state">null</script>
<script type="application/json" id="ringside-standalone-data">${jsonForScript(embedded)}</script>
<script nonce="${nonce}">${inlineScript(STAND_IN)}</script>
<script nonce="${nonce}">${inlineScript(options.script)}</script>
</body>
</html>
`;
}
