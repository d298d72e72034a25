// What the editor's line and the CLI's summary show of a logpoint (native/decode/logpoint-tally.ts): the hits, each
// variable's last value and its distinct values with their counts. The host reads a snapshot's hits as columns of text
// ids (SnapshotSymbols.logpointColumns, read in place by sampleUserState) and the tally counts ids; here, on real hits
// of test/fixtures/logpoint_values.c recorded through the uprobe at -O0 and -O2 (a loop line, an inlined leaf's line
// with its red zone), that tally equals the one made from every record as decodeRecordAt gives it (the values gdb
// referees in logpoint-gdb.test.ts), down to the order of the variables and of their distinct values.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Recorder } from '../../native/perf/recorder';
import { resolveEventSpec } from '../../native/specs/resolve';
import { lazyTargetSymbols } from '../../native/symbols/target';
import { decodeSnapshot } from '../../native/decode/columns';
import { DISTINCT_SHOWN, describeLogpointTally, logpointInlineText, tallyLogpoints, type LogpointTally } from '../../native/decode/logpoint-tally';
import { decodeRecordAt, sampleUserState, type RegsBlock } from '../../native/decode/record';
import { RecordType } from '../../native/abi/uapi';
import { isLogpointSpec } from '../../native/specs/parse';
import { SnapshotSymbols } from '../../host/snapshot-symbols';
import { fixture, ROOT } from './helpers';

function markedLine(mark: string): number {
  const index = readFileSync(path.join(ROOT, 'test/fixtures/logpoint_values.c'), 'utf8')
    .split('\n')
    .findIndex((text) => text.includes(`// ${mark}`));
  assert.ok(index >= 0, `${mark} is marked`);
  return index + 1;
}

/** A tally with its Maps as entry lists, so that the order of variables and of distinct values is compared too. */
function ordered(tally: LogpointTally): unknown {
  return {
    ...tally,
    variables: [...tally.variables].map(([name, variable]) => [
      name,
      variable.last,
      variable.distinctCount,
      variable.distinct(),
      variable.distinct(DISTINCT_SHOWN),
    ]),
    notCaptured: [...tally.notCaptured],
  };
}

describe('logpoints: the tally read as columns equals the tally of every record', function () {
  this.timeout(120_000);
  before(function () {
    assert.equal(process.getuid?.(), 0, 'uprobes need CAP_PERFMON; the refusal is tested as uid 65534 (test/unprivileged)');
  });

  // 12 rounds, and 1000 whose counters (i, total, span, pt, hist, scale, code) take a new value at every hit, as in a
  // real snapshot: the columns count those by their bytes and write only the texts shown.
  for (const optimization of ['O0', 'O2'])
    for (const [mark, names, rounds] of [
      ['LOG-LOOP', '', 12],
      ['LOG-LOOP', ':total,i,no_such_name,span,label,i', 12],
      ['LOG-INLINE', '', 12],
      ['LOG-LOOP', '', 1000],
      ['LOG-LOOP', ':total,i,no_such_name,span,label,i', 1000],
    ] as const)
      it(`-${optimization}, ${mark}${names}, ${rounds} rounds`, async () => {
        const binary = fixture(`logpoint_values_${optimization}`);
        const symbols = lazyTargetSymbols({ executable: binary })!.symbols;
        const event = resolveEventSpec(`log:logpoint_values.c:${markedLine(mark)}${names}`, { symbols });
        const recorder = await Recorder.open({
          events: [event],
          target: { kind: 'launch', argv: [binary, String(rounds)], stdio: 'ignore' },
          pages: rounds > 12 ? 4096 : 64,
        });
        try {
          await recorder.exited;
          const decoded = decodeSnapshot(recorder.snapshot());
          const host = new SnapshotSymbols();
          host.learn(decoded, recorder.processesNow());
          const sampleValues = host.sampleValues.bind(host);
          const byRecords = tallyLogpoints({ ...decoded, sampleValues }, isLogpointSpec);
          const byColumns = tallyLogpoints({ ...decoded, sampleValues, logpointColumns: host.logpointColumns.bind(host) }, isLogpointSpec);
          assert.equal(byRecords.length, 1);
          assert.equal(byRecords[0].hits, rounds, 'one hit per round');
          assert.equal(byRecords[0].error, undefined);
          assert.ok(byRecords[0].variables.size >= 4, `values read: ${[...byRecords[0].variables.keys()].join(', ')}`);
          assert.deepEqual(byColumns.map(ordered), byRecords.map(ordered));
          // What the summary and the line print, to the character.
          assert.deepEqual(byColumns.map(describeLogpointTally), byRecords.map(describeLogpointTally));
          assert.deepEqual(
            byColumns.map((tally) => logpointInlineText(tally)),
            byRecords.map((tally) => logpointInlineText(tally)),
          );
          if (rounds > 12 && mark === 'LOG-LOOP') assert.equal(byColumns[0].variables.get('i')?.distinctCount, rounds, 'i takes a new value at every hit');
          // What the host read each hit from, in place, is what the record decoder gives.
          for (let row = 0; row < decoded.columns.length; row++) {
            if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
            const record = decodeRecordAt(decoded, row);
            const fields = record.fields as { regsUser: RegsBlock; stackUser: { data: Uint8Array; dynSize: bigint }; raw?: Uint8Array };
            const state = sampleUserState(decoded, row)!;
            assert.equal(state.pid, record.pid);
            assert.deepEqual(state.registers, fields.regsUser.regs);
            assert.deepEqual(state.stack, fields.stackUser.data.subarray(0, Number(fields.stackUser.dynSize)));
            assert.deepEqual(state.raw, fields.raw);
          }
        } finally {
          recorder.dispose();
        }
      });
});
