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

  it('a filter that leaves only another thread does not rename the process: its own comm names the header', () => {
    // The filter (stack:hash) kept only thread 102, named "parser"; the process is "demo".
    const lanes = withProcessHeaders([thread(102, 'parser')], time, new Set(), undefined, (pid) => (pid === 100 ? 'demo' : undefined));
    assert.deepEqual(
      lanes.map((l) => l.label),
      ['demo 100', 'parser 102'],
    );
  });

  it("without the process's comm, its main thread's (else its first thread's) names it", () => {
    assert.deepEqual(
      withProcessHeaders([thread(100, 'demo'), thread(102, 'parser')], time, new Set()).map((l) => l.label),
      ['demo 100', 'demo 100', 'parser 102'],
    );
    assert.equal(withProcessHeaders([thread(102, 'parser')], time, new Set())[0].label, 'parser 100');
  });
});
