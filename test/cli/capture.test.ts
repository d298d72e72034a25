// The CLI contract on the real kernel: `ringside capture` launched, attached and per-CPU, compared
// with what the installed perf records for the same workloads. Runs the bundled dist/cli.js the way a
// user does (npm test builds it first).
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertSilentBreakpoints, hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from '../host/breakpoints';
import { underPerfProbes } from '../host/perf-probes';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const fixture = (name: string) => path.join(root, 'fixtures-bin', name);

interface JsonRecord {
  type: string;
  event?: string;
  time?: number | bigint;
  pid?: number;
  tid?: number;
  cpu?: number;
  ip?: string;
  sym?: string;
  addr?: string;
  fields?: Record<string, unknown>;
  lost?: number;
}

/** Parses JSON Lines keeping `time` exact (integers above 2^53 must not be rounded). */
function parseLines(text: string): JsonRecord[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const exact = line.replace(/"time":(\d+)/, '"time":"$1"');
      const record = JSON.parse(exact) as JsonRecord & { time?: string };
      return { ...record, time: record.time === undefined ? undefined : BigInt(record.time) };
    });
}

function ringside(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    input: options.input ?? '',
    env: { ...process.env, ...options.env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Whether process `pid` has a handler for `signal` (/proc/PID/status SigCgt): Ringside's capture installs its
 * SIGUSR2 handler once it records. */
function catchesSignal(pid: number, signal: 'SIGUSR2'): boolean {
  const bit = { SIGUSR2: 12 }[signal] - 1;
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${mask}`) & (1n << BigInt(bit))) !== 0n;
}

/**
 * `capture --pages 256 ARGS -p PID` of `threads_late signal THREADS ITERATIONS`, which starts its threads on SIGUSR1: sent once the
 * capture records (it then catches SIGUSR2), however long its start takes on a busy machine. `capture` settles when
 * the capture exits (at the target's exit).
 */
async function attachToLateThreads(args: string[], threads: number, iterations: number) {
  const target = spawn(fixture('threads_late'), ['signal', String(threads), String(iterations)], { stdio: 'ignore' });
  const targetExited = new Promise<number | null>((resolve) => target.once('exit', resolve));
  // Rings of 1 MiB: every record of every thread fits even when all threads run on one CPU (the default 256 KiB kept
  // about 3,300 of 4,000 getpid records then, and the oldest thread's were overwritten).
  const child = spawn(process.execPath, [cli, 'capture', '--pages', '256', ...args, '-p', String(target.pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const capture = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  try {
    for (const deadline = Date.now() + 60000; !catchesSignal(child.pid!, 'SIGUSR2'); await new Promise((resolve) => setTimeout(resolve, 20))) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `the capture never started recording: ${stderr}`);
    }
    target.kill('SIGUSR1');
  } catch (error) {
    target.kill('SIGKILL');
    throw error;
  }
  return { capture, target, targetExited };
}

/** `perf record PERF_ARGS -- ringside RINGSIDE_ARGS`: perf recording the very run Ringside records. */
function perfRecording(perfArgs: string[], args: string[]) {
  const result = spawnSync('perf', ['record', '-q', ...perfArgs, '--', process.execPath, cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, input: '' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const samples = (records: JsonRecord[], event?: string) => records.filter((r) => r.type === 'SAMPLE' && (event === undefined || r.event === event));
const isUserIp = (ip: string | undefined) => ip !== undefined && BigInt(ip) < 0x800000000000n;

function perfScriptCount(args: string[], event: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'ringside-perf-'));
  try {
    const data = path.join(dir, 'perf.data');
    execFileSync('perf', ['record', '-q', '-o', data, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const script = execFileSync('perf', ['script', '-i', data, '-F', 'event,ip'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return script.split('\n').filter((line) => line.includes(event)).length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('ringside capture (real kernel)', function () {
  this.timeout(120000);

  before(() => {
    assert.ok(existsSync(cli), 'dist/cli.js is built by npm test (npm run build)');
    assert.ok(existsSync(fixture('kernel_writer')), 'fixtures are built by test/setup/prepare.mjs');
  });

  it('a write watchpoint on a launched command sees every write, from the writing function, in time order, as perf does on the same run', () => {
    const n = 1000;
    const counter = execFileSync('nm', [fixture('kernel_writer')], { encoding: 'utf8' })
      .split('\n')
      .find((l) => / counter$/.test(l))!
      .split(' ')[0];
    // perf records the same run: its watchpoint, inherited from the capture down to the launched command, sees the
    // same writes as Ringside's (on a busy VM a separate run of perf was once seen counting n + 1).
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-perf-'));
    let run: { code: number | null; stdout: string; stderr: string };
    let perfHits: string[];
    try {
      run = perfRecording(
        ['-o', `${dir}/p.data`, '-e', `mem:0x${counter}/8:w:u`],
        ['capture', '-e', 'mem:counter:w', '--', fixture('kernel_writer'), String(n)],
      );
      perfHits = execFileSync('perf', ['script', '-i', `${dir}/p.data`, '-F', 'comm,ip,sym'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 1 << 28,
      })
        .split('\n')
        .filter((line) => /^\s*kernel_writer .* writer$/.test(line.trimEnd()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const { code, stdout, stderr } = run;
    assert.equal(code, 0, stderr);
    const records = parseLines(stdout);
    const hits = samples(records, 'mem:counter:w').filter((r) => isUserIp(r.ip));
    if (!hostBreakpoints().fire) return assertSilentBreakpoints(stderr, hits.length);
    assert.equal(hits.length, perfHits.length, 'every write perf saw in the same run');
    assert.ok(hits.length >= n, `${hits.length} hits of ${n} writes`);
    const comm = records.find((r) => r.type === 'COMM' && (r as { comm?: string }).comm === 'kernel_writer');
    assert.ok(comm, 'side-band COMM of the launched command');
    for (const hit of hits) {
      assert.equal(hit.tid, comm!.tid);
      assert.match(hit.sym ?? '', /^writer\+0x[0-9a-f]+$/);
      assert.equal(hit.addr, '0x' + counter.replace(/^0+/, ''));
    }
    for (let i = 1; i < records.length; i++) assert.ok((records[i].time as bigint) >= (records[i - 1].time as bigint), 'oldest first');
  });

  // The other kind of host's verdict, assumed: the CLI says breakpoints are silent exactly when the verdict is silent
  // (the hardware is unchanged, so hits are compared only with the host's own verdict above).
  it('says up front that watchpoints record nothing exactly when the verdict is silent, on either kind of host', () => {
    for (const verdict of [otherHostVerdict(), hostBreakpoints().fire ? 'fires' : 'silent']) {
      const { code, stderr } = ringside(['capture', '-e', 'mem:counter:w', '--', fixture('kernel_writer'), '10'], {
        env: { RINGSIDE_BREAKPOINT_DELIVERY: verdict },
      });
      assert.equal(code, 0, stderr);
      assert.equal(SILENT_BREAKPOINTS.test(stderr), verdict === 'silent', `${verdict}: ${stderr}`);
    }
  });

  it('a small flight recorder keeps only the newest writes, contiguous, ending with the last one', () => {
    const n = 200000;
    const { code, stdout, stderr } = ringside(['capture', '-e', 'mem:counter:w', '--pages', '1', '--', fixture('kernel_writer'), String(n)]);
    assert.equal(code, 0, stderr);
    const hits = samples(parseLines(stdout)).filter((r) => isUserIp(r.ip));
    if (!hostBreakpoints().fire) return assertSilentBreakpoints(stderr, hits.length);
    assert.ok(hits.length > 10 && hits.length < n / 10, `kept ${hits.length} of ${n}`);
    // A launched command gets one 4 KiB ring per CPU (inherited events are per CPU); a sample is at least 40 bytes.
    const cpus = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('processor')).length;
    assert.ok(hits.length <= (cpus * 4096) / 40, `${hits.length} samples cannot fit ${cpus} one-page rings`);
    const last = hits[hits.length - 1];
    assert.match(last.sym ?? '', /^writer\+/, 'the newest record is the last write');
    assert.match(stderr, /overwritten [1-9]/, 'the summary reports overwritten bytes');
    // Contiguous within each CPU's ring (the writer may migrate, and each CPU keeps its own newest): a ring that was
    // overwritten holds as many whole samples as fit its page, every one of them printed. The samples are all of one
    // size, so every such ring holds the same number. (Not their times: how long the writer is preempted between two
    // writes depends on the machine's load.)
    const full = [...stderr.matchAll(/^\s*cpu(\d+) pid \d+ (?!sideband)\S+\s+(\d+) records\s+written [^,]+, overwritten (?!0 B)/gm)].map((match) => ({
      cpu: Number(match[1]),
      records: Number(match[2]),
    }));
    assert.ok(full.length >= 1, `a ring was overwritten:\n${stderr}`);
    for (const ring of full) assert.equal(hits.filter((hit) => hit.cpu === ring.cpu).length, ring.records, `cpu ${ring.cpu}: every record of its ring`);
    assert.equal(new Set(full.map((ring) => ring.records)).size, 1, `full rings hold the same number of samples: ${JSON.stringify(full)}`);
  });

  it('a tracepoint on a launched command counts exactly its syscalls, as perf does, with decoded fields', () => {
    const n = 777;
    const { code, stdout, stderr } = ringside(['capture', '-e', 'syscalls:sys_enter_getpid', '--', fixture('kernel_getpid'), String(n)]);
    assert.equal(code, 0, stderr);
    const hits = samples(parseLines(stdout), 'syscalls:sys_enter_getpid');
    assert.equal(hits.length, n);
    assert.equal(hits[0].fields?.__syscall_nr, 39);
    assert.equal(perfScriptCount(['-e', 'syscalls:sys_enter_getpid', '--', fixture('kernel_getpid'), String(n)], 'sys_enter_getpid'), n);
  });

  it('a tracepoint glob records what perf record opens for it, each event counting its own syscalls', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-glob-'));
    try {
      const n = 321;
      const glob = 'syscalls:sys_enter_getp*';
      const out = path.join(dir, 'glob.data');
      const run = ringside(['capture', '-e', glob, '-o', out, '--', fixture('kernel_getpid'), String(n)]);
      assert.equal(run.code, 0, run.stderr);
      // The referee: the tracepoints in the perf.data perf record writes for the same glob.
      const opened = (file: string) =>
        execFileSync('perf', ['evlist', '-i', file], { encoding: 'utf8' })
          .split('\n')
          .filter((line) => line.startsWith('syscalls:'))
          .sort();
      const perfData = path.join(dir, 'perf.data');
      execFileSync('perf', ['record', '-q', '-o', perfData, '-e', glob, '--', fixture('kernel_getpid'), String(n)], { stdio: 'ignore' });
      const perfOpened = opened(perfData);
      assert.ok(perfOpened.includes('syscalls:sys_enter_getpid') && perfOpened.length > 2, perfOpened.join(' '));
      assert.deepEqual(opened(out), perfOpened);
      const script = execFileSync('perf', ['script', '-i', out, '-F', 'event'], { encoding: 'utf8' });
      assert.equal(script.split('\n').filter((line) => line.includes('sys_enter_getpid')).length, n);
      const none = ringside(['capture', '-e', 'syscalls:sys_enter_nosuch*', '--', fixture('kernel_getpid'), '1']);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /^ringside: bad event 'syscalls:sys_enter_nosuch\*' at column 1: the glob 'syscalls:sys_enter_nosuch\*' matches no tracepoint/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('-o /dev/null decodes everything and writes nothing, like perf script > /dev/null', () => {
    const n = 555;
    const { code, stdout, stderr } = ringside(['capture', '-e', 'syscalls:sys_enter_getpid', '-o', '/dev/null', '--', fixture('kernel_getpid'), String(n)]);
    assert.equal(code, 0, stderr);
    assert.equal(stdout, '');
    // The summary counts what was decoded: every getpid plus the side-band.
    const decoded = Number(/snapshot 1 \(.*\): (\d+) records/.exec(stderr)?.[1]);
    assert.ok(decoded > n, stderr);
    assert.ok(statSync('/dev/null').isCharacterDevice(), '/dev/null is still the device');
  });

  it('every subcommand prints its own usage for --help and -h, and exits 0', () => {
    for (const command of ['events', 'capture', 'decode', 'keep', 'snapshot', 'list']) {
      for (const flag of ['--help', '-h']) {
        const { code, stdout, stderr } = ringside([command, flag]);
        assert.equal(code, 0, stderr);
        assert.match(stdout, new RegExp(`^usage: ringside ${command} `));
      }
    }
    const bad = ringside(['capture', '--frobnicate', '-a']);
    assert.match(bad.stderr, /see ringside capture --help/);
  });

  it('-p follows threads the process creates after the attach, as perf record -p does: every record of every thread', async () => {
    const threads = 4;
    const iterations = 1000;
    const perThread = (tids: number[]) => {
      const counts = new Map<number, number>();
      for (const tid of tids) counts.set(tid, (counts.get(tid) ?? 0) + 1);
      return [...counts.values()].sort((a, b) => a - b);
    };
    const attach = async (args: string[]) => {
      const { capture, target } = await attachToLateThreads(args, threads, iterations);
      return { ...(await capture), pid: target.pid! };
    };
    const traced = await attach(['-e', 'syscalls:sys_enter_getpid']);
    assert.equal(traced.code, 0, traced.stderr);
    const hits = samples(parseLines(traced.stdout), 'syscalls:sys_enter_getpid').filter((hit) => hit.pid === traced.pid);
    assert.deepEqual(perThread(hits.map((hit) => hit.tid!)), Array(threads).fill(iterations), 'getpid records per thread');
    assert.ok(
      hits.every((hit) => hit.tid !== traced.pid),
      'every record is from a thread born after the attach',
    );

    // perf record -p on the same program counts the same per thread.
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-perf-'));
    try {
      // perf starts with its events disabled and acknowledges 'enable' on its control FIFOs; then the threads start.
      const again = spawn(fixture('threads_late'), ['signal', String(threads), String(iterations)], { stdio: 'ignore' });
      execFileSync('mkfifo', [`${dir}/ctl`, `${dir}/ack`]);
      const perf = spawn(
        'perf',
        [
          'record',
          '-q',
          '-D',
          '-1',
          '--control',
          `fifo:${dir}/ctl,${dir}/ack`,
          '-o',
          `${dir}/p.data`,
          '-e',
          'syscalls:sys_enter_getpid',
          '-p',
          String(again.pid),
        ],
        { stdio: 'ignore' },
      );
      const perfExited = new Promise((resolve) => perf.once('exit', resolve));
      try {
        execFileSync('sh', ['-c', `echo enable > ${dir}/ctl && head -c 4 ${dir}/ack`], { timeout: 60000 });
        again.kill('SIGUSR1');
      } catch (error) {
        again.kill('SIGKILL');
        throw error;
      }
      await perfExited;
      const lines = execFileSync('perf', ['script', '-i', `${dir}/p.data`, '-F', 'pid,tid'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split('\n')
        .filter((l) => l.trim());
      const tids = lines
        .map((line) => line.trim().split(/[\s/]+/))
        .filter(([pid]) => Number(pid) === again.pid)
        .map(([, tid]) => Number(tid));
      assert.deepEqual(perThread(tids), Array(threads).fill(iterations), 'perf record -p');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Hardware breakpoints on an attached process stay per thread, and the summary says what that leaves out.
    const watched = await attach(['-e', 'mem:late_counter:w']);
    assert.equal(watched.code, 0, watched.stderr);
    assert.match(
      watched.stderr,
      new RegExp(`hardware breakpoints watch the 1 thread\\(s\\) process ${watched.pid} has now; threads it creates later are not watched`),
    );
  });

  it('a source line inlined into two functions is armed in both: hits are the sum over its places, as perf counts them', () => {
    const [a, b] = [300, 500];
    const source = readFileSync(path.join(root, 'test/fixtures/inline_sites.c'), 'utf8').split('\n');
    const line = source.findIndex((text) => text.includes('/* INLINE_LINE */')) + 1;
    const { code, stdout, stderr } = ringside(['capture', '-e', `mem:inline_sites.c:${line}:x`, '--', fixture('inline_sites'), String(a), String(b)]);
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`inline_sites\\.c:${line} is in 2 places \\(from_a, from_b\\): all are armed`));
    const hits = samples(parseLines(stdout));
    if (!hostBreakpoints().fire) return assertSilentBreakpoints(stderr, hits.length);
    assert.equal(hits.length, a + b);
    const byFunction = (name: string) => hits.filter((hit) => hit.sym?.startsWith(`${name}+`)).length;
    assert.deepEqual([byFunction('from_a'), byFunction('from_b')], [a, b]);
    // perf, with one execute breakpoint per place, counts the same; binutils puts both on the line.
    const sites = [...new Set(hits.map((hit) => hit.ip!))];
    assert.equal(sites.length, 2);
    for (const ip of sites)
      assert.match(execFileSync('addr2line', ['-e', fixture('inline_sites'), ip], { encoding: 'utf8' }), new RegExp(`inline_sites\\.c:${line}\\b`));
    const perfArgs = sites.flatMap((ip) => ['-e', `mem:${ip}:x`]);
    assert.equal(perfScriptCount([...perfArgs, '--', fixture('inline_sites'), String(a), String(b)], 'mem:'), a + b);
  });

  it('a line in more places than there are debug registers: the first four are armed, the rest named in the summary', () => {
    const source = readFileSync(path.join(root, 'test/fixtures/inline_sites.c'), 'utf8').split('\n');
    const line = source.findIndex((text) => text.includes('/* FIVE_LINE */')) + 1;
    const { code, stdout, stderr } = ringside(['capture', '-e', `mem:inline_sites.c:${line}:x`, '--', fixture('inline_sites'), '1', '1']);
    assert.equal(code, 0, stderr);
    assert.match(stderr, new RegExp(`is in 5 places \\(t1, t2, t3, t4, t5\\)`));
    assert.match(stderr, new RegExp(`mem:inline_sites\\.c:${line}:x: 4 of 5 places armed; no debug register left for t5`));
    const hits = samples(parseLines(stdout));
    if (!hostBreakpoints().fire) return assertSilentBreakpoints(stderr, hits.length);
    assert.deepEqual(hits.map((hit) => hit.sym?.replace(/\+0x[0-9a-f]+$/, '')).sort(), ['t1', 't2', 't3', 't4']);
  });

  it('attaches to a running process and snapshots on SIGUSR2 and at its exit, printing each record once', async () => {
    // 4 s of its own CPU time: however busy the machine, most of it is left when the capture attaches.
    const target = spawn(fixture('kernel_busy'), ['4000', 'cpu'], { stdio: 'ignore' });
    try {
      const capture = spawn(process.execPath, [cli, 'capture', '-e', 'task-clock', '-F', '500', '-p', String(target.pid)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      capture.stdout.on('data', (d) => (stdout += d));
      capture.stderr.on('data', (d) => (stderr += d));
      // SIGUSR2 before the capture installs its handler would kill it (the default action): wait
      // until /proc says it catches SIGUSR2, however slow node starts on a busy host.
      for (const deadline = Date.now() + 30000; !catchesSignal(capture.pid!, 'SIGUSR2'); await new Promise((resolve) => setTimeout(resolve, 20))) {
        assert.ok(Date.now() < deadline, `the capture never installed its SIGUSR2 handler: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      capture.kill('SIGUSR2');
      const code = await new Promise<number | null>((resolve) => capture.on('exit', resolve));
      assert.equal(code, 0, stderr);
      assert.match(stderr, /snapshot 1 \(SIGUSR2\)/);
      assert.match(stderr, /snapshot 2 \(pid \d+ exited\)/);
      const hits = samples(parseLines(stdout), 'task-clock');
      assert.ok(hits.length > 100, `${hits.length} task-clock samples`);
      const keys = new Set(hits.map((h) => `${h.cpu}:${h.time}`));
      assert.equal(keys.size, hits.length, 'no record printed twice across snapshots');
      assert.ok(hits.every((h) => h.pid === target.pid));
    } finally {
      target.kill('SIGKILL');
    }
  });

  it('records every CPU with -a for --duration, each sample on the CPU its ring belongs to', async () => {
    // A spinning process pinned to each online CPU, so every CPU has something to sample (an idle CPU
    // in NOHZ gives cpu-clock almost nothing) and we know which process each CPU ran.
    const online = readFileSync('/sys/devices/system/cpu/online', 'utf8')
      .trim()
      .split(',')
      .flatMap((part) => {
        const [from, to] = part.split('-').map(Number);
        return Array.from({ length: (to ?? from) - from + 1 }, (_, i) => from + i);
      });
    // They spin until the capture is done, however long its start takes on a busy machine.
    const spinners = online.map((cpu) => spawn('taskset', ['-c', String(cpu), fixture('kernel_busy'), '600000'], { stdio: 'ignore' }));
    try {
      const capture = spawn(process.execPath, [cli, 'capture', '-a', '-e', 'cpu-clock', '-c', '1000000', '--duration', '1'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      capture.stdout.on('data', (d) => (stdout += d));
      capture.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise<number | null>((resolve) => capture.on('exit', resolve));
      assert.equal(code, 0, stderr);
      const hits = samples(parseLines(stdout), 'cpu-clock');
      for (const [index, cpu] of online.entries()) {
        const mine = hits.filter((h) => h.pid === spinners[index].pid);
        // A 1 ms period over 1 s: how much of it the spinner gets depends on what else runs on its CPU, but it is sampled
        // there, and only there (it is pinned).
        assert.ok(mine.length >= 10, `cpu ${cpu}: ${mine.length} samples of its pinned spinner`);
        assert.deepEqual([...new Set(mine.map((h) => h.cpu))], [cpu], `the spinner pinned to cpu ${cpu} is sampled on it alone`);
      }
    } finally {
      for (const spinner of spinners) spinner.kill('SIGKILL');
    }
  });

  it('writes perf.data that perf script reads with the same samples, and a self-contained HTML page', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-out-'));
    try {
      const n = 300;
      const data = path.join(dir, 'snap.data');
      const exported = ringside(['capture', '-e', 'syscalls:sys_enter_getpid', '-o', data, '--', fixture('kernel_getpid'), String(n)]);
      assert.equal(exported.code, 0, exported.stderr);
      const script = execFileSync('perf', ['script', '-i', data, '-F', 'event,tid,ip,sym'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      assert.equal(script.split('\n').filter((l) => l.includes('sys_enter_getpid')).length, n);
      const html = path.join(dir, 'snap.html');
      const page = ringside(['capture', '-e', 'syscalls:sys_enter_getpid', '-o', html, '--', fixture('kernel_getpid'), '50']);
      assert.equal(page.code, 0, page.stderr);
      const text = readFileSync(html, 'utf8');
      assert.match(text, /Content-Security-Policy/);
      assert.ok(!/<script[^>]+src=/.test(text), 'no external scripts');
      assert.ok(statSync(html).size > 100000, 'the timeline bundle is inlined');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an exported perf.data files its synthesized COMM/MMAP2 under the side-band event, not the first sampled event', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-export-'));
    try {
      const data = path.join(dir, 'e.data');
      const captured = ringside(['capture', '-q', '-e', 'syscalls:sys_enter_getpid', '-o', data, '--', fixture('kernel_getpid'), '5']);
      assert.equal(captured.code, 0, captured.stderr);
      const decoded = ringside(['decode', data]);
      assert.equal(decoded.code, 0, decoded.stderr);
      const records = parseLines(decoded.stdout);
      const synthesized = records.filter((r) => r.type !== 'SAMPLE' && r.time === 0n);
      assert.ok(
        synthesized.some((r) => r.type === 'COMM'),
        'the file carries synthesized COMM records',
      );
      assert.deepEqual([...new Set(synthesized.map((r) => r.event))], ['sideband']);
      assert.deepEqual([...new Set(samples(records).map((r) => r.event))], ['syscalls:sys_enter_getpid']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the real cause: x86 has no read-only watchpoints; a ring too large for the kernel is not a permission problem', () => {
    const read = ringside(['capture', '-q', '-e', 'mem:counter:r', '--', fixture('kernel_writer'), '3']);
    assert.equal(read.code, 1);
    assert.match(read.stderr, /EINVAL.*x86 debug registers cannot watch reads alone \(use :rw for reads and writes, or :w\)/);
    assert.doesNotMatch(read.stderr, /write_backward/, 'this kernel has write_backward; it is not the suspect');
    // As root no locked-memory limit applies: a 16 GiB ring fails in the kernel's allocation, not on a permission.
    const huge = ringside(['capture', '-q', '--pages', '4194304', '-e', 'task-clock', '--', '/bin/true']);
    assert.equal(huge.code, 1);
    assert.match(huge.stderr, /^ringside: mmap \(task-clock\): ENOMEM .*no locked-memory limit applies to this process.*use fewer --pages/);
    assert.doesNotMatch(huge.stderr, /CAP_IPC_LOCK|ulimit/);
  });

  it('decodes a perf.data written by perf record into the same JSON Lines', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-dec-'));
    try {
      const data = path.join(dir, 'perf.data');
      execFileSync('perf', ['record', '-q', '-o', data, '-e', 'syscalls:sys_enter_getpid', '--', fixture('kernel_getpid'), '123'], { stdio: 'ignore' });
      const { code, stdout, stderr } = ringside(['decode', data]);
      assert.equal(code, 0, stderr);
      const hits = samples(parseLines(stdout), 'syscalls:sys_enter_getpid');
      assert.equal(hits.length, 123);
      assert.equal(hits[0].fields?.__syscall_nr, 39);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists what this machine offers, as JSON and like perf list', () => {
    const json = ringside(['events', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as {
      software: { name: string }[];
      tracepoints: { system: string; name: string; id: number }[];
      pmus: { name: string; type: number }[];
    };
    assert.ok(list.software.some((e) => e.name === 'cpu-clock'));
    const getpid = list.tracepoints.find((t) => t.system === 'syscalls' && t.name === 'sys_enter_getpid');
    assert.equal(getpid?.id, Number(readFileSync('/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id', 'utf8')));
    assert.equal(list.pmus.find((p) => p.name === 'breakpoint')?.type, 5);
    const human = ringside(['events']);
    assert.match(human.stdout, /^\s+syscalls:sys_enter_getpid\s+\[Tracepoint event\]$/m);
  });

  it('fails with one clear line and exit 1, never a stack trace', () => {
    const cases: [string[], RegExp][] = [
      [['capture', '-e', 'nosuch:event', '-a'], /^ringside: bad event 'nosuch:event'.*no tracepoint system 'nosuch'/],
      [['capture', '-e', 'mem:no_such_symbol:w', '--', fixture('kernel_writer'), '1'], /cannot resolve symbol 'no_such_symbol'/],
      [['capture', '-e', 'cpu-clock'], /needs exactly one target/],
      [['capture', '-p', '999999999', '-e', 'cpu-clock'], /no such process/],
      [['capture', '--', '/no/such/program'], /command not found/],
      [['decode', '/etc/hostname'], /^ringside: .*hostname/],
    ];
    for (const [args, pattern] of cases) {
      const { code, stderr } = ringside(args);
      assert.equal(code, 1, `${args.join(' ')}: ${stderr}`);
      assert.match(stderr, pattern);
      assert.ok(!/\n\s+at /.test(stderr), `no stack trace for ${args.join(' ')}: ${stderr}`);
    }
  });

  it('at perf_event_paranoid 3 an ordinary user gets what perf gets: user space, or one message naming the level', () => {
    const paranoidFile = '/proc/sys/kernel/perf_event_paranoid';
    const saved = readFileSync(paranoidFile, 'utf8').trim();
    const asNobody = (argv: string[]) =>
      spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...argv], {
        encoding: 'utf8',
        cwd: '/tmp',
        env: { PATH: process.env.PATH, HOME: '/tmp' },
      });
    try {
      execFileSync('sh', ['-c', `echo 3 > ${paranoidFile}`]);
      // Upstream kernels treat every level >= 2 alike; Debian's and Android's kernels refuse every
      // unprivileged perf_event_open at 3. perf, as the same user, says which this kernel is.
      const perf = asNobody(['perf', 'stat', '-e', 'task-clock', '--', '/bin/true']);
      // setpriv drops to nobody with no capabilities; node can still read the world-readable bundle.
      const result = asNobody([process.execPath, cli, 'capture', '-e', 'task-clock', '-o', '/tmp/ringside-paranoid3.jsonl', '--', '/bin/true']);
      if (perf.status === 0) {
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stderr, /user space only: kernel\.perf_event_paranoid = 3 \(uid 65534/);
      } else {
        assert.equal(result.status, 1, result.stderr);
        assert.match(result.stderr, /^ringside: .*(EACCES|EPERM).*kernel\.perf_event_paranoid = 3.*sudo sysctl kernel\.perf_event_paranoid=2/);
      }
    } finally {
      execFileSync('sh', ['-c', `echo ${saved} > ${paranoidFile}`]);
    }
  });
});

describe('ringside capture ends cleanly (signals, --duration, the launched command)', function () {
  this.timeout(60000);
  const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

  /** Starts a capture of a 30 s spinner into a .jsonl, waits until it records, and returns it with the output path. */
  async function startLong(extra: string[] = []) {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-signal-'));
    const out = path.join(dir, 'out.jsonl');
    const capture = spawn(process.execPath, [cli, 'capture', '-e', 'task-clock', '-o', out, ...extra, '--', fixture('kernel_busy'), '30000'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    capture.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
    }>((resolve) => capture.once('exit', (code, signal) => resolve({ code, signal })));
    // The spinner is the capture's only child: wait until it runs.
    let child = 0;
    for (const deadline = Date.now() + 10000; !child && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      // pgrep exits 1 while there is no match yet.
      child = Number(
        spawnSync('pgrep', ['-P', String(capture.pid), '-f', 'kernel_busy'], { encoding: 'utf8' })
          .stdout.trim()
          .split('\n')[0] || 0,
      );
    }
    assert.ok(child > 0, 'the launched command runs');
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { capture, exited, out, dir, child, stderr: () => stderr };
  }

  for (const [signal, status] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal}: a final snapshot is written, the launched command is ended, exit status ${status}`, async () => {
      const run = await startLong();
      try {
        run.capture.kill(signal);
        assert.deepEqual(await run.exited, { code: status, signal: null }, run.stderr());
        assert.ok(samples(parseLines(readFileSync(run.out, 'utf8'))).length > 0, "the snapshot holds the spinner's samples");
        assert.match(run.stderr(), new RegExp(`snapshot 1 \\(${signal}\\)`));
        assert.match(run.stderr(), new RegExp(`ended the launched command \\(pid ${run.child}\\): killed by SIGTERM`));
        assert.equal(alive(run.child), false, 'no launched command outlives the capture');
      } finally {
        if (alive(run.child)) process.kill(run.child, 'SIGKILL');
        rmSync(run.dir, { recursive: true, force: true });
      }
    });
  }

  it('a Ctrl-C the moment the launched command runs (the rings still being set up) still ends with its snapshot, status 130, the command ended', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ringside-signal-'));
    const out = path.join(dir, 'out.jsonl');
    // The command itself sends the Ctrl-C to capture (its parent) as its first act, before it becomes the spinner.
    const capture = spawn(
      process.execPath,
      [cli, 'capture', '-e', 'task-clock', '-o', out, '--', 'sh', '-c', `kill -INT $PPID; exec ${fixture('kernel_busy')} 30000`],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    capture.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      capture.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let child = 0;
    try {
      assert.deepEqual(await exited, { code: 130, signal: null }, stderr);
      assert.match(stderr, /snapshot 1 \(SIGINT\)/);
      child = Number(/ended the launched command \(pid (\d+)\)/.exec(stderr)?.[1]);
      assert.ok(child > 0, stderr);
      assert.equal(alive(child), false, 'no launched command outlives the capture');
      assert.ok(existsSync(out), 'the snapshot was written');
    } finally {
      if (capture.exitCode === null && capture.signalCode === null) capture.kill('SIGKILL');
      if (child > 0 && alive(child)) process.kill(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--duration ends the launched command too, with status 0; --leave-running leaves it running', async () => {
    const timed = ringside(['capture', '-e', 'task-clock', '--duration', '0.5', '-o', '/tmp/ringside-duration.jsonl', '--', fixture('kernel_busy'), '30000']);
    try {
      assert.equal(timed.code, 0, timed.stderr);
      const pid = Number(/ended the launched command \(pid (\d+)\): killed by SIGTERM/.exec(timed.stderr)?.[1]);
      assert.ok(pid > 0, timed.stderr);
      assert.equal(alive(pid), false);
    } finally {
      rmSync('/tmp/ringside-duration.jsonl', { force: true });
    }
    const run = await startLong(['--leave-running']);
    try {
      run.capture.kill('SIGTERM');
      assert.equal((await run.exited).code, 143);
      assert.doesNotMatch(run.stderr(), /ended the launched command/);
      assert.equal(alive(run.child), true, '--leave-running');
    } finally {
      if (alive(run.child)) process.kill(run.child, 'SIGKILL');
      rmSync(run.dir, { recursive: true, force: true });
    }
  });

  it("passes the launched command's status through: its exit code, or 128+N and the signal's name", () => {
    const three = ringside(['capture', '-e', 'task-clock', '-o', '/tmp/ringside-status.jsonl', '--', '/bin/sh', '-c', 'exit 3']);
    assert.equal(three.code, 3, three.stderr);
    assert.match(three.stderr, /snapshot 1 \(command exited with status 3\)/);
    const segv = ringside(['capture', '-e', 'task-clock', '-o', '/tmp/ringside-status.jsonl', '--', '/bin/sh', '-c', 'kill -SEGV $$']);
    assert.equal(segv.code, 139, segv.stderr);
    assert.match(segv.stderr, /snapshot 1 \(command killed by SIGSEGV\)/);
    rmSync('/tmp/ringside-status.jsonl', { force: true });
  });
});

/** Source line of `marker` in a fixture's C file (1-based). */
function markedLine(file: string, marker: string): number {
  const line =
    readFileSync(path.join(root, 'test/fixtures', file), 'utf8')
      .split('\n')
      .findIndex((text) => text.includes(marker)) + 1;
  assert.ok(line > 0, `${file} has no line with ${marker}`);
  return line;
}

/** Groups of uprobes Ringside defined in tracefs that are still there. */
function ringsideUprobeGroups(): string[] {
  return readFileSync('/sys/kernel/tracing/uprobe_events', 'utf8')
    .split('\n')
    .filter((line) => line.includes(':ringside_') && !line.includes(':ringside_test_'));
}

describe('ringside capture: source lines and functions counted by uprobes, perf probe as referee', function () {
  this.timeout(120000);

  before(() => {
    assert.ok(existsSync(cli), 'dist/cli.js is built by npm test (npm run build)');
    assert.equal(process.getuid?.(), 0, 'uprobes need CAP_PERFMON: these tests run as root (the refusal is tested as uid 65534 in test/unprivileged)');
  });

  it('line:FILE:LINE counts every address of the line, as perf probe FILE:LINE + perf stat count on the same run', () => {
    // `for (int i = 0; i < rounds; i++)` at -O0: four is_stmt addresses (start, jump to the test, increment, test).
    const line = markedLine('sym_basic.c', 'for (int i = 0; i < rounds; i++)');
    const rounds = 100;
    // perf counts the run Ringside records.
    const { perf, code, stdout, stderr } = underPerfProbes(
      fixture('sym_o0_nopie'),
      [`sym_basic.c:${line}`],
      [process.execPath, cli, 'capture', '-e', `line:sym_basic.c:${line}`, '--', fixture('sym_o0_nopie'), String(rounds)],
    );
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      new RegExp(`sym_basic\\.c:${line} begins at 4 addresses \\(writer 0x[0-9a-f]+, writer 0x[0-9a-f]+, writer 0x[0-9a-f]+, writer 0x[0-9a-f]+\\)`),
    );
    const hits = samples(parseLines(stdout), `line:sym_basic.c:${line}`);
    assert.equal(perf, 1 + 1 + rounds + (rounds + 1), 'perf probe places the same four probes');
    assert.equal(hits.length, perf);
    assert.deepEqual(ringsideUprobeGroups(), [], 'the recording removed its uprobes from tracefs');
  });

  it('an inlined line counts both copies: a + b, as perf probes on the two addresses count on the same run', () => {
    const [a, b] = [300, 500];
    const line = markedLine('inline_sites.c', '/* INLINE_LINE */');
    const command = [fixture('inline_sites'), String(a), String(b)];
    const { code, stdout, stderr } = ringside(['capture', '-e', `line:inline_sites.c:${line}`, '--', ...command]);
    assert.equal(code, 0, stderr);
    const hits = samples(parseLines(stdout));
    const byFunction = (name: string) => hits.filter((hit) => hit.sym?.startsWith(`${name}+`)).length;
    assert.deepEqual([byFunction('from_a'), byFunction('from_b')], [a, b]);
    const sites = [...new Set(hits.map((hit) => hit.ip!))].sort();
    assert.equal(sites.length, 2);
    for (const ip of sites)
      assert.match(execFileSync('addr2line', ['-e', fixture('inline_sites'), ip], { encoding: 'utf8' }), new RegExp(`inline_sites\\.c:${line}\\b`));
    // perf probe refuses FILE:LINE here (the inlined line shares its address with the call site's line), and 6.1
    // misplaces an absolute address in a non-PIE (it takes the address for a file offset): probe FUNCTION+OFFSET.
    const places = [...new Set(hits.map((hit) => hit.sym!))].map((sym) => sym.replace(/\+0x([0-9a-f]+)$/, (_, hex: string) => `+${Number.parseInt(hex, 16)}`));
    // Then perf counts a run Ringside records.
    const again = underPerfProbes(fixture('inline_sites'), places, [process.execPath, cli, 'capture', '-e', `line:inline_sites.c:${line}`, '--', ...command]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.perf, a + b);
    assert.equal(samples(parseLines(again.stdout)).length, again.perf);
  });

  it("uprobe:LIB:SYMBOL counts a shared library's function at its file offset, as perf probe -x LIB does", () => {
    const libc = execFileSync('sh', ['-c', `ldd ${fixture('libc_calls')} | sed -n 's/.*libc\\.so\\.6 => \\([^ ]*\\).*/\\1/p'`], { encoding: 'utf8' }).trim();
    assert.ok(existsSync(libc), `ldd names libc.so.6 of libc_calls: '${libc}'`);
    const n = 777;
    const command = [fixture('libc_calls'), String(n)];
    const { code, stdout, stderr } = ringside(['capture', '-e', `uprobe:${libc}:getppid`, '--', ...command]);
    assert.equal(code, 0, stderr);
    const hits = samples(parseLines(stdout), `uprobe:${libc}:getppid`);
    // glibc's own name for the function's code (__GI___getppid), at offset 0: its entry.
    assert.ok(
      hits.every((hit) => /getppid\+0x0$/.test(hit.sym ?? '')),
      `every hit is at getppid's entry: ${hits[0]?.sym}`,
    );
    // A run of its own: around a capture perf would also count the getppid() calls of the shell that launches the command.
    const { perf } = underPerfProbes(libc, ['getppid'], command);
    assert.equal(perf, n);
    assert.equal(hits.length, perf);
  });

  it('-p counts a line in threads the process creates after the attach: every execution in every thread', async () => {
    const threads = 4;
    const iterations = 1000;
    const line = markedLine('threads_late.c', 'late_counter++;');
    const { capture, target, targetExited } = await attachToLateThreads(['-e', `line:threads_late.c:${line}`], threads, iterations);
    const { code, stdout, stderr } = await capture;
    assert.equal(code, 0, stderr);
    assert.equal(await targetExited, 0, 'the target ran to the end: its threads were created (an inherited uprobe PMU event would fail their clone)');
    const hits = samples(parseLines(stdout), `line:threads_late.c:${line}`);
    const perThread = new Map<number, number>();
    for (const hit of hits) perThread.set(hit.tid!, (perThread.get(hit.tid!) ?? 0) + 1);
    assert.ok(!perThread.has(target.pid!), 'the main thread never runs work()');
    assert.deepEqual([...perThread.values()], Array(threads).fill(iterations), `hits per thread: ${JSON.stringify([...perThread])}`);
    assert.deepEqual(ringsideUprobeGroups(), []);
  });

  it('mem:FILE:LINE:x where breakpoints are silent is counted by uprobes instead, keeping its name, with a note', () => {
    const [a, b] = [30, 50];
    const line = markedLine('inline_sites.c', '/* INLINE_LINE */');
    const spec = `mem:inline_sites.c:${line}:x`;
    const { code, stdout, stderr } = ringside(['capture', '-e', spec, '--', fixture('inline_sites'), String(a), String(b)], {
      env: { RINGSIDE_BREAKPOINT_DELIVERY: 'silent' },
    });
    assert.equal(code, 0, stderr);
    assert.match(
      stderr,
      new RegExp(
        `${spec}: hardware breakpoints do not fire on this machine \\(the probe counted 0 of \\d+ calls\\), so this line is counted with uprobes instead, as line:inline_sites\\.c:${line} counts it`,
      ),
    );
    assert.doesNotMatch(stderr, SILENT_BREAKPOINTS, 'no breakpoint is left to be silent');
    assert.equal(samples(parseLines(stdout), spec).length, a + b);
  });

  it("removes uprobes a Ringside that no longer runs left in tracefs, and no one else's", () => {
    let dead = 4_000_000;
    while (existsSync(`/proc/${dead}`)) dead--;
    const binary = fixture('libc_calls');
    const offset =
      '0x' +
      execFileSync('sh', ['-c', `readelf -lW ${binary} | awk '$1 == "LOAD" && / R E / { print $2 }'`], { encoding: 'utf8' })
        .trim()
        .replace(/^0x/, '');
    const control = '/sys/kernel/tracing/uprobe_events';
    const leftover = `ringside_${dead}_0/s0`;
    const someoneElses = `ringside_test_${process.pid}/other`;
    execFileSync('sh', ['-c', `echo 'p:${leftover} ${binary}:${offset}' >> ${control} && echo 'p:${someoneElses} ${binary}:${offset}' >> ${control}`]);
    try {
      const { code, stderr } = ringside(['capture', '-e', `uprobe:${binary}:main`, '-o', '/dev/null', '--', binary, '3']);
      assert.equal(code, 0, stderr);
      const left = readFileSync(control, 'utf8');
      assert.doesNotMatch(left, new RegExp(`ringside_${dead}_0`), "the dead recording's uprobe is removed");
      assert.match(left, new RegExp(`ringside_test_${process.pid}/other`), 'a group of another name is left alone');
    } finally {
      spawnSync('sh', ['-c', `echo '-:${someoneElses}' >> ${control}; echo '-:${leftover}' >> ${control}`], { stdio: 'ignore' });
    }
  });
});
