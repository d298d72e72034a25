// Bad input: truncated files, seeded random byte mutations and foreign files always end in a
// PerfDataError naming the file and an offset inside it (never another exception, never a hang),
// and keepGoing returns the records read before the damage.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { decodeSnapshot, DecodeError } from '../../native/decode';
import { RecordType } from '../../native/abi/uapi';
import { PerfDataError, readPerfData, type PerfDataImport } from '../../native/perfdata';
import { fixture, perfRecord, tempDir } from './perf-tools';
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
      assert.ok(result.warnings.some((w) => /runs past the end|ends inside a record header|extends past the end/.test(w) && /, at offset \d+/.test(w)), `a warning names the damage: ${result.warnings.join(' | ')}`);
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
      if (!(lenient instanceof PerfDataError)) decodeTolerant(lenient);
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
      [(() => {
        const b = Uint8Array.from(valid);
        b.set(valid.subarray(0, 8).slice().reverse(), 0);
        return b;
      })(), /big-endian perf\.data files are not supported/],
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
