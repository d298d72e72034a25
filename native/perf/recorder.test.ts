// Which events share a ring: pure rules, checked without a kernel (test/kernel checks that the
// kernel takes the SET_OUTPUT these groups imply and that records come back apart).
import assert from 'node:assert/strict';
import { ringGroupsFor } from './ring-groups';
import { defaultRingPages, DEFAULT_RING_PAGES } from './ring-sizing';
import type { ResolvedEvent } from '../abi/snapshot';
import { PerfType } from '../abi/uapi';

const event = (name: string, extra: Partial<ResolvedEvent> = {}, flags: Record<string, boolean> = {}, clockid?: number): ResolvedEvent => ({
  name,
  isBreakpoint: false,
  ...extra,
  attr: { type: PerfType.SOFTWARE, config: 0n, samplePeriod: 1n, sampleType: 0, readFormat: 0, flags, ...(clockid !== undefined ? { clockid } : {}) },
});

describe('ring groups', () => {
  const clock = event('task-clock');
  const tracepoint = event('syscalls:sys_enter_getpid');
  const watch = event('mem:counter:w', { isBreakpoint: true });

  it('puts every event in one ring without gap-free', () => {
    assert.deepEqual(ringGroupsFor([clock, tracepoint, watch], false, new Set()), [{ eventIndices: [0, 1, 2], gapFree: false }]);
  });

  it('keeps breakpoints out of gap-free pairs, in a plain shared ring', () => {
    assert.deepEqual(ringGroupsFor([watch, clock, tracepoint], true, new Set()), [
      { eventIndices: [1, 2], gapFree: true },
      { eventIndices: [0], gapFree: false },
    ]);
  });

  it('gives trigger events a ring each', () => {
    assert.deepEqual(ringGroupsFor([clock, tracepoint, event('syscalls:sys_enter_getppid')], true, new Set([2])), [
      { eventIndices: [0, 1], gapFree: true },
      { eventIndices: [2], gapFree: true },
    ]);
  });

  it('shares a ring only between events of the same clock (the kernel refuses SET_OUTPUT across clocks)', () => {
    const monotonic = event('cpu/config=0,attr11=0x100000000/', {}, { useClockid: true }, 1);
    assert.deepEqual(ringGroupsFor([clock, monotonic, tracepoint], false, new Set()), [
      { eventIndices: [0, 2], gapFree: false },
      { eventIndices: [1], gapFree: false },
    ]);
  });

  it('sizes a shared ring at the default pages per event, rounded up to a power of two', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map(defaultRingPages), [
      DEFAULT_RING_PAGES,
      2 * DEFAULT_RING_PAGES,
      4 * DEFAULT_RING_PAGES,
      4 * DEFAULT_RING_PAGES,
      8 * DEFAULT_RING_PAGES,
    ]);
  });
});
