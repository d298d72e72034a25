// tracefs on the real kernel: every format file of events/sched and events/syscalls parses,
// plus a seeded random sample from all systems, and the event set matches what perf lists.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TracepointFormat } from '../../native/abi/snapshot';
import {
  chooseTracefsRoot,
  findTracefs,
  listSystemEvents,
  listSystems,
  listTracepoints,
  readTracepointFormat,
  readTracepointId,
  TracefsError,
} from '../../native/specs/tracefs';
import { TRACEFS_DEBUGFS, TRACEFS_PRIMARY } from '../../native/sys/access';

function checkSane(format: TracepointFormat, where: string): void {
  assert.ok(format.fields.length >= 4, `${where}: has common fields`);
  assert.deepEqual(
    format.fields.slice(0, 4).map((field) => field.name),
    ['common_type', 'common_flags', 'common_preempt_count', 'common_pid'],
    where,
  );
  assert.equal(format.fields[0].offset, 0, where);
  assert.equal(format.fields[0].size, 2, where);
  let end = 0;
  for (const field of format.fields) {
    assert.ok(field.size > 0 && field.size <= 4096, `${where}.${field.name}: size ${field.size}`);
    assert.ok(field.offset >= end, `${where}.${field.name}: offset ${field.offset} overlaps the previous field ending at ${end}`);
    end = field.offset + field.size;
    if (field.location !== 'inline') assert.equal(field.size, 4, `${where}.${field.name}: dynamic fields are u32`);
    if (field.arrayLength > 0 && field.isString) assert.equal(field.arrayLength, field.size, `${where}.${field.name}: char[N] is N bytes`);
    assert.match(field.name, /^[A-Za-z_][A-Za-z0-9_]*$/, where);
  }
  assert.ok(end <= 65536, where);
}

/** Small deterministic PRNG so the "random" sample is the same on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('specs/tracefs (real kernel)', () => {
  let root: string;
  before(() => {
    root = findTracefs();
  });

  it('finds the mounted tracefs', () => {
    assert.equal(root, TRACEFS_PRIMARY);
    const mounts = readFileSync('/proc/mounts', 'utf8');
    assert.ok(mounts.split('\n').some((line) => line.split(' ')[1] === root && line.split(' ')[2] === 'tracefs'));
  });

  it('chooses the tracefs mount point from /proc/mounts text', () => {
    const line = (point: string, type: string) => `nodev ${point} ${type} rw,relatime 0 0`;
    assert.equal(chooseTracefsRoot([line('/proc', 'proc'), line(TRACEFS_PRIMARY, 'tracefs')].join('\n'), true), TRACEFS_PRIMARY);
    assert.equal(chooseTracefsRoot([line(TRACEFS_DEBUGFS, 'tracefs'), line('/mnt/t', 'tracefs')].join('\n'), false), TRACEFS_DEBUGFS);
    assert.equal(chooseTracefsRoot(line('/mnt/my\\040trace', 'tracefs'), false), '/mnt/my trace');
    assert.equal(chooseTracefsRoot(line('/sys/kernel/debug', 'debugfs'), true), TRACEFS_DEBUGFS);
    assert.equal(chooseTracefsRoot(line('/sys/kernel/debug', 'debugfs'), false), undefined);
  });

  it('refuses a directory that is not tracefs with a typed error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringside-notrace-'));
    try {
      assert.throws(
        () => findTracefs({ root: dir }),
        (error: unknown) => error instanceof TracefsError && /not a tracefs directory/.test(error.message),
      );
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('parses syscalls:sys_enter_openat exactly', () => {
    const format = readTracepointFormat(root, 'syscalls', 'sys_enter_openat');
    assert.equal(format.system, 'syscalls');
    assert.equal(format.name, 'sys_enter_openat');
    assert.equal(format.id, Number(readFileSync(join(root, 'events/syscalls/sys_enter_openat/id'), 'utf8')));
    assert.deepEqual(
      format.fields.slice(4).map((field) => [field.name, field.declaration, field.offset, field.size, field.signed]),
      [
        ['__syscall_nr', 'int __syscall_nr', 8, 4, true],
        ['dfd', 'int dfd', 16, 8, false],
        ['filename', 'const char * filename', 24, 8, false],
        ['flags', 'int flags', 32, 8, false],
        ['mode', 'umode_t mode', 40, 8, false],
      ],
    );
    assert.match(format.printFormat, /^"dfd: 0x%08lx, filename: 0x%08lx/);
  });

  it('parses sched:sched_switch exactly', () => {
    const format = readTracepointFormat(root, 'sched', 'sched_switch');
    const own = format.fields.slice(4).map((field) => [field.name, field.offset, field.size, field.signed, field.arrayLength, field.isString]);
    assert.deepEqual(own, [
      ['prev_comm', 8, 16, false, 16, true],
      ['prev_pid', 24, 4, true, 0, false],
      ['prev_prio', 28, 4, true, 0, false],
      ['prev_state', 32, 8, true, 0, false],
      ['next_comm', 40, 16, false, 16, true],
      ['next_pid', 56, 4, true, 0, false],
      ['next_prio', 60, 4, true, 0, false],
    ]);
    assert.equal(format.id, readTracepointId(root, 'sched', 'sched_switch'));
  });

  it('parses every format in events/sched and events/syscalls, and recognises __data_loc', () => {
    let parsed = 0;
    let dataLoc = 0;
    for (const system of ['sched', 'syscalls']) {
      for (const name of listSystemEvents(root, system)) {
        const format = readTracepointFormat(root, system, name);
        checkSane(format, `${system}:${name}`);
        dataLoc += format.fields.filter((field) => field.location === 'data_loc').length;
        parsed++;
      }
    }
    assert.ok(parsed > 100, `parsed ${parsed}`);
    assert.ok(dataLoc > 0, 'sched has __data_loc fields (sched_process_exec filename)');
    const exec = readTracepointFormat(root, 'sched', 'sched_process_exec');
    const filename = exec.fields.find((field) => field.name === 'filename');
    assert.deepEqual(filename && [filename.location, filename.isString, filename.size], ['data_loc', true, 4]);
  });

  it('parses a seeded random sample of 150 events from every system, and each raw field line is accounted for', () => {
    const all = listTracepoints(root);
    const random = mulberry32(2);
    for (let i = 0; i < 150; i++) {
      const { system, name, id } = all[Math.floor(random() * all.length)];
      const text = readFileSync(join(root, 'events', system, name, 'format'), 'utf8');
      const format = readTracepointFormat(root, system, name);
      assert.equal(format.id, id);
      assert.equal(format.fields.length, (text.match(/^\s*field:/gm) ?? []).length, `${system}:${name}`);
      checkSane(format, `${system}:${name}`);
    }
  });

  it('parses every format file the kernel offers without error', () => {
    let count = 0;
    for (const system of listSystems(root)) {
      for (const name of listSystemEvents(root, system)) {
        readTracepointFormat(root, system, name);
        count++;
      }
    }
    assert.equal(count, listTracepoints(root).length);
  });

  it('lists the same tracepoints as `perf list tracepoint`', function () {
    let output: string;
    try {
      output = execFileSync('perf', ['list', 'tracepoint'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (error) {
      assert.fail(`perf (the reference tool the issue compares against) must be installed: ${(error as Error).message}`);
    }
    const fromPerf = new Set(
      output
        .split('\n')
        .filter((line) => line.includes('[Tracepoint event]'))
        .map((line) => line.trim().split(/\s+/)[0]),
    );
    const ours = new Set(listTracepoints(root).map((entry) => `${entry.system}:${entry.name}`));
    const missing = [...fromPerf].filter((name) => !ours.has(name));
    assert.deepEqual(missing, [], 'every tracepoint perf lists is ours too');
    const extra = [...ours].filter((name) => !fromPerf.has(name));
    assert.deepEqual(extra, []);
  });

  it('reads formats from a tracefs-shaped directory given explicitly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringside-tracefs-'));
    try {
      mkdirSync(join(dir, 'events/demo/tick'), { recursive: true });
      writeFileSync(join(dir, 'events/demo/tick/id'), '77\n');
      writeFileSync(
        join(dir, 'events/demo/tick/format'),
        'name: tick\nID: 77\nformat:\n\tfield:int n;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: "n=%d", REC->n\n',
      );
      const found = findTracefs({ root: dir });
      assert.deepEqual(listTracepoints(found), [{ system: 'demo', name: 'tick', id: 77 }]);
      assert.equal(readTracepointFormat(found, 'demo', 'tick').fields[0].name, 'n');
      assert.throws(
        () => readTracepointId(found, 'demo', 'tock'),
        (error: unknown) => error instanceof TracefsError && /no tracepoint demo:tock/.test(error.message),
      );
      assert.throws(() => readTracepointFormat(found, 'demo', 'tock'), TracefsError);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
