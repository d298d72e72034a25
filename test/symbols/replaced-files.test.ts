// A program rebuilt, or a library upgraded, while the process runs: the kernel keeps the old files mapped and marks
// them ` (deleted)`, and the file at their paths now is another build. Its symbols would name the old code wrongly
// (the first version of this test caught Ringside naming a v1 loop `pad_b+0x2e`, a v2 function); perf names it
// [unknown]. Ringside reads the mapped file itself through /proc: map_files as root, /proc/PID/exe as the owner.
// Referee: `nm` of a copy of the first build, kept before it was replaced (the bytes the process runs).

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NOBODY_UID, SETPRIV, parseJsonLines, prepareNobodyDir, type NobodyDir } from '../unprivileged/nobody';
import { Symbolizer } from '../../native/symbols/symbolizer';
import { SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import type { Backend } from '../../extension/session/ports';
import { rowDetails } from '../../host/wire';
import { RecordType } from '../../native/abi/uapi';
import { fixture } from './binutils';

const CLI = path.resolve(__dirname, '../../../dist/cli.js');

/** Each build's functions: v2's names are all new and lie where v1's were, so a name read from v2 is caught. */
const LIBRARY = {
  v1: `__attribute__((noinline)) long lib_spin_v1(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i; return s; }
long lib_entry(long n) { return lib_spin_v1(n); }
`,
  v2: `__attribute__((noinline)) long lib_pad_v2(long n) { volatile long s = 1; for (long i = 0; i < n; i++) s ^= i * 3; return s; }
__attribute__((noinline)) long lib_other_v2(long n) { volatile long s = 2; for (long i = 0; i < n; i++) s += i * lib_pad_v2(1); return s; }
long lib_entry(long n) { return lib_other_v2(n); }
`,
};
const PROGRAM = {
  v1: `#include <stdio.h>
long lib_entry(long n);
__attribute__((noinline)) long exe_spin_v1(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i; return s; }
int main(void) {
  for (int round = 0;; round++) {
    exe_spin_v1(2000000);
    lib_entry(2000000);
    if (round == 20) { puts("ready"); fflush(stdout); }
  }
}
`,
  v2: `#include <stdio.h>
long lib_entry(long n);
__attribute__((noinline)) long exe_pad_v2(long n) { volatile long s = 1; for (long i = 0; i < n; i++) s ^= i * 5; return s; }
__attribute__((noinline)) long exe_other_v2(long n) { volatile long s = 2; for (long i = 0; i < n; i++) s += i * exe_pad_v2(1); return s; }
int main(void) {
  for (int round = 0;; round++) {
    exe_other_v2(2000000);
    lib_entry(2000000);
    if (round == 20) { puts("ready"); fflush(stdout); }
  }
}
`,
};

/** A program recorded by perf whole (it exits), then rebuilt: v2's loop lies where v1's was. */
const RECORDED = {
  v1: `#include <stdlib.h>
__attribute__((noinline)) long spin_v1(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i; return s; }
int main(int argc, char **argv) { return (int)spin_v1(atol(argv[1])) & 1; }
`,
  v2: `#include <stdlib.h>
__attribute__((noinline)) long pad_v2(long n) { volatile long s = 1; for (long i = 0; i < n; i++) s ^= i * 3; return s; }
__attribute__((noinline)) long other_v2(long n) { volatile long s = 2; for (long i = 0; i < n; i++) s += i * pad_v2(1); return s; }
int main(int argc, char **argv) { return (int)other_v2(atol(argv[1])) & 1; }
`,
};

interface Builds {
  readonly dir: string;
  readonly program: string;
  readonly library: string;
  /** Copies of the first builds, kept before they were replaced: what the running process maps. */
  readonly keptProgram: string;
  readonly keptLibrary: string;
}

/** Builds v1 of the program and its library in `dir`, keeps copies, and writes v2's builds beside them (not yet in place). */
function build(dir: string): Builds {
  const compile = (source: string, out: string, args: string[]): void => {
    const file = `${out}.c`;
    writeFileSync(file, source);
    execFileSync('gcc', ['-O1', '-g', '-fno-omit-frame-pointer', '-o', out, file, ...args], { cwd: dir });
  };
  const library = path.join(dir, 'libspin.so');
  const program = path.join(dir, 'spin');
  compile(LIBRARY.v1, library, ['-shared', '-fPIC']);
  compile(PROGRAM.v1, program, ['-L.', '-lspin', `-Wl,-rpath,${dir}`]);
  copyFileSync(library, `${library}.kept`);
  copyFileSync(program, `${program}.kept`);
  compile(LIBRARY.v2, `${library}.v2`, ['-shared', '-fPIC']);
  compile(PROGRAM.v2, `${program}.v2`, ['-L.', '-lspin', `-Wl,-rpath,${dir}`]);
  return { dir, program, library, keptProgram: `${program}.kept`, keptLibrary: `${library}.kept` };
}

/** As a compiler or a package manager replaces a file: the new one renamed over it, the mapped one unlinked. */
function replaceBoth(builds: Builds): void {
  renameSync(`${builds.library}.v2`, builds.library);
  renameSync(`${builds.program}.v2`, builds.program);
}

/**
 * Starts `argv` (as `asUser` when given) and waits for its "ready" line, printed after 20 rounds of both loops: its code
 * and library are mapped, and a recording from its start holds samples of both (a capture stopped at once after a
 * first-line "ready" held only the loader's and the first loop's).
 */
async function startReady(argv: string[], asUser?: readonly string[]): Promise<ChildProcess> {
  const child = asUser
    ? spawn(asUser[0], [...asUser.slice(1), ...argv], { stdio: ['ignore', 'pipe', 'ignore'] })
    : spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${argv[0]} exited (${code}) before it was ready`)));
    child.stdout!.once('data', () => resolve());
  });
  return child;
}

/** The extension's session manager with the core backend alone (opening files needs no recorder). */
function coreOnly(): Backend {
  return {
    ...createCoreBackend(),
    resolveEvents: () => Promise.reject(new Error('not used here')),
    record: () => Promise.reject(new Error('not used here')),
  };
}

/** The function names `nm` lists in `file` (text symbols). */
function functionNames(file: string): Set<string> {
  const names = new Set<string>();
  for (const line of execFileSync('nm', ['--defined-only', file], { encoding: 'utf8' }).split('\n')) {
    const m = /^[0-9a-f]+ [tT] (\S+)$/.exec(line);
    if (m) names.add(m[1]);
  }
  return names;
}

/** The leaf names of the capture's samples, as `function` without its offset (null: unnamed). */
function leafFunctions(jsonl: string): (string | null)[] {
  return parseJsonLines(jsonl)
    .filter((record) => record.type === 'SAMPLE')
    .map((record) => (record.sym ? record.sym.replace(/\+0x[0-9a-f]+$/, '') : null));
}

/** The pid `capture -p` targets: the spawned program itself, or setpriv's exec of it (the same pid). */
function pidOf(child: ChildProcess): number {
  assert.ok(child.pid, 'the program has a pid');
  return child.pid;
}

function stop(child: ChildProcess | undefined): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

describe('symbols: files replaced on disk while their process runs', function () {
  this.timeout(180_000);

  it('names a rebuilt program and an upgraded library by the files the process maps (root: /proc/PID/map_files), never by the new builds', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-replaced-'));
    let child: ChildProcess | undefined;
    try {
      const builds = build(dir);
      child = await startReady([builds.program]);
      replaceBoth(builds);
      const maps = readFileSync(`/proc/${pidOf(child)}/maps`, 'utf8');
      assert.match(maps, /\/spin \(deleted\)$/m, 'the kernel marks the mapped program as unlinked');
      assert.match(maps, /\/libspin\.so \(deleted\)$/m, 'and the mapped library');
      const out = path.join(dir, 'out.jsonl');
      execFileSync(process.execPath, [CLI, 'capture', '-e', 'task-clock', '-F', '2000', '-p', String(pidOf(child)), '--duration', '1', '-o', out], {
        stdio: 'pipe',
      });
      const leaves = leafFunctions(readFileSync(out, 'utf8'));
      const old = new Set([...functionNames(builds.keptProgram), ...functionNames(builds.keptLibrary)]);
      const replacements = new Set([...functionNames(builds.program), ...functionNames(builds.library)].filter((name) => !old.has(name)));
      const named = leaves.filter((name): name is string => name !== null);
      assert.deepEqual(
        named.filter((name) => replacements.has(name)),
        [],
        'no sample is named by the builds that replaced the mapped files',
      );
      assert.ok(
        named.filter((name) => name === 'exe_spin_v1').length > 0,
        `the program's loop is named from its mapped file: ${[...new Set(named)].join(', ')}`,
      );
      assert.ok(
        named.filter((name) => name === 'lib_spin_v1').length > 0,
        `the library's loop is named from its mapped file: ${[...new Set(named)].join(', ')}`,
      );
    } finally {
      stop(child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a program launched by capture and rebuilt while it runs (its mappings in the side band, not yet marked) is named by the build it runs', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-replaced-'));
    let capture: ChildProcess | undefined;
    try {
      const builds = build(dir);
      const out = path.join(dir, 'out.jsonl');
      // The command's stdout is capture's (-o FILE): its "ready" says it runs, mapped, recorded from its first instruction.
      capture = await startReady([process.execPath, CLI, 'capture', '-e', 'task-clock', '-F', '2000', '-o', out, '--', builds.program]);
      replaceBoth(builds);
      // The snapshot is taken when capture stops: after the files were replaced.
      const exited = new Promise<number | null>((resolve) => capture!.once('exit', (code) => resolve(code)));
      capture.kill('SIGINT');
      const code = await exited;
      assert.equal(code, 130, `capture stopped by SIGINT (128 + 2), after its final snapshot: exit ${code}`);
      const named = leafFunctions(readFileSync(out, 'utf8')).filter((name): name is string => name !== null);
      const old = new Set([...functionNames(builds.keptProgram), ...functionNames(builds.keptLibrary)]);
      const replacements = new Set([...functionNames(builds.program), ...functionNames(builds.library)].filter((name) => !old.has(name)));
      assert.deepEqual(
        named.filter((name) => replacements.has(name)),
        [],
        'no sample is named by the builds that replaced the mapped files',
      );
      assert.ok(named.includes('exe_spin_v1') && named.includes('lib_spin_v1'), `named from the mapped files: ${[...new Set(named)].join(', ')}`);
    } finally {
      stop(capture);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`as uid ${NOBODY_UID}: the program is named through /proc/PID/exe; the library, which only map_files would give, is left unnamed, never misnamed`, async () => {
    let nobody: NobodyDir | undefined;
    let child: ChildProcess | undefined;
    try {
      nobody = prepareNobodyDir();
      const dir = path.join(nobody.dir, 'replaced');
      nobody.run(['mkdir', dir]);
      const builds = build(dir);
      execFileSync('chown', ['-R', `${NOBODY_UID}:${NOBODY_UID}`, dir]);
      child = await startReady([builds.program], SETPRIV);
      nobody.run(['mv', `${builds.library}.v2`, builds.library]);
      nobody.run(['mv', `${builds.program}.v2`, builds.program]);
      const capture = nobody.ringside([
        'capture',
        '-e',
        'task-clock',
        '-F',
        '2000',
        '-p',
        String(pidOf(child)),
        '--duration',
        '1',
        '-o',
        path.join(dir, 'out.jsonl'),
      ]);
      assert.equal(capture.status, 0, capture.stderr);
      const leaves = leafFunctions(readFileSync(path.join(dir, 'out.jsonl'), 'utf8'));
      const programNames = functionNames(builds.keptProgram);
      const libraryNames = functionNames(builds.keptLibrary);
      const replacements = new Set(
        [...functionNames(builds.program), ...functionNames(builds.library)].filter((name) => !programNames.has(name) && !libraryNames.has(name)),
      );
      const named = leaves.filter((name): name is string => name !== null);
      assert.deepEqual(
        named.filter((name) => replacements.has(name) || libraryNames.has(name)),
        [],
        'nothing is named by the new builds, and the library (not readable through /proc by its owner) not at all',
      );
      assert.ok(named.includes('exe_spin_v1'), `the program's loop is named through /proc/PID/exe: ${[...new Set(named)].join(', ')}`);
      assert.ok(
        leaves.some((name) => name === null),
        "the library's samples are left unnamed",
      );
      // And the user is told why, with the fix; the executable, which /proc/PID/exe gives, is not named in it.
      assert.ok(
        capture.stderr.includes(
          `ringside: ${builds.library} was replaced on disk after pid ${pidOf(child)} mapped it, and the copy it runs is readable only through /proc/${pidOf(child)}/map_files, which needs CAP_SYS_ADMIN`,
        ),
        capture.stderr,
      );
      assert.ok(!capture.stderr.includes(`${builds.program} was replaced`), capture.stderr);
    } finally {
      // setpriv execs the program: the pid is the program's, and root may kill it.
      stop(child);
      nobody?.dispose();
    }
  });

  /** v1 recorded by perf (HOME in `dir`: its own build-id cache), then replaced by v2 at the same path. */
  function recordThenRebuild(dir: string, perfArgs: readonly string[]): { program: string; data: string } {
    const program = path.join(dir, 'spin');
    writeFileSync(`${program}.c`, RECORDED.v1);
    writeFileSync(`${program}.v2.c`, RECORDED.v2);
    execFileSync('gcc', ['-O1', '-g', '-o', program, `${program}.c`]);
    execFileSync('gcc', ['-O1', '-g', '-o', `${program}.v2`, `${program}.v2.c`]);
    const data = path.join(dir, 'perf.data');
    execFileSync('perf', ['record', '-q', '-g', ...perfArgs, '-o', data, '--', program, '200000000'], { env: { ...process.env, HOME: dir }, stdio: 'pipe' });
    renameSync(`${program}.v2`, program);
    return { program, data };
  }

  /** `ip sym+off` of each sample whose IP is in `program`, as perf script prints them (-G: the sample IP, not its callchain; the file's own build-id cache). */
  function perfNames(dir: string, data: string, program: string): string[] {
    const text = execFileSync('perf', ['script', '-G', '-i', data, '-F', 'ip,sym,symoff,dso'], {
      env: { ...process.env, HOME: dir },
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    });
    return text
      .split('\n')
      .map((line) => /^\s*([0-9a-f]+) (\S+) \((.*)\)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && m[3] === program)
      .map((m) => `${BigInt(`0x${m[1]}`)} ${m[2]}`)
      .sort();
  }

  /** The same of Ringside's decode of `data` to JSON Lines. */
  function ringsideNames(dir: string, data: string, program: string): { names: string[]; stderr: string } {
    const out = path.join(dir, 'out.jsonl');
    const run = spawnSync(process.execPath, [CLI, 'decode', data, '-o', out], { env: { ...process.env, HOME: dir }, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const mapped = parseJsonLines(readFileSync(out, 'utf8')).filter(
      (record) => (record.type === 'MMAP' || record.type === 'MMAP2') && record.filename === program,
    );
    assert.ok(mapped.length > 0, `perf.data maps ${program}`);
    const inProgram = (ip: bigint): boolean => mapped.some((m) => ip >= BigInt(m.addr!) && ip < BigInt(m.addr!) + BigInt(m.len!));
    const names = parseJsonLines(readFileSync(out, 'utf8'))
      .filter((record) => record.type === 'SAMPLE' && record.ip !== undefined && inProgram(BigInt(record.ip)))
      .map((record) => `${BigInt(record.ip!)} ${record.sym ?? '[unknown]'}`)
      .sort();
    return { names, stderr: run.stderr };
  }

  it('decode of a perf.data whose program was rebuilt since: named from the recorded build perf keeps in ~/.debug, as perf script names it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-rebuilt-'));
    try {
      const { program, data } = recordThenRebuild(dir, []);
      const perf = perfNames(dir, data, program);
      assert.ok(perf.length > 100 && perf.every((line) => / spin_v1\+0x/.test(line)), `perf names the recorded build's loop: ${perf.slice(0, 3).join(', ')}`);
      const ours = ringsideNames(dir, data, program);
      assert.deepEqual(ours.names, perf);
      assert.doesNotMatch(ours.stderr, /was rebuilt or upgraded/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('decode of a perf.data whose program was rebuilt since, recorded without a build-id cache (perf record -N): unnamed as perf leaves it, and said why', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-rebuilt-'));
    try {
      const { program, data } = recordThenRebuild(dir, ['-N']);
      const perf = perfNames(dir, data, program);
      assert.ok(
        perf.length > 100 && perf.every((line) => line.endsWith(' [unknown]')),
        `perf leaves the rebuilt program's frames unnamed: ${perf.slice(0, 3).join(', ')}`,
      );
      const ours = ringsideNames(dir, data, program);
      assert.deepEqual(ours.names, perf);
      assert.match(
        ours.stderr,
        new RegExp(
          `${program.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} was rebuilt or upgraded since the recording \\(build-id [0-9a-f]+ then, [0-9a-f]+ now\\)`,
        ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Open perf.data of a program rebuilt since, with no copy of the recorded build: its frames unnamed as perf leaves them, and the capture says why', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-rebuilt-'));
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const { program, data } = recordThenRebuild(dir, ['-N']);
      const session = await manager.openPerfData(data);
      const entry = session.snapshots[0];
      assert.ok(
        entry.limitations.some((line) => line.startsWith(`${program} was rebuilt or upgraded since the recording (build-id `)),
        `the capture's limitations say so: ${JSON.stringify(entry.limitations)}`,
      );
      const leaves: string[] = [];
      const { kind } = entry.decoded.columns;
      for (let row = 0; row < entry.decoded.columns.length; row++) {
        if (kind[row] !== RecordType.SAMPLE) continue;
        const details = rowDetails(entry.decoded, row, entry.symbols);
        const leaf = details.callchain?.[0];
        if (leaf) leaves.push(leaf.symbol !== undefined ? details.symbols![leaf.symbol] : '[unknown]');
      }
      const perfLeaves = perfNames(dir, data, program).map((line) => line.slice(line.indexOf(' ') + 1));
      assert.ok(perfLeaves.length > 100);
      assert.deepEqual(
        leaves.filter((name) => /_v[12]\+/.test(name)),
        [],
        `no frame is named from either build: ${[...new Set(leaves)].slice(0, 8).join(', ')}`,
      );
    } finally {
      await manager.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a mapping marked deleted is never read from the file at its path now, and its dso says (deleted) as perf does', () => {
    // A real object at the path (the fixture), but the mapping says its file was unlinked, and no such process runs:
    // there is nothing to read it from, so the frame is unnamed rather than named from the file at the path.
    const file = fixture('sym_o2_pie');
    assert.ok(existsSync(file));
    const symbolizer = new Symbolizer();
    const pid = 2 ** 22 + 1; // above PID_MAX_LIMIT: no such process
    symbolizer.addProcessMaps(pid, `555555554000-555555556000 r-xp 00000000 fe:00 12345 ${file} (deleted)\n`);
    assert.equal(symbolizer.symbolize(pid, 0x555555555100n, false), undefined);
    assert.equal(symbolizer.dsoOf(pid, 0x555555555100n, false), `${file} (deleted)`);
    // The same mapping not marked: named from the file.
    const live = new Symbolizer();
    live.addProcessMaps(pid, `555555554000-555555556000 r-xp 00000000 fe:00 12345 ${file}\n`);
    assert.equal(live.dsoOf(pid, 0x555555555100n, false), file);
  });
});
