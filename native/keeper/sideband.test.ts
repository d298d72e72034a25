import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { concat } from '../decode/test-records';
import { numbers, record } from './test-spool-records';
import { SidebandSpool, readSidebandSpool, sidebandSpoolPath } from './sideband';

describe('keeper side-band spool', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-spool-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('appends drained chunks at their stream positions and reads back whole records only', () => {
    const file = sidebandSpoolPath(42, 3, dir);
    assert.equal(path.basename(file), 'keeper-42.sideband-3');
    const spool = new SidebandSpool(file);
    assert.equal(readSidebandSpool(file), null);
    spool.append(0n, concat([record(1), record(2)]));
    spool.append(64n, new Uint8Array(0));
    spool.append(64n, record(3));
    const read = readSidebandSpool(file)!;
    assert.equal(read.base, 0n);
    assert.deepEqual(numbers(read.bytes), [1, 2, 3]);
    // One segment so far, `<spool>.1`; an append caught half done: the cut record is left out.
    assert.deepEqual(readdirSync(dir), ['keeper-42.sideband-3.1']);
    writeFileSync(`${file}.1`, concat([readFileSync(`${file}.1`), record(4).subarray(0, 20)]));
    assert.deepEqual(numbers(readSidebandSpool(file)!.bytes), [1, 2, 3]);
    spool.dispose();
    assert.deepEqual(readdirSync(dir), []);
    spool.dispose();
  });

  it('starts over where a stream does not continue it, and drops the oldest records past its bound', () => {
    const file = sidebandSpoolPath(1, 0, dir);
    const spool = new SidebandSpool(file, 10 * 32);
    spool.append(320n, record(10));
    assert.equal(readSidebandSpool(file)!.base, 320n);
    spool.append(0n, record(0));
    assert.equal(readSidebandSpool(file)!.base, 0n, 'a new stream replaces the spool');
    for (let n = 1; n < 12; n++) spool.append(BigInt(n * 32), record(n));
    const read = readSidebandSpool(file)!;
    // Segments of half the bound (5 records): 0..4, 5..9, 10..11. The third dropped the first
    // whole, base moved past it, and the stream goes on from there; no file was rewritten.
    assert.deepEqual(numbers(read.bytes), [5, 6, 7, 8, 9, 10, 11]);
    assert.equal(read.base, 5n * 32n);
    assert.equal(readdirSync(dir).length, 2, readdirSync(dir).join(' '));
    spool.dispose();
  });

  it('reads the newest run of segments that continue one another', () => {
    const file = sidebandSpoolPath(7, 1, dir);
    const spool = new SidebandSpool(file, 4 * 32);
    for (let n = 0; n < 5; n++) spool.append(BigInt(n * 32), record(n));
    assert.deepEqual(numbers(readSidebandSpool(file)!.bytes), [2, 3, 4]);
    // A segment a reader caught before its last append (as if it was rotated away mid-read) no
    // longer reaches the next one's base: only the newest segment counts.
    const segments = readdirSync(dir).sort();
    const older = path.join(dir, segments[0]);
    writeFileSync(older, readFileSync(older).subarray(0, 32 + 32)); // the header and one record
    const read = readSidebandSpool(file)!;
    assert.deepEqual(numbers(read.bytes), [4]);
    assert.equal(read.base, 4n * 32n);
    spool.dispose();
  });
});
