import * as assert from 'node:assert/strict';
import { compileFilter, fieldTermKey, parseFilter, type FilterSubject, type FilterTerm } from './filter';

describe('filter: field.NAME terms', () => {
  it('parses = and ~, keeps the value as typed, negates with -, and accepts quoted values', () => {
    const parsed = parseFilter('field.filename~PassWD -field.__syscall_nr=0x101 field.filename="/a b/c" pid:7');
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.terms, [
      { key: 'field', negate: false, value: 'PassWD', field: 'filename', op: '~' },
      { key: 'field', negate: true, value: '0x101', field: '__syscall_nr', op: '=' },
      { key: 'field', negate: false, value: '/a b/c', field: 'filename', op: '=' },
      { key: 'pid', negate: false, value: '7' },
    ]);
    assert.equal(fieldTermKey(parsed.terms[0]), 'filename~PassWD');
  });

  it('rejects malformed field terms with a reason', () => {
    for (const bad of ['field.', 'field.name', 'field.=3', 'field.9x=1', 'field.a-b=1']) {
      const parsed = parseFilter(bad);
      assert.equal(parsed.ok, false, bad);
      assert.match((parsed as { error: string }).error, /field\.NAME=VALUE/, bad);
    }
    const empty = parseFilter('field.addr=');
    assert.deepEqual(empty, { ok: false, error: 'field.addr= needs a value' });
  });

  it('asks the subject for field terms and ANDs them with the others', () => {
    const parsed = parseFilter('field.period=1 -comm:idle');
    assert.ok(parsed.ok);
    const matchingRows = new Set([0, 2]);
    const asked: FilterTerm[] = [];
    const subject: FilterSubject = {
      eventName: () => 'e',
      comm: (r) => (r === 2 ? 'idle' : 'app'),
      symbol: () => null,
      kindName: () => 'SAMPLE',
      pid: () => 1,
      tid: () => 1,
      cpu: () => 0,
      misc: () => 0,
      ipHex: () => '0',
      fieldMatches: (term, row) => {
        asked.push(term);
        return matchingRows.has(row);
      },
    };
    const keep = compileFilter(parsed.terms, subject);
    assert.deepEqual([0, 1, 2, 3].filter(keep), [0]);
    assert.equal(asked[0].field, 'period');
    const { fieldMatches: _dropped, ...withoutHost } = subject;
    assert.deepEqual([0, 1].filter(compileFilter(parsed.terms, withoutHost)), [], 'no host answer: field terms match nothing');
  });
});

describe('filter: stack:NAME terms', () => {
  it('keeps rows whose callchain has a function containing NAME, case-insensitive; no callchain or no stacks: no match', () => {
    const parsed = parseFilter('stack:PD_outer');
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.terms, [{ key: 'stack', negate: false, value: 'pd_outer' }]);
    const chains: Record<number, string[]> = { 0: ['pd_inner', 'pd_outer', 'main'], 1: ['pd_write_counter', 'main'], 2: [] };
    const subject: FilterSubject = {
      eventName: () => 'task-clock',
      comm: () => 'pd_work',
      symbol: () => 'pd_outer+0x4',
      kindName: () => 'SAMPLE',
      pid: () => 1,
      tid: () => 1,
      cpu: () => 0,
      misc: () => 0,
      ipHex: () => '0',
      stackFunctions: (r) => chains[r] ?? [],
    };
    assert.deepEqual([0, 1, 2, 3].filter(compileFilter(parsed.terms, subject)), [0]);
    const negated = parseFilter('-stack:main');
    assert.ok(negated.ok);
    assert.deepEqual([0, 1, 2, 3].filter(compileFilter(negated.terms, subject)), [2, 3]);
    const exact = parseFilter('stack:=PD_INNER stack:="main"');
    assert.ok(exact.ok);
    assert.deepEqual(exact.terms, [
      { key: 'stack', negate: false, value: 'pd_inner', exact: true },
      { key: 'stack', negate: false, value: 'main', exact: true },
    ]);
    assert.deepEqual([0, 1, 2, 3].filter(compileFilter(exact.terms, subject)), [0]);
    const partial = parseFilter('stack:=pd_inn');
    assert.ok(partial.ok);
    assert.deepEqual([0, 1, 2, 3].filter(compileFilter(partial.terms, subject)), [], 'stack:= wants the whole name');
    assert.deepEqual(parseFilter('stack:='), { ok: false, error: 'stack:= needs a function name' });
    const { stackFunctions: _dropped, ...withoutStacks } = subject;
    assert.deepEqual([0, 1].filter(compileFilter(parsed.terms, withoutStacks)), [], 'the symbol column alone never answers stack:');
  });
});

describe('filter: words with a colon', () => {
  it('rejects an unknown key instead of matching nothing, and says what to write', () => {
    const parsed = parseFilter('pid:7 foo:bar');
    assert.equal(parsed.ok, false);
    assert.match((parsed as { error: string }).error, /^unknown key "foo:" in "foo:bar": use event:, comm:/);
    assert.match((parsed as { error: string }).error, /as event:foo:bar\)$/);
    assert.equal(parseFilter('-sched:sched_switch').ok, false);
    assert.deepEqual(parseFilter('event:sched:sched_switch'), { ok: true, terms: [{ key: 'event', negate: false, value: 'sched:sched_switch' }] });
    assert.deepEqual(parseFilter('busy'), { ok: true, terms: [{ key: 'any', negate: false, value: 'busy' }] });
  });
});
