// Recorder lifecycle: ASLR-free launches whose load address is verified, ring statistics, clean
// disposal (no perf fd or mapping left, 200 times over), and clear errors for bad options.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Recorder } from '../../native/perf/recorder';
import { verifyLoadBase, LoadBaseMismatchError } from '../../native/perf/load-base';
import { fixture, perfResources, softwareEvent, tracepointEvent, SoftwareConfig, RecordType } from './helpers';
import { decodeSnapshot } from '../../native/decode/columns';
import { decodeRecordAt } from '../../native/decode/record';
import { onlineCpus } from '../../native/perf/procfs';
import { lostReadFormat } from '../../native/perf/events';

describe('kernel: Recorder', function () {
  this.timeout(30000);

  it('launches without address-space randomisation and verifies load bases (PIE and non-PIE)', async () => {
    for (const [name, base] of [
      ['kernel_writer_pie', 0x555555554000n],
      ['kernel_writer', 0x400000n],
    ] as const) {
      const exe = fixture(name);
      const recorder = await Recorder.open({
        events: [softwareEvent(SoftwareConfig.TASK_CLOCK, 1_000_000n, 'task-clock')],
        target: { kind: 'launch', argv: [exe, '1', '300'], stdio: 'ignore' },
      });
      try {
        const pid = recorder.childPid!;
        verifyLoadBase(pid, exe, base);
        recorder.verifyLoadBase(exe, base);
        assert.throws(
          () => verifyLoadBase(pid, exe, base + 0x1000n),
          (error: unknown) => {
            assert.ok(error instanceof LoadBaseMismatchError);
            assert.match(error.message, new RegExp(`0x${base.toString(16)}.*0x${(base + 0x1000n).toString(16)}`));
            return true;
          },
        );
        assert.throws(() => verifyLoadBase(pid, '/nonexistent/binary', base), /not mapped/);
        assert.equal(await recorder.exited, 0);
      } finally {
        recorder.dispose();
      }
    }
    // Our own process keeps randomisation: personality was restored after the spawn.
    const { personality } = await import('../../native/sys/libc');
    assert.equal(personality(0xffffffff) & 0x0040000, 0);
  });

  it('verifies the load base of a command that already exited from the side-band MMAP2 records', async () => {
    for (const [name, base] of [
      ['kernel_writer_pie', 0x555555554000n],
      ['kernel_writer', 0x400000n],
    ] as const) {
      const exe = fixture(name);
      const recorder = await Recorder.open({
        events: [softwareEvent(SoftwareConfig.TASK_CLOCK, 1_000_000n, 'task-clock')],
        target: { kind: 'launch', argv: [exe, '5'], stdio: 'ignore' },
      });
      try {
        assert.equal(await recorder.exited, 0);
        assert.throws(() => verifyLoadBase(recorder.childPid!, exe, base), /has exited/);
        recorder.verifyLoadBase(exe, base);
        assert.throws(() => recorder.verifyLoadBase(exe, base + 0x2000n), /side-band MMAP2/);
        // Peeking did not consume: the snapshot still carries the MMAP2 records.
        const forward = recorder.snapshot().rings.filter((r) => r.direction === 'forward');
        assert.ok(forward.some((r) => r.validBytes > 0));
      } finally {
        recorder.dispose();
      }
    }
  });

  it('reports ring statistics and the side-band synthesis of the launched process', async () => {
    // 1000 getpid() syscalls, each one 56-byte sample of the tracepoint, then 200 ms asleep.
    const exe = fixture('kernel_getpid');
    const recorder = await Recorder.open({
      events: [tracepointEvent('syscalls', 'sys_enter_getpid')],
      target: { kind: 'launch', argv: [exe, '1000', '200'], stdio: 'ignore' },
      pages: 2,
    });
    try {
      // Snapshot while the command sleeps after its writes: a pause in the middle of them would rightly
      // turn a write into a LOST record and break the exact byte count below (seen once in CI).
      const backwardWritten = () =>
        recorder
          .ringStats()
          .filter((s) => s.direction === 'backward')
          .reduce((sum, s) => sum + s.bytesWritten, 0n);
      for (const deadline = Date.now() + 5000; backwardWritten() < 1000n * 56n && Date.now() < deadline;)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const running = recorder.snapshot();
      // The synthesized maps are the executable mappings, as /proc/PID/maps has them now.
      const loadedAt = BigInt(
        `0x${
          readFileSync(`/proc/${recorder.childPid}/maps`, 'utf8')
            .split('\n')
            .find((line) => line.includes(' r-xp ') && line.endsWith(exe))!
            .split('-')[0]
        }`,
      );
      assert.ok(
        running.processes.some((p) => p.pid === recorder.childPid && p.comm === 'kernel_getpid' && p.maps.some((m) => m.path === exe && m.start === loadedAt)),
      );
      await recorder.exited;
      const stats = recorder.ringStats();
      const backward = stats.filter((s) => s.direction === 'backward');
      const written = backward.reduce((sum, s) => sum + s.bytesWritten, 0n);
      assert.equal(written, 1000n * 56n);
      assert.ok(
        backward.some((s) => s.fillPercent === 100),
        'a 2-page ring is full after 56000 bytes',
      );
      assert.ok(backward.every((s) => s.dataSize === 8192 && s.head === (s.bytesWritten === 0n ? 0n : (1n << 64n) - s.bytesWritten)));
      assert.ok(stats.some((s) => s.direction === 'forward' && s.bytesWritten > 0n));
    } finally {
      recorder.dispose();
    }
    assert.throws(() => recorder.snapshot(), /after dispose/);
    recorder.dispose();
  });

  it('leaves no perf fd or mapping behind after 200 open/dispose cycles', async () => {
    const before = perfResources();
    for (let i = 0; i < 200; i++) {
      const recorder = await Recorder.open({
        events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 1_000_000n, 'cpu-clock'), tracepointEvent('syscalls', 'sys_enter_getpid')],
        target: i % 2 === 0 ? { kind: 'cpus' } : { kind: 'pid', pid: process.pid },
        pages: 1,
        gapFree: i % 4 < 2,
        sidebandPages: 1,
      });
      if (i % 10 === 0) recorder.snapshot();
      recorder.dispose();
    }
    assert.deepEqual(perfResources(), before);
  });

  it('cleans up after a failed open and rejects bad options clearly', async () => {
    const before = perfResources();
    await assert.rejects(
      Recorder.open({ events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 1_000_000n, 'cpu-clock')], target: { kind: 'cpus' }, pages: 3 }),
      /power of two/,
    );
    await assert.rejects(Recorder.open({ events: [], target: { kind: 'cpus' } }), /at least one event/);
    await assert.rejects(
      Recorder.open({ events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 1_000_000n, 'cpu-clock')], target: { kind: 'cpus', cpus: [999] } }),
      /not online/,
    );
    await assert.rejects(
      Recorder.open({ events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 1_000_000n, 'cpu-clock')], target: { kind: 'pid', pid: 2 ** 22 + 7 } }),
      /does not exist/,
    );
    // The second event fails to open after the first one's rings exist: everything is closed again.
    const bogus = {
      ...tracepointEvent('syscalls', 'sys_enter_getpid'),
      name: 'bogus',
      attr: { ...tracepointEvent('syscalls', 'sys_enter_getpid').attr, config: 0x7ffffffn },
    };
    await assert.rejects(
      Recorder.open({ events: [softwareEvent(SoftwareConfig.CPU_CLOCK, 1_000_000n, 'cpu-clock'), bogus], target: { kind: 'cpus' } }),
      /PerfError|perf_event_open/,
    );
    // A launch whose events cannot open kills the held child instead of leaving it blocked.
    await assert.rejects(
      Recorder.open({ events: [bogus], target: { kind: 'launch', argv: [fixture('kernel_busy'), '10'], stdio: 'ignore' } }),
      /perf_event_open/,
    );
    assert.deepEqual(perfResources(), before);
  });

  it('drains the side-band while recording: 2000 execs of /bin/true keep all 2000 COMM records', async function () {
    // 2000 execs take 10-30 s on a loaded 2-CPU host.
    this.timeout(180000);
    const execs = 2000;
    const recorder = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.TASK_CLOCK, 1_000_000n, 'task-clock')],
      target: { kind: 'launch', argv: ['/bin/sh', '-c', `i=0; while [ $i -lt ${execs} ]; do /bin/true; i=$((i+1)); done`], stdio: 'ignore' },
    });
    try {
      assert.equal(await recorder.exited, 0);
      const { events, rings } = recorder.snapshot();
      const decoded = decodeSnapshot({ events, rings });
      let comms = 0;
      let lost = 0n;
      for (let row = 0; row < decoded.columns.length; row++) {
        const kind = decoded.columns.kind[row];
        if (kind !== RecordType.COMM && kind !== RecordType.LOST) continue;
        const record = decodeRecordAt(decoded, row);
        if (kind === RecordType.COMM && record.fields.comm === 'true') comms++;
        if (kind === RecordType.LOST) lost += BigInt(record.fields.lost as bigint | number);
      }
      assert.equal(lost, 0n, 'nothing lost in the side-band');
      for (const ring of decoded.coverage) assert.equal(ring.lostSinceOpen, 0n, `${ring.label}: the kernel counted no record it could not write`);
      assert.equal(comms, execs, 'one COMM (exec) record per /bin/true');
      // Forward rings are never overwritten, and what the drains moved is not counted as if it were.
      for (const ring of decoded.coverage.filter((c) => rings.find((r) => r.ringId === c.ringId)?.direction === 'forward'))
        assert.equal(ring.bytesOverwritten, 0n);
    } finally {
      recorder.dispose();
    }
  });

  for (const gapFree of [false, true]) {
    it(`three events share one ring per CPU (SET_OUTPUT) and decode apart by sample id${gapFree ? ' (gap-free pairs)' : ''}`, async () => {
      const calls = 500;
      const recorder = await Recorder.open({
        events: [
          softwareEvent(SoftwareConfig.TASK_CLOCK, 100_000n, 'task-clock'),
          tracepointEvent('syscalls', 'sys_enter_getpid'),
          softwareEvent(SoftwareConfig.PAGE_FAULTS, 1n, 'page-faults'),
        ],
        target: { kind: 'launch', argv: [fixture('kernel_getpid'), String(calls)], stdio: 'ignore' },
        gapFree,
      });
      try {
        assert.equal(await recorder.exited, 0);
        const cpus = onlineCpus().length;
        assert.equal(recorder.backwardRings.length, cpus * (gapFree ? 2 : 1), 'one ring (or pair) per CPU for all three events');
        const snapshot = recorder.snapshot();
        const decoded = decodeSnapshot(snapshot);
        const perEvent = [0, 0, 0];
        for (let row = 0; row < decoded.columns.length; row++) {
          if (decoded.columns.kind[row] === RecordType.SAMPLE && decoded.columns.pid[row] === recorder.childPid) perEvent[decoded.columns.event[row]]++;
        }
        assert.equal(perEvent[1], calls, `every getpid, told apart from the others: ${perEvent.join(', ')}`);
        assert.ok(perEvent[0] > 0 && perEvent[2] > 0, `task-clock and page-faults samples too: ${perEvent.join(', ')}`);
        assert.equal(decoded.anomalies.filter((anomaly) => anomaly.kind !== 'truncated-oldest').length, 0, 'every record belongs to a known id');
        // Each event lists the ids of its fds on every CPU, all distinct.
        const ids = snapshot.events.slice(0, 3).flatMap((event) => event.ids);
        assert.equal(new Set(ids).size, ids.length);
        assert.ok(snapshot.events.slice(0, 3).every((event) => event.ids.length >= cpus));
      } finally {
        recorder.dispose();
      }
    });
  }

  it('a side-band ring that overflows reports exactly what it lost: records kept + counted lost = what a drained ring keeps', async function () {
    // Hundreds of execs take seconds on a loaded 2-CPU host.
    this.timeout(180000);
    assert.notEqual(lostReadFormat(), 0, 'the kernel counts lost records (PERF_FORMAT_LOST, Linux 6.0+)');
    const execs = 400;
    const argv = ['/bin/sh', '-c', `i=0; while [ $i -lt ${execs} ]; do /bin/true; i=$((i+1)); done`];
    /** Side-band records of one snapshot (LOST records apart), and the kernel's loss count. */
    const sideband = (snapshot: { events: Parameters<typeof decodeSnapshot>[0]['events']; rings: Parameters<typeof decodeSnapshot>[0]['rings'] }) => {
      const decoded = decodeSnapshot(snapshot);
      const forward = new Set(snapshot.rings.filter((ring) => ring.direction === 'forward').map((ring) => snapshot.rings.indexOf(ring)));
      let records = 0;
      let lostRecords = 0n;
      for (let row = 0; row < decoded.columns.length; row++) {
        if (!forward.has(decoded.columns.ring[row])) continue;
        if (decoded.columns.kind[row] === RecordType.LOST) lostRecords += BigInt(decodeRecordAt(decoded, row).fields.lost as bigint);
        else records++;
      }
      const coverage = decoded.coverage.filter((_, r) => forward.has(r));
      const lost = coverage.reduce((sum, ring) => sum + (ring.lostSinceOpen ?? -1_000_000n), 0n);
      return { records, lost, lostRecords, coverage };
    };

    // Drained every 20 ms: nothing is lost, and a snapshot taken midway does not count what it
    // consumed as overwritten in the next one.
    const drained = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.TASK_CLOCK, 1_000_000n, 'task-clock')],
      target: { kind: 'launch', argv, stdio: 'ignore' },
    });
    let expected: number;
    try {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const first = sideband(drained.snapshot());
      assert.equal(await drained.exited, 0);
      const second = sideband(drained.snapshot());
      assert.ok(first.records > 0 && second.records > 0, `both snapshots hold side-band records (${first.records}, ${second.records})`);
      for (const ring of [...first.coverage, ...second.coverage]) assert.equal(ring.bytesOverwritten, 0n, `${ring.label}: a forward ring is never overwritten`);
      const secondWritten = second.coverage.reduce((sum, ring) => sum + ring.bytesWritten, 0n);
      assert.ok(secondWritten > BigInt(second.records * 8), "the second snapshot's rings had written what the first one consumed");
      assert.equal(first.lost + second.lost, 0n);
      assert.equal(first.lostRecords + second.lostRecords, 0n);
      expected = first.records + second.records;
    } finally {
      drained.dispose();
    }
    // The same load into one-page side-band rings that nobody empties until the end: they fill,
    // the kernel stops writing into them, and counts every record it could not write.
    const full = await Recorder.open({
      events: [softwareEvent(SoftwareConfig.TASK_CLOCK, 1_000_000n, 'task-clock')],
      target: { kind: 'launch', argv, stdio: 'ignore' },
      sidebandPages: 1,
      drainSideband: false,
    });
    try {
      assert.equal(await full.exited, 0);
      const kept = sideband(full.snapshot());
      assert.ok(kept.lost > 0n, 'the one-page side-band rings overflowed');
      // Nothing freed space while recording, but a LOST record (40 bytes) may still fit in the room a larger
      // record (an MMAP2 with its path) did not: never more than the kernel counted.
      assert.ok(kept.lostRecords <= kept.lost, `LOST records report ${kept.lostRecords} of the ${kept.lost} lost`);
      assert.equal(
        BigInt(kept.records) + kept.lost,
        BigInt(expected),
        `kept ${kept.records} + lost ${kept.lost} = the ${expected} records a drained ring keeps`,
      );
    } finally {
      full.dispose();
    }
  });
});
