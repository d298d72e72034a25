// A minimal WebAssembly binary encoder: the instructions Ringside's decode loops use, nothing else.
// Modules are assembled from their instructions in TypeScript, so there is no binary file, no
// compiler and no package behind them; the engine that runs them is the JavaScript engine's own.

export const I32 = 0x7f;
export const I64 = 0x7e;
export const F64 = 0x7c;

export function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

export function signedLeb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

export function vector(items: number[][]): number[] {
  return [...unsignedLeb(items.length), ...items.flat()];
}

function name(text: string): number[] {
  // Every name here is ASCII: one byte per character.
  const bytes = Array.from(text, (c) => c.charCodeAt(0) & 0x7f);
  return [...unsignedLeb(bytes.length), ...bytes];
}

function section(id: number, content: number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

/** A function body under construction: locals by name, instructions appended in order. */
export class Body {
  readonly code: number[] = [];
  private readonly index = new Map<string, number>();
  private readonly declared: number[] = [];

  constructor(params: readonly string[]) {
    params.forEach((param, i) => this.index.set(param, i));
  }

  local(localName: string, type: number): void {
    this.index.set(localName, this.index.size);
    this.declared.push(type);
  }

  private at(localName: string): number {
    const found = this.index.get(localName);
    if (found === undefined) throw new Error(`no local ${localName}`);
    return found;
  }

  get(localName: string): this {
    this.code.push(0x20, ...unsignedLeb(this.at(localName)));
    return this;
  }
  set(localName: string): this {
    this.code.push(0x21, ...unsignedLeb(this.at(localName)));
    return this;
  }
  i32(value: number): this {
    this.code.push(0x41, ...signedLeb(value));
    return this;
  }
  f64(value: number): this {
    const bytes = new Uint8Array(new Float64Array([value]).buffer);
    this.code.push(0x44, ...bytes);
    return this;
  }
  op(...bytes: number[]): this {
    this.code.push(...bytes);
    return this;
  }
  /** A load or store with its alignment (log2 bytes) and constant offset. */
  mem(opcode: number, align: number, offset = 0): this {
    this.code.push(opcode, align, ...unsignedLeb(offset));
    return this;
  }

  encode(): number[] {
    const groups = this.declared.map((type) => [1, type]);
    const content = [...vector(groups), ...this.code, 0x0b];
    return [...unsignedLeb(content.length), ...content];
  }
}

export const OP = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  void: 0x40,
  i32Load: 0x28,
  i64Load: 0x29,
  f64Load: 0x2b,
  i32Load16U: 0x2f,
  i32Store: 0x36,
  f64Store: 0x39,
  i32Store8: 0x3a,
  i32Store16: 0x3b,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32GtS: 0x4a,
  i32GeS: 0x4e,
  f64Eq: 0x61,
  f64Ne: 0x62,
  f64Lt: 0x63,
  f64Gt: 0x64,
  i64Const: 0x42,
  i64Ne: 0x52,
  i64GtS: 0x55,
  i64GeS: 0x59,
  i64GeU: 0x5a,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Or: 0x72,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i64Sub: 0x7d,
  i64Or: 0x84,
  i64Shl: 0x86,
  i64ExtendI32U: 0xad,
  f64Add: 0xa0,
  f64Sub: 0xa1,
  f64Mul: 0xa2,
  f64ConvertI32U: 0xb8,
  f64ConvertI64S: 0xb9,
} as const;

/** How a module declares the memory it imports as env.memory: shared ones need a maximum (any will do). */
export type ImportedMemory = 'plain' | 'shared';

/** A module of one function of type (params: i32...) → i32, importing env.memory, exporting the function as `exportName`. */
export function oneFunctionModule(exportName: string, paramCount: number, body: Body, memory: ImportedMemory): Uint8Array<ArrayBuffer> {
  const params = Array.from({ length: paramCount }, () => [I32]);
  const types = section(1, vector([[0x60, ...vector(params), ...vector([[I32]])]]));
  // Limits: 0x00 min; 0x03 min max, shared (max 65536 pages: 4 GiB, the whole 32-bit space).
  const limits = memory === 'shared' ? [0x03, ...unsignedLeb(1), ...unsignedLeb(65536)] : [0x00, ...unsignedLeb(1)];
  const imports = section(2, vector([[...name('env'), ...name('memory'), 0x02, ...limits]]));
  const functions = section(3, vector([unsignedLeb(0)]));
  const exported = section(7, vector([[...name(exportName), 0x00, ...unsignedLeb(0)]]));
  const code = section(10, vector([body.encode()]));
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...functions, ...exported, ...code]);
}

/**
 * Compiled modules by key (what they were built from), per thread, the most recently used last.
 * The decode loops are compiled with their addresses as constants, so a recording compiles a
 * module per ring geometry and sample layout on its first snapshot; the oldest go beyond
 * MODULES_KEPT (an engine keeps the instances it made).
 */
const compiled = new Map<string, WebAssembly.Module>();
const MODULES_KEPT = 64;

/** The module built by `build` for `key`: compiled once per thread while it stays among the MODULES_KEPT most recent. */
export function compiledModule(key: string, build: () => Uint8Array<ArrayBuffer>): WebAssembly.Module {
  let module = compiled.get(key);
  if (module) {
    compiled.delete(key);
  } else {
    module = new WebAssembly.Module(build());
    if (compiled.size >= MODULES_KEPT) compiled.delete(compiled.keys().next().value!);
  }
  compiled.set(key, module);
  return module;
}
