// The stack, frame and function tables against per-record decoding and against perf: on perf's own `perf record -g`
// file and on a real `ringside capture -a -g`, every sample's stack (from the tables) holds the callchain the record
// decoder reads, every JSON line built from the tables is the line the per-record formatter writes, and every
// frame's name equals `perf script`'s for the same sample.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { decodeRecordAt, formatRecordJson, type CallchainFrame, type DecodedSnapshot } from '../../native/decode';
import { RecordType } from '../../native/abi/uapi';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import { ProfileTables } from '../../native/tables/profile-tables';
import { TableJsonl } from '../../native/tables/jsonl';
import { DELETED_SUFFIX } from '../../native/abi/object-names';
import {
  captureAllCpus,
  fixture,
  importFile,
  perfFrames,
  perfNamesPltSlotByPosition,
  perfRecord,
  perfSampleKey,
  tempDir,
  type PerfFrame,
} from '../perfdata/perf-tools';

function tablesOf(decoded: DecodedSnapshot): { tables: ProfileTables; symbols: SnapshotSymbols } {
  const symbols = new SnapshotSymbols();
  symbols.learn(decoded);
  const tables = new ProfileTables(decoded);
  tables.symbolize((pid, ip, kernel) => symbols.resolveFrame(pid, ip, kernel));
  return { tables, symbols };
}

/** Every sample's stack holds its record's callchain, and every line from the tables is formatRecordJson's. */
function assertTablesMatchRecords(decoded: DecodedSnapshot, tables: ProfileTables, symbols: SnapshotSymbols): number {
  const symbolize = (pid: number, ip: bigint, kernel: boolean) => symbols.frames.nameOf(pid, ip, kernel);
  const jsonl = new TableJsonl(decoded, tables, symbolize);
  let samples = 0;
  for (let row = 0; row < decoded.columns.length; row++) {
    assert.equal(jsonl.line(row), formatRecordJson(decoded, row, symbolize), `row ${row}`);
    if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
    const callchain = (decodeRecordAt(decoded, row).fields as { callchain?: CallchainFrame[] }).callchain;
    if (!callchain) continue;
    samples++;
    const expected = callchain.filter((frame) => !frame.isMarker).map((frame) => frame.ip);
    const stack = tables.sampleStack[row];
    const frames = stack < 0 ? [] : tables.framesOf(stack);
    assert.deepEqual(
      frames.map((frame) => tables.frameIp(frame)),
      expected,
      `callchain of row ${row}`,
    );
  }
  return samples;
}

/**
 * Every frame of every sample named as perf script names it. perf 6.1 names the first stub of a non-PIE .plt
 * `_init+0x..` where Ringside (and objdump) say `name@plt+0x..` (test/perfdata/plt-symbols.test.ts pins both):
 * such a frame counts as equal when perf says _init in the same binary. In a shared library whose .plt interleaves
 * IRELATIVE slots (libc), perf names the stubs by position, so an IRELATIVE slot gets a neighbour's name
 * (`__tls_get_addr@plt` at libc's 0x26060, which objdump calls `*ABS*+0x9c6a0@plt`); Ringside names stubs by their
 * GOT slot and leaves those unnamed (test/symbols/symbolizer.test.ts checks every stub against objdump).
 */
function assertNamesMatchPerf(decoded: DecodedSnapshot, tables: ProfileTables, perf: Map<string, PerfFrame[]>): number {
  const differ: string[] = [];
  const leftMangled: { ours: string; perf: string; where: string }[] = [];
  let frames = 0;
  let samples = 0;
  for (let row = 0; row < decoded.columns.length; row++) {
    if (decoded.columns.kind[row] !== RecordType.SAMPLE || tables.sampleStack[row] < 0) continue;
    const time = (decoded.columns.timeOriginNs + BigInt(decoded.columns.time[row])).toString();
    const theirs = perf.get(perfSampleKey(decoded.columns.tid[row], time));
    assert.ok(theirs, `perf script has the sample of thread ${decoded.columns.tid[row]} at ${time}`);
    const ours = tables.framesOf(tables.sampleStack[row]).map((frame) => tables.frameSymbol[frame] ?? '[unknown]');
    assert.equal(ours.length, theirs.length, `frames of the sample at ${time}: ours ${ours.join(' ')}, perf ${theirs.map((f) => f.name).join(' ')}`);
    samples++;
    ours.forEach((name, i) => {
      frames++;
      const pltAsInit = /@plt\+0x[0-9a-f]+$/.test(name) && /^_init\+0x[0-9a-f]+$/.test(theirs[i].name);
      const irelativeSlot = name === '[unknown]' && perfNamesPltSlotByPosition(theirs[i]);
      // A PLT stub perf cannot name, named here: some read [unknown] in perf script (chromium's lld-linked .plt), and
      // perf 6.1 once wrote libc's __tunable_get_val@plt (0x262c0 here; its slot's symbol is
      // __tunable_get_val@GLIBC_PRIVATE) as `@plt+0x0`: the same stub at the same offset, without its name.
      const stubPerfCannotName =
        /@plt\+0x[0-9a-f]+$/.test(name) && (theirs[i].name === '[unknown]' || (/^@plt\+0x[0-9a-f]+$/.test(theirs[i].name) && name.endsWith(theirs[i].name)));
      // A file unlinked since its process mapped it (rebuilt or upgraded on this machine while the capture ran): perf
      // cannot read it; Ringside reads the mapped copy through /proc (test/symbols/replaced-files.test.ts: nm referees).
      if (theirs[i].name === '[unknown]' && theirs[i].dso.endsWith(DELETED_SUFFIX)) return;
      if (name !== theirs[i].name && !pltAsInit && !irelativeSlot && !stubPerfCannotName && /^_Z/.test(name)) {
        leftMangled.push({ ours: name, perf: theirs[i].name, where: `${time} #${i}` });
        return;
      }
      if (name !== theirs[i].name && !pltAsInit && !irelativeSlot && !stubPerfCannotName)
        differ.push(`${time} #${i}: ours ${name}, perf ${theirs[i].name} (${theirs[i].dso})`);
    });
  }
  // Names the demangler leaves mangled (a local class in a template argument, say): perf's name must be c++filt's
  // for the same symbol, without its clone suffix, as perf shows it. The demangler's gap, named, not a table error.
  if (leftMangled.length > 0) {
    const split = leftMangled.map(({ ours }) => /^(.+?)((?:\.[a-z]+\.\d+)*)(\+0x[0-9a-f]+)$/.exec(ours));
    const demangled = execFileSync('c++filt', ['-p'], { input: split.map((m) => m?.[1] ?? '').join('\n') + '\n', encoding: 'utf8' }).split('\n');
    leftMangled.forEach((frame, k) => {
      if (`${demangled[k]}${split[k]?.[3] ?? ''}` !== frame.perf) differ.push(`${frame.where}: ours ${frame.ours}, perf ${frame.perf}`);
    });
  }
  assert.deepEqual(differ.slice(0, 10), [], `${differ.length} of ${frames} frames differ`);
  return samples;
}

describe('stack, frame and function tables equal per-record decoding and perf script (real kernel)', function () {
  this.timeout(180_000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("perf record -g's own file: stacks, JSON lines and every frame's name", () => {
    const file = path.join(dir, 'g.data');
    perfRecord(file, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const { decoded } = importFile(file);
    const { tables, symbols } = tablesOf(decoded);
    const samples = assertTablesMatchRecords(decoded, tables, symbols);
    assert.ok(samples > 100, `${samples} samples with callchains`);
    assert.ok(tables.stackCount < samples, `${tables.stackCount} distinct stacks for ${samples} samples: callchains are shared`);
    assert.equal(assertNamesMatchPerf(decoded, tables, perfFrames(file)), samples);
    // The function table holds each function once per DSO: the fixture's hot function is there, in the fixture.
    const inner = tables.functionName.indexOf('pd_inner');
    assert.ok(inner >= 0, 'pd_inner is a function');
    assert.equal(tables.functionDso[inner], fixture('pd_work'));
  });

  it('ringside capture -a -g: stacks and JSON lines equal per-record decoding, names equal perf script of its perf.data', () => {
    const file = path.join(dir, 'a.data');
    const captured = captureAllCpus(file);
    assert.equal(captured.status, 0, captured.stderr);
    const { decoded } = importFile(file);
    const { tables, symbols } = tablesOf(decoded);
    const samples = assertTablesMatchRecords(decoded, tables, symbols);
    assert.ok(samples > 50, `${samples} samples with callchains`);
    assert.equal(assertNamesMatchPerf(decoded, tables, perfFrames(file)), samples);
  });
});
