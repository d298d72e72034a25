// Export: a perf.data written by perf is imported, decoded, written back by Ringside's writer, and
// perf must print exactly the same samples (symbols, tracepoint fields, callchains included) from
// both files, and read ours without complaining.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EventDescription, RingCopy } from '../../native/abi/snapshot';
import { decodeRecordAt, decodeSnapshot, type DecodedSnapshot } from '../../native/decode';
import { PerfType, RecordType, Sample } from '../../native/abi/uapi';
import { buildExport, readPerfData, writePerfData, type SynthesizedProcess } from '../../native/perfdata';
import { fixture, importFile, nmAddress, ourSamples, perfOutput, perfRecord, perfScript, tempDir } from './perf-tools';
import { hostBreakpoints } from '../host/breakpoints';

const FULL_FIELDS = ['--ns', '-F', 'comm,pid,tid,cpu,time,period,event,trace,ip,sym,symoff,dso'];

function scriptLines(file: string, extra: readonly string[] = []): string[] {
  return perfScript(file, [...FULL_FIELDS, ...extra]).lines;
}

/** perf report's stderr/stdout lines that complain about the file. */
function reportComplaints(file: string): string[] {
  const { stdout, stderr, status } = perfOutput(['report', '--stdio', '-i', file]);
  assert.equal(status, 0, `perf report failed: ${stderr}`);
  // Histogram rows ("  0.37%  pd_work  [kernel.kallsyms]  [k] access_error") name functions, and
  // kernel functions are called things like access_error: only the other lines can be complaints.
  const histogramRow = /^\s*\d+(\.\d+)?%\s/;
  return `${stderr}\n${stdout}`
    .split('\n')
    .filter((line) => !histogramRow.test(line))
    .filter((line) => /warn|error|fail|corrupt|invalid|unsupported|bad |mismatch|can't|cannot/i.test(line));
}

describe('perf.data export (perf script reads our files like its own)', function () {
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
      ['-e', 'syscalls:sys_enter_write', '-e', 'sched:sched_process_fork', '-e', 'task-clock', '-c', '100000', '--sample-cpu'],
      [work, '5', '1000000'],
    );
    perfRecord(file('bp.data'), ['-e', `mem:${nmAddress(work, 'pd_counter')}:w`, '--sample-cpu'], [work, '6', '0']);
    perfRecord(file('g.data'), ['-g', '-e', 'task-clock', '-c', '200000', '--sample-cpu'], [work, '1', '4000000']);
    perfRecord(file('ow.data'), ['--overwrite', '-m', '2', '-e', 'task-clock', '-c', '20000', '--sample-cpu'], [work, '1', '4000000']);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const roundTrip = (name: string): { out: string; decoded: DecodedSnapshot } => {
    const { decoded, imported } = importFile(file(name));
    const out = file(`${name}.ringside.data`);
    writeFileSync(out, buildExport(decoded, { cmdline: imported.features.cmdline ?? ['ringside'] }));
    return { out, decoded };
  };

  for (const name of ['sw.data', 'tp.data', 'bp.data', 'g.data', 'ow.data']) {
    it(`${name}: perf script prints the same samples from our export as from perf's file`, () => {
      const { out, decoded } = roundTrip(name);
      const theirs = scriptLines(file(name));
      const ours = scriptLines(out);
      // perf recorded no breakpoint hit where this host delivers none; the attrs still round-trip.
      if (name === 'bp.data' && !hostBreakpoints().fire) assert.equal(theirs.length, 0, 'perf recorded hits on a host whose breakpoints are silent');
      else assert.ok(theirs.length > 0);
      assert.deepEqual(ours, theirs);
      // And our own reader reads the export back to the same samples.
      const again = importFile(out);
      assert.deepEqual(ourSamples(again.decoded), ourSamples(decoded));
      if (theirs.length === 0)
        assert.deepEqual(reportComplaints(out), reportComplaints(file(name)), 'perf report says of our export what it says of its own file with no samples');
      else assert.deepEqual(reportComplaints(out), [], 'perf report has no complaints');
    });
  }

  it('the export carries the host features, EVENT_DESC names and build ids perf reads back', () => {
    const { out } = roundTrip('tp.data');
    const header = perfOutput(['report', '--header-only', '-i', out]).stdout;
    assert.match(header, /^# event : name = syscalls:sys_enter_write, .*sample_type = .*IDENTIFIER/m);
    assert.match(header, /^# event : name = task-clock,/m);
    assert.match(header, /^# arch : x86_64$|^# arch : aarch64$/m);
    assert.match(header, /^# nrcpus online : \d+$/m);
    assert.match(header, /^# cmdline : .*perf record/m);
    const ids = perfOutput(['buildid-list', '-i', out]).stdout;
    const exeBuildId = /\n?([0-9a-f]{40}) .*pd_work$/m.exec(ids);
    assert.ok(exeBuildId, `pd_work build id listed: ${ids}`);
    const readelf = perfOutput(['buildid-list', '-i', file('tp.data')]).stdout;
    assert.ok(readelf.includes(exeBuildId[1]), 'same build id perf recorded');
  });

  it('samples without any side-band: synthesized COMM/MMAP2 (and the kernel map) let perf name the same symbols', () => {
    const { decoded: source } = importFile(file('sw.data'));
    const processes = new Map<number, SynthesizedProcess>();
    const samples: Uint8Array[] = [];
    for (let row = 0; row < source.columns.length; row++) {
      const kind = source.columns.kind[row];
      const record = decodeRecordAt(source, row);
      const f = record.fields;
      if (kind === RecordType.MMAP2 && typeof f.pid === 'number' && typeof f.filename === 'string' && f.filename.startsWith('/')) {
        const entry = processes.get(f.pid) ?? { pid: f.pid, tid: f.pid, comm: '', maps: [] };
        processes.set(f.pid, {
          ...entry,
          maps: [...entry.maps, { start: f.addr as bigint, end: (f.addr as bigint) + (f.len as bigint), pgoff: f.pgoff as bigint, path: f.filename }],
        });
      } else if (kind === RecordType.COMM && typeof f.pid === 'number' && typeof f.comm === 'string') {
        const entry = processes.get(f.pid) ?? { pid: f.pid, tid: f.pid, comm: '', maps: [] };
        processes.set(f.pid, { ...entry, comm: f.comm });
      } else if (kind === RecordType.FORK && typeof f.pid === 'number' && typeof f.ppid === 'number' && f.pid !== f.ppid) {
        // The fixture forks a child; a forked process starts with its parent's comm and maps.
        const parent = processes.get(f.ppid);
        if (parent) processes.set(f.pid, { ...parent, pid: f.pid, tid: f.pid });
      } else if (kind === RecordType.SAMPLE) {
        const ring = source.rings[source.columns.ring[row]];
        const offset = source.columns.offset[row];
        samples.push(ring.bytes.subarray(offset, offset + new DataView(ring.bytes.buffer, ring.bytes.byteOffset).getUint16(offset + 6, true)));
      }
    }
    assert.ok(processes.size > 0 && samples.length > 10);
    const bytes = new Uint8Array(samples.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const chunk of samples) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    const ring: RingCopy = {
      ringId: 0,
      label: 'samples',
      cpu: -1,
      tid: -1,
      direction: 'forward',
      defaultEvent: 0,
      bytes,
      validBytes: bytes.length,
      dataSize: bytes.length,
      bytesWritten: BigInt(bytes.length),
      path: 'paused',
    };
    const onlySamples = decodeSnapshot({ events: source.events, rings: [ring] });
    const out = file('synth.data');
    writeFileSync(out, buildExport(onlySamples, { processes: [...processes.values()], cmdline: ['ringside', 'capture'] }));
    const fields = ['--ns', '-F', 'comm,pid,tid,time,ip,sym,symoff,dso'];
    const ours = perfScript(out, fields).lines;
    assert.deepEqual(ours, perfScript(file('sw.data'), fields).lines);
    assert.ok(
      ours.some((line) => line.includes('pd_inner+0x')),
      'user symbols of the fixture resolved',
    );
    assert.ok(
      ours.some((line) => line.includes('[kernel.kallsyms]')),
      'kernel samples resolved through the synthesized kernel map',
    );
    assert.deepEqual(reportComplaints(out), []);
  });

  it('several events without sample ids and without sample_id_all still come apart in perf script', () => {
    // A synthetic snapshot as a ring with two events that carry no ID/IDENTIFIER: the writer must
    // insert ids (and trailers) so perf tells the events apart.
    const { decoded: source } = importFile(file('tp.data'));
    const events: EventDescription[] = source.events.map((event) => ({
      ...event,
      ids: [],
      attr: { ...event.attr, sampleType: event.attr.sampleType & ~(Sample.IDENTIFIER | Sample.ID), flags: { ...event.attr.flags, sampleIdAll: false } },
    }));
    // Rebuild the samples without their leading IDENTIFIER, per event, as separate rings.
    const rings: RingCopy[] = [];
    events.forEach((event, index) => {
      const chunks: Uint8Array[] = [];
      for (let row = 0; row < source.columns.length; row++) {
        if (source.columns.kind[row] !== RecordType.SAMPLE || source.columns.event[row] !== index) continue;
        const ring = source.rings[source.columns.ring[row]];
        const offset = source.columns.offset[row];
        const size = new DataView(ring.bytes.buffer, ring.bytes.byteOffset).getUint16(offset + 6, true);
        const copy = new Uint8Array(size - 8);
        copy.set(ring.bytes.subarray(offset, offset + 8));
        copy.set(ring.bytes.subarray(offset + 16, offset + size), 8);
        new DataView(copy.buffer).setUint16(6, size - 8, true);
        chunks.push(copy);
      }
      const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      rings.push({
        ringId: index,
        label: `ring${index}`,
        cpu: 0,
        tid: 0,
        direction: 'forward',
        defaultEvent: index,
        bytes,
        validBytes: bytes.length,
        dataSize: bytes.length,
        bytesWritten: BigInt(bytes.length),
        path: 'paused',
      });
    });
    const decoded = decodeSnapshot({ events, rings });
    assert.equal(decoded.anomalies.length, 0);
    const out = file('noids.data');
    writeFileSync(
      out,
      writePerfData(decoded, { synthesized: [], cmdline: ['test'], hostname: 'h', osrelease: 'r', arch: 'x86_64', nrcpus: 2, cpudesc: 'cpu' }),
    );
    const lines = perfScript(out, ['--ns', '-F', 'pid,tid,time,event,trace']).lines;
    const perfTp = perfScript(file('tp.data'), ['--ns', '-F', 'pid,tid,time,event,trace']).lines;
    assert.deepEqual(lines, perfTp);
    assert.ok(events.some((e) => e.attr.type === PerfType.TRACEPOINT) && events.some((e) => e.attr.type === PerfType.SOFTWARE));
    const reread = readPerfData(readFileSync(out), out);
    assert.deepEqual(
      reread.events.map((e) => e.ids.length),
      [1, 1, 1],
    );
  });
});
