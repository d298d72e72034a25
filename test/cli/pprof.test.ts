// `-o profile.pb.gz`: the pprof profile read back by Debian's `go tool pprof` (golang-go) gives the self samples per
// function that `perf report --no-children --sort sym` counts on the same perf.data (perf's own file, and a
// `ringside capture -a -g`), with the unresolved addresses perf lists one by one counted as pprof's [unknown].

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { captureAllCpus, fixture, perfRecord, perfSelfCounts, repoRoot, tempDir, withFirstPltStubAsInit } from '../perfdata/perf-tools';
import { UNKNOWN_FRAME } from '../../shared/stacks';

const cli = path.join(repoRoot, 'dist/cli.js');

function goBinary(): string {
  for (const candidate of ['/usr/bin/go', '/usr/lib/go/bin/go', '/usr/local/go/bin/go']) if (existsSync(candidate)) return candidate;
  throw new Error('go is not installed (apt-get install golang-go): the pprof test reads the profile back with go tool pprof');
}

/**
 * `go tool pprof -top` of `file`: flat samples per function name, every node shown. `-symbolize=none` reads the names
 * the profile holds: without it pprof symbolizes the addresses again from the local files (the profile's mappings
 * carry no address ranges) and shortens C++ names (template arguments, `(anonymous namespace)`).
 */
function pprofTop(file: string): Map<string, number> {
  const result = spawnSync(goBinary(), ['tool', 'pprof', '-symbolize=none', '-top', '-nodecount=1000000', '-nodefraction=0', '-edgefraction=0', file], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, HOME: path.dirname(file), PPROF_TMPDIR: path.dirname(file) },
  });
  assert.equal(result.status, 0, result.stderr);
  const flat = new Map<string, number>();
  let rows = 0;
  for (const line of result.stdout.split('\n')) {
    // "      5708 14.42% 14.42%      25452 64.28%  name with spaces"
    const match = /^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.+?)\s*$/.exec(line);
    if (!match) continue;
    rows++;
    const count = Number(match[1]);
    if (count > 0) flat.set(match[2], (flat.get(match[2]) ?? 0) + count);
  }
  assert.ok(rows > 0, `go tool pprof -top printed no rows: ${result.stdout.slice(0, 500)}`);
  return flat;
}

/** The profile's flat counts equal perf report's self counts for `data`, after `adjust` (perf's naming of PLT stubs). */
function assertSameAsPerfReport(data: string, profile: string, adjust: (counts: Map<string, number>) => Map<string, number> = (c) => c): void {
  const ours = adjust(pprofTop(profile));
  const theirs = perfSelfCounts(data, { pltStubsOfLibrariesAsUnresolved: true });
  assert.ok(theirs.total > 50, `${theirs.total} samples`);
  let unknown = ours.get(UNKNOWN_FRAME) ?? 0;
  ours.delete(UNKNOWN_FRAME);
  // A library's PLT stubs: perf names them by position (wrongly, next to IRELATIVE slots), so perf's counts of those
  // names are unresolved; ours of the same names (stubs Ringside and perf both name) are set apart the same way.
  for (const name of theirs.libraryPltNames) {
    unknown += ours.get(name) ?? 0;
    ours.delete(name);
  }
  // PLT stubs perf cannot name at all (it prints [unknown] for some, e.g. in chromium's lld-linked .plt; Ringside names
  // them from .rela.plt): counted as unresolved on our side too. Only `x@plt` names perf never gives are moved.
  for (const [name, count] of [...ours]) {
    if (!name.endsWith('@plt') || theirs.named.has(name)) continue;
    unknown += count;
    ours.delete(name);
  }
  assert.deepEqual(Object.fromEntries([...ours].sort()), Object.fromEntries([...theirs.named].sort()));
  assert.equal(unknown, theirs.unresolved, 'samples at addresses without a symbol');
}

describe('pprof output read back by go tool pprof equals perf report --no-children --sort sym', function () {
  this.timeout(180_000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("decode of perf record -g's file to profile.pb.gz: the same top functions and counts", () => {
    const data = path.join(dir, 'g.data');
    perfRecord(data, ['-g', '-e', 'task-clock', '-c', '250000'], [fixture('pd_work'), '3', '60000000']);
    const profile = path.join(dir, 'profile.pb.gz');
    const decoded = spawnSync(process.execPath, [cli, 'decode', data, '-o', profile], { encoding: 'utf8' });
    assert.equal(decoded.status, 0, decoded.stderr);
    assert.equal(statSync(profile).mode & 0o777, 0o600, 'private like every output');
    assertSameAsPerfReport(data, profile, (counts) => withFirstPltStubAsInit(counts, fixture('pd_work')));
    assert.ok((pprofTop(profile).get('pd_inner') ?? 0) > 0, 'pd_inner is among the functions');
  });

  it('capture -a -g to .data, decoded to .pb.gz: the same counts as perf report on that file', () => {
    const data = path.join(dir, 'a.data');
    const captured = captureAllCpus(data);
    assert.equal(captured.status, 0, captured.stderr);
    const profile = path.join(dir, 'a.pb.gz');
    const decoded = spawnSync(process.execPath, [cli, 'decode', data, '-o', profile], { encoding: 'utf8' });
    assert.equal(decoded.status, 0, decoded.stderr);
    assertSameAsPerfReport(data, profile, (counts) => withFirstPltStubAsInit(counts, fixture('pd_work')));
  });
});
