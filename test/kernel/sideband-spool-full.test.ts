// The keeper's side-band spool on a file system that really fills up: a 64 KiB tmpfs, mounted for the test (root).
// Beside the spool's own tests (native/keeper/sideband.test.ts) these need the kernel's mount, so they run here.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { concat } from '../../native/decode/test-records';
import { numbers, record } from '../../native/keeper/test-spool-records';
import { SidebandSpool, readSidebandSpool, sidebandSpoolPath } from '../../native/keeper/sideband';

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
  afterEach(() => {
    for (const name of readdirSync(dir)) unlinkSync(path.join(dir, name));
  });

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
    assert.deepEqual(
      kept,
      Array.from({ length: kept.length }, (_, i) => total - kept.length + i),
      'the newest, without a gap',
    );
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
