// `ringside capture -g dwarf` on the real kernel: a program built without frame pointers shows its
// callers, unwound from the user registers and stack the kernel copied into the flight recorder, and
// the call chains are the ones `perf record --call-graph dwarf` unwinds for the same program.

import type { EmbeddedCallchains } from '../../host/standalone';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ourUserFrames, perfUserFrames, perfSampleKey, type JsonCallchainSample } from '../perfdata/perf-tools';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const fixture = path.join(root, 'fixtures-bin', 'unwind_nofp');

interface JsonSample {
  type: string;
  ip?: string;
  callchain?: string[];
  callchainSyms?: (string | null)[];
}

const isUserAddress = (ip: string) => BigInt(ip) < 0x800000000000n;

/** The user frames of a sample as `sym+0xoff`, `[unknown]` where there is no symbol (as perf prints it). */
function userChain(sample: JsonSample): string {
  const ips = sample.callchain ?? [];
  return ips.flatMap((ip, i) => (isUserAddress(ip) ? [sample.callchainSyms?.[i] ?? '[unknown]'] : [])).join(' <- ');
}

/** Distinct user call chains `perf record --call-graph dwarf` unwinds for the same command (perf script --no-inline). */
function perfChains(command: readonly string[]): Set<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-unwind-'));
  try {
    const data = path.join(dir, 'perf.data');
    const record = spawnSync('perf', ['record', '-q', '-o', data, '--call-graph', 'dwarf', '-e', 'task-clock', '--', ...command], { encoding: 'utf8' });
    assert.equal(record.status, 0, record.stderr);
    const script = spawnSync('perf', ['script', '-i', data, '--no-inline', '-F', 'ip,sym,symoff,dso'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(script.status, 0, script.stderr);
    const chains = new Set<string>();
    for (const block of script.stdout.split(/\n\s*\n/)) {
      const frames = block
        .split('\n')
        .map((line) => /^\s+[0-9a-f]+ (.+) \((.*)\)$/.exec(line))
        .filter((m) => m && !m[2].startsWith('[kernel'))
        .map((m) => m![1]);
      if (frames.length) chains.add(frames.join(' <- '));
    }
    return chains;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('ringside capture -g dwarf (real kernel, perf as referee)', function () {
  this.timeout(120_000);

  it('shows the callers of a program without frame pointers, as perf --call-graph dwarf unwinds them', () => {
    assert.ok(existsSync(cli) && existsSync(fixture), 'dist/cli.js and the fixtures are built');
    const command = [fixture, '400', '0'];
    const result = spawnSync(process.execPath, [cli, 'capture', '-g', 'dwarf', '-e', 'task-clock', '--', ...command], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(result.status, 0, result.stderr);
    const samples = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as JsonSample)
      .filter((record) => record.type === 'SAMPLE' && record.ip !== undefined && isUserAddress(record.ip));
    // A 64-page ring holds the last few dozen samples of 8 KiB stack each: all of them in the spin phase.
    assert.ok(samples.length >= 20, `${samples.length} user samples kept`);
    const inLevelC = samples.filter((sample) => /^level_c\+/.test(sample.callchainSyms?.[0] ?? ''));
    assert.ok(inLevelC.length >= samples.length / 2, `${inLevelC.length} of ${samples.length} samples in the hot loop`);
    for (const sample of inLevelC) {
      const names = userChain(sample)
        .split(' <- ')
        .map((frame) => frame.replace(/\+0x[0-9a-f]+$/, ''));
      assert.deepEqual(names.slice(0, 5), ['level_c', 'level_b', 'level_a', 'phase_spin', 'main'], userChain(sample));
    }
    // The same chains, offsets included, that perf unwinds for the same program. Tolerance: a sample
    // taken while clock_gettime runs in the vDSO may be unwound through it by one tool and not the
    // other; at most 5% of the samples may have a chain perf never shows.
    const theirs = perfChains(command);
    const unknown = samples.filter((sample) => !theirs.has(userChain(sample)));
    assert.ok(
      unknown.length <= samples.length / 20,
      `${unknown.length} of ${samples.length} chains perf never unwinds:\n${unknown.slice(0, 5).map(userChain).join('\n')}`,
    );
  });

  it("puts the unwound callers in the timeline page's record details", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-unwind-html-'));
    try {
      const page = path.join(dir, 'timeline.html');
      const result = spawnSync(process.execPath, [cli, 'capture', '-q', '-g', 'dwarf', '-e', 'task-clock', '-o', page, '--', fixture, '300', '0'], {
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
      const text = readFileSync(page, 'utf8');
      // Each sample's callchain is embedded once as a stack table (host/standalone.ts, EmbeddedCallchains), which the
      // page's stand-in host turns back into the record's details: a sample in level_c lists its callers, which exist
      // only through unwinding.
      const json = /<script type="application\/json" id="ringside-standalone-data">(.*?)<\/script>/s.exec(text);
      assert.ok(json, 'the page embeds its data');
      const data = JSON.parse(json[1]) as { snapshots: { callchains?: EmbeddedCallchains }[] };
      const chains = data.snapshots.flatMap(({ callchains: cc }) =>
        cc
          ? Object.values(cc.rowStack).map((leaf) => {
              const names: string[] = [];
              for (let stack = leaf; stack >= 0; stack = cc.stackPrefix[stack]) names.push(cc.names[cc.name[cc.stackFrame[stack]]] ?? '?');
              return names;
            })
          : [],
      );
      const expected = ['level_c', 'level_b', 'level_a', 'phase_spin', 'main'];
      assert.ok(
        chains.some((names) => expected.every((name, i) => new RegExp(`^${name}\\+0x[0-9a-f]+$`).test(names[i] ?? ''))),
        `a level_c sample names level_b, level_a, phase_spin and main (${chains.length} callchains; e.g. ${JSON.stringify(chains.slice(0, 3))})`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a perf.data that perf unwinds to the same callers as Ringside', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-unwind-export-'));
    try {
      const data = path.join(dir, 'dwarf.data');
      const captured = spawnSync(
        process.execPath,
        [cli, 'capture', '-q', '-g', 'dwarf', '--pages', '512', '-e', 'task-clock', '-o', data, '--', fixture, '600', '100'],
        { encoding: 'utf8' },
      );
      assert.equal(captured.status, 0, captured.stderr);
      const decoded = spawnSync(process.execPath, [cli, 'decode', data], { encoding: 'utf8', maxBuffer: 1 << 30 });
      assert.equal(decoded.status, 0, decoded.stderr);
      const ours = decoded.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line.replace(/"time":(\d+)/, '"time":"$1"')) as JsonCallchainSample & { type: string })
        .filter((record) => record.type === 'SAMPLE');
      const perf = perfUserFrames(data);
      assert.equal(ours.length, perf.size, 'the same samples');
      let deep = 0;
      const differ: string[] = [];
      let compared = 0;
      for (const sample of ours) {
        const theirs = perf.get(perfSampleKey(sample.tid, sample.time));
        assert.ok(theirs, `perf has the sample at ${sample.time}`);
        // A sample in the launcher's execve, before the program's own mappings, has no user frames in either.
        if (theirs.length > 0) compared++;
        const mine = ourUserFrames(sample).join(' <- ');
        if (mine !== theirs.join(' <- ')) differ.push(`ours: ${mine}\nperf: ${theirs.join(' <- ')}`);
        if (/ <- main\+/.test(mine)) deep++;
      }
      // perf unwinds with the side-band's data mappings (mmap_data): without them it stops at the first frame.
      assert.ok(compared >= 100, `${compared} samples with user frames in a 2 MiB ring`);
      assert.ok(deep >= compared / 2, `${deep} of ${compared} samples unwound to main`);
      // Same stack copies, same CFI: every sample agrees here; 1% tolerance as for perf's own files.
      assert.ok(differ.length <= compared / 100, `${differ.length} of ${compared} samples differ:\n${differ.slice(0, 3).join('\n')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
