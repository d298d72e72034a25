// PLT stubs have no symbols of their own; perf synthesizes `name@plt` for them and so does objdump.
// A sample that lands in a stub (seen in CI in ld.so's _dl_catch_exception@plt) must be named the same.
import assert from 'node:assert/strict';
import { readElf, openObjectFile } from '../../native/symbols/object-file';
import { fixture, objdumpPlt } from './binutils';

describe('symbols: synthesized PLT entries', () => {
  for (const file of [
    '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2',
    '/usr/lib/x86_64-linux-gnu/libc.so.6',
    fixture('kernel_writer'),
    fixture('sym_o2_pie'),
  ]) {
    it(`equal objdump's <name@plt> labels: ${file.split('/').pop()}`, () => {
      const expected = objdumpPlt(file);
      assert.ok(expected.size > 0, `${file} has PLT entries`);
      const ours = new Map(
        readElf(file)
          .pltSymbols()
          .map((s) => [s.value, s.name] as const),
      );
      assert.deepEqual([...ours].sort(), [...expected].sort());
      // And the symbolizer's function lookup names an address inside a stub after it.
      const [address, name] = [...expected][0];
      assert.equal(openObjectFile(file).functionAt(address + 4n)?.name, name);
    });
  }
});
