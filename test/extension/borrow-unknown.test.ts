// Attach to another process's ring whose attr is nowhere to be read: the fixture opens task-clock
// on itself and maps a backward ring, but writes no perf.data header. Borrowing must ASK which
// event it is (the port the extension fills with a QuickPick), then decode with the answer's
// sample layout — or as raw records — on the real kernel.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import { borrowForeignRingAsking, RAW_RECORDS_CHOICE, type UnknownEventQuestion } from '../../native/attach/foreign';
import { AttachCancelledError, AttachError } from '../../native/perf/borrowed';
import type { Backend } from '../../extension/session/ports';
import { resolveEventSpec } from '../../native/specs/resolve';
import { RecordType } from '../../native/abi/uapi';
import { fixture, ownPerfFds, ownPerfMappings, waitFor } from './helpers';

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

describe('extension: borrowing a ring whose event is unknown asks which event it is', function () {
  this.timeout(60000);
  let owner: ChildProcess | undefined;
  let ownerFd = -1;

  beforeEach(async () => {
    owner = spawn(fixture('ext_perf_ring'), ['1500'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    owner.stdout!.on('data', (chunk) => {
      out += String(chunk);
    });
    const ready = await waitFor('the fixture to open its ring', () => /ready (\d+) (\d+)/.exec(out) ?? undefined);
    ownerFd = Number(ready[1]);
    assert.equal(Number(ready[2]), 16);
  });
  afterEach(async () => {
    if (owner && owner.exitCode === null && owner.signalCode === null) {
      const exited = new Promise((resolve) => owner!.once('exit', resolve));
      owner.kill('SIGKILL');
      await exited;
    }
    owner = undefined;
  });

  it("asks, decodes the answer's layout (samples of the owner), and leaks nothing", async () => {
    await new Promise((resolve) => setTimeout(resolve, 800)); // let the owner's ring fill
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    const questions: UnknownEventQuestion[] = [];
    const info = await borrowForeignRingAsking(owner!.pid!, ownerFd, {
      ask: async (question) => {
        questions.push(question);
        return { kind: 'spec', spec: 'task-clock' };
      },
      resolveSpec: (spec) => resolveEventSpec(spec),
    });
    assert.equal(questions.length, 1, 'asked exactly once');
    const question = questions[0];
    assert.equal(question.pid, owner!.pid);
    assert.equal(question.fd, ownerFd);
    assert.equal(question.comm, 'ext_perf_ring');
    assert.deepEqual(question.pages, [16]);
    assert.equal(question.sampleId, info.sampleId);
    assert.match(question.why, /no perf\.data header/);
    assert.deepEqual(question.choices[0], RAW_RECORDS_CHOICE);
    assert.ok(
      question.choices.some((choice) => choice.answer.kind === 'spec' && choice.answer.spec === 'task-clock'),
      'software events are offered',
    );
    assert.ok(
      question.choices.some((choice) => choice.group === 'Tracepoints'),
      'tracepoints are offered',
    );

    assert.equal(info.attrOrigin, 'answer');
    assert.equal(info.direction, 'backward', 'direction comes from the ring head, not the answer');
    assert.equal(info.pages, 16);
    assert.match(info.explanation, /You said it is task-clock/);
    assert.equal(info.source.events[0].name, 'task-clock');

    const manager = new SessionManager({ backend: coreOnly() });
    const session = manager.adopt('borrowed', `ext_perf_ring ${owner!.pid}`, info.source);
    assert.equal(ownPerfFds().length, before.fds + 1);
    const snapshot = await manager.snapshot(session.id);
    const { columns } = snapshot.decoded;
    let samples = 0;
    let ownerSamples = 0;
    for (let row = 0; row < columns.length; row++) {
      if (columns.kind[row] !== RecordType.SAMPLE) continue;
      samples++;
      if (columns.pid[row] === owner!.pid && columns.tid[row] === owner!.pid) ownerSamples++;
    }
    assert.ok(samples > 50, `expected the owner's task-clock samples, got ${samples} of ${columns.length} records`);
    assert.equal(ownerSamples, samples, "every sample decodes to the owner's pid/tid");
    assert.equal(snapshot.decoded.anomalies.filter((a) => a.kind !== 'truncated-oldest').length, 0, JSON.stringify(snapshot.decoded.anomalies.slice(0, 3)));

    await manager.stop(session.id);
    assert.equal(ownPerfFds().length, before.fds, 'borrowed fd closed on stop');
    assert.equal(ownPerfMappings(), before.maps, 'borrowed mapping unmapped on stop');
    assert.equal(owner!.exitCode, null, 'the owner still runs after we detached');
    await manager.dispose();
  });

  it('decodes as raw records when the user says so', async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const info = await borrowForeignRingAsking(owner!.pid!, ownerFd, {
      ask: async () => ({ kind: 'raw' }),
      resolveSpec: () => {
        throw new Error('no spec for raw');
      },
    });
    try {
      assert.equal(info.attrOrigin, 'raw');
      assert.equal(info.direction, 'backward');
      assert.match(info.explanation, /raw records/);
      assert.equal(info.source.events[0].attr.sampleType, 0);
      const copy = info.source.snapshot();
      assert.ok(copy.rings[0].validBytes > 0, 'the ring holds bytes');
      const decoded = await coreOnly().decode(copy);
      let samples = 0;
      for (let row = 0; row < decoded.columns.length; row++) if (decoded.columns.kind[row] === RecordType.SAMPLE) samples++;
      assert.ok(samples > 10, `raw records still split by header: ${samples} samples of ${decoded.columns.length}`);
    } finally {
      info.source.dispose();
    }
  });

  it('a cancelled question is a clear AttachError and leaves nothing open', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings() };
    await assert.rejects(
      borrowForeignRingAsking(owner!.pid!, ownerFd, {
        ask: async () => undefined,
        resolveSpec: (spec) => resolveEventSpec(spec),
        choices: () => [RAW_RECORDS_CHOICE],
      }),
      (error: unknown) => error instanceof AttachCancelledError && error instanceof AttachError && /cancelled/.test(error.message),
    );
    assert.equal(ownPerfFds().length, before.fds);
    assert.equal(ownPerfMappings(), before.maps);
  });
});
