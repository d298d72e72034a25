// Soak: a kept recorder (`ringside keep`) under load for minutes, with a client attaching every
// second. Some clients are `ringside snapshot` killed at a random moment (sometimes inside the
// pause window); others pause the rings and are killed while they hold them paused. After every
// client the keeper's rings must be recording again within a second; at the end every getpid the
// load made is either written into a ring or counted lost by the kernel, and the keeper holds
// exactly the fds and perf mappings it started with. RINGSIDE_SOAK_SECONDS sets the length
// (default 180, which keeps `npm test` within CI's budget).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keeperEventDescriptions, listKeeperStates, type KeeperState } from '../../native/keeper/state';
import { attachKeeperRings } from '../../native/keeper/attach';
import { borrowPerfFd, mapExistingRing, processAlive } from '../../native/perf/borrowed';
import type { BackwardRing } from '../../native/perf/backward-ring';
import { computeParseInfo } from '../../native/decode/parse-info';
import { walkRing } from '../../native/decode/walk';
import { prng } from '../../native/decode/test-records';
import { RecordType } from '../../native/abi/uapi';
import { fixture, perfResources } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const SOAK_SECONDS = Number(process.env.RINGSIDE_SOAK_SECONDS ?? 180);
const CALLS_PER_PROCESS = 200;

/**
 * The load, until STOP exists: short-lived processes making CALLS_PER_PROCESS getpid calls each
 * (their number goes to COUNT at the end), and two pipelines of small writes that switch context
 * on both CPUs.
 */
const LOAD = `stop=$1; count=$2; getpid=$3
switcher() { while [ ! -e "$stop" ]; do dd if=/dev/zero bs=64 count=2000 2>/dev/null | cat >/dev/null; done; }
switcher & switcher &
n=0; while [ ! -e "$stop" ]; do "$getpid" ${CALLS_PER_PROCESS}; n=$((n+1)); done
wait; echo $n > "$count"`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs: number, everyMs = 20): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(everyMs)) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/** What a process holds: its open fds (fd -> target) and its perf ring mappings. */
function resourcesOf(pid: number): { fds: Record<string, string>; perfMappings: number } {
  const fds: Record<string, string> = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      fds[fd] = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      // closed while listing
    }
  }
  const perfMappings = readFileSync(`/proc/${pid}/maps`, 'utf8')
    .split('\n')
    .filter((line) => line.includes('anon_inode:[perf_event]')).length;
  return { fds, perfMappings };
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('soak: a kept recorder under load, a client every second, clients killed at random', function () {
  this.timeout((SOAK_SECONDS + 180) * 1000);
  let dir: string;
  let keeper: ChildProcess | undefined;
  const previousRuntimeDir = process.env.XDG_RUNTIME_DIR;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-soak-'));
    // Where this process (attaching in-process) and the children find the keeper's state file.
    process.env.XDG_RUNTIME_DIR = dir;
  });
  afterEach(async () => {
    if (keeper && keeper.exitCode === null && keeper.signalCode === null) {
      const exited = exitOf(keeper);
      keeper.kill('SIGKILL');
      await exited;
    }
    keeper = undefined;
    if (previousRuntimeDir === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = previousRuntimeDir;
    rmSync(dir, { recursive: true, force: true });
  });

  it(`${SOAK_SECONDS} s: rings recording within a second of every client, every getpid written or counted lost, nothing leaked`, async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    const random = prng(seed);
    const stopFile = path.join(dir, 'stop');
    const countFile = path.join(dir, 'count');
    const testBefore = perfResources();
    keeper = spawn(
      process.execPath,
      [
        cli,
        'keep',
        '-e',
        'syscalls:sys_enter_getpid',
        '--pages',
        '16',
        '--',
        '/bin/sh',
        '-c',
        LOAD,
        'soak-load',
        stopFile,
        countFile,
        fixture('kernel_getpid'),
      ],
      { env: { ...process.env }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let keeperLog = '';
    keeper.stderr!.on('data', (chunk) => {
      keeperLog += String(chunk);
    });
    const state: KeeperState = await waitFor(
      `the keeper's state file (${keeperLog})`,
      () => listKeeperStates().find((listed) => listed.state?.pid === keeper!.pid && listed.alive)?.state,
      20000,
    );
    const loadPid = state.target.kind === 'launch' ? state.target.childPid : undefined;
    assert.ok(loadPid, 'the keeper launched the load');
    const watcher = attachKeeperRings(state, { warmCopyBuffers: false });
    const written = () =>
      watcher
        .ringStats()
        .filter((ring) => ring.direction === 'backward')
        .reduce((sum, ring) => sum + ring.bytesWritten, 0n);
    const tally = { snapshots: 0, snapshotsKilled: 0, pausedAndKilled: 0, slowestResumeMs: 0 };
    const recordingAgain = async (after: string) => {
      const from = written();
      const since = Date.now();
      await waitFor(`the rings to record again within a second after ${after} (seed ${seed})`, () => written() > from, 1000);
      tally.slowestResumeMs = Math.max(tally.slowestResumeMs, Date.now() - since);
    };

    let keeperBefore: ReturnType<typeof resourcesOf>;
    try {
      await recordingAgain('the keeper started');
      // Counted once the keeper has finished starting (the pipe that released the load is closed).
      await sleep(500);
      keeperBefore = resourcesOf(state.pid);
      for (let action = 0, started = Date.now(); Date.now() - started < SOAK_SECONDS * 1000; action++) {
        const tick = Date.now();
        // The first client dies holding the rings paused and the second is killed at a random
        // moment, so even a short soak does both; then chance decides.
        if (action === 0 || (action > 1 && random() < 0.25)) {
          // A client that pauses the rings (taking the keeper's lease) and dies holding them paused.
          const script = `
            const { attachKeeperRings } = require(${JSON.stringify(path.join(root, 'out/native/keeper/attach.js'))});
            const { listKeeperStates } = require(${JSON.stringify(path.join(root, 'out/native/keeper/state.js'))});
            const state = listKeeperStates().find((listed) => listed.state && listed.state.pid === ${state.pid}).state;
            attachKeeperRings(state, { warmCopyBuffers: false }).pause();
            process.stdout.write('paused\\n');
            setInterval(() => {}, 1000);`;
          const client = spawn(process.execPath, ['-e', script], { env: { ...process.env }, stdio: ['ignore', 'pipe', 'inherit'] });
          await new Promise<void>((resolve, reject) => {
            client.stdout!.on('data', (chunk) => {
              if (String(chunk).includes('paused')) resolve();
            });
            client.once('exit', (code) => reject(new Error(`the pausing client exited (${code}) before pausing`)));
          });
          await sleep(random() * 200);
          const exited = exitOf(client);
          client.kill('SIGKILL');
          await exited;
          tally.pausedAndKilled++;
          await recordingAgain('a client died with the rings paused');
        } else {
          // `ringside snapshot`, killed at a random moment 40% of the time (startup, attach, the
          // pause window, the copy, or writing its file).
          const output = path.join(dir, `snap-${tally.snapshots + tally.snapshotsKilled}.jsonl`);
          const client = spawn(process.execPath, [cli, 'snapshot', String(state.pid), '-o', output], {
            env: { ...process.env },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          client.stderr!.on('data', (chunk) => {
            stderr += String(chunk);
          });
          const exited = exitOf(client);
          const killAfter = action === 1 || random() < 0.4 ? random() * 700 : null;
          const timer = killAfter === null ? null : setTimeout(() => client.kill('SIGKILL'), killAfter);
          const exit = await exited;
          if (timer) clearTimeout(timer);
          if (exit.signal === 'SIGKILL') {
            tally.snapshotsKilled++;
          } else {
            assert.equal(exit.code, 0, `ringside snapshot failed (seed ${seed}): ${stderr}`);
            assert.match(stderr, /lost \d+ since the ring opened/, 'the summary counts what the kernel lost');
            const records = readFileSync(output, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as { type: string });
            assert.ok(
              records.some((record) => record.type === 'SAMPLE'),
              `snapshot ${output} holds samples`,
            );
            tally.snapshots++;
          }
          rmSync(output, { force: true });
          await recordingAgain('a snapshot client');
        }
        await sleep(Math.max(0, tick + 1000 - Date.now()));
      }
      assert.ok(tally.pausedAndKilled > 0 && tally.snapshots + tally.snapshotsKilled > 0, JSON.stringify(tally));
      assert.deepEqual(
        readdirSync(path.join(dir, `ringside-${process.getuid!()}`)).filter((name) => name.includes('.paused-by-')),
        [],
        'no lease is left behind',
      );
      const keeperAfter = resourcesOf(state.pid);
      assert.deepEqual(keeperAfter, keeperBefore, `the keeper holds the fds and perf mappings it started with (${JSON.stringify(tally)})`);

      // The load stops; then every getpid it made is accounted for, ring by ring.
      writeFileSync(stopFile, '');
      await waitFor('the load to stop', () => existsSync(countFile) && readFileSync(countFile, 'utf8').trim() !== '' && !processAlive(loadPid!), 60000, 100);
      const processes = Number(readFileSync(countFile, 'utf8').trim());
      const final = watcher.snapshot();
      const event = keeperEventDescriptions(state)[0];
      const lostRecordSize = 8 + 16 + computeParseInfo(event.attr).trailer.size;
      let calls = 0n;
      let lost = 0n;
      let lostInRecords = 0n;
      for (const ringState of state.rings.filter((ring) => ring.direction === 'backward')) {
        const ring = mapExistingRing(borrowPerfFd(state.pid, ringState.fd), ringState.pages, 'backward', { attr: event.attr }) as BackwardRing;
        try {
          const counts = ring.event.readCounts();
          assert.ok(counts.lost !== null, 'the kernel counts lost records (PERF_FORMAT_LOST)');
          calls += counts.value;
          lost += counts.lost;
          const copy = final.rings.find((candidate) => candidate.ringId === ringState.ringId)!;
          const offsets = Array.from(walkRing(copy).offsets);
          const view = new DataView(copy.bytes.buffer, copy.bytes.byteOffset);
          const sample = offsets.find((offset) => view.getUint32(offset, true) === RecordType.SAMPLE);
          for (const offset of offsets) if (view.getUint32(offset, true) === RecordType.LOST) lostInRecords += view.getBigUint64(offset + 16, true);
          if (counts.value === 0n) continue;
          assert.ok(sample !== undefined, `${ringState.label}: the last snapshot holds samples`);
          // Every record the ring took is a sample of the same size or a LOST record: what the
          // kernel wrote must be exactly (calls - lost) samples plus whole LOST records.
          const sampleSize = BigInt(view.getUint16(sample + 6, true));
          const bytes = ring.bytesWritten();
          const rest = bytes - (counts.value - counts.lost) * sampleSize;
          assert.ok(
            rest >= 0n && rest % BigInt(lostRecordSize) === 0n,
            `${ringState.label}: ${bytes} bytes written = ${counts.value - counts.lost} samples of ${sampleSize} + whole ${lostRecordSize}-byte LOST records (rest ${rest})`,
          );
        } finally {
          ring.dispose();
        }
      }
      const made = BigInt(processes * CALLS_PER_PROCESS);
      assert.ok(processes > 0, 'the load ran');
      // The kernel's count is the referee for the ring; the load's own count checks the kernel's.
      // (dash makes a getpid call or so of its own, outside the getpid processes.)
      assert.ok(calls >= made && calls - made < 50n, `the kernel counted ${calls} getpid calls; the load made ${made} in ${processes} processes`);
      if (tally.pausedAndKilled > 0) assert.ok(lost > 0n, 'calls made while a dead client held the rings paused are counted lost');
      assert.ok(lostInRecords <= lost, `LOST records in the last copy (${lostInRecords}) never exceed the kernel's count (${lost})`);
      // The keeper drains its side-band rings into spools: a copy holds every byte the kernel
      // wrote into them (bar what the bounded spool dropped), and nothing was lost.
      for (const copy of final.rings.filter((ring) => ring.direction === 'forward')) {
        assert.equal(copy.lostSinceOpen, 0n, `${copy.label}: no side-band record lost`);
        assert.equal(BigInt(copy.validBytes) + (copy.droppedBytes ?? 0n), copy.bytesWritten, `${copy.label}: every side-band byte written is in the copy`);
        assert.deepEqual(walkRing(copy).anomalies, [], `${copy.label}: whole records`);
      }
      console.log(
        `      soak (seed ${seed}): ${JSON.stringify(tally)}, ${processes} processes, ${calls} getpid calls, ${lost} counted lost, keeper ${JSON.stringify(keeperAfter)}`,
      );
    } finally {
      watcher.dispose();
    }
    const exited = exitOf(keeper);
    keeper.kill('SIGTERM');
    assert.equal((await exited).code, 0, keeperLog);
    assert.equal(listKeeperStates().length, 0, 'the keeper removed its state file');
    assert.deepEqual(perfResources(), testBefore, 'this process closed every borrowed fd and mapping');
  });
});
