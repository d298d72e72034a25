// The call tree's self counts per function against perf itself: a `perf record -g` of a binary with
// known functions, imported by Ringside's perf.data reader, symbolized by the host's FrameSymbols, its
// stacks fed to the page's call tree, and the counts compared with `perf report --no-children -n`.
import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { snapshotStacks } from '../../host/stacks';
import { UNKNOWN_FRAME } from '../../shared/stacks';
import { buildCallTree, selfByFunction } from '../../webview/call-tree';
import { fixture, perfRecord, perfSelfCounts, tempDir, withFirstPltStubAsInit, openNamed } from './perf-tools';

describe('call tree of a perf.data equals perf report --no-children', function () {
  this.timeout(120000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('exact self sample counts per function, the whole capture', () => {
    const file = path.join(dir, 'g.data');
    perfRecord(file, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const { decoded, symbols } = openNamed(file); // the file's own MMAP2/COMM/FORK records, as the panel's session does
    const { table, stackOf } = snapshotStacks(decoded, symbols.frames);
    const named = new Map<string, number>();
    for (const [name, count] of selfByFunction(table, stackOf)) named.set(table.names[name], count);
    const ours = withFirstPltStubAsInit(named, fixture('pd_work'));
    const theirs = perfSelfCounts(file);
    assert.ok(theirs.total > 100, `${theirs.total} samples`);
    assert.ok((theirs.named.get('pd_inner') ?? 0) > theirs.total / 2, 'most samples in pd_inner');
    const unknown = ours.get(UNKNOWN_FRAME) ?? 0;
    ours.delete(UNKNOWN_FRAME);
    assert.deepEqual(Object.fromEntries([...ours].sort()), Object.fromEntries([...theirs.named].sort()));
    assert.equal(unknown, theirs.unresolved, 'frames without a symbol');
    // The top-down tree holds every sample once, its self counts summing to the same per function.
    const tree = buildCallTree(table, stackOf, 'top-down');
    assert.equal(tree.total[0], theirs.total);
    let self = 0;
    for (let node = 1; node < tree.size; node++) self += tree.self[node];
    assert.equal(self, theirs.total);
  });
});
