// PLT stubs have no symbols of their own; perf synthesizes `name@plt` for them and so does objdump.
// A sample that lands in a stub (seen in CI in ld.so's _dl_catch_exception@plt) must be named the same.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readElf, openObjectFile } from '../../native/symbols/object-file';
import { fixture } from './binutils';

/**
 * objdump's `<name@plt>` labels in `.plt` / `.plt.sec` (not `.plt.got`, which perf 6.1 does not name),
 * without the IRELATIVE ones (`*ABS*+0x…@plt`) that have no symbol.
 */
function objdumpPlt(file: string): Map<bigint, string> {
  const section = execFileSync('readelf', ['-SW', file], { encoding: 'utf8' }).includes(' .plt.sec ') ? '.plt.sec' : '.plt';
  const out = execFileSync('objdump', ['-d', '--no-show-raw-insn', '-j', section, file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const labels = new Map<bigint, string>();
  for (const match of out.matchAll(/^([0-9a-f]+) <([^>]+@plt)>:$/gm)) if (!match[2].startsWith('*ABS*')) labels.set(BigInt('0x' + match[1]), match[2]);
  return labels;
}

describe('symbols: synthesized PLT entries', () => {
  for (const file of ['/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', '/usr/lib/x86_64-linux-gnu/libc.so.6', fixture('kernel_writer'), fixture('sym_o2_pie')]) {
    it(`equal objdump's <name@plt> labels: ${file.split('/').pop()}`, () => {
      const expected = objdumpPlt(file);
      assert.ok(expected.size > 0, `${file} has PLT entries`);
      const ours = new Map(readElf(file).pltSymbols().map((s) => [s.value, s.name] as const));
      assert.deepEqual([...ours].sort(), [...expected].sort());
      // And the symbolizer's function lookup names an address inside a stub after it.
      const [address, name] = [...expected][0];
      assert.equal(openObjectFile(file).functionAt(address + 4n)?.name, name);
    });
  }
});
