// `ringside events` data and text on this machine, compared with `perf list`.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { formatEventList, listEvents } from '../../native/specs/list';
import { resolveEventSpec } from '../../native/specs/resolve';

function perfList(kind: string): string[] {
  const run = spawnSync('perf', ['list', kind], { encoding: 'utf8' });
  assert.equal(run.error, undefined, `perf (the reference) must be installed: ${String(run.error)}`);
  return run.stdout.split('\n');
}

describe('specs/list (this machine)', () => {
  const list = listEvents();

  it('offers every kind of event, and each listed one resolves', () => {
    assert.equal(list.software.length, 12);
    assert.ok(list.tracepoints.length > 1000);
    assert.equal(list.tracepointsError, undefined);
    assert.equal(list.pmuErrors, undefined);
    const types = Object.fromEntries(list.pmus.map((pmu) => [pmu.name, pmu.type]));
    assert.deepEqual([types.software, types.tracepoint, types.breakpoint], [1, 2, 5]);
    for (const event of list.software) assert.equal(resolveEventSpec(event.name).attr.config, BigInt(event.config));
    const sched = list.tracepoints.find((entry) => entry.system === 'sched' && entry.name === 'sched_switch');
    assert.equal(sched?.id, Number(readFileSync('/sys/kernel/tracing/events/sched/sched_switch/id', 'utf8')));
    for (const pmu of list.pmus) {
      for (const event of pmu.events) assert.equal(resolveEventSpec(`${pmu.name}/${event.name}/`).attr.type, pmu.type);
    }
    assert.ok(list.breakpoints.some((entry) => entry.syntax.startsWith('mem:FILE:LINE')));
    // The uprobe specs are offered where the kernel has the uprobe PMU (sysfs is the referee).
    const uprobePmu = existsSync('/sys/bus/event_source/devices/uprobe/type');
    assert.deepEqual(
      list.uprobes.map((entry) => entry.syntax),
      uprobePmu ? ['line:FILE:LINE', 'uprobe:BIN:SYMBOL[+OFF]'] : [],
    );
    const json = JSON.parse(JSON.stringify(list)) as typeof list;
    assert.deepEqual(json.software, list.software);
  });

  it('prints software events exactly like `perf list sw`', () => {
    const ours = formatEventList(list)
      .split('\n')
      .filter((line) => line.endsWith('[Software event]'))
      .sort();
    const perfs = perfList('sw')
      .filter((line) => line.endsWith('[Software event]'))
      .sort();
    assert.deepEqual(ours, perfs);
  });

  it('prints tracepoints exactly like `perf list tracepoint`', () => {
    // Ringside's own uprobe groups (ringside_PID_N, a recording's, defined in tracefs while it runs) come and go between
    // the two listings; every other tracepoint stays.
    const lasting = (line: string) => line.endsWith('[Tracepoint event]') && !/^\s*ringside_\d+_\d+:/.test(line);
    const ours = formatEventList(list).split('\n').filter(lasting);
    const perfs = perfList('tracepoint').filter(lasting);
    assert.deepEqual(ours.sort(), perfs.sort());
  });

  it('prints PMU event aliases like perf', () => {
    const text = formatEventList(list);
    for (const pmu of list.pmus) {
      for (const event of pmu.events) assert.ok(text.includes(`  ${`${pmu.name}/${event.name}/`.padEnd(50)} [Kernel PMU event]`), `${pmu.name}/${event.name}/`);
    }
    assert.match(text, /^ {2}breakpoint \(type 5\)$/m);
    for (const pmu of list.pmus) assert.match(text, new RegExp(`^ {2}${pmu.name} \\(type ${pmu.type}[,)]`, 'm'), pmu.name);
  });
});
