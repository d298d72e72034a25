// The name demangler against c++filt -p (no parameters) on every C++ symbol of libstdc++, the fixtures and the
// node binary running the tests, plus the non-verbose forms perf prints.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
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
    // All 5,866 of GCC 12's are demangled; 1 in 1,000 leaves room for another version's new forms, not for a group.
    assert.ok(names.length - covered <= names.length / 1000, `covered ${covered} of ${names.length}`);
  });

  it("node's own binary: no C++ symbol demangled otherwise than c++filt -p, and all but a few demangled", () => {
    // V8 and node are the largest body of C++ at hand: packs, lambdas, function addresses as template arguments.
    const binary = realpathSync(process.execPath);
    const names = [...new Set(nm(binary).map((s) => s.name.replace(/@.*$/, '')))].filter((n) => n.startsWith('_Z'));
    assert.ok(names.length > 10_000, `${binary}: only ${names.length} C++ symbols (a stripped node?)`);
    const expected = cxxfilt(names);
    const wrong: string[] = [];
    const undemangled: string[] = [];
    names.forEach((n, i) => {
      const ours = demangle(n, { verbose: true });
      if (ours === undefined) {
        if (expected[i] !== n) undemangled.push(n); // c++filt demangles it and we do not
      } else if (ours !== expected[i]) wrong.push(`${n}: ours ${ours}, c++filt ${expected[i]}`);
    });
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} wrong`);
    // Node 20's binary leaves none of its 78,733 mangled (942 of the 78,865 nm lists were, before pack expansions,
    // function addresses and the rest were covered). 1 in 20,000 (3 of node 20's) lets another build bring a form not
    // covered yet (an expression kind), while any group covered here coming undone fails it (without pack expansions,
    // 338); the single ones are in the perf style test below.
    assert.ok(undemangled.length <= names.length / 20_000, `${undemangled.length} of ${names.length} left mangled: ${undemangled.slice(0, 5).join(' ')}`);
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
    // A frame perf named and Ringside left mangled: a pack expansion (`DpOT1_`) over a `J…E` argument, whose `int&`
    // collapses `int& &&` to `int&`, in the function encoding of a local name.
    const dispatch =
      '_ZN2v88internal11StringShape33DispatchToSpecificTypeWithoutCastIZNS1_22DispatchToSpecificTypeIZNKS0_6String7GetImplEiNS0_16PtrComprCageBaseERKNS0_31SharedStringAccessGuardIfNeededEE19StringGetDispatchertJRiRS5_S8_EEET0_S4_DpOT1_E17CastingDispatchertJRS4_SA_SB_S8_EEESC_SF_.isra.0';
    assert.equal(
      demangle(dispatch),
      'v8::internal::StringShape::DispatchToSpecificTypeWithoutCast<v8::internal::StringShape::DispatchToSpecificType<' +
        'v8::internal::String::GetImpl(int, v8::internal::PtrComprCageBase, v8::internal::SharedStringAccessGuardIfNeeded const&) const::StringGetDispatcher, ' +
        'unsigned short, int&, v8::internal::PtrComprCageBase&, v8::internal::SharedStringAccessGuardIfNeeded const&>' +
        '(v8::internal::String, int&, v8::internal::PtrComprCageBase&, v8::internal::SharedStringAccessGuardIfNeeded const&)::CastingDispatcher, ' +
        'unsigned short, v8::internal::String&, int&, v8::internal::PtrComprCageBase&, v8::internal::SharedStringAccessGuardIfNeeded const&>',
    );
    // Forms libiberty prints its own way, each once wrong or left mangled here, as c++filt prints them (none of which
    // may come out mangled: deepEqual against c++filt's demangled names): a function
    // type returning a function pointer (`R (*(B))(A)`), a lambda's closure type as a parameter, a generic lambda's
    // `auto:1`, an empty pack first in a list (`<, void>`), function addresses (`&A::f`, `&(A::f() const)`,
    // `&(void (*B::f<int>(void (int)))(int))`), a pointer to member function and a construction vtable.
    const libibertyForms = [
      '_ZN4node9inspector12_GLOBAL__N_119CreateObjectRequestISt5_BindIFPFSt10unique_ptrINS1_22MainThreadSessionStateESt14default_deleteIS5_EEPNS0_19MainThreadInterfaceEbESt12_PlaceholderILi1EEbEEE4CallESA_',
      '_ZN2v84base19TemplateHashMapImplImjNS0_18KeyEqualityMatcherIlEENS0_23DefaultAllocationPolicyEE14LookupOrInsertImZNS5_14LookupOrInsertIZNS5_14LookupOrInsertERKmjEUlvE_EEPNS0_20TemplateHashMapEntryImjEES9_jRKT_EUlvE_SA_EESD_SG_jRKT0_RKT1_.constprop.0',
      '_ZZN1A1fEvENKUlT_iE_clIiEEDaS0_i',
      '_ZNSt17_Function_handlerIFvvEZN2v84base8CallOnceIJEvEEvPSt6atomicIhENS2_16FunctionWithArgsIJDpT_EE4typeES9_EUlvE_E9_M_invokeERKSt9_Any_data',
      '_ZN4node10StreamBase8JSMethodIXadL_ZNS0_6WritevERKN2v820FunctionCallbackInfoINS2_5ValueEEEEEEEvS7_',
      '_ZN1AIXadL_ZNK1B1fEvEEE1gEv',
      '_ZN1AIXadL_ZN1B1fIiEEPFviES2_EEE1gEv',
      '_ZN4node12_GLOBAL__N_16Parser5ProxyIMS1_FiPKcmEXadL_ZNS1_6on_urlES4_mEEE3RawEP18llhttp__internal_sS4_m',
      '_ZTCN2v84base18CheckMessageStreamE0_So',
      // Found by comparing 177,664 names of 20 C++ binaries (LLVM, cc1plus, ICU, libstdc++, ...) with c++filt: a
      // lambda in a default argument, a reference temporary, a noexcept function type, 64-bit literals, an unnamed
      // type's destructor (named after the last source name), an ABI-tagged constructor, a declarator through a
      // pointer to member inside a constructor template's local name, a transaction clone, and `int& &&` collapsing
      // through a substitution.
      '_ZNSt17_Function_handlerIFvN2v88internal10HeapObjectENS1_14FullObjectSlotES2_EZNS1_18SharedFunctionInfo23DiscardCompiledMetadataEPNS1_7IsolateESt8functionIS4_EEd_UlS2_S3_S2_E_E9_M_invokeERKSt9_Any_dataOS2_OS3_SF_',
      '_ZZ1fvEd_NKUlvE_clEv',
      '_ZGRZN7simdutf8internalL37get_available_implementation_pointersEvE33available_implementation_pointers_',
      '_ZSt6all_ofIPKcPDoFbcEEbT_S4_T0_',
      '_ZNSt23mersenne_twister_engineImLm64ELm312ELm156ELm31ELm13043109905998158313ELm29ELm6148914691236517205ELm17ELm8202884508482404352ELm37ELm18444473444759240704ELm43ELm6364136223846793005EEclEv',
      '_ZN6icu_726number4impl10MicroPropsUt_D1Ev',
      '_ZNSt8ios_base7failureB5cxx11C1EPKcRKSt10error_code',
      '_ZZNSt9once_flag18_Prepare_executionC4IZSt9call_onceIMSt6threadFvvEJPS3_EEvRS_OT_DpOT0_EUlvE_EERS8_ENUlvE_4_FUNEv',
      '_ZGTtNKSt11logic_error4whatEv',
      '_ZZ1fRiOS_E1x',
      '_ZZNSt8__detail13__to_chars_16IjEENSt9enable_ifIXsrSt5__or_IJS2_IJSt7is_sameINSt9remove_cvIT_E4typeEaES3_IS7_sES3_IS7_iES3_IS7_lES3_IS7_xES3_IS7_nEEES2_IJS3_IS7_hES3_IS7_tES3_IS7_jES3_IS7_mES3_IS7_yES3_IS7_oEEES3_IcS7_EEE5valueESt15to_chars_resultE4typeEPcSR_S5_E8__digits',
    ];
    assert.deepEqual(
      libibertyForms.map((name) => demangle(name, { verbose: true })),
      cxxfilt(libibertyForms),
    );
    assert.equal(demangle('main'), undefined);
    assert.equal(demangle('_Z'), undefined);
    assert.equal(demangle('_ZN3foo'), undefined, 'truncated');
    assert.equal(demangle(`_ZZ1f${'P'.repeat(200_000)}iE1x`), undefined, 'nested past the call stack');
  });
});
