import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PerfError } from '../../native/sys/errors';
import { describeError, fixCommandOf } from './errors';

describe('extension: user-facing errors', () => {
  it('offers the sysctl from a permission error as a command to copy', () => {
    const error = new PerfError('perf_event_open', 13, { pid: -1, eventName: 'cpu-clock' });
    const described = describeError(error, 'Start Recording');
    assert.match(described.message, /^Start Recording: EACCES from perf_event_open/);
    assert.match(described.detail, /PerfError/);
    // CPU-wide events need paranoid <= 0: above that the fix is the sysctl, at or below it there is no command to offer.
    const level = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
    assert.equal(described.command, level > 0 ? 'sudo sysctl kernel.perf_event_paranoid=0' : undefined);
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
