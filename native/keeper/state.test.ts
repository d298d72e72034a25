import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { PerfType, SoftwareConfig, Sample } from '../abi/uapi';
import type { PerfEventAttr } from '../abi/attr';
import {
  attrFromHex,
  buildKeeperState,
  isKeeperAlive,
  keeperEventDescriptions,
  keeperStateDir,
  KeeperStateError,
  listKeeperStates,
  processStartTicks,
  readKeeperState,
  validateKeeperState,
  writeKeeperState,
} from './state';

const attr: PerfEventAttr = {
  type: PerfType.SOFTWARE,
  config: BigInt(SoftwareConfig.CPU_CLOCK),
  samplePeriod: 100000n,
  sampleType: Sample.IP | Sample.TID | Sample.TIME,
  readFormat: 0,
  flags: { disabled: true, writeBackward: true, sampleIdAll: true },
};

describe('keeper state file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ringside-state-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function sample() {
    return buildKeeperState({
      target: { kind: 'pid', pid: 1 },
      events: [{ name: 'cpu-clock', attr, ids: [18446744073709551615n, 42n] }],
      rings: [{ fd: 7, ringId: 0, label: 'cpu0', cpu: 0, tid: -1, direction: 'backward', pages: 8, defaultEvent: 0 }],
      stateDir: dir,
    });
  }

  it('round-trips through the file with mode 0600, keeping u64 ids and the attr exact', () => {
    const file = writeKeeperState(sample(), dir);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const state = readKeeperState(file);
    assert.equal(state.pid, process.pid);
    assert.equal(state.stateDir, dir, 'clients learn where the keeper watches for pause leases');
    const [event] = keeperEventDescriptions(state);
    assert.deepEqual(event.ids, [18446744073709551615n, 42n]);
    assert.equal(event.attr.samplePeriod, 100000n);
    assert.equal(event.attr.flags.writeBackward, true);
    assert.equal(attrFromHex(state.events[0].attrHex).config, BigInt(SoftwareConfig.CPU_CLOCK));
  });

  it('refuses a state file other users can read', () => {
    const file = writeKeeperState(sample(), dir);
    chmodSync(file, 0o644);
    assert.throws(
      () => readKeeperState(file),
      (e: unknown) => e instanceof KeeperStateError && /0600/.test(e.message),
    );
  });

  it('names the bad field of a malformed state', () => {
    const good = JSON.parse(JSON.stringify(sample())) as Record<string, unknown>;
    const bad = { ...good, rings: [{ ...(good.rings as object[])[0], pages: 6 }] };
    assert.throws(() => validateKeeperState(bad), /rings\[0\]\.pages must be a power of two/);
    assert.throws(() => validateKeeperState({ ...good, version: 2 }), /unsupported version 2/);
    assert.throws(() => validateKeeperState({ ...good, events: [{ name: 'x', attrHex: 'zz', ids: [] }] }), /attrHex/);
  });

  it('keeps the generation, the retired rings with their times and the limitations; a file without a generation is generation 0', () => {
    const retired = {
      fd: 9,
      ringId: 3,
      label: 'cpu0 (1 pages, retired)',
      cpu: 0,
      tid: -1,
      direction: 'backward' as const,
      pages: 1,
      defaultEvent: 0,
      retired: { cutAtNs: '18446744073709551615', oldestNs: '5', newestNs: '7' },
    };
    const state = {
      ...sample(),
      generation: 3,
      resizing: true,
      limitations: ['rings resized from 1 to 8 pages'],
      rings: [...sample().rings, retired],
      retiredBytesLeftOut: '18446744073709551616',
    };
    const read = readKeeperState(writeKeeperState(state, dir));
    assert.equal(read.generation, 3);
    assert.equal(read.resizing, true);
    assert.deepEqual(read.rings[1].retired, retired.retired);
    assert.deepEqual(read.limitations, ['rings resized from 1 to 8 pages']);
    assert.equal(read.retiredBytesLeftOut, '18446744073709551616', 'what closed retired rings wrote, exact past 2^64');
    assert.throws(() => validateKeeperState({ ...JSON.parse(JSON.stringify(state)), retiredBytesLeftOut: 5 }), /retiredBytesLeftOut must be a decimal string/);
    const old = JSON.parse(JSON.stringify(sample())) as Record<string, unknown>;
    delete old.generation;
    assert.equal(validateKeeperState(old).generation, 0);
    const good = JSON.parse(JSON.stringify(state)) as { rings: Record<string, unknown>[] };
    assert.throws(
      () => validateKeeperState({ ...good, rings: [{ ...good.rings[1], retired: { cutAtNs: 12 } }] }),
      /rings\[0\]\.retired\.cutAtNs must be a decimal string/,
    );
    assert.throws(() => validateKeeperState({ ...good, rings: [{ ...good.rings[1], direction: 'forward' }] }), /rings\[0\] is retired but not a backward ring/);
    assert.throws(() => validateKeeperState({ ...good, generation: -1 }), /generation must be a non-negative integer/);
  });

  it('tells live keepers from dead ones and prunes the dead', () => {
    writeKeeperState(sample(), dir);
    const child = spawnSync('true');
    assert.equal(child.status, 0);
    const dead = { ...sample(), pid: child.pid as number, procStartTicks: '1' };
    writeKeeperState(dead, dir);
    writeFileSync(path.join(dir, 'keeper-99.json'), 'not json', { mode: 0o600 });
    const listed = listKeeperStates({ dir });
    assert.equal(listed.length, 3);
    assert.equal(listed.filter((k) => k.alive).length, 1);
    assert.ok(listed.some((k) => k.error && /not JSON/.test(k.error.message)));
    const pruned = listKeeperStates({ dir, pruneDead: true });
    assert.equal(pruned.filter((k) => k.state).length, 1);
    assert.equal(pruned.find((k) => k.state)?.state?.pid, process.pid);
  });

  it('detects pid reuse through the process start time', () => {
    assert.ok(isKeeperAlive({ pid: process.pid, procStartTicks: processStartTicks(process.pid) }));
    assert.ok(!isKeeperAlive({ pid: process.pid, procStartTicks: '1' }));
  });

  it('places the directory under XDG_RUNTIME_DIR when it is absolute', () => {
    assert.equal(keeperStateDir({ XDG_RUNTIME_DIR: '/run/user/5' }, 5), '/run/user/5/ringside-5');
    assert.equal(keeperStateDir({ XDG_RUNTIME_DIR: 'relative' }, 5), '/tmp/ringside-5');
    assert.equal(keeperStateDir({}, 0), '/tmp/ringside-0');
    assert.ok(readFileSync('/proc/self/stat', 'utf8').length > 0);
  });
});
