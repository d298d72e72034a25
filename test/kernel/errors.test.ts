// The kernel's refusals turned into PerfError with a usable hint: E2BIG size negotiation,
// ENOSPC when the debug registers are taken, a bogus tracepoint, EINVAL, and EACCES for an
// unprivileged process (a child dropping to uid nobody).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openEvent, type PerfEventFd } from '../../native/perf/events';
import { PERF_ATTR_SIZE_LATEST, type PerfEventAttr } from '../../native/abi/attr';
import { BreakpointType, PerfType, SoftwareConfig } from '../../native/abi/uapi';
import { PerfError, errnoName } from '../../native/sys/errors';
import { ROOT } from './helpers';

const taskClock: PerfEventAttr = {
  type: PerfType.SOFTWARE,
  config: BigInt(SoftwareConfig.TASK_CLOCK),
  samplePeriod: 0n,
  sampleType: 0,
  readFormat: 0,
  flags: {},
};

function expectPerfError(run: () => unknown): PerfError {
  try {
    const result = run();
    (result as PerfEventFd | undefined)?.dispose?.();
  } catch (error) {
    assert.ok(error instanceof PerfError, `expected PerfError, got ${error}`);
    return error;
  }
  assert.fail('expected a PerfError');
}

describe('kernel: errors', function () {
  this.timeout(30000);

  it('names errnos', () => {
    assert.equal(errnoName(13), 'EACCES');
    assert.equal(errnoName(28), 'ENOSPC');
    assert.equal(errnoName(9999), 'E9999');
  });

  it('negotiates the attr size on E2BIG and reports what was dropped', () => {
    const trailing = new Uint8Array(8);
    trailing[3] = 1; // a non-zero field beyond the kernel's struct, as a newer uapi would set
    const event = openEvent(taskClock, 0, -1, -1, undefined, { trailingBytes: trailing, name: 'task-clock' });
    try {
      assert.equal(event.attrSize, PERF_ATTR_SIZE_LATEST, 'this kernel accepts the VER8 layout');
      assert.equal(event.droppedNonZeroBytes, 1);
      event.enable();
      assert.equal(typeof event.id(), 'bigint');
    } finally {
      event.dispose();
      event.dispose(); // idempotent
    }
    const error = expectPerfError(() => openEvent(taskClock, 0, -1, -1, undefined, { trailingBytes: trailing, negotiateSize: false }));
    assert.equal(error.code, 'E2BIG');
    assert.equal(error.syscall, 'perf_event_open');
    assert.match(error.hint, /size negotiation/);
    // Zero bytes beyond the kernel's size are accepted as they are: no retry needed.
    const padded = openEvent(taskClock, 0, -1, -1, undefined, { trailingBytes: new Uint8Array(8) });
    assert.equal(padded.attrSize, PERF_ATTR_SIZE_LATEST + 8);
    padded.dispose();
  });

  it('fails the 5th pinned breakpoint on one task with ENOSPC and explains the debug registers', () => {
    const opened: PerfEventFd[] = [];
    try {
      const attr = (i: number): PerfEventAttr => ({
        type: PerfType.BREAKPOINT,
        config: 0n,
        samplePeriod: 1n,
        sampleType: 0,
        readFormat: 0,
        flags: { pinned: true, excludeKernel: true },
        bpType: BreakpointType.W,
        config1: 0x10000n + BigInt(i * 8),
        config2: 8n,
      });
      for (let i = 0; i < 4; i++) opened.push(openEvent(attr(i), 0, -1, -1, undefined, { name: `mem:${i}` }));
      const error = expectPerfError(() => openEvent(attr(4), 0, -1, -1, undefined, { name: 'mem:fifth' }));
      assert.equal(error.code, 'ENOSPC');
      assert.match(error.hint, /debug register/);
      assert.match(error.message, /mem:fifth/);
    } finally {
      for (const event of opened) event.dispose();
    }
  });

  it('rejects a tracepoint id that does not exist with a tracefs hint', () => {
    const error = expectPerfError(() =>
      openEvent({ type: PerfType.TRACEPOINT, config: 0x7ffffffn, samplePeriod: 1n, sampleType: 0, readFormat: 0, flags: {} }, 0, -1, -1, undefined, {
        name: 'bogus:event',
      }),
    );
    assert.ok(['ENOENT', 'EINVAL'].includes(error.code), error.code);
    assert.match(error.hint, /tracepoint|tracefs/);
  });

  it('names the suspicious field on EINVAL', () => {
    const error = expectPerfError(() =>
      openEvent(
        {
          type: PerfType.BREAKPOINT,
          config: 0n,
          samplePeriod: 1n,
          sampleType: 0,
          readFormat: 0,
          flags: {},
          bpType: BreakpointType.W,
          config1: 0x10000n,
          config2: 3n,
        },
        0,
        -1,
      ),
    );
    assert.equal(error.code, 'EINVAL');
    assert.match(error.hint, /bp_len 3/);
  });

  describe('as an unprivileged user', () => {
    const paranoidFile = '/proc/sys/kernel/perf_event_paranoid';
    let saved = '';
    before(() => {
      saved = readFileSync(paranoidFile, 'utf8').trim();
      writeFileSync(paranoidFile, '2');
    });
    after(() => {
      writeFileSync(paranoidFile, saved);
    });

    it('gets EACCES for a CPU-wide event, with the paranoid level and the sysctl to change it', () => {
      const eventsModule = path.join(__dirname, '../../native/perf/events.js');
      const script = `
        process.setgid(65534); process.setuid(65534);
        const { openEvent } = require(${JSON.stringify(eventsModule)});
        try {
          openEvent({ type: 1, config: 0n, samplePeriod: 0n, sampleType: 0, readFormat: 0, flags: {} }, -1, 0, -1, undefined, { name: 'cpu-clock' });
          console.log(JSON.stringify({ opened: true }));
        } catch (e) {
          console.log(JSON.stringify({ name: e.name, code: e.code, syscall: e.syscall, hint: e.hint }));
        }`;
      const output = execFileSync(process.execPath, ['-e', script], {
        encoding: 'utf8',
        env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') },
        cwd: '/',
      });
      const result = JSON.parse(output.trim());
      assert.equal(result.name, 'PerfError');
      assert.equal(result.code, 'EACCES');
      assert.match(
        result.hint,
        new RegExp(
          `kernel\\.perf_event_paranoid = ${readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim()} and uid 65534 \\(nobody\\) has no CAP_PERFMON`,
        ),
      );
      assert.match(result.hint, /sysctl kernel\.perf_event_paranoid=0/);
      assert.match(result.hint, /CAP_PERFMON/);
    });
  });
});
