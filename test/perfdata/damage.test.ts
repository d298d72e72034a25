// Bad input: truncated files, seeded random byte mutations and foreign files always end in a
// PerfDataError naming the file and an offset inside it (never another exception, never a hang),
// and keepGoing returns the records read before the damage. A record whose framing is sound but
// whose contents are not (found only by the full decode every output uses) stops `ringside decode`
// naming its offset, or with --keep-going is left out of every output and counted; perf is the
// referee that such a record is damage (perf script cannot parse it either).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeSnapshot, DecodeError, formatRecordJson } from '../../native/decode';
import { RecordType } from '../../native/abi/uapi';
import { DamagedRecordError, decodeChecked, PerfDataError, readPerfData, writePerfData, type PerfDataImport } from '../../native/perfdata';
import type { RawSnapshot } from '../../native/abi/snapshot';
import { fixture, perfOutput, perfRecord, repoRoot, tempDir } from './perf-tools';
import { prng } from '../../native/decode/test-records';

const NAME = 'fuzz.data';

/** Reads; the only acceptable failure is a PerfDataError naming the file and an offset within it. */
function readOrTypedError(bytes: Uint8Array, keepGoing: boolean): PerfDataImport | PerfDataError {
  try {
    return readPerfData(bytes, NAME, { keepGoing });
  } catch (error) {
    assert.ok(error instanceof PerfDataError, `not a PerfDataError: ${(error as Error)?.stack ?? String(error)}`);
    assert.equal(error.file, NAME);
    assert.ok(Number.isInteger(error.offset) && error.offset >= 0 && error.offset <= bytes.length, `offset ${error.offset} within ${bytes.length}`);
    assert.ok(error.message.startsWith(`${NAME}: `) && error.message.endsWith(`, at offset ${error.offset}`), error.message);
    return error;
  }
}

/** The decoder may meet mutated record bytes: it must count anomalies or throw only DecodeError. */
function decodeTolerant(imported: PerfDataImport): void {
  try {
    decodeSnapshot({ events: imported.events, rings: imported.rings });
  } catch (error) {
    assert.ok(error instanceof DecodeError, `decoder threw ${(error as Error)?.stack ?? String(error)}`);
  }
}

const asRaw = (imported: PerfDataImport): PerfDataImport & { raw: RawSnapshot } => ({
  ...imported,
  raw: { events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] },
});

/**
 * What `ringside decode --keep-going` does before writing, and what each output then asks of every
 * record: the JSON line, and the perf.data writer (the HTML page embeds the same record details).
 * Returns the records kept and skipped; anything thrown fails the test.
 */
function decodeEveryOutput(imported: PerfDataImport): { kept: number; skipped: number } {
  const { decoded, skipped } = decodeChecked(asRaw(imported), NAME, { keepGoing: true });
  for (let row = 0; row < decoded.columns.length; row++) formatRecordJson(decoded, row);
  writePerfData(decoded, { synthesized: [], cmdline: ['test'], hostname: 'h', osrelease: 'r', arch: 'x86_64', nrcpus: 2, cpudesc: 'cpu' });
  return { kept: decoded.columns.length, skipped: skipped?.count ?? 0 };
}

function sampleCount(imported: PerfDataImport): number {
  const decoded = decodeSnapshot({ events: imported.events, rings: imported.rings });
  let count = 0;
  for (let row = 0; row < decoded.columns.length; row++) if (decoded.columns.kind[row] === RecordType.SAMPLE) count++;
  return count;
}

describe('perf.data bad input', function () {
  this.timeout(300_000);
  let dir: string;
  let valid: Uint8Array;
  let pristine: PerfDataImport;
  let dataStart: number;
  let dataEnd: number;

  before(() => {
    dir = tempDir();
    const work = fixture('pd_work');
    const file = path.join(dir, 'valid.data');
    perfRecord(file, ['-e', 'syscalls:sys_enter_write', '-e', 'task-clock', '-c', '200000', '-g', '--sample-cpu'], [work, '5', '2000000']);
    valid = readFileSync(file);
    pristine = readPerfData(valid, NAME);
    const view = new DataView(valid.buffer, valid.byteOffset, valid.byteLength);
    dataStart = Number(view.getBigUint64(40, true));
    dataEnd = dataStart + Number(view.getBigUint64(48, true));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Kernel records (type < 64) that end at or before `at`, walking the valid data section by hand. */
  const kernelRecordsBefore = (at: number): number => {
    const view = new DataView(valid.buffer, valid.byteOffset, valid.byteLength);
    let count = 0;
    for (let pos = dataStart; pos + 8 <= dataEnd; pos += view.getUint16(pos + 6, true)) {
      const end = pos + view.getUint16(pos + 6, true);
      if (end > at) break;
      if (view.getUint32(pos, true) < 64) count++;
    }
    return count;
  };

  it('a valid file reads without warnings', () => {
    assert.deepEqual(pristine.warnings, []);
    assert.ok(sampleCount(pristine) > 5);
  });

  it('truncated at every 8th offset through the header and attrs, and 200 seeded offsets after: always PerfDataError', () => {
    const random = prng(0x5eed);
    const offsets = new Set<number>();
    for (let at = 0; at < dataStart + 64; at += 8) offsets.add(at);
    for (let i = 0; i < 200; i++) offsets.add(Math.floor(random() * valid.length));
    for (const at of offsets) {
      const result = readOrTypedError(valid.subarray(0, at), false);
      assert.ok(result instanceof PerfDataError, `truncated at ${at} of ${valid.length} must be reported`);
    }
  });

  it('truncated inside the data section with keepGoing: the records before the cut, and a warning', () => {
    const random = prng(42);
    for (let i = 0; i < 40; i++) {
      const at = dataStart + Math.floor(random() * (dataEnd - dataStart));
      const result = readOrTypedError(valid.subarray(0, at), true);
      assert.ok(!(result instanceof PerfDataError), `keepGoing at ${at}: ${result instanceof PerfDataError ? result.message : ''}`);
      assert.ok(
        result.warnings.some((w) => /runs past the end|ends inside a record header|extends past the end/.test(w) && /, at offset \d+/.test(w)),
        `a warning names the damage: ${result.warnings.join(' | ')}`,
      );
      assert.equal(result.events.length, pristine.events.length, 'events come from the attrs section before the cut');
      // Every whole kernel record before the cut is delivered, none after it.
      const decoded = decodeSnapshot({ events: result.events, rings: result.rings });
      assert.equal(decoded.columns.length, kernelRecordsBefore(at), `records before ${at}`);
    }
  });

  it('cut in the last third of the data section with keepGoing still delivers most samples', () => {
    const at = dataStart + Math.floor(((dataEnd - dataStart) * 2) / 3);
    const result = readOrTypedError(valid.subarray(0, at), true);
    assert.ok(!(result instanceof PerfDataError));
    const kept = sampleCount(result);
    assert.ok(kept > 0 && kept < sampleCount(pristine), `kept ${kept} of ${sampleCount(pristine)}`);
  });

  it('2000 seeded random byte mutations: PerfDataError or a readable result, never another exception', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const random = prng(seed);
      const bytes = Uint8Array.from(valid);
      const flips = 1 + Math.floor(random() * 4);
      // Bias half the mutations into the structural parts (header, attrs, record headers region start).
      for (let i = 0; i < flips; i++) {
        const at = random() < 0.5 ? Math.floor(random() * Math.min(bytes.length, dataStart + 256)) : Math.floor(random() * bytes.length);
        bytes[at] = Math.floor(random() * 256);
      }
      const strict = readOrTypedError(bytes, false);
      if (!(strict instanceof PerfDataError)) decodeTolerant(strict);
      const lenient = readOrTypedError(bytes, true);
      if (!(lenient instanceof PerfDataError)) {
        decodeTolerant(lenient);
        decodeEveryOutput(lenient);
      }
    }
  });

  /** SAMPLE records of the valid file: [offset, size]. */
  const sampleRecords = (): [number, number][] => {
    const view = new DataView(valid.buffer, valid.byteOffset, valid.byteLength);
    const found: [number, number][] = [];
    for (let pos = dataStart; pos < dataEnd; pos += view.getUint16(pos + 6, true)) {
      if (view.getUint32(pos, true) === RecordType.SAMPLE) found.push([pos, view.getUint16(pos + 6, true)]);
    }
    return found;
  };

  /** Samples perf script prints, and whether it complained on stderr. */
  const perfReads = (file: string): { samples: number; complaint: string } => {
    const run = perfOutput(['script', '-i', file, '-F', 'event,ip']);
    return { samples: run.stdout.split('\n').filter((line) => /task-clock|sys_enter_write/.test(line)).length, complaint: run.stderr.trim() };
  };

  it('2000 seeded mutations inside sample bodies: kept + skipped is every record, and what is skipped perf cannot read either', () => {
    const samples = sampleRecords();
    const allRecords = pristine.rings[0].validBytes > 0 ? decodeSnapshot({ events: pristine.events, rings: pristine.rings }).columns.length : 0;
    const perfValid = perfReads(path.join(dir, 'valid.data'));
    assert.equal(perfValid.samples, samples.length, 'perf reads every sample of the valid file');
    let damaged = 0;
    let refereed = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const random = prng(seed);
      const bytes = Uint8Array.from(valid);
      const flips = 1 + Math.floor(random() * 3);
      for (let i = 0; i < flips; i++) {
        const [at, size] = samples[Math.floor(random() * samples.length)];
        bytes[at + 8 + Math.floor(random() * (size - 8))] = Math.floor(random() * 256);
      }
      // The headers are untouched: the reader walks every record; only the full decode can find damage.
      const imported = readPerfData(bytes, NAME, { keepGoing: true });
      const { kept, skipped } = decodeEveryOutput(imported);
      assert.equal(kept + skipped, allRecords, `seed ${seed}: ${kept} kept + ${skipped} skipped`);
      if (skipped === 0) continue;
      damaged++;
      // Without keepGoing: the typed error naming the file, the record and the field inside it.
      assert.throws(
        () => decodeChecked(asRaw(imported), NAME, { keepGoing: false }),
        (error: unknown) => {
          assert.ok(error instanceof DamagedRecordError, String(error));
          assert.ok(
            samples.some(([at]) => at === error.recordOffset),
            `record offset ${error.recordOffset} is a sample's`,
          );
          assert.ok(
            error.offset >= error.recordOffset && error.message.startsWith(`${NAME}: damaged record at offset ${error.recordOffset}: cannot decode SAMPLE.`),
            error.message,
          );
          return true;
        },
      );
      // perf as referee (on the first 40: a perf run each): it stops at a record it cannot parse, so it
      // complains and prints fewer samples than the valid file has.
      if (refereed < 40) {
        refereed++;
        const file = path.join(dir, 'mutated.data');
        writeFileSync(file, bytes);
        const perf = perfReads(file);
        assert.ok(perf.samples < perfValid.samples, `seed ${seed}: perf read all ${perf.samples} samples of a file where ringside skipped ${skipped}`);
      }
    }
    // The per-record path must really be exercised (the issue: 599 of 14,000 mutations hit it).
    assert.ok(damaged >= 50, `${damaged} of 2000 mutations damaged a record`);
    assert.equal(refereed, 40);
  });

  it('ringside decode: a damaged record stops it naming file, offsets and --keep-going; with --keep-going every output leaves it out and says so', () => {
    const cli = path.join(repoRoot, 'dist/cli.js');
    assert.ok(existsSync(cli), 'dist/cli.js is built by npm test (npm run build)');
    // A count far beyond its sample (the first u64 of the sample's body that the decoder reads as one,
    // the callchain's nr here): the damage perf reports as "Can't parse sample".
    const damagedAt = (offset: number, word: number): Uint8Array => {
      const bytes = Uint8Array.from(valid);
      new DataView(bytes.buffer).setBigUint64(offset + 8 + word * 8, 0xdeadn, true);
      return bytes;
    };
    const candidates = sampleRecords().flatMap(([offset, size]) => Array.from({ length: (size - 8) / 8 }, (_, word) => [offset, word] as const));
    const [at, word] =
      candidates.find(([offset, w]) => {
        try {
          decodeChecked(asRaw(readPerfData(damagedAt(offset, w), NAME)), NAME, { keepGoing: false });
          return false;
        } catch (error) {
          return error instanceof DamagedRecordError;
        }
      }) ?? assert.fail('no u64 of any sample whose damage the full decode finds');
    const damagedFile = path.join(dir, 'damaged.data');
    writeFileSync(damagedFile, damagedAt(at, word));
    const ringside = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const total = decodeSnapshot({ events: pristine.events, rings: pristine.rings }).columns.length;
    for (const ext of ['jsonl', 'data', 'html']) {
      const out = path.join(dir, `out.${ext}`);
      rmSync(out, { force: true });
      const strict = ringside(['decode', damagedFile, '-o', out]);
      assert.equal(strict.status, 1, strict.stderr);
      assert.match(
        strict.stderr,
        new RegExp(`^ringside: ${damagedFile}: damaged record at offset ${at}: cannot decode .*, at offset \\d+ \\(.*--keep-going`),
        strict.stderr,
      );
      assert.ok(!existsSync(out), `no ${ext} output is left behind by a decode that failed`);
      const lenient = ringside(['decode', damagedFile, '-o', out, '--keep-going']);
      assert.equal(lenient.status, 0, lenient.stderr);
      assert.match(lenient.stderr, new RegExp(`: ${total - 1} records, skipped 1 damaged record \\(the first at offset ${at}: cannot decode `), lenient.stderr);
      const text = readFileSync(out, 'utf8');
      if (ext === 'jsonl') assert.equal(text.split('\n').filter(Boolean).length, total - 1, 'every record but the damaged one');
      if (ext === 'html') assert.ok(text.includes(`skipped 1 damaged record (the first at offset ${at}`), 'the page says what was left out');
      if (ext === 'data') {
        // perf reads the rewritten file whole: every sample but the damaged one, without complaint.
        const perf = perfReads(out);
        assert.equal(perf.samples, sampleRecords().length - 1, perf.complaint);
      }
    }
  });

  it('a record size of 0 in the data section is damage at that record, not a hang', () => {
    const bytes = Uint8Array.from(valid);
    new DataView(bytes.buffer).setUint16(dataStart + 6, 0, true);
    const error = readOrTypedError(bytes, false);
    assert.ok(error instanceof PerfDataError);
    assert.equal(error.offset, dataStart);
    assert.match(error.message, /size 0, smaller than its header/);
  });

  it('foreign files: an ELF, text, empty, and big-endian magic get clear PerfDataErrors', () => {
    const elf = readFileSync(fixture('pd_work'));
    const cases: [Uint8Array, RegExp][] = [
      [elf, /not a perf\.data file: magic is 7f454c46/],
      [new TextEncoder().encode('hello, this is not perf data at all\n'), /not a perf\.data file: magic is "hello, t"/],
      [new Uint8Array(0), /too short for a perf\.data header/],
      [Uint8Array.from(valid.subarray(0, 8)).reverse(), /too short/],
      [
        (() => {
          const b = Uint8Array.from(valid);
          b.set(valid.subarray(0, 8).slice().reverse(), 0);
          return b;
        })(),
        /big-endian perf\.data files are not supported/,
      ],
      [new TextEncoder().encode('PERFFILE' + '\0'.repeat(200)), /old version-1 perf\.data file/],
    ];
    for (const [bytes, message] of cases) {
      const error = readOrTypedError(bytes, true);
      assert.ok(error instanceof PerfDataError, `expected an error for ${message}`);
      assert.match(error.message, message);
      assert.equal(error.offset, 0);
    }
  });
});
