// Persistent PMU events in "Attach to Event…": this machine has no persistent PMU, so the listing
// and the spec → attr → open path run against a fake sysfs TREE (a directory, not a fake kernel)
// that describes the real software PMU (type 1) with the persistent `attrN:bit` format syntax.
// The events it names are then opened on the real kernel per CPU and mapped read-only.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { attachPersistentEvent, listPersistentEvents, resolvePersistentEvent } from '../../extension/session/persistent-events';
import { AttachError } from '../../native/perf/borrowed';
import { SessionManager } from '../../extension/session/session-manager';
import { createCoreBackend } from '../../extension/session/core-backend';
import type { Backend } from '../../extension/session/ports';
import { onlineCpus } from '../../native/perf/procfs';
import { RecordType } from '../../native/abi/uapi';
import { ownPerfFds, ownPerfMappings } from './helpers';

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

function writePmu(root: string, name: string, type: number, formats: Record<string, string>, events: Record<string, string>): void {
  const dir = path.join(root, 'bus/event_source/devices', name);
  mkdirSync(path.join(dir, 'format'), { recursive: true });
  mkdirSync(path.join(dir, 'events'), { recursive: true });
  writeFileSync(path.join(dir, 'type'), `${type}\n`);
  for (const [file, text] of Object.entries(formats)) writeFileSync(path.join(dir, 'format', file), `${text}\n`);
  for (const [file, text] of Object.entries(events)) writeFileSync(path.join(dir, 'events', file), `${text}\n`);
}

/** perms of this process's perf ring mappings, e.g. ['r--s']. */
function perfMappingPerms(): string[] {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes('anon_inode:[perf_event]'))
    .map((line) => line.split(/\s+/)[1]);
}

describe('extension: persistent PMU events (fake sysfs tree, real kernel)', function () {
  this.timeout(30000);
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'ringside-sysfs-'));
    // An ordinary PMU beside it must not be listed as persistent.
    writePmu(root, 'cpu_plain', 4, { event: 'config:0-7' }, { cycles: 'event=0x3c' });
    writePmu(
      root,
      'persistent',
      1,
      { event: 'config:0-63', persistent: 'attr5:23' },
      {
        context_switches: 'event=0x3,persistent=1',
        page_faults: 'event=0x2,persistent=1',
      },
    );
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("lists only the persistent PMU's events, as pmu/event/ specs", () => {
    const listing = listPersistentEvents(root);
    assert.deepEqual(listing.pmus, ['persistent']);
    assert.equal(listing.none, undefined);
    assert.deepEqual(listing.events.map((event) => event.spec).sort(), ['persistent/context_switches/', 'persistent/page_faults/']);
    assert.equal(listing.events.find((event) => event.event === 'page_faults')?.terms, 'event=0x2,persistent=1');
  });

  it('resolves the spec through sysfs: config from the alias, the attr5:23 bit set', () => {
    const resolved = resolvePersistentEvent('persistent/context_switches/', root);
    assert.equal(resolved.attr.type, 1);
    assert.equal(resolved.attr.config, 3n);
    assert.equal(resolved.attr.flags.mmap2, true, "attr5 bit 23 is the flag word's mmap2 bit");
    assert.equal(resolvePersistentEvent('persistent/page_faults/', root).attr.config, 2n);
  });

  it('attaches per CPU with read-only mappings, snapshots real records, and leaks nothing', async () => {
    const before = { fds: ownPerfFds().length, maps: ownPerfMappings(), perms: perfMappingPerms().length };
    const source = attachPersistentEvent('persistent/context_switches/', { sysfsRoot: root, pages: 8 });
    const cpus = onlineCpus().length;
    assert.equal(ownPerfFds().length, before.fds + cpus, 'one fd per online CPU');
    const perms = perfMappingPerms().slice(before.perms);
    assert.equal(perms.length, cpus);
    for (const perm of perms) assert.equal(perm, 'r--s', "the kernel's buffer is mapped read-only");
    assert.equal(source.events[0].attr.flags.mmap2, true);
    await source.copyBuffersWarm();
    assert.ok(source.copyBuffersReady, 'each CPU ring has a warm spare copy buffer, as a Recorder keeps');

    const manager = new SessionManager({ backend: coreOnly() });
    const session = manager.adopt('borrowed', 'persistent/context_switches/', source);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5)); // context switches
    const snapshot = await manager.snapshot(session.id);
    const { columns } = snapshot.decoded;
    let samples = 0;
    for (let row = 0; row < columns.length; row++) if (columns.kind[row] === RecordType.SAMPLE) samples++;
    assert.ok(samples >= 20, `context switches recorded through the persistent spec: ${samples}`);
    assert.equal(snapshot.decoded.anomalies.filter((a) => a.kind !== 'truncated-oldest').length, 0, JSON.stringify(snapshot.decoded.anomalies.slice(0, 3)));
    assert.equal(source.copyBuffersReady, false, 'the snapshot took the spares');
    await source.copyBuffersWarm();
    assert.ok(source.copyBuffersReady, 'and new ones were warmed');

    await manager.stop(session.id);
    assert.equal(ownPerfFds().length, before.fds);
    assert.equal(ownPerfMappings(), before.maps);
    await manager.dispose();
  });

  it('says clearly when no persistent PMU exists (this machine, and a tree without one)', () => {
    rmSync(path.join(root, 'bus/event_source/devices/persistent'), { recursive: true });
    const fake = listPersistentEvents(root);
    assert.deepEqual(fake.events, []);
    assert.match(fake.none ?? '', /no persistent PMU/);
    const real = listPersistentEvents();
    assert.ok(real.events.length > 0 || /no persistent PMU|lists no events/.test(real.none ?? ''), JSON.stringify(real));
  });

  it('an unknown persistent event is a clear error and opens nothing', () => {
    const before = ownPerfFds().length;
    assert.throws(
      () => attachPersistentEvent('persistent/nope/', { sysfsRoot: root, pages: 8 }),
      (error: unknown) => error instanceof Error && /nope/.test(error.message),
    );
    assert.throws(
      () => attachPersistentEvent('persistent/page_faults/', { sysfsRoot: root, pages: 3 }),
      (error: unknown) => error instanceof AttachError && /persistent\/page_faults/.test(error.message),
    );
    assert.equal(ownPerfFds().length, before);
  });
});
