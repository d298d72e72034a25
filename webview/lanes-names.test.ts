import * as assert from 'node:assert/strict';
import { withProcessHeaders, type Lane } from './lanes';

describe('process header names (pure)', () => {
  const thread = (tid: number, comm: string): Lane => ({
    key: `thread:${tid}`,
    label: `${comm} ${tid}`,
    kind: 'group',
    rows: Uint32Array.from([tid]),
    pid: 100,
    collapsed: false,
  });
  const time = Float64Array.from({ length: 200 }, (_, i) => i);

  it('a filter that leaves two threads but not the main one does not rename the process: its own comm names the header', () => {
    // The filter (stack:hash) kept threads 102 and 103, named "parser"; the process is "demo".
    const lanes = withProcessHeaders([thread(102, 'parser'), thread(103, 'parser')], time, new Set(), undefined, (pid) => (pid === 100 ? 'demo' : undefined));
    assert.deepEqual(
      lanes.map((l) => l.label),
      ['demo 100', 'parser 102', 'parser 103'],
    );
  });

  it('a process of one thread is shown once: its thread lane, which names the process when it is not the main thread', () => {
    const main = withProcessHeaders([thread(100, 'demo')], time, new Set(), undefined, () => 'demo');
    assert.deepEqual(
      main.map((l) => [l.key, l.label, l.kind]),
      [['thread:100', 'demo 100', 'group']],
    );
    const other = withProcessHeaders([thread(102, 'parser')], time, new Set(), undefined, (pid) => (pid === 100 ? 'demo' : undefined));
    assert.deepEqual(
      other.map((l) => [l.key, l.label, l.title]),
      [['thread:102', 'parser 102', 'parser 102, a thread of demo 100']],
    );
  });

  it("without the process's comm, its main thread's (else its first thread's) names it", () => {
    assert.deepEqual(
      withProcessHeaders([thread(100, 'demo'), thread(102, 'parser')], time, new Set()).map((l) => l.label),
      ['demo 100', 'demo 100', 'parser 102'],
    );
    assert.equal(withProcessHeaders([thread(102, 'parser'), thread(103, 'lexer')], time, new Set())[0].label, 'parser 100');
  });
});
