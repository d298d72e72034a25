// Names of the addresses in .init and the lazy-binding .plt of a non-PIE binary, Ringside against
// `perf script` at every byte of those sections. Samples rarely land there by chance, so a real
// `perf record` of pd_work is taken and the IPs of its samples in pd_work's own code are rewritten
// in the file, one per address of .init..end of .plt: perf and Ringside then name the same file.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RecordType } from '../../native/abi/uapi';
import { ElfFile } from '../../native/symbols/elf';
import { fixture, importFile, perfRecord, perfScript, symbolizerFor, tempDir } from './perf-tools';

/** Rewrites the IP of SAMPLE records inside [from, to) to the addresses of `targets` in turn; returns how many. */
function retargetSamples(bytes: Buffer, from: bigint, to: bigint, targets: readonly bigint[]): number {
  // perf.data header: magic, size, attr_size, attrs {offset, size}, data {offset, size}.
  const dataStart = Number(bytes.readBigUInt64LE(40));
  const dataEnd = dataStart + Number(bytes.readBigUInt64LE(48));
  let next = 0;
  for (let at = dataStart; at < dataEnd && next < targets.length;) {
    const size = bytes.readUInt16LE(at + 6);
    // One event recorded without PERF_SAMPLE_IDENTIFIER: the IP is the sample's first u64.
    if (bytes.readUInt32LE(at) === RecordType.SAMPLE) {
      const ip = bytes.readBigUInt64LE(at + 8);
      if (ip >= from && ip < to) bytes.writeBigUInt64LE(targets[next++], at + 8);
    }
    if (size === 0) break;
    at += size;
  }
  return next;
}

describe('PLT and .init addresses are named as perf script names them', function () {
  this.timeout(120_000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every address of .init and .plt of pd_work', () => {
    const work = fixture('pd_work');
    const elf = new ElfFile(readFileSync(work));
    const init = elf.section('.init');
    const plt = elf.section('.plt');
    const text = elf.section('.text');
    assert.ok(init && plt && text, 'pd_work has .init, .plt and .text');
    const addresses: bigint[] = [];
    const pltEnd = plt.addr + BigInt(plt.size);
    for (let a = init.addr; a < pltEnd; a++) addresses.push(a);

    const recorded = path.join(dir, 'work.data');
    perfRecord(recorded, ['-e', 'task-clock', '-c', '100000'], [work, '3', '60000000']);
    const bytes = readFileSync(recorded);
    assert.equal(retargetSamples(bytes, text.addr, text.addr + BigInt(text.size), addresses), addresses.length, 'enough samples in .text');
    const file = path.join(dir, 'plt.data');
    writeFileSync(file, bytes);

    const theirs = new Map<string, string>();
    for (const line of perfScript(file, ['-F', 'ip,sym,symoff']).lines) {
      const match = /^\s*([0-9a-f]+)\s+(\S+)\s*$/.exec(line);
      if (match && BigInt(`0x${match[1]}`) < pltEnd) theirs.set(match[1], match[2]);
    }
    const { decoded } = importFile(file);
    const sampleRow = decoded.columns.kind.findIndex((kind) => kind === RecordType.SAMPLE);
    const pid = decoded.columns.pid[sampleRow];
    const symbolizer = symbolizerFor(decoded);
    const ours = new Map<string, string>();
    for (const a of addresses) ours.set(a.toString(16), symbolizer.symbolize(pid, a, false) ?? '[unknown]');
    assert.equal(theirs.size, addresses.length, 'perf printed every retargeted address');

    // objdump's labels are the truth for the stubs: `<fork@plt>:` at the start of each 16-byte entry.
    const stubs = new Map<bigint, string>();
    for (const m of execFileSync('objdump', ['-d', '-j', '.plt', work], { encoding: 'utf8' }).matchAll(/^([0-9a-f]+) <(\S+@plt)>:$/gm)) {
      stubs.set(BigInt(`0x${m[1]}`), m[2]);
    }
    const first = plt.addr + 16n;
    assert.equal(stubs.size, plt.size / 16 - 1, 'one stub per entry after the 16-byte header');
    const expectedPerf = new Map(ours);
    // perf 6.1 does not name the first stub: _init has size 0 and perf stretches it up to the second
    // stub, so the first stub's 16 bytes print as _init+0x30.. where objdump (and Ringside) say `<name>@plt`.
    // Only these 16 addresses differ, and the test pins both answers.
    for (let k = 0n; k < 16n; k++) {
      const a = first + k;
      assert.equal(ours.get(a.toString(16)), `${stubs.get(first)}+0x${k.toString(16)}`);
      expectedPerf.set(a.toString(16), `_init+0x${(a - init.addr).toString(16)}`);
    }
    assert.deepEqual(Object.fromEntries(theirs), Object.fromEntries(expectedPerf));
  });
});
