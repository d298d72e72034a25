// PMUs from the real sysfs of this machine (whatever it has beyond software=1, tracepoint=2,
// breakpoint=5) and from fake sysfs trees: x86's msr and uprobe PMUs, and a persistent-events PMU
// with the `attrN:BIT` format syntax.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeAttr, encodeAttr } from '../../native/abi/attr';
import { PerfType } from '../../native/abi/uapi';
import { expectSpecError } from './spec-error';
import { listPmuNames, listPmus, PmuError, readPmu } from '../../native/specs/pmu';
import { resolveEventSpec } from '../../native/specs/resolve';
import { formatEventList, listEvents } from '../../native/specs/list';

const DEVICES = '/sys/bus/event_source/devices';

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

describe('specs/pmu on the real sysfs', () => {
  it('reads the core PMU types', () => {
    assert.equal(readPmu('software')?.type, PerfType.SOFTWARE);
    assert.equal(readPmu('tracepoint')?.type, PerfType.TRACEPOINT);
    assert.equal(readPmu('breakpoint')?.type, PerfType.BREAKPOINT);
    assert.equal(readPmu('no-such-pmu'), undefined);
    assert.equal(readPmu('../devices'), undefined);
    for (const name of listPmuNames()) {
      assert.equal(readPmu(name)?.type, Number(readFileSync(join(DEVICES, name, 'type'), 'utf8')), name);
    }
  });

  it('reads format terms and event aliases exactly as sysfs has them', () => {
    for (const pmu of listPmus()) {
      for (const format of pmu.formats) {
        assert.equal(format.text, readFileSync(join(DEVICES, pmu.name, 'format', format.name), 'utf8').trim());
      }
      for (const event of pmu.events) {
        assert.equal(event.text, readFileSync(join(DEVICES, pmu.name, 'events', event.name), 'utf8').trim());
      }
      assert.equal(pmu.persistent, false, `${pmu.name}: no attrN formats on a stock kernel`);
    }
  });

  it('resolves the core PMUs through their sysfs types', () => {
    const breakpoint = resolveEventSpec('breakpoint/config1=0x1000,config2=4/');
    assert.deepEqual([breakpoint.attr.type, breakpoint.isBreakpoint], [5, true]);
    assert.equal(resolveEventSpec('software/config=3/').attr.config, 3n);
  });

  // Which PMUs beyond the core three a machine has, and which events they list, differs between
  // machines of the same kind (one msr PMU lists smi, another only tsc): whatever this host lists
  // must resolve to what its sysfs files say.
  it('expands every event alias this host lists to the config its sysfs file gives', () => {
    for (const pmu of listPmus()) {
      for (const event of pmu.events) {
        const resolved = resolveEventSpec(`${pmu.name}/${event.name}/`);
        assert.equal(resolved.attr.type, pmu.type, `${pmu.name}/${event.name}/`);
        const terms = Object.fromEntries(event.text.split(',').map((term) => term.split('=')));
        if (terms.event !== undefined && pmu.formats.some((format) => format.name === 'event' && format.text === 'config:0-63')) {
          assert.equal(resolved.attr.config, BigInt(terms.event), `${pmu.name}/${event.name}/`);
        }
      }
    }
  });

  it('names an unknown PMU and lists the ones here', () => {
    expectSpecError(
      'softwar/config=1/',
      { sysfsRoot: '/sys' },
      0,
      /no PMU 'softwar' on this machine \(did you mean 'software'\?\); PMUs here: .*breakpoint/,
      'softwar',
    );
  });
});

describe('specs/pmu on a fake sysfs tree (x86 msr and uprobe PMUs as Linux 6.x lays them out)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'ringside-sysfs-'));
    const devices = 'bus/event_source/devices';
    writeTree(root, {
      [`${devices}/msr/type`]: '9\n',
      [`${devices}/msr/format/event`]: 'config:0-63\n',
      [`${devices}/msr/events/tsc`]: 'event=0x00\n',
      [`${devices}/msr/events/smi`]: 'event=0x04\n',
      [`${devices}/msr/events/aperf`]: 'event=0x01\n',
      [`${devices}/uprobe/type`]: '8\n',
      [`${devices}/uprobe/format/retprobe`]: 'config:0\n',
      [`${devices}/uprobe/format/ref_ctr_offset`]: 'config:32-63\n',
    });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('reads uprobe formats: one-bit and range terms', () => {
    const uprobe = readPmu('uprobe', root);
    assert.ok(uprobe);
    const byName = Object.fromEntries(uprobe.formats.map((format) => [format.name, format]));
    assert.deepEqual(byName.retprobe.ranges, [{ lo: 0, hi: 0 }]);
    assert.deepEqual(byName.ref_ctr_offset.ranges, [{ lo: 32, hi: 63 }]);
  });

  it("resolves uprobe specs through the tree's type and formats, and rejects oversize values", () => {
    const uprobe = resolveEventSpec('uprobe/retprobe,ref_ctr_offset=0x10,config1=0x1234,config2=0x40/', { sysfsRoot: root }).attr;
    assert.deepEqual([uprobe.type, uprobe.config, uprobe.config1, uprobe.config2], [8, (0x10n << 32n) | 1n, 0x1234n, 0x40n]);
    expectSpecError(
      'uprobe/ref_ctr_offset=0x100000000/',
      { sysfsRoot: root },
      7,
      /does not fit format 'ref_ctr_offset' \(config:32-63, 32 bits/,
      'ref_ctr_offset',
    );
  });

  it('expands the msr PMU event aliases, with name= and modifiers', () => {
    const tsc = resolveEventSpec('msr/tsc/', { sysfsRoot: root });
    assert.deepEqual([tsc.attr.type, tsc.attr.config], [9, 0n]);
    const smi = resolveEventSpec('msr/smi,name=smi_count/k', { sysfsRoot: root });
    assert.deepEqual([smi.attr.config, smi.name, smi.attr.flags.excludeUser], [4n, 'smi_count', true]);
    expectSpecError('msr/tcs/', { sysfsRoot: root }, 4, /unknown term 'tcs' for PMU msr \(did you mean 'tsc'\?\).*events: .*tsc/, 'tcs');
    expectSpecError('msr/event=x/', { sysfsRoot: root }, 4, /term 'event' needs a number, got 'x'/, 'event');
  });

  it("lists the tree's PMUs and their aliases as `perf list` prints them", () => {
    const text = formatEventList(listEvents({ sysfsRoot: root }));
    assert.match(text, /^ {2}uprobe \(type 8\): ref_ctr_offset=config:32-63, retprobe=config:0$/m);
    for (const name of ['aperf', 'smi', 'tsc']) assert.ok(text.includes(`  ${`msr/${name}/`.padEnd(50)} [Kernel PMU event]`), name);
  });
});

describe('specs/pmu on a fake sysfs tree (persistent events)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'ringside-sysfs-'));
    const pmu = 'bus/event_source/devices/persistent';
    writeTree(root, {
      [`${pmu}/type`]: '11\n',
      [`${pmu}/format/persistent`]: 'attr5:23\n',
      [`${pmu}/format/event`]: 'config:0-7,32-35\n',
      [`${pmu}/format/umask`]: 'config1:0-3\n',
      [`${pmu}/format/edge`]: 'config2:18\n',
      [`${pmu}/format/ext`]: 'config3:0-15\n',
      [`${pmu}/events/mce_record`]: 'event=0x12,persistent\n',
      [`${pmu}/events/mce_record.unit`]: 'records\n',
      [`${pmu}/events/needs_umask`]: 'event=0x3c,umask=?\n',
      [`${pmu}/events/raw_alias`]: 'config=0x77\n',
      'bus/event_source/devices/broken/type': 'abc\n',
      'bus/event_source/devices/badformat/type': '12\n',
      'bus/event_source/devices/badformat/format/x': 'config9:1\n',
    });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('reads the PMU and marks it persistent', () => {
    const pmu = readPmu('persistent', root);
    assert.ok(pmu);
    assert.equal(pmu.type, 11);
    assert.equal(pmu.persistent, true);
    assert.deepEqual(
      pmu.events.map((event) => event.name),
      ['mce_record', 'needs_umask', 'raw_alias'],
      '.unit files are metadata',
    );
    assert.throws(
      () => readPmu('broken', root),
      (error: unknown) => error instanceof PmuError && /type 'abc' is not a number/.test(error.message),
    );
    assert.throws(
      () => readPmu('badformat', root),
      (error: unknown) => error instanceof PmuError && /format\/x: format 'config9:1'/.test(error.message),
    );
  });

  it('persistent/mce_record/ expands the alias: config from event=, mmap2 (attr5:23) from persistent', () => {
    const event = resolveEventSpec('persistent/mce_record/', { sysfsRoot: root });
    assert.equal(event.attr.type, 11);
    assert.equal(event.attr.config, 0x12n);
    assert.equal(event.attr.flags.mmap2, true);
    assert.equal(event.attr.flags.writeBackward, true, 'the resolver flags survive the attrN round trip');
    assert.equal(event.attr.flags.sampleIdAll, true);
    const bytes = encodeAttr(event.attr);
    const flagWord = new DataView(bytes.buffer).getBigUint64(40, true);
    assert.equal((flagWord >> 23n) & 1n, 1n);
    assert.deepEqual(decodeAttr(bytes).flags, event.attr.flags);
  });

  it('applies multi-range formats, configN formats, overrides alias terms and rejects oversize values', () => {
    const attr = resolveEventSpec('persistent/event=0xabc,umask=5,edge,ext=0xbeef/', { sysfsRoot: root }).attr;
    assert.deepEqual([attr.config, attr.config1, attr.config2, attr.config3], [0xa_0000_00bcn, 5n, 1n << 18n, 0xbeefn]);
    assert.equal(attr.flags.mmap2, undefined);
    assert.equal(resolveEventSpec('persistent/mce_record,event=0x13/', { sysfsRoot: root }).attr.config, 0x13n, 'user terms win over the alias');
    assert.equal(resolveEventSpec('persistent/event=0x13,mce_record/', { sysfsRoot: root }).attr.config, 0x13n, 'whatever the order');
    assert.equal(resolveEventSpec('persistent/raw_alias/', { sysfsRoot: root }).attr.config, 0x77n);
    assert.equal(resolveEventSpec('persistent/needs_umask,umask=3/', { sysfsRoot: root }).attr.config1, 3n);
    expectSpecError('persistent/event=0x1000/', { sysfsRoot: root }, 11, /does not fit format 'event' \(config:0-7,32-35, 12 bits, max 0xfff\)/, 'event');
    expectSpecError('persistent/needs_umask/', { sysfsRoot: root }, 11, /event 'needs_umask' of PMU persistent needs umask=VALUE/, 'needs_umask');
    expectSpecError(
      'persistent/umask=1,bogus=2/',
      { sysfsRoot: root },
      19,
      /unknown term 'bogus' for PMU persistent; formats: edge, event, ext, persistent, umask; events: mce_record, needs_umask, raw_alias/,
      'bogus',
    );
  });

  it('lists the fake PMU as persistent, in JSON and text', () => {
    const list = listEvents({ sysfsRoot: root });
    const persistent = list.pmus.find((pmu) => pmu.name === 'persistent');
    assert.deepEqual(
      persistent?.formats.find((format) => format.name === 'persistent'),
      { name: 'persistent', format: 'attr5:23' },
    );
    assert.equal(persistent?.persistent, true);
    assert.deepEqual(JSON.parse(JSON.stringify(list)).pmus.find((pmu: { name: string }) => pmu.name === 'persistent').events[0], {
      name: 'mce_record',
      terms: 'event=0x12,persistent',
    });
    assert.deepEqual(
      list.pmus.map((pmu) => pmu.name),
      ['persistent'],
    );
    assert.equal(list.pmuErrors?.length, 2);
    assert.match(list.pmuErrors?.join('\n') ?? '', /badformat\/format\/x: format 'config9:1'[\s\S]*broken\/type: type 'abc'/);
    const text = formatEventList(list);
    assert.match(text, /\(skipped a PMU: .*badformat/);
    assert.match(text, /^ {2}persistent\/mce_record\/ {29}\[Persistent PMU event\]$/m);
    assert.match(text, /^ {2}persistent \(type 11, persistent\): edge=config2:18, event=config:0-7,32-35/m);
  });
});
