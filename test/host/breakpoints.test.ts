// The breakpoint-delivery probe against the referee: on this host, whatever it is, Ringside's probe
// (an execute breakpoint on getppid() in its own thread) and perf (a write watchpoint on a global of
// a launched program) must agree on whether hardware breakpoints fire.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { assumeBreakpointDelivery, breakpointDelivery, DELIVERY_OVERRIDE_VARIABLE } from '../../native/perf/breakpoint-delivery';
import { hostBreakpoints, otherHostVerdict, SILENT_BREAKPOINTS } from './breakpoints';

describe('hardware breakpoint delivery on this host', () => {
  it('the probe agrees with perf stat: both see every hit, or both see none', () => {
    const perf = hostBreakpoints();
    const probe = breakpointDelivery();
    assert.ok(perf.perfCounted === 0 || perf.fire, `perf counted ${perf.perfCounted} of ${perf.writes}: some hits only`);
    assert.equal(probe.state, perf.fire ? 'fires' : 'silent', `probe ${JSON.stringify(probe)}, perf ${JSON.stringify(perf)}`);
  });

  it("the other kind of host's verdict can be assumed, in this process and through the environment, and undone", () => {
    const probed = breakpointDelivery();
    const other = otherHostVerdict();
    const restore = assumeBreakpointDelivery(other);
    try {
      const assumed = breakpointDelivery();
      assert.equal(assumed.state, other);
      if (assumed.state === 'silent') {
        assert.match(assumed.message, SILENT_BREAKPOINTS);
        assert.match(assumed.message, /Assumed, not probed: RINGSIDE_BREAKPOINT_DELIVERY=silent/, 'it never passes for a measurement');
      }
    } finally {
      restore();
    }
    assert.deepEqual(breakpointDelivery(), probed, "the probe's verdict again");

    const module = path.resolve(__dirname, '../../native/perf/breakpoint-delivery.js');
    const ask = (value: string) =>
      spawnSync(process.execPath, ['-e', `console.log(JSON.stringify(require(${JSON.stringify(module)}).breakpointDelivery()))`], {
        encoding: 'utf8',
        env: { ...process.env, [DELIVERY_OVERRIDE_VARIABLE]: value },
      });
    const silent = ask('silent');
    assert.equal(silent.status, 0, silent.stderr);
    assert.equal(JSON.parse(silent.stdout).state, 'silent');
    const fires = ask('fires');
    assert.deepEqual(JSON.parse(fires.stdout), { state: 'fires' });
    const wrong = ask('maybe');
    assert.notEqual(wrong.status, 0);
    assert.match(wrong.stderr, /RINGSIDE_BREAKPOINT_DELIVERY=maybe: expected "fires" or "silent" \(or unset, to probe the hardware\)/);
  });
});
