// perf.data files written by the installed `perf record` on this machine, read by Ringside and
// compared sample by sample with what `perf script` prints for the same file.

import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeRecordAt, decodeSnapshot } from '../../native/decode';
import { PerfType, RecordType } from '../../native/abi/uapi';
import { Feature, PerfDataError, readPerfData, UserRecord } from '../../native/perfdata';
import {
  fixture,
  importFile,
  nmAddress,
  ourSamples,
  parsePerfScriptLine,
  perfBinary,
  perfOutput,
  perfRecord,
  perfScript,
  symbolizerFor,
  tempDir,
  type ComparableSample,
} from './perf-tools';
import { hostBreakpoints } from '../host/breakpoints';

const SCRIPT_FIELDS = ['--ns', '-F', 'pid,tid,cpu,time,period,event,ip'];

function perfSamples(file: string, withTrace = false): ComparableSample[] {
  const fields = withTrace ? ['--ns', '-F', 'pid,tid,cpu,time,period,event,trace,ip'] : SCRIPT_FIELDS;
  return perfScript(file, [...fields, '-G']).lines.map((line) => parsePerfScriptLine(line, withTrace));
}

function assertSameSamples(ours: ComparableSample[], theirs: ComparableSample[], what: string): void {
  assert.equal(ours.length, theirs.length, `${what}: sample count (ours ${ours.length}, perf ${theirs.length})`);
  for (let i = 0; i < theirs.length; i++) {
    const { fields: ourFields, ...ourRest } = ours[i];
    const { fields: perfFields, ...perfRest } = theirs[i];
    assert.deepEqual(ourRest, perfRest, `${what}: sample ${i}`);
    if (perfFields) {
      assert.ok(ourFields, `${what}: sample ${i} has no tracepoint fields`);
      for (const [name, value] of Object.entries(perfFields)) assert.equal(ourFields[name], value, `${what}: sample ${i} field ${name}`);
    }
  }
}

/** Record counts by type from `perf report -D`'s aggregated stats ("  SAMPLE events: 496"). */
function perfRecordCounts(file: string): Map<string, number> {
  const { stdout } = perfOutput(['report', '-D', '-i', file]);
  const counts = new Map<string, number>();
  // Only the aggregated block: per-event "NAME stats:" blocks follow it.
  const stats = stdout.slice(stdout.lastIndexOf('Aggregated stats')).split(/\n\S.* stats:\n/)[0];
  for (const match of stats.matchAll(/^\s*([A-Z0-9_]+) events:\s+(\d+)/gm)) counts.set(match[1], Number(match[2]));
  return counts;
}

describe('perf.data import (perf record is the referee)', function () {
  this.timeout(120_000);
  let work: string;
  let dir: string;
  const file = (name: string) => path.join(dir, name);

  before(() => {
    work = fixture('pd_work');
    dir = tempDir();
    perfRecord(file('sw.data'), ['-e', 'task-clock', '-c', '100000', '--sample-cpu'], [work, '3', '3000000']);
    perfRecord(
      file('tp.data'),
      ['-e', 'syscalls:sys_enter_write', '-e', 'sched:sched_process_fork', '-e', 'syscalls:sys_enter_getpid', '--sample-cpu'],
      [work, '7', '0'],
    );
    perfRecord(file('bp.data'), ['-e', `mem:${nmAddress(work, 'pd_counter')}:w`, '--sample-cpu'], [work, '9', '0']);
    perfRecord(file('g.data'), ['-g', '-e', 'task-clock', '-c', '200000', '--sample-cpu'], [work, '1', '4000000']);
    perfRecord(file('ow.data'), ['--overwrite', '-m', '2', '-e', 'task-clock', '-c', '20000', '--sample-cpu'], [work, '1', '6000000']);
    // Two copies of the workload at once, so a system-wide recording certainly holds several processes.
    perfRecord(file('all.data'), ['-a', '-e', 'cpu-clock', '-c', '500000'], ['/bin/sh', '-c', `${work} 2 3000000 & ${work} 2 3000000; wait`]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads header, attrs with their ids, and the feature sections like perf report --header-only', () => {
    const { imported } = importFile(file('tp.data'));
    assert.equal(imported.mode, 'file');
    assert.deepEqual(
      imported.events.map((e) => e.name),
      ['syscalls:sys_enter_write', 'sched:sched_process_fork', 'syscalls:sys_enter_getpid'],
    );
    const header = perfOutput(['report', '--header-only', '-I', '-i', file('tp.data')]).stdout;
    for (const event of imported.events) {
      const line = header.split('\n').find((l) => l.startsWith(`# event : name = ${event.name},`));
      assert.ok(line, `perf lists ${event.name}`);
      const ids = /id = \{ ([\d, ]+) \}/
        .exec(line)![1]
        .split(',')
        .map((s) => BigInt(s.trim()));
      assert.deepEqual(event.ids, ids, `${event.name} ids`);
      assert.equal(event.attr.type, PerfType.TRACEPOINT);
      assert.ok(event.tracepoint, `${event.name} has its format from TRACING_DATA`);
      assert.equal(Number(event.attr.config), event.tracepoint.id);
    }
    const f = imported.features;
    const value = (label: string) => new RegExp(`^# ${label}\\s*: (.*)$`, 'm').exec(header)?.[1].trim();
    assert.equal(f.hostname, value('hostname'));
    assert.equal(f.osrelease, value('os release'));
    assert.equal(f.arch, value('arch'));
    assert.equal(f.cpudesc, value('cpudesc'));
    assert.equal(String(f.nrcpus), value('nrcpus online'));
    assert.equal(String(f.nrcpusAvailable), value('nrcpus avail'));
    assert.equal(f.cmdline?.join(' '), value('cmdline'));
    assert.ok(f.present.includes(Feature.TRACING_DATA) && f.present.includes(Feature.EVENT_DESC));
    // Build ids: every entry perf lists (perf buildid-list) with the same id and path.
    const listed = perfOutput(['buildid-list', '-i', file('tp.data')])
      .stdout.trim()
      .split('\n');
    assert.ok(listed.length > 0);
    for (const entry of listed) {
      const [id, ...name] = entry.split(' ');
      assert.ok(
        f.buildIds.some((b) => b.buildId === id && b.path === name.join(' ')),
        `build id ${entry}`,
      );
    }
  });

  it('counts every record type of the data section like perf report -D', () => {
    for (const name of ['sw.data', 'tp.data', 'g.data', 'all.data']) {
      const { imported, decoded } = importFile(file(name));
      const theirs = perfRecordCounts(file(name));
      assert.ok(theirs.size > 0, `perf report -D stats for ${name}`);
      for (const [type, count] of theirs) {
        if (type === 'TOTAL') continue;
        assert.equal(imported.recordCounts[type] ?? 0, count, `${name}: ${type} records`);
      }
      // The file-only records are stripped; every kernel record reaches the decoder.
      const kernelTotal = Object.entries(imported.recordCounts)
        .filter(([type]) => !(type in UserRecord))
        .reduce((sum, [, count]) => sum + count, 0);
      assert.equal(decoded.columns.length, kernelTotal, `${name}: rows`);
      assert.equal(decoded.anomalies.length, 0, `${name}: anomalies ${JSON.stringify(decoded.anomalies.slice(0, 2))}`);
    }
  });

  it('software event: same samples as perf script (count, pid/tid, cpu, time, period, ip)', () => {
    const { decoded } = importFile(file('sw.data'));
    const ours = ourSamples(decoded);
    assert.ok(ours.length > 10, `enough task-clock samples (${ours.length})`);
    assertSameSamples(ours, perfSamples(file('sw.data')), 'sw.data');
  });

  it('tracepoints: same samples and the same field values as perf script', () => {
    const { decoded } = importFile(file('tp.data'));
    const ours = ourSamples(decoded);
    const theirs = perfSamples(file('tp.data'), true);
    assertSameSamples(ours, theirs, 'tp.data');
    assert.equal(
      ours.filter((s) => s.event === 'syscalls:sys_enter_write' && s.fields?.buf === theirs.find((t) => t.event === 'syscalls:sys_enter_write')?.fields?.buf)
        .length,
      7,
    );
    assert.equal(ours.filter((s) => s.event === 'syscalls:sys_enter_getpid').length, 7);
    const fork = ours.filter((s) => s.event === 'sched:sched_process_fork');
    assert.equal(fork.length, 1);
    assert.equal(fork[0].fields?.comm, 'pd_work', 'char[16] field decoded as a string');
    // write(fd, "ringside", i % 8 + 1): counts 1..7 in order.
    assert.deepEqual(
      ours.filter((s) => s.event === 'syscalls:sys_enter_write').map((s) => s.fields?.count),
      ['1', '2', '3', '4', '5', '6', '7'],
    );
  });

  it('mem: breakpoint: one sample per write, in pd_write_counter, same as perf script', () => {
    const { decoded } = importFile(file('bp.data'));
    const ours = ourSamples(decoded);
    assertSameSamples(ours, perfSamples(file('bp.data')), 'bp.data');
    // perf recorded no hit where this host delivers none: the same (empty) samples is all there is to compare.
    if (!hostBreakpoints().fire) return assert.equal(ours.length, 0);
    // The kernel's ELF loader clears .bss during exec (kernel-mode hits); then the 9 user writes.
    const user = ours.filter(
      (s) =>
        !BigInt('0x' + s.ip)
          .toString(16)
          .startsWith('ffff'),
    );
    assert.equal(user.length, 9);
    const theirSyms = perfScript(file('bp.data'), ['-F', 'ip,sym']).lines.map((l) => l.trim().split(/\s+/));
    assert.deepEqual(
      theirSyms.filter(([ip]) => !ip.startsWith('ffff')).map(([, sym]) => sym),
      new Array(9).fill('pd_write_counter'),
    );
    const symbolizer = symbolizerFor(decoded);
    for (const sample of user) assert.match(symbolizer.symbolize(sample.pid, BigInt('0x' + sample.ip), false) ?? '', /^pd_write_counter\+0x/);
  });

  it('-g: samples equal perf script, and raw callchains equal perf report -D', () => {
    const { decoded } = importFile(file('g.data'));
    assertSameSamples(ourSamples(decoded), perfSamples(file('g.data')), 'g.data');
    // perf report -D prints each sample's raw chain: "... FP chain: nr:N" then ".....  i: <hex>".
    const dump = perfOutput(['report', '-D', '-i', file('g.data')]).stdout;
    const chains: string[][] = [];
    for (const block of dump.split('FP chain: nr:').slice(1)) {
      const [nrText, ...lines] = block.split('\n');
      const nr = Number(nrText.trim());
      chains.push(lines.slice(0, nr).map((l) => BigInt('0x' + /:\s+([0-9a-f]+)\s*$/.exec(l)![1]).toString(16)));
    }
    const ourChains: string[][] = [];
    for (let row = 0; row < decoded.columns.length; row++) {
      if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
      const frames = decodeRecordAt(decoded, row).fields.callchain as { ip: bigint }[];
      ourChains.push(frames.map((frame) => frame.ip.toString(16)));
    }
    // perf -D prints in file order; compare as multisets keyed by the chain text.
    assert.equal(ourChains.length, chains.length);
    assert.deepEqual(ourChains.map((c) => c.join(',')).sort(), chains.map((c) => c.join(',')).sort());
    assert.ok(
      ourChains.some((c) => c.length > 3),
      'deep chains present',
    );
  });

  it('--overwrite (backward rings written at exit): same samples as perf script, in time order', () => {
    const { imported, decoded } = importFile(file('ow.data'));
    assert.ok(imported.events[0].attr.flags.writeBackward, 'perf recorded with write_backward');
    const ours = ourSamples(decoded);
    assertSameSamples(ours, perfSamples(file('ow.data')), 'ow.data');
    const times = ours.map((s) => s.time);
    assert.deepEqual(times, [...times].sort());
  });

  it('-a (per-CPU): same samples as perf script across CPUs', () => {
    const { decoded } = importFile(file('all.data'));
    const ours = ourSamples(decoded);
    assertSameSamples(ours, perfSamples(file('all.data')), 'all.data');
    assert.ok(new Set(ours.map((s) => s.pid)).size > 1, 'several processes seen system-wide');
  });

  it('pipe mode (perf record -o -): HEADER_ATTR, EVENT_UPDATE, TRACING_DATA records give the same samples', () => {
    const pipeFile = file('pipe.data');
    execSync(`${perfBinary()} record -q -o - -e syscalls:sys_enter_write -e task-clock -c 100000 --sample-cpu -- ${work} 4 1000000 > ${pipeFile}`, {
      shell: '/bin/bash',
    });
    const imported = readPerfData(readFileSync(pipeFile), pipeFile);
    assert.equal(imported.mode, 'pipe');
    assert.deepEqual(
      imported.events.map((e) => e.name),
      ['syscalls:sys_enter_write', 'task-clock'],
    );
    assert.ok(imported.events[0].tracepoint, 'format from the TRACING_DATA record');
    assert.ok((imported.recordCounts.HEADER_ATTR ?? 0) >= 2);
    const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings });
    assertSameSamples(ourSamples(decoded), perfSamples(pipeFile, true), 'pipe.data');
  });

  it('a file perf itself calls damaged gives PerfDataError with file and offset', () => {
    const damaged = file('damaged.data');
    copyFileSync(file('sw.data'), damaged);
    const bytes = readFileSync(damaged);
    bytes.writeBigUInt64LE(0xffffffffn, 24); // attrs section offset far past the end
    writeFileSync(damaged, bytes);
    assert.throws(
      () => readPerfData(readFileSync(damaged), damaged),
      (error: unknown) => error instanceof PerfDataError && error.file === damaged && error.offset === 24 && error.message.startsWith(`${damaged}: `),
    );
  });
});
