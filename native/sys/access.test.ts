import { strict as assert } from 'node:assert';
import { AccessError, Capability, parseMemlockLimit, perfAccessFrom, type AccessFacts } from './access';
import { planForAccess } from '../perf/access-plan';
import { resolveEventSpec } from '../specs/resolve';
import type { ResolvedEvent } from '../abi/snapshot';

const ordinaryUser: AccessFacts = {
  euid: 1000,
  paranoid: 2,
  effectiveCaps: 0n,
  perfMlockKb: 516,
  memlockLimitBytes: 8 << 20,
  onlineCpus: 2,
  pageSize: 4096,
  seccompMode: 0,
  tracefs: { path: '/sys/kernel/tracing', state: 'ok' },
};

/** A tracepoint as the resolver returns it, without reading this machine's tracefs. */
function tracepoint(system: string, name: string): ResolvedEvent {
  const base = resolveEventSpec('dummy');
  return { ...base, name: `${system}:${name}`, attr: { ...base.attr, type: 2 }, tracepoint: { system, name, id: 1, fields: [], printFormat: '' } };
}

describe('sys/access: what an ordinary user may record', () => {
  it('follows the kernel levels: 2 user space only, 1 kernel, 0 CPU-wide, -1 raw tracepoints', () => {
    const at = (paranoid: number) => perfAccessFrom({ ...ordinaryUser, paranoid });
    assert.deepEqual(
      [2, 1, 0, -1].map((level) => [at(level).mayRecordKernel, at(level).mayRecordCpuWide, at(level).mayRecordRawTracepoints]),
      [
        [false, false, false],
        [true, false, false],
        [true, true, false],
        [true, true, true],
      ],
    );
    assert.equal(perfAccessFrom({ ...ordinaryUser, paranoid: null }).mayRecordKernel, false, 'an unreadable sysctl counts as the default, 2');
  });

  it('CAP_PERFMON or CAP_SYS_ADMIN pass every paranoid check; CAP_IPC_LOCK lifts the locked-memory budget', () => {
    for (const cap of [Capability.PERFMON, Capability.SYS_ADMIN]) {
      const access = perfAccessFrom({ ...ordinaryUser, paranoid: 3, effectiveCaps: 1n << BigInt(cap) });
      assert.equal(access.mayRecordRawTracepoints, true);
      assert.notEqual(access.lockedPagesBudget, null, 'perfmon alone does not lift RLIMIT_MEMLOCK');
    }
    assert.equal(perfAccessFrom({ ...ordinaryUser, effectiveCaps: 1n << BigInt(Capability.IPC_LOCK) }).lockedPagesBudget, null);
    assert.equal(perfAccessFrom({ ...ordinaryUser, paranoid: -1 }).lockedPagesBudget, null, 'perf_mmap() does not enforce the limit at -1');
  });

  it('counts the budget as perf_mmap() does: mlock_kb per online CPU plus RLIMIT_MEMLOCK, in pages', () => {
    assert.equal(perfAccessFrom(ordinaryUser).lockedPagesBudget, (516 / 4) * 2 + 2048);
    assert.equal(parseMemlockLimit('Max locked memory         8388608              8388608              bytes\n'), 8388608);
    assert.equal(parseMemlockLimit('Max locked memory         unlimited            unlimited            bytes\n'), null);
  });

  it('narrows events without a modifier to user space, side-band included, and says why', () => {
    const plan = planForAccess([resolveEventSpec('task-clock'), resolveEventSpec('page-faults:u')], 'launch', perfAccessFrom(ordinaryUser));
    assert.deepEqual(
      plan.events.map((event) => [event.attr.flags.excludeKernel, event.attr.flags.excludeHv]),
      [
        [true, true],
        [true, true],
      ],
    );
    assert.equal(plan.excludeKernel, true);
    assert.match(plan.limitation ?? '', /^user space only: kernel\.perf_event_paranoid = 2 \(uid 1000/);
    const root = planForAccess([resolveEventSpec('task-clock')], 'launch', perfAccessFrom({ ...ordinaryUser, paranoid: 1 }));
    assert.deepEqual([root.events[0].attr.flags.excludeKernel, root.excludeKernel, root.limitation], [undefined, false, null]);
  });

  it('refuses what cannot be narrowed with the level that allows it', () => {
    const access = perfAccessFrom(ordinaryUser);
    const refusal = (events: ResolvedEvent[], target: 'launch' | 'pid' | 'cpus', at = access) => {
      try {
        planForAccess(events, target, at);
      } catch (error) {
        assert.ok(error instanceof AccessError);
        return error.message;
      }
      return 'allowed';
    };
    assert.match(
      refusal([resolveEventSpec('task-clock:k')], 'launch'),
      /task-clock:k asks for kernel samples, which need kernel\.perf_event_paranoid <= 1.*task-clock:u records user space/,
    );
    assert.match(
      refusal([resolveEventSpec('cpu-clock')], 'cpus'),
      /-a records every process on every CPU, which needs kernel\.perf_event_paranoid <= 0.*sysctl kernel\.perf_event_paranoid=0/,
    );
    assert.match(refusal([tracepoint('syscalls', 'sys_enter_getpid')], 'cpus', perfAccessFrom({ ...ordinaryUser, paranoid: 0 })), /paranoid=-1/);
    assert.match(
      refusal([tracepoint('syscalls', 'sys_enter_getpid')], 'launch'),
      /tracepoint syscalls:sys_enter_getpid fires in the kernel, and recording it needs kernel\.perf_event_paranoid <= 1/,
    );
    // A per-task syscall tracepoint is allowed at 1 (TRACE_EVENT_FL_CAP_ANY); sched_switch needs -1.
    assert.equal(refusal([tracepoint('syscalls', 'sys_enter_getpid')], 'pid', perfAccessFrom({ ...ordinaryUser, paranoid: 1 })), 'allowed');
    assert.match(refusal([tracepoint('sched', 'sched_switch')], 'pid', perfAccessFrom({ ...ordinaryUser, paranoid: 1 })), /<= -1/);
  });
});
