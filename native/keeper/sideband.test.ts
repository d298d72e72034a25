import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RecordType } from '../abi/uapi';
import { concat, header } from '../decode/test-records';
import { SidebandSpool, readSidebandSpool, sidebandSpoolPath } from './sideband';

/** A 32-byte COMM-typed record whose body is `n`, so every record can be told apart. */
const record = (n: number) => header(RecordType.COMM, 0, 32).u64(n).u64(0).u64(0).toBytes();
const numbers = (bytes: Uint8Array) => Array.from(
  { length: bytes.length / 32 },
  (_, i) => Number(new DataView(bytes.buffer, bytes.byteOffset + i * 32 + 8, 8).getBigUint64(0, true)),
);

describe('keeper side-band spool', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'ringside-spool-')); });
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
    // An append caught half done: the cut record is left out.
    writeFileSync(file, concat([readFileSync(file), record(4).subarray(0, 20)]));
    assert.deepEqual(numbers(readSidebandSpool(file)!.bytes), [1, 2, 3]);
    spool.dispose();
    assert.equal(existsSync(file), false);
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
    // The 11th record crossed the bound of 10: the newest half (6..10) was kept, base moved past
    // the 6 dropped, and the stream goes on from there.
    assert.deepEqual(numbers(read.bytes), [6, 7, 8, 9, 10, 11]);
    assert.equal(read.base, 6n * 32n);
    spool.dispose();
  });
});
