// Thread names of an opened perf.data equal perf script's: a shell that forks a subshell which never execs (named only
// by its FORK record: perf calls it "bash", as its parent) and a child that execs the fixture (named by its COMM/EXEC
// record), recorded by the installed `perf record`, imported and turned into the page's messages as Open perf.data does.
import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { snapshotToWire } from '../../host/wire';
import { fixture, perfRecord, perfScript, tempDir, openNamed } from './perf-tools';

describe("thread names of an opened perf.data equal perf script's", function () {
  this.timeout(120000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names every sampled thread as perf script names its last sample, forked-only children included', () => {
    const file = path.join(dir, 'names.data');
    // The subshell spins in bash itself (no exec): only FORK names it. diff_work is exec'd: COMM (exec) names it.
    const script = `( i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done ); ${fixture('diff_work')} 1 20000000; true`;
    perfRecord(file, ['-e', 'task-clock', '-c', '250000'], ['bash', '-c', script]);
    const perfNames = new Map<string, string>(); // "pid/tid" → comm of its last sample
    for (const line of perfScript(file, ['-F', 'comm,pid,tid']).lines) {
      const match = /^\s*(.+?)\s+(-?\d+)\/(-?\d+)\s*$/.exec(line);
      assert.ok(match, `unexpected perf script line: ${line}`);
      perfNames.set(`${match[2]}/${match[3]}`, match[1]);
    }
    const { decoded, symbols } = openNamed(file);
    const { start } = snapshotToWire(decoded, { snapshotId: 's', name: 'names.data', takenAtMs: 0, symbols: symbols.frames });
    const ours = new Map(start.threads.map((t) => [`${t.pid}/${t.tid}`, t.comm]));
    assert.ok([...perfNames.values()].filter((n) => n === 'bash').length >= 2, `the shell and its subshell: ${JSON.stringify([...perfNames])}`);
    assert.ok([...perfNames.values()].includes('diff_work'));
    for (const [thread, name] of perfNames) assert.equal(ours.get(thread), name, `thread ${thread}`);
  });
});
