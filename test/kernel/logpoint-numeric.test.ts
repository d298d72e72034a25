// The numeric DWARF machine that reads logpoint values hit after hit (native/symbols/dwarf-expression-numeric.ts),
// against the BigInt machine it stands in for, on real hits: test/fixtures/logpoint_values.c's logged lines at -O0 and
// -O2 (registers, stack slots, location lists, pieces, a RELRO table, the red zone, an inlined copy) recorded through
// the uprobe, every hit read by both, every value's text equal. gdb referees the values themselves
// (logpoint-gdb.test.ts); this checks that the fast path is the same reading, also where gdb's run and ours differ.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Recorder } from '../../native/perf/recorder';
import { resolveEventSpec } from '../../native/specs/resolve';
import { lazyTargetSymbols } from '../../native/symbols/target';
import { predictedLoadBase } from '../../native/symbols/resolve';
import { openObjectFile } from '../../native/symbols/object-file';
import { LogpointEvaluator, RED_ZONE_NOT_CAPTURED, withRedZone, type LogpointHit } from '../../native/symbols/logpoint-values';
import { LogpointColumns } from '../../native/symbols/logpoint-columns';
import { decodeSnapshot } from '../../native/decode/columns';
import { decodeRecordAt, type RegsBlock } from '../../native/decode/record';
import { RecordType } from '../../native/abi/uapi';
import { fixture, ROOT } from './helpers';

function markedLine(mark: string): number {
  const index = readFileSync(path.join(ROOT, 'test/fixtures/logpoint_values.c'), 'utf8')
    .split('\n')
    .findIndex((text) => text.includes(`// ${mark}`));
  assert.ok(index >= 0, `${mark} is marked`);
  return index + 1;
}

/** Each hit as the host reads it (with the red zone its uprobe fetched, as root) and as its stack sample alone holds it. */
async function recordHits(binary: string, line: number): Promise<{ withRedZone: LogpointHit; stackOnly: LogpointHit }[]> {
  const symbols = lazyTargetSymbols({ executable: binary })!.symbols;
  const event = resolveEventSpec(`log:logpoint_values.c:${line}`, { symbols });
  const recorder = await Recorder.open({ events: [event], target: { kind: 'launch', argv: [binary, '12'], stdio: 'ignore' }, pages: 64, sideband: false });
  try {
    await recorder.exited;
    const decoded = decodeSnapshot(recorder.snapshot());
    const hits: { withRedZone: LogpointHit; stackOnly: LogpointHit }[] = [];
    for (let row = 0; row < decoded.columns.length; row++) {
      if (decoded.columns.kind[row] !== RecordType.SAMPLE) continue;
      const record = decodeRecordAt(decoded, row);
      const fields = record.fields as { regsUser: RegsBlock; stackUser: { data: Uint8Array; dynSize: bigint }; raw?: Uint8Array };
      const stackOnly = { pid: record.pid!, registers: fields.regsUser.regs, stack: fields.stackUser.data.subarray(0, Number(fields.stackUser.dynSize)) };
      hits.push({ stackOnly, withRedZone: withRedZone(stackOnly, fields.raw) });
    }
    return hits;
  } finally {
    recorder.dispose();
  }
}

describe('logpoints: the numeric machine reads every recorded hit as the BigInt machine does', function () {
  this.timeout(120_000);
  before(function () {
    assert.equal(process.getuid?.(), 0, 'uprobes need CAP_PERFMON; the refusal is tested as uid 65534 (test/unprivileged)');
  });

  for (const optimization of ['O0', 'O2'])
    for (const mark of ['LOG-LOOP', 'LOG-INLINE'])
      it(`-${optimization}, ${mark}: every value of every hit, all in scope and named, the same text`, async () => {
        const binary = fixture(`logpoint_values_${optimization}`);
        const hits = await recordHits(binary, markedLine(mark));
        assert.equal(hits.length, 12, 'one hit per round');
        const object = openObjectFile(binary);
        const base = predictedLoadBase(binary);
        const locate = (_pid: number, ip: bigint) => ({ object, vaddr: ip - base });
        const fast = new LogpointEvaluator(locate);
        // The same fast reading into columns (what a tally reads), by an evaluator of its own so that its kept texts are
        // first written there, and into a second set of columns on the second pass (ids are per set).
        const columnar = new LogpointEvaluator(locate);
        // The BigInt machine, every text written at every hit: the reference for the numeric machine and the text cache.
        const reference = new LogpointEvaluator(locate, undefined, false, false);
        let compared = 0;
        for (const names of [undefined, ['total', 'i', 'no_such_name', 'span', 'label']]) {
          // Twice: the second pass takes every value whose text was kept for its bytes from the kept text.
          for (const pass of [1, 2]) {
            const columns = new LogpointColumns();
            for (const hit of hits.flatMap((h) => [h.withRedZone, h.stackOnly])) {
              const got = fast.evaluate(hit, names);
              const want = reference.evaluate(hit, names);
              assert.equal(got.error, undefined);
              assert.deepEqual({ ...got.values }, { ...want.values });
              assert.equal(got.function, want.function);
              assert.deepEqual(got.readLater, want.readLater);
              assert.deepEqual(got.notCaptured, want.notCaptured);
              compared += Object.keys(got.values).length;
              const row = columnar.evaluateInto(hit, names, columns);
              const where = `pass ${pass}, row ${row}`;
              assert.equal(columns.errors.get(row), undefined, where);
              // Same names in the same order, same texts.
              assert.deepEqual(Object.entries(columns.valuesOf(row)), Object.entries(want.values), where);
              assert.equal(columns.functions[row] < 0 ? undefined : columns.textOf(columns.functions[row]), want.function, where);
              assert.deepEqual(columns.readLater.get(row), want.readLater, where);
              assert.deepEqual(columns.notCaptured.get(row), want.notCaptured, where);
            }
            // Each distinct text once in a column whose ids are counted as its distinct values (kept by text or by bytes).
            columns.columns.forEach((ids, column) => {
              const seen = [...new Set(ids.subarray(0, columns.length))].filter((id) => id !== -1);
              if (columns.sameIdSameText(column)) assert.equal(new Set(seen.map((id) => columns.textOf(id))).size, seen.length, columns.names[column]);
            });
          }
        }
        assert.ok(compared >= hits.length * 12, `compared ${compared} values`);
      });

  it("a hit at the last hit's pid and pc takes its plan without asking the locator again, until forgetLocations()", async () => {
    const binary = fixture('logpoint_values_O2');
    const hits = await recordHits(binary, markedLine('LOG-LOOP'));
    assert.equal(hits.length, 12, 'one hit per round');
    const object = openObjectFile(binary);
    const base = predictedLoadBase(binary);
    let asked = 0;
    let mapped = true;
    const evaluator = new LogpointEvaluator((_pid, ip) => {
      asked++;
      return mapped ? { object, vaddr: ip - base } : undefined;
    });
    const reference = new LogpointEvaluator((_pid, ip) => ({ object, vaddr: ip - base }), undefined, false, false);
    for (const { stackOnly } of hits) assert.deepEqual({ ...evaluator.evaluate(stackOnly).values }, { ...reference.evaluate(stackOnly).values });
    assert.equal(asked, 1, 'twelve hits at one pc of one process: located once');
    // The locator's answer changes (the mapping went away, as a new snapshot's side band may say): the evaluator is told.
    mapped = false;
    evaluator.forgetLocations();
    const after = evaluator.evaluate(hits[0].stackOnly);
    assert.equal(asked, 2);
    assert.match(after.error ?? '', /^no mapped object with symbols at 0x[0-9a-f]+$/);
    assert.deepEqual(after.values, {});
  });

  it("-O0, LOG-INLINE: a leaf function's locals in the red zone are read from the bytes the uprobe fetched, and without them say why not", async () => {
    const binary = fixture('logpoint_values_O0');
    const hits = await recordHits(binary, markedLine('LOG-INLINE'));
    assert.equal(hits.length, 12, 'one hit per round');
    const object = openObjectFile(binary);
    const base = predictedLoadBase(binary);
    const evaluator = new LogpointEvaluator((_pid, ip) => ({ object, vaddr: ip - base }));
    const locals = ['a', 'b', 'product', 'folded'];
    hits.forEach((hit, k) => {
      assert.notEqual(hit.withRedZone.stackStart, undefined, `hit ${k}: the uprobe fetched the red zone (root defines it in tracefs)`);
      const read = evaluator.evaluate(hit.withRedZone);
      // mix(i, i % 4) at round i: the fixture's arithmetic.
      const [a, b] = [k, k % 4];
      assert.deepEqual({ ...read.values }, { a: String(a), b: String(b), product: String(a * b), folded: String((a * b) ^ (a + b)) }, `hit ${k}`);
      assert.equal(read.notCaptured, undefined);
      const alone = evaluator.evaluate(hit.stackOnly);
      for (const name of locals) assert.equal(alone.values[name], '<not captured>', `hit ${k}: ${name} without the red zone`);
      assert.deepEqual(alone.notCaptured, Object.fromEntries(locals.map((name) => [name, RED_ZONE_NOT_CAPTURED])), `hit ${k}: why, per name`);
    });
  });
});
