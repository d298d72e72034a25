// The name demangler against c++filt -p (no parameters) on every C++ symbol of libstdc++ and the fixtures,
// plus the non-verbose forms perf prints.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { demangle } from '../../native/symbols/demangle';
import { fixture, nm } from './binutils';

function cxxfilt(names: readonly string[]): string[] {
  return execFileSync('c++filt', ['-p'], { input: names.join('\n') + '\n', encoding: 'utf8', maxBuffer: 64 << 20 })
    .trimEnd()
    .split('\n');
}

describe('symbols: C++ demangling', () => {
  it('every fixture symbol demangles exactly as c++filt -p', () => {
    const names = [...new Set(['sym_cpp', 'sym_cpp_o2', 'sym_names'].flatMap((f) => nm(fixture(f)).map((s) => s.name)).filter((n) => n.startsWith('_Z')))];
    assert.ok(names.length >= 6);
    const expected = cxxfilt(names);
    names.forEach((n, i) => assert.equal(demangle(n, { verbose: true }), expected[i], n));
  });

  it('libstdc++ exports: anything demangled equals c++filt -p, and nearly all are covered', () => {
    const lib = ['/usr/lib/x86_64-linux-gnu/libstdc++.so.6', '/lib/x86_64-linux-gnu/libstdc++.so.6'].find(existsSync);
    assert.ok(lib, 'libstdc++.so.6 not found');
    const names = [
      ...new Set(
        nm(lib, ['-D'])
          .map((s) => s.name.replace(/@.*$/, ''))
          .filter((n) => n.startsWith('_Z')),
      ),
    ];
    assert.ok(names.length > 3000, `only ${names.length} names`);
    const expected = cxxfilt(names);
    let covered = 0;
    const wrong: string[] = [];
    names.forEach((n, i) => {
      const ours = demangle(n, { verbose: true });
      if (ours === undefined) return;
      covered++;
      if (ours !== expected[i]) wrong.push(`${n}: ours ${ours}, c++filt ${expected[i]}`);
    });
    assert.deepEqual(wrong.slice(0, 10), []);
    assert.ok(covered / names.length > 0.95, `covered ${covered} of ${names.length}`);
  });

  it('perf style: short standard abbreviations, full before constructors, clones without suffix', () => {
    assert.equal(demangle('_ZNKSs4sizeEv'), 'std::string::size');
    assert.equal(demangle('_ZNSsC1Ev'), 'std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string');
    assert.equal(demangle('_ZN8ringside5Meter6recordEi.isra.0'), 'ringside::Meter::record');
    assert.equal(demangle('_ZN8ringside5twiceIiEET_S1_'), 'ringside::twice<int>');
    assert.equal(demangle('_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc'), 'std::operator<< <std::char_traits<char> >');
    // Only the top level loses its parameters: a local name's function and a thunk's target keep theirs.
    assert.equal(demangle('_ZZ11spin_lambdaliENKUllE_clEl.isra.0'), 'spin_lambda(long, int)::{lambda(long)#1}::operator()');
    assert.equal(
      demangle('_ZZNK5names11AccumulatorIlE6scaledEliENKUliE_clEi'),
      'names::Accumulator<long>::scaled(long, int) const::{lambda(int)#1}::operator()',
    );
    assert.equal(demangle('_ZZ1fRKSsE1x'), 'f(std::string const&)::x');
    assert.equal(demangle('_ZThn16_N5names4Both5rightEl'), 'non-virtual thunk to names::Both::right(long)');
    assert.equal(demangle('_ZTv0_n32_N5names6Square4areaEl'), 'virtual thunk to names::Square::area(long)');
    // perf names a PLT stub `<demangled>@plt`.
    assert.equal(demangle('_ZdaPv@plt'), 'operator delete[]@plt');
    assert.equal(demangle('_Znam'), 'operator new[]');
    // Found by comparing every frame of a ringside capture -a -g with perf script: a pointer to a function type in
    // a template argument, and an empty argument pack (node's own symbols), each as c++filt and perf print them.
    const fromNode = [
      '_ZN4node24MakeLibuvRequestCallbackI7uv_fs_sPFvPS1_EE7WrapperES2_',
      '_ZN2v88internal8compiler12PipelineImpl3RunINS1_31EffectControlLinearizationPhaseEJEEEDaDpOT0_',
      '_ZN2v88internal8compiler12PipelineImpl3RunINS1_24AllocateFPRegistersPhaseINS1_19LinearScanAllocatorEEEJEEEDaDpOT0_',
    ];
    assert.deepEqual(
      fromNode.map((name) => demangle(name)),
      cxxfilt(fromNode),
    );
    assert.equal(demangle(fromNode[0]), 'node::MakeLibuvRequestCallback<uv_fs_s, void (*)(uv_fs_s*)>::Wrapper');
    assert.equal(demangle('main'), undefined);
    assert.equal(demangle('_Z'), undefined);
    assert.equal(demangle('_ZN3foo'), undefined, 'truncated');
  });
});
