// Synthetic unit tests of the pure parts of the ring and procfs code (the real-kernel tests are
// in test/kernel/): backward head arithmetic, the spare copy buffer's hand-over, /proc parsing, and
// load bases from MMAP2 bytes.
import assert from 'node:assert/strict';
import { backwardBytesWritten } from './backward-ring';
import { SpareBufferWarmer, SpareCopyBuffer } from './spare-buffer';
import { plainCopyBuffer, type CopyAllocator } from '../abi/snapshot';
import { parseCpuList, toProcessMapping } from './procfs';
import { parseProcMaps } from '../sys/procmaps';
import { loadBaseFromSideband } from './load-base';
import { RecordType } from '../abi/uapi';
import type { RingCopy } from '../abi/snapshot';

function mmap2Record(pid: number, addr: bigint, pgoff: bigint, name: string): Uint8Array {
  const nameBytes = Buffer.from(`${name}\0`);
  const size = 72 + Math.ceil(nameBytes.length / 8) * 8;
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, RecordType.MMAP2, true);
  view.setUint16(6, size, true);
  view.setUint32(8, pid, true);
  view.setUint32(12, pid, true);
  view.setBigUint64(16, addr, true);
  view.setBigUint64(24, 0x1000n, true);
  view.setBigUint64(32, pgoff, true);
  bytes.set(nameBytes, 72);
  return bytes;
}

function copyOf(records: Uint8Array[], extra = 0): RingCopy {
  const length = records.reduce((sum, r) => sum + r.length, 0);
  const bytes = new Uint8Array(length + extra);
  let offset = 0;
  for (const record of records) {
    bytes.set(record, offset);
    offset += record.length;
  }
  return {
    ringId: 0,
    label: 't',
    cpu: 0,
    tid: 1,
    direction: 'forward',
    defaultEvent: 0,
    bytes,
    validBytes: length + extra,
    dataSize: bytes.length,
    bytesWritten: BigInt(length),
    path: 'paused',
  };
}

describe('ring arithmetic and procfs parsing (synthetic)', () => {
  it('turns a backward head into bytes written', () => {
    assert.equal(backwardBytesWritten(0n), 0n);
    assert.equal(backwardBytesWritten((1n << 64n) - 56n), 56n);
    assert.equal(backwardBytesWritten(1n), (1n << 64n) - 1n);
  });

  it('warms the spare copy buffer in slices and hands each buffer out once', () => {
    const spare = new SpareCopyBuffer(10 * 4096);
    assert.equal(spare.ready, false);
    assert.equal(spare.warm(4 * 4096), false);
    assert.equal(spare.warm(4 * 4096), false);
    assert.equal(spare.warm(4 * 4096), true, 'three slices of 4 pages cover 10 pages');
    const first = spare.take();
    assert.equal(first.length, 10 * 4096);
    assert.equal(spare.ready, false, 'taking empties the spare');
    first.fill(7);
    const second = spare.take();
    assert.notEqual(second.buffer, first.buffer, 'a taken buffer is never handed out again');
    assert.equal(second[0], 0);
    spare.warm();
    assert.equal(spare.ready, true);
    spare.release();
    assert.equal(spare.ready, false);
    assert.ok(
      first.every((b) => b === 7),
      "the first snapshot's bytes were never touched again",
    );
  });

  it('faults the spare in on another thread, so writing it afterwards takes (nearly) no page faults here', async () => {
    const pages = 4096;
    const spare = new SpareCopyBuffer(pages * 4096);
    assert.equal(await spare.warmOffThread(), 'warm');
    assert.equal(spare.ready, true);
    const bytes = spare.take();
    const before = process.resourceUsage().minorPageFault;
    for (let at = 0; at < bytes.length; at += 4096) bytes[at] = 1;
    const faults = process.resourceUsage().minorPageFault - before;
    // Untouched, every page faults here; the few left are other threads' of this process.
    assert.ok(faults < pages / 4, `${faults} page faults writing ${pages} pages the kernel faulted in`);
  });

  it('never marks warm a spare a snapshot took while the kernel was faulting it in', async () => {
    const spare = new SpareCopyBuffer(256 * 4096);
    const warming = spare.warmOffThread();
    const taken = spare.take();
    assert.equal(await warming, 'taken');
    assert.equal(spare.ready, false, 'the next spare is a new buffer, not yet warm');
    assert.equal(taken.length, 256 * 4096);
  });

  it('warms spares only once the event loop is idle, then all of them', async () => {
    const allocatedAt: number[] = [];
    const allocate: CopyAllocator = (bytes, shared, previous) => {
      allocatedAt.push(performance.now());
      return plainCopyBuffer(bytes, shared, previous);
    };
    // One spare small enough to be faulted in here, one faulted in on another thread.
    const rings = [{ spare: new SpareCopyBuffer(64 * 4096, false, allocate) }, { spare: new SpareCopyBuffer(4 << 20, false, allocate) }];
    const warmer = new SpareBufferWarmer(() => rings);
    try {
      warmer.schedule();
      // The loop kept busy by short callbacks (timers still run between them), as a decode and its output keep it.
      let busyUntil = 0;
      await new Promise<void>((resolve) => {
        let left = 40;
        const work = () => {
          const until = performance.now() + 3;
          while (performance.now() < until);
          busyUntil = performance.now();
          if (--left > 0) setImmediate(work);
          else resolve();
        };
        setImmediate(work);
      });
      assert.deepEqual(allocatedAt, [], 'nothing warmed while the loop was busy');
      await warmer.whenWarm();
      assert.ok(
        rings.every((ring) => ring.spare.ready),
        'every spare warm',
      );
      assert.ok(allocatedAt.length === 2 && allocatedAt[0] >= busyUntil);
    } finally {
      warmer.dispose();
    }
  });

  it('parses CPU lists and maps lines', () => {
    assert.deepEqual(parseCpuList('0'), [0]);
    assert.deepEqual(parseCpuList('0-1,3'), [0, 1, 3]);
    const [mapping] = parseProcMaps('555555554000-555555555000 r--p 00001000 fd:00 42 /usr/bin/x y\n').map(toProcessMapping);
    assert.deepEqual(mapping, { start: 0x555555554000n, end: 0x555555555000n, perms: 'r--p', pgoff: 0x1000n, inode: 42, path: '/usr/bin/x y' });
  });

  it('parses only the executable mappings when asked, as the full parse filtered would give them', () => {
    const text = [
      '555555554000-555555555000 r--p 00000000 fd:00 42 /usr/bin/prog',
      '555555555000-555555556000 r-xp 00001000 fd:00 42 /usr/bin/prog',
      '555555556000-555555557000 rw-p 00000000 00:00 0 [heap]',
      '7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0 [vdso]',
      '7ffff7fc3000-7ffff7fc5000 rwxp 00000000 00:00 0 ',
      '',
    ].join('\n');
    const executable = parseProcMaps(text, { executableOnly: true });
    assert.deepEqual(
      executable,
      parseProcMaps(text).filter((entry) => entry.perms[2] === 'x'),
    );
    assert.deepEqual(
      executable.map((entry) => entry.path),
      ['/usr/bin/prog', '[vdso]', ''],
    );
  });

  it('finds the load base in MMAP2 records, lowest file offset first, and stops at a bad size', () => {
    const copy = copyOf([
      mmap2Record(7, 0x555555556000n, 0x2000n, '/bin/prog'),
      mmap2Record(7, 0x555555555000n, 0x1000n, '/bin/prog'),
      mmap2Record(8, 0x400000n, 0n, '/bin/prog'),
      mmap2Record(7, 0x7ffff7000000n, 0n, '/lib/libc.so.6'),
    ]);
    assert.equal(loadBaseFromSideband([copy], 7, '/bin/prog'), 0x555555554000n);
    assert.equal(loadBaseFromSideband([copy], 9, '/bin/prog'), null);
    const truncated = copyOf([mmap2Record(7, 0x401000n, 0x1000n, '/bin/prog')]);
    new DataView(truncated.bytes.buffer).setUint16(6, 4, true);
    assert.equal(loadBaseFromSideband([truncated], 7, '/bin/prog'), null);
  });
});
