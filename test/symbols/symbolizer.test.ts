// Symbolizer against perf itself: record a fixture with `perf record`, replay the MMAP2 records perf
// saw into Symbolizer.addMmap, and require our `sym+0xoff` to equal `perf script -F ip,sym,symoff` for
// every user and kernel sample perf could name; source lines equal addr2line; kallsyms bisection.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Symbolizer } from '../../native/symbols/symbolizer';
import { mapRange } from '../../native/abi/mappings';
import { prng } from '../../native/decode/test-records';
import { Kallsyms } from '../../native/symbols/kallsyms';
import { ElfFile } from '../../native/symbols/elf';
import { ObjectFile } from '../../native/symbols/object-file';
import { parseProcMaps } from '../../native/sys/procmaps';
import { addr2line, fixture, objdumpPlt } from './binutils';

interface PerfSample {
  readonly pid: number;
  readonly ip: bigint;
  readonly sym: string;
  readonly dso: string;
}

/** Records `argv` with perf (software clock), returns its mmap events and samples in order. */
function perfRecord(argv: string[]): {
  events: ({ kind: 'mmap'; pid: number; start: bigint; len: bigint; pgoff: bigint; path: string } | ({ kind: 'sample' } & PerfSample))[];
} {
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-perf-'));
  try {
    const data = path.join(dir, 'perf.data');
    execFileSync('perf', ['record', '-q', '-e', 'cpu-clock', '-c', '50000', '-o', data, '--', ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    const text = execFileSync('perf', ['script', '-i', data, '--show-mmap-events', '-F', 'pid,ip,sym,symoff,dso'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 << 20,
    });
    const events: ReturnType<typeof perfRecord>['events'] = [];
    for (const line of text.split('\n')) {
      const mmap = /PERF_RECORD_MMAP2? (-?\d+)\/-?\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)[^\]]*\]: \S+ (.+)$/.exec(line);
      if (mmap) {
        events.push({ kind: 'mmap', pid: Number(mmap[1]), start: BigInt('0x' + mmap[2]), len: BigInt('0x' + mmap[3]), pgoff: BigInt(mmap[4]), path: mmap[5] });
        continue;
      }
      const sample = /^\s*(\d+)\s+([0-9a-f]+)\s+(\S+)\s+\((.*)\)\s*$/.exec(line);
      if (sample) events.push({ kind: 'sample', pid: Number(sample[1]), ip: BigInt('0x' + sample[2]), sym: sample[3], dso: sample[4] });
    }
    return { events };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * perf 6.1 names PLT stubs by their position in .rela.plt, which is wrong where IRELATIVE
 * relocations are interleaved (libc: it prints `@plt+0x6`). There objdump, which follows the GOT
 * slot each stub jumps through, is the referee: same offset into the stub, and our name is one of
 * objdump's PLT labels of that file.
 */
const pltLabels = new Map<string, Set<string>>();
function samePltStub(dso: string, perfSym: string, ours: string | undefined): boolean {
  // perf's bare "@plt+0x.." names no function either: a libc stub of an IRELATIVE slot, which objdump calls
  // `*ABS*+0x..@plt` and Ringside leaves unnamed (see test/cli/profile-tables.test.ts).
  if (ours === undefined && /^@plt\+0x[0-9a-f]+$/.test(perfSym)) return true;
  const perf = /@plt\+(0x[0-9a-f]+)$/.exec(perfSym);
  const mine = ours ? /^(.+@plt)\+(0x[0-9a-f]+)$/.exec(ours) : null;
  if (!perf || !mine || perf[1] !== mine[2]) return false;
  if (!pltLabels.has(dso)) pltLabels.set(dso, new Set(objdumpPlt(dso).values()));
  return pltLabels.get(dso)!.has(mine[1]);
}

describe('symbols: Symbolizer', function () {
  this.timeout(120000);

  for (const name of ['sym_o2_pie', 'sym_o0_nopie', 'sym_cpp']) {
    it(`${name}: sym+0xoff equals perf script for every sample perf names (user and kernel)`, () => {
      const exe = fixture(name);
      const { events } = perfRecord([exe, '3000000']);
      const symbolizer = new Symbolizer({ kallsyms: true });
      let compared = 0;
      let inFixture = 0;
      let labelled = 0;
      const mismatches: string[] = [];
      for (const e of events) {
        if (e.kind === 'mmap') {
          if (e.pid > 0) symbolizer.addMmap(e.pid, e.start, e.len, e.pgoff, e.path);
          continue;
        }
        if (e.sym === '[unknown]') continue;
        const isKernel = e.dso === '[kernel.kallsyms]';
        if (!isKernel && !e.dso.startsWith('/')) continue;
        const ours = symbolizer.symbolize(e.pid, e.ip, isKernel);
        compared++;
        if (e.dso === exe) inFixture++;
        if (e.sym.startsWith('ringside_text_label+')) labelled++;
        if (ours !== e.sym && !samePltStub(e.dso, e.sym, ours)) mismatches.push(`${e.ip.toString(16)} (${e.dso}): perf ${e.sym}, ours ${ours}`);
      }
      assert.deepEqual(mismatches.slice(0, 20), [], `${mismatches.length} of ${compared} differ`);
      assert.ok(inFixture >= 10, `only ${inFixture} samples landed in the fixture`);
      if (name !== 'sym_cpp') assert.ok(labelled >= 5, `only ${labelled} samples under the untyped label ringside_text_label`);
      assert.ok(compared > inFixture, 'expected samples outside the fixture too (ld.so, libc or kernel)');
    });
  }

  it('sourceLine equals addr2line for IPs of a process known through /proc/PID/maps text', () => {
    const exe = fixture('sym_o2_pie');
    const base = 0x7f0000400000n;
    // A synthetic maps text laid out like the kernel would map the file (segments at their file offsets).
    const elf = new ElfFile(readFileSync(exe));
    const lines = elf.programHeaders
      .filter((p) => p.type === 1)
      .map((p) => {
        const start = base + (p.vaddr & ~0xfffn);
        const end = base + ((p.vaddr + p.memSize + 0xfffn) & ~0xfffn);
        return `${start.toString(16)}-${end.toString(16)} r-xp ${(p.offset & ~0xfffn).toString(16).padStart(8, '0')} fe:00 123 ${exe}`;
      });
    const symbolizer = new Symbolizer();
    symbolizer.addProcessMaps(42, lines.join('\n') + '\n');
    const rows = new ObjectFile(exe).lineTable()!.sequences.flatMap((q) => q.rows);
    const addresses = [...new Set(rows.flatMap((r) => [r.address, r.address + 1n]))].slice(0, 60);
    const expected = addr2line(exe, addresses);
    for (let i = 0; i < addresses.length; i++) {
      const hit = symbolizer.sourceLine(42, base + addresses[i]);
      assert.equal(hit ? `${hit.file}:${hit.line}` : '??:0', expected[i], `0x${addresses[i].toString(16)}`);
    }
    assert.equal(symbolizer.sourceLine(42, 0x1000n), undefined);
    assert.equal(symbolizer.sourceLine(7, base + 0x1240n), undefined, 'unknown pid');
  });

  it('kallsyms: a known kernel function and an address inside it', () => {
    const text = readFileSync('/proc/kallsyms', 'utf8');
    const k = new Kallsyms(text);
    assert.ok(k.usable, '/proc/kallsyms addresses are hidden (kptr_restrict); run as root');
    const alone = (name: string) => {
      const s = k.byName(name);
      return s && k.symbols.filter((o) => o.address === s.address).length === 1 ? s : undefined;
    };
    const target = alone('do_sys_openat2') ?? alone('vfs_read') ?? alone('ksys_read');
    assert.ok(target, 'none of do_sys_openat2, vfs_read, ksys_read is in kallsyms without an alias');
    const next = k.symbols.find((s) => s.address > target.address)!;
    const inside = target.address + (next.address - target.address) / 2n;
    const symbolizer = new Symbolizer({ kallsymsText: text });
    assert.equal(symbolizer.symbolize(0, target.address, true), `${target.name}+0x0`);
    assert.equal(symbolizer.symbolize(0, inside, true), `${target.name}+0x${(inside - target.address).toString(16)}`);
    assert.equal(symbolizer.symbolize(0, 0x1000n, true), undefined, 'below the first kernel symbol');
  });

  it('kallsyms: aliases at one address resolve as perf would (last in file order), unsorted input sorted', () => {
    const k = new Kallsyms(
      [
        'ffffffff81000300 t zeta',
        'ffffffff81000100 T __x64_sys_thing',
        'ffffffff81000100 t x64_sys_thing_local',
        'ffffffff81000100 T x64_sys_thing',
        'ffffffff81000200 T memcpy',
        'ffffffff81000200 T __memcpy',
        'ffffffff81000200 T __pi_memcpy',
        '0000000000000000 A hidden',
        'ffffffff81000400 d some_data',
      ].join('\n'),
    );
    assert.deepEqual(k.lookup(0xffffffff81000110n), {
      symbol: { address: 0xffffffff81000100n, name: 'x64_sys_thing', type: 'T', module: undefined },
      offset: 0x10n,
    });
    assert.equal(k.lookup(0xffffffff81000200n)?.symbol.name, '__pi_memcpy', 'perf shows the last alias (the only one with a length)');
    assert.equal(k.lookup(0xffffffff81000500n)?.symbol.name, 'zeta', 'data symbols are not code');
  });

  it('addMmap: a new mapping splits and replaces what it overlaps; fork copies; forget drops', () => {
    const exe = fixture('sym_o0_nopie');
    const s = new Symbolizer();
    const maps = parseProcMaps(`00400000-00405000 r-xp 00000000 fe:00 1 ${exe}\n`);
    s.addProcessMaps(1, maps);
    const main = s.symbolize(1, 0x401000n + 0x200n, false);
    assert.ok(main, 'text should symbolize');
    s.addMmap(1, 0x401000n, 0x1000n, 0n, '//anon');
    assert.equal(s.symbolize(1, 0x401200n, false), undefined, 'overlapped by anonymous memory');
    s.forkProcess(1, 2);
    assert.equal(s.symbolize(2, 0x400000n + 0x100n, false), s.symbolize(1, 0x400100n, false));
    s.forgetProcess(1);
    assert.equal(s.symbolize(1, 0x400100n, false), undefined);
  });

  it('mapRange: random overlapping mappings give every address the last one that covered it, sorted and disjoint, 20,000 in one process quickly', () => {
    type Piece = { start: bigint; end: bigint; name: number; at: bigint };
    const cut = (m: Piece, from: bigint, to: bigint): Piece => ({ ...m, start: from, end: to, at: m.at + (from - m.start) });
    for (let seed = 1; seed <= 50; seed++) {
      const random = prng(seed);
      const list: Piece[] = [];
      // The oracle: per address, the mapping that covered it last and the offset into it (perf's pgoff arithmetic).
      const owner = new Array<string>(256).fill('-');
      for (let name = 0; name < 200; name++) {
        const start = Math.floor(random() * 256);
        const end = Math.min(256, start + Math.floor(random() * 40));
        const keep = random() < 0.8;
        mapRange(list, BigInt(start), BigInt(end), keep ? { start: BigInt(start), end: BigInt(end), name, at: 0n } : null, cut);
        for (let a = start; a < end; a++) owner[a] = keep ? `${name}+${a - start}` : '-';
      }
      const seen = new Array<string>(256).fill('-');
      list.forEach((m, i) => {
        assert.ok(m.start <= m.end && (i === 0 || list[i - 1].end <= m.start), `seed ${seed}: sorted and disjoint`);
        for (let a = Number(m.start); a < Number(m.end); a++) seen[a] = `${m.name}+${m.at + BigInt(a) - m.start}`;
      });
      assert.deepEqual(seen, owner, `seed ${seed}`);
    }
    const many = new Symbolizer();
    const started = performance.now();
    for (let i = 0n; i < 20000n; i++) many.addMmap(7, 0x10000000n + i * 0x2000n, 0x1000n, 0n, '/lib/x.so');
    assert.ok(performance.now() - started < 1000, `20,000 mappings took ${(performance.now() - started).toFixed(0)} ms`);
  });
});
