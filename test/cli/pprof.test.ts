// `-o profile.pb.gz`: the pprof profile read back by Debian's `go tool pprof` (golang-go) gives the self samples per
// function that `perf report --no-children --sort sym` counts on the same perf.data (perf's own file, and a
// `ringside capture -a -g`), with the unresolved addresses perf lists one by one counted as pprof's [unknown].

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  captureAllCpus,
  fixture,
  perfNamesPltSlotByPosition,
  perfRecord,
  perfSelfCounts,
  repoRoot,
  tempDir,
  withFirstPltStubAsInit,
} from '../perfdata/perf-tools';
import { UNKNOWN_FRAME } from '../../shared/stacks';
import { DELETED_SUFFIX } from '../../native/abi/object-names';

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

/**
 * `go tool pprof -raw` of `file`: each sample's leaf (self) function per mapping, as `mapping basename → name →
 * samples`. `-top` merges functions of every binary by name; which binary a leaf is in is needed where perf's naming
 * depends on the binary (its PLT stubs), and only the raw listing keeps the location's mapping.
 */
function pprofLeavesByMapping(file: string): Map<string, Map<string, number>> {
  const result = spawnSync(goBinary(), ['tool', 'pprof', '-symbolize=none', '-raw', file], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: { ...process.env, HOME: path.dirname(file), PPROF_TMPDIR: path.dirname(file) },
  });
  assert.equal(result.status, 0, result.stderr);
  const [samplesPart, rest = ''] = result.stdout.split(/^Locations$/m);
  const [locationsPart, mappingsPart = ''] = rest.split(/^Mappings$/m);
  // "1: 0x0/0x0/0x0 /usr/bin/node BUILDID [FN][FL][LN][IN]": file, build id (may be empty), flags.
  const mappings = new Map<string, string>();
  for (const match of mappingsPart.matchAll(/^(\d+): \S+ (.*) \S* (?:\[\w+\])*$/gm)) mappings.set(match[1], path.basename(match[2]));
  const locations = new Map<string, { mapping: string; name: string }>(); // "   102: 0x557266ea4181 M=5 name :0 s=0"
  for (const match of locationsPart.matchAll(/^\s*(\d+): 0x[0-9a-f]+ M=(\d+) (.+) \S*:\d+ s=\d+$/gm)) {
    locations.set(match[1], { mapping: mappings.get(match[2]) ?? '', name: match[3] });
  }
  const leaves = new Map<string, Map<string, number>>();
  for (const match of samplesPart.matchAll(/^\s+(\d+)\s+\d+: (\d+)/gm)) {
    const leaf = locations.get(match[2]);
    assert.ok(leaf, `go tool pprof -raw: location ${match[2]} of a sample is not listed`);
    const ofMapping = leaves.get(leaf.mapping) ?? new Map<string, number>();
    leaves.set(leaf.mapping, ofMapping.set(leaf.name, (ofMapping.get(leaf.name) ?? 0) + Number(match[1])));
  }
  return leaves;
}

/**
 * The profile's flat counts equal perf report's self counts for `data`. `firstPltStubAsInit`: the binary whose first
 * PLT stub perf names `_init` (see withFirstPltStubAsInit); only that binary's samples of the stub are renamed.
 */
function assertSameAsPerfReport(data: string, profile: string, firstPltStubAsInit?: string): void {
  const top = pprofTop(profile);
  const leaves = pprofLeavesByMapping(profile);
  // -raw lists the samples -top counts: summed by name, the per-binary leaves are -top's flat counts.
  const summed = new Map<string, number>();
  for (const ofMapping of leaves.values()) for (const [name, count] of ofMapping) summed.set(name, (summed.get(name) ?? 0) + count);
  assert.deepEqual(Object.fromEntries([...summed].sort()), Object.fromEntries([...top].sort()), 'go tool pprof -raw and -top disagree');

  const theirs = perfSelfCounts(data, { pltStubsOfLibrariesAsUnresolved: true });
  assert.ok(theirs.total > 50, `${theirs.total} samples`);
  const ours = new Map<string, number>();
  let unknown = 0;
  for (const [mapping, found] of leaves) {
    const ofMapping = firstPltStubAsInit && mapping === path.basename(firstPltStubAsInit) ? withFirstPltStubAsInit(found, firstPltStubAsInit) : found;
    const perfNamed = theirs.byDso.get(mapping) ?? new Map<string, number>();
    for (const [name, count] of ofMapping) {
      // Set apart per binary, never per name alone: a capture -a sees the same `memcpy@plt` in node (perf names it
      // as Ringside does) and in chromium (perf cannot), and moving the name's total failed this test under load.
      // A library's PLT stubs: perf names them by position (wrongly, next to IRELATIVE slots), so perf counts them
      // as unresolved (perfSelfCounts) and ours are set apart the same way. A binary's stubs perf cannot name at all
      // (it prints [unknown] for chromium's lld-linked .plt, which objdump and Ringside name from .rela.plt): those
      // perf never names in that binary count as unresolved on our side too.
      // A file unlinked since its process mapped it (a program rebuilt, a library upgraded, on this machine while the
      // capture ran): perf cannot read it and counts its samples unresolved; Ringside reads the mapped copy through
      // /proc (test/symbols/replaced-files.test.ts holds those names to nm's).
      const setApart =
        name === UNKNOWN_FRAME ||
        mapping.endsWith(DELETED_SUFFIX) ||
        (name.endsWith('@plt') && (perfNamesPltSlotByPosition({ name: `${name}+0x0`, dso: mapping }) || !perfNamed.has(name)));
      if (setApart) unknown += count;
      else ours.set(name, (ours.get(name) ?? 0) + count);
    }
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
    assertSameAsPerfReport(data, profile, fixture('pd_work'));
    assert.ok((pprofTop(profile).get('pd_inner') ?? 0) > 0, 'pd_inner is among the functions');
  });

  it('capture -a -g to .data, decoded to .pb.gz: the same counts as perf report on that file', () => {
    const data = path.join(dir, 'a.data');
    const captured = captureAllCpus(data);
    assert.equal(captured.status, 0, captured.stderr);
    const profile = path.join(dir, 'a.pb.gz');
    const decoded = spawnSync(process.execPath, [cli, 'decode', data, '-o', profile], { encoding: 'utf8' });
    assert.equal(decoded.status, 0, decoded.stderr);
    assertSameAsPerfReport(data, profile, fixture('pd_work'));
  });
});
