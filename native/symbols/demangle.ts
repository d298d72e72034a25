// Itanium C++ ABI demangling of symbol *names* (no parameter lists), the way perf shows them: perf
// calls libiberty's cplus_demangle without DMGL_PARAMS, so `_ZN8ringside5Meter6recordEi` prints as
// `ringside::Meter::record` and `_ZN8ringside5twiceIiEET_S1_` as `ringside::twice<int>`. Only the top
// level loses its parameters: the function enclosing a local name, and the target of a thunk, keep
// theirs (`spin(long, int)::{lambda(long)#1}::operator()`, `non-virtual thunk to A::f(long)`), with
// return types dropped. Covers nested and unscoped names, templates (types, literals, template params),
// substitutions, std abbreviations, constructors/destructors, operators, ABI tags, local names, thunks
// and special names (vtable for ...); clone suffixes are dropped as libiberty does without DMGL_PARAMS.
// Function types print as perf prints them (`void (*)(uv_fs_s*)`). Anything outside that (transaction clones,
// pointers to members, expressions in template arguments)
// returns undefined so callers keep the mangled name. Pure.

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
}

class Demangler {
  private pos = 0;
  private readonly subs: string[] = [];
  private templateArgs: string[] = [];
  /** Set by unqualifiedName: the component just read was a constructor, destructor or conversion operator. */
  private lastWasStructor = false;
  /** Printed types that are arrays: a pointer or reference to one needs libiberty's `int (*) [4]` form. */
  private readonly arrayTypes = new Set<string>();
  /** Function types met so far, by their printed form: a pointer to one prints as `ret (*)(params)`. */
  private readonly functionTypes = new Map<string, { readonly returns: string; readonly params: string }>();

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
    return id.startsWith('_GLOBAL_') && (id[8] === '.' || id[8] === '_' || id[8] === '$') && id[9] === 'N' ? '(anonymous namespace)' : id;
  }

  private abiTags(text: string): string {
    while (this.peek() === 'B') {
      this.pos++;
      text += `[abi:${this.sourceName()}]`;
    }
    return text;
  }

  /** <unqualified-name>; `enclosing` is the class name, for constructors and destructors. */
  private unqualifiedName(enclosing: string): string {
    this.lastWasStructor = false;
    const c = this.peek();
    if (c === 'L') {
      this.pos++;
      return this.unqualifiedName(enclosing);
    } // internal linkage marker (GCC)
    if (isDigit(c)) return this.abiTags(this.sourceName());
    if (c === 'C' && ((this.peek(1) >= '1' && this.peek(1) <= '5') || this.peek(1) === 'I')) {
      this.pos += 2;
      if (this.s[this.pos - 1] === 'I') {
        this.next();
        this.type();
      }
      this.lastWasStructor = true;
      return this.abiTags(stripTemplateArgs(enclosing));
    }
    if (c === 'D' && this.peek(1) >= '0' && this.peek(1) <= '5') {
      this.pos += 2;
      this.lastWasStructor = true;
      return this.abiTags('~' + stripTemplateArgs(enclosing));
    }
    if (c === 'U' && this.peek(1) === 't') {
      this.pos += 2;
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return `{unnamed type#${n}}`;
    }
    if (c === 'U' && this.peek(1) === 'l') {
      this.pos += 2;
      const params: string[] = [];
      while (this.peek() !== 'E') params.push(this.type());
      this.pos++;
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return `{lambda(${params.length === 1 && params[0] === 'void' ? '' : params.join(', ')})#${n}}`;
    }
    if (c >= 'a' && c <= 'z') {
      const code = this.s.slice(this.pos, this.pos + 2);
      this.pos += 2;
      if (code === 'cv') {
        const target = this.type();
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

  private templateArgList(): string {
    this.expect('I');
    const args: string[] = [];
    while (this.peek() !== 'E') args.push(this.templateArg());
    this.pos++;
    this.templateArgs = args;
    // An empty pack (`JE`) prints nothing, not an empty slot between commas: `Run<Phase>`, as libiberty prints it.
    const joined = args.filter((arg) => arg !== '').join(', ');
    // libiberty's space between `> >` follows the last thing it printed, which after an empty pack is not a `>`.
    return `<${joined}${args.join(', ').endsWith('>') ? ' ' : ''}>`;
  }

  private templateArg(): string {
    const c = this.peek();
    if (c === 'L') return this.exprPrimary();
    if (c === 'X') throw new Unsupported(); // template argument expressions
    if (c === 'J') {
      this.pos++;
      const pack: string[] = [];
      while (this.peek() !== 'E') pack.push(this.templateArg());
      this.pos++;
      return pack.join(', ');
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
    const type = this.type();
    const value = this.number();
    this.expect('E');
    if (type === 'bool') return value === 0 ? 'false' : 'true';
    if (type === 'int') return String(value);
    if (type === 'unsigned int') return `${value}u`;
    if (type === 'long') return `${value}l`;
    if (type === 'unsigned long') return `${value}ul`;
    return `(${type})${value}`;
  }

  /** `prefix`: used as the qualifier of a nested name, where libiberty expands `Ss` before a constructor/destructor. */
  private substitution(prefix = false): { text: string; last: string } {
    this.expect('S');
    const c = this.peek();
    const std = STD_ABBREVIATION[c];
    if (std) {
      this.pos++;
      const full = this.verbose || (prefix && (this.peek() === 'C' || this.peek() === 'D'));
      return { text: full ? std[1] : std[0], last: std[2] };
    }
    const index = this.seqId();
    const sub = this.subs[index];
    if (sub === undefined) throw new Unsupported();
    return { text: sub, last: lastComponent(sub) };
  }

  private templateParam(): string {
    this.expect('T');
    const index = this.seqId();
    const arg = this.templateArgs[index];
    if (arg === undefined) throw new Unsupported();
    return arg;
  }

  type(): string {
    const c = this.peek();
    if (BUILTIN[c]) {
      this.pos++;
      return BUILTIN[c];
    }
    if (c === 'D' && BUILTIN_D[this.peek(1)]) {
      this.pos += 2;
      return BUILTIN_D[this.s[this.pos - 1]];
    }
    if (c === 'u') {
      this.pos++;
      const t = this.sourceName();
      this.subs.push(t);
      return t;
    }
    let result: string;
    if (c === 'r' || c === 'V' || c === 'K') {
      const quals: string[] = [];
      while (isCvQualifier(this.peek())) {
        const q = this.next();
        quals.unshift(q === 'r' ? 'restrict' : q === 'V' ? 'volatile' : 'const');
      }
      result = `${this.type()} ${quals.join(' ')}`;
    } else if (c === 'P' || c === 'R' || c === 'O') {
      this.pos++;
      const inner = this.type();
      if (this.arrayTypes.has(inner)) throw new Unsupported(); // `int (*) [4]`: not covered
      const sigil = c === 'P' ? '*' : c === 'R' ? '&' : '&&';
      const fn = this.functionTypes.get(inner);
      // A pointer (or reference) to a function type: `void (*)(uv_fs_s*)`.
      result = fn ? `${fn.returns} (${sigil})(${fn.params})` : inner + sigil;
    } else if (c === 'F') {
      // <function-type> ::= F [Y] <return type> <parameter types>+ [<ref-qualifier>] E
      this.pos++;
      if (this.peek() === 'Y') this.pos++;
      const returns = this.type();
      const params: string[] = [];
      while (this.peek() !== 'E') {
        if ((this.peek() === 'R' || this.peek() === 'O') && this.peek(1) === 'E') {
          this.pos++;
          continue;
        }
        params.push(this.type());
      }
      this.pos++;
      const list = params.length === 1 && params[0] === 'void' ? '' : params.join(', ');
      result = `${returns} (${list})`;
      this.functionTypes.set(result, { returns, params: list });
    } else if (c === 'A') {
      this.pos++;
      const size = isDigit(this.peek()) ? String(this.number()) : '';
      this.expect('_');
      result = `${this.type()} [${size}]`;
      this.arrayTypes.add(result);
    } else if (c === 'T') {
      result = this.templateParam();
      if (this.peek() === 'I') {
        this.subs.push(result);
        result = withArgs(result, this.templateArgList());
      }
    } else if (c === 'S' && !(this.peek(1) === 't')) {
      result = this.substitution().text;
      if (this.peek() !== 'I') return result; // a plain substitution is not a new candidate
      result = withArgs(result, this.templateArgList());
    } else if (c === 'N' || isDigit(c) || c === 'S' || c === 'Z') {
      result = this.name().text; // prefixes were added inside; the whole class type is added below
    } else {
      throw new Unsupported(); // function types, pointer-to-member, vendor types, decltype
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
      noReturnType = false;
      if (c === 'I') {
        if (!text) throw new Unsupported();
        text = withArgs(text, this.templateArgList());
        noReturnType = this.lastWasStructor;
      } else if (c === 'S' && this.peek(1) === 't') {
        this.pos += 2;
        last = this.unqualifiedName(last);
        text = text ? `${text}::${last}` : `std::${last}`;
      } else if (c === 'S') {
        ({ text, last } = this.substitution(true));
        fromSubstitution = true;
      } else if (c === 'T') {
        text = this.templateParam();
        last = text;
      } else {
        last = this.unqualifiedName(last);
        text = text ? `${text}::${last}` : last;
        noReturnType = this.lastWasStructor;
      }
      if (!fromSubstitution && this.peek() !== 'E') this.subs.push(text);
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
      const saved = this.templateArgs;
      const inner = this.name();
      this.templateArgs = saved;
      this.discriminator();
      return { ...inner, text: `${outer}::${inner.text}` };
    }
    let text: string;
    if (c === 'S' && this.peek(1) === 't') {
      this.pos += 2;
      text = `std::${this.unqualifiedName('')}`;
    } else if (c === 'S') {
      this.lastWasStructor = false;
      const sub = this.substitution();
      if (this.peek() !== 'I') return sub;
      return { text: withArgs(sub.text, this.templateArgList()), last: sub.last, template: true };
    } else {
      text = this.unqualifiedName('');
    }
    const noReturnType = this.lastWasStructor;
    if (this.peek() === 'I') {
      this.subs.push(text);
      return { text: withArgs(text, this.templateArgList()), last: lastComponent(text), template: true, noReturnType };
    }
    return { text, last: lastComponent(text) };
  }

  private discriminator(): void {
    if (this.peek() !== '_') return;
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
  encoding(parameters: 'skip' | 'read' | 'print'): string {
    if (this.peek() === 'T' || (this.peek() === 'G' && this.peek(1) === 'V')) return this.specialName();
    const name = this.name();
    if (parameters === 'skip' || this.peek() === '' || this.peek() === 'E') return name.text;
    if (name.template && !name.noReturnType) this.type(); // the return type, which libiberty leaves out here
    const types: string[] = [];
    while (this.peek() !== '' && this.peek() !== 'E') types.push(this.type());
    if (parameters === 'read') return name.text;
    const list = types.length === 1 && types[0] === 'void' ? '' : types.join(', ');
    return `${name.text}(${list})${name.qualifiers ?? ''}`;
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
      case 'TH':
        return `TLS init function for ${this.name().text}`;
      case 'TW':
        return `TLS wrapper function for ${this.name().text}`;
      case 'TV':
        return `vtable for ${this.type()}`;
      case 'TT':
        return `VTT for ${this.type()}`;
      case 'TI':
        return `typeinfo for ${this.type()}`;
      case 'TS':
        return `typeinfo name for ${this.type()}`;
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

/** A class name as its constructor is named: no template arguments, no ABI tags. */
function stripTemplateArgs(name: string): string {
  const i = name.indexOf('<');
  return (i < 0 ? name : name.slice(0, i)).replace(/\[abi:[^\]]*\]/g, '');
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
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}
