// The breakpoint-delivery probe against the referee: on this host, whatever it is, Ringside's probe
// (an execute breakpoint on getppid() in its own thread) and perf (a write watchpoint on a global of
// a launched program) must agree on whether hardware breakpoints fire.
import * as assert from 'node:assert/strict';
import { breakpointDelivery } from '../../native/perf/breakpoint-delivery';
import { hostBreakpoints } from './breakpoints';

describe('hardware breakpoint delivery on this host', () => {
  it('the probe agrees with perf stat: both see every hit, or both see none', () => {
    const perf = hostBreakpoints();
    const probe = breakpointDelivery();
    assert.ok(perf.perfCounted === 0 || perf.fire, `perf counted ${perf.perfCounted} of ${perf.writes}: some hits only`);
    assert.equal(probe.state, perf.fire ? 'fires' : 'silent', `probe ${JSON.stringify(probe)}, perf ${JSON.stringify(perf)}`);
  });
});
