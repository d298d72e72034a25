// A logpoint's floats and doubles are written as gdb writes them, glibc's %.9g and %.17g (native/symbols/dwarf-values.ts,
// formatG). glibc's printf is the referee: a C program prints the same values, given as their exact bits, and every line
// must be the same text. The values: round ones, exact binary fractions, ones that round up into a new exponent, the
// edges of the fixed and exponential notations, subnormals, the largest double, and a deterministic spread.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatG } from '../../native/symbols/dwarf-values';

const SPECIAL = [
  0.1,
  1,
  -1,
  100,
  1e16,
  1e17,
  Number('123456789012345678'),
  Number('9.999999999999999e16'),
  Number('99999999999999999'),
  0.0001,
  0.00001,
  Number('0.00009999999999999999'),
  -0.5,
  -1402977.125,
  2.5,
  0.125,
  1.0000000000000002,
  5.6953125,
  8.078125,
  1 / 3,
  -1e-300,
  1.7976931348623157e308,
  5e-324,
  2 ** 53,
  123.456,
  -123.456e-5,
  1e21,
  1.5e-5,
  12345678.9,
  999999999.5,
  0.000123456789,
];

function values(): number[] {
  const out = [...SPECIAL];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < 400; i++) out.push((next() - 0.5) * 10 ** Math.floor(next() * 40 - 20));
  for (let i = 0; i < 100; i++) out.push(Math.round(next() * 1e6) / 64);
  return out;
}

describe("formatG: floats as glibc's printf writes them (gdb's %.9g and %.17g)", () => {
  it('every value, as a double (%.17g) and as a float (%.9g), is the text glibc prints', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-format-g-'));
    try {
      const all = values();
      const floats = all.map((value) => Math.fround(value));
      const bits = (value: number) => {
        const view = new DataView(new ArrayBuffer(8));
        view.setFloat64(0, value);
        return `0x${view.getBigUint64(0).toString(16)}ULL`;
      };
      const source = path.join(dir, 'g.c');
      writeFileSync(
        source,
        [
          '#include <stdio.h>',
          '#include <string.h>',
          `static const unsigned long long bits[] = { ${all.map(bits).join(', ')} };`,
          `static const unsigned long long float_bits[] = { ${floats.map(bits).join(', ')} };`,
          'int main(void) {',
          '  for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; i++) { double d; memcpy(&d, &bits[i], 8); printf("%.17g\\n", d); }',
          '  for (unsigned i = 0; i < sizeof float_bits / sizeof float_bits[0]; i++) {',
          '    double d; memcpy(&d, &float_bits[i], 8); float f = (float)d; printf("%.9g\\n", (double)f);',
          '  }',
          '  return 0;',
          '}',
        ].join('\n'),
      );
      const program = path.join(dir, 'g');
      execFileSync('gcc', ['-O0', '-o', program, source]);
      const printed = execFileSync(program, { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } })
        .trimEnd()
        .split('\n');
      const ours = [...all.map((value) => formatG(value, 17)), ...floats.map((value) => formatG(value, 9))];
      assert.equal(printed.length, ours.length);
      ours.forEach((text, i) => assert.equal(text, printed[i], `value ${i < all.length ? all[i] : floats[i - all.length]}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
