// The CLI's core flows as an ordinary user (uid 65534, no capabilities), with perf run as that same
// user as the referee. At kernel.perf_event_paranoid >= 2 such a user may record only user space of
// its own processes: perf falls back to exactly that, and so must Ringside, saying so; what it may
// not record at all (-a, tracepoints, another user's process, more locked memory than allowed) gets
// one message naming the real cause, checked here against what this host really has.

import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { perfAccessFrom, readAccessFacts } from '../../native/sys/access';
import { assertSilentBreakpoints, hostBreakpoints } from '../host/breakpoints';
import { kernelParanoid, NOBODY_UID, repoRoot, parseJsonLines, perfRecordAsNobody, perfScriptAsNobody, prepareNobodyDir, type NobodyDir } from './nobody';

/** The vDSO's function symbols (offset and size), from this process's own copy of the image, as readelf lists them. */
function vdsoFunctions(): { start: bigint; size: bigint }[] {
  const line = readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .find((entry) => entry.endsWith(' [vdso]'))!;
  const [start, end] = line
    .split(' ')[0]
    .split('-')
    .map((hex) => Number.parseInt(hex, 16));
  const image = Buffer.alloc(end - start);
  const fd = openSync('/proc/self/mem', 'r');
  try {
    readSync(fd, image, 0, image.length, start);
  } finally {
    closeSync(fd);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-vdso-'));
  try {
    writeFileSync(path.join(dir, 'vdso.so'), image);
    return execFileSync('readelf', ['-sW', path.join(dir, 'vdso.so')], { encoding: 'utf8' })
      .split('\n')
      .map((row) => row.trim().split(/\s+/))
      .filter((cols) => cols[3] === 'FUNC')
      .map((cols) => ({ start: BigInt(`0x${cols[1]}`), size: BigInt(cols[2]) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const isUserIp = (ip: string | undefined) => ip !== undefined && BigInt(ip) < 0x800000000000n;

describe('ringside capture as an ordinary user (uid 65534), perf as referee', function () {
  this.timeout(180_000);
  let nobody: NobodyDir;
  const paranoid = kernelParanoid();
  // An ordinary user may see the kernel only at paranoid <= 1 (perf_allow_kernel()).
  const userSpaceOnly = paranoid >= 2;

  before(() => {
    nobody = prepareNobodyDir();
  });
  after(() => nobody?.dispose());

  it('a write watchpoint on a global of its own program records every write, as many as perf records as that user', () => {
    const n = 1000;
    const run = nobody.ringside(['capture', '-e', 'mem:counter:w', '-o', 'w.jsonl', '--', nobody.fixture('kernel_writer'), String(n)]);
    assert.equal(run.status, 0, run.stderr);
    const hits = parseJsonLines(readFileSync(path.join(nobody.dir, 'w.jsonl'), 'utf8')).filter((r) => r.type === 'SAMPLE');
    if (userSpaceOnly) assert.match(run.stderr, new RegExp(`user space only: kernel\\.perf_event_paranoid = ${paranoid} \\(uid ${NOBODY_UID}`));
    const nm = execFileSync('nm', [nobody.fixture('kernel_writer')], { encoding: 'utf8' })
      .split('\n')
      .find((l) => / counter$/.test(l))!
      .split(' ')[0];
    perfRecordAsNobody(nobody, 'w.data', ['-e', `mem:0x${nm}/8:w`, '--', nobody.fixture('kernel_writer'), String(n)]);
    const perfHits = perfScriptAsNobody(nobody, 'w.data', 'ip,sym').filter((line) => / writer$/.test(line.trim()));
    if (!hostBreakpoints().fire) {
      assert.equal(perfHits.length, 0, 'perf as the same user records no write either');
      return assertSilentBreakpoints(run.stderr, hits.length);
    }
    assert.equal(hits.length, n);
    for (const hit of hits) assert.match(hit.sym ?? '', /^writer\+0x[0-9a-f]+$/);
    assert.equal(perfHits.length, n, 'perf as the same user records the same writes');
  });

  it('hits on a source line equal the loop count, and perf counts the same at that address', () => {
    const loops = 321;
    const source = readFileSync(path.join(nobody.dir, 'fixtures-src/ext_loops.c'), 'utf8').split('\n');
    const line = source.findIndex((text) => text.includes('EXT_WRITE_LINE')) + 1;
    const run = nobody.ringside(['capture', '-e', `mem:ext_loops.c:${line}:x`, '-o', 'l.jsonl', '--', nobody.fixture('ext_loops_nopie'), String(loops)]);
    assert.equal(run.status, 0, run.stderr);
    const hits = parseJsonLines(readFileSync(path.join(nobody.dir, 'l.jsonl'), 'utf8')).filter((r) => r.type === 'SAMPLE');
    if (!hostBreakpoints().fire) return assertSilentBreakpoints(run.stderr, hits.length);
    assert.equal(hits.length, loops);
    const ips = new Set(hits.map((hit) => hit.ip));
    assert.equal(ips.size, 1, 'one address for this line at -O0');
    const ip = [...ips][0]!;
    const where = execFileSync('addr2line', ['-e', nobody.fixture('ext_loops_nopie'), ip], { encoding: 'utf8' }).trim();
    assert.match(where, new RegExp(`ext_loops\\.c:${line}\\b`), 'binutils puts the armed address on that line');
    perfRecordAsNobody(nobody, 'l.data', ['-e', `mem:${ip}:x`, '--', nobody.fixture('ext_loops_nopie'), String(loops)]);
    assert.equal(perfScriptAsNobody(nobody, 'l.data', 'ip').length, loops);
  });

  it('task-clock samples its own program in user space, like perf as that user', () => {
    // 1 s of its own CPU time, however long the wall clock takes on a busy machine.
    const run = nobody.ringside(['capture', '-e', 'task-clock', '-F', '1000', '-o', 't.jsonl', '--', nobody.fixture('kernel_busy'), '1000', 'cpu']);
    assert.equal(run.status, 0, run.stderr);
    const records = parseJsonLines(readFileSync(path.join(nobody.dir, 't.jsonl'), 'utf8'));
    const samples = records.filter((r) => r.type === 'SAMPLE');
    // 1 s of CPU time at 1 kHz: well over 100 samples, however the CPU is shared with other work.
    assert.ok(samples.length > 100, `${samples.length} samples`);
    if (userSpaceOnly)
      assert.ok(
        samples.every((s) => isUserIp(s.ip)),
        'user space only',
      );
    perfRecordAsNobody(nobody, 't.data', ['-e', 'task-clock', '-F', '1000', '--', nobody.fixture('kernel_busy'), '1000', 'cpu']);
    const perfLines = perfScriptAsNobody(nobody, 't.data', 'ip,sym').map((line) => line.trim().split(/\s+/));
    assert.ok(perfLines.length > 100, `perf: ${perfLines.length} samples`);
    if (userSpaceOnly)
      assert.ok(
        perfLines.every(([ip]) => isUserIp(`0x${ip}`)),
        'perf fell back to user space only too',
      );
    // Every sample is named, the vDSO's clock_gettime included, except vDSO code that no vDSO symbol
    // covers: with kvm-clock the time read runs in a static helper (vread_pvclock) that has none, and
    // perf shows those samples as [unknown] too.
    const vdso = records.find((r) => r.type === 'MMAP2' && r.filename === '[vdso]');
    const unnamed = samples.filter((s) => s.sym === undefined).map((s) => BigInt(s.ip!));
    if (unnamed.length > 0) {
      assert.ok(vdso, `unnamed samples ${unnamed.map((ip) => ip.toString(16)).join(' ')} and no vDSO mapping`);
      const vdsoStart = BigInt(vdso.addr as string);
      const offsets = unnamed.map((ip) => ip - vdsoStart);
      assert.ok(
        offsets.every((offset) => offset >= 0n && offset < BigInt(vdso.len as number)),
        'only vDSO samples are unnamed',
      );
      const covering = vdsoFunctions().filter(({ start, size }) => offsets.some((offset) => offset >= start && offset < start + size));
      assert.deepEqual(covering, [], 'a vDSO symbol covers an unnamed sample');
      assert.ok(
        perfLines.some(([, sym]) => sym === '[unknown]'),
        'perf cannot name that vDSO code either',
      );
    }
    const hottest = (names: string[]) =>
      [...names.reduce((counts, name) => counts.set(name, (counts.get(name) ?? 0) + 1), new Map<string, number>())].sort((a, b) => b[1] - a[1])[0][0];
    assert.equal(hottest(samples.map((s) => s.sym?.replace(/\+0x[0-9a-f]+$/, '') ?? '[unknown]')), hottest(perfLines.map(([, sym]) => sym)));
  });

  it('software events: page-faults of its own program, close to what perf counts as that user', () => {
    const run = nobody.ringside(['capture', '-e', 'page-faults', '-c', '1', '-o', 'pf.jsonl', '--', nobody.fixture('kernel_writer'), '10']);
    assert.equal(run.status, 0, run.stderr);
    const ours = parseJsonLines(readFileSync(path.join(nobody.dir, 'pf.jsonl'), 'utf8')).filter((r) => r.type === 'SAMPLE').length;
    perfRecordAsNobody(nobody, 'pf.data', ['-e', 'page-faults', '-c', '1', '--', nobody.fixture('kernel_writer'), '10']);
    const perfs = perfScriptAsNobody(nobody, 'pf.data', 'ip').length;
    // The same static binary faults in the same pages; the dynamic loader's layout (ASLR for perf,
    // none for Ringside) moves a few faults either way.
    assert.ok(ours > 10 && perfs > 10, `ringside ${ours}, perf ${perfs}`);
    assert.ok(Math.abs(ours - perfs) <= Math.max(5, perfs * 0.2), `ringside ${ours} vs perf ${perfs}`);
  });

  it('writes a perf.data that perf script reads as that user, with every watchpoint hit (every page fault where breakpoints are silent)', () => {
    if (!hostBreakpoints().fire) {
      // The export flow itself, with an event this host delivers: perf script reads as many samples as Ringside decodes.
      const run = nobody.ringside(['capture', '-e', 'page-faults', '-c', '1', '-o', 'export.data', '--', nobody.fixture('kernel_writer'), '10']);
      assert.equal(run.status, 0, run.stderr);
      const decoded = nobody.ringside(['decode', 'export.data', '-o', 'export.jsonl']);
      assert.equal(decoded.status, 0, decoded.stderr);
      const ours = parseJsonLines(readFileSync(path.join(nobody.dir, 'export.jsonl'), 'utf8')).filter((r) => r.type === 'SAMPLE').length;
      assert.ok(ours > 10, `${ours} page faults`);
      assert.equal(perfScriptAsNobody(nobody, 'export.data', 'comm,ip').length, ours);
      return;
    }
    const n = 250;
    const run = nobody.ringside(['capture', '-e', 'mem:counter:w', '-o', 'export.data', '--', nobody.fixture('kernel_writer'), String(n)]);
    assert.equal(run.status, 0, run.stderr);
    const lines = perfScriptAsNobody(nobody, 'export.data', 'comm,ip,sym');
    assert.equal(lines.filter((line) => /kernel_writer .* writer\+?/.test(line) || / writer$/.test(line.trim())).length, n, lines.slice(0, 5).join('\n'));
  });

  it('the offline timeline page carries what the recording could not see', () => {
    const run = nobody.ringside(['capture', '-q', '-e', 'mem:counter:w', '-o', 'page.html', '--', nobody.fixture('kernel_writer'), '20']);
    assert.equal(run.status, 0, run.stderr);
    const page = readFileSync(path.join(nobody.dir, 'page.html'), 'utf8');
    if (userSpaceOnly) assert.match(page, /user space only: kernel\.perf_event_paranoid = \d+ \(uid 65534/);
    else assert.doesNotMatch(page, /user space only/);
  });

  it('-a and tracepoints get one true message naming the sysctl value or the tracefs permission, and the fix', () => {
    const access = perfAccessFrom({ ...readAccessFacts(), euid: NOBODY_UID, effectiveCaps: 0n });
    const cpuWide = nobody.ringside(['capture', '-a', '--duration', '0.2', '-o', 'a.jsonl']);
    if (access.mayRecordCpuWide) {
      assert.equal(cpuWide.status, 0, cpuWide.stderr);
    } else {
      assert.equal(cpuWide.status, 1);
      assert.match(
        cpuWide.stderr,
        new RegExp(
          `^ringside: -a records every process on every CPU, which needs kernel\\.perf_event_paranoid <= 0 or CAP_PERFMON, but uid ${NOBODY_UID} .*kernel\\.perf_event_paranoid = ${paranoid}; run \`sudo sysctl kernel\\.perf_event_paranoid=0\``,
        ),
      );
    }
    const tracepoint = nobody.ringside(['capture', '-a', '-e', 'syscalls:sys_enter_getppid', '--duration', '0.2', '-o', 'tp.jsonl']);
    assert.equal(tracepoint.status, 1, 'CPU-wide raw tracepoint data needs paranoid -1 or CAP_PERFMON');
    const tracefsReadable = nobody.run(['test', '-r', `${access.tracefs.path}/events`, '-a', '-x', `${access.tracefs.path}/events`]).status === 0;
    if (!tracefsReadable) {
      assert.match(
        tracepoint.stderr,
        new RegExp(
          `tracefs is mounted at ${access.tracefs.path} but uid ${NOBODY_UID} \\(nobody\\) may not read it \\(mode 0*${execFileSync('stat', ['-c', '%a', access.tracefs.path], { encoding: 'utf8' }).trim()} `,
        ),
      );
      assert.match(tracepoint.stderr, new RegExp(`sudo mount -o remount,gid=${NOBODY_UID},mode=750 ${access.tracefs.path}`));
      assert.doesNotMatch(tracepoint.stderr, /not mounted/);
    } else {
      assert.match(
        tracepoint.stderr,
        new RegExp(`tracepoint syscalls:sys_enter_getppid .*needs kernel\\.perf_event_paranoid <= -1 or CAP_PERFMON.*= ${paranoid}`),
      );
    }
  });

  it('line: and uprobe: are refused as the kernel refuses them (EACCES without CAP_PERFMON), with the fix, and mem:FILE:LINE:x where breakpoints fire', () => {
    const line =
      readFileSync(path.join(repoRoot, 'test/fixtures/inline_sites.c'), 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('/* INLINE_LINE */')) + 1;
    const refusal =
      `the kernel allows uprobes only to a process with CAP_PERFMON \\(or CAP_SYS_ADMIN\\), at every kernel\\.perf_event_paranoid, ` +
      `and uid ${NOBODY_UID} \\(nobody\\) has neither \\(perf_event_open answers EACCES\\); give CAP_PERFMON to a copy of node used only for Ringside`;
    const lineRun = nobody.ringside(['capture', '-e', `line:inline_sites.c:${line}`, '-o', 'line.jsonl', '--', nobody.fixture('inline_sites'), '3', '5']);
    assert.equal(lineRun.status, 1, lineRun.stderr);
    assert.match(lineRun.stderr, new RegExp(`^ringside: line:inline_sites\\.c:${line} is a uprobe, and ${refusal}.*setcap cap_perfmon`, 'm'));
    const suggestion = `or count the line with a hardware breakpoint, which works as you are: -e mem:inline_sites.c:${line}:x`;
    if (hostBreakpoints().fire) assert.ok(lineRun.stderr.includes(suggestion), lineRun.stderr);
    else assert.ok(!lineRun.stderr.includes(suggestion), 'no breakpoint is suggested where breakpoints are silent');
    const libRun = nobody.ringside(['capture', '-e', 'uprobe:/lib/x86_64-linux-gnu/libc.so.6:getppid', '-o', 'lib.jsonl', '--', '/bin/true']);
    assert.equal(libRun.status, 1, libRun.stderr);
    assert.match(libRun.stderr, new RegExp(`^ringside: uprobe:/lib/x86_64-linux-gnu/libc\\.so\\.6:getppid is a uprobe, and ${refusal}`, 'm'));
    assert.doesNotMatch(libRun.stderr, /hardware breakpoint/, 'a function is not a line: no mem:FILE:LINE to suggest');
    // Where breakpoints are silent (assumed here, as on the other kind of host), mem:FILE:LINE:x stays a breakpoint for this
    // user, and the note names the uprobe that would count the line and why it is refused.
    const silent = nobody.run(
      [process.execPath, nobody.cli, 'capture', '-e', `mem:inline_sites.c:${line}:x`, '-o', 'silent.jsonl', '--', nobody.fixture('inline_sites'), '3', '5'],
      { env: { RINGSIDE_BREAKPOINT_DELIVERY: 'silent' } },
    );
    assert.equal(silent.status, 0, silent.stderr);
    assert.match(
      silent.stderr,
      new RegExp(
        `mem:inline_sites\\.c:${line}:x: breakpoints do not fire on this machine, and uprobes, which would count this line \\(line:inline_sites\\.c:${line}\\), are refused: ${refusal}`,
      ),
    );
    // The message is the kernel's own verdict: the uprobe PMU, opened as this user, answers EACCES (and the error says why).
    nobody.withCompiledModules();
    const probe = nobody.run([
      process.execPath,
      '-e',
      `
      const { openEvent } = require('./out/native/perf/events');
      const { readPmu } = require('./out/native/specs/pmu');
      try {
        const fd = openEvent({ type: readPmu('uprobe').type, config: 0n, samplePeriod: 1n, sampleType: 0, readFormat: 0,
          flags: { disabled: true, excludeKernel: true, excludeHv: true }, config2: 0x1000n }, 0, -1, -1, undefined,
          { name: 'uprobe', uprobePath: ${JSON.stringify(nobody.fixture('inline_sites'))} });
        fd.dispose();
        console.log('opened');
      } catch (error) { console.log(error.code + ': ' + error.message); }`,
    ]);
    assert.equal(probe.status, 0, probe.stderr);
    assert.match(probe.stdout, new RegExp(`^EACCES: perf_event_open \\(uprobe\\): EACCES \\(errno 13\\): permission denied opening event uprobe: ${refusal}`));
  });

  it('log: is refused as the kernel refuses its uprobe (EACCES without CAP_PERFMON), with the fix, before the program runs', () => {
    const line =
      readFileSync(path.join(repoRoot, 'test/fixtures/logpoint_values.c'), 'utf8')
        .split('\n')
        .findIndex((text) => text.includes('// LOG-LOOP')) + 1;
    const refusal =
      `the kernel allows uprobes only to a process with CAP_PERFMON \\(or CAP_SYS_ADMIN\\), at every kernel\\.perf_event_paranoid, ` +
      `and uid ${NOBODY_UID} \\(nobody\\) has neither \\(perf_event_open answers EACCES\\); give CAP_PERFMON to a copy of node used only for Ringside`;
    const run = nobody.ringside(['capture', '-e', `log:logpoint_values.c:${line}:i,pt`, '-o', 'log.jsonl', '--', nobody.fixture('logpoint_values_O0'), '3']);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`^ringside: log:logpoint_values\\.c:${line}:i,pt is a uprobe, and ${refusal}.*setcap cap_perfmon`, 'm'));
    assert.doesNotMatch(run.stderr, /hardware breakpoint/, 'a breakpoint cannot read values: none is suggested instead');
    assert.ok(!existsSync(path.join(nobody.dir, 'log.jsonl')), 'nothing was recorded, so no output file');
  });

  it("another user's process: names its owner, not the paranoid level", async () => {
    const rootsProcess = spawn(path.join(nobody.dir, 'fixtures-bin/kernel_busy'), ['3000'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => rootsProcess.once('spawn', resolve));
      const run = nobody.ringside(['capture', '-p', String(rootsProcess.pid), '--duration', '0.2']);
      assert.equal(run.status, 1);
      assert.match(
        run.stderr,
        new RegExp(
          `process ${rootsProcess.pid} belongs to uid 0 \\(root\\), and you are uid ${NOBODY_UID} \\(nobody\\): perf may watch another user's process only with CAP_SYS_PTRACE`,
        ),
      );
    } finally {
      rootsProcess.kill('SIGKILL');
    }
  });

  it('an output it may not write is refused before the command runs, naming the directory, its owner and mode', () => {
    // A directory of root's that uid 65534 may read but not write, as a checkout's parent often is.
    const closed = mkdtempSync(path.join(tmpdir(), 'ringside-closed-'));
    chmodSync(closed, 0o755);
    const ran = path.join(nobody.dir, 'ran');
    try {
      for (const [args, message] of [
        [
          ['-o', path.join(closed, 'out.jsonl')],
          `cannot create -o ${closed}/out.jsonl: uid ${NOBODY_UID} \\(nobody\\) may not write in ${closed} \\(owner uid 0 \\(root\\), mode 0755\\)`,
        ],
        [['-o', path.join(closed, 'out.data')], `cannot create -o ${closed}/out.data: uid ${NOBODY_UID} \\(nobody\\) may not write in ${closed}`],
        [['-o', path.join(closed, 'missing', 'out.html')], `cannot create -o ${closed}/missing/out.html: directory ${closed}/missing does not exist`],
        [
          ['--snapshot-on', 'task-clock', '--snapshot-dir', path.join(closed, 'snaps')],
          `cannot create --snapshot-dir ${closed}/snaps: uid ${NOBODY_UID} \\(nobody\\) may not write in ${closed}`,
        ],
      ] as const) {
        const run = nobody.ringside(['capture', ...args, '--', '/bin/touch', ran]);
        assert.equal(run.status, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`^ringside: ${message}`, 'm'));
        assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
        assert.equal(existsSync(ran), false, 'the command never ran');
      }
    } finally {
      rmSync(closed, { recursive: true, force: true });
    }
  });

  it("a container's seccomp filter (EPERM) is told apart from the paranoid level, with the fix", () => {
    const run = nobody.run([
      nobody.fixture('seccomp_deny_perf'),
      process.execPath,
      nobody.cli,
      'capture',
      '-e',
      'task-clock',
      '-o',
      'sc.jsonl',
      '--',
      '/bin/true',
    ]);
    assert.equal(run.status, 1, run.stderr);
    assert.match(
      run.stderr,
      /^ringside: perf_event_open \(task-clock\): EPERM .*runs under a seccomp filter \(Seccomp: 2 in \/proc\/self\/status\).*--security-opt seccomp=unconfined/,
    );
    assert.doesNotMatch(run.stderr, /sysctl/);
  });

  it('rings larger than the locked-memory budget: explicit --pages is refused with the numbers, the default shrinks with a note', () => {
    const access = perfAccessFrom({ ...readAccessFacts(), euid: NOBODY_UID, effectiveCaps: 0n });
    const budget = access.lockedPagesBudget;
    assert.notEqual(budget, null, 'an ordinary user has a locked-memory budget at paranoid > -1');
    // One flight-recorder ring per CPU (gap-free doubles it) plus one side-band ring per CPU.
    let pages = 1;
    while (access.onlineCpus * (2 * (pages + 1) + 17) <= budget!) pages *= 2;
    const refused = nobody.ringside(['capture', '--pages', String(pages), '-o', 'big.jsonl', '--', '/bin/true']);
    assert.equal(refused.status, 1);
    assert.match(
      refused.stderr,
      new RegExp(
        `of locked memory, more than the ${(budget! * 4096) / 1024} KiB perf lets this user lock \\(kernel\\.perf_event_mlock_kb = ${access.perfMlockKb} KiB per CPU x ${access.onlineCpus} CPUs`,
      ),
    );
    assert.match(refused.stderr, new RegExp(`--pages ${pages / 2} fits`));
    const fits = nobody.ringside(['capture', '--pages', String(pages / 2), '-o', 'fits.jsonl', '--', '/bin/true']);
    assert.equal(fits.status, 0, fits.stderr);
    // Without RLIMIT_MEMLOCK only perf_event_mlock_kb per CPU is left: the default 64-page rings
    // shrink until they fit, and the summary says so.
    const userPages = (((access.perfMlockKb ?? 516) * 1024) / 4096) * access.onlineCpus;
    let fitted = 64;
    while (fitted > 1 && access.onlineCpus * (2 * (fitted + 1) + 17) > userPages) fitted /= 2;
    const small = nobody.run(['prlimit', '--memlock=0:0', process.execPath, nobody.cli, 'capture', '-o', 'small.jsonl', '--', '/bin/true']);
    assert.equal(small.status, 0, small.stderr);
    if (fitted < 64) assert.match(small.stderr, new RegExp(`rings are ${fitted} pages \\(asked 64\\) to fit the ${userPages * 4} KiB of locked memory`));
    else assert.doesNotMatch(small.stderr, /rings are \d+ pages/);
  });
});
