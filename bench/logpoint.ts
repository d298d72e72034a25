// `node out/bench/logpoint.js [evaluations] [loop-iterations] [gdb-iterations]`: what a logpoint costs
// (loop-iterations 0: the host part only),
// each figure against a baseline measured in the same run.
//  1. On the host: reading the values of recorded hits (LogpointEvaluator over real samples of
//     test/fixtures/logpoint_values.c at -O2 and -O0, every variable in scope, two named ones, and each
//     kind of value alone: integers, a location list, DW_OP_piece, a struct, a fixed array, an enum, a
//     double, pointers, C strings), hits per second, against decoding the same sample records
//     (decodeRecordAt) without values, per CPU second. Every value of every hit is read and its text as gdb
//     prints it is there (a text already written for the same bytes is reused), timed two ways: into columns
//     (evaluateInto, one id per value, kept by its bytes where its text tells them apart and written when first asked,
//     what a tally of many hits reads; the bench then reads every id's text)
//     and as one record's values object (evaluate, what a record's details and an export line carry; the bench
//     reads every text of it), and all in scope once more into columns with every text written anew at every hit
//     (the cost of values never seen before). And what the editor's line and the CLI's summary do with a snapshot:
//     its hits read from the ring and tallied (hits, last and distinct values per variable), from columns the host
//     reads in place against the tally of every record decoded with its values, as it was made before.
//  2. In the target: the cost per hit on a tight loop (test/fixtures/logpoint_loop.c, which prints
//     its loop's own time): unprobed, `line:` (a uprobe that counts), `log:` (a uprobe sampling
//     registers + 8 KiB of stack), and gdb's `dprintf` on the same line. Per-hit cost is
//     (loop time probed - loop time unprobed) / iterations, and each is set against the unprobed loop.
// Needs root (uprobes), gdb, and the fixtures (node test/setup/prepare.mjs).

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Recorder } from '../native/perf/recorder';
import { resolveEventSpec } from '../native/specs/resolve';
import { lazyTargetSymbols } from '../native/symbols/target';
import { predictedLoadBase } from '../native/symbols/resolve';
import { openObjectFile, type ObjectFile } from '../native/symbols/object-file';
import { AT, TAG } from '../native/symbols/dwarf-info';
import { DwarfScopes } from '../native/symbols/dwarf-scopes';
import { LogpointEvaluator, type LogpointHit } from '../native/symbols/logpoint-values';
import { LogpointColumns } from '../native/symbols/logpoint-columns';
import { decodeSnapshot } from '../native/decode/columns';
import { decodeRecordAt } from '../native/decode/record';
import type { RegsBlock } from '../native/decode/record';
import { RecordType } from '../native/abi/uapi';
import type { DecodedSnapshot } from '../native/decode/types';
import { tallyLogpoints } from '../native/decode/logpoint-tally';
import { isLogpointSpec } from '../native/specs/parse';
import { SnapshotSymbols } from '../host/snapshot-symbols';
import { BenchUnavailableError, cpuNs, median, round, Table } from './stats';

const root = path.resolve(__dirname, '../..');
const fixture = (name: string) => {
  const file = path.join(root, 'fixtures-bin', name);
  if (!existsSync(file)) throw new BenchUnavailableError(`${file} is missing: run node test/setup/prepare.mjs`);
  return file;
};
const markedLine = (source: string, mark: string) =>
  readFileSync(path.join(root, 'test/fixtures', source), 'utf8')
    .split('\n')
    .findIndex((text) => text.includes(mark)) + 1;

/**
 * Records the hits of the fixture's loop line (`rounds` of them, in a ring of `pages`) and returns them with the decoded
 * snapshot's sample rows, and a tally of the snapshot as the editor's line makes it (from columns the host reads) and
 * as it was made before (from every record decoded with its values).
 */
async function recordHits(
  optimization: 'O0' | 'O2',
  rounds = 12,
  pages = 64,
): Promise<{ hits: LogpointHit[]; decodeOne: (index: number) => void; binary: string; tally: { columns: () => number; records: () => number } }> {
  const binary = fixture(`logpoint_values_${optimization}`);
  const symbols = lazyTargetSymbols({ executable: binary })!.symbols;
  const event = resolveEventSpec(`log:logpoint_values.c:${markedLine('logpoint_values.c', '// LOG-LOOP')}`, { symbols });
  const recorder = await Recorder.open({ events: [event], target: { kind: 'launch', argv: [binary, String(rounds)], stdio: 'ignore' }, pages });
  try {
    await recorder.exited;
    const decoded = decodeSnapshot(recorder.snapshot());
    const host = new SnapshotSymbols();
    host.learn(decoded, recorder.processesNow());
    const sampleValues = host.sampleValues.bind(host);
    const byRecords = { ...decoded, sampleValues };
    const byColumns = { ...byRecords, logpointColumns: host.logpointColumns.bind(host) };
    const tallied = (snapshot: DecodedSnapshot) => () => {
      const [tally] = tallyLogpoints(snapshot, isLogpointSpec);
      if (tally.variables.size < 4) throw new BenchUnavailableError(`the tally has no values: ${tally.error ?? ''}`);
      return tally.hits;
    };
    const rows: number[] = [];
    for (let row = 0; row < decoded.columns.length; row++) if (decoded.columns.kind[row] === RecordType.SAMPLE) rows.push(row);
    const hits = rows.map((row) => {
      const record = decodeRecordAt(decoded, row);
      const fields = record.fields as { regsUser: RegsBlock; stackUser: { data: Uint8Array; dynSize: bigint } };
      return { pid: record.pid!, registers: fields.regsUser.regs, stack: fields.stackUser.data.subarray(0, Number(fields.stackUser.dynSize)) };
    });
    return {
      hits,
      decodeOne: (index) => {
        decodeRecordAt(decoded, rows[index % rows.length]);
      },
      binary,
      tally: { columns: tallied(byColumns), records: tallied(byRecords) },
    };
  } finally {
    recorder.dispose();
  }
}

/** What each variable of the fixture's loop line shows of the evaluator (its type; its location is found in the DWARF). */
const KINDS: ReadonlyArray<readonly [name: string, kind: string]> = [
  ['i', 'int'],
  ['total', 'long'],
  ['mode', 'enum'],
  ['span', 'struct {int, int}'],
  ['pt', 'struct {int, int, double, char *}'],
  ['hist', 'int[4]'],
  ['code', 'char[6]'],
  ['scale', 'double'],
  ['tag', 'char * (C string)'],
  ['label', 'char * (C string, address computed)'],
];

/** How the DWARF places `name` (a local of `function`): a location list, pieces, an expression. */
function placement(object: ObjectFile, functionName: string, name: string, pc: bigint): string {
  const info = object.dwarfInfo()!;
  const scopes = new DwarfScopes(info);
  const die = info.diesOfTag(TAG.variable).find(
    (d) =>
      scopes.nameOf(d) === name &&
      (() => {
        let up = d.parent;
        while (up && up.tag !== TAG.subprogram) up = up.parent;
        return up !== undefined && scopes.nameOf(up) === functionName;
      })(),
  );
  const variable = scopes.scopeAt(pc)?.variables.find((v) => v.name === name);
  const form = die === undefined ? undefined : info.attribute(die, AT.location)?.kind;
  const list = form !== undefined && form !== 'block'; // a section offset or a loclistx index
  const expression = variable?.location.kind === 'expression' ? variable.location.expression : undefined;
  const pieces = expression?.includes(0x93) ? ', DW_OP_piece' : '';
  const where = !expression
    ? (variable?.location.kind ?? 'not in scope')
    : expression[0] === 0x91 && !pieces && expression.length <= 4
      ? 'frame base + offset'
      : 'expression';
  return `${list ? 'location list: ' : ''}${where}${pieces}`;
}

/** The snapshot a tally is timed on: this many hits of 8 KiB of stack each, in a ring that holds them all. */
const TALLY_ROUNDS = 1000;
const TALLY_PAGES = 4096;

async function hostEvaluation(evaluations: number, table: Table): Promise<Record<string, number>> {
  // Per CPU second of this process: the work is single-threaded and CPU-bound, and this machine's other jobs
  // (which wall time would also count) vary from run to run. `start` runs untimed before each round. Ways compared
  // run in turn within each of 5 rounds (after one warm-up round each), so that neither has the quieter moments
  // of the machine or the other's JIT warm-up to itself.
  interface Way {
    readonly body: (k: number) => void;
    readonly start?: () => void;
  }
  const round1 = (way: Way) => {
    way.start?.();
    const begin = cpuNs();
    for (let k = 0; k < evaluations; k++) way.body(k);
    return evaluations / ((cpuNs() - begin) / 1e9);
  };
  const rates = (...ways: Way[]): number[] => {
    for (const way of ways) round1(way);
    const runs: number[][] = ways.map(() => []);
    for (let run = 0; run < 5; run++) ways.forEach((way, i) => runs[i].push(round1(way)));
    return runs.map(median);
  };
  const rate = (body: (k: number) => void) => rates({ body })[0];
  const result: Record<string, number> = {};
  for (const optimization of ['O2', 'O0'] as const) {
    const { hits, decodeOne, binary } = await recordHits(optimization);
    if (hits.length === 0) throw new BenchUnavailableError('the recorded hits are none: the logpoint did not fire');
    const object = openObjectFile(binary);
    const base = predictedLoadBase(binary);
    const locate = (_pid: number, ip: bigint) => ({ object, vaddr: ip - base });
    const evaluator = new LogpointEvaluator(locate);
    const check = evaluator.evaluate(hits[0]);
    if (check.error || Object.keys(check.values).length < 4) throw new BenchUnavailableError(`the recorded hits give no values: ${JSON.stringify(check)}`);
    // Into columns, a fresh set per round (as a tally of one snapshot makes), every id's text read; then as objects.
    const intoColumns = (reader: LogpointEvaluator, names?: readonly string[]): Way => {
      let columns = new LogpointColumns(evaluations);
      return {
        body: (k) => {
          const row = reader.evaluateInto(hits[k % hits.length], names, columns);
          const own = columns.layoutColumns[columns.layouts[row]];
          for (let c = 0; c < own.length; c++) if (columns.textOf(columns.columns[own[c]][row]).length === 0) throw new Error('empty text');
        },
        start: () => (columns = new LogpointColumns(evaluations)),
      };
    };
    const asObject = (names?: readonly string[]): Way => ({
      body: (k) => {
        const values = evaluator.evaluate(hits[k % hits.length], names).values;
        for (const name in values) if (values[name].length === 0) throw new Error('empty text');
      },
    });
    const both = (names?: readonly string[]) => {
      const [columns, object] = rates(intoColumns(evaluator, names), asObject(names));
      return { columns, object };
    };
    const decode = rate(decodeOne);
    table.add(`-${optimization}: decode the sample record (baseline)`, round(decode), '', 1);
    const row = (label: string, key: string, measured: { columns: number; object: number }) => {
      table.add(`-${optimization}: ${label}`, round(measured.columns), round(measured.object), round(measured.columns / decode, 3));
      result[`${optimization}${key}IntoColumnsPerSec`] = round(measured.columns);
      result[`${optimization}${key}AsObjectPerSec`] = round(measured.object);
    };
    row(`all ${Object.keys(check.values).length} variables in scope`, 'AllInScope', both());
    // What the editor's line and the summary do with a snapshot: read its hits from the ring and tally them, as columns
    // (the columns column) and as it was done before, from every record decoded with its values (the object column).
    // Per hit: every snapshotHits-th step tallies the whole snapshot, one of TALLY_ROUNDS hits (a loop's counters
    // take a new value at every hit there, as they do in a real snapshot of many hits).
    const { tally } = await recordHits(optimization, TALLY_ROUNDS, TALLY_PAGES);
    const snapshotHits = tally.columns();
    if (snapshotHits !== TALLY_ROUNDS) throw new BenchUnavailableError(`the tally's snapshot holds ${snapshotHits} hits of ${TALLY_ROUNDS}`);
    const perHit = (body: () => number): Way => ({
      body: (k) => {
        if (k % snapshotHits === 0) body();
      },
    });
    const [columns, records] = rates(perHit(tally.columns), perHit(tally.records));
    row(`tally of a snapshot's ${snapshotHits} hits, every variable (columns; records)`, 'Tally', { columns, object: records });
    // The same, every value's text written at every hit (no text kept by its bytes): what a hit of values never seen costs.
    const [coldText] = rates(intoColumns(new LogpointEvaluator(locate, undefined, true, false)));
    table.add(`-${optimization}: all variables in scope, every text written (no text kept)`, round(coldText), '', '');
    result[`${optimization}AllInScopeUncachedIntoColumnsPerSec`] = round(coldText);
    row('i and total', 'TwoNamed', both(['i', 'total']));
    const pc = hits[0].registers[8] - base;
    for (const [name, kind] of KINDS) {
      const names = [name];
      const sample = evaluator.evaluate(hits[hits.length - 1], names).values[name];
      if (sample === undefined || sample.startsWith('<no variable')) continue;
      row(`${name}: ${kind}, ${placement(object, check.function ?? 'work', name, pc)}`, `_${name}_`, both(names));
    }
  }
  return result;
}

/** The loop's own time (ns) from the fixture's stderr. */
function loopNs(output: string): number {
  const match = /^loop_ns (\d+)$/m.exec(output);
  if (!match) throw new BenchUnavailableError(`the loop did not report its time:\n${output}`);
  return Number(match[1]);
}

function targetCost(iterations: number, gdbIterations: number, table: Table): Record<string, number> {
  const binary = fixture('logpoint_loop');
  const line = markedLine('logpoint_loop.c', '// BENCH-LINE');
  const cli = path.join(root, 'dist/cli.js');
  if (!existsSync(cli)) throw new BenchUnavailableError('dist/cli.js is missing: npm run build');
  const run = (argv: string[], n: number) => {
    const result = spawnSync(argv[0], [...argv.slice(1), String(n)], { encoding: 'utf8' });
    if (result.status !== 0 && result.status !== 1) throw new BenchUnavailableError(`${argv.join(' ')} failed: ${result.stderr}`);
    return loopNs(`${result.stdout}\n${result.stderr}`);
  };
  const unprobed = (n: number) => median([0, 1, 2].map(() => run([binary], n)));
  const ringside = (spec: string) => [process.execPath, cli, 'capture', '-q', '-e', spec, '-o', '/dev/null', '--', binary];
  try {
    execFileSync('gdb', ['--version']);
  } catch {
    // gdb that does not run is gdb that is not there, for this bench.
    throw new BenchUnavailableError('gdb is not installed');
  }
  const gdb = ['gdb', '-batch', '-nx', '-ex', `dprintf logpoint_loop.c:${line},"%ld %ld\\n",i,total`, '-ex', 'run', '--args', binary];
  const base = unprobed(iterations);
  const perHit = (ns: number, baseline: number, n: number) => (ns - baseline) / n;
  const lineHit = perHit(run(ringside(`line:logpoint_loop.c:${line}`), iterations), base, iterations);
  const logHit = perHit(run(ringside(`log:logpoint_loop.c:${line}`), iterations), base, iterations);
  const gdbBase = unprobed(gdbIterations);
  const gdbHit = perHit(run(gdb, gdbIterations), gdbBase, gdbIterations);
  const loopIteration = base / iterations;
  table.add('unprobed loop iteration (baseline)', round(loopIteration), 1);
  table.add('line: uprobe, per hit', round(lineHit), round(lineHit / loopIteration, 3));
  table.add('log: uprobe + regs + 8 KiB stack, per hit', round(logHit), round(logHit / loopIteration, 3));
  table.add(`gdb dprintf, per hit (${gdbIterations} hits)`, round(gdbHit), round(gdbHit / loopIteration, 3));
  return {
    loopIterationNs: round(loopIteration),
    lineHitNs: round(lineHit),
    logHitNs: round(logHit),
    gdbDprintfHitNs: round(gdbHit),
    gdbOverLog: round(gdbHit / logHit, 3),
  };
}

async function main(): Promise<void> {
  const [evaluations = 200_000, iterations = 20_000, gdbIterations = 500] = process.argv.slice(2).map(Number);
  if (process.getuid?.() !== 0) throw new BenchUnavailableError('uprobes need root (or CAP_PERFMON)');
  const host = new Table(['host: values and text of recorded hits (per CPU second)', 'hits/s into columns', 'hits/s as object', 'columns x baseline']);
  const hostResult = await hostEvaluation(evaluations, host);
  console.log(host.toString());
  if (iterations === 0) {
    console.log(JSON.stringify({ logpoint: { ...hostResult, evaluations } }));
    return;
  }
  const target = new Table(['target: a tight loop', 'ns', 'x baseline']);
  const targetResult = targetCost(iterations, gdbIterations, target);
  console.log(`\n${target.toString()}`);
  console.log(JSON.stringify({ logpoint: { ...hostResult, ...targetResult, evaluations, iterations, gdbIterations } }));
}

main().catch((error: unknown) => {
  console.error(error instanceof BenchUnavailableError ? `bench unavailable: ${error.message}` : error);
  process.exit(1);
});
