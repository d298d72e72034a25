// The webview side of the transport case, in a worker thread. Mode 'move': every message is
// validated (as App.receive does first) and the batch buffers are held: the records have arrived.
// Mode 'store': each batch is also appended to the webview's real RecordStore, as App does next.

import { parentPort } from 'node:worker_threads';
import { validateHostToWebview } from '../shared/validate';
import { RecordStore } from '../webview/store';

if (!parentPort) throw new Error('transport-worker must run as a worker thread');
const port = parentPort;
let store = new RecordStore();
let mode: 'move' | 'store' = 'move';
let expected = 0;
let received = 0;
let rows = 0;
let held: unknown[] = [];

port.on('message', (data: unknown) => {
  if (data === 'move' || data === 'store') {
    store = new RecordStore();
    mode = data;
    held = [];
    port.postMessage({ type: 'reset' });
    return;
  }
  const checked = validateHostToWebview(data);
  if (!checked.ok) {
    port.postMessage({ type: 'error', reason: checked.reason });
    return;
  }
  const message = checked.message;
  if (message.type === 'snapshotStart') {
    if (mode === 'store') store.beginSnapshot(message);
    expected = message.batchCount;
    received = 0;
    rows = 0;
  } else if (message.type === 'batch') {
    if (mode === 'store') store.addBatch(message);
    else held.push(message);
    rows += message.rowCount;
    if (++received === expected) port.postMessage({ type: 'done', rows: mode === 'store' ? store.length : rows });
  }
});
