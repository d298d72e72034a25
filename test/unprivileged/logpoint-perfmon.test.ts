// Logpoints as an ordinary user (uid 65534) running a copy of node given the capability the kernel wants
// for uprobes, as README advises (`setcap cap_perfmon,...+ep` on a copy), where tracefs is closed to that
// user: the uprobe PMU opens, but no uprobe can be defined in tracefs, so the x86-64 red zone (the locals
// of a function that calls none) cannot be fetched at the hit. The logpoints still record; what the stack
// sample holds equals gdb's values, and each red-zone local reads <not captured> with the reason and the fix.
//
// Whether the kernel accepts CAP_PERFMON for the uprobe PMU is asked of the kernel itself first, by a
// plain perf_event_open in a C program given the same capability (not through Ringside): Linux >= 5.8
// accepts it, yet some kernels answer EACCES (seen on 6.18 Firecracker guests, which accept CAP_SYS_ADMIN).
// There, Ringside with CAP_PERFMON must say exactly that, and the fallback is exercised with CAP_SYS_ADMIN,
// which gives no more access to tracefs (a mode 0700 directory stays closed without CAP_DAC_*).
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeMode, probeTracefs } from '../../native/sys/access';
import { RED_ZONE_NOT_CAPTURED } from '../../native/symbols/logpoint-values';
import { markedLine, ROUNDS, runGdb } from '../kernel/gdb-referee';
import { fixture } from '../kernel/helpers';
import { NOBODY_UID, prepareNobodyDir, type NobodyDir } from './nobody';

/** Opens the uprobe PMU on itself at FILE:OFFSET and says what the kernel answered; the referee for what a capability allows. */
const UPROBE_PMU_PROBE = `
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
  FILE *typeFile = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
  int type;
  if (!typeFile || fscanf(typeFile, "%d", &type) != 1) { printf("no uprobe PMU\\n"); return 2; }
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config1 = (unsigned long)argv[1];
  attr.config2 = strtoull(argv[2], 0, 0);
  attr.sample_period = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) { printf("errno %d %s\\n", errno, strerror(errno)); return 1; }
  printf("opened\\n");
  return 0;
}
`;

interface LoggedHit {
  event: string;
  time: number;
  values: Record<string, string>;
  notCaptured?: Record<string, string>;
}

describe('logpoints as uid 65534 with a capability for uprobes where tracefs is closed (the uprobe PMU fallback)', function () {
  this.timeout(300_000);
  let nobody: NobodyDir;
  let gdbDir: string;
  let probe: string;
  const binary = () => nobody.fixture('logpoint_values_O0');
  const loopLine = markedLine('LOG-LOOP');
  const leafLine = markedLine('LOG-INLINE');

  before(() => {
    nobody = prepareNobodyDir();
    gdbDir = mkdtempSync(path.join(tmpdir(), 'ringside-perfmon-gdb-'));
    probe = path.join(nobody.dir, 'uprobe-pmu-probe');
    writeFileSync(`${probe}.c`, UPROBE_PMU_PROBE);
    execFileSync('gcc', ['-O1', '-o', probe, `${probe}.c`]);
  });
  after(() => {
    nobody?.dispose();
    if (gdbDir) rmSync(gdbDir, { recursive: true, force: true });
  });

  /** A copy of `file` in the uid's directory with `capability` (setcap after every chown: chown clears file capabilities). */
  function withCapability(file: string, capability: string): string {
    const copy = path.join(nobody.dir, `${path.basename(file)}-${capability}`);
    copyFileSync(file, copy);
    chmodSync(copy, 0o755);
    const set = spawnSync('setcap', [`${capability}+ep`, copy], { encoding: 'utf8' });
    assert.equal(set.status, 0, `setcap ${capability}+ep ${copy} was refused: ${set.stderr || set.error?.message} (this test needs file capabilities)`);
    const got = execFileSync('getcap', [copy], { encoding: 'utf8' });
    assert.match(got, new RegExp(`${capability}[=+]ep`), `getcap shows the capability on ${copy}: ${got}`);
    return copy;
  }

  /** What the kernel answers a plain perf_event_open of the uprobe PMU from uid 65534 with `capability`. */
  function kernelAnswer(capability: string): string {
    const work = /^([0-9a-f]+) T work$/m.exec(execFileSync('nm', [binary()], { encoding: 'utf8' }));
    assert.ok(work, 'the fixture has work()');
    const run = nobody.run([withCapability(probe, capability), binary(), `0x${work[1]}`]);
    return (run.stdout || run.stderr).trim();
  }

  function capture(node: string, lines: readonly number[]): { status: number | null; stderr: string; hits: LoggedHit[] } {
    const output = path.join(nobody.dir, `values-${path.basename(node)}.jsonl`);
    const run = nobody.run([
      node,
      nobody.cli,
      'capture',
      ...lines.flatMap((line) => ['-e', `log:logpoint_values.c:${line}`]),
      '-o',
      output,
      '--',
      binary(),
      ROUNDS,
    ]);
    const hits = existsSync(output)
      ? readFileSync(output, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as LoggedHit & { type: string })
          .filter((record) => record.type === 'SAMPLE')
          .sort((a, b) => a.time - b.time)
      : [];
    return { status: run.status, stderr: run.stderr, hits };
  }

  it('the logpoints record, values the stack sample holds equal gdb, and red-zone locals say why they are <not captured> and the fix', () => {
    const tracefs = probeTracefs(readFileSync('/proc/mounts', 'utf8'));
    const closed = nobody.run(['test', '-e', `${tracefs.path}/uprobe_events`]).status !== 0;
    const perfmonNode = withCapability(process.execPath, 'cap_perfmon');
    const perfmonAnswer = kernelAnswer('cap_perfmon');
    let node = perfmonNode;
    if (perfmonAnswer !== 'opened') {
      // The kernel itself refuses CAP_PERFMON here: Ringside must say so, with the capability that works.
      assert.match(perfmonAnswer, /^errno 13 /, `the kernel's answer to a uprobe with CAP_PERFMON: ${perfmonAnswer}`);
      const refused = capture(perfmonNode, [loopLine]);
      assert.equal(refused.status, 1, refused.stderr);
      const release = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
      assert.ok(
        refused.stderr.includes(
          `uid ${NOBODY_UID} (nobody) has CAP_PERFMON, yet the kernel (${release}) answered EACCES to a uprobe: it allows the uprobe PMU only with CAP_SYS_ADMIN`,
        ),
        refused.stderr,
      );
      assert.match(refused.stderr, /give the copy of node CAP_SYS_ADMIN instead \(`sudo setcap cap_sys_admin/);
      const adminAnswer = kernelAnswer('cap_sys_admin');
      assert.equal(adminAnswer, 'opened', `the kernel refuses the uprobe PMU to uid ${NOBODY_UID} with CAP_SYS_ADMIN too: ${adminAnswer}`);
      console.log(
        `      (this kernel, ${release}, answers a uprobe from uid ${NOBODY_UID} with CAP_PERFMON: ${perfmonAnswer}; the fallback below runs with CAP_SYS_ADMIN)`,
      );
      node = withCapability(process.execPath, 'cap_sys_admin');
    }

    const run = capture(node, [loopLine, leafLine]);
    assert.equal(run.status, 0, run.stderr);
    const reason = closed
      ? `${tracefs.path}/uprobe_events cannot be reached: ${tracefs.path} is ${describeMode(tracefs.path)}, and uid ${NOBODY_UID} (nobody) may not enter it ` +
        `(defining uprobes there needs root, as perf probe does: run as root)`
      : `${tracefs.path}/uprobe_events is writable only by root (defining a uprobe there needs it, as perf probe does: run as root) (EACCES)`;
    assert.ok(
      run.stderr.includes(
        `locals below the stack pointer (the x86-64 red zone of a function that calls none) read <not captured>: ` +
          `the kernel fetches them at the hit only through uprobes defined in tracefs, and ${reason}`,
      ),
      `the note says why and the fix:\n${run.stderr}`,
    );

    const loopHits = run.hits.filter((hit) => hit.event === `log:logpoint_values.c:${loopLine}`);
    const leafHits = run.hits.filter((hit) => hit.event === `log:logpoint_values.c:${leafLine}`);
    // gdb runs the same program (as root, ASLR off as Ringside launches it): hit k is stop k.
    const loopGdb = runGdb(gdbDir, fixture('logpoint_values_O0'), loopLine, []);
    const leafGdb = runGdb(gdbDir, fixture('logpoint_values_O0'), leafLine, ['a', 'b', 'product', 'folded']);
    assert.equal(loopHits.length, loopGdb.hits.length, `hits of the loop line: Ringside ${loopHits.length}, gdb ${loopGdb.hits.length}`);
    assert.equal(leafHits.length, leafGdb.hits.length, `hits of the leaf line: Ringside ${leafHits.length}, gdb ${leafGdb.hits.length}`);
    assert.ok(loopHits.length >= Number(ROUNDS), `one hit per round at least (${loopHits.length})`);

    let compared = 0;
    loopGdb.hits.forEach((expected, k) => {
      const got = loopHits[k].values;
      for (const [name, value] of expected) {
        assert.equal(got[name], value, `loop hit ${k}: ${name} (gdb: ${value}; Ringside: ${got[name]})`);
        compared++;
      }
      assert.equal(loopHits[k].notCaptured, undefined, `loop hit ${k}: work() calls use(), so no local is in its red zone`);
    });
    assert.ok(compared >= loopHits.length * 10, `compared ${compared} values with gdb`);

    let notCaptured = 0;
    leafGdb.hits.forEach((expected, k) => {
      const hit = leafHits[k];
      assert.deepEqual(Object.keys(hit.values).sort(), [...expected.keys()].sort(), `leaf hit ${k}: the same variables in scope`);
      for (const [name, value] of expected) {
        if (leafGdb.belowSp[k].has(name)) {
          assert.equal(hit.values[name], '<not captured>', `leaf hit ${k}: ${name} is below the stack pointer (gdb: ${value})`);
          assert.equal(hit.notCaptured?.[name], RED_ZONE_NOT_CAPTURED, `leaf hit ${k}: why ${name} is not captured`);
          notCaptured++;
        } else assert.equal(hit.values[name], value, `leaf hit ${k}: ${name}`);
      }
    });
    assert.ok(notCaptured >= leafHits.length, `red-zone locals said <not captured> with the reason (${notCaptured})`);
  });
});
