// Which values logpoint columns keep by their bytes (ValueFormatter.oneToOneText): those whose text gdb-style tells
// every two byte patterns apart, and where their C string pointers are (whose text reads the memory they point at).
// On the DWARF of test/fixtures/logpoint_values.c at -O0 and -O2: integers, enums, doubles, structs, arrays of ints and
// of chars, pointers. And a value some of whose bytes are not there says so in its text, so that it never reads as a
// value whose bytes all are.
import assert from 'node:assert/strict';
import { openObjectFile } from '../../native/symbols/object-file';
import { AT, TAG, type Die } from '../../native/symbols/dwarf-info';
import { DwarfScopes } from '../../native/symbols/dwarf-scopes';
import { BYTE_NOT_CAPTURED, BYTE_OPTIMIZED_OUT, ValueFormatter } from '../../native/symbols/dwarf-values';
import { fixture } from './binutils';

const NUMBERS = { hasPointers: false, stringPointers: [] };
const KEPT_BY_BYTES: Readonly<Record<string, { hasPointers: boolean; stringPointers: number[] } | undefined>> = {
  i: NUMBERS, // int
  total: NUMBERS, // long
  mode: NUMBERS, // enum
  span: NUMBERS, // struct {int, int}
  hist: NUMBERS, // int[4]
  code: NUMBERS, // char[6]
  scale: NUMBERS, // double
  slot: NUMBERS,
  before: NUMBERS,
  pt: { hasPointers: true, stringPointers: [16] }, // struct {int, int, double, const char *}
  label: { hasPointers: true, stringPointers: [0] }, // const char *
};

describe('logpoint values kept by their bytes: which types', () => {
  for (const optimization of ['O0', 'O2'])
    it(`-${optimization}: work()'s locals`, () => {
      const object = openObjectFile(fixture(`logpoint_values_${optimization}`));
      const info = object.dwarfInfo()!;
      const scopes = new DwarfScopes(info);
      const formatter = new ValueFormatter(info);
      const inWork = (die: Die) => {
        let up = die.parent;
        while (up && up.tag !== TAG.subprogram) up = up.parent;
        return up !== undefined && scopes.nameOf(up) === 'work';
      };
      const seen = new Set<string>();
      for (const die of info.diesOfTag(TAG.variable)) {
        const name = scopes.nameOf(die);
        if (name === undefined || !(name in KEPT_BY_BYTES) || !inWork(die)) continue;
        let type: Die | undefined;
        for (let d: Die | undefined = die; d && !type; d = info.refAttr(d, AT.abstract_origin)) type = info.refAttr(d, AT.type);
        assert.deepEqual(formatter.oneToOneText(type), KEPT_BY_BYTES[name], name);
        seen.add(name);
        if (!KEPT_BY_BYTES[name]) continue;
        // Bytes not all there: the text names why, for each way a byte can be missing.
        const size = formatter.size(type)!;
        for (const missing of [BYTE_OPTIMIZED_OUT, BYTE_NOT_CAPTURED]) {
          const state = new Uint8Array(size);
          state[size - 1] = missing;
          const text = formatter.format(type, { bytes: new Uint8Array(size), state }, { readBytes: () => undefined });
          assert.match(text, missing === BYTE_OPTIMIZED_OUT ? /<optimized out>/ : /<not captured>/, `${name}: ${text}`);
        }
      }
      assert.deepEqual([...seen].sort(), Object.keys(KEPT_BY_BYTES).sort());
    });
});
