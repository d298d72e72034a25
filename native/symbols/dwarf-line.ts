// .debug_line, DWARF versions 2 to 5: runs each unit's line-number program and keeps the rows, grouped
// in sequences. Answers source line -> addresses (every is_stmt row of the line, each with the range up to
// the next row) and address -> file:line (the last row at or below the address, as addr2line does).
// Pure: works on section bytes; the unit's comp_dir comes from .debug_info (dwarf-info.ts).

import { DwarfCursor, DwarfFormatError, type FormContext, type FormValue, joinPath } from './dwarf-reader';

export interface LineRow {
  readonly address: bigint;
  /** Index into LineTable.files. */
  readonly file: number;
  readonly line: number;
  readonly column: number;
  readonly isStmt: boolean;
  readonly endSequence: boolean;
  readonly discriminator: number;
}

export interface LineSequence {
  readonly start: bigint;
  /** Address of the end_sequence row: first address past the sequence. */
  readonly end: bigint;
  /** Rows in program order; the last one is the end_sequence row. */
  readonly rows: readonly LineRow[];
}

export interface LineFile {
  /** Directory and name joined (relative directories joined to the unit's comp_dir). */
  readonly path: string;
  readonly name: string;
  readonly md5?: string;
}

export interface LineProgram {
  readonly offset: number;
  readonly version: number;
  /** Files as the program numbers them (index 0 is a real file in v5, a placeholder in v2-4). */
  readonly fileNames: readonly (LineFile | undefined)[];
}

export interface AddressRange {
  readonly start: bigint;
  /** Exclusive; equal to start when a later row at the same address takes over. */
  readonly end: bigint;
}

export interface LineSections {
  readonly line: Uint8Array;
  readonly lineStr?: Uint8Array;
  readonly str?: Uint8Array;
  readonly littleEndian: boolean;
}

/** Which line programs to run: their .debug_line offsets and each unit's comp_dir (and name, for v2-4 file 0). */
export interface LineUnit {
  readonly stmtList: number;
  readonly compDir?: string;
  readonly name?: string;
  readonly addressSize?: number;
}

const DW_LNCT_path = 1;
const DW_LNCT_directory_index = 2;
const DW_LNCT_MD5 = 5;

export class LineTable {
  /** Distinct files by path across all programs; LineRow.file indexes this. */
  readonly files: LineFile[] = [];
  readonly sequences: LineSequence[] = [];
  readonly programs: LineProgram[] = [];
  private readonly fileIndex = new Map<string, number>();
  private sortedSequences: LineSequence[] | undefined;

  /** `units` from .debug_info; when empty (no or unreadable .debug_info), every program in the section is run in order. */
  constructor(
    private readonly sections: LineSections,
    units: readonly LineUnit[],
  ) {
    if (units.length === 0) units = allPrograms(sections);
    const seen = new Set<number>();
    for (const unit of units) {
      if (seen.has(unit.stmtList)) continue;
      seen.add(unit.stmtList);
      this.runProgram(unit);
    }
  }

  private internFile(file: LineFile): number {
    const existing = this.fileIndex.get(file.path);
    if (existing !== undefined) return existing;
    this.files.push(file);
    this.fileIndex.set(file.path, this.files.length - 1);
    return this.files.length - 1;
  }

  private runProgram(unit: LineUnit): void {
    const { line: data, littleEndian } = this.sections;
    const c = new DwarfCursor(data, unit.stmtList, littleEndian);
    const { offsetSize, end } = c.initialLength();
    if (end > data.length) throw new DwarfFormatError(`.debug_line program at 0x${unit.stmtList.toString(16)} runs past the section end`);
    const version = c.u16();
    if (version < 2 || version > 5) throw new DwarfFormatError(`.debug_line program at 0x${unit.stmtList.toString(16)} has unsupported version ${version}`);
    let addressSize = unit.addressSize ?? 8;
    if (version >= 5) {
      addressSize = c.u8();
      c.u8(); // segment_selector_size
    }
    const headerLength = c.offsetWord(offsetSize);
    const programStart = c.offset + headerLength;
    const minInstructionLength = c.u8();
    if (version >= 4) c.u8(); // maximum_operations_per_instruction: 1 on every non-VLIW target
    const defaultIsStmt = c.u8() !== 0;
    const lineBase = c.i8();
    const lineRange = c.u8();
    const opcodeBase = c.u8();
    if (lineRange === 0) throw new DwarfFormatError(`.debug_line program at 0x${unit.stmtList.toString(16)} has line_range 0`);
    const standardLengths: number[] = [0];
    for (let i = 1; i < opcodeBase; i++) standardLengths.push(c.u8());

    const ctx: FormContext = { addressSize, offsetSize, version, debugStr: this.sections.str, debugLineStr: this.sections.lineStr };
    const fileNames: (LineFile | undefined)[] = [];
    if (version >= 5) {
      const readEntries = (): Map<number, FormValue>[] => {
        const formatCount = c.u8();
        const format: [number, number][] = [];
        for (let i = 0; i < formatCount; i++) format.push([c.ulebNumber(), c.ulebNumber()]);
        const count = c.ulebNumber();
        const entries: Map<number, FormValue>[] = [];
        for (let i = 0; i < count; i++) {
          const entry = new Map<number, FormValue>();
          for (const [contentType, form] of format) entry.set(contentType, c.form(form, ctx));
          entries.push(entry);
        }
        return entries;
      };
      const dirs = readEntries().map((e) => {
        const p = e.get(DW_LNCT_path);
        return p && p.kind === 'string' ? p.value : '';
      });
      // Directory 0 is the compilation directory; others may be relative to it.
      const absoluteDirs = dirs.map((d, i) => (i === 0 ? d : joinPath(dirs[0] || unit.compDir, d)));
      for (const e of readEntries()) {
        const p = e.get(DW_LNCT_path);
        const name = p && p.kind === 'string' ? p.value : '';
        const d = e.get(DW_LNCT_directory_index);
        const dirIndex = d && (d.kind === 'uint' || d.kind === 'sint') ? Number(d.value) : 0;
        const md5 = e.get(DW_LNCT_MD5);
        fileNames.push({
          name,
          path: joinPath(absoluteDirs[dirIndex] ?? unit.compDir, name),
          md5: md5 && md5.kind === 'bytes' ? Array.from(md5.bytes, (b) => b.toString(16).padStart(2, '0')).join('') : undefined,
        });
      }
    } else {
      const dirs: string[] = [unit.compDir ?? ''];
      for (;;) {
        const d = c.cstring();
        if (d === '') break;
        dirs.push(joinPath(unit.compDir, d));
      }
      // File 0 is not used before DWARF 5; keep the unit's primary name there for completeness.
      fileNames.push(unit.name ? { name: unit.name, path: joinPath(unit.compDir, unit.name) } : undefined);
      for (;;) {
        const name = c.cstring();
        if (name === '') break;
        const dirIndex = c.ulebNumber();
        c.uleb();
        c.uleb(); // mtime, length
        fileNames.push({ name, path: joinPath(dirs[dirIndex] || unit.compDir, name) });
      }
    }
    this.programs.push({ offset: unit.stmtList, version, fileNames });

    c.offset = programStart;
    const interned = new Map<number, number>();
    const fileFor = (index: number): number => {
      let i = interned.get(index);
      if (i === undefined) {
        const f = fileNames[index] ?? { name: `<file ${index}>`, path: `<unknown file ${index} in line program 0x${unit.stmtList.toString(16)}>` };
        i = this.internFile(f);
        interned.set(index, i);
      }
      return i;
    };

    let address = 0n;
    let file = 1;
    let line = 1;
    let column = 0;
    let isStmt = defaultIsStmt;
    let discriminator = 0;
    let rows: LineRow[] = [];
    const reset = (): void => {
      address = 0n;
      file = 1;
      line = 1;
      column = 0;
      isStmt = defaultIsStmt;
      discriminator = 0;
    };
    const emit = (endSequence: boolean): void => {
      rows.push({ address, file: fileFor(file), line, column, isStmt, endSequence, discriminator });
      discriminator = 0;
    };
    while (c.offset < end) {
      const opcode = c.u8();
      if (opcode >= opcodeBase) {
        const adjusted = opcode - opcodeBase;
        address += BigInt(Math.floor(adjusted / lineRange) * minInstructionLength);
        line += lineBase + (adjusted % lineRange);
        emit(false);
        continue;
      }
      switch (opcode) {
        case 0: {
          const length = c.ulebNumber();
          const next = c.offset + length;
          if (length === 0) break;
          const sub = c.u8();
          if (sub === 1) {
            emit(true);
            if (rows.length > 1) this.sequences.push({ start: rows[0].address, end: address, rows });
            rows = [];
            reset();
          } else if (sub === 2) {
            address = c.uint(length - 1);
          } else if (sub === 3) {
            const name = c.cstring();
            const dirIndex = c.ulebNumber();
            fileNames.push({ name, path: joinPath(fileNames[dirIndex]?.path ?? unit.compDir, name) });
          } else if (sub === 4) {
            discriminator = c.ulebNumber();
          }
          c.offset = next;
          break;
        }
        case 1:
          emit(false);
          break; // copy
        case 2:
          address += c.uleb() * BigInt(minInstructionLength);
          break;
        case 3:
          line += Number(c.sleb());
          break;
        case 4:
          file = c.ulebNumber();
          break;
        case 5:
          column = c.ulebNumber();
          break;
        case 6:
          isStmt = !isStmt;
          break;
        case 7:
          break; // basic_block
        case 8:
          address += BigInt(Math.floor((255 - opcodeBase) / lineRange) * minInstructionLength);
          break;
        case 9:
          address += BigInt(c.u16());
          break;
        case 10:
        case 11:
          break; // prologue_end, epilogue_begin
        case 12:
          c.uleb();
          break; // isa
        default:
          for (let i = 0; i < standardLengths[opcode]; i++) c.uleb();
      }
    }
  }

  /** Sequences sorted by start address (dropping the ones a linker left at 0 for discarded code). */
  private sorted(): LineSequence[] {
    if (!this.sortedSequences) {
      this.sortedSequences = this.sequences.filter((s) => s.end > s.start).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    }
    return this.sortedSequences;
  }

  /** Source position of `address` (link-time): the last row at or below it within its sequence. */
  lineForAddress(address: bigint): { file: string; line: number; column: number; discriminator: number } | undefined {
    const sequences = this.sorted();
    // Sequences do not overlap in a linked file; bisect on start.
    let lo = 0;
    let hi = sequences.length - 1;
    let found: LineSequence | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (sequences[mid].start <= address) {
        found = sequences[mid];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (!found || address >= found.end) return undefined;
    const rows = found.rows;
    lo = 0;
    hi = rows.length - 2;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid].address <= address) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best < 0) return undefined;
    const row = rows[best];
    return { file: this.files[row.file].path, line: row.line, column: row.column, discriminator: row.discriminator };
  }

  /** Every is_stmt row of `line` in `filePath` (an exact path from `files`), as ranges up to the next row. */
  addressesForLine(filePath: string, line: number): AddressRange[] {
    const fileIndex = this.fileIndex.get(filePath);
    if (fileIndex === undefined) return [];
    const out: AddressRange[] = [];
    for (const seq of this.sequences) {
      for (let i = 0; i + 1 < seq.rows.length; i++) {
        const row = seq.rows[i];
        if (row.isStmt && row.file === fileIndex && row.line === line && !row.endSequence) {
          out.push({ start: row.address, end: seq.rows[i + 1].address });
        }
      }
    }
    return out.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  }

  /** First (lowest) is_stmt address of a line, or undefined when the line has no code. */
  firstStatementAddress(filePath: string, line: number): bigint | undefined {
    const ranges = this.addressesForLine(filePath, line);
    return ranges.length ? ranges[0].start : undefined;
  }

  /** Lines of `filePath` that have at least one is_stmt row, ascending. */
  linesWithCode(filePath: string): number[] {
    const fileIndex = this.fileIndex.get(filePath);
    if (fileIndex === undefined) return [];
    const lines = new Set<number>();
    for (const seq of this.sequences) {
      for (const row of seq.rows) if (row.isStmt && !row.endSequence && row.file === fileIndex) lines.add(row.line);
    }
    return [...lines].sort((a, b) => a - b);
  }

  /** Paths of every file that has rows (not just declared in a header), for name matching. */
  filesWithRows(): string[] {
    const used = new Set<number>();
    for (const seq of this.sequences) for (const row of seq.rows) used.add(row.file);
    return [...used].map((i) => this.files[i].path);
  }
}

/** Offsets of every line program in .debug_line, by walking unit lengths. */
function allPrograms(sections: LineSections): LineUnit[] {
  const out: LineUnit[] = [];
  const c = new DwarfCursor(sections.line, 0, sections.littleEndian);
  while (c.offset + 4 <= sections.line.length) {
    const start = c.offset;
    const { end } = c.initialLength();
    if (end > sections.line.length || end <= start) break;
    out.push({ stmtList: start });
    c.offset = end;
  }
  return out;
}
