// What the editor says of a breakpoint's hits: the count where the machine delivers breakpoint hits, and where it
// does not (the probe's verdict), that none can be seen instead of "0 hits" as if the code never ran.
import assert from 'node:assert/strict';
import { lineHitsText, watchLensText, type HitSummary } from './hardware-breakpoints';

const summary = (count: number): HitSummary => ({ eventIndex: 0, count, byLine: new Map(), last: [] });
const why = 'hardware breakpoints do not fire on this machine: ...';

describe('editor: hit counts on a machine that delivers breakpoint hits and on one that does not', () => {
  it('a gutter line counts its hits, and says none can be seen where the probe found breakpoints silent', () => {
    assert.equal(lineHitsText(1234, undefined), '1,234 hits in the last snapshot');
    assert.equal(lineHitsText(0, undefined), '0 hits in the last snapshot');
    assert.equal(lineHitsText(0, why), 'no hits can be seen on this machine: hardware breakpoints do not fire here');
    // Hits that did arrive are counted whatever the verdict said (an assumed verdict does not change the hardware).
    assert.equal(lineHitsText(7, why), '7 hits in the last snapshot');
  });

  it("a watched variable's lens likewise", () => {
    assert.equal(watchLensText(summary(3), 'w', undefined), 'written 3× in this snapshot');
    assert.equal(watchLensText(summary(0), 'rw', why), 'no accesses can be seen on this machine: hardware breakpoints do not fire here');
    assert.equal(watchLensText(summary(2), 'rw', why), 'accessed 2× in this snapshot');
  });
});
