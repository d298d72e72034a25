// `ringside keep --window SEC`: a keeper's rings grow like a capture's, and its clients follow. Each
// resize is a new generation of the state file; the retired rings stay open (published as retired)
// until no client's lease can still be reading them. The load numbers its records (close(100000 + i),
// see fixtures/kernel_paced.c), so a gap or a repeat across a swap shows in the numbers, in our
// decoder and in perf script alike.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeptRingSource } from '../../native/keeper/attach';
import { keeperStatePath, readKeeperState, releasePauseLease, takePauseLease, type KeeperState } from '../../native/keeper/state';
import { decodeSnapshot } from '../../native/decode/columns';
import { formatRecordJson } from '../../native/decode/jsonl';
import { RecordType } from '../../native/abi/uapi';
import { readProcessStat } from '../../native/perf/procfs';
import { fixture } from '../kernel/helpers';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const FIRST_FD = 100000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The load's sequence numbers and times (s) in a perf.data, as perf script prints them, and perf script's count of close samples. */
function perfScriptRecords(data: string): { numbered: { seq: number; time: number }[]; closes: number } {
  const script = execFileSync('perf', ['script', '-i', data, '-F', 'time,event,trace'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 256 << 20,
  });
  const lines = script.split('\n').filter((line) => line.includes('sys_enter_close'));
  const numbered = lines.flatMap((line) => {
    const match = /^\s*(\d+\.\d+):.*fd: 0x([0-9a-f]+)/.exec(line);
    const seq = match ? Number.parseInt(match[2], 16) - FIRST_FD : -1;
    return match && seq >= 0 ? [{ seq, time: Number(match[1]) }] : [];
  });
  return { numbered, closes: lines.length };
}

/** Asserts the numbers run from the first to the last without a gap or a repeat. */
function assertContinuous(seqs: readonly number[], what: string): void {
  const sorted = [...seqs].sort((a, b) => a - b);
  assert.ok(sorted.length > 0, `${what}: no numbered record`);
  assert.equal(new Set(sorted).size, sorted.length, `${what}: no record twice`);
  assert.equal(sorted.length, sorted[sorted.length - 1] - sorted[0] + 1, `${what}: every call from #${sorted[0]} to #${sorted[sorted.length - 1]}`);
}

/**
 * Per ring label, the load's sequence numbers in one snapshot of a KeptRingSource, decoded by
 * Ringside, and the records the kernel counted lost in those rings since they opened.
 */
function numberedByRing(source: KeptRingSource): { byRing: Map<string, number[]>; lost: number } {
  const decoded = decodeSnapshot(source.snapshot());
  const byRing = new Map<string, number[]>();
  for (let row = 0; row < decoded.columns.length; row++) {
    if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
    const record = JSON.parse(formatRecordJson(decoded, row)) as { fields?: { fd?: number } };
    const seq = (record.fields?.fd ?? -1) - FIRST_FD;
    if (seq < 0) continue;
    const label = decoded.rings[decoded.columns.ring[row]].label;
    byRing.set(label, [...(byRing.get(label) ?? []), seq]);
  }
  const lost = decoded.coverage.filter((ring) => byRing.has(ring.label)).reduce((sum, ring) => sum + Number(ring.lostSinceOpen ?? ring.lostRecords), 0);
  return { byRing, lost };
}

/** The keeper's perf fds, read from /proc/PID/fd. */
function perfFdsOf(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:[perf_event]';
    } catch {
      // that fd closed since the listing: not a perf fd
      return false;
    }
  }).length;
}

describe('ringside keep --window (real kernel, perf script as referee)', function () {
  this.timeout(90000);
  let dir: string;
  let keeper: ChildProcess | undefined;
  const env = () => ({ ...process.env, XDG_RUNTIME_DIR: dir });
  const stateDir = () => path.join(dir, `ringside-${process.getuid!()}`);
  const ringside = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: env() });
  let stderr = '';

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-keepwin-'));
  });
  afterEach(() => {
    if (keeper && keeper.exitCode === null) keeper.kill('SIGKILL');
    keeper = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const startKeeper = (args: string[]) => {
    stderr = '';
    keeper = spawn(process.execPath, [cli, 'keep', ...args], { env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    keeper.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
    });
  };
  /** The state file once `accept` takes it (read every 20 ms). */
  const stateWhen = async (what: string, accept: (state: KeeperState) => boolean, timeoutMs = 20000): Promise<KeeperState> => {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(20)) {
      assert.equal(keeper!.exitCode, null, `the keeper exited: ${stderr}`);
      let state: KeeperState;
      try {
        state = readKeeperState(keeperStatePath(keeper!.pid!, stateDir()));
      } catch {
        // the keeper is between writes of its state: read it again
        continue;
      }
      if (accept(state)) return state;
    }
    throw new Error(`${what} never came: ${stderr}`);
  };
  const resized = (state: KeeperState) => (state.generation ?? 0) >= 2 && !state.resizing && state.rings.some((ring) => ring.retired);
  const stop = async () => {
    const exited = new Promise((resolve) => keeper!.once('exit', resolve));
    keeper!.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
  };

  it('keep --pages 1 --window 2 grows under load until a snapshot covers the window; perf script and our JSON Lines agree on it', async () => {
    const calls = 12000;
    // Pinned to one CPU, so one ring holds the whole sequence and a gap can only be a lost record.
    // Nobody snapshots while the load runs: a snapshot pauses the rings, and records arriving then are lost.
    startKeeper([
      '-e',
      'syscalls:sys_enter_close',
      '--pages',
      '1',
      '--window',
      '2',
      '--',
      'taskset',
      '-c',
      '0',
      fixture('kernel_paced'),
      String(calls),
      '3000',
    ]);
    const first = await stateWhen('the first state file', () => true);
    assert.equal(first.generation, 0);
    assert.ok(first.rings.every((ring) => ring.direction === 'forward' || ring.pages === 1));
    const grown = await stateWhen('a resize', resized);
    assert.ok(grown.rings.some((ring) => ring.direction === 'backward' && !ring.retired && ring.pages > 1));
    const child = first.target.kind === 'launch' ? first.target.childPid! : -1;
    for (const deadline = Date.now() + 20000; readProcessStat(child) && readProcessStat(child)!.state !== 'Z' && Date.now() < deadline;) await sleep(50);

    const data = path.join(dir, 's.data');
    const snap = ringside(['snapshot', String(keeper!.pid), '-o', data]);
    assert.equal(snap.status, 0, snap.stderr);
    assert.match(
      snap.stderr,
      /rings resized from 1 to \d+ pages in [\d.]+ ms \([\d.]+ s after the recording started\): cpu0 .* kept [\d.]+ s of history .*less than the 2 s window/,
    );
    const { numbered, closes } = perfScriptRecords(data);
    assertContinuous(
      numbered.map((record) => record.seq),
      'perf script on the snapshot',
    );
    assert.equal(Math.max(...numbered.map((record) => record.seq)), calls - 1, 'the last call is there');
    const times = numbered.map((record) => record.time);
    const span = Math.max(...times) - Math.min(...times);
    assert.ok(span >= 2, `the snapshot covers ${span.toFixed(3)} s, at least the 2 s window`);
    const jsonl = path.join(dir, 's.jsonl');
    const decoded = ringside(['decode', data, '-o', jsonl]);
    assert.equal(decoded.status, 0, decoded.stderr);
    const jsonCloses = readFileSync(jsonl, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"type":"SAMPLE"') && line.includes('"event":"syscalls:sys_enter_close"'));
    assert.equal(jsonCloses.length, closes, "Ringside's JSON Lines of the same snapshot hold as many close samples as perf script");

    const listed = JSON.parse(ringside(['list', '--json']).stdout) as { pid: number; generation: number; limitations: string[] }[];
    const mine = listed.find((entry) => entry.pid === keeper!.pid)!;
    assert.ok(mine.generation >= 2, 'the state file generation incremented');
    assert.ok(
      mine.limitations.some((line) => /rings resized from 1 to/.test(line)),
      'list shows the resize history',
    );
    assert.match(ringside(['list']).stdout, /cpu0 pid \d+ +backward +\d+ KiB, \d+ bytes written, not written meanwhile/);
    await stop();
  });

  it('clients that snapshot while the keeper resizes, or hold rings it retired, lose nothing at the swap and repeat nothing', async () => {
    // A 30 s window: the retired rings stay published for 30 s after the swap, time for every client below however busy
    // the machine (4 s was not, with both cores loaded: the CLI's list came after they were closed).
    startKeeper(['-e', 'syscalls:sys_enter_close', '--pages', '1', '--window', '30', '--', 'taskset', '-c', '0', fixture('kernel_paced'), '12000', '3000']);
    const first = await stateWhen('the first state file', () => true);
    // A client that borrows the 1-page rings now and snapshots only after they were retired.
    const stale = new KeptRingSource(first, { warmCopyBuffers: false });
    // A client that snapshots all along, swap or not.
    const busy = new KeptRingSource(first, { warmCopyBuffers: false });
    try {
      let snapshots = 0;
      let grown: KeeperState | undefined;
      while (!grown) {
        // Each snapshot pauses the rings, and the records arriving then are lost (counted by the
        // kernel): gaps are allowed up to that count, repeats never.
        const { byRing, lost } = numberedByRing(busy);
        const all = [...byRing.values()].flat();
        assert.equal(new Set(all).size, all.length, `no record twice in a snapshot taken while the keeper may be resizing (${[...byRing.keys()].join(', ')})`);
        if (all.length > 0)
          assert.ok(Math.max(...all) - Math.min(...all) + 1 - all.length <= lost, `gaps only where the kernel counted lost records (${lost})`);
        snapshots++;
        const state = readKeeperState(keeperStatePath(keeper!.pid!, stateDir()));
        if (resized(state)) grown = state;
        else assert.equal(keeper!.exitCode, null, stderr);
        await sleep(5);
      }
      assert.ok(snapshots > 1, 'snapshots were taken before the resize');
      assert.match(grown.limitations?.join('\n') ?? '', /rings resized from 1 to \d+ pages .*cpu0 .*less than the 30 s window/);

      // The stale client still holds generation 0's rings (now retired): its snapshot reads the
      // newest generation and holds the retired ring's last records, then the new ring's, back to back.
      const { byRing } = numberedByRing(stale);
      assert.ok(stale.keeperState.generation! >= 2, 'the stale client followed to the new generation');
      const retired = [...byRing].find(([label]) => /^cpu0 .*\(1 pages, retired\)$/.test(label));
      const live = [...byRing].find(([label]) => /^cpu0 pid \d+$/.test(label));
      assert.ok(retired && retired[1].length > 0, `the retired 1-page ring of cpu0 is in the snapshot: ${[...byRing.keys()].join(', ')}`);
      assert.ok(live && live[1].length > 0, 'the grown ring of cpu0 is in the snapshot');
      assert.equal(Math.max(...retired[1]) + 1, Math.min(...live[1]), "the grown ring starts with the call after the retired ring's last");
      const both = [...retired[1], ...live[1]];
      assert.equal(new Set(both).size, both.length, 'no record in both rings');

      // The CLI reads the new generation too, says why the rings grew, and lists the retired rings.
      const during = path.join(dir, 'during.data');
      const snap = ringside(['snapshot', String(keeper!.pid), '-o', during]);
      assert.equal(snap.status, 0, snap.stderr);
      assert.match(snap.stderr, /rings resized from 1 to \d+ pages/);
      const retiredLine = /cpu0 pid \d+ \(1 pages, retired\)\s+\S+\s+(\d+) records/.exec(snap.stderr);
      assert.ok(retiredLine && Number(retiredLine[1]) > 0, `the CLI snapshot holds the retired ring's records: ${snap.stderr}`);
      const seqs = perfScriptRecords(during).numbered.map((record) => record.seq);
      assert.equal(new Set(seqs).size, seqs.length, 'perf script: no record twice across the swap');
      const listed = JSON.parse(ringside(['list', '--json']).stdout) as {
        pid: number;
        rings: { label: string; retired?: { oldestNs?: string; newestNs?: string; cutAtNs?: string } }[];
      }[];
      const mine = listed.find((entry) => entry.pid === keeper!.pid)!;
      // cutAtNs: where the grown ring took over (absent when nothing reached it while both recorded).
      const held = mine.rings.filter((ring) => ring.retired?.oldestNs);
      assert.ok(
        held.length > 0 &&
          held.every(
            (ring) =>
              BigInt(ring.retired!.oldestNs!) <= BigInt(ring.retired!.newestNs!) &&
              (ring.retired!.cutAtNs === undefined || BigInt(ring.retired!.newestNs!) < BigInt(ring.retired!.cutAtNs)),
          ),
        `list names the retired rings and the times they hold: ${JSON.stringify(mine.rings)}`,
      );
      assert.match(ringside(['list']).stdout, /\(1 pages, retired\) backward 4 KiB, retired, holds [\d.]+ to [\d.]+/);
    } finally {
      stale.dispose();
      busy.dispose();
    }
    await stop();
  });

  it('closes retired rings once no client holds a lease: /proc/KEEPER/fd goes back to the published rings', async () => {
    // A 0.5 s window: the retired rings are older than the window half a second after the swap.
    startKeeper(['-e', 'syscalls:sys_enter_close', '--pages', '1', '--window', '0.5', '--', 'taskset', '-c', '0', fixture('kernel_paced'), '24000', '6000']);
    const first = await stateWhen('the first state file', () => true);
    const pid = keeper!.pid!;
    // A client's lease (this process, alive): the keeper must not close a ring it may be reading.
    takePauseLease(pid, process.pid, stateDir());
    try {
      const grown = await stateWhen('a resize', resized);
      assert.ok(grown.rings.some((ring) => ring.retired));
      // One perf fd per published ring, retired ones included, and those already withdrawn (a retired
      // ring that holds no sample is withdrawn at the next scan) but kept open under the lease.
      assert.ok(perfFdsOf(pid) >= grown.rings.length);
      const withdrawn = await stateWhen(
        'the retired rings withdrawn',
        (state) => (state.generation ?? 0) > grown.generation! && !state.rings.some((ring) => ring.retired),
      );
      assert.ok(withdrawn.generation! > grown.generation!, 'the state file generation increments with each change');
      // Withdrawn from the file, still open while the lease is out (two lease scans later too).
      await sleep(600);
      const now = readKeeperState(keeperStatePath(pid, stateDir()));
      assert.ok(!now.rings.some((ring) => ring.retired));
      assert.ok(perfFdsOf(pid) > now.rings.length, 'the retired rings stay open under the lease');
    } finally {
      releasePauseLease(pid, process.pid, stateDir());
    }
    const published = readKeeperState(keeperStatePath(pid, stateDir())).rings.length;
    for (const deadline = Date.now() + 1500; perfFdsOf(pid) !== published && Date.now() < deadline;) await sleep(50);
    assert.equal(perfFdsOf(pid), published, 'the retired rings were closed within a second of the lease going');
    const mappings = readFileSync(`/proc/${pid}/maps`, 'utf8')
      .split('\n')
      .filter((line) => line.includes('[perf_event]')).length;
    assert.equal(mappings, published, 'and unmapped');
    assert.equal(first.generation, 0);
    await stop();
  });
});
