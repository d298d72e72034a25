import { strict as assert } from 'node:assert';
import { globToRegExp, isGlob, modifierEffect, parseEventList, parseEventSpec, SpecError, SOFTWARE_EVENTS, type EventSpecAst } from './parse';

function expectSpecError(spec: string, position: number, pattern: RegExp, term?: string): SpecError {
  let caught: unknown;
  try {
    parseEventSpec(spec);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof SpecError, `expected SpecError for '${spec}', got ${String(caught)}`);
  assert.equal(caught.spec, spec);
  assert.equal(caught.position, position, `position for '${spec}': ${caught.message}`);
  assert.match(caught.message, pattern);
  if (term !== undefined) assert.equal(caught.term, term);
  return caught;
}

function as<K extends EventSpecAst['kind']>(ast: EventSpecAst, kind: K): Extract<EventSpecAst, { kind: K }> {
  assert.equal(ast.kind, kind);
  return ast as Extract<EventSpecAst, { kind: K }>;
}

describe('specs/parse', () => {
  describe('software events', () => {
    it('knows every name and alias with its PERF_COUNT_SW_* config', () => {
      const expected: Record<string, number> = {
        'cpu-clock': 0,
        'task-clock': 1,
        'page-faults': 2,
        faults: 2,
        'context-switches': 3,
        cs: 3,
        'cpu-migrations': 4,
        migrations: 4,
        'minor-faults': 5,
        'major-faults': 6,
        'alignment-faults': 7,
        'emulation-faults': 8,
        dummy: 9,
        'bpf-output': 10,
        'cgroup-switches': 11,
      };
      for (const [name, config] of Object.entries(expected)) {
        const ast = as(parseEventSpec(name), 'software');
        assert.equal(ast.config, config, name);
        assert.equal(ast.terms.length, 0);
        assert.equal(ast.modifiers, undefined);
      }
      assert.equal(SOFTWARE_EVENTS.length, 12);
    });

    it('takes modifiers and terms', () => {
      const ast = as(parseEventSpec('cs/period=10,name=switches/:uk'), 'software');
      assert.equal(ast.name, 'context-switches');
      assert.deepEqual(
        ast.terms.map((term) => [term.key, term.value?.value, term.position]),
        [
          ['period', 10n, 3],
          ['name', 'switches', 13],
        ],
      );
      assert.deepEqual(ast.modifiers, { text: 'uk', position: 28 });
    });

    it('rejects a bad modifier on a software event at its column', () => {
      const error = expectSpecError('cpu-clock:uz', 11, /unknown modifier 'z' in 'uz'/, 'z');
      assert.equal(error.caret(), '  cpu-clock:uz\n             ^');
    });
  });

  describe('tracepoints', () => {
    it('parses subsys:name, with terms and modifiers', () => {
      const plain = as(parseEventSpec('sched:sched_switch'), 'tracepoint');
      assert.equal(plain.system, 'sched');
      assert.equal(plain.event, 'sched_switch');
      const full = as(parseEventSpec('syscalls:sys_enter_newuname/aux-action=resume/:u'), 'tracepoint');
      assert.equal(full.event, 'sys_enter_newuname');
      assert.deepEqual(
        full.terms.map((term) => [term.key, term.value]),
        [['aux-action', { kind: 'string', value: 'resume' }]],
      );
      assert.equal(full.modifiers?.text, 'u');
    });

    it('takes globs in the system and the name, as perf does, keeping terms and modifiers', () => {
      const names = as(parseEventSpec('syscalls:sys_enter_*'), 'tracepoint');
      assert.deepEqual([names.system, names.event], ['syscalls', 'sys_enter_*']);
      const systems = as(parseEventSpec('*:sched_switch:u'), 'tracepoint');
      assert.deepEqual([systems.system, systems.event, systems.modifiers?.text], ['*', 'sched_switch', 'u']);
      const classes = as(parseEventSpec('sched?:sched_[sw]*/aux-action=resume/'), 'tracepoint');
      assert.deepEqual([classes.system, classes.event, classes.terms.length], ['sched?', 'sched_[sw]*', 1]);
      assert.ok(isGlob('sys_enter_*') && isGlob('a?') && isGlob('[ab]') && !isGlob('sched_switch'));
      expectSpecError('sched:*[', 7, /unexpected|modifiers/);
    });

    it("matches globs as perf's strglobmatch: anchored, * ? and [classes], the rest literal", () => {
      const matches = (glob: string, name: string) => globToRegExp(glob).test(name);
      assert.ok(matches('sys_enter_*', 'sys_enter_write') && matches('sys_enter_*', 'sys_enter_'));
      assert.ok(!matches('sys_enter_*', 'sys_exit_write') && !matches('enter_*', 'sys_enter_write'), 'anchored at both ends');
      assert.ok(matches('sched_?akeup', 'sched_wakeup') && !matches('sched_?akeup', 'sched_akeup'));
      assert.ok(matches('sched_[sw]*', 'sched_switch') && matches('sched_[sw]*', 'sched_wakeup') && !matches('sched_[sw]*', 'sched_process_exec'));
      assert.ok(matches('[!s]*', 'irq') && !matches('[!s]*', 'sched'));
      assert.ok(matches('a.b', 'a.b') && !matches('a.b', 'axb'), 'a dot is a dot');
      assert.ok(matches('x-[a-c]', 'x-b') && !matches('x-[a-c]', 'x-d'), 'ranges in a class');
    });

    it('names what is missing', () => {
      expectSpecError('sched:', 6, /expected a tracepoint name after 'sched:'/);
      expectSpecError('sched:sched_switch/period=1', 18, /missing closing '\/'/);
      expectSpecError('sched:sched_switch:q', 19, /unknown modifier 'q'/, 'q');
      expectSpecError('sched:sched_switch/x/u', 21, /modifiers follow a colon/);
    });
  });

  describe('breakpoints', () => {
    it('parses hex and decimal addresses, lengths and access', () => {
      const hex = as(parseEventSpec('mem:0x7ffd1000/8:w'), 'breakpoint');
      assert.deepEqual(hex.address, { kind: 'number', value: 0x7ffd1000n, position: 4, text: '0x7ffd1000' });
      assert.deepEqual(hex.length, { value: 8, position: 15 });
      assert.deepEqual(hex.access, { value: 'w', position: 17 });
      const decimal = as(parseEventSpec('mem:4096'), 'breakpoint');
      assert.equal(decimal.address.kind === 'number' && decimal.address.value, 4096n);
      assert.equal(decimal.length, undefined);
      assert.equal(decimal.access, undefined);
      for (const [text, access] of [
        ['r', 'r'],
        ['w', 'w'],
        ['rw', 'rw'],
        ['wr', 'rw'],
        ['x', 'x'],
      ] as const) {
        assert.equal(as(parseEventSpec(`mem:0x10:${text}`), 'breakpoint').access?.value, access, text);
      }
    });

    it('parses symbols (C, gcc statics, C++) and FILE:LINE', () => {
      const symbol = as(parseEventSpec('mem:demo_counter:w'), 'breakpoint');
      assert.deepEqual(symbol.address, { kind: 'symbol', name: 'demo_counter', position: 4, text: 'demo_counter' });
      assert.equal(as(parseEventSpec('mem:counter.0/4:rw'), 'breakpoint').address.text, 'counter.0');
      assert.equal(as(parseEventSpec('mem:ns::value:r'), 'breakpoint').address.text, 'ns::value');
      const line = as(parseEventSpec('mem:src/hot loop.c:42'.replace(' ', '_')), 'breakpoint');
      assert.deepEqual(line.address, { kind: 'line', file: 'src/hot_loop.c', line: 42, position: 4, text: 'src/hot_loop.c:42' });
      const lineX = as(parseEventSpec('mem:main.c:7:x:u'), 'breakpoint');
      assert.equal(lineX.address.kind, 'line');
      assert.equal(lineX.access?.value, 'x');
      assert.equal(lineX.modifiers?.text, 'u');
    });

    it('separates access from modifiers', () => {
      const ast = as(parseEventSpec('mem:0x1000:rw:k'), 'breakpoint');
      assert.equal(ast.access?.value, 'rw');
      assert.deepEqual(ast.modifiers, { text: 'k', position: 14 });
      const modifiersOnly = as(parseEventSpec('mem:0x1000:u'), 'breakpoint');
      assert.equal(modifiersOnly.access, undefined);
      assert.equal(modifiersOnly.modifiers?.text, 'u');
    });

    it('rejects bad lengths, access and addresses precisely', () => {
      expectSpecError('mem:0x1000/3:w', 11, /length must be 1, 2, 4 or 8, got 3/, '3');
      expectSpecError('mem:0x1000/:w', 11, /expected a breakpoint length/);
      expectSpecError('mem:0x1000:rx', 11, /mixes x with r\/w/, 'rx');
      expectSpecError('mem:0x1000:rr', 11, /repeats a letter/, 'rr');
      expectSpecError('mem:', 4, /mem: needs an address/);
      expectSpecError('mem:9zz:w', 4, /'9zz' is not an address, a symbol name or FILE:LINE/, '9zz');
      expectSpecError('mem:main.c:0', 11, /line numbers start at 1/);
      expectSpecError('mem:0x1000:w:q', 13, /unknown modifier 'q'/);
    });
  });

  describe('uprobes: line: and uprobe:', () => {
    it('parses line:FILE:LINE, with paths', () => {
      const ast = as(parseEventSpec('line:src/loop.c:42'), 'line');
      assert.deepEqual([ast.file, ast.line, ast.position, ast.text], ['src/loop.c', 42, 5, 'src/loop.c:42']);
      assert.equal(as(parseEventSpec('line:/abs/dir-1/a.b.c:7'), 'line').file, '/abs/dir-1/a.b.c');
    });

    it('refuses a line: spec missing its parts, line 0, or with an access, naming what is wrong', () => {
      expectSpecError('line:', 5, /line: needs a source line: line:FILE:LINE/);
      expectSpecError('line:loop.c', 11, /line:loop\.c needs a line number: line:loop\.c:LINE/, 'loop.c');
      expectSpecError('line:loop.c:', 11, /needs a line number/, 'loop.c');
      expectSpecError('line:loop.c:x7', 12, /'x7' is not a line number/, 'x7');
      expectSpecError('line:loop.c:0', 12, /line numbers start at 1, got 0/);
      expectSpecError(
        'line:loop.c:42:x',
        14,
        /line: counts executions with uprobes and takes no access; for a hardware breakpoint write mem:loop\.c:42:x/,
        ':x',
      );
      expectSpecError('line:loop.c:42:u', 14, /unexpected ':u' after line:loop\.c:42 \(line: takes no access, length, terms or modifiers\)/, ':u');
    });

    it('parses uprobe:BIN:SYMBOL[+OFF], hex or decimal', () => {
      const plain = as(parseEventSpec('uprobe:/lib/x86_64-linux-gnu/libc.so.6:getppid'), 'uprobe');
      assert.deepEqual(
        [plain.binary, plain.binaryPosition, plain.symbol, plain.symbolPosition, plain.offset],
        ['/lib/x86_64-linux-gnu/libc.so.6', 7, 'getppid', 39, 0n],
      );
      assert.equal(as(parseEventSpec('uprobe:app:main+0x10'), 'uprobe').offset, 16n);
      assert.equal(as(parseEventSpec('uprobe:app:main+16'), 'uprobe').offset, 16n);
      assert.equal(as(parseEventSpec('uprobe:./bin/app:ns::f'), 'uprobe').symbol, 'ns::f');
    });

    it('refuses a uprobe: spec missing its parts or with junk after it, at the bad column', () => {
      expectSpecError('uprobe:', 7, /uprobe: needs the executable or shared library to probe/);
      expectSpecError('uprobe:app', 10, /uprobe:app needs a function to probe: uprobe:app:SYMBOL\[\+OFF\]/, 'app');
      expectSpecError('uprobe:app:', 11, /needs a function name after the colon/);
      expectSpecError('uprobe:app:9lives', 11, /'9lives' is not a symbol name/, '9lives');
      expectSpecError('uprobe:app:main+', 16, /expected a byte offset \(0xHEX or decimal\) after 'main\+'/);
      expectSpecError('uprobe:app:main:x', 15, /unexpected ':x' after uprobe:app:main \(a uprobe takes no access, terms or modifiers\)/, ':x');
    });

    it('keeps the slashes of their paths inside one spec of a list', () => {
      const list = parseEventList('line:src/a.c:3,uprobe:/usr/lib/libc.so.6:getppid,cs');
      assert.deepEqual(
        list.map((ast) => ast.kind),
        ['line', 'uprobe', 'software'],
      );
    });
  });

  describe('logpoints: log:', () => {
    it('parses log:FILE:LINE and log:FILE:LINE:NAME,NAME', () => {
      const all = as(parseEventSpec('log:src/loop.c:42'), 'logpoint');
      assert.deepEqual([all.file, all.line, all.position, all.text, all.variables], ['src/loop.c', 42, 4, 'src/loop.c:42', undefined]);
      assert.deepEqual(as(parseEventSpec('log:loop.c:42:i,total_2'), 'logpoint').variables, ['i', 'total_2']);
    });

    it('refuses a missing line, line 0, and names that are not C identifiers, at their column', () => {
      expectSpecError('log:', 4, /log: needs a source line: log:FILE:LINE\[:NAME,...\]/);
      expectSpecError('log:loop.c', 10, /log:loop\.c needs a line number/, 'loop.c');
      expectSpecError('log:loop.c:0', 11, /line numbers start at 1, got 0/);
      expectSpecError('log:loop.c:42:i,,j', 16, /empty variable name/);
      expectSpecError('log:loop.c:42:i,p->x', 16, /'p->x' is not a variable name \(a C identifier\)/, 'p->x');
      expectSpecError('log:loop.c:42/i', 13, /unexpected '\/i' after log:loop\.c:42/, '/i');
    });

    it('takes the rest of a comma list as its names; one without names leaves the list to the next spec', () => {
      assert.deepEqual(
        parseEventList('cs,log:a.c:3:i,cs').map((ast) => (ast.kind === 'logpoint' ? ast.variables : ast.kind)),
        ['software', ['i', 'cs']],
      );
      assert.deepEqual(
        parseEventList('log:src/a.c:3,cs').map((ast) => ast.kind),
        ['logpoint', 'software'],
      );
    });
  });

  describe('PMU events', () => {
    it('parses terms with numbers, strings and flags, and bare or colon modifiers', () => {
      const ast = as(parseEventSpec('msr/event=0x4,config1=12,name=smi_count,aux-output/uk'), 'pmu');
      assert.equal(ast.pmu, 'msr');
      assert.deepEqual(
        ast.terms.map((term) => [term.key, term.value?.value, term.position]),
        [
          ['event', 4n, 4],
          ['config1', 12n, 14],
          ['name', 'smi_count', 25],
          ['aux-output', undefined, 40],
        ],
      );
      assert.deepEqual(ast.modifiers, { text: 'uk', position: 51 });
      assert.equal(as(parseEventSpec('msr/tsc/:k'), 'pmu').modifiers?.text, 'k');
      assert.equal(as(parseEventSpec('persistent/mce_record/'), 'pmu').terms[0].key, 'mce_record');
    });

    it('names the bad term', () => {
      expectSpecError('msr//', 4, /needs at least one term/);
      expectSpecError('msr/event=/', 10, /term 'event' has '=' but no value/, 'event');
      expectSpecError('msr/event=1,,tsc/', 12, /empty term/);
      expectSpecError('msr/9bad=1/', 4, /bad term name '9bad'/, '9bad');
      expectSpecError('msr/tsc/uQ', 9, /unknown modifier 'Q'/, 'Q');
    });
  });

  describe('general errors', () => {
    it('rejects empty, blank, unknown and hardware names', () => {
      expectSpecError('', 0, /empty event spec/);
      expectSpecError('cpu clock', 3, /white space/);
      expectSpecError('cpu-clok', 0, /unknown event 'cpu-clok' \(did you mean 'cpu-clock'\?\)/, 'cpu-clok');
      expectSpecError('instructions', 0, /hardware event/, 'instructions');
      expectSpecError('%x', 0, /expected an event name/);
      expectSpecError('cs=3', 2, /unexpected '=3'/);
    });

    it('limits precise levels to ppp', () => {
      assert.equal(modifierEffect(as(parseEventSpec('cpu-clock:ppp'), 'software').modifiers).preciseIp, 3);
      expectSpecError('cpu-clock:pppp', 13, /at most 3/, 'p');
    });

    it('splits comma lists outside slashes', () => {
      const list = parseEventList('cs,msr/event=0x4,name=x/,mem:0x10/4:w,sched:sched_switch');
      assert.deepEqual(
        list.map((ast) => ast.kind),
        ['software', 'pmu', 'breakpoint', 'tracepoint'],
      );
      assert.equal(list[1].kind === 'pmu' && list[1].terms.length, 2);
    });
  });

  it('never throws anything but SpecError on random input (seeded fuzz)', () => {
    let state = 12345;
    const random = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state / 4294967296;
    };
    const pieces = [
      'mem:',
      '*',
      '?',
      '[a-z]',
      '[!',
      'cs',
      'cpu-clock',
      'sched:',
      'sched_switch',
      'msr',
      '/',
      ':',
      ',',
      '=',
      '0x',
      '1f',
      '42',
      'u',
      'k',
      'p',
      'x',
      'rw',
      'a.c',
      'name',
      'é',
      ' ',
      '',
      '::',
      'config=',
      '?',
    ];
    let parsed = 0;
    for (let i = 0; i < 5000; i++) {
      let spec = '';
      const count = 1 + Math.floor(random() * 8);
      for (let j = 0; j < count; j++) spec += pieces[Math.floor(random() * pieces.length)];
      try {
        parseEventSpec(spec);
        parsed++;
      } catch (error) {
        assert.ok(error instanceof SpecError, `'${spec}' threw ${String(error)}`);
        assert.ok(error.position >= 0 && error.position <= spec.length, `'${spec}': position ${error.position}`);
      }
    }
    assert.ok(parsed > 100, `some random specs are valid (${parsed})`);
  });

  describe('modifiers follow perf get_event_modifier', () => {
    const cases: [string, Partial<ReturnType<typeof modifierEffect>>][] = [
      ['', { excludeUser: false, excludeKernel: false, excludeHv: false, excludeGuest: true, excludeHost: false }],
      ['u', { excludeUser: false, excludeKernel: true, excludeHv: true, excludeGuest: true }],
      ['k', { excludeUser: true, excludeKernel: false, excludeHv: true, excludeGuest: false }],
      ['h', { excludeUser: true, excludeKernel: true, excludeHv: false }],
      ['uk', { excludeUser: false, excludeKernel: false, excludeHv: true }],
      ['ukh', { excludeUser: false, excludeKernel: false, excludeHv: false }],
      ['G', { excludeGuest: false, excludeHost: true }],
      ['uG', { excludeGuest: false, excludeHost: true }],
      ['Gu', { excludeGuest: false, excludeHost: true }],
      ['H', { excludeGuest: true, excludeHost: false }],
      ['GH', { excludeGuest: false, excludeHost: false }],
      ['uI', { excludeIdle: true, excludeKernel: true }],
      ['upp', { preciseIp: 2 }],
      ['De', { pinned: true, exclusive: true }],
    ];
    for (const [text, expected] of cases) {
      it(`:${text || '(none)'}`, () => {
        const effect = modifierEffect(text ? { text, position: 0 } : undefined);
        for (const [key, value] of Object.entries(expected)) assert.equal(effect[key as keyof typeof effect], value, key);
      });
    }
  });
});
