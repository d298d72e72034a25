// The bulk decoder on real rings: per-CPU flight-recorder rings and their side-band rings, decoded
// into columns from a ColumnArena (memory reused across snapshots) and checked against fresh
// columns and against the plain record-by-record path, row by row.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Recorder } from '../../native/perf/recorder';
import { ColumnArena } from '../../native/decode/arena';
import { decodeSnapshot } from '../../native/decode/columns';
import { columnByteDifferences, columnDifferences, recordByRecordMismatches } from '../../native/decode/test-records';
import { allocateDecodableCopy, hasRoom } from '../../native/decode/wasm/copy-room';
import { fixture, softwareEvent, tracepointEvent, SoftwareConfig } from './helpers';

describe('kernel: bulk decode of real rings', function () {
  this.timeout(60_000);

  it('decodes per-CPU rings and side-band into arena columns exactly as fresh columns and the record-by-record path', async () => {
    const recorder = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 100_000n, 'cpu-clock'), tracepointEvent('syscalls', 'sys_enter_getpid')],
      target: { kind: 'cpus' },
      pages: 64,
    });
    const arena = new ColumnArena();
    try {
      let previous: ReturnType<typeof decodeSnapshot> | undefined;
      let rows = 0;
      for (let round = 0; round < 3; round++) {
        assert.equal(spawnSync(fixture('kernel_busy'), ['60']).status, 0);
        assert.equal(spawnSync(fixture('kernel_getpid'), ['2000']).status, 0);
        const raw = recorder.snapshot();
        const fromArena = decodeSnapshot(raw, { arena });
        const fresh = decodeSnapshot(raw);
        assert.deepEqual(columnDifferences(fromArena.columns, fresh.columns), [], `round ${round}`);
        assert.deepEqual(recordByRecordMismatches(fromArena, 20), [], `round ${round}`);
        assert.ok(raw.rings.filter((r) => r.direction === 'backward').length >= 1);
        rows += fromArena.columns.length;
        // The previous snapshot's memory serves the next one (stale rows in it must not show).
        if (previous) assert.equal(arena.recycle(previous.columns), true);
        arena.warm();
        previous = fromArena;
      }
      assert.ok(rows > 2000, `${rows} rows decoded over three snapshots`);
    } finally {
      recorder.dispose();
    }
  });

  it("decodes one CPU's ring where the recorder copied it, with the WebAssembly loop, as the JavaScript loop does from a plain copy", async () => {
    const recorder = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 100_000n, 'cpu-clock'), tracepointEvent('syscalls', 'sys_enter_getpid')],
      target: { kind: 'cpus', cpus: [0] },
      pages: 64,
      allocateCopy: allocateDecodableCopy,
    });
    const arena = new ColumnArena();
    try {
      let inRoom = 0;
      let rows = 0;
      for (let round = 0; round < 3; round++) {
        await recorder.copyBuffersWarm();
        assert.equal(spawnSync('taskset', ['-c', '0', fixture('kernel_getpid'), '3000']).status, 0);
        const raw = recorder.snapshot();
        const flightRecorders = raw.rings.filter((r) => r.direction === 'backward');
        assert.ok(flightRecorders.length >= 1 && flightRecorders.every((r) => hasRoom(r.bytes)), 'every flight-recorder copy has a room');
        const plain = { ...raw, rings: raw.rings.map((r) => ({ ...r, bytes: r.bytes.slice() })) };
        const decoded = decodeSnapshot(raw, { arena });
        if (raw.rings.some((r) => r.bytes.buffer === decoded.columns.time.buffer)) inRoom++;
        assert.deepEqual(columnByteDifferences(decoded.columns, decodeSnapshot(plain).columns), [], `round ${round}`);
        assert.deepEqual(recordByRecordMismatches(decoded, 20), [], `round ${round}`);
        rows += decoded.columns.length;
        arena.recycle(decoded.columns);
      }
      assert.ok(rows > 3000, `${rows} rows decoded over three snapshots`);
      assert.equal(inRoom, 3, "every snapshot was decoded in its copy's room");
    } finally {
      recorder.dispose();
    }
  });
});
