// TargetSymbols on real processes: predicted load bases equal what the kernel does under `setarch -R`,
// resolved variable addresses hold the values the fixture initialised (read through /proc/PID/mem),
// lines resolve to objdump's first is_stmt address, and every error is typed with useful candidates.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readSync, closeSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { openTargetSymbols, predictedLoadBase, SymbolError } from '../../native/symbols/resolve';
import { readProcMaps, mappedBase } from '../../native/sys/procmaps';
import { fixture, objdumpDecodedLine, nm, SOURCES } from './binutils';

/** Starts `argv` in the fixtures' `wait` mode and resolves once it printed "ready" (loaded, blocked on stdin). */
async function startWaiting(argv: string[], exe: string): Promise<ChildProcess> {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${argv.join(' ')} never said ready`));
    }, 10000);
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('ready\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${argv.join(' ')} exited (${code}) before it was ready`));
    });
  });
  assert.ok(mappedBase(readProcMaps(child.pid!), exe) !== undefined, `${exe} is not mapped in pid ${child.pid}`);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.stdin?.end();
  await exited;
}

function readMemory(pid: number, address: bigint, length: number): Buffer {
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const n = readSync(fd, buffer, 0, length, Number(address));
    assert.equal(n, length);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

function sourceLineOf(file: string, text: string): number {
  const lines = readFileSync(path.join(SOURCES, file), 'utf8').split('\n');
  const index = lines.findIndex((l) => l.includes(text));
  assert.ok(index >= 0, `'${text}' not in ${file}`);
  return index + 1;
}

function expectSymbolError(run: () => unknown, code: string): SymbolError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SymbolError, `expected SymbolError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected SymbolError ${code}`);
}

describe('symbols: resolve (TargetSymbols)', function () {
  this.timeout(60000);

  for (const name of ['sym_o0_pie', 'sym_o2_pie', 'sym_o0_nopie', 'sym_cpp']) {
    it(`predictedLoadBase(${name}) equals where the kernel maps it with ASLR off (setarch -R)`, async () => {
      const exe = fixture(name);
      const child = await startWaiting(['setarch', 'x86_64', '-R', exe, 'wait'], exe);
      try {
        const maps = readProcMaps(child.pid!);
        const mapped = mappedBase(maps, exe)!;
        const predicted = predictedLoadBase(exe);
        if (name.includes('nopie')) {
          assert.equal(predicted, 0n);
          assert.equal(mapped, 0x400000n); // ET_EXEC sits at its link address
        } else {
          assert.equal('0x' + predicted.toString(16), '0x' + mapped.toString(16));
          assert.equal(predicted, 0x555555554000n);
        }
      } finally {
        await stop(child);
      }
    });
  }

  for (const name of ['sym_o0_pie', 'sym_o2_nopie', 'sym_stripped', 'sym_gz']) {
    it(`${name}: resolved variables hold their initial values in a running (ASLR) process`, async () => {
      const exe = fixture(name);
      const child = await startWaiting([exe, 'wait'], exe);
      try {
        const pid = child.pid!;
        const base = mappedBase(readProcMaps(pid), exe)!;
        const symbols = openTargetSymbols(exe, base);
        const totalWrites = symbols.resolveSymbol('total_writes');
        assert.equal(totalWrites.kind, 'object');
        assert.equal(totalWrites.size, 8);
        assert.equal(readMemory(pid, totalWrites.address, 8).readBigUInt64LE(0), 1n);
        assert.equal(totalWrites.line, sourceLineOf('sym_basic.c', 'counter_t total_writes'));
        assert.equal(path.basename(totalWrites.file ?? ''), 'sym_basic.c');
        const port = symbols.resolveSymbol('port_id');
        assert.equal(port.size, 2);
        assert.equal(readMemory(pid, port.address, 2).readUInt16LE(0), 7);
        const origin = symbols.resolveSymbol('origin');
        assert.equal(origin.size, 16);
        const bytes = readMemory(pid, origin.address, 16);
        assert.deepEqual([bytes.readInt32LE(0), bytes.readInt32LE(4), bytes.readDoubleLE(8)], [1, 2, 3.0]);
        const greeting = symbols.resolveSymbol('greeting');
        const pointer = readMemory(pid, greeting.address, 8).readBigUInt64LE(0);
        assert.equal(readMemory(pid, pointer, 6).toString('latin1'), 'hello\0');
        assert.equal(symbols.resolveSymbol('samples').size, 24);
        assert.equal(readMemory(pid, symbols.resolveSymbol('samples').address, 2).readInt16LE(0), 1);
        assert.equal(symbols.resolveSymbol('matrix').size, 60);
        assert.equal(symbols.resolveSymbol('bump::calls').size, 8);
        const main = symbols.resolveSymbol('main');
        assert.equal(main.kind, 'function');
        // The function's first bytes at the resolved runtime address equal the file's bytes at its link address.
        const linkMain = nm(exe).find((s) => s.name === 'main')!;
        assert.equal(main.address - linkMain.address, name.includes('nopie') ? 0n : base);
        assert.equal(path.basename(main.file ?? ''), 'sym_basic.c');
      } finally {
        await stop(child);
      }
    });
  }

  it("strip --strip-all + debuglink: functions and variables come from the debug file's symtab and DWARF", () => {
    const exe = fixture('sym_stripped_all');
    assert.equal(
      nm(exe, ['-D']).some((s) => s.name === 'writer'),
      false,
      'writer should not be exported',
    );
    const symbols = openTargetSymbols(exe, 0x10000n);
    const reference = nm(fixture('sym_stripped_all.debug'));
    const writer = symbols.resolveSymbol('writer');
    assert.equal(writer.kind, 'function');
    assert.equal(writer.address, reference.find((s) => s.name === 'writer')!.address + 0x10000n);
    assert.equal(symbols.resolveSymbol('hits').address, reference.find((s) => s.name === 'hits')!.address + 0x10000n);
    const line = sourceLineOf('sym_basic.c', 'total_writes += (counter_t)i;');
    assert.equal(symbols.resolveLine('sym_basic.c', line).line, line);
  });

  it('C++: qualified names, class statics, and linkage names resolve to nm addresses', () => {
    const exe = fixture('sym_cpp');
    const symbols = openTargetSymbols(exe, 0x1000000n);
    const table = nm(exe);
    for (const [name, mangled, size] of [
      ['ringside::Meter::readings', '_ZN8ringside5Meter8readingsE', 8],
      ['ringside::ratios', '_ZN8ringside6ratiosE', 32],
      ['_ZN8ringside5ticksE', '_ZN8ringside5ticksE', 4],
    ] as const) {
      const r = symbols.resolveSymbol(name);
      const n = table.find((s) => s.name === mangled)!;
      assert.equal(r.address, n.address + 0x1000000n, name);
      assert.equal(r.size, size);
    }
  });

  for (const name of ['sym_o0_pie', 'sym_o2_nopie', 'sym_dwarf4']) {
    it(`${name}: resolveLine gives objdump's first is_stmt address, by basename or path suffix`, () => {
      const exe = fixture(name);
      const base = name.includes('nopie') ? 0n : 0x555555554000n;
      const symbols = openTargetSymbols(exe, base);
      const rows = objdumpDecodedLine(exe);
      const line = sourceLineOf('sym_basic.c', 'total_writes += (counter_t)i;');
      const first = rows
        .filter((r) => r.basename === 'sym_basic.c' && r.line === line && r.isStmt)
        .map((r) => r.address)
        .sort((a, b) => (a < b ? -1 : 1))[0];
      const resolved = symbols.resolveLine('sym_basic.c', line);
      assert.equal(resolved.address, first + base);
      assert.equal(resolved.line, line);
      assert.equal(resolved.file, path.join(SOURCES, 'sym_basic.c'));
      assert.equal(symbols.resolveLine('test/fixtures/sym_basic.c', line).address, resolved.address);
      const left = rows.find((r) => r.basename === 'util.c' && r.line === 101 && r.isStmt)!;
      assert.equal(symbols.resolveLine('left/util.c', 101).address, left.address + base);
    });
  }

  describe('errors', () => {
    const exe = fixture('sym_o0_pie');
    const symbols = openTargetSymbols(exe, 0n);

    it('no such symbol, with close names as candidates', () => {
      const error = expectSymbolError(() => symbols.resolveSymbol('total_write'), 'NO_SUCH_SYMBOL');
      assert.ok(error.candidates?.includes('total_writes'), error.message);
      assert.match(error.message, /did you mean .*total_writes/);
    });

    it('a line with no code names the nearest lines with code', () => {
      const blank = sourceLineOf('sym_basic.c', 'hits += amount;') + 1;
      const error = expectSymbolError(() => symbols.resolveLine('sym_basic.c', blank), 'NO_CODE_AT_LINE');
      assert.deepEqual(error.candidates, [`sym_basic.c:${blank - 1}`, `sym_basic.c:${blank + 1}`]);
      assert.match(error.message, new RegExp(`nearest lines with code: ${blank - 1} and ${blank + 1}`));
    });

    it('an ambiguous basename lists the candidate files', () => {
      const error = expectSymbolError(() => symbols.resolveLine('util.c', 101), 'AMBIGUOUS_FILE');
      assert.deepEqual(error.candidates?.map((c) => c.split('/').slice(-2).join('/')).sort(), ['left/util.c', 'right/util.c']);
    });

    it('an unknown file lists the files that have code', () => {
      const error = expectSymbolError(() => symbols.resolveLine('nothere.c', 3), 'NO_SUCH_FILE');
      assert.ok(error.candidates?.some((c) => c.endsWith('/sym_basic.c')));
    });

    it('a binary without DWARF: NO_DEBUG_INFO for lines, ELF symbols still resolve', () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'ringside-nodebug-'));
      try {
        const copy = path.join(dir, 'sym_stripped');
        writeFileSync(copy, readFileSync(fixture('sym_stripped'))); // without its .debug beside it
        const bare = openTargetSymbols(copy, 0n, { debugRoot: path.join(dir, 'none') });
        expectSymbolError(() => bare.resolveLine('sym_basic.c', 40), 'NO_DEBUG_INFO');
        const fromSymtab = bare.resolveSymbol('total_writes');
        assert.equal(fromSymtab.size, 8);
        assert.equal(fromSymtab.address, nm(copy).find((s) => s.name === 'total_writes')!.address);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('not an ELF file, or a missing one: BAD_ELF', () => {
      expectSymbolError(() => openTargetSymbols(path.join(SOURCES, 'sym_basic.c'), 0n), 'BAD_ELF');
      expectSymbolError(() => openTargetSymbols('/nonexistent/ringside-binary', 0n), 'BAD_ELF');
      expectSymbolError(() => predictedLoadBase(path.join(SOURCES, 'sym_basic.c')), 'BAD_ELF');
    });
  });
});
