// The webview side of the transport case, in a worker thread, doing what App.receive does with a snapshot's messages:
// every message validated, the snapshot begun in the webview's real RecordStore, its thread states added, each batch
// appended and acknowledged (the host's streamer sends the next one on the acknowledgement). 'reset' starts an empty
// store; 'done' says every announced row is held.

import { parentPort } from 'node:worker_threads';
import { validateHostToWebview } from '../shared/validate';
import { RecordStore } from '../webview/store';

if (!parentPort) throw new Error('transport-worker must run as a worker thread');
const port = parentPort;
let store = new RecordStore();

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
  try {
    if (message.type === 'snapshotStart') store.beginSnapshot(message);
    else if (message.type === 'threadStates') store.addThreadStates(message);
    else if (message.type === 'batch') {
      const snapshot = store.addBatch(message);
      port.postMessage({ type: 'batchAck', snapshotId: message.snapshotId, batchIndex: message.batchIndex });
      if (store.isComplete(snapshot)) port.postMessage({ type: 'done', rows: store.length });
    }
  } catch (error) {
    port.postMessage({ type: 'error', reason: (error as Error).message });
  }
});
