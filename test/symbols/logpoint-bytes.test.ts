// Which values logpoint columns keep by their bytes (ValueFormatter.textIsOneToOne): those whose text gdb-style
// depends on their bytes alone and tells every two patterns apart. On the DWARF of test/fixtures/logpoint_values.c at
// -O0 and -O2: integers, enums, doubles, a struct of ints, arrays of ints and of chars are; a struct with a pointer and
// pointers (whose text reads the memory they point at) are not. And a value some of whose bytes are not there says so
// in its text, so that it never reads as a value whose bytes all are.
import assert from 'node:assert/strict';
import { openObjectFile } from '../../native/symbols/object-file';
import { AT, TAG, type Die } from '../../native/symbols/dwarf-info';
import { DwarfScopes } from '../../native/symbols/dwarf-scopes';
import { BYTE_NOT_CAPTURED, BYTE_OPTIMIZED_OUT, ValueFormatter } from '../../native/symbols/dwarf-values';
import { fixture } from './binutils';

const KEPT_BY_BYTES: Readonly<Record<string, boolean>> = {
  i: true, // int
  total: true, // long
  mode: true, // enum
  span: true, // struct {int, int}
  hist: true, // int[4]
  code: true, // char[6]
  scale: true, // double
  slot: true,
  before: true,
  pt: false, // struct {int, int, double, const char *}
  label: false, // const char *
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
        assert.equal(formatter.textIsOneToOne(type), KEPT_BY_BYTES[name], name);
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
