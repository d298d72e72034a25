// `capture --window SEC`: rings that keep less history than asked are reopened larger while the
// target runs, and the swap loses and repeats nothing. The load numbers its records (close(100000 + i)
// for i = 0..N-1, see fixtures/kernel_paced.c), so perf script on the snapshot shows any gap or repeat.
import * as assert from 'node:assert/strict';
import { spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const cli = path.join(root, 'dist/cli.js');
const fixture = (name: string) => path.join(root, 'fixtures-bin', name);
const FIRST_FD = 100000;

/** The sequence numbers and times (s) of the load's sys_enter_close records in a perf.data, as perf script prints them. */
function numberedRecords(data: string): { seq: number; time: number }[] {
  const script = execFileSync('perf', ['script', '-i', data, '-F', 'time,trace'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 256 << 20,
  });
  return script.split('\n').flatMap((line) => {
    const match = /^\s*(\d+\.\d+):\s+fd: 0x([0-9a-f]+)/.exec(line);
    if (!match) return [];
    const seq = Number.parseInt(match[2], 16) - FIRST_FD;
    return seq >= 0 ? [{ seq, time: Number(match[1]) }] : [];
  });
}

describe('ringside capture --window (real kernel, perf script as referee)', function () {
  this.timeout(60000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-window-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const mode of ['gap-free', 'paused'] as const) {
    it(`a --pages 1 --window 2 recorder grows under load until it keeps 2 s, and the swap loses nothing (${mode})`, () => {
      const calls = 12000;
      const data = path.join(dir, 'grown.data');
      // Pinned to one CPU, so one ring holds the whole sequence and a gap can only be a lost record.
      const run = spawnSync(
        process.execPath,
        [
          cli,
          'capture',
          '-e',
          'syscalls:sys_enter_close',
          '--pages',
          '1',
          '--window',
          '2',
          ...(mode === 'paused' ? ['--no-gap-free'] : []),
          '-o',
          data,
          '--',
          'taskset',
          '-c',
          '0',
          fixture('kernel_paced'),
          String(calls),
          '3000',
        ],
        { encoding: 'utf8' },
      );
      assert.equal(run.status, 0, run.stderr);
      assert.match(
        run.stderr,
        /rings resized from 1 to \d+ pages in [\d.]+ ms \([\d.]+ s after the recording started\): cpu0 .* kept [\d.]+ s of history .*less than the 2 s window/,
      );
      // The old ring is in the snapshot, cut where the grown one took over. Its last records usually survive the cut and
      // the sequence checked below runs across the swap; when the swap took longer than the old page lasts (51 ms at
      // 345 KiB/s was seen in a quiet run), the grown ring already holds all of them and the cut leaves none.
      const retired = /cpu0 pid \d+ \(1 pages, retired\)\s+\S+\s+(\d+) records/.exec(run.stderr);
      assert.ok(retired, `the retired 1-page ring of cpu0 is in the snapshot: ${run.stderr}`);
      const records = numberedRecords(data);
      const seqs = records.map((record) => record.seq).sort((a, b) => a - b);
      assert.equal(new Set(seqs).size, seqs.length, 'no record twice: the overlap of old and new rings is dropped from the old copy');
      assert.equal(seqs[seqs.length - 1], calls - 1, 'the last call is there');
      const oldest = seqs[0];
      assert.equal(seqs.length, calls - oldest, `every call from #${oldest} on is there, across the swap: ${seqs.length} records`);
      const times = records.map((record) => record.time);
      const span = Math.max(...times) - Math.min(...times);
      assert.ok(span >= 2, `the snapshot covers ${span.toFixed(3)} s, at least the 2 s window`);
    });
  }
});
