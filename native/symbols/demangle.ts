// Itanium C++ ABI demangling of symbol *names* (no parameter lists), the way perf shows them: perf
// calls libiberty's cplus_demangle without DMGL_PARAMS, so `_ZN8ringside5Meter6recordEi` prints as
// `ringside::Meter::record` and `_ZN8ringside5twiceIiEET_S1_` as `ringside::twice<int>`. Only the top
// level loses its parameters: the function enclosing a local name, and the target of a thunk, keep
// theirs (`spin(long, int)::{lambda(long)#1}::operator()`, `non-virtual thunk to A::f(long)`), with
// return types dropped. Covers nested and unscoped names, templates (types, literals, template params,
// packs and pack expansions), substitutions, std abbreviations, constructors/destructors, operators, ABI tags,
// local names and lambdas, thunks, transaction clones and special names (vtable for ...); clone suffixes are
// dropped as libiberty does without DMGL_PARAMS. Types are kept as structure until printed, so function types,
// pointers to them and to members print in libiberty's declarator order (`void (*)(uv_fs_s*)`, `R (*(B))(A)`,
// `int (A::*)() const`). Of expressions in template arguments only a function's address (`&A::f`) is covered;
// anything else (other expressions, noexcept function types, decltype) returns undefined so callers keep the
// mangled name: a name left mangled is better than a wrong one. Pure.

class Unsupported extends Error {}

// Character tests on the one-character strings peek() returns ('' past the end): a RegExp per test was a tenth of
// demangling a profile's names, most of them demangled once each, before the code is optimized.
function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}
function isUpper(c: string): boolean {
  return c >= 'A' && c <= 'Z';
}
function isCvQualifier(c: string): boolean {
  return c === 'r' || c === 'V' || c === 'K';
}

const BUILTIN: Record<string, string> = {
  v: 'void',
  w: 'wchar_t',
  b: 'bool',
  c: 'char',
  a: 'signed char',
  h: 'unsigned char',
  s: 'short',
  t: 'unsigned short',
  i: 'int',
  j: 'unsigned int',
  l: 'long',
  m: 'unsigned long',
  x: 'long long',
  y: 'unsigned long long',
  n: '__int128',
  o: 'unsigned __int128',
  f: 'float',
  d: 'double',
  e: 'long double',
  g: '__float128',
  z: '...',
};
const BUILTIN_D: Record<string, string> = {
  n: 'decltype(nullptr)',
  i: 'char32_t',
  s: 'char16_t',
  u: 'char8_t',
  a: 'auto',
  c: 'decltype(auto)',
  d: 'decimal64',
  e: 'decimal128',
  f: 'decimal32',
  h: 'half',
};
/** Standard abbreviations: short form, full form (verbose, or before a constructor/destructor), class name. */
const STD_ABBREVIATION: Record<string, readonly [string, string, string]> = {
  a: ['std::allocator', 'std::allocator', 'allocator'],
  b: ['std::basic_string', 'std::basic_string', 'basic_string'],
  s: ['std::string', 'std::basic_string<char, std::char_traits<char>, std::allocator<char> >', 'basic_string'],
  i: ['std::istream', 'std::basic_istream<char, std::char_traits<char> >', 'basic_istream'],
  o: ['std::ostream', 'std::basic_ostream<char, std::char_traits<char> >', 'basic_ostream'],
  d: ['std::iostream', 'std::basic_iostream<char, std::char_traits<char> >', 'basic_iostream'],
};
const OPERATORS: Record<string, string> = {
  nw: 'new',
  na: 'new[]',
  dl: 'delete',
  da: 'delete[]',
  ps: '+',
  ng: '-',
  ad: '&',
  de: '*',
  co: '~',
  pl: '+',
  mi: '-',
  ml: '*',
  dv: '/',
  rm: '%',
  an: '&',
  or: '|',
  eo: '^',
  aS: '=',
  pL: '+=',
  mI: '-=',
  mL: '*=',
  dV: '/=',
  rM: '%=',
  aN: '&=',
  oR: '|=',
  eO: '^=',
  ls: '<<',
  rs: '>>',
  lS: '<<=',
  rS: '>>=',
  eq: '==',
  ne: '!=',
  lt: '<',
  gt: '>',
  le: '<=',
  ge: '>=',
  ss: '<=>',
  nt: '!',
  aa: '&&',
  oo: '||',
  pp: '++',
  mm: '--',
  cm: ',',
  pm: '->*',
  pt: '->',
  cl: '()',
  ix: '[]',
  qu: '?',
};

/**
 * A parsed type, kept as structure until printed: a function type's declarator goes inside its return type
 * (`R (*(B))(A)`), a pointer to an array prints as `int (*) [4]`, and a pack expansion needs the pack it expands.
 */
type Type =
  | { readonly kind: 'name'; readonly text: string }
  | { readonly kind: 'pointer'; readonly sigil: '*' | '&' | '&&'; readonly inner: Type }
  | { readonly kind: 'cv'; readonly qualifiers: string; readonly inner: Type }
  | { readonly kind: 'function'; readonly returns: Type; readonly params: readonly Type[]; readonly noexcept?: boolean }
  | { readonly kind: 'array'; readonly size: string; readonly inner: Type }
  /** A template argument pack (`J…E`), or the types a pack expansion (`Dp`) stands for: printed comma-separated. */
  | { readonly kind: 'pack'; readonly items: readonly Type[] }
  /** A template parameter (`T_`), standing for its argument: reference collapsing and `Dp` look for it. */
  | { readonly kind: 'param'; readonly arg: Type }
  /** A pointer to a member of class `owner`: `int (A::*)(char const*)`, `int A::*`. */
  | { readonly kind: 'member'; readonly owner: string; readonly inner: Type }
  /** A template parameter in a lambda's signature: a generic lambda's `auto:1`, printed only there. */
  | { readonly kind: 'auto'; readonly index: number };

function named(text: string): Type {
  return { kind: 'name', text };
}

/** What a template parameter stands for. */
function resolved(type: Type): Type {
  return type.kind === 'param' ? resolved(type.arg) : type;
}

/** A declarator (`*`, `(*)(int)`) written after a type: libiberty puts a space before one that opens a parenthesis. */
function after(text: string, declarator: string): string {
  return declarator.startsWith('(') ? `${text} ${declarator}` : text + declarator;
}

/** libiberty's form of `type` declaring `declarator` (empty for the type alone); `lambda`: in a lambda's signature. */
function printType(type: Type, declarator = '', lambda = false): string {
  switch (type.kind) {
    case 'name':
      return after(type.text, declarator);
    case 'param':
      return printType(type.arg, declarator, lambda);
    case 'auto':
      if (!lambda) throw new Unsupported(); // libiberty prints the argument of the function called, which we do not track
      return after(`auto:${type.index + 1}`, declarator);
    case 'pack':
      if (declarator !== '') throw new Unsupported();
      return printList(type.items, lambda);
    case 'cv': {
      const inner = resolved(type.inner);
      if (inner.kind === 'function' || inner.kind === 'array') throw new Unsupported(); // `void () const`: not covered
      return printType(type.inner, type.qualifiers + declarator, lambda);
    }
    case 'pointer': {
      const inner = resolved(type.inner);
      // Pointer to a function or array: the sigil goes in the declarator, `void (*)(int)`.
      if (inner.kind === 'function' || inner.kind === 'array' || inner.kind === 'member') return printType(inner, type.sigil + declarator, lambda);
      return after(printType(type.inner, type.sigil, lambda), declarator);
    }
    case 'member': {
      let inner = resolved(type.inner);
      let qualifiers = '';
      // A const member function's type is a cv-qualified function type, its qualifiers printed after the parameters.
      if (inner.kind === 'cv' && resolved(inner.inner).kind === 'function') {
        qualifiers = inner.qualifiers;
        inner = resolved(inner.inner);
      }
      if (inner.kind === 'function') {
        const params = `(${printList(inner.params, lambda)})${qualifiers}${inner.noexcept ? ' noexcept' : ''}`;
        return printType(inner.returns, `(${type.owner}::*${declarator})${params}`, lambda);
      }
      if (inner.kind === 'array') throw new Unsupported();
      return after(`${printType(type.inner, '', lambda)} ${type.owner}::*`, declarator);
    }
    case 'function': {
      const params = printList(type.params, lambda) + (type.noexcept ? ') noexcept' : ')');
      return printType(type.returns, declarator === '' ? `(${params}` : `(${declarator})(${params}`, lambda);
    }
    case 'array': {
      const inner = resolved(type.inner);
      if (inner.kind === 'function' || inner.kind === 'array') throw new Unsupported(); // `int [2][3]`: not covered
      return `${printType(inner, '', lambda)}${declarator === '' ? '' : ` (${declarator})`} [${type.size}]`;
    }
  }
}

/** Parameters or a pack, comma-separated as libiberty joins them (joinArgs); `(void)` prints `()`. */
function printList(types: readonly Type[], lambda = false): string {
  if (types.length === 1 && types[0].kind === 'name' && types[0].text === 'void') return '';
  return joinArgs(types.map((t) => printType(t, '', lambda)));
}

/**
 * libiberty writes `, ` before each argument after the first and takes it back when the argument printed nothing
 * (an empty pack); one that comes first has nothing to take back: `CallOnce<, void>`.
 */
function joinArgs(printed: readonly string[]): string {
  let out = printed[0] ?? '';
  for (let i = 1; i < printed.length; i++) if (printed[i] !== '') out += `, ${printed[i]}`;
  return out;
}

/** The first template parameter in `type` that stands for a pack: what a `Dp` expands over. */
function findPack(type: Type): readonly Type[] | undefined {
  switch (type.kind) {
    case 'name':
    case 'auto':
      return undefined;
    case 'param':
      return type.arg.kind === 'pack' ? type.arg.items : undefined;
    case 'pack':
      for (const item of type.items) {
        const found = findPack(item);
        if (found) return found;
      }
      return undefined;
    case 'function':
      return findPack(type.returns) ?? findPack({ kind: 'pack', items: type.params });
    default:
      return findPack(type.inner);
  }
}

/** `type` with every parameter standing for a pack replaced by the pack's `index`th element. */
function packElement(type: Type, index: number): Type {
  switch (type.kind) {
    case 'name':
    case 'auto':
      return type;
    case 'param':
      return type.arg.kind === 'pack' ? { kind: 'param', arg: type.arg.items[index] } : type;
    case 'pack':
      return { kind: 'pack', items: type.items.map((t) => packElement(t, index)) };
    case 'function':
      return { kind: 'function', returns: packElement(type.returns, index), params: type.params.map((t) => packElement(t, index)) };
    case 'pointer':
      return reference(type.sigil, packElement(type.inner, index));
    default:
      return { ...type, inner: packElement(type.inner, index) };
  }
}

/**
 * A pointer or reference to `inner`. A reference to a reference collapses as libiberty does it, whether the inner one
 * came from a template parameter (`T&&` with T = `int&` is `int&`) or a substitution: `&` if either is.
 */
function reference(sigil: '*' | '&' | '&&', inner: Type): Type {
  if (sigil !== '*') {
    const arg = resolved(inner);
    if (arg.kind === 'pointer' && arg.sigil !== '*') return sigil === '&' || arg.sigil === '&' ? { kind: 'pointer', sigil: '&', inner: arg.inner } : arg;
  }
  return { kind: 'pointer', sigil, inner };
}

interface Name {
  /** Printed form. */
  readonly text: string;
  /** Last unqualified component, for constructor/destructor names. */
  readonly last: string;
  /** Ends in template arguments: as a function, its type starts with the return type. */
  readonly template?: boolean;
  /** A constructor, destructor or conversion operator: no return type even when a template. */
  readonly noReturnType?: boolean;
  /** cv and ref qualifiers of a member function (` const`), printed after its parameters. */
  readonly qualifiers?: string;
  /**
   * An entity in a default argument: libiberty strips a member function's qualifiers at the top level only when its
   * local name is not wrapped in `{default arg#N}`, so `f()::{default arg#1}::{lambda()#1}::operator() const`.
   */
  readonly inDefaultArgument?: boolean;
}

class Demangler {
  private pos = 0;
  private readonly subs: Type[] = [];
  private templateArgs: Type[] = [];
  /** Set by unqualifiedName: the component just read was a constructor, destructor or conversion operator. */
  private lastWasStructor = false;
  /**
   * The last source name read outside template arguments, or the class a standard abbreviation names: libiberty's
   * name for a constructor or destructor (`MicroProps::{unnamed type#1}::~MicroProps`).
   */
  private lastName = '';
  /** Inside a lambda's signature (`Ul…E`), where a template parameter is a generic lambda's `auto:N`. */
  private lambdaSignatures = 0;

  constructor(
    private readonly s: string,
    private readonly verbose: boolean,
  ) {}

  private peek(offset = 0): string {
    return this.s[this.pos + offset] ?? '';
  }
  private next(): string {
    if (this.pos >= this.s.length) throw new Unsupported();
    return this.s[this.pos++];
  }
  private expect(c: string): void {
    if (this.next() !== c) throw new Unsupported();
  }

  private number(): number {
    let neg = false;
    if (this.peek() === 'n') {
      neg = true;
      this.pos++;
    }
    const start = this.pos;
    while (isDigit(this.peek())) this.pos++;
    if (start === this.pos) throw new Unsupported();
    const n = Number(this.s.slice(start, this.pos));
    return neg ? -n : n;
  }

  /** <seq-id> _ : base-36 index, S_ being 0. */
  private seqId(): number {
    if (this.peek() === '_') {
      this.pos++;
      return 0;
    }
    let n = 0;
    while (isDigit(this.peek()) || isUpper(this.peek())) n = n * 36 + Number.parseInt(this.next(), 36);
    this.expect('_');
    return n + 1;
  }

  private sourceName(): string {
    const length = this.number();
    if (length <= 0 || this.pos + length > this.s.length) throw new Unsupported();
    const id = this.s.slice(this.pos, this.pos + length);
    this.pos += length;
    this.lastName = id.startsWith('_GLOBAL_') && (id[8] === '.' || id[8] === '_' || id[8] === '$') && id[9] === 'N' ? '(anonymous namespace)' : id;
    return this.lastName;
  }

  private abiTags(text: string): string {
    const lastName = this.lastName; // a tag is no class name
    while (this.peek() === 'B') {
      this.pos++;
      text += `[abi:${this.sourceName()}]`;
    }
    this.lastName = lastName;
    return text;
  }

  /** <unqualified-name>. */
  private unqualifiedName(): string {
    this.lastWasStructor = false;
    const c = this.peek();
    if (c === 'L') {
      this.pos++;
      return this.unqualifiedName();
    } // internal linkage marker (GCC)
    if (isDigit(c)) return this.abiTags(this.sourceName());
    if (c === 'C' && ((this.peek(1) >= '1' && this.peek(1) <= '5') || this.peek(1) === 'I')) {
      this.pos += 2;
      if (this.s[this.pos - 1] === 'I') {
        this.next();
        this.type();
      }
      this.lastWasStructor = true;
      return this.abiTags(this.structorName());
    }
    if (c === 'D' && this.peek(1) >= '0' && this.peek(1) <= '5') {
      this.pos += 2;
      this.lastWasStructor = true;
      return this.abiTags('~' + this.structorName());
    }
    if (c === 'U' && this.peek(1) === 't') {
      this.pos += 2;
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return `{unnamed type#${n}}`;
    }
    if (c === 'U' && this.peek(1) === 'l') {
      this.pos += 2;
      const params: Type[] = [];
      this.lambdaSignatures++;
      try {
        while (this.peek() !== 'E') params.push(this.type());
      } finally {
        this.lambdaSignatures--;
      }
      this.pos++;
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return `{lambda(${printList(params, true)})#${n}}`;
    }
    if (c >= 'a' && c <= 'z') {
      const code = this.s.slice(this.pos, this.pos + 2);
      this.pos += 2;
      if (code === 'cv') {
        const target = printType(this.type());
        this.lastWasStructor = true;
        return `operator ${target}`;
      }
      if (code === 'li') return `operator"" ${this.sourceName()}`;
      const op = OPERATORS[code];
      if (!op) throw new Unsupported();
      return this.abiTags(/^[a-z]/.test(op) ? `operator ${op}` : `operator${op}`);
    }
    throw new Unsupported();
  }

  private structorName(): string {
    if (this.lastName === '') throw new Unsupported();
    return this.lastName;
  }

  private templateArgList(): string {
    this.expect('I');
    const args: Type[] = [];
    const lastName = this.lastName;
    while (this.peek() !== 'E') args.push(this.templateArg());
    this.lastName = lastName;
    this.pos++;
    this.templateArgs = args;
    // An empty pack (`JE`) prints nothing, not an empty slot between commas: `Run<Phase>`, as libiberty prints it.
    const printed = args.map((arg) => printType(arg));
    const joined = joinArgs(printed);
    // libiberty's space between `> >` follows the last thing it printed, which after an empty pack is not a `>`.
    return `<${joined}${printed.join(', ').endsWith('>') ? ' ' : ''}>`;
  }

  private templateArg(): Type {
    const c = this.peek();
    if (c === 'L') return named(this.exprPrimary());
    if (c === 'X') {
      // Of expressions, only a function's or member's address (`&A::f`), the one node's binary has by the hundred,
      // and a static member of a class (`std::__or_<…>::value`, libstdc++'s enable_if conditions).
      this.pos++;
      if (this.peek() === 's' && this.peek(1) === 'r' && this.peek(2) !== 'N') {
        this.pos += 2;
        const owner = printType(this.type());
        const member = this.sourceName();
        const text = `${owner}::${this.peek() === 'I' ? this.withOwnArgs(member) : member}`;
        this.expect('E');
        return named(text);
      }
      if (this.peek() !== 'a' || this.peek(1) !== 'd' || this.peek(2) !== 'L' || this.peek(3) !== '_' || this.peek(4) !== 'Z') throw new Unsupported();
      this.pos += 5;
      const target = this.encoding('address');
      this.expect('E');
      this.expect('E');
      return named(target);
    }
    if (c === 'J') {
      this.pos++;
      const pack: Type[] = [];
      while (this.peek() !== 'E') pack.push(this.templateArg());
      this.pos++;
      return { kind: 'pack', items: pack };
    }
    return this.type();
  }

  private exprPrimary(): string {
    this.expect('L');
    if (this.peek() === '_' && this.peek(1) === 'Z') {
      this.pos += 2;
      const inner = this.encoding('read');
      this.expect('E');
      return inner;
    }
    const type = printType(this.type());
    // As written: a 64-bit value (`13043109905998158313ul`) does not survive a double.
    const start = this.pos;
    const negative = this.peek() === 'n';
    this.number();
    const value = (negative ? '-' : '') + this.s.slice(negative ? start + 1 : start, this.pos);
    this.expect('E');
    if (type === 'bool') return value === '0' ? 'false' : value === '1' ? 'true' : `(bool)${value}`;
    if (type === 'int') return value;
    if (type === 'unsigned int') return `${value}u`;
    if (type === 'long') return `${value}l`;
    if (type === 'unsigned long') return `${value}ul`;
    if (type === 'long long') return `${value}ll`;
    if (type === 'unsigned long long') return `${value}ull`;
    return `(${type})${value}`;
  }

  /** `prefix`: used as the qualifier of a nested name, where libiberty expands `Ss` before a constructor/destructor. */
  private substitution(prefix = false): { text: string; last: string; type: Type } {
    this.expect('S');
    const c = this.peek();
    const std = STD_ABBREVIATION[c];
    if (std) {
      this.pos++;
      const full = this.verbose || (prefix && (this.peek() === 'C' || this.peek() === 'D'));
      const text = full ? std[1] : std[0];
      this.lastName = std[2];
      return { text, last: std[2], type: named(text) };
    }
    const index = this.seqId();
    const sub = this.subs[index];
    if (sub === undefined) throw new Unsupported();
    const text = printType(sub);
    return { text, last: lastComponent(text), type: sub };
  }

  private templateParam(): Type {
    this.expect('T');
    const index = this.seqId();
    if (this.lambdaSignatures > 0) return { kind: 'auto', index };
    const arg = this.templateArgs[index];
    if (arg === undefined) throw new Unsupported();
    return { kind: 'param', arg };
  }

  /** A class name with template arguments: they are not the enclosing function's, which `T_` goes on naming. */
  private withOwnArgs(text: string): string {
    const saved = this.templateArgs;
    const args = this.templateArgList();
    this.templateArgs = saved;
    return withArgs(text, args);
  }

  /** <function-type> ::= F [Y] <return type> <parameter types>+ [<ref-qualifier>] E */
  private functionType(noexcept: boolean): Type {
    this.expect('F');
    if (this.peek() === 'Y') this.pos++;
    const returns = this.type();
    const params: Type[] = [];
    while (this.peek() !== 'E') {
      if ((this.peek() === 'R' || this.peek() === 'O') && this.peek(1) === 'E') throw new Unsupported(); // `void () &`
      params.push(this.type());
    }
    this.pos++;
    return { kind: 'function', returns, params, noexcept };
  }

  type(): Type {
    const c = this.peek();
    if (BUILTIN[c]) {
      this.pos++;
      return named(BUILTIN[c]);
    }
    if (c === 'D' && BUILTIN_D[this.peek(1)]) {
      this.pos += 2;
      return named(BUILTIN_D[this.s[this.pos - 1]]);
    }
    if (c === 'u') {
      this.pos++;
      const t = named(this.sourceName());
      this.subs.push(t);
      return t;
    }
    let result: Type;
    if (c === 'r' || c === 'V' || c === 'K') {
      const quals: string[] = [];
      while (isCvQualifier(this.peek())) {
        const q = this.next();
        quals.unshift(q === 'r' ? 'restrict' : q === 'V' ? 'volatile' : 'const');
      }
      result = { kind: 'cv', qualifiers: ` ${quals.join(' ')}`, inner: this.type() };
    } else if (c === 'P' || c === 'R' || c === 'O') {
      this.pos++;
      result = reference(c === 'P' ? '*' : c === 'R' ? '&' : '&&', this.type());
    } else if (c === 'D' && this.peek(1) === 'p') {
      // A pack expansion: the type once per element of the pack it names, `Args&&...` as `int&, char const*&`.
      this.pos += 2;
      const pattern = this.type();
      const pack = findPack(pattern);
      if (pack === undefined) throw new Unsupported();
      result = { kind: 'pack', items: pack.map((_, i) => packElement(pattern, i)) };
    } else if (c === 'M') {
      this.pos++;
      const owner = printType(this.type());
      result = { kind: 'member', owner, inner: this.type() };
    } else if (c === 'F') {
      result = this.functionType(false);
    } else if (c === 'D' && this.peek(1) === 'o' && this.peek(2) === 'F') {
      // A noexcept function type, one substitution candidate with its F: `bool (*)(char) noexcept`.
      this.pos += 2;
      result = this.functionType(true);
    } else if (c === 'A') {
      this.pos++;
      const size = isDigit(this.peek()) ? String(this.number()) : '';
      this.expect('_');
      result = { kind: 'array', size, inner: this.type() };
    } else if (c === 'T') {
      result = this.templateParam();
      if (this.peek() === 'I') {
        this.subs.push(result);
        result = named(this.withOwnArgs(printType(result)));
      }
    } else if (c === 'S' && !(this.peek(1) === 't')) {
      const sub = this.substitution();
      if (this.peek() !== 'I') return sub.type; // a plain substitution is not a new candidate
      result = named(this.withOwnArgs(sub.text));
    } else if (c === 'N' || isDigit(c) || c === 'S' || c === 'Z') {
      const saved = this.templateArgs;
      result = named(this.name().text); // prefixes were added inside; the whole class type is added below
      this.templateArgs = saved;
    } else {
      throw new Unsupported(); // pointer-to-member, vendor types, decltype
    }
    this.subs.push(result);
    return result;
  }

  /** <nested-name> after the N. */
  private nestedName(): Name {
    let qualifiers = '';
    while (isCvQualifier(this.peek())) {
      const q = this.next();
      qualifiers += q === 'r' ? ' restrict' : q === 'V' ? ' volatile' : ' const';
    }
    if (this.peek() === 'R' || this.peek() === 'O') qualifiers += this.next() === 'R' ? ' &' : ' &&';
    let text = '';
    let last = '';
    let template = false;
    let noReturnType = false;
    for (;;) {
      const c = this.peek();
      if (c === 'E') {
        this.pos++;
        break;
      }
      let fromSubstitution = false;
      template = c === 'I';
      // A constructor template's arguments come after it: read before they reset lastWasStructor.
      const afterStructor: boolean = noReturnType;
      noReturnType = false;
      if (c === 'I') {
        if (!text) throw new Unsupported();
        text = withArgs(text, this.templateArgList());
        noReturnType = afterStructor;
      } else if (c === 'S' && this.peek(1) === 't') {
        this.pos += 2;
        last = this.unqualifiedName();
        text = text ? `${text}::${last}` : `std::${last}`;
      } else if (c === 'S') {
        ({ text, last } = this.substitution(true));
        fromSubstitution = true;
      } else if (c === 'T') {
        text = printType(this.templateParam());
        last = text;
      } else {
        last = this.unqualifiedName();
        text = text ? `${text}::${last}` : last;
        noReturnType = this.lastWasStructor;
      }
      if (!fromSubstitution && this.peek() !== 'E') this.subs.push(named(text));
    }
    return { text, last, template, noReturnType, qualifiers };
  }

  /** <name>: nested, unscoped (possibly std::), unscoped template, local, or a substitution with args. */
  name(): Name {
    const c = this.peek();
    if (c === 'N') {
      this.pos++;
      return this.nestedName();
    }
    if (c === 'Z') {
      this.pos++;
      const outer = this.encoding('print');
      this.expect('E');
      if (this.peek() === 's') {
        this.pos++;
        this.discriminator();
        return { text: `${outer}::string literal`, last: 'string literal' };
      }
      let scope = outer;
      if (this.peek() === 'd') {
        // An entity in a default argument (a lambda there): Z <encoding> E d [<number>] _ <name>.
        this.pos++;
        const index = this.peek() === '_' ? 0 : this.number() + 1;
        this.expect('_');
        scope = `${outer}::{default arg#${index + 1}}`;
      }
      const saved = this.templateArgs;
      const inner = this.name();
      this.templateArgs = saved;
      this.discriminator();
      return { ...inner, text: `${scope}::${inner.text}`, inDefaultArgument: scope !== outer };
    }
    let text: string;
    if (c === 'S' && this.peek(1) === 't') {
      this.pos += 2;
      text = `std::${this.unqualifiedName()}`;
    } else if (c === 'S') {
      this.lastWasStructor = false;
      const sub = this.substitution();
      if (this.peek() !== 'I') return sub;
      return { text: withArgs(sub.text, this.templateArgList()), last: sub.last, template: true };
    } else {
      text = this.unqualifiedName();
    }
    const noReturnType = this.lastWasStructor;
    if (this.peek() === 'I') {
      this.subs.push(named(text));
      return { text: withArgs(text, this.templateArgList()), last: lastComponent(text), template: true, noReturnType };
    }
    return { text, last: lastComponent(text) };
  }

  /** <discriminator> ::= _ <digit> | __ <number> _ ; a lone `_` is not one (a reference temporary's number). */
  private discriminator(): void {
    if (this.peek() !== '_' || !(isDigit(this.peek(1)) || this.peek(1) === '_')) return;
    this.pos++;
    if (this.peek() === '_') {
      this.pos++;
      this.number();
      this.expect('_');
    } else this.number();
  }

  /**
   * An <encoding>. perf prints no parameters at top level, so there the bare-function-type is left unread
   * ('skip'); a function in a template argument is printed by name ('read'). Nested encodings (the
   * function around a local name, a thunk's target) print their parameters and member qualifiers as
   * libiberty does without DMGL_PARAMS: `f(char const*, int&)`, `A::f() const`, no return type.
   */
  encoding(parameters: 'skip' | 'read' | 'print' | 'address'): string {
    if (this.peek() === 'T' || (this.peek() === 'G' && (this.peek(1) === 'V' || this.peek(1) === 'T' || this.peek(1) === 'R'))) {
      if (parameters === 'address') throw new Unsupported();
      return this.specialName();
    }
    const qualified = this.peek() === 'N';
    if (parameters === 'address' && !qualified && this.peek() === 'S') throw new Unsupported(); // std:: names: not covered
    const name = this.name();
    if (parameters === 'skip' && name.inDefaultArgument) return name.text + (name.qualifiers ?? '');
    if (parameters === 'skip' || this.peek() === '' || this.peek() === 'E') return parameters === 'address' ? `&${name.text}` : name.text;
    // The return type, which libiberty leaves out but where a function's address prints in full.
    const returns = name.template && !name.noReturnType ? this.type() : undefined;
    const types: Type[] = [];
    while (this.peek() !== '' && this.peek() !== 'E') types.push(this.type());
    if (parameters === 'read') return name.text;
    if (parameters === 'address') {
      // libiberty drops the parameters of a qualified, plain function's address (`&A::f`) and prints any other in
      // full, in parentheses: `&(void f<int>())`, `&(A::f() const)`.
      if (qualified && !name.template && !name.qualifiers) return `&${name.text}`;
      const declaration = `${name.text}(${printList(types)})${name.qualifiers ?? ''}`;
      if (returns === undefined) return `&(${declaration})`;
      // The declaration goes where the return type puts its declarator: `void (*f<int>())(int)`, else after a space.
      const marker = '\u0000';
      const withMarker = printType(returns, marker);
      return `&(${withMarker.endsWith(marker) ? `${printType(returns)} ${declaration}` : withMarker.replace(marker, declaration)})`;
    }
    return `${name.text}(${printList(types)})${name.qualifiers ?? ''}`;
  }

  /** <call-offset>: h <offset> _ or v <offset> _ <virtual offset> _; not printed. */
  private callOffset(): void {
    const kind = this.next();
    if (kind !== 'h' && kind !== 'v') throw new Unsupported();
    this.number();
    this.expect('_');
    if (kind === 'v') {
      this.number();
      this.expect('_');
    }
  }

  private specialName(): string {
    const code = this.s.slice(this.pos, this.pos + 2);
    this.pos += 2;
    switch (code) {
      case 'Th':
        this.pos--;
        this.callOffset();
        return `non-virtual thunk to ${this.encoding('print')}`;
      case 'Tv':
        this.pos--;
        this.callOffset();
        return `virtual thunk to ${this.encoding('print')}`;
      case 'Tc':
        this.callOffset();
        this.callOffset();
        return `covariant return thunk to ${this.encoding('print')}`;
      case 'TC': {
        const derived = printType(this.type());
        if (this.number() < 0) throw new Unsupported();
        this.expect('_');
        return `construction vtable for ${printType(this.type())}-in-${derived}`;
      }
      case 'TH':
        return `TLS init function for ${this.name().text}`;
      case 'TW':
        return `TLS wrapper function for ${this.name().text}`;
      case 'TV':
        return `vtable for ${printType(this.type())}`;
      case 'TT':
        return `VTT for ${printType(this.type())}`;
      case 'TI':
        return `typeinfo for ${printType(this.type())}`;
      case 'TS':
        return `typeinfo name for ${printType(this.type())}`;
      case 'GT': {
        // Transactional-memory clones (libstdc++'s exceptions have them): the target printed like a thunk's.
        const kind = this.next();
        if (kind !== 't' && kind !== 'n') throw new Unsupported();
        return `${kind === 't' ? 'transaction clone' : 'non-transaction clone'} for ${this.encoding('print')}`;
      }
      case 'GR': {
        // GR <name> [<seq-id>] _ : only the first temporary (`_`), whose number libiberty prints as #0.
        const name = this.name().text;
        this.expect('_');
        if (this.peek() !== '') throw new Unsupported();
        return `reference temporary #0 for ${name}`;
      }
      case 'GV':
        return `guard variable for ${this.name().text}`;
      default:
        throw new Unsupported();
    }
  }
}

function lastComponent(text: string): string {
  let depth = 0;
  for (let i = text.length - 1; i > 0; i--) {
    const ch = text[i];
    if (ch === '>') depth++;
    else if (ch === '<') depth--;
    else if (depth === 0 && ch === ':' && text[i - 1] === ':') return text.slice(i + 1);
  }
  return text;
}

/** `operator<` followed by `<int>` needs a space, as libiberty prints it. */
function withArgs(name: string, args: string): string {
  return name.endsWith('<') ? `${name} ${args}` : name + args;
}

/**
 * Demangled name of an Itanium-mangled symbol without parameters (`ns::Class::method`, `ns::fn<int>`),
 * as `perf script` and `c++filt -p` print it. Undefined when `mangled`
 * is not a mangled C++ name or uses something this demangler does not cover. `verbose` expands the standard
 * abbreviations (`std::basic_string<char, ...>` for `std::string`) as `c++filt` does.
 */
export function demangle(mangled: string, options: { verbose?: boolean } = {}): string | undefined {
  if (!mangled.startsWith('_Z')) return undefined;
  if (options.verbose) return demangleOnce(mangled, true);
  // perf's form, remembered: the function index chooses among aliases by their demangled names (best-symbol.ts) and
  // the symbolizer then shows the chosen one demangled, so one decode asked 3,118 times for 2,717 names.
  let shown = shownNames.get(mangled);
  if (shown === undefined) {
    shown = demangleOnce(mangled, false) ?? null;
    shownNames.set(mangled, shown);
  }
  return shown ?? undefined;
}

/** demangle()'s results without verbose, null for a name it leaves mangled: as many as symbols were named. */
const shownNames = new Map<string, string | null>();

function demangleOnce(mangled: string, verbose: boolean): string | undefined {
  // A synthesized PLT name (`_ZdlPv@plt`) or a symbol version: perf demangles the part before the `@` and
  // keeps the rest (`operator delete@plt`).
  const at = mangled.indexOf('@');
  const suffix = at < 0 ? '' : mangled.slice(at);
  const symbol = at < 0 ? mangled : mangled.slice(0, at);
  // Mangled names have no dots of their own: from the first one on are GCC clone suffixes (`.constprop.0`,
  // `.isra.0`, `.cold`), which libiberty leaves out when it prints no parameters.
  const dot = symbol.indexOf('.');
  const d = new Demangler((dot < 0 ? symbol : symbol.slice(0, dot)).slice(2), verbose);
  try {
    return d.encoding('skip') + suffix;
  } catch (error) {
    // A RangeError is the call stack running out on a name nested thousands deep (`PPPP…`): left mangled, as
    // libiberty leaves names past its own recursion limit.
    if (error instanceof Unsupported || error instanceof RangeError) return undefined;
    throw error;
  }
}
