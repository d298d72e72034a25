// The WebAssembly JavaScript API as Node and browsers both provide it: the part of lib.dom.d.ts's
// `namespace WebAssembly` this code uses, copied as it stands there (see types/README.md).
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  interface Memory {
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  var Memory: {
    prototype: Memory;
    new (descriptor: MemoryDescriptor): Memory;
  };
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- as lib.dom declares it: an opaque compiled module
  interface Module {}
  var Module: {
    prototype: Module;
    new (bytes: ArrayBufferView<ArrayBuffer> | ArrayBuffer): Module;
  };
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- as lib.dom declares it: an export's signature is the module's
  type ExportValue = Function | Memory;
  type Exports = Record<string, ExportValue>;
  type ImportValue = ExportValue | number;
  type ModuleImports = Record<string, ImportValue>;
  type Imports = Record<string, ModuleImports>;
  interface Instance {
    readonly exports: Exports;
  }
  var Instance: {
    prototype: Instance;
    new (module: Module, importObject?: Imports): Instance;
  };
}
