// The debug-register arithmetic of the editor's breakpoints (hardware-breakpoints.ts), by the kernel's rule: a CPU-wide
// breakpoint takes a register on every CPU, one bound to a process a register on each of its threads.
import assert from 'node:assert/strict';
import { competingHolders, freeRegisters, registerUse } from './hardware-breakpoints';

const on = (pid: number) => ({ scope: { kind: 'process' as const, pid } });
const everyCpu = { scope: { kind: 'cpus' as const } };

describe('editor: debug registers in use', () => {
  it('counts CPU-wide ones for everybody and per-process ones for their process only', () => {
    const holders = [on(10), on(10), on(20), everyCpu];
    const use = registerUse(holders);
    assert.deepEqual({ cpuPinned: use.cpuPinned, maxTaskPinned: use.maxTaskPinned, used: use.used }, { cpuPinned: 1, maxTaskPinned: 2, used: 3 });
    assert.equal(freeRegisters(use, { kind: 'process', pid: 10 }), 1);
    assert.equal(freeRegisters(use, { kind: 'process', pid: 20 }), 2);
    assert.equal(freeRegisters(use, { kind: 'process', pid: 30 }), 3);
    assert.equal(freeRegisters(use, { kind: 'new-process' }), 3);
    assert.equal(freeRegisters(use, { kind: 'cpus' }), 1, 'a CPU-wide one must fit beside the busiest process');
    assert.deepEqual(competingHolders(holders, { kind: 'process', pid: 20 }), [on(20), everyCpu]);
    assert.deepEqual(competingHolders(holders, { kind: 'cpus' }), holders);
  });

  it('counts a line armed at several places (the compiler put it in several) as one register per place', () => {
    const use = registerUse([{ ...on(10), registers: 3 }, everyCpu]);
    assert.deepEqual({ cpuPinned: use.cpuPinned, maxTaskPinned: use.maxTaskPinned, used: use.used }, { cpuPinned: 1, maxTaskPinned: 3, used: 4 });
    assert.equal(freeRegisters(use, { kind: 'process', pid: 10 }), 0);
  });

  it('uses nothing when no breakpoint is open, and never reports fewer than 0 free', () => {
    assert.deepEqual(registerUse([]).used, 0);
    assert.equal(freeRegisters(registerUse([]), { kind: 'cpus' }), 4);
    assert.equal(freeRegisters(registerUse([on(1), on(1), on(1), on(1), everyCpu]), { kind: 'process', pid: 1 }), 0);
  });
});
