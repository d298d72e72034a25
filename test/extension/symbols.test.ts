// The extension's sessions name callchain frames as perf does: a perf.data recorded by `perf record -g`
// on a binary with known functions, opened through the SessionManager (as "Open perf.data" does), and
// every sample's frames as the panel's details reply carries them, against `perf script` on the same file.
// Opening a big file: its capture equals the file decoded whole, its first records reach the panel while the rest is
// read, and a Cancel stops its read at once.
import * as assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureName, OpenCancelled, SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import type { Backend, PerfDataStage } from '../../extension/session/ports';
import { rowDetails, snapshotToWire } from '../../host/wire';
import { SnapshotStreamer } from '../../extension/panel/streamer';
import type { HostToWebview } from '../../shared/protocol';
import { decodeSnapshot } from '../../native/decode/columns';
import type { DecodedSnapshot } from '../../native/decode/types';
import { readPerfData } from '../../native/perfdata/reader';
import { PerfDataError } from '../../native/perfdata/format';
import { openFdCount, waitFor } from './helpers';
import { RecordType } from '../../native/abi/uapi';
import { fixture, perfRecord, perfScript, tempDir } from '../perfdata/perf-tools';

function coreOnly(): Backend {
  return {
    ...createCoreBackend(),
    resolveEvents: async () => {
      throw new Error('not used here');
    },
    record: async () => {
      throw new Error('not used here');
    },
  };
}

/** perf script's callchains, one line per sample: frame names joined by ' ← '. */
function perfChains(file: string): string[] {
  const { lines } = perfScript(file, ['-F', 'tid,ip,sym,symoff']);
  const chains: string[] = [];
  let current: string[] | undefined;
  for (const line of lines) {
    if (!line.startsWith('\t')) {
      if (current) chains.push(current.join(' ← '));
      current = [];
      continue;
    }
    const name = line.trim().split(/\s+/).slice(1).join(' ');
    current!.push(name);
  }
  if (current) chains.push(current.join(' ← '));
  return chains;
}

describe('extension: callchain frames of an opened perf.data are named as perf script names them', function () {
  this.timeout(120000);
  let dir = '';
  before(() => {
    dir = tempDir();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every frame of every sample, user and kernel', async () => {
    const file = path.join(dir, 'g.data');
    perfRecord(file, ['-g', '-e', 'task-clock', '-c', '500000'], [fixture('pd_work'), '1', '40000000']);
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const session = await manager.openPerfData(file);
      const entry = session.snapshots[0];
      // The timeline names the capture by its file; a live snapshot by its session and clock time.
      assert.equal(captureName(session, entry), 'g.data');
      assert.equal(captureName({ kind: 'recording', label: 'pd_work 1 (pid 42): task-clock' }, entry), `pd_work 1 (pid 42): task-clock · ${entry.name}`);
      const ours: string[] = [];
      const { kind } = entry.decoded.columns;
      for (let row = 0; row < entry.decoded.columns.length; row++) {
        if (kind[row] !== RecordType.SAMPLE) continue;
        const details = rowDetails(entry.decoded, row, entry.symbols);
        // What the panel shows, with perf's spelling for a frame without a name.
        ours.push((details.callchain ?? []).map((frame) => (frame.symbol !== undefined ? details.symbols![frame.symbol] : '[unknown]')).join(' ← '));
      }
      const theirs = perfChains(file);
      assert.ok(theirs.length > 20, `${theirs.length} samples`);
      assert.ok(
        theirs.some((chain) => /^pd_inner\+0x[0-9a-f]+ ← pd_outer\+0x[0-9a-f]+ ← main\+0x/.test(chain)),
        'the fixture spins in pd_inner ← pd_outer ← main',
      );
      assert.deepEqual([...ours].sort(), [...theirs].sort());
    } finally {
      await manager.dispose();
    }
  });
});

/**
 * A copy of a perf.data file whose first SAMPLE record (in the first round) is moved to just after the first
 * FINISHED_ROUND past 1.5 MiB of records (and the fourth): rounds late, as a side-band record read late is in a real
 * file. perf_file_header: data.offset at byte 40, data.size at 48; a record is u32 type, u16 misc, u16 size.
 */
function withFirstSampleMovedLate(bytes: Buffer): Buffer {
  const dataStart = Number(bytes.readBigUInt64LE(40));
  const dataEnd = dataStart + Number(bytes.readBigUInt64LE(48));
  let sample = -1;
  let rounds = 0;
  for (let at = dataStart; at < dataEnd; at += bytes.readUInt16LE(at + 6)) {
    const type = bytes.readUInt32LE(at);
    if (type === RecordType.SAMPLE && sample < 0 && rounds === 0) sample = at;
    // Past 1.5 MiB of records: the parts let go by then (about 512 KiB each) went to the page before the late one.
    if (type === 68 /* FINISHED_ROUND */ && ++rounds >= 4 && at - dataStart > 1.5 * 1024 * 1024) {
      assert.ok(sample >= 0, 'a sample in the first round');
      const size = bytes.readUInt16LE(sample + 6);
      const after = at + bytes.readUInt16LE(at + 6);
      const moved = Buffer.from(bytes);
      bytes.copy(moved, sample, sample + size, after); // the records between, moved up by its size
      bytes.copy(moved, after - size, sample, sample + size); // then the sample
      return moved;
    }
  }
  return assert.fail('the file has four rounds, 1.5 MiB in');
}

/** How many records perf script found out of order in `file` (its "N out of order events recorded" warning), or 0. */
function perfOutOfOrderEvents(file: string): number {
  const { stderr } = perfScript(file, ['-F', 'time']);
  return Number(/(\d+) out of order events recorded/.exec(stderr)?.[1] ?? 0);
}

// Open perf.data reads a big file a step at a time with the host's event loop free between steps, so a Cancel (a message,
// handled by that loop) stops the read at once; and what it keeps is what the file read and decoded at once gives.
describe('extension: Open perf.data of a big perf record -a -g file', function () {
  this.timeout(120000);
  let dir = '';
  let file = '';
  before(() => {
    dir = tempDir();
    // Every CPU with callchains, into rings of two pages: megabytes of records, and rings that overflow (LOST records).
    // A shell busy for 2 s keeps one CPU sampled at every period however quiet the machine is (with `sleep`, a quiet
    // machine gave a file too small to take two read steps).
    // perf's FINISHED_ROUND promise (a round's records are newer than what the round before last let go) does not
    // always hold: one of four such recordings here had a side-band record that came a round late, and perf script
    // then warns "N out of order events recorded". perf is asked, and these tests take a recording it finds in order
    // (the fall-back for one out of order is tested on a copy with a record moved late, below).
    for (let attempt = 1; attempt <= 6 && !file; attempt++) {
      const recorded = path.join(dir, `all-${attempt}.data`);
      perfRecord(
        recorded,
        ['-a', '-g', '-m', '2', '-e', 'cpu-clock', '-c', '20000'],
        ['sh', '-c', 'end=$(($(date +%s) + 2)); while [ "$(date +%s)" -lt "$end" ]; do :; done'],
      );
      if (perfOutOfOrderEvents(recorded) === 0) file = recorded;
    }
    assert.ok(file, 'one of 6 recordings was in order by perf script');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the capture the whole file read and decoded at once gives: rows, threads and losses', async () => {
    const imported = readPerfData(new Uint8Array(readFileSync(file)), file, { keepGoing: true });
    const whole = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const stages: PerfDataStage[] = [];
      const session = await manager.openPerfData(
        file,
        () => false,
        (stage) => stages.push(stage),
      );
      assert.deepEqual(stages, ['read', 'index', 'order', 'decode']);
      const opened = session.snapshots[0].decoded;
      assert.ok(whole.columns.length > 10000, `${whole.columns.length} records`);
      assert.equal(opened.columns.length, whole.columns.length, 'rows');
      assert.deepEqual(opened.rings[0].bytes, whole.rings[0].bytes, 'the records, in the same order');
      for (const [name, column] of Object.entries(whole.columns)) {
        assert.deepEqual((opened.columns as unknown as Record<string, unknown>)[name], column, `column ${name}`);
      }
      const wire = (decoded: DecodedSnapshot) => snapshotToWire(decoded, { snapshotId: 's', name: 'all.data', takenAtMs: 0 }).start;
      const [ours, theirs] = [wire(opened), wire(whole)];
      assert.ok(theirs.threads.length > 1, `${theirs.threads.length} threads`);
      assert.deepEqual(ours.threads, theirs.threads, 'threads');
      assert.ok((theirs.losses ?? []).length > 0, 'two-page rings of every CPU lost records');
      assert.deepEqual(ours.losses, theirs.losses, 'losses');
      assert.deepEqual(opened.anomalies, whole.anomalies, 'anomalies');
    } finally {
      await manager.dispose();
    }
  });

  // The editor path as the panel has it, the page answered as it answers: the first records of the file reach the page
  // while the file is still being read (counted in read steps, not timed), and the page's rows, part after part, are
  // the rows of the capture the open keeps, so only the names follow them.
  it('posts the first part of the file to the page before the file is read, and its parts are the capture the open keeps', async () => {
    const manager = new SessionManager({ backend: coreOnly() });
    const events: string[] = [];
    const sent: HostToWebview[] = [];
    let acknowledged = 0;
    const streamer = new SnapshotStreamer((message) => {
      sent.push(message);
      if (message.type !== 'liveAppend') return;
      events.push(`part ${message.seq}`);
      // The page acknowledges each part as it holds it (app.ts receiveLive), later, as a message does.
      setImmediate(() => {
        acknowledged++;
        streamer.onLiveAck(message.snapshotId, message.seq);
      });
    });
    streamer.onReady();
    const parts: DecodedSnapshot[] = [];
    let partsId = '';
    try {
      let stage: PerfDataStage | undefined;
      const session = await manager.openPerfData(
        file,
        () => {
          events.push(stage ?? 'start');
          return false;
        },
        (next) => (stage = next),
        (part, snapshotId) => {
          parts.push(part);
          partsId = snapshotId;
          streamer.grow(snapshotId, 'all.data', part);
        },
      );
      const reads = events.filter((event) => event === 'read').length;
      const firstPart = events.indexOf('part 0');
      assert.ok(firstPart >= 0, 'a part was posted');
      const readsBefore = events.slice(0, firstPart).filter((event) => event === 'read').length;
      assert.ok(reads >= 4, `${reads} read steps`);
      assert.ok(readsBefore < reads, `the first part was posted after ${readsBefore} of the ${reads} read steps`);
      assert.ok(parts.length >= 2, `${parts.length} parts`);

      const entry = session.snapshots[0];
      assert.equal(entry.id, partsId, "the capture is the parts' (perf's rounds let them go in time order)");
      const joined = Buffer.concat(parts.map((part) => part.rings[0].bytes));
      assert.deepEqual(new Uint8Array(joined), entry.decoded.rings[0].bytes, 'the parts, joined, are its records in its order');
      assert.equal(
        parts.reduce((n, part) => n + part.columns.length, 0),
        entry.recordCount,
        'as many rows',
      );
      const appended = sent.filter((message) => message.type === 'liveAppend');
      assert.ok(appended.every((message) => message.opening === true && message.part.namesFollow === true));

      // The snapshot added with the parts' id: nothing of its records goes again, its names follow.
      await waitFor('every part acknowledged', () => acknowledged === parts.length);
      const before = sent.length;
      streamer.onPainted(entry.id);
      const { named } = streamer.add(entry.id, 'all.data', entry.takenAtMs, entry.decoded, entry.symbols);
      assert.ok(await named, 'named');
      await waitFor('the names sent', () => streamer.idle);
      const after = sent.slice(before).map((message) => message.type);
      assert.deepEqual(after, ['snapshotSymbols']);
    } finally {
      await manager.dispose();
    }
  });

  // A file whose rounds are out of order: what was let go early is not the start of the time order, so the capture the
  // open keeps is the whole file's, under an id of its own (the page drops the parts). The in-order recording with its
  // first sample moved 1.5 MiB on, past a FINISHED_ROUND, so it comes rounds late, as perf script says it does.
  it('keeps the whole-file capture, not the parts, when the rounds are out of order (perf says so too)', async () => {
    const late = path.join(dir, 'late.data');
    writeFileSync(late, withFirstSampleMovedLate(readFileSync(file)), { mode: 0o600, flag: 'wx' });
    assert.ok(perfOutOfOrderEvents(late) > 0, 'perf script finds the moved sample out of order');
    const manager = new SessionManager({ backend: coreOnly() });
    let partsId = '';
    try {
      const session = await manager.openPerfData(
        late,
        () => false,
        () => undefined,
        (_part, snapshotId) => (partsId = snapshotId),
      );
      const entry = session.snapshots[0];
      assert.ok(partsId, 'parts went out before the late record was met');
      assert.notEqual(entry.id, partsId, 'the parts were not the capture: its id is not theirs');
      const imported = readPerfData(new Uint8Array(readFileSync(late)), late, { keepGoing: true });
      const whole = decodeSnapshot({ events: imported.events, rings: imported.rings, takenAtMs: 0, pauseWindowNs: [] });
      assert.deepEqual(entry.decoded.rings[0].bytes, whole.rings[0].bytes, 'the records of the whole file, in its time order');
    } finally {
      await manager.dispose();
    }
  });

  // The Cancel comes as a timer set when a stage begins: it runs only if the event loop is free during that stage.
  for (const cancelIn of ['read', 'index', 'order'] as const) {
    it(`a Cancel during the ${cancelIn} stage stops it at its next step: no decode, nothing kept, and the file opens again`, async () => {
      const manager = new SessionManager({ backend: coreOnly() });
      try {
        // How many steps that stage takes in a whole open.
        let stage: PerfDataStage | undefined;
        let stepsOfStage = 0;
        await manager.openPerfData(
          file,
          () => {
            if (stage === cancelIn) stepsOfStage++;
            return false;
          },
          (next) => (stage = next),
        );
        await manager.remove(manager.list()[0].id);
        assert.ok(stepsOfStage >= 2, `${stepsOfStage} steps of ${cancelIn}`);

        const fdsBefore = openFdCount();
        const stages: PerfDataStage[] = [];
        let clicked = false;
        let stepsBeforeCancel = 0;
        let askedAfterCancel = 0;
        await assert.rejects(
          manager.openPerfData(
            file,
            () => {
              if (clicked) askedAfterCancel++;
              else if (stages.at(-1) === cancelIn) stepsBeforeCancel++;
              return clicked;
            },
            (next) => {
              stages.push(next);
              if (next === cancelIn) setTimeout(() => (clicked = true), 0);
            },
          ),
          (error: unknown) => error instanceof OpenCancelled && error.file === file && /cancelled/.test(error.message),
        );
        assert.ok(clicked, `the Cancel ran during ${cancelIn}`);
        assert.equal(askedAfterCancel, 1, 'the first step after the Cancel stopped the open');
        const all: PerfDataStage[] = ['read', 'index', 'order', 'decode'];
        assert.deepEqual(stages, all.slice(0, all.indexOf(cancelIn) + 1), 'stopped in that stage, before the decode');
        assert.ok(stepsBeforeCancel < stepsOfStage, `stopped after ${stepsBeforeCancel} of ${stepsOfStage} steps`);
        assert.deepEqual(manager.list(), [], 'no session for a cancelled open');
        await waitFor('the file closed', () => openFdCount() === fdsBefore);

        const opened = await manager.openPerfData(file, () => false);
        assert.equal(manager.list().length, 1);
        assert.ok(opened.snapshots[0].recordCount > 0);
      } finally {
        await manager.dispose();
      }
    });
  }

  it('a Cancel once its first part is on the page stops the read at its next step: nothing kept, no fd left', async () => {
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const fdsBefore = openFdCount();
      const stages: PerfDataStage[] = [];
      let clicked = false;
      let askedAfterCancel = 0;
      let parts = 0;
      await assert.rejects(
        manager.openPerfData(
          file,
          () => {
            if (clicked) askedAfterCancel++;
            return clicked;
          },
          (next) => stages.push(next),
          () => {
            parts++;
            // The user sees the first records and cancels: the Cancel is a message, served between two steps.
            if (parts === 1) setTimeout(() => (clicked = true), 0);
          },
        ),
        (error: unknown) => error instanceof OpenCancelled,
      );
      assert.ok(clicked, 'the Cancel ran');
      assert.equal(askedAfterCancel, 1, 'the first step after the Cancel stopped the open');
      assert.equal(stages.at(-1), 'read', 'stopped while the file was read, where its first part was told');
      assert.deepEqual(manager.list(), []);
      await waitFor('the file closed', () => openFdCount() === fdsBefore);
    } finally {
      await manager.dispose();
    }
  });

  it('a file that cannot be read is a PerfDataError naming it and why, and nothing is kept', async () => {
    const manager = new SessionManager({ backend: coreOnly() });
    try {
      const missing = path.join(dir, 'missing.data');
      await assert.rejects(
        manager.openPerfData(missing, () => false),
        (error: unknown) => error instanceof PerfDataError && error.message.includes(missing) && /ENOENT/.test(error.message),
      );
      assert.deepEqual(manager.list(), []);
    } finally {
      await manager.dispose();
    }
  });
});
