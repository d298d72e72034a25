// perf.data read a batch at a time, as `ringside decode` reads it: the batches hold the very records, in the very
// order, of the file read whole (also a --overwrite file, whose data section is not in time order), each record's
// file offset is the same, and JSON Lines written batch by batch with one table of frames and stacks are the lines
// of the whole file written at once; a pprof profile added up batch by batch is, byte for byte, the whole file's.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeSnapshot } from '../../native/decode';
import { openPerfDataFile, PerfDataError, readPerfData, readPerfDataFileInSteps, type PerfDataImport, type SteppedStage } from '../../native/perfdata';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import { BatchLines, BatchTables } from '../../host/batch-lines';
import { PprofBuilder } from '../../native/tables/pprof';
import { ProfileTables } from '../../native/tables/profile-tables';
import { TableJsonl } from '../../native/tables/jsonl';
import { fixture, perfRecord, tempDir } from './perf-tools';

/** Every line of the file decoded whole, from one snapshot. */
function wholeLines(whole: PerfDataImport): string[] {
  const decoded = decodeSnapshot({ events: whole.events, rings: whole.rings });
  const symbols = new SnapshotSymbols();
  symbols.learn(decoded);
  const tables = new ProfileTables(decoded);
  tables.symbolize((pid, ip, kernel) => symbols.resolveFrame(pid, ip, kernel));
  const jsonl = new TableJsonl(decoded, tables, (pid, ip, kernel) => symbols.frames.nameOf(pid, ip, kernel));
  return Array.from({ length: decoded.columns.length }, (_, row) => jsonl.line(row));
}

describe('perf.data read a batch at a time', function () {
  this.timeout(120_000);
  let dir: string;
  const file = (name: string) => path.join(dir, name);

  before(() => {
    const work = fixture('pd_work');
    dir = tempDir();
    // Two processes, so the batches interleave their samples, each with a callchain to name.
    perfRecord(file('g.data'), ['-g', '-e', 'task-clock', '-c', '20000', '--sample-cpu'], ['/bin/sh', '-c', `${work} 1 3000000 & ${work} 1 3000000; wait`]);
    perfRecord(file('ow.data'), ['--overwrite', '-m', '2', '-e', 'task-clock', '-c', '20000', '--sample-cpu'], [work, '1', '6000000']);
    // Pipe mode: events announced in the data section, no rounds let go while it is read.
    execFileSync('/bin/sh', ['-c', `perf record -q -o - -e task-clock -c 20000 --sample-cpu -- ${work} 1 3000000 > ${file('pipe.data')}`], { stdio: 'ignore' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const name of ['g.data', 'ow.data']) {
    it(`${name}: the batches are the whole file's ring cut at record boundaries, with the same file offsets`, () => {
      const whole = readPerfData(readFileSync(file(name)), file(name));
      const ring = whole.rings[0].bytes;
      const stream = openPerfDataFile(file(name));
      try {
        assert.equal(stream.recordCount > 0, true);
        let at = 0;
        let batches = 0;
        // About eight batches, whatever the file's size (a --overwrite file keeps only what its small ring held).
        const batchBytes = Math.max(64, ring.length >> 3);
        for (const batch of stream.batches(batchBytes)) {
          batches++;
          const bytes = batch.ring.bytes;
          assert.deepEqual(bytes, ring.subarray(at, at + bytes.length), `batch ${batches} holds the whole ring's bytes at ${at}`);
          const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
          for (let offset = 0; offset < bytes.length; offset += view.getUint16(offset + 6, true)) {
            assert.equal(batch.fileOffsetOf(offset), whole.fileOffsetOf(at + offset), `file offset of the record at ${at + offset}`);
          }
          at += bytes.length;
        }
        assert.equal(at, ring.length, 'the batches hold every record');
        assert.ok(batches >= 4, `${ring.length} bytes in ${batchBytes}-byte batches make ${batches} batches`);
      } finally {
        stream.close();
      }
    });
  }

  // Open perf.data's read: what onRound is told, in order, is the whole file's ring; perf's rounds let the first of it
  // go while the file is read (g.data), a --overwrite file's (its rings written newest first at the end) as they may,
  // and a file without rounds (pipe mode, where they are not read) is told all of it at the end, in the same order.
  for (const [name, when] of [
    ['g.data', 'early'],
    ['ow.data', 'any'],
    ['pipe.data', 'end'],
  ] as const) {
    it(`${name}: read in steps, the batches told are the whole file's ring in order${when === 'any' ? '' : when === 'early' ? ', the first as a round ends' : ', at the end'}`, async () => {
      const whole = readPerfData(readFileSync(file(name)), file(name));
      const told: Uint8Array[] = [];
      const steps: SteppedStage[] = [];
      let stepsBeforeFirst: number | undefined;
      const stepped = await readPerfDataFileInSteps(
        file(name),
        async (stage) => {
          steps.push(stage);
        },
        {
          onRound: (batch, events) => {
            stepsBeforeFirst ??= steps.length;
            assert.deepEqual(
              events.map((event) => event.name),
              whole.events.map((event) => event.name),
            );
            told.push(batch.ring.bytes);
          },
        },
      );
      assert.equal(stepped.roundsInOrder, true);
      assert.deepEqual(stepped.rings[0].bytes, whole.rings[0].bytes, 'the one ring');
      assert.deepEqual(new Uint8Array(Buffer.concat(told)), whole.rings[0].bytes, 'what was told, joined');
      // Told while the data section was walked (a round's end: index steps follow), or once it was all indexed.
      const indexStepsAfter = steps.slice(stepsBeforeFirst).filter((stage) => stage === 'index').length;
      if (when === 'early') assert.ok(indexStepsAfter > 0, 'told before the whole file was indexed');
      if (when === 'end') assert.equal(indexStepsAfter, 0, 'told once the whole file was indexed');
    });
  }

  it('an empty file, or one cut inside its header, read in steps is a PerfDataError naming it (not a read that waits for bytes)', async () => {
    for (const [name, bytes] of [
      ['empty.data', ''],
      ['cut.data', 'PERFILE2'],
    ] as const) {
      writeFileSync(file(name), bytes);
      await assert.rejects(
        readPerfDataFileInSteps(file(name), async () => {}, { onRound: () => assert.fail('no record to tell') }),
        (error: unknown) => error instanceof PerfDataError && error.message.includes(file(name)) && /too short/.test(error.message),
      );
    }
  });

  it('JSON Lines written batch by batch are the lines of the whole file', () => {
    const whole = readPerfData(readFileSync(file('g.data')), file('g.data'));
    const expected = wholeLines(whole);
    const stream = openPerfDataFile(file('g.data'));
    const lines: string[] = [];
    let batches = 0;
    try {
      const batchLines = new BatchLines(new SnapshotSymbols());
      for (const batch of stream.batches(64 << 10)) {
        batches++;
        const decoded = decodeSnapshot({ events: stream.events, rings: [batch.ring] });
        const jsonl = batchLines.next(decoded);
        for (let row = 0; row < decoded.columns.length; row++) lines.push(jsonl.line(row));
      }
    } finally {
      stream.close();
    }
    assert.ok(batches >= 3, `${batches} batches`);
    assert.ok(expected.filter((line) => line.includes('"callchainSyms":["')).length > 100, 'named callchains to compare');
    assert.equal(lines.length, expected.length);
    for (let i = 0; i < expected.length; i++) assert.equal(lines[i], expected[i], `line ${i}`);
  });

  it('a pprof profile added up batch by batch is the profile of the whole file, byte for byte', () => {
    const whole = readPerfData(readFileSync(file('g.data')), file('g.data'));
    const decoded = decodeSnapshot({ events: whole.events, rings: whole.rings });
    const symbols = new SnapshotSymbols();
    symbols.learn(decoded);
    const tables = new ProfileTables(decoded);
    tables.symbolize((pid, ip, kernel) => symbols.resolveFrame(pid, ip, kernel));
    const wholeProfile = new PprofBuilder();
    wholeProfile.add(tables);
    const expected = wholeProfile.encode();
    const stream = openPerfDataFile(file('g.data'));
    const batched = new PprofBuilder();
    let batches = 0;
    try {
      const batchTables = new BatchTables(new SnapshotSymbols());
      for (const batch of stream.batches(64 << 10)) {
        batches++;
        batched.add(batchTables.next(decodeSnapshot({ events: stream.events, rings: [batch.ring] })).tables);
      }
    } finally {
      stream.close();
    }
    assert.ok(batches >= 3, `${batches} batches`);
    assert.ok(tables.stackCount > 100, `${tables.stackCount} stacks to compare`);
    assert.deepEqual(batched.encode(), expected);
  });
});
