import assert from 'node:assert/strict';
import { decodeSnapshot } from '../../native/decode/columns';
import type { EventDescription, RingCopy } from '../../native/abi/snapshot';
import { PerfType, RecordType, Sample, SoftwareConfig } from '../../native/abi/uapi';
import type { HostToWebview, RecordBatch } from '../../shared/protocol';
import { batchesToColumns } from '../../shared/batches';
import { SnapshotStreamer } from './streamer';
import { FrameSymbols } from '../../host/frame-symbols';

/** A forward ring of `count` SAMPLE records (ip, tid, time) with increasing times. */
function syntheticSnapshot(count: number) {
  const event: EventDescription = {
    index: 0,
    name: 'cpu-clock',
    ids: [],
    attr: {
      type: PerfType.SOFTWARE,
      config: BigInt(SoftwareConfig.CPU_CLOCK),
      samplePeriod: 1n,
      sampleType: Sample.IP | Sample.TID | Sample.TIME,
      readFormat: 0,
      flags: {},
    },
  };
  const size = 8 + 8 + 8 + 8;
  const bytes = new Uint8Array(size * count);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < count; i++) {
    const at = i * size;
    view.setUint32(at, RecordType.SAMPLE, true);
    view.setUint16(at + 4, 2, true);
    view.setUint16(at + 6, size, true);
    view.setBigUint64(at + 8, 0x401000n + BigInt(i), true);
    view.setUint32(at + 16, 100, true);
    view.setUint32(at + 20, 100 + (i % 3), true);
    view.setBigUint64(at + 24, 1_000_000n + BigInt(i) * 1000n, true);
  }
  const ring: RingCopy = {
    ringId: 0,
    label: 'cpu0',
    cpu: 0,
    tid: -1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: bytes.length,
    dataSize: bytes.length,
    bytesWritten: BigInt(bytes.length),
    path: 'paused',
  };
  return decodeSnapshot({ events: [event], rings: [ring], takenAtMs: 0, pauseWindowNs: [0] });
}

describe('extension: timeline panel flow control', () => {
  it('sends a start then at most `window` unacknowledged batches, and the page reassembles the exact columns', () => {
    const decoded = syntheticSnapshot(1000);
    assert.equal(decoded.columns.length, 1000);
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((message) => sent.push(message), 2, 100);
    streamer.add('a', 'first', 1, decoded);
    assert.equal(sent.length, 0, 'nothing before ready');
    streamer.onReady();
    assert.deepEqual(
      sent.map((m) => m.type),
      ['snapshotStart', 'batch', 'batch'],
    );
    const batches: RecordBatch[] = [];
    while (!streamer.idle) {
      const batch = sent.find((m) => m.type === 'batch' && !batches.includes(m as RecordBatch));
      assert.ok(batch && batch.type === 'batch');
      batches.push(batch);
      const outstanding = sent.filter((m) => m.type === 'batch').length - batches.length;
      assert.ok(outstanding <= 2, `outstanding ${outstanding}`);
      streamer.onAck('a', batch.batchIndex);
    }
    assert.equal(batches.length, 10);
    const { columns } = batchesToColumns(batches, decoded.columns.timeOriginNs);
    assert.deepEqual(Array.from(columns.ipLo), Array.from(decoded.columns.ipLo));
    assert.deepEqual(Array.from(columns.tid), Array.from(decoded.columns.tid));
  });

  it('sends nothing while hidden and resumes from the rows the page reports on resync', () => {
    const decoded = syntheticSnapshot(500);
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((message) => sent.push(message), 1, 100);
    streamer.onReady();
    streamer.setVisible(false);
    streamer.add('b', 'hidden', 1, decoded);
    assert.equal(sent.length, 0, 'hidden: nothing sent');
    streamer.setVisible(true);
    streamer.onResync([
      { snapshotId: 'b', rows: 250 },
      { snapshotId: 'gone', rows: 3 },
    ]);
    const types = sent.map((m) => m.type);
    assert.deepEqual(types, ['removeSnapshot', 'batch'], 'the page knows b already: no new start; continues at the batch holding row 250');
    const first = sent[1];
    assert.ok(first.type === 'batch' && first.firstRow === 200);
  });

  it('sends nothing to a page shown again until it says ready, then each batch once', () => {
    const decoded = syntheticSnapshot(500);
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((message) => sent.push(message), 8, 100);
    streamer.onReady();
    streamer.setVisible(false);
    // Shown again by Capture Snapshot, whose capture comes while the panel's new page is still loading.
    streamer.setVisible(true);
    streamer.add('c', 'after showing', 1, decoded);
    assert.equal(sent.length, 0, 'nothing before the new page is ready');
    streamer.onReady();
    const batches = sent.filter((m) => m.type === 'batch');
    assert.deepEqual(
      batches.map((m) => (m.type === 'batch' ? m.firstRow : -1)),
      [0, 100, 200, 300, 400],
      'every batch once, in order',
    );
  });

  it('sends the records at once and the names after the last batch, named once the page painted them (in steps)', async () => {
    const decoded = syntheticSnapshot(1000);
    const sent: HostToWebview[] = [];
    const asked: bigint[] = [];
    const symbols = new FrameSymbols((_pid, ip) => {
      asked.push(ip);
      return `f${ip - 0x401000n}`;
    });
    const streamer = new SnapshotStreamer((message) => sent.push(message), 2, 100);
    streamer.onReady();
    const { named } = streamer.add('n', 'named', 1, decoded, symbols);
    assert.deepEqual(
      sent.map((m) => m.type),
      ['snapshotStart', 'batch', 'batch'],
      'the records go before anything is named',
    );
    assert.equal(asked.length, 0, 'nothing named before the first batches went');
    const start = sent[0];
    assert.ok(start.type === 'snapshotStart' && start.namesFollow === true && start.stacks === undefined);
    assert.ok(sent.every((m) => m.type !== 'batch' || (m.symbolIndex === undefined && m.stackIndex === undefined)));
    // Acknowledged as they come, as the page does.
    for (let k = 0; k < sent.length; k++) {
      const m = sent[k];
      if (m.type === 'batch') streamer.onAck('n', m.batchIndex);
    }
    // Naming starts once the page painted the records.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(asked.length, 0, 'nothing named before the page painted');
    streamer.onPainted('n');
    const names = await named;
    assert.ok(names !== null && names.symbolizeMs >= 0);
    assert.equal(asked.length, 1000, 'each distinct address once');
    const types = sent.map((m) => m.type);
    assert.equal(types.filter((t) => t === 'batch').length, 10);
    assert.equal(types[types.length - 1], 'snapshotSymbols', `the names after the last batch: ${types.join(' ')}`);
    const message = sent[sent.length - 1];
    assert.ok(message.type === 'snapshotSymbols');
    assert.equal(message.symbolIndex.byteLength, 1000 * 4);
    assert.equal(message.symbolTable[new Int32Array(message.symbolIndex)[7]], 'f7');
    assert.ok(streamer.idle);
  });

  it('a file being opened grows by parts, one unacknowledged at a time, sent again to a new page; its snapshot then adds only what the page lacks', () => {
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((message) => sent.push(message), 2, 100);
    const types = () =>
      sent.splice(0).map((m) => (m.type === 'liveAppend' ? `part ${m.seq} from ${m.batch.firstRow}${m.opening ? '' : ' (not opening)'}` : m.type));
    streamer.onReady();
    streamer.grow('f', 'all.data', syntheticSnapshot(100));
    streamer.grow('f', 'all.data', syntheticSnapshot(100));
    assert.deepEqual(types(), ['part 0 from 0'], 'the second waits for the page to hold the first');
    assert.ok(streamer.growing('f') && !streamer.idle);
    streamer.onLiveAck('f', 0);
    assert.deepEqual(types(), ['part 1 from 100']);
    // The page reloads: its new page holds none of it.
    streamer.setVisible(false);
    streamer.setVisible(true);
    streamer.onReady();
    assert.deepEqual(types(), ['part 0 from 0']);
    streamer.onLiveAck('f', 0);
    streamer.onLiveAck('f', 1);
    assert.deepEqual(types(), ['part 1 from 100']);
    streamer.onLiveAck('f', 1);
    streamer.grow('f', 'all.data', syntheticSnapshot(100));
    assert.deepEqual(types(), ['part 2 from 200']);
    // The whole file is read before the page holds its last part: its snapshot has the parts' rows.
    streamer.add('f', 'all.data', 1, syntheticSnapshot(300));
    assert.ok(!streamer.growing('f'));
    assert.deepEqual(types(), [], 'its records are on their way already');
    assert.ok(!streamer.idle);
    streamer.onLiveAck('f', 2);
    assert.deepEqual(types(), [], 'the page holds every row: nothing more (no names without symbols)');
    assert.ok(streamer.idle);
    // A page that lost it (reloaded after the file was read) gets the snapshot whole.
    streamer.onReady();
    assert.deepEqual(types(), ['snapshotStart', 'batch', 'batch']);
  });

  it('a file being opened goes on, after a resync, from the first part the page does not hold', () => {
    const sent: HostToWebview[] = [];
    const streamer = new SnapshotStreamer((message) => sent.push(message), 2, 100);
    const parts = () => sent.splice(0).map((m) => (m.type === 'liveAppend' ? m.batch.firstRow : m.type));
    streamer.onReady();
    for (let k = 0; k < 3; k++) streamer.grow('f', 'all.data', syntheticSnapshot(100));
    streamer.onLiveAck('f', 0);
    streamer.onLiveAck('f', 1);
    assert.deepEqual(parts(), [0, 100, 200]);
    // Hidden while part 2 was on its way (dropped), shown again: the page that lived on holds 200 rows.
    streamer.setVisible(false);
    streamer.setVisible(true);
    streamer.onResync([{ snapshotId: 'f', rows: 200 }]);
    assert.deepEqual(parts(), [200]);
    streamer.add('f', 'all.data', 1, syntheticSnapshot(300));
    streamer.onLiveAck('f', 2);
    assert.deepEqual(parts(), []);
    assert.ok(streamer.idle);
  });

  it('stops naming a snapshot removed before its names are known', async () => {
    const decoded = syntheticSnapshot(20_000);
    const sent: HostToWebview[] = [];
    let asked = 0;
    const streamer = new SnapshotStreamer((message) => sent.push(message), 2);
    streamer.onReady();
    const { named } = streamer.add('r', 'removed', 1, decoded, new FrameSymbols(() => (asked++, 'f')));
    streamer.remove('r');
    assert.equal(await named, null);
    assert.equal(asked, 0);
    assert.ok(!sent.some((m) => m.type === 'snapshotSymbols'));
  });
});
