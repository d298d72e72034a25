// resolveEventSpec on this machine: exact perf_event_attr fields for every kind of spec, the
// modifier flags compared with what perf 6.1 itself puts in the attr (`perf stat -vv`), breakpoint
// symbols and source lines from a real gcc-built binary (read through binutils), and the errors.

import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BreakpointType, PerfType, Sample } from '../../native/abi/uapi';
import { BASE_SAMPLE_TYPE, expandEventSpecs, resolveEventSpec } from '../../native/specs/resolve';
import { SpecError } from '../../native/specs/parse';
import { expectSpecError } from './spec-error';
import { findTracefs, readTracepointId } from '../../native/specs/tracefs';
import { openTargetSymbols, type TargetSymbols } from '../../native/symbols/resolve';

/** A TargetSymbols over a real ELF, read with binutils (nm for symbols, objdump for the DWARF line table). */
function binutilsSymbols(executable: string): TargetSymbols {
  const symbols = new Map<string, { address: bigint; size: number; kind: 'function' | 'object' }>();
  for (const line of execFileSync('nm', ['-S', '--defined-only', executable], { encoding: 'utf8' }).split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) ([A-Za-z]) (\S+)$/.exec(line);
    if (match) symbols.set(match[4], { address: BigInt(`0x${match[1]}`), size: Number(`0x${match[2]}`), kind: /[Tt]/.test(match[3]) ? 'function' : 'object' });
  }
  const rows: { file: string; line: number; address: bigint }[] = [];
  for (const line of execFileSync('objdump', ['--dwarf=decodedline', executable], { encoding: 'utf8' }).split('\n')) {
    const match = /^(\S+)\s+(\d+)\s+0x([0-9a-f]+)\s+(?:\d+\s+)?x$/.exec(line.trim());
    if (match) rows.push({ file: match[1], line: Number(match[2]), address: BigInt(`0x${match[3]}`) });
  }
  return {
    resolveSymbol(name) {
      const symbol = symbols.get(name);
      if (!symbol) throw new Error(`no symbol '${name}' in ${executable}`);
      return symbol;
    },
    resolveLine(file, line) {
      const candidates = rows.filter((row) => row.file === basename(file) && row.line >= line).sort((a, b) => a.line - b.line || Number(a.address - b.address));
      if (candidates.length === 0) throw new Error(`no code at or after ${file}:${line}`);
      return { ...candidates[0], sites: [{ address: candidates[0].address }], statements: [{ address: candidates[0].address }] };
    },
    path: executable,
    fileOffset() {
      throw new Error('these tests place no uprobe');
    },
  };
}

/** The perf_event_attr perf 6.1 builds for a spec, from `perf stat -vv`. */
function perfAttr(spec: string): Map<string, string> {
  const run = spawnSync('perf', ['stat', '-vv', '-e', spec, 'true'], { encoding: 'utf8' });
  assert.equal(run.error, undefined, `perf (the reference the issue compares against) must be installed: ${String(run.error)}`);
  const output = `${run.stdout}${run.stderr}`;
  const block = /perf_event_attr:\n([\s\S]*?)\n-{10,}/.exec(output);
  assert.ok(block, `perf printed no attr for ${spec}: ${output.slice(0, 400)}`);
  const fields = new Map<string, string>();
  for (const line of block[1].split('\n')) {
    const match = /^\s+(.+?)\s{2,}(\S+)$/.exec(line);
    if (match) fields.set(match[1], match[2]);
  }
  return fields;
}

/** Notes other than the user-space-only one every symbol breakpoint carries. */
const ownNotes = (notes: readonly string[]) => notes.filter((note) => !/user-space accesses only/.test(note));

describe('specs/resolve (this machine)', () => {
  it('software: type 1, the config, period 1, base sample type, backward ring, sample_id_all', () => {
    const event = resolveEventSpec('page-faults');
    assert.equal(event.name, 'page-faults');
    assert.equal(event.isBreakpoint, false);
    assert.deepEqual(event.attr, {
      type: PerfType.SOFTWARE,
      config: 2n,
      samplePeriod: 1n,
      readFormat: 0,
      sampleType: Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD | Sample.IDENTIFIER,
      flags: { sampleIdAll: true, writeBackward: true, excludeGuest: true },
    });
    assert.equal(event.tracepoint, undefined);
    assert.equal(resolveEventSpec('cs').attr.config, 3n);
    assert.equal(resolveEventSpec('dummy').attr.config, 9n);
  });

  it("cpu-clock / task-clock sample at perf's 4000 Hz unless -c/-F or a term says otherwise", () => {
    const clock = resolveEventSpec('cpu-clock');
    const max = Number(readFileSync('/proc/sys/kernel/perf_event_max_sample_rate', 'utf8'));
    // perf record's default, lowered with a note where the kernel allows less (it lowers the limit itself under load).
    assert.equal(clock.attr.samplePeriod, BigInt(Math.min(4000, max)));
    assert.equal(clock.attr.flags.freq, true);
    assert.equal(
      clock.notes.some((note) => /perf_event_max_sample_rate/.test(note)),
      max < 4000,
    );
    // The referee: perf record's own default on this machine (perf evlist -v shows the attr it opened).
    const dir = mkdtempSync(join(tmpdir(), 'ringside-freq-'));
    try {
      const data = join(dir, 'f.data');
      execFileSync('perf', ['record', '-q', '-e', 'cpu-clock', '-o', data, '--', 'true'], { stdio: 'ignore' });
      const attr = execFileSync('perf', ['evlist', '-v', '-i', data], { encoding: 'utf8' });
      assert.match(attr, new RegExp(`sample_freq \\}: ${clock.attr.samplePeriod},`), attr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const task = resolveEventSpec('task-clock', { period: 250000n }).attr;
    assert.equal(task.samplePeriod, 250000n);
    assert.equal(task.flags.freq, undefined);
    const fast = resolveEventSpec('cpu-clock', { freq: 4000 }).attr;
    assert.deepEqual([fast.samplePeriod, fast.flags.freq], [4000n, true]);
    const term = resolveEventSpec('cpu-clock/period=100000/', { freq: 4000 }).attr;
    assert.deepEqual([term.samplePeriod, term.flags.freq], [100000n, undefined]);
    assert.equal(resolveEventSpec('cs', { freq: 10 }).attr.flags.freq, true);
  });

  it('rejects a frequency above kernel.perf_event_max_sample_rate, naming the limit', () => {
    const max = Number(readFileSync('/proc/sys/kernel/perf_event_max_sample_rate', 'utf8'));
    assert.equal(resolveEventSpec('cpu-clock', { freq: max }).attr.samplePeriod, BigInt(max));
    expectSpecError('cpu-clock', { freq: max + 1 }, 0, new RegExp(`-F ${max + 1} Hz exceeds kernel.perf_event_max_sample_rate \\(${max}\\)`), '-F');
    expectSpecError(`task-clock/freq=${max + 1}/`, {}, 11, /exceeds kernel.perf_event_max_sample_rate/, 'freq');
    expectSpecError('cpu-clock', { freq: 0 }, 0, /at least 1 Hz/);
    expectSpecError('cpu-clock', { period: 0n }, 0, /at least 1/);
    expectSpecError('cpu-clock', { period: 10n, freq: 10 }, 0, /cannot be used together/);
  });

  it('-g adds CALLCHAIN', () => {
    assert.equal(resolveEventSpec('cs', { callchain: true }).attr.sampleType, BASE_SAMPLE_TYPE | Sample.CALLCHAIN);
    assert.equal(resolveEventSpec('cs', { callchain: { mode: 'fp' } }).attr.sampleType, BASE_SAMPLE_TYPE | Sample.CALLCHAIN);
  });

  it('-g dwarf asks for the user registers and stack that perf record --call-graph dwarf asks for', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringside-dwarf-attr-'));
    try {
      const data = join(dir, 'perf.data');
      execFileSync('perf', ['record', '-q', '-o', data, '--call-graph', 'dwarf,4096', '-e', 'task-clock', '--', 'true'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const evlist = execFileSync('perf', ['evlist', '-v', '-i', data], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      const perfRegs = BigInt(/sample_regs_user: (0x[0-9a-f]+)/.exec(evlist)?.[1] ?? 'missing');
      const perfStack = Number(/sample_stack_user: (\d+)/.exec(evlist)?.[1]);
      assert.match(evlist, /exclude_callchain_user: 1/);
      const { attr } = resolveEventSpec('task-clock', { callchain: { mode: 'dwarf', stackBytes: 4096 } });
      assert.equal(attr.sampleType, BASE_SAMPLE_TYPE | Sample.CALLCHAIN | Sample.REGS_USER | Sample.STACK_USER);
      assert.equal(attr.sampleRegsUser, perfRegs);
      assert.equal(attr.sampleStackUser, perfStack);
      assert.equal(attr.flags.excludeCallchainUser, true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expectSpecError('task-clock', { callchain: { mode: 'dwarf', stackBytes: 4001 } }, 0, /multiple of 8 bytes up to 65528/);
  });

  it('tracepoint: type 2, config = tracefs id, RAW, period 1, format attached', () => {
    const root = findTracefs();
    const event = resolveEventSpec('syscalls:sys_enter_openat');
    assert.equal(event.attr.type, PerfType.TRACEPOINT);
    assert.equal(event.attr.config, BigInt(readTracepointId(root, 'syscalls', 'sys_enter_openat')));
    assert.equal(event.attr.sampleType, BASE_SAMPLE_TYPE | Sample.RAW);
    assert.equal(event.attr.samplePeriod, 1n);
    assert.equal(event.attr.flags.freq, undefined);
    assert.equal(event.tracepoint?.name, 'sys_enter_openat');
    assert.equal(event.tracepoint?.system, 'syscalls');
    assert.ok(event.tracepoint?.fields.some((field) => field.name === 'filename'));
  });

  it('tracepoint errors name the system or the event, with a suggestion', () => {
    expectSpecError('schedd:sched_switch', {}, 0, /no tracepoint system 'schedd'.*did you mean 'sched'/, 'schedd');
    expectSpecError('sched:sched_swtch', {}, 6, /no tracepoint 'sched:sched_swtch' \(did you mean 'sched:sched_switch'\?\)/, 'sched_swtch');
    expectSpecError('sched:sched_switch/config=1/', {}, 19, /unknown term 'config'/, 'config');
  });

  it('tracepoint globs expand to what perf record opens for them; one that matches nothing is an error naming it', () => {
    // The referee: the events perf record opens for each glob (perf evlist of its file).
    const perfOpens = (glob: string): string[] => {
      const dir = mkdtempSync(join(tmpdir(), 'ringside-glob-'));
      try {
        const data = join(dir, 'g.data');
        execFileSync('perf', ['record', '-q', '-e', glob, '-o', data, '--', 'true'], { stdio: 'ignore' });
        const listed = execFileSync('perf', ['evlist', '-i', data], { encoding: 'utf8' }).split('\n');
        return listed.filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('dummy')).sort();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    for (const glob of ['syscalls:sys_enter_*', 'sched*:sched_switch', 'sch?d:sched_switch', 'sched:sched_[sw]*', 'sched:sched_?witch']) {
      const expanded = expandEventSpecs([glob]);
      assert.deepEqual([...expanded].sort(), perfOpens(glob), glob);
      // Every expansion resolves to a tracepoint of its own.
      for (const spec of expanded.slice(0, 20)) assert.equal(resolveEventSpec(spec).attr.type, PerfType.TRACEPOINT, spec);
    }
    assert.ok(expandEventSpecs(['syscalls:sys_enter_*']).length > 200, 'the whole syscall table');
    // A glob system with a plain name: the systems that have it (perf 6.1 instead fails on the first system without it).
    assert.deepEqual(expandEventSpecs(['*:sched_switch']), ['sched:sched_switch']);
    // Terms and modifiers go with every expansion; a spec named twice (by a glob and by hand) is opened once.
    assert.deepEqual(expandEventSpecs(['sched:sched_switch', 'sched:sched_swi*:u']), ['sched:sched_switch', 'sched:sched_switch:u']);
    assert.deepEqual(expandEventSpecs(['sched:sched_switch', 'sched:sched_swi*']), ['sched:sched_switch']);
    assert.deepEqual(expandEventSpecs(['cpu-clock', 'mem:0x1000:w']), ['cpu-clock', 'mem:0x1000:w'], 'other specs as given');
    assert.throws(
      () => expandEventSpecs(['syscalls:sys_enter_nosuch*']),
      (error: unknown) => {
        assert.ok(error instanceof SpecError);
        assert.match(
          error.message,
          /the glob 'syscalls:sys_enter_nosuch\*' matches no tracepoint in .*\/events \(no tracepoint of system 'syscalls' matches 'sys_enter_nosuch\*'/,
        );
        return true;
      },
    );
    assert.throws(() => expandEventSpecs(['nosuch*:x']), /the glob 'nosuch\*:x' matches no tracepoint .*no tracepoint system matches 'nosuch\*'/);
    // Unexpanded, a glob is refused by name instead of being looked up as a tracepoint called '*'.
    expectSpecError('syscalls:sys_enter_*', {}, 0, /is a glob naming several tracepoints/);
  });

  it('aux-action terms set the aux_action bits (perf syntax), and pause+resume together is refused', () => {
    assert.deepEqual(resolveEventSpec('syscalls:sys_enter_newuname/aux-action=resume/').attr.auxAction, { auxResume: true });
    assert.deepEqual(resolveEventSpec('syscalls:sys_exit_newuname/aux-action=pause/').attr.auxAction, { auxPause: true });
    assert.deepEqual(resolveEventSpec('msr/tsc,aux-action=start-paused/').attr.auxAction, { auxStartPaused: true });
    expectSpecError('cs/aux-action=pause,aux-action=resume/', {}, 20, /cannot both be set/, 'aux-action');
    expectSpecError('cs/aux-action=stop/', {}, 3, /must be start-paused, pause or resume, got 'stop'/, 'aux-action');
    const output = resolveEventSpec('cs/aux-output,aux-sample-size=4096/').attr;
    assert.deepEqual([output.flags.auxOutput, output.auxSampleSize], [true, 4096]);
  });

  it('hex breakpoints: type 5, bp_type from the access, bp_len default 4 (x: 8), ADDR sampled for data', () => {
    const rw = resolveEventSpec('mem:0x1000').attr;
    assert.deepEqual([rw.type, rw.bpType, rw.config1, rw.config2, rw.samplePeriod], [PerfType.BREAKPOINT, BreakpointType.RW, 0x1000n, 4n, 1n]);
    assert.equal(rw.sampleType, BASE_SAMPLE_TYPE | Sample.ADDR);
    assert.equal(resolveEventSpec('mem:0x1000:r').attr.bpType, BreakpointType.R);
    assert.equal(resolveEventSpec('mem:0x1000/2:w').attr.config2, 2n);
    const x = resolveEventSpec('mem:0x1001:x').attr;
    assert.deepEqual([x.bpType, x.config2, x.sampleType], [BreakpointType.X, 8n, BASE_SAMPLE_TYPE]);
    assert.equal(resolveEventSpec('mem:0x1000:x').isBreakpoint, true);
    expectSpecError('mem:0x1002/4:w', {}, 11, /not aligned to the watch length 4/);
    expectSpecError('mem:0x1000/4:x', {}, 11, /execute breakpoint has length 8/);
  });

  describe('symbols and source lines from a real gcc binary', () => {
    let dir: string;
    let symbols: TargetSymbols;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'ringside-specs-'));
      writeFileSync(
        join(dir, 'target.c'),
        [
          'int counter;',
          'long big_array[4] = {1};',
          'char flag;',
          'short pair[2];',
          'int work(int n) {',
          '  counter += n;',
          '',
          '  return n * 2;',
          '}',
          'int main(void) { flag = 1; pair[1] = 2; return work(3) + (int)big_array[0]; }',
          '',
        ].join('\n'),
      );
      execFileSync('gcc', ['-g', '-O0', '-o', join(dir, 'target'), join(dir, 'target.c')]);
      symbols = binutilsSymbols(join(dir, 'target'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a variable: its address, its size as the length, rw by default', () => {
      const counter = symbols.resolveSymbol('counter');
      const event = resolveEventSpec('mem:counter:w', { symbols });
      assert.deepEqual([event.attr.config1, event.attr.config2, event.attr.bpType], [counter.address, 4n, BreakpointType.W]);
      assert.deepEqual(event.location, { symbol: 'counter', file: undefined, line: undefined, address: counter.address, length: 4 });
      assert.deepEqual(ownNotes(event.notes), []);
      // A target's symbol asks about the program's own accesses; :uk asks for the kernel's too.
      assert.equal(event.attr.flags.excludeKernel, true);
      assert.equal(resolveEventSpec('mem:counter:w:uk', { symbols }).attr.flags.excludeKernel, undefined);
      assert.equal(resolveEventSpec('mem:flag', { symbols }).attr.config2, 1n);
      assert.equal(resolveEventSpec('mem:flag', { symbols }).attr.bpType, BreakpointType.RW);
      // short pair[2]: 4 bytes, but only 2-aligned unless the linker happened to 4-align it.
      const pair = symbols.resolveSymbol('pair');
      const pairEvent = resolveEventSpec('mem:pair', { symbols });
      assert.equal(pairEvent.attr.config2, pair.address % 4n === 0n ? 4n : 2n);
      assert.equal(ownNotes(pairEvent.notes).length, pair.address % 4n === 0n ? 0 : 1);
    });

    it('a large variable is clamped to 8 bytes with a note; an explicit length wins', () => {
      const event = resolveEventSpec('mem:big_array:w', { symbols });
      assert.equal(event.attr.config2, 8n);
      assert.equal(event.attr.config1, symbols.resolveSymbol('big_array').address);
      assert.equal(ownNotes(event.notes).length, 1);
      assert.match(ownNotes(event.notes)[0], /'big_array' is 32 bytes.*only its first 8 bytes are watched/);
      assert.equal(resolveEventSpec('mem:big_array/2:w', { symbols }).attr.config2, 2n);
    });

    it('a function: execute breakpoint at its entry, length 8', () => {
      const event = resolveEventSpec('mem:work', { symbols });
      assert.deepEqual([event.attr.bpType, event.attr.config1, event.attr.config2], [BreakpointType.X, symbols.resolveSymbol('work').address, 8n]);
      assert.match(event.notes[0], /'work' is a function: execute breakpoint/);
    });

    it('FILE:LINE: execute breakpoint at the line address from DWARF, moving to the next line with code', () => {
      const line6 = symbols.resolveLine('target.c', 6);
      const event = resolveEventSpec('mem:target.c:6', { symbols });
      assert.deepEqual([event.attr.bpType, event.attr.config1, event.attr.config2], [BreakpointType.X, line6.address, 8n]);
      assert.deepEqual(event.location, { file: 'target.c', line: 6, address: line6.address, length: 8 });
      const blank = resolveEventSpec('mem:target.c:7:x', { symbols });
      assert.equal(blank.location?.line, 8);
      assert.match(blank.notes[0], /target.c:7 has no code; breaking at line 8/);
      expectSpecError('mem:target.c:6:w', { symbols }, 15, /source line breakpoint executes: use :x/, 'w');
      expectSpecError('mem:target.c:900', { symbols }, 4, /cannot resolve target.c:900: no code at or after/, 'target.c:900');
    });

    it('the product symbol resolver (native/symbols) gives the same attrs as binutils does', () => {
      const real = openTargetSymbols(join(dir, 'target'), 0n);
      for (const spec of ['mem:counter:w', 'mem:flag', 'mem:big_array:w', 'mem:work', 'mem:target.c:6']) {
        assert.deepEqual(resolveEventSpec(spec, { symbols: real }).attr, resolveEventSpec(spec, { symbols }).attr, spec);
      }
      expectSpecError('mem:nosuch:w', { symbols: real }, 4, /cannot resolve symbol 'nosuch'/, 'nosuch');
    });

    it('unknown symbols and missing targets are spec errors at the address', () => {
      expectSpecError('mem:nosuch:w', { symbols }, 4, /cannot resolve symbol 'nosuch': no symbol 'nosuch'/, 'nosuch');
      expectSpecError('mem:counter:w', {}, 4, /needs a target executable/, 'counter');
    });
  });

  it('random specs resolve or fail with a SpecError, never anything else (seeded fuzz)', () => {
    let state = 777;
    const random = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 4294967296;
    };
    const pieces = [
      'mem:',
      'cs',
      'cpu-clock',
      'sched:',
      'sched_switch',
      'msr',
      'uprobe',
      'tsc',
      '/',
      ':',
      ',',
      '=',
      '0x',
      '10',
      'u',
      'k',
      'p',
      'x',
      'w',
      'period=',
      'freq=',
      'aux-action=',
      'pause',
      'retprobe',
      'ref_ctr_offset=',
      'event=',
      'config1=',
      '999999999',
      'name=',
    ];
    let resolved = 0;
    for (let i = 0; i < 3000; i++) {
      let spec = '';
      const count = 1 + Math.floor(random() * 7);
      for (let j = 0; j < count; j++) spec += pieces[Math.floor(random() * pieces.length)];
      try {
        resolveEventSpec(spec);
        resolved++;
      } catch (error) {
        assert.ok(error instanceof SpecError, `'${spec}' threw ${String(error)}`);
      }
    }
    assert.ok(resolved > 20, `some random specs resolve (${resolved})`);
  });

  it('modifiers give the same exclude_* flags as perf 6.1 puts in its attr', () => {
    const specs = [
      'cpu-clock',
      'cpu-clock:u',
      'cs:k',
      'page-faults:uk',
      'task-clock:h',
      'cs:G',
      'cs:H',
      'cs:uG',
      'cs:Gu',
      'cs:GH',
      'cs:ukh',
      'cs:p',
      'cs:kp',
      'cs:Gp',
      'sched:sched_switch:u',
      'sched:sched_switch:k',
      'mem:0x1000/8:w',
      'mem:0x1000/8:w:k',
      'mem:0x1000:r:u',
      'msr/tsc/uk',
      'msr/tsc/',
      'msr/event=0x4/u',
      'cs:I',
      'cs:D',
    ];
    const names = {
      excludeUser: 'exclude_user',
      excludeKernel: 'exclude_kernel',
      excludeHv: 'exclude_hv',
      excludeGuest: 'exclude_guest',
      excludeHost: 'exclude_host',
      excludeIdle: 'exclude_idle',
    } as const;
    for (const spec of specs) {
      const ours = resolveEventSpec(spec).attr;
      const perf = perfAttr(spec);
      for (const [flag, perfName] of Object.entries(names)) {
        assert.equal(Boolean(ours.flags[flag as keyof typeof names]), perf.get(perfName) === '1', `${spec}: ${perfName}`);
      }
      assert.equal(String(ours.type), perf.get('type'), `${spec}: type`);
      assert.equal(ours.config, BigInt(perf.get('config') ?? '0'), `${spec}: config`);
      if (ours.type === PerfType.BREAKPOINT) {
        assert.equal(String(ours.bpType), perf.get('bp_type'), `${spec}: bp_type`);
        assert.equal(ours.config1, BigInt(perf.get('{ bp_addr, config1 }') ?? '0'), `${spec}: bp_addr`);
        assert.equal(ours.config2, BigInt(perf.get('{ bp_len, config2 }') ?? '0'), `${spec}: bp_len`);
      }
    }
  });
});
