// Synthetic-bytes checks of the pure parsers: the cases the fixtures cannot produce on this machine
// (big-endian ELF, corrupt input, hand-written line programs, LEB128 edges), next to the code.

import assert from 'node:assert/strict';
import { deflateSync, inflateSync } from 'node:zlib';
import { ElfFile, ElfFormatError, crc32, fileOffsetOfVaddr, PT_LOAD, type ProgramHeader } from './elf';
import { DwarfCursor, DwarfFormatError, DW_FORM } from './dwarf-reader';
import { LineTable } from './dwarf-line';
import { parseProcMaps } from '../sys/procmaps';
import { DwarfInfo } from './dwarf-info';

/** A minimal ELF64 with one section (plus null and shstrtab): `name` holding `data` with `flags`. */
function buildElf64(opts: { bigEndian: boolean; name: string; data: Uint8Array; flags: bigint; type?: number }): Uint8Array {
  const le = !opts.bigEndian;
  const shstr = new TextEncoder().encode(`\0${opts.name}\0.shstrtab\0`);
  const dataOff = 64;
  const shstrOff = dataOff + opts.data.length;
  const shoff = (shstrOff + shstr.length + 7) & ~7;
  const out = new Uint8Array(shoff + 3 * 64);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, le ? 1 : 2, 1]);
  v.setUint16(16, opts.type ?? 3, le);
  v.setUint16(18, 62, le);
  v.setBigUint64(40, BigInt(shoff), le);
  v.setUint16(52, 64, le);
  v.setUint16(54, 56, le);
  v.setUint16(58, 64, le);
  v.setUint16(60, 3, le);
  v.setUint16(62, 2, le);
  out.set(opts.data, dataOff);
  out.set(shstr, shstrOff);
  const section = (i: number, nameOff: number, type: number, flags: bigint, off: number, size: number) => {
    const o = shoff + i * 64;
    v.setUint32(o, nameOff, le);
    v.setUint32(o + 4, type, le);
    v.setBigUint64(o + 8, flags, le);
    v.setBigUint64(o + 24, BigInt(off), le);
    v.setBigUint64(o + 32, BigInt(size), le);
  };
  section(1, 1, 1, opts.flags, dataOff, opts.data.length);
  section(2, 2 + opts.name.length, 3, 0n, shstrOff, shstr.length);
  return out;
}

function compressed(payload: Uint8Array, bigEndian: boolean, declaredSize = payload.length): Uint8Array {
  const z = deflateSync(payload);
  const out = new Uint8Array(24 + z.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, 1, !bigEndian);
  v.setBigUint64(8, BigInt(declaredSize), !bigEndian);
  v.setBigUint64(16, 1n, !bigEndian);
  out.set(z, 24);
  return out;
}

const inflate = (d: Uint8Array) => new Uint8Array(inflateSync(d));

describe('symbols/parsers (synthetic bytes)', () => {
  it('reads big- and little-endian ELF64 headers and a SHF_COMPRESSED section', () => {
    const payload = new TextEncoder().encode('ringside debug payload '.repeat(20));
    for (const bigEndian of [false, true]) {
      const elf = new ElfFile(buildElf64({ bigEndian, name: '.debug_str', data: compressed(payload, bigEndian), flags: 0x800n }), inflate);
      assert.equal(elf.header.littleEndian, !bigEndian);
      assert.equal(elf.header.type, 3);
      assert.deepEqual(
        elf.sections.map((s) => s.name),
        ['', '.debug_str', '.shstrtab'],
      );
      assert.deepEqual(elf.sectionData('.debug_str'), payload);
    }
  });

  it('compressed sections: a wrong size, corrupt zlib or a missing inflate are ElfFormatErrors', () => {
    const payload = new Uint8Array(100).fill(7);
    const wrongSize = new ElfFile(buildElf64({ bigEndian: false, name: '.debug_info', data: compressed(payload, false, 99), flags: 0x800n }), inflate);
    assert.throws(() => wrongSize.sectionData('.debug_info'), ElfFormatError);
    const bytes = compressed(payload, false);
    bytes.fill(0xff, 24);
    const corrupt = new ElfFile(buildElf64({ bigEndian: false, name: '.debug_info', data: bytes, flags: 0x800n }), inflate);
    assert.throws(() => corrupt.sectionData('.debug_info'), /zlib data is corrupt/);
    const noInflate = new ElfFile(buildElf64({ bigEndian: false, name: '.debug_info', data: compressed(payload, false), flags: 0x800n }));
    assert.throws(() => noInflate.sectionData('.debug_info'), /no inflate/);
  });

  it('bad magic, unknown class, and section tables past the end are ElfFormatErrors', () => {
    assert.throws(() => new ElfFile(new Uint8Array(64)), /bad magic/);
    const elf = buildElf64({ bigEndian: false, name: '.x', data: new Uint8Array(4), flags: 0n });
    const badClass = elf.slice();
    badClass[4] = 9;
    assert.throws(() => new ElfFile(badClass), /ELF class/);
    assert.throws(() => new ElfFile(elf.subarray(0, elf.length - 10)), ElfFormatError);
  });

  it('crc32 matches the IEEE check value', () => {
    assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
  });

  it('LEB128 edge cases and truncation', () => {
    const c = new DwarfCursor(new Uint8Array([0xe5, 0x8e, 0x26, 0x7f, 0x80, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]));
    assert.equal(c.uleb(), 624485n);
    assert.equal(c.sleb(), -1n);
    assert.equal(c.sleb(), -128n);
    assert.equal(c.uleb(), 0xffffffffffffffffn);
    assert.throws(() => new DwarfCursor(new Uint8Array([0x80, 0x80])).uleb(), DwarfFormatError);
    assert.throws(() => new DwarfCursor(new Uint8Array([1, 2])).form(DW_FORM.data4, { addressSize: 8, offsetSize: 4, version: 5 }), DwarfFormatError);
    assert.throws(() => new DwarfCursor(new Uint8Array([0])).form(0x7e, { addressSize: 8, offsetSize: 4, version: 5 }), /unknown attribute form/);
  });

  it('runs a hand-written DWARF 3 line program (special opcodes, const_add_pc, negate_stmt, end_sequence)', () => {
    const header = [
      1, // minimum_instruction_length
      1, // default_is_stmt
      0xfb, // line_base -5
      14, // line_range
      13, // opcode_base
      0,
      1,
      1,
      1,
      1,
      0,
      0,
      0,
      1,
      0,
      0,
      1, // standard_opcode_lengths
      ...new TextEncoder().encode('src'),
      0,
      0, // include_directories: "src"
      ...new TextEncoder().encode('a.c'),
      0,
      1,
      0,
      0,
      0, // file 1: a.c in dir 1
    ];
    const program = [
      0,
      9,
      2,
      0x00,
      0x10,
      0,
      0,
      0,
      0,
      0,
      0, // DW_LNE_set_address 0x1000
      3,
      9, // advance_line +9 -> line 10
      1, // copy: row 0x1000 line 10
      13 + 4 * 14 + (1 - -5), // special: addr +4, line +1 -> 0x1004 line 11
      6, // negate_stmt
      8, // const_add_pc: +(255-13)/14 = 17 -> 0x1015
      1, // copy: 0x1015 line 11 (not stmt)
      2,
      3, // advance_pc 3 -> 0x1018
      0,
      1,
      1, // end_sequence
    ];
    const body = [3, 0, ...u32(header.length), ...header, ...program];
    const bytes = new Uint8Array([...u32(body.length), ...body]);
    const table = new LineTable({ line: bytes, littleEndian: true }, [{ stmtList: 0, compDir: '/build' }]);
    assert.deepEqual(
      table.files.map((f) => f.path),
      ['/build/src/a.c'],
    );
    const rows = table.sequences[0].rows.map((r) => [Number(r.address), r.line, r.isStmt, r.endSequence]);
    assert.deepEqual(rows, [
      [0x1000, 10, true, false],
      [0x1004, 11, true, false],
      [0x1015, 11, false, false],
      [0x1018, 11, false, true],
    ]);
    assert.deepEqual(table.addressesForLine('/build/src/a.c', 11), [{ start: 0x1004n, end: 0x1015n }]);
    assert.deepEqual(table.lineForAddress(0x1016n), { file: '/build/src/a.c', line: 11, column: 0, discriminator: 0 });
    assert.equal(table.lineForAddress(0x1018n), undefined, 'end_sequence address is past the sequence');
    // Without units from .debug_info, every program is found by walking the section.
    assert.equal(new LineTable({ line: bytes, littleEndian: true }, []).sequences.length, 1);
  });

  it('a truncated line program or .debug_info unit is a DwarfFormatError, not a hang', () => {
    const bytes = new Uint8Array([0x40, 0, 0, 0, 3, 0]);
    assert.throws(() => new LineTable({ line: bytes, littleEndian: true }, [{ stmtList: 0 }]), DwarfFormatError);
    assert.throws(() => new DwarfInfo({ info: new Uint8Array([8, 0, 0, 0, 9, 0, 0, 0]), abbrev: new Uint8Array([0]), littleEndian: true }), DwarfFormatError);
  });

  it('parses /proc/PID/maps lines with spaces, (deleted), and anonymous mappings', () => {
    const maps = parseProcMaps(
      [
        '55d0c0a00000-55d0c0a01000 r-xp 00001000 fe:00 5341515                    /tmp/my dir/prog (deleted)',
        '7ffd5a1f0000-7ffd5a211000 rw-p 00000000 00:00 0                          [stack]',
        '7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ',
      ].join('\n'),
    );
    assert.equal(maps.length, 3);
    assert.deepEqual(
      { ...maps[0] },
      { start: 0x55d0c0a00000n, end: 0x55d0c0a01000n, perms: 'r-xp', offset: 0x1000n, dev: 'fe:00', inode: 5341515, path: '/tmp/my dir/prog', deleted: true },
    );
    assert.equal(maps[1].path, '[stack]');
    assert.equal(maps[2].path, '');
    assert.throws(() => parseProcMaps('garbage'), /unparseable/);
  });

  describe('fileOffsetOfVaddr (where a uprobe goes)', () => {
    const load = (vaddr: bigint, offset: bigint, fileSize: bigint, memSize = fileSize): ProgramHeader => ({
      type: PT_LOAD,
      flags: 5,
      offset,
      vaddr,
      fileSize,
      memSize,
      align: 0x1000n,
    });
    // gcc's usual non-PIE layout: R at 0x400000, R E at 0x401000, R, then RW whose vaddr and offset differ by a page.
    const headers: ProgramHeader[] = [
      { type: 6 /* PT_PHDR */, flags: 4, offset: 0x40n, vaddr: 0x400040n, fileSize: 0x2d8n, memSize: 0x2d8n, align: 8n },
      load(0x400000n, 0n, 0x848n),
      load(0x401000n, 0x1000n, 0x4a5n),
      load(0x402000n, 0x2000n, 0x15cn),
      load(0x403df8n, 0x2df8n, 0x288n, 0x2f8n),
    ];

    it('is vaddr - p_vaddr + p_offset of the PT_LOAD holding the address', () => {
      assert.equal(fileOffsetOfVaddr(headers, 0x4011d0n), 0x11d0n);
      assert.equal(fileOffsetOfVaddr(headers, 0x401000n), 0x1000n);
      assert.equal(fileOffsetOfVaddr(headers, 0x403e00n), 0x2e00n);
      // A segment whose vaddr is not its offset (offset 0x1000 mapped at 0x201000).
      assert.equal(fileOffsetOfVaddr([load(0x201000n, 0x1000n, 0x500n)], 0x201234n), 0x1234n);
    });

    it('is undefined past the file-backed part (.bss) and outside every segment, and ignores other program headers', () => {
      assert.equal(fileOffsetOfVaddr(headers, 0x4014a5n), undefined, 'one past the text segment');
      assert.equal(fileOffsetOfVaddr(headers, 0x404090n), undefined, '.bss: in memory, not in the file');
      assert.equal(fileOffsetOfVaddr(headers, 0x10n), undefined);
      assert.equal(fileOffsetOfVaddr(headers.slice(0, 1), 0x400050n), undefined, 'PT_PHDR is not a loadable segment');
    });
  });
});

function u32(n: number): number[] {
  return [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
}
