import assert from 'node:assert/strict';
import { PerfError } from '../../native/sys/errors';
import { AccessError, perfAccessFrom, readAccessFacts } from '../../native/sys/access';
import { planForAccess } from '../../native/perf/access-plan';
import { resolveEventSpec } from '../../native/specs/resolve';
import { describeError, fixCommandOf } from './errors';

describe('extension: user-facing errors', () => {
  it('offers the sysctl from a permission error as a command to copy', () => {
    const error = new PerfError('perf_event_open', 13, { pid: -1, eventName: 'cpu-clock' });
    const described = describeError(error, 'Start Recording');
    assert.match(described.message, /^Start Recording: EACCES from perf_event_open/);
    assert.match(described.detail, /PerfError/);
    // As an ordinary user at level 2, -a is refused before any fd is opened, with the sysctl to copy.
    const nobody = perfAccessFrom({ ...readAccessFacts(), euid: 65534, effectiveCaps: 0n, paranoid: 2 });
    const refused = (() => {
      try {
        planForAccess([resolveEventSpec('cpu-clock')], 'cpus', nobody);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    assert.ok(refused instanceof AccessError);
    const access = describeError(refused, 'Start Recording');
    assert.match(access.message, /^Start Recording: -a records every process on every CPU, which needs kernel\.perf_event_paranoid <= 0/);
    assert.equal(access.command, 'sudo sysctl kernel.perf_event_paranoid=0');
  });

  it('finds fix commands in backticks and ignores other code spans', () => {
    assert.equal(fixCommandOf('run `sudo sysctl kernel.perf_event_paranoid=-1` (allows ...)'), 'sudo sysctl kernel.perf_event_paranoid=-1');
    assert.equal(fixCommandOf('tracefs: run `mount -t tracefs nodev /sys/kernel/tracing`'), 'mount -t tracefs nodev /sys/kernel/tracing');
    assert.equal(fixCommandOf('`ringside events` lists what it offers'), undefined);
  });

  it('describes non-Error throws', () => {
    assert.equal(describeError('boom').message, 'boom');
  });
});
