// Frame names of a C++ program, Ringside against `perf script` on the same perf.data: `ringside capture -g`
// of the sym_names fixture (lambdas in functions with parameters and in a const member of a class template,
// template members, non-virtual and virtual thunks, new[]/delete[], a local label inside a function), then
// every frame of every sample named by `ringside decode` and by perf.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { demangle } from '../../native/symbols/demangle';
import { ElfFile } from '../../native/symbols/elf';
import { fixture, nmAddress, perfFrames, perfSampleKey, repoRoot, tempDir, type PerfFrame } from '../perfdata/perf-tools';

const cli = path.join(repoRoot, 'dist/cli.js');

describe('C++ frame names equal perf script (real kernel, g++ fixture)', function () {
  this.timeout(120_000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names every frame of every sample as perf does: lambdas, templates, thunks, labels, operator new[]', () => {
    assert.ok(existsSync(cli), 'dist/cli.js is built (npm run build)');
    const binary = fixture('sym_names');
    const data = path.join(dir, 'names.data');
    const capture = [cli, 'capture', '-q', '-e', 'task-clock', '-g', '--pages', '256', '-o', data, '--', binary, '1500'];
    const captured = spawnSync(process.execPath, capture, { encoding: 'utf8' });
    assert.equal(captured.status, 0, captured.stderr);
    const decoded = spawnSync(process.execPath, [cli, 'decode', data], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(decoded.status, 0, decoded.stderr);
    const ours = decoded.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as { type: string; time: string; tid?: number; callchainSyms?: (string | null)[] })
      .filter((record) => record.type === 'SAMPLE');
    const theirs = perfFrames(data);
    assert.equal(ours.length, theirs.size, 'the same samples');

    // perf 6.1 names some stubs of the lazy-binding .plt `_init+0x30`: _init has size 0, perf stretches it to
    // the next symbol, and its symbol tree finds _init first for those addresses (plt-symbols.test.ts pins the
    // same on pd_work). Such a frame counts as equal when it is the same address: the stub's start plus our
    // offset is _init plus perf's.
    const init = BigInt(nmAddress(binary, '_init'));
    const stubs = new Map(new ElfFile(readFileSync(binary)).pltSymbols().map((s) => [demangle(s.name) ?? s.name, s.value]));
    const sameStub = (mine: string, perf: PerfFrame): boolean => {
      const stub = /^(.+@plt)\+0x([0-9a-f]+)$/.exec(mine);
      const inInit = /^_init\+0x([0-9a-f]+)$/.exec(perf.name);
      const start = stub ? stubs.get(stub[1]) : undefined;
      return perf.dso === binary && !!stub && !!inInit && start !== undefined && start + BigInt(`0x${stub[2]}`) === init + BigInt(`0x${inInit[1]}`);
    };

    const differ: string[] = [];
    const seen = new Map<string, number>();
    let frames = 0;
    for (const sample of ours) {
      const perf = theirs.get(perfSampleKey(sample.tid, sample.time));
      assert.ok(perf, `perf has the sample at ${sample.time}`);
      const mine = (sample.callchainSyms ?? []).map((name) => name ?? '[unknown]');
      assert.equal(mine.length, perf.length, `frames of the sample at ${sample.time}`);
      mine.forEach((name, i) => {
        frames++;
        const bare = name.replace(/\+0x[0-9a-f]+$/, '');
        seen.set(bare, (seen.get(bare) ?? 0) + 1);
        if (name !== perf[i].name && !sameStub(name, perf[i])) differ.push(`${sample.time} #${i}: ours ${name}, perf ${perf[i].name} (${perf[i].dso})`);
      });
    }
    assert.deepEqual(differ.slice(0, 10), [], `${differ.length} of ${frames} frames differ`);

    // The comparison covered the names that were wrong before: each kind has samples of its own.
    for (const name of [
      'spin_lambda(long, int)::{lambda(long)#1}::operator()',
      'names::Accumulator<long>::scaled(long, int) const::{lambda(int)#1}::operator()',
      'names::Accumulator<double>::spin',
      'non-virtual thunk to names::Both::right(long)',
      'virtual thunk to names::Square::area(long)',
      'spin_arrays',
    ])
      assert.ok((seen.get(name) ?? 0) > 0, `no frame named ${name}: ${[...seen.keys()].join(', ')}`);
    assert.ok(![...seen.keys()].some((name) => name.startsWith('_Z')), 'no name left mangled');
    assert.ok(!seen.has('local_label_in_loop'), 'the local label inside spin_labelled names nothing');
    // ...and samples after that label do land in spin_labelled, so the label rule was exercised.
    const label = BigInt(nmAddress(binary, 'local_label_in_loop')) - BigInt(nmAddress(binary, '_Z13spin_labelledli'));
    const afterLabel = ours
      .flatMap((s) => s.callchainSyms ?? [])
      .filter((name) => {
        const m = /^spin_labelled\+0x([0-9a-f]+)$/.exec(name ?? '');
        return m !== null && BigInt(`0x${m[1]}`) >= label;
      });
    assert.ok(afterLabel.length > 0, 'samples after local_label_in_loop');
    // operator new[] and delete[] frames: their PLT stubs at least (perf may call them _init, see above).
    assert.ok(
      [...seen.keys()].some((name) => name.startsWith('operator new[]')),
      'operator new[] frames',
    );
  });
});
