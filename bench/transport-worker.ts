// The webview side of the transport case, in a worker thread: every message is validated and
// appended to the webview's real RecordStore, as App.receive does before it renders.

import { parentPort } from 'node:worker_threads';
import { validateHostToWebview } from '../webview/protocol';
import { RecordStore } from '../webview/store';

if (!parentPort) throw new Error('transport-worker must run as a worker thread');
const port = parentPort;
let store = new RecordStore();
let expected = 0;
let received = 0;

port.on('message', (data: unknown) => {
  if (data === 'reset') {
    store = new RecordStore();
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
    store.beginSnapshot(message);
    expected = message.batchCount;
    received = 0;
  } else if (message.type === 'batch') {
    store.addBatch(message);
    if (++received === expected) port.postMessage({ type: 'done', rows: store.length });
  }
});
