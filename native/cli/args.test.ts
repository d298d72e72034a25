import * as assert from 'node:assert/strict';
import { COMMAND_USAGE, parseArgs, UsageError } from './args';

describe('cli args', () => {
  it('parses a launch capture with several events and perf-style options', () => {
    const options = parseArgs([
      'capture',
      '-e',
      'mem:counter:w',
      '-e',
      'syscalls:sys_enter_getpid',
      '--pages',
      '8',
      '-c',
      '10',
      '-g',
      '-o',
      'x.data',
      '--',
      './fixture',
      '100',
    ]);
    assert.equal(options.command, 'capture');
    if (options.command !== 'capture') return;
    assert.deepEqual(options.events, ['mem:counter:w', 'syscalls:sys_enter_getpid']);
    assert.deepEqual(options.target, { kind: 'launch', argv: ['./fixture', '100'] });
    assert.equal(options.pages, 8);
    assert.equal(options.period, 10n);
    assert.deepEqual(options.callGraph, { mode: 'fp' });
    assert.equal(options.format, 'perf.data');
    assert.equal(options.warmCopy, true, 'spare copy buffers by default');
    const cold = parseArgs(['capture', '-a', '--no-warm-copy', '--no-sideband']);
    assert.ok(cold.command === 'capture' && !cold.warmCopy && !cold.sideband);
  });

  it("takes perf's call-graph modes: -g alone is frame pointers, dwarf copies 8192 bytes of stack unless told", () => {
    const graph = (...args: string[]) => {
      const options = parseArgs(['capture', '-e', 'task-clock', ...args, '--', 'prog']);
      return options.command === 'capture' ? options.callGraph : 'not a capture';
    };
    assert.equal(graph(), undefined);
    assert.deepEqual(graph('-g'), { mode: 'fp' });
    assert.deepEqual(graph('--call-graph'), { mode: 'fp' });
    assert.deepEqual(graph('-g', 'fp'), { mode: 'fp' });
    assert.deepEqual(graph('-g', 'dwarf'), { mode: 'dwarf', stackBytes: 8192 });
    assert.deepEqual(graph('--call-graph', 'dwarf,4000'), { mode: 'dwarf', stackBytes: 4000 });
    assert.deepEqual(graph('--call-graph=dwarf,4001'), { mode: 'dwarf', stackBytes: 4008 }, 'rounded up to 8, as perf does');
    assert.deepEqual(graph('-g', '-e', 'cpu-clock'), { mode: 'fp' }, 'an option after -g is not its mode');
    assert.throws(() => graph('-g', 'lbr'), /-g lbr: expected fp, dwarf or dwarf,BYTES/);
    assert.throws(() => graph('--call-graph', 'dwarf,0'), /1 to 65528 bytes/);
    assert.throws(() => graph('--call-graph', 'dwarf,70000'), /1 to 65528 bytes/);
    assert.throws(() => graph('-g', 'fp,8'), /expected fp, dwarf/);
  });

  it('takes --follow[=MS] for JSON Lines on stdout only, and says why anywhere else', () => {
    const follow = (...args: string[]) => {
      const options = parseArgs(['capture', '-e', 'task-clock', ...args, '--', 'prog']);
      return options.command === 'capture' ? options.follow : 'not a capture';
    };
    assert.equal(follow(), undefined);
    assert.deepEqual(follow('--follow'), { intervalMs: 250 });
    assert.deepEqual(follow('--follow=100'), { intervalMs: 100 });
    assert.deepEqual(follow('--follow', '-o', '-'), { intervalMs: 250 });
    assert.deepEqual(follow('--follow', '-o', '/dev/null'), { intervalMs: 250 }, 'a device is written in place');
    assert.throws(() => follow('--follow=0'), /--follow 0/);
    assert.throws(() => follow('--follow=x'), /--follow x/);
    assert.throws(() => follow('--follow', '-o', 'x.jsonl'), /redirect stdout \(> x\.jsonl\)/);
    assert.throws(() => follow('--follow', '-o', 'x.data'), /-o x\.data is written whole when the capture ends/);
    assert.throws(() => parseArgs(['keep', '-e', 'task-clock', '--follow', '--', 'prog']), /--follow is for capture/);
    assert.match(COMMAND_USAGE.capture, /--follow\[=MS\]: stream JSON Lines/);
  });

  it('keeps arguments after -- for the launched command, even ones that look like options', () => {
    const options = parseArgs(['capture', '--', 'prog', '-e', '-p']);
    assert.deepEqual(options.command === 'capture' && options.target, { kind: 'launch', argv: ['prog', '-e', '-p'] });
  });

  it('refuses a capture without exactly one target', () => {
    assert.throws(() => parseArgs(['capture', '-e', 'cpu-clock']), /exactly one target/);
    assert.throws(() => parseArgs(['capture', '-a', '-p', '12']), /exactly one target/);
  });

  it('names the bad value', () => {
    assert.throws(() => parseArgs(['capture', '-a', '--pages', '3']), /power of two/);
    assert.throws(() => parseArgs(['capture', '-a', '-c', '0']), /-c 0/);
    assert.throws(() => parseArgs(['capture', '-a', '-c', '5', '-F', '9']), /mutually exclusive/);
    assert.throws(() => parseArgs(['capture', '-a', '-o', 'x.txt']), /unknown output format/);
    assert.throws(() => parseArgs(['capture', '-a', '--frobnicate']), UsageError);
    assert.throws(() => parseArgs(['bogus']), /unknown command 'bogus'/);
  });

  it('parses events and decode', () => {
    assert.deepEqual(parseArgs(['events', '--json']), { command: 'events', json: true });
    assert.deepEqual(parseArgs(['decode', 'in.data', '-o', 'o.jsonl', '--keep-going']), {
      command: 'decode',
      input: 'in.data',
      output: 'o.jsonl',
      format: 'jsonl',
      keepGoing: true,
    });
    // decode writes every output capture does (a damaged record skipped alike in each: test/perfdata/damage.test.ts).
    assert.deepEqual(parseArgs(['decode', 'in.data', '-o', 'o.data']), {
      command: 'decode',
      input: 'in.data',
      output: 'o.data',
      format: 'perf.data',
      keepGoing: false,
    });
    const html = parseArgs(['decode', 'in.data', '--output', 'o.html']);
    assert.ok(html.command === 'decode' && html.format === 'html');
    assert.throws(() => parseArgs(['decode']), /needs a perf.data file/);
  });

  it("`SUB --help` / `-h` / `help SUB` is that subcommand's usage; after -- they belong to the launched command", () => {
    for (const command of ['events', 'capture', 'decode', 'keep', 'snapshot', 'list'] as const) {
      assert.deepEqual(parseArgs([command, '--help']), { command: 'help', topic: command });
      assert.deepEqual(parseArgs([command, '-h']), { command: 'help', topic: command });
      assert.deepEqual(parseArgs(['help', command]), { command: 'help', topic: command });
      assert.match(COMMAND_USAGE[command], new RegExp(`^usage: ringside ${command}`));
    }
    // Help wins over what else is wrong on the line: the user is asking how to write it.
    assert.deepEqual(parseArgs(['capture', '-e', 'cpu-clock', '--help']), { command: 'help', topic: 'capture' });
    assert.deepEqual(parseArgs(['--help']), { command: 'help' });
    const launched = parseArgs(['capture', '--', 'grep', '--help']);
    assert.deepEqual(launched.command === 'capture' && launched.target, { kind: 'launch', argv: ['grep', '--help'] });
    assert.throws(() => parseArgs(['help', 'bogus']), /help bogus: expected one of events, capture/);
    // Every option the parser takes appears in its subcommand's usage.
    assert.match(COMMAND_USAGE.decode, /--keep-going/);
    assert.match(COMMAND_USAGE.capture, /4000 Hz/);
  });

  it('-o on a character device (/dev/null) is JSON Lines written there, for every command with -o', () => {
    for (const args of [
      ['capture', '-a'],
      ['decode', 'in.data'],
      ['snapshot', '42'],
    ]) {
      const options = parseArgs([...args, '-o', '/dev/null']);
      assert.ok('format' in options && options.format === 'jsonl' && options.output === '/dev/null', JSON.stringify(options));
    }
    assert.throws(
      () => parseArgs(['capture', '-a', '-o', '/tmp/not-a-device.txt']),
      /unknown output format; use a \.jsonl, \.data, \.html or \.pb\.gz file name \(or a device such as \/dev\/null\)/,
    );
  });

  it('--no-symbol-cache turns the disk cache off for the commands that symbolize; after -- it belongs to the launched command', () => {
    assert.equal(parseArgs(['decode', 'perf.data', '--no-symbol-cache', '-o', 'x.jsonl']).symbolCache, false);
    assert.equal(parseArgs(['decode', 'perf.data']).symbolCache, undefined);
    const capture = parseArgs(['capture', '--no-symbol-cache', '--', 'prog', '--no-symbol-cache']);
    assert.equal(capture.symbolCache, false);
    assert.deepEqual(capture.command === 'capture' && capture.target, { kind: 'launch', argv: ['prog', '--no-symbol-cache'] });
    assert.equal(parseArgs(['capture', '--', 'prog', '--no-symbol-cache']).symbolCache, undefined);
    assert.equal(parseArgs(['snapshot', '42', '--no-symbol-cache']).symbolCache, false);
    assert.throws(() => parseArgs(['events', '--no-symbol-cache']), UsageError);
    assert.match(COMMAND_USAGE.decode, /--no-symbol-cache/);
  });

  it('parses triggers and refuses half of them', () => {
    const options = parseArgs(['capture', '--snapshot-on', 'syscalls:sys_enter_getppid', '--snapshot-dir', 'out', '--post', '0.5', '--', 'x']);
    assert.ok(options.command === 'capture');
    assert.deepEqual([options.snapshotOn, options.snapshotDir, options.postSec, options.minIntervalSec], [['syscalls:sys_enter_getppid'], 'out', 0.5, 1]);
    assert.throws(() => parseArgs(['capture', '--snapshot-on', 'x:y', '--', 'x']), /--snapshot-on needs --snapshot-dir DIR/);
    assert.throws(() => parseArgs(['capture', '--snapshot-dir', 'd', '--', 'x']), /give at least one --snapshot-on SPEC or --snapshot-on-exit-signal/);
    const crash = parseArgs(['capture', '--snapshot-on-exit-signal', '--snapshot-dir', 'd', '--', 'x']);
    assert.ok(crash.command === 'capture' && crash.snapshotOnExitSignal && crash.snapshotOn.length === 0);
    assert.throws(() => parseArgs(['capture', '--snapshot-on-exit-signal', '--', 'x']), /--snapshot-on-exit-signal needs --snapshot-dir DIR/);
    assert.throws(() => parseArgs(['capture', '--snapshot-on-exit-signal', '--snapshot-dir', 'd', '-a']), /watches a launched command/);
    // keep takes triggers (the keeper writes the snapshots itself), its launched command's exit signal too.
    const kept = parseArgs(['keep', '--snapshot-on', 'syscalls:sys_enter_kill', '--snapshot-dir', 'd', '-a']);
    assert.ok(kept.command === 'keep' && kept.snapshotOn.length === 1 && kept.snapshotDir === 'd');
    const keptCrash = parseArgs(['keep', '--snapshot-on-exit-signal', '--snapshot-dir', 'd', '--', 'x']);
    assert.ok(keptCrash.command === 'keep' && keptCrash.snapshotOnExitSignal && keptCrash.snapshotOn.length === 0);
    assert.throws(() => parseArgs(['keep', '--snapshot-on-exit-signal', '--snapshot-dir', 'd', '-a']), /watches a launched command/);
    // keep grows its rings too: each resize is a new generation of its state file (test/cli/keep-window.test.ts).
    const keptWindow = parseArgs(['keep', '--window', '2', '--pages', '1', '-a']);
    assert.ok(keptWindow.command === 'keep' && keptWindow.windowSec === 2 && keptWindow.pages === 1);
    assert.throws(() => parseArgs(['keep', '--window', '0', '-a']), /--window 0/);
    assert.throws(
      () => parseArgs(['capture', '--snapshot-on', 'a:b', '--snapshot-dir', 'd', '--post', '-1', '--', 'x']),
      /--post -1: expected a number of seconds >= 0/,
    );
    assert.deepEqual(parseArgs(['snapshot', '42', '-o', 'k.data']), {
      command: 'snapshot',
      keeperPid: 42,
      output: 'k.data',
      format: 'perf.data',
      quiet: false,
      allSideband: false,
    });
    const whole = parseArgs(['snapshot', '42', '--all-sideband', '-o', 'k.jsonl']);
    assert.ok(whole.command === 'snapshot' && whole.allSideband && whole.format === 'jsonl');
    assert.throws(() => parseArgs(['snapshot']), /snapshot needs the pid of a running `ringside keep`/);
    assert.deepEqual(parseArgs(['list', '--json']), { command: 'list', json: true });
  });
});
