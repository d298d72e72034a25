import * as assert from 'node:assert/strict';
import { DecodeError } from './errors';
import { ByteWriter } from './test-records';
import { decodeTracepoint } from './tracepoint';
import type { TracepointField, TracepointFormat } from '../abi/snapshot';

function field(name: string, declaration: string, offset: number, size: number, signed: boolean, extra: Partial<TracepointField> = {}): TracepointField {
  return { name, declaration, offset, size, signed, arrayLength: 0, location: 'inline', isString: false, ...extra };
}

const COMMON = [
  field('common_type', 'unsigned short common_type', 0, 2, false),
  field('common_flags', 'unsigned char common_flags', 2, 1, false),
  field('common_preempt_count', 'unsigned char common_preempt_count', 3, 1, false),
  field('common_pid', 'int common_pid', 4, 4, true),
];

function format(fields: TracepointField[]): TracepointFormat {
  return { system: 'test', name: 'event', id: 1, fields: [...COMMON, ...fields], printFormat: '' };
}

const common = (w: ByteWriter) =>
  w
    .u16(372)
    .u8(1)
    .u8(2)
    .u32(-5 >>> 0);

describe('decode/tracepoint', () => {
  it('decodes sched_switch-like fields: char arrays as strings, signed and unsigned scalars', () => {
    const fmt = format([
      field('prev_comm', 'char prev_comm[16]', 8, 16, false, { arrayLength: 16, isString: true }),
      field('prev_pid', 'pid_t prev_pid', 24, 4, true),
      field('prev_prio', 'int prev_prio', 28, 4, true),
      field('prev_state', 'long prev_state', 32, 8, true),
      field('small', 'u8 small', 40, 1, false),
      field('neg16', 's16 neg16', 42, 2, true),
      field('big', 'u64 big', 48, 8, false),
    ]);
    const comm = new Uint8Array(16);
    comm.set(new TextEncoder().encode('kworker/0:1'));
    comm[12] = 0x41; // garbage after the NUL is ignored
    const raw = common(new ByteWriter())
      .raw(comm)
      .u32(1234)
      .u32(-20 >>> 0)
      .u64(-1n)
      .u8(200)
      .u8(0)
      .u16(0xfffe)
      .u32(0)
      .u64(0xffffffffffffffffn)
      .toBytes();
    assert.deepEqual(decodeTracepoint(fmt, raw), {
      prev_comm: 'kworker/0:1',
      prev_pid: 1234,
      prev_prio: -20,
      prev_state: -1n,
      small: 200,
      neg16: -2,
      big: 0xffffffffffffffffn,
    });
    const withCommon = decodeTracepoint(fmt, raw, true);
    assert.equal(withCommon.common_type, 372);
    assert.equal(withCommon.common_pid, -5);
  });

  it('decodes pointers as hex and fixed numeric arrays element by element', () => {
    const fmt = format([
      field('filename', 'const char * filename', 8, 8, false),
      field('args', 'unsigned long args[3]', 16, 24, false, { arrayLength: 3 }),
      field('deltas', 's32 deltas[2]', 40, 8, true, { arrayLength: 2 }),
    ]);
    const raw = common(new ByteWriter())
      .u64(0x7ffc1234n)
      .u64(1n)
      .u64(2n)
      .u64(3n)
      .u32(-1 >>> 0)
      .u32(7)
      .toBytes();
    assert.deepEqual(decodeTracepoint(fmt, raw), { filename: '0x7ffc1234', args: [1n, 2n, 3n], deltas: [-1, 7] });
  });

  it('decodes __data_loc strings and arrays (offset from the payload start) and __rel_loc (from the field end)', () => {
    const fmt = format([
      field('name', '__data_loc char[] name', 8, 4, false, { location: 'data_loc', isString: true }),
      field('ids', '__data_loc u32[] ids', 12, 4, false, { location: 'data_loc' }),
      field('rel', '__rel_loc char[] rel', 16, 4, false, { location: 'rel_loc', isString: true }),
      field('mask', '__data_loc cpumask_t mask', 20, 4, false, { location: 'data_loc' }),
    ]);
    // payload: common(8) name@8 ids@12 rel@16 mask@20, then data from 24.
    const w = common(new ByteWriter());
    w.u32((6 << 16) | 24); // "eth0\0" + pad -> 6 bytes at 24
    w.u32((8 << 16) | 30); // two u32 at 30
    w.u32((4 << 16) | (38 - 20)); // rel: offset relative to the end of the field (20) -> 38
    w.u32((2 << 16) | 42);
    w.raw(new TextEncoder().encode('eth0')).u8(0).u8(0x55); // 24..29
    w.u32(10).u32(20); // 30..37
    w.raw(new TextEncoder().encode('abc')).u8(0); // 38..41
    w.u8(0x0f).u8(0x01); // 42..43
    const raw = w.toBytes();
    assert.deepEqual(decodeTracepoint(fmt, raw), { name: 'eth0', ids: [10, 20], rel: 'abc', mask: '0x010f' });
  });

  it('throws DecodeError when a field or its dynamic data lies outside the payload', () => {
    const outside = format([field('x', 'int x', 8, 4, true)]);
    assert.throws(() => decodeTracepoint(outside, new Uint8Array(10)), DecodeError);
    const loc = format([field('name', '__data_loc char[] name', 8, 4, false, { location: 'data_loc', isString: true })]);
    const raw = common(new ByteWriter())
      .u32((100 << 16) | 12)
      .toBytes();
    assert.throws(
      () => decodeTracepoint(loc, raw),
      (error: unknown) => error instanceof DecodeError && error.what === 'tracepoint field name',
    );
  });
});
