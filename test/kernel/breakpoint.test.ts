// Hardware watchpoints through the Recorder on a launched fixture: armed before the command's
// first instruction, exactly one sample per write, and a small ring keeps only the newest.
import assert from 'node:assert/strict';
import { Recorder } from '../../native/perf/recorder';
import { assumeBreakpointDelivery } from '../../native/perf/breakpoint-delivery';
import { assertSilentBreakpoints, hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from '../host/breakpoints';
import { breakpointEvent, fixture, nmSymbol, samplesOf, walk, TEST_SAMPLE_SIZE, RecordType } from './helpers';

describe('kernel: hardware watchpoint flight recorder', function () {
  this.timeout(30000);
  const exe = fixture('kernel_writer');
  const counter = nmSymbol(exe, 'counter');
  const writer = nmSymbol(exe, 'writer');

  it('records exactly N writes of counter, from writer, with the child tid, newest first', async () => {
    const N = 300;
    const recorder = await Recorder.open({
      events: [breakpointEvent(counter.address, 8)],
      target: { kind: 'launch', argv: [exe, String(N)], stdio: 'ignore' },
      pages: 64,
    });
    try {
      assert.equal(await recorder.exited, 0);
      const snapshot = recorder.snapshot();
      const rings = snapshot.rings.filter((r) => r.direction === 'backward');
      assert.ok(rings.length >= 1);
      if (!hostBreakpoints().fire)
        return assertSilentBreakpoints(
          recorder.limitations,
          rings.reduce((sum, ring) => sum + samplesOf(ring).length, 0),
        );
      let total = 0;
      for (const ring of rings) {
        const all = walk(ring).records;
        const samples = samplesOf(ring);
        assert.equal(all.length, samples.length, `only samples expected, saw types ${[...new Set(all.map((r) => r.type))]}`);
        total += samples.length;
        for (const sample of samples) {
          assert.equal(sample.tid, recorder.childPid);
          assert.equal(sample.cpu, ring.cpu);
          assert.ok(sample.ip >= writer.address && sample.ip < writer.address + writer.size, `ip 0x${sample.ip.toString(16)} outside writer`);
          assert.ok(snapshot.events[0].ids.includes(sample.id));
        }
        for (let i = 1; i < samples.length; i++) assert.ok(samples[i - 1].time >= samples[i].time, 'backward copy is newest first');
        assert.equal(ring.bytesWritten, BigInt(samples.length * TEST_SAMPLE_SIZE));
        assert.equal(ring.validBytes, samples.length * TEST_SAMPLE_SIZE);
      }
      assert.equal(total, N);
      assert.equal(snapshot.events[0].ids.length, rings.length);
    } finally {
      recorder.dispose();
    }
  });

  it('with a 1-page ring and many writes keeps only the newest records and counts what was overwritten', async () => {
    const N = 20000;
    const recorder = await Recorder.open({
      events: [breakpointEvent(counter.address, 8)],
      target: { kind: 'launch', argv: [exe, String(N)], stdio: 'ignore' },
      pages: 1,
      sideband: false,
    });
    try {
      assert.equal(await recorder.exited, 0);
      const rings = recorder.snapshot().rings;
      const written = rings.reduce((sum, ring) => sum + ring.bytesWritten, 0n);
      if (!hostBreakpoints().fire) return assertSilentBreakpoints(recorder.limitations, Number(written));
      assert.equal(written, BigInt(N * TEST_SAMPLE_SIZE), 'every write produced one sample, written somewhere');
      const full = rings.filter((ring) => ring.bytesWritten > BigInt(ring.dataSize));
      assert.ok(full.length >= 1, 'at least one ring wrapped');
      for (const ring of full) {
        assert.equal(ring.validBytes, ring.dataSize);
        const { records, stoppedAt } = walk(ring);
        assert.ok(records.every((r) => r.type === RecordType.SAMPLE));
        assert.equal(records.length, Math.floor(ring.dataSize / TEST_SAMPLE_SIZE));
        // The oldest record is partly overwritten: the walk stops before the end of the data area.
        assert.equal(ring.dataSize - stoppedAt, ring.dataSize % TEST_SAMPLE_SIZE);
      }
    } finally {
      recorder.dispose();
    }
  });

  // Machines of this kind differ on delivery: the recorder's handling of the verdict this host does not give is run here
  // too, with that verdict assumed. The hardware stays as it is, so only what the recorder says is compared.
  it('says that breakpoints are silent exactly when the verdict is silent, on either kind of host', async () => {
    for (const verdict of [otherHostVerdict(), hostBreakpoints().fire ? ('fires' as const) : ('silent' as const)]) {
      const restore = assumeBreakpointDelivery(verdict);
      try {
        const recorder = await Recorder.open({
          events: [breakpointEvent(counter.address, 8)],
          target: { kind: 'launch', argv: [exe, '10'], stdio: 'ignore' },
          pages: 8,
        });
        try {
          assert.equal(await recorder.exited, 0);
          const said = recorder.limitations.filter((line) => SILENT_BREAKPOINTS.test(line));
          assert.equal(said.length, verdict === 'silent' ? 1 : 0, `${verdict}: ${recorder.limitations.join(' | ')}`);
          assert.equal(
            (recorder.snapshot().limitations ?? []).filter((line) => SILENT_BREAKPOINTS.test(line)).length,
            said.length,
            'and the snapshot carries it',
          );
        } finally {
          recorder.dispose();
        }
      } finally {
        restore();
      }
    }
  });
});
