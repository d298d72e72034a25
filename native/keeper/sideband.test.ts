import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
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

describe('keeper side-band spool on a full file system (a small tmpfs)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-spool-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'ringside-spool-test', dir]);
  });
  after(() => {
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => { for (const name of readdirSync(dir)) unlinkSync(path.join(dir, name)); });

  /** Fills what is left of the file system, so the next write fails with ENOSPC. */
  const fill = () => {
    const free = statfsSync(dir);
    writeFileSync(path.join(dir, 'filler'), new Uint8Array(Number(free.bavail) * free.bsize));
  };

  it('out of space, drops its oldest records to keep the newest, and counts every record it dropped', () => {
    const file = sidebandSpoolPath(9, 0, dir);
    const spool = new SidebandSpool(file);
    const total = 4096; // 128 KiB of records: twice what the file system holds
    for (let n = 0; n < total; n++) spool.append(BigInt(n * 32), record(n));
    const read = readSidebandSpool(file)!;
    const kept = numbers(read.bytes);
    assert.ok(kept.length > 0 && kept.length < total, `${kept.length} records kept`);
    assert.deepEqual(kept, Array.from({ length: kept.length }, (_, i) => total - kept.length + i), 'the newest, without a gap');
    assert.equal(read.unspooled?.error, 'ENOSPC');
    assert.equal(read.unspooled?.records, BigInt(total - kept.length), 'every record not kept is counted');
    assert.equal(read.unspooled?.bytes, read.base);
    assert.equal(read.droppedBytes, 0n, 'nothing counted as dropped to the bound');
    assert.equal(read.end, BigInt(total * 32));
    assert.deepEqual(spool.unspooled, read.unspooled);
  });

  it('a chunk larger than the whole file system is counted as lost, after its older records made way in vain', () => {
    const file = sidebandSpoolPath(9, 2, dir);
    const spool = new SidebandSpool(file);
    spool.append(0n, concat([record(0), record(1)]));
    const huge = concat(Array.from({ length: 4096 }, (_, n) => record(2 + n)));
    assert.throws(() => spool.append(64n, huge), /ENOSPC/);
    assert.deepEqual(spool.unspooled, { records: 4096n + 2n, bytes: 64n + 4096n * 32n, error: 'ENOSPC' });
    spool.append(64n + 4096n * 32n, record(4098));
    const read = readSidebandSpool(file)!;
    assert.deepEqual(numbers(read.bytes), [4098]);
    assert.equal(read.unspooled?.records, 4098n);
    spool.dispose();
  });

  it('a chunk no room can be made for is counted, and an empty drain publishes the loss once there is room', () => {
    const file = sidebandSpoolPath(9, 1, dir);
    const spool = new SidebandSpool(file);
    fill();
    assert.throws(() => spool.append(0n, concat([record(0), record(1)])), /ENOSPC/);
    assert.deepEqual(spool.unspooled, { records: 2n, bytes: 64n, error: 'ENOSPC' });
    assert.equal(readSidebandSpool(file), null, 'nothing written');
    unlinkSync(path.join(dir, 'filler'));
    spool.append(64n, new Uint8Array(0));
    const read = readSidebandSpool(file)!;
    assert.equal(read.end, 64n, 'the spool reaches past the lost records');
    assert.equal(read.bytes.length, 0);
    assert.deepEqual(read.unspooled, { records: 2n, bytes: 64n, error: 'ENOSPC' });
    spool.append(64n, record(2));
    assert.deepEqual(numbers(readSidebandSpool(file)!.bytes), [2]);
    spool.dispose();
  });
});
