// .debug_aranges (DWARF 2-5): which compile unit's code each address range is, so a source line lookup runs only the
// line program of the unit that holds the address instead of every program of the object (libc's debug file has
// 2,063 programs and 291k rows: 0.8-1.4 s to run all of them for a few dozen addresses).
// Pure: works on section bytes.

import { DwarfCursor, DwarfFormatError } from './dwarf-reader';

export class AddressRanges {
  /** Ranges sorted by start: [start, end) of .debug_info unit unitOffset, as doubles (exact below 2^53). */
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;
  private readonly units: Int32Array;
  /** Per range, the largest end of the ranges sorted before it: a range before it may still hold an address. */
  private readonly endBefore: Float64Array;
  /** The .debug_info offset of every unit that has ranges here. */
  readonly unitOffsets: ReadonlySet<number>;

  constructor(section: Uint8Array, littleEndian: boolean) {
    const starts: number[] = [];
    const ends: number[] = [];
    const units: number[] = [];
    const c = new DwarfCursor(section, 0, littleEndian);
    while (c.offset + 4 <= section.length) {
      const setStart = c.offset;
      const { offsetSize, end } = c.initialLength();
      if (end > section.length || end <= setStart) throw new DwarfFormatError(`.debug_aranges set at 0x${setStart.toString(16)} runs past the section end`);
      const version = c.u16();
      if (version !== 2) throw new DwarfFormatError(`.debug_aranges set at 0x${setStart.toString(16)} has unsupported version ${version}`);
      const unit = c.offsetWord(offsetSize);
      const addressSize = c.u8();
      const segmentSize = c.u8();
      if (segmentSize !== 0 || (addressSize !== 4 && addressSize !== 8)) {
        throw new DwarfFormatError(`.debug_aranges set at 0x${setStart.toString(16)} has address size ${addressSize}, segment size ${segmentSize}`);
      }
      // The tuples start at a multiple of twice the address size from the set's start.
      const tuple = addressSize * 2;
      c.offset = setStart + Math.ceil((c.offset - setStart) / tuple) * tuple;
      while (c.offset + tuple <= end) {
        const start = Number(c.uint(addressSize));
        const length = Number(c.uint(addressSize));
        if (start === 0 && length === 0) break;
        if (length === 0) continue;
        if (start + length > 2 ** 53) throw new DwarfFormatError(`.debug_aranges range at 0x${start.toString(16)} is past 2^53`);
        starts.push(start);
        ends.push(start + length);
        units.push(unit);
      }
      c.offset = end;
    }
    const order = Array.from(starts, (_, i) => i).sort((a, b) => starts[a] - starts[b] || a - b);
    this.starts = Float64Array.from(order, (i) => starts[i]);
    this.ends = Float64Array.from(order, (i) => ends[i]);
    this.units = Int32Array.from(order, (i) => units[i]);
    this.endBefore = new Float64Array(order.length);
    let widest = -1;
    for (let k = 0; k < order.length; k++) {
      this.endBefore[k] = widest;
      if (this.ends[k] > widest) widest = this.ends[k];
    }
    this.unitOffsets = new Set(units);
  }

  /**
   * The .debug_info offset of the one unit whose ranges hold `address`; undefined when none does, null when more
   * than one unit's ranges hold it (the caller cannot tell which from here).
   */
  unitAt(address: bigint): number | undefined | null {
    const found = this.lastStartingAtOrBelow(address);
    if (found < 0) return undefined;
    const at = Number(address);
    // A range sorted earlier that reaches past the address overlaps this one: ambiguous (discarded code at 0, say).
    if (this.endBefore[found] > at) return null;
    return at < this.ends[found] ? this.units[found] : undefined;
  }

  /**
   * The unit of the last range that starts at or below `address`, whether or not it reaches it: a unit's line program
   * also covers the padding after its functions, which its ranges leave out.
   */
  unitBefore(address: bigint): number | undefined {
    const found = this.lastStartingAtOrBelow(address);
    return found < 0 ? undefined : this.units[found];
  }

  private lastStartingAtOrBelow(address: bigint): number {
    if (address >= 2n ** 53n) return this.starts.length - 1;
    const at = Number(address);
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid] <= at) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}
