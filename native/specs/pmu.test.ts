import { strict as assert } from 'node:assert';
import { decodeAttr, encodeAttr, type PerfEventAttr } from '../abi/attr';
import { applyAttrWord, applyFormatTerm, formatWidth, packFormatValue, parseEventAlias, parseFormatTerm, PmuError } from './pmu';

const BASE: PerfEventAttr = { type: 42, config: 0n, samplePeriod: 1n, sampleType: 0, readFormat: 0, flags: {} };

function word(attr: PerfEventAttr, index: number): bigint {
  const bytes = encodeAttr(attr);
  return new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(index * 8, true);
}

describe('specs/pmu (pure)', () => {
  it('parses configN ranges, single bits and attrN', () => {
    assert.deepEqual(parseFormatTerm('event', 'config:0-7,32-35\n'), {
      name: 'event',
      target: { kind: 'config', index: 0 },
      ranges: [
        { lo: 0, hi: 7 },
        { lo: 32, hi: 35 },
      ],
      text: 'config:0-7,32-35',
    });
    assert.deepEqual(parseFormatTerm('edge', 'config1:18').target, { kind: 'config', index: 1 });
    assert.deepEqual(parseFormatTerm('x', 'config2:0-63').ranges, [{ lo: 0, hi: 63 }]);
    assert.deepEqual(parseFormatTerm('x', 'config3:1').target, { kind: 'config', index: 3 });
    assert.deepEqual(parseFormatTerm('persistent', 'attr5:23'), {
      name: 'persistent',
      target: { kind: 'attr', index: 5 },
      ranges: [{ lo: 23, hi: 23 }],
      text: 'attr5:23',
    });
    assert.equal(formatWidth(parseFormatTerm('event', 'config:0-7,32-35')), 12);
  });

  it('rejects malformed format files with PmuError', () => {
    for (const [text, pattern] of [
      ['config4:1', /not configN:BITS or attrN:BITS/],
      ['config:', /not configN:BITS/],
      ['config:7-3', /LO <= HI/],
      ['config:64', /within 0-63/],
      ['config:1-x', /'1-x' is not N or LO-HI/],
      ['attr17:0', /attr17 is past the end/],
    ] as const) {
      assert.throws(
        () => parseFormatTerm('t', text, '/fake/format/t'),
        (error: unknown) => error instanceof PmuError && pattern.test(error.message) && error.message.startsWith('/fake/format/t'),
        text,
      );
    }
  });

  it('scatters values over multiple ranges low bits first, like perf', () => {
    const term = parseFormatTerm('event', 'config:0-7,32-35');
    assert.deepEqual(packFormatValue(term, 0xabcn), { mask: 0xf_0000_00ffn, bits: 0xa_0000_00bcn });
    assert.deepEqual(packFormatValue(term, 0xfffn), { mask: 0xf_0000_00ffn, bits: 0xf_0000_00ffn });
    assert.throws(() => packFormatValue(term, 0x1000n), /does not fit format 'event' \(config:0-7,32-35, 12 bits, max 0xfff\)/);
    const full = parseFormatTerm('raw', 'config:0-63');
    assert.equal(packFormatValue(full, (1n << 64n) - 1n).bits, (1n << 64n) - 1n);
  });

  it('applies configN terms and clears the range first (later terms override)', () => {
    const event = parseFormatTerm('event', 'config:0-7,32-35');
    let attr = applyFormatTerm({ ...BASE, config: 0xff00n }, event, 0x1ffn);
    assert.equal(attr.config, 0x1_0000_ffffn);
    attr = applyFormatTerm(attr, event, 0x002n);
    assert.equal(attr.config, 0xff02n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'config1:3'), 1n).config1, 8n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'config2:4-5'), 3n).config2, 0x30n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'config3:63'), 1n).config3, 1n << 63n);
  });

  it('attr5:23 sets mmap2 (flag word at offset 40), round-tripping through encodeAttr/decodeAttr', () => {
    const attr = applyFormatTerm(BASE, parseFormatTerm('persistent', 'attr5:23'), 1n);
    assert.equal(attr.flags.mmap2, true);
    assert.equal(word(attr, 5), 1n << 23n);
    const bytes = encodeAttr(attr);
    assert.equal(new DataView(bytes.buffer).getBigUint64(40, true), 1n << 23n);
    assert.equal(decodeAttr(bytes).flags.mmap2, true);
    assert.equal(attr.type, 42, 'other fields survive');
    assert.equal(attr.size, undefined, 'size stays for the opener to negotiate');
  });

  it('attrN matches the configN it aliases and every attr u64 index maps to its field', () => {
    const viaConfig = applyFormatTerm(BASE, parseFormatTerm('e', 'config:0-7,32-35'), 0xabcn);
    const viaAttr = applyFormatTerm(BASE, parseFormatTerm('e', 'attr1:0-7,32-35'), 0xabcn);
    assert.deepEqual(encodeAttr(viaAttr), encodeAttr(viaConfig));
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr7:12'), 1n).config1, 1n << 12n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr8:0-3'), 8n).config2, 8n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr16:5'), 1n).config3, 32n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr2:0-31'), 4000n).samplePeriod, 4000n);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr3:10'), 1n).sampleType, 1 << 10);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr4:4'), 1n).readFormat, 1 << 4);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr5:27'), 1n).flags.writeBackward, true);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr5:15-16'), 2n).preciseIp, 2);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr6:32-63'), 3n).bpType, 3);
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr11:32-63'), 1n).clockid, 1);
    assert.deepEqual(applyFormatTerm(BASE, parseFormatTerm('e', 'attr14:33'), 1n).auxAction, { auxPause: true });
    assert.equal(applyFormatTerm(BASE, parseFormatTerm('e', 'attr0:0-31'), 7n).type, 7);
  });

  it('refuses bits where perf_event_attr has no field', () => {
    assert.throws(() => applyFormatTerm(BASE, parseFormatTerm('e', 'attr5:40'), 1n), /attr5 bit 40 is a reserved bit/);
    assert.throws(() => applyFormatTerm(BASE, parseFormatTerm('e', 'attr14:40'), 1n), /attr14 bit 40 is a reserved bit/);
    assert.throws(() => applyFormatTerm(BASE, parseFormatTerm('e', 'attr0:32'), 1n), /attr.size/);
    assert.throws(() => applyAttrWord(BASE, 17, 1n, 1n), /outside perf_event_attr/);
  });

  it('parses event aliases with numbers, flags and ? parameters', () => {
    assert.deepEqual(parseEventAlias('tsc', 'event=0x00\n'), { name: 'tsc', text: 'event=0x00', terms: [{ key: 'event', value: 0n }] });
    assert.deepEqual(parseEventAlias('x', 'event=0x3c,umask=?,edge').terms, [{ key: 'event', value: 0x3cn }, { key: 'umask', value: '?' }, { key: 'edge' }]);
    assert.throws(
      () => parseEventAlias('x', 'event=abc', '/f'),
      (error: unknown) => error instanceof PmuError && /not a number/.test(error.message),
    );
  });
});
