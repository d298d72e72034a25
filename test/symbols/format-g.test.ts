// A logpoint's floats and doubles are written as gdb writes them, glibc's %.9g and %.17g (native/symbols/dwarf-values.ts,
// formatG). glibc's printf is the referee: a C program prints the same values, given as their exact bits, and every line
// must be the same text. The values: round ones, exact binary fractions, ones that round up into a new exponent, the
// edges of the fixed and exponential notations, subnormals, the largest double, and a deterministic spread.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { formatFloat, formatG } from '../../native/symbols/dwarf-values';

/** What gdb 13 (Debian) printed for doubles and floats with these bits (`print` of a variable holding them). */
const GDB_PRINTED: ReadonlyArray<readonly [bits: string, text: string]> = [
  ['3fb999999999999a', '0.10000000000000001'],
  ['4341c37937e08000', '10000000000000000'],
  ['4376345785d8a000', '1e+17'],
  ['8000000000000000', '-0'],
  ['0000000000000001', '4.9406564584124654e-324'],
  ['43118b54f22aeb01', '1234567890123456.2'],
  ['3e7ad7f29abcaf48', '9.9999999999999995e-08'],
  ['403c000500000000', '28.000076293945312'],
  ['7ff0000000000000', 'inf'],
  ['fff8000000000000', '-nan(0x8000000000000)'],
  ['80000000', '-0'],
  ['3dcccccd', '0.100000001'],
  ['c9ab4309', '-1402977.12'],
  ['00000001', '1.40129846e-45'],
  ['7f800000', 'inf'],
  ['7fc00000', 'nan(0x400000)'],
];

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
  -0,
  0,
  Infinity,
  -Infinity,
  // Exactly halfway at 17 digits: glibc keeps the even digit (…56.2 and …56.8), toExponential rounds away.
  1234567890123456.25,
  1234567890123456.75,
  -1234567890123456.25,
  // Subnormals, and the edge of the normal range.
  4.9406564584124654e-324,
  1.4821969375237396e-323,
  1e-310,
  2.2250738585072009e-308,
  2.2250738585072014e-308,
  0.30000000000000004,
  2 ** 53 + 2,
  2 ** 60,
  1.5e20,
  // Exactly halfway at 9 digits as floats.
  1402977.375,
  16777217,
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
  // The fixture's doubles: 0.5 * 1.5^n (3^n / 2^(n+1): exact expansions of every length, some halfway) and s = s / 2 + n.
  let weight = 0.5;
  let scale = 1;
  for (let n = 0; n < 80; n++) {
    weight *= 1.5;
    scale = scale * 0.5 + n;
    out.push(weight, -weight, scale, Math.fround(weight));
  }
  // Every short binary fraction near the 9 and 17 digit boundaries.
  for (let k = 1; k <= 30; k++) for (const m of [1, 3, 5, 123457, 98765431, 1234567890123]) out.push(m / 2 ** k, (m * 1e9 + 1) / 2 ** k);
  return out;
}

describe("formatG: floats as glibc's printf writes them (gdb's %.9g and %.17g)", () => {
  it('writes the text gdb printed for the same bits (negative zero, subnormals, halfway, inf, nan)', () => {
    for (const [bits, text] of GDB_PRINTED) {
      const bytes = new Uint8Array(bits.length / 2);
      // Little-endian, as the value sits in memory.
      for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(bits.slice(bits.length - 2 * (i + 1), bits.length - 2 * i), 16);
      assert.equal(formatFloat(bytes), text, bits);
    }
  });

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
