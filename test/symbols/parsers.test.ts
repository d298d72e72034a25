// ELF/DWARF readers held to binutils on every fixture variant: line rows equal objdump --dwarf=decodedline,
// address -> line equals addr2line, variables equal nm -S, functions equal nm, build ids equal readelf -n.

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ObjectFile, findDebugFile, readElf } from '../../native/symbols/object-file';
import { ElfFile, ElfFormatError, SHF_COMPRESSED } from '../../native/symbols/elf';
import { basename } from '../../native/symbols/dwarf-reader';
import { addr2line, fixture, nm, objdumpDecodedLine, readelfBuildId } from './binutils';

const VARIANTS = [
  'sym_o0_pie',
  'sym_o0_nopie',
  'sym_o2_pie',
  'sym_o2_nopie',
  'sym_dwarf4',
  'sym_dwarf4_o2',
  'sym_dwarf2',
  'sym_dwarf3_o2',
  'sym_dwarf64',
  'sym_gz',
  'sym_stripped',
  'sym_cpp',
  'sym_cpp_o2',
  'sym_elf32',
];

/**
 * ObjectFile.lineForAddress, which runs only the line program of the unit .debug_aranges names, against the whole
 * table (every program) of another ObjectFile of the same file: at every row, inside every range, at every function
 * and past each function's start, and (where the file has .debug_aranges naming every unit with code) without
 * building the whole table.
 */
function assertUnitLookupsMatch(file: string): void {
  const whole = new ObjectFile(file);
  const table = whole.lineTable();
  assert.ok(table, 'no line table');
  const addresses: bigint[] = [];
  for (const seq of table.sequences) {
    for (let i = 0; i + 1 < seq.rows.length; i++) {
      addresses.push(seq.rows[i].address);
      if (seq.rows[i + 1].address > seq.rows[i].address + 1n) addresses.push(seq.rows[i].address + 1n);
    }
    addresses.push(seq.end);
  }
  for (const symbol of whole.symbols()) if (symbol.kind === 'function') addresses.push(symbol.value, symbol.value + 3n);
  addresses.push(0n, 0x7fffffffn);
  const lazy = new ObjectFile(file);
  for (const address of addresses) assert.deepEqual(lazy.lineForAddress(address), table.lineForAddress(address), `at ${hex(address)}`);
  const hasAranges = (lazy.dwarfElf?.sectionData('.debug_aranges')?.length ?? 0) > 0;
  if (hasAranges) assert.equal((lazy as unknown as { lines?: unknown }).lines, undefined, 'the whole table was built');
}

function hex(a: bigint): string {
  return '0x' + a.toString(16);
}

describe('symbols: ELF and DWARF against binutils', function () {
  this.timeout(60000);

  for (const name of VARIANTS) {
    describe(name, () => {
      const file = fixture(name);
      const object = new ObjectFile(file);

      it('line table rows equal objdump --dwarf=decodedline, row for row', () => {
        const table = object.lineTable();
        assert.ok(table, 'no line table');
        const ours = table.sequences.flatMap((seq) =>
          seq.rows.map((r) => ({
            basename: basename(table.files[r.file].path),
            line: r.endSequence ? undefined : r.line,
            address: r.address,
            isStmt: r.isStmt && !r.endSequence,
          })),
        );
        const theirs = objdumpDecodedLine(file).map(({ basename: b, line, address, isStmt }) => ({ basename: b, line, address, isStmt }));
        assert.ok(theirs.length >= 10, `objdump printed only ${theirs.length} rows`);
        assert.deepEqual(ours, theirs);
      });

      it('addressesForLine gives every is_stmt address objdump lists for each line', () => {
        const table = object.lineTable();
        assert.ok(table);
        // Group by basename and line: objdump's block headers do not always follow DW_LNS_set_file, so they
        // cannot tell same-named files apart; the fixture's two util.c files use disjoint line numbers.
        const expected = new Map<string, Set<bigint>>();
        for (const row of objdumpDecodedLine(file)) {
          if (!row.isStmt || row.line === undefined) continue;
          const key = `${row.basename}\0${row.line}`;
          if (!expected.has(key)) expected.set(key, new Set());
          expected.get(key)!.add(row.address);
        }
        let checked = 0;
        let severalAddresses = 0;
        for (const [key, addresses] of expected) {
          const [base, lineText] = key.split('\0');
          const paths: string[] = table.filesWithRows().filter((p) => basename(p) === base);
          assert.ok(paths.length > 0, `no file named ${base}`);
          const withCode: string[] = paths.filter((p) => table.addressesForLine(p, Number(lineText)).length > 0);
          assert.equal(withCode.length, 1, `${base}:${lineText} has code in ${withCode.join(', ')}`);
          const ranges = table.addressesForLine(withCode[0], Number(lineText));
          const ours = [...new Set(ranges.map((r) => r.start))].sort((a, b) => (a < b ? -1 : 1));
          const theirs = [...addresses].sort((a, b) => (a < b ? -1 : 1));
          assert.deepEqual(ours.map(hex), theirs.map(hex), `${withCode[0]}:${lineText}`);
          assert.equal(table.firstStatementAddress(withCode[0], Number(lineText)), theirs[0]);
          for (const r of ranges) assert.ok(r.end >= r.start);
          if (theirs.length > 1) severalAddresses++;
          checked++;
        }
        assert.ok(checked >= 5, `only ${checked} lines checked`);
        if (name.includes('o2')) assert.ok(severalAddresses >= 1, `an -O2 build should have a line at several is_stmt addresses (found ${severalAddresses})`);
      });

      it('lineForAddress equals addr2line at every row and inside every range', () => {
        const table = object.lineTable();
        assert.ok(table);
        const addresses: bigint[] = [];
        for (const seq of table.sequences) {
          for (let i = 0; i + 1 < seq.rows.length; i++) {
            addresses.push(seq.rows[i].address);
            if (seq.rows[i + 1].address > seq.rows[i].address + 1n) addresses.push(seq.rows[i].address + 1n);
          }
        }
        let theirs: string[];
        let ours: string[];
        if (name === 'sym_dwarf64') {
          // binutils 2.40 addr2line misreads 64-bit DW_FORM_line_strp offsets ("offset ... greater than
          // .debug_line_str size"), so for DWARF64 the reference is objdump's decoded rows: the last row at or
          // below the address within its sequence, compared as basename:line.
          const rows = objdumpDecodedLine(file);
          theirs = addresses.map((a) => {
            let best: (typeof rows)[number] | undefined;
            for (let i = 0; i < rows.length; i++) {
              if (rows[i].line === undefined) continue;
              const seqEnd = rows.slice(i).find((r) => r.line === undefined)!.address;
              if (rows[i].address <= a && a < seqEnd) best = rows[i];
            }
            return best ? `${best.basename}:${best.line}` : '??:0';
          });
          ours = addresses.map((a) => {
            const hit = table.lineForAddress(a);
            return hit ? `${basename(hit.file)}:${hit.line}` : '??:0';
          });
        } else {
          theirs = addr2line(file, addresses);
          ours = addresses.map((a) => {
            const hit = table.lineForAddress(a);
            return hit ? `${hit.file}:${hit.line}` : '??:0';
          });
        }
        assert.equal(ours.length, theirs.length);
        for (let i = 0; i < ours.length; i++) assert.equal(ours[i], theirs[i], `at ${hex(addresses[i])}`);
        assert.equal(table.lineForAddress(0x7fffffffn), undefined);
      });

      it("lineForAddress through .debug_aranges (one unit's program) equals the whole table's", () => {
        assertUnitLookupsMatch(file);
      });

      it('every static variable address and size equals nm -S', () => {
        const symbols = nm(file);
        const variables = object.variables();
        const expected = name.startsWith('sym_cpp')
          ? ['ringside::ticks', 'ringside::ratios', 'ringside::Meter::readings', 'ringside::Meter::level', 'meter']
          : name === 'sym_elf32'
            ? ['counter32', 'small32', 'pair32_value']
            : ['hits', 'total_writes', 'greeting', 'origin', 'samples', 'matrix', 'flag_byte', 'port_id', 'calls'];
        for (const wanted of expected) {
          const v = variables.find((x) => x.qualifiedName === wanted);
          // -O2 may drop an unused static; only the -O0 builds must have all of them.
          if (!v && name.includes('o2')) continue;
          assert.ok(v, `${wanted} not found; have ${variables.map((x) => x.qualifiedName).join(', ')}`);
        }
        assert.ok(variables.length >= expected.length - 2);
        for (const v of variables) {
          const at = symbols.filter((s) => s.address === v.address && /[bBdDrRvV]/.test(s.type));
          assert.ok(at.length > 0, `nm has nothing at ${hex(v.address)} for ${v.qualifiedName}`);
          const named = at.find(
            (s) =>
              s.name === v.name ||
              s.name === v.linkageName ||
              s.name.startsWith(v.name + '.') ||
              (v.linkageName === undefined && s.name.startsWith(`_ZL${v.name.length}${v.name}`)),
          );
          assert.ok(named, `${v.qualifiedName} at ${hex(v.address)}: nm names ${at.map((s) => s.name).join(', ')}`);
          assert.equal(v.size, named.size, `${v.qualifiedName} size`);
        }
      });

      it('function symbols equal nm', () => {
        const theirs = nm(file).filter((s) => /[tTwWi]/.test(s.type) && s.size !== undefined);
        const ours = object.elf.symbols().filter((s) => s.kind === 'function' && s.table === 'symtab');
        const key = (n: string, a: bigint, size: number | undefined) => `${n}@${hex(a)}/${size}`;
        const ourKeys = new Set(ours.map((s) => key(s.name, s.value, s.size)));
        for (const s of theirs) assert.ok(ourKeys.has(key(s.name, s.address, s.size)), `missing function ${s.name}`);
        const theirNames = new Set(
          nm(file)
            .filter((s) => /[tTwWi]/.test(s.type))
            .map((s) => `${s.name}@${hex(s.address)}`),
        );
        for (const s of ours) assert.ok(theirNames.has(`${s.name}@${hex(s.value)}`), `nm does not list ${s.name}`);
        assert.ok(ours.some((s) => s.name === (name === 'sym_elf32' ? 'bump32' : 'main')));
      });

      it('build id equals readelf -n', () => {
        const id = object.buildId;
        assert.match(id ?? '', /^[0-9a-f]{40}$/);
        assert.equal(id, readelfBuildId(file));
      });
    });
  }

  it("libc's lineForAddress through .debug_aranges equals its whole table's (its debug file comes with libc6-dbg)", function () {
    const libc = '/usr/lib/x86_64-linux-gnu/libc.so.6';
    // Setup and CI install libc6-dbg: a missing debug file is a broken setup, said as such, not a skipped check.
    assert.ok(existsSync(libc) && new ObjectFile(libc).dwarfElf, `${libc} has no debug file: apt-get install libc6-dbg (npm run setup does)`);
    this.timeout(300_000);
    assertUnitLookupsMatch(libc);
  });

  it("finds the stripped fixture's DWARF through .gnu_debuglink (CRC checked)", () => {
    const file = fixture('sym_stripped');
    const object = new ObjectFile(file);
    assert.equal(object.elf.hasDwarf(), false);
    assert.deepEqual(object.debugFile, { path: file + '.debug', via: 'debuglink' });
    assert.equal(object.elf.debugLink()?.file, 'sym_stripped.debug');
    assert.ok(object.variables().some((v) => v.name === 'total_writes'));
  });

  it('finds a separate debug file in a build-id tree, and ignores a debuglink file whose CRC is wrong', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-sym-'));
    try {
      const exe = path.join(dir, 'sym_stripped');
      copyFileSync(fixture('sym_stripped'), exe);
      const elf = readElf(exe);
      // A different file under the debuglink name must be refused (CRC mismatch).
      copyFileSync(fixture('sym_o0_pie'), path.join(dir, 'sym_stripped.debug'));
      assert.equal(findDebugFile(exe, elf, path.join(dir, 'no-debug-root')), undefined);
      const id = elf.buildId()!;
      const root = path.join(dir, 'debug');
      mkdirSync(path.join(root, '.build-id', id.slice(0, 2)), { recursive: true });
      copyFileSync(fixture('sym_stripped.debug'), path.join(root, '.build-id', id.slice(0, 2), id.slice(2) + '.debug'));
      const match = findDebugFile(exe, elf, root);
      assert.equal(match?.via, 'build-id');
      const object = new ObjectFile(exe, root);
      assert.ok(object.lineTable()!.sequences.length > 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('decompresses SHF_COMPRESSED zlib debug sections', () => {
    const object = new ObjectFile(fixture('sym_gz'));
    const info = object.elf.section('.debug_info');
    assert.ok(info && (info.flags & BigInt(SHF_COMPRESSED)) !== 0n, '.debug_info is not compressed in the -gz build');
    const data = object.elf.sectionData('.debug_info')!;
    assert.ok(data.length > info.size, 'decompressed data should be larger than the compressed section');
    const plain = new ObjectFile(fixture('sym_o0_pie'));
    assert.deepEqual(
      object.variables().map((v) => [v.qualifiedName, v.size]),
      plain.variables().map((v) => [v.qualifiedName, v.size]),
    );
  });

  it('reads C++: class statics through DW_AT_specification, namespaces, mangled linkage names', () => {
    const object = new ObjectFile(fixture('sym_cpp'));
    const readings = object.variables().find((v) => v.qualifiedName === 'ringside::Meter::readings');
    assert.ok(readings);
    assert.equal(readings.linkageName, '_ZN8ringside5Meter8readingsE');
    assert.equal(readings.size, 8);
    const level = object.variables().find((v) => v.qualifiedName === 'ringside::Meter::level');
    assert.equal(level?.size, 10);
    assert.ok(object.elf.symbols().some((s) => s.name === '_ZN8ringside5twiceIiEET_S1_' && s.kind === 'function'));
  });

  it('rejects non-ELF and truncated input with a typed error', () => {
    assert.throws(() => new ElfFile(new TextEncoder().encode('#!/bin/sh\necho hi\n')), ElfFormatError);
    const bytes = readElf(fixture('sym_o0_pie')).bytes;
    assert.throws(() => new ElfFile(bytes.subarray(0, 200)), ElfFormatError);
  });
});
