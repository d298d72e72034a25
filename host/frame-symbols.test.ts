import * as assert from 'node:assert/strict';
import { decodeSnapshot } from '../native/decode/columns';
import { attrOf, ByteWriter, eventOf, ringFromRecords, sampleRecord } from '../native/decode/test-records';
import { Misc, Sample } from '../native/abi/uapi';
import { validateHostToWebview } from '../shared/validate';
import { FrameSymbols } from './frame-symbols';
import { rowDetails, snapshotToWire } from './wire';

const KERNEL_CONTEXT = 0xffffffffffffff80n;
const USER_CONTEXT = 0xfffffffffffffe00n;

describe('host symbol table (FrameSymbols)', () => {
  it('resolves each (process, address) once and interns each name once', () => {
    const asked: string[] = [];
    const table = new FrameSymbols(
      (pid, ip, kernel) => {
        asked.push(`${kernel ? 'k' : pid}:${ip.toString(16)}`);
        return ip < 0x500000n ? `fn_${ip >> 8n}+0x${(ip & 0xffn).toString(16)}` : undefined;
      },
      (_pid, ip) => ({ file: '/src/a.c', line: Number(ip & 0xffn) }),
    );
    for (let i = 0; i < 3; i++) {
      table.resolve(1, 0x401010n, false);
      table.resolve(2, 0x401010n, false);
      table.resolve(1, 0x401010n, true);
      table.resolve(1, 0x600000n, false);
    }
    assert.deepEqual(asked, ['1:401010', '2:401010', 'k:401010', '1:600000'], 'one symbolizer call per distinct (owner, address)');
    assert.equal(table.addressCount, 4);
    assert.deepEqual(table.strings, ['fn_16400+0x10'], 'one string for the three addresses with the same name');
    assert.deepEqual(table.resolve(1, 0x401010n, false), { name: 0, file: '/src/a.c', line: 0x10 });
    assert.deepEqual(table.resolve(1, 0x401010n, true), { name: 0 }, 'kernel addresses get no source line');
    assert.deepEqual(table.resolve(1, 0x600000n, false), { name: -1, file: '/src/a.c', line: 0 }, 'a line without a symbol still reveals');
    assert.equal(table.nameOf(1, 0x600000n, false), undefined);
    table.forgetAddresses();
    table.resolve(1, 0x401010n, false);
    assert.equal(asked.length, 5, 'after new mappings an address is asked again');
    assert.deepEqual(table.strings, ['fn_16400+0x10'], 'and interned names keep their index');
  });

  it('nameOf names an address without its source line (JSON Lines needs none); resolve looks the line up later without naming it again', () => {
    const asked: string[] = [];
    const table = new FrameSymbols(
      (pid, ip) => {
        asked.push(`name ${pid}:${ip.toString(16)}`);
        return ip < 0x500000n ? 'fn+0x10' : undefined;
      },
      (pid, ip) => {
        asked.push(`line ${pid}:${ip.toString(16)}`);
        return { file: '/src/a.c', line: 7 };
      },
    );
    for (let i = 0; i < 3; i++) {
      assert.equal(table.nameOf(1, 0x401010n, false), 'fn+0x10');
      assert.equal(table.nameOf(1, 0x600000n, false), undefined);
    }
    assert.deepEqual(asked, ['name 1:401010', 'name 1:600000']);
    assert.equal(table.addressCount, 2);
    assert.deepEqual(table.resolve(1, 0x401010n, false), { name: 0, file: '/src/a.c', line: 7 });
    assert.equal(table.nameOf(1, 0x401010n, false), 'fn+0x10');
    assert.deepEqual(asked, ['name 1:401010', 'name 1:600000', 'line 1:401010'], 'the line once, the name not again');
    assert.equal(table.addressCount, 2);
    table.forgetAddresses();
    table.nameOf(1, 0x401010n, false);
    assert.equal(asked.length, 4, 'after new mappings an address is named again');
  });

  it('lineOf places a user address without naming it, once; an address resolved before answers from its resolution', () => {
    const asked: string[] = [];
    const table = new FrameSymbols(
      (pid, ip) => {
        asked.push(`name ${pid}:${ip.toString(16)}`);
        return 'fn+0x0';
      },
      (pid, ip) => {
        asked.push(`line ${pid}:${ip.toString(16)}`);
        return ip === 0x401000n ? { file: '/src/a.c', line: 3 } : undefined;
      },
    );
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(table.lineOf(1, 0x401000n), { file: '/src/a.c', line: 3 });
      assert.equal(table.lineOf(1, 0x402000n), undefined);
    }
    assert.deepEqual(asked, ['line 1:401000', 'line 1:402000'], 'no name looked up, each line once');
    assert.deepEqual(table.resolve(1, 0x403000n, false), { name: 0 });
    assert.equal(table.lineOf(1, 0x403000n), undefined);
    assert.deepEqual(asked, ['line 1:401000', 'line 1:402000', 'name 1:403000', 'line 1:403000'], 'a resolved address is not placed again');
    table.forgetAddresses();
    table.lineOf(1, 0x401000n);
    assert.equal(asked.length, 5, 'after new mappings an address is placed again');
  });

  it('a snapshot names each distinct frame once across records; details carry their own string table and mark kernel frames', () => {
    const type = Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN;
    const chain = (ips: bigint[]) => {
      const w = new ByteWriter().u64(BigInt(ips.length));
      for (const ip of ips) w.u64(ip);
      return w.toBytes();
    };
    const frames = [KERNEL_CONTEXT, 0xffffffff81001234n, USER_CONTEXT, 0x401020n, 0x401180n];
    const records = Array.from({ length: 50 }, (_, i) =>
      sampleRecord(type, { ip: 0xffffffff81001234n, pid: 7, tid: 7, time: BigInt(100 + i), tail: chain(frames) }, Misc.KERNEL),
    );
    const decoded = decodeSnapshot({ events: [eventOf(0, attrOf(type), [], 'task-clock')], rings: [ringFromRecords(records, 1 << 16, 'backward')] });
    let calls = 0;
    // Kernel symbols unreadable (kallsyms hidden): kernel addresses have no name.
    const table = new FrameSymbols(
      (_pid, ip, kernel) => {
        calls++;
        return kernel ? undefined : ip === 0x401020n ? 'hot_loop+0x20' : 'main+0x80';
      },
      (_pid, ip) => (ip === 0x401020n ? { file: '/demo/loops.c', line: 12 } : undefined),
    );
    snapshotToWire(decoded, { snapshotId: 's', name: 'S', takenAtMs: 1, symbols: table });
    for (let row = 0; row < decoded.columns.length; row++) {
      const details = rowDetails(decoded, row, table);
      assert.deepEqual(details.callchain, [
        { ip: '0xffffffff81001234', kernel: true },
        { ip: '0x401020', symbol: 0, file: '/demo/loops.c', line: 12 },
        { ip: '0x401180', symbol: 1 },
      ]);
      assert.deepEqual(details.symbols, ['hot_loop+0x20', 'main+0x80']);
      const valid = validateHostToWebview({ type: 'detailsReply', replyTo: 1, snapshotId: 's', row, details });
      assert.ok(valid.ok, valid.ok ? '' : valid.reason);
    }
    assert.equal(calls, 3, '50 records × 3 frames, 3 distinct addresses (the entries of hot_loop and main are placed for their source lines, not named)');
  });
});
